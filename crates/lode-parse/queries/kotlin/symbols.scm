; Kotlin definitions.

; Classes, interfaces and enums all parse as class_declaration.
(class_declaration "interface" name: (identifier) @name (class_body)? @body) @definition.interface
(class_declaration
  (modifiers (class_modifier) @_m)
  name: (identifier) @name
  (enum_class_body)? @body
  (#eq? @_m "enum")) @definition.enum
(class_declaration name: (identifier) @name (class_body)? @body) @definition.class

; `object Foo` and named companion objects are modules; the members of an
; unnamed `companion object` belong to the enclosing class.
(object_declaration name: (identifier) @name (class_body)? @body) @definition.module
(companion_object name: (identifier) @name (class_body)? @body) @definition.module

; Extension functions: `fun String.f()` is named `f`, its receiver type is the
; container (`String?` and `List<T>` give `String` and `List`). Then other functions.
(function_declaration
  [(user_type) (nullable_type)] @container
  .
  name: (identifier) @name
  (function_body)? @body) @definition.function
(function_declaration name: (identifier) @name (function_body)? @body) @definition.function

; `const val` constants; other top-level properties are variables.
(property_declaration
  (modifiers (property_modifier) @_m)
  (variable_declaration (identifier) @name)
  (#eq? @_m "const")) @definition.constant
(source_file
  (property_declaration (variable_declaration (identifier) @name)) @definition.variable)

; typealias Name = ...
(type_alias type: (identifier) @name) @definition.type

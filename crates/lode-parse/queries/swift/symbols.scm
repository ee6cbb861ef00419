; Swift definitions.

; class, struct, enum, actor: all class_declaration, told apart by the keyword.
(class_declaration declaration_kind: "class" name: (type_identifier) @name body: (_) @body) @definition.class
(class_declaration declaration_kind: "actor" name: (type_identifier) @name body: (_) @body) @definition.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name body: (_) @body) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name body: (_) @body) @definition.enum
; `extension Config { ... }` adds to a type, like an impl block: its methods get
; the container `impl Config`.
(class_declaration
  declaration_kind: "extension"
  name: [(user_type (type_identifier) @name .) (type_identifier) @name]
  body: (_) @body) @definition.impl
(protocol_declaration name: (type_identifier) @name body: (_) @body) @definition.interface

; Functions, initializers, protocol requirements.
; (Name and body are the node's fields. Spelling out `name: (simple_identifier)`
; or `body: (function_body)` costs ~150 ms of query compilation each; `#kind?`
; keeps operator functions out, `func ==(...)`, as the typed child did.)
((function_declaration name: _ @_name) @definition.function
 (#kind? @_name simple_identifier))
(init_declaration name: "init" @name body: (function_body)? @body) @definition.function
(deinit_declaration "deinit" @name body: (function_body) @body) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.function

; typealias Name = ...
(typealias_declaration name: (type_identifier) @name) @definition.type

; File-level `let` constants and `var` variables.
((property_declaration
  (value_binding_pattern mutability: "let")
  name: (pattern bound_identifier: (simple_identifier) @name)) @definition.constant
 (#has-parent? @definition.constant source_file))
((property_declaration
  (value_binding_pattern mutability: "var")
  name: (pattern bound_identifier: (simple_identifier) @name)) @definition.variable
 (#has-parent? @definition.variable source_file))

; C++ definitions.
;
; A function's name is the last segment of its declarator: `Config::load` is
; named `load`, and the qualifier before it is its @container (an out-of-line
; member is not nested in its class). The grammar cannot tell a class qualifier
; from a namespace one, so `ns::f()` is taken as a member of `ns` too.
; Operators and destructors are named as written (`operator==`, `~Config`).

; Namespaces (anonymous ones are not symbols; their members are).
(namespace_definition name: (_) @name body: (declaration_list) @body) @definition.module

; Classes, structs, unions, enums with a body.
(class_specifier name: (_) @name body: (field_declaration_list) @body) @definition.class
(struct_specifier name: (_) @name body: (field_declaration_list) @body) @definition.struct
(union_specifier name: (_) @name body: (field_declaration_list) @body) @definition.struct
(enum_specifier name: (_) @name body: (enumerator_list) @body) @definition.enum

; Function definitions: `f()`, `*f()`, `&f()`, defaulted or deleted ones without a body.
(function_definition
  declarator: (function_declarator
    declarator: [
      (identifier) @name
      (field_identifier) @name
      (destructor_name) @name
      (operator_name) @name
      (template_function name: (identifier) @name)
      (qualified_identifier
        scope: (_)? @container
        name: [(identifier) (destructor_name) (operator_name)] @name)
      (qualified_identifier
        scope: (_)? @container
        name: (template_function name: (identifier) @name))
      (qualified_identifier
        name: (qualified_identifier
          scope: (_) @container
          name: [(identifier) (destructor_name) (operator_name)] @name))])
  body: (_)? @body) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [
        (identifier) @name
        (field_identifier) @name
        (operator_name) @name
        (qualified_identifier scope: (_)? @container name: [(identifier) (operator_name)] @name)
        (qualified_identifier
          name: (qualified_identifier scope: (_) @container name: [(identifier) (operator_name)] @name))]))
  body: (_)? @body) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [
        (identifier) @name
        (field_identifier) @name
        (operator_name) @name
        (qualified_identifier scope: (_)? @container name: [(identifier) (operator_name)] @name)
        (qualified_identifier
          name: (qualified_identifier scope: (_) @container name: [(identifier) (operator_name)] @name))]))
  body: (_)? @body) @definition.function

; Declarations: prototypes, and member functions declared in a class body.
; Only where declarations live: inside a function body, `T x(y);` is usually a
; variable with constructor arguments that the grammar parses as a prototype.
((declaration
  declarator: [
    (function_declarator declarator: [(identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (operator_name)] @name))]
  ";" @body) @definition.function
 (#has-parent? @definition.function
   translation_unit declaration_list field_declaration_list template_declaration
   linkage_specification preproc_if preproc_ifdef preproc_else preproc_elif))
(field_declaration
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
    (reference_declarator (function_declarator declarator: [(field_identifier) (operator_name)] @name))]
  ";" @body) @definition.function

; Type aliases: `using X = ...;` and `typedef ... X;`.
(alias_declaration name: (type_identifier) @name ";" @body) @definition.type
(type_definition declarator: (type_identifier) @name ";" @body) @definition.type
(type_definition
  declarator: (pointer_declarator declarator: (type_identifier) @name) ";" @body) @definition.type

; Concepts.
(concept_definition name: (identifier) @name) @definition.type

; Macros: function-like ones are macros, object-like ones with a value constants.
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name value: (_)) @definition.constant

; File- and namespace-level variables; `const` and `constexpr` ones are constants.
((declaration
  (type_qualifier) @_q
  declarator: [
    (identifier) @name
    (init_declarator declarator: [
      (identifier) @name
      (pointer_declarator declarator: (identifier) @name)
      (array_declarator declarator: (identifier) @name)])
    (pointer_declarator declarator: (identifier) @name)
    (array_declarator declarator: (identifier) @name)]
  (#any-of? @_q "const" "constexpr")) @definition.constant
 (#has-parent? @definition.constant translation_unit declaration_list))
((declaration
  declarator: [
    (identifier) @name
    (init_declarator declarator: [
      (identifier) @name
      (pointer_declarator declarator: (identifier) @name)
      (array_declarator declarator: (identifier) @name)])
    (pointer_declarator declarator: (identifier) @name)
    (array_declarator declarator: (identifier) @name)]) @definition.variable
 (#has-parent? @definition.variable translation_unit declaration_list))

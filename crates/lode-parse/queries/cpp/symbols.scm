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
; One pattern for the three declarators: tree-sitter analyses each typed
; `function_definition` against the parse table when it compiles the query (~15 ms
; apiece), and each typed node with children inside one too; so the pointer and
; reference declarators and names with children are wildcards whose kind `#kind?`
; checks. `function_declarator` stays typed, here and in prototypes: as a wildcard
; it matches every declarator with a `declarator` field (`x = 1`, `*p`), and
; extraction ran ~10% slower.
((function_definition
  declarator: [
    (function_declarator
      declarator: [
        (identifier) @name
        (field_identifier) @name
        (destructor_name) @name
        (operator_name) @name
        (_ name: (identifier) @name) @_template
        (_
          scope: (_)? @container
          name: [(identifier) (destructor_name) (operator_name)] @name) @_qualified
        (_
          scope: (_)? @container
          name: (_ name: (identifier) @name) @_template) @_qualified
        (_
          name: (_
            scope: (_) @container
            name: [(identifier) (destructor_name) (operator_name)] @name) @_qualified) @_qualified])
    (_
      declarator: (function_declarator
        declarator: [
          (identifier) @name
          (field_identifier) @name
          (operator_name) @name
          (_ scope: (_)? @container name: [(identifier) (operator_name)] @name) @_qualified
          (_
            name: (_ scope: (_) @container name: [(identifier) (operator_name)] @name) @_qualified) @_qualified])) @_pointer
    (_
      (function_declarator
        declarator: [
          (identifier) @name
          (field_identifier) @name
          (operator_name) @name
          (_ scope: (_)? @container name: [(identifier) (operator_name)] @name) @_qualified
          (_
            name: (_ scope: (_) @container name: [(identifier) (operator_name)] @name) @_qualified) @_qualified])) @_reference]
  body: (_)? @body) @definition.function
 (#kind? @_pointer pointer_declarator)
 (#kind? @_reference reference_declarator)
 (#kind? @_qualified qualified_identifier)
 (#kind? @_template template_function))

; Declarations: prototypes, and member functions declared in a class body.
; Only where declarations live: inside a function body, `T x(y);` is usually a
; variable with constructor arguments that the grammar parses as a prototype.
((declaration
  declarator: [
    (function_declarator declarator: [(identifier) (destructor_name) (operator_name)] @name)
    (_ declarator: (function_declarator declarator: [(identifier) (operator_name)] @name)) @_pointer
    (_ (function_declarator declarator: [(identifier) (operator_name)] @name)) @_reference]
  ";" @body) @definition.function
 (#has-parent? @definition.function
   translation_unit declaration_list field_declaration_list template_declaration
   linkage_specification preproc_if preproc_ifdef preproc_else preproc_elif)
 (#kind? @_pointer pointer_declarator)
 (#kind? @_reference reference_declarator))
((field_declaration
  declarator: [
    (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)
    (_ declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name)) @_pointer
    (_ (function_declarator declarator: [(field_identifier) (operator_name)] @name)) @_reference]
  ";" @body) @definition.function
 (#kind? @_pointer pointer_declarator)
 (#kind? @_reference reference_declarator))

; Type aliases: `using X = ...;` and `typedef ... X;`.
(alias_declaration name: (type_identifier) @name ";" @body) @definition.type
(type_definition declarator: (type_identifier) @name ";" @body) @definition.type
((type_definition
  declarator: (_ declarator: (type_identifier) @name) @_pointer ";" @body) @definition.type
 (#kind? @_pointer pointer_declarator))

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
    (_ declarator: [
      (identifier) @name
      (_ declarator: (identifier) @name) @_pointer_or_array]) @_init
    (_ declarator: (identifier) @name) @_pointer_or_array]
  (#any-of? @_q "const" "constexpr")) @definition.constant
 (#has-parent? @definition.constant translation_unit declaration_list)
 (#kind? @_init init_declarator)
 (#kind? @_pointer_or_array pointer_declarator array_declarator))
((declaration
  declarator: [
    (identifier) @name
    (_ declarator: [
      (identifier) @name
      (_ declarator: (identifier) @name) @_pointer_or_array]) @_init
    (_ declarator: (identifier) @name) @_pointer_or_array]) @definition.variable
 (#has-parent? @definition.variable translation_unit declaration_list)
 (#kind? @_init init_declarator)
 (#kind? @_pointer_or_array pointer_declarator array_declarator))

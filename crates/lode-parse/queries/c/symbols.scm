; C definitions.

; Function definitions: `int f(...)`, `char *f(...)`, `char **f(...)`.
; One pattern per definition node for `f()`, `*f()` and `**f()`, the declarators
; wildcards whose kind `#kind?` checks: tree-sitter analyses each typed node with
; children against the parse table when it compiles the query.
((function_definition
  declarator: [
    (_ declarator: (identifier) @name) @_function
    (_ declarator: (_ declarator: (identifier) @name) @_function) @_pointer
    (_ declarator: (_ declarator: (_ declarator: (identifier) @name) @_function) @_pointer) @_pointer]
  body: (compound_statement) @body) @definition.function
 (#kind? @_function function_declarator)
 (#kind? @_pointer pointer_declarator))

; Prototypes, as in headers (where the doc comment usually is).
((declaration
  declarator: [
    (_ declarator: (identifier) @name) @_function
    (_ declarator: (_ declarator: (identifier) @name) @_function) @_pointer
    (_ declarator: (_ declarator: (_ declarator: (identifier) @name) @_function) @_pointer) @_pointer]
  ";" @body) @definition.function
 (#kind? @_function function_declarator)
 (#kind? @_pointer pointer_declarator))

; `typedef struct tag { ... } name_t;` is one struct named `name_t` (the signature
; shows the tag); likewise for unions and enums.
(type_definition
  type: [(struct_specifier body: (_) @body) (union_specifier body: (_) @body)]
  declarator: (type_identifier) @name) @definition.struct
(type_definition
  type: (enum_specifier body: (_) @body)
  declarator: (type_identifier) @name) @definition.enum

; Other typedefs: `typedef T name;`, `typedef T *name;`, `typedef R (*name)(...);`.
(type_definition declarator: (type_identifier) @name ";" @body) @definition.type
(type_definition
  declarator: (pointer_declarator declarator: (type_identifier) @name) ";" @body) @definition.type
(type_definition
  declarator: (function_declarator
    declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))
  ";" @body) @definition.type

; Named structs, unions and enums with a body, except those inside a typedef
; (handled above): at file level, under preprocessor conditionals, or declaring
; a variable (`struct s {...} v;`).
((struct_specifier name: (_) @name body: (_) @body) @definition.struct
 (#has-parent? @definition.struct translation_unit preproc_ifdef preproc_if preproc_else))
((union_specifier name: (_) @name body: (_) @body) @definition.struct
 (#has-parent? @definition.struct translation_unit preproc_ifdef preproc_if preproc_else))
((enum_specifier name: (_) @name body: (_) @body) @definition.enum
 (#has-parent? @definition.enum translation_unit preproc_ifdef preproc_if preproc_else))
(declaration type: (struct_specifier name: (_) @name body: (_) @body) @definition.struct)
(declaration type: (union_specifier name: (_) @name body: (_) @body) @definition.struct)
(declaration type: (enum_specifier name: (_) @name body: (_) @body) @definition.enum)

; Macros: function-like ones are macros, object-like ones with a value constants
; (an include guard `#define X_H` has no value).
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name value: (_)) @definition.constant

; File-level variables; `const` ones are constants.
((declaration
  (type_qualifier) @_q
  declarator: [
    (identifier) @name
    (_ declarator: [
      (identifier) @name
      (_ declarator: (identifier) @name) @_pointer_or_array]) @_init
    (_ declarator: (identifier) @name) @_pointer_or_array]
  (#eq? @_q "const")) @definition.constant
 (#has-parent? @definition.constant translation_unit)
 (#kind? @_init init_declarator)
 (#kind? @_pointer_or_array pointer_declarator array_declarator))
((declaration
  declarator: [
    (identifier) @name
    (_ declarator: [
      (identifier) @name
      (_ declarator: (identifier) @name) @_pointer_or_array]) @_init
    (_ declarator: (identifier) @name) @_pointer_or_array]) @definition.variable
 (#has-parent? @definition.variable translation_unit)
 (#kind? @_init init_declarator)
 (#kind? @_pointer_or_array pointer_declarator array_declarator))

; C definitions.

; Function definitions: `int f(...)`, `char *f(...)`, `char **f(...)`.
(function_definition
  declarator: (function_declarator declarator: (identifier) @name)
  body: (compound_statement) @body) @definition.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
  body: (compound_statement) @body) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  body: (compound_statement) @body) @definition.function

; Prototypes, as in headers (where the doc comment usually is).
(declaration
  declarator: (function_declarator declarator: (identifier) @name) ";" @body) @definition.function
(declaration
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
  ";" @body) @definition.function
(declaration
  declarator: (pointer_declarator
    declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ";" @body) @definition.function

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
    (init_declarator declarator: [
      (identifier) @name
      (pointer_declarator declarator: (identifier) @name)
      (array_declarator declarator: (identifier) @name)])
    (pointer_declarator declarator: (identifier) @name)
    (array_declarator declarator: (identifier) @name)]
  (#eq? @_q "const")) @definition.constant
 (#has-parent? @definition.constant translation_unit))
((declaration
  declarator: [
    (identifier) @name
    (init_declarator declarator: [
      (identifier) @name
      (pointer_declarator declarator: (identifier) @name)
      (array_declarator declarator: (identifier) @name)])
    (pointer_declarator declarator: (identifier) @name)
    (array_declarator declarator: (identifier) @name)]) @definition.variable
 (#has-parent? @definition.variable translation_unit))

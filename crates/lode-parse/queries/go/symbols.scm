; Go definitions.
;
; A declaration with a single spec (`type T struct{...}`, `const X = 1`) is the
; definition itself, so the doc comment above it is found; in a grouped
; declaration (`const ( ... )`) each spec is a definition of its own.

; Functions, and methods: the receiver type (`*Config`, `Config[T]`) is the container.
(function_declaration name: (identifier) @name body: (block) @body) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @container))
  name: (field_identifier) @name
  body: (block) @body) @definition.method
(method_declaration name: (field_identifier) @name body: (block) @body) @definition.method

; Types: `type T struct {...}`, `type I interface {...}`, `type A B`, `type A = B`.
((type_declaration (type_spec name: (type_identifier) @name type: (struct_type))) @definition.struct
  (#not-match? @definition.struct "^type\\s*\\("))
((type_declaration (type_spec name: (type_identifier) @name type: (interface_type))) @definition.interface
  (#not-match? @definition.interface "^type\\s*\\("))
((type_declaration [(type_spec name: (type_identifier) @name) (type_alias name: (type_identifier) @name)]) @definition.type
  (#not-match? @definition.type "^type\\s*\\("))
(type_declaration "(" (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct)
(type_declaration "(" (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface)
(type_declaration "(" [(type_spec name: (type_identifier) @name) (type_alias name: (type_identifier) @name)] @definition.type)

; Interface methods.
(method_elem name: (field_identifier) @name) @definition.function

; Package-level constants and variables. `#has-parent?` rather than a
; `(source_file ...)` pattern, which would stay in progress over the whole file.
((const_declaration (const_spec name: (identifier) @name)) @definition.constant
  (#not-match? @definition.constant "^const\\s*\\(")
  (#has-parent? @definition.constant source_file))
((const_declaration "(" (const_spec name: (identifier) @name) @definition.constant) @_decl
  (#has-parent? @_decl source_file))
((var_declaration (var_spec name: (identifier) @name)) @definition.variable
  (#has-parent? @definition.variable source_file))
((var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable)) @_decl
  (#has-parent? @_decl source_file))

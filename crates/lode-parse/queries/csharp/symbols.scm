; C# definitions. Attributes are part of the declaration, so they start the
; signature. Properties, fields and events are not taken (only constants).

; Namespaces: `namespace A.B { ... }` and file-scoped `namespace A.B;`.
(namespace_declaration name: (_) @name body: (declaration_list) @body) @definition.module
(file_scoped_namespace_declaration name: (_) @name) @definition.module

; Types.
(class_declaration name: (identifier) @name body: (declaration_list) @body) @definition.class
(record_declaration name: (identifier) @name body: (declaration_list) @body) @definition.class
(record_declaration name: (identifier) @name ";" @body) @definition.class
(struct_declaration name: (identifier) @name body: (declaration_list) @body) @definition.struct
(interface_declaration name: (identifier) @name body: (declaration_list) @body) @definition.interface
(enum_declaration name: (identifier) @name body: (enum_member_declaration_list) @body) @definition.enum
(delegate_declaration name: (identifier) @name ";" @body) @definition.type

; Methods and constructors; interface and abstract methods end at `;`.
(method_declaration name: (identifier) @name body: (_) @body) @definition.function
(method_declaration name: (identifier) @name ";" @body) @definition.function
(constructor_declaration name: (identifier) @name body: (_) @body) @definition.function
(local_function_statement name: (identifier) @name body: (_) @body) @definition.function

; Constants: `const` fields and `static readonly` fields.
(field_declaration
  (modifier) @_m
  (variable_declaration (variable_declarator name: (identifier) @name))
  (#eq? @_m "const")) @definition.constant
(field_declaration
  (modifier) @_s
  (modifier) @_r
  (variable_declaration (variable_declarator name: (identifier) @name))
  (#eq? @_s "static")
  (#eq? @_r "readonly")) @definition.constant

; Java definitions. Annotations are part of the declaration's modifiers, so
; they start the signature.

; Types.
(class_declaration name: (identifier) @name body: (class_body) @body) @definition.class
(record_declaration name: (identifier) @name body: (class_body) @body) @definition.class
(interface_declaration name: (identifier) @name body: (interface_body) @body) @definition.interface
(annotation_type_declaration name: (identifier) @name body: (annotation_type_body) @body) @definition.interface
(enum_declaration name: (identifier) @name body: (enum_body) @body) @definition.enum

; Methods and constructors; abstract and interface methods end at `;`.
(method_declaration name: (identifier) @name body: (block) @body) @definition.function
(method_declaration name: (identifier) @name ";" @body) @definition.function
(constructor_declaration name: (identifier) @name body: (constructor_body) @body) @definition.function
(compact_constructor_declaration name: (identifier) @name body: (block) @body) @definition.function

; Constants: `static final` fields, and interface constants.
(field_declaration
  (modifiers) @_mods
  declarator: (variable_declarator name: (identifier) @name)
  (#match? @_mods "static")
  (#match? @_mods "final")) @definition.constant
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.constant

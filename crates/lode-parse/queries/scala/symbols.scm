; Scala definitions.

; Types. `object` is a module (a companion object sits beside its class).
(class_definition name: (_) @name body: (template_body)? @body) @definition.class
(trait_definition name: (_) @name body: (template_body)? @body) @definition.trait
(enum_definition name: (_) @name body: (enum_body) @body) @definition.enum
(object_definition name: (_) @name body: (template_body)? @body) @definition.module
(package_object name: (_) @name body: (template_body)? @body) @definition.module
(type_definition name: (type_identifier) @name) @definition.type

; Functions, with a body or abstract.
(function_definition name: (_) @name body: (_) @body) @definition.function
(function_declaration name: (_) @name) @definition.function

; Constants: capitalised vals of an object, class or file (`val DefaultPath = ...`).
((val_definition pattern: (identifier) @name (#match? @name "^[A-Z]")) @definition.constant
 (#has-parent? @definition.constant template_body))
((val_definition pattern: (identifier) @name (#match? @name "^[A-Z]")) @definition.constant
 (#has-parent? @definition.constant compilation_unit))

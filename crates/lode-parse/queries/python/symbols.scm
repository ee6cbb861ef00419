; Python definitions.
(class_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc)?) @body) @definition.class

(function_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc)?) @body) @definition.function

; Module-level constants: NAME = value with an upper-case name.
(module
  (expression_statement
    (assignment
      left: (identifier) @name
      (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant))

; Type aliases: `X: TypeAlias = ...` and `type X = ...`.
(module (expression_statement (assignment left: (identifier) @name type: (type (identifier) @_t) (#eq? @_t "TypeAlias")) @definition.type))
(type_alias_statement left: (type (identifier) @name)) @definition.type

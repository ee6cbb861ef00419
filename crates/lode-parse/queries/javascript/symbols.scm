; JavaScript definitions (also .jsx).
;
; A declaration wrapped in `export` is captured on the export_statement, so the
; signature shows `export` and the doc comment above it is found. Unwrapped
; declarations must sit in a program or a block (`#has-parent?`) so the same
; declaration is not captured twice. `#has-parent?` rather than a
; `(program ...)` pattern: a pattern that starts at the parent stays in
; progress over the whole file or block, and slows every node down.

; Function declarations: function f() {}, function* g() {}, export [default] function f() {}
([(function_declaration name: (identifier) @name body: (_) @body)
 (generator_function_declaration name: (identifier) @name body: (_) @body)] @definition.function
 (#has-parent? @definition.function program statement_block))
(export_statement
  declaration: [(function_declaration name: (identifier) @name body: (_) @body)
                (generator_function_declaration name: (identifier) @name body: (_) @body)]) @definition.function

; Class declarations: class A {}, export [default] class A {}
((class_declaration name: (identifier) @name body: (class_body) @body) @definition.class
 (#has-parent? @definition.class program statement_block))
(export_statement declaration: (class_declaration name: (identifier) @name body: (class_body) @body)) @definition.class

; Functions and classes assigned to a variable: const f = () => {}, let g = function () {},
; var h = async function* () {}, const C = class {} (name = the variable).
([(lexical_declaration
   (variable_declarator
     name: (identifier) @name
     value: [(arrow_function body: (_) @body)
             (function_expression body: (_) @body)
             (generator_function body: (_) @body)]))
 (variable_declaration
   (variable_declarator
     name: (identifier) @name
     value: [(arrow_function body: (_) @body)
             (function_expression body: (_) @body)
             (generator_function body: (_) @body)]))] @definition.function
 (#has-parent? @definition.function program statement_block))
(export_statement
  declaration: (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function body: (_) @body)
              (function_expression body: (_) @body)
              (generator_function body: (_) @body)]))) @definition.function
([(lexical_declaration (variable_declarator name: (identifier) @name value: (class body: (class_body) @body)))
 (variable_declaration (variable_declarator name: (identifier) @name value: (class body: (class_body) @body)))] @definition.class
 (#has-parent? @definition.class program))
(export_statement
  declaration: (lexical_declaration
    (variable_declarator name: (identifier) @name value: (class body: (class_body) @body)))) @definition.class

; Methods in classes and object literals: m() {}, get x() {}, async *gen() {}, #priv() {}
; (A method's name and body are its fields, which the grammar types exactly:
; spelling them out cost ~10 ms of TypeScript query compilation.)
(method_definition) @definition.function

; Class fields holding a function: handle = () => {}
(field_definition
  property: (_) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @definition.function

; Object properties holding a function: { load: function () {}, save: () => {} }
(pair
  key: (property_identifier) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @definition.function

; Functions assigned to a property: exports.f = function () {}, Foo.prototype.m = () => {}
(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name)
    right: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])
  (#not-eq? @name "exports")) @definition.function

; Module-level constants with an upper-case name: const MAX_SIZE = 10
((lexical_declaration
  kind: "const"
  (variable_declarator name: (identifier) @name)
  (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant
 (#has-parent? @definition.constant program))
((export_statement
  declaration: (lexical_declaration
    kind: "const"
    (variable_declarator name: (identifier) @name))
  (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant
 (#has-parent? @definition.constant program))

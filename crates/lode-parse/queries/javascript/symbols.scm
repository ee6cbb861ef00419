; JavaScript definitions (also .jsx).
;
; A declaration wrapped in `export` is captured on the export_statement, so the
; signature shows `export` and the doc comment above it is found. Unwrapped
; declarations are anchored on their parent (program or block) so the same
; declaration is not captured twice.

; Function declarations: function f() {}, function* g() {}, export [default] function f() {}
(program
  [(function_declaration name: (identifier) @name body: (_) @body)
   (generator_function_declaration name: (identifier) @name body: (_) @body)] @definition.function)
(statement_block
  [(function_declaration name: (identifier) @name body: (_) @body)
   (generator_function_declaration name: (identifier) @name body: (_) @body)] @definition.function)
(export_statement
  declaration: [(function_declaration name: (identifier) @name body: (_) @body)
                (generator_function_declaration name: (identifier) @name body: (_) @body)]) @definition.function

; Class declarations: class A {}, export [default] class A {}
(program (class_declaration name: (identifier) @name body: (class_body) @body) @definition.class)
(statement_block (class_declaration name: (identifier) @name body: (class_body) @body) @definition.class)
(export_statement declaration: (class_declaration name: (identifier) @name body: (class_body) @body)) @definition.class

; Functions and classes assigned to a variable: const f = () => {}, let g = function () {},
; var h = async function* () {}, const C = class {} (name = the variable).
(program
  [(lexical_declaration
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
               (generator_function body: (_) @body)]))] @definition.function)
(statement_block
  [(lexical_declaration
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
               (generator_function body: (_) @body)]))] @definition.function)
(export_statement
  declaration: (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function body: (_) @body)
              (function_expression body: (_) @body)
              (generator_function body: (_) @body)]))) @definition.function
(program
  [(lexical_declaration (variable_declarator name: (identifier) @name value: (class body: (class_body) @body)))
   (variable_declaration (variable_declarator name: (identifier) @name value: (class body: (class_body) @body)))] @definition.class)
(export_statement
  declaration: (lexical_declaration
    (variable_declarator name: (identifier) @name value: (class body: (class_body) @body)))) @definition.class

; Methods in classes and object literals: m() {}, get x() {}, async *gen() {}, #priv() {}
(method_definition name: (_) @name body: (statement_block) @body) @definition.function

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
(program
  (lexical_declaration
    kind: "const"
    (variable_declarator name: (identifier) @name)
    (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant)
(program
  (export_statement
    declaration: (lexical_declaration
      kind: "const"
      (variable_declarator name: (identifier) @name))
    (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant)

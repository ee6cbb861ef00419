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
     value: (_ body: (_) @body) @_value))
 (variable_declaration
   (variable_declarator
     name: (identifier) @name
     value: (_ body: (_) @body) @_value))] @definition.function
 (#kind? @_value arrow_function function_expression generator_function)
 (#has-parent? @definition.function program statement_block))
((export_statement
  declaration: (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: (_ body: (_) @body) @_value))) @definition.function
 (#kind? @_value arrow_function function_expression generator_function))
([(lexical_declaration (variable_declarator name: (identifier) @name value: (_ body: (class_body) @body) @_value))
 (variable_declaration (variable_declarator name: (identifier) @name value: (_ body: (class_body) @body) @_value))] @definition.class
 (#kind? @_value class)
 (#has-parent? @definition.class program))
((export_statement
  declaration: (lexical_declaration
    (variable_declarator name: (identifier) @name value: (_ body: (class_body) @body) @_value))) @definition.class
 (#kind? @_value class))

; Methods in classes and object literals: m() {}, get x() {}, async *gen() {}, #priv() {}
; (A method's name and body are its fields, which the grammar types exactly:
; spelling them out cost ~10 ms of TypeScript query compilation.)
(method_definition) @definition.function

; Class fields holding a function: handle = () => {}
((field_definition
  property: (_) @name
  value: (_ body: (_) @body) @_value) @definition.function
 (#kind? @_value arrow_function function_expression))

; Object properties holding a function: { load: function () {}, save: () => {} }
((pair
  key: (property_identifier) @name
  value: (_ body: (_) @body) @_value) @definition.function
 (#kind? @_value arrow_function function_expression))

; Functions assigned to a property: exports.f = function () {}, Foo.prototype.m = () => {}
; (assignment_expression stays typed: as a wildcard it is tried on every statement)
((expression_statement
  (assignment_expression
    left: (_ property: (_) @name) @_left
    right: (_ body: (_) @body) @_value)) @definition.function
 (#kind? @_left member_expression)
 (#kind? @name property_identifier)
 (#kind? @_value arrow_function function_expression)
 (#not-eq? @name "exports"))

; Module-level constants with an upper-case name: const MAX_SIZE = 10
((lexical_declaration
  kind: "const"
  (variable_declarator name: (identifier) @name)
  (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant
 (#has-parent? @definition.constant program))

; Exported bindings are the module's interface, whatever their name or value:
; export const safeParse = wrap(parse), export let config = {} (a function or class
; value was captured above, and the first pattern wins).
((export_statement
  declaration: (lexical_declaration
    kind: "const"
    (variable_declarator name: (identifier) @name))) @definition.constant
 (#has-parent? @definition.constant program))
((export_statement
  declaration: [(lexical_declaration kind: "let" (variable_declarator name: (identifier) @name))
                (variable_declaration (variable_declarator name: (identifier) @name))]) @definition.variable
 (#has-parent? @definition.variable program))

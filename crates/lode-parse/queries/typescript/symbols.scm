; TypeScript definitions. These queries serve both the TypeScript and the TSX
; grammar, so they must only use node types the two share (no JSX, no type_assertion).
;
; A declaration wrapped in `export` or `declare` is captured on the wrapper, so the
; signature shows the keyword and the doc comment above it is found. Unwrapped
; declarations must sit in a program or a block (`#has-parent?`) so the same
; declaration is not captured twice. `#has-parent?` rather than a
; `(program ...)` pattern: a pattern that starts at the parent stays in
; progress over the whole file or block, and slows every node down.

; Functions: function f() {}, function* g() {}, overload and ambient signatures
; (declare function f(): void), each bare, exported or declared.
([(function_declaration name: (identifier) @name body: (_) @body)
 (generator_function_declaration name: (identifier) @name body: (_) @body)
 (function_signature name: (identifier) @name)
 (ambient_declaration (function_signature name: (identifier) @name))] @definition.function
 (#has-parent? @definition.function program))
([(function_declaration name: (identifier) @name body: (_) @body)
 (generator_function_declaration name: (identifier) @name body: (_) @body)
 (function_signature name: (identifier) @name)] @definition.function
 (#has-parent? @definition.function statement_block))
(export_statement
  declaration: [(function_declaration name: (identifier) @name body: (_) @body)
                (generator_function_declaration name: (identifier) @name body: (_) @body)
                (function_signature name: (identifier) @name)
                (ambient_declaration (function_signature name: (identifier) @name))]) @definition.function

; Classes: class A {}, abstract class A {}, declare class A {}
([(class_declaration name: (type_identifier) @name body: (class_body) @body)
 (abstract_class_declaration name: (type_identifier) @name body: (class_body) @body)
 (ambient_declaration
   [(class_declaration name: (type_identifier) @name body: (class_body) @body)
    (abstract_class_declaration name: (type_identifier) @name body: (class_body) @body)])] @definition.class
 (#has-parent? @definition.class program))
([(class_declaration name: (type_identifier) @name body: (class_body) @body)
 (abstract_class_declaration name: (type_identifier) @name body: (class_body) @body)] @definition.class
 (#has-parent? @definition.class statement_block))
(export_statement
  declaration: [(class_declaration name: (type_identifier) @name body: (class_body) @body)
                (abstract_class_declaration name: (type_identifier) @name body: (class_body) @body)
                (ambient_declaration
                  [(class_declaration name: (type_identifier) @name body: (class_body) @body)
                   (abstract_class_declaration name: (type_identifier) @name body: (class_body) @body)])]) @definition.class

; Interfaces: interface Shape {}
((interface_declaration name: (type_identifier) @name body: (interface_body) @body) @definition.interface
 (#has-parent? @definition.interface program statement_block))
(export_statement declaration: (interface_declaration name: (type_identifier) @name body: (interface_body) @body)) @definition.interface

; Type aliases: type Id = string | number
((type_alias_declaration name: (type_identifier) @name) @definition.type
 (#has-parent? @definition.type program statement_block))
(export_statement declaration: (type_alias_declaration name: (type_identifier) @name)) @definition.type

; Enums: enum Color {}, const enum E {}, declare enum E {}
([(enum_declaration name: (identifier) @name body: (enum_body) @body)
 (ambient_declaration (enum_declaration name: (identifier) @name body: (enum_body) @body))] @definition.enum
 (#has-parent? @definition.enum program))
((enum_declaration name: (identifier) @name body: (enum_body) @body) @definition.enum
 (#has-parent? @definition.enum statement_block))
(export_statement
  declaration: [(enum_declaration name: (identifier) @name body: (enum_body) @body)
                (ambient_declaration (enum_declaration name: (identifier) @name body: (enum_body) @body))]) @definition.enum

; Namespaces and modules: namespace A.B {}, module M {}, declare module 'pkg' {}
; (a bare `namespace` is wrapped in an expression_statement)
([(expression_statement (internal_module name: (_) @name body: (statement_block) @body))
 (module name: [(identifier) (nested_identifier)] @name body: (statement_block) @body)
 (ambient_declaration
   [(internal_module name: (_) @name body: (statement_block) @body)
    (module name: [(identifier) (nested_identifier)] @name body: (statement_block) @body)
    (module name: (string (string_fragment) @name) body: (statement_block) @body)])] @definition.module
 (#has-parent? @definition.module program))
((expression_statement (internal_module name: (_) @name body: (statement_block) @body)) @definition.module
 (#has-parent? @definition.module statement_block))
(export_statement
  declaration: [(internal_module name: (_) @name body: (statement_block) @body)
                (ambient_declaration (internal_module name: (_) @name body: (statement_block) @body))]) @definition.module

; Functions and classes assigned to a variable: const f = (x: T): U => {},
; let g = function () {}, const C = class {} (name = the variable).
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

; Methods: in classes and object literals, abstract and interface method signatures.
; (A method's name and body are its fields, which the grammar types exactly:
; spelling them out cost ~10 ms of TypeScript query compilation.)
(method_definition) @definition.function
(method_signature name: (_) @name) @definition.function
(abstract_method_signature name: (_) @name) @definition.function

; Class fields holding a function: handle = (e: Event) => {}. The value, when there is
; one, is the field's last child; the name is the field's name (no @name).
((public_field_definition (_ body: (_) @body) @_value .) @definition.function
 (#kind? @_value arrow_function function_expression))

; Object properties holding a function: { load: function () {}, save: () => {} }
((pair
  key: (property_identifier) @name
  value: (_ body: (_) @body) @_value) @definition.function
 (#kind? @_value arrow_function function_expression))

; Functions assigned to a property: exports.f = function () {}, Foo.prototype.m = () => {}
((expression_statement
  (_
    left: (_ property: (_) @name) @_left
    right: (_ body: (_) @body) @_value) @_assign) @definition.function
 (#kind? @_assign assignment_expression)
 (#kind? @_left member_expression)
 (#kind? @name property_identifier)
 (#kind? @_value arrow_function function_expression)
 (#not-eq? @name "exports"))

; Module-level constants with an upper-case name: const MAX_SIZE = 10,
; declare const VERSION: string
([(lexical_declaration
   kind: "const"
   (variable_declarator name: (identifier) @name))
  (ambient_declaration
   (lexical_declaration
     kind: "const"
     (variable_declarator name: (identifier) @name)))] @definition.constant
 (#match? @name "^[A-Z][A-Z0-9_]*$")
 (#has-parent? @definition.constant program))

; Exported bindings are the module's interface, whatever their name or value:
; export const safeParse: $SafeParse = wrap(parse), export declare const version: string,
; export let config = {} (a function or class value was captured above, and the first
; pattern wins).
((export_statement
  declaration: [(lexical_declaration
                  kind: "const"
                  (variable_declarator name: (identifier) @name))
                (ambient_declaration
                  (lexical_declaration
                    kind: "const"
                    (variable_declarator name: (identifier) @name)))]) @definition.constant
 (#has-parent? @definition.constant program))
((export_statement
  declaration: [(lexical_declaration kind: "let" (variable_declarator name: (identifier) @name))
                (variable_declaration (variable_declarator name: (identifier) @name))]) @definition.variable
 (#has-parent? @definition.variable program))

; Upper-case constants directly in a namespace: namespace Defaults { export const TIMEOUT_MS = 5000 }
(internal_module
  body: (_
    [(_
       kind: "const"
       (variable_declarator name: (identifier) @name)) @_const
     (_
       declaration: (_
         kind: "const"
         (variable_declarator name: (identifier) @name)) @_const)]
    @definition.constant
    (#match? @name "^[A-Z][A-Z0-9_]*$")) @_block
  (#kind? @_block statement_block)
  (#kind? @_const lexical_declaration)
  (#kind? @definition.constant lexical_declaration export_statement))

; PHP definitions.

; Namespaces: namespace App\Http; and namespace App\Http { ... }
(namespace_definition name: (namespace_name) @name body: (compound_statement) @body) @definition.module
(namespace_definition name: (namespace_name) @name !body) @definition.module

; Classes, interfaces, traits and enums.
(class_declaration name: (name) @name body: (declaration_list) @body) @definition.class
(interface_declaration name: (name) @name body: (declaration_list) @body) @definition.interface
(trait_declaration name: (name) @name body: (declaration_list) @body) @definition.trait
(enum_declaration name: (name) @name body: (enum_declaration_list) @body) @definition.enum

; Functions and methods (abstract and interface methods have no body).
(function_definition name: (name) @name body: (compound_statement) @body) @definition.function
(method_declaration name: (name) @name body: (compound_statement)? @body) @definition.function

; Constants: const X = 1; (top level, in namespaces and in classes) and define('X', 1)
(const_declaration (const_element (name) @name)) @definition.constant
(expression_statement
  (function_call_expression
    function: (name) @_fn
    arguments: (arguments . (argument (string (string_content) @name))))
  (#eq? @_fn "define")) @definition.constant

; Lua definitions. A function stored in a table field (`function M.new()`,
; `function M:get()`, `M.run = function() end`) is named by the field.

; function f() end, local function f() end, function M.new() end, function M:get() end
(function_declaration name: (identifier) @name body: (block)? @body) @definition.function
(function_declaration
  name: (dot_index_expression field: (identifier) @name)
  body: (block)? @body) @definition.function
(function_declaration
  name: (method_index_expression method: (identifier) @name)
  body: (block)? @body) @definition.function

; f = function() end, M.run = function() end, local f = function() end
; (a plain assignment is anchored on its parent so `local f = ...` is not seen twice)
(chunk
  (assignment_statement
    (variable_list . name: [(identifier) @name (dot_index_expression field: (identifier) @name)])
    (expression_list . value: (function_definition body: (block)? @body))) @definition.function)
(block
  (assignment_statement
    (variable_list . name: [(identifier) @name (dot_index_expression field: (identifier) @name)])
    (expression_list . value: (function_definition body: (block)? @body))) @definition.function)
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (expression_list . value: (function_definition body: (block)? @body)))) @definition.function

; Functions in a table constructor: { run = function() end }
(field
  name: (identifier) @name
  value: (function_definition body: (block)? @body)) @definition.function

; Top-level constants with an upper-case name of two or more letters: MAX_SIZE = 10,
; local DEFAULT_PORT = 80 (not the module table `local M = {}`)
(chunk
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (#match? @name "^[A-Z][A-Z0-9_]+$")) @definition.constant)
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name))
    (#match? @name "^[A-Z][A-Z0-9_]+$")) @definition.constant)

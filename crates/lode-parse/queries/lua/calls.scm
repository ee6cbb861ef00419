; Lua call sites.

; f(x), f "str", f {t} (not require "m", which is an import)
((function_call name: (identifier) @callee) @call
 (#not-eq? @callee "require"))

; M.f(x), obj.field.f(x)
(function_call name: (dot_index_expression table: (_) @receiver field: (identifier) @callee)) @call

; obj:m(x)
(function_call name: (method_index_expression table: (_) @receiver method: (identifier) @callee)) @call

; Go calls. Conversions like `int(x)` parse as calls and are kept.

; f(x)
(call_expression function: (identifier) @callee) @call
; pkg.Func(x), obj.Method(x)
(call_expression
  function: (selector_expression operand: (_) @receiver field: (field_identifier) @callee)) @call
; Explicit instantiations: f[T](x), pkg.F[T](x)
(call_expression function: (index_expression operand: (identifier) @callee)) @call
(call_expression
  function: (index_expression
    operand: (selector_expression operand: (_) @receiver field: (field_identifier) @callee))) @call

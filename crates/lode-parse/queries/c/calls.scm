; C calls. Function-like macro uses look like calls and are kept.

; f(x)
(call_expression function: (identifier) @callee) @call
; s.fn(x), p->fn(x): calls through a function pointer field
(call_expression
  function: (field_expression argument: (_) @receiver field: (field_identifier) @callee)) @call

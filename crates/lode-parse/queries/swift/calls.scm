; Swift calls. Subscripts `a[i]` parse as calls with brackets and are skipped;
; initializer calls look like function calls: `Config(data: x)`.

; f(x), f { ... }, Type(x)
(call_expression
  (simple_identifier) @callee
  (call_suffix [(value_arguments "(") (lambda_literal)])) @call
; obj.method(x), obj?.method(x), Type.method(x)
(call_expression
  (navigation_expression
    target: (_) @receiver
    suffix: (navigation_suffix suffix: (simple_identifier) @callee))
  (call_suffix [(value_arguments "(") (lambda_literal)])) @call
; Generic initializers: Box<Int>(x)
(constructor_expression constructed_type: (user_type (type_identifier) @callee)) @call

; Kotlin calls. Constructor calls look like function calls: `Config(x)`.

; f(x), f { ... }, Foo(x)
(call_expression . (identifier) @callee) @call
; obj.method(x), obj?.method(x), Type.method(x)
(call_expression
  . (navigation_expression . (_) @receiver (identifier) @callee .)) @call

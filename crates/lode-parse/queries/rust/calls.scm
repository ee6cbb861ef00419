; Rust calls. Macro invocations (`println!`) are not calls.

; f(x)
(call_expression function: (identifier) @callee) @call
; obj.method(x)
(call_expression
  function: (field_expression value: (_) @receiver field: (field_identifier) @callee)) @call
; Type::func(x), module::func(x)
(call_expression
  function: (scoped_identifier path: (_) @receiver name: (identifier) @callee)) @call

; Turbofish: f::<T>(x), obj.method::<T>(x), Type::func::<T>(x)
(call_expression function: (generic_function function: (identifier) @callee)) @call
(call_expression
  function: (generic_function
    function: (field_expression value: (_) @receiver field: (field_identifier) @callee))) @call
(call_expression
  function: (generic_function
    function: (scoped_identifier path: (_) @receiver name: (identifier) @callee))) @call

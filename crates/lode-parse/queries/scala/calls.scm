; Scala calls. Parameterless calls (`xs.toList`) look like field accesses and
; infix calls (`a max b`) like operators; neither is taken.

; f(x), f { ... }, Config(x) (case class apply)
(call_expression function: (identifier) @callee) @call
; obj.method(x)
(call_expression
  function: (field_expression value: (_) @receiver field: (identifier) @callee)) @call
; f[T](x), obj.method[T](x)
(call_expression function: (generic_function function: (identifier) @callee)) @call
(call_expression
  function: (generic_function
    function: (field_expression value: (_) @receiver field: (identifier) @callee))) @call
; new Foo(x), new Foo[T](x), new pkg.Foo(x)
(instance_expression (type_identifier) @callee) @call
(instance_expression (generic_type type: (type_identifier) @callee)) @call
(instance_expression (stable_type_identifier (type_identifier) @callee .)) @call

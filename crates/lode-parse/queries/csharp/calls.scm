; C# calls.

; F(x), F<T>(x)
(invocation_expression function: (identifier) @callee) @call
(invocation_expression function: (generic_name (identifier) @callee)) @call
; obj.M(x), Type.M(x), obj.M<T>(x)
(invocation_expression
  function: (member_access_expression expression: (_) @receiver name: (identifier) @callee)) @call
(invocation_expression
  function: (member_access_expression
    expression: (_) @receiver
    name: (generic_name (identifier) @callee))) @call
; obj?.M(x)
(invocation_expression
  function: (conditional_access_expression
    condition: (_) @receiver
    (member_binding_expression name: (identifier) @callee))) @call
; new Foo(x), new Foo<T>(x), new A.Foo(x): the callee is the class name
(object_creation_expression type: (identifier) @callee) @call
(object_creation_expression type: (generic_name (identifier) @callee)) @call
(object_creation_expression type: (qualified_name name: (identifier) @callee)) @call
(object_creation_expression type: (qualified_name name: (generic_name (identifier) @callee))) @call

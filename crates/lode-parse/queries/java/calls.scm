; Java calls.

; f(x)
(method_invocation !object name: (identifier) @callee) @call
; obj.method(x), Type.method(x), super.method(x)
(method_invocation object: (_) @receiver name: (identifier) @callee) @call
; new Foo(x), new Foo<>(x), new pkg.Foo(x): the callee is the class name
(object_creation_expression type: (type_identifier) @callee) @call
(object_creation_expression type: (generic_type (type_identifier) @callee)) @call
(object_creation_expression type: (scoped_type_identifier (type_identifier) @callee .)) @call
(object_creation_expression type: (generic_type (scoped_type_identifier (type_identifier) @callee .))) @call

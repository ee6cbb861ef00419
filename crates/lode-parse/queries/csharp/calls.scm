; C# calls.

; One pattern per call node kind, the shapes of its callee inside: each
; pattern costs its own analysis when the query is compiled.
; F(x), F<T>(x), obj.M(x), Type.M(x), obj.M<T>(x), obj?.M(x)
(invocation_expression
  function: [
    (identifier) @callee
    (generic_name (identifier) @callee)
    (member_access_expression expression: (_) @receiver name: (identifier) @callee)
    (member_access_expression
      expression: (_) @receiver
      name: (generic_name (identifier) @callee))
    (conditional_access_expression
      condition: (_) @receiver
      (member_binding_expression name: (identifier) @callee))]) @call
; new Foo(x), new Foo<T>(x), new A.Foo(x): the callee is the class name
(object_creation_expression
  type: [
    (identifier) @callee
    (generic_name (identifier) @callee)
    (qualified_name name: (identifier) @callee)
    (qualified_name name: (generic_name (identifier) @callee))]) @call

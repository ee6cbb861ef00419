; C++ calls. For a qualified call `a::B::f()` the receiver is the innermost
; qualifier (`B`). Function-like macro uses look like calls and are kept.

; f(x), f<T>(x)
(call_expression function: (identifier) @callee) @call
(call_expression function: (template_function name: (identifier) @callee)) @call
; obj.f(x), ptr->f(x), obj.f<T>(x)
(call_expression
  function: (field_expression argument: (_) @receiver field: (field_identifier) @callee)) @call
(call_expression
  function: (field_expression
    argument: (_) @receiver
    field: (template_method name: (field_identifier) @callee))) @call
; ns::f(x), Type::f(x), ns::f<T>(x), ::f(x)
(call_expression
  function: (qualified_identifier
    scope: (_) @receiver
    name: [(identifier) @callee (template_function name: (identifier) @callee)])) @call
(call_expression
  function: (qualified_identifier
    name: (qualified_identifier
      scope: (_) @receiver
      name: [(identifier) @callee (template_function name: (identifier) @callee)]))) @call
(call_expression
  function: (qualified_identifier
    name: (qualified_identifier
      name: (qualified_identifier
        scope: (_) @receiver
        name: [(identifier) @callee (template_function name: (identifier) @callee)])))) @call
(call_expression function: (qualified_identifier !scope name: (identifier) @callee)) @call

; new Foo(x), new Foo<T>(x), new ns::Foo(x): the callee is the class name
(new_expression type: (type_identifier) @callee) @call
(new_expression type: (template_type name: (type_identifier) @callee)) @call
(new_expression
  type: (qualified_identifier
    name: [(type_identifier) @callee (template_type name: (type_identifier) @callee)])) @call
(new_expression
  type: (qualified_identifier
    name: (qualified_identifier
      name: [(type_identifier) @callee (template_type name: (type_identifier) @callee)]))) @call

; C++ calls. For a qualified call `a::B::f()` the receiver is the innermost
; qualifier (`B`). Function-like macro uses look like calls and are kept.
; Nodes with children inside a pattern are wildcards whose kind `#kind?` checks:
; tree-sitter analyses each typed one against the parse table when it compiles
; the query (symbols.scm).

; f(x), f<T>(x)
(call_expression function: (identifier) @callee) @call
((call_expression function: (_ name: (identifier) @callee) @_template) @call
 (#kind? @_template template_function))
; obj.f(x), ptr->f(x), obj.f<T>(x)
((call_expression
  function: (_ argument: (_) @receiver field: (field_identifier) @callee) @_field) @call
 (#kind? @_field field_expression))
((call_expression
  function: (_
    argument: (_) @receiver
    field: (_ name: (field_identifier) @callee) @_template) @_field) @call
 (#kind? @_field field_expression)
 (#kind? @_template template_method))
; ns::f(x), Type::f(x), ns::f<T>(x), ::f(x)
((call_expression
  function: (_
    scope: (_) @receiver
    name: [(identifier) @callee (_ name: (identifier) @callee) @_template]) @_qualified) @call
 (#kind? @_qualified qualified_identifier)
 (#kind? @_template template_function))
((call_expression
  function: (_
    name: (_
      scope: (_) @receiver
      name: [(identifier) @callee (_ name: (identifier) @callee) @_template]) @_qualified) @_qualified) @call
 (#kind? @_qualified qualified_identifier)
 (#kind? @_template template_function))
((call_expression
  function: (_
    name: (_
      name: (_
        scope: (_) @receiver
        name: [(identifier) @callee (_ name: (identifier) @callee) @_template]) @_qualified) @_qualified) @_qualified) @call
 (#kind? @_qualified qualified_identifier)
 (#kind? @_template template_function))
((call_expression function: (_ !scope name: (identifier) @callee) @_qualified) @call
 (#kind? @_qualified qualified_identifier))

; new Foo(x), new Foo<T>(x), new ns::Foo(x): the callee is the class name
(new_expression type: (type_identifier) @callee) @call
((new_expression type: (_ name: (type_identifier) @callee) @_template) @call
 (#kind? @_template template_type))
((new_expression
  type: (_
    name: [(type_identifier) @callee (_ name: (type_identifier) @callee) @_template]) @_qualified) @call
 (#kind? @_qualified qualified_identifier)
 (#kind? @_template template_type))
((new_expression
  type: (_
    name: (_
      name: [(type_identifier) @callee (_ name: (type_identifier) @callee) @_template]) @_qualified) @_qualified) @call
 (#kind? @_qualified qualified_identifier)
 (#kind? @_template template_type))

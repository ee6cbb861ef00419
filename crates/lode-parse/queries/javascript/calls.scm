; JavaScript call sites (also .jsx).

; f(x), tagged`template` (not require('m'), which is an import)
((call_expression function: (identifier) @callee) @call
 (#not-eq? @callee "require"))

; obj.m(x), this.#m(), a?.b()
(call_expression
  function: (member_expression
    object: (_) @receiver
    property: [(property_identifier) (private_property_identifier)] @callee)) @call

; new Foo(), new ns.Foo()
(new_expression constructor: (identifier) @callee) @call
(new_expression
  constructor: (member_expression
    object: (_) @receiver
    property: (property_identifier) @callee)) @call

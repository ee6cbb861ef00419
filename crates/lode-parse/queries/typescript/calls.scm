; TypeScript call sites (TypeScript and TSX grammars).

; f(x), tagged`template` (not require('m'), which is an import)
((call_expression function: (identifier) @callee) @call
 (#not-eq? @callee "require"))

; obj.m(x), this.#m(), a?.b()
(call_expression
  function: (member_expression
    object: (_) @receiver
    property: [(property_identifier) (private_property_identifier)] @callee)) @call

; new Foo(), new ns.Foo()
(new_expression
  constructor: [
    (identifier) @callee
    (member_expression object: (_) @receiver property: (property_identifier) @callee)]) @call

; `await f<T>(x)` and `await obj.m<T>(x)`: with type arguments the grammar parses the
; call around the await (call_expression function: (await_expression ...)).
(call_expression
  function: (await_expression [
    (identifier) @callee
    (member_expression
      object: (_) @receiver
      property: [(property_identifier) (private_property_identifier)] @callee)])
  type_arguments: (_)) @call

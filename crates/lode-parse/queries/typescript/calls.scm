; TypeScript call sites (TypeScript and TSX grammars). Nodes with children inside a
; pattern are wildcards whose kind #kind? checks (cheaper to compile, see
; queries/README.md "Compile time").

; f(x), tagged`template` (not require('m'), which is an import);
; obj.m(x), this.#m(), a?.b()
((call_expression
   function: [
     (identifier) @callee @_plain
     (_
       object: (_) @receiver
       property: [(property_identifier) (private_property_identifier)] @callee) @_member]) @call
 (#kind? @_member member_expression)
 (#not-eq? @_plain "require"))

; new Foo(), new ns.Foo()
((new_expression
   constructor: [
     (identifier) @callee
     (_ object: (_) @receiver property: (property_identifier) @callee) @_member]) @call
 (#kind? @_member member_expression))

; `await f<T>(x)` and `await obj.m<T>(x)`: with type arguments the grammar parses the
; call around the await (call_expression function: (await_expression ...)).
; (await_expression stays typed: as a wildcard it would be tried on every call's callee)
((call_expression
   function: (await_expression [
     (identifier) @callee
     (_
       object: (_) @receiver
       property: [(property_identifier) (private_property_identifier)] @callee) @_member])
   type_arguments: (_)) @call
 (#kind? @_member member_expression))

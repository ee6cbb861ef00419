; JavaScript call sites (also .jsx).

; Member expressions inside a pattern are wildcards whose kind #kind? checks (cheaper
; to compile, see queries/README.md "Compile time").

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

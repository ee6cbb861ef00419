; Ruby call sites. A bare identifier (`foo` with no arguments or parentheses) is
; ambiguous with a local variable and is not taken as a call.

; foo(1), puts "x", log(i), Integer("3") (not require/require_relative/load: imports)
((call !receiver method: [(identifier) (constant)] @callee) @call
 (#not-any-of? @callee "require" "require_relative" "load"))

; obj.m, obj&.m, Foo::Bar.baz(1), Invoice.new
(call receiver: (_) @receiver method: (_) @callee) @call

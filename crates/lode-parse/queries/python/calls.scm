; f(x)
(call function: (identifier) @callee) @call
; obj.method(x)
(call function: (attribute object: (_) @receiver attribute: (identifier) @callee)) @call

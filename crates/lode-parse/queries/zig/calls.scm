; Zig call sites (builtins such as @intCast are not calls).

; f(x)
(call_expression function: (identifier) @callee) @call

; obj.m(x), std.debug.print(...)
(call_expression function: (field_expression object: (_) @receiver member: (identifier) @callee)) @call

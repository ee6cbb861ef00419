; Zig definitions. Types are constants holding a type: `const Point = struct {...}`
; (no @body: the signature is the first line, `pub const Point = struct`).

; Functions and methods: fn f() void {}, pub fn init() Point {}, extern fn f() void;
(function_declaration name: (identifier) @name body: (block)? @body) @definition.function

; Container types: const Point = struct {}, const Color = enum {}, const Value = union(enum) {},
; const Error = error{...}, const Handle = opaque {}
(variable_declaration (identifier) @name (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name (union_declaration)) @definition.struct
(variable_declaration (identifier) @name (opaque_declaration)) @definition.struct
(variable_declaration (identifier) @name (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name (error_set_declaration)) @definition.enum

; Container-level constants: a `const` holding a literal, or with an upper-case name
; (`pub const max_items: usize = 64`, `const MAX = std.math.maxInt(u32)`).
; One pattern each checking the parent (a pattern per parent compiled twice), the
; literal a wildcard whose kind `#kind?` checks (an alternation of typed literals
; under a typed node is analysed against the parse table when the query compiles,
; ~30 ms).
((variable_declaration
   "const"
   (identifier) @name
   (_) @_value) @definition.constant
 (#has-parent? @definition.constant source_file struct_declaration)
 (#kind? @_value integer float string multiline_string character boolean))
((variable_declaration
   "const"
   (identifier) @name
   (#match? @name "^[A-Z][A-Z0-9_]+$")) @definition.constant
 (#has-parent? @definition.constant source_file struct_declaration))

; Tests: test "name" {}, test decl {}
(test_declaration [(string (string_content) @name) (identifier) @name] (block) @body) @definition.function

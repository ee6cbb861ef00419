; Zig imports: @import("std"), @import("util.zig")
((builtin_function
   (builtin_identifier) @_b
   (arguments . (string (string_content) @source))) @import
 (#eq? @_b "@import"))

; Lua imports: require("mod"), require 'mod'
((function_call
   name: (identifier) @_fn
   arguments: (arguments . (string content: (string_content) @source))) @import
 (#eq? @_fn "require"))

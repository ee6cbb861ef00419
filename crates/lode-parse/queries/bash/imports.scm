; Bash imports: source ./lib.sh, . "$HOME/.env" (the first argument)
((command
   name: (command_name) @_cmd
   .
   argument: (_) @source) @import
 (#any-of? @_cmd "source" "."))

; Bash call sites: every command whose name is a plain word (functions, builtins
; and programs alike), except the control-flow builtins return, break and continue
; and `source`/`.` (reported as imports).
((command name: (command_name (word) @callee)) @call
 (#not-any-of? @callee "return" "break" "continue" "source" "."))

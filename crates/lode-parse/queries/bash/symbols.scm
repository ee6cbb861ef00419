; Bash definitions.

; Functions: f() { ... }, function f { ... }, function f() { ... }
(function_definition name: (word) @name body: (_) @body) @definition.function

; Top-level constants with an upper-case name: MAX_TRIES=3, readonly LOG_DIR=/var/log,
; export API_URL=...
((variable_assignment name: (variable_name) @name) @definition.constant
 (#match? @name "^[A-Z][A-Z0-9_]*$")
 (#has-parent? @definition.constant program))
((declaration_command (variable_assignment name: (variable_name) @name)) @definition.constant
 (#match? @name "^[A-Z][A-Z0-9_]*$")
 (#has-parent? @definition.constant program))

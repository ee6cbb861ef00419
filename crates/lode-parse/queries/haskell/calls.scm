; Haskell call sites. An application `f x y` is nested `((f x) y)`; only the
; innermost application, whose function is a name, is the call. In a qualified
; name the module node includes the trailing dot (`M.`), so a one-part module is
; captured through its module_id (`M`); a longer one keeps the dot (`Data.Map.`).

; f x, M.lookup k m, Data.Map.lookup k m (one pattern: each `apply` or `infix`
; pattern costs its own analysis when the query is compiled)
(apply
  function: [
    (variable) @callee
    (qualified module: (module . (module_id) @receiver .) id: (variable) @callee)
    (qualified module: (module (module_id) (module_id)) @receiver id: (variable) @callee)]) @call

; x `div` y, x `M.member` s
(infix
  operator: (infix_id [
    (variable) @callee
    (qualified module: (module . (module_id) @receiver .) id: (variable) @callee)
    (qualified module: (module (module_id) (module_id)) @receiver id: (variable) @callee)])) @call

; f $ x, M.f $ x
((infix left_operand: (variable) @callee operator: (operator) @_op) @call
 (#eq? @_op "$"))
((infix
   left_operand: (qualified module: (module . (module_id) @receiver .) id: (variable) @callee)
   operator: (operator) @_op) @call
 (#eq? @_op "$"))

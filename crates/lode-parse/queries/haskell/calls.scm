; Haskell call sites. An application `f x y` is nested `((f x) y)`; only the
; innermost application, whose function is a name, is the call. In a qualified
; name the module node includes the trailing dot (`M.`), so a one-part module is
; captured through its module_id (`M`); a longer one keeps the dot (`Data.Map.`).
; Qualified names and their modules are wildcards whose kind `#kind?` checks: typed,
; each is analysed against the parse table when the query compiles (symbols.scm).

; f x, M.lookup k m, Data.Map.lookup k m (one pattern: each `apply` or `infix`
; pattern costs its own analysis when the query is compiled)
((apply
  function: [
    (variable) @callee
    (_ module: (_ . (module_id) @receiver .) @_module id: (variable) @callee) @_qualified
    (_ module: (_ (module_id) (module_id)) @receiver @_module id: (variable) @callee) @_qualified]) @call
 (#kind? @_qualified qualified)
 (#kind? @_module module))

; x `div` y, x `M.member` s
((infix
  operator: (_ [
    (variable) @callee
    (_ module: (_ . (module_id) @receiver .) @_module id: (variable) @callee) @_qualified
    (_ module: (_ (module_id) (module_id)) @receiver @_module id: (variable) @callee) @_qualified]) @_infix_id) @call
 (#kind? @_infix_id infix_id)
 (#kind? @_qualified qualified)
 (#kind? @_module module))

; f $ x, M.f $ x (one pattern, as above)
((infix
   left_operand: [
     (variable) @callee
     (_ module: (_ . (module_id) @receiver .) @_module id: (variable) @callee) @_qualified]
   operator: (operator) @_op) @call
 (#eq? @_op "$")
 (#kind? @_qualified qualified)
 (#kind? @_module module))

; Elixir call sites: fun(x), Mod.fun(x), var.fun(x), x |> fun.
;
; Every pattern below repeats the same three call shapes (local, remote on a
; module, remote on a value; `var.field` without arguments is a map access, not a
; call; the first two share one `call` step, which compiles faster) and the same
; list of forms that are not calls (definitions, alias/import, control flow). Inside
; a pattern, the calls and dots are wildcards whose kind `#kind?` checks: each typed
; `call` or `dot` with child steps costs ~5 ms of query compilation (symbols.scm).
; Calls are matched by where they sit, because some call nodes are not calls:
; - a function head (`def get(id)`) is the first argument of a def call, or the
;   left side of its `when`;
; - a typespec (`@spec get(id) :: User.t()`) has calls on both sides of `::`;
; - a module attribute (`@doc "..."`) is a call under `@`.

; Typespecs name types, not functions: `@spec get(integer()) :: User.t()`.
((unary_operator
   operator: "@"
   operand: (_ target: (identifier) @_attr) @_call) @ignore
 (#any-of? @_attr "spec" "type" "typep" "opaque" "callback" "macrocallback")
 (#kind? @_call call))

; Calls in statement lists (module and function bodies, clauses, blocks), in
; collections and interpolations, keyword values (`do: fun(x)`) and `fun(x).field`:
; one pattern checking the parent, as a pattern per parent would repeat the three
; call shapes, each time ~20 ms more of query compilation. (`pair` and `dot` hold a
; call only as their value and left side.)
([(call target: [(identifier) @callee (_ left: (alias) @receiver right: (identifier) @callee) @_dot])
  (call target: (_ left: (_) @receiver right: (identifier) @callee) @_dot (arguments))] @call
 (#has-parent? @call
   source do_block body block else_block after_block rescue_block catch_block
   list tuple map_content interpolation pair dot)
 (#kind? @_dot dot)
 (#not-any-of? @callee
   "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defmodule"
   "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import"
   "require" "use" "if" "unless" "case" "cond" "with" "for" "receive" "try" "quote"
   "unquote" "unquote_splicing"))

; Operands, except the head left of a def's `when` and both sides of a typespec `::`
; (`|` is left out too: it mostly joins typespec alternatives).
((binary_operator
   left: [(_ target: [(identifier) @callee (_ left: (alias) @receiver right: (identifier) @callee) @_dot]) @_call
          (_ target: (_ left: (_) @receiver right: (identifier) @callee) @_dot (arguments)) @_call] @call
   operator: _ @_op)
 (#not-any-of? @_op "when" "::" "|")
 (#kind? @_call call)
 (#kind? @_dot dot)
 (#not-any-of? @callee
   "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defmodule"
   "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import"
   "require" "use" "if" "unless" "case" "cond" "with" "for" "receive" "try" "quote"
   "unquote" "unquote_splicing"))
((binary_operator
   operator: _ @_op
   right: [(_ target: [(identifier) @callee (_ left: (alias) @receiver right: (identifier) @callee) @_dot]) @_call
           (_ target: (_ left: (_) @receiver right: (identifier) @callee) @_dot (arguments)) @_call] @call)
 (#not-any-of? @_op "::" "|")
 (#kind? @_call call)
 (#kind? @_dot dot)
 (#not-any-of? @callee
   "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defmodule"
   "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import"
   "require" "use" "if" "unless" "case" "cond" "with" "for" "receive" "try" "quote"
   "unquote" "unquote_splicing"))
((unary_operator
   operator: _ @_op
   operand: [(_ target: [(identifier) @callee (_ left: (alias) @receiver right: (identifier) @callee) @_dot]) @_call
             (_ target: (_ left: (_) @receiver right: (identifier) @callee) @_dot (arguments)) @_call] @call)
 (#not-eq? @_op "@")
 (#kind? @_call call)
 (#kind? @_dot dot)
 (#not-any-of? @callee
   "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defmodule"
   "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import"
   "require" "use" "if" "unless" "case" "cond" "with" "for" "receive" "try" "quote"
   "unquote" "unquote_splicing"))

; `fun(x)[key]`: the target of an access (not its key).
((access_call
   target: [(_ target: [(identifier) @callee (_ left: (alias) @receiver right: (identifier) @callee) @_dot]) @_call
            (_ target: (_ left: (_) @receiver right: (identifier) @callee) @_dot (arguments)) @_call] @call)
 (#kind? @_call call)
 (#kind? @_dot dot)
 (#not-any-of? @callee
   "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defmodule"
   "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import"
   "require" "use" "if" "unless" "case" "cond" "with" "for" "receive" "try" "quote"
   "unquote" "unquote_splicing"))

; Arguments of another call, unless that call defines a function (its head).
((call
   target: [(identifier) @_outer (dot)]
   (arguments
     [(_ target: [(identifier) @callee (_ left: (alias) @receiver right: (identifier) @callee) @_dot]) @_call
      (_ target: (_ left: (_) @receiver right: (identifier) @callee) @_dot (arguments)) @_call] @call))
 (#not-any-of? @_outer "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate")
 (#kind? @_call call)
 (#kind? @_dot dot)
 (#not-any-of? @callee
   "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defmodule"
   "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import"
   "require" "use" "if" "unless" "case" "cond" "with" "for" "receive" "try" "quote"
   "unquote" "unquote_splicing"))

; x |> fun (a pipe into a bare name)
(binary_operator operator: "|>" right: (identifier) @callee) @call

; Elixir definitions. Everything is a call: `defmodule X do ... end` is a call of
; defmodule whose first argument is the name. Functions are named by the head
; `def name(args)`, `def name(args) when guard` or `def name`.
;
; Nodes with children inside a pattern are wildcards whose kind `#kind?` checks,
; `(_ target: ...) @_call (#kind? @_call call)`: tree-sitter analyses every typed
; node with child steps against the parse table when it compiles the query, ~5 ms
; for each `call` (see queries/README.md, "Compile time").

; Modules, protocols and implementations, with the @moduledoc string as doc.
((call
   target: (identifier) @_kw
   (_ . (alias) @name) @_args
   (do_block
     (_
       operator: "@"
       operand: (_
         target: (identifier) @_attr
         (_ . (string) @doc) @_args) @_call) @_at) @body) @definition.module
 (#eq? @_kw "defmodule")
 (#eq? @_attr "moduledoc")
 (#kind? @_args arguments)
 (#kind? @_call call)
 (#kind? @_at unary_operator))
((call target: (identifier) @_kw (_ . (alias) @name) @_args (do_block) @body) @definition.module
 (#eq? @_kw "defmodule")
 (#kind? @_args arguments))
((call target: (identifier) @_kw (_ . (alias) @name) @_args (do_block) @body) @definition.interface
 (#eq? @_kw "defprotocol")
 (#kind? @_args arguments))
((call target: (identifier) @_kw (_ . (alias) @name) @_args (do_block) @body) @definition.impl
 (#eq? @_kw "defimpl")
 (#kind? @_args arguments))

; Functions and macros preceded by @doc "..." (possibly with @spec/@impl between).
((unary_operator
   operator: "@"
   operand: (_ target: (identifier) @_attr (_ . (string) @doc) @_args) @_call)
 .
 (unary_operator)*
 .
 (call
   target: (identifier) @_kw
   (arguments
     .
     [(_ target: (identifier) @name) @_call
      (_ left: (_ target: (identifier) @name) @_call operator: "when") @_when
      (identifier) @name])
   (do_block)? @body) @definition.function
 (#eq? @_attr "doc")
 (#any-of? @_kw "def" "defp" "defdelegate")
 (#kind? @_args arguments)
 (#kind? @_call call)
 (#kind? @_when binary_operator))
((unary_operator
   operator: "@"
   operand: (_ target: (identifier) @_attr (_ . (string) @doc) @_args) @_call)
 .
 (unary_operator)*
 .
 (call
   target: (identifier) @_kw
   (arguments
     .
     [(_ target: (identifier) @name) @_call
      (_ left: (_ target: (identifier) @name) @_call operator: "when") @_when
      (identifier) @name])
   (do_block)? @body) @definition.macro
 (#eq? @_attr "doc")
 (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp")
 (#kind? @_args arguments)
 (#kind? @_call call)
 (#kind? @_when binary_operator))

; Functions and macros without @doc: def get(id), defp helper(x) when is_map(x), def now.
((call
   target: (identifier) @_kw
   (arguments
     .
     [(_ target: (identifier) @name) @_call
      (_ left: (_ target: (identifier) @name) @_call operator: "when") @_when
      (identifier) @name])
   (do_block)? @body) @definition.function
 (#any-of? @_kw "def" "defp" "defdelegate")
 (#kind? @_call call)
 (#kind? @_when binary_operator))
((call
   target: (identifier) @_kw
   (arguments
     .
     [(_ target: (identifier) @name) @_call
      (_ left: (_ target: (identifier) @name) @_call operator: "when") @_when
      (identifier) @name])
   (do_block)? @body) @definition.macro
 (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp")
 (#kind? @_call call)
 (#kind? @_when binary_operator))

; Types: @type t :: ..., @typep, @opaque
((unary_operator
   operator: "@"
   operand: (_
     target: (identifier) @_attr
     (_
       (_
         left: [(_ target: (identifier) @name) @_call (identifier) @name]
         operator: "::") @_op) @_args) @_call) @definition.type
 (#any-of? @_attr "type" "typep" "opaque")
 (#kind? @_call call)
 (#kind? @_args arguments)
 (#kind? @_op binary_operator))

; Module attributes used as constants: @max_attempts 5 (not the reserved attributes)
((unary_operator
   operator: "@"
   operand: (_ target: (identifier) @name (arguments)) @_call) @definition.constant
 (#kind? @_call call)
 (#not-any-of? @name
   "doc" "moduledoc" "typedoc" "spec" "type" "typep" "opaque" "callback" "macrocallback"
   "impl" "behaviour" "derive" "enforce_keys" "optional_callbacks" "dialyzer" "compile"
   "before_compile" "after_compile" "after_verify" "on_load" "on_definition"
   "external_resource" "deprecated" "since" "vsn" "file" "tag" "moduletag" "describetag"))

; Elixir definitions. Everything is a call: `defmodule X do ... end` is a call of
; defmodule whose first argument is the name. Functions are named by the head
; `def name(args)`, `def name(args) when guard` or `def name`.

; Modules, protocols and implementations, with the @moduledoc string as doc.
((call
   target: (identifier) @_kw
   (arguments . (alias) @name)
   (do_block
     (unary_operator
       operator: "@"
       operand: (call
         target: (identifier) @_attr
         (arguments . (string) @doc)))) @body) @definition.module
 (#eq? @_kw "defmodule")
 (#eq? @_attr "moduledoc"))
((call target: (identifier) @_kw (arguments . (alias) @name) (do_block) @body) @definition.module
 (#eq? @_kw "defmodule"))
((call target: (identifier) @_kw (arguments . (alias) @name) (do_block) @body) @definition.interface
 (#eq? @_kw "defprotocol"))
((call target: (identifier) @_kw (arguments . (alias) @name) (do_block) @body) @definition.impl
 (#eq? @_kw "defimpl"))

; Functions and macros preceded by @doc "..." (possibly with @spec/@impl between).
((unary_operator
   operator: "@"
   operand: (call target: (identifier) @_attr (arguments . (string) @doc)))
 .
 (unary_operator)*
 .
 (call
   target: (identifier) @_kw
   (arguments
     .
     [(call target: (identifier) @name)
      (binary_operator left: (call target: (identifier) @name) operator: "when")
      (identifier) @name])
   (do_block)? @body) @definition.function
 (#eq? @_attr "doc")
 (#any-of? @_kw "def" "defp" "defdelegate"))
((unary_operator
   operator: "@"
   operand: (call target: (identifier) @_attr (arguments . (string) @doc)))
 .
 (unary_operator)*
 .
 (call
   target: (identifier) @_kw
   (arguments
     .
     [(call target: (identifier) @name)
      (binary_operator left: (call target: (identifier) @name) operator: "when")
      (identifier) @name])
   (do_block)? @body) @definition.macro
 (#eq? @_attr "doc")
 (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp"))

; Functions and macros without @doc: def get(id), defp helper(x) when is_map(x), def now.
((call
   target: (identifier) @_kw
   (arguments
     .
     [(call target: (identifier) @name)
      (binary_operator left: (call target: (identifier) @name) operator: "when")
      (identifier) @name])
   (do_block)? @body) @definition.function
 (#any-of? @_kw "def" "defp" "defdelegate"))
((call
   target: (identifier) @_kw
   (arguments
     .
     [(call target: (identifier) @name)
      (binary_operator left: (call target: (identifier) @name) operator: "when")
      (identifier) @name])
   (do_block)? @body) @definition.macro
 (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp"))

; Types: @type t :: ..., @typep, @opaque
((unary_operator
   operator: "@"
   operand: (call
     target: (identifier) @_attr
     (arguments
       (binary_operator
         left: [(call target: (identifier) @name) (identifier) @name]
         operator: "::")))) @definition.type
 (#any-of? @_attr "type" "typep" "opaque"))

; Module attributes used as constants: @max_attempts 5 (not the reserved attributes)
((unary_operator
   operator: "@"
   operand: (call target: (identifier) @name (arguments))) @definition.constant
 (#not-any-of? @name
   "doc" "moduledoc" "typedoc" "spec" "type" "typep" "opaque" "callback" "macrocallback"
   "impl" "behaviour" "derive" "enforce_keys" "optional_callbacks" "dialyzer" "compile"
   "before_compile" "after_compile" "after_verify" "on_load" "on_definition"
   "external_resource" "deprecated" "since" "vsn" "file" "tag" "moduletag" "describetag"))

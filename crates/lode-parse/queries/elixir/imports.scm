; Elixir imports: alias, import, use, require. Several patterns may match one
; call; their names are merged. Nodes with children inside a pattern are
; wildcards whose kind `#kind?` checks (see symbols.scm).

; alias MyApp.Repo, import Ecto.Query, only: [from: 2], use GenServer, require Logger
((call target: (identifier) @_kw (_ . (alias) @source) @_args) @import
 (#any-of? @_kw "alias" "import" "use" "require")
 (#kind? @_args arguments))

; alias MyApp.{Repo, User}
((call
   target: (identifier) @_kw
   (_ . (_ left: (alias) @source right: (_ (alias) @name) @_tuple) @_dot) @_args) @import
 (#any-of? @_kw "alias" "import" "use" "require")
 (#kind? @_args arguments)
 (#kind? @_dot dot)
 (#kind? @_tuple tuple))

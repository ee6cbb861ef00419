; Elixir imports: alias, import, use, require. Several patterns may match one
; call; their names are merged.

; alias MyApp.Repo, import Ecto.Query, only: [from: 2], use GenServer, require Logger
((call target: (identifier) @_kw (arguments . (alias) @source)) @import
 (#any-of? @_kw "alias" "import" "use" "require"))

; alias MyApp.{Repo, User}
((call
   target: (identifier) @_kw
   (arguments . (dot left: (alias) @source right: (tuple (alias) @name)))) @import
 (#any-of? @_kw "alias" "import" "use" "require"))

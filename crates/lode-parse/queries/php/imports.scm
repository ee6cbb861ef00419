; PHP imports. Several patterns may match one statement; their names are merged.

; use App\Models\User; use function App\fmt; use A\B as C; (source = the full name)
; Each clause is its own import, so `use A\B, C\D;` gives two.
(namespace_use_declaration
  (namespace_use_clause . [(qualified_name) (name)] @source) @import)

; use App\Contracts\{Repo, Cache as C}; (source = the prefix, names = the listed names)
(namespace_use_declaration
  (namespace_name) @source
  body: (namespace_use_group
    (namespace_use_clause . [(qualified_name) (name)] @name))) @import

; require / require_once / include / include_once 'file.php' (also __DIR__ . '/file.php';
; the concatenation is a wildcard whose kind `#kind?` checks: a typed one costs ~20 ms
; of query compilation per pattern)
(require_expression [(string) (encapsed_string)] @source) @import
((require_expression (_ right: [(string) (encapsed_string)] @source) @_concat) @import
 (#kind? @_concat binary_expression))
(require_once_expression [(string) (encapsed_string)] @source) @import
((require_once_expression (_ right: [(string) (encapsed_string)] @source) @_concat) @import
 (#kind? @_concat binary_expression))
(include_expression [(string) (encapsed_string)] @source) @import
((include_expression (_ right: [(string) (encapsed_string)] @source) @_concat) @import
 (#kind? @_concat binary_expression))
(include_once_expression [(string) (encapsed_string)] @source) @import
((include_once_expression (_ right: [(string) (encapsed_string)] @source) @_concat) @import
 (#kind? @_concat binary_expression))

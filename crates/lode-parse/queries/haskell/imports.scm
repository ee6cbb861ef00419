; Haskell imports: import Data.List (sortOn), import qualified Data.Map as M.
; Names are listed unless the import is a `hiding` one.
(import module: (module) @source) @import
((import module: (module) names: (import_list (import_name . (_) @name))) @import
 (#not-match? @import "\\bhiding\\b"))

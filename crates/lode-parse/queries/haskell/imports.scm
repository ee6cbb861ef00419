; Haskell imports: import Data.List (sortOn), import qualified Data.Map as M.
; Names are listed unless the import is a `hiding` one.
(import module: (module) @source) @import
((import module: (module) names: (_ (_ . (_) @name) @_name) @_list) @import
 (#not-match? @import "\\bhiding\\b")
 (#kind? @_list import_list)
 (#kind? @_name import_name))

; Kotlin imports: `import a.b.C` is source `a.b`, name `C` (also with `as D`);
; `import a.b.*` is source `a.b`. The grammar has no node for the package part
; of a qualified name, so its first and last segments are captured and the
; source spans from one to the other.

; import a.b.*
((import (qualified_identifier) @source) @import
  (#match? @import "\\*"))
; import a.b.c.C, import a.b.C, import a.b.C as D
((import
   (qualified_identifier . (identifier) @source (identifier) @source . (identifier) @name .)) @import
  (#not-match? @import "\\*"))
((import (qualified_identifier . (identifier) @source . (identifier) @name .)) @import
  (#not-match? @import "\\*"))
; import Foo
((import (qualified_identifier . (identifier) @name .) @source) @import
  (#not-match? @import "\\*"))

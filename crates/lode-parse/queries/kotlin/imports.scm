; Kotlin imports. The grammar does not split a qualified name into package and
; member, so the source is the whole path; the name is its last segment.

; import a.b.*
((import (qualified_identifier) @source) @import
  (#match? @import "\\*"))
; import a.b.C, import a.b.C as D
((import (qualified_identifier (identifier) @name .) @source) @import
  (#not-match? @import "\\*"))

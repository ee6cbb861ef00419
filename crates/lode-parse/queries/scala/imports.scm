; Scala imports. The grammar has no node for the dotted path `a.b.c`, so the
; source is captured as its first and last package segments and spans from one
; to the other (`java.io` for `import java.io.File`). The names are the
; imported members.

; import a.b.C, import a.b.C as D
(import_declaration . (identifier) @source (identifier) @source . (identifier) @name .) @import
(import_declaration . (identifier) @source . (identifier) @name .) @import
(import_declaration . (identifier) @source (identifier) @source . (as_renamed_identifier name: (_) @name) .) @import
(import_declaration . (identifier) @source . (as_renamed_identifier name: (_) @name) .) @import
; import a.b._, import a.b.*
(import_declaration . (identifier) @source (identifier)? @source . (namespace_wildcard)) @import
; import a.b.{C, D => E, F as G}
(import_declaration
  . (identifier) @source (identifier)? @source
  . (namespace_selectors
    [(identifier) @name
     (arrow_renamed_identifier name: (_) @name)
     (as_renamed_identifier name: (_) @name)])) @import
; import Foo
(import_declaration . (identifier) @source .) @import

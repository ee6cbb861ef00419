; Go imports: one import per spec, the source is the package path. Go imports
; packages, not names, so names stay empty (an alias is not an imported name).
(import_spec path: (_) @source) @import

; Go imports: one import per spec, the source is the package path. Go imports
; packages, not names: names stay empty but for an alias (`* as f`).
(import_spec path: (_) @source) @import
(import_spec name: (package_identifier) @alias path: (_) @source) @import

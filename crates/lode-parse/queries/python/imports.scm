; import a.b, c as d
(import_statement name: (dotted_name) @source) @import
(import_statement name: (aliased_import name: (dotted_name) @source alias: (identifier) @alias)) @import
; from a.b import c, d as e
(import_from_statement module_name: (_) @source name: (dotted_name) @name) @import
(import_from_statement module_name: (_) @source name: (aliased_import name: (dotted_name) @name alias: (identifier) @alias)) @import
(import_from_statement module_name: (_) @source (wildcard_import)) @import

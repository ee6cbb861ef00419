; TypeScript imports (TypeScript and TSX grammars). Several patterns may match one
; statement; their names are merged into one import.

; import x, { a, b as c } from 'm'; import type { T } from 'm'; import * as ns from 'm'
; (names are the default binding and the imported names; an alias is `@alias`)
(import_statement source: (string) @source) @import
(import_statement (import_clause (identifier) @name)) @import
(import_statement (import_clause (named_imports (import_specifier name: (_) @name !alias)))) @import
(import_statement (import_clause (named_imports (import_specifier name: (_) @name alias: (_) @alias)))) @import
(import_statement (import_clause (namespace_import (identifier) @alias))) @import

; import fs = require('fs')
(import_statement (import_require_clause source: (string) @source)) @import

; export { a, b as c } from 'm'; export * from 'm'
(export_statement source: (string) @source) @import
(export_statement (export_clause (export_specifier name: (_) @name)) source: (_)) @import

; require('m'), with names when destructured: const { a, b: c } = require('m')
; (nodes with children inside a pattern are wildcards whose kind #kind? checks)
((call_expression
   function: (identifier) @_fn
   arguments: (_ . (string) @source .) @_args) @import
 (#kind? @_args arguments)
 (#eq? @_fn "require"))
((variable_declarator
   name: (_
     [(shorthand_property_identifier_pattern) @name
      (_ key: (property_identifier) @name) @_pair]) @_pattern
   value: (_ function: (identifier) @_fn) @import)
 (#kind? @_pattern object_pattern)
 (#kind? @_pair pair_pattern)
 (#kind? @import call_expression)
 (#eq? @_fn "require"))

; dynamic import('m')
((call_expression function: (import) arguments: (_ . (string) @source) @_args) @import
 (#kind? @_args arguments))

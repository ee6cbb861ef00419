; Rust `use` declarations: the source is the path, the names are what the
; declaration brings into scope (`use a::b::C` is source `a::b`, name `C`).

; use foo;  use foo as bar;
(use_declaration argument: (identifier) @source) @import
(use_declaration argument: (use_as_clause path: (identifier) @source alias: (_) @alias)) @import

; use a::b::C;  use a::b::C as D;
(use_declaration argument: (scoped_identifier path: (_) @source name: (_) @name)) @import
(use_declaration
  argument: (use_as_clause path: (scoped_identifier path: (_) @source name: (_) @name) alias: (_) @alias)) @import

; use a::b::*;
(use_declaration argument: (use_wildcard (_) @source)) @import

; use a::b::{C, d::E, F as G, self};
(use_declaration
  argument: (scoped_use_list
    path: (_) @source
    list: (use_list
      [(identifier) @name
       (self) @name
       (scoped_identifier name: (_) @name)
       (use_as_clause path: (identifier) @name alias: (_) @alias)
       (use_as_clause path: (scoped_identifier name: (_) @name) alias: (_) @alias)]))) @import
; One level of nesting: use a::{b::{C, D}};
(use_declaration
  argument: (scoped_use_list
    path: (_) @source
    list: (use_list
      (scoped_use_list
        list: (use_list
          [(identifier) @name
           (scoped_identifier name: (_) @name)
           (use_as_clause path: (identifier) @name alias: (_) @alias)
           (use_as_clause path: (scoped_identifier name: (_) @name) alias: (_) @alias)]))))) @import

; extern crate foo;
(extern_crate_declaration name: (identifier) @source) @import

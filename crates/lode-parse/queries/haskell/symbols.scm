; Haskell definitions.
;
; A function is one symbol: its first equation (later equations of the same name
; are skipped; the type signature is not part of the span). An equation is the
; first one when it opens its block, follows a signature or a node without a name
; (a comment, pragma, fixity), or follows a definition with another name.
; Only top-level, class and instance declarations count (not `where`/`let` bindings).
;
; Haddock comments (`-- |`) are captured as @doc explicitly: they sit before the
; type signature, not before the equation. The Haddock comment of the first
; declaration is the last child of the imports node, or without imports a
; sibling of the declarations node.
;
; Equations are matched as `(_ name: (variable))` whose kind `#kind?` checks, and
; nodes with children inside a pattern (imports, declarations) likewise: tree-sitter
; analyses each typed node with children against the parse table when it compiles
; the query (an alternation of `function` and `bind` cost ~8 ms per pattern).

; Documented functions: -- | doc (or a one-line -- comment), optional signature, first equation.
(declarations
  [(haddock) (comment)] @doc
  .
  (signature) @_sig
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(declarations
  (haddock) @doc
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(haskell
  (imports (haddock) @doc .)
  .
  (declarations
    .
    (signature) @_sig
    .
    (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind)))
(haskell
  (imports (haddock) @doc .)
  .
  (declarations
    .
    (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind)))
(haskell
  (haddock) @doc
  .
  (declarations
    .
    (signature) @_sig
    .
    (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind)))

; Functions: the first equation of a block, after a signature or a nameless node,
; or after a definition with another name.
(declarations
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(declarations
  [(signature) (_ !name)] @_prev
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(declarations
  (_ name: (_) @_prev)
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind)
  (#not-eq? @_prev @name))
(class_declarations
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(class_declarations
  [(signature) (_ !name)] @_prev
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(class_declarations
  (_ name: (_) @_prev)
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind)
  (#not-eq? @_prev @name))
(instance_declarations
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(instance_declarations
  [(signature) (_ !name)] @_prev
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind))
(instance_declarations
  (_ name: (_) @_prev)
  .
  (_ name: (variable) @name) @definition.function
  (#kind? @definition.function function bind)
  (#not-eq? @_prev @name))

; Documented types, classes and instances.
(declarations (haddock) @doc . (data_type name: (name) @name constructors: (data_constructors (data_constructor) (data_constructor)) @body) @definition.enum)
(declarations (haddock) @doc . [(data_type name: (name) @name constructors: (_)? @body) (newtype name: (name) @name constructor: (_)? @body)] @definition.struct)
(declarations (haddock) @doc . (type_synomym name: (name) @name) @definition.type)
(declarations (haddock) @doc . (class name: (name) @name) @definition.interface)
(declarations (haddock) @doc . (instance name: (name) @name) @definition.impl)
((haskell (_ (haddock) @doc .) @_imports . (_ . (data_type name: (name) @name constructors: (data_constructors (data_constructor) (data_constructor)) @body) @definition.enum) @_declarations)
 (#kind? @_imports imports) (#kind? @_declarations declarations))
((haskell (_ (haddock) @doc .) @_imports . (_ . [(data_type name: (name) @name constructors: (_)? @body) (newtype name: (name) @name constructor: (_)? @body)] @definition.struct) @_declarations)
 (#kind? @_imports imports) (#kind? @_declarations declarations))
((haskell (_ (haddock) @doc .) @_imports . (_ . (type_synomym name: (name) @name) @definition.type) @_declarations)
 (#kind? @_imports imports) (#kind? @_declarations declarations))
((haskell (_ (haddock) @doc .) @_imports . (_ . (class name: (name) @name) @definition.interface) @_declarations)
 (#kind? @_imports imports) (#kind? @_declarations declarations))
((haskell (_ (haddock) @doc .) @_imports . (_ . (instance name: (name) @name) @definition.impl) @_declarations)
 (#kind? @_imports imports) (#kind? @_declarations declarations))

; Types, classes and instances.
; data with several constructors: data Color = Red | Green
(data_type name: (name) @name constructors: (data_constructors (data_constructor) (data_constructor)) @body) @definition.enum
; other data types and newtypes: data Store k v = Store {..}, newtype Key = Key String
[(data_type name: (name) @name constructors: (_)? @body) (newtype name: (name) @name constructor: (_)? @body)] @definition.struct
; type synonyms: type Name = String
(type_synomym name: (name) @name) @definition.type
; type classes: class Container f where
(class name: (name) @name) @definition.interface
; instances, named by their class: instance Container Maybe where
(instance name: (name) @name) @definition.impl

; Method signatures in a class: insert :: k -> f k -> f k
(class_declarations (signature name: (variable) @name) @definition.function)

; The module header: module Data.Store (Store, empty) where
((haddock) @doc . (header module: (module) @name exports: (exports)? @body) @definition.module)
(header module: (module) @name exports: (exports)? @body) @definition.module

; Rust definitions.

; Functions; inside a trait or impl they become methods.
(function_item name: (identifier) @name body: (block) @body) @definition.function
; Required trait methods and foreign functions: no body, the signature ends at `;`.
(function_signature_item name: (identifier) @name ";" @body) @definition.function

; Types.
(struct_item name: (type_identifier) @name body: (_)? @body) @definition.struct
(union_item name: (type_identifier) @name body: (_)? @body) @definition.struct
(enum_item name: (type_identifier) @name body: (_) @body) @definition.enum
(trait_item name: (type_identifier) @name body: (_) @body) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(associated_type name: (type_identifier) @name) @definition.type

; impl blocks are named by their self type: `impl<T> Trait for Foo<T>` is `impl Foo`.
(impl_item type: (type_identifier) @name body: (_) @body) @definition.impl
(impl_item type: (generic_type type: (type_identifier) @name) body: (_) @body) @definition.impl
(impl_item type: (scoped_type_identifier name: (type_identifier) @name) body: (_) @body) @definition.impl
(impl_item type: (generic_type type: (scoped_type_identifier name: (type_identifier) @name)) body: (_) @body) @definition.impl
(impl_item type: (_) @name body: (_) @body) @definition.impl

; Modules with a body (`mod foo;` only declares a file).
(mod_item name: (identifier) @name body: (_) @body) @definition.module

; Constants and statics.
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.variable

; macro_rules!
(macro_definition name: (identifier) @name) @definition.macro

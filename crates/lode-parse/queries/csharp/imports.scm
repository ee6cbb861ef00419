; C# using directives import namespaces (or, with `static`, a type's members),
; not names: the source is the namespace, `using A = B.C;` imports `B.C`.
(using_directive [(identifier) (qualified_name) (generic_name)] @source .) @import

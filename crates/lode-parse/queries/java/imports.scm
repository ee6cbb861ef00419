; Java imports: `import a.b.C;` is source `a.b`, name `C`; `import a.b.*;` is
; source `a.b`. Static imports work the same way (`a.b.C.member`).
(import_declaration (scoped_identifier scope: (_) @source name: (identifier) @name) .) @import
(import_declaration (scoped_identifier) @source (asterisk)) @import
(import_declaration (identifier) @source .) @import

; Swift imports a module (`import Foundation`) or one declaration of it
; (`import struct Darwin.C.size_t`): the source is the path as written.
(import_declaration (identifier) @source) @import

; C++ includes and using declarations.

; #include <map>, #include "config.hpp": the source is the path.
(preproc_include path: (_) @source) @import

; using namespace std;  using namespace a::b;
((using_declaration [(identifier) (qualified_identifier)] @source) @import
  (#match? @import "^using\\s+namespace\\b"))
; using std::string: source `std`, name `string`. For `using a::b::c` the
; grammar has no node for `a::b`: its first and last segments are captured and
; the source spans from one to the other. Qualified names are wildcards whose
; kind `#kind?` checks (see calls.scm).
((using_declaration
  (_ scope: (_) @source name: (identifier) @name) @_qualified) @import
  (#not-match? @import "^using\\s+namespace\\b")
  (#kind? @_qualified qualified_identifier))
((using_declaration
  (_
    scope: (_) @source
    name: (_ scope: (_) @source name: (identifier) @name) @_qualified) @_qualified) @import
  (#not-match? @import "^using\\s+namespace\\b")
  (#kind? @_qualified qualified_identifier))
((using_declaration
  (_
    scope: (_) @source
    name: (_
      name: (_ scope: (_) @source name: (identifier) @name) @_qualified) @_qualified) @_qualified) @import
  (#not-match? @import "^using\\s+namespace\\b")
  (#kind? @_qualified qualified_identifier))

; C++ includes and using declarations.

; #include <map>, #include "config.hpp": the source is the path.
(preproc_include path: (_) @source) @import

; using namespace std;  using namespace a::b;
((using_declaration [(identifier) (qualified_identifier)] @source) @import
  (#match? @import "^using\\s+namespace\\b"))
; using std::string: source `std`, name `string`. For `using a::b::c` the
; grammar has no node for `a::b`: its first and last segments are captured and
; the source spans from one to the other.
((using_declaration
  (qualified_identifier scope: (_) @source name: (identifier) @name)) @import
  (#not-match? @import "^using\\s+namespace\\b"))
((using_declaration
  (qualified_identifier
    scope: (_) @source
    name: (qualified_identifier scope: (_) @source name: (identifier) @name))) @import
  (#not-match? @import "^using\\s+namespace\\b"))
((using_declaration
  (qualified_identifier
    scope: (_) @source
    name: (qualified_identifier
      name: (qualified_identifier scope: (_) @source name: (identifier) @name)))) @import
  (#not-match? @import "^using\\s+namespace\\b"))

; Ruby definitions.
;
; Comments between a header and the first statement of a body sit between the
; header's children and the body node, so @body is taken as the first node after
; the name (or the parameters): the signature then stops before such a comment.

; Modules and classes: module Billing, class Invoice < Base, class Foo::Bar
; (no @body: the signature is the first line)
(module name: (_) @name) @definition.module
(class name: (_) @name) @definition.class

; Methods: def total(x), def self.build(*args) = new(*args); singleton methods are
; named without `self.`. A method without a body falls back to the last pattern.
(method name: (_) @name parameters: (_) @_params . (_) @body) @definition.function
(method name: (_) @name !parameters . (_) @body) @definition.function
(singleton_method name: (_) @name parameters: (_) @_params . (_) @body) @definition.function
(singleton_method name: (_) @name !parameters . (_) @body) @definition.function
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function

; Constants: RATE = 0.2, Point = Struct.new(:x, :y)
(assignment left: (constant) @name) @definition.constant

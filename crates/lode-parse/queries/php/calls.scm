; PHP call sites.

; f(x), \App\f(x)
(function_call_expression function: (name) @callee) @call
(function_call_expression function: (qualified_name (name) @callee)) @call

; $obj->m(), $obj?->m()
(member_call_expression object: (_) @receiver name: (name) @callee) @call
(nullsafe_member_call_expression object: (_) @receiver name: (name) @callee) @call

; Foo::bar(), parent::__construct(), static::make()
(scoped_call_expression scope: (_) @receiver name: (name) @callee) @call

; new Foo(), new \App\Foo() (not new static / new self)
((object_creation_expression (name) @callee) @call
 (#not-any-of? @callee "static" "self" "parent"))
(object_creation_expression (qualified_name (name) @callee)) @call

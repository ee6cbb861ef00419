; Ruby imports: require 'json', require_relative './util', load 'tasks.rb'
((call
   !receiver
   method: (identifier) @_m
   arguments: (argument_list . (string (string_content) @source)))
 (#any-of? @_m "require" "require_relative" "load")) @import

; loci import query for Ruby: `require 'x'`, `require_relative 'x'` (string literal
; arguments only).
(call
  method: (identifier) @import.kind
  arguments: (argument_list . (string . (string_content) @import.module .))
  (#any-of? @import.kind "require" "require_relative" "load")) @import

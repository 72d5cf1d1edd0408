(call
  function: (identifier) @_source
  arguments: (arguments . (argument value: (string (string_content) @import.module)))
  (#eq? @_source "source")) @import
(call
  function: (identifier) @_library
  arguments: (arguments . (argument value: (identifier) @import.module))
  (#any-of? @_library "library" "require")) @import

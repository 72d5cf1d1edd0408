(builtin_function
  (builtin_identifier) @_import
  (arguments . (string (string_content) @import.module))
  (#eq? @_import "@import")) @import

(call
  target: (identifier) @_kind
  (arguments . (alias) @import.module)
  (#any-of? @_kind "alias" "import" "require" "use")) @import

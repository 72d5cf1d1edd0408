(command
  name: (command_name (word) @_source)
  .
  argument: [(word) (string) (raw_string) (concatenation)] @import.module
  (#any-of? @_source "source" "."))  @import

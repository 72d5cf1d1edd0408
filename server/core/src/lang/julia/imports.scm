(using_statement (identifier) @import.module) @import
(import_statement (identifier) @import.module) @import
(import_statement (selected_import . (identifier) @import.module)) @import
(call_expression
  . (identifier) @_include
  (argument_list . (string_literal (content) @import.module))
  (#eq? @_include "include")) @import

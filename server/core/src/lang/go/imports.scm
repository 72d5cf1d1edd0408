; loci import query for Go: every import spec, single or grouped.
(import_spec
  path: (interpreted_string_literal (interpreted_string_literal_content) @import.module)) @import
(import_spec path: (raw_string_literal (raw_string_literal_content) @import.module)) @import

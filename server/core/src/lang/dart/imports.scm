(import_specification uri: (configurable_uri (uri (string_literal) @import.module))) @import
(library_export (configurable_uri (uri (string_literal) @import.module))) @import

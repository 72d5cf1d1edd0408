(pp_include file: (string) @import.module) @import
(pp_include_lib file: (string) @import.module) @import

; loci import query for C and C++: `#include "x.h"` (resolved) and `#include <x.h>`
; (recorded with its angle brackets, never resolved).
(preproc_include path: (string_literal (string_content) @import.module)) @import
(preproc_include path: (system_lib_string) @import.module) @import

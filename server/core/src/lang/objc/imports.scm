; `#import "x.h"` and `#include "x.h"` (resolved as C includes) and `#import <x.h>`
; (recorded with its angle brackets, never resolved).
(preproc_include path: (string_literal (string_content) @import.module)) @import
(preproc_include path: (system_lib_string) @import.module) @import

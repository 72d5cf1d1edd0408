; loci import query for PHP: `require`/`include` (`_once`) of a string or of
; `__DIR__ . '/x.php'` (the argument is read in code), and `use A\B;` / `use A\{B, C};`.
(require_expression (_) @import.arg) @import
(require_once_expression (_) @import.arg) @import
(include_expression (_) @import.arg) @import
(include_once_expression (_) @import.arg) @import
(namespace_use_declaration) @import.use

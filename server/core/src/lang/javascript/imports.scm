; loci import query for JavaScript, TypeScript and TSX.
; `import x, { a, b as c } from './m'`, `import * as ns from './m'`, `import './m'`
(import_statement source: (string (string_fragment) @import.module)) @import

; `export { a } from './m'`, `export * from './m'`
(export_statement source: (string (string_fragment) @import.module)) @import

; `require('./m')`
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import.module) .)
  (#eq? @_require "require")) @import

; `import('./m')`
(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @import.module))) @import

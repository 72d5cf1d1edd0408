; loci import query for Python.
; `import a.b, c as d`: one import per module
(import_statement name: [
  (dotted_name) @import.module
  (aliased_import name: (dotted_name) @import.module)
]) @import

; `from .x import y, z as w` / `from . import m`: one match per imported name
(import_from_statement
  module_name: (_) @import.module
  name: [
    (dotted_name) @import.name
    (aliased_import name: (dotted_name) @import.name)
  ]) @import

; `from m import *`
(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.name) @import

; loci additions to tree-sitter-c-sharp's tags query (prepended: on a tie these win).

; `namespace Acme.Util { .. }` and file-scoped `namespace Acme.Util;`
(namespace_declaration name: (qualified_name) @name) @definition.module
(file_scoped_namespace_declaration name: [(identifier) (qualified_name)] @name) @definition.module

(struct_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class

(invocation_expression function: (identifier) @name) @reference.call

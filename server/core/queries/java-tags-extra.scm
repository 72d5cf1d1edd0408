; loci additions to tree-sitter-java's tags query (prepended: on a tie these win).

; `package com.acme;` is the file's module (the engine maps packages to files with it)
(package_declaration [(identifier) (scoped_identifier)] @name) @definition.module

(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface

; loci additions to tree-sitter-java's tags query (prepended: on a tie these win).

; `package com.acme;` is the file's module (the engine maps packages to files with it)
(package_declaration [(identifier) (scoped_identifier)] @name) @definition.module

(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface

; `implements Outer.Inner`, `implements Comparable<T>`, `extends Base<T>`
(type_list (scoped_type_identifier (type_identifier) @name .)) @reference.implementation
(type_list
  (generic_type [
    (type_identifier) @name
    (scoped_type_identifier (type_identifier) @name .)
  ])) @reference.implementation
(superclass (generic_type (type_identifier) @name)) @reference.class
(superclass (scoped_type_identifier (type_identifier) @name .)) @reference.class

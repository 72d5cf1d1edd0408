; loci additions to tree-sitter-go's tags query (prepended: on a tie these win).

; struct and interface types are classes and interfaces (the shipped query names every
; type spec `@definition.type`)
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.class
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface

; interface methods
(interface_type (method_elem name: (field_identifier) @name) @definition.method)

(const_declaration (const_spec name: (identifier) @name) @definition.constant)

; loci additions to the tags queries of tree-sitter-javascript and tree-sitter-typescript
; for TypeScript and TSX (prepended: on a tie these win).

; `class A extends B implements I`
(extends_clause value: (identifier) @name) @reference.implementation
(extends_clause
  value: (member_expression property: (property_identifier) @name)) @reference.implementation
(implements_clause (type_identifier) @name) @reference.implementation
(extends_type_clause type: (type_identifier) @name) @reference.implementation

; `namespace N { .. }`
(internal_module name: (identifier) @name) @definition.module

(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.type

; loci additions to tree-sitter-javascript's tags query (prepended: on a tie these win).

; `class A extends B`
(class_heritage (identifier) @name) @reference.implementation
(class_heritage (member_expression property: (property_identifier) @name)) @reference.implementation

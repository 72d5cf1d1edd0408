; loci additions to tree-sitter-php's tags query (prepended: on a tie these win).

(base_clause [(name) (qualified_name)] @name) @reference.implementation
(enum_declaration name: (name) @name) @definition.class
(const_element (name) @name) @definition.constant

; loci additions to tree-sitter-php's tags query (prepended: on a tie these win).

(base_clause [(name) (qualified_name)] @name) @reference.implementation
(enum_declaration name: (name) @name) @definition.class
(const_element (name) @name) @definition.constant

; `new User(..)` and `format_name(..)` with unqualified names (the shipped patterns only
; match qualified and variable names)
(object_creation_expression (name) @name) @reference.class
(function_call_expression function: (name) @name) @reference.call

; Zig tags (tree-sitter-zig ships no tags query).
(variable_declaration (identifier) @name (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name (union_declaration)) @definition.union
(function_declaration name: (identifier) @name) @definition.function
(test_declaration (string) @name) @definition.function
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression member: (identifier) @name)) @reference.call

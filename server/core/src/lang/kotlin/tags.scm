; Kotlin tags (tree-sitter-kotlin-ng ships no tags query).
((class_declaration "interface" name: (identifier) @name) @definition.interface)
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(source_file (property_declaration (variable_declaration (identifier) @name)) @definition.constant)
(call_expression . (identifier) @name) @reference.call
(call_expression . (navigation_expression (identifier) @name .)) @reference.call
(delegation_specifier (constructor_invocation (user_type (identifier) @name))) @reference.implementation
(delegation_specifier (type (user_type (identifier) @name))) @reference.implementation

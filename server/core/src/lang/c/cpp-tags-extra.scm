; loci additions to tree-sitter-cpp's tags query (prepended: on a tie these win).

(namespace_definition name: (namespace_identifier) @name) @definition.module

; `void ns::Type::method() {}`: nested qualified names
(function_declarator
  declarator: (qualified_identifier
    name: (qualified_identifier name: (identifier) @name))) @definition.method
(function_declarator
  declarator: (qualified_identifier
    name: (qualified_identifier
      name: (qualified_identifier name: (identifier) @name)))) @definition.method

(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(new_expression type: (type_identifier) @name) @reference.class
(base_class_clause (type_identifier) @name) @reference.implementation

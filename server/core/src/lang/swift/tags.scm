; Swift tags, after tree-sitter-swift's own (which marks every `let` a definition and a
; class as a method's node).
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum
(class_declaration declaration_kind: ["class" "actor"] name: (type_identifier) @name) @definition.class
(class_declaration declaration_kind: "extension" name: (user_type (type_identifier) @name)) @reference.implementation
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration "init" @name) @definition.method
(typealias_declaration name: (type_identifier) @name) @definition.type
; Calls, not subscripts (`products[sku]` is a `call_expression` too, with `[`).
(call_expression . (simple_identifier) @name . (call_suffix (value_arguments . "("))) @reference.call
(call_expression . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name)) . (call_suffix (value_arguments . "("))) @reference.call
(inheritance_specifier inherits_from: (user_type (type_identifier) @name)) @reference.implementation

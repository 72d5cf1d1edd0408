; Objective-C tags (tree-sitter-objc ships no tags query); C functions as in C.
(class_interface . (identifier) @name) @definition.class
(class_implementation . (identifier) @name) @scope
(protocol_declaration . (identifier) @name) @definition.interface
; A method is named by its selector's first part (`addSku` for `addSku:quantity:`).
(method_declaration . (method_type) . (identifier) @name) @definition.method
(method_definition . (method_type) . (identifier) @name) @definition.method
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(message_expression method: (identifier) @name) @reference.call
(call_expression function: (identifier) @name) @reference.call
(class_interface superclass: (identifier) @name) @reference.implementation

; Scala tags, after tree-sitter-scala's own `queries/tags.scm` (not exported by the
; crate), without its local `val`/`var` definitions: only members of a template body or
; the file are.
(package_clause name: (package_identifier) @name) @definition.module
(trait_definition name: (identifier) @name) @definition.interface
(enum_definition name: (identifier) @name) @definition.enum
(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(template_body (val_definition pattern: (identifier) @name) @definition.constant)
(compilation_unit (val_definition pattern: (identifier) @name) @definition.constant)
(type_definition name: (type_identifier) @name) @definition.type
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (identifier) @name)) @reference.call
(instance_expression (type_identifier) @name) @reference.call
(extends_clause (type_identifier) @name) @reference.implementation

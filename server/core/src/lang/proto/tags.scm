; Protocol Buffers tags (tree-sitter-proto ships no tags query).
(package (full_ident) @name) @definition.module
(message (message_name (identifier) @name)) @definition.class
(enum (enum_name (identifier) @name)) @definition.enum
(service (service_name (identifier) @name)) @definition.interface
(rpc (rpc_name (identifier) @name)) @definition.method
(type (message_or_enum_type (identifier) @name .)) @reference.type
(rpc (message_or_enum_type (identifier) @name .)) @reference.type

; Erlang tags (tree-sitter-erlang ships no tags query).
(module_attribute name: (atom) @name) @definition.module
(fun_decl clause: (function_clause name: (atom) @name)) @definition.function
(record_decl name: (atom) @name) @definition.class
(type_alias name: (type_name name: (atom) @name)) @definition.type
(pp_define lhs: (macro_lhs name: (_) @name)) @definition.macro
(call expr: (atom) @name) @reference.call
(call expr: (remote fun: (atom) @name)) @reference.call
(behaviour_attribute name: (atom) @name) @reference.implementation

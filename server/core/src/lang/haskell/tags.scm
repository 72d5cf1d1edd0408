; Haskell tags (tree-sitter-haskell ships no tags query).
(header module: (module) @name) @definition.module
(data_type name: (name) @name) @definition.type
(newtype name: (name) @name) @definition.type
(type_synonym name: (name) @name) @definition.type
(class name: (name) @name) @definition.interface
(declarations (function name: (variable) @name) @definition.function)
(declarations (bind name: (variable) @name) @definition.function)
(apply function: (variable) @name) @reference.call
(apply function: (qualified (variable) @name)) @reference.call

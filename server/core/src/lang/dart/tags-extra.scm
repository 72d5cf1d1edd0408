; Dart: loci's additions to tree-sitter-dart's tags query.
(mixin_declaration (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum

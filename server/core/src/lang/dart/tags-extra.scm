; Dart: loci's additions to tree-sitter-dart's tags query (placed first, so they win).
; A method is its whole `method_declaration` (signature and body), so calls in its body
; are in it; the shipped query takes the signature alone.
(method_declaration
  signature: (method_signature (function_signature name: (identifier) @name))) @definition.method
(method_declaration
  signature: (method_signature (getter_signature name: (identifier) @name))) @definition.method
(mixin_declaration (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum

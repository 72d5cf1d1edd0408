; loci additions to tree-sitter-python's tags query (prepended: on a tie these win).

; base classes: `class A(Base, mod.Mixin)`
(class_definition
  superclasses: (argument_list [
    (identifier) @name
    (attribute attribute: (identifier) @name)
  ])) @reference.implementation

; classes used in annotations: `def f(user: User) -> User`, `x: list[User] = []`
; (tree-sitter-python's query has none, so `loci refs User` and `loci impact` missed them)
(type (identifier) @name) @reference.type
(type (attribute attribute: (identifier) @name)) @reference.type

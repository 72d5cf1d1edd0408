; loci additions to tree-sitter-python's tags query (prepended: on a tie these win).

; base classes: `class A(Base, mod.Mixin)`
(class_definition
  superclasses: (argument_list [
    (identifier) @name
    (attribute attribute: (identifier) @name)
  ])) @reference.implementation

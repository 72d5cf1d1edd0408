; OCaml: loci's additions to tree-sitter-ocaml's tags query.
(exception_definition (constructor_declaration (constructor_name) @name)) @definition.type

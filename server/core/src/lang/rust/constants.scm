; loci's late additions to tree-sitter-rust's tags query (appended: every other pattern on
; the same name node wins, so a call or a definition of the name stays one).

; A constant or static read by its name, upper case by convention (`MAX_BURST`, in code
; and in macro arguments): `loci refs MAX_BURST` lists where it is used. Names a `use`
; lists are its import's, not reads; a macro's tokens are read where its arguments are
; parsed again as code, never as tokens (`thread_local!(static CACHE ..)` defines it).
((identifier) @name @reference.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*[A-Z0-9]$"))
(use_declaration argument: (identifier) @ignore)
(use_list (identifier) @ignore)
(use_as_clause path: (identifier) @ignore)
(use_as_clause alias: (identifier) @ignore)
(scoped_use_list path: (identifier) @ignore)
(token_tree (identifier) @ignore)

; loci's late additions to tree-sitter-python's tags query (appended: every other pattern
; on the same name node wins, so a call or a definition of the name stays one).

; A constant read by its name, upper case by convention (`_MAXLINE`, `socket.AF_INET`):
; `loci refs _MAXLINE` lists where it is used. The names an import statement lists are
; its import's, and parameters and keyword arguments are named, not read.
((identifier) @name @reference.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*[A-Z0-9]$"))
(import_from_statement (dotted_name (identifier) @ignore))
(import_statement (dotted_name (identifier) @ignore))
(aliased_import name: (dotted_name (identifier) @ignore))
(aliased_import alias: (identifier) @ignore)
(keyword_argument name: (identifier) @ignore)
(parameters (identifier) @ignore)
(default_parameter name: (identifier) @ignore)
(typed_parameter (identifier) @ignore)
(typed_default_parameter name: (identifier) @ignore)

; loci's late additions to tree-sitter-python's tags query (appended: every other pattern
; on the same name node wins, so a call or a definition of the name stays one).

; A constant read by its name, upper case by convention (`_MAXLINE`, `socket.AF_INET`):
; `loci refs _MAXLINE` lists where it is used. The names an import statement lists are
; its import's, parameters and keyword arguments are named, not read, `global` and
; `nonlocal` declare, and an assignment's or a loop's targets are written, not read.
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
(global_statement (identifier) @ignore)
(nonlocal_statement (identifier) @ignore)
(assignment left: (identifier) @ignore)
(assignment left: (pattern_list (identifier) @ignore))
(assignment left: (tuple_pattern (identifier) @ignore))
(for_statement left: (identifier) @ignore)

; Any other name read as a value (`key=_make_key`, `timer=default_timer`, `except
; ftplib.all_errors`): a reference where the file binds the name, or reads it from an
; imported module (`@reference.value`). After the constant pattern, which wins on an
; upper-case name; a member read (`ftplib.all_errors`) before a bare name, so its
; reference node is the member expression. The object of a member read (`os` and `path`
; in `os.path.join`) is none: its member is the reference.
(attribute attribute: (identifier) @name) @reference.value
(identifier) @name @reference.value
((attribute object: (identifier) @ignore)
  (#not-match? @ignore "^_*[A-Z][A-Z0-9_]*[A-Z0-9]$"))
((attribute object: (attribute attribute: (identifier) @ignore))
  (#not-match? @ignore "^_*[A-Z][A-Z0-9_]*[A-Z0-9]$"))

; loci additions to tree-sitter-ruby's tags query (prepended: on a tie these win).

; `VERSION = '1.0'`: a constant definition (the shipped query would report the
; assigned constant as a call)
(assignment left: (constant) @name) @definition.constant

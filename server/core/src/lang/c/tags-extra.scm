; loci additions to tree-sitter-c's tags query (prepended: on a tie these win).

(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro

(call_expression function: (identifier) @name) @reference.call

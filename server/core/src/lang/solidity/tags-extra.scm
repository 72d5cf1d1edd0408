; Solidity: loci's additions to tree-sitter-solidity's tags query.
(modifier_definition name: (identifier) @name) @definition.function
(modifier_invocation (identifier) @name) @reference.call

; HCL/Terraform tags (tree-sitter-hcl ships no tags query). A block is named by its last
; label (`resource "aws_instance" "web"` is `web`, `variable "region"` is `region`);
; references are the names read from variables and other blocks (`var.region`,
; `module.network.subnet_id`: `region`, `network`).
(block (identifier) @_type (string_lit) (string_lit (template_literal) @name) . (block_start)
  (#any-of? @_type "resource" "data")) @definition.class
(block (identifier) @_type . (string_lit (template_literal) @name) . (block_start)
  (#eq? @_type "module")) @definition.module
(block (identifier) @_type . (string_lit (template_literal) @name) . (block_start)
  (#any-of? @_type "variable" "output" "provider")) @definition.constant
(expression (variable_expr (identifier) @_root) . (get_attr (identifier) @name)
  (#any-of? @_root "var" "module" "local" "data")) @reference.call

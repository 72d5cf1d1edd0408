(block (identifier) @_module
  (body (attribute (identifier) @_source (expression (template_expr (quoted_template (template_literal) @import.module)))))
  (#eq? @_module "module") (#eq? @_source "source")) @import
(block (identifier) @_module
  (body (attribute (identifier) @_source (expression (literal_value (string_lit (template_literal) @import.module)))))
  (#eq? @_module "module") (#eq? @_source "source")) @import

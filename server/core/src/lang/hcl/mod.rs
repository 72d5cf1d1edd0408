//! HCL (Terraform): the grammar binding (`tree-sitter-hcl`), queries and import rules.
//!
//! Symbols come from loci's own tags query (`tags.scm`: the crate ships none): blocks by
//! their last label (`resource "aws_instance" "web"` is `web`), references are the names
//! read through `var.`, `local.`, `module.` and `data.`. A `module` block's local
//! `source = "./modules/x"` names every file directly in that directory.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// HCL (Terraform): `.tf`, `.hcl`, `.tfvars` files.
pub(crate) const SPEC: Spec = Spec {
    name: "hcl",
    extensions: &["tf", "hcl", "tfvars"],
    grammar: || tree_sitter_hcl::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: resolve_hcl,
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_hcl(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    resolve_directory(from, import, index)
}

//! Bash: the grammar binding (`tree-sitter-bash`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`: the crate ships none):
//! function definitions, and every command name as a call (a command may be a function of
//! the repository or a program). `source x.sh` and `. x.sh` name `x.sh` relative to the
//! script, then to the repository root; a path built from variables (`"$DIR/x.sh"`) is
//! read from its last `/` on (`$(dirname "$0")/lib.sh` is `./lib.sh`).

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Bash: `.sh`, `.bash` files.
pub(crate) const SPEC: Spec = Spec {
    name: "bash",
    extensions: &["sh", "bash"],
    grammar: || tree_sitter_bash::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: resolve_bash,
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

/// The sourced path without quotes; a leading part computed by a substitution or a
/// variable (`"$(dirname "$0")/lib.sh"`) is read as the script's own directory.
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut super::ImportSink<'_, 't>) {
    let (Some(statement), Some(module)) = (r.statement, r.module) else {
        return;
    };
    let text = crate::analyze::node_text(module, bytes).trim_matches(|c| c == '"' || c == '\'');
    let path = match text.rfind(['$', ')', '}']) {
        Some(i) => match text[i..].find('/') {
            Some(slash) => format!(".{}", &text[i + slash..]),
            None => return,
        },
        None => text.to_string(),
    };
    sink.add(statement, path, Vec::new());
}

fn resolve_bash(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    resolve_relative(from, import, index, &["sh", "bash"])
}

//! What the editor tests share: the repository root, and the list each editor's
//! configuration must attach loci to, from the one table of editor names
//! (`loci_lsp::languages`, an exhaustive match over `Language::ALL`): a new language does
//! not compile until its names are written there, and then these tests say which
//! editor's list lacks it.

#![allow(dead_code)]

use std::path::PathBuf;

use loci_core::Language;
use loci_lsp::languages::{attached, editor_names};

/// The repository root (two levels above this crate).
pub fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Reads a repository file, failing with its path.
pub fn read(path: &str) -> String {
    let full = repo().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("reading {}: {e}", full.display()))
}

/// Every name `editor` (`vscode`, `neovim`, `helix`) must list, in `Language::ALL` order,
/// then `markdown` (claims in docs).
pub fn all(editor: &str) -> Vec<String> {
    attached(editor).into_iter().map(str::to_string).collect()
}

/// Compares an editor's list with [`all`], failing with what to add or remove per
/// language rather than with two long lists.
pub fn assert_attached(what: &str, editor: &str, listed: &[String]) {
    let expected = all(editor);
    if listed == expected.as_slice() {
        return;
    }
    let mut report = Vec::new();
    for language in Language::ALL {
        let names = editor_names(language).of(editor);
        let missing: Vec<&&str> = names
            .iter()
            .filter(|n| !listed.iter().any(|l| l == **n))
            .collect();
        if !missing.is_empty() {
            report.push(format!("{language:?}: add {missing:?}"));
        }
    }
    let extra: Vec<&String> = listed.iter().filter(|l| !expected.contains(l)).collect();
    if !extra.is_empty() {
        report.push(format!("not a name of a parsed language: remove {extra:?}"));
    }
    if report.is_empty() {
        report.push("same names, another order: list them in Language::ALL order".into());
    }
    panic!(
        "{what} must attach loci to {expected:?} (loci_lsp::languages, then markdown), \
         it lists {listed:?}:\n{}",
        report.join("\n")
    );
}

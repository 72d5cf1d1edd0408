//! What the editor tests share: the repository root and each editor's names for the
//! languages loci parses. The matches are exhaustive, so a new `Language` does not compile
//! until every editor's configuration says how it is named there.

#![allow(dead_code)]

use std::path::PathBuf;

use loci_core::Language;

/// The repository root (two levels above this crate).
pub fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Reads a repository file, failing with its path.
pub fn read(path: &str) -> String {
    let full = repo().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("reading {}: {e}", full.display()))
}

/// VS Code's language ids for a language (JavaScript files include `.jsx`).
pub fn vscode(language: Language) -> &'static [&'static str] {
    match language {
        Language::Rust => &["rust"],
        Language::Python => &["python"],
        Language::JavaScript => &["javascript", "javascriptreact"],
        Language::TypeScript => &["typescript"],
        Language::Tsx => &["typescriptreact"],
        Language::Go => &["go"],
        Language::Java => &["java"],
        Language::C => &["c"],
        Language::Cpp => &["cpp"],
        Language::CSharp => &["csharp"],
        Language::Ruby => &["ruby"],
        Language::Php => &["php"],
        // The languages added with issue 32 are mapped (CLI, MCP) but the editor
        // configurations do not attach loci to their files yet (docs/languages.md).
        _ => &[],
    }
}

/// Neovim's filetypes for a language.
pub fn neovim(language: Language) -> &'static [&'static str] {
    match language {
        Language::CSharp => &["cs"],
        other => vscode(other),
    }
}

/// Helix's language names (its `languages.toml` `[[language]] name`s).
pub fn helix(language: Language) -> &'static [&'static str] {
    match language {
        Language::Rust => &["rust"],
        Language::Python => &["python"],
        Language::JavaScript => &["javascript", "jsx"],
        Language::TypeScript => &["typescript"],
        Language::Tsx => &["tsx"],
        Language::Go => &["go"],
        Language::Java => &["java"],
        Language::C => &["c"],
        Language::Cpp => &["cpp"],
        Language::CSharp => &["c-sharp"],
        Language::Ruby => &["ruby"],
        Language::Php => &["php"],
        // See `vscode`: not attached in Helix yet.
        _ => &[],
    }
}

/// Every name `names` gives, in `Language::ALL` order, then `markdown` (claims in docs).
pub fn all(names: fn(Language) -> &'static [&'static str]) -> Vec<String> {
    Language::ALL
        .into_iter()
        .flat_map(|l| names(l).iter().map(|s| s.to_string()))
        .chain(std::iter::once("markdown".to_string()))
        .collect()
}

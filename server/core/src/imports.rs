//! Import resolution: from an [`Import`] as written to the repository files it names,
//! per language. Pure logic over a [`PathIndex`] of the repository's files.
//!
//! Also the reading of import statements found by the import queries (`imports.scm` in
//! each language's folder) into [`Import`]s.
//!
//! Each language's folder holds its reading and resolution rules (`crate::lang`); here
//! are what they share: the dispatch, the assembling of one file's imports, and path
//! helpers. All paths are repo-relative and `/`-separated; `..` segments are normalised
//! and may not climb above the repository root; results are sorted and deduplicated.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use tree_sitter::Node;

use crate::analyze::span_of;
use crate::lang::ImportSink;
pub use crate::lang::rust::rust_crate_root;
use crate::{Import, Language};

/// What import resolution knows about the repository: every recorded file path
/// (repo-relative, `/`-separated), Go module roots from `go.mod` files, and the files
/// that declare each namespace/package (C#, Java, PHP), taken from module symbols.
/// Fill `paths` before resolving: the lookup by file name is built from it on first use.
#[derive(Clone, Debug, Default)]
pub struct PathIndex {
    /// Every file path in the map.
    pub paths: BTreeSet<String>,
    /// Lowercased file name (last path component) → the paths ending in it, sorted: a
    /// suffix lookup reads one list instead of every path, which made resolving a
    /// repository's imports quadratic in its size.
    by_file_name: std::sync::OnceLock<HashMap<String, Vec<String>>>,
    /// The same by the name of the directory holding the file (`""` at the root).
    by_dir_name: std::sync::OnceLock<HashMap<String, Vec<String>>>,
    /// The folders holding a package manifest ([`PACKAGE_MANIFESTS`]).
    package_dirs: std::sync::OnceLock<HashSet<String>>,
    /// `go.mod` directory (`""` for the root) → its `module` path.
    pub go_modules: BTreeMap<String, String>,
    /// Rust library name (`loci_store`: `[lib] name`, else `[package] name` with `-` as
    /// `_`) → (the directory of its root file, the root file), for the crates whose
    /// `Cargo.toml` and root file are in the map: `use loci_store::map;` in another member
    /// of a workspace, or `use regex::Regex;` in the crate's own tests, names them.
    pub rust_crates: BTreeMap<String, (String, String)>,
    /// Namespace or package name (`Acme.Util`, `com.acme.util`) → files declaring it.
    /// PHP namespaces may be given as written (`App\Models`) or with dots (`App.Models`).
    pub namespaces: BTreeMap<String, BTreeSet<String>>,
}

/// The files that make their folder a package's root: a Cargo crate, an npm package, a Go
/// module, a Python project.
pub const PACKAGE_MANIFESTS: [&str; 4] = ["Cargo.toml", "package.json", "go.mod", "pyproject.toml"];

impl PathIndex {
    /// An index of `paths`, with no Go modules or namespaces.
    pub fn with_paths(paths: impl IntoIterator<Item = String>) -> PathIndex {
        PathIndex {
            paths: paths.into_iter().collect(),
            ..PathIndex::default()
        }
    }

    /// The root folder of the package `path` is in: the nearest folder above it holding
    /// one of the [`PACKAGE_MANIFESTS`], `""` (the repository's root) when none does. A
    /// package sees another's definitions only through what it imports.
    pub fn package_of<'p>(&self, path: &'p str) -> &'p str {
        let dirs = self.package_dirs.get_or_init(|| {
            self.paths
                .iter()
                .filter(|p| PACKAGE_MANIFESTS.contains(&file_name(p)))
                .map(|p| dir_of(p).to_string())
                .collect()
        });
        let mut dir = dir_of(path);
        while !dir.is_empty() && !dirs.contains(dir) {
            dir = dir_of(dir);
        }
        dir
    }
}

/// Resolves one import of the file at `from_path` to the files it names, sorted.
/// An empty result means unresolved (external, standard library, or not found); the
/// engine keeps such imports with their text. The importer itself may be in the result
/// (a Rust `use super::*;` in an inline `mod tests`). See the module docs for the rules.
pub fn resolve(
    language: Language,
    from_path: &str,
    import: &Import,
    index: &PathIndex,
) -> Vec<String> {
    let found: BTreeSet<String> = (language.spec().resolve)(language, from_path, import, index);
    found.into_iter().collect()
}

// ------------------------------------------------------------------ reading statements

/// The captures of one import-query match (see `lang::Role`).
#[derive(Default)]
pub(crate) struct RawImport<'t> {
    pub(crate) statement: Option<Node<'t>>,
    pub(crate) module: Option<Node<'t>>,
    pub(crate) names: Vec<Node<'t>>,
    pub(crate) tree: Option<Node<'t>>,
    pub(crate) kind: Option<Node<'t>>,
    pub(crate) arg: Option<Node<'t>>,
    pub(crate) php_use: bool,
    /// Rust: the inline modules around the macro invocation whose body holds the
    /// statement, outermost first, when the statement comes from a macro body parsed on
    /// its own (`mod a { cfg_rt! { mod b; } }`: `["a"]`); the body's tree cannot see them.
    pub(crate) outer_modules: Vec<String>,
}

/// Imported names with the nodes they are written at (`None` for `*`).
pub(crate) type Names<'t> = Vec<(String, Option<Node<'t>>)>;

/// One import being assembled: statement, module, names with their nodes.
struct Pending<'t> {
    statement: Node<'t>,
    module: String,
    names: Vec<(String, Option<Node<'t>>)>,
}

/// Reads the import-query matches of one file into [`Import`]s (document order; one per
/// module per statement) and the imported names with their nodes, for
/// [`crate::RefKind::Import`] references.
pub(crate) fn collect<'t>(
    language: Language,
    raw: &[RawImport<'t>],
    bytes: &[u8],
) -> (Vec<Import>, Vec<(String, Node<'t>)>) {
    let mut pending: Vec<Pending<'t>> = Vec::new();
    let mut seen: HashMap<(usize, String), usize> = HashMap::new();
    let mut add = |statement: Node<'t>, module: String, names: Vec<(String, Option<Node<'t>>)>| {
        if module.is_empty() {
            return;
        }
        match seen.get(&(statement.id(), module.clone())) {
            Some(&i) => {
                for name in names {
                    if !pending[i].names.iter().any(|(n, node)| {
                        *n == name.0 && node.map(|x| x.id()) == name.1.map(|x| x.id())
                    }) {
                        pending[i].names.push(name);
                    }
                }
            }
            None => {
                seen.insert((statement.id(), module.clone()), pending.len());
                pending.push(Pending {
                    statement,
                    module,
                    names,
                });
            }
        }
    };
    for r in raw {
        if r.statement.is_none() {
            continue;
        }
        let mut sink = ImportSink { add: &mut add };
        (language.spec().read_import)(r, bytes, &mut sink);
    }
    pending.sort_by_key(|p| p.statement.start_byte());
    let mut refs = Vec::new();
    let imports = pending
        .into_iter()
        .map(|p| {
            for (name, node) in &p.names {
                if let Some(node) = node
                    && name != "*"
                    && name != "self"
                    && !name.is_empty()
                {
                    refs.push((name.clone(), *node));
                }
            }
            Import {
                module: p.module,
                names: p.names.into_iter().map(|(n, _)| n).collect(),
                span: span_of(p.statement),
                enclosing: None,
            }
        })
        .collect();
    (imports, refs)
}

/// Removes all whitespace (`a . b` → `a.b`).
pub(crate) fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

// ------------------------------------------------------------------ path helpers

/// The directory of a path (`""` for a top-level file).
pub(crate) fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The file name of a path.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, f)| f)
}

/// Joins `dir` and a relative path, resolving `.` and `..`; `None` if it climbs above
/// the root.
pub(crate) fn join_normalized(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

pub(crate) fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else if rest.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// Ancestor directories of `path`'s directory, nearest first, ending with `""`.
pub(crate) fn ancestors(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut dir = dir_of(path);
    loop {
        out.push(dir);
        if dir.is_empty() {
            break;
        }
        dir = dir_of(dir);
    }
    out
}

/// Number of leading directory components two directories share.
pub(crate) fn shared_components(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

/// Among `candidates`, those whose directory shares the most leading components with the
/// importer's directory (all of them on a tie).
pub(crate) fn nearest(from_path: &str, candidates: Vec<String>) -> BTreeSet<String> {
    let from_dir = dir_of(from_path);
    let best = candidates
        .iter()
        .map(|c| shared_components(from_dir, dir_of(c)))
        .max()
        .unwrap_or(0);
    candidates
        .into_iter()
        .filter(|c| shared_components(from_dir, dir_of(c)) == best)
        .collect()
}

/// Like [`nearest`], but only a single winner counts (an ambiguous match is unresolved).
pub(crate) fn nearest_unique(from_path: &str, candidates: Vec<String>) -> BTreeSet<String> {
    let best = nearest(from_path, candidates);
    if best.len() == 1 {
        best
    } else {
        BTreeSet::new()
    }
}

/// Files directly in directory `dir`.
pub(crate) fn files_in<'a>(
    index: &'a PathIndex,
    dir: &str,
) -> impl Iterator<Item = &'a String> + 'a {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let start = prefix.clone();
    let skip = prefix.len();
    index
        .paths
        .range(start..)
        .take_while(move |p| p.starts_with(&prefix))
        .filter(move |p| !p[skip..].contains('/'))
}

/// Every path equal to `suffix` or ending with `/suffix`, sorted.
pub(crate) fn ending_with(index: &PathIndex, suffix: &str) -> Vec<String> {
    let slash = format!("/{suffix}");
    same_file_name(index, suffix)
        .filter(|p| *p == suffix || p.ends_with(&slash))
        .cloned()
        .collect()
}

/// The paths whose file name is `path`'s, ignoring case, sorted.
pub(crate) fn same_file_name<'a>(
    index: &'a PathIndex,
    path: &str,
) -> impl Iterator<Item = &'a String> {
    let by_name = index
        .by_file_name
        .get_or_init(|| group_paths(index, |p| file_name(p).to_lowercase()));
    by_name
        .get(&file_name(path).to_lowercase())
        .into_iter()
        .flatten()
}

/// The paths of the files in directories named `dir_name`, sorted.
pub(crate) fn in_dirs_named<'a>(
    index: &'a PathIndex,
    dir_name: &str,
) -> impl Iterator<Item = &'a String> {
    let by_dir = index
        .by_dir_name
        .get_or_init(|| group_paths(index, |p| file_name(dir_of(p)).to_string()));
    by_dir.get(dir_name).into_iter().flatten()
}

pub(crate) fn group_paths(
    index: &PathIndex,
    key: impl Fn(&str) -> String,
) -> HashMap<String, Vec<String>> {
    let mut groups: HashMap<String, Vec<String>> = HashMap::new();
    for path in &index.paths {
        groups.entry(key(path)).or_default().push(path.clone());
    }
    groups
}

pub(crate) fn namespace_files<'a>(
    index: &'a PathIndex,
    name: &str,
) -> Option<&'a BTreeSet<String>> {
    index
        .namespaces
        .get(name)
        .or_else(|| index.namespaces.get(&name.replace('\\', ".")))
        .or_else(|| index.namespaces.get(&name.replace('.', "\\")))
        .filter(|files| !files.is_empty())
}

pub(crate) fn file_stem(path: &str) -> &str {
    let name = file_name(path);
    name.split_once('.').map_or(name, |(stem, _)| stem)
}

// ------------------------------------------------------------------ shared rules

/// A path written relative to the importing file (`source ./lib.sh`, `@import("a.zig")`,
/// `import './x.dart'`, `include("x.jl")`): the file as written, else with each of
/// `extensions` added, relative to the importer's directory, then to the repository root.
/// A specifier naming a scheme or package (`dart:math`, `package:x/y.dart`) or no file
/// of the map resolves to nothing.
pub(crate) fn resolve_relative(
    from_path: &str,
    import: &Import,
    index: &PathIndex,
    extensions: &[&str],
) -> BTreeSet<String> {
    let spec = import.module.as_str();
    let mut out = BTreeSet::new();
    if spec.is_empty() || spec.contains(':') {
        return out;
    }
    for dir in [dir_of(from_path), ""] {
        let Some(base) = join_normalized(dir, spec) else {
            continue;
        };
        if index.paths.contains(&base) {
            out.insert(base);
            return out;
        }
        for ext in extensions {
            let candidate = format!("{base}.{ext}");
            if index.paths.contains(&candidate) {
                out.insert(candidate);
                return out;
            }
        }
    }
    out
}

/// A module named by segments (`a.b.C` split into `["a", "b", "C"]`), found as the
/// unique (or uniquely nearest) file whose path ends with `a/b/C.<ext>` for the first of
/// `extensions` that names one (Kotlin, Scala, Haskell, Lua, Elixir, OCaml modules).
pub(crate) fn resolve_segments(
    from_path: &str,
    segments: &[&str],
    index: &PathIndex,
    extensions: &[&str],
) -> BTreeSet<String> {
    if segments.is_empty() || segments.iter().any(|s| s.is_empty()) {
        return BTreeSet::new();
    }
    let stem = segments.join("/");
    for ext in extensions {
        let found = nearest_unique(from_path, ending_with(index, &format!("{stem}.{ext}")));
        if !found.is_empty() {
            return found;
        }
    }
    BTreeSet::new()
}

/// Every file directly in the directory a relative path names (a Terraform module's
/// `source = "./modules/net"`), relative to the importer's directory.
pub(crate) fn resolve_directory(
    from_path: &str,
    import: &Import,
    index: &PathIndex,
) -> BTreeSet<String> {
    let spec = import.module.as_str();
    if !(spec.starts_with("./") || spec.starts_with("../")) {
        return BTreeSet::new();
    }
    match join_normalized(dir_of(from_path), spec.trim_end_matches('/')) {
        Some(dir) => files_in(index, &dir).cloned().collect(),
        None => BTreeSet::new(),
    }
}

/// A resolver for languages whose imports name nothing loci can find in the repository
/// (Swift modules, SQL): always empty.
pub(crate) fn resolve_nothing(_: Language, _: &str, _: &Import, _: &PathIndex) -> BTreeSet<String> {
    BTreeSet::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Span;
    use crate::lang::rust::rust_rebase;

    fn index(paths: &[&str]) -> PathIndex {
        PathIndex::with_paths(paths.iter().map(|p| p.to_string()))
    }

    fn imp(module: &str, names: &[&str]) -> Import {
        Import {
            module: module.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
            span: Span::default(),
            enclosing: None,
        }
    }

    #[test]
    fn a_package_is_the_nearest_folder_with_a_manifest() {
        let idx = index(&[
            "anyhow/Cargo.toml",
            "anyhow/src/lib.rs",
            "tools/web/package.json",
            "tools/web/src/ui/app.ts",
            "Lib/test/libregrtest/setup.py",
            "Lib/json/decoder.py",
        ]);
        assert_eq!(idx.package_of("anyhow/src/lib.rs"), "anyhow");
        assert_eq!(idx.package_of("anyhow/Cargo.toml"), "anyhow");
        assert_eq!(idx.package_of("tools/web/src/ui/app.ts"), "tools/web");
        // A module named setup.py is no manifest: the stdlib is one package.
        assert_eq!(idx.package_of("Lib/test/libregrtest/main.py"), "");
        assert_eq!(idx.package_of("Lib/json/decoder.py"), "");
        assert_eq!(idx.package_of("README.md"), "");
    }

    #[test]
    fn normalizes_paths() {
        assert_eq!(
            join_normalized("a/b", "../c/./d.h").as_deref(),
            Some("a/c/d.h")
        );
        assert_eq!(join_normalized("", "../x"), None);
        assert_eq!(ancestors("a/b/c.py"), vec!["a/b", "a", ""]);
    }

    #[test]
    fn python_absolute_skips_package_roots_and_stdlib_names() {
        let idx = index(&[
            "app/__init__.py",
            "app/json.py",
            "app/models.py",
            "tests/json.py",
            "tests/test_app.py",
        ]);
        // `import json` from inside the package is the standard library, not app/json.py
        assert!(resolve(Language::Python, "app/models.py", &imp("json", &[]), &idx).is_empty());
        // from tests/, `app.models` is found at the repository root, with the package
        // `import app.models` binds
        assert_eq!(
            resolve(
                Language::Python,
                "tests/test_app.py",
                &imp("app.models", &[]),
                &idx
            ),
            vec!["app/__init__.py", "app/models.py"]
        );
        // `from app import models` adds the submodule
        assert_eq!(
            resolve(
                Language::Python,
                "tests/test_app.py",
                &imp("app", &["models"]),
                &idx
            ),
            vec!["app/__init__.py", "app/models.py"]
        );
    }

    #[test]
    fn rust_inline_module_paths_are_rebased() {
        let tests = vec!["tests".to_string()];
        assert_eq!(rust_rebase("super", &tests), "self");
        assert_eq!(rust_rebase("super::super::x", &tests), "super::x");
        assert_eq!(rust_rebase("self::helpers", &tests), "self::tests::helpers");
        assert_eq!(rust_rebase("crate::a", &tests), "crate::a");
        assert_eq!(rust_rebase("super", &[]), "super");
    }

    #[test]
    fn rust_paths() {
        let idx = index(&[
            "src/lib.rs",
            "src/store.rs",
            "src/store/schema.rs",
            "src/a/mod.rs",
            "src/a/b.rs",
        ]);
        let r = |from: &str, module: &str, names: &[&str]| {
            resolve(Language::Rust, from, &imp(module, names), &idx)
        };
        assert_eq!(r("src/lib.rs", "self::store", &[]), vec!["src/store.rs"]);
        assert_eq!(
            r("src/store.rs", "self::schema", &[]),
            vec!["src/store/schema.rs"]
        );
        assert_eq!(r("src/a/b.rs", "super", &["x"]), vec!["src/a/mod.rs"]);
        assert_eq!(
            r("src/a/b.rs", "crate::store::schema", &["Table"]),
            vec!["src/store/schema.rs"]
        );
        assert_eq!(
            r("src/a/mod.rs", "crate", &["store", "a"]),
            vec!["src/a/mod.rs", "src/store.rs"]
        );
        assert!(r("src/lib.rs", "std::io", &["Read"]).is_empty());
    }

    /// A crate the index knows by name resolves like `crate::` in it, unless a module in
    /// scope has the name: a `use` of another crate of the repository by its library name
    /// (`use loci_store::map;` in a workspace member, `use regex::Regex;` in the crate's
    /// own tests/) is resolved, so that `impact` does not stop at crate boundaries.
    #[test]
    fn fault_a_use_of_another_crate_of_the_repository_was_unresolved() {
        let mut idx = index(&[
            "alpha/src/lib.rs",
            "alpha/src/parse.rs",
            "alpha/tests/t.rs",
            "beta/src/lib.rs",
            "beta/src/gamma.rs",
            "gamma/src/lib.rs",
        ]);
        for (name, dir) in [("alpha_core", "alpha/src"), ("gamma", "gamma/src")] {
            idx.rust_crates
                .insert(name.into(), (dir.into(), format!("{dir}/lib.rs")));
        }
        let r = |from: &str, module: &str, names: &[&str]| {
            resolve(Language::Rust, from, &imp(module, names), &idx)
        };
        assert_eq!(
            r("beta/src/lib.rs", "alpha_core::parse", &["Parser"]),
            vec!["alpha/src/parse.rs"]
        );
        assert_eq!(
            r("beta/src/lib.rs", "alpha_core", &["Thing"]),
            vec!["alpha/src/lib.rs"]
        );
        assert_eq!(
            r("alpha/tests/t.rs", "alpha_core::parse", &["Parser"]),
            vec!["alpha/src/parse.rs"]
        );
        // `gamma` is also beta's own child module: uniform paths take the module in scope.
        assert_eq!(
            r("beta/src/lib.rs", "gamma", &["f"]),
            vec!["beta/src/gamma.rs"]
        );
        assert!(r("beta/src/lib.rs", "serde", &["Serialize"]).is_empty());
    }

    /// A module declaration names one file or stays unresolved: `mod gone;` (no such file)
    /// and `#[path = "other/b.rs"] mod b;` stay in `loci deps`, not resolved by the prefix
    /// `self` to the declaring file itself (an edge then dropped).
    #[test]
    fn fault_a_rust_mod_declaration_without_its_file_vanished_from_deps() {
        let idx = index(&["src/main.rs", "src/a.rs", "src/other/b.rs"]);
        let r = |module: &str, names: &[&str]| {
            resolve(Language::Rust, "src/main.rs", &imp(module, names), &idx)
        };
        assert_eq!(r("self::a", &[]), vec!["src/a.rs"]);
        assert!(r("self::gone", &[]).is_empty());
        assert!(r("self::b", &[]).is_empty());
        // A `use` of a missing item still resolves to its longest module prefix.
        assert_eq!(r("self::a", &["missing"]), vec!["src/a.rs"]);
    }

    #[test]
    fn python_relative() {
        let idx = index(&[
            "pkg/__init__.py",
            "pkg/a.py",
            "pkg/sub/__init__.py",
            "pkg/sub/m.py",
            "pkg/sub/deep/x.py",
        ]);
        let r = |from: &str, module: &str, names: &[&str]| {
            resolve(Language::Python, from, &imp(module, names), &idx)
        };
        assert_eq!(r("pkg/sub/m.py", "..a", &["f"]), vec!["pkg/a.py"]);
        assert_eq!(
            r("pkg/sub/m.py", ".", &["deep"]),
            vec!["pkg/sub/__init__.py"],
            "`deep` has no __init__ or .py: an attribute"
        );
        assert_eq!(
            r("pkg/a.py", ".", &["sub", "a"]),
            vec!["pkg/a.py", "pkg/sub/__init__.py"]
        );
        assert_eq!(
            r("pkg/a.py", ".sub", &["m"]),
            vec!["pkg/sub/__init__.py", "pkg/sub/m.py"]
        );
        assert!(
            r("pkg/a.py", "....x", &[]).is_empty(),
            "above the repository root"
        );
    }

    #[test]
    fn python_absolute_under_src_and_nearest() {
        let idx = index(&[
            "src/acme/__init__.py",
            "src/acme/core.py",
            "tests/test_core.py",
            "vendor/lib/acme/core.py",
        ]);
        assert_eq!(
            resolve(
                Language::Python,
                "tests/test_core.py",
                &imp("acme.core", &[]),
                &idx
            ),
            vec!["src/acme/__init__.py", "src/acme/core.py"]
        );
        // a dotted module found by suffix elsewhere (no shared source root): unique or nearest
        let idx = index(&[
            "services/api/app/__init__.py",
            "services/api/app/db.py",
            "scripts/run.py",
        ]);
        assert_eq!(
            resolve(
                Language::Python,
                "scripts/run.py",
                &imp("app.db", &[]),
                &idx
            ),
            vec!["services/api/app/db.py"]
        );
    }

    #[test]
    fn javascript_extensions_and_index() {
        let idx = index(&[
            "src/a.ts",
            "src/b/index.tsx",
            "src/c.js",
            "src/d.d.ts",
            "src/e.mjs",
        ]);
        let r =
            |from: &str, module: &str| resolve(Language::TypeScript, from, &imp(module, &[]), &idx);
        assert_eq!(r("src/x.ts", "./a"), vec!["src/a.ts"]);
        assert_eq!(
            r("src/x.ts", "./a.js"),
            vec!["src/a.ts"],
            "ESM-style .js for a .ts file"
        );
        assert_eq!(r("src/x.ts", "./b"), vec!["src/b/index.tsx"]);
        assert_eq!(r("src/x.ts", "./c"), vec!["src/c.js"]);
        assert_eq!(r("src/x.ts", "./d"), vec!["src/d.d.ts"]);
        assert_eq!(r("src/deep/x.ts", "../e.mjs"), vec!["src/e.mjs"]);
        assert!(r("src/x.ts", "react").is_empty());
        assert!(r("src/x.ts", "../../../a").is_empty());
    }

    /// A trailing slash names a directory: `'./lib/'` resolves to `src/lib/index.ts` only,
    /// as in Node and TypeScript, never to `src/lib.ts` beside it.
    #[test]
    fn fault_a_javascript_import_with_a_trailing_slash_took_the_file_beside_the_folder() {
        let idx = index(&[
            "src/lib.ts",
            "src/lib/index.ts",
            "src/only.ts",
            "src/index.ts",
        ]);
        let r =
            |from: &str, module: &str| resolve(Language::TypeScript, from, &imp(module, &[]), &idx);
        assert_eq!(r("src/x.ts", "./lib/"), vec!["src/lib/index.ts"]);
        assert_eq!(r("src/x.ts", "./lib"), vec!["src/lib.ts"]);
        assert!(r("src/x.ts", "./only/").is_empty());
        assert_eq!(r("src/lib/y.ts", ".."), vec!["src/index.ts"]);
        assert_eq!(r("src/lib/y.ts", "."), vec!["src/lib/index.ts"]);
    }

    #[test]
    fn go_packages_via_go_mod() {
        let mut idx = index(&[
            "go.mod",
            "cmd/main.go",
            "pkg/store/a.go",
            "pkg/store/b.go",
            "pkg/store/a_test.go",
            "pkg/store/sub/c.go",
            "tools/go.mod",
            "tools/gen/gen.go",
        ]);
        idx.go_modules
            .insert(String::new(), "example.com/app".into());
        idx.go_modules
            .insert("tools".into(), "example.com/app/tools".into());
        let r = |from: &str, module: &str| resolve(Language::Go, from, &imp(module, &[]), &idx);
        assert_eq!(
            r("cmd/main.go", "example.com/app/pkg/store"),
            vec!["pkg/store/a.go", "pkg/store/b.go"]
        );
        assert_eq!(
            r("pkg/store/x_test.go", "example.com/app/pkg/store"),
            vec!["pkg/store/a.go", "pkg/store/a_test.go", "pkg/store/b.go"]
        );
        assert_eq!(
            r("cmd/main.go", "example.com/app/tools/gen"),
            vec!["tools/gen/gen.go"],
            "longest module path wins"
        );
        assert!(r("cmd/main.go", "fmt").is_empty());
        assert!(
            r("cmd/main.go", "example.com/application").is_empty(),
            "a prefix must end at a path segment"
        );
    }

    #[test]
    fn c_includes() {
        let idx = index(&[
            "src/a.c",
            "src/a.h",
            "include/lib/api.h",
            "util.h",
            "x/dup.h",
            "y/dup.h",
        ]);
        let r = |from: &str, module: &str| resolve(Language::C, from, &imp(module, &[]), &idx);
        assert_eq!(r("src/a.c", "a.h"), vec!["src/a.h"]);
        assert_eq!(r("src/a.c", "../util.h"), vec!["util.h"]);
        assert_eq!(r("src/a.c", "util.h"), vec!["util.h"], "repository root");
        assert_eq!(
            r("src/a.c", "lib/api.h"),
            vec!["include/lib/api.h"],
            "unique suffix"
        );
        assert!(r("src/a.c", "dup.h").is_empty(), "ambiguous suffix");
        assert!(r("src/a.c", "<stdio.h>").is_empty());
    }

    #[test]
    fn java_csharp_ruby_php() {
        let mut idx = index(&[
            "app/src/main/java/com/acme/App.java",
            "app/src/main/java/com/acme/util/Strings.java",
            "lib/src/main/java/com/acme/model/User.java",
            "lib/src/main/java/com/acme/model/Role.java",
            "cs/Billing/Invoice.cs",
            "cs/Billing/Tax.cs",
            "rb/lib/shop.rb",
            "rb/lib/shop/cart.rb",
            "rb/app/run.rb",
            "php/src/Models/User.php",
            "php/src/helpers.php",
            "php/src/Http/Controller.php",
        ]);
        idx.namespaces.insert(
            "com.acme.model".into(),
            [
                "lib/src/main/java/com/acme/model/User.java".to_string(),
                "lib/src/main/java/com/acme/model/Role.java".to_string(),
            ]
            .into(),
        );
        idx.namespaces.insert(
            "Acme.Billing".into(),
            [
                "cs/Billing/Invoice.cs".to_string(),
                "cs/Billing/Tax.cs".to_string(),
            ]
            .into(),
        );
        idx.namespaces.insert(
            "App\\Models".into(),
            ["php/src/Models/User.php".to_string()].into(),
        );
        let app = "app/src/main/java/com/acme/App.java";
        let r =
            |lang: Language, from: &str, module: &str| resolve(lang, from, &imp(module, &[]), &idx);
        assert_eq!(
            r(Language::Java, app, "com.acme.util.Strings"),
            vec!["app/src/main/java/com/acme/util/Strings.java"]
        );
        assert_eq!(
            r(Language::Java, app, "com.acme.model.User"),
            vec!["lib/src/main/java/com/acme/model/User.java"]
        );
        assert_eq!(
            r(Language::Java, app, "com.acme.util.Strings.capitalize"),
            vec!["app/src/main/java/com/acme/util/Strings.java"],
            "static import"
        );
        assert_eq!(r(Language::Java, app, "com.acme.model.*").len(), 2);
        assert!(r(Language::Java, app, "java.util.List").is_empty());
        assert_eq!(
            r(Language::CSharp, "cs/App/Program.cs", "Acme.Billing").len(),
            2
        );
        assert_eq!(
            r(Language::CSharp, "cs/App/Program.cs", "Acme.Billing.Tax"),
            vec!["cs/Billing/Tax.cs"]
        );
        assert!(r(Language::CSharp, "cs/App/Program.cs", "System").is_empty());
        assert_eq!(
            r(Language::Ruby, "rb/lib/shop.rb", "./shop/cart"),
            vec!["rb/lib/shop/cart.rb"]
        );
        assert_eq!(
            r(Language::Ruby, "rb/app/run.rb", "shop"),
            vec!["rb/lib/shop.rb"]
        );
        assert!(r(Language::Ruby, "rb/app/run.rb", "json").is_empty());
        assert_eq!(
            r(
                Language::Php,
                "php/src/Http/Controller.php",
                "App\\Models\\User"
            ),
            vec!["php/src/Models/User.php"]
        );
        assert_eq!(
            r(
                Language::Php,
                "php/src/Http/Controller.php",
                "__DIR__/../helpers.php"
            ),
            vec!["php/src/helpers.php"]
        );
        assert_eq!(
            r(
                Language::Php,
                "php/src/Http/Controller.php",
                "App\\Http\\Controller"
            ),
            vec!["php/src/Http/Controller.php"],
            "PSR-4 prefix dropped"
        );
    }
}

//! Analyzes every file of `fixtures/polyglot` (a small repository with realistic files in
//! every supported language) and snapshots, per language directory, a compact rendering
//! of symbols, references (with their receiver: `(on own)`, `(on other)`, and the
//! same-file member a type's name resolves to: `-> Store.open`), imports and
//! resolved import targets.
//!
//! Update the snapshots with `UPDATE_EXPECT=1 cargo test -p loci-core --test it polyglot::`,
//! then review them by eye: they are the specification of what extraction must find.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use expect_test::expect_file;
use loci_core::imports::{PathIndex, resolve};
use loci_core::{AnalyzeOptions, FileAnalysis, Language, SymbolKind, analyze};

struct Repo {
    /// Repo-relative path → (language, analysis).
    files: BTreeMap<String, (Language, FileAnalysis)>,
    index: PathIndex,
}

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/polyglot")
}

fn list_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixture directory is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("under root")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

fn repo() -> &'static Repo {
    static REPO: OnceLock<Repo> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = fixture_root();
        let paths = list_files(&root);
        let mut index = PathIndex::with_paths(paths.iter().cloned());
        let mut files = BTreeMap::new();
        for path in &paths {
            let text = std::fs::read_to_string(root.join(path)).expect("fixture is UTF-8");
            if path.ends_with("go.mod") {
                let module = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("module "))
                    .expect("go.mod has a module line")
                    .trim()
                    .to_string();
                let dir = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
                index.go_modules.insert(dir, module);
            }
            let Some(language) = Language::from_path(path) else {
                continue;
            };
            let analysis = analyze(path, language, &text, &AnalyzeOptions::default());
            // What the engine does: namespaces/packages from module symbols.
            if matches!(language, Language::CSharp | Language::Java | Language::Php) {
                for symbol in analysis
                    .symbols
                    .iter()
                    .filter(|s| s.kind == SymbolKind::Module)
                {
                    index
                        .namespaces
                        .entry(symbol.qualified_name.clone())
                        .or_default()
                        .insert(path.clone());
                }
            }
            files.insert(path.clone(), (language, analysis));
        }
        Repo { files, index }
    })
}

/// Renders every analyzed file under `dir/`.
fn render(dir: &str) -> String {
    let repo = repo();
    let mut out = String::new();
    let prefix = format!("{dir}/");
    for (path, (language, analysis)) in repo.files.iter().filter(|(p, _)| p.starts_with(&prefix)) {
        let _ = writeln!(out, "=== {path} ({})", language.name());
        if analysis.error_nodes > 0 || analysis.degraded.is_some() {
            let _ = writeln!(
                out,
                "errors: {} degraded: {:?}",
                analysis.error_nodes, analysis.degraded
            );
        }
        let _ = writeln!(out, "symbols:");
        for s in &analysis.symbols {
            let _ = writeln!(
                out,
                "  L{:<3} {:<9} {}  | {}",
                s.span.line + 1,
                s.kind.as_str(),
                s.key,
                s.signature
            );
            if let Some(doc) = &s.doc {
                let first = doc.lines().next().unwrap_or("");
                let more = if doc.lines().count() > 1 { " …" } else { "" };
                let _ = writeln!(out, "        doc: {first}{more}");
            }
        }
        let _ = writeln!(out, "refs:");
        for r in &analysis.refs {
            let enclosing = r
                .enclosing
                .map(|i| {
                    let key = &analysis.symbols[i as usize].key;
                    format!(
                        "  in #{}",
                        key.split_once('#').map_or(key.as_str(), |(_, k)| k)
                    )
                })
                .unwrap_or_default();
            let receiver = r
                .receiver
                .as_str()
                .map(|on| format!(" (on {on})"))
                .unwrap_or_default();
            let target = r
                .target
                .map(|i| format!(" -> {}", analysis.symbols[i as usize].qualified_name))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  L{:<3} {:<7} {}{receiver}{target}{enclosing}",
                r.span.line + 1,
                r.kind.as_str(),
                r.name
            );
        }
        let _ = writeln!(out, "imports:");
        for import in &analysis.imports {
            let targets = resolve(*language, path, import, &repo.index);
            let names = if import.names.is_empty() {
                String::new()
            } else {
                format!(" [{}]", import.names.join(", "))
            };
            let resolved = if targets.is_empty() {
                "(unresolved)".to_string()
            } else {
                targets.join(", ")
            };
            let _ = writeln!(
                out,
                "  L{:<3} {}{names} -> {resolved}",
                import.span.line + 1,
                import.module
            );
        }
        out.push('\n');
    }
    out
}

macro_rules! snapshot {
    ($($test:ident => $dir:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            expect_file![concat!("snapshots/polyglot-", $dir, ".txt")].assert_eq(&render($dir));
        }
    )*};
}

snapshot! {
    polyglot_rust => "rust",
    polyglot_python => "python",
    polyglot_web => "web",
    polyglot_go => "go",
    polyglot_java => "java",
    polyglot_c => "c",
    polyglot_cpp => "cpp",
    polyglot_csharp => "csharp",
    polyglot_ruby => "ruby",
    polyglot_php => "php",
    polyglot_kotlin => "kotlin",
    polyglot_swift => "swift",
    polyglot_scala => "scala",
    polyglot_lua => "lua",
    polyglot_bash => "bash",
    polyglot_elixir => "elixir",
    polyglot_haskell => "haskell",
    polyglot_zig => "zig",
    polyglot_dart => "dart",
    polyglot_ocaml => "ocaml",
    polyglot_julia => "julia",
    polyglot_r => "r",
    polyglot_erlang => "erlang",
    polyglot_hcl => "hcl",
    polyglot_solidity => "solidity",
    polyglot_objc => "objc",
    polyglot_proto => "proto",
    polyglot_vue => "vue",
    polyglot_svelte => "svelte",
}

/// Every symbol's body was reached by the walk (an empty body slice would mean the query
/// shape analysis missed a definition node kind, and body fingerprints would be constant).
#[test]
fn polyglot_every_symbol_has_a_body_fingerprint() {
    let empty = loci_core::fingerprint::short_hash(b"");
    for (path, (_, analysis)) in &repo().files {
        for symbol in &analysis.symbols {
            assert_ne!(symbol.body_fingerprint, empty, "{path}: {}", symbol.key);
            assert_ne!(
                symbol.signature_fingerprint, empty,
                "{path}: {}",
                symbol.key
            );
        }
    }
}

/// Every fixture file parses without syntax errors (a fixture with errors would hide
/// extraction bugs behind error recovery).
#[test]
fn polyglot_fixtures_parse_cleanly() {
    for (path, (_, analysis)) in &repo().files {
        assert_eq!(analysis.error_nodes, 0, "{path} has syntax errors");
        assert_eq!(analysis.degraded, None, "{path} is degraded");
    }
}

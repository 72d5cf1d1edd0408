//! `loci scan --scip FILE`: the SCIP index `rust-analyzer scip` writes for
//! `fixtures/polyglot/rust`, imported with exact counts; what a rescan keeps and drops;
//! and the indexes refused (malformed, of another folder, too large) with the map left as
//! it was.
//!
//! The index is written by the test, not committed, so a rust-analyzer that writes
//! another is noticed. With the standard library (rust-analyzer's default; without it,
//! `assert_eq!` and `HashMap` are unknown and the index says nothing about them) writing
//! it takes 5 to 12 s, so the test binary writes it once, into
//! `CARGO_TARGET_TMPDIR/scip-fixture`, and each test imports a copy re-rooted at its own
//! copy of the fixture. The tests need `rust-analyzer` on PATH (`rustup component add
//! rust-analyzer`, which `.ci/setup` runs) and fail, never skip, without it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use loci_engine::scip::MAX_INDEX_BYTES;
use loci_engine::{EngineError, Workspace};
use protobuf::Message;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The fixture's project and its index, written once per test binary.
fn pristine() -> &'static (PathBuf, PathBuf) {
    static PRISTINE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PRISTINE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scip-fixture");
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("kvstore");
        copy_dir(&fixture(), &root);
        // Below loci's own workspace: cargo would take the copy for a member of it.
        let manifest = root.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, format!("{text}\n[workspace]\n")).unwrap();
        let scratch = dir.join("scratch");
        let index = dir.join("index.scip");
        let run = Command::new("rust-analyzer")
            .arg("scip")
            .arg(&root)
            .arg("--output")
            .arg(&index)
            // Build scripts and proc macros would write here; never into the fixture.
            .env("CARGO_TARGET_DIR", scratch.join("target"))
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run rust-analyzer ({e}): install it with `rustup component add \
                     rust-analyzer` (.ci/setup does)"
                )
            });
        assert!(
            run.status.success(),
            "rust-analyzer scip failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        (root, index)
    })
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/polyglot/rust")
}

/// Writes the pristine index to `out` with its project root set to `project`.
fn rerooted(project: &Path, out: &Path) {
    let bytes = std::fs::read(&pristine().1).unwrap();
    let mut index = scip::types::Index::parse_from_bytes(&bytes).unwrap();
    index.metadata.mut_or_insert_default().project_root =
        format!("file://{}", project.canonicalize().unwrap().display());
    std::fs::write(out, index.write_to_bytes().unwrap()).unwrap();
}

/// A scanned copy of the fixture at `<temp>/kvstore` (the workspace is `<temp>` with
/// `nested`, else the project itself; its store outside the project), and its index
/// written after the scan.
fn indexed_in(nested: bool) -> (tempfile::TempDir, PathBuf, PathBuf, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("kvstore");
    copy_dir(&fixture(), &project);
    let root = if nested { dir.path().to_path_buf() } else { project.clone() };
    let mut ws = Workspace::open(&root, Some(&dir.path().join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let scip = dir.path().join("index.scip");
    rerooted(&project, &scip);
    (dir, root, scip, ws)
}

fn indexed() -> (tempfile::TempDir, PathBuf, PathBuf, Workspace) {
    indexed_in(false)
}

/// `path:line name -> target (provenance, confidence, source)` of each call `callers` lists
/// at confidence 0 and more.
fn callers(ws: &Workspace, symbol: &str) -> Vec<String> {
    ws.callers_with(symbol, 0, 0.0)
        .unwrap()
        .result
        .calls
        .iter()
        .map(|c| {
            format!(
                "{}:{} {} -> {} ({}, {:.2}{})",
                c.path,
                c.line + 1,
                c.name,
                c.target_key.as_deref().unwrap_or("-"),
                c.provenance,
                c.confidence,
                c.source
                    .as_deref()
                    .map(|s| format!(", {s}"))
                    .unwrap_or_default()
            )
        })
        .collect()
}

/// Every reference `refs` lists in the map, as [`callers`] writes them, that a SCIP
/// index states.
fn stated_by_scip(ws: &Workspace, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for name in names {
        for r in ws.refs(name, 0).unwrap().result {
            if r.source.as_deref() == Some("scip") {
                out.push(format!(
                    "{}:{} {} {} -> {}",
                    r.path,
                    r.line + 1,
                    r.kind,
                    r.name,
                    r.target_key.as_deref().unwrap_or("-")
                ));
            }
        }
    }
    out
}

#[test]
fn scip_import_of_the_rust_fixture_states_exact_edges() {
    let (_dir, _root, scip, mut ws) = indexed();
    // `fixture().len()` is inside `assert_eq!`, a token tree to tree-sitter: no call.
    assert_eq!(callers(&ws, "Store::len"), Vec::<String>::new());
    let r = ws.import_scip(&scip, MAX_INDEX_BYTES).unwrap().result;
    panic!("{r:#?}\n{:#?}\n{:#?}", callers(&ws, "Store::len"), stated_by_scip(&ws, &["len", "open", "new", "checksum", "Limits", "Store", "DEFAULT_CAPACITY", "insert"]));
}

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

use loci_engine::map::MAX_INDEX_BYTES;
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
    let root = if nested {
        dir.path().to_path_buf()
    } else {
        project.clone()
    };
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
    ws.callers_with(symbol, 0, 0.0, true)
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

/// The names of the fixture's references that the import touches.
const NAMES: [&str; 9] = [
    "len",
    "open",
    "new",
    "checksum",
    "Limits",
    "Store",
    "DEFAULT_CAPACITY",
    "insert",
    "open_default",
];

/// What the import of the fixture's index says, as a line.
fn counts(r: &loci_engine::map::ScipImport) -> String {
    format!(
        "{} of {} documents, {} definitions ({} unmapped), {} references: {} confirmed, \
         {} corrected, {} resolved, {} added, {} cleared, {} external, {} locals",
        r.covered,
        r.documents,
        r.definitions,
        r.definitions_unmapped,
        r.references,
        r.confirmed,
        r.corrected,
        r.resolved,
        r.added,
        r.cleared,
        r.external,
        r.locals
    )
}

#[test]
fn scip_import_of_the_rust_fixture_states_exact_edges() {
    let (_dir, _root, scip, mut ws) = indexed();
    // `fixture().len()` inside `assert_eq!` is typed by `fixture`'s return type; the
    // `self.items.len()` inside `crate::ensure!` is a name matched on a value (it is
    // `HashMap::len`).
    assert_eq!(
        callers(&ws, "Store::len"),
        [
            "src/lib.rs:23 len -> src/store.rs#Store.len@method (derived, 0.80)",
            "src/store.rs:31 len -> src/store.rs#Store.len@method (derived, 0.30)"
        ]
    );
    let r = ws.import_scip(&scip, MAX_INDEX_BYTES).unwrap().result;
    assert!(r.tool.starts_with("rust-analyzer "), "{}", r.tool);
    assert_eq!(r.project_root, ".");
    assert_eq!(r.stale, []);
    assert_eq!(
        counts(&r),
        "3 of 3 documents, 18 definitions (3 unmapped), 54 references: 28 confirmed, \
         0 corrected, 0 resolved, 0 added, 1 cleared, 25 external, 16 locals"
    );
    // The call in the macro's arguments is stated by the index; the name matched on a
    // `HashMap` is cleared.
    assert_eq!(
        callers(&ws, "Store::len"),
        ["src/lib.rs:23 len -> src/store.rs#Store.len@method (stated, 1.00, scip)"]
    );
    assert_eq!(
        stated_by_scip(&ws, &NAMES),
        [
            "src/lib.rs:23 call len -> src/store.rs#Store.len@method",
            // `self.items.len()` is `HashMap::len`: outside the map, stated so.
            "src/store.rs:31 call len -> -",
            "src/store.rs:38 call len -> -",
            "src/lib.rs:10 call open -> src/store.rs#Store.open@method",
            "src/store.rs:27 call new -> -",
            "src/store.rs:27 call new -> src/util.rs#Limits.new@method",
            "src/util.rs:34 call new -> src/util.rs#Limits.new@method",
            "src/store.rs:5 import checksum -> src/util.rs#checksum@function",
            "src/store.rs:32 call checksum -> src/util.rs#checksum@function",
            "src/store.rs:5 import Limits -> src/util.rs#Limits@struct",
            "src/store.rs:11 type Limits -> src/util.rs#Limits@struct",
            "src/store.rs:27 type Limits -> src/util.rs#Limits@struct",
            "src/util.rs:21 inherit Limits -> src/util.rs#Limits@struct",
            "src/util.rs:22 type Limits -> src/util.rs#Limits@struct",
            "src/util.rs:23 call Limits -> src/util.rs#Limits@struct",
            "src/util.rs:33 type Limits -> src/util.rs#Limits@struct",
            "src/util.rs:34 type Limits -> src/util.rs#Limits@struct",
            "src/lib.rs:6 import Store -> src/store.rs#Store@struct",
            "src/lib.rs:9 type Store -> src/store.rs#Store@struct",
            "src/lib.rs:10 type Store -> src/store.rs#Store@struct",
            "src/lib.rs:17 type Store -> src/store.rs#Store@struct",
            "src/store.rs:24 inherit Store -> src/store.rs#Store@struct",
            "src/store.rs:26 type Store -> src/store.rs#Store@struct",
            "src/store.rs:27 call Store -> src/store.rs#Store@struct",
            "src/store.rs:42 type Store -> src/store.rs#Store@struct",
            "src/lib.rs:10 other DEFAULT_CAPACITY -> src/util.rs#DEFAULT_CAPACITY@constant",
            "src/util.rs:34 other DEFAULT_CAPACITY -> src/util.rs#DEFAULT_CAPACITY@constant",
            "src/store.rs:33 call insert -> -",
            "src/lib.rs:18 call open_default -> src/lib.rs#open_default@function",
        ]
    );
    // `impact` of the method says where its edge comes from.
    let impact = ws.impact("Store::len", 1, false).unwrap().result;
    let via: Vec<(String, String, Option<String>)> = impact
        .nodes
        .iter()
        .map(|n| (n.id.clone(), n.via.at.clone(), n.via.source.clone()))
        .collect();
    assert_eq!(
        via,
        [(
            "src/lib.rs#tests.opens@function".to_string(),
            "src/lib.rs:23".to_string(),
            Some("scip".to_string())
        )]
    );
    // Importing the same index again changes nothing; it compares with the map as it is
    // (what the first import corrected is confirmed now).
    let again = ws.import_scip(&scip, MAX_INDEX_BYTES).unwrap().result;
    assert_eq!(
        counts(&again),
        "3 of 3 documents, 18 definitions (3 unmapped), 54 references: 28 confirmed, \
         0 corrected, 0 resolved, 0 added, 0 cleared, 26 external, 16 locals"
    );
    assert_eq!(stated_by_scip(&ws, &NAMES).len(), 29);
}

#[test]
fn scip_index_of_a_crate_inside_the_workspace_maps_its_paths() {
    let (_dir, _root, scip, mut ws) = indexed_in(true);
    let r = ws.import_scip(&scip, MAX_INDEX_BYTES).unwrap().result;
    assert_eq!(r.project_root, "kvstore");
    assert_eq!(r.covered, 3);
    assert_eq!(
        callers(&ws, "Store::len"),
        ["kvstore/src/lib.rs:23 len -> kvstore/src/store.rs#Store.len@method (stated, 1.00, scip)"]
    );
}

/// The map's totals, counted now.
fn counted(ws: &Workspace) -> loci_store::map::MapCounts {
    loci_store::map::count_totals(ws.store().conn(), None)
        .unwrap()
        .counts
}

#[test]
fn rescan_keeps_the_scip_edges_of_unchanged_files_and_drops_those_of_changed_ones() {
    let (_dir, root, scip, mut ws) = indexed();
    ws.import_scip(&scip, MAX_INDEX_BYTES).unwrap();
    // A new definition named `len` makes the scan resolve every `len` again by name; the
    // edges of unchanged files are written back.
    std::fs::write(
        root.join("src/extra.rs"),
        "pub fn len() -> usize {\n    0\n}\n",
    )
    .unwrap();
    let scan = ws.scan(&|_| {}).unwrap().result;
    // Fault (fresh-user trial): the scan reported the totals it counted before the SCIP
    // edges were written back or dropped.
    assert_eq!(scan.totals, counted(&ws));
    let coverage = scan.scip.expect("the scan reports the map's scip edges");
    assert_eq!(
        (coverage.files, coverage.edges, coverage.dropped.clone()),
        (3, 54, Vec::<String>::new())
    );
    assert_eq!(
        callers(&ws, "Store::len"),
        ["src/lib.rs:23 len -> src/store.rs#Store.len@method (stated, 1.00, scip)"]
    );
    // util.rs changes: its own edges and the edges into it are dropped, the rest kept.
    let util = root.join("src/util.rs");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, format!("// changed\n{text}")).unwrap();
    let scan = ws.scan(&|_| {}).unwrap().result;
    assert_eq!(scan.totals, counted(&ws));
    assert_eq!(ws.stats().unwrap().result.totals, counted(&ws));
    let coverage = scan.scip.expect("the scan reports the map's scip edges");
    assert_eq!(
        (coverage.files, coverage.dropped.clone()),
        (2, vec!["src/util.rs".to_string()])
    );
    assert_eq!(
        stated_by_scip(&ws, &NAMES),
        [
            "src/lib.rs:23 call len -> src/store.rs#Store.len@method",
            "src/store.rs:31 call len -> -",
            "src/store.rs:38 call len -> -",
            "src/lib.rs:10 call open -> src/store.rs#Store.open@method",
            "src/store.rs:27 call new -> -",
            "src/lib.rs:6 import Store -> src/store.rs#Store@struct",
            "src/lib.rs:9 type Store -> src/store.rs#Store@struct",
            "src/lib.rs:10 type Store -> src/store.rs#Store@struct",
            "src/lib.rs:17 type Store -> src/store.rs#Store@struct",
            "src/store.rs:24 inherit Store -> src/store.rs#Store@struct",
            "src/store.rs:26 type Store -> src/store.rs#Store@struct",
            "src/store.rs:27 call Store -> src/store.rs#Store@struct",
            "src/store.rs:42 type Store -> src/store.rs#Store@struct",
            "src/store.rs:33 call insert -> -",
            "src/lib.rs:18 call open_default -> src/lib.rs#open_default@function",
        ]
    );
    // What the index had added in lib.rs for util.rs (`util::DEFAULT_CAPACITY`) is gone;
    // the calls into util.rs are loci's own again.
    assert_eq!(
        callers(&ws, "checksum"),
        ["src/store.rs:32 checksum -> src/util.rs#checksum@function (stated, 1.00)"]
    );
    assert_eq!(coverage.edges, 34);
}

#[test]
fn scip_document_modified_after_the_index_was_written_is_not_imported() {
    let (_dir, root, scip, mut ws) = indexed();
    let util = root.join("src/util.rs");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("pub fn checksum", "\npub fn checksum")).unwrap();
    ws.scan(&|_| {}).unwrap();
    let r = ws.import_scip(&scip, MAX_INDEX_BYTES).unwrap().result;
    assert_eq!(
        r.stale,
        [loci_engine::map::StaleDocument {
            path: "src/util.rs".into(),
            reason: "modified after the index was written: index again".into()
        }]
    );
    assert_eq!(r.covered, 2);
    // Edges into the stale document are not stated either: its symbols' places moved.
    assert_eq!(
        callers(&ws, "checksum"),
        ["src/store.rs:32 checksum -> src/util.rs#checksum@function (stated, 1.00)"]
    );
}

/// The map's references as `refs` lists them for [`NAMES`], with provenance.
fn all_refs(ws: &Workspace) -> Vec<String> {
    NAMES
        .iter()
        .flat_map(|n| ws.refs(n, 0).unwrap().result)
        .map(|r| {
            format!(
                "{}:{} {} -> {} ({}, {:.2}, {:?})",
                r.path,
                r.line + 1,
                r.name,
                r.target_key.as_deref().unwrap_or("-"),
                r.provenance,
                r.confidence,
                r.source
            )
        })
        .collect()
}

/// The message of an `InvalidArgument` error naming `scip`.
fn refusal(e: EngineError) -> String {
    match e {
        EngineError::InvalidArgument { name, message } if name == "scip" => message,
        other => panic!("expected a refusal of the index, got {other:?}"),
    }
}

#[test]
fn scip_index_that_is_not_one_is_refused_and_the_map_is_unchanged() {
    let (dir, _root, _scip, mut ws) = indexed();
    let before = all_refs(&ws);
    let garbage = dir.path().join("garbage.scip");
    std::fs::write(&garbage, b"\xff\xff\xff\xff not protobuf").unwrap();
    let message = refusal(ws.import_scip(&garbage, MAX_INDEX_BYTES).unwrap_err());
    assert!(
        message.starts_with(&format!("{}: not a SCIP index (", garbage.display())),
        "{message}"
    );
    let empty = dir.path().join("empty.scip");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        refusal(ws.import_scip(&empty, MAX_INDEX_BYTES).unwrap_err()),
        format!(
            "{}: not a SCIP index: it has no metadata (an empty or truncated file?)",
            empty.display()
        )
    );
    // A truncated index: the first half of a real one.
    let real = std::fs::read(&pristine().1).unwrap();
    let truncated = dir.path().join("truncated.scip");
    std::fs::write(&truncated, &real[..real.len() / 2]).unwrap();
    let message = refusal(ws.import_scip(&truncated, MAX_INDEX_BYTES).unwrap_err());
    assert!(message.contains("not a SCIP index ("), "{message}");
    let missing = dir.path().join("missing.scip");
    assert!(matches!(
        ws.import_scip(&missing, MAX_INDEX_BYTES).unwrap_err(),
        EngineError::Io { .. }
    ));
    assert_eq!(all_refs(&ws), before);
}

#[test]
fn scip_index_of_another_folder_is_refused() {
    let (_dir, root, _scip, mut ws) = indexed();
    // The pristine index is of the pristine copy, not of this workspace.
    let (project, index) = pristine();
    let before = all_refs(&ws);
    assert_eq!(
        refusal(ws.import_scip(index, MAX_INDEX_BYTES).unwrap_err()),
        format!(
            "{}: the index is of {}, which is not this workspace ({}) nor inside it; run the \
             indexer in this workspace",
            index.display(),
            project.canonicalize().unwrap().display(),
            root.display()
        )
    );
    assert_eq!(all_refs(&ws), before);
}

#[test]
fn scip_index_above_the_size_limit_is_refused_before_it_is_read() {
    let (_dir, _root, scip, mut ws) = indexed();
    let size = std::fs::metadata(&scip).unwrap().len();
    assert_eq!(
        refusal(ws.import_scip(&scip, 1000).unwrap_err()),
        format!(
            "{}: the index is {size} bytes, more than the 1000 bytes loci reads; index a \
             smaller part of the repository (a crate, a package) and import each",
            scip.display()
        )
    );
}

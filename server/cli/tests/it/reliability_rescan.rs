//! A killed rescan heals: a `loci scan` of an edited tree is killed with SIGKILL at a point
//! chosen by a seeded random-number generator, scans run until one finishes (a recovery
//! scan is itself killed now and then), and every table of the map then equals a fresh
//! scan's of the same tree, row for row ([`reliability::dump_map`]).
//!
//! The tree is generated: Python modules of a package and Rust modules of a crate whose
//! definitions and calls draw on one small pool of names, so an edit of one file gains
//! and loses definitions that references in unchanged files resolve to. A kill point is a
//! state of the scan, never a delay: its row written, the files it rewrote committed, or
//! one of the phases it logs on stderr (`RUST_LOG=info`) done. Rounds edit the tree
//! cumulatively and keep one store, so the kills pile up as a user's would.
//!
//! Size: `LOCI_RESCAN_ROUNDS` rounds (default 20); `LOCI_RESCAN_SEED` replays a run (the
//! seed is printed on stderr).

use crate::mcp_support;
use crate::reliability;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Instant;

use loci_store::rusqlite::Connection;
use mcp_support::{loci, write};
use reliability::{assert_same_map, dump_map, env_usize, integrity, open_ro};

/// Python modules in the package.
const MODULES: usize = 16;
/// Rust modules in the crate (besides `lib.rs`).
const RUST_MODULES: usize = 4;
/// The names definitions and calls draw on: few, so they collide across files.
const NAMES: [&str; 12] = [
    "load", "save", "parse", "render", "merge", "split", "check", "build", "close", "open",
    "visit", "emit",
];

/// `loci -C root --db db ARGS` with `RUST_LOG=info`, stderr piped.
fn command(root: &Path, db: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(loci());
    cmd.arg("-C")
        .arg(root)
        .arg("--db")
        .arg(db)
        .args(args)
        .env("RUST_LOG", "info")
        .env_remove("LOCI_DB")
        .env_remove("LOCI_SESSION")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Runs a command to its end: (status, stderr).
fn run(root: &Path, db: &Path, args: &[&str]) -> (ExitStatus, String) {
    let out = command(root, db, args).output().expect("run loci");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Where a scan is killed: a state of the scan, observed in the database or on stderr.
#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// Its row in `scans` is written.
    Started,
    /// A file it wrote is committed (its symbols have new row ids).
    Wrote,
    /// It logged this phase as done.
    Logged(&'static str),
}

const KILL_POINTS: [KillPoint; 6] = [
    KillPoint::Started,
    KillPoint::Wrote,
    KillPoint::Logged("scan: time spent writing batches"),
    KillPoint::Logged("scan: parsed and wrote files"),
    KillPoint::Logged("scan: resolved imports"),
    KillPoint::Logged("scan: resolved references"),
];

/// How many rows the query counts in `db`, or 0 while the database cannot be read yet.
fn count_now(db: &Path, sql: &str) -> i64 {
    Connection::open_with_flags(db, loci_store::rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
        .unwrap_or(0)
}

/// Starts `loci scan` and kills it (SIGKILL) at `point`, or lets it finish if it gets
/// there first. True when the kill left the scan unfinished (its row `running`).
fn scan_killed_at(root: &Path, db: &Path, point: KillPoint) -> bool {
    let mut child: Child = command(root, db, &["scan"])
        .spawn()
        .expect("spawn loci scan");
    let stderr = child.stderr.take().expect("stderr");
    match point {
        KillPoint::Logged(phase) => {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains(phase) {
                    break;
                }
            }
        }
        KillPoint::Started | KillPoint::Wrote => {
            let sql = match point {
                KillPoint::Started => "SELECT count(*) FROM scans WHERE status = 'running'",
                _ => {
                    "SELECT count(*) FROM files f JOIN scans s USING (scan_id)
                     WHERE s.status = 'running'"
                }
            };
            // Polled until the scan gets there or ends (a scan that writes no file ends).
            while matches!(child.try_wait(), Ok(None)) && count_now(db, sql) == 0 {
                std::thread::yield_now();
            }
        }
    }
    // Only this test's own child, by handle.
    let _ = child.kill();
    let _ = child.wait();
    count_now(db, "SELECT count(*) FROM scans WHERE status = 'running'") > 0
}

/// The generated tree: each module's text is a function of its index and its version
/// (`None`: the file does not exist).
struct Tree {
    root: PathBuf,
    python: Vec<Option<u64>>,
    rust: Vec<Option<u64>>,
    readme: u64,
}

impl Tree {
    fn new(root: PathBuf) -> Tree {
        let tree = Tree {
            root,
            python: vec![Some(0); MODULES],
            rust: vec![Some(0); RUST_MODULES],
            readme: 0,
        };
        write(&tree.root, "pkg/__init__.py", "");
        // Test code (the secondary code-text indexes) and a skipped file.
        write(
            &tree.root,
            "tests/test_pkg.py",
            "from pkg import m0, m1\n\ndef test_load():\n    assert m0.load(1) == m1.save(1)\n",
        );
        std::fs::write(tree.root.join("data.bin"), [0u8, 159, 146, 150, 0, 1]).expect("write");
        write(
            &tree.root,
            "Cargo.toml",
            "[package]\nname = \"gen\"\nversion = \"0.1.0\"\n",
        );
        for i in 0..MODULES {
            tree.write_python(i);
        }
        for i in 0..RUST_MODULES {
            tree.write_rust(i);
        }
        tree.write_lib();
        tree.write_readme();
        tree
    }

    /// Edits a few files: rewrites (new definitions and calls), deletes, restores.
    fn edit(&mut self, rng: &mut fastrand::Rng) -> Vec<String> {
        let mut edits = Vec::new();
        for _ in 0..rng.usize(1..=3) {
            let i = rng.usize(0..MODULES);
            let path = format!("pkg/m{i}.py");
            match (self.python[i], rng.u8(0..8)) {
                (Some(_), 0) => {
                    std::fs::remove_file(self.root.join(&path)).expect("delete");
                    self.python[i] = None;
                    edits.push(format!("delete {path}"));
                }
                (v, _) => {
                    self.python[i] = Some(v.map_or(0, |v| v + 1));
                    self.write_python(i);
                    edits.push(format!("write {path}"));
                }
            }
        }
        if rng.u8(0..3) == 0 {
            let i = rng.usize(0..RUST_MODULES);
            match (self.rust[i], rng.u8(0..6)) {
                (Some(_), 0) => {
                    std::fs::remove_file(self.root.join(format!("src/r{i}.rs"))).expect("delete");
                    self.rust[i] = None;
                }
                (v, _) => {
                    self.rust[i] = Some(v.map_or(0, |v| v + 1));
                    self.write_rust(i);
                }
            }
            self.write_lib();
            edits.push(format!("rust r{i}"));
        }
        if rng.u8(0..4) == 0 {
            self.readme += 1;
            self.write_readme();
            edits.push("README.md".into());
        }
        edits
    }

    fn write_python(&self, i: usize) {
        let Some(version) = self.python[i] else {
            return;
        };
        let mut rng = fastrand::Rng::with_seed(((i as u64) << 32) | version);
        let mut text = format!("\"\"\"Module {i}, version {version}.\"\"\"\n");
        let others: Vec<usize> = (0..3).map(|_| rng.usize(0..MODULES)).collect();
        for k in &others {
            if *k != i {
                text.push_str(&format!("from . import m{k}\n"));
            }
        }
        let imported = NAMES[rng.usize(0..NAMES.len())];
        let from = rng.usize(0..MODULES);
        if from != i {
            text.push_str(&format!("from .m{from} import {imported}\n"));
        }
        text.push('\n');
        let call = |rng: &mut fastrand::Rng| -> String {
            let name = NAMES[rng.usize(0..NAMES.len())];
            match rng.u8(0..4) {
                0 => format!("{name}(x)"),
                1 => format!("m{}.{name}(x)", others[rng.usize(0..others.len())]),
                2 => format!("self_like.{name}(x)"),
                _ => format!("{imported}(x)"),
            }
        };
        for _ in 0..rng.usize(1..4) {
            let name = NAMES[rng.usize(0..NAMES.len())];
            let body = call(&mut rng);
            text.push_str(&format!(
                "def {name}(x):\n    \"\"\"{name} in m{i}.\"\"\"\n    return {body}\n\n"
            ));
        }
        let class = format!("Kind{}", rng.usize(0..6));
        text.push_str(&format!("class {class}:\n"));
        for _ in 0..rng.usize(1..4) {
            let name = NAMES[rng.usize(0..NAMES.len())];
            let own = NAMES[rng.usize(0..NAMES.len())];
            let body = call(&mut rng);
            text.push_str(&format!(
                "    def {name}(self, x):\n        self.{own}(x)\n        return {body}\n\n"
            ));
        }
        text.push_str(&format!(
            "def run{i}(self_like):\n    return {class}().{}(1)\n",
            NAMES[rng.usize(0..NAMES.len())]
        ));
        write(&self.root, &format!("pkg/m{i}.py"), &text);
    }

    fn write_rust(&self, i: usize) {
        let Some(version) = self.rust[i] else {
            return;
        };
        let mut rng = fastrand::Rng::with_seed(((i as u64 + 1000) << 32) | version);
        let mut text = format!("//! Module {i}, version {version}.\n\n");
        let other = rng.usize(0..RUST_MODULES);
        for _ in 0..rng.usize(1..4) {
            let name = NAMES[rng.usize(0..NAMES.len())];
            let callee = NAMES[rng.usize(0..NAMES.len())];
            let call = match rng.u8(0..3) {
                0 => format!("crate::r{other}::{callee}(x)"),
                1 => format!("{callee}(x)"),
                _ => format!("Thing::{callee}(x)"),
            };
            text.push_str(&format!(
                "pub fn {name}(x: u32) -> u32 {{\n    {call}\n}}\n\n"
            ));
        }
        text.push_str("pub struct Thing;\n\nimpl Thing {\n");
        for _ in 0..rng.usize(1..3) {
            let name = NAMES[rng.usize(0..NAMES.len())];
            let own = NAMES[rng.usize(0..NAMES.len())];
            text.push_str(&format!(
                "    pub fn {name}(x: u32) -> u32 {{\n        Self::{own}(x)\n    }}\n"
            ));
        }
        text.push_str("}\n");
        write(&self.root, &format!("src/r{i}.rs"), &text);
    }

    fn write_lib(&self) {
        let mut text = String::from("//! The generated crate.\n\n");
        for (i, v) in self.rust.iter().enumerate() {
            if v.is_some() {
                text.push_str(&format!("pub mod r{i};\n"));
            }
        }
        text.push_str("\npub fn entry(x: u32) -> u32 {\n    r0::load(x) + crate::r1::save(x)\n}\n");
        write(&self.root, "src/lib.rs", &text);
    }

    fn write_readme(&self) {
        let mut text = format!("# gen\n\nVersion {}.\n", self.readme);
        for k in 0..=(self.readme % 3) {
            text.push_str(&format!(
                "\n## Part {k}\n\nSee `pkg/m{k}.py` and `{}`.\n",
                NAMES[(self.readme as usize + k as usize) % NAMES.len()]
            ));
        }
        write(&self.root, "README.md", &text);
    }
}

/// References whose target is no symbol of the map.
fn dangling(db: &Path) -> i64 {
    open_ro(db)
        .query_row(
            "SELECT count(*) FROM refs WHERE target_id NOT IN (SELECT symbol_id FROM symbols)",
            [],
            |r| r.get(0),
        )
        .expect("count dangling references")
}

#[test]
fn a_rescan_killed_at_random_points_heals_to_a_fresh_scans_map() {
    let started = Instant::now();
    let seed = match std::env::var("LOCI_RESCAN_SEED") {
        Ok(s) => s.parse().expect("LOCI_RESCAN_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
    };
    eprintln!("rescan: LOCI_RESCAN_SEED={seed}");
    let mut rng = fastrand::Rng::with_seed(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut tree = Tree::new(dir.path().join("repo"));
    // A `--db` folder is the user's to make (loci makes only its own `.loci/`).
    std::fs::create_dir_all(dir.path().join("live")).expect("mkdir");
    let db = dir.path().join("live/loci.db");
    let (status, stderr) = run(&tree.root, &db, &["scan"]);
    assert!(status.success(), "{stderr}");

    let rounds = env_usize("LOCI_RESCAN_ROUNDS", 20);
    let mut interrupted = 0;
    let mut left_dangling = 0;
    for round in 0..rounds {
        let edits = tree.edit(&mut rng);
        let point = KILL_POINTS[rng.usize(0..KILL_POINTS.len())];
        let what = format!("round {round} ({edits:?}, killed at {point:?})");
        if scan_killed_at(&tree.root, &db, point) {
            interrupted += 1;
        }
        if dangling(&db) > 0 {
            left_dangling += 1;
        }
        // Now and then the recovery is killed too, at a point of its own.
        if rng.u8(0..4) == 0 {
            let point = KILL_POINTS[rng.usize(0..KILL_POINTS.len())];
            scan_killed_at(&tree.root, &db, point);
        }
        let (status, stderr) = run(&tree.root, &db, &["scan"]);
        assert!(
            status.success(),
            "{what}: the recovery scan failed: {stderr}"
        );
        let conn = open_ro(&db);
        assert_eq!(integrity(&conn), ["ok"], "{what}: integrity after recovery");
        let running: i64 = conn
            .query_row(
                "SELECT count(*) FROM scans WHERE status = 'running'",
                [],
                |r| r.get(0),
            )
            .expect("scans");
        assert_eq!(running, 0, "{what}: the recovery scan finished every scan");

        let fresh_db = dir.path().join(format!("fresh{round}/loci.db"));
        std::fs::create_dir_all(fresh_db.parent().expect("dir")).expect("mkdir");
        let (status, stderr) = run(&tree.root, &fresh_db, &["scan"]);
        assert!(status.success(), "{what}: the fresh scan failed: {stderr}");
        let fresh = dump_map(&open_ro(&fresh_db));
        // Every table of the map, and every full-text index, has rows to compare (but
        // `fts_common_terms`: no term of so small a tree is common).
        for kind in [
            "file",
            "symbol",
            "ref",
            "import",
            "dep",
            "ref dep",
            "chunk",
            "code chunk",
            "skip",
            "meta",
        ] {
            assert!(
                fresh.iter().any(|r| r.starts_with(&format!("{kind} | "))),
                "{what}: no {kind} rows"
            );
        }
        for index in [
            "symbols_fts",
            "doc_chunks_fts",
            "code_chunks_fts",
            "secondary_chunks_fts",
            "file_text_fts",
            "secondary_file_text_fts",
        ] {
            assert!(
                fresh
                    .iter()
                    .any(|r| r.starts_with(&format!("indexed | {index} | "))),
                "{what}: nothing indexed in {index}"
            );
        }
        assert_same_map(&what, &dump_map(&conn), &fresh);
        std::fs::remove_dir_all(fresh_db.parent().expect("dir")).expect("rm");
    }
    eprintln!(
        "rescan: {interrupted} of {rounds} kills left the scan unfinished, {left_dangling} left \
         references to deleted symbols ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    assert!(interrupted > 0, "no kill landed during a scan");
}

//! Crash safety: a `loci` process is killed with SIGKILL (`std::process::Child::kill`) at a
//! random point during a full scan, a memory write loop, a migration (whose first step is
//! the pre-migration backup) and `loci backup`, over many runs. After each kill the store
//! opens, passes `PRAGMA integrity_check` and the full-text integrity checks, holds every
//! write acknowledged before the kill exactly once, and the next scan completes the
//! interrupted work (the map equals a fresh scan's). A migration is either not applied (the
//! old schema intact, map and memory as before) or applied completely, never a mix; every
//! backup file is a complete database, and a killed backup leaves nothing under the
//! backup's name or a complete copy.
//!
//! Size: `LOCI_CRASH_RUNS` kills per phase (default 5), on `LOCI_CRASH_FILES` files of
//! the Python standard library (default 300); `LOCI_CRASH_SEED` replays a run (the seed
//! is printed on stderr). Each phase prints its kills that landed mid-operation and its
//! wall time.

use crate::mcp_support;
use crate::reliability;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use loci_store::rusqlite::Connection;
use mcp_support::{Mcp, loci, write};
use reliability::{assert_same_map, copy_stdlib, dump_map, env_usize, integrity, open_ro};
use serde_json::json;

/// Kills per phase.
fn runs() -> usize {
    env_usize("LOCI_CRASH_RUNS", 5)
}

/// A random-number generator seeded from `LOCI_CRASH_SEED` or the clock (printed).
fn rng(phase: &str) -> fastrand::Rng {
    let seed = match std::env::var("LOCI_CRASH_SEED") {
        Ok(s) => s.parse().expect("LOCI_CRASH_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
    };
    eprintln!("{phase}: LOCI_CRASH_SEED={seed}");
    fastrand::Rng::with_seed(seed)
}

/// A corpus (part of the Python standard library and a README) and a fresh scan of it.
struct Corpus {
    _dir: tempfile::TempDir,
    root: PathBuf,
    /// A database holding a finished full scan of `root`.
    scanned: PathBuf,
    /// Its map.
    fresh: Vec<String>,
    /// How long the full scan took.
    scan_time: Duration,
}

fn corpus() -> Corpus {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("repo");
    let files = copy_stdlib(&root, env_usize("LOCI_CRASH_FILES", 300));
    assert!(files > 100, "only {files} stdlib files found");
    write(
        &root,
        "README.md",
        "# corpus\n\nStarts in `lib/abc.py`.\n\n## More\n\nSee `lib/ast.py`.\n",
    );
    let scanned = dir.path().join("scanned/loci.db");
    // A `--db` folder is the user's to make (loci makes only its own `.loci/`).
    std::fs::create_dir_all(scanned.parent().unwrap()).unwrap();
    let started = Instant::now();
    let (status, stderr) = loci_db(&root, &scanned, &["scan"]);
    assert!(status.success(), "{stderr}");
    let scan_time = started.elapsed();
    let fresh = dump_map(&open_ro(&scanned));
    Corpus {
        _dir: dir,
        root,
        scanned,
        fresh,
        scan_time,
    }
}

/// `loci -C root --db db ARGS`, waited for: (status, stderr).
fn loci_db(root: &Path, db: &Path, args: &[&str]) -> (ExitStatus, String) {
    let out = command(root, db, args).output().expect("run loci");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn command(root: &Path, db: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(loci());
    cmd.arg("-C")
        .arg(root)
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("LOCI_DB")
        .env_remove("LOCI_SESSION")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Kills `child` after a random delay in `[0, within)` (the delay picks the kill point;
/// nothing waits on it). True when the kill interrupted it (it had not exited yet).
fn kill_at_random(child: &mut Child, rng: &mut fastrand::Rng, within: Duration) -> bool {
    let micros = rng.u64(0..within.as_micros().max(1) as u64);
    std::thread::sleep(Duration::from_micros(micros));
    let interrupted = matches!(child.try_wait(), Ok(None));
    let _ = child.kill();
    let _ = child.wait();
    interrupted
}

/// Copies a closed database (and its WAL, if any) to `to`.
fn copy_db(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    std::fs::copy(from, to).expect("copy db");
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", from.display()));
        if side.exists() {
            std::fs::copy(&side, format!("{}{suffix}", to.display())).expect("copy wal");
        }
    }
}

/// Every revision as (subject, version, body), sorted.
fn memory(conn: &Connection) -> Vec<(String, i64, String)> {
    let mut stmt = conn
        .prepare(
            "SELECT p.subject, r.version, r.body FROM revisions r JOIN pages p USING (page_id)
             ORDER BY p.subject, r.version",
        )
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

/// Versions are 1..n on every page.
fn assert_gapless(what: &str, memory: &[(String, i64, String)]) {
    let mut next: BTreeMap<&str, i64> = BTreeMap::new();
    for (subject, version, _) in memory {
        let n = next.entry(subject).or_insert(1);
        assert_eq!(*version, *n, "{what}: {subject} versions are gapless");
        *n += 1;
    }
}

fn schema_version(conn: &Connection) -> i64 {
    conn.query_row(
        "SELECT ifnull(max(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )
    .expect("schema version")
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("count {table}: {e}"))
}

/// After a kill: the store opens (`loci stats`: an interrupted migration or bulk load is
/// finished on open) and passes its integrity checks, the next scan succeeds, and the
/// map equals a fresh scan's.
fn recover_and_compare(what: &str, corpus: &Corpus, db: &Path) {
    let (status, stderr) = loci_db(&corpus.root, db, &["stats"]);
    // A kill between SQLite creating the file and writing its first page leaves an empty
    // file: a read-only command refuses it (exit 2, saying so) and creates nothing.
    let empty = std::fs::metadata(db).map(|m| m.len() == 0).unwrap_or(false);
    if empty {
        assert_eq!(
            status.code(),
            Some(2),
            "{what}: stats of an empty file: {stderr}"
        );
        assert!(
            stderr.contains("an empty file, not a loci database"),
            "{what}: {stderr}"
        );
    } else {
        assert!(status.success(), "{what}: the store did not open: {stderr}");
        assert_eq!(
            integrity(&open_ro(db)),
            ["ok"],
            "{what}: integrity after the kill"
        );
    }
    let (status, stderr) = loci_db(&corpus.root, db, &["scan"]);
    assert!(status.success(), "{what}: the next scan failed: {stderr}");
    let conn = open_ro(db);
    assert_eq!(
        integrity(&conn),
        ["ok"],
        "{what}: integrity after the rescan"
    );
    assert_same_map(what, &dump_map(&conn), &corpus.fresh);
}

#[test]
fn a_full_scan_killed_at_random_points_is_completed_by_the_next_scan() {
    let started = Instant::now();
    let corpus = corpus();
    let mut rng = rng("scan");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut interrupted = 0;
    for run in 0..runs() {
        let db = dir.path().join(format!("run{run}/loci.db"));
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        let mut child = command(&corpus.root, &db, &["scan"])
            .spawn()
            .expect("spawn loci scan");
        if kill_at_random(&mut child, &mut rng, corpus.scan_time) {
            interrupted += 1;
        }
        if db.exists() {
            recover_and_compare(&format!("scan run {run}"), &corpus, &db);
        }
    }
    eprintln!(
        "scan: {interrupted} of {} kills landed mid-scan ({:.0} s)",
        runs(),
        started.elapsed().as_secs_f64()
    );
    assert!(interrupted > 0, "no kill landed during a scan");
}

#[test]
fn a_memory_write_loop_killed_at_random_keeps_every_acknowledged_write() {
    let started = Instant::now();
    let corpus = corpus();
    let mut rng = rng("write");
    let dir = tempfile::tempdir().expect("tempdir");
    const WRITES: usize = 60;
    let mut interrupted = 0;
    for run in 0..runs() {
        let db = dir.path().join(format!("run{run}/loci.db"));
        copy_db(&corpus.scanned, &db);
        let before = memory(&open_ro(&db));
        let db_str = db.to_str().expect("utf-8").to_string();
        let mut mcp = Mcp::start(&corpus.root, &[("RUST_LOG", "warn"), ("LOCI_DB", &db_str)]);
        mcp.initialize("crash");
        // Pipelined: every request is sent before the first answer is read, so the kill
        // lands while the server is in the middle of the next writes.
        let mut bodies: BTreeMap<u64, (String, String)> = BTreeMap::new();
        for i in 0..WRITES {
            let id = mcp.id();
            let (tool, args, page, text) = if i % 2 == 0 {
                let body = format!("crash {run} note {i}");
                (
                    "remember",
                    json!({"subject": "topic:crash", "body": body}),
                    "topic:crash",
                    body,
                )
            } else {
                let text = format!("crash {run} decision {i}");
                ("decide", json!({"text": text}), "decisions", text)
            };
            mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}));
            bodies.insert(id, (page.to_string(), text));
        }
        let kill_after = rng.usize(1..WRITES);
        let mut acked: Vec<u64> = Vec::new();
        while acked.len() < kill_after {
            let m = mcp.recv();
            if let Some(id) = m["id"].as_u64().filter(|id| bodies.contains_key(id)) {
                assert!(
                    m.get("error").is_none() && m["result"]["isError"] != json!(true),
                    "write {id} failed: {m}"
                );
                acked.push(id);
            }
        }
        mcp.kill();
        let (status, rest, _) = mcp.finish();
        if !status.success() {
            interrupted += 1;
        }
        // Answers the server wrote before it died are acknowledgements too.
        for m in rest {
            if let Some(id) = m["id"].as_u64().filter(|id| bodies.contains_key(id))
                && m.get("error").is_none()
                && m["result"]["isError"] != json!(true)
            {
                acked.push(id);
            }
        }
        let what = format!("write run {run} (killed after {kill_after} acks)");
        let conn = open_ro(&db);
        assert_eq!(integrity(&conn), ["ok"], "{what}: integrity after the kill");
        let after = memory(&conn);
        assert_gapless(&what, &after);
        for (subject, version, body) in &before {
            assert!(
                after
                    .iter()
                    .any(|(s, v, b)| s == subject && v == version && b == body),
                "{what}: {subject} v{version} written before the run is gone"
            );
        }
        let notes: Vec<&String> = after
            .iter()
            .filter(|(s, _, _)| s == "topic:crash")
            .map(|(_, _, b)| b)
            .collect();
        let decisions: Vec<&String> = after
            .iter()
            .filter(|(s, _, _)| s.starts_with("decision:"))
            .map(|(_, _, b)| b)
            .collect();
        for id in &acked {
            let (page, text) = &bodies[id];
            let n = if page == "topic:crash" {
                notes.iter().filter(|b| **b == text).count()
            } else {
                decisions.iter().filter(|b| **b == text).count()
            };
            assert_eq!(n, 1, "{what}: acknowledged `{text}` is stored exactly once");
        }
        drop(conn);
        recover_and_compare(&what, &corpus, &db);
    }
    eprintln!(
        "write: {interrupted} of {} kills landed mid-loop ({:.0} s)",
        runs(),
        started.elapsed().as_secs_f64()
    );
    assert!(interrupted > 0, "no kill landed during the write loop");
}

#[test]
fn a_migration_killed_at_random_is_applied_completely_or_not_at_all() {
    let started = Instant::now();
    let corpus = corpus();
    let mut rng = rng("migration");
    let dir = tempfile::tempdir().expect("tempdir");
    // The old store: the scanned corpus with memory, one migration behind.
    let old = dir.path().join("old/loci.db");
    copy_db(&corpus.scanned, &old);
    for i in 0..5 {
        let (status, stderr) = loci_db(
            &corpus.root,
            &old,
            &[
                "remember",
                "lib/abc.py",
                "--text",
                &format!("abc note {i}: see `lib/ast.py`"),
            ],
        );
        assert!(status.success(), "{stderr}");
    }
    // Twenty-nine migrations behind: 0005 (empties the derived map), 0006 (page uids), 0007
    // (the covering reverse-import index), 0008 (pages by current revision), 0009 (ref
    // receivers), 0010 (Rust type kinds; data only, and the corpus has no Rust), 0011
    // (ref receiver names), 0012 (files' drift hashes), 0013 (claim sets), 0014 (common
    // terms), 0015 (revision marks), 0016 (the refs table rebuilt for the `path`
    // receiver), 0017 (identifier terms of memory and docs), 0018 (file edges of
    // references), 0019 (code text), 0020-0021 (secondary code text, text-keyed vectors)
    // 0022 (log entries: this store has no decisions, so it moves nothing; its index is
    // dropped), 0023 (symbols by folded name), 0024 (map changes), 0025 (team memory's
    // replica tables), 0026 (llm runs), 0027 (unsaved buffers), 0028 (code text words)
    // 0029 (SCIP edges), 0030 (the refs table rebuilt for the `typed` receiver), 0031
    // (the indexes of claims that never resolved and of path claims), 0032 (import
    // scopes) and 0033 (files by name) pending,
    // so a kill can land between them. Undo 0019 to 0011 and 0009 to
    // 0006 for real (dropping the receiver columns undoes 0016 too) and forget 0005's row
    // (it recreates what it touches).
    let old_version = 4;
    assert_eq!(
        loci_store::SCHEMA_VERSION,
        33,
        "revisit which migrations this test undoes"
    );
    {
        let conn = Connection::open(&old).expect("open old");
        conn.execute_batch(
            "DROP INDEX files_by_name; DROP INDEX claims_never_resolved; DROP INDEX claims_paths;
             DROP TABLE scip_refs; DROP TABLE scip_documents; DROP TABLE code_text_words;
             DROP TABLE unsaved_buffers; DROP TABLE llm_runs; DROP TABLE team_outbox; DROP TABLE team_applied;
             DROP TRIGGER map_changes_symbol_insert; DROP TRIGGER map_changes_symbol_delete; DROP TRIGGER map_changes_file_insert; DROP TRIGGER map_changes_file_delete; DROP TRIGGER map_changes_file_update; DROP TRIGGER map_changes_page_move; DROP TABLE map_changes; DROP INDEX claims_by_name; DROP INDEX revision_marks_stale;
             DROP TRIGGER secondary_file_text_fts_delete; DROP TABLE secondary_file_text_fts; DROP TABLE secondary_chunks_fts;
             DROP INDEX pages_by_entry_number; DROP INDEX symbols_by_folded_name;
             DROP TABLE text_vectors; DROP TRIGGER file_text_fts_delete; DROP TABLE file_text_fts; DROP TABLE code_chunks_fts; DROP TABLE code_chunks;
             DROP TABLE ref_deps; DROP INDEX symbols_by_name; CREATE INDEX symbols_by_name ON symbols(name);
             DROP TRIGGER revisions_fts_insert; DROP TABLE revisions_fts; ALTER TABLE revisions DROP COLUMN terms;
             CREATE VIRTUAL TABLE revisions_fts USING fts5(body, summary, content = 'revisions', content_rowid = 'revision_id', tokenize = 'unicode61 remove_diacritics 2');
             CREATE TRIGGER revisions_fts_insert AFTER INSERT ON revisions BEGIN INSERT INTO revisions_fts(rowid, body, summary) VALUES (new.revision_id, new.body, new.summary); END;
             INSERT INTO revisions_fts(revisions_fts) VALUES ('rebuild');
             DROP TRIGGER doc_chunks_fts_insert; DROP TRIGGER doc_chunks_fts_delete; DROP TABLE doc_chunks_fts; ALTER TABLE doc_chunks DROP COLUMN terms;
             CREATE VIRTUAL TABLE doc_chunks_fts USING fts5(heading, text, content = 'doc_chunks', content_rowid = 'chunk_id', tokenize = 'unicode61 remove_diacritics 2');
             CREATE TRIGGER doc_chunks_fts_insert AFTER INSERT ON doc_chunks BEGIN INSERT INTO doc_chunks_fts(rowid, heading, text) VALUES (new.chunk_id, new.heading, new.text); END;
             CREATE TRIGGER doc_chunks_fts_delete AFTER DELETE ON doc_chunks BEGIN INSERT INTO doc_chunks_fts(doc_chunks_fts, rowid, heading, text) VALUES ('delete', old.chunk_id, old.heading, old.text); END;
             INSERT INTO doc_chunks_fts(doc_chunks_fts) VALUES ('rebuild');
             DROP TABLE revision_marks;
             DROP TRIGGER revision_marks_claim_insert; DROP TRIGGER revision_marks_claim_update; DROP TRIGGER revision_marks_claim_delete; DROP TRIGGER revision_marks_snapshot_insert; DROP TRIGGER revision_marks_snapshot_update; DROP TRIGGER revision_marks_snapshot_delete; DROP TRIGGER revision_marks_page_update;
             DROP TABLE fts_common_terms; DROP TABLE fts_common_terms_stamp;
             ALTER TABLE files DROP COLUMN drift_hash;
             DROP INDEX claims_with_definitions;
             ALTER TABLE claims DROP COLUMN definitions;
             ALTER TABLE claims DROP COLUMN resolved_elsewhere;
             ALTER TABLE page_snapshots DROP COLUMN subject_missing;
             ALTER TABLE refs DROP COLUMN receiver_name;
             ALTER TABLE refs DROP COLUMN receiver;
             DROP INDEX pages_by_current_revision;
             DROP INDEX deps_by_target; CREATE INDEX deps_by_target ON deps(to_file_id);
             DROP TRIGGER pages_uid; DROP INDEX pages_by_uid; ALTER TABLE pages DROP COLUMN uid;
             ALTER TABLE imports DROP COLUMN enclosing_id;
             DELETE FROM schema_migrations WHERE version > 4;",
        )
        .expect("step back twenty-nine migrations");
    }
    let old_conn = open_ro(&old);
    let old_memory = memory(&old_conn);
    let old_counts: Vec<i64> = ["files", "symbols", "refs"]
        .iter()
        .map(|t| count(&old_conn, t))
        .collect();
    drop(old_conn);
    assert!(
        old_counts[2] > 1000,
        "a migration worth interrupting: {old_counts:?}"
    );

    // How long opening (backup + migration) takes.
    let probe = dir.path().join("probe/loci.db");
    copy_db(&old, &probe);
    let probe_started = Instant::now();
    let (status, stderr) = loci_db(&corpus.root, &probe, &["stats"]);
    assert!(status.success(), "{stderr}");
    let migrate_time = probe_started.elapsed();

    let mut interrupted = 0;
    let mut outcomes: BTreeMap<i64, usize> = BTreeMap::new();
    for run in 0..runs() {
        let db = dir.path().join(format!("run{run}/loci.db"));
        copy_db(&old, &db);
        let mut child = command(&corpus.root, &db, &["stats"])
            .spawn()
            .expect("spawn loci stats");
        if kill_at_random(&mut child, &mut rng, migrate_time) {
            interrupted += 1;
        }
        let what = format!("migration run {run}");
        let conn = open_ro(&db);
        assert_eq!(integrity(&conn), ["ok"], "{what}: integrity after the kill");
        let version = schema_version(&conn);
        *outcomes.entry(version).or_default() += 1;
        let counts: Vec<i64> = ["files", "symbols", "refs"]
            .iter()
            .map(|t| count(&conn, t))
            .collect();
        let uid_column: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('pages') WHERE name = 'uid'",
                [],
                |r| r.get(0),
            )
            .expect("pages columns");
        let index_columns: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_index_info('deps_by_target')",
                [],
                |r| r.get(0),
            )
            .expect("deps_by_target columns");
        let revision_index: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'pages_by_current_revision'",
                [],
                |r| r.get(0),
            )
            .expect("pages indexes");
        let receiver_column: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('refs') WHERE name = 'receiver'",
                [],
                |r| r.get(0),
            )
            .expect("refs columns");
        let path_receiver: bool = conn
            .query_row(
                "SELECT sql LIKE '%''path''%' FROM sqlite_master WHERE name = 'refs'",
                [],
                |r| r.get(0),
            )
            .expect("refs table");
        if version == old_version {
            assert_eq!(
                counts, old_counts,
                "{what}: not applied, so the old map is intact"
            );
            assert_eq!(uid_column, 0, "{what}: not applied, so no 0006 column");
            assert_eq!(index_columns, 1, "{what}: not applied, so the 0001 index");
            assert_eq!(revision_index, 0, "{what}: not applied, so no 0008 index");
            assert_eq!(receiver_column, 0, "{what}: not applied, so no 0009 column");
        } else {
            assert_eq!(
                version,
                loci_store::SCHEMA_VERSION,
                "{what}: old or new, never between"
            );
            // 0005 empties the derived map for the next scan to rebuild; 0006 gives
            // every page a uid.
            assert_eq!(counts, [0, 0, 0], "{what}: 0005 applied completely");
            assert_eq!(uid_column, 1, "{what}: 0006 applied");
            assert_eq!(
                count(&conn, "pages WHERE uid IS NULL"),
                0,
                "{what}: 0006 applied completely"
            );
            assert_eq!(index_columns, 3, "{what}: 0007 applied");
            assert_eq!(revision_index, 1, "{what}: 0008 applied");
            assert_eq!(receiver_column, 1, "{what}: 0009 applied");
            assert!(path_receiver, "{what}: 0016 applied");
        }
        assert_eq!(memory(&conn), old_memory, "{what}: memory untouched");
        drop(conn);
        check_backups(&what, db.parent().expect("dir"), &old_memory, old_version);
        recover_and_compare(&what, &corpus, &db);
        check_backups(&what, db.parent().expect("dir"), &old_memory, old_version);
        let left: Vec<String> = std::fs::read_dir(db.parent().expect("dir").join("backups"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            left.is_empty(),
            "{what}: partial copies left after the next open: {left:?}"
        );
        let conn = open_ro(&db);
        assert_eq!(schema_version(&conn), loci_store::SCHEMA_VERSION);
        assert_eq!(memory(&conn), old_memory, "{what}: memory after the rescan");
    }
    eprintln!(
        "migration: {interrupted} of {} kills landed mid-open; schema versions after the kill: {outcomes:?} ({:.0} s)",
        runs(),
        started.elapsed().as_secs_f64()
    );
    assert!(interrupted > 0, "no kill landed during a migration");
}

/// Every backup under `dir/backups/` is a complete database at `version` holding
/// `memory`. Hidden files are partial copies of a killed backup, never taken for one.
fn check_backups(what: &str, dir: &Path, memory_before: &[(String, i64, String)], version: i64) {
    let Ok(entries) = std::fs::read_dir(dir.join("backups")) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = e.path();
        let conn = open_ro(&path);
        assert_eq!(
            integrity(&conn),
            ["ok"],
            "{what}: backup {} is a complete database",
            path.display()
        );
        assert_eq!(schema_version(&conn), version, "{what}: backup version");
        assert_eq!(memory(&conn), memory_before, "{what}: backup memory");
    }
}

#[test]
fn a_backup_killed_at_random_leaves_the_store_intact_and_no_backup_or_a_complete_one() {
    let started = Instant::now();
    let corpus = corpus();
    let mut rng = rng("backup");
    let dir = tempfile::tempdir().expect("tempdir");
    let live = dir.path().join("live/loci.db");
    copy_db(&corpus.scanned, &live);
    for i in 0..5 {
        let (status, stderr) = loci_db(
            &corpus.root,
            &live,
            &["decide", &format!("backup decision {i}")],
        );
        assert!(status.success(), "{stderr}");
    }
    let live_memory = memory(&open_ro(&live));
    // How long a backup takes: the quickest of three, so that the kills land within one
    // however busy the machine was during a probe (the tests of this file run at once).
    let probe = dir.path().join("probe.db");
    let mut backup_time = Duration::MAX;
    for _ in 0..3 {
        let _ = std::fs::remove_file(&probe);
        let probe_started = Instant::now();
        let (status, stderr) = loci_db(
            &corpus.root,
            &live,
            &["backup", probe.to_str().expect("utf-8")],
        );
        assert!(status.success(), "{stderr}");
        backup_time = backup_time.min(probe_started.elapsed());
    }
    check_backup_file("probe", &probe, &live_memory);

    let mut interrupted = 0;
    let mut complete = 0;
    for run in 0..runs() {
        let out = dir.path().join(format!("run{run}"));
        std::fs::create_dir_all(&out).expect("mkdir");
        let dest = out.join("copy.db");
        let mut child = command(
            &corpus.root,
            &live,
            &["backup", dest.to_str().expect("utf-8")],
        )
        .spawn()
        .expect("spawn loci backup");
        if kill_at_random(&mut child, &mut rng, backup_time) {
            interrupted += 1;
        }
        let what = format!("backup run {run}");
        let conn = open_ro(&live);
        assert_eq!(
            integrity(&conn),
            ["ok"],
            "{what}: the live store after the kill"
        );
        assert_eq!(memory(&conn), live_memory, "{what}: live memory untouched");
        drop(conn);
        // The backup's name holds a complete database or nothing; anything else the
        // killed run left is a hidden partial copy, never under the backup's name.
        if dest.exists() {
            complete += 1;
            check_backup_file(&what, &dest, &live_memory);
        }
        for e in std::fs::read_dir(&out).expect("read dir").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                name == "copy.db" || name.starts_with(".copy.db.partial-"),
                "{what}: unexpected file {name}"
            );
        }
        // A rerun to a new name completes.
        let again = out.join("again.db");
        let (status, stderr) = loci_db(
            &corpus.root,
            &live,
            &["backup", again.to_str().expect("utf-8")],
        );
        assert!(status.success(), "{what}: the next backup failed: {stderr}");
        check_backup_file(&what, &again, &live_memory);
    }
    eprintln!(
        "backup: {interrupted} of {} kills landed mid-backup; {complete} left a complete backup ({:.0} s)",
        runs(),
        started.elapsed().as_secs_f64()
    );
    assert!(interrupted > 0, "no kill landed during a backup");
    recover_and_compare("after the backup kills", &corpus, &live);
}

/// `path` is a complete single-file database holding `memory` and the current schema.
fn check_backup_file(what: &str, path: &Path, memory_expected: &[(String, i64, String)]) {
    let conn = open_ro(path);
    assert_eq!(
        integrity(&conn),
        ["ok"],
        "{what}: backup {} is complete",
        path.display()
    );
    assert_eq!(
        schema_version(&conn),
        loci_store::SCHEMA_VERSION,
        "{what}: backup schema"
    );
    assert_eq!(memory(&conn), memory_expected, "{what}: backup memory");
}

//! Scanning end to end on small trees: incremental rescans equal fresh scans, keys are
//! deterministic, and bad input is counted, never fatal.

use loci_engine::map::LIST_LIMIT;
use std::path::Path;

use loci_engine::Workspace;
use loci_store::rusqlite::Connection;
use loci_store::search::{FtsTable, common_terms_current};

use crate::fixture::write;

fn open(root: &Path) -> Workspace {
    Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap()
}

fn scan(ws: &mut Workspace) -> loci_engine::map::ScanReport {
    ws.scan(&|_| {}).unwrap().result
}

/// Every row of the map that a scan derives, without row ids, times or mtimes, sorted.
fn dump(conn: &Connection) -> Vec<String> {
    let queries = [
        "SELECT 'file', path, ifnull(language,''), size, content_hash, ifnull(fingerprint,''), lines, error_nodes, ifnull(degraded,''), lossy_utf8 FROM files",
        "SELECT 'symbol', f.path, s.key, s.name, s.qualified_name, s.kind, s.start_byte, s.end_byte, s.start_line, s.end_line, s.name_line, s.name_column, s.signature, ifnull(s.doc,''), s.body_fingerprint, s.signature_fingerprint, ifnull(s.parent_key,'') FROM symbols s JOIN files f USING (file_id)",
        "SELECT 'ref', f.path, r.name, r.kind, r.line, r.column, r.start_byte, ifnull(e.key,''), CASE WHEN r.target_id IS NULL THEN '' ELSE ifnull(t.key,'<no such symbol>') END, r.provenance, r.confidence, ifnull(r.receiver,'') FROM refs r JOIN files f ON f.file_id = r.file_id LEFT JOIN symbols e ON e.symbol_id = r.enclosing_id LEFT JOIN symbols t ON t.symbol_id = r.target_id",
        "SELECT 'import', f.path, i.module, i.names, i.line FROM imports i JOIN files f USING (file_id)",
        "SELECT 'dep', a.path, d.module, ifnull(b.path,'<unresolved>'), d.line, d.count FROM deps d JOIN files a ON a.file_id = d.from_file_id LEFT JOIN files b ON b.file_id = d.to_file_id",
        "SELECT 'ref dep', a.path, b.path, d.kind, d.line, d.provenance, d.confidence, d.count FROM ref_deps d JOIN files a ON a.file_id = d.from_file_id JOIN files b ON b.file_id = d.to_file_id",
        "SELECT 'skip', path, reason FROM skipped_files",
        "SELECT 'common term', fts, term, doc FROM fts_common_terms",
    ];
    let mut rows = Vec::new();
    for q in queries {
        let mut stmt = conn.prepare(q).unwrap();
        let n = stmt.column_count();
        let mut it = stmt.query([]).unwrap();
        while let Some(r) = it.next().unwrap() {
            let cols: Vec<String> = (0..n)
                .map(|i| match r.get_ref(i).unwrap() {
                    loci_store::rusqlite::types::ValueRef::Null => "NULL".into(),
                    loci_store::rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    loci_store::rusqlite::types::ValueRef::Real(v) => format!("{v:.3}"),
                    loci_store::rusqlite::types::ValueRef::Text(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                    loci_store::rusqlite::types::ValueRef::Blob(_) => "<blob>".into(),
                })
                .collect();
            rows.push(cols.join(" | "));
        }
    }
    rows.sort();
    rows
}

fn seed(root: &Path) {
    write(root, "app/__init__.py", "");
    write(
        root,
        "app/models.py",
        "class User:\n    def save(self):\n        return validate(self)\n\ndef validate(x):\n    return x\n",
    );
    write(
        root,
        "app/views.py",
        "from .models import User, validate\nfrom . import util\n\ndef show():\n    u = User()\n    u.save()\n    return util.fmt(validate(u))\n",
    );
    write(root, "app/util.py", "def fmt(x):\n    return str(x)\n");
    write(
        root,
        "web/main.ts",
        "import { helper } from './helper';\nexport function main() { return helper(1); }\n",
    );
    write(
        root,
        "web/helper.ts",
        "export function helper(n: number) { return n + 1; }\n",
    );
    write(root, "README.md", "# demo\n");
    write(root, "notes.txt", "plain text\n");
}

#[test]
fn incremental_rescan_equals_a_fresh_scan_after_edit_add_delete_rename() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    let first = scan(&mut ws);
    assert_eq!(first.added.len(), 8);

    // Edit, add, delete, rename (same content at a new path).
    write(
        root,
        "app/models.py",
        "\n\nclass User:\n    def save(self):\n        return validate(self, strict=True)\n\ndef validate(x, strict=False):\n    return x\n\ndef extra():\n    return fmt(1)\n",
    );
    write(
        root,
        "app/new.py",
        "from .util import fmt\n\ndef fresh():\n    return fmt(2)\n",
    );
    std::fs::remove_file(root.join("web/main.ts")).unwrap();
    std::fs::rename(root.join("app/util.py"), root.join("app/format.py")).unwrap();
    write(
        root,
        "app/views.py",
        "from .models import User, validate\nfrom . import format\n\ndef show():\n    u = User()\n    u.save()\n    return format.fmt(validate(u))\n",
    );

    let second = scan(&mut ws);
    assert_eq!(second.modified, ["app/models.py", "app/views.py"]);
    assert_eq!(second.added, ["app/new.py"]);
    assert_eq!(second.deleted, ["web/main.ts"]);
    assert_eq!(second.renamed.len(), 1);
    assert_eq!(
        (
            second.renamed[0].from.as_str(),
            second.renamed[0].to.as_str()
        ),
        ("app/util.py", "app/format.py")
    );
    let incremental = dump(ws.store().conn());

    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    let fresh_rows = dump(fresh.store().conn());
    if incremental != fresh_rows {
        let only_inc: Vec<_> = incremental
            .iter()
            .filter(|r| !fresh_rows.contains(r))
            .collect();
        let only_fresh: Vec<_> = fresh_rows
            .iter()
            .filter(|r| !incremental.contains(r))
            .collect();
        panic!(
            "incremental and fresh maps differ\nonly incremental: {only_inc:#?}\nonly fresh: {only_fresh:#?}"
        );
    }
    // Both scans left the common terms of the map's full-text indexes listed.
    for ws in [&ws, &fresh] {
        for table in [FtsTable::Symbols, FtsTable::Docs] {
            assert!(common_terms_current(ws.store().conn(), table).unwrap());
        }
    }
    // The rename resolved the import of the new module.
    assert!(
        incremental
            .iter()
            .any(|r| r.starts_with("dep | app/views.py | . | app/format.py")),
        "{incremental:#?}"
    );
}

#[test]
fn a_noop_rescan_writes_nothing_and_scanning_twice_gives_identical_keys() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    let first = scan(&mut ws);
    let rows = dump(ws.store().conn());
    let again = scan(&mut ws);
    assert!(!again.changed);
    assert_eq!(again.scan_id, first.scan_id);
    assert_eq!(again.unchanged, 8);
    assert_eq!(dump(ws.store().conn()), rows);

    let other = tempfile::tempdir().unwrap();
    let mut ws2 = Workspace::open(root, Some(&other.path().join("b.db"))).unwrap();
    scan(&mut ws2);
    assert_eq!(
        dump(ws2.store().conn()),
        rows,
        "two fresh scans agree row for row"
    );
}

/// A scan that changed nothing and `stats` report the totals the last scan kept as it
/// finished, without counting the map (every reference); they count again once a later
/// scan started (killed or running), and once the map was written outside a scan.
#[test]
fn a_noop_rescan_and_stats_report_the_totals_the_last_scan_kept() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    let first = scan(&mut ws);
    let counted = first.totals.clone();
    assert_eq!(counted.files, 8);
    let again = scan(&mut ws);
    assert!(!again.changed);
    assert_eq!(again.totals, counted);
    assert_eq!(ws.stats().unwrap().result.totals, counted);
    assert_eq!(again.languages, first.languages);

    // Kept totals are read, not counted: a doctored value shows.
    let db = root.join(".loci/test.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE meta SET value = json_set(value, '$.totals.counts.files', 999) WHERE key = 'map_totals'",
        [],
    )
    .unwrap();
    assert_eq!(scan(&mut ws).totals.files, 999);
    assert_eq!(ws.stats().unwrap().result.totals.files, 999);

    // A later scan started (here: killed after deleting a file's references): counted.
    conn.execute_batch(
        "INSERT INTO scans(started_at) VALUES ('2026-01-01T00:00:00Z');
         UPDATE files SET scan_id = (SELECT max(scan_id) FROM scans) WHERE path LIKE 'app/%';
         DELETE FROM refs WHERE file_id IN (SELECT file_id FROM files WHERE path LIKE 'app/%');",
    )
    .unwrap();
    let refs: u64 = conn
        .query_row("SELECT count(*) FROM refs", [], |r| r.get(0))
        .unwrap();
    let stats = ws.stats().unwrap().result.totals;
    assert_eq!((stats.files, stats.refs), (8, refs));

    // Written outside a scan (a SCIP import or a migration forgets them): counted.
    let healed = scan(&mut ws);
    assert_eq!(healed.totals, counted);
    loci_store::Store::open(&db)
        .unwrap()
        .write(loci_store::map::forget_totals)
        .unwrap();
    conn.execute(
        "DELETE FROM refs WHERE ref_id = (SELECT max(ref_id) FROM refs)",
        [],
    )
    .unwrap();
    let noop = scan(&mut ws);
    assert!(!noop.changed);
    assert_eq!(noop.totals.refs, counted.refs - 1);
}

/// Fault (fresh-user trial): deleting or renaming a crate's `lib.rs` left the references
/// its module tree had resolved (`crate::task::coop::helper()`) as they were in a rescan, where a
/// fresh scan of the same tree resolves them otherwise.
#[test]
fn fault_a_deleted_crate_root_left_references_resolved_through_it() {
    for change in ["delete", "rename"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        );
        write(root, "src/lib.rs", "pub mod task;\n");
        write(root, "src/task/mod.rs", "pub mod coop;\n");
        write(
            root,
            "src/task/coop/mod.rs",
            "mod unconstrained;\n\npub fn helper() -> u32 {\n    1\n}\n",
        );
        write(
            root,
            "src/task/coop/unconstrained.rs",
            "pub fn poll() -> u32 {\n    crate::task::coop::helper()\n}\n",
        );
        let mut ws = open(root);
        scan(&mut ws);
        let stated: i64 = ws
            .store()
            .conn()
            .query_row(
                "SELECT count(*) FROM refs WHERE name = 'helper' AND provenance = 'stated'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stated, 1, "the crate's module tree resolves the call");
        match change {
            "delete" => std::fs::remove_file(root.join("src/lib.rs")).unwrap(),
            _ => std::fs::rename(root.join("src/lib.rs"), root.join("src/lib2.rs")).unwrap(),
        }
        assert!(scan(&mut ws).changed);
        let other = tempfile::tempdir().unwrap();
        let mut fresh = Workspace::open(root, Some(&other.path().join("f.db"))).unwrap();
        scan(&mut fresh);
        assert_eq!(
            dump(ws.store().conn()),
            dump(fresh.store().conn()),
            "{change}"
        );
    }
}

/// Fault (fresh-user trial): two file names that are not UTF-8 and differ only in their
/// invalid bytes (`bad\xffname.py`, `bad\xfename.py`) decoded lossily to one path, and the
/// whole scan failed on `UNIQUE constraint failed: files.path` (exit 2, nothing mapped).
/// Such paths are skipped, counted as `non_utf8_path`, their invalid bytes shown `\xNN`.
#[cfg(unix)]
#[test]
fn fault_two_non_utf8_file_names_failed_the_whole_scan() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "ok.py", "def fine():\n    return 1\n");
    for name in [&b"bad\xffname.py"[..], &b"bad\xfename.py"[..]] {
        std::fs::write(
            root.join(std::ffi::OsStr::from_bytes(name)),
            "def hidden():\n    pass\n",
        )
        .unwrap();
    }
    let mut ws = open(root);
    let report = scan(&mut ws);
    assert_eq!(report.skipped.get("non_utf8_path"), Some(&2));
    let shown: Vec<&str> = report
        .skipped_examples
        .iter()
        .map(|s| s.path.as_str())
        .collect();
    assert_eq!(shown, ["bad\\xfename.py", "bad\\xffname.py"]);
    assert_eq!(report.totals.files, 1);
    assert_eq!(ws.symbol("fine", LIST_LIMIT).unwrap().result.len(), 1);
    assert!(
        ws.symbol("hidden", LIST_LIMIT).unwrap().result.is_empty(),
        "not mapped"
    );
    // A rescan is a no-op, not a failure either.
    let again = scan(&mut ws);
    assert_eq!(
        (again.unchanged, again.skipped.get("non_utf8_path")),
        (1, Some(&2))
    );
}

#[test]
fn bad_input_is_counted_and_never_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "ok.py", "def fine():\n    return 1\n");
    // Invalid UTF-8 in a comment: decoded lossily, still parsed.
    std::fs::write(
        root.join("latin1.py"),
        b"# caf\xe9\ndef latin():\n    return 2\n",
    )
    .unwrap();
    // A BOM: positions are relative to the text after it.
    std::fs::write(root.join("bom.py"), "\u{feff}def with_bom():\n    pass\n").unwrap();
    // Binary.
    std::fs::write(root.join("blob.py"), b"\x00\x01\x02def x(): pass").unwrap();
    // B16a: 100,000-deep nesting next to a normal file.
    let deep = format!("x = {}1{};\n", "(".repeat(100_000), ")".repeat(100_000));
    write(root, "deep.js", &deep);
    write(root, "normal.js", "function normal() { return 1; }\n");
    let mut ws = open(root);
    let report = scan(&mut ws);
    assert_eq!(report.skipped.get("binary"), Some(&1));
    assert_eq!(report.lossy_utf8, ["latin1.py"]);
    assert_eq!(ws.symbol("latin", LIST_LIMIT).unwrap().result.len(), 1);
    let bom = ws.symbol("with_bom", LIST_LIMIT).unwrap().result;
    assert_eq!(
        (bom[0].line, bom[0].column),
        (0, 4),
        "the BOM is not counted in columns"
    );
    assert_eq!(ws.symbol("normal", LIST_LIMIT).unwrap().result.len(), 1);
    assert!(
        report.degraded.iter().any(|d| d.path == "deep.js"),
        "{:?}",
        report.degraded
    );
    assert_eq!(
        report.totals.files, 5,
        "the binary file is skipped, not mapped"
    );
}

/// The qualified names of the symbols the map holds for `path`, sorted.
fn symbol_names(conn: &Connection, path: &str) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT s.qualified_name FROM symbols s JOIN files f USING (file_id)
             WHERE f.path = ?1 ORDER BY s.qualified_name",
        )
        .unwrap();
    stmt.query_map([path], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Fault: the parse limit was wall-clock, so under load a fresh scan of the stdlib degraded
/// `test/test_statistics.py`, and a degraded file was never analysed again while it stayed
/// unchanged: the map lacked its symbols for good, and differed by 375 symbols from an
/// incremental scan's. A file the limit stops is analysed again by the next scan, though
/// neither its content nor its mtime changed.
#[test]
fn fault_a_file_the_parse_limit_degraded_was_never_retried_while_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "stats.py",
        "class Stats:\n    def mean(self, data):\n        return sum(data) / len(data)\n\n    def median(self, data):\n        data = sorted(data)\n        return data[len(data) // 2]\n\ndef mode(data):\n    return max(set(data), key=data.count)\n",
    );
    write(root, "ok.py", "def fine():\n    return 1\n");
    // A budget of no parse work at all: the parse stops at tree-sitter's first check.
    write(root, ".loci/config.toml", "[scan]\nparse_timeout_ms = 0\n");
    let mut ws = open(root);
    let first = scan(&mut ws);
    let degraded: Vec<(&str, &str)> = first
        .degraded
        .iter()
        .map(|d| (d.path.as_str(), d.reason.as_str()))
        .collect();
    // `ok.py` is too short to reach the first check.
    assert_eq!(
        degraded,
        [(
            "stats.py",
            "parse_timeout: stopped after 0 ms of parse work"
        )]
    );
    assert_eq!(
        symbol_names(ws.store().conn(), "stats.py"),
        Vec::<String>::new()
    );
    assert_eq!(symbol_names(ws.store().conn(), "ok.py"), ["fine"]);
    // The same limit stops the same text again (it counts work): no retry.
    let again = scan(&mut ws);
    assert_eq!(
        (again.changed, again.retried, again.unchanged),
        (false, 0, 2)
    );
    drop(ws);

    // The default limit; `stats.py` is untouched (same content, same mtime).
    std::fs::remove_file(root.join(".loci/config.toml")).unwrap();
    let mut ws = open(root);
    let second = scan(&mut ws);
    assert_eq!(
        (
            second.changed,
            second.retried,
            second.unchanged,
            second.modified.len(),
            second.added.len()
        ),
        (true, 1, 1, 0, 0)
    );
    assert!(second.degraded.is_empty(), "{:?}", second.degraded);
    assert_eq!(
        symbol_names(ws.store().conn(), "stats.py"),
        ["Stats", "Stats.mean", "Stats.median", "mode"]
    );
    // Parsed now: no longer retried, and the map is the one a fresh scan builds.
    let third = scan(&mut ws);
    assert_eq!(
        (third.changed, third.retried, third.unchanged),
        (false, 0, 2)
    );
    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    assert_eq!(dump(ws.store().conn()), dump(fresh.store().conn()));
}

#[test]
fn interrupted_scan_is_completed_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    scan(&mut ws);
    let expected = dump(ws.store().conn());
    // Simulate a scan killed after writing files but before references: the scan row
    // stays 'running' and the refs of the files it wrote are missing.
    {
        let conn = Connection::open(root.join(".loci/test.db")).unwrap();
        conn.execute_batch(
            "INSERT INTO scans(started_at) VALUES ('2026-01-01T00:00:00Z');
             UPDATE files SET scan_id = (SELECT max(scan_id) FROM scans) WHERE path LIKE 'app/%';
             DELETE FROM refs WHERE file_id IN (SELECT file_id FROM files WHERE path LIKE 'app/%');",
        )
        .unwrap();
    }
    let report = scan(&mut ws);
    assert!(report.changed);
    assert_eq!(dump(ws.store().conn()), expected);
}

/// Fault found by a fresh-user trial: after a later scan (not the first) was killed,
/// answers were silently wrong — `deps` and `impact` of the files it had rewritten came
/// back empty, with no note — and the scan that finished its work counted those files as
/// resumed, though they had changed since the last finished scan. Now every answer notes
/// the partial map until a scan completes it (another note while a scan runs now, holding
/// the store lock), and the files are reported modified.
#[test]
fn fault_a_killed_later_scan_left_answers_silently_partial() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    scan(&mut ws);
    // The notes about the map (not the one about git: the test tree is no repository).
    let map_notes = |ws: &Workspace| -> Vec<String> {
        let notes = ws.stats().unwrap().capability.notes;
        notes
            .into_iter()
            .filter(|n| !n.starts_with("not a git"))
            .collect()
    };
    assert_eq!(map_notes(&ws), Vec::<String>::new());
    // The killed scan: its row 'running', the files under app/ rewritten without their
    // references and deps (it rewrote them because they had changed since the last
    // finished scan, whose content the ledger holds: `drift_hash`).
    {
        let conn = Connection::open(root.join(".loci/test.db")).unwrap();
        conn.execute_batch(
            "INSERT INTO scans(started_at) VALUES ('2026-01-01T00:00:00Z');
             UPDATE files SET scan_id = (SELECT max(scan_id) FROM scans), drift_hash = 'before'
              WHERE path LIKE 'app/%';
             DELETE FROM refs WHERE file_id IN (SELECT file_id FROM files WHERE path LIKE 'app/%');
             DELETE FROM deps WHERE from_file_id IN (SELECT file_id FROM files WHERE path LIKE 'app/%');",
        )
        .unwrap();
    }
    let interrupted = "partial map: the scan started 2026-01-01T00:00:00Z was interrupted \
                       before it finished; references and imports of the files it rewrote \
                       are missing: run `loci scan` to complete it";
    assert_eq!(map_notes(&ws), [interrupted]);
    {
        // Another process scanning now holds the store lock.
        let other = loci_store::Store::open(&root.join(".loci/test.db")).unwrap();
        let _lock = other.lock("a scan").unwrap();
        assert_eq!(
            map_notes(&ws),
            [
                "partial map: a scan started 2026-01-01T00:00:00Z is still running; answers \
              may miss what it has not written yet"
            ]
        );
    }
    let report = scan(&mut ws);
    assert_eq!(report.resumed, 0);
    assert_eq!(
        report.modified,
        [
            "app/__init__.py",
            "app/models.py",
            "app/util.py",
            "app/views.py"
        ]
    );
    assert_eq!(map_notes(&ws), Vec::<String>::new());
    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    assert_eq!(dump(ws.store().conn()), dump(fresh.store().conn()));
}

/// Fault found by a fresh-user trial: after a first scan was killed, `stats` said "no scan
/// yet" over a map that held half the repository, and the scan that finished the work
/// reported every file the killed scan had recorded as "modified" (with a drift entry
/// each), though none had changed.
#[test]
fn fault_a_killed_first_scan_was_reported_as_no_scan_and_its_files_as_modified() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    scan(&mut ws);
    let expected = dump(ws.store().conn());
    // The killed first scan: its row still 'running', the files under app/ written
    // without their references, the rest not reached, and no drift (a scan writes its
    // drift, and the hashes it records, `drift_hash`, when it finishes).
    {
        let conn = Connection::open(root.join(".loci/test.db")).unwrap();
        conn.execute_batch(
            "UPDATE scans SET status = 'running', finished_at = NULL, started_at = '2026-01-01T00:00:00Z';
             UPDATE files SET drift_hash = NULL;
             DROP TRIGGER drift_append_only_delete;
             DELETE FROM drift;
             DELETE FROM refs WHERE file_id IN (SELECT file_id FROM files WHERE path LIKE 'app/%');
             DELETE FROM files WHERE path NOT LIKE 'app/%';",
        )
        .unwrap();
    }
    let stats = ws.stats().unwrap();
    assert_eq!(stats.index.revision, 0);
    assert_eq!(
        stats.capability.notes.first().map(String::as_str),
        Some(
            "no scan yet: the first scan (started 2026-01-01T00:00:00Z) was interrupted \
             before it finished; the map is partial: run `loci scan` to complete it"
        )
    );
    let report = scan(&mut ws);
    assert_eq!(report.resumed, 4, "the four files under app/: {report:#?}");
    assert!(report.modified.is_empty(), "{:?}", report.modified);
    assert_eq!(
        report.added,
        ["README.md", "notes.txt", "web/helper.ts", "web/main.ts"]
    );
    assert_eq!(dump(ws.store().conn()), expected);
    let drifted: Vec<String> = {
        let conn = ws.store().conn();
        let mut stmt = conn
            .prepare("SELECT path || ' ' || kind || ' ' || ifnull(old_hash, '-') FROM drift ORDER BY path")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert_eq!(
        drifted,
        [
            "README.md add -",
            "app/__init__.py add -",
            "app/models.py add -",
            "app/util.py add -",
            "app/views.py add -",
            "notes.txt add -",
            "web/helper.ts add -",
            "web/main.ts add -",
        ]
    );
}

#[test]
fn references_into_a_rewritten_file_follow_its_new_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    scan(&mut ws);
    // Only the file that defines User and validate changes; views.py's references into it
    // must still resolve (to the rewritten rows), exactly as a fresh scan would have them.
    write(
        root,
        "app/models.py",
        "# moved down\n\nclass User:\n    def save(self):\n        return validate(self)\n\ndef validate(x):\n    return x or None\n",
    );
    let report = scan(&mut ws);
    assert_eq!(report.modified, ["app/models.py"]);
    let incremental = dump(ws.store().conn());
    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    assert_eq!(incremental, dump(fresh.store().conn()));
    assert!(
        incremental
            .iter()
            .any(|r| r.starts_with("ref | app/views.py | validate | call")
                && r.contains("app/models.py#validate@function")),
        "{incremental:#?}"
    );
}

/// A scan killed at the point `kill_at` reports (the process dies there: nothing after it
/// runs). The workspace is dropped, as the killed process's was.
fn scan_killed_at(root: &Path, kill_at: fn(&loci_engine::map::ScanProgress) -> bool) {
    let mut ws = open(root);
    let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ws.scan(&|p| {
            if kill_at(&p) {
                std::panic::panic_any("killed");
            }
        })
    }));
    assert!(killed.is_err(), "the scan reached its kill point");
}

/// Fault found by the hostile trial: a rescan killed after it had committed a changed file
/// (its symbols deleted and inserted again with new row ids) but before it resolved
/// references again left the references of unchanged files on the deleted ids, and a name
/// the file gained unresolved elsewhere: the scans that finished afterwards reparsed the
/// file but saw no other change, so `callers` of its definitions answered nothing and
/// `stats` still counted the references as resolved. A scan that finds an interrupted one
/// resolves every reference again.
#[test]
fn fault_a_killed_scan_left_references_to_deleted_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    write(
        root,
        "app/util.py",
        "from app.models import fmt2\n\ndef fmt(x):\n    return str(x)\n\ndef later():\n    return fmt2(1)\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    let resolved = ws.stats().unwrap().result.totals.refs_resolved;
    drop(ws);
    // app/models.py gains `fmt2`, which app/util.py calls; its other definitions keep
    // their keys, and app/views.py calls them.
    write(
        root,
        "app/models.py",
        "class User:\n    def save(self):\n        return validate(self)\n\ndef validate(x):\n    return x\n\ndef fmt2(x):\n    return x\n",
    );
    scan_killed_at(root, |p| {
        matches!(p, loci_engine::map::ScanProgress::Resolving)
    });
    let mut ws = open(root);
    // Until a scan finishes the work, a reference on a deleted symbol is not resolved.
    let on_a_symbol = |ws: &Workspace| -> (i64, i64) {
        ws.store()
            .conn()
            .query_row(
                "SELECT count(*), count(s.symbol_id) FROM refs r
                 LEFT JOIN symbols s ON s.symbol_id = r.target_id WHERE r.target_id IS NOT NULL",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    };
    // The rewritten file's symbols kept their row ids (their keys did not change), so the
    // references into them still land on them; a reference on a deleted symbol would not
    // count as resolved until a scan finishes the work.
    assert_eq!(on_a_symbol(&ws), (8, 8));
    assert_eq!(ws.stats().unwrap().result.totals.refs_resolved, 8);
    let report = scan(&mut ws);
    assert_eq!(report.modified, ["app/models.py"]);
    assert_eq!(scan(&mut ws).unchanged, 8);
    let dangling: i64 = ws
        .store()
        .conn()
        .query_row(
            "SELECT count(*) FROM refs WHERE target_id NOT IN (SELECT symbol_id FROM symbols)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dangling, 0);
    let map = dump(ws.store().conn());
    for call in [
        "ref | app/views.py | validate | call | 6 | 20 | 115 | app/views.py#show@function | app/models.py#validate@function | stated | 1.000 | ",
        "ref | app/util.py | fmt2 | call | 6 | 11 | 84 | app/util.py#later@function | app/models.py#fmt2@function | stated | 1.000 | ",
    ] {
        assert!(map.iter().any(|r| r == call), "{call}\n{map:#?}");
    }
    // Every reference resolves as before, and the new name too (its import and its call).
    assert_eq!(
        ws.stats().unwrap().result.totals.refs_resolved,
        resolved + 2
    );
    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    assert_eq!(map, dump(fresh.store().conn()));
}

/// Fault found by the concurrent-writers stress test: two scans of one store at once — two
/// processes, or a language server's background scan and a `confirm` — each planned its
/// writes from the map as it read it before writing, so both inserted the same new file
/// (`UNIQUE constraint failed: files.path`), and each took the other's running scan for an
/// interrupted one. Scans of one store now take turns (an advisory lock next to the
/// database, released by the OS if the holder dies).
#[test]
fn concurrent_scans_of_one_store_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let db = root.join(".loci/test.db");
    scan(&mut open(root));
    for round in 0..8 {
        for k in 0..16 {
            write(
                root,
                &format!("app/new_{round}_{k}.py"),
                &format!(
                    "from .models import validate\n\ndef n{k}():\n    return validate({round})\n"
                ),
            );
        }
        write(
            root,
            "app/util.py",
            &format!("def fmt(x):\n    return str(x) * {round}\n"),
        );
        let scans: Vec<_> = (0..3)
            .map(|_| {
                let root = root.to_path_buf();
                let db = db.clone();
                std::thread::spawn(move || {
                    let mut ws = Workspace::open(&root, Some(&db))?;
                    ws.scan(&|_| {}).map(|_| ())
                })
            })
            .collect();
        for s in scans {
            s.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
    }
    let ws = open(root);
    let status: Vec<(String, i64)> = {
        let mut stmt = ws
            .store()
            .conn()
            .prepare("SELECT status, count(*) FROM scans GROUP BY status ORDER BY status")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert_eq!(
        status.len(),
        1,
        "every scan finished, none was taken for interrupted: {status:?}"
    );
    assert_eq!(status[0].0, "finished");
    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    assert_eq!(dump(ws.store().conn()), dump(fresh.store().conn()));
}

/// Fault found by the concurrent-writers stress test: a scan recorded the size and mtime
/// the walk's `stat` saw and the hash of what it read afterwards, so a file rewritten in
/// between (an editor saving, a writer truncating then writing) kept a size that described
/// no content, here 0. Later scans found the hash unchanged and updated only the mtime: the
/// wrong size stayed for good, every scan read the file again, and every answer naming it
/// warned "changed on disk since the last scan". Size and mtime now come from the read
/// itself (an mtime no file has when the file changed while it was read), and a row whose
/// size differs from its content is rewritten.
#[test]
fn a_file_rewritten_while_a_scan_read_it_gets_its_real_size_at_the_next_scan() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    scan(&mut ws);
    let real = std::fs::metadata(root.join("app/util.py")).unwrap();
    let real_mtime = real
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let row = |conn: &Connection| -> (i64, i64) {
        conn.query_row(
            "SELECT size, mtime_ns FROM files WHERE path = 'app/util.py'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    assert_eq!(row(ws.store().conn()), (real.len() as i64, real_mtime));
    // What the racy scan left: the hash of the full content, the size of the truncated
    // file the walk saw.
    Connection::open(root.join(".loci/test.db"))
        .unwrap()
        .execute("UPDATE files SET size = 0 WHERE path = 'app/util.py'", [])
        .unwrap();
    let report = scan(&mut ws);
    assert_eq!(row(ws.store().conn()), (real.len() as i64, real_mtime));
    assert!(report.modified.is_empty(), "same content: {report:#?}");
    assert_eq!(report.unchanged, 8, "{report:#?}");
    let again = scan(&mut ws);
    assert_eq!(again.unchanged, 8, "nothing is read again: {again:#?}");
    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    assert_eq!(dump(ws.store().conn()), dump(fresh.store().conn()));
}

/// What fails the FTS5 `integrity-check` of each full-text table (empty: all pass).
fn fts_problems(db: &Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    ["symbols_fts", "doc_chunks_fts"]
        .iter()
        .filter_map(|t| {
            conn.execute(
                &format!("INSERT INTO {t}({t}, rank) VALUES ('integrity-check', 1)"),
                [],
            )
            .err()
            .map(|e| format!("{t}: {e}"))
        })
        .collect()
}

/// Fault found by the crash test: a first scan suspends the full-text triggers and drops
/// secondary indexes for its bulk load and restores them at its end; killed in between, it
/// left the full-text tables out of step with the map ("database disk image is malformed"
/// from FTS5's integrity check) and every search from the language server or an agent
/// missing what was loaded, until some process ran a scan. Opening the store now restores
/// them when no scan holds the store lock.
#[test]
fn a_first_scan_killed_during_its_bulk_load_leaves_search_whole_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let db = root.join(".loci/test.db");
    let rows = {
        let mut ws = open(root);
        scan(&mut ws);
        dump(ws.store().conn())
    };
    // What the killed bulk load left: files and symbols written with the triggers and
    // indexes dropped, so the full-text tables hold none of them.
    {
        let mut conn = Connection::open(&db).unwrap();
        let tx = conn.transaction().unwrap();
        loci_store::map::drop_bulk_indexes(&tx).unwrap();
        tx.execute_batch(
            "INSERT INTO symbols_fts(symbols_fts) VALUES ('delete-all');
             INSERT INTO doc_chunks_fts(doc_chunks_fts) VALUES ('delete-all');",
        )
        .unwrap();
        tx.commit().unwrap();
    }
    assert_eq!(
        fts_problems(&db).len(),
        2,
        "the state a killed bulk load leaves"
    );
    let ws = open(root);
    assert_eq!(fts_problems(&db), Vec::<String>::new());
    let conn = ws.store().conn();
    assert!(!loci_store::map::bulk_indexes_missing(conn).unwrap());
    let found: i64 = conn
        .query_row(
            "SELECT count(*) FROM symbols_fts WHERE symbols_fts MATCH 'validate'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, 1, "search finds the symbol without a new scan");
    assert_eq!(dump(conn), rows, "the map itself is untouched");
    // A scan holding the store lock is loading now: opening leaves its work alone.
    {
        let mut conn = Connection::open(&db).unwrap();
        let tx = conn.transaction().unwrap();
        loci_store::map::drop_bulk_indexes(&tx).unwrap();
        tx.commit().unwrap();
    }
    let lock = ws
        .store()
        .lock("a test standing in for a running scan")
        .unwrap();
    let other = loci_store::Store::open(&db).unwrap();
    assert!(loci_store::map::bulk_indexes_missing(other.conn()).unwrap());
    drop(lock);
    drop(other);
    let again = loci_store::Store::open(&db).unwrap();
    assert!(!loci_store::map::bulk_indexes_missing(again.conn()).unwrap());
}

#[test]
fn a_name_imported_from_a_package_resolves_to_the_package_not_a_submodule_the_import_also_names() {
    // `from pkgN import Abc, Node`: pkgN/__init__.py and its submodule pkgN/Abc.py both
    // define `Node`. File ids follow the order the parser threads finish in, and
    // `pkgN/Abc.py` sorts before `pkgN/__init__.py`: neither may decide.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for n in 0..6 {
        write(
            root,
            &format!("pkg{n}/__init__.py"),
            "class Node:\n    pass\n",
        );
        write(root, &format!("pkg{n}/Abc.py"), "class Node:\n    pass\n");
        write(
            root,
            &format!("use{n}.py"),
            &format!("from pkg{n} import Abc, Node\n\nNode()\n"),
        );
    }
    let mut ws = open(root);
    scan(&mut ws);
    let targets: Vec<(String, String, String)> = ws
        .store()
        .conn()
        .prepare(
            "SELECT f.path, r.kind, t.key FROM refs r JOIN files f ON f.file_id = r.file_id
             JOIN symbols t ON t.symbol_id = r.target_id WHERE r.name = 'Node' ORDER BY 1, 2",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected: Vec<(String, String, String)> = (0..6)
        .flat_map(|n| {
            ["call", "import"].map(|kind| {
                (
                    format!("use{n}.py"),
                    kind.to_string(),
                    format!("pkg{n}/__init__.py#Node@class"),
                )
            })
        })
        .collect();
    assert_eq!(targets, expected);
}

#[test]
fn a_rescan_that_looks_up_what_its_references_need_equals_a_bulk_first_scan() {
    // Over 256 files, a first scan is a bulk load and resolves with every definition in
    // memory; a rescan of a few files looks up only the names and files it needs. Both
    // must give the same rows. Names repeat across files (`get`, `Node`), imports cross.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for n in 0..300 {
        write(
            root,
            &format!("pkg/m{n}.py"),
            &format!(
                "from pkg.m{prev} import get, Node\n\nclass Node:\n    def get(self):\n        return get()\n\ndef get():\n    return Node().get()\n\ndef f{n}():\n    return get(), Node()\n",
                prev = (n + 299) % 300
            ),
        );
    }
    write(root, "pkg/__init__.py", "");
    let mut ws = open(root);
    assert_eq!(scan(&mut ws).added.len(), 301);
    write(
        root,
        "pkg/m7.py",
        "from pkg.m3 import get\n\ndef get_other():\n    return get()\n",
    );
    write(
        root,
        "pkg/extra.py",
        "from pkg.m7 import get_other\n\nget_other()\n",
    );
    std::fs::remove_file(root.join("pkg/m9.py")).unwrap();
    let second = scan(&mut ws);
    assert_eq!(second.modified, ["pkg/m7.py"]);
    assert_eq!(second.added, ["pkg/extra.py"]);
    assert_eq!(second.deleted, ["pkg/m9.py"]);
    let incremental = dump(ws.store().conn());

    let fresh_dir = tempfile::tempdir().unwrap();
    let mut fresh = Workspace::open(root, Some(&fresh_dir.path().join("fresh.db"))).unwrap();
    scan(&mut fresh);
    let fresh_rows = dump(fresh.store().conn());
    let only_inc: Vec<_> = incremental
        .iter()
        .filter(|r| !fresh_rows.contains(r))
        .collect();
    let only_fresh: Vec<_> = fresh_rows
        .iter()
        .filter(|r| !incremental.contains(r))
        .collect();
    assert!(
        only_inc.is_empty() && only_fresh.is_empty(),
        "only incremental: {only_inc:#?}\nonly fresh: {only_fresh:#?}"
    );
    // The new file's call is in the map (its resolution across files is compared above).
    assert!(
        incremental
            .iter()
            .any(|r| r.starts_with("ref | pkg/extra.py | get_other | call")),
        "{incremental:#?}"
    );
}

/// Fault: the report's `added`, `modified` and `lossy_utf8` lists were sorted only when
/// the scan also deleted a file, so a scan that deleted nothing listed them in the order
/// the parallel workers finished (seen as a flaky `added` in
/// `fault_a_killed_first_scan_was_reported_as_no_scan_and_its_files_as_modified`).
#[test]
fn fault_scan_report_lists_were_unsorted_when_nothing_was_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut expected = Vec::new();
    for i in 0..120 {
        // Sizes that differ a lot so the workers finish out of order.
        let body = "x = 1\n".repeat(1 + (i * 37) % 400);
        let path = format!("d{}/m{i:03}.py", i % 7);
        write(root, &path, &body);
        expected.push(path);
    }
    expected.sort();
    let mut ws = open(root);
    let report = scan(&mut ws);
    assert!(report.deleted.is_empty());
    assert_eq!(report.added, expected);
    for (i, path) in expected.iter().enumerate() {
        write(root, path, &"y = 2\n".repeat(1 + (i * 53) % 400));
    }
    let report = scan(&mut ws);
    assert!(report.deleted.is_empty());
    assert_eq!(report.modified, expected);
}

/// `path:line name receiver -> target provenance confidence` for every call reference.
fn call_targets(ws: &Workspace) -> Vec<String> {
    ws.store()
        .conn()
        .prepare(
            "SELECT f.path, r.line + 1, r.name, ifnull(r.receiver, '-'), ifnull(t.key, '-'),
                    r.provenance, r.confidence
             FROM refs r JOIN files f ON f.file_id = r.file_id
             LEFT JOIN symbols t ON t.symbol_id = r.target_id
             WHERE r.kind = 'call' ORDER BY f.path, r.start_byte",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(format!(
                "{}:{} {} {} -> {} {} {:.1}",
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, f64>(6)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn fault_a_method_call_on_another_receiver_resolved_to_a_same_named_method_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "set.rs",
        "struct Set;\nimpl Set {\n    fn is_match(&self, x: &str) -> bool {\n        self.meta.is_match(x)\n    }\n    fn any(&self, x: &str) -> bool {\n        self.is_match(x) || Self::is_match(self, x)\n    }\n}\n",
    );
    write(
        root,
        "a.py",
        "class Meta:\n    def is_match(self, x):\n        return x\n\nclass M:\n    def is_match(self, x):\n        return self.meta.is_match(x)\n\n    def check(self, x):\n        return self.is_match(x)\n\ndef parse(s):\n    return s\n\ndef run(obj):\n    obj.parse()\n    return parse(1)\n\nimport u\n\ndef fmt(x):\n    return u.fmt(x)\n",
    );
    write(root, "u.py", "def fmt(x):\n    return x\n");
    write(
        root,
        "b.js",
        "function go(obj) { obj.helper(); helper(); }\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    let first = [
        // The receiver is `self.meta`: another type's method first, and only a guess.
        "a.py:7 is_match other -> a.py#Meta.is_match@method derived 0.3",
        "a.py:10 is_match own -> a.py#M.is_match@method derived 0.9",
        // In Python a value may be a module: the free function, as a guess.
        "a.py:16 parse other -> a.py#parse@function derived 0.3",
        "a.py:17 parse - -> a.py#parse@function derived 0.9",
        // `u` is an imported module: its `fmt`, not this file's.
        "a.py:22 fmt imported -> u.py#fmt@function derived 0.7",
        "b.js:1 helper other -> - derived 0.0",
        "b.js:1 helper - -> - derived 0.0",
        // No other `is_match` in the file, and never the enclosing method itself (at
        // 0.3 it would be a false recursion in `callers` and `impact`).
        "set.rs:4 is_match other -> - derived 0.0",
        "set.rs:7 is_match own -> set.rs#Set.is_match@method derived 0.9",
        "set.rs:7 is_match own -> set.rs#Set.is_match@method derived 0.9",
    ];
    assert_eq!(call_targets(&ws), first);
    // A new file defines `helper`: the stored references of b.js are resolved again, each
    // with its receiver as stored.
    write(root, "c.js", "export function helper() {}\n");
    scan(&mut ws);
    let mut second = first.map(String::from).to_vec();
    second[5] = "b.js:1 helper other -> c.js#helper@function derived 0.2".into();
    second[6] = "b.js:1 helper - -> c.js#helper@function derived 0.5".into();
    assert_eq!(call_targets(&ws), second);
}

/// Fault: `resolve_path("a")` after `use crate::read::resolve as resolve_path;` was a call
/// of a name nothing defines. A name used under its import's alias is the name the import
/// binds (stated, as unaliased), never a namesake of its own file, and nothing at all when
/// the import is from outside the map (`slurp` is `std::fs::read_to_string`, not
/// `io.rs`'s; `go` another crate's `spawn`, not `task.rs`'s); the name the alias hides is
/// the file's own (`resolve("b")`). A path through an alias (`Rt::new()`) is the path
/// the alias stands for: another crate's type (`TokioRt::new()`) is no namesake of the
/// file's.
#[test]
fn fault_a_rust_call_through_a_use_alias_named_the_alias() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crate::fixture::files(
        root,
        r#"
//- src/lib.rs
mod app;
mod io;
mod read;
mod rt;
mod task;
//- src/task.rs
pub fn spawn() {}
//- src/read.rs
pub fn resolve(p: &str) -> &str { p }
//- src/io.rs
pub fn read_to_string(p: &str) -> &str { p }
//- src/rt.rs
pub struct Runtime;
impl Runtime {
    pub fn new() -> Runtime { Runtime }
}
//- src/app.rs
use crate::read::resolve as resolve_path;
use crate::rt::Runtime as Rt;
use std::fs::read_to_string as slurp;
use tokio::spawn as go;
fn resolve(p: &str) -> &str { p }
fn f() {
    resolve_path("a");
    Rt::new();
    slurp("x");
    resolve("b");
    go();
    use tokio::runtime::Runtime as TokioRt;
    TokioRt::new();
    use crate::{rt::Runtime as R2};
    R2::new();
}
//- app.py
from util import fmt as format_it
def fmt(x): return x
def g(): return format_it(1) + fmt(2)
//- util.py
def fmt(x): return x
"#,
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        [
            "app.py:3 fmt imported -> util.py#fmt@function stated 1.0",
            "app.py:3 fmt - -> app.py#fmt@function derived 0.9",
            "src/app.rs:7 resolve imported -> src/read.rs#resolve@function stated 1.0",
            "src/app.rs:8 new path -> src/rt.rs#Runtime.new@method stated 1.0",
            "src/app.rs:9 read_to_string imported -> - derived 0.0",
            "src/app.rs:10 resolve - -> src/app.rs#resolve@function derived 0.9",
            "src/app.rs:11 spawn imported -> - derived 0.0",
            "src/app.rs:13 new path -> - derived 0.0",
            "src/app.rs:15 new path -> src/rt.rs#Runtime.new@method stated 1.0",
        ]
    );
}

/// A capitalised name imported under an alias (`from pkg.m import Parser as Q`, at module
/// level or inside a function) was taken for a type of that name whose member `Parser` the
/// map lacks, and its calls stayed unresolved.
#[test]
fn fault_a_call_through_a_capitalised_alias_was_taken_for_a_member_of_a_type() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crate::fixture::files(
        root,
        r#"
//- pkg/m.py
def Parser():
    pass
//- app.py
from pkg.m import Parser as Q

def k():
    Q()

def f():
    from pkg.m import Parser as P
    P()
"#,
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        [
            "app.py:4 Parser imported -> pkg/m.py#Parser@function stated 1.0",
            "app.py:8 Parser imported -> pkg/m.py#Parser@function stated 1.0",
        ]
    );
}

/// Fault from a fresh-user trial: hyper-util's private `type Result<T>` in
/// `server/conn/auto/mod.rs` took 154 references across the crate (`JoinHandle<Result<..>>`
/// in `dns.rs`) at 0.5 as the one `Result` of the map, and `impact` of a file reached 43
/// files where 3 use it. In Rust a bare name its file does not import is the prelude's;
/// a `macro_rules!` macro is in scope from its text on, with no import.
#[test]
fn fault_a_private_rust_type_alias_took_every_bare_use_of_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crate::fixture::files(
        root,
        r#"
//- src/lib.rs
macro_rules! tri {
    ($e:expr) => { $e };
}
mod auto;
mod dns;
mod user;
//- src/auto.rs
pub struct Error;
pub type Result<T> = std::result::Result<T, Error>;
//- src/dns.rs
pub fn resolve() -> Result<(), ()> { tri!(Ok(())) }
//- src/user.rs
use crate::auto::Result;
pub fn run() -> Result<()> { Ok(()) }
"#,
    );
    let mut ws = open(root);
    scan(&mut ws);
    let targets: Vec<String> = ws
        .store()
        .conn()
        .prepare(
            "SELECT f.path, r.kind, ifnull(t.key, '-'), r.confidence FROM refs r
             JOIN files f ON f.file_id = r.file_id LEFT JOIN symbols t ON t.symbol_id = r.target_id
             WHERE r.name IN ('Result', 'tri') ORDER BY f.path, r.start_byte",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(format!(
                "{} {} -> {} {:.1}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, f64>(3)?
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        targets,
        [
            // `std::result::Result<T, Error>`: the standard library's.
            "src/auto.rs type -> - 0.0",
            "src/dns.rs type -> - 0.0",
            "src/dns.rs macro -> src/lib.rs#tri@macro 0.7",
            "src/user.rs import -> src/auto.rs#Result@type 1.0",
            "src/user.rs type -> src/auto.rs#Result@type 1.0",
        ]
    );
}

/// `Foo::new()` in a file with `impl Foo { fn new() }` (and `impl Bar { fn new() }`) was a
/// 0.3 guess on "another receiver", as was Python's `Foo.create()` beside `class Foo`: the
/// receiver names a type the file defines, so the call is that type's member, at the
/// same-file confidence. A later scan that re-resolves the stored references (a new file
/// defines `new` and `create`) keeps those targets: they depend on their own file only.
#[test]
fn fault_a_member_on_a_type_the_file_defines_was_a_guess() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "m.rs",
        "struct Bar;\nstruct Foo;\nimpl Bar {\n    fn new() -> Bar { Bar }\n}\nimpl Foo {\n    fn new() -> Foo { Foo }\n}\nfn main() {\n    Foo::new();\n    Bar::new();\n    x.new();\n}\n",
    );
    write(
        root,
        "p.py",
        "class Other:\n    def create(self):\n        pass\n\nclass Foo:\n    @classmethod\n    def create(cls):\n        return cls()\n\ndef make(foo):\n    Foo.create()\n    foo.create()\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    let first = [
        "m.rs:10 new own -> m.rs#Foo.new@method derived 0.9",
        "m.rs:11 new own -> m.rs#Bar.new@method derived 0.9",
        // A value's method: still a guess.
        "m.rs:12 new other -> m.rs#Bar.new@method derived 0.3",
        // `cls()` calls the parameter: no reference.
        "p.py:11 create own -> p.py#Foo.create@method derived 0.9",
        "p.py:12 create other -> p.py#Foo.create@method derived 0.3",
    ];
    assert_eq!(call_targets(&ws), first);
    write(
        root,
        "z.rs",
        "struct Z;\nimpl Z {\n    fn new() -> Z { Z }\n}\n",
    );
    write(root, "z.py", "def create():\n    pass\n");
    let report = scan(&mut ws);
    assert_eq!(report.added, ["z.py", "z.rs"]);
    assert_eq!(call_targets(&ws), first);
    // And a fresh scan of the same tree agrees.
    drop(ws);
    std::fs::remove_dir_all(root.join(".loci")).unwrap();
    let mut fresh = open(root);
    scan(&mut fresh);
    assert_eq!(call_targets(&fresh), first);
}

/// Fault found by a fresh-user trial: after an upgrade of loci, a scan reported every
/// file unchanged and kept the rows the older analysis had written (`callers
/// Regex::new` found nothing, a `#[path]` module stayed unresolved) until each file
/// changed. A map another analysis version built is now analysed again, file by file,
/// without drift entries or "modified" files for content that did not change.
#[test]
fn fault_an_upgraded_loci_kept_the_older_analysis_until_each_file_changed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    scan(&mut ws);
    let expected = dump(ws.store().conn());
    let drift_rows = |ws: &Workspace| -> i64 {
        ws.store()
            .conn()
            .query_row("SELECT count(*) FROM drift", [], |r| r.get(0))
            .unwrap()
    };
    let drift_before = drift_rows(&ws);
    // The map as an older analysis left it: other kinds and keys, references missing.
    Connection::open(root.join(".loci/test.db"))
        .unwrap()
        .execute_batch(
            "UPDATE meta SET value = '1' WHERE key = 'analysis_version';
             UPDATE symbols SET kind = 'class', key = replace(key, '@function', '@class');
             DELETE FROM refs;",
        )
        .unwrap();
    // Until then, answers say the map is another version's.
    let notes = ws.stats().unwrap().capability.notes;
    assert!(
        notes.contains(&format!("the map was built by another version of loci's analysis (1, this loci's is {}): references and kinds may be as that version found them until `loci scan` analyses it again", loci_core::ANALYSIS_VERSION)),
        "{notes:?}"
    );
    let report = scan(&mut ws);
    assert_eq!(
        (
            report.reanalysed,
            report.modified.len(),
            report.added.len(),
            report.unchanged
        ),
        (8, 0, 0, 0)
    );
    assert_eq!(dump(ws.store().conn()), expected);
    assert_eq!(drift_rows(&ws), drift_before);
    // Once the map is this version's, a rescan is a no-op again, and the note is gone.
    let again = scan(&mut ws);
    assert_eq!((again.changed, again.reanalysed), (false, 0));
    assert!(
        !ws.stats()
            .unwrap()
            .capability
            .notes
            .iter()
            .any(|n| n.contains("another version of loci's analysis"))
    );

    // A reanalysis killed after writing some files (its scan row stays `running`): the
    // next one does not take the rows it rewrote for changed files (that would report
    // untouched files modified, 1,152 in one trial, each with a drift entry).
    Connection::open(root.join(".loci/test.db"))
        .unwrap()
        .execute_batch(
            "UPDATE meta SET value = '1' WHERE key = 'analysis_version';
             INSERT INTO scans(started_at) VALUES ('2026-01-01T00:00:00Z');
             UPDATE files SET scan_id = (SELECT max(scan_id) FROM scans) WHERE path LIKE 'app/%';
             DELETE FROM refs WHERE file_id IN (SELECT file_id FROM files WHERE path LIKE 'app/%');",
        )
        .unwrap();
    let resumed = scan(&mut ws);
    assert_eq!(
        (
            resumed.reanalysed,
            resumed.modified.len(),
            resumed.added.len()
        ),
        (8, 0, 0)
    );
    assert_eq!(dump(ws.store().conn()), expected);
    assert_eq!(drift_rows(&ws), drift_before);
}

/// Fault found by a fresh-user trial: `Builder::new_multi_thread()` in another file than
/// `impl Builder` was unresolved (tokio: `callers Builder::new_multi_thread` found none),
/// because a second `new_multi_thread` (a test helper) made the name ambiguous and the
/// receiver's name was not kept. References now keep it, and a member of a type of that
/// name is preferred; a path (`runtime::Builder::`) names the type by its last segment.
#[test]
fn fault_a_member_called_on_a_type_name_in_another_file_was_unresolved() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/runtime/builder.rs",
        "pub struct Builder;\n\nimpl Builder {\n    pub fn new_multi_thread() -> Builder {\n        Builder\n    }\n}\n",
    );
    write(root, "tests/helpers.rs", "fn new_multi_thread() {}\n");
    write(
        root,
        "src/main.rs",
        "fn main() {\n    let a = Builder::new_multi_thread();\n    let b = runtime::Builder::new_multi_thread();\n    let c = Other::new_multi_thread();\n}\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    let fresh = call_targets(&ws);
    assert_eq!(
        fresh,
        [
            "src/main.rs:2 new_multi_thread path -> src/runtime/builder.rs#Builder.new_multi_thread@method derived 0.7",
            "src/main.rs:3 new_multi_thread path -> src/runtime/builder.rs#Builder.new_multi_thread@method derived 0.7",
            "src/main.rs:4 new_multi_thread path -> - derived 0.0",
        ]
    );
    // Resolved again from the stored rows (the helper file changes), the same answer.
    write(
        root,
        "tests/helpers.rs",
        "fn new_multi_thread() {}\nfn other() {}\n",
    );
    scan(&mut ws);
    assert_eq!(call_targets(&ws), fresh);
}

/// Faults found by a second fresh-user trial of receiver names: a call on a type the map
/// does not hold (`Arc::new`) went to some other type's `new` nearby at 0.5, two types of
/// one name were picked by key order (`super::Builder::new()` in `task/` went to
/// `runtime/`'s), and a variable named like a function-local class (`c.foo()`) matched it
/// at 0.7. A capitalised receiver that names no type of the map is now unresolved, the
/// nearest type wins, and a lower-case receiver names only a top-level class.
#[test]
fn fault_a_type_named_call_went_to_another_types_member() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let builder = "pub struct Builder;\n\nimpl Builder {\n    pub fn new() -> Builder {\n        Builder\n    }\n}\n";
    write(root, "src/runtime/builder.rs", builder);
    write(root, "src/task/builder.rs", builder);
    write(
        root,
        "src/driver.rs",
        "pub struct Driver;\n\nimpl Driver {\n    pub fn new() -> Driver {\n        Driver\n    }\n}\n",
    );
    write(
        root,
        "src/task/join_set.rs",
        "use super::driver;\n\nfn f() {\n    let b = super::Builder::new();\n    let a = Arc::new(1);\n}\n",
    );
    write(
        root,
        "tests/nested.py",
        "def t():\n    class c:\n        def foo(self):\n            pass\n",
    );
    write(root, "use.py", "c = C()\nc.foo(1)\n");
    let mut ws = open(root);
    scan(&mut ws);
    let targets: Vec<String> = call_targets(&ws)
        .into_iter()
        .filter(|t| t.starts_with("src/task/join_set.rs") || t.starts_with("use.py"))
        .collect();
    assert_eq!(
        targets,
        [
            "src/task/join_set.rs:4 new path -> src/task/builder.rs#Builder.new@method derived 0.5",
            "src/task/join_set.rs:5 new path -> - derived 0.0",
            "use.py:1 C - -> - derived 0.0",
            // `c = C()` types `c`, but no `C` is in the map: a name match, as on a value.
            "use.py:2 foo typed -> tests/nested.py#t.c.foo@method derived 0.2",
        ]
    );
}

/// Fault (left open by the upgrade fix above): a change made to a file just before a scan
/// that was then killed went missing from the drift ledger. The killed scan had rewritten
/// the file's row with its new content (a scan writes its drift only when it finishes),
/// so the next scan found the row unchanged and, after an upgrade, took it for a
/// reanalysis. Drift is now measured from the content the ledger last recorded
/// (`files.drift_hash`), which only a finishing scan sets.
#[test]
fn fault_a_change_made_before_a_killed_scan_was_missing_from_the_drift_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let mut ws = open(root);
    scan(&mut ws);
    let hash_of = |conn: &Connection, path: &str| -> String {
        conn.query_row(
            "SELECT content_hash FROM files WHERE path = ?1",
            [path],
            |r| r.get(0),
        )
        .unwrap()
    };
    let old = hash_of(ws.store().conn(), "app/util.py");
    write(root, "app/util.py", "def fmt(x):\n    return repr(x)\n");
    // What the new content's row holds, from a scan of the changed tree elsewhere.
    let other_dir = tempfile::tempdir().unwrap();
    let mut other = Workspace::open(root, Some(&other_dir.path().join("other.db"))).unwrap();
    scan(&mut other);
    let (new, size, mtime): (String, i64, i64) = other
        .store()
        .conn()
        .query_row(
            "SELECT content_hash, size, mtime_ns FROM files WHERE path = 'app/util.py'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_ne!(new, old);
    // The killed scan, after an upgrade of loci: its row `running`, every file under app/
    // rewritten (app/util.py with its new content) without references, no drift.
    Connection::open(root.join(".loci/test.db"))
        .unwrap()
        .execute_batch(&format!(
            "UPDATE meta SET value = '1' WHERE key = 'analysis_version';
             INSERT INTO scans(started_at) VALUES ('2026-01-01T00:00:00Z');
             UPDATE files SET scan_id = (SELECT max(scan_id) FROM scans) WHERE path LIKE 'app/%';
             UPDATE files SET content_hash = '{new}', size = {size}, mtime_ns = {mtime}
              WHERE path = 'app/util.py';
             DELETE FROM refs WHERE file_id IN (SELECT file_id FROM files WHERE path LIKE 'app/%');"
        ))
        .unwrap();
    let report = scan(&mut ws);
    assert_eq!(report.modified, ["app/util.py"]);
    assert_eq!(
        report.reanalysed, 7,
        "every other file, analysed again: {report:#?}"
    );
    let drift: Vec<(String, String, Option<String>, Option<String>)> = {
        let conn = ws.store().conn();
        let mut stmt = conn
            .prepare(
                "SELECT path, kind, old_hash, new_hash FROM drift
                 WHERE scan_id = (SELECT max(scan_id) FROM scans) ORDER BY drift_id",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert_eq!(
        drift,
        [(
            "app/util.py".to_string(),
            "modify".to_string(),
            Some(old),
            Some(new.clone())
        )]
    );
    // The map equals a fresh scan's, and the ledger now holds the new content.
    assert_eq!(dump(ws.store().conn()), dump(other.store().conn()));
    assert_eq!(
        ws.store()
            .conn()
            .query_row(
                "SELECT drift_hash FROM files WHERE path = 'app/util.py'",
                [],
                |r| r.get::<_, String>(0)
            )
            .unwrap(),
        new
    );
}

/// Fault found by a fresh-user trial: `pub use crate::m::make;` bound the free function
/// `make` to the method `D::make` defined beside it in `m.rs` (stated, confidence 1.0),
/// because the methods of an `impl` have no parent symbol; serde_json's `from_str` went to
/// `Deserializer::from_str`, so `impact` of the free function found nothing. An imported
/// name now binds only to a module-level definition of the file it comes from.
#[test]
fn fault_a_pub_use_of_a_free_function_bound_to_a_same_named_method() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/m.rs",
        "pub struct D;\nimpl D {\n    pub fn make() -> D {\n        D\n    }\n}\npub fn make() -> D {\n    D\n}\n",
    );
    write(
        root,
        "src/lib.rs",
        "mod m;\npub use crate::m::make;\npub fn f() {\n    make();\n}\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        ["src/lib.rs:4 make - -> src/m.rs#make@function stated 1.0"]
    );
}

/// Fault found by a fresh-user trial: two files of the same size written in one clock tick
/// (a checkout, a code generator), then swapped by renames, kept their sizes and
/// modification times, so the next scan found both "unchanged" and the map kept the old
/// code (`symbol alpha` still in `a.py`, and memory about it read as fresh). A scan now
/// compares the later of the modification and status-change times, which a rename sets.
#[test]
fn fault_two_files_swapped_with_the_same_size_and_time_were_taken_as_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "def alpha():\n    return 1\n");
    write(root, "b.py", "def gamma():\n    return 2\n");
    let when = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    for f in ["a.py", "b.py"] {
        std::fs::File::options()
            .write(true)
            .open(root.join(f))
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    let mut ws = open(root);
    scan(&mut ws);
    std::fs::rename(root.join("a.py"), root.join("t.py")).unwrap();
    std::fs::rename(root.join("b.py"), root.join("a.py")).unwrap();
    std::fs::rename(root.join("t.py"), root.join("b.py")).unwrap();
    let report = scan(&mut ws);
    assert_eq!(report.modified, ["a.py", "b.py"], "{report:#?}");
    let defined: Vec<String> = {
        let conn = ws.store().conn();
        let mut stmt = conn
            .prepare("SELECT f.path || ' ' || s.name FROM symbols s JOIN files f USING (file_id) ORDER BY 1")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert_eq!(defined, ["a.py gamma", "b.py alpha"]);
}

/// The resolved import edges of the map: `from -> to (module)`, sorted.
fn dep_edges(ws: &Workspace) -> Vec<String> {
    let conn = ws.store().conn();
    let mut stmt = conn
        .prepare(
            "SELECT f.path || ' -> ' || t.path || ' (' || d.module || ')' FROM deps d
             JOIN files f ON f.file_id = d.from_file_id JOIN files t ON t.file_id = d.to_file_id
             ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// Fault (found on loci's own workspace after a trial named the same gap in regex's
/// tests): `use loci_store::map;` in another member of a Cargo workspace, or `use
/// regex::Regex;` in a crate's own tests/, stayed unresolved, so `deps`, `impact` and
/// `callers` stopped at every crate boundary. Crates are named by their `Cargo.toml`
/// (`[lib] name`, else the package name with `-` as `_`); editing a manifest resolves
/// every import again.
#[test]
fn fault_a_use_of_another_crate_of_the_workspace_was_unresolved() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[workspace]\nmembers = [\"alpha\", \"beta\"]\n",
    );
    write(
        root,
        "alpha/Cargo.toml",
        "[package]\nname = \"alpha-core\"\nversion = \"0.1.0\"\n",
    );
    write(root, "alpha/src/lib.rs", "pub mod parse;\n");
    write(
        root,
        "alpha/src/parse.rs",
        "pub struct Parser;\n\nimpl Parser {\n    pub fn run() {}\n}\n",
    );
    write(
        root,
        "alpha/tests/t.rs",
        "use alpha_core::parse::Parser;\n\n#[test]\nfn runs() {\n    Parser::run();\n}\n",
    );
    write(
        root,
        "beta/Cargo.toml",
        "[package]\nname = \"beta\"\nversion = \"0.1.0\"\n",
    );
    write(
        root,
        "beta/src/lib.rs",
        "use alpha_core::parse::Parser;\n\npub fn go() {\n    Parser::run();\n}\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    let edges = [
        "alpha/src/lib.rs -> alpha/src/parse.rs (self::parse)",
        "alpha/tests/t.rs -> alpha/src/parse.rs (alpha_core::parse)",
        "beta/src/lib.rs -> alpha/src/parse.rs (alpha_core::parse)",
    ];
    assert_eq!(dep_edges(&ws), edges);
    let calls: Vec<String> = call_targets(&ws)
        .into_iter()
        .filter(|c| c.contains(" run "))
        .collect();
    // `use alpha_core::parse::Parser;` binds `Parser` to the file defining it: stated.
    assert_eq!(
        calls,
        [
            "alpha/tests/t.rs:5 run path -> alpha/src/parse.rs#Parser.run@method stated 1.0",
            "beta/src/lib.rs:4 run path -> alpha/src/parse.rs#Parser.run@method stated 1.0",
        ]
    );
    // The library renamed: its old name names nothing, and the next scan says so.
    write(
        root,
        "alpha/Cargo.toml",
        "[package]\nname = \"alpha-core\"\nversion = \"0.1.0\"\n\n[lib]\nname = \"alpha\"\n",
    );
    scan(&mut ws);
    assert_eq!(dep_edges(&ws), edges[..1]);
}

/// Fault (fresh-user trial): `logging.getLogger("x")` after `import logging` resolved to
/// the method `Manager.getLogger` (first in key order in logging/__init__.py), not to the
/// module's function `getLogger`, so `callers` of the function missed its outside callers.
/// A name called on an imported module is a module-level definition first.
#[test]
fn fault_a_call_on_an_imported_module_resolved_to_a_method_beside_the_function() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "logging/__init__.py",
        "class Manager:\n    def getLogger(self, name):\n        return name\n\ndef getLogger(name=None):\n    return name\n",
    );
    write(
        root,
        "app.py",
        "import logging\n\ndef run():\n    return logging.getLogger(\"x\")\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        ["app.py:4 getLogger imported -> logging/__init__.py#getLogger@function derived 0.7"]
    );
}

/// Faults from a fresh-user trial on serde_json and tokio: a Rust path was read as a value
/// receiver, so `crate::from_str(s)` (re-exported by `lib.rs`) resolved to the method
/// `Map.from_str` beside the call, `std::thread::spawn` and `task::spawn()` to a module
/// `spawn`, and `std::fs::canonicalize(p)` to the enclosing function of that name. A Rust
/// path now starts from what the file's `use` bound its first name to and follows the
/// crate's module tree; a path into no module of the map stays unresolved.
#[test]
fn fault_a_rust_path_call_resolved_to_a_same_named_definition_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"r1\"\nversion = \"0.1.0\"\n",
    );
    write(
        root,
        "src/lib.rs",
        "mod de;\nmod value;\npub mod fs;\npub mod task;\npub use crate::de::from_str;\npub use crate::task::spawn;\n",
    );
    write(root, "src/de.rs", "pub fn from_str(s: &str) -> u8 { 0 }\n");
    write(
        root,
        "src/value.rs",
        "pub struct Map;\nimpl std::str::FromStr for Map {\n    type Err = ();\n    fn from_str(s: &str) -> Result<Self, ()> {\n        if crate::from_str(s) == 0 { return Err(()); }\n        Ok(Map)\n    }\n}\n",
    );
    write(
        root,
        "src/fs.rs",
        "pub fn canonicalize(p: &str) -> String {\n    std::fs::canonicalize(p);\n    super::de::from_str(p);\n    String::new()\n}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { super::canonicalize(\"x\"); }\n}\n",
    );
    write(
        root,
        "src/task/mod.rs",
        "mod spawn;\npub use spawn::spawn;\n",
    );
    write(root, "src/task/spawn.rs", "pub fn spawn() {}\n");
    write(
        root,
        "tests/t.rs",
        "use std::thread;\nuse r1::task;\n#[test]\nfn t() { task::spawn(); thread::spawn(|| ()); r1::spawn(); }\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        [
            "src/fs.rs:2 canonicalize path -> - derived 0.0",
            "src/fs.rs:3 from_str path -> src/de.rs#from_str@function stated 1.0",
            "src/fs.rs:4 new path -> - derived 0.0",
            "src/fs.rs:9 canonicalize path -> src/fs.rs#canonicalize@function derived 0.9",
            "src/value.rs:5 from_str path -> src/de.rs#from_str@function derived 0.7",
            "src/value.rs:5 Err - -> - derived 0.0",
            "src/value.rs:6 Ok - -> - derived 0.0",
            "tests/t.rs:4 spawn path -> src/task/spawn.rs#spawn@function stated 1.0",
            "tests/t.rs:4 spawn path -> - derived 0.0",
            "tests/t.rs:4 spawn path -> src/task/spawn.rs#spawn@function derived 0.7",
        ]
    );
}

/// Faults from the same trial: `self.len()` in `impl<A> Accels<A>` resolved to `Accel.len`
/// (first in key order among the file's `len` methods, as the methods of an `impl` have no
/// parent symbol), a bare `Err(..)` to an associated `type Err` and a bare `set(..)` in a
/// Python method to a method `set` of another class in the file. A name on `self` is the
/// enclosing type's member; a call never names a type alias, module or trait; and in
/// Rust, Python, Go, JavaScript, TypeScript and PHP a bare name never means a member (but
/// in a Python class body, the class's own).
#[test]
fn fault_self_and_bare_calls_resolved_to_members_of_another_type() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "y.rs",
        "pub struct Accels<A> { a: A }\npub struct Accel;\nimpl<A: AsRef<[u8]>> Accels<A> {\n    pub fn needles(&self) -> usize { self.len() }\n    pub fn len(&self) -> usize { 1 }\n}\nimpl Accel { pub fn len(&self) -> usize { 0 } }\nimpl std::str::FromStr for Accel {\n    type Err = ();\n    fn from_str(s: &str) -> Result<Self, ()> { Err(()) }\n}\n",
    );
    write(
        root,
        "m.py",
        "class Morsel:\n    def set(self, k):\n        return k\n\nclass TestCase:\n    def _deprecate(f):\n        return f\n    def check(self):\n        return set(range(3))\n    fail = _deprecate(check)\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        [
            "m.py:9 set - -> - derived 0.0",
            "m.py:9 range - -> - derived 0.0",
            "m.py:10 _deprecate - -> m.py#TestCase._deprecate@method derived 0.9",
            "y.rs:4 len own -> y.rs#Accels.len@method derived 0.9",
            "y.rs:10 Err - -> - derived 0.0",
        ]
    );
}

/// Faults from the same trial, in Go: `util.Open("n")` after importing both `…/db` and
/// `…/pkg/util` resolved to the `Open` of `db` (the first of the imported files in key
/// order), and `Open("x")` in another file of the same package stayed unresolved. A
/// name on an import looks in the files that import binds; a package is its directory.
#[test]
fn fault_a_go_package_call_went_to_another_imported_package() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "go.mod", "module github.com/acme/svc\n\ngo 1.21\n");
    write(
        root,
        "internal/db/db.go",
        "package db\nfunc Open(d string) *Conn { return &Conn{} }\ntype Conn struct{}\n",
    );
    write(
        root,
        "internal/db/helpers.go",
        "package db\nfunc Helper() { Open(\"x\") }\n",
    );
    write(
        root,
        "pkg/util/util.go",
        "package util\nfunc Open(n string) string { return n }\n",
    );
    write(
        root,
        "cmd/app/main.go",
        "package main\nimport (\n\t\"github.com/acme/svc/internal/db\"\n\t\"github.com/acme/svc/pkg/util\"\n)\nfunc main() { db.Open(\"d\"); util.Open(\"n\") }\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        [
            "cmd/app/main.go:6 Open imported -> internal/db/db.go#Open@function derived 0.7",
            "cmd/app/main.go:6 Open imported -> pkg/util/util.go#Open@function derived 0.7",
            "internal/db/helpers.go:2 Open - -> internal/db/db.go#Open@function derived 0.9",
        ]
    );
}

/// Faults from a fresh-user trial over clap_builder, ignore, indicatif, gix-ref and the
/// stdlib's asyncio/email: `threading.Lock()` (an import outside the map) resolved to
/// `asyncio/locks.py#Lock` and `os.write()` to a method `write` (0.5); `self.clone()` under
/// `#[derive(Clone)]` to another type's `clone` (0.7), while `self.loose_iter()` missed the
/// `impl Store` in another file; `Parser::<i64>::new()` (a turbofish) to another type's
/// `new` beside it; `indicatif::ProgressBar::new()` in the crate's own tests stayed
/// unresolved; a parameter `callback(..)` resolved to a function nested in another file;
/// `wd.min_depth(..)` to a test function.
#[test]
fn fault_calls_outside_the_map_or_on_values_resolved_to_same_named_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"bars\"\nversion = \"0.1.0\"\n",
    );
    write(
        root,
        "src/lib.rs",
        "mod bar;\nmod store;\nmod iter;\npub use bar::ProgressBar;\n#[derive(Clone)]\npub struct Ignore;\nimpl Ignore {\n    fn dup(&self) -> Ignore { self.clone() }\n}\npub struct Error;\nimpl Clone for Error { fn clone(&self) -> Error { Error } }\npub struct Bool;\nimpl Bool { pub fn new() -> Bool { Bool } }\npub struct Ranged<T>(T);\nimpl<T> Ranged<T> { pub fn new(t: T) -> Self { Ranged(t) } }\nfn make() { Ranged::<i64>::new(1); }\nfn walk(wd: &Walk) { wd.min_depth(1); }\n#[cfg(test)]\nmod tests { fn min_depth(x: u8) {} }\n",
    );
    write(
        root,
        "src/bar.rs",
        "pub struct ProgressBar;\nimpl ProgressBar { pub fn new(n: u64) -> ProgressBar { ProgressBar } }\n",
    );
    write(
        root,
        "src/store.rs",
        "pub struct Store;\nimpl Store { pub fn open(&self) { self.loose_iter(); } }\n",
    );
    write(
        root,
        "src/iter.rs",
        "use crate::store::Store;\npub struct Packed;\nimpl Packed { pub fn loose_iter(&self) {} }\nimpl Store { pub fn loose_iter(&self) {} }\n",
    );
    write(
        root,
        "tests/t.rs",
        "use bars::ProgressBar;\n#[test]\nfn t() { ProgressBar::new(1); bars::ProgressBar::new(2); }\n",
    );
    write(root, "asyncio/locks.py", "class Lock:\n    pass\n");
    write(root, "os.py", "def getcwd():\n    return '.'\n");
    write(
        root,
        "asyncio/tasks.py",
        "def run_threadsafe(coro):\n    def callback():\n        return coro\n    return callback\n",
    );
    write(
        root,
        "asyncio/futures.py",
        "import threading\nimport os\n\ndef wait(callback):\n    threading.Lock()\n    os.write(1, b'x')\n    os.getcwd()\n    callback()\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    assert_eq!(
        call_targets(&ws),
        [
            "asyncio/futures.py:5 Lock imported -> - derived 0.0",
            "asyncio/futures.py:6 write imported -> - derived 0.0",
            "asyncio/futures.py:7 getcwd imported -> os.py#getcwd@function derived 0.7",
            // `callback()` calls the parameter: no reference at all, never the nested
            // `callback` of `asyncio/tasks.py`.
            "src/lib.rs:8 clone own -> - derived 0.0",
            "src/lib.rs:15 Ranged - -> src/lib.rs#Ranged@struct derived 0.9",
            "src/lib.rs:16 new path -> - derived 0.0",
            // `wd: &Walk` types `wd`; no `Walk` in the map, and no free function is a method.
            "src/lib.rs:17 min_depth typed -> - derived 0.0",
            "src/store.rs:2 loose_iter own -> src/iter.rs#Store.loose_iter@method derived 0.7",
            "tests/t.rs:3 new path -> src/bar.rs#ProgressBar.new@method derived 0.7",
            "tests/t.rs:3 new path -> src/bar.rs#ProgressBar.new@method derived 0.7",
        ]
    );
}

/// Fault: human output printed control characters in paths raw: a file named `new\nline.py`
/// split its `path:line:` line in two, and a scan's skip list and lint's findings likewise.
/// Each control character is written as its escape.
#[test]
fn fault_a_newline_in_a_path_split_a_line_of_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "new\nline.py", "def f():\n    return 1\n");
    std::os::unix::fs::symlink("/etc/passwd", root.join("tab\there")).unwrap();
    let mut ws = open(root);
    let report = scan(&mut ws);
    let hits = ws.symbol("f", 10).unwrap().result;
    let shown = loci_engine::text::to_string(|o| loci_engine::text::symbol_hit(o, &hits[0]));
    assert_eq!(
        shown,
        "new\\nline.py:1: function f  [new\\nline.py#f@function]\n    def f():\n"
    );
    let summary = loci_engine::text::to_string(|o| loci_engine::text::scan(o, &report));
    assert!(summary.contains("\n  tab\\there: symlink\n"), "{summary}");
    assert_eq!(loci_engine::text::escaped("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
}

/// Fault: a scan killed while it followed a rename — after it had deleted the old file from
/// the map, before it moved the memory — lost the rename for memory: the next scan saw the
/// new file and no deletion, so the page stayed on a path that no longer exists and its
/// claims pointed at nothing. The page follows the file in the same transaction that
/// deletes the old path. The kill is a panic of the progress callback at the step after the
/// deletions (what a kill there leaves).
#[test]
fn fault_a_scan_killed_mid_rename_lost_the_rename_for_memory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    let mut ws = open(root);
    scan(&mut ws);
    let by = loci_engine::memory::WriteOptions {
        author: Some("human:test".into()),
        ..Default::default()
    };
    ws.remember("app.py", "Greets with `hello()`.", &by)
        .unwrap();
    std::fs::rename(root.join("app.py"), root.join("greet.py")).unwrap();
    let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ws.scan(&|p| {
            if matches!(p, loci_engine::map::ScanProgress::Resolving) {
                panic!("killed after the deletions");
            }
        })
    }));
    assert!(killed.is_err());
    drop(ws);
    let mut ws = open(root);
    scan(&mut ws);
    let shown = ws.show("greet.py", None).unwrap();
    assert_eq!(
        (
            shown.result.page.subject.as_str(),
            shown.result.claims[0].resolved.as_deref()
        ),
        ("greet.py", Some("greet.py#hello@function"))
    );
    assert_eq!(
        shown
            .stale_warnings
            .iter()
            .map(|w| w.reason.as_str())
            .collect::<Vec<_>>(),
        Vec::<&str>::new()
    );
}

/// The common-terms lists of the map's full-text indexes, as `(index, term, rows)`, sorted.
fn common_terms(db: &Path) -> Vec<(String, String, i64)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT fts, term, doc FROM fts_common_terms ORDER BY fts, term")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The common-terms lists made from scratch: every index walked again.
fn common_terms_walked(db: &Path) -> Vec<(String, String, i64)> {
    let copy = db.with_extension("walked.db");
    let conn = Connection::open(db).unwrap();
    conn.execute("VACUUM INTO ?1", [copy.to_str().unwrap()])
        .unwrap();
    let conn = Connection::open(&copy).unwrap();
    conn.execute_batch("DELETE FROM fts_common_terms_stamp")
        .unwrap();
    for table in FtsTable::MAP {
        loci_store::search::refresh_common_terms(&conn, table).unwrap();
    }
    drop(conn);
    let walked = common_terms(&copy);
    std::fs::remove_file(&copy).unwrap();
    walked
}

/// A module whose docstring holds `words`.
fn module(i: usize, words: &str) -> String {
    format!("def alpha_{i}(x):\n    \"\"\"Beta {words}.\"\"\"\n    return x + {i}\n")
}

/// A rescan after 100 edits of a 50,000-file map spent 43% of its CPU walking every
/// full-text index again to list its common terms. A small rescan now moves each listed
/// count by the rows it deleted and inserted; the lists must equal a walk of every index,
/// term for term, after edits that lift a term over the threshold
/// ([`loci_store::search::COMMON_TERM_ROWS`], 128 rows), drop one under it, delete, add and
/// rename files, in primary and secondary code and in docs, over two rescans.
#[test]
fn common_terms_moved_by_a_rescans_changes_equal_a_walk_of_every_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = root.join(".loci/test.db");
    // `gamma` in 128 modules (listed), `delta` in 127 (one short), in primary code
    // (`src/`) and secondary code (`tests/`); `omega` in 128 docs.
    for i in 0..140 {
        let gamma = if i < 128 { "gamma" } else { "" };
        let delta = if i < 127 { "delta" } else { "" };
        write(
            root,
            &format!("src/m{i}.py"),
            &module(i, &format!("{gamma} {delta}")),
        );
        write(
            root,
            &format!("tests/test_m{i}.py"),
            &module(i, &format!("{gamma} {delta}")),
        );
        let omega = if i < 128 { "omega" } else { "" };
        write(
            root,
            &format!("docs/d{i}.md"),
            &format!("# Heading {i}\n\nText {omega}.\n"),
        );
    }
    let mut ws = open(root);
    let first = scan(&mut ws);
    assert!(
        !first.common_terms_updated,
        "a first scan walks the indexes"
    );
    let listed = common_terms(&db);
    let doc = |rows: &[(String, String, i64)], fts: &str, term: &str| {
        rows.iter()
            .find(|(f, t, _)| f == fts && t == term)
            .map(|r| r.2)
    };
    assert_eq!(doc(&listed, "code_chunks_fts", "gamma"), Some(128));
    assert_eq!(doc(&listed, "code_chunks_fts", "delta"), None);
    assert_eq!(doc(&listed, "secondary_file_text_fts", "gamma"), Some(128));
    assert_eq!(doc(&listed, "symbols_fts", "gamma"), Some(256));
    assert_eq!(doc(&listed, "doc_chunks_fts", "omega"), Some(128));

    // Round 1: `gamma` leaves one module of each kind (127: unlisted), `delta` reaches
    // 128 (listed); a module is deleted, one added, one renamed; a doc loses `omega`.
    write(root, "src/m0.py", &module(0, "delta"));
    write(root, "tests/test_m0.py", &module(0, "delta"));
    write(root, "src/m130.py", &module(130, "delta"));
    write(root, "tests/test_m130.py", &module(130, "delta"));
    std::fs::remove_file(root.join("src/m135.py")).unwrap();
    write(root, "src/new.py", &module(500, "epsilon gamma"));
    std::fs::rename(root.join("src/m139.py"), root.join("src/moved.py")).unwrap();
    write(root, "docs/d0.md", "# Heading 0\n\nText.\n");
    let round1 = scan(&mut ws);
    assert!(round1.common_terms_updated, "{round1:?}");
    let listed = common_terms(&db);
    assert_eq!(listed, common_terms_walked(&db));
    // `new.py` adds a `gamma` back to the primary indexes; the secondary lost one.
    assert_eq!(doc(&listed, "code_chunks_fts", "gamma"), Some(128));
    assert_eq!(doc(&listed, "secondary_chunks_fts", "gamma"), None);
    assert_eq!(doc(&listed, "code_chunks_fts", "delta"), Some(128));
    assert_eq!(doc(&listed, "secondary_file_text_fts", "delta"), Some(128));
    assert_eq!(doc(&listed, "doc_chunks_fts", "omega"), None);
    assert_eq!(doc(&listed, "symbols_fts", "gamma"), Some(255));

    // Round 2, from the moved lists: `gamma` back in the secondary code, `delta` out of
    // the primary code's files, a doc gains `omega`.
    write(root, "tests/test_m0.py", &module(0, "gamma delta"));
    write(root, "src/m1.py", &module(1, "gamma"));
    write(root, "docs/d0.md", "# Heading 0\n\nText omega.\n");
    let round2 = scan(&mut ws);
    assert!(round2.common_terms_updated);
    let listed = common_terms(&db);
    assert_eq!(listed, common_terms_walked(&db));
    assert_eq!(doc(&listed, "secondary_chunks_fts", "gamma"), Some(128));
    assert_eq!(doc(&listed, "code_chunks_fts", "delta"), None);
    assert_eq!(doc(&listed, "doc_chunks_fts", "omega"), Some(128));
    for table in FtsTable::MAP {
        assert!(common_terms_current(ws.store().conn(), table).unwrap());
    }
    // Nothing changed: nothing recorded, nothing moved.
    let noop = scan(&mut ws);
    assert!(!noop.changed && !noop.common_terms_updated);
}

/// A first scan's bulk load held every reference of the repository in memory until it
/// resolved them (3.3 M on a 50,000-file map: its peak RSS grew with the repository). It
/// now writes each file's references with the file and resolves them from the store a batch
/// at a time. The map must equal, row for row, the one references held until resolution
/// give: a first scan of fewer than 257 files (no bulk load) and a rescan adding the rest,
/// in Python and Rust, with same-file targets, receivers and paths.
#[test]
fn a_bulk_first_scan_that_resolves_written_references_equals_one_that_held_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let python = |n: usize| {
        format!(
            "from pkg.m{prev} import get, Node\n\nclass Node:\n    def get(self):\n        return get()\n\ndef get():\n    return Node().get()\n\ndef f{n}(x):\n    x.get()\n    return get(), Node(), self_{n}()\n",
            prev = (n + 249) % 250
        )
    };
    let rust = |n: usize| {
        format!(
            "use crate::r{prev}::Thing;\n\npub struct Thing{n} {{ v: u32 }}\n\nimpl Thing{n} {{\n    pub fn new() -> Self {{ Thing{n} {{ v: 1 }} }}\n    pub fn get(&self) -> u32 {{ self.v }}\n}}\n\npub fn run{n}() -> u32 {{\n    let t = Thing{n}::new();\n    crate::r{prev}::run{prev}();\n    std::mem::drop(Thing::new());\n    t.get()\n}}\n",
            prev = (n + 49) % 50
        )
    };
    write(root, "pkg/__init__.py", "");
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"r\"\nversion = \"0.1.0\"\n",
    );
    for n in 0..200 {
        write(root, &format!("pkg/m{n}.py"), &python(n));
    }
    for n in 0..30 {
        write(root, &format!("src/r{n}.rs"), &rust(n));
    }
    // Held: a first scan of 232 files, then a rescan of the other 70.
    let held_db = tempfile::tempdir().unwrap();
    let mut held = Workspace::open(root, Some(&held_db.path().join("held.db"))).unwrap();
    assert_eq!(scan(&mut held).added.len(), 232);
    for n in 200..250 {
        write(root, &format!("pkg/m{n}.py"), &python(n));
    }
    for n in 30..50 {
        write(root, &format!("src/r{n}.rs"), &rust(n));
    }
    assert_eq!(scan(&mut held).added.len(), 70);
    let held_rows = dump(held.store().conn());
    // Written: one bulk first scan of all 302.
    let mut written = open(root);
    assert_eq!(scan(&mut written).added.len(), 302);
    let written_rows = dump(written.store().conn());
    let only_held: Vec<_> = held_rows
        .iter()
        .filter(|r| !written_rows.contains(r))
        .collect();
    let only_written: Vec<_> = written_rows
        .iter()
        .filter(|r| !held_rows.contains(r))
        .collect();
    assert!(
        only_held.is_empty() && only_written.is_empty(),
        "only held: {only_held:#?}\nonly written: {only_written:#?}"
    );
    let resolved = |rows: &[String]| {
        rows.iter()
            .filter(|r| r.starts_with("ref |") && !r.contains("| derived | 0.000 |"))
            .count()
    };
    assert!(
        resolved(&written_rows) > 1000,
        "{}",
        resolved(&written_rows)
    );
}

/// Fault: a file that held the table's largest symbol ids, rewritten with a new
/// definition before the kept ones, failed its scan (`UNIQUE constraint failed:
/// symbols.symbol_id`): the new row took the largest remaining id plus one, an id a later
/// symbol of the same file was keeping.
#[test]
fn fault_a_new_symbol_took_the_id_a_kept_symbol_of_its_file_reuses() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "a.py",
        "def a():\n    return 1\n\n\ndef b():\n    return 2\n",
    );
    let mut ws = open(root);
    scan(&mut ws);
    let ids = |ws: &Workspace| -> Vec<(String, i64)> {
        let mut stmt = ws
            .store()
            .conn()
            .prepare("SELECT name, symbol_id FROM symbols ORDER BY symbol_id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(ids(&ws), [("a".to_string(), 1), ("b".to_string(), 2)]);
    write(
        root,
        "a.py",
        "def new():\n    return 0\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n",
    );
    let report = scan(&mut ws);
    assert_eq!(report.modified, ["a.py"]);
    assert_eq!(
        ids(&ws),
        [
            ("a".to_string(), 1),
            ("b".to_string(), 2),
            ("new".to_string(), 3)
        ]
    );
}

/// The b-trees (segments) of a full-text index: a search opens each term in each.
fn segments(conn: &Connection, table: FtsTable) -> i64 {
    let fts = table.name();
    conn.query_row(
        &format!("SELECT count(DISTINCT segid) FROM {fts}_idx"),
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// The writer commits a first scan in batches, and each batch flushed a segment of the
/// code-text indexes that no merge followed (the bulk load's `optimize` covers only the
/// indexes it rebuilds): the stdlib's were left in nine segments each, and `context`
/// used 23% more CPU than on one.
#[test]
fn fault_a_first_scan_left_the_code_text_indexes_in_a_segment_per_batch() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..300 {
        write(
            root,
            &format!("pkg/m{i:03}.py"),
            &format!(
                "def handler_{i}(event):\n    \"\"\"Handles event {i}.\"\"\"\n    return event\n"
            ),
        );
        write(
            root,
            &format!("tests/test_m{i:03}.py"),
            &format!("def test_handler_{i}():\n    assert handler_{i}(1) == 1\n"),
        );
    }
    write(
        root,
        "README.md",
        "# Handlers\n\nEvery handler returns its event.\n",
    );
    let mut ws = open(root);
    let report = scan(&mut ws);
    assert_eq!(report.added.len(), 601);
    for table in FtsTable::MAP {
        assert_eq!(segments(ws.store().conn(), table), 1, "{}", table.name());
    }
    let found: i64 = ws
        .store()
        .conn()
        .query_row(
            "SELECT count(*) FROM code_chunks_fts WHERE code_chunks_fts MATCH 'event'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, 300);
}

//! Portability through the real binary: `loci backup` taken while another `loci` process
//! (an MCP server) writes revisions in a loop, and `loci export` / `import` / `restore`
//! as a user runs them.

use crate::mcp_support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loci_store::rusqlite::Connection;
use mcp_support::{Mcp, run, write};
use serde_json::{Value, json};

/// Bodies of the revisions of `subject` in the database at `db`.
fn bodies(db: &Path, subject: &str) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT r.body FROM revisions r JOIN pages p USING (page_id)
             WHERE p.subject = ?1 ORDER BY r.version",
        )
        .unwrap();
    stmt.query_map([subject], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn integrity(db: &Path) -> String {
    Connection::open(db)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[test]
fn a_backup_taken_while_another_process_writes_holds_every_committed_revision() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "def a():\n    pass\n");
    // A few MiB of memory, so a backup takes several steps.
    {
        let mut ws = loci_engine::Workspace::open(root, None).unwrap();
        let filler = "lorem ipsum dolor sit amet ".repeat(4_000);
        for i in 0..40 {
            ws.remember(
                "topic:filler",
                &format!("{i} {filler}"),
                &Default::default(),
            )
            .unwrap();
        }
    }
    let acked: Arc<Mutex<Vec<u64>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (acked, stop, root) = (acked.clone(), stop.clone(), root.to_path_buf());
        std::thread::spawn(move || {
            let mut mcp = Mcp::start(&root, &[("RUST_LOG", "warn")]);
            mcp.initialize("writer");
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let r = mcp.call(
                    "remember",
                    json!({"subject": "topic:load", "body": format!("rev {n}")}),
                );
                assert!(
                    r.get("error").is_none() && r["result"]["isError"] != json!(true),
                    "write {n} failed: {r}"
                );
                acked.lock().unwrap().push(n);
                n += 1;
            }
            let (status, _, stderr) = mcp.finish();
            assert!(status.success(), "{stderr}");
        })
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while acked.lock().unwrap().len() < 5 {
        assert!(Instant::now() < deadline, "the writer made no progress");
        std::thread::yield_now();
    }
    // Back up until one backup was restarted by a concurrent write (usually the first);
    // every one of them must be whole.
    let mut concurrent = None;
    for attempt in 0..40 {
        let before: Vec<u64> = acked.lock().unwrap().clone();
        let dest = root.join(format!("backup-{attempt}.db"));
        let (status, stdout, stderr) = run(root, &["backup", dest.to_str().unwrap(), "--json"]);
        let during = acked.lock().unwrap().len() - before.len();
        assert!(status.success(), "{stderr}");
        let report = json_of(&stdout)["result"].clone();
        assert_eq!(integrity(&dest), "ok");
        let held = bodies(&dest, "topic:load");
        for n in &before {
            assert!(
                held.contains(&format!("rev {n}")),
                "backup {attempt} lost rev {n}, committed before it began"
            );
        }
        assert_eq!(bodies(&dest, "topic:filler").len(), 40);
        let restarts = report["restarts"].as_u64().unwrap();
        assert!(report["steps"].as_u64().unwrap() > 1, "{report}");
        if restarts > 0 && during > 0 {
            concurrent = Some((attempt, restarts, during));
            break;
        }
        if Instant::now() > deadline {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let (attempt, restarts, during) =
        concurrent.expect("no backup overlapped a write within 40 attempts");
    eprintln!("backup {attempt}: {restarts} restarts, {during} writes committed meanwhile");
}

#[test]
fn export_import_and_restore_through_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "def a():\n    pass\n");
    let ok = |args: &[&str]| {
        let (status, stdout, stderr) = run(root, args);
        assert!(status.success(), "loci {args:?}: {stderr}");
        stdout
    };
    ok(&["scan"]);
    ok(&[
        "remember",
        "a.py",
        "--text",
        "`a()` does nothing.",
        "--author",
        "human:ann",
    ]);
    ok(&["decide", "Keep a() empty", "--author", "human:bob"]);
    let export = root.join("memory.json");
    let said = ok(&["export", "--output", export.to_str().unwrap()]);
    assert_eq!(
        said.trim(),
        format!(
            "exported 2 pages, 2 revisions, 0 facts, 0 sessions and 0 dismissals to {}",
            export.display()
        )
    );
    // Into a fresh checkout, twice.
    let other = tempfile::tempdir().unwrap();
    write(other.path(), "a.py", "def a():\n    pass\n");
    let (status, first, stderr) = run(
        other.path(),
        &["import", export.to_str().unwrap(), "--json"],
    );
    assert!(status.success(), "{stderr}");
    let first = json_of(&first)["result"].clone();
    assert_eq!(
        (
            first["pages_created"].clone(),
            first["revisions_added"].clone()
        ),
        (json!(["a.py", "decision:1"]), json!(2))
    );
    let (_, second, _) = run(other.path(), &["import", export.to_str().unwrap()]);
    assert_eq!(
        second.trim(),
        format!(
            "imported {}: 0 pages created, 0 revisions added, 2 already here; 0 facts added, 0 already here; 0 topic members added",
            export.display()
        )
    );
    let (_, shown, _) = run(other.path(), &["show", "a.py", "--json"]);
    let shown = json_of(&shown)["result"]["revision"].clone();
    assert_eq!(
        (
            shown["author"].clone(),
            shown["body"].clone(),
            shown["version"].clone()
        ),
        (json!("human:ann"), json!("`a()` does nothing."), json!(1))
    );

    // Backup, write more, restore: back to the backup, the replaced database kept.
    let backup = root.join("before.db");
    ok(&["backup", backup.to_str().unwrap()]);
    ok(&["remember", "a.py", "--text", "second thoughts"]);
    let said = ok(&["restore", backup.to_str().unwrap()]);
    assert!(said.starts_with("restored "), "{said}");
    let (_, history, _) = run(root, &["history", "a.py", "--json"]);
    assert_eq!(
        json_of(&history)["result"]["revisions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let saved: Vec<_> = std::fs::read_dir(root.join(".loci/backups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(
        bodies(&saved[0], "a.py"),
        ["`a()` does nothing.", "second thoughts"]
    );

    // Random bytes are refused, exit 2, and nothing changes.
    let junk = root.join("junk.db");
    std::fs::write(&junk, [0x5a_u8; 8192]).unwrap();
    let (status, _, stderr) = run(root, &["restore", junk.to_str().unwrap()]);
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr.trim(),
        format!(
            "loci: {}: not a usable loci database: cannot read it: file is not a database; nothing was restored",
            junk.display()
        )
    );
    assert_eq!(
        bodies(&root.join(".loci/loci.db"), "a.py"),
        ["`a()` does nothing."]
    );
}

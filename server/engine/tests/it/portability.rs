//! Portability: export → import reproduces memory exactly, importing twice changes
//! nothing, diverged pages keep both histories, bad documents are refused before anything
//! is written, exports carry no fact outcomes, and restore validates before it replaces.

use std::path::Path;

use loci_engine::memory::{MemoryExport, WriteOptions, parse_export};
use loci_engine::{EngineError, StoreError, Workspace};

use crate::fixture::write;

fn checkout() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "src/auth.py",
        "def login(user):\n    return check(user)\n\ndef check(u):\n    return True\n",
    );
    write(
        dir.path(),
        "src/billing.py",
        "def total(items):\n    return sum(items)\n",
    );
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

fn by(author: &str) -> WriteOptions {
    WriteOptions {
        author: Some(author.into()),
        summary: Some(format!("by {author}")),
        ..Default::default()
    }
}

/// A checkout with every kind of authored memory.
fn source() -> (tempfile::TempDir, Workspace) {
    let (dir, mut ws) = checkout();
    ws.remember("src/auth.py", "`login()` calls `check()`.", &by("agent:a"))
        .unwrap();
    ws.remember(
        "src/auth.py",
        "`login()` is the entry point.",
        &by("human:b"),
    )
    .unwrap();
    ws.rollback("src/auth.py", 1, &by("human:b")).unwrap();
    ws.remember("src", "Sources.", &by("human:b")).unwrap();
    ws.remember(".", "The repository.", &by("human:b")).unwrap();
    ws.pin("src", true, &by("human:b")).unwrap();
    ws.decide("Totals are sums", Some("src/billing.py"), &by("human:ann"))
        .unwrap();
    ws.learn("Check before login", None, &by("agent:a"))
        .unwrap();
    ws.remember("topic:billing", "Billing is `total()`.", &by("human:ann"))
        .unwrap();
    ws.topic_set("billing", "src/billing.py", true, &by("human:ann"))
        .unwrap();
    ws.topic_set("topic:empty", "src", true, &by("human:ann"))
        .unwrap();
    ws.fact_add(
        "python runs",
        "python3 -c 'print(42)'",
        Some("42"),
        Some(0),
        &by("human:ann"),
    )
    .unwrap();
    (dir, ws)
}

fn export(ws: &Workspace) -> MemoryExport {
    let mut doc = ws.export_memory().unwrap().result;
    doc.exported_at = String::new();
    doc
}

/// Row counts of every authored and audit table, and the export: the whole visible state.
fn state(ws: &Workspace) -> (Vec<(String, i64)>, MemoryExport) {
    let conn = ws.store().conn();
    let counts = [
        "pages",
        "revisions",
        "claims",
        "page_snapshots",
        "events",
        "topic_members",
        "facts",
    ]
    .iter()
    .map(|t| {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
            .unwrap();
        (t.to_string(), n)
    })
    .collect();
    (counts, export(ws))
}

#[test]
fn export_then_import_into_a_fresh_store_reproduces_pages_and_history_exactly() {
    let (_src_dir, src) = source();
    let doc = export(&src);
    let pages: Vec<(&str, &str, bool, usize)> = doc
        .pages
        .iter()
        .map(|p| {
            (
                p.subject.as_str(),
                p.kind.as_str(),
                p.pinned,
                p.revisions.len(),
            )
        })
        .collect();
    assert_eq!(
        pages,
        [
            (".", "root", false, 1),
            ("decision:1", "decisions", false, 1),
            ("lesson:1", "lessons", false, 1),
            ("src", "folder", true, 1),
            ("src/auth.py", "file", false, 3),
            ("topic:billing", "topic", false, 1),
            ("topic:empty", "topic", false, 0),
        ]
    );
    let events: Vec<Option<&str>> = doc.pages[4]
        .revisions
        .iter()
        .map(|r| r.event.as_deref())
        .collect();
    assert_eq!(
        events,
        [Some("remember"), Some("remember"), Some("rollback")]
    );
    assert_eq!(doc.pages[5].members, ["src/billing.py"]);
    assert_eq!(doc.facts.len(), 1);

    let (_dst_dir, mut dst) = checkout();
    let report = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!(report.pages_created.len(), 7);
    assert_eq!((report.revisions_added, report.revisions_skipped), (8, 0));
    assert_eq!((report.facts_added, report.members_added), (1, 2));
    assert!(
        report.renumbered.is_empty() && report.notes.is_empty(),
        "{report:?}"
    );
    // Same uids, subjects, pins, times, and every revision with its version, body,
    // summary, author, time and original event.
    assert_eq!(export(&dst), doc);
    // Claims were re-extracted and resolved against this checkout's map.
    let shown = dst.show("src/auth.py", None).unwrap().result;
    let resolved: Vec<Option<&str>> = shown.claims.iter().map(|c| c.resolved.as_deref()).collect();
    assert_eq!(
        resolved,
        [
            Some("src/auth.py#login@function"),
            Some("src/auth.py#check@function")
        ]
    );
    let history: Vec<(i64, String, Option<String>)> = dst
        .history("src/auth.py")
        .unwrap()
        .result
        .revisions
        .into_iter()
        .map(|r| (r.version, r.author, r.event))
        .collect();
    assert_eq!(
        history,
        [
            (1, "agent:a".to_string(), Some("import".to_string())),
            (2, "human:b".to_string(), Some("import".to_string())),
            (3, "human:b".to_string(), Some("import".to_string())),
        ]
    );
}

#[test]
fn importing_twice_changes_nothing() {
    let (_src_dir, src) = source();
    let doc = export(&src);
    let (_dst_dir, mut dst) = checkout();
    dst.import_memory(&doc, "memory.json").unwrap();
    let after_first = state(&dst);
    let again = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!(
        (
            again.pages_created.len(),
            again.revisions_added,
            again.revisions_skipped,
            again.facts_added,
            again.facts_skipped,
            again.members_added
        ),
        (0, 0, 8, 0, 1, 0)
    );
    assert_eq!(state(&dst), after_first);
    // And into the store it came from: everything is already there.
    let (_, src_state) = state(&src);
    let mut src = src;
    let back = src.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!((back.revisions_added, back.facts_added), (0, 0));
    assert_eq!(state(&src).1, src_state);
}

#[test]
fn a_page_written_on_both_sides_keeps_both_histories_and_reimport_is_still_idempotent() {
    let (_src_dir, mut src) = checkout();
    src.remember("src/auth.py", "theirs 1", &by("agent:a"))
        .unwrap();
    src.remember("src/auth.py", "theirs 2", &by("agent:a"))
        .unwrap();
    let doc = export(&src);
    let (_dst_dir, mut dst) = checkout();
    dst.remember("src/auth.py", "ours 1", &by("human:b"))
        .unwrap();
    let report = dst.import_memory(&doc, "theirs.json").unwrap().result;
    assert_eq!(
        report.renumbered,
        [
            ("src/auth.py".to_string(), 1, 2),
            ("src/auth.py".to_string(), 2, 3)
        ]
    );
    let bodies: Vec<String> = (1..=3)
        .map(|v| {
            dst.show("src/auth.py", Some(v))
                .unwrap()
                .result
                .revision
                .body
        })
        .collect();
    assert_eq!(bodies, ["ours 1", "theirs 1", "theirs 2"]);
    let before = state(&dst);
    let again = dst.import_memory(&doc, "theirs.json").unwrap().result;
    assert_eq!((again.revisions_added, again.revisions_skipped), (0, 2));
    assert_eq!(state(&dst), before);
}

#[test]
fn a_page_renamed_at_the_source_moves_here_by_its_uid() {
    let (_src_dir, mut src) = checkout();
    src.remember("src/auth.py", "auth", &by("agent:a")).unwrap();
    let first = export(&src);
    let (_dst_dir, mut dst) = checkout();
    dst.import_memory(&first, "first.json").unwrap();
    // The source renamed the file (as sync does) and wrote again.
    let mut moved = first.clone();
    moved.pages[0].subject = "src/login.py".into();
    let report = dst.import_memory(&moved, "moved.json").unwrap().result;
    assert_eq!(
        report.pages_moved,
        [("src/auth.py".to_string(), "src/login.py".to_string())]
    );
    assert_eq!((report.revisions_added, report.revisions_skipped), (0, 1));
    assert_eq!(
        dst.history("src/login.py").unwrap().result.revisions.len(),
        1
    );
}

#[test]
fn bad_documents_are_refused_with_the_place_named_and_nothing_written() {
    let (_src_dir, src) = source();
    let text = serde_json::to_string(&export(&src)).unwrap();
    let (_dst_dir, mut dst) = checkout();
    let before = state(&dst);
    let refused = |doc: &str| match parse_export(doc, "memory.json") {
        Err(e) => e.to_string(),
        Ok(_) => "parsed".to_string(),
    };
    assert_eq!(
        refused("{\"format\": 1"),
        "invalid argument `FILE`: memory.json: not a loci memory export: invalid type: integer `1`, expected a string at line 1 column 12"
    );
    assert_eq!(
        refused(&text.replacen("\"loci-memory\"", "\"other\"", 1)),
        "invalid argument `FILE`: memory.json: format: is `other`, expected `loci-memory`"
    );
    assert_eq!(
        refused(&text.replace("\"format_version\":2", "\"format_version\":3")),
        "invalid argument `FILE`: memory.json: format_version: 3 is not supported (this loci reads 1 to 2); upgrade loci"
    );
    assert_eq!(
        refused(&text.replace("\"src/auth.py\"", "\"../outside.py\"")),
        "invalid argument `FILE`: memory.json: pages[4] (`../outside.py`): subject `../outside.py` is not a repo-relative path (no leading `/`, no `..`)"
    );
    assert_eq!(
        refused(&text.replace("The repository.", "The forged repository.")),
        "invalid argument `FILE`: memory.json: pages[0] (`.`) revisions[0]: hash does not match the content (edited after export?); fix the content or delete the hash"
    );
    // Snapshots are fingerprints and keys, nothing else.
    let mut doc = export(&src);
    doc.pages[4].revisions[0].tracked.as_mut().unwrap()[0].snapshot = Some("<script>".into());
    assert_eq!(
        refused(&serde_json::to_string(&doc).unwrap()),
        "invalid argument `FILE`: memory.json: pages[4] (`src/auth.py`) revisions[0]: tracked[0]: fingerprint `<script>` is not 1-64 hex digits"
    );
    doc.pages[4].revisions[0].tracked.as_mut().unwrap()[0].snapshot = None;
    doc.pages[4].revisions[0].tracked.as_mut().unwrap()[0].resolved = Some(String::new());
    assert_eq!(
        refused(&serde_json::to_string(&doc).unwrap()),
        "invalid argument `FILE`: memory.json: pages[4] (`src/auth.py`) revisions[0]: tracked[0]: a target or key is empty or over 4096 bytes (0 bytes)"
    );
    // A document that parses but breaks a rule is refused by import too.
    let mut doc = export(&src);
    doc.pages[4].revisions[1].version = 1;
    let err = dst.import_memory(&doc, "memory.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument `FILE`: memory.json: pages[4] (`src/auth.py`) revisions[1]: version 1 does not follow version 1"
    );
    // Fault (trial): revisions from year 9999, back in time, or by an event no write
    // makes were imported as they came.
    let import_err = |dst: &mut Workspace, doc: &MemoryExport| {
        dst.import_memory(doc, "memory.json")
            .unwrap_err()
            .to_string()
    };
    let mut doc = export(&src);
    doc.pages[4].revisions[1].created_at = "9999-01-01T00:00:00Z".into();
    assert_eq!(
        import_err(&mut dst, &doc),
        "invalid argument `FILE`: memory.json: pages[4] (`src/auth.py`) revisions[1]: created_at `9999-01-01T00:00:00Z` is in the future"
    );
    doc.pages[4].revisions[1].created_at = "2000-01-01T00:00:00Z".into();
    assert_eq!(
        import_err(&mut dst, &doc),
        format!(
            "invalid argument `FILE`: memory.json: pages[4] (`src/auth.py`) revisions[1]: created_at `2000-01-01T00:00:00Z` is before version 1's `{}`",
            doc.pages[4].revisions[0].created_at
        )
    );
    let mut doc = export(&src);
    doc.pages[4].revisions[1].event = Some("haircut".into());
    assert_eq!(
        import_err(&mut dst, &doc),
        "invalid argument `FILE`: memory.json: pages[4] (`src/auth.py`) revisions[1]: event `haircut` is not one of remember, decision, lesson, rollback, import, confirm"
    );
    assert_eq!(state(&dst), before, "nothing was written");
}

#[test]
fn an_export_never_carries_fact_outcomes() {
    let (dir, mut ws) = checkout();
    ws.fact_add(
        "prints a token",
        "python3 -c 'print(\"tok-SECRET-OUTPUT-991\")'",
        Some("tok"),
        None,
        &by("human:ann"),
    )
    .unwrap();
    write(dir.path(), ".loci/config.toml", "[facts]\nrun = true\n");
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    assert_eq!(ws.fact_run(None).unwrap().result[0].status, "pass");
    let text = serde_json::to_string(&ws.export_memory().unwrap().result).unwrap();
    assert!(!text.contains("SECRET-OUTPUT-991\\n"), "{text}");
    assert!(
        !text.contains("pass") && !text.contains("last_status"),
        "{text}"
    );
}

fn live_db(ws: &Workspace) -> std::path::PathBuf {
    ws.root().join(".loci/loci.db")
}

#[test]
fn restore_replaces_the_database_after_validation_and_keeps_the_replaced_one() {
    let (dir, mut ws) = checkout();
    ws.remember("src/auth.py", "kept", &by("a")).unwrap();
    let backup = dir.path().join("b.db");
    let stats = ws.backup(&backup).unwrap().result;
    assert!(stats.pages > 0 && stats.bytes > 0, "{stats:?}");
    ws.remember("src/auth.py", "written after the backup", &by("a"))
        .unwrap();
    let restored = ws.restore(&backup).unwrap().result;
    assert_eq!((restored.pages, restored.revisions), (1, 1));
    assert_eq!(ws.history("src/auth.py").unwrap().result.revisions.len(), 1);
    // The replaced database is kept, whole.
    let saved = Workspace::open(dir.path(), Some(&restored.replaced_saved_to)).unwrap();
    assert_eq!(
        saved.history("src/auth.py").unwrap().result.revisions.len(),
        2
    );
    // Nothing left behind next to the database.
    let leftovers: Vec<String> = std::fs::read_dir(dir.path().join(".loci"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("restore") || n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Writes continue on the restored database.
    assert_eq!(
        ws.remember("src/auth.py", "after restore", &by("a"))
            .unwrap()
            .result
            .revision
            .version,
        2
    );
    // A backup never overwrites.
    let err = ws.backup(&backup).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    let err = ws.restore(&live_db(&ws)).unwrap_err();
    assert!(
        err.to_string().contains("is the live database itself"),
        "{err}"
    );
}

#[test]
fn restore_refuses_truncated_random_newer_and_foreign_files_and_leaves_the_live_database_untouched()
{
    let (dir, mut ws) = checkout();
    ws.remember("src/auth.py", "precious", &by("a")).unwrap();
    let good = dir.path().join("good.db");
    ws.backup(&good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let before = state(&ws);

    let truncated = dir.path().join("truncated.db");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let random = dir.path().join("random.db");
    std::fs::write(
        &random,
        (0..64 * 1024u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let newer = dir.path().join("newer.db");
    std::fs::copy(&good, &newer).unwrap();
    loci_store::rusqlite::Connection::open(&newer)
        .unwrap()
        .execute(
            "INSERT INTO schema_migrations(version, name) VALUES (999, 'future')",
            [],
        )
        .unwrap();
    let foreign = dir.path().join("foreign.db");
    loci_store::rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL);
             INSERT INTO schema_migrations VALUES (2, 'memory');
             CREATE TABLE notes (body TEXT);",
        )
        .unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();

    let mut problems = |path: &Path| match ws.restore(path) {
        Err(EngineError::Store(StoreError::InvalidDatabase { path: p, problems })) => {
            assert_eq!(p, path);
            problems.join("; ")
        }
        other => panic!("{}: {other:?}", path.display()),
    };
    let truncated = problems(&truncated);
    assert!(
        truncated.starts_with("integrity_check failed: ")
            || truncated.starts_with("cannot read it: database disk image is malformed"),
        "{truncated}"
    );
    assert_eq!(problems(&random), "cannot read it: file is not a database");
    assert_eq!(
        problems(&newer),
        format!(
            "schema version 999 is newer than this loci supports ({}); upgrade loci",
            loci_store::SCHEMA_VERSION
        )
    );
    let foreign = problems(&foreign);
    assert!(
        foreign.starts_with("tables missing for schema version 2: "),
        "{foreign}"
    );
    assert_eq!(
        problems(&empty),
        "not a loci database (no schema_migrations table)"
    );
    assert_eq!(problems(&dir.path().join("missing.db")), "no such file");
    let err = ws.restore(&random).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}: not a usable loci database: cannot read it: file is not a database; nothing was restored",
            random.display()
        )
    );
    assert_eq!(state(&ws), before, "the live database is untouched");
    assert!(
        !dir.path().join(".loci/backups").exists(),
        "nothing was replaced"
    );
    let leftovers: Vec<String> = std::fs::read_dir(dir.path().join(".loci"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("restore"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Fault: memory imported into a checkout that lacks its code was never checked. The
/// page about `src/auth.py` and its claims on `login()` and `check()` came into a
/// checkout without that file: the claims resolved to nothing, so they had no snapshot
/// and lint (which only reports a never-resolved bare name on a near miss) said nothing,
/// and the page had no fingerprint to go stale against. An import now snapshots through
/// `remember`'s own path: the page is marked deleted (missing when imported), and each
/// claim that resolved where it was exported is a `missing_symbol` here. A claim that
/// resolved nowhere (`print()`) stays unreported, and every word imported is kept.
#[test]
fn fault_imported_memory_about_code_this_checkout_lacks_was_never_checked() {
    let (_src_dir, mut src) = checkout();
    let body = "`login()` calls `check()` and `print()`.";
    src.remember("src/auth.py", body, &by("agent:a")).unwrap();
    src.remember("src", "The sources.", &by("agent:a")).unwrap();
    let doc = src.export_memory().unwrap().result;
    assert_eq!(doc.pages[1].subject, "src/auth.py");
    let tracked: Vec<(String, String)> = doc.pages[1].revisions[0]
        .tracked
        .iter()
        .flatten()
        .map(|t| (t.kind.clone(), t.target.clone()))
        .collect();
    assert_eq!(
        tracked,
        [
            ("symbol".to_string(), "login".to_string()),
            ("symbol".to_string(), "check".to_string())
        ]
    );

    let dst_dir = tempfile::tempdir().unwrap();
    write(dst_dir.path(), "lib/other.py", "def other():\n    pass\n");
    let mut dst = Workspace::open(dst_dir.path(), None).unwrap();
    dst.scan(&|_| {}).unwrap();
    let report = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!(
        report.notes,
        [
            "`src` is not a folder of this checkout: its page is kept, and lint marks it deleted until it exists",
            "`src/auth.py` is not a file of this checkout: its page is kept, and lint marks it deleted until it exists",
            "`src/auth.py`: 2 claims resolved where it was exported but name nothing here: `login()`, `check()`; lint reports them"
        ]
    );
    let shown = dst.show("src/auth.py", None).unwrap().result;
    assert_eq!(shown.revision.body, body, "the imported text is kept");
    let claims: Vec<(&str, Option<&str>, bool)> = shown
        .claims
        .iter()
        .map(|c| (c.text.as_str(), c.resolved.as_deref(), c.resolved_elsewhere))
        .collect();
    assert_eq!(
        claims,
        [
            // Each keeps the snapshot taken where it was exported.
            ("login()", Some("src/auth.py#login@function"), true),
            ("check()", Some("src/auth.py#check@function"), true),
            ("print()", None, false)
        ]
    );
    let check = dst.check().unwrap().result;
    let findings: Vec<(&str, &str, &str, Option<&str>)> = check
        .lint
        .contradictions
        .iter()
        .map(|c| {
            (
                c.subject.as_str(),
                c.kind.as_str(),
                c.claim.as_str(),
                c.truth.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        findings,
        [
            (
                "src/auth.py",
                "missing_symbol",
                "login()",
                Some("no symbol `login` in the map")
            ),
            (
                "src/auth.py",
                "missing_symbol",
                "check()",
                Some("no symbol `check` in the map")
            )
        ]
    );
    let stale: Vec<String> = check.lint.stale.iter().map(|s| s.describe()).collect();
    assert_eq!(
        stale,
        [
            "memory `src` v1 is stale: src does not exist here (it was missing when this revision was written or imported)",
            "memory `src/auth.py` v1 is stale: src/auth.py does not exist here (it was missing when this revision was written or imported)"
        ]
    );
    assert_eq!(
        serde_json::to_string(&check.lint.stale[1].reason).unwrap(),
        r#"{"kind":"deleted","target":"src/auth.py","missing_when_written":true}"#
    );
    assert!(!check.passed);

    // The file arrives: the pages are no longer marked, and the claims resolve.
    write(
        dst_dir.path(),
        "src/auth.py",
        "def login(user):\n    return check(user)\n\ndef check(u):\n    return True\n",
    );
    dst.scan(&|_| {}).unwrap();
    let check = dst.check().unwrap().result;
    assert_eq!(
        (
            check.lint.contradictions.len(),
            check.lint.stale.len(),
            check.passed
        ),
        (0, 0, true)
    );
}

/// An export written before exports said which claims resolved (no `tracked`) holds every
/// path and symbol claim to account: loci cannot tell which of them held there.
#[test]
fn an_export_without_tracked_claims_holds_every_claim_to_account() {
    let (_src_dir, mut src) = checkout();
    src.remember("src/auth.py", "`login()` calls `print()`.", &by("agent:a"))
        .unwrap();
    let mut doc = src.export_memory().unwrap().result;
    for p in &mut doc.pages {
        for r in &mut p.revisions {
            r.tracked = None;
        }
    }
    let text = serde_json::to_string(&doc).unwrap();
    assert!(!text.contains("tracked"), "{text}");
    let doc = parse_export(&text, "old.json").unwrap();
    let dst_dir = tempfile::tempdir().unwrap();
    write(dst_dir.path(), "lib/other.py", "def other():\n    pass\n");
    let mut dst = Workspace::open(dst_dir.path(), None).unwrap();
    dst.scan(&|_| {}).unwrap();
    dst.import_memory(&doc, "old.json").unwrap();
    let lint = dst.lint().unwrap().result;
    let claims: Vec<&str> = lint
        .contradictions
        .iter()
        .map(|c| c.claim.as_str())
        .collect();
    assert_eq!(claims, ["login()", "print()"]);
}

/// Lints `ws` and returns each stale mark in words.
fn stale_marks(ws: &mut Workspace) -> Vec<String> {
    ws.lint()
        .unwrap()
        .result
        .stale
        .iter()
        .map(|s| s.describe())
        .collect()
}

/// A checkout holding `files` (path, text), scanned.
fn checkout_of(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

/// Fault (fresh-user trial): an import re-snapshotted every claim against the importing
/// checkout's code, so a note that was stale where it was exported (its claimed function's
/// body changed after it was written) came in with no stale mark: export | import
/// silently confirmed everything. The export now carries each claim's snapshot and a file
/// page's fingerprint, and the import keeps them: into identical code the stale note stays
/// stale with the same reasons and a fresh one stays fresh; export → import → export gives
/// the same document. An export without snapshots (an older loci) is snapshotted here, as
/// before.
#[test]
fn fault_an_import_confirmed_memory_that_was_stale_where_it_was_exported() {
    let before = "def fold(x):\n    return x\n";
    let after = "def fold(x):\n    return x + \"\\n\"\n";
    let same = "def keep(y):\n    return y\n";
    let (src_dir, mut src) = checkout_of(&[("mail/policy.py", before), ("mail/keep.py", same)]);
    src.remember("mail/policy.py", "Folding is `fold()`.", &by("agent:a"))
        .unwrap();
    src.remember("mail/keep.py", "Keeping is `keep()`.", &by("agent:a"))
        .unwrap();
    write(src_dir.path(), "mail/policy.py", after);
    src.scan(&|_| {}).unwrap();
    let expected = [
        "memory `mail/policy.py` v1 is stale: mail/policy.py changed since it was written",
        "memory `mail/policy.py` v1 claim `fold()` is stale: body of mail/policy.py#fold@function changed since it was written",
    ];
    assert_eq!(stale_marks(&mut src), expected);
    let doc = export(&src);
    let tracked = &doc.pages[1].revisions[0].tracked.as_ref().unwrap()[0];
    assert_eq!(
        (
            tracked.kind.as_str(),
            tracked.target.as_str(),
            tracked.resolved.as_deref(),
            tracked.snapshot.as_ref().map(String::len),
            tracked.signature_snapshot.as_ref().map(String::len),
        ),
        (
            "symbol",
            "fold",
            Some("mail/policy.py#fold@function"),
            Some(16),
            Some(16)
        )
    );
    assert_eq!(
        doc.pages[1].revisions[0]
            .subject_fingerprint
            .as_ref()
            .map(String::len),
        Some(16)
    );

    // The same code elsewhere: the same marks, and the same document back.
    let (_dst_dir, mut dst) = checkout_of(&[("mail/policy.py", after), ("mail/keep.py", same)]);
    let report = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert!(report.notes.is_empty(), "{report:?}");
    assert_eq!(stale_marks(&mut dst), expected);
    assert_eq!(export(&dst), doc);
    assert_eq!(
        serde_json::to_string_pretty(&export(&dst)).unwrap(),
        serde_json::to_string_pretty(&doc).unwrap()
    );
    // Confirming verifies it here.
    dst.confirm("mail/policy.py", &by("human:b")).unwrap();
    assert!(stale_marks(&mut dst).is_empty());

    // An export written before snapshots were carried: snapshotted against this code.
    let mut old = doc.clone();
    for p in &mut old.pages {
        for r in &mut p.revisions {
            r.subject_fingerprint = None;
            for t in r.tracked.iter_mut().flatten() {
                (t.resolved, t.snapshot, t.signature_snapshot) = (None, None, None);
            }
        }
    }
    let text = serde_json::to_string(&old).unwrap();
    assert!(
        !text.contains("snapshot") && !text.contains("resolved"),
        "{text}"
    );
    let (_old_dir, mut dst) = checkout_of(&[("mail/policy.py", after), ("mail/keep.py", same)]);
    dst.import_memory(&parse_export(&text, "old.json").unwrap(), "old.json")
        .unwrap();
    assert!(stale_marks(&mut dst).is_empty());
}

/// Fault (fresh-user trial): a claim that resolved to `net/client.py#_encode` where it
/// was exported resolved in a checkout without `net/` to `mail/charset.py#_encode`, with
/// no note, lint silent, and `why mail/charset.py:1` crediting the note to charset. The
/// claim now keeps its exported key: the import notes both keys, lint marks it moved, and
/// no memory is credited to the other code.
#[test]
fn fault_a_claim_that_resolves_here_to_other_code_passed_as_verified() {
    let net = "def _encode(data):\n    return data.encode()\n";
    let charset = "def _encode(s):\n    return s\n";
    let (_src_dir, mut src) = checkout_of(&[("net/client.py", net), ("mail/charset.py", charset)]);
    let w = src
        .remember(
            "net/client.py",
            "Bodies go through `_encode()` before sending.",
            &by("agent:a"),
        )
        .unwrap()
        .result;
    assert_eq!(
        w.claims[0].resolved.as_deref(),
        Some("net/client.py#_encode@function")
    );
    let doc = export(&src);

    let (_dst_dir, mut dst) = checkout_of(&[("mail/charset.py", charset)]);
    let report = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!(
        report.notes,
        [
            "`net/client.py` is not a file of this checkout: its page is kept, and lint marks it deleted until it exists",
            "`net/client.py`: 1 claim names other code here than where it was exported: `_encode()` named net/client.py#_encode@function there and names mail/charset.py#_encode@function here; it keeps the exported snapshot, and lint marks it stale"
        ]
    );
    assert_eq!(
        stale_marks(&mut dst),
        [
            "memory `net/client.py` v1 is stale: net/client.py does not exist here (it was missing when this revision was written or imported)",
            "memory `net/client.py` v1 claim `_encode()` is stale: net/client.py#_encode@function moved to mail/charset.py#_encode@function since it was written"
        ]
    );
    match dst.why("mail/charset.py:1") {
        Err(EngineError::NotFound(m)) => assert_eq!(m, "no memory explains `mail/charset.py:1`"),
        other => panic!("memory was credited to other code: {other:?}"),
    }
    assert_eq!(export(&dst), doc);
}

/// Fault (fresh-user trial): a claim tracked as a set of definitions (`_encode()` in two
/// files, on a page neither settles) came into a checkout holding one of them and was
/// snapshotted there as that one: the shrunk set was not flagged. The set is now kept as
/// exported, so lint reports the change like any set change.
#[test]
fn fault_a_set_claim_whose_definitions_shrank_on_import_was_not_flagged() {
    let a = "def _encode(data):\n    return data.encode()\n";
    let b = "def _encode(s):\n    return s\n";
    let (_src_dir, mut src) = checkout_of(&[("net/client.py", a), ("mail/charset.py", b)]);
    let w = src
        .remember(".", "Everything goes through `_encode()`.", &by("agent:a"))
        .unwrap()
        .result;
    assert_eq!(
        w.claims[0].definitions,
        [
            "mail/charset.py#_encode@function",
            "net/client.py#_encode@function"
        ]
    );
    let doc = export(&src);
    assert_eq!(
        doc.pages[0].revisions[0].tracked.as_ref().unwrap()[0]
            .definitions
            .len(),
        2
    );

    let (_dst_dir, mut dst) = checkout_of(&[("mail/charset.py", b)]);
    let report = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!(
        report.notes,
        [
            "`.`: 1 claim names other code here than where it was exported: `_encode()` named 2 definitions (mail/charset.py#_encode@function, net/client.py#_encode@function) there and names mail/charset.py#_encode@function here; it keeps the exported snapshot, and lint marks it stale"
        ]
    );
    assert_eq!(
        stale_marks(&mut dst),
        [
            "memory `.` v1 claim `_encode()` is stale: the definitions of _encode changed (removed net/client.py#_encode@function) since it was written"
        ]
    );
    assert_eq!(export(&dst), doc);
}

#[test]
fn fault_dismissals_and_sessions_did_not_travel_with_an_export() {
    // Both checkouts hold the same code, which no longer has what the page names.
    let edit = |root: &Path, ws: &mut Workspace| {
        write(root, "src/auth.py", "def login(user):\n    return True\n");
        std::fs::remove_file(root.join("src/billing.py")).unwrap();
        ws.scan(&|_| {}).unwrap();
    };
    let (src_dir, mut src) = checkout();
    let session = src
        .session_begin(Some("audit auth"), Some("agent:auditor"))
        .unwrap()
        .result
        .session_id;
    let in_session = WriteOptions {
        session: Some(session),
        ..Default::default()
    };
    src.remember(
        "src/auth.py",
        "`login()` calls `check()`; totals are in `src/billing.py`.",
        &in_session,
    )
    .unwrap();
    src.session_end(session, Some("audited")).unwrap();
    edit(src_dir.path(), &mut src);
    let open = src.lint().unwrap().result.contradictions;
    let targets: Vec<&str> = open.iter().map(|c| c.target.as_str()).collect();
    assert_eq!(targets, ["check", "src/billing.py"]);
    src.resolve(
        open[0].contradiction_id,
        Some("check returns next sprint"),
        None,
    )
    .unwrap();
    let doc = export(&src);
    assert_eq!(doc.format_version, 2);
    assert_eq!(
        (doc.sessions.len(), doc.dismissals.len()),
        (1, 1),
        "the export carries the session and the dismissal"
    );

    let (dst_dir, mut dst) = checkout();
    edit(dst_dir.path(), &mut dst);
    // A session cannot end before it starts.
    let mut backwards = doc.clone();
    backwards.sessions[0].ended_at = Some("2000-01-01T00:00:00Z".into());
    assert_eq!(
        dst.import_memory(&backwards, "memory.json")
            .unwrap_err()
            .to_string(),
        format!(
            "invalid argument `FILE`: memory.json: sessions[0]: ended_at `2000-01-01T00:00:00Z` is before started_at `{}`",
            doc.sessions[0].started_at
        )
    );
    // A dismissal's fields are named when wrong.
    let mut sloppy = doc.clone();
    sloppy.dismissals[0].kind = "sloppy".into();
    assert_eq!(
        dst.import_memory(&sloppy, "memory.json")
            .unwrap_err()
            .to_string(),
        format!(
            "invalid argument `FILE`: memory.json: dismissals[0] (`{}`): kind `sloppy` is not one of missing_path, missing_symbol, version_mismatch",
            doc.dismissals[0].finding_key
        )
    );
    let report = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!((report.sessions_added, report.dismissals_added), (1, 1));
    // The importing checkout reports what the exporting one reports: one finding, not two.
    let here = dst.lint().unwrap().result;
    let findings: Vec<(&str, &str)> = here
        .contradictions
        .iter()
        .map(|c| (c.target.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(findings, [("src/billing.py", "open")]);
    assert_eq!(here.suppressed, 1);
    let dismissed =
        loci_store::audit::contradictions(dst.store().conn(), Some("dismissed")).unwrap();
    assert_eq!(
        dismissed
            .iter()
            .map(|c| (c.target.as_str(), c.notes.as_deref()))
            .collect::<Vec<_>>(),
        [("check", Some("check returns next sprint"))]
    );
    // The session came along with its provenance and digest, and owns the revision.
    let recap = dst.recap(5).unwrap().result;
    assert_eq!(recap.len(), 1);
    let s = &recap[0];
    assert_eq!(
        (
            s.session.task.as_deref(),
            s.session.author.as_str(),
            s.session.summary.as_deref()
        ),
        (Some("audit auth"), "agent:auditor", Some("audited"))
    );
    assert_eq!(
        s.digest
            .pages
            .iter()
            .map(|p| (p.subject.as_str(), p.version))
            .collect::<Vec<_>>(),
        [("src/auth.py", 1)]
    );
    let revisions =
        loci_store::memory::revisions_in_session(dst.store().conn(), s.session.session_id).unwrap();
    assert_eq!(revisions.len(), 1);
    assert_eq!(revisions[0].author, "agent:auditor");
    // Exported again from here, it is the same memory; importing it twice adds nothing.
    assert_eq!(export(&dst).sessions, doc.sessions);
    assert_eq!(export(&dst).dismissals.len(), 1);
    let again = dst.import_memory(&doc, "memory.json").unwrap().result;
    assert_eq!(
        (
            again.sessions_skipped,
            again.dismissals_skipped,
            again.revisions_added
        ),
        (1, 1, 0)
    );
}

/// Fault: `recap` listed a session imported from another checkout above this checkout's
/// newer one, by row id. Sessions are listed by when they began.
#[test]
fn fault_recap_put_an_older_imported_session_above_a_newer_one() {
    let (_src_dir, mut src) = checkout();
    let older = src
        .session_begin(Some("there"), Some("agent:there"))
        .unwrap()
        .result
        .session_id;
    src.session_end(older, Some("done there")).unwrap();
    let doc = export(&src);
    let (_dst_dir, mut dst) = checkout();
    let newer = dst
        .session_begin(Some("here"), Some("agent:here"))
        .unwrap()
        .result
        .session_id;
    dst.session_end(newer, Some("done here")).unwrap();
    dst.import_memory(&doc, "memory.json").unwrap();
    let tasks: Vec<Option<String>> = dst
        .recap(5)
        .unwrap()
        .result
        .into_iter()
        .map(|v| v.session.task)
        .collect();
    assert_eq!(tasks, [Some("here".to_string()), Some("there".to_string())]);
}

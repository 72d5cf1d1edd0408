//! Authored memory: append-only revisions, guards, receipts, rollback, asof, why,
//! sessions, facts.

use loci_engine::memory::WriteOptions;
use loci_engine::{EngineError, Workspace};

use crate::fixture::write;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/auth.py",
        "def login(user, password):\n    return check(user, password)\n\ndef check(u, p):\n    return True\n",
    );
    write(
        root,
        "src/billing.py",
        "class Invoice:\n    def total(self):\n        return 0\n",
    );
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

fn by(author: &str) -> WriteOptions {
    WriteOptions {
        author: Some(author.into()),
        ..Default::default()
    }
}

#[test]
fn revisions_are_versioned_append_only_and_claims_resolve() {
    let (_dir, mut ws) = workspace();
    let w1 = ws
        .remember(
            "src/auth.py",
            "`login()` calls `check()` in `src/auth.py`.",
            &by("agent:a"),
        )
        .unwrap()
        .result;
    assert_eq!(
        (
            w1.page.subject.as_str(),
            w1.page.kind.as_str(),
            w1.revision.version
        ),
        ("src/auth.py", "file", 1)
    );
    let resolved: Vec<(&str, Option<&str>)> = w1
        .claims
        .iter()
        .map(|c| (c.text.as_str(), c.resolved.as_deref()))
        .collect();
    assert_eq!(
        resolved,
        [
            ("login()", Some("src/auth.py#login@function")),
            ("check()", Some("src/auth.py#check@function")),
            ("src/auth.py", Some("src/auth.py")),
        ]
    );
    let w2 = ws
        .remember("./src/auth.py", "Second thoughts.", &by("human:b"))
        .unwrap()
        .result;
    assert_eq!(w2.revision.version, 2);
    assert_eq!(
        w2.page.current_revision_id,
        Some(w2.revision.revision_id),
        "inserting published it"
    );

    // The database itself refuses to rewrite history.
    let conn = loci_store::rusqlite::Connection::open(ws.root().join(".loci/loci.db")).unwrap();
    let err = conn
        .execute("UPDATE revisions SET body = 'forged'", [])
        .unwrap_err();
    assert!(
        err.to_string().contains("revisions are append-only"),
        "{err}"
    );
    let err = conn.execute("DELETE FROM revisions", []).unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");

    let history = ws.history("src/auth.py").unwrap().result;
    let lines: Vec<(i64, &str, Option<&str>)> = history
        .revisions
        .iter()
        .map(|r| (r.version, r.author.as_str(), r.event.as_deref()))
        .collect();
    assert_eq!(
        lines,
        [
            (1, "agent:a", Some("remember")),
            (2, "human:b", Some("remember"))
        ]
    );
}

#[test]
fn rollback_publishes_an_old_body_as_a_new_revision() {
    let (_dir, mut ws) = workspace();
    ws.remember("src/auth.py", "first", &by("a")).unwrap();
    ws.remember("src/auth.py", "second", &by("a")).unwrap();
    let back = ws.rollback("src/auth.py", 1, &by("a")).unwrap().result;
    assert_eq!(
        (back.revision.version, back.revision.body.as_str()),
        (3, "first")
    );
    assert_eq!(
        back.revision.summary.as_deref(),
        Some("rollback to version 1")
    );
    let shown = ws.show("src/auth.py", None).unwrap().result;
    assert_eq!(shown.revision.body, "first");
    assert_eq!(
        ws.show("src/auth.py", Some(2))
            .unwrap()
            .result
            .revision
            .body,
        "second"
    );
    let events: Vec<Option<String>> = ws
        .history("src/auth.py")
        .unwrap()
        .result
        .revisions
        .into_iter()
        .map(|r| r.event)
        .collect();
    assert_eq!(
        events,
        [
            Some("remember".into()),
            Some("remember".into()),
            Some("rollback".into())
        ]
    );
    assert!(matches!(
        ws.rollback("src/auth.py", 9, &by("a")),
        Err(EngineError::NotFound(_))
    ));
}

#[test]
fn expect_version_guards_and_operation_ids_make_retries_idempotent() {
    let (_dir, mut ws) = workspace();
    let opts = WriteOptions {
        expect_version: Some(0),
        ..by("a")
    };
    ws.remember("src/auth.py", "v1", &opts).unwrap();
    let err = ws
        .remember("src/auth.py", "lost update", &opts)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "version conflict on `src/auth.py`: it is at version 1, the write expected 0; read it again and retry"
    );
    assert_eq!(
        ws.show("src/auth.py", None)
            .unwrap()
            .result
            .revision
            .version,
        1,
        "nothing was written"
    );

    let op = WriteOptions {
        operation_id: Some("op-1".into()),
        ..by("a")
    };
    let first = ws.remember("src/auth.py", "retry me", &op).unwrap().result;
    let retry = ws.remember("src/auth.py", "retry me", &op).unwrap().result;
    assert!(!first.replayed && retry.replayed);
    assert_eq!(retry.revision.revision_id, first.revision.revision_id);
    assert_eq!(
        ws.history("src/auth.py").unwrap().result.revisions.len(),
        2,
        "the retry wrote nothing"
    );
    let err = ws
        .remember("src/auth.py", "something else", &op)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "operation id `op-1` was already used for a different request; use a new id"
    );
}

#[test]
fn asof_shows_memory_as_it_stood() {
    let (_dir, mut ws) = workspace();
    ws.remember("src/auth.py", "old", &by("a")).unwrap();
    let before = ws.asof("2000-01-01", None).unwrap().result;
    assert!(before.pages.is_empty());
    let now = ws.asof("2999-01-01", Some("src/auth.py")).unwrap().result;
    assert_eq!(now.shown.unwrap().body, "old");
    let err = ws.asof("yesterday-ish", None).unwrap_err();
    assert!(err.to_string().contains("is not a date"), "{err}");
}

#[test]
fn decisions_and_lessons_append_deterministically_and_why_finds_them() {
    let (_dir, mut ws) = workspace();
    ws.decide(
        "Store memory in SQLite with WAL",
        Some("src/billing.py"),
        &by("human:ann"),
    )
    .unwrap();
    ws.decide("Use BEGIN IMMEDIATE for writes", None, &by("human:bob"))
        .unwrap();
    ws.learn(
        "multi-agent setup; see grammar::fa and spec 38.101; order BENCH-100821",
        None,
        &by("agent:c"),
    )
    .unwrap();
    let decisions = ws.show("decisions", None).unwrap().result.revision;
    assert_eq!(decisions.version, 2);
    assert_eq!(
        decisions.body,
        "# Decisions\n\n- Store memory in SQLite with WAL (about `src/billing.py`) — human:ann\n\n- Use BEGIN IMMEDIATE for writes — human:bob\n"
    );
    // `why` names the revision that introduced the text, not a later copy.
    let why = ws.why("SQLite WAL").unwrap().result;
    assert_eq!(
        (
            why.subject.as_str(),
            why.revision.version,
            why.revision.author.as_str()
        ),
        ("decision:1", 1, "human:ann")
    );
    assert_eq!(why.events[0].kind, "decision");
    // B18: user text never breaks FTS5.
    for q in ["multi-agent", "grammar::fa", "38.101", "BENCH-100821"] {
        let why = ws.why(q).unwrap().result;
        assert_eq!(why.subject, "lesson:1", "query {q}");
    }
    assert!(matches!(ws.why("-band"), Err(EngineError::NotFound(_))));
    assert!(matches!(
        ws.why("\"unbalanced"),
        Err(EngineError::NotFound(_))
    ));
}

#[test]
fn why_at_a_path_and_line_finds_the_memory_about_that_symbol() {
    let (_dir, mut ws) = workspace();
    ws.remember(
        "src/billing.py",
        "Totals come from `Invoice.total()`.",
        &by("human:ann"),
    )
    .unwrap();
    ws.remember(".", "Overview; auth lives in `login()`.", &by("human:bob"))
        .unwrap();
    let why = ws.why("src/auth.py:2").unwrap().result;
    assert_eq!(
        (why.subject.as_str(), why.matched_by.as_str()),
        (".", "symbol")
    );
    assert_eq!(
        why.claims[0].resolved.as_deref(),
        Some("src/auth.py#login@function")
    );
    let why = ws.why("src/billing.py").unwrap().result;
    assert_eq!(
        (why.subject.as_str(), why.matched_by.as_str()),
        ("src/billing.py", "path")
    );
}

#[test]
fn two_sessions_begun_in_the_same_second_get_exactly_their_own_rows() {
    let (_dir, mut ws) = workspace();
    let a = ws
        .session_begin(Some("task a"), Some("agent:a"))
        .unwrap()
        .result
        .session_id;
    let b = ws
        .session_begin(Some("task b"), Some("agent:b"))
        .unwrap()
        .result
        .session_id;
    let in_a = WriteOptions {
        session: Some(a),
        summary: Some("a wrote auth".into()),
        ..by("agent:a")
    };
    let in_b = WriteOptions {
        session: Some(b),
        summary: Some("b wrote billing".into()),
        ..by("agent:b")
    };
    ws.remember("src/auth.py", "from a", &in_a).unwrap();
    ws.remember("src/billing.py", "from b", &in_b).unwrap();
    ws.learn("b learned", None, &in_b).unwrap();
    let end_a = ws.session_end(a, Some("done a")).unwrap().result;
    let end_b = ws.session_end(b, Some("done b")).unwrap().result;
    let pages = |d: &loci_engine::memory::Digest| {
        d.pages
            .iter()
            .map(|p| (p.subject.clone(), p.version))
            .collect::<Vec<_>>()
    };
    assert_eq!(pages(&end_a.digest), [("src/auth.py".to_string(), 1)]);
    assert_eq!(
        pages(&end_b.digest),
        [
            ("src/billing.py".to_string(), 1),
            ("lesson:1".to_string(), 1)
        ]
    );
    assert_eq!(end_b.digest.lessons, ["b learned"]);
    let recap = ws.recap(2).unwrap().result;
    assert_eq!(
        recap
            .iter()
            .map(|s| s.session.session_id)
            .collect::<Vec<_>>(),
        [b, a]
    );
    let err = ws.remember("src/auth.py", "late", &in_a).unwrap_err();
    assert!(err.to_string().contains("has ended"), "{err}");
}

#[test]
fn facts_are_refused_by_default_and_checked_when_enabled() {
    let (dir, mut ws) = workspace();
    ws.fact_add(
        "python prints",
        "python3 -c 'print(6 * 7)'",
        Some("42"),
        Some(0),
        &by("a"),
    )
    .unwrap();
    ws.fact_add(
        "wrong exit",
        "python3 -c 'import sys; sys.exit(3)'",
        None,
        Some(0),
        &by("a"),
    )
    .unwrap();
    ws.fact_add(
        "wrong output",
        "python3 -c 'print(1)'",
        Some("2"),
        None,
        &by("a"),
    )
    .unwrap();
    let err = ws.fact_run(None).unwrap_err();
    assert!(err.to_string().contains("[facts]\nrun = true"), "{err}");
    write(dir.path(), ".loci/config.toml", "[facts]\nrun = true\n");
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    let runs = ws.fact_run(None).unwrap().result;
    let outcome: Vec<(&str, Option<i64>)> = runs
        .iter()
        .map(|r| (r.status.as_str(), r.exit_code))
        .collect();
    assert_eq!(
        outcome,
        [("pass", Some(0)), ("fail", Some(3)), ("fail", Some(0))]
    );
    assert_eq!(runs[0].output.trim(), "42");
    let listed = ws.fact_list().unwrap().result;
    assert_eq!(listed[1].last_status.as_deref(), Some("fail"));
}

#[test]
fn subjects_outside_the_workspace_or_unknown_are_refused_with_the_argument_named() {
    let (_dir, mut ws) = workspace();
    for bad in ["../etc/passwd", "/etc/passwd", "no/such/thing.py", ""] {
        let err = ws.remember(bad, "x", &by("a")).unwrap_err();
        assert!(
            matches!(&err, EngineError::InvalidArgument { name, .. } if name == "subject"),
            "{bad}: {err}"
        );
    }
    let w = ws
        .remember("topic:billing", "Billing is `Invoice`.", &by("a"))
        .unwrap()
        .result;
    assert_eq!(w.page.kind, "topic");
    let members = ws
        .topic_set("billing", "src/billing.py", true, &by("a"))
        .unwrap()
        .result;
    assert_eq!(members, ["src/billing.py"]);
}

#[test]
fn stale_warnings_follow_code_changes_but_not_comment_edits() {
    let (dir, mut ws) = workspace();
    ws.remember(
        "src/billing.py",
        "`Invoice.total()` returns zero.",
        &by("a"),
    )
    .unwrap();
    assert!(
        ws.show("src/billing.py", None)
            .unwrap()
            .stale_warnings
            .is_empty()
    );
    write(
        dir.path(),
        "src/billing.py",
        "class Invoice:\n    # a comment only\n    def total(self):\n        return 0  # still zero\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert!(
        ws.show("src/billing.py", None)
            .unwrap()
            .stale_warnings
            .is_empty(),
        "comments do not stale memory"
    );
    write(
        dir.path(),
        "src/billing.py",
        "class Invoice:\n    def total(self):\n        return 1\n",
    );
    ws.scan(&|_| {}).unwrap();
    let warnings: Vec<String> = ws
        .show("src/billing.py", None)
        .unwrap()
        .stale_warnings
        .into_iter()
        .map(|w| w.reason)
        .collect();
    assert_eq!(
        warnings,
        [
            "memory `src/billing.py` v1 is stale: src/billing.py changed since it was written",
            "memory `src/billing.py` v1 claim `Invoice.total()` is stale: body of src/billing.py#Invoice.total@method changed since it was written",
        ]
    );
    ws.confirm("src/billing.py", &by("reviewer")).unwrap();
    assert!(
        ws.show("src/billing.py", None)
            .unwrap()
            .stale_warnings
            .is_empty(),
        "confirm clears staleness"
    );
}

#[test]
fn guards_on_pin_confirm_and_fact_add_were_ignored_and_a_retried_fact_add_duplicated_the_fact() {
    let (_dir, mut ws) = workspace();
    ws.remember("src/auth.py", "v1", &by("a")).unwrap();
    let stale = WriteOptions {
        expect_version: Some(0),
        ..by("a")
    };
    let conflict = "version conflict on `src/auth.py`: it is at version 1, the write expected 0; read it again and retry";
    assert_eq!(
        ws.pin("src/auth.py", true, &stale).unwrap_err().to_string(),
        conflict
    );
    assert!(
        !ws.show("src/auth.py", None).unwrap().result.page.pinned,
        "nothing was written"
    );
    assert_eq!(
        ws.confirm("src/auth.py", &stale).unwrap_err().to_string(),
        conflict
    );
    let current = WriteOptions {
        expect_version: Some(1),
        ..by("a")
    };
    assert!(ws.pin("src/auth.py", true, &current).unwrap().result.pinned);
    ws.confirm("src/auth.py", &current).unwrap();

    let op = WriteOptions {
        operation_id: Some("fact-1".into()),
        ..by("a")
    };
    let first = ws.fact_add("c", "true", None, Some(0), &op).unwrap().result;
    let retry = ws.fact_add("c", "true", None, Some(0), &op).unwrap().result;
    assert_eq!(retry.fact_id, first.fact_id);
    assert_eq!(
        ws.fact_list().unwrap().result.len(),
        1,
        "the retry added nothing"
    );
    let err = ws
        .fact_add("other", "true", None, Some(0), &op)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "operation id `fact-1` was already used for a different request; use a new id"
    );
    let err = ws
        .fact_add("c", "true", None, Some(0), &current)
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::InvalidArgument { name, .. } if name == "expect_version"),
        "{err}"
    );

    // A pin retried under its operation id records one event.
    let pin_op = WriteOptions {
        operation_id: Some("unpin-1".into()),
        ..by("a")
    };
    let events = |ws: &Workspace| -> i64 {
        ws.store()
            .conn()
            .query_row(
                "SELECT count(*) FROM events WHERE kind = 'unpin'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    ws.pin("src/auth.py", false, &pin_op).unwrap();
    ws.pin("src/auth.py", false, &pin_op).unwrap();
    assert_eq!(events(&ws), 1);
}

#[test]
fn asof_between_two_revisions_shows_the_earlier_one() {
    let (_dir, mut ws) = workspace();
    // Revisions with known times, written through import.
    let doc = loci_engine::memory::parse_export(
        r#"{"format": "loci-memory", "format_version": 1, "exported_at": "2026-03-01T00:00:00Z",
            "pages": [{"uid": "0123456789abcdef0123456789abcdef", "subject": "src/auth.py",
                       "kind": "file", "pinned": false, "created_at": "2026-01-01T00:00:00Z",
                       "revisions": [
                         {"version": 1, "body": "january", "summary": null, "author": "human:a",
                          "created_at": "2026-01-01T10:00:00Z"},
                         {"version": 2, "body": "february", "summary": null, "author": "human:b",
                          "created_at": "2026-02-01T10:00:00Z"}]}],
            "facts": []}"#,
        "inline",
    )
    .unwrap();
    ws.import_memory(&doc, "inline").unwrap();
    let mid = ws.asof("2026-01-15", Some("src/auth.py")).unwrap().result;
    let shown = mid.shown.unwrap();
    assert_eq!((shown.version, shown.body.as_str()), (1, "january"));
    assert_eq!(
        mid.pages
            .iter()
            .map(|p| (p.subject.as_str(), p.version))
            .collect::<Vec<_>>(),
        [("src/auth.py", 1)]
    );
    let day_of_v1 = ws.asof("2026-01-01", None).unwrap().result;
    assert_eq!(day_of_v1.pages.len(), 1, "a date means the end of that day");
    let err = ws.asof("2025-12-31", Some("src/auth.py")).unwrap_err();
    assert_eq!(err.to_string(), "`src/auth.py` had no memory at 2025-12-31");
}

/// Fault: `asof 2026-02-30` was taken as a date (SQLite rolls it over to March 2).
#[test]
fn asof_refuses_an_impossible_calendar_day() {
    let (_dir, ws) = workspace();
    for bad in ["2026-02-30", "2026-13-01", "2026-04-31T10:00:00Z"] {
        let err = ws.asof(bad, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid argument `date`: `{bad}` is not a date (use 2026-11-01 or 2026-11-01T12:00:00Z)"
            )
        );
    }
    assert!(ws.asof("2024-02-29", None).is_ok(), "a leap day is a date");
    assert!(ws.asof("2026-11-01T12:00:00Z", None).is_ok());
}

/// Fault: `rollback F N` when the page already read as version N wrote a duplicate
/// revision.
#[test]
fn rollback_to_the_text_the_page_already_has_writes_nothing() {
    let (_dir, mut ws) = workspace();
    ws.remember("src/auth.py", "first", &by("a")).unwrap();
    ws.remember("src/auth.py", "second", &by("a")).unwrap();
    for version in [2, 2] {
        let err = ws.rollback("src/auth.py", version, &by("a")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argument `version`: `src/auth.py` v2 already reads as version 2; nothing to roll back"
        );
    }
    ws.rollback("src/auth.py", 1, &by("a")).unwrap();
    let err = ws.rollback("src/auth.py", 1, &by("a")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument `version`: `src/auth.py` v3 already reads as version 1; nothing to roll back"
    );
    let versions: Vec<i64> = ws
        .history("src/auth.py")
        .unwrap()
        .result
        .revisions
        .iter()
        .map(|r| r.version)
        .collect();
    assert_eq!(versions.len(), 3);
}

/// Fault: `loci why FILE:0` answered as if line 0 existed (lines are one-based).
#[test]
fn why_at_line_zero_is_refused() {
    let (_dir, mut ws) = workspace();
    ws.remember("src/auth.py", "Auth notes.", &by("a")).unwrap();
    let err = ws.why("src/auth.py:0").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument `target`: `src/auth.py:0`: lines are numbered from 1"
    );
    assert_eq!(
        ws.why("src/auth.py:1").unwrap().result.subject,
        "src/auth.py"
    );
}

/// Fault found by a fresh-user trial: memory took a body of any size, stored whole and
/// read back by every `context` that reached the page. One write now takes
/// at most `MAX_MEMORY_TEXT_BYTES`; more is refused naming the argument and the sizes,
/// and nothing is written.
#[test]
fn fault_memory_accepted_a_body_of_any_size() {
    use loci_engine::memory::MAX_MEMORY_TEXT_BYTES;
    let (_dir, mut ws) = workspace();
    let at_limit = "a".repeat(MAX_MEMORY_TEXT_BYTES);
    assert_eq!(
        ws.remember("src/auth.py", &at_limit, &by("agent:a"))
            .unwrap()
            .result
            .revision
            .version,
        1
    );
    let over = "a".repeat(MAX_MEMORY_TEXT_BYTES + 1);
    for (name, err) in [
        (
            "body",
            ws.remember("src/auth.py", &over, &by("agent:a"))
                .unwrap_err(),
        ),
        ("text", ws.decide(&over, None, &by("agent:a")).unwrap_err()),
        ("text", ws.learn(&over, None, &by("agent:a")).unwrap_err()),
        (
            "summary",
            ws.remember(
                "src/billing.py",
                "invoices total zero",
                &WriteOptions {
                    summary: Some(over.clone()),
                    ..by("agent:a")
                },
            )
            .unwrap_err(),
        ),
        // Found by the second trial: session tasks and summaries and fact text were
        // not limited (a 12 MiB task was stored, and every `context` recap printed it).
        ("task", ws.session_begin(Some(&over), None).unwrap_err()),
        (
            "claim",
            ws.fact_add(&over, "true", None, None, &by("agent:a"))
                .unwrap_err(),
        ),
        (
            "expect",
            ws.fact_add("it runs", "true", Some(&over), None, &by("agent:a"))
                .unwrap_err(),
        ),
    ] {
        assert!(
            matches!(&err, EngineError::InvalidArgument { name: n, .. } if n == name),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "invalid argument `{name}`: the text is 1048577 bytes; memory takes at most 1048576 bytes \
                 (1 MiB) per write: keep the page to what an agent should read, and link the rest"
            )
        );
    }
    let pages: i64 = ws
        .store()
        .conn()
        .query_row("SELECT count(*) FROM revisions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pages, 1, "only the write at the limit was stored");
    let sessions: i64 = ws
        .store()
        .conn()
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sessions, 0);
    let session = ws.session_begin(Some("short"), None).unwrap().result;
    let err = ws.session_end(session.session_id, Some(&over)).unwrap_err();
    assert!(
        matches!(&err, EngineError::InvalidArgument { name, .. } if name == "summary"),
        "{err}"
    );
}

/// Faults found by a fresh-user trial: the summary of `confirm` and `pin`, and the author
/// of any write, skipped both the size limit and the credential check (a 10 MiB author was
/// stored in every revision row it wrote, and a credential printed in every header), and
/// `import` took bodies and summaries over the limit. Every write's options now pass the
/// same check as its text.
#[test]
fn fault_confirm_and_pin_summaries_and_authors_skipped_the_memory_text_check() {
    use loci_engine::memory::{MAX_AUTHOR_BYTES, MAX_MEMORY_TEXT_BYTES};
    let (_dir, mut ws) = workspace();
    ws.remember("src/auth.py", "`login()` calls `check()`.", &by("agent:a"))
        .unwrap();
    let over = "a".repeat(MAX_MEMORY_TEXT_BYTES + 1);
    let credential = format!("password={}", "Hunter2xyzQ9");
    let with_summary = |summary: &str| WriteOptions {
        summary: Some(summary.to_string()),
        ..by("agent:a")
    };
    let name_of = |e: EngineError| match e {
        EngineError::InvalidArgument { name, .. } => name,
        other => panic!("{other}"),
    };
    for summary in [over.as_str(), credential.as_str()] {
        let opts = with_summary(summary);
        assert_eq!(
            name_of(ws.confirm("src/auth.py", &opts).unwrap_err()),
            "summary"
        );
        assert_eq!(
            name_of(ws.pin("src/auth.py", true, &opts).unwrap_err()),
            "summary"
        );
    }
    let long_author = format!("agent:{}", "a".repeat(MAX_AUTHOR_BYTES));
    // Built at run time, so this file holds no credential-shaped literal (the scan of
    // loci's own repository would skip it).
    let credential_author = format!("agent:AKIA{}", "QWERTYUIOPASDFGH");
    for author in [long_author.as_str(), credential_author.as_str()] {
        let err = ws
            .remember("src/billing.py", "Invoices total zero.", &by(author))
            .unwrap_err();
        assert_eq!(name_of(err), "author");
        assert_eq!(
            name_of(ws.session_begin(Some("t"), Some(author)).unwrap_err()),
            "author"
        );
    }
    let events_with_payload: i64 = ws
        .store()
        .conn()
        .query_row(
            "SELECT count(*) FROM events WHERE kind IN ('pin', 'confirm')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(events_with_payload, 0, "nothing was written");

    // An export edited to hold a body over the limit is refused whole.
    let mut doc = ws.export_memory().unwrap().result;
    doc.pages[0].revisions[0].body = over.clone();
    doc.pages[0].revisions[0].hash = None;
    let (_other_dir, mut other) = workspace();
    let err = other.import_memory(&doc, "memory.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument `FILE`: memory.json: pages[0] (`src/auth.py`) revisions[0] body is \
         1048577 bytes; memory takes at most 1048576 bytes there: shorten it in the export \
         and import again"
    );
}

/// Fault (trial): `why nofile.rs:3` said "no memory explains `nofile.rs:3`", as if the
/// file were there without memory. A target written as a path that names nothing says so.
#[test]
fn fault_why_of_a_file_that_does_not_exist_said_only_that_no_memory_explains_it() {
    let (_dir, ws) = workspace();
    assert_eq!(
        ws.why("src/nofile.py:3").unwrap_err().to_string(),
        "no file, folder or memory named `src/nofile.py` (`src/nofile.py:3`)"
    );
    assert_eq!(
        ws.why("nothing mentions this phrase")
            .unwrap_err()
            .to_string(),
        "no memory explains `nothing mentions this phrase`"
    );
}

/// Fault: Rust structs, enums and traits got kinds of their own (`class` → `struct` /
/// `enum`, `interface` → `trait`), and a symbol's key ends in its kind, so every page with
/// a claim on a Rust type went stale ("moved") as soon as the new binary parsed its file
/// again. Migration 10 re-keys the stored types and the claims and parents naming them.
#[test]
fn fault_new_kinds_for_rust_types_staled_every_page_naming_one() {
    use loci_store::rusqlite::Connection;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = "pub struct Store {\n    path: String,\n}\n\npub(crate) enum Mode {\n    Read,\n}\n\npub trait Backend {\n    fn open(&self);\n}\n";
    write(root, "src/lib.rs", text);
    let db = root.join("loci.db");
    {
        let mut ws = Workspace::open(root, Some(&db)).unwrap();
        ws.scan(&|_| {}).unwrap();
        ws.remember(
            "src/lib.rs",
            "`lib::Store` holds the path, `lib::Mode` how it opens, `lib::Backend` what opens it.",
            &by("a"),
        )
        .unwrap();
    }
    // The database as schema 9 left it: the tags query's kinds in keys, parents and claims
    // (and no later migration: what 0011 to 0017 add is dropped).
    let old = |column: &str| {
        format!(
            "replace(replace(replace({column}, '@struct', '@class'), '@enum', '@class'), '@trait', '@interface')"
        )
    };
    Connection::open(&db)
        .unwrap()
        .execute_batch(&format!(
            "DROP INDEX claims_never_resolved; DROP INDEX claims_paths;
             DROP TABLE scip_refs; DROP TABLE scip_documents; DROP TABLE code_text_words;
             DROP TABLE unsaved_buffers; DROP TABLE llm_runs; DROP TRIGGER map_changes_symbol_insert; DROP TRIGGER map_changes_symbol_delete; DROP TRIGGER map_changes_file_insert; DROP TRIGGER map_changes_file_delete; DROP TRIGGER map_changes_file_update; DROP TRIGGER map_changes_page_move; DROP TABLE map_changes; DROP INDEX claims_by_name; DROP INDEX revision_marks_stale;
             UPDATE symbols SET kind = 'class' WHERE kind IN ('struct', 'enum');
             UPDATE symbols SET kind = 'interface' WHERE kind = 'trait';
             UPDATE symbols SET key = {}, parent_key = {};
             UPDATE claims SET resolved = {};
             ALTER TABLE refs DROP COLUMN receiver_name;
             ALTER TABLE files DROP COLUMN drift_hash;
             DROP INDEX claims_with_definitions;
             ALTER TABLE claims DROP COLUMN definitions;
             ALTER TABLE claims DROP COLUMN resolved_elsewhere;
             ALTER TABLE page_snapshots DROP COLUMN subject_missing;
             DROP TABLE fts_common_terms; DROP TABLE fts_common_terms_stamp;
             DROP TABLE revision_marks;
             DROP TRIGGER revision_marks_claim_insert; DROP TRIGGER revision_marks_claim_update; DROP TRIGGER revision_marks_claim_delete; DROP TRIGGER revision_marks_snapshot_insert; DROP TRIGGER revision_marks_snapshot_update; DROP TRIGGER revision_marks_snapshot_delete; DROP TRIGGER revision_marks_page_update;
             DROP TRIGGER revisions_fts_insert; DROP TABLE revisions_fts; ALTER TABLE revisions DROP COLUMN terms;
             CREATE VIRTUAL TABLE revisions_fts USING fts5(body, summary, content = 'revisions', content_rowid = 'revision_id', tokenize = 'unicode61 remove_diacritics 2');
             CREATE TRIGGER revisions_fts_insert AFTER INSERT ON revisions BEGIN INSERT INTO revisions_fts(rowid, body, summary) VALUES (new.revision_id, new.body, new.summary); END;
             INSERT INTO revisions_fts(revisions_fts) VALUES ('rebuild');
             DROP TRIGGER doc_chunks_fts_insert; DROP TRIGGER doc_chunks_fts_delete; DROP TABLE doc_chunks_fts; ALTER TABLE doc_chunks DROP COLUMN terms;
             CREATE VIRTUAL TABLE doc_chunks_fts USING fts5(heading, text, content = 'doc_chunks', content_rowid = 'chunk_id', tokenize = 'unicode61 remove_diacritics 2');
             CREATE TRIGGER doc_chunks_fts_insert AFTER INSERT ON doc_chunks BEGIN INSERT INTO doc_chunks_fts(rowid, heading, text) VALUES (new.chunk_id, new.heading, new.text); END;
             CREATE TRIGGER doc_chunks_fts_delete AFTER DELETE ON doc_chunks BEGIN INSERT INTO doc_chunks_fts(doc_chunks_fts, rowid, heading, text) VALUES ('delete', old.chunk_id, old.heading, old.text); END;
             INSERT INTO doc_chunks_fts(doc_chunks_fts) VALUES ('rebuild');
             DROP TABLE ref_deps; DROP INDEX symbols_by_name; CREATE INDEX symbols_by_name ON symbols(name);
             DROP TRIGGER secondary_file_text_fts_delete; DROP TABLE secondary_file_text_fts; DROP TABLE secondary_chunks_fts;
             DROP TABLE text_vectors; DROP TRIGGER file_text_fts_delete; DROP TABLE file_text_fts; DROP TABLE code_chunks_fts; DROP TABLE code_chunks;
             DROP INDEX pages_by_entry_number; DROP INDEX symbols_by_folded_name; DROP INDEX files_by_name;
             DROP TABLE team_outbox; DROP TABLE team_applied;
             ALTER TABLE imports DROP COLUMN enclosing_id;
             DELETE FROM schema_migrations WHERE version >= 10;",
            old("key"),
            old("parent_key"),
            old("resolved")
        ))
        .unwrap();

    let mut ws = Workspace::open(root, Some(&db)).unwrap();
    let rows = |ws: &Workspace, sql: &str| -> Vec<String> {
        let conn = ws.store().conn();
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        rows(
            &ws,
            "SELECT key || ' ' || kind || ' ' || ifnull(parent_key, '-') FROM symbols ORDER BY key"
        ),
        [
            "src/lib.rs#Backend.open@method method src/lib.rs#Backend@trait",
            "src/lib.rs#Backend@trait trait -",
            "src/lib.rs#Mode.Read@constant constant src/lib.rs#Mode@enum",
            "src/lib.rs#Mode@enum enum -",
            "src/lib.rs#Store@struct struct -"
        ]
    );
    assert_eq!(
        rows(
            &ws,
            "SELECT resolved FROM claims WHERE resolved IS NOT NULL ORDER BY resolved"
        ),
        [
            "src/lib.rs#Backend@trait",
            "src/lib.rs#Mode@enum",
            "src/lib.rs#Store@struct"
        ]
    );
    // The file is parsed again: nothing the page names moved.
    write(
        root,
        "src/lib.rs",
        &format!("{text}\npub fn extra() {{}}\n"),
    );
    ws.scan(&|_| {}).unwrap();
    let warnings: Vec<String> = ws
        .show("src/lib.rs", None)
        .unwrap()
        .stale_warnings
        .into_iter()
        .map(|w| w.reason)
        .collect();
    assert_eq!(
        warnings,
        ["memory `src/lib.rs` v1 is stale: src/lib.rs changed since it was written"]
    );
}

/// Fault found by a fresh-user trial: a file renamed in the working tree left its memory
/// on the old path until `loci sync` (design.md: "A rename keeps memory attached"). A scan
/// that sees the rename now moves the page, with a `rename` event, and re-points the
/// claims; a rename it cannot tell apart (identical files) is left for `sync`.
#[test]
fn fault_a_renamed_file_left_its_memory_on_the_old_path_until_sync() {
    let (dir, mut ws) = workspace();
    let root = dir.path();
    write(root, "pkg/a/__init__.py", "");
    write(root, "pkg/b/__init__.py", "");
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "src/billing.py",
        "`Invoice.total()` sums the lines of `src/billing.py`.",
        &by("a"),
    )
    .unwrap();
    ws.remember("pkg/a/__init__.py", "Marks `pkg/a` a package.", &by("a"))
        .unwrap();

    std::fs::rename(root.join("src/billing.py"), root.join("src/invoices.py")).unwrap();
    std::fs::rename(root.join("pkg/a"), root.join("pkg/c")).unwrap();
    std::fs::rename(root.join("pkg/b"), root.join("pkg/d")).unwrap();
    let report = ws.scan(&|_| {}).unwrap().result;
    let moved: Vec<(&str, &str)> = report
        .pages_moved
        .iter()
        .map(|m| (m.from.as_str(), m.to.as_str()))
        .collect();
    assert_eq!(moved, [("src/billing.py", "src/invoices.py")]);
    let shown = ws.show("src/invoices.py", None).unwrap();
    assert_eq!(
        shown.result.revision.body,
        "`Invoice.total()` sums the lines of `src/billing.py`."
    );
    // No stale mark (the snapshots followed the file); the prose still names the old
    // path, which is false, and `show` says so with the rename as its fix.
    let warnings: Vec<String> = shown.stale_warnings.into_iter().map(|w| w.reason).collect();
    assert_eq!(
        warnings,
        [
            "memory `src/invoices.py` v1 claim `src/billing.py` is false: `src/billing.py` does not exist (did you mean `src/invoices.py`?) (contradiction #1)"
        ]
    );
    // The old path names where its page went.
    match ws.show("src/billing.py", None) {
        Err(EngineError::NotFound(message)) => assert_eq!(
            message,
            "no memory about `src/billing.py`: its page moved to `src/invoices.py` with the \
             file's rename (`loci show src/invoices.py`)"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ws.show(" ", None),
        Err(EngineError::InvalidArgument { .. })
    ));
    // The prose still names the old path: a contradiction, with the rename as its fix.
    let found: Vec<(String, String, Option<String>)> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .into_iter()
        .map(|c| (c.kind, c.claim, c.suggestion))
        .collect();
    assert_eq!(
        found,
        [
            ("missing_path".to_string(), "pkg/a".to_string(), None),
            (
                "missing_path".to_string(),
                "src/billing.py".to_string(),
                Some("src/invoices.py".to_string())
            )
        ]
    );
    // Two identical files moved at once: which went where is not the scan's to say.
    assert!(ws.show("pkg/a/__init__.py", None).is_ok());
    // `sync` finds the renamed file's page already moved.
    let synced = ws.sync(None).unwrap().result;
    assert!(
        !synced
            .pages_moved
            .iter()
            .any(|(from, _)| from == "src/billing.py"),
        "{:?}",
        synced.pages_moved
    );
    assert_eq!(
        ws.show("src/invoices.py", None)
            .unwrap()
            .result
            .revision
            .version,
        1
    );
}

/// Fault (trial): a file renamed without a page of its own left the claims of other pages
/// resolved to its old path, so those pages read "deleted" instead of following the file;
/// and a folder's page stayed on the old folder when the folder was renamed.
#[test]
fn fault_a_renamed_file_without_a_page_left_other_pages_claims_on_its_old_path() {
    let (dir, mut ws) = workspace();
    let root = dir.path();
    write(root, "lib/util.py", "def helper():\n    return 1\n");
    write(root, "lib/deep/more.py", "def more():\n    return 2\n");
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "src/auth.py",
        "`login()` calls into `src/billing.py`, and `lib/util.py` holds `helper()`.",
        &by("a"),
    )
    .unwrap();
    ws.remember("lib", "Small helpers; `lib/deep` holds the rest.", &by("a"))
        .unwrap();
    ws.remember("lib/deep", "The rest of the helpers.", &by("a"))
        .unwrap();

    std::fs::rename(root.join("src/billing.py"), root.join("src/invoices.py")).unwrap();
    std::fs::rename(root.join("lib"), root.join("core")).unwrap();
    let report = ws.scan(&|_| {}).unwrap().result;
    let moved: Vec<(&str, &str)> = report
        .pages_moved
        .iter()
        .map(|m| (m.from.as_str(), m.to.as_str()))
        .collect();
    assert_eq!(moved, [("lib", "core"), ("lib/deep", "core/deep")]);
    assert_eq!(
        ws.show("core", None).unwrap().result.revision.body,
        "Small helpers; `lib/deep` holds the rest."
    );
    assert!(ws.show("lib", None).is_err());
    // `src/billing.py` and `lib/util.py` have no pages; the claims naming them follow them
    // (no stale mark), and the prose naming the old paths is false (the scan's lint found
    // it): `show` says so.
    let warnings: Vec<String> = ws
        .show("src/auth.py", None)
        .unwrap()
        .stale_warnings
        .into_iter()
        .map(|w| w.reason)
        .collect();
    assert_eq!(
        warnings,
        [
            "memory `src/auth.py` v1 claim `src/billing.py` is false: `src/billing.py` does not exist (did you mean `src/invoices.py`?) (contradiction #1)",
            "memory `src/auth.py` v1 claim `lib/util.py` is false: `lib/util.py` does not exist (did you mean `core/util.py`?) (contradiction #2)"
        ]
    );
    // The prose still names the old paths: contradictions, each with the rename as its fix.
    let found: Vec<(String, Option<String>)> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .into_iter()
        .filter(|c| c.kind == "missing_path")
        .map(|c| (c.claim, c.suggestion))
        .collect();
    assert_eq!(
        found,
        [
            ("lib/deep".to_string(), Some("core/deep".to_string())),
            (
                "src/billing.py".to_string(),
                Some("src/invoices.py".to_string())
            ),
            ("lib/util.py".to_string(), Some("core/util.py".to_string())),
        ]
    );
}

/// Fault (trial): `loci why path.py:99999`, a line past the file's end, answered as if the
/// line were there. It is refused, naming the file and its line count (every door calls
/// this: the CLI exits 2, the LSP command and the MCP tool answer an error); the last line,
/// and a line of a file that grew since the scan, are answered.
#[test]
fn fault_why_past_the_end_of_a_file_answered_as_if_normal() {
    let (dir, mut ws) = workspace();
    ws.remember("src/auth.py", "Auth notes.", &by("a")).unwrap();
    for (target, lines) in [("src/auth.py:99999", 5), ("src/billing.py:4", 3)] {
        let err = ws.why(target).unwrap_err();
        let path = target.split_once(':').unwrap().0;
        let line = target.split_once(':').unwrap().1;
        assert_eq!(
            err.to_string(),
            format!(
                "invalid argument `target`: `{target}`: line {line} is past the end of `{path}`, which has {lines} lines"
            )
        );
    }
    assert_eq!(
        ws.why("src/auth.py:5").unwrap().result.subject,
        "src/auth.py"
    );
    std::fs::write(
        dir.path().join("src/auth.py"),
        "def login(user, password):\n    return check(user, password)\n\ndef check(u, p):\n    return True\n\n# more\n",
    )
    .unwrap();
    assert_eq!(
        ws.why("src/auth.py:7").unwrap().result.subject,
        "src/auth.py"
    );
    assert_eq!(
        ws.why("src/auth.py:8").unwrap_err().to_string(),
        "invalid argument `target`: `src/auth.py:8`: line 8 is past the end of `src/auth.py`, which has 7 lines"
    );
}

/// Fault found by a fresh-user trial: `why 'email/parser.py#Parser.parse@method'`, a key
/// loci prints itself, answered "no memory explains" although a page had a claim resolved
/// to it (`why email/parser.py:41` found it). A symbol key or a qualified name finds the
/// memory whose claims resolved to that symbol.
#[test]
fn fault_why_of_a_symbol_key_found_no_memory() {
    let (_dir, mut ws) = workspace();
    ws.remember(
        "src/billing.py",
        "`Invoice.total()` returns zero.",
        &by("a"),
    )
    .unwrap();
    for target in [
        "src/billing.py#Invoice.total@method",
        "Invoice.total",
        "Invoice::total()",
    ] {
        let why = ws.why(target).unwrap().result;
        assert_eq!(
            (why.subject.as_str(), why.matched_by.as_str()),
            ("src/billing.py", "symbol"),
            "{target}"
        );
    }
}

/// Faults found by a fresh-user trial: `why shutil.py:-1` and `shutil.py:99999999999999999999`
/// fell through to a text search, `why file.py:10:5` (as compilers print a place) was not
/// read as a line, and `why empty.py:1` was refused as past the end of a file of 0 lines.
#[test]
fn fault_why_misread_negative_huge_and_column_suffixed_lines() {
    let (dir, mut ws) = workspace();
    write(dir.path(), "src/empty.py", "");
    ws.scan(&|_| {}).unwrap();
    ws.remember("src/auth.py", "Auth notes.", &by("a")).unwrap();
    ws.remember("src/empty.py", "A placeholder.", &by("a"))
        .unwrap();
    for (target, bad) in [
        ("src/auth.py:-1", "-1"),
        ("src/auth.py:99999999999999999999", "99999999999999999999"),
    ] {
        assert_eq!(
            ws.why(target).unwrap_err().to_string(),
            format!(
                "invalid argument `target`: `{target}`: `{bad}` is not a line number (lines are numbered from 1)"
            )
        );
    }
    assert_eq!(
        ws.why("src/auth.py:2:5").unwrap().result.subject,
        "src/auth.py"
    );
    assert_eq!(
        ws.why("src/empty.py:1").unwrap().result.subject,
        "src/empty.py"
    );
}

/// Fault (fresh-user trial): `rollback PAGE 1` took new snapshots of the body it brought
/// back, so a version 1 that was stale (a claimed function's body and the page's file had
/// changed since it was written) came back as a fresh version 3 with no stale mark. A
/// rollback restores text, it does not verify it: the new revision keeps the restored
/// one's snapshots (its claims' and its file's), and only a claim that had none is
/// snapshotted now. `confirm` verifies.
#[test]
fn fault_a_rollback_brought_back_a_stale_body_as_fresh() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/auth.py",
        "def login(user, password):\n    return check(user, password)\n\ndef check(u, p):\n    return True\n\ndef gone():\n    pass\n",
    );
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "src/auth.py",
        "`login()` calls `check()`; see `later()`, not `gone()`.",
        &by("a"),
    )
    .unwrap();
    write(
        dir.path(),
        "src/auth.py",
        "def login(user, password):\n    return check(user, password)\n\ndef check(u, p):\n    return u == p\n\ndef later():\n    pass\n",
    );
    ws.scan(&|_| {}).unwrap();
    ws.remember("src/auth.py", "rewrite", &by("a")).unwrap();
    let back = ws.rollback("src/auth.py", 1, &by("a")).unwrap().result;
    assert_eq!(back.revision.version, 3);
    let claims: Vec<(&str, Option<&str>)> = back
        .claims
        .iter()
        .map(|c| (c.text.as_str(), c.resolved.as_deref()))
        .collect();
    assert_eq!(
        claims,
        [
            ("login()", Some("src/auth.py#login@function")),
            ("check()", Some("src/auth.py#check@function")),
            // Unresolved in version 1: snapshotted now.
            ("later()", Some("src/auth.py#later@function")),
            ("gone()", Some("src/auth.py#gone@function")),
        ]
    );
    assert!(back.claims.iter().all(|c| !c.resolved_elsewhere));
    let stale: Vec<String> = ws
        .lint()
        .unwrap()
        .result
        .stale
        .iter()
        .map(|s| s.describe())
        .collect();
    assert_eq!(
        stale,
        [
            "memory `src/auth.py` v3 is stale: src/auth.py changed since it was written",
            "memory `src/auth.py` v3 claim `check()` is stale: body of src/auth.py#check@function changed since it was written",
            "memory `src/auth.py` v3 claim `gone()` is stale: src/auth.py#gone@function was deleted since it was written"
        ]
    );
    // `gone()` names nothing now: confirming is refused until a human dismisses it.
    assert!(ws.confirm("src/auth.py", &by("b")).is_err());
    let gone = ws.lint().unwrap().result.contradictions[0].contradiction_id;
    ws.resolve(gone, Some("gone for good"), None).unwrap();
    ws.confirm("src/auth.py", &by("b")).unwrap();
    assert!(ws.lint().unwrap().result.stale.is_empty());
}

/// Fault found by a trial: memory written before the first scan finished (the map empty)
/// stayed untracked for good: its claims had resolved to nothing, lint then found their
/// targets and called them fine, and no change to them could ever make it stale. A scan
/// that maps what an untracked claim names starts tracking it; a claim that was tracked
/// keeps its own snapshot (a later scan must not make it fresh again).
#[test]
fn fault_memory_written_before_the_first_scan_was_never_tracked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "json/scanner.py",
        "def scanstring(s):\n    return s\n",
    );
    write(root, "json/decoder.py", "def decode(s):\n    return s\n");
    let mut ws = Workspace::open(root, None).unwrap();
    let written = ws
        .remember(
            "json/decoder.py",
            "Strings go through `scanstring()` in `json/scanner.py`; `decode()` too.",
            &by("agent:a"),
        )
        .unwrap()
        .result;
    let resolved: Vec<Option<String>> = written.claims.iter().map(|c| c.resolved.clone()).collect();
    assert_eq!(resolved, [None, None, None]);
    ws.scan(&|_| {}).unwrap();
    let claims = |ws: &Workspace| -> Vec<Option<String>> {
        ws.show("json/decoder.py", None)
            .unwrap()
            .result
            .claims
            .into_iter()
            .map(|c| c.resolved)
            .collect()
    };
    assert_eq!(
        claims(&ws),
        [
            Some("json/scanner.py#scanstring@function".to_string()),
            Some("json/scanner.py".to_string()),
            Some("json/decoder.py#decode@function".to_string())
        ]
    );
    let stale = |ws: &Workspace| -> Vec<String> {
        ws.show("json/decoder.py", None)
            .unwrap()
            .stale_warnings
            .into_iter()
            .map(|w| w.reason)
            .collect()
    };
    assert_eq!(stale(&ws), Vec::<String>::new());
    // Now tracked: a changed body makes the page stale, and another scan that maps
    // something new does not take the changed code as the claim's snapshot.
    write(
        root,
        "json/scanner.py",
        "def scanstring(s):\n    return s.strip()\n",
    );
    ws.scan(&|_| {}).unwrap();
    write(root, "json/encoder.py", "def encode(o):\n    return o\n");
    ws.scan(&|_| {}).unwrap();
    let reasons = stale(&ws);
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("json/scanner.py#scanstring@function")),
        "{reasons:?}"
    );
}

/// Fault (fresh-user trial): `loci recap --json` and `session end --json` printed the
/// session's digest twice, once as an object and once as a JSON string inside the session
/// row, which a client had to parse again.
#[test]
fn fault_a_session_digest_was_a_json_string_inside_the_json() {
    let (_dir, mut ws) = workspace();
    let id = ws
        .session_begin(Some("task"), Some("agent:a"))
        .unwrap()
        .result
        .session_id;
    let opts = WriteOptions {
        session: Some(id),
        ..by("agent:a")
    };
    ws.remember("src/auth.py", "a note", &opts).unwrap();
    let ended = serde_json::to_value(ws.session_end(id, Some("done")).unwrap().result).unwrap();
    let recap = serde_json::to_value(&ws.recap(1).unwrap().result[0]).unwrap();
    for view in [ended, recap] {
        assert_eq!(view["session"].get("digest"), None, "{view}");
        assert_eq!(
            view["digest"]["pages"][0]["subject"], "src/auth.py",
            "{view}"
        );
    }
}

/// Fault (fresh-user trial): `loci why --json` printed each event's payload as a string
/// holding JSON, which a client had to parse again.
#[test]
fn fault_an_event_payload_was_a_json_string_inside_the_json() {
    let (_dir, mut ws) = workspace();
    ws.remember("src/auth.py", "a note", &by("agent:a"))
        .unwrap();
    let why = serde_json::to_value(ws.why("src/auth.py").unwrap().result).unwrap();
    assert_eq!(
        why["events"][0]["payload"]["request"]["op"], "remember",
        "{why}"
    );
    assert_eq!(
        why["events"][0]["payload"]["request"]["subject"],
        "src/auth.py"
    );
}

/// Fault: a new decision or lesson cleared the stale marks of every earlier one: each entry
/// writes a revision of the whole log, and its claims were all snapshotted again against
/// the code as it is now. Each entry is a page of its own now, with its own claims: a new
/// entry snapshots only its own.
#[test]
fn fault_a_new_decision_cleared_the_stale_marks_of_earlier_ones() {
    let (dir, mut ws) = workspace();
    let stale = |ws: &mut Workspace| -> Vec<String> {
        ws.lint()
            .unwrap()
            .result
            .stale
            .iter()
            .map(|s| s.describe())
            .collect()
    };
    for (log, append) in [
        (
            "decision:1",
            Workspace::decide as fn(&mut Workspace, &str, Option<&str>, &WriteOptions) -> _,
        ),
        ("lesson:1", Workspace::learn),
    ] {
        write(
            dir.path(),
            "src/auth.py",
            "def login(user, password):\n    return check(user, password)\n\ndef check(u, p):\n    return True\n",
        );
        ws.scan(&|_| {}).unwrap();
        append(
            &mut ws,
            "Keep `check()` returning a bool",
            Some("src/auth.py"),
            &by("a"),
        )
        .unwrap();
        write(
            dir.path(),
            "src/auth.py",
            "def login(user, password):\n    return check(user, password)\n\ndef check(u, p):\n    return 'yes'\n",
        );
        ws.scan(&|_| {}).unwrap();
        let before = stale(&mut ws);
        assert!(
            before.iter().any(|s| s.contains(&format!("memory `{log}`"))
                && s.contains("claim `check()` is stale")),
            "{log}: {before:?}"
        );
        append(
            &mut ws,
            "Unrelated: `Invoice.total()` stays cheap",
            Some("src/billing.py"),
            &by("a"),
        )
        .unwrap();
        let after = stale(&mut ws);
        assert!(
            after.iter().any(|s| s.contains(&format!("memory `{log}`"))
                && s.contains("claim `check()` is stale")),
            "{log}: the earlier entry's mark is gone: {after:?}"
        );
        assert!(
            !after.iter().any(|s| s.contains("Invoice.total")),
            "{log}: the new entry is verified now: {after:?}"
        );
    }
}

/// Fault: `decide` and `learn` inside a session begun as `agent:auditor` recorded
/// `human:unknown` (the default author): a write in a session is by the session's author
/// unless it names one.
#[test]
fn fault_writes_in_a_session_were_attributed_to_the_default_author() {
    let (_dir, mut ws) = workspace();
    let session = ws
        .session_begin(Some("audit"), Some("agent:auditor"))
        .unwrap()
        .result
        .session_id;
    let in_session = WriteOptions {
        session: Some(session),
        ..Default::default()
    };
    let decided = ws
        .decide("Keep `check()` cheap", Some("src/auth.py"), &in_session)
        .unwrap()
        .result;
    assert_eq!(decided.revision.author, "agent:auditor");
    let log = ws.show("decisions", None).unwrap().result.revision.body;
    assert!(log.ends_with("— agent:auditor\n"), "{log}");
    let learned = ws
        .learn("Totals are cached", None, &in_session)
        .unwrap()
        .result;
    assert_eq!(learned.revision.author, "agent:auditor");
    let remembered = ws
        .remember("src/billing.py", "Invoices total their lines.", &in_session)
        .unwrap()
        .result;
    assert_eq!(remembered.revision.author, "agent:auditor");
    // A named author still wins.
    let named = WriteOptions {
        session: Some(session),
        ..by("human:ana")
    };
    let own = ws
        .learn("Refunds are negative", None, &named)
        .unwrap()
        .result;
    assert_eq!(own.revision.author, "human:ana");
}

#[test]
fn fault_confirm_accepted_a_page_naming_a_function_that_no_longer_exists() {
    let (dir, mut ws) = workspace();
    ws.remember(
        "src/auth.py",
        "`login()` delegates to `check()`.",
        &by("human:a"),
    )
    .unwrap();
    write(
        dir.path(),
        "src/auth.py",
        "def login(user, password):\n    return verify(user, password)\n\ndef verify(u, p):\n    return True\n",
    );
    let refused = ws.confirm("src/auth.py", &by("human:a")).unwrap_err();
    let id = ws.lint().unwrap().result.contradictions[0].contradiction_id;
    assert_eq!(
        refused.to_string(),
        format!(
            "invalid argument `SUBJECT`: `src/auth.py` was not confirmed: the code contradicts \
             1 of its claims: `check()`: missing_symbol [medium]: no symbol `check` in the map; \
             `verify` in src/auth.py has the same body (#{id}). Correct the page (`loci remember`), or dismiss a finding that is not a \
             problem (`loci resolve ID --notes WHY`) and confirm again"
        )
    );
    let events = |ws: &Workspace| {
        ws.store()
            .conn()
            .query_row(
                "SELECT count(*) FROM events WHERE kind = 'confirm'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
    };
    assert_eq!(events(&ws), 0, "nothing was confirmed");
    // A dismissed finding is a human's word that it is not a problem.
    ws.resolve(id, Some("check is verify now"), None).unwrap();
    ws.confirm("src/auth.py", &by("human:a")).unwrap();
    assert_eq!(events(&ws), 1);
}

#[test]
fn fault_why_showed_the_latest_decision_instead_of_the_one_it_matched() {
    let (_dir, mut ws) = workspace();
    ws.decide(
        "`check()` always returns True until SSO lands",
        Some("src/auth.py"),
        &by("human:ann"),
    )
    .unwrap();
    ws.decide(
        "Invoices are never deleted",
        Some("src/billing.py"),
        &by("human:bob"),
    )
    .unwrap();
    ws.decide("Releases are tagged", None, &by("human:cy"))
        .unwrap();
    let why = ws.why("src/auth.py:4").unwrap().result;
    assert_eq!(
        (
            why.subject.as_str(),
            why.revision.version,
            why.revision.author.as_str(),
            why.entry.as_deref()
        ),
        (
            "decision:1",
            1,
            "human:ann",
            Some("`check()` always returns True until SSO lands (about `src/auth.py`)")
        )
    );
    let why = ws.why("src/billing.py:2").unwrap().result;
    assert_eq!(
        (
            why.subject.as_str(),
            why.revision.version,
            why.entry.as_deref()
        ),
        (
            "decision:2",
            1,
            Some("Invoices are never deleted (about `src/billing.py`)")
        )
    );
}

#[test]
fn fault_why_and_search_served_memory_without_checking_the_disk() {
    let (dir, mut ws) = workspace();
    ws.remember(
        "src/billing.py",
        "`Invoice.total()` sums the lines; auth is `login()`.",
        &by("human:a"),
    )
    .unwrap();
    // Edited on disk, not scanned: the page's own file and a file one of its claims names.
    write(
        dir.path(),
        "src/auth.py",
        "def login(user, password):\n    return False\n",
    );
    write(
        dir.path(),
        "src/billing.py",
        "class Invoice:\n    def total(self):\n        return 1\n",
    );
    let warned = |w: &[loci_engine::StaleWarning]| {
        let mut w: Vec<String> = w
            .iter()
            .map(|w| format!("{}: {}", w.path, w.reason))
            .collect();
        w.sort();
        w
    };
    let expected = [
        "src/auth.py: changed on disk since the last scan",
        "src/billing.py: changed on disk since the last scan",
    ];
    let show = ws.show("src/billing.py", None).unwrap();
    assert_eq!(warned(&show.stale_warnings), expected);
    let why = ws.why("src/billing.py:2").unwrap();
    assert_eq!(warned(&why.stale_warnings), expected);
    assert_eq!(why.freshness.changed_since_scan, Some(2));
    let search = ws.search("sums the lines", &Default::default()).unwrap();
    assert_eq!(search.result[0].id, "src/billing.py");
    assert_eq!(warned(&search.stale_warnings), expected);
}

/// Fault: `touch src/auth.py` made every answer serving memory about it warn "changed on
/// disk since the last scan", though not one byte had changed. A file whose change time
/// moved at the same size is compared by content; one whose bytes changed still warns.
#[test]
fn fault_touching_a_file_warned_that_it_changed_on_disk() {
    let (dir, mut ws) = workspace();
    ws.remember("src/auth.py", "`check()` always passes", &by("human:a"))
        .unwrap();
    let file = dir.path().join("src/auth.py");
    let later =
        std::fs::metadata(&file).unwrap().modified().unwrap() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let warnings = |ws: &Workspace| -> Vec<String> {
        ws.show("src/auth.py", None)
            .unwrap()
            .stale_warnings
            .iter()
            .map(|w| format!("{}: {}", w.path, w.reason))
            .collect()
    };
    assert_eq!(warnings(&ws), Vec::<String>::new());
    // The same size, other bytes.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("True", "Fals");
    std::fs::write(&file, text).unwrap();
    assert_eq!(
        warnings(&ws),
        ["src/auth.py: changed on disk since the last scan"]
    );
}

/// Fault: resolving a dismissed contradiction again printed "dismissed
/// #1 …" a second time, as if it had done something. It is refused, naming when it was
/// dismissed.
#[test]
fn fault_resolving_a_dismissed_contradiction_again_said_it_dismissed_it() {
    let (dir, mut ws) = workspace();
    ws.remember("src/auth.py", "calls `check()`", &by("human:a"))
        .unwrap();
    write(
        dir.path(),
        "src/auth.py",
        "def login(user, password):\n    return verify(user, password)\n\ndef verify(u, p):\n    return True\n",
    );
    ws.scan(&|_| {}).unwrap();
    let report = ws.lint().unwrap().result;
    let id = report.contradictions[0].contradiction_id;
    let first = ws.resolve(id, Some("renamed later"), None).unwrap().result;
    assert_eq!(first.status, "dismissed");
    let err = ws.resolve(id, Some("again"), None).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "invalid argument `id`: contradiction {id} (missing_symbol `check()` in src/auth.py) \
             was dismissed already at {}; nothing changed",
            first.resolved_at.unwrap()
        )
    );
}

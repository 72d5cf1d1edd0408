//! `loci mcp` does bounded work whatever the client does: closing stdin during a long call
//! ends the process within 2 s, a 1 MiB `remember` body is not echoed back, and a
//! 50,000-word question is answered within a second with a note.

use crate::mcp_support;

use std::time::{Duration, Instant};

use mcp_support::{Mcp, run, write};
use serde_json::json;

/// The most a `loci mcp` may take to exit once stdin is closed.
const EXIT_WITHIN: Duration = Duration::from_secs(2);

/// Fault: after a long call the server ignored stdin closing and kept a core busy for
/// minutes (a first call on a checkout of the Python stdlib without a store: 80 s from
/// stdin closing to exit, debug build). Here the long call is the first `symbol` on a
/// checkout no scan has seen, which waits for the startup refresh (a full scan of 4,000
/// files, 24 s in a debug build): closing stdin cancels it and the process exits within 2
/// s, leaving the scan.
#[test]
fn fault_stdin_closed_during_a_long_call_left_the_server_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for i in 0..4_000 {
        let body: String = (0..40)
            .map(|j| format!("def f{i}_{j}(x):\n    return g{j}(x) + {j}\n\n"))
            .collect();
        write(root, &format!("pkg{}/m{i}.py", i % 40), &body);
    }
    let mut mcp = Mcp::start(root, &[]);
    mcp.initialize("closer");
    let id = mcp.id();
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "symbol", "arguments": {"name": "f0_0"}}}));
    let (status, exited, rest, stderr) = mcp.close_and_wait();
    assert!(
        exited <= EXIT_WITHIN,
        "exited {exited:?} after stdin closed; stderr:\n{stderr}"
    );
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    // The call was cancelled, not answered from a finished scan, and said so.
    assert_eq!(
        rest,
        vec![json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": "cancelled: the call was cancelled before it finished (its client cancelled it or went away); nothing was changed"}],
            "structuredContent": {"error": {"kind": "cancelled", "retryable": true,
                "message": "the call was cancelled before it finished (its client cancelled it or went away); nothing was changed"}},
            "isError": true}})],
        "stderr:\n{stderr}"
    );
}

/// Fault: a `remember` answer carried the written revision's body, so a 1 MiB body came
/// back (whole before answers were paged, its first 5 KB since). The answer now says what
/// was written with the first 200 bytes of the body and a note.
#[test]
fn fault_a_1_mib_remember_body_was_echoed_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.py", "def alpha():\n    return 1\n");
    let (status, _, stderr) = run(root, &["scan"]);
    assert!(status.success(), "scan: {stderr}");
    let mut mcp = Mcp::start(root, &[("LOCI_AUTHOR", "agent:test")]);
    mcp.initialize("big-body");
    let body = "The parser reads one line at a time. ".repeat(30_000)[..1 << 20].to_string();
    let r = mcp.call("remember", json!({"subject": "a.py", "body": body}));
    let line = r.to_string();
    let result = &r["result"];
    assert_eq!(result["isError"], json!(false), "{line:.2000}");
    let written = &result["structuredContent"]["result"];
    assert_eq!(
        (
            &written["page"]["subject"],
            &written["revision"]["version"],
            &written["revision"]["body"],
        ),
        (&json!("a.py"), &json!(1), &json!(body[..200]))
    );
    let notes = &result["structuredContent"]["capability"]["notes"];
    assert_eq!(
        notes,
        &json!([
            "not a git repository: history features are unavailable",
            "the body written is 1048576 bytes; `revision.body` holds its first 200 (`show` with subject `a.py` and version 1 returns it whole)"
        ])
    );
    assert_eq!(
        result["content"][0]["text"],
        json!(
            "wrote a.py v1 by agent:test\nnote: the body written is 1048576 bytes; `revision.body` holds its first 200 (`show` with subject `a.py` and version 1 returns it whole)\n"
        )
    );
    assert!(line.len() < 2_048, "{} bytes: {line:.3000}", line.len());
    let (status, rest, stderr) = mcp.finish();
    assert!(status.success(), "{stderr}");
    assert!(rest.is_empty(), "{rest:?}");
    // What was written is whole.
    let (status, shown, stderr) = run(root, &["show", "a.py", "--json"]);
    assert!(status.success(), "{stderr}");
    let shown: serde_json::Value = serde_json::from_str(&shown).expect("JSON");
    assert_eq!(shown["result"]["revision"]["body"], json!(body));
}

/// A question's cost grows with its length no more; a 50,000-word question (about 500 KB)
/// is read up to 16 KiB and 64 terms, answered within a second, and the answer says what
/// was left unused.
#[test]
fn a_50000_word_question_is_answered_within_a_second_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.py", "def alpha():\n    return 1\n");
    let (status, _, stderr) = run(root, &["scan"]);
    assert!(status.success(), "scan: {stderr}");
    let mut mcp = Mcp::start(root, &[]);
    mcp.initialize("long-question");
    mcp.call("symbol", json!({"name": "alpha"}));
    let query: String = (0..50_000)
        .map(|i| format!("word{:05}", (i * 7919) % 100_000))
        .collect::<Vec<_>>()
        .join(" ");
    let named: Vec<String> = query
        .split(' ')
        .take(10)
        .map(|w| format!("`{w}`"))
        .collect();
    let bounded = [
        "the query is 499999 bytes: its first 16384 were read".to_string(),
        "the query has 1639 distinct terms: its first 64 were used".to_string(),
    ];
    let unknown = format!(
        "the question names {}, 54 more, which nothing in the code, memory or docs holds",
        named.join(", ")
    );
    let not_git = "not a git repository: history features are unavailable".to_string();
    for (tool, notes, max_bytes) in [
        (
            "context",
            vec![
                not_git.clone(),
                unknown,
                bounded[0].clone(),
                bounded[1].clone(),
            ],
            40_000,
        ),
        (
            "search",
            vec![not_git, bounded[0].clone(), bounded[1].clone()],
            2_000,
        ),
    ] {
        let started = Instant::now();
        let r = mcp.call(tool, json!({"query": query}));
        let took = started.elapsed();
        assert!(took < Duration::from_secs(1), "{tool}: {took:?}");
        assert_eq!(
            r["result"]["structuredContent"]["capability"]["notes"],
            json!(notes),
            "{tool}"
        );
        let line = r.to_string();
        assert!(
            line.len() < max_bytes,
            "{tool}: {} bytes: {line:.3000}",
            line.len()
        );
    }
    let (status, _, stderr) = mcp.finish();
    assert!(status.success(), "{stderr}");
}

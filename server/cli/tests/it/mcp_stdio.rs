//! `loci mcp` as a real process over stdio: stdout carries only protocol even at
//! `RUST_LOG=trace`, malformed input gets `-32700` and the session goes on, the process
//! exits cleanly when the client closes stdin, and a store it cannot open or that a query
//! finds damaged is an error result of its own kind.

use crate::damage;
use crate::mcp_support;

use std::path::{Path, PathBuf};

use mcp_support::{Mcp, run, write};
use serde_json::{Value, json};

#[test]
fn b21_stdout_is_only_json_rpc_at_trace_level() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub fn target() {}\n\nfn caller() { target(); }\n",
    );
    // No prior scan: the server's first refresh builds the map (and logs a lot).
    let mut mcp = Mcp::start(root, &[("RUST_LOG", "trace"), ("NO_COLOR", "1")]);
    let init = mcp.initialize("b21");
    assert_eq!(init["result"]["serverInfo"]["name"], "loci");
    mcp.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "tools/list"}));
    let tools = mcp.response(100);
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    let r = mcp.call("symbol", json!({"name": "target"}));
    assert_eq!(
        r["result"]["structuredContent"]["result"][0]["line"], 0,
        "{r}"
    );
    mcp.send_raw("{ this is not json");
    let err = mcp.recv();
    assert_eq!(err["error"]["code"], -32700, "{err}");
    let r = mcp.call("callers", json!({"symbol": "target"}));
    assert_eq!(
        r["result"]["structuredContent"]["result"]["calls"][0]["path"],
        "src/lib.rs"
    );
    mcp.send(&json!({"jsonrpc": "2.0", "id": 101, "method": "ping"}));
    assert!(mcp.response(101)["result"].is_object());
    let (status, rest, stderr) = mcp.finish();
    assert!(status.success(), "exit status {status}");
    assert!(
        rest.is_empty(),
        "unexpected output after the last response: {rest:?}"
    );
    // The logs went somewhere: stderr.
    assert!(
        stderr.contains("TRACE") && stderr.contains("DEBUG"),
        "trace logs went to stderr"
    );
}

/// `tools/list` declares an `outputSchema` for every tool; a tool result's text is the
/// answer as the CLI prints it (no JSON envelope) and its structured content the envelope;
/// an argument or domain error is a result with `isError: true`, and only an unknown tool
/// is a JSON-RPC error.
#[test]
fn answers_are_text_errors_are_results_and_every_tool_declares_its_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub fn target() {}\n\nfn caller() { target(); }\n",
    );
    let mut mcp = Mcp::start(root, &[("NO_COLOR", "1")]);
    mcp.initialize("issue31");
    let id = mcp.id();
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
    let tools = mcp.response(id)["result"]["tools"].clone();
    let tools = tools.as_array().expect("tools");
    assert_eq!(tools.len(), 36);
    for t in tools {
        let list = [
            "search",
            "symbol",
            "references",
            "recap",
            "fact_list",
            "memory_list",
            "topics",
        ]
        .contains(&t["name"].as_str().unwrap_or(""));
        assert_eq!(
            t["outputSchema"],
            json!({
                "type": "object",
                "properties": {
                    "result": {"type": if list { "array" } else { "object" }},
                    "page": {"type": "object"},
                    "error": {"type": "object"}
                },
                "anyOf": [{"required": ["result"]}, {"required": ["error"]}]
            }),
            "{}",
            t["name"]
        );
    }

    let r = mcp.call("callers", json!({"symbol": "target"}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text":
            "definition src/lib.rs#target@function (src/lib.rs:1)\nsrc/lib.rs:3:15: call target in src/lib.rs#caller@function -> src/lib.rs#target@function (derived, 0.90)\n"}])
    );
    let envelope = &r["result"]["structuredContent"];
    let fields: Vec<&str> = envelope
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        fields,
        [
            "capability",
            "freshness",
            "index",
            "limits",
            "result",
            "stale_warnings"
        ]
    );
    assert_eq!(envelope["result"]["calls"][0]["line"], 2);

    let r = mcp.call("why", json!({"target": "src/lib.rs:40"}));
    assert_eq!(
        (&r["result"]["isError"], &r["result"]["content"][0]["text"]),
        (
            &json!(true),
            &json!(
                "invalid_argument: invalid argument `target`: `src/lib.rs:40`: line 40 is past the end of `src/lib.rs`, which has 3 lines; fix `target` and call `why` again"
            )
        ),
        "{r}"
    );
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"error": {
            "kind": "invalid_argument",
            "argument": "target",
            "retryable": false,
            "message": "invalid argument `target`: `src/lib.rs:40`: line 40 is past the end of `src/lib.rs`, which has 3 lines; fix `target` and call `why` again"
        }})
    );
    let r = mcp.call("no_such_tool", json!({}));
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "unknown tool `no_such_tool`; call tools/list for the available tools", "data": {"argument": "name"}})
    );
    let (status, rest, _) = mcp.finish();
    assert!(status.success(), "exit status {status}");
    assert!(rest.is_empty(), "unexpected output: {rest:?}");
}

/// A workspace with `src/lib.rs` scanned; returns the database's canonical path and its
/// bytes.
fn scanned_workspace(root: &Path) -> (PathBuf, Vec<u8>) {
    write(
        root,
        "src/lib.rs",
        "pub fn target() {}\n\nfn caller() { target(); }\n",
    );
    let (status, _, stderr) = run(root, &["scan"]);
    assert!(status.success(), "scan: {stderr}");
    let db = root.canonicalize().unwrap().join(".loci/loci.db");
    let bytes = std::fs::read(&db).unwrap();
    (db, bytes)
}

/// The message of a damaged store at `db` (`loci_store::StoreError::Damaged`, no backup).
fn damaged(db: &Path, detail: &str) -> String {
    format!(
        "{}: the database is damaged ({detail}). `loci export -o FILE` may still save the memory it holds; `loci restore BACKUP` puts a backup in its place and keeps the damaged file in {}; or move it aside and run `loci scan` for a new one (the memory it held would be lost)",
        db.display(),
        db.parent().unwrap().join("backups").display()
    )
}

/// A tool result that is an error of `kind` with `message`, exactly.
fn assert_tool_error(r: &Value, kind: &str, message: &str) {
    assert_eq!(
        r["result"],
        json!({
            "content": [{"type": "text", "text": format!("{kind}: {message}")}],
            "structuredContent": {"error": {"kind": kind, "message": message, "retryable": false}},
            "isError": true
        }),
        "{r}"
    );
}

/// Fault: on a store it could not open (a damaged file, a newer schema) `loci mcp` exited 2
/// before answering `initialize`, so an agent saw a dead server and no reason. It answers
/// `initialize` (the instructions say what is wrong) and `tools/list`; every tool call is
/// an error result of the store's kind (`corrupt`, `newer_schema`) naming the problem and
/// the way out; the file is left as it was; and once the store is put right, the next call
/// is answered without a restart.
#[test]
fn fault_mcp_exited_2_before_initialize_on_a_damaged_or_newer_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let (db, good) = scanned_workspace(root);
    let noise: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&db, &noise).unwrap();
    let not_a_database = damaged(&db, "file is not a database");
    let refused =
        |message: &str| format!("loci cannot open its store, so no tool can answer: {message}");

    let mut mcp = Mcp::start(root, &[]);
    let init = mcp.initialize("issue37");
    assert_eq!(init["result"]["serverInfo"]["name"], "loci", "{init}");
    let instructions = init["result"]["instructions"].as_str().unwrap_or_default();
    let now = format!(
        "\nNOW: loci cannot open its store (corrupt: {not_a_database}); every tool answers this error until it is fixed."
    );
    assert!(instructions.ends_with(&now), "{instructions}");
    let id = mcp.id();
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
    let tools = mcp.response(id);
    assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(36));
    for (tool, args) in [
        ("symbol", json!({"name": "target"})),
        (
            "remember",
            json!({"subject": "src/lib.rs", "body": "Notes."}),
        ),
        ("scan", json!({})),
    ] {
        assert_tool_error(&mcp.call(tool, args), "corrupt", &refused(&not_a_database));
    }
    assert!(
        std::fs::read(&db).unwrap() == noise,
        "the damaged file was changed"
    );

    // A newer schema, in place of the damaged file: the next call says so.
    std::fs::write(&db, &good).unwrap();
    let conn = loci_store::rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "INSERT INTO schema_migrations(version, name) VALUES (999, 'future')",
        [],
    )
    .unwrap();
    let newer = format!(
        "{}: schema version 999 is newer than this loci supports ({}); upgrade loci, or point --db at another file. The database was not modified.",
        db.display(),
        loci_store::SCHEMA_VERSION
    );
    assert_tool_error(
        &mcp.call("symbol", json!({"name": "target"})),
        "newer_schema",
        &refused(&newer),
    );

    // Put right (the future migration removed): answered, by the same server.
    conn.execute("DELETE FROM schema_migrations WHERE version = 999", [])
        .unwrap();
    drop(conn);
    let r = mcp.call("symbol", json!({"name": "target"}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["result"][0]["key"], "src/lib.rs#target@function",
        "{r}"
    );
    let (status, rest, stderr) = mcp.finish();
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    assert!(rest.is_empty(), "{rest:?}");
}

/// Fault: damage a query met in a store that opened ("database disk image is malformed":
/// the symbols' pages overwritten) was a tool error of kind `error` with SQLite's words
/// alone; it is `corrupt`, naming the database and the ways out, as the CLI says it.
#[test]
fn fault_damage_a_tool_met_was_kind_error_not_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let (db, _) = scanned_workspace(root);
    std::fs::write(&db, damage::symbols_damaged(&db)).unwrap();

    let mut mcp = Mcp::start(root, &[]);
    mcp.initialize("issue37");
    assert_tool_error(
        &mcp.call("symbol", json!({"name": "target"})),
        "corrupt",
        &damaged(&db, "database disk image is malformed"),
    );
    let (status, _, stderr) = mcp.finish();
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
}

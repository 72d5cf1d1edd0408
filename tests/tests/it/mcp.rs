//! The MCP server in-process: an rmcp client (or raw JSON-RPC lines) talks to `loci_mcp`
//! over an in-memory duplex stream through the real line transport. Covers the tool list
//! and annotations, typed calls, argument errors as tool results naming the argument,
//! paging, freshness after out-of-band edits, large concurrent responses on one pipe and a
//! tolerant lifecycle (skipped `initialized`, malformed lines).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use expect_test::expect;
use loci_engine::Workspace;
use loci_mcp::{LociServer, ServerOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ErrorCode,
    Implementation,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

type Client = RunningService<RoleClient, ClientConfig>;

/// How long any single wait in these tests may take before the test fails.
const TIMEOUT: Duration = Duration::from_secs(60);

use crate::fixture::write;

fn scanned(root: &Path) -> Workspace {
    let mut ws = Workspace::open(root, None).expect("open workspace");
    ws.scan(&|_| {}).expect("scan");
    ws
}

fn serve(ws: Workspace) -> DuplexStream {
    serve_server(LociServer::new(ws, ServerOptions::default()))
}

fn serve_server(server: LociServer) -> DuplexStream {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(server_io);
    tokio::spawn(loci_mcp::stdio::serve(server, r, w));
    client_io
}

async fn connect(ws: Workspace) -> Client {
    connect_to(serve(ws)).await
}

async fn connect_to(io: DuplexStream) -> Client {
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("loci-test", "1"),
    );
    tokio::time::timeout(TIMEOUT, info.serve(io))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

async fn call(client: &Client, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
    let args = args.as_object().cloned().unwrap_or_default();
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    tokio::time::timeout(TIMEOUT, client.call_tool(params))
        .await
        .expect("answer in time")
}

async fn ok(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let r = call(client, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args}: {e}"));
    assert_eq!(r.is_error, Some(false), "{tool} {args}: {}", text(&r));
    r
}

fn structured(r: &CallToolResult) -> &Value {
    r.structured_content.as_ref().expect("structured content")
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The argument error of a call: a tool result with `isError: true` and `error.kind`
/// `invalid_argument`, as (its text, `error.argument`).
async fn invalid(client: &Client, tool: &str, args: Value) -> (String, String) {
    match call(client, tool, args.clone()).await {
        Ok(r) if r.is_error == Some(true) => {
            let error = &structured(&r)["error"];
            assert_eq!(error["kind"], "invalid_argument", "{tool} {args}: {error}");
            assert_eq!(
                text(&r),
                format!(
                    "invalid_argument: {}",
                    error["message"].as_str().unwrap_or("")
                ),
            );
            let argument = error["argument"].as_str().unwrap_or("").to_string();
            (text(&r), argument)
        }
        other => panic!("{tool} {args}: expected an argument error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_names_and_annotations() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.rs", "fn a() {}\n");
    let client = connect(scanned(dir.path())).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("loci")
    );
    let instructions = info.instructions.clone().unwrap_or_default();
    for step in [
        "session_begin",
        "remember",
        "decide",
        "learn",
        "session_end",
    ] {
        assert!(instructions.contains(step), "instructions mention {step}");
    }
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut lines = String::new();
    for t in &tools {
        let a = t.annotations.clone().unwrap_or_default();
        let flag = |b: Option<bool>, name: &str| match b {
            Some(true) => name.to_string(),
            Some(false) => format!("!{name}"),
            None => format!("?{name}"),
        };
        lines.push_str(&format!(
            "{} {} {} {} {}\n",
            t.name,
            flag(a.read_only_hint, "read_only"),
            flag(a.destructive_hint, "destructive"),
            flag(a.idempotent_hint, "idempotent"),
            flag(a.open_world_hint, "open_world"),
        ));
        // Every argument documents itself.
        let props = t.input_schema.get("properties").and_then(Value::as_object);
        for (name, schema) in props.into_iter().flatten() {
            assert!(
                schema.get("description").and_then(Value::as_str).is_some(),
                "{}.{name} has no description",
                t.name
            );
        }
        assert!(t.description.as_deref().is_some_and(|d| !d.is_empty()));
    }
    expect![[r#"
        session_begin ?read_only !destructive ?idempotent !open_world
        recap read_only ?destructive idempotent !open_world
        context read_only ?destructive idempotent !open_world
        search read_only ?destructive idempotent !open_world
        symbol read_only ?destructive idempotent !open_world
        source read_only ?destructive idempotent !open_world
        outline read_only ?destructive idempotent !open_world
        references read_only ?destructive idempotent !open_world
        callers read_only ?destructive idempotent !open_world
        callees read_only ?destructive idempotent !open_world
        deps read_only ?destructive idempotent !open_world
        impact read_only ?destructive idempotent !open_world
        why read_only ?destructive idempotent !open_world
        show read_only ?destructive idempotent !open_world
        history read_only ?destructive idempotent !open_world
        memory_list read_only ?destructive idempotent !open_world
        topics read_only ?destructive idempotent !open_world
        asof read_only ?destructive idempotent !open_world
        stats read_only ?destructive idempotent !open_world
        remember ?read_only !destructive ?idempotent !open_world
        decide ?read_only !destructive ?idempotent !open_world
        learn ?read_only !destructive ?idempotent !open_world
        confirm ?read_only !destructive idempotent !open_world
        pin ?read_only !destructive idempotent !open_world
        rollback ?read_only !destructive ?idempotent !open_world
        fact_add ?read_only !destructive ?idempotent !open_world
        fact_list read_only ?destructive idempotent !open_world
        drift read_only ?destructive idempotent !open_world
        synthesis_plan read_only ?destructive idempotent !open_world
        synthesize ?read_only !destructive ?idempotent !open_world
        lint ?read_only !destructive idempotent !open_world
        check ?read_only !destructive idempotent !open_world
        resolve ?read_only !destructive idempotent !open_world
        scan ?read_only !destructive idempotent !open_world
        sync ?read_only !destructive idempotent !open_world
        session_end ?read_only !destructive ?idempotent !open_world
    "#]]
    .assert_eq(&lines);
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symbol_why_remember_decide_and_sessions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "/// Entry point.\npub fn target() -> u32 {\n    helper()\n}\n\nfn helper() -> u32 {\n    1\n}\n",
    );
    let client = connect(scanned(root)).await;

    let r = ok(&client, "symbol", json!({"name": "target"})).await;
    let hits = structured(&r)["result"].as_array().expect("hits").clone();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["path"], "src/lib.rs");
    assert_eq!(hits[0]["line"], 1);
    assert!(text(&r).contains("src/lib.rs:2:"), "{}", text(&r));

    let r = ok(&client, "callers", json!({"symbol": "helper"})).await;
    assert_eq!(structured(&r)["result"]["calls"][0]["path"], "src/lib.rs");

    let r = ok(
        &client,
        "session_begin",
        json!({"task": "document the entry point"}),
    )
    .await;
    let session = structured(&r)["result"]["session_id"]
        .as_i64()
        .expect("session id");

    let r = ok(
        &client,
        "remember",
        json!({"subject": "src/lib.rs", "body": "`target()` is the entry point; it delegates to `helper()`.", "session": session, "summary": "entry point"}),
    )
    .await;
    let written = &structured(&r)["result"];
    assert_eq!(written["revision"]["version"], 1);
    assert_eq!(written["revision"]["author"], "agent:loci-test");
    assert_eq!(written["revision"]["session_id"], session);
    assert_eq!(
        text(&r),
        format!(
            "wrote src/lib.rs v1 by agent:loci-test in session {session}\n  symbol `target()` -> src/lib.rs#target@function\n  symbol `helper()` -> src/lib.rs#helper@function\n"
        )
    );

    // expect_version guards against a lost update; operation_id makes retries safe.
    let r = call(
        &client,
        "remember",
        json!({"subject": "src/lib.rs", "body": "other", "expect_version": 0}),
    )
    .await
    .expect("a tool result");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(structured(&r)["error"]["kind"], "conflict");
    let args = json!({"text": "Keep `helper()` private.", "subject": "src/lib.rs", "session": session, "operation_id": "op-1"});
    let first = ok(&client, "decide", args.clone()).await;
    let again = ok(&client, "decide", args).await;
    assert_eq!(
        structured(&first)["result"]["revision"]["version"],
        structured(&again)["result"]["revision"]["version"]
    );
    assert_eq!(structured(&again)["result"]["replayed"], true);
    ok(
        &client,
        "learn",
        json!({"text": "Renaming `helper` breaks the bindings.", "session": session}),
    )
    .await;

    let r = ok(&client, "why", json!({"target": "src/lib.rs:2"})).await;
    let why = &structured(&r)["result"];
    assert_eq!(why["subject"], "src/lib.rs");
    assert_eq!(why["revision"]["session_id"], session);
    assert_eq!(why["session"]["task"], "document the entry point");

    let r = ok(&client, "why", json!({"query": "private"})).await;
    assert_eq!(structured(&r)["result"]["subject"], "decision:1");

    let r = ok(
        &client,
        "search",
        json!({"query": "entry point", "kinds": ["memory"]}),
    )
    .await;
    let hits = structured(&r)["result"].as_array().expect("hits").clone();
    assert!(hits.iter().any(|h| h["id"] == "src/lib.rs"), "{}", text(&r));
    let r = ok(
        &client,
        "context",
        json!({"query": "entry point", "budget": 2000, "floor": 0.0, "open_files": ["src/lib.rs"]}),
    )
    .await;
    let answer = &structured(&r)["result"];
    assert_eq!(answer["abstained"], false, "{}", text(&r));
    assert!(
        answer["items"]
            .as_array()
            .is_some_and(|i| i.iter().any(|i| i["path"] == "src/lib.rs")),
        "{}",
        text(&r)
    );
    // Nothing relevant: an explicit abstention, not an error.
    let r = ok(
        &client,
        "context",
        json!({"query": "kubernetes helm chart"}),
    )
    .await;
    assert_eq!(structured(&r)["result"]["abstained"], true);
    assert!(text(&r).contains("relevant enough"), "{}", text(&r));
    let (message, argument) =
        invalid(&client, "search", json!({"query": "x", "kinds": ["blog"]})).await;
    assert_eq!(argument, "kinds[0]", "{message}");

    let r = ok(&client, "history", json!({"subject": "decisions"})).await;
    assert_eq!(
        structured(&r)["result"]["revisions"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    let r = ok(
        &client,
        "session_end",
        json!({"session": session, "summary": "documented the entry point"}),
    )
    .await;
    let digest = &structured(&r)["result"]["digest"];
    assert_eq!(digest["decisions"][0], "Keep `helper()` private.");
    let r = ok(&client, "recap", json!({})).await;
    assert_eq!(
        structured(&r)["result"][0]["session"]["session_id"],
        session
    );

    // Not found is a tool result, not a protocol error.
    let r = call(&client, "why", json!({"target": "nothing says this"}))
        .await
        .expect("a tool result");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(structured(&r)["error"]["kind"], "not_found");
    assert!(text(&r).contains("nothing says this"));
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_errors_are_tool_results_naming_the_argument() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.rs", "fn a() {}\n");
    let client = connect(scanned(dir.path())).await;
    let cases = [
        ("symbol", json!({}), "name", "missing field"),
        ("symbol", json!({"name": 42}), "name", "invalid type"),
        ("symbol", json!({"nam": "a"}), "nam", "unknown field"),
        ("symbol", json!({"name": "  "}), "name", "must not be empty"),
        (
            "impact",
            json!({"target": "a", "depth": -1}),
            "depth",
            "invalid value",
        ),
        (
            "symbol",
            json!({"name": "a", "cursor": "bogus"}),
            "cursor",
            "not a cursor",
        ),
        (
            "remember",
            json!({"subject": "../etc/passwd", "body": "x"}),
            "subject",
            "leaves the workspace",
        ),
        (
            "session_end",
            json!({"session": "one"}),
            "session",
            "invalid type",
        ),
        (
            "fact_add",
            json!({"claim": "c", "cmd": "true"}),
            "expect_output",
            "expect_exit",
        ),
        (
            "impact",
            json!({"target": "a.rs", "min_confidence": 1.5}),
            "min_confidence",
            "1.5 is no confidence",
        ),
        (
            "callers",
            json!({"symbol": "a", "min_confidence": -1}),
            "min_confidence",
            "-1 is no confidence",
        ),
        (
            "why",
            json!({"target": "a.rs:99"}),
            "target",
            "line 99 is past the end of `a.rs`, which has 1 line",
        ),
    ];
    for (tool, args, argument, words) in cases {
        let (message, named) = invalid(&client, tool, args.clone()).await;
        assert_eq!(named, argument, "{tool} {args}: {message}");
        assert!(
            message.contains(&format!("`{argument}`")),
            "{tool} {args}: {message}"
        );
        assert!(message.contains(words), "{tool} {args}: {message}");
    }
    // Only an unknown tool is a protocol error (MCP 2025-11-25, "Error Handling").
    match call(&client, "no_such_tool", json!({})).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(
                (e.code, e.message.as_ref()),
                (
                    ErrorCode::INVALID_PARAMS,
                    "unknown tool `no_such_tool`; call tools/list for the available tools"
                )
            );
        }
        other => panic!("expected invalid params, got {other:?}"),
    }
    // The session survives every one of them.
    ok(&client, "symbol", json!({"name": "a"})).await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lint_resolve_and_drift() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "src/a.rs", "pub fn a() {}\n");
    let client = connect(scanned(root)).await;
    ok(
        &client,
        "remember",
        json!({"subject": "src/a.rs", "body": "Configuration lives in `src/config.rs`."}),
    )
    .await;
    let r = ok(&client, "lint", json!({})).await;
    let found = structured(&r)["result"]["contradictions"]
        .as_array()
        .expect("contradictions")
        .clone();
    assert_eq!(found.len(), 1, "{}", text(&r));
    assert_eq!(found[0]["kind"], "missing_path");
    assert_eq!(found[0]["target"], "src/config.rs");
    let id = found[0]["contradiction_id"].as_i64().expect("id");
    let r = ok(&client, "check", json!({})).await;
    assert!(structured(&r)["result"]["passed"].is_boolean());

    let r = ok(
        &client,
        "resolve",
        json!({"id": id, "notes": "written before the file"}),
    )
    .await;
    assert_eq!(structured(&r)["result"]["contradiction_id"], id);
    let r = ok(&client, "lint", json!({})).await;
    assert_eq!(structured(&r)["result"]["contradictions"], json!([]));
    let r = call(&client, "resolve", json!({"id": 9999}))
        .await
        .expect("a tool result");
    assert_eq!(structured(&r)["error"]["kind"], "not_found");

    write(root, "src/a.rs", "pub fn a() -> u8 {\n    1\n}\n");
    let r = ok(&client, "drift", json!({})).await;
    let files = structured(&r)["result"]["files"]
        .as_array()
        .expect("files")
        .clone();
    assert!(
        files
            .iter()
            .any(|f| f["path"] == "src/a.rs" && f["kind"] != "add"),
        "the edit is in the drift: {}",
        text(&r)
    );
    assert_eq!(
        structured(&r)["freshness"]["refreshed"],
        json!(["src/a.rs"])
    );
    client.cancel().await.ok();
}

/// Case B25: a file rewritten on disk (no editor, no scan) is rescanned before answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b25_symbol_after_out_of_band_edit_reports_the_new_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let body = "fn target() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n";
    let before: String = (1..=9)
        .map(|i| format!("// line {i}\n"))
        .collect::<String>()
        + body;
    write(root, "a.rs", &before);
    let client = connect(scanned(root)).await;
    let r = ok(&client, "symbol", json!({"name": "target"})).await;
    assert_eq!(
        structured(&r)["result"][0]["line"],
        9,
        "fn target() is on line 10"
    );

    let after: String = (1..=5).map(|i| format!("// new {i}\n")).collect::<String>() + &before;
    write(root, "a.rs", &after);
    let r = ok(&client, "symbol", json!({"name": "target"})).await;
    let v = structured(&r);
    assert_eq!(v["result"][0]["line"], 14, "{}", text(&r));
    assert_eq!(v["result"][0]["end_line"], 17);
    assert_eq!(v["freshness"]["refreshed"], json!(["a.rs"]));
    assert_eq!(v["stale_warnings"], json!([]));
    assert_eq!(
        text(&r),
        "a.rs:15: function target  [a.rs#target@function]\n    fn target() {\nrefreshed before answering: a.rs\n"
    );
    // The line the answer names holds the definition in the file as it is now.
    let line = after.lines().nth(14).unwrap_or("");
    assert_eq!(line, "fn target() {");

    // A deleted file disappears from answers at once.
    std::fs::remove_file(root.join("a.rs")).expect("remove");
    let r = ok(&client, "symbol", json!({"name": "target"})).await;
    assert_eq!(structured(&r)["result"], json!([]));
    assert_eq!(structured(&r)["freshness"]["refreshed"], json!(["a.rs"]));
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_answers_are_paged_by_items() {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..150 {
        write(
            dir.path(),
            &format!("m{i:03}.rs"),
            "/// A function with a long enough doc comment to make each hit a few hundred bytes.\npub fn dup() {}\n",
        );
    }
    let client = connect(scanned(dir.path())).await;
    let mut cursor: Option<String> = None;
    let mut keys = BTreeSet::new();
    let mut pages = 0;
    loop {
        let mut args = json!({"name": "dup"});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let r = ok(&client, "symbol", args).await;
        let v = structured(&r);
        pages += 1;
        for hit in v["result"].as_array().expect("list") {
            assert!(keys.insert(hit["key"].as_str().unwrap_or("").to_string()));
        }
        assert!(serde_json::to_string(v).map_or(0, |s| s.len()) < 32 * 1024);
        match v["page"]["next_cursor"].as_str() {
            Some(next) => {
                assert_eq!(v["limits"]["truncated"], true);
                assert!(text(&r).contains(&format!("cursor \"{next}\"")));
                cursor = Some(next.to_string());
            }
            None => break,
        }
        assert!(pages < 50, "paging terminates");
    }
    assert_eq!(keys.len(), 150);
    assert!(pages > 1, "150 hits do not fit one page");
    client.cancel().await.ok();
}

/// Raw JSON-RPC over the duplex: lines in, lines out.
struct Raw {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

impl Raw {
    fn new(ws: Workspace) -> Raw {
        let (r, w) = tokio::io::split(serve(ws));
        Raw {
            reader: BufReader::new(r),
            writer: w,
        }
    }

    async fn send(&mut self, lines: &[String]) {
        let mut all = String::new();
        for l in lines {
            all.push_str(l);
            all.push('\n');
        }
        self.writer.write_all(all.as_bytes()).await.expect("write");
        self.writer.flush().await.expect("flush");
    }

    /// The next line, which must be one complete JSON object.
    async fn line(&mut self) -> (String, Value) {
        let mut line = String::new();
        let n = tokio::time::timeout(TIMEOUT, self.reader.read_line(&mut line))
            .await
            .expect("a line in time")
            .expect("read");
        assert!(n > 0, "the server closed its output");
        assert!(line.ends_with('\n'));
        let v: Value = serde_json::from_str(line.trim_end_matches('\n'))
            .unwrap_or_else(|e| panic!("not one JSON message: {e}: {line:.200}"));
        (line, v)
    }

    async fn initialize(&mut self, send_initialized: bool) {
        let mut lines = vec![json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string()];
        if send_initialized {
            lines
                .push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        }
        self.send(&lines).await;
        let (_, v) = self.line().await;
        assert_eq!(v["id"], 0);
        assert!(v["result"]["protocolVersion"].is_string(), "{v}");
    }
}

fn tool_call(id: u64, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}).to_string()
}

/// Case B23: 20 concurrent calls each answering ~200 KB of text full of newlines and
/// quotes: exactly 20 responses, one per id, each a single line of valid JSON, capped
/// with a cursor to page; paging reassembles the whole answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b23_twenty_large_concurrent_answers_are_whole_capped_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.rs", "fn a() {}\n");
    let mut ws = scanned(dir.path());
    let unit = "line with \"quotes\", a backslash \\ and\ttabs — ünïcödé\n";
    let big = unit.repeat(200 * 1024 / unit.len() + 1);
    assert!(big.len() >= 200 * 1024);
    ws.remember("topic:big", &big, &Default::default())
        .expect("remember");
    let mut raw = Raw::new(ws);
    raw.initialize(true).await;
    let calls: Vec<String> = (1..=20)
        .map(|id| tool_call(id, "show", json!({"subject": "topic:big"})))
        .collect();
    raw.send(&calls).await;
    let mut ids = BTreeSet::new();
    while ids.len() < 20 {
        let (line, v) = raw.line().await;
        let Some(id) = v["id"].as_u64() else {
            continue; // a notification
        };
        assert!(ids.insert(id), "one response per id ({id} twice)");
        assert!(
            line.len() < 64 * 1024,
            "response {id} is {} bytes",
            line.len()
        );
        assert_eq!(line.matches('\n').count(), 1);
        let s = &v["result"]["structuredContent"];
        assert_eq!(s["limits"]["truncated"], true);
        assert_eq!(
            s["page"]["next_cursor"],
            format!("byte:{}", s["page"]["bytes"])
        );
    }
    assert_eq!(ids, (1..=20).collect::<BTreeSet<u64>>());

    // Page through the whole answer and check it is the page's body.
    let mut cursor = Some("byte:0".to_string());
    let mut full = String::new();
    let mut id = 100;
    while let Some(c) = cursor {
        id += 1;
        raw.send(&[tool_call(
            id,
            "show",
            json!({"subject": "topic:big", "cursor": c}),
        )])
        .await;
        let (line, v) = raw.line().await;
        assert_eq!(v["id"], id);
        assert!(line.len() < 64 * 1024);
        let t = v["result"]["content"][0]["text"].as_str().expect("text");
        let (_, window) = t.split_once('\n').expect("header line");
        full.push_str(window);
        cursor = v["result"]["structuredContent"]["page"]["next_cursor"]
            .as_str()
            .map(str::to_string);
        assert!(id < 200, "paging terminates");
    }
    // The pages reassemble the answer's text: the page's heading, then its body.
    let (heading, body) = full.split_once("\n\n").expect("heading");
    assert!(heading.starts_with("# topic:big — v1 by "), "{heading}");
    assert_eq!(body, big);
}

/// Tolerant lifecycle: a notification before `initialize`, no `initialized` at all, a
/// malformed line (`-32700`, the session continues), a batch (`-32600`), a bad request
/// with an id (error with that id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_is_tolerant() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.rs", "fn a() {}\n");
    let mut raw = Raw::new(scanned(dir.path()));
    raw.send(&[json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()])
        .await;
    raw.initialize(false).await;
    raw.send(&[json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string()])
        .await;
    let (_, v) = raw.line().await;
    assert_eq!(v["id"], 1);
    assert!(
        v["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() > 10)
    );

    raw.send(&["{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ".into()])
        .await;
    let (_, v) = raw.line().await;
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert_eq!(v["id"], Value::Null);

    raw.send(&["[1, 2]".into()]).await;
    let (_, v) = raw.line().await;
    assert_eq!(v["error"]["code"], -32600, "{v}");

    raw.send(&[
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "oops"}).to_string(),
    ])
    .await;
    let (_, v) = raw.line().await;
    assert_eq!(v["id"], 3, "{v}");
    assert!(v["error"]["code"].as_i64().is_some(), "{v}");

    raw.send(&[tool_call(4, "symbol", json!({"name": "a"}))])
        .await;
    let (_, v) = raw.line().await;
    assert_eq!(v["id"], 4);
    assert_eq!(v["result"]["structuredContent"]["result"][0]["name"], "a");
}

/// Fault found by the issue-6 fresh-user trial: on a real repository `context` at the
/// default budget answered "bytes 0..22597 of 35720 (pretty-printed JSON of the result);
/// more: call again with cursor" — the answer is its markdown plus every item's text
/// again, so a 2,000-token answer passed the 24 KiB page and the agent read JSON over two
/// calls instead of the answer. The text content is now the markdown alone, and the
/// structured items leave their text to the markdown when that makes the envelope fit
/// one page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_a_context_answer_within_its_budget_was_paged_as_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body: String = (0..40)
        .map(|i| format!("    step_{i} = \"rotate the \\\"signing\\\" key of the \\\"service\\\" account\" + str({i}) * 3  # keep it\n"))
        .collect();
    let source: String = (0..5)
        .map(|n| format!("def rotate_key_{n}(key):\n    \"\"\"Rotates the signing key.\"\"\"\n{body}    return key\n\n"))
        .collect();
    // Several files: the answer serves each file's best chunks.
    for f in 0..5 {
        write(dir.path(), &format!("keys_{f}.py"), &source);
    }
    let client = connect(scanned(dir.path())).await;
    let r = ok(
        &client,
        "context",
        json!({"query": "rotate the signing key", "budget": 4000}),
    )
    .await;
    let s = structured(&r);
    assert!(s.get("page").is_none(), "{}", &text(&r)[..200]);
    let answer = &s["result"];
    let markdown = answer["markdown"].as_str().expect("markdown");
    assert_eq!(answer["items"][0]["tier"], "FULL");
    assert!(
        answer["items"][0].get("text").is_none(),
        "{} bytes of markdown, {} of JSON",
        markdown.len(),
        serde_json::to_string(answer).map_or(0, |j| j.len())
    );
    assert_eq!(
        answer["items_text"],
        "left out of the items to fit one page: `markdown` holds each item's text"
    );
    // The text content is the answer itself, markdown as `loci context` prints it.
    assert_eq!(text(&r), markdown);
    // With each item's text as well (the markdown's again), it would be over a page.
    let escaped = serde_json::to_string(markdown).expect("json").len();
    assert!(escaped * 2 > loci_mcp::render::PAGE_BYTES, "{escaped}");
}

/// Fault found by a fresh-user trial: the `context` tool's schema required `query`, so a
/// call with only `open_files` was refused though the engine answers about those files;
/// with neither, the engine answers empty (an abstention).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_context_with_open_files_and_no_question_was_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.py", "def alpha():\n    return 1\n");
    write(dir.path(), "b.py", "from a import alpha\n");
    let client = connect(scanned(dir.path())).await;
    let tools = tokio::time::timeout(TIMEOUT, client.list_all_tools())
        .await
        .expect("answer in time")
        .expect("tools");
    let schema = &tools
        .iter()
        .find(|t| t.name == "context")
        .expect("context tool")
        .input_schema;
    assert_eq!(schema.get("required"), None, "{schema:?}");
    let r = ok(&client, "context", json!({"open_files": ["a.py"]})).await;
    // Accepted, and answered with the open file itself: its outline and its symbol.
    let answer = &structured(&r)["result"];
    assert_eq!(
        (&answer["abstained"], &answer["markdown"]),
        (
            &json!(false),
            &json!(
                "## Context for the open files\n### a.py (open file: 1 symbol, 1 top-level)\n- `def alpha():` — line 1\nImported by 1 file(s): b.py\n\n### function alpha (a.py:1)\n```\ndef alpha():\n    return 1\n```\n\n\n_≈69 of 2000 tokens (an estimate: characters / 4)_\n"
            )
        ),
        "{}",
        text(&r)
    );
    // Neither: answered empty, an abstention that says there is nothing to look for (as
    // `search` answers an empty query).
    let r = ok(&client, "context", json!({})).await;
    let answer = &structured(&r)["result"];
    assert_eq!(
        (&answer["abstained"], &answer["markdown"]),
        (
            &json!(true),
            &json!("the question is empty and no files are open: there is nothing to look for.\n")
        ),
        "{}",
        text(&r)
    );
}

/// Fault found by a fresh-user trial: every call took the one workspace's mutex, so a long
/// write, `lint`, `check` or map refresh held up every read behind it. Reads now run on
/// connections of their own; writes still run one at a time, and what a write commits is
/// what the next read sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_a_long_write_held_up_every_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.py", "def alpha():\n    return 1\n");
    let server = LociServer::new(scanned(dir.path()), ServerOptions::default());
    let client = connect_to(serve_server(server.clone())).await;
    // The first read waits for the first refresh (the map may be loading in bulk).
    ok(&client, "symbol", json!({"name": "alpha"})).await;

    let held = server.hold_writer();
    let r = ok(&client, "symbol", json!({"name": "alpha"})).await;
    let hit = &structured(&r)["result"][0];
    assert_eq!(
        (&hit["path"], &hit["line"], &hit["kind"]),
        (&json!("a.py"), &json!(0), &json!("function"))
    );
    // A write waits for the writer.
    let peer = client.peer().clone();
    let args = json!({"subject": "a.py", "body": "`alpha()` answers 1."});
    let write = tokio::spawn(async move {
        let params = CallToolRequestParams::new("remember")
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        tokio::time::timeout(TIMEOUT, peer.call_tool(params)).await
    });
    drop(held);
    let written = write
        .await
        .expect("the write task")
        .expect("answer in time")
        .expect("remember");
    assert_eq!(written.is_error, Some(false), "{}", text(&written));
    // The next read, on a reader's own connection, sees the commit.
    let r = ok(&client, "show", json!({"subject": "a.py"})).await;
    assert!(text(&r).contains("`alpha()` answers 1."), "{}", text(&r));
    client.cancel().await.ok();
}

/// Fault (trial): a `scan` after a read answered `changed: false` with empty lists, since
/// the read had refreshed the map first: an agent asking what changed since its last scan
/// was told nothing had. The scan answer now names the files the refreshes rescanned since
/// the last `scan` call, with a note, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_a_scan_after_a_read_said_nothing_had_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.py", "def a():\n    pass\n");
    let client = connect(scanned(dir.path())).await;
    // Whatever the startup refresh found is reported by a first scan; start from none.
    ok(&client, "scan", json!({})).await;
    write(dir.path(), "b.py", "def b():\n    pass\n");
    write(dir.path(), "a.py", "def a():\n    return 2\n");
    let r = ok(&client, "symbol", json!({"name": "b"})).await;
    assert_eq!(
        structured(&r)["freshness"]["refreshed"],
        json!(["a.py", "b.py"])
    );
    let r = ok(&client, "scan", json!({})).await;
    let v = structured(&r);
    assert_eq!(
        (&v["result"]["changed"], &v["freshness"]["refreshed"]),
        (&json!(false), &json!(["a.py", "b.py"]))
    );
    assert!(
        v["capability"]["notes"].as_array().is_some_and(|n| n.contains(&json!(
            "2 changed files were already rescanned since the last `scan` call (the server refreshes the map before answers); this scan's lists leave them out, `freshness.refreshed` names the first 2"
        ))),
        "{}",
        text(&r)
    );
    // Said once: the next scan has nothing to add.
    let r = ok(&client, "scan", json!({})).await;
    assert_eq!(structured(&r)["freshness"]["refreshed"], json!([]));
    client.cancel().await.ok();
}

/// Fault found by a fresh-user trial: a `scan` that found about 1,000 changed files was
/// paged (`more: call again with cursor "byte:22489"`), but `scan` takes no cursor, and
/// calling it again scans again. Its path lists are cut to 50 entries each instead, with
/// the whole counts in a note, so the answer fits one page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_a_large_scan_answer_was_paged_with_a_cursor_scan_does_not_take() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.py", "def a():\n    pass\n");
    let client = connect(scanned(dir.path())).await;
    for i in 0..700 {
        write(
            dir.path(),
            &format!("pkg/module_with_a_long_name_{i:04}.py"),
            &format!("def f{i}():\n    return {i}\n"),
        );
    }
    let r = ok(&client, "scan", json!({})).await;
    let v = structured(&r);
    assert_eq!(v["result"]["added"].as_array().map(Vec::len), Some(50));
    assert_eq!(
        v["result"]["added"][0],
        "pkg/module_with_a_long_name_0000.py"
    );
    assert_eq!(v["page"], Value::Null, "{}", text(&r));
    assert!(!text(&r).contains("cursor"), "{}", text(&r));
    let notes = v["capability"]["notes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        notes.contains(&json!(
            "lists cut to their first 50 entries; whole counts: added 700 (`loci scan --json` lists every entry)"
        )),
        "{notes:?}"
    );
    // A read that refreshes many files first names only the first 50 (a second trial's
    // `symbol` after a branch switch listed 2,000 paths).
    for i in 0..80 {
        write(
            dir.path(),
            &format!("more/m{i:03}.py"),
            "def g():\n    pass\n",
        );
    }
    let r = ok(&client, "symbol", json!({"name": "a"})).await;
    let v = structured(&r);
    assert_eq!(
        v["freshness"]["refreshed"].as_array().map(Vec::len),
        Some(50)
    );
    let notes = v["capability"]["notes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        notes.contains(&json!(
            "refreshed 80 files from disk before answering; `freshness.refreshed` lists the first 50"
        )),
        "{notes:?}"
    );
    client.cancel().await.ok();
}

/// Fault found by a second fresh-user trial: a `lint` with 20,011 findings was paged as
/// 585 windows of raw JSON, each page running the whole lint again (3.8 s). Its lists are
/// cut to 50 entries with the whole counts in a note, as `scan`'s are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_a_large_lint_was_paged_as_raw_json_that_reran_the_lint() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.py", "def a():\n    pass\n");
    let client = connect(scanned(dir.path())).await;
    let body: String = (0..60).map(|i| format!("- `gone/p{i:02}.py`\n")).collect();
    ok(
        &client,
        "remember",
        json!({"subject": "a.py", "body": body}),
    )
    .await;
    let r = ok(&client, "lint", json!({})).await;
    let v = structured(&r);
    assert_eq!(
        v["result"]["contradictions"].as_array().map(Vec::len),
        Some(50)
    );
    assert_eq!(v["page"], Value::Null, "{}", text(&r));
    let notes = v["capability"]["notes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        notes.contains(&json!(
            "lists cut to their first 50 entries; whole counts: contradictions 60 (`loci lint --json` lists every entry)"
        )),
        "{notes:?}"
    );
    client.cancel().await.ok();
}

/// A call cancelled with `notifications/cancelled` stops its worker. The call (`remember`)
/// waits for the writer, which a long write holds; once cancelled, its worker stops waiting
/// while the writer is still held, writes nothing, and no answer is sent for it (rmcp drops
/// the answers of cancelled requests); the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_its_worker_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.py", "def alpha():\n    return 1\n");
    let server = LociServer::new(scanned(dir.path()), ServerOptions::default());
    let (r, w) = tokio::io::split(serve_server(server.clone()));
    let mut raw = Raw {
        reader: BufReader::new(r),
        writer: w,
    };
    raw.initialize(true).await;
    let held = server.hold_writer();
    raw.send(&[tool_call(
        7,
        "remember",
        json!({"subject": "a.py", "body": "`alpha()` answers 1."}),
    )])
    .await;
    let until = |want: usize| {
        let server = server.clone();
        async move {
            let deadline = tokio::time::Instant::now() + TIMEOUT;
            while server.calls_running() != want {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "calls running: {} (want {want})",
                    server.calls_running()
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    until(1).await;
    raw.send(&[
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "the user pressed stop"}})
        .to_string(),
    ])
    .await;
    // The worker stops while the writer is still held.
    until(0).await;
    drop(held);
    raw.send(&[
        json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}).to_string(),
        tool_call(9, "show", json!({"subject": "a.py"})),
    ])
    .await;
    let (_, pong) = raw.line().await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 8, "result": {}}));
    let (_, shown) = raw.line().await;
    assert_eq!(
        (
            &shown["id"],
            &shown["result"]["structuredContent"]["error"]["kind"]
        ),
        (&json!(9), &json!("not_found")),
        "nothing was written: {shown}"
    );
}

//! Secrets and the workspace boundary through the real doors: the language server neither
//! analyses nor serves a secret document, and no MCP tool or LSP command returns a secret's
//! contents, stores a credential in memory, or takes a path out of the workspace.
//!
//! Credential-shaped strings are assembled from pieces at run time, so this file is not
//! itself a secret to loci's own scan or to push protection.

use crate::support;

use std::path::Path;
use std::time::Duration;

use loci_engine::Workspace;
use loci_lsp::ServerOptions;
use loci_mcp::LociServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use support::lsp::{Client, init_params, uri};

const TIMEOUT: Duration = Duration::from_secs(60);

fn aws() -> String {
    ["AKIA", "Q7WJ2M5XRT3K9HBN"].concat()
}

fn write(dir: &Path, rel: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// A workspace with a dotenv file, a source file holding a key, ordinary code, and a
/// directory outside it that a link inside points to.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    write(&root, ".env", "SECRET_SAUCE=tomato\n");
    write(
        &root,
        "src/config.rs",
        &format!("pub fn cloud_key() -> &'static str {{ \"{}\" }}\n", aws()),
    );
    write(&root, "src/main.rs", "fn main() { run(); }\nfn run() {}\n");
    write(dir.path(), "outside/private.rs", "fn private_thing() {}\n");
    std::os::unix::fs::symlink(dir.path().join("outside"), root.join("linked")).unwrap();
    dir
}

// ---- the language server -------------------------------------------------------------

async fn lsp(root: &Path) -> Client {
    let options = ServerOptions {
        home_dir: None,
        ..ServerOptions::default()
    };
    let mut client = Client::start(options).await;
    client
        .initialize(init_params(
            Some(root),
            json!({ "initializationOptions": { "analyzedNotifications": true } }),
        ))
        .await;
    client.expect_progress_end().await;
    client
}

/// The `$/loci/analyzed` notification of `version` of `uri`: its params.
async fn analyzed(client: &mut Client, u: &str, version: i64) -> Value {
    client
        .expect(&format!("analyzed {u} v{version}"), |m| {
            m["method"] == "$/loci/analyzed"
                && m["params"]["uri"] == json!(u)
                && m["params"]["version"] == json!(version)
        })
        .await["params"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lsp_does_not_analyse_or_serve_a_dotenv_file_opened_in_the_editor() {
    let dir = workspace();
    let root = dir.path().join("ws").canonicalize().unwrap();
    let mut client = lsp(&root).await;
    let env = uri(&root.join(".env"));
    // Not open: nothing read from disk either.
    assert_eq!(client.hover(&env, 0, 2).await, Value::Null);
    client
        .open(&env, "dotenv", 1, "SECRET_SAUCE=tomato\n")
        .await;
    let params = analyzed(&mut client, &env, 1).await;
    assert_eq!(params["symbols"], json!(0));
    assert_eq!(client.hover(&env, 0, 2).await, Value::Null);
    assert_eq!(client.symbols(&env).await, Value::Null);
    let lenses = client
        .request_ok(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": env } }),
        )
        .await;
    assert_eq!(lenses, Value::Null);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lsp_stops_serving_a_document_while_it_holds_a_credential() {
    let dir = workspace();
    let root = dir.path().join("ws").canonicalize().unwrap();
    let mut client = lsp(&root).await;
    let config = uri(&root.join("src/config.rs"));
    // Not open and not in the map (its text holds a key): null.
    assert_eq!(client.hover(&config, 0, 8).await, Value::Null);
    let with_key = std::fs::read_to_string(root.join("src/config.rs")).unwrap();
    client.open(&config, "rust", 1, &with_key).await;
    assert_eq!(analyzed(&mut client, &config, 1).await["symbols"], json!(0));
    assert_eq!(client.symbols(&config).await, Value::Null);
    assert_eq!(client.hover(&config, 0, 8).await, Value::Null);
    // The key removed: analysed and served again.
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": config, "version": 2 }, "contentChanges": [{
                "text": "pub fn cloud_key() -> &'static str { env!(\"KEY\") }\n" }] }),
        )
        .await;
    assert_eq!(analyzed(&mut client, &config, 2).await["symbols"], json!(1));
    let symbols = client.symbols(&config).await;
    assert_eq!(symbols[0]["name"], json!("cloud_key"));
    // A markdown document with a credential gets no diagnostics for its false claims
    // until the credential is gone.
    let notes = uri(&root.join("README.md"));
    let text = format!("See `src/missing.rs`.\nKey: {}\n", aws());
    client.open(&notes, "markdown", 1, &text).await;
    analyzed(&mut client, &notes, 1).await;
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": notes, "version": 2 }, "contentChanges": [{
                "text": "See `src/missing.rs`.\n" }] }),
        )
        .await;
    let published = client
        .expect_notification("textDocument/publishDiagnostics")
        .await;
    assert_eq!(published["uri"], json!(notes));
    assert_eq!(
        published["version"],
        json!(2),
        "nothing was published for v1"
    );
    assert_eq!(published["diagnostics"][0]["code"], json!("missing_path"));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lsp_commands_refuse_credentials_and_paths_out_of_the_workspace() {
    let dir = workspace();
    let root = dir.path().join("ws").canonicalize().unwrap();
    let mut client = lsp(&root).await;
    let outside = dir.path().join("outside/private.rs").display().to_string();
    let cases = [
        (
            "loci.remember",
            json!({ "subject": "src/main.rs", "body": format!("key {}", aws()) }),
            "invalid argument `body`: contains a secret (aws_access_key_id) at line 1, column 5",
        ),
        (
            "loci.decide",
            json!({ "text": format!("use {}", aws()) }),
            "invalid argument `text`: contains a secret (aws_access_key_id) at line 1, column 5",
        ),
        (
            "loci.remember",
            json!({ "subject": "../outside/private.rs", "body": "x" }),
            "invalid argument `subject`: `../outside/private.rs` leaves the workspace (`..`)",
        ),
        (
            "loci.remember",
            json!({ "subject": "linked/private.rs", "body": "x" }),
            "invalid argument `subject`: `linked/private.rs` leads out of the workspace through the symbolic link `linked`",
        ),
        (
            "loci.confirm",
            json!({ "subject": outside }),
            "invalid argument `subject`: ",
        ),
        (
            "loci.context",
            json!({ "query": "run", "open_files": [outside] }),
            "invalid argument `open_files`: ",
        ),
        (
            "loci.impact",
            json!({ "target": "linked/private.rs" }),
            "invalid argument `target`: ",
        ),
        (
            "loci.why",
            json!({ "target": "../outside/private.rs:1" }),
            "invalid argument `target`: ",
        ),
    ];
    for (command, argument, message) in cases {
        let response = client.command(command, argument.clone()).await;
        assert_eq!(
            response["error"]["code"],
            json!(-32602),
            "{command} {argument}: {response}"
        );
        let text = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            text.starts_with(&format!("{command}: {message}")),
            "{command} {argument}: {text}"
        );
        assert!(!text.contains("AKIA"), "{text}");
    }
    client.shutdown().await;
}

// ---- the MCP server ------------------------------------------------------------------

type McpClient = RunningService<RoleClient, ClientConfig>;

async fn mcp(root: &Path) -> McpClient {
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let server = LociServer::new(ws, loci_mcp::ServerOptions::default());
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(server_io);
    tokio::spawn(loci_mcp::stdio::serve(server, r, w));
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("loci-test", "1"),
    );
    tokio::time::timeout(TIMEOUT, info.serve(client_io))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

async fn call(client: &McpClient, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
    let args = args.as_object().cloned().unwrap_or_default();
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    tokio::time::timeout(TIMEOUT, client.call_tool(params))
        .await
        .expect("answer in time")
}

/// The argument error a call answers: a tool result with `isError: true` whose
/// structured `error` names the argument (`kind` `invalid_argument`), as (argument, text).
async fn argument_error(client: &McpClient, tool: &str, args: &Value) -> (String, String) {
    match call(client, tool, args.clone()).await {
        Ok(r) if r.is_error == Some(true) => {
            let error = &r.structured_content.as_ref().expect("structured")["error"];
            assert_eq!(error["kind"], "invalid_argument", "{tool} {args}: {error}");
            let text = r
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<String>();
            (error["argument"].as_str().unwrap_or("").to_string(), text)
        }
        other => panic!("{tool} {args}: expected an argument error, got {other:?}"),
    }
}

/// Everything a call answered (text and structured content, or the error), as one string.
fn everything(result: &Result<CallToolResult, ServiceError>) -> String {
    match result {
        Ok(r) => format!("{:?} {:?}", r.content, r.structured_content),
        Err(e) => format!("{e:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_never_return_a_secret_files_contents() {
    let dir = workspace();
    let root = dir.path().join("ws").canonicalize().unwrap();
    let client = mcp(&root).await;
    let reads = [
        (
            "context",
            json!({ "query": "cloud key config secret sauce" }),
        ),
        (
            "context",
            json!({ "query": "run", "open_files": ["src/config.rs", ".env"] }),
        ),
        ("search", json!({ "query": "cloud_key" })),
        ("search", json!({ "query": "SECRET_SAUCE" })),
        ("symbol", json!({ "name": "cloud_key" })),
        ("references", json!({ "name": "cloud_key" })),
        ("deps", json!({ "path": "src/config.rs" })),
        ("impact", json!({ "target": "src/config.rs" })),
        ("why", json!({ "target": "src/config.rs:1" })),
        ("show", json!({ "subject": ".env" })),
        ("drift", json!({})),
        ("lint", json!({})),
        ("scan", json!({})),
    ];
    for (tool, args) in reads {
        let answer = everything(&call(&client, tool, args.clone()).await);
        for leaked in ["AKIA", "tomato", "static str"] {
            assert!(
                !answer.contains(leaked),
                "{tool} {args} returned {leaked}: {answer}"
            );
        }
    }
    let symbol = call(&client, "symbol", json!({ "name": "cloud_key" }))
        .await
        .unwrap();
    assert_eq!(
        symbol.structured_content.as_ref().unwrap()["result"],
        json!([])
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_refuse_credentials_and_paths_out_of_the_workspace() {
    let dir = workspace();
    let root = dir.path().join("ws").canonicalize().unwrap();
    let client = mcp(&root).await;
    let outside = dir.path().join("outside/private.rs").display().to_string();
    let key = aws();
    let cases = [
        (
            "remember",
            json!({ "subject": "src/main.rs", "body": format!("k {key}") }),
            "body",
        ),
        ("decide", json!({ "text": format!("k {key}") }), "text"),
        ("learn", json!({ "text": format!("k {key}") }), "text"),
        (
            "fact_add",
            json!({ "claim": "c", "cmd": format!("echo {key}"), "expect_exit": 0 }),
            "cmd",
        ),
        (
            "session_begin",
            json!({ "task": format!("rotate {key}") }),
            "task",
        ),
        (
            "remember",
            json!({ "subject": "src/main.rs", "body": "ok", "summary": key }),
            "summary",
        ),
        (
            "remember",
            json!({ "subject": outside, "body": "x" }),
            "subject",
        ),
        (
            "remember",
            json!({ "subject": "linked/private.rs", "body": "x" }),
            "subject",
        ),
        (
            "show",
            json!({ "subject": "../outside/private.rs" }),
            "subject",
        ),
        ("history", json!({ "subject": "linked" }), "subject"),
        (
            "confirm",
            json!({ "subject": "linked/private.rs" }),
            "subject",
        ),
        ("pin", json!({ "subject": outside }), "subject"),
        ("deps", json!({ "path": outside }), "path"),
        (
            "impact",
            json!({ "target": "../outside/private.rs" }),
            "target",
        ),
        (
            "context",
            json!({ "query": "x", "open_files": ["linked/private.rs"] }),
            "open_files",
        ),
        (
            "search",
            json!({ "query": "private_thing", "path": "linked" }),
            "path",
        ),
        ("why", json!({ "target": outside }), "target"),
    ];
    for (tool, args, argument) in cases {
        let (named, message) = argument_error(&client, tool, &args).await;
        assert_eq!(named, argument, "{tool} {args}: {message}");
        assert!(!message.contains("AKIA"), "{message}");
    }
    let listed = call(&client, "fact_list", json!({})).await.unwrap();
    assert_eq!(
        listed.structured_content.as_ref().unwrap()["result"],
        json!([])
    );
    client.cancel().await.ok();
}

/// MCP memory tools apply the new rules: a URL password, a password assignment and an
/// AWS secret access key are refused with an argument error (`isError`) naming the argument, and the
/// message names the rule and position but holds nothing of the value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_refuse_assignment_and_url_credentials_without_echoing_them() {
    let dir = workspace();
    let root = dir.path().join("ws").canonicalize().unwrap();
    let client = mcp(&root).await;
    let password = ["s3cr3t", "Pa55"].concat();
    let aws_secret = ["q7WJ2m5X/rT3k9HBn", "4Lp8Vd1Zs6Yc0Fg+uE2hRj7"].concat();
    let cases = [
        (
            "remember",
            json!({ "subject": "src/main.rs",
                    "body": format!("DB at\nmysql://app:{password}@db.internal/app") }),
            "body",
            "contains a secret (url_credentials) at line 2, column 13;",
        ),
        (
            "decide",
            json!({ "text": format!("use password: {password} locally") }),
            "text",
            "contains a secret (password_assignment) at line 1, column 15;",
        ),
        (
            "learn",
            json!({ "text": format!("AWS_SECRET_ACCESS_KEY={aws_secret}") }),
            "text",
            "contains a secret (aws_secret_access_key) at line 1, column 23;",
        ),
    ];
    for (tool, args, argument, rule) in cases {
        let result = call(&client, tool, args.clone()).await;
        let all = everything(&result);
        assert!(
            !all.contains(&password) && !all.contains(&aws_secret),
            "{tool}: {all}"
        );
        let (named, message) = argument_error(&client, tool, &args).await;
        assert_eq!(named, argument, "{tool}: {message}");
        assert!(message.contains(rule), "{tool}: {message}");
    }
    // Code that reads a password is not a credential.
    let ok = call(
        &client,
        "learn",
        json!({ "text": "`password = getpass()` prompts; `password=None` skips auth" }),
    )
    .await;
    assert!(ok.is_ok(), "{}", everything(&ok));
    client.cancel().await.ok();
}

//! End-to-end tests of `loci lsp` over in-memory streams: lifecycle, capabilities,
//! document sync, positions, the overlay, hover, symbols, commands and outside edits.
//! Each case from `shared/cases` is named after its id (B01, B03, ...).

use crate::support;

use std::path::Path;

use expect_test::expect;
use loci_lsp::ServerOptions;
use serde_json::{Value, json};
use support::lsp::{Client, frame, init_params, uri};

fn options() -> ServerOptions {
    ServerOptions {
        home_dir: None,
        ..ServerOptions::default()
    }
}

fn write(dir: &Path, rel: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// A server on `root` (scanned) or in single-file mode.
async fn start(root: Option<&Path>, extra: Value) -> Client {
    let mut client = Client::start(options()).await;
    client.initialize(init_params(root, extra)).await;
    if root.is_some() {
        client.expect_progress_end().await;
    }
    client
}

/// Names and selection starts of a documentSymbol answer, flattened, one per line.
fn outline(symbols: &Value) -> String {
    fn walk(out: &mut String, depth: usize, list: &Value) {
        for s in list.as_array().into_iter().flatten() {
            out.push_str(&format!(
                "{}{} {} {}:{}\n",
                "  ".repeat(depth),
                s["kind"],
                s["name"].as_str().unwrap_or("?"),
                s["selectionRange"]["start"]["line"],
                s["selectionRange"]["start"]["character"],
            ));
            walk(out, depth + 1, &s["children"]);
        }
    }
    let mut out = String::new();
    walk(&mut out, 0, symbols);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capabilities_registration_and_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.rs", "fn a() {}\n");
    let mut client = Client::start(options()).await;
    let params = init_params(
        Some(dir.path()),
        json!({ "capabilities": { "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } } } }),
    );
    let result = client.initialize(params).await;
    expect![[r#"
        {
          "capabilities": {
            "codeActionProvider": {
              "codeActionKinds": [
                "quickfix",
                "source.loci"
              ],
              "resolveProvider": false
            },
            "codeLensProvider": {
              "resolveProvider": true
            },
            "documentSymbolProvider": true,
            "executeCommandProvider": {
              "commands": [
                "loci.context",
                "loci.why",
                "loci.impact",
                "loci.remember",
                "loci.decide",
                "loci.learn",
                "loci.confirm",
                "loci.resolve",
                "loci.recap",
                "loci.scan",
                "loci.sync",
                "loci.synthesize",
                "loci.debug.text"
              ]
            },
            "experimental": {
              "loci": {
                "analyzedNotification": "$/loci/analyzed",
                "backgroundScan": true,
                "overlay": true,
                "pagesBehindNotification": "$/loci/pagesBehind"
              }
            },
            "hoverProvider": true,
            "textDocumentSync": {
              "change": 2,
              "openClose": true,
              "save": true
            },
            "workspace": {
              "workspaceFolders": {
                "changeNotifications": true,
                "supported": true
              }
            }
          },
          "serverInfo": {
            "name": "loci",
            "version": "0.1.0"
          }
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&result).unwrap());
    let registration = client
        .expect_notification("client/registerCapability")
        .await;
    assert_eq!(
        registration,
        json!({ "registrations": [{
            "id": "loci-watched-files",
            "method": "workspace/didChangeWatchedFiles",
            "registerOptions": { "watchers": [{ "globPattern": "**/*" }] }
        }] })
    );
    client.expect_progress_end().await;
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b01_content_length_counts_bytes_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "cafe.rs", "");
    let u = uri(&path);
    let mut client = start(None, json!({})).await;
    // didOpen and hover in one write: the server must read exactly Content-Length bytes
    // of the first frame to find the second.
    let text = "// café 😀 你好\nfn café() {}\n";
    let open = json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": u, "languageId": "rust", "version": 1, "text": text } } });
    let (id, hover) = client.request_message(
        "textDocument/hover",
        json!({ "textDocument": { "uri": u }, "position": { "line": 1, "character": 4 } }),
    );
    let mut bytes = frame(&open);
    bytes.extend(frame(&hover));
    client.send_raw(&bytes).await;
    // The reader takes exactly Content-Length bytes and parses them as JSON: a
    // character-counted frame from the server fails here.
    let response = client.response(id).await;
    let markdown = response["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(markdown.contains("`café`"), "{markdown}");
    assert_eq!(
        response["result"]["range"],
        json!({ "start": { "line": 1, "character": 3 }, "end": { "line": 1, "character": 7 } })
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b03_changes_are_applied_in_send_order() {
    let dir = tempfile::tempdir().unwrap();
    let u = uri(&dir.path().join("order.rs"));
    let mut client = start(None, json!({})).await;
    client.open(&u, "rust", 1, "").await;
    let alphabet: Vec<char> = ('0'..='9').chain('a'..='z').collect();
    let mut expected = String::new();
    let mut bytes = Vec::new();
    for i in 0..200u32 {
        let c = alphabet[i as usize % alphabet.len()];
        bytes.extend(frame(
            &json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": u, "version": i + 2 },
            "contentChanges": [{ "range": {
                "start": { "line": 0, "character": i }, "end": { "line": 0, "character": i } },
                "text": c.to_string() }] } }),
        ));
        expected.push(c);
    }
    client.send_raw(&bytes).await;
    let buffer = client.buffer(&u).await;
    assert_eq!(
        buffer,
        json!({ "uri": u, "version": 201, "text": expected })
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b05_position_encoding_is_negotiated_and_used_both_ways() {
    // `target` starts at byte 14, UTF-16 unit 12, code point 11.
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.rs", "/* 😀 */ fn target() {}");
    let u = uri(&path);
    for (offered, announced, character) in [
        (Value::Null, Value::Null, 12),
        (json!(["utf-16"]), json!("utf-16"), 12),
        (json!(["utf-8", "utf-32", "utf-16"]), json!("utf-8"), 14),
        (json!(["utf-32", "utf-16"]), json!("utf-32"), 11),
    ] {
        let mut client = Client::start(options()).await;
        let extra = if offered.is_null() {
            json!({})
        } else {
            json!({ "capabilities": { "general": { "positionEncodings": offered } } })
        };
        let result = client
            .initialize(init_params(Some(dir.path()), extra))
            .await;
        client.expect_progress_end().await;
        assert_eq!(
            result["capabilities"]["positionEncoding"], announced,
            "{offered}"
        );
        client.open(&u, "rust", 1, "/* 😀 */ fn target() {}").await;
        let symbols = client.symbols(&u).await;
        assert_eq!(
            symbols[0]["selectionRange"],
            json!({ "start": { "line": 0, "character": character }, "end": { "line": 0, "character": character + 6 } }),
            "{offered}"
        );
        // In: a hover at the name's first unit in the negotiated encoding finds it.
        let hover = client.hover(&u, 0, character).await;
        assert_eq!(hover["range"], symbols[0]["selectionRange"], "{offered}");
        client.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b06_several_changes_in_one_notification_apply_in_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(None, json!({})).await;
    let range = |l0: u32, c0: u32, l1: u32, c1: u32| json!({ "start": { "line": l0, "character": c0 }, "end": { "line": l1, "character": c1 } });
    for (name, changes, expected) in [
        (
            "x.txt",
            json!([{ "range": range(0, 1, 0, 1), "text": "x" }, { "range": range(0, 2, 0, 2), "text": "y" }]),
            "axyb",
        ),
        (
            "y.txt",
            json!([{ "range": range(0, 0, 0, 0), "text": "1\n" }, { "range": range(1, 0, 1, 1), "text": "Z" }]),
            "1\nZb",
        ),
    ] {
        let u = uri(&dir.path().join(name));
        client.open(&u, "plaintext", 1, "ab").await;
        client
            .notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": u, "version": 2 }, "contentChanges": changes }),
            )
            .await;
        assert_eq!(client.buffer(&u).await["text"], json!(expected));
    }
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b08_boundary_positions_are_clamped_or_null() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(None, json!({})).await;
    // (a) End one line past the last line: the whole document.
    let a = uri(&dir.path().join("a.txt"));
    client.open(&a, "plaintext", 1, "a\nb\nc").await;
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": a, "version": 2 }, "contentChanges": [{
                "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 3, "character": 0 } },
                "text": "" }] }),
        )
        .await;
    assert_eq!(
        client.buffer(&a).await,
        json!({ "uri": a, "version": 2, "text": "" })
    );
    // (b) A character far past the line end is the line end: a normal answer.
    let b = uri(&dir.path().join("b.rs"));
    client.open(&b, "rust", 1, "fn abc() {}\n").await;
    assert_eq!(client.hover(&b, 0, 1_000_000).await, Value::Null);
    let at_end = json!({ "start": { "line": 0, "character": 1_000_000 }, "end": { "line": 0, "character": 1_000_000 } });
    let actions = client
        .request_ok(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": b }, "range": at_end, "context": { "diagnostics": [] } }),
        )
        .await;
    assert_eq!(actions, json!([]));
    // On the name, the same request offers the symbol's impact.
    let on_name =
        json!({ "start": { "line": 0, "character": 4 }, "end": { "line": 0, "character": 4 } });
    let actions = client
        .request_ok(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": b }, "range": on_name, "context": { "diagnostics": [] } }),
        )
        .await;
    assert_eq!(
        actions,
        json!([{ "title": "loci: impact of `abc`", "kind": "source.loci", "command": {
            "title": "loci: impact of `abc`", "command": "loci.impact",
            "arguments": [{ "target": "b.rs#abc@function", "uri": b }] } }])
    );
    // (c) A line past the end: null, and the server goes on.
    let c = uri(&dir.path().join("c.rs"));
    client.open(&c, "rust", 1, "fn c() {}").await;
    assert_eq!(client.hover(&c, 50, 0).await, Value::Null);
    assert!(client.hover_markdown(&c, 0, 3).await.is_some());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b09_change_to_an_unopened_document_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let ghost = uri(&dir.path().join("ghost.rs"));
    let mut client = start(None, json!({})).await;
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": ghost, "version": 2 }, "contentChanges": [{
                "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } },
                "text": "x" }] }),
        )
        .await;
    let log = client
        .expect("the dropped-change log line", |m| {
            m["method"] == "window/logMessage"
                && m["params"]["message"]
                    .as_str()
                    .is_some_and(|s| s.contains("dropped didChange"))
        })
        .await;
    assert_eq!(
        log["params"],
        json!({ "type": 2, "message": format!("loci: dropped didChange for {ghost} (version 2): the document is not open") })
    );
    // No phantom document.
    let response = client
        .command("loci.debug.text", json!({ "uri": ghost }))
        .await;
    assert_eq!(response["error"]["code"], json!(1001));
    // The later didOpen is adopted normally.
    client.open(&ghost, "rust", 1, "fn a() {}").await;
    assert_eq!(
        client.buffer(&ghost).await,
        json!({ "uri": ghost, "version": 1, "text": "fn a() {}" })
    );
    expect![[r#"
        12 a 0:3
    "#]]
    .assert_eq(&outline(&client.symbols(&ghost).await));
    // Closed documents drop changes too.
    client
        .notify(
            "textDocument/didClose",
            json!({ "textDocument": { "uri": ghost } }),
        )
        .await;
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": ghost, "version": 3 }, "contentChanges": [{ "text": "fn b() {}" }] }),
        )
        .await;
    let response = client
        .command("loci.debug.text", json!({ "uri": ghost }))
        .await;
    assert_eq!(response["error"]["code"], json!(1001));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b10a_null_root_is_single_file_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "solo.rs", "fn hello() {}\n");
    let u = uri(&path);
    let mut client = Client::start(options()).await;
    let params = init_params(
        None,
        json!({ "rootUri": null, "rootPath": null, "workspaceFolders": null }),
    );
    client.initialize(params).await;
    let log = client
        .expect("the single-file log line", |m| {
            m["method"] == "window/logMessage"
        })
        .await;
    assert_eq!(
        log["params"]["message"],
        json!("loci: no workspace folder: single-file mode (open documents only, no map)")
    );
    client.open(&u, "rust", 1, "fn hello() {}\n").await;
    expect![[r#"
        12 hello 0:3
    "#]]
    .assert_eq(&outline(&client.symbols(&u).await));
    expect![[r#"
        **function** `hello`

        ```rust
        fn hello() {}
        ```

        ---

        callers unknown (single-file mode: no map) · `solo.rs#hello@function`"#]]
    .assert_eq(&client.hover_markdown(&u, 0, 4).await.unwrap_or_default());
    let response = client
        .command("loci.impact", json!({ "target": "hello" }))
        .await;
    assert_eq!(
        response["error"],
        json!({ "code": 1003, "message": "loci.impact: no workspace folder: the server runs in single-file mode" })
    );
    // Nothing was walked or created.
    assert!(!dir.path().join(".loci").exists());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b10b_home_directory_walk_is_bounded() {
    let home = tempfile::tempdir().unwrap();
    for i in 0..30 {
        write(
            home.path(),
            &format!("f{i:02}.rs"),
            &format!("fn f{i}() {{}}\n"),
        );
    }
    let mut client = Client::start(ServerOptions {
        home_dir: Some(home.path().to_path_buf()),
        ..ServerOptions::default()
    })
    .await;
    client
        .initialize(init_params(
            Some(home.path()),
            json!({ "initializationOptions": { "maxFiles": 10 } }),
        ))
        .await;
    let message = client.expect_notification("window/showMessage").await;
    let root = home.path().canonicalize().unwrap();
    assert_eq!(
        message,
        json!({ "type": 2, "message": format!(
            "loci: the workspace folder {} is your home directory: indexing at most 10 files. \
             Open a project folder instead, or set initializationOptions.maxFiles.",
            root.display()) })
    );
    client.expect_progress_end().await;
    let scan = client.command("loci.scan", json!({})).await;
    assert_eq!(
        scan["result"]["result"]["totals"]["files"],
        json!(10),
        "{scan}"
    );
    // The walk stopped at the cap: the unwalked rest is one entry for the root.
    assert_eq!(
        scan["result"]["result"]["skipped"],
        json!({ "file_limit": 1 })
    );
    client.shutdown().await;
}

/// Fault found by a fresh-user trial: `loci.context` required `query`, so a call with only
/// `open_files` was refused though the engine answers about those files; with neither,
/// the engine answers empty (an abstention).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_context_with_open_files_and_no_question_was_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "def alpha():\n    return 1\n");
    write(dir.path(), "b.py", "from a import alpha\n");
    let mut client = start(Some(dir.path()), json!({})).await;
    let response = client
        .command("loci.context", json!({ "open_files": ["a.py"] }))
        .await;
    // Accepted, and answered with the open file itself: its outline and its symbol.
    assert_eq!(
        (
            &response["result"]["result"]["abstained"],
            &response["result"]["markdown"]
        ),
        (
            &json!(false),
            &json!(
                "## Context for the open files\n### a.py (open file: 1 symbol, 1 top-level)\n- `def alpha():` — line 1\nImported by 1 file(s): b.py\n\n### function alpha (a.py:1)\n```\ndef alpha():\n    return 1\n```\n\n\n_≈69 of 2000 tokens (an estimate: characters / 4)_\n"
            )
        ),
        "{response}"
    );
    // Neither: answered empty, an abstention that says there is nothing to look for.
    let response = client.command("loci.context", json!({})).await;
    assert_eq!(
        (
            &response["result"]["result"]["abstained"],
            &response["result"]["markdown"]
        ),
        (
            &json!(true),
            &json!("the question is empty and no files are open: there is nothing to look for.\n")
        ),
        "{response}"
    );
    client.shutdown().await;
}

/// What a command's "missing argument" error adds when the cursor could have supplied it.
const CURSOR_HINT: &str = " (or run it after a hover, code action or edit in a workspace file: it then takes the cursor's place)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b12_command_arguments_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.rs", "fn a() {}\n");
    let mut client = start(
        Some(dir.path()),
        json!({ "initializationOptions": { "debugCommands": true } }),
    )
    .await;
    let impact_example = r#"{"target": "src/auth.py", "depth": 3}"#;
    for (params, message) in [
        (
            json!({ "command": "loci.impact" }),
            format!("loci.impact: missing argument `arguments[0]`: expected one object like {impact_example}{CURSOR_HINT}"),
        ),
        (
            json!({ "command": "loci.impact", "arguments": [] }),
            format!("loci.impact: missing argument `arguments[0]`: expected one object like {impact_example}{CURSOR_HINT}"),
        ),
        (
            json!({ "command": "loci.impact", "arguments": [42] }),
            format!("loci.impact: invalid argument `arguments[0]`: expected an object like {impact_example}, got the number 42"),
        ),
        (
            json!({ "command": "loci.impact", "arguments": [{ "target": 42 }] }),
            "loci.impact: invalid argument `target`: expected a non-empty string, got the number 42".to_string(),
        ),
        (
            json!({ "command": "loci.why", "arguments": [] }),
            format!(r#"loci.why: missing argument `arguments[0]`: expected one object like {{"target": "src/auth.py:12"}}{CURSOR_HINT}"#),
        ),
        (
            json!({ "command": "loci.why", "arguments": [{ "target": "a.rs:99" }] }),
            "loci.why: invalid argument `target`: `a.rs:99`: line 99 is past the end of `a.rs`, which has 1 line".to_string(),
        ),
        (
            json!({ "command": "sidecar.memory.search" }),
            "unknown command `sidecar.memory.search`; loci's commands are loci.context, loci.why, loci.impact, \
             loci.remember, loci.decide, loci.learn, loci.confirm, loci.resolve, loci.recap, loci.scan, loci.sync, loci.synthesize, loci.debug.text"
                .to_string(),
        ),
    ] {
        client
            .send_raw(&frame(&json!({ "jsonrpc": "2.0", "id": 9, "method": "workspace/executeCommand", "params": params })))
            .await;
        let response = client.response(9).await;
        assert_eq!(
            response,
            json!({ "jsonrpc": "2.0", "id": 9, "error": { "code": -32602, "message": message } }),
            "{params}"
        );
    }
    // A valid context request is answered (here: an explicit abstention).
    let response = client
        .command("loci.context", json!({ "query": "bake a chocolate cake" }))
        .await;
    assert_eq!(
        response["result"]["result"]["abstained"],
        json!(true),
        "{response}"
    );
    assert!(
        response["result"]["markdown"]
            .as_str()
            .is_some_and(|m| m.contains("Nothing in memory, code or docs is relevant enough")),
        "{response}"
    );
    // The floor is a door's argument here too (it was MCP's and the CLI's only): a very
    // low one answers the same question.
    let response = client
        .command(
            "loci.context",
            json!({ "query": "bake a chocolate cake", "floor": -1000.0 }),
        )
        .await;
    assert_eq!(
        response["result"]["result"]["floor"],
        json!(-1000.0),
        "{response}"
    );
    let response = client
        .command("loci.context", json!({ "query": "x", "floor": "low" }))
        .await;
    assert_eq!(
        response["error"]["message"],
        json!("loci.context: invalid argument `floor`: expected a number, got a string"),
        "{response}"
    );
    // Wrong element types in a list argument name the argument.
    let response = client
        .command("loci.context", json!({ "query": "x", "open_files": [1] }))
        .await;
    assert_eq!(response["error"]["code"], json!(-32602), "{response}");
    // A panicking handler is an internal error; the server stays up.
    let response = client.command("loci.debug.panic", json!({})).await;
    assert_eq!(
        response["error"],
        json!({ "code": -32603, "message": "workspace/executeCommand loci.debug.panic failed: internal error: loci.debug.panic was called" })
    );
    let impact = client
        .command("loci.impact", json!({ "target": "a.rs" }))
        .await;
    expect![[r#"
        **Impact of `a.rs`** (file, depth 3, edges at confidence 0.50 or more)

        Nothing depends on it in the map.

        1 files affected.

        _not a git repository: history features are unavailable_"#]]
    .assert_eq(impact["result"]["markdown"].as_str().unwrap_or_default());
    assert_eq!(impact["result"]["result"]["mode"], json!("file"));
    let missing = client
        .command("loci.impact", json!({ "target": "nope" }))
        .await;
    assert_eq!(
        missing["error"],
        json!({ "code": 1001, "message": "loci.impact: no file or symbol named `nope` in the map" })
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b16b_unclosed_parens_do_not_stall_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let open = uri(&dir.path().join("open.rs"));
    let other = uri(&dir.path().join("other.rs"));
    let mut client = start(
        None,
        json!({ "initializationOptions": { "analyzedNotifications": true } }),
    )
    .await;
    let text = "(".repeat(50_000);
    client.open(&open, "rust", 1, &text).await;
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": open, "version": 2 }, "contentChanges": [{
                "range": { "start": { "line": 0, "character": 50_000 }, "end": { "line": 0, "character": 50_000 } },
                "text": ")" }] }),
        )
        .await;
    // Other requests are answered meanwhile.
    client.open(&other, "rust", 1, "fn other() {}").await;
    assert!(client.hover_markdown(&other, 0, 4).await.is_some());
    assert_eq!(client.buffer(&open).await["version"], json!(2));
    // And the degenerate document's analysis finishes (bounded by the parse time limit).
    client.expect_analyzed(&open, 2).await;
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b25_outside_edits_are_picked_up_from_watched_files() {
    let dir = tempfile::tempdir().unwrap();
    let filler: String = (0..10).map(|i| format!("// line {i}\n")).collect();
    let path = write(dir.path(), "a.rs", &format!("{filler}fn target() {{}}\n"));
    let u = uri(&path);
    let mut client = start(Some(dir.path()), json!({})).await;
    // Not open: the map answers.
    expect![[r#"
        12 target 10:3
    "#]]
    .assert_eq(&outline(&client.symbols(&u).await));
    // An agent inserts five lines on disk; the editor's watcher tells the server.
    let inserted: String = (0..5).map(|i| format!("// new {i}\n")).collect();
    std::fs::write(&path, format!("{inserted}{filler}fn target() {{}}\n")).unwrap();
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": [{ "uri": u, "type": 2 }] }),
        )
        .await;
    client.expect_progress_end().await;
    expect![[r#"
        12 target 15:3
    "#]]
    .assert_eq(&outline(&client.symbols(&u).await));
    let markdown = client.hover_markdown(&u, 15, 4).await.unwrap_or_default();
    assert!(markdown.contains("`a.rs#target@function`"), "{markdown}");
    assert!(
        markdown.contains("_from the map (the file as last scanned)_"),
        "{markdown}"
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlay_takes_precedence_over_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "src/lib.rs", "fn old_name() {}\n");
    let u = uri(&path);
    let mut client = start(
        Some(dir.path()),
        json!({ "initializationOptions": { "analyzedNotifications": true } }),
    )
    .await;
    client.open(&u, "rust", 1, "fn old_name() {}\n").await;
    let markdown = client.hover_markdown(&u, 0, 4).await.unwrap_or_default();
    assert!(
        markdown.contains("callers · `src/lib.rs#old_name@function`"),
        "{markdown}"
    );
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": u, "version": 2 }, "contentChanges": [{
                "range": { "start": { "line": 0, "character": 3 }, "end": { "line": 0, "character": 6 } },
                "text": "new" }] }),
        )
        .await;
    expect![[r#"
        12 new_name 0:3
    "#]]
    .assert_eq(&outline(&client.symbols(&u).await));
    expect![[r#"
        **function** `new_name`

        ```rust
        fn new_name() {}
        ```

        ---

        not in the map yet (unsaved or not scanned) · `src/lib.rs#new_name@function`"#]]
    .assert_eq(&client.hover_markdown(&u, 0, 4).await.unwrap_or_default());
    client.expect_analyzed(&u, 2).await;
    // Saving folds the buffer into the map.
    std::fs::write(&path, "fn new_name() {}\n").unwrap();
    client
        .notify(
            "textDocument/didSave",
            json!({ "textDocument": { "uri": u } }),
        )
        .await;
    client.expect_progress_end().await;
    let markdown = client.hover_markdown(&u, 0, 4).await.unwrap_or_default();
    assert!(
        markdown.contains("0 callers · `src/lib.rs#new_name@function`"),
        "{markdown}"
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_route_to_the_workspace_folder_containing_them() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write(a.path(), "a.rs", "fn fa() {}\n");
    let path = write(b.path(), "sub/b.rs", "fn fb() {}\n");
    let mut client = Client::start(options()).await;
    let folders = json!([
        { "uri": uri(a.path()), "name": "a" },
        { "uri": uri(b.path()), "name": "b" },
    ]);
    client
        .initialize(init_params(None, json!({ "workspaceFolders": folders })))
        .await;
    client.expect_progress_end().await;
    client.expect_progress_end().await;
    let u = uri(&path);
    client.open(&u, "rust", 1, "fn fb() {}\n").await;
    let markdown = client.hover_markdown(&u, 0, 4).await.unwrap_or_default();
    assert!(
        markdown.contains("0 callers · `sub/b.rs#fb@function`"),
        "{markdown}"
    );
    assert!(a.path().join(".loci/loci.db").exists());
    assert!(b.path().join(".loci/loci.db").exists());
    // Commands pick the folder of `uri`.
    let impact = client
        .command("loci.impact", json!({ "target": "sub/b.rs", "uri": u }))
        .await;
    assert_eq!(impact["result"]["result"]["target"], json!(["sub/b.rs"]));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_lens_is_empty_until_memory_exists_and_resolves_to_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.rs", "fn a() {}\n");
    let u = uri(&path);
    let mut client = start(Some(dir.path()), json!({})).await;
    client.open(&u, "rust", 1, "fn a() {}\n").await;
    let lenses = client
        .request_ok(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": u } }),
        )
        .await;
    assert_eq!(lenses, json!([]));
    let range =
        json!({ "start": { "line": 0, "character": 3 }, "end": { "line": 0, "character": 4 } });
    let resolved = client
        .request_ok(
            "codeLens/resolve",
            json!({ "range": range, "data": { "uri": u, "key": "a.rs#a@function" } }),
        )
        .await;
    assert_eq!(
        resolved,
        json!({ "range": range, "data": { "uri": u, "key": "a.rs#a@function" }, "command": {
            "title": "no memory", "command": "loci.why",
            "arguments": [{ "target": "a.rs#a@function", "uri": u }] } })
    );
    let response = client
        .request("codeLens/resolve", json!({ "range": range }))
        .await;
    assert_eq!(
        response["error"],
        json!({ "code": -32602, "message": "codeLens/resolve: missing argument `data.key` (the symbol key)" })
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_shows_in_lens_and_hover_and_goes_stale_as_you_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.rs", "fn login() {\n    1\n}\n");
    let u = uri(&path);
    let mut client = start(Some(dir.path()), json!({})).await;
    let written = client
        .command(
            "loci.remember",
            json!({ "subject": "a.rs", "body": "`login()` returns one.", "author": "agent:test" }),
        )
        .await;
    expect![[r#"
        Wrote `a.rs` v1 as agent:test

        Claims: `login()` → `a.rs#login@function`

        _not a git repository: history features are unavailable_"#]]
    .assert_eq(written["result"]["markdown"].as_str().unwrap_or_default());

    client.open(&u, "rust", 1, "fn login() {\n    1\n}\n").await;
    let lenses = client
        .request_ok(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": u } }),
        )
        .await;
    let name =
        json!({ "start": { "line": 0, "character": 3 }, "end": { "line": 0, "character": 8 } });
    assert_eq!(
        lenses,
        json!([{ "range": name, "data": { "uri": u, "key": "a.rs#login@function", "target": "a.rs:1", "memories": 1, "stale": 0, "false": 0 } }])
    );
    let resolved = client
        .request_ok("codeLens/resolve", lenses[0].clone())
        .await;
    assert_eq!(
        resolved["command"],
        json!({ "title": "1 memory · 0 stale", "command": "loci.why", "arguments": [{ "target": "a.rs:1", "uri": u }] })
    );
    let markdown = client.hover_markdown(&u, 0, 4).await.unwrap_or_default();
    assert!(
        markdown.contains("memory `a.rs` v1 by agent:test ("),
        "{markdown}"
    );
    // The memory's text follows its line.
    assert!(
        markdown.ends_with(") — current\n\n> `login()` returns one."),
        "{markdown}"
    );

    // Change the body in the editor: the memory is stale now, before any save.
    let body =
        json!({ "start": { "line": 1, "character": 4 }, "end": { "line": 1, "character": 5 } });
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": u, "version": 2 }, "contentChanges": [{ "range": body, "text": "2" }] }),
        )
        .await;
    let published = client
        .expect_notification("textDocument/publishDiagnostics")
        .await;
    let diagnostic = json!({
        "range": name,
        // Stale memory is a warning by default.
        "severity": 2,
        "code": "stale_memory",
        "source": "loci",
        "message": "memory `a.rs` v1 claim `login()` is stale: body of a.rs#login@function changed since it was written",
        "data": {
            "finding": { "key": "a.rs#login@function", "target": "a.rs#login@function", "subject": "a.rs", "revision_id": 1, "version": 1, "claim_id": 1, "suggestion": null },
            "actions": [
                { "title": "loci: confirm memory `a.rs` (still true)", "command": "loci.confirm", "arguments": { "subject": "a.rs" } },
                { "title": "loci: why `a.rs`", "command": "loci.why", "arguments": { "target": "a.rs" } }
            ]
        }
    });
    assert_eq!(
        published,
        json!({ "uri": u, "version": 2, "diagnostics": [diagnostic] })
    );
    let actions = client
        .request_ok(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": u }, "range": name, "context": { "diagnostics": [diagnostic] } }),
        )
        .await;
    let titles: Vec<&str> = actions
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert_eq!(
        titles,
        [
            "loci: confirm memory `a.rs` (still true)",
            "loci: why `a.rs`",
            "loci: impact of `login`"
        ]
    );
    assert_eq!(actions[0]["kind"], json!("quickfix"));
    assert_eq!(
        actions[0]["command"]["arguments"],
        json!([{ "subject": "a.rs" }])
    );

    let why = client
        .command("loci.why", json!({ "target": "a.rs" }))
        .await;
    let markdown = why["result"]["markdown"].as_str().unwrap_or_default();
    assert!(
        markdown.starts_with("**Why `a.rs`**: `a.rs` v1 by agent:test at "),
        "{markdown}"
    );
    assert!(markdown.contains("> `login()` returns one."), "{markdown}");

    // Undo the edit: the diagnostic is cleared.
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": u, "version": 3 }, "contentChanges": [{ "range": body, "text": "1" }] }),
        )
        .await;
    let published = client
        .expect_notification("textDocument/publishDiagnostics")
        .await;
    assert_eq!(
        published,
        json!({ "uri": u, "version": 3, "diagnostics": [] })
    );

    let decided = client
        .command(
            "loci.decide",
            json!({ "text": "keep `login()` pure", "author": "agent:test" }),
        )
        .await;
    assert_eq!(
        decided["result"]["result"]["page"]["subject"],
        json!("decision:1")
    );
    let recap = client.command("loci.recap", json!({})).await;
    assert!(
        recap["result"]["markdown"]
            .as_str()
            .is_some_and(|m| m.starts_with("**Recent sessions**")),
        "{recap}"
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_folders_added_later_are_scanned_and_routed() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write(a.path(), "a.rs", "fn fa() {}\n");
    let path = write(b.path(), "sub/b.rs", "fn fb() {}\n");
    let u = uri(&path);
    let mut client = start(Some(a.path()), json!({})).await;
    // Before: b.rs is outside every folder, so its key is its file name and there is no map.
    client.open(&u, "rust", 1, "fn fb() {}\n").await;
    let markdown = client.hover_markdown(&u, 0, 4).await.unwrap_or_default();
    assert!(markdown.contains("single-file mode"), "{markdown}");
    assert!(markdown.contains("`b.rs#fb@function`"), "{markdown}");
    client
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({ "event": { "added": [{ "uri": uri(b.path()), "name": "b" }], "removed": [{ "uri": uri(a.path()), "name": "a" }] } }),
        )
        .await;
    client.expect_progress_end().await;
    let markdown = client.hover_markdown(&u, 0, 4).await.unwrap_or_default();
    assert!(
        markdown.contains("0 callers · `sub/b.rs#fb@function`"),
        "{markdown}"
    );
    let response = client
        .command(
            "loci.impact",
            json!({ "target": "a.rs", "root": a.path().display().to_string() }),
        )
        .await;
    assert_eq!(response["error"]["code"], json!(-32602), "{response}");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_a_call_shows_the_definition_from_the_map() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.py",
        "def helper():\n    \"\"\"Helps.\"\"\"\n    return 1\n",
    );
    let b = write(
        dir.path(),
        "b.py",
        "from a import helper\n\ndef main():\n    helper()\n",
    );
    let u = uri(&b);
    let mut client = start(Some(dir.path()), json!({})).await;
    client
        .open(
            &u,
            "python",
            1,
            "from a import helper\n\ndef main():\n    helper()\n",
        )
        .await;
    let markdown = client.hover_markdown(&u, 3, 6).await.unwrap_or_default();
    expect![[r#"
        **function** `helper` in `a.py`

        ```python
        def helper():
        ```

        Helps.

        ---

        1 caller · `a.py#helper@function`"#]]
    .assert_eq(&markdown);
    let hover = client.hover(&u, 3, 6).await;
    assert_eq!(
        hover["range"],
        json!({ "start": { "line": 3, "character": 4 }, "end": { "line": 3, "character": 10 } })
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b03_requests_see_every_change_sent_before_them() {
    // Changes and symbol requests interleaved in one write: each answer reflects exactly
    // the changes sent before it, while background analyses of other versions run.
    let dir = tempfile::tempdir().unwrap();
    let u = uri(&dir.path().join("grow.rs"));
    let mut client = start(None, json!({})).await;
    client.open(&u, "rust", 1, "fn a() {}\n").await;
    let mut bytes = Vec::new();
    let mut expected = Vec::new();
    let mut name = String::from("a");
    for i in 0..60u32 {
        bytes.extend(frame(&json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": u, "version": i + 2 },
            "contentChanges": [{ "range": {
                "start": { "line": 0, "character": 3 + i + 1 }, "end": { "line": 0, "character": 3 + i + 1 } },
                "text": "z" }] } })));
        name.push('z');
        let (id, request) = client.request_message(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": u } }),
        );
        bytes.extend(frame(&request));
        expected.push((id, name.clone()));
    }
    client.send_raw(&bytes).await;
    for (id, name) in expected {
        let response = client.response(id).await;
        assert_eq!(response["result"][0]["name"], json!(name), "request {id}");
    }
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markdown_claims_are_checked_as_you_type_with_a_replace_action() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "src/format.py",
        "def fmt(x):\n    return str(x)\n",
    );
    let doc = write(dir.path(), "AGENTS.md", "# Agents\n");
    let u = uri(&doc);
    let mut client = start(Some(dir.path()), json!({})).await;
    client.open(&u, "markdown", 1, "# Agents\n").await;
    // Typing a claim about a file that is not there: a diagnostic at the claim's span,
    // live, before any save. The only file of that name is the suggested replacement.
    let text = "# Agents\nFormatting: `lib/format.py` and `fmt()`.\n";
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": u, "version": 2 }, "contentChanges": [{ "text": text }] }),
        )
        .await;
    let published = client
        .expect("missing_path diagnostic", |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())
        })
        .await;
    let range =
        json!({ "start": { "line": 1, "character": 13 }, "end": { "line": 1, "character": 26 } });
    assert_eq!(published["params"]["version"], json!(2));
    let diagnostic = published["params"]["diagnostics"][0].clone();
    assert_eq!(diagnostic["range"], range);
    assert_eq!(diagnostic["code"], json!("missing_path"));
    // A false claim is a warning by default (`falseSeverity`).
    assert_eq!(diagnostic["severity"], json!(2));
    assert_eq!(
        diagnostic["message"],
        json!(
            "missing_path `lib/format.py`: `lib/format.py` does not exist (did you mean `src/format.py`?)"
        )
    );
    assert_eq!(
        published["params"]["diagnostics"].as_array().map(Vec::len),
        Some(1),
        "`fmt()` exists"
    );
    let actions = client
        .request_ok(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": u }, "range": range, "context": { "diagnostics": [diagnostic] } }),
        )
        .await;
    assert_eq!(
        actions[0]["title"],
        json!("loci: replace with `src/format.py`")
    );
    assert_eq!(
        actions[0]["edit"],
        json!({ "changes": { u.clone(): [{ "range": range, "newText": "src/format.py" }] } })
    );
    // Hover on a claim tells the truth about it.
    let missing = client.hover_markdown(&u, 1, 15).await.unwrap_or_default();
    assert_eq!(
        missing,
        "`lib/format.py` **not found** — did you mean `src/format.py`?"
    );
    let found = client.hover_markdown(&u, 1, 33).await.unwrap_or_default();
    assert_eq!(
        found,
        "function `fmt` at `src/format.py:1`\n```\ndef fmt(x):\n```"
    );
    // Fixing the text clears the diagnostic.
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": u, "version": 3 }, "contentChanges": [{ "range": range, "text": "src/format.py" }] }),
        )
        .await;
    let cleared = client
        .expect("cleared diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == json!(3)
        })
        .await;
    assert_eq!(cleared["params"]["diagnostics"], json!([]));
    client.shutdown().await;
}

/// With `[embeddings]` naming a model, the server embeds the code chunks after its scan, in
/// the background, with `$/progress` ("loci: embedding code chunks", chunks done of the
/// chunks to embed; test code is not embedded), and its context answers then use the
/// vectors: a question sharing no word with the code finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_embeds_the_chunks_after_its_scan_with_progress() {
    let model = std::env::var("LOCI_TEST_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ci/models/all-MiniLM-L6-v2")
        });
    assert!(
        model.join("model.safetensors").is_file(),
        "{} has no model: run .ci/setup",
        model.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/shell.py",
        "def quote(s):\n    \"\"\"Return a shell-escaped version of the string s.\"\"\"\n    return \"'\" + s.replace(\"'\", \"'\\\"'\\\"'\") + \"'\"\n",
    );
    write(
        root,
        "src/stats.py",
        "def median_grouped(data, interval=1):\n    \"\"\"Estimate the median of continuous data grouped in classes.\"\"\"\n    return sorted(data)[len(data) // 2]\n",
    );
    write(
        root,
        "tests/test_shell.py",
        "def test_quote():\n    assert quote('a') == \"'a'\"\n",
    );
    write(
        root,
        ".loci/config.toml",
        &format!("[embeddings]\nmodel = {:?}\n", model.display().to_string()),
    );
    let mut client = start(Some(root), json!({})).await;
    let begin = client
        .expect("the embedding's progress", |m| {
            m.get("method").and_then(Value::as_str) == Some("$/progress")
                && m.pointer("/params/value/kind") == Some(&json!("begin"))
        })
        .await;
    assert_eq!(
        begin.pointer("/params/value/title"),
        Some(&json!("loci: embedding code chunks"))
    );
    let report = client
        .expect("the embedding's progress report", |m| {
            m.pointer("/params/value/kind") == Some(&json!("report"))
        })
        .await;
    assert_eq!(
        report.pointer("/params/value/message"),
        Some(&json!("0/2 chunks"))
    );
    let end = client
        .expect("the embedding's end", |m| {
            m.pointer("/params/value/kind") == Some(&json!("end"))
        })
        .await;
    let message = end
        .pointer("/params/value/message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    assert!(
        message.starts_with("embedded 2 chunks in ")
            && message.ends_with(": 2 of 2 chunks have vectors"),
        "{message}"
    );
    let response = client
        .command(
            "loci.context",
            json!({ "query": "how do I escape text for safe use in a terminal" }),
        )
        .await;
    let items = response["result"]["result"]["items"].as_array().cloned();
    let first = items.as_ref().and_then(|i| i.first()).cloned();
    assert_eq!(
        first.as_ref().and_then(|i| i["path"].as_str()),
        Some("src/shell.py"),
        "{response}"
    );
    assert!(
        first.as_ref().is_some_and(|i| i["signals"][0]
            .as_str()
            .is_some_and(|s| s.contains("embeddings #1"))),
        "{first:?}"
    );
}

/// The editor runs the synthesis plan (`loci.synthesize`) with a `$/progress` per page
/// ("loci: writing pages", "page 1 of 2: lib/money.py"), a dry run answers the prompts, and
/// `loci.sync` answers what `loci sync` prints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_writes_the_plans_pages_with_progress_per_page() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "lib/money.py",
        "def money(x):\n    return round(x, 2)\n",
    );
    write(
        root,
        "lib/invoice.py",
        "from lib.money import money\n\n\ndef total(lines):\n    return money(sum(lines))\n",
    );
    let stub = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/synthesis/answer.sh")
        .canonicalize()
        .unwrap();
    write(
        root,
        ".loci/config.toml",
        &format!(
            "[synthesis]\ncommand = \"sh {}\"\nmodel = \"stub\"\n",
            stub.display()
        ),
    );
    let mut client = start(Some(root), json!({})).await;

    let dry = client
        .command(
            "loci.synthesize",
            json!({ "paths": ["lib/money.py"], "dry_run": true }),
        )
        .await;
    let markdown = dry["result"]["markdown"].as_str().unwrap_or_default();
    assert!(
        markdown.starts_with("**Prompts**\n\n```text\n===== prompt for lib/money.py (")
            && markdown.contains("- function `money` (line 1): def money(x):"),
        "{dry}"
    );

    // `$/progress` is noise to the client unless waited for: wait for it, then the answer.
    let (id, request) = client.request_message(
        "workspace/executeCommand",
        json!({ "command": "loci.synthesize", "arguments": [{}] }),
    );
    client.send_raw(&frame(&request)).await;
    let begin = client
        .expect("the run's progress", |m| {
            m.pointer("/params/value/title") == Some(&json!("loci: writing pages"))
        })
        .await;
    let token = begin.pointer("/params/token").cloned().unwrap();
    let mut reports = Vec::new();
    loop {
        let m = client
            .expect("the run's progress", |m| {
                m.pointer("/params/token") == Some(&token)
            })
            .await;
        let value = &m["params"]["value"];
        reports.push(format!(
            "{} {} {}",
            value["kind"].as_str().unwrap_or_default(),
            value["percentage"],
            value["message"].as_str().unwrap_or_default()
        ));
        if value["kind"] == json!("end") {
            break;
        }
    }
    assert_eq!(
        reports,
        [
            "report 0 page 1 of 2: lib/money.py",
            "report 50 page 2 of 2: lib/invoice.py",
            "end null 2 pages of 2 written by `sh`"
        ]
    );
    let run = client.response(id).await;
    let markdown = run["result"]["markdown"].as_str().unwrap_or_default();
    assert!(
        markdown.starts_with("**Pages written**\n\n```text\nwrote lib/money.py v1 by llm:stub (")
            && markdown.contains("\n2 pages of 2 written by `sh`\n```"),
        "{run}"
    );
    // The run changed what is behind the code: the folder now rolls up its new pages.
    let behind = client.expect_notification("$/loci/pagesBehind").await;
    assert_eq!(
        (&behind["count"], &behind["pages"], &behind["message"]),
        (&json!(1), &json!(["lib"]), &json!("1 page behind the code"))
    );

    let sync = client.command("loci.sync", json!({})).await;
    assert!(
        sync["result"]["markdown"].as_str().is_some_and(|m| m
            .starts_with("**Sync**\n\n```text\nsync (snapshot): not a git repository; 1 commit, ")),
        "{sync}"
    );
    let behind = client.expect_notification("$/loci/pagesBehind").await;
    assert_eq!(
        behind,
        json!({ "root": uri(&root.canonicalize().unwrap()), "head": null, "count": 1,
                "pages": ["lib"], "message": "1 page behind the code" })
    );
    client.shutdown().await;
}

/// Runs `git ARGS` in `root` (no global or system configuration, a fixed identity and
/// date); its stdout, trimmed.
fn git(root: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=Ann", "-c", "user.email=ann@example.com"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The `$/progress` reports of the next work-done progress titled `title`, one line each
/// (`kind percentage message`), up to its end.
async fn progress_of(client: &mut Client, title: &str) -> Vec<String> {
    let begin = client
        .expect(title, |m| {
            m.pointer("/params/value/title") == Some(&json!(title))
        })
        .await;
    let token = begin.pointer("/params/token").cloned().unwrap();
    let mut reports = Vec::new();
    loop {
        let m = client
            .expect(title, |m| m.pointer("/params/token") == Some(&token))
            .await;
        let value = &m["params"]["value"];
        reports.push(format!(
            "{} {} {}",
            value["kind"].as_str().unwrap_or_default(),
            value["percentage"],
            value["message"].as_str().unwrap_or_default()
        ));
        if value["kind"] == json!("end") {
            return reports;
        }
    }
}

/// A commit made outside the editor (a terminal, an agent) while the server runs moves
/// `HEAD`; the server notices — on its own activity (a client that watches no files, as
/// Neovim on Linux) and through a watched `.git/` file (VS Code) — syncs once per new
/// `HEAD` with `$/progress`, and tells the editor how many pages are behind the code:
/// `$/loci/pagesBehind` for the plugins, and a `window/showMessage` for a client that shows
/// what the server says (Helix).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_commit_the_editor_hears_how_many_pages_are_behind_the_code() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let auth = write(&root, "auth.py", "def login(user):\n    return user\n");
    git(&root, &["init", "-q", "-b", "main"]);
    write(&root, ".gitignore", ".loci/\n");
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "login"]);
    {
        let mut ws = loci_engine::Workspace::open(&root, None).unwrap();
        ws.scan(&|_| {}).unwrap();
        let opts = loci_engine::memory::WriteOptions {
            author: Some("human:tester".into()),
            ..Default::default()
        };
        ws.remember("auth.py", "`login()` returns the user.\n", &opts)
            .unwrap();
        let synced = ws.sync(None).unwrap();
        assert_eq!(synced.result.pages_behind, Vec::new());
    }
    let mut client = Client::start(options()).await;
    client.ignore("textDocument/publishDiagnostics");
    let params = init_params(
        Some(&root),
        json!({ "capabilities": { "window": { "showDocument": { "support": true } } } }),
    );
    client.initialize(params).await;
    client.expect_progress_end().await;

    // A commit in a terminal; the editor then opens a file: the server's own check.
    write(
        &root,
        "auth.py",
        "def login(user):\n    return user.strip()\n",
    );
    git(&root, &["commit", "-q", "-am", "login strips"]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    let u = uri(&auth);
    client
        .open(
            &u,
            "python",
            1,
            "def login(user):\n    return user.strip()\n",
        )
        .await;
    assert_eq!(
        progress_of(&mut client, "loci: syncing git history").await,
        [
            "report 0 refreshing the map",
            "report 33 recording 1 commit",
            "report 67 checking memory against the code",
            "end null 1 page behind the code"
        ]
    );
    let behind = client.expect_notification("$/loci/pagesBehind").await;
    assert_eq!(
        behind,
        json!({ "root": uri(&root), "head": head, "count": 1, "pages": ["auth.py"],
                "message": "1 page behind the code" })
    );
    let shown = client.expect_notification("window/showMessage").await;
    assert_eq!(
        shown,
        json!({ "type": 3, "message": format!(
            "loci: 1 page behind the code at {} — run the command loci.synthesize to redraft it (loci.sync lists it)",
            &head[..12]
        ) })
    );

    // The same HEAD again — a save, a watched `HEAD` file — syncs nothing.
    client
        .notify(
            "textDocument/didSave",
            json!({ "textDocument": { "uri": u } }),
        )
        .await;
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": [{ "uri": uri(&root.join(".git/HEAD")), "type": 2 }] }),
        )
        .await;
    client.expect_progress_end().await; // the save's scan

    // A second commit, seen through the watched branch file (VS Code's way): the next
    // notification is this HEAD's, so none came for the first one twice.
    write(&root, "util.py", "def pad(s):\n    return s\n");
    git(&root, &["add", "util.py"]);
    git(&root, &["commit", "-q", "-m", "pad"]);
    let second = git(&root, &["rev-parse", "HEAD"]);
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": [{ "uri": uri(&root.join(".git/refs/heads/main")), "type": 2 }] }),
        )
        .await;
    assert_eq!(
        progress_of(&mut client, "loci: syncing git history").await,
        [
            "report 0 refreshing the map",
            "report 33 recording 1 commit",
            "report 67 checking memory against the code",
            "end null 1 page behind the code"
        ]
    );
    let behind = client.expect_notification("$/loci/pagesBehind").await;
    assert_eq!(behind["head"], json!(second));
    assert_eq!(behind["count"], json!(1));
    client.expect_notification("window/showMessage").await;
    client.shutdown().await;
}

/// In a linked worktree (`git worktree add`) `HEAD` and the branches live outside the
/// workspace folder: a client with relative-pattern watchers (VS Code) is asked to watch
/// them there, and a commit it reports from there is synced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_linked_worktree_the_git_directories_outside_the_folder_are_watched() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().canonicalize().unwrap().join("main");
    write(&main, "a.py", "def a():\n    return 1\n");
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "a"]);
    let tree = main.parent().unwrap().join("tree");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "work",
            &tree.display().to_string(),
        ],
    );
    let mut client = Client::start(options()).await;
    let params = init_params(
        Some(&tree),
        json!({ "capabilities": { "workspace": { "didChangeWatchedFiles": {
            "dynamicRegistration": true, "relativePatternSupport": true } } } }),
    );
    client.initialize(params).await;
    let registration = client
        .expect_notification("client/registerCapability")
        .await;
    let common = main.join(".git");
    assert_eq!(
        registration["registrations"][0]["registerOptions"]["watchers"],
        json!([
            { "globPattern": "**/*" },
            { "globPattern": { "baseUri": uri(&common.join("worktrees/tree")), "pattern": "HEAD" } },
            { "globPattern": { "baseUri": uri(&common), "pattern": "{refs/heads/**,packed-refs}" } }
        ])
    );
    client.expect_progress_end().await;
    write(&tree, "b.py", "def b():\n    return 2\n");
    git(&tree, &["add", "b.py"]);
    git(&tree, &["commit", "-q", "-m", "b"]);
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": [{ "uri": uri(&common.join("refs/heads/work")), "type": 2 }] }),
        )
        .await;
    let behind = client.expect_notification("$/loci/pagesBehind").await;
    assert_eq!(
        behind,
        json!({ "root": uri(&tree), "head": git(&tree, &["rev-parse", "HEAD"]), "count": 0,
                "pages": [], "message": "no page behind the code" })
    );
    client.shutdown().await;
}

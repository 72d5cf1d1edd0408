//! Commands as an editor without a plugin runs them, `loci lsp` as a real process over
//! stdio: a Helix-like client (it supports `window/showDocument` and drops what a command
//! returns) runs `loci.why` and `loci.impact` from its picker without arguments — they take
//! the cursor's place and the answer is shown as a document; a write's outcome and an error
//! are shown as messages. `loci.remember` appends unless told to replace; the hover quotes
//! the memory and names its commit; Lua's `{}` is an empty object; the author of a write
//! falls back to git's identity.

use crate::damage;
use crate::lsp_support;

use std::path::Path;
use std::process::Command;

use lsp_support::{Lsp, loci};
use serde_json::{Value, json};

const APP: &str = "def hello():\n    return 1\n\n\ndef main():\n    return hello()\n";

/// A workspace with `src/app.py` scanned and one memory about `hello()`.
fn workspace() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/app.py"), APP).unwrap();
    loci(&root, &["scan"]);
    loci(
        &root,
        &[
            "remember",
            "src/app.py",
            "--author",
            "human:tester",
            "--text",
            "`hello()` returns one.",
        ],
    );
    let uri = format!("file://{}/src/app.py", root.display());
    (dir, root, uri)
}

/// Starts the server as Helix does: it supports `window/showDocument`.
fn start_helix(root: &Path, initialization_options: Value) -> Lsp {
    let mut lsp = Lsp::start(root);
    lsp.request(
        "initialize",
        json!({
            "processId": null,
            "clientInfo": {"name": "helix", "version": "25.07"},
            "rootUri": format!("file://{}", root.display()),
            "capabilities": {"window": {"showDocument": {"support": true}}},
            "initializationOptions": initialization_options,
        }),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp
}

fn open(lsp: &mut Lsp, uri: &str, text: &str) {
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}}),
    );
}

/// Runs `command` with `arguments` (as sent: `null` sends none) and returns its response
/// and what the server then shows: the `window/showDocument` request (answered with
/// success) or the `window/showMessage` notification. Other messages are passed over.
fn run(lsp: &mut Lsp, id: i64, command: &str, arguments: Value) -> (Value, Value) {
    let mut params = json!({ "command": command });
    if !arguments.is_null() {
        params["arguments"] = arguments;
    }
    lsp.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand", "params": params}),
    );
    let (mut response, mut shown) = (Value::Null, Value::Null);
    while response.is_null() || shown.is_null() {
        let v = lsp.recv();
        if v["id"] == json!(id) && v.get("method").is_none() {
            response = v;
        } else if v["method"] == "window/showDocument" {
            lsp.send(json!({"jsonrpc": "2.0", "id": v["id"], "result": {"success": true}}));
            shown = v;
        } else if v["method"] == "window/showMessage" {
            shown = v;
        } else if v.get("method").is_some() && v.get("id").is_some() {
            lsp.send(json!({"jsonrpc": "2.0", "id": v["id"], "result": null}));
        }
    }
    (response, shown)
}

/// The file a `window/showDocument` request names, read.
fn shown_text(request: &Value) -> (String, String) {
    let uri = request["params"]["uri"].as_str().unwrap().to_string();
    let path = uri.strip_prefix("file://").unwrap();
    let name = Path::new(path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    (name, std::fs::read_to_string(path).unwrap())
}

#[test]
fn fault_helix_showed_nothing_for_why_and_impact_and_picked_commands_failed_in_the_log() {
    let (_dir, root, uri) = workspace();
    let mut lsp = start_helix(&root, Value::Null);
    open(&mut lsp, &uri, APP);
    // The cursor on `hello` (a hover), then commands picked without arguments.
    let hover = lsp.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 5}}),
    );
    assert!(hover["contents"]["value"].is_string(), "{hover}");

    let (response, shown) = run(&mut lsp, 100, "loci.why", Value::Null);
    let markdown = response["result"]["markdown"].as_str().unwrap().to_string();
    assert_eq!(
        markdown
            .lines()
            .next()
            .unwrap()
            .split(" by ")
            .next()
            .unwrap(),
        "**Why `src/app.py:1`**: `src/app.py` v1"
    );
    assert_eq!(shown["method"], "window/showDocument");
    assert_eq!(shown["params"]["takeFocus"], json!(true));
    assert_eq!(shown["params"]["external"], json!(false));
    assert_eq!(shown_text(&shown), ("001-why.md".to_string(), markdown));

    // Helix sends `arguments: []`; the symbol around the cursor is the target.
    let (response, shown) = run(&mut lsp, 101, "loci.impact", json!([]));
    let markdown = response["result"]["markdown"].as_str().unwrap().to_string();
    assert_eq!(
        markdown.lines().next().unwrap(),
        "**Impact of `src/app.py#hello@function`** (symbol, depth 3, edges at confidence 0.50 \
         or more)"
    );
    assert_eq!(shown_text(&shown), ("002-impact.md".to_string(), markdown));

    // A write: its outcome as a message.
    let (response, shown) = run(&mut lsp, 102, "loci.confirm", Value::Null);
    assert_eq!(
        response["result"]["result"]["page"]["subject"],
        "src/app.py"
    );
    assert_eq!(
        shown["params"],
        json!({"type": 3, "message": "Confirmed `src/app.py` v1: 1 claims re-snapshotted against the code"})
    );

    // An error: in the response and as an error message (not only in the log).
    let (response, shown) = run(&mut lsp, 103, "loci.remember", Value::Null);
    let message = "loci.remember: missing argument `arguments[0]`: expected one object like \
                   {\"subject\": \"src/auth.py\", \"body\": \"login retries twice\"}";
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": message})
    );
    assert_eq!(shown["params"], json!({"type": 1, "message": message}));

    // An edit moves the cursor: `main` (line 5) is now the target.
    lsp.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 5, "character": 11}, "end": {"line": 5, "character": 11}},
                            "text": " "}]}}));
    let (response, _) = run(&mut lsp, 104, "loci.impact", json!([{"depth": 1}]));
    assert_eq!(
        response["result"]["result"]["target"],
        json!(["src/app.py#main@function"])
    );

    // The answers shown go with the session.
    let (_, shown) = run(&mut lsp, 105, "loci.recap", Value::Null);
    let uri = shown["params"]["uri"].as_str().unwrap().to_string();
    let folder = Path::new(uri.strip_prefix("file://").unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    assert!(folder.join("001-why.md").is_file());
    lsp.request("shutdown", Value::Null);
    assert!(!folder.exists(), "{} is left behind", folder.display());
}

#[test]
fn fault_a_plugin_that_shows_answers_itself_got_them_twice() {
    // `showResults: false` (the VS Code extension, the Neovim plugin): nothing is shown by
    // the server; the response is the whole answer. The next message after the response
    // is the answer to a later request, not a show.
    let (_dir, root, uri) = workspace();
    let mut lsp = start_helix(&root, json!({"showResults": false}));
    open(&mut lsp, &uri, APP);
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 200, "method": "workspace/executeCommand",
        "params": {"command": "loci.why", "arguments": [{"target": "src/app.py:1"}]}}),
    );
    lsp.send(json!({"jsonrpc": "2.0", "id": 201, "method": "shutdown", "params": null}));
    let mut seen = Vec::new();
    loop {
        let v = lsp.recv();
        if v["id"] == json!(201) && v.get("method").is_none() {
            break;
        }
        if let Some(method) = v["method"].as_str() {
            seen.push(method.to_string());
        }
    }
    assert!(
        !seen
            .iter()
            .any(|m| m == "window/showDocument" || m == "window/showMessage"),
        "{seen:?}"
    );
}

#[test]
fn fault_remember_without_a_selection_replaced_the_page() {
    let (_dir, root, _uri) = workspace();
    let mut lsp = start_helix(&root, json!({"showResults": false}));
    let added = lsp.request(
        "workspace/executeCommand",
        json!({"command": "loci.remember", "arguments": [{"subject": "src/app.py", "body": "`main()` calls it."}]}),
    );
    assert_eq!(added["result"]["revision"]["version"], json!(2));
    assert_eq!(
        added["result"]["revision"]["body"],
        json!("`hello()` returns one.\n\n`main()` calls it.")
    );
    let replaced = lsp.request(
        "workspace/executeCommand",
        json!({"command": "loci.remember", "arguments": [{"subject": "src/app.py", "body": "Only this.", "replace": true}]}),
    );
    assert_eq!(replaced["result"]["revision"]["version"], json!(3));
    assert_eq!(replaced["result"]["revision"]["body"], json!("Only this."));
}

#[test]
fn fault_lua_empty_table_was_rejected_as_an_array() {
    // Neovim encodes `init_options = {}` and a command's `{}` as `[]`.
    let (_dir, root, _uri) = workspace();
    let mut lsp = Lsp::start(&root);
    lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", root.display()),
               "capabilities": {}, "initializationOptions": []}),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    // Startup messages are sent while `initialized` is handled, before this answer.
    lsp.send(
        json!({"jsonrpc": "2.0", "id": 300, "method": "workspace/executeCommand",
        "params": {"command": "loci.recap", "arguments": [[]]}}),
    );
    let mut messages = Vec::new();
    let response = loop {
        let v = lsp.recv();
        if v["id"] == json!(300) && v.get("method").is_none() {
            break v;
        }
        if v["method"] == "window/showMessage" {
            messages.push(v["params"]["message"].clone());
        }
    };
    assert_eq!(messages, Vec::<Value>::new());
    assert_eq!(
        response["result"]["markdown"],
        json!(
            "**Recent sessions**\n\nNo sessions yet.\n\n_not a git repository: history features are unavailable_"
        )
    );
}

/// Runs `git ARGS` in `root` with a fixed date, failing loudly.
fn git(root: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", "2025-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2025-01-01T00:00:00Z")
        .output()
        .expect("running git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `loci --json ARGS` in `root` with no `$USER`, `$LOGNAME`, `$USERNAME`, `$LOCI_AUTHOR`
/// and `home` as `$HOME`: the envelope.
fn loci_without_user(root: &Path, home: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_loci"))
        .arg("--json")
        .args(args)
        .current_dir(root)
        .env_remove("USER")
        .env_remove("LOGNAME")
        .env_remove("USERNAME")
        .env_remove("LOCI_AUTHOR")
        .env_remove("LOCI_DB")
        .env_remove("LOCI_SESSION")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_CONFIG_GLOBAL")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn fault_writes_were_human_unknown_when_user_was_unset() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let home = base.join("alice");
    let root = base.join("repo");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/app.py"), APP).unwrap();
    loci_without_user(&root, &home, &["scan"]);
    // No git identity anywhere: the home directory's name.
    let written = loci_without_user(&root, &home, &["remember", "src/app.py", "--text", "one"]);
    assert_eq!(
        written["result"]["revision"]["author"],
        json!("human:alice")
    );
    // The repository's `user.name` and `user.email`.
    git(&root, &home, &["init", "-q"]);
    git(&root, &home, &["config", "user.name", "Jane Doe"]);
    git(&root, &home, &["config", "user.email", "jane@example.com"]);
    let written = loci_without_user(&root, &home, &["remember", "src/app.py", "--text", "two"]);
    assert_eq!(
        written["result"]["revision"]["author"],
        json!("human:Jane Doe <jane@example.com>")
    );
}

#[test]
fn fault_hover_named_author_version_and_date_but_not_the_text_or_commit() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let home = base.join("home");
    let root = base.join("repo");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/app.py"), APP).unwrap();
    git(&root, &home, &["init", "-q"]);
    git(&root, &home, &["config", "user.name", "Jane Doe"]);
    git(&root, &home, &["config", "user.email", "jane@example.com"]);
    git(&root, &home, &["add", "."]);
    git(&root, &home, &["commit", "-qm", "app"]);
    let head = git(&root, &home, &["rev-parse", "HEAD"]);
    loci_without_user(&root, &home, &["scan"]);
    let body = "`hello()` returns one.\n\nLine two.\nLine three.\nLine four.\nLine five.\n";
    loci_without_user(&root, &home, &["remember", "src/app.py", "--text", body]);
    let uri = format!("file://{}/src/app.py", root.display());
    let memory_line = |lsp: &mut Lsp| {
        let hover = lsp.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 5}}),
        );
        let value = hover["contents"]["value"].as_str().unwrap().to_string();
        let memory = value[value.find("memory `").expect("a memory line")..].to_string();
        // The date varies: mask it.
        let date = memory[memory.find(" (").unwrap() + 2..][..10].to_string();
        memory.replacen(&date, "<DATE>", 1)
    };
    let quote = "> `hello()` returns one.\n> Line two.\n> Line three.\n> Line four. …";

    let mut lsp = start_helix(&root, json!({"showResults": false}));
    open(&mut lsp, &uri, APP);
    // Git history not read: the HEAD the memory was written at (recorded by the write).
    assert_eq!(
        memory_line(&mut lsp),
        format!(
            "memory `src/app.py` v1 by human:Jane Doe <jane@example.com> (<DATE>, written at HEAD `{}`) — current\n\n{quote}",
            &head[..12]
        )
    );
    // After `loci sync`: the newest commit touching the file before the memory, as `why`
    // finds it.
    loci_without_user(&root, &home, &["sync"]);
    assert_eq!(
        memory_line(&mut lsp),
        format!(
            "memory `src/app.py` v1 by human:Jane Doe <jane@example.com> (<DATE>, commit `{}`) — current\n\n{quote}",
            &head[..12]
        )
    );
}

#[test]
fn fault_a_note_written_in_the_editor_left_the_lens_counting_the_old_memory() {
    // Lens, hover and diagnostics come from one state and refresh together: a write asks
    // the client for its lenses again, and they count the new memory.
    let (_dir, root, uri) = workspace();
    let mut lsp = Lsp::start(&root);
    lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", root.display()),
               "capabilities": {"workspace": {"codeLens": {"refreshSupport": true}}}}),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    open(&mut lsp, &uri, APP);
    let lens_title = |lsp: &mut Lsp| {
        let lenses = lsp.request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        );
        let resolved = lsp.request("codeLens/resolve", lenses[0].clone());
        resolved["command"]["title"].clone()
    };
    assert_eq!(lens_title(&mut lsp), json!("1 memory · 0 stale"));
    lsp.send(json!({"jsonrpc": "2.0", "id": 400, "method": "workspace/executeCommand",
        "params": {"command": "loci.remember", "arguments": [{"subject": ".", "body": "`hello()` greets."}]}}));
    let (mut answered, mut refreshed) = (false, false);
    while !(answered && refreshed) {
        let v = lsp.recv();
        if v["id"] == json!(400) && v.get("method").is_none() {
            assert!(v.get("error").is_none(), "{v}");
            answered = true;
        } else if v["method"] == "workspace/codeLens/refresh" {
            lsp.send(json!({"jsonrpc": "2.0", "id": v["id"], "result": null}));
            refreshed = true;
        } else if v.get("method").is_some() && v.get("id").is_some() {
            lsp.send(json!({"jsonrpc": "2.0", "id": v["id"], "result": null}));
        }
    }
    assert_eq!(lens_title(&mut lsp), json!("2 memories · 0 stale"));
    let hover = lsp.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 5}}),
    );
    let value = hover["contents"]["value"].as_str().unwrap();
    assert_eq!(value.matches("— current").count(), 2, "{value}");
}

/// The message of a damaged store at `db` (`loci_store::StoreError::Damaged`, no backup).
fn damaged(db: &Path, detail: &str) -> String {
    format!(
        "{}: the database is damaged ({detail}). `loci export -o FILE` may still save the memory it holds; `loci restore BACKUP` puts a backup in its place and keeps the damaged file in {}; or move it aside and run `loci scan` for a new one (the memory it held would be lost)",
        db.display(),
        db.parent().unwrap().join("backups").display()
    )
}

/// Fault: over the language server, a store that could not be opened (a damaged file, a
/// newer schema) and damage a query met ("database disk image is malformed") were `-32603`
/// "internal error". Each is the error of its kind, as the CLI and the MCP tools say it
/// (`1004`, `data.kind` `corrupt` or `newer_schema`, the message naming the database and
/// the way out), after an `initialize` that was answered; the server stays up, and
/// `shutdown` then `exit` ends it.
#[test]
fn fault_a_damaged_or_newer_store_was_internal_error_over_lsp() {
    let noise: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let newer = |db: &Path| {
        let conn = loci_store::rusqlite::Connection::open(db).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations(version, name) VALUES (999, 'future')",
            [],
        )
        .unwrap();
    };
    type Break = Box<dyn Fn(&Path)>;
    let cases: [(&str, Break, String); 3] = [
        (
            "corrupt",
            Box::new(move |db: &Path| std::fs::write(db, &noise).unwrap()),
            "file is not a database".into(),
        ),
        ("newer_schema", Box::new(newer), String::new()),
        (
            "corrupt",
            Box::new(move |db: &Path| std::fs::write(db, damage::symbols_damaged(db)).unwrap()),
            "database disk image is malformed".into(),
        ),
    ];
    for (kind, damage, detail) in cases {
        let (_dir, root, _) = workspace();
        let db = root.join(".loci/loci.db");
        damage(&db);
        let message = if kind == "newer_schema" {
            format!(
                "{}: schema version 999 is newer than this loci supports ({}); upgrade loci, or point --db at another file. The database was not modified.",
                db.display(),
                loci_store::SCHEMA_VERSION
            )
        } else {
            damaged(&db, &detail)
        };
        let mut lsp = Lsp::start(&root);
        lsp.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": format!("file://{}", root.display()),
                "capabilities": {},
                "initializationOptions": {"scan": false},
            }),
        );
        lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        for id in [101, 102] {
            lsp.send(
                json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
                "params": {"command": "loci.impact", "arguments": [{"target": "hello"}]}}),
            );
            let v = lsp.until("the answer", |v| {
                v["id"] == json!(id) && v.get("method").is_none()
            });
            assert_eq!(
                v["error"],
                json!({
                    "code": 1004,
                    "message": format!("loci.impact: {message}"),
                    "data": {"kind": kind, "message": message, "retryable": false}
                }),
                "{detail}"
            );
        }
        assert_eq!(lsp.request("shutdown", Value::Null), Value::Null);
        lsp.send(json!({"jsonrpc": "2.0", "method": "exit"}));
        assert_eq!(lsp.wait().code(), Some(0), "{detail}");
    }
}

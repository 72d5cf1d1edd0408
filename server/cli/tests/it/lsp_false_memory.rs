//! Memory the unsaved buffer makes false is shown as you type: a remembered method renamed
//! or deleted in the editor, and a page naming a method that never existed, are
//! `missing_symbol` diagnostics on the code file the memory is about (on the renamed
//! definition, the file's first line, or the class the claim names) and on an open markdown
//! file that names them; their severity is the `falseSeverity` setting. `loci lsp` as a
//! real process over stdio; every wait polls frames with a deadline.

use crate::lsp_support;

use std::path::Path;

use lsp_support::{DECODER, Lsp, loci};
use serde_json::{Value, json};

const ENCODER: &str = "\
class JSONEncoder:
    def encode(self, o):
        return str(o)
";

const NOTES: &str = "# Notes\n\nThe decoder's `JSONDecoder.raw_decode()` returns the index too.\n";

/// A scanned repository with a page about each module and a doc naming `raw_decode`.
fn repository() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("json")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("json/decoder.py"), DECODER).unwrap();
    std::fs::write(root.join("json/encoder.py"), ENCODER).unwrap();
    std::fs::write(root.join("docs/NOTES.md"), NOTES).unwrap();
    loci(&root, &["scan"]);
    loci(
        &root,
        &[
            "remember",
            "json/decoder.py",
            "--text",
            "`JSONDecoder.raw_decode()` returns the object and where it ended.",
        ],
    );
    loci(
        &root,
        &[
            "remember",
            "json/encoder.py",
            "--text",
            "`JSONEncoder.encode_fast()` skips the checks.",
        ],
    );
    (dir, root)
}

fn start(root: &Path, options: Value) -> Lsp {
    let mut lsp = Lsp::start(root);
    lsp.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": format!("file://{}", root.display()),
            "capabilities": {},
            "initializationOptions": options,
        }),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp
}

fn uri(root: &Path, path: &str) -> String {
    format!("file://{}/{path}", root.display())
}

fn open(lsp: &mut Lsp, uri: &str, language: &str, text: &str) {
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}}),
    );
}

fn replace(lsp: &mut Lsp, uri: &str, version: i64, text: &str) {
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"text": text}]}}),
    );
}

/// The first publish for `uri` at `version` with diagnostics, as `[severity, code, message,
/// range]` rows.
fn published(lsp: &mut Lsp, uri: &str, version: i64) -> Vec<Value> {
    let v = lsp.until(&format!("diagnostics for {uri} v{version}"), |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["uri"] == json!(uri)
            && v["params"]["version"] == json!(version)
            && v["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| !d.is_empty())
    });
    v["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| json!([d["severity"], d["code"], d["message"], d["range"]]))
        .collect()
}

fn range(line: u32, start: u32, end: u32) -> Value {
    json!({"start": {"line": line, "character": start}, "end": {"line": line, "character": end}})
}

#[test]
fn fault_a_rename_of_a_remembered_method_in_an_unsaved_buffer_showed_nothing() {
    let (_dir, root) = repository();
    let decoder = uri(&root, "json/decoder.py");
    let notes = uri(&root, "docs/NOTES.md");
    let mut lsp = start(&root, json!({"scan": false}));
    open(&mut lsp, &notes, "markdown", NOTES);
    open(&mut lsp, &decoder, "python", DECODER);
    // Renamed in the buffer, call and definition, not saved.
    let renamed = DECODER.replace("raw_decode", "parse_prefix");
    replace(&mut lsp, &decoder, 2, &renamed);
    // On the code file: at the renamed definition.
    assert_eq!(
        published(&mut lsp, &decoder, 2),
        [json!([
            2,
            "missing_symbol",
            "memory `json/decoder.py` v1 claim `JSONDecoder.raw_decode()` is false: \
             json/decoder.py#JSONDecoder.raw_decode@method is not in the buffer; \
             `JSONDecoder.parse_prefix` here has the same body (renamed to `parse_prefix`?)",
            range(5, 8, 20)
        ])]
    );
    // On the open markdown that names it, at the claim.
    assert_eq!(
        published(&mut lsp, &notes, 1),
        [json!([
            2,
            "missing_symbol",
            "missing_symbol `JSONDecoder.raw_decode()`: `JSONDecoder.raw_decode` is not in the \
             unsaved json/decoder.py; `JSONDecoder.parse_prefix` there has the same body \
             (did you mean `JSONDecoder.parse_prefix`?)",
            range(2, 15, 39)
        ])]
    );
    // Undo: both clear.
    replace(&mut lsp, &decoder, 3, DECODER);
    lsp.until("cleared diagnostics of the code file", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["uri"] == json!(decoder)
            && v["params"] == json!({"uri": decoder, "version": 3, "diagnostics": []})
    });
    lsp.until("cleared diagnostics of the markdown", |v| {
        v["params"] == json!({"uri": notes, "version": 1, "diagnostics": []})
    });
}

#[test]
fn fault_a_delete_of_a_remembered_method_in_an_unsaved_buffer_showed_nothing() {
    let (_dir, root) = repository();
    let decoder = uri(&root, "json/decoder.py");
    let mut lsp = start(&root, json!({"scan": false}));
    open(&mut lsp, &decoder, "python", DECODER);
    let deleted = DECODER
        .split("\n    def raw_decode")
        .next()
        .unwrap()
        .to_string();
    replace(&mut lsp, &decoder, 2, &deleted);
    // On the file's first line.
    assert_eq!(
        published(&mut lsp, &decoder, 2),
        [json!([
            2,
            "missing_symbol",
            "memory `json/decoder.py` v1 claim `JSONDecoder.raw_decode()` is false: \
             json/decoder.py#JSONDecoder.raw_decode@method was deleted",
            range(0, 0, 18)
        ])]
    );
}

#[test]
fn fault_a_page_naming_a_method_that_never_existed_showed_in_no_editor() {
    let (_dir, root) = repository();
    let encoder = uri(&root, "json/encoder.py");
    // The severity of false claims is a setting.
    let mut lsp = start(&root, json!({"scan": false, "falseSeverity": "error"}));
    open(&mut lsp, &encoder, "python", ENCODER);
    // On the class the claim names, as soon as the file opens.
    let rows = published(&mut lsp, &encoder, 1);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], json!(1));
    assert_eq!(rows[0][1], json!("missing_symbol"));
    assert_eq!(rows[0][3], range(0, 6, 17));
    let message = rows[0][2].as_str().unwrap();
    assert!(
        message.starts_with(
            "memory `json/encoder.py` v1 claim `JSONEncoder.encode_fast()` is false: no symbol \
             `JSONEncoder.encode_fast` in the map"
        ),
        "{message}"
    );
    // Defining it in the buffer makes the claim true: cleared.
    let defined = format!("{ENCODER}\n    def encode_fast(self, o):\n        return repr(o)\n");
    replace(&mut lsp, &encoder, 2, &defined);
    lsp.until("cleared diagnostics", |v| {
        v["params"] == json!({"uri": encoder, "version": 2, "diagnostics": []})
    });
}

#[test]
fn fault_stale_memory_was_published_as_information() {
    let (_dir, root) = repository();
    let decoder = uri(&root, "json/decoder.py");
    let edited = DECODER.replace("return obj, end", "return obj, end + 1");
    // Default: a warning.
    let mut lsp = start(&root, json!({"scan": false}));
    open(&mut lsp, &decoder, "python", DECODER);
    replace(&mut lsp, &decoder, 2, &edited);
    let stale = json!([
        2,
        "stale_memory",
        "memory `json/decoder.py` v1 claim `JSONDecoder.raw_decode()` is stale: body of \
         json/decoder.py#JSONDecoder.raw_decode@method changed since it was written",
        range(5, 8, 18)
    ]);
    assert_eq!(
        published(&mut lsp, &decoder, 2),
        std::slice::from_ref(&stale)
    );
    drop(lsp);
    // Set: as set.
    let mut lsp = start(
        &root,
        json!({"scan": false, "staleSeverity": "information"}),
    );
    open(&mut lsp, &decoder, "python", DECODER);
    replace(&mut lsp, &decoder, 2, &edited);
    let mut information = stale;
    information[0] = json!(3);
    assert_eq!(published(&mut lsp, &decoder, 2), [information]);
}

/// `loci why FILE:LINE --json` from another process (an agent's), as JSON.
fn why_json(root: &Path, at: &str) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(["why", at, "--json"])
        .current_dir(root)
        .env_remove("LOCI_DB")
        .env_remove("LOCI_SESSION")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Polls `why` until `done` holds for its answer (the server shares a buffer after
/// analysing it, and drops it when the editor closes it, each off the request path), for
/// at most 20 s.
fn why_until(root: &Path, at: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let v = why_json(root, at);
        if done(&v) {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: {v:#}");
    }
}

/// An agent's answer about a file open with unsaved edits judges memory against the buffer
/// the engineer is typing ("unsaved in editor"), through the store the language server
/// shares it in, and stops when the editor closes the file.
#[test]
fn an_agent_sees_what_the_unsaved_buffer_makes_false() {
    let (_dir, root) = repository();
    let decoder = uri(&root, "json/decoder.py");
    let before = why_json(&root, "json/decoder.py:6");
    assert_eq!(before["capability"]["overlay"], json!(false));
    assert_eq!(before["stale_warnings"], json!([]));
    let mut lsp = start(&root, json!({"scan": false}));
    open(&mut lsp, &decoder, "python", DECODER);
    let renamed = DECODER.replace("raw_decode", "parse_prefix");
    replace(&mut lsp, &decoder, 2, &renamed);
    published(&mut lsp, &decoder, 2);
    let during = why_until(&root, "json/decoder.py:6", "the buffer shared", |v| {
        v["capability"]["overlay"] == json!(true)
    });
    assert_eq!(
        during["stale_warnings"],
        json!([{
            "path": "json/decoder.py",
            "reason": "unsaved in editor (version 2): memory `json/decoder.py` v1 claim \
                       `JSONDecoder.raw_decode()` is false: \
                       json/decoder.py#JSONDecoder.raw_decode@method is not in the buffer; \
                       `JSONDecoder.parse_prefix` here has the same body (renamed to \
                       `parse_prefix`?)"
        }])
    );
    let note = during["capability"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|n| n.starts_with("json/decoder.py: unsaved in an editor (version 2, "))
        .map(str::to_string);
    assert!(note.is_some_and(|n| n.ends_with("memory about it is judged against that text")));
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {
        "textDocument": {"uri": decoder}}}),
    );
    let after = why_until(&root, "json/decoder.py:6", "the buffer dropped", |v| {
        v["capability"]["overlay"] == json!(false)
    });
    assert_eq!(after["stale_warnings"], json!([]));
}

/// A language server killed with buffers shared leaves its rows behind: answers ignore
/// them (its process is gone), so no agent is told about an editor that no longer exists.
#[test]
fn the_buffers_of_a_killed_server_are_ignored() {
    let (_dir, root) = repository();
    let decoder = uri(&root, "json/decoder.py");
    let mut lsp = start(&root, json!({"scan": false}));
    open(&mut lsp, &decoder, "python", DECODER);
    replace(
        &mut lsp,
        &decoder,
        2,
        &DECODER.replace("raw_decode", "parse_prefix"),
    );
    published(&mut lsp, &decoder, 2);
    why_until(&root, "json/decoder.py:6", "the buffer shared", |v| {
        v["capability"]["overlay"] == json!(true)
    });
    drop(lsp); // SIGKILL, and waited for
    let after = why_json(&root, "json/decoder.py:6");
    assert_eq!(after["capability"]["overlay"], json!(false));
    assert_eq!(after["stale_warnings"], json!([]));
}

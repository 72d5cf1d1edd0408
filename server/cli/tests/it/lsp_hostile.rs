//! Hostile protocol input to `loci lsp` as a real process: malformed frames, wrong
//! `Content-Length`, invalid JSON, JSON that is not JSON-RPC, unknown methods, wrong
//! parameter types, batches, `$/cancelRequest` for finished and unknown ids, messages
//! before `initialize` and after `shutdown`. Each gets the error the specification
//! prescribes (LSP 3.17, JSON-RPC 2.0 §5.1), and a valid request after it is answered.
//! docs/reliability.md lists the cases and the rules they come from.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(60);

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn framed(message: &Value) -> Vec<u8> {
    frame(message.to_string().as_bytes())
}

/// Reads frames strictly from `r`: `Content-Length: N\r\n\r\n` and N bytes of one JSON
/// object, nothing else. `Err` describes the first violation; `Ok(None)` is a clean end.
fn read_frame(r: &mut impl Read) -> Result<Option<Value>, String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match r.read(&mut byte) {
            Ok(0) if head.is_empty() => return Ok(None),
            Ok(0) => return Err(format!("end of output inside headers {head:?}")),
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(e.to_string()),
        }
    }
    let head = String::from_utf8(head).map_err(|e| e.to_string())?;
    let length: usize = head
        .strip_prefix("Content-Length: ")
        .and_then(|h| h.strip_suffix("\r\n\r\n"))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("unexpected headers {head:?}"))?;
    let mut body = vec![0; length];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_slice(&body).map_err(|e| format!("body: {e}"))?;
    if !value.is_object() {
        return Err(format!("not an object: {value}"));
    }
    Ok(Some(value))
}

/// `loci lsp` with its stdout read frame by frame on a thread.
struct Lsp {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<Result<Value, String>>,
}

impl Lsp {
    fn start() -> Lsp {
        let dir = std::env::temp_dir();
        let mut child = Command::new(env!("CARGO_BIN_EXE_loci"))
            .arg("lsp")
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting loci lsp");
        let mut stdout = child.stdout.take().expect("stdout");
        let (tx, frames) = channel();
        std::thread::spawn(move || {
            loop {
                match read_frame(&mut stdout) {
                    Ok(Some(v)) => {
                        if tx.send(Ok(v)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Lsp {
            stdin: child.stdin.take(),
            child,
            frames,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("writing to loci lsp");
        stdin.flush().expect("flushing to loci lsp");
    }

    fn send_message(&mut self, message: Value) {
        self.send(&framed(&message));
    }

    /// The next frame, skipping log messages.
    fn next(&self) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.frames.recv_timeout(left) {
                Ok(Ok(v)) if v["method"] == "window/logMessage" => continue,
                Ok(Ok(v)) => return v,
                Ok(Err(e)) => panic!("stdout is not protocol: {e}"),
                Err(RecvTimeoutError::Timeout) => panic!("no frame within {TIMEOUT:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("loci lsp closed stdout"),
            }
        }
    }

    /// The next frame, which must be an error response: `(id, code)`.
    fn error(&self) -> (Value, i64) {
        let v = self.next();
        let code = v["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("expected an error response, got {v}"));
        (v["id"].clone(), code)
    }

    /// A request whose answer proves the session goes on: `loci.debug.text` of the open
    /// document. The next frame must be its answer, with the expected text.
    fn probe(&mut self, id: i64) {
        self.send_probe(id);
        self.expect_probe(id);
    }

    fn send_probe(&mut self, id: i64) {
        self.send_message(
            json!({ "jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
            "params": { "command": "loci.debug.text", "arguments": [{ "uri": DOC }] } }),
        );
    }

    fn expect_probe(&self, id: i64) {
        let v = self.next();
        assert_eq!(v["id"], json!(id), "{v}");
        assert_eq!(v["result"]["text"], json!(TEXT), "{v}");
    }

    /// Closes stdin and waits for the exit (killing it after the timeout).
    fn wait(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("waiting for loci lsp") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("loci lsp did not exit within {TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        // Only this test's own child, by handle.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

const DOC: &str = "file:///hostile/a.rs";
const TEXT: &str = "fn a() {}\n";

fn initialize(lsp: &mut Lsp) {
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "processId": null, "rootUri": null, "capabilities": {},
            "initializationOptions": { "scan": false } } }));
    let v = lsp.next();
    assert_eq!(v["id"], 1, "{v}");
    assert!(v["result"]["capabilities"].is_object(), "{v}");
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": DOC, "languageId": "rust", "version": 1, "text": TEXT } } }),
    );
}

/// LSP 3.17 "Initialize Request": requests before `initialize` get `-32002`,
/// notifications are dropped; after `initialize` the session works.
#[test]
fn lsp_before_initialize_requests_get_32002_and_notifications_are_dropped() {
    let mut lsp = Lsp::start();
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": "file:///hostile/early.rs", "languageId": "rust", "version": 1, "text": "fn early() {}" } } }));
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "id": "early", "method": "textDocument/hover",
        "params": { "textDocument": { "uri": DOC }, "position": { "line": 0, "character": 0 } } }),
    );
    assert_eq!(lsp.error(), (json!("early"), -32002));
    initialize(&mut lsp);
    lsp.probe(2);
    // The early didOpen was dropped: no such document.
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
        "params": { "command": "loci.debug.text", "arguments": [{ "uri": "file:///hostile/early.rs" }] } }));
    let v = lsp.next();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(3), json!(1001)),
        "{v}"
    );
    // A second initialize is an invalid request.
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 4, "method": "initialize",
        "params": { "processId": null, "rootUri": null, "capabilities": {} } }));
    assert_eq!(lsp.error(), (json!(4), -32600));
    lsp.probe(5);
}

/// Broken framing gets `-32700` (id null) and the reader resynchronises at the next
/// `Content-Length`; the session goes on after each.
#[test]
fn lsp_malformed_frames_get_parse_errors_and_the_session_goes_on() {
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    let body = |id: i64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "shutdown" })
            .to_string()
            .into_bytes()
    };
    // No header at all: a bare JSON body (a `shutdown`, which must not run).
    let mut bare = body(10);
    bare.extend(b"\r\n");
    lsp.send(&bare);
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.probe(11);
    // A garbage header line.
    lsp.send(b"Garbage!\r\n\r\n");
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.probe(12);
    // Garbage glued to the front of a valid frame: the frame is still read.
    let mut glued = b"xyz".to_vec();
    glued.extend(framed(
        &json!({ "jsonrpc": "2.0", "id": 13, "method": "workspace/executeCommand",
        "params": { "command": "loci.debug.text", "arguments": [{ "uri": DOC }] } }),
    ));
    lsp.send(&glued);
    assert_eq!(lsp.error(), (Value::Null, -32700));
    assert_eq!(lsp.next()["id"], 13);
    // The blank line after the headers is missing.
    let mut missing = format!("Content-Length: {}\r\n", body(14).len()).into_bytes();
    missing.extend(body(14));
    lsp.send(&missing);
    // The broken header block ends only where the next frame's header line does.
    lsp.send_probe(15);
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.expect_probe(15);
    // Content-Length too short: the cut body is not JSON, the rest is garbage.
    let mut short = b"Content-Length: 5\r\n\r\n".to_vec();
    short.extend(body(16));
    lsp.send(&short);
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.send_probe(17);
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.expect_probe(17);
    // Non-numeric and overflowing Content-Length.
    lsp.send(b"Content-Length: twelve\r\n\r\n{}");
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.probe(18);
    lsp.send(b"Content-Length: 99999999999999999999999\r\n\r\n{}");
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.probe(19);
    // An unsupported charset.
    let mut latin = b"Content-Type: application/vscode-jsonrpc; charset=latin1\r\n".to_vec();
    latin.extend(framed(
        &json!({ "jsonrpc": "2.0", "id": 20, "method": "shutdown" }),
    ));
    lsp.send(&latin);
    assert_eq!(lsp.error(), (Value::Null, -32700));
    lsp.probe(21);
    // Lower-case header names and a UTF-8 Content-Type are fine.
    let request = json!({ "jsonrpc": "2.0", "id": 22, "method": "workspace/executeCommand",
        "params": { "command": "loci.debug.text", "arguments": [{ "uri": DOC }] } })
    .to_string();
    lsp.send(
        format!(
            "content-length: {}\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{request}",
            request.len()
        )
        .as_bytes(),
    );
    assert_eq!(lsp.next()["result"]["text"], TEXT);
    // Everything was answered: shutdown and exit work, exit code 0.
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 23, "method": "shutdown" }));
    assert_eq!(
        lsp.next(),
        json!({ "jsonrpc": "2.0", "id": 23, "result": null })
    );
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "exit" }));
    assert!(lsp.wait().success());
}

/// Bodies that are not JSON get `-32700`; JSON that is not a JSON-RPC message (batches
/// included: LSP has none) gets `-32600`, with the id when one could be read.
#[test]
fn lsp_invalid_json_and_non_json_rpc_get_32700_and_32600() {
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    let cases: &[(&[u8], (Value, i64))] = &[
        (b"{ not json", (Value::Null, -32700)),
        (b"\xff\xfe{}", (Value::Null, -32700)),
        (b"", (Value::Null, -32700)),
        (b"42", (Value::Null, -32600)),
        (b"{\"hello\":\"world\"}", (Value::Null, -32600)),
        (b"{\"id\":30,\"method\":\"shutdown\"}", (json!(30), -32600)),
        (b"{\"jsonrpc\":\"2.0\",\"id\":31}", (json!(31), -32600)),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":32,\"method\":7}",
            (json!(32), -32600),
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"shutdown\"}",
            (Value::Null, -32600),
        ),
        (b"[]", (Value::Null, -32600)),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":33,\"method\":\"shutdown\"}]",
            (Value::Null, -32600),
        ),
    ];
    for (i, (body, expected)) in cases.iter().enumerate() {
        lsp.send(&frame(body));
        assert_eq!(
            &lsp.error(),
            expected,
            "case {i}: {:?}",
            String::from_utf8_lossy(body)
        );
        lsp.probe(100 + i as i64);
    }
    // A response nobody asked for is dropped without an answer.
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 999, "result": {} }));
    lsp.probe(200);
}

/// Unknown methods: a request gets `-32601`, a notification (`$/` or not) is ignored.
/// Wrong parameter types get `-32602`. `$/cancelRequest` for a finished or unknown id is
/// ignored (no reply).
#[test]
fn lsp_unknown_methods_bad_params_and_stray_cancels() {
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "id": 40, "method": "loci/noSuchMethod", "params": {} }),
    );
    assert_eq!(lsp.error(), (json!(40), -32601));
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 41, "method": "$/noSuchRequest" }));
    assert_eq!(lsp.error(), (json!(41), -32601));
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "method": "loci/noSuchNotification", "params": {} }),
    );
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "$/noSuchNotification" }));
    lsp.probe(42);
    let bad_params = [
        json!({ "textDocument": 5, "position": { "line": 0, "character": 0 } }),
        json!({ "textDocument": { "uri": DOC }, "position": { "line": -1, "character": 0 } }),
        json!([1, 2]),
        json!("hover"),
    ];
    for (i, params) in bad_params.into_iter().enumerate() {
        let id = 50 + i as i64;
        lsp.send_message(
            json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": params }),
        );
        assert_eq!(lsp.error(), (json!(id), -32602), "{params}");
    }
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 55, "method": "textDocument/hover" }));
    assert_eq!(lsp.error(), (json!(55), -32602));
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "id": 56, "method": "workspace/executeCommand",
        "params": { "command": "loci.debug.text", "arguments": "x" } }),
    );
    assert_eq!(lsp.error(), (json!(56), -32602));
    // A notification with bad params is dropped (notifications are never answered).
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": { "textDocument": 1 } }));
    lsp.probe(57);
    // Cancels for a finished request (57) and an unknown one: no reply at all; the next
    // frame is the probe's answer.
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": 57 } }),
    );
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": "nobody" } }),
    );
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": null } }),
    );
    lsp.probe(58);
}

/// LSP 3.17 "Shutdown Request": requests after `shutdown` get `-32600` (InvalidRequest),
/// notifications are dropped, `exit` ends the process with code 0.
#[test]
fn lsp_requests_after_shutdown_get_32600_and_exit_is_clean() {
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 60, "method": "shutdown" }));
    assert_eq!(
        lsp.next(),
        json!({ "jsonrpc": "2.0", "id": 60, "result": null })
    );
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "id": 61, "method": "textDocument/hover",
        "params": { "textDocument": { "uri": DOC }, "position": { "line": 0, "character": 3 } } }),
    );
    assert_eq!(lsp.error(), (json!(61), -32600));
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": { "uri": DOC, "version": 2 }, "contentChanges": [{ "text": "" }] } }),
    );
    lsp.send_message(json!({ "jsonrpc": "2.0", "id": 62, "method": "shutdown" }));
    assert_eq!(lsp.error(), (json!(62), -32600));
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "exit" }));
    assert!(lsp.wait().success());
}

/// The end of input inside a frame (a Content-Length longer than what follows, or a huge
/// one) ends the session without a hang; a huge Content-Length is refused at once.
#[test]
fn lsp_truncated_or_huge_frames_then_end_of_input_exit_without_a_hang() {
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    lsp.send(b"Content-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":70,");
    lsp.wait();
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    lsp.send(b"Content-Length: 1000000000000\r\n\r\n{\"jsonrpc\":\"2.0\"");
    assert_eq!(lsp.error(), (Value::Null, -32600));
    lsp.wait();
}

/// Fault found by the test above: tower-lsp-server answers nothing to an unknown `$/`
/// method, request or notification. LSP 3.17 ("`$` Notifications and Requests"): a
/// request must get `MethodNotFound`; only notifications may be ignored.
#[test]
fn fault_unknown_dollar_request_was_left_unanswered() {
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    lsp.send_message(
        json!({ "jsonrpc": "2.0", "id": "d1", "method": "$/noSuchRequest", "params": {} }),
    );
    let v = lsp.next();
    assert_eq!(
        (
            v["id"].clone(),
            v["error"]["code"].clone(),
            v["error"]["message"].clone()
        ),
        (
            json!("d1"),
            json!(-32601),
            json!("method not found: $/noSuchRequest")
        ),
        "{v}"
    );
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "$/noSuchNotification", "params": {} }));
    lsp.probe(2);
}

/// Fault: `exit` without `shutdown` ended the process with code 0; LSP 3.17 ("Exit
/// Notification"): "The server should exit with success code 0 if the shutdown request has
/// been received before; otherwise with error code 1."
#[test]
fn fault_exit_without_shutdown_exited_0() {
    let mut lsp = Lsp::start();
    initialize(&mut lsp);
    lsp.send_message(json!({ "jsonrpc": "2.0", "method": "exit" }));
    assert_eq!(lsp.wait().code(), Some(1));
}

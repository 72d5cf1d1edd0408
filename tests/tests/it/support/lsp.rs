//! An in-process LSP client for end-to-end tests: runs `loci_lsp::serve` on in-memory
//! streams, writes framed JSON, reads framed messages strictly (`Content-Length` counted in
//! bytes, exactly that many bytes of JSON), and waits for specific messages with a timeout
//! (no sleeps). Server-to-client requests the tests do not care about
//! (`window/workDoneProgress/create`, `client/registerCapability`,
//! `workspace/codeLens/refresh`) are answered with `null` by the reader.
//!
//! Every message read must be consumed by the test, except the methods in the client's
//! ignore list (by default [`NOISE`]: log messages and progress); [`Client::shutdown`]
//! fails the test when anything was left unread.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

/// Methods dropped unless a test waits for them.
pub const NOISE: &[&str] = &[
    "window/logMessage",
    "$/progress",
    "window/workDoneProgress/create",
];

/// Server-to-client requests the reader answers with `null`.
const AUTO_ANSWERED: &[&str] = &[
    "window/workDoneProgress/create",
    "client/registerCapability",
    "workspace/codeLens/refresh",
];

/// How long any wait lasts before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(30);

type Writer = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// The test side of one server.
pub struct Client {
    writer: Writer,
    incoming: mpsc::UnboundedReceiver<Result<Value, String>>,
    unread: VecDeque<Value>,
    ignored: Vec<String>,
    next_id: i64,
    server: JoinHandle<()>,
    /// Ends of work-done progress seen while waiting for something else, not yet expected.
    progress_ends: usize,
    /// Highest `$/loci/analyzed` version seen per URI.
    analyzed: HashMap<String, i64>,
}

/// Frames `body` with a byte-counted `Content-Length`.
pub fn frame(body: &Value) -> Vec<u8> {
    let body = body.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Reads one frame strictly: headers ending in `\r\n`, a `Content-Length`, then exactly
/// that many bytes of one JSON object. `Ok(None)` at a clean end of stream.
pub async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> Result<Option<Value>, String> {
    let mut length = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let n = reader
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("reading a header: {e}"))?;
        if n == 0 {
            return if first {
                Ok(None)
            } else {
                Err("end of stream inside headers".into())
            };
        }
        first = false;
        let line = String::from_utf8(line).map_err(|e| format!("header is not UTF-8: {e}"))?;
        let Some(line) = line.strip_suffix("\r\n") else {
            return Err(format!("header not ended by CRLF: {line:?}"));
        };
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(": ")
            .ok_or_else(|| format!("malformed header {line:?}"))?;
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|e| format!("bad Content-Length {value:?}: {e}"))?,
            );
        }
    }
    let length = length.ok_or("frame without Content-Length")?;
    let mut body = vec![0; length];
    reader
        .read_exact(&mut body)
        .await
        .map_err(|e| format!("reading a {length}-byte body: {e}"))?;
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        format!(
            "body of {length} bytes is not one JSON value ({e}): {:?}",
            String::from_utf8_lossy(&body)
        )
    })?;
    if !value.is_object() {
        return Err(format!("frame body is not an object: {value}"));
    }
    Ok(Some(value))
}

fn is_progress_end(m: &Value) -> bool {
    m.get("method").and_then(Value::as_str) == Some("$/progress")
        && m.pointer("/params/value/kind") == Some(&json!("end"))
}

/// A `file://` URI for an absolute path.
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// `initialize` params: `root` as `rootUri` (or null), hierarchical symbols, work-done
/// progress, markdown hovers; `extra` is merged in (objects recursively).
pub fn init_params(root: Option<&Path>, extra: Value) -> Value {
    let mut params = json!({
        "processId": null,
        "rootUri": root.map(uri),
        "capabilities": {
            "window": { "workDoneProgress": true },
            "textDocument": {
                "documentSymbol": { "hierarchicalDocumentSymbolSupport": true },
                "hover": { "contentFormat": ["markdown", "plaintext"] }
            }
        }
    });
    merge(&mut params, extra);
    params
}

/// Merges `extra` into `base`: objects key by key, anything else replaces.
pub fn merge(base: &mut Value, extra: Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, e) => *b = e,
    }
}

impl Client {
    /// Starts a server in-process with `options`.
    pub async fn start(options: loci_lsp::ServerOptions) -> Client {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_io);
        let server = tokio::spawn(loci_lsp::serve(server_read, server_write, options));
        let (read, write) = tokio::io::split(client_io);
        Client::over(read, write, server)
    }

    /// A client over any streams (the server task is `server`).
    pub fn over<R, W>(read: R, write: W, server: JoinHandle<()>) -> Client
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let writer: Writer = Arc::new(Mutex::new(Box::new(write)));
        let (tx, incoming) = mpsc::unbounded_channel();
        let w = writer.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(read);
            loop {
                match read_frame(&mut reader).await {
                    Ok(Some(message)) => {
                        let method = message
                            .get("method")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if let Some(id) = message.get("id")
                            && AUTO_ANSWERED.contains(&method)
                        {
                            let reply =
                                frame(&json!({ "jsonrpc": "2.0", "id": id, "result": null }));
                            let mut w = w.lock().await;
                            let _ = w.write_all(&reply).await;
                            let _ = w.flush().await;
                        }
                        if tx.send(Ok(message)).is_err() {
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
        Client {
            writer,
            incoming,
            unread: VecDeque::new(),
            ignored: NOISE.iter().map(|s| s.to_string()).collect(),
            next_id: 1,
            server,
            progress_ends: 0,
            analyzed: HashMap::new(),
        }
    }

    /// Also drops messages of `method` unless waited for.
    pub fn ignore(&mut self, method: &str) {
        self.ignored.push(method.into());
    }

    /// Writes raw bytes (several frames in one write, a broken frame, ...).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let mut w = self.writer.lock().await;
        w.write_all(bytes).await.expect("writing to the server");
        w.flush().await.expect("flushing to the server");
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.send_raw(&frame(&message)).await;
    }

    /// The next request id.
    pub fn next_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A request message (not sent).
    pub fn request_message(&mut self, method: &str, params: Value) -> (i64, Value) {
        let id = self.next_id();
        (
            id,
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        )
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let (id, message) = self.request_message(method, params);
        self.send_raw(&frame(&message)).await;
        self.response(id).await
    }

    /// Sends a request and returns its `result`; fails on an error response.
    pub async fn request_ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        match response.get("error") {
            Some(error) => panic!("{method} failed: {error}"),
            None => response.get("result").cloned().unwrap_or(Value::Null),
        }
    }

    /// Waits for the response with `id`.
    pub async fn response(&mut self, id: i64) -> Value {
        self.expect(&format!("the response to request {id}"), |m| {
            m.get("method").is_none() && m.get("id") == Some(&json!(id))
        })
        .await
    }

    /// Waits for a notification (or server request) of `method` and returns its params.
    pub async fn expect_notification(&mut self, method: &str) -> Value {
        let m = self
            .expect(method, |m| {
                m.get("method").and_then(Value::as_str) == Some(method)
            })
            .await;
        m.get("params").cloned().unwrap_or(Value::Null)
    }

    /// Waits for the end of a work-done progress (a scan), or takes one seen earlier.
    pub async fn expect_progress_end(&mut self) {
        if self.progress_ends > 0 {
            self.progress_ends -= 1;
            return;
        }
        self.expect("$/progress end", is_progress_end).await;
    }

    /// Waits for `$/loci/analyzed` of `version` (or later) of `uri`, or takes one seen
    /// earlier.
    pub async fn expect_analyzed(&mut self, uri: &str, version: i64) {
        if self.analyzed.get(uri).is_some_and(|v| *v >= version) {
            return;
        }
        self.expect(&format!("$/loci/analyzed v{version}"), |m| {
            m.get("method").and_then(Value::as_str) == Some("$/loci/analyzed")
                && m.pointer("/params/uri") == Some(&json!(uri))
                && m.pointer("/params/version")
                    .and_then(Value::as_i64)
                    .is_some_and(|v| v >= version)
        })
        .await;
    }

    /// Notes progress ends and analyses seen while waiting for something else.
    fn record(&mut self, message: &Value) {
        if is_progress_end(message) {
            self.progress_ends += 1;
        }
        if message.get("method").and_then(Value::as_str) == Some("$/loci/analyzed")
            && let (Some(uri), Some(version)) = (
                message.pointer("/params/uri").and_then(Value::as_str),
                message.pointer("/params/version").and_then(Value::as_i64),
            )
        {
            let seen = self.analyzed.entry(uri.to_string()).or_insert(version);
            *seen = (*seen).max(version);
        }
    }

    /// Waits for the first message matching `wanted`. Messages read meanwhile are kept as
    /// unread, except ignored methods and `$/loci/analyzed` notifications (dropped).
    pub async fn expect(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.unread.iter().position(&wanted) {
            return self.unread.remove(i).expect("index from position");
        }
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let message = match tokio::time::timeout_at(deadline, self.incoming.recv()).await {
                Err(_) => panic!("timed out waiting for {what}; unread: {:?}", self.unread),
                Ok(None) => panic!("the server closed the stream while waiting for {what}"),
                Ok(Some(Err(e))) => panic!("protocol error from the server: {e}"),
                Ok(Some(Ok(message))) => message,
            };
            if wanted(&message) {
                return message;
            }
            self.record(&message);
            if !self.is_ignored(&message) {
                self.unread.push_back(message);
            }
        }
    }

    fn is_ignored(&self, message: &Value) -> bool {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        method == "$/loci/analyzed" || self.ignored.iter().any(|m| m == method)
    }

    /// `initialize` with `params`, then `initialized`; returns the `initialize` result.
    pub async fn initialize(&mut self, params: Value) -> Value {
        let result = self.request_ok("initialize", params).await;
        self.notify("initialized", json!({})).await;
        result
    }

    /// `textDocument/didOpen`.
    pub async fn open(&mut self, uri: &str, language: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": language, "version": version, "text": text } }),
        )
        .await;
    }

    /// `workspace/executeCommand` with one argument object; the whole response.
    pub async fn command(&mut self, command: &str, argument: Value) -> Value {
        self.request(
            "workspace/executeCommand",
            json!({ "command": command, "arguments": [argument] }),
        )
        .await
    }

    /// `loci.debug.text`: the server's `{uri, version, text}` of a document.
    pub async fn buffer(&mut self, uri: &str) -> Value {
        let response = self.command("loci.debug.text", json!({ "uri": uri })).await;
        response.get("result").cloned().unwrap_or(response)
    }

    /// `textDocument/hover` at `(line, character)`; the result.
    pub async fn hover(&mut self, uri: &str, line: u32, character: u32) -> Value {
        self.request_ok(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
        )
        .await
    }

    /// The markdown of a hover at `(line, character)`, or `None` for a null hover.
    pub async fn hover_markdown(&mut self, uri: &str, line: u32, character: u32) -> Option<String> {
        let hover = self.hover(uri, line, character).await;
        hover
            .pointer("/contents/value")
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// `textDocument/documentSymbol`; the result.
    pub async fn symbols(&mut self, uri: &str) -> Value {
        self.request_ok(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": uri } }),
        )
        .await
    }

    /// Fails when a message was left unread (progress ends and analyses not waited for
    /// are fine: they are noise).
    pub fn assert_all_read(&mut self) {
        while let Ok(message) = self.incoming.try_recv() {
            match message {
                Ok(m) if self.is_ignored(&m) => {}
                Ok(m) => self.unread.push_back(m),
                Err(e) => panic!("protocol error from the server: {e}"),
            }
        }
        assert!(
            self.unread.is_empty(),
            "messages left unread: {:#?}",
            self.unread
        );
    }

    /// `shutdown` (null result), `exit`, and the server task ends; then no message may
    /// be left unread.
    pub async fn shutdown(mut self) {
        let result = self.request_ok("shutdown", Value::Null).await;
        assert_eq!(result, Value::Null);
        self.notify("exit", Value::Null).await;
        tokio::time::timeout(TIMEOUT, &mut self.server)
            .await
            .expect("the server did not stop after exit")
            .expect("the server task panicked");
        self.assert_all_read();
    }
}

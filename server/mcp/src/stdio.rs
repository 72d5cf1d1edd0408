//! The stdio transport: newline-delimited JSON-RPC, one message per line.
//!
//! One reader task and one writer task. The writer is the only code that touches the
//! output stream and writes whole lines, so concurrent responses never interleave (case
//! B23); serde escapes newlines inside strings, so every message is one line. The reader
//! answers what rmcp's own line transport drops silently: a line that is not JSON gets a
//! `-32700` parse error (id `null`) and the session goes on; a JSON value that is not a
//! JSON-RPC 2.0 message (no or another `jsonrpc`, a null or fractional id, no `method`
//! and no `result`, a batch array) gets `-32600` with its id when valid, else `null`; a
//! known method with parameters of the wrong shape gets `-32602` with its id (unknown
//! methods reach rmcp as custom requests and get `-32601`). Invalid responses are logged
//! and dropped, never answered. Notifications and responses that arrive before
//! `initialize` (either would end an rmcp session) are dropped with a log line. Lines are
//! capped at [`MAX_LINE_BYTES`].
//!
//! End of input (the client closed stdin, or went away) ends the session: calls still
//! running get [`CLOSE_GRACE`] to finish and be answered, then they are cancelled (their
//! workers stop at their next check, see [`crate::server::LociServer::execute`]), and
//! [`serve`] returns at most [`CLOSE_STOP`] + [`FLUSH`] later whatever is still running, so
//! that `loci mcp` exits within about a second of stdin closing, not minutes later with a
//! core busy after a long call.

use std::io;
use std::time::Duration;

use rmcp::model::{ErrorCode, ErrorData};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::{LociServer, McpError};

/// The longest accepted incoming line, in bytes.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Outgoing lines buffered before `send` waits for the writer.
const OUTGOING_QUEUE: usize = 64;

/// How long calls still running when the input ends may take to finish and be answered
/// before they are cancelled (a client may write its requests, close stdin, and read).
pub const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// How long [`serve`] waits for cancelled calls to stop before it returns without them.
pub const CLOSE_STOP: Duration = Duration::from_millis(500);

/// How long [`serve`] waits, at the end, for queued output lines to be written.
pub const FLUSH: Duration = Duration::from_millis(200);

type Rx = RxJsonRpcMessage<RoleServer>;
type Tx = TxJsonRpcMessage<RoleServer>;

/// A server transport over a line-delimited byte stream (see the module docs).
pub struct LineTransport {
    incoming: mpsc::Receiver<Rx>,
    outgoing: mpsc::Sender<Vec<u8>>,
}

/// Handles to the transport's tasks.
pub struct Tasks {
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
    /// Becomes `true` when the reader stops (end of input, a read error).
    input_closed: watch::Receiver<bool>,
}

impl Tasks {
    /// Resolves once the input has ended.
    pub async fn input_closed(&self) {
        let mut closed = self.input_closed.clone();
        // An error means the reader is gone: the input has ended too.
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Stops reading and waits until every queued line has been written and flushed.
    pub async fn finish(self) {
        self.reader.abort();
        let _ = self.reader.await;
        let _ = self.writer.await;
    }
}

/// Builds the transport over `read` and `write`, spawning its reader and writer tasks.
pub fn transport<R, W>(read: R, write: W) -> (LineTransport, Tasks)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(OUTGOING_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTGOING_QUEUE);
    let (closed_tx, input_closed) = watch::channel(false);
    let replies = out_tx.clone();
    let reader = tokio::spawn(async move {
        read_loop(read, in_tx, replies).await;
        let _ = closed_tx.send(true);
    });
    let writer = tokio::spawn(write_loop(write, out_rx));
    (
        LineTransport {
            incoming: in_rx,
            outgoing: out_tx,
        },
        Tasks {
            reader,
            writer,
            input_closed,
        },
    )
}

/// Serves one MCP session on `read`/`write` until the client closes its end; returns
/// within [`CLOSE_GRACE`] + [`CLOSE_STOP`] + [`FLUSH`] of the end of input (see the
/// module docs).
pub async fn serve<R, W>(server: LociServer, read: R, write: W) -> Result<(), McpError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (transport, tasks) = transport(read, write);
    let outcome = match server.serve(transport).await {
        Ok(running) => {
            let stop = running.cancellation_token();
            let waiting = running.waiting();
            tokio::pin!(waiting);
            let ended = tokio::select! {
                ended = &mut waiting => Some(ended),
                () = async {
                    tasks.input_closed().await;
                    tokio::time::sleep(CLOSE_GRACE).await;
                } => {
                    // rmcp would wait 5 s for running calls after the input ends, then
                    // cancel them: cancel them now.
                    tracing::info!("the input ended with calls still running; cancelling them");
                    stop.cancel();
                    tokio::time::timeout(CLOSE_STOP, &mut waiting).await.ok()
                }
            };
            match ended {
                Some(Ok(reason)) => {
                    tracing::info!(?reason, "mcp session ended");
                    Ok(())
                }
                Some(Err(e)) => Err(McpError::Session(format!("the session task failed: {e}"))),
                None => {
                    tracing::warn!(
                        "calls still running {CLOSE_STOP:?} after they were cancelled; ending without them"
                    );
                    Ok(())
                }
            }
        }
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("the client closed the connection before initialize");
            Ok(())
        }
        Err(e) => Err(McpError::Session(e.to_string())),
    };
    // Bounded: a call left running still holds the output's sender.
    if tokio::time::timeout(FLUSH, tasks.finish()).await.is_err() {
        tracing::warn!("output not flushed within {FLUSH:?}; ending without it");
    }
    outcome
}

impl Transport<RoleServer> for LineTransport {
    type Error = io::Error;

    fn send(&mut self, item: Tx) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let outgoing = self.outgoing.clone();
        let line = encode(&item);
        async move {
            outgoing
                .send(line?)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the output is closed"))
        }
    }

    async fn receive(&mut self) -> Option<Rx> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

fn encode<T: serde::Serialize>(message: &T) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// An error response as one line.
pub(crate) fn error_line(id: Value, code: ErrorCode, message: String) -> Vec<u8> {
    let id = match id {
        v @ (Value::Number(_) | Value::String(_)) => v,
        _ => Value::Null,
    };
    let message = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": ErrorData::new(code, message, None),
    });
    let mut line = serde_json::to_vec(&message).unwrap_or_default();
    line.push(b'\n');
    line
}

async fn read_loop<R: AsyncRead + Unpin>(
    read: R,
    incoming: mpsc::Sender<Rx>,
    outgoing: mpsc::Sender<Vec<u8>>,
) {
    let mut reader = BufReader::new(read);
    let mut buf = Vec::new();
    let mut initialized = false;
    loop {
        buf.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        match (&mut reader).take(limit).read_until(b'\n', &mut buf).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "reading the input failed");
                break;
            }
        }
        if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            // Drop the rest of the oversized line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                match (&mut reader)
                    .take(1 << 20)
                    .read_until(b'\n', &mut sink)
                    .await
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) if sink.last() == Some(&b'\n') => break,
                    Ok(_) => {}
                }
            }
            tracing::error!(max = MAX_LINE_BYTES, "incoming line too long; dropped");
            let line = error_line(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                format!("message longer than {MAX_LINE_BYTES} bytes; dropped"),
            );
            if outgoing.send(line).await.is_err() {
                break;
            }
            continue;
        }
        let line = trim_line(&buf);
        if line.is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                tracing::debug!(error = %e, "unparsable input line");
                let reply = error_line(
                    Value::Null,
                    ErrorCode::PARSE_ERROR,
                    format!("parse error: {e}"),
                );
                if outgoing.send(reply).await.is_err() {
                    break;
                }
                continue;
            }
        };
        if !value.is_object() {
            let reply = error_line(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                "invalid request: expected one JSON-RPC message object (batches are not supported)"
                    .into(),
            );
            if outgoing.send(reply).await.is_err() {
                break;
            }
            continue;
        }
        let (id, method) = match check_message(&value) {
            Checked::Message { id, method } => (id, method),
            Checked::Reply(reply) => {
                if outgoing.send(reply).await.is_err() {
                    break;
                }
                continue;
            }
            Checked::Drop(why) => {
                tracing::warn!("dropped input: {why}");
                continue;
            }
        };
        if !initialized && id.is_some() && method.is_none() {
            // rmcp ends the session when anything but a request or a ping comes first.
            tracing::warn!("a response before initialize; dropped");
            continue;
        }
        match serde_json::from_value::<Rx>(value) {
            Ok(rmcp::model::JsonRpcMessage::Request(rmcp::model::JsonRpcRequest {
                id: request_id,
                request: rmcp::model::ClientRequest::CustomRequest(custom),
                ..
            })) if CLIENT_REQUESTS.contains(&custom.method.as_str()) => {
                // A method rmcp knows whose params did not fit its type: rmcp falls back to
                // a custom request and would answer -32601 (as for `tools/call` with
                // `"name": 5` in server/cli/tests/it/mcp_hostile.rs).
                let why = invalid_params(&custom.method, custom.params.as_ref());
                let reply = error_line(
                    serde_json::to_value(&request_id).unwrap_or(Value::Null),
                    ErrorCode::INVALID_PARAMS,
                    why,
                );
                if outgoing.send(reply).await.is_err() {
                    break;
                }
            }
            Ok(message) => {
                if !initialized {
                    match (&id, method.as_deref()) {
                        (Some(_), Some("initialize")) => initialized = true,
                        (None, Some(m)) => {
                            tracing::debug!(method = m, "notification before initialize; dropped");
                            continue;
                        }
                        _ => {}
                    }
                }
                if incoming.send(message).await.is_err() {
                    break;
                }
            }
            Err(e) => match (id, method) {
                (Some(id), Some(_)) => {
                    // A known method (unknown ones parse as custom requests) with params
                    // of the wrong shape.
                    let reply = error_line(
                        id,
                        ErrorCode::INVALID_PARAMS,
                        format!("invalid params: {e}"),
                    );
                    if outgoing.send(reply).await.is_err() {
                        break;
                    }
                }
                (None, method) => {
                    tracing::debug!(error = %e, ?method, "invalid notification; dropped")
                }
                (Some(_), None) => tracing::warn!(error = %e, "invalid response; dropped"),
            },
        }
    }
    tracing::debug!("input closed");
}

/// For the HTTP transport: the JSON-RPC error (one newline-terminated object) for a POST
/// body the stdio reader refuses — not JSON (`-32700`), not one message object or not a
/// valid JSON-RPC 2.0 message (`-32600`), a known method with params of the wrong shape
/// (`-32602`) — or `None` when rmcp should handle the body.
pub(crate) fn refusal(body: &[u8]) -> Option<Vec<u8>> {
    let value: Value = match serde_json::from_slice(trim_line(body)) {
        Ok(v) => v,
        Err(e) => {
            return Some(error_line(
                Value::Null,
                ErrorCode::PARSE_ERROR,
                format!("parse error: {e}"),
            ));
        }
    };
    if !value.is_object() {
        return Some(error_line(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            "invalid request: expected one JSON-RPC message object (batches are not supported)"
                .into(),
        ));
    }
    if let Checked::Reply(reply) = check_message(&value) {
        return Some(reply);
    }
    match serde_json::from_value::<Rx>(value) {
        Ok(rmcp::model::JsonRpcMessage::Request(rmcp::model::JsonRpcRequest {
            id,
            request: rmcp::model::ClientRequest::CustomRequest(custom),
            ..
        })) if CLIENT_REQUESTS.contains(&custom.method.as_str()) => Some(error_line(
            serde_json::to_value(&id).unwrap_or(Value::Null),
            ErrorCode::INVALID_PARAMS,
            invalid_params(&custom.method, custom.params.as_ref()),
        )),
        _ => None,
    }
}

/// The client-to-server request methods rmcp has types for (MCP 2025-06-18 and rmcp's
/// extensions). A request for one of them that rmcp parses as a custom request has
/// parameters of the wrong shape.
const CLIENT_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// The `-32602` message for `method` with `params` that do not fit it: the serde error of
/// the typed request when it can be had (for `tools/call`), else a generic one.
fn invalid_params(method: &str, params: Option<&Value>) -> String {
    let params = params.cloned().unwrap_or(Value::Null);
    if method == "tools/call"
        && let Err(e) = serde_json::from_value::<rmcp::model::CallToolRequestParams>(params.clone())
    {
        return format!("invalid params for {method}: {e}");
    }
    format!("invalid params for {method}: {params}")
}

/// What a JSON object is, checked against JSON-RPC 2.0 and MCP's rules before rmcp sees it.
enum Checked {
    /// A request (`id` and `method`), a notification (`method`) or a response (`id`).
    Message {
        id: Option<Value>,
        method: Option<String>,
    },
    /// Not a valid message: reply with this line.
    Reply(Vec<u8>),
    /// Not a valid response: responses are never answered; log and drop.
    Drop(String),
}

/// Checks the envelope: `jsonrpc` is `"2.0"`; an id is a string or an integer (MCP: "the
/// ID MUST NOT be null"); `method` is a string; a message without `method` is a
/// response (`result` or `error`). Invalid requests get `-32600` with their id when it
/// is valid, else `null` (JSON-RPC 2.0 §5.1).
fn check_message(value: &Value) -> Checked {
    let method = value.get("method");
    let is_response =
        method.is_none() && (value.get("result").is_some() || value.get("error").is_some());
    let id = match value.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
        Some(other) if is_response => {
            return Checked::Drop(format!("a response with an invalid id {other}"));
        }
        Some(other) => {
            return Checked::Reply(error_line(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                format!("invalid request: `id` must be a string or an integer, got {other}"),
            ));
        }
    };
    let invalid = |message: String| {
        Checked::Reply(error_line(
            id.clone().unwrap_or(Value::Null),
            ErrorCode::INVALID_REQUEST,
            message,
        ))
    };
    if value.get("jsonrpc") != Some(&json!("2.0")) {
        let got = value
            .get("jsonrpc")
            .map_or_else(|| "nothing".to_string(), Value::to_string);
        if is_response {
            return Checked::Drop(format!("a response with `jsonrpc` {got}"));
        }
        return invalid(format!(
            "invalid request: `jsonrpc` must be \"2.0\", got {got}"
        ));
    }
    match method {
        Some(Value::String(m)) => Checked::Message {
            id,
            method: Some(m.clone()),
        },
        Some(_) => invalid("invalid request: `method` must be a string".into()),
        None if is_response && id.is_some() => Checked::Message { id, method: None },
        None if is_response => Checked::Drop("a response without an id".into()),
        None => invalid(
            "invalid request: a message needs `method` (a request or notification) or \
             `result`/`error` (a response)"
                .into(),
        ),
    }
}

/// Strips the line ending, surrounding whitespace and a UTF-8 byte order mark.
fn trim_line(buf: &[u8]) -> &[u8] {
    let buf = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(buf);
    let start = buf
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(buf.len());
    let end = buf
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &buf[start..end]
}

async fn write_loop<W: AsyncWrite + Unpin>(write: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    let mut out = tokio::io::BufWriter::new(write);
    while let Some(line) = lines.recv().await {
        if let Err(e) = out.write_all(&line).await {
            tracing::error!(error = %e, "writing the output failed");
            return;
        }
        if lines.is_empty()
            && let Err(e) = out.flush().await
        {
            tracing::error!(error = %e, "flushing the output failed");
            return;
        }
    }
    let _ = out.flush().await;
    let _ = out.shutdown().await;
}

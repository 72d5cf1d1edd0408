//! The LSP base protocol at loci's edge: `Content-Length` framing, JSON and the JSON-RPC
//! message shape, read so that no input ends the session.
//!
//! tower-lsp-server's own `Server` stops reading at the first frame it cannot decode
//! (tokio-util's `FramedRead` ends the stream after a decoder error), so one malformed
//! frame or one invalid JSON body would take the language server down. This module
//! replaces that loop; tower-lsp-server's `LspService` still implements the protocol's
//! lifecycle, routing, `-32601`/`-32602`/`-32002` errors and `$/cancelRequest`; a request
//! it leaves unanswered (an unknown `$/` request) gets `-32601` here.
//!
//! What the reader does with bad input (each error reply has `"id": null` unless the
//! message's id could be read, JSON-RPC 2.0 §5):
//! - a frame whose header block does not start with `Content-Length` or `Content-Type`
//!   (garbage, a body without headers), a malformed header line (a missing blank line), a
//!   non-numeric `Content-Length`, a header block without `Content-Length`: `-32700`, then
//!   the reader skips to the next `Content-Length` in the input (case-insensitive, as
//!   HTTP header names are) and goes on;
//! - a `Content-Length` above [`MAX_CONTENT_LENGTH`]: `-32600`, and that many bytes are
//!   discarded as they arrive (memory stays bounded);
//! - a body that is not UTF-8 JSON, or a `Content-Type` charset other than UTF-8: `-32700`;
//! - a JSON array (a JSON-RPC batch; LSP has no batches): one `-32600`;
//! - JSON that is not a JSON-RPC 2.0 request, notification or response: `-32600`;
//! - an invalid response from the client: logged and dropped (never answered).
//!
//! End of input inside a frame is logged; the session ends as at any end of input.

use std::pin::pin;

use futures::channel::mpsc;
use futures::{FutureExt, SinkExt, StreamExt, future, join, stream};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tower_lsp_server::jsonrpc::{Error, Id, Request, Response};
use tower_lsp_server::{ClientSocket, ExitedError};
use tower_service::Service;

/// The largest accepted message body, in bytes (a `didOpen` of a 64 MiB file still fits).
pub const MAX_CONTENT_LENGTH: u64 = 64 * 1024 * 1024;

/// The longest header block looked at before it counts as garbage, in bytes.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Requests handled at once (tower-lsp-server's default).
const MAX_CONCURRENCY: usize = 4;

/// Requests read ahead of the handlers.
const QUEUE: usize = 100;

/// JSON-RPC 2.0 "Parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 "Invalid Request".
pub const INVALID_REQUEST: i64 = -32600;

/// An error reply to send because of bad input.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The id of the offending message when it could be read, else `null`.
    pub id: Value,
    /// [`PARSE_ERROR`] or [`INVALID_REQUEST`].
    pub code: i64,
    /// What was wrong, and where.
    pub message: String,
}

impl Reply {
    fn new(id: Value, code: i64, message: impl Into<String>) -> Reply {
        Reply {
            id,
            code,
            message: message.into(),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code, "message": self.message },
        })
    }
}

/// What the frame decoder found.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// One message body (exactly `Content-Length` bytes).
    Body(Vec<u8>),
    /// Bad framing: reply with this error; the decoder has already moved on.
    Error(Reply),
}

/// An incremental decoder of `Content-Length` frames that recovers from any input.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Bytes of an oversized body still to discard.
    skipping: u64,
    /// Looking for the next `Content-Length` after bad framing.
    resyncing: bool,
}

/// The header that starts every frame, lower-cased for the case-insensitive search.
const CONTENT_LENGTH: &[u8] = b"content-length";

fn find_content_length(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(CONTENT_LENGTH.len())
        .position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// Whether `name` is an HTTP header field name (an RFC 9110 token).
fn is_token(name: &[u8]) -> bool {
    !name.is_empty()
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
}

/// Why a header block cannot be used.
enum HeaderError {
    /// Reply with this message, then resynchronise from just past `line_start`.
    Bad { message: String, line_start: usize },
}

/// A parsed header block: where the body starts, its length and an unsupported charset.
struct Headers {
    body_start: usize,
    length: u64,
    bad_charset: Option<String>,
}

fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut shown: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        shown.push('…');
    }
    format!("{shown:?}")
}

impl FrameDecoder {
    /// Appends input bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next frame or framing error, `None` when more input is needed.
    pub fn decode(&mut self) -> Option<Frame> {
        if self.skipping > 0 {
            let n = (self.skipping.min(self.buf.len() as u64)) as usize;
            self.buf.drain(..n);
            self.skipping -= n as u64;
            if self.skipping > 0 {
                return None;
            }
        }
        if self.resyncing {
            match find_content_length(&self.buf) {
                Some(at) => {
                    self.buf.drain(..at);
                    self.resyncing = false;
                }
                None => {
                    // Keep a tail that may be the start of a split `Content-Length`.
                    let keep = CONTENT_LENGTH.len() - 1;
                    if self.buf.len() > keep {
                        self.buf.drain(..self.buf.len() - keep);
                    }
                    return None;
                }
            }
        }
        // Blank lines between frames are tolerated.
        let blank = self
            .buf
            .iter()
            .take_while(|b| matches!(b, b'\r' | b'\n'))
            .count();
        self.buf.drain(..blank);
        if self.buf.is_empty() {
            return None;
        }
        let headers = match self.headers() {
            Ok(Some(h)) => h,
            Ok(None) => return None,
            Err(HeaderError::Bad {
                message,
                line_start,
            }) => {
                self.buf.drain(..(line_start + 1).min(self.buf.len()));
                self.resyncing = true;
                return Some(Frame::Error(Reply::new(
                    Value::Null,
                    PARSE_ERROR,
                    format!("parse error: {message}; skipped to the next Content-Length"),
                )));
            }
        };
        if headers.length > MAX_CONTENT_LENGTH {
            self.buf.drain(..headers.body_start);
            self.skipping = headers.length;
            return Some(Frame::Error(Reply::new(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "invalid request: Content-Length {} exceeds loci's limit of {} bytes; \
                     the body is skipped",
                    headers.length, MAX_CONTENT_LENGTH
                ),
            )));
        }
        let end = headers.body_start + headers.length as usize;
        if self.buf.len() < end {
            return None;
        }
        let body: Vec<u8> = self.buf[headers.body_start..end].to_vec();
        self.buf.drain(..end);
        if let Some(charset) = headers.bad_charset {
            return Some(Frame::Error(Reply::new(
                Value::Null,
                PARSE_ERROR,
                format!(
                    "parse error: Content-Type charset {charset:?} is not supported; \
                     LSP messages are UTF-8"
                ),
            )));
        }
        Some(Frame::Body(body))
    }

    /// Parses the header block at the start of the buffer (which does not start with a
    /// line end). `Ok(None)`: incomplete.
    fn headers(&self) -> Result<Option<Headers>, HeaderError> {
        let mut pos = 0;
        let mut length = None;
        let mut bad_charset = None;
        let mut first = true;
        loop {
            let Some(nl) = self.buf[pos..].iter().position(|b| *b == b'\n') else {
                if self.buf.len() - pos > MAX_HEADER_BYTES {
                    return Err(HeaderError::Bad {
                        message: format!(
                            "a header line longer than {MAX_HEADER_BYTES} bytes: {}",
                            shown(&self.buf[pos..])
                        ),
                        line_start: pos,
                    });
                }
                return Ok(None);
            };
            let line_start = pos;
            let mut line = &self.buf[pos..pos + nl];
            pos += nl + 1;
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            if line.is_empty() {
                return match length {
                    Some(length) => Ok(Some(Headers {
                        body_start: pos,
                        length,
                        bad_charset,
                    })),
                    None => Err(HeaderError::Bad {
                        message: "a header block without Content-Length".into(),
                        line_start,
                    }),
                };
            }
            let colon = line.iter().position(|b| *b == b':');
            let (name, value) = match colon {
                Some(c) if is_token(&line[..c]) => (&line[..c], &line[c + 1..]),
                _ => {
                    let message = if first {
                        format!("expected a Content-Length header, got {}", shown(line))
                    } else {
                        format!(
                            "malformed header line {} (is the blank line after the headers missing?)",
                            shown(line)
                        )
                    };
                    return Err(HeaderError::Bad {
                        message,
                        line_start,
                    });
                }
            };
            let value = String::from_utf8_lossy(value).trim().to_string();
            if name.eq_ignore_ascii_case(b"content-length") {
                match value.parse::<u64>() {
                    Ok(n) => length = Some(n),
                    Err(_) => {
                        return Err(HeaderError::Bad {
                            message: format!(
                                "invalid Content-Length {value:?}: expected a byte count"
                            ),
                            line_start,
                        });
                    }
                }
            } else if name.eq_ignore_ascii_case(b"content-type") {
                // `application/vscode-jsonrpc; charset=utf-8` is the default; `utf8` is
                // accepted for backwards compatibility (LSP 3.17, "Header Part").
                let charset = value
                    .split(';')
                    .skip(1)
                    .filter_map(|p| p.trim().split_once('='))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("charset"))
                    .map(|(_, v)| v.trim().trim_matches('"').to_string());
                bad_charset = charset.filter(|c| {
                    !c.eq_ignore_ascii_case("utf-8") && !c.eq_ignore_ascii_case("utf8")
                });
            } else if find_content_length(name).is_some() {
                // `garbageContent-Length: 52`: bytes before a frame.
                return Err(HeaderError::Bad {
                    message: format!("expected a Content-Length header, got {}", shown(line)),
                    line_start,
                });
            } else {
                tracing::debug!(header = %String::from_utf8_lossy(name), "ignoring an unknown header");
            }
            first = false;
        }
    }

    /// What is left at the end of input, if it is more than line ends: for the log.
    pub fn leftover(&self) -> Option<String> {
        if self.skipping > 0 {
            return Some(format!(
                "end of input with {} bytes of an oversized body missing",
                self.skipping
            ));
        }
        if self.resyncing || self.buf.iter().all(|b| b.is_ascii_whitespace()) {
            return None;
        }
        Some(format!(
            "end of input inside a frame: {} bytes unread: {}",
            self.buf.len(),
            shown(&self.buf)
        ))
    }
}

/// A decoded body: a message for the service, or an error to reply (or only to log).
#[derive(Debug)]
pub enum Incoming {
    /// A request or notification.
    Request(Request),
    /// A response to one of the server's requests.
    Response(Response),
    /// Reply with this error.
    Reply(Reply),
    /// Drop, with this log line (a malformed response: responses are never answered).
    Dropped(String),
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Classifies one body (see the module docs).
pub fn classify(body: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Reply(Reply::new(
                Value::Null,
                PARSE_ERROR,
                format!("parse error: the body is not JSON: {e}"),
            ));
        }
    };
    let object = match value {
        Value::Object(o) => o,
        Value::Array(a) => {
            let message = if a.is_empty() {
                "invalid request: an empty array".to_string()
            } else {
                "invalid request: JSON-RPC batches are not supported by the Language Server \
                 Protocol; send each message in its own frame"
                    .to_string()
            };
            return Incoming::Reply(Reply::new(Value::Null, INVALID_REQUEST, message));
        }
        other => {
            return Incoming::Reply(Reply::new(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "invalid request: expected a JSON-RPC message object, got {}",
                    kind(&other)
                ),
            ));
        }
    };
    let is_response = !object.contains_key("method")
        && (object.contains_key("result") || object.contains_key("error"));
    let id = match object.get("id") {
        None => Value::Null,
        Some(id @ (Value::String(_) | Value::Null)) => id.clone(),
        Some(Value::Number(n)) if n.is_i64() => Value::Number(n.clone()),
        Some(other) => {
            if is_response {
                return Incoming::Dropped(format!("a response with an invalid id {other}"));
            }
            return Incoming::Reply(Reply::new(
                Value::Null,
                INVALID_REQUEST,
                format!("invalid request: `id` must be a string or an integer, got {other}"),
            ));
        }
    };
    let invalid =
        |message: String| Incoming::Reply(Reply::new(id.clone(), INVALID_REQUEST, message));
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        let got = object
            .get("jsonrpc")
            .map_or_else(|| "nothing".to_string(), Value::to_string);
        if is_response {
            return Incoming::Dropped(format!("a response with `jsonrpc` {got}"));
        }
        return invalid(format!(
            "invalid request: `jsonrpc` must be \"2.0\", got {got}"
        ));
    }
    if is_response {
        if !object.contains_key("id") {
            return Incoming::Dropped("a response without an id".into());
        }
        return match serde_json::from_value::<Response>(Value::Object(object)) {
            Ok(r) => Incoming::Response(r),
            Err(e) => Incoming::Dropped(format!("an invalid response: {e}")),
        };
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(other) => {
            return invalid(format!(
                "invalid request: `method` must be a string, got {}",
                kind(other)
            ));
        }
        None => {
            return invalid(
                "invalid request: a message needs `method` (a request or notification) or \
                 `result`/`error` (a response)"
                    .into(),
            );
        }
    }
    match serde_json::from_value::<Request>(Value::Object(object)) {
        Ok(r) => Incoming::Request(r),
        Err(e) => invalid(format!("invalid request: {e}")),
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn encode<T: serde::Serialize>(message: &T) -> Option<Vec<u8>> {
    match serde_json::to_vec(message) {
        Ok(body) => Some(frame(&body)),
        Err(e) => {
            tracing::error!("encoding an outgoing message: {e}");
            None
        }
    }
}

/// Makes sure a request (a message with an id) gets a response. tower-lsp-server answers
/// nothing to an unknown `$/` method, request or not; LSP 3.17 ("`$` Notifications and
/// Requests") says such a request must get `MethodNotFound` (`-32601`), only
/// notifications may be ignored.
fn answered(
    answer: Result<Option<Response>, ExitedError>,
    id: Option<Id>,
    method: &str,
) -> Result<Option<Response>, ExitedError> {
    match (answer, id) {
        (Ok(None), Some(id)) => {
            let mut error = Error::method_not_found();
            error.message = format!("method not found: {method}").into();
            Ok(Some(Response::from_error(id, error)))
        }
        (answer, _) => answer,
    }
}

/// A request's handler, run by the service.
type Task = futures::future::BoxFuture<'static, Result<Option<Response>, ExitedError>>;

/// Serves `service` over `input`/`output` until `exit` or the end of input. The shape of
/// tower-lsp-server's `Server::serve` (same concurrency, `exit` stops reading at once),
/// with the reader above. Returns the process exit code LSP 3.17 gives the session
/// (`exit` notification): 0 when `shutdown` came before `exit` (or the input ended), 1
/// for an `exit` without `shutdown`.
pub async fn serve<I, O, S>(input: I, output: O, mut service: S, socket: ClientSocket) -> u8
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
    S: Service<Request, Response = Option<Response>, Error = ExitedError>,
    S::Future: Send + 'static,
{
    let (client_requests, mut client_responses) = socket.split();
    let (client_requests, client_abort) = stream::abortable(client_requests);
    let (mut out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(QUEUE);
    let (mut tasks_tx, tasks_rx) = mpsc::channel::<Task>(QUEUE);

    let mut responses = out_tx.clone();
    let process_tasks = async move {
        let mut done = tasks_rx.buffer_unordered(MAX_CONCURRENCY);
        while let Some(result) = done.next().await {
            if let Ok(Some(response)) = result
                && let Some(bytes) = encode(&response)
                && responses.send(bytes).await.is_err()
            {
                return;
            }
        }
    };

    let mut requests_out = out_tx.clone();
    let forward_client_requests = async move {
        let mut client_requests = pin!(client_requests);
        while let Some(request) = client_requests.next().await {
            if let Some(bytes) = encode(&request)
                && requests_out.send(bytes).await.is_err()
            {
                return;
            }
        }
    };

    let write_output = async move {
        let mut output = pin!(output);
        while let Some(bytes) = out_rx.next().await {
            if let Err(e) = output.write_all(&bytes).await {
                tracing::error!("writing to the client: {e}");
                return;
            }
            // Write what else is queued, then flush once.
            while let Ok(more) = out_rx.try_recv() {
                if let Err(e) = output.write_all(&more).await {
                    tracing::error!("writing to the client: {e}");
                    return;
                }
            }
            if let Err(e) = output.flush().await {
                tracing::error!("flushing to the client: {e}");
                return;
            }
        }
        let _ = output.flush().await;
    };

    let read_input = async move {
        let mut code = 0;
        let mut shut_down = false;
        let mut input = input;
        let mut decoder = FrameDecoder::default();
        let mut chunk = vec![0u8; 64 * 1024];
        'read: loop {
            while let Some(frame) = decoder.decode() {
                let incoming = match frame {
                    Frame::Body(body) => classify(&body),
                    Frame::Error(reply) => Incoming::Reply(reply),
                };
                match incoming {
                    Incoming::Request(request) => {
                        if future::poll_fn(|cx| service.poll_ready(cx)).await.is_err() {
                            break 'read;
                        }
                        let exit = request.method() == "exit";
                        shut_down |= request.method() == "shutdown";
                        if exit && !shut_down {
                            code = 1;
                        }
                        let id = request.id().cloned();
                        let method = request.method().to_string();
                        let task = service
                            .call(request)
                            .map(move |answer| answered(answer, id, &method))
                            .boxed();
                        if tasks_tx.send(task).await.is_err() || exit {
                            break 'read;
                        }
                    }
                    Incoming::Response(response) => {
                        if client_responses.send(response).await.is_err() {
                            break 'read;
                        }
                    }
                    Incoming::Reply(reply) => {
                        tracing::warn!(code = reply.code, "bad input: {}", reply.message);
                        if let Some(bytes) = encode(&reply.to_json())
                            && out_tx.send(bytes).await.is_err()
                        {
                            break 'read;
                        }
                    }
                    Incoming::Dropped(why) => tracing::warn!("dropped input: {why}"),
                }
            }
            match input.read(&mut chunk).await {
                Ok(0) => {
                    if let Some(what) = decoder.leftover() {
                        tracing::warn!("{what}");
                    }
                    break;
                }
                Ok(n) => decoder.extend(&chunk[..n]),
                Err(e) => {
                    tracing::error!("reading from the client: {e}");
                    break;
                }
            }
        }
        tasks_tx.disconnect();
        out_tx.disconnect();
        client_abort.abort();
        code
    };

    let ((), (), (), code) = join!(
        process_tasks,
        forward_client_requests,
        write_output,
        read_input
    );
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Vec<Frame> {
        let mut d = FrameDecoder::default();
        d.extend(input);
        std::iter::from_fn(|| d.decode()).collect()
    }

    fn body(s: &str) -> Frame {
        Frame::Body(s.as_bytes().to_vec())
    }

    fn codes(frames: &[Frame]) -> Vec<String> {
        frames
            .iter()
            .map(|f| match f {
                Frame::Body(b) => String::from_utf8_lossy(b).into_owned(),
                Frame::Error(r) => format!("{} {}", r.code, r.message),
            })
            .collect()
    }

    #[test]
    fn frames_split_anywhere_decode_the_same() {
        let input = b"Content-Length: 2\r\n\r\n{}content-length:3\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n[1]";
        for split in 0..input.len() {
            let mut d = FrameDecoder::default();
            let mut out = Vec::new();
            d.extend(&input[..split]);
            out.extend(std::iter::from_fn(|| d.decode()));
            d.extend(&input[split..]);
            out.extend(std::iter::from_fn(|| d.decode()));
            assert_eq!(out, vec![body("{}"), body("[1]")], "split at {split}");
        }
    }

    #[test]
    fn garbage_and_broken_headers_resync_at_the_next_content_length() {
        let frames = decode_all(
            b"hello\r\nContent-Length: 2\r\n\r\n{}\
              Content-Length: 10\r\n{\"a\":1234}Content-Length: 2\r\n\r\n[]\
              Content-Length: ten\r\n\r\nContent-Length: 1\r\n\r\n1\
              X-Other: 1\r\n\r\n{}Content-Length: 1\r\n\r\n2\
              garbageContent-Length: 1\r\n\r\n3X-Other: 1\r\ncontent-length: 1\r\n\r\n4",
        );
        expect_test::expect![[r#"
            [
                "-32700 parse error: expected a Content-Length header, got \"hello\"; skipped to the next Content-Length",
                "{}",
                "-32700 parse error: malformed header line \"{\\\"a\\\":1234}Content-Length: 2\" (is the blank line after the headers missing?); skipped to the next Content-Length",
                "[]",
                "-32700 parse error: invalid Content-Length \"ten\": expected a byte count; skipped to the next Content-Length",
                "1",
                "-32700 parse error: a header block without Content-Length; skipped to the next Content-Length",
                "2",
                "-32700 parse error: expected a Content-Length header, got \"garbageContent-Length: 1\"; skipped to the next Content-Length",
                "3",
                "4",
            ]
        "#]]
        .assert_debug_eq(&codes(&frames));
    }

    #[test]
    fn oversized_bodies_are_skipped_without_buffering_them() {
        let mut d = FrameDecoder::default();
        d.extend(format!("Content-Length: {}\r\n\r\n", MAX_CONTENT_LENGTH + 1).as_bytes());
        assert!(matches!(d.decode(), Some(Frame::Error(r)) if r.code == INVALID_REQUEST));
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..64 {
            d.extend(&chunk);
            assert_eq!(d.decode(), None);
            assert!(d.buf.is_empty());
        }
        d.extend(b"xContent-Length: 2\r\n\r\n{}");
        assert_eq!(d.decode(), Some(body("{}")));
        assert_eq!(d.leftover(), None);
    }

    #[test]
    fn leftovers_at_the_end_of_input_are_reported() {
        let mut d = FrameDecoder::default();
        d.extend(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"");
        assert_eq!(d.decode(), None);
        expect_test::expect![[r#"
            Some(
                "end of input inside a frame: 33 bytes unread: \"Content-Length: 100\\r\\n\\r\\n{\\\"jsonrpc\\\"\"",
            )
        "#]]
        .assert_debug_eq(&d.leftover());
    }

    fn reply(body: &str) -> String {
        match classify(body.as_bytes()) {
            Incoming::Reply(r) => format!("{} {} {}", r.id, r.code, r.message),
            Incoming::Dropped(why) => format!("dropped: {why}"),
            Incoming::Request(r) => format!("request {}", r.method()),
            Incoming::Response(r) => format!("response {}", r.id()),
        }
    }

    #[test]
    fn bodies_are_classified_per_json_rpc() {
        let out: Vec<String> = [
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}",
            "{ not json",
            "",
            "[]",
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}]",
            "42",
            "{\"id\":3,\"method\":\"x\"}",
            "{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"x\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":4}",
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}",
            "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":1}",
            "{\"jsonrpc\":\"2.0\",\"result\":1}",
        ]
        .iter()
        .map(|b| reply(b))
        .collect();
        expect_test::expect![[r#"
            [
                "request x",
                "response 1",
                "null -32700 parse error: the body is not JSON: key must be a string at line 1 column 3",
                "null -32700 parse error: the body is not JSON: EOF while parsing a value at line 1 column 0",
                "null -32600 invalid request: an empty array",
                "null -32600 invalid request: JSON-RPC batches are not supported by the Language Server Protocol; send each message in its own frame",
                "null -32600 invalid request: expected a JSON-RPC message object, got a number",
                "3 -32600 invalid request: `jsonrpc` must be \"2.0\", got nothing",
                "\"a\" -32600 invalid request: `jsonrpc` must be \"2.0\", got \"1.0\"",
                "4 -32600 invalid request: a message needs `method` (a request or notification) or `result`/`error` (a response)",
                "5 -32600 invalid request: `method` must be a string, got a number",
                "null -32600 invalid request: `id` must be a string or an integer, got 1.5",
                "dropped: a response with an invalid id {}",
                "dropped: a response without an id",
            ]
        "#]]
        .assert_debug_eq(&out);
    }
}

//! Case B21: `loci lsp` with `RUST_LOG=trace` writes nothing but protocol frames to
//! stdout; logs go to stderr. Runs the real binary (a real process is what matters here).

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn frame(body: &Value) -> Vec<u8> {
    let body = body.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Splits `stdout` into frames strictly: every byte must belong to a
/// `Content-Length: N\r\n\r\n` header followed by exactly N bytes of one JSON object.
fn parse_frames(mut bytes: &[u8]) -> Result<Vec<Value>, String> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| {
                format!(
                    "bytes without a header: {:?}",
                    String::from_utf8_lossy(bytes)
                )
            })?;
        let headers = std::str::from_utf8(&bytes[..end]).map_err(|e| e.to_string())?;
        let mut length = None;
        for line in headers.split("\r\n") {
            let (name, value) = line
                .split_once(": ")
                .ok_or_else(|| format!("not a header: {line:?}"))?;
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse::<usize>().map_err(|e| e.to_string())?);
            } else if !name.eq_ignore_ascii_case("content-type") {
                return Err(format!("unexpected header {line:?}"));
            }
        }
        let length = length.ok_or("no Content-Length")?;
        let body = bytes
            .get(end + 4..end + 4 + length)
            .ok_or("body shorter than Content-Length")?;
        let value: Value =
            serde_json::from_slice(body).map_err(|e| format!("body is not JSON: {e}"))?;
        if !value.is_object() {
            return Err(format!("body is not an object: {value}"));
        }
        frames.push(value);
        bytes = &bytes[end + 4 + length..];
    }
    Ok(frames)
}

/// The raw bytes of one frame (headers and body), read from `r`.
fn read_one_frame(r: &mut impl Read) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        r.read_exact(&mut byte).expect("reading a header");
        raw.push(byte[0]);
    }
    let headers = String::from_utf8_lossy(&raw).to_string();
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("a Content-Length header");
    let mut body = vec![0; length];
    r.read_exact(&mut body).expect("reading a body");
    raw.extend(body);
    raw
}

#[test]
fn b21_stdout_carries_only_protocol_frames_at_trace_level() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "// café\nfn target() {}\n").unwrap();
    let root_uri = format!("file://{}", dir.path().display());
    let file_uri = format!("{root_uri}/a.rs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_loci"))
        .arg("lsp")
        .env("RUST_LOG", "trace")
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting loci lsp");
    let mut stdin = child.stdin.take().unwrap();
    let mut child_stdout = child.stdout.take().unwrap();
    // Trace logs are large: drain stderr on its own thread so neither pipe fills up.
    let mut child_stderr = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        let mut stderr = String::new();
        let _ = child_stderr.read_to_string(&mut stderr);
        stderr
    });
    // The client waits for the initialize response before sending anything else
    // (LSP 3.17, "Initialize Request").
    stdin
        .write_all(&frame(
            &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "processId": null, "rootUri": root_uri, "capabilities": {} } }),
        ))
        .unwrap();
    let mut stdout = read_one_frame(&mut child_stdout);
    let mut input = Vec::new();
    input.extend(frame(
        &json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
    ));
    input.extend(frame(
        &json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": file_uri, "languageId": "rust", "version": 1,
            "text": "// café\nfn target() {}\n" } } }),
    ));
    input.extend(frame(
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
        "textDocument": { "uri": file_uri }, "position": { "line": 1, "character": 4 } } }),
    ));
    input.extend(frame(
        &json!({ "jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
        "params": { "command": "loci.scan", "arguments": [{}] } }),
    ));
    input.extend(frame(
        &json!({ "jsonrpc": "2.0", "id": 4, "method": "shutdown" }),
    ));
    stdin.write_all(&input).unwrap();
    // `exit` after every answer is in (it cancels requests still running).
    let mut answered = Vec::new();
    while !(2..=4).all(|id| answered.contains(&id)) {
        let raw = read_one_frame(&mut child_stdout);
        if let Ok(frames) = parse_frames(&raw)
            && let Some(id) = frames[0].get("id").and_then(Value::as_i64)
            && frames[0].get("method").is_none()
        {
            answered.push(id);
        }
        stdout.extend(raw);
    }
    stdin
        .write_all(&frame(&json!({ "jsonrpc": "2.0", "method": "exit" })))
        .unwrap();
    // Keep stdin open: the server exits on `exit` by itself.
    child_stdout.read_to_end(&mut stdout).unwrap();
    let status = child.wait().unwrap();
    let stderr = stderr_reader.join().unwrap();
    drop(stdin);
    assert!(
        status.success(),
        "loci lsp exited with {status}; stderr:\n{stderr}"
    );
    let frames = parse_frames(&stdout)
        .unwrap_or_else(|e| panic!("{e}\nstdout: {:?}", String::from_utf8_lossy(&stdout)));
    let ids: Vec<&Value> = frames.iter().filter_map(|f| f.get("id")).collect();
    for id in [1, 2, 3, 4] {
        assert!(ids.contains(&&json!(id)), "no response {id} in {frames:#?}");
    }
    let hover = frames.iter().find(|f| f["id"] == json!(2)).unwrap();
    assert!(
        hover["result"]["contents"]["value"]
            .as_str()
            .is_some_and(|m| m.contains("`target`")),
        "{hover}"
    );
    // Trace logging did happen, on stderr.
    assert!(
        stderr.contains("TRACE") || stderr.contains("DEBUG"),
        "stderr: {stderr}"
    );
}

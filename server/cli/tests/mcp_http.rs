//! `loci mcp --http`: streamable HTTP behind a bearer token. Requests without the token
//! or with a wrong one get 401; the token file is owner-only; a non-loopback address is
//! refused unless `--allow-remote` is given, and then the token is still required.

mod mcp_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use mcp_support::{TIMEOUT, loci, run, write};

/// A running `loci mcp --http` and the address it listens on.
struct HttpServer {
    child: Child,
    addr: SocketAddr,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(root: &Path, bind: &str, extra: &[&str]) -> HttpServer {
    let mut child = Command::new(loci())
        .arg("-C")
        .arg(root)
        .args(["mcp", "--http", bind])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn loci mcp --http");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let _ = tx.send(rest.split('/').next().unwrap_or("").to_string());
            }
        }
    });
    let bound = rx
        .recv_timeout(TIMEOUT)
        .expect("the server says where it listens");
    let mut addr: SocketAddr = bound.parse().expect("an address");
    if addr.ip().is_unspecified() {
        addr.set_ip([127, 0, 0, 1].into());
    }
    HttpServer { child, addr }
}

/// One HTTP/1.1 request; returns (status, head, body so far). Reads until the body holds
/// `until` (an SSE stream may stay open) or the server closes.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
    until: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).expect("send");
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                if !until.is_empty()
                    && text
                        .split_once("\r\n\r\n")
                        .is_some_and(|(_, b)| b.contains(until))
                {
                    break;
                }
            }
        }
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"http-test","version":"1"}}}"#;

#[test]
fn http_requires_the_bearer_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.rs", "fn a() {}\n");
    let server = start(root, "127.0.0.1:0", &[]);
    let token_file = root.join(".loci/mcp-token");
    let token = std::fs::read_to_string(&token_file).expect("token file");
    let token = token.trim();
    assert_eq!(token.len(), 64, "32 random bytes in hex");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "token file is owner-only");
    }

    let (status, head, _) = request(server.addr, "POST", "/mcp", None, INITIALIZE, "");
    assert_eq!(status, 401, "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{head}"
    );
    let wrong = "0".repeat(64);
    let (status, _, _) = request(server.addr, "POST", "/mcp", Some(&wrong), INITIALIZE, "");
    assert_eq!(status, 401);
    let (status, _, _) = request(
        server.addr,
        "POST",
        "/mcp",
        Some(&token[..63]),
        INITIALIZE,
        "",
    );
    assert_eq!(status, 401, "a prefix of the token is not the token");

    let (status, head, body) = request(
        server.addr,
        "POST",
        "/mcp",
        Some(token),
        INITIALIZE,
        "protocolVersion",
    );
    assert_eq!(status, 200, "{head}\n{body}");
    assert!(body.contains("\"name\":\"loci\""), "{body}");

    let (status, _, _) = request(server.addr, "GET", "/elsewhere", Some(token), "", "");
    assert_eq!(status, 404);
    drop(server);

    // A second start reuses the token.
    let server = start(root, "127.0.0.1:0", &[]);
    let again = std::fs::read_to_string(&token_file).expect("token file");
    assert_eq!(again.trim(), token);
    let (status, _, _) = request(
        server.addr,
        "POST",
        "/mcp",
        Some(token),
        INITIALIZE,
        "protocolVersion",
    );
    assert_eq!(status, 200);
}

#[test]
fn non_loopback_bind_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.rs", "fn a() {}\n");
    let (status, _, stderr) = run(root, &["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refusing to serve MCP on 0.0.0.0:0"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-remote"), "{stderr}");
    assert!(
        !root.join(".loci/mcp-token").exists(),
        "nothing served, no token made"
    );

    let (status, _, stderr) = run(root, &["mcp", "--allow-remote"]);
    assert_eq!(
        status.code(),
        Some(2),
        "--allow-remote needs --http: {stderr}"
    );

    let server = start(root, "0.0.0.0:0", &["--allow-remote"]);
    let (status, _, _) = request(server.addr, "POST", "/mcp", None, INITIALIZE, "");
    assert_eq!(status, 401, "the token is still required");
    let token = std::fs::read_to_string(root.join(".loci/mcp-token")).expect("token");
    let (status, _, body) = request(
        server.addr,
        "POST",
        "/mcp",
        Some(token.trim()),
        INITIALIZE,
        "protocolVersion",
    );
    assert_eq!(status, 200, "{body}");
}

/// Hostile bodies over HTTP (issue 9, item 4). Fault: rmcp answered a body it could not
/// read with `415 Unsupported Media Type` and plain text. MCP "Streamable HTTP": an input
/// the server cannot accept gets an HTTP error status, and the body may be a JSON-RPC
/// error without an id; now it is `400` with the error JSON-RPC 2.0 §5.1 prescribes, and
/// the server goes on (`initialize` still works afterwards).
#[test]
fn fault_http_unreadable_bodies_got_415_and_plain_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.rs", "fn a() {}\n");
    let server = start(root, "127.0.0.1:0", &[]);
    let token = std::fs::read_to_string(root.join(".loci/mcp-token")).expect("token file");
    let token = token.trim();
    for (body, id, code) in [
        ("{ not json", serde_json::Value::Null, -32700),
        ("42", serde_json::Value::Null, -32600),
        ("[]", serde_json::Value::Null, -32600),
        (
            r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#,
            serde_json::Value::Null,
            -32600,
        ),
        (r#"{"id":4,"method":"ping"}"#, serde_json::json!(4), -32600),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            serde_json::Value::Null,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}"#,
            serde_json::json!(5),
            -32602,
        ),
    ] {
        let (status, head, text) = request(server.addr, "POST", "/mcp", Some(token), body, "");
        assert_eq!(status, 400, "{body}: {head}\n{text}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(text.trim()).expect("a JSON body");
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].as_i64()),
            (id, Some(code)),
            "{body}: {v}"
        );
    }
    let (status, head, text) = request(
        server.addr,
        "POST",
        "/mcp",
        Some(token),
        INITIALIZE,
        "serverInfo",
    );
    assert_eq!(status, 200, "{head}\n{text}");
    assert!(text.contains("\"name\":\"loci\""), "{text}");
}

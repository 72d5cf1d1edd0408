//! `loci mcp --http`: streamable HTTP behind a bearer token. Requests without the token
//! or with a wrong one get 401; the token file is owner-only; a non-loopback address is
//! refused unless `--allow-remote` is given, and then the token is still required.

use crate::mcp_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use mcp_support::{run, start_http as start, write};

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
    request_with(addr, method, path, token, &[], body, until)
}

/// [`request`] with extra headers.
fn request_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: &str,
    until: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    for (name, value) in headers {
        auth.push_str(&format!("{name}: {value}\r\n"));
    }
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

/// Hostile bodies over HTTP. Fault: rmcp answered a body it could not read with `415
/// Unsupported Media Type` and plain text. MCP "Streamable HTTP": an input the server
/// cannot accept gets an HTTP error status, and the body may be a JSON-RPC error without an
/// id; now it is `400` with the error JSON-RPC 2.0 §5.1 prescribes, and the server goes on
/// (`initialize` still works afterwards).
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

/// The value of header `name` in a response head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The JSON-RPC message of an SSE body's first `data:` line holding one.
fn sse_message(body: &str) -> serde_json::Value {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| serde_json::from_str(d.trim()).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {body:?}"))
}

/// Fault: a request from a browser page of another origin was served when it had the token
/// (MCP "Streamable HTTP": "Servers MUST validate the Origin header ... respond with HTTP
/// 403 Forbidden"). Now any origin other than this machine's pages and `--allow-origin`
/// ones gets 403, with or without the token; requests without `Origin` (not from a browser)
/// are served.
#[test]
fn fault_a_request_from_another_origin_was_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.rs", "fn a() {}\n");
    let server = start(
        root,
        "127.0.0.1:0",
        &["--allow-origin", "https://app.example.com:8443"],
    );
    let token = std::fs::read_to_string(root.join(".loci/mcp-token")).expect("token file");
    let token = token.trim();
    for (origin, token, status) in [
        ("http://evil.example.com", Some(token), 403),
        ("http://evil.example.com", None, 403),
        ("null", Some(token), 403),
        ("http://localhost.evil.example.com:3000", Some(token), 403),
        ("https://app.example.com", Some(token), 403),
        ("http://localhost:3000", Some(token), 200),
        ("http://127.0.0.1:5173", Some(token), 200),
        ("http://[::1]:8080", Some(token), 200),
        ("https://app.example.com:8443", Some(token), 200),
        ("http://localhost:3000", None, 401),
    ] {
        let (got, head, body) = request_with(
            server.addr,
            "POST",
            "/mcp",
            token,
            &[("Origin", origin)],
            INITIALIZE,
            "protocolVersion",
        );
        assert_eq!(got, status, "{origin} {token:?}: {head}\n{body}");
        if status == 403 {
            assert_eq!(
                body,
                format!(
                    "forbidden: requests from pages of origin `{origin}` are not served; start loci mcp with --allow-origin ORIGIN to serve them\n"
                )
            );
        }
    }
}

/// A second `initialize` in a session is refused (`-32600`, as over stdio;
/// docs/reliability.md), and `DELETE` ends the session with `204 No Content`. Fault: rmcp
/// answered `DELETE` `202`, which the official Python SDK logs as "Session termination
/// failed: 202" (it expects 200 or 204); the session is gone afterwards (404).
#[test]
fn fault_session_delete_was_answered_202_and_a_second_initialize_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.rs", "fn a() {}\n");
    let server = start(root, "127.0.0.1:0", &[]);
    let token = std::fs::read_to_string(root.join(".loci/mcp-token")).expect("token file");
    let token = Some(token.trim());
    let (status, head, body) = request(
        server.addr,
        "POST",
        "/mcp",
        token,
        INITIALIZE,
        "protocolVersion",
    );
    assert_eq!(status, 200, "{head}\n{body}");
    let session = header(&head, "mcp-session-id")
        .expect("a session id")
        .to_string();
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (status, head, _) = request_with(
        server.addr,
        "POST",
        "/mcp",
        token,
        &in_session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "",
    );
    assert_eq!(status, 202, "{head}");
    let again = INITIALIZE.replace("\"id\":1", "\"id\":2");
    let (status, head, body) = request_with(
        server.addr,
        "POST",
        "/mcp",
        token,
        &in_session,
        &again,
        "\"id\":2",
    );
    assert_eq!(status, 200, "{head}\n{body}");
    assert_eq!(
        sse_message(&body),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32600,
            "message": "the session is already initialized: `initialize` is sent once, first; to start over, open a new session (a new process over stdio, a POST without `Mcp-Session-Id` over HTTP)"}})
    );
    // The session still works.
    let (status, head, body) = request_with(
        server.addr,
        "POST",
        "/mcp",
        token,
        &in_session,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        "\"id\":3",
    );
    assert_eq!(status, 200, "{head}\n{body}");
    assert_eq!(
        sse_message(&body),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    let (status, head, body) =
        request_with(server.addr, "DELETE", "/mcp", token, &in_session, "", "");
    assert_eq!((status, body.as_str()), (204, ""), "{head}");
    let (status, head, _) = request_with(
        server.addr,
        "POST",
        "/mcp",
        token,
        &in_session,
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
        "",
    );
    assert_eq!(status, 404, "the session is gone: {head}");
}

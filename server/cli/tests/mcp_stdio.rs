//! `loci mcp` as a real process over stdio: stdout carries only protocol even at
//! `RUST_LOG=trace` (case B21), malformed input gets `-32700` and the session goes on,
//! and the process exits cleanly when the client closes stdin.

mod mcp_support;

use mcp_support::{Mcp, write};
use serde_json::json;

#[test]
fn b21_stdout_is_only_json_rpc_at_trace_level() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub fn target() {}\n\nfn caller() { target(); }\n",
    );
    // No prior scan: the server's first refresh builds the map (and logs a lot).
    let mut mcp = Mcp::start(root, &[("RUST_LOG", "trace"), ("NO_COLOR", "1")]);
    let init = mcp.initialize("b21");
    assert_eq!(init["result"]["serverInfo"]["name"], "loci");
    mcp.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "tools/list"}));
    let tools = mcp.response(100);
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    let r = mcp.call("symbol", json!({"name": "target"}));
    assert_eq!(
        r["result"]["structuredContent"]["result"][0]["line"], 0,
        "{r}"
    );
    mcp.send_raw("{ this is not json");
    let err = mcp.recv();
    assert_eq!(err["error"]["code"], -32700, "{err}");
    let r = mcp.call("callers", json!({"symbol": "target"}));
    assert_eq!(
        r["result"]["structuredContent"]["result"]["calls"][0]["path"],
        "src/lib.rs"
    );
    mcp.send(&json!({"jsonrpc": "2.0", "id": 101, "method": "ping"}));
    assert!(mcp.response(101)["result"].is_object());
    let (status, rest, stderr) = mcp.finish();
    assert!(status.success(), "exit status {status}");
    assert!(
        rest.is_empty(),
        "unexpected output after the last response: {rest:?}"
    );
    // The logs went somewhere: stderr.
    assert!(
        stderr.contains("TRACE") && stderr.contains("DEBUG"),
        "trace logs went to stderr"
    );
}

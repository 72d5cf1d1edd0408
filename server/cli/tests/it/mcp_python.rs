//! A real MCP client: the official Python SDK (`pip install mcp`) drives `loci mcp` over
//! stdio through `tests/python/mcp_client.py`: the tool list and its output schemas
//! (which the SDK checks every successful result against), a `context` answer whose text
//! is exactly what `loci context` prints, and argument and domain errors as tool results
//! with `isError`; and over streamable HTTP (`tests/python/mcp_http_client.py`), a
//! session that ends without a warning from the SDK.

use crate::mcp_support;

use std::process::Command;

use mcp_support::{loci, run, start_http, write};

/// Fails the test, saying what to install, unless python3 can import the MCP SDK.
fn require_python_sdk() {
    let probe = Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .map_err(|e| e.to_string())
        .and_then(|o| {
            if o.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&o.stderr).into_owned())
            }
        });
    if let Err(e) = probe {
        panic!(
            "this test needs python3 with the official MCP Python SDK: run `pip install mcp` \
             (.ci/run installs it). `python3 -c \"import mcp\"` failed: {e}"
        );
    }
}

#[test]
fn python_sdk_client_reads_answers_in_one_read_and_sees_tool_errors() {
    require_python_sdk();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/app.py",
        "import sys\n\n\ndef main():\n    \"\"\"Start the server: parse the arguments, then serve until stdin closes.\"\"\"\n    return serve(sys.argv)\n\n\ndef serve(argv):\n    \"\"\"Serve requests until the client goes away.\"\"\"\n    return 0\n",
    );
    let (status, _, stderr) = run(root, &["scan"]);
    assert!(status.success(), "scan: {stderr}");
    let (status, cli_context, stderr) = run(
        root,
        &["context", "how does the server start", "--budget", "300"],
    );
    assert!(status.success(), "context: {stderr}");
    assert_eq!(
        cli_context,
        "## Context for `how does the server start`\n### function main (src/app.py:4)\n```\ndef main():\n    \"\"\"Start the server: parse the arguments, then serve until stdin closes.\"\"\"\n    return serve(sys.argv)\n```\n\n\n_≈72 of 300 tokens (an estimate: characters / 4)_\n"
    );
    // Outside the workspace, which the server would map.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let context_file = elsewhere.path().join("cli-context.md");
    std::fs::write(&context_file, &cli_context).expect("write the CLI's context");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/python/mcp_client.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(loci())
        .arg(root)
        .arg(&context_file)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("python mcp client: ok"),
        "python client failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}

/// Fault: rmcp answered the session `DELETE` `202`, and the official SDK logged "Session
/// termination failed: 202" at every client exit (it expects 200 or 204). The whole HTTP
/// session now runs without a warning.
#[test]
fn fault_python_sdk_logged_session_termination_failed_202() {
    require_python_sdk();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.rs", "fn a() {}\n");
    let server = start_http(root, "127.0.0.1:0", &[]);
    let token = std::fs::read_to_string(root.join(".loci/mcp-token")).expect("token file");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/python/mcp_http_client.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(format!("http://{}/mcp", server.addr))
        .arg(token.trim())
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        (out.status.code(), stdout.as_ref()),
        (Some(0), "python mcp http client: ok\n"),
        "stderr:\n{stderr}"
    );
}

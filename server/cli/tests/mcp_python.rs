//! A real MCP client: the official Python SDK (`pip install mcp`) drives `loci mcp` over
//! stdio through `tests/python/mcp_client.py`.

mod mcp_support;

use std::process::Command;

use mcp_support::{loci, write};

#[test]
fn python_sdk_client_lists_tools_remembers_and_asks_why() {
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
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "src/app.py",
        "import sys\n\n\ndef main():\n    return 0\n",
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/python/mcp_client.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(loci())
        .arg(root)
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

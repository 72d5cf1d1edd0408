//! The editor shows one truth (issue 30, item 7): after an unsaved edit makes a claim
//! stale, the server asks the client to refresh its code lenses when it publishes the
//! diagnostic, and the lens then counts the stale memory the diagnostic reports — both
//! from the buffer's overlay. `loci lsp` as a real process over stdio.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(60);

fn read_frame(r: &mut impl Read) -> Option<Value> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if r.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).ok()?;
    let length: usize = head
        .strip_prefix("Content-Length: ")?
        .strip_suffix("\r\n\r\n")?
        .parse()
        .ok()?;
    let mut body = vec![0; length];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

struct Lsp {
    child: Child,
    stdin: ChildStdin,
    frames: Receiver<Value>,
    next_id: i64,
}

impl Lsp {
    fn start(root: &std::path::Path) -> Lsp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_loci"))
            .arg("lsp")
            .current_dir(root)
            .env_remove("RUST_LOG")
            .env_remove("LOCI_DB")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting loci lsp");
        let mut stdout = child.stdout.take().expect("stdout");
        let (tx, frames) = channel();
        std::thread::spawn(move || {
            while let Some(v) = read_frame(&mut stdout) {
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take().expect("stdin");
        Lsp {
            child,
            stdin,
            frames,
            next_id: 1,
        }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message `wanted` accepts; requests from the server are answered (null)
    /// and, like everything else on the way, passed over.
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let v = self
                .frames
                .recv_timeout(TIMEOUT)
                .unwrap_or_else(|_| panic!("no {what} within {TIMEOUT:?}"));
            if wanted(&v) {
                return v;
            }
            if v.get("method").is_some() && v.get("id").is_some() {
                let id = v["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let v = self.until(method, |v| {
            v["id"] == json!(id) && v.get("method").is_none()
        });
        assert!(v.get("error").is_none(), "{method}: {v}");
        v["result"].clone()
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn loci(root: &std::path::Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(args)
        .current_dir(root)
        .env_remove("LOCI_DB")
        .env_remove("LOCI_SESSION")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
}

#[test]
fn fault_the_lens_said_0_stale_while_the_diagnostic_said_stale() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let before = "def hello():\n    return 1\n";
    std::fs::write(root.join("src/app.py"), before).unwrap();
    loci(&root, &["scan"]);
    loci(
        &root,
        &["remember", "src/app.py", "--text", "`hello()` returns one."],
    );
    let uri = format!("file://{}/src/app.py", root.display());

    let mut lsp = Lsp::start(&root);
    lsp.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": format!("file://{}", root.display()),
            "capabilities": {"workspace": {"codeLens": {"refreshSupport": true}}},
        }),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": before}}}),
    );
    // An unsaved edit of the remembered function's body.
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"text": "def hello():\n    return 2\n"}]}}),
    );
    let published = lsp.until("stale diagnostic", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["version"] == 2
            && v["params"]["diagnostics"].as_array().is_some_and(|d| {
                d.iter()
                    .any(|d| d["message"].as_str().unwrap_or("").contains("stale"))
            })
    });
    assert_eq!(published["params"]["uri"], json!(uri));
    // The lens is asked for again, and counts what the diagnostic says.
    lsp.until("codeLens refresh", |v| {
        v["method"] == "workspace/codeLens/refresh"
    });
    let lenses = lsp.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let lens = lenses[0].clone();
    let resolved = lsp.request("codeLens/resolve", lens);
    assert_eq!(resolved["command"]["title"], "1 memory · 1 stale");
}

//! Case B20: one store, many processes. `loci mcp` (driven over stdio), `loci lsp` (driven
//! over stdio with `workspace/executeCommand`) and the CLI write memory to the same
//! database at once. Every write lands exactly once, revision numbers are gapless per
//! page, and no process reports busy or locked.

mod mcp_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use mcp_support::{Mcp, TIMEOUT, loci, run, write};
use serde_json::{Value, json};

/// Writes per process.
const WRITES: usize = 50;

fn mcp_writer(root: PathBuf, name: &'static str) -> Vec<String> {
    let mut mcp = Mcp::start(&root, &[("RUST_LOG", "warn")]);
    mcp.initialize(name);
    let mut problems = Vec::new();
    for i in 0..WRITES {
        let r = if i % 2 == 0 {
            mcp.call(
                "remember",
                json!({"subject": "topic:shared", "body": format!("{name} note {i}")}),
            )
        } else {
            mcp.call("decide", json!({"text": format!("{name} decision {i}")}))
        };
        let failed = r.get("error").is_some() || r["result"]["isError"] == json!(true);
        if failed {
            problems.push(format!("{name} write {i}: {r}"));
        }
    }
    let (status, _, _) = mcp.finish();
    if !status.success() {
        problems.push(format!("{name} exited with {status}"));
    }
    problems
}

/// A `loci lsp` process spoken to in Content-Length frames.
struct Lsp {
    child: std::process::Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    id: u64,
}

impl Lsp {
    fn start(root: &Path) -> Lsp {
        let mut child = Command::new(loci())
            .arg("lsp")
            .current_dir(root)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn loci lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut length = 0usize;
                loop {
                    let mut header = String::new();
                    if r.read_line(&mut header).unwrap_or(0) == 0 {
                        return;
                    }
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    if let Some(v) = header.strip_prefix("Content-Length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0u8; length];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let Ok(v) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take().expect("stdin");
        Lsp {
            child,
            stdin,
            messages,
            id: 0,
        }
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .and_then(|()| self.stdin.flush())
            .expect("write to loci lsp");
    }

    /// Sends a request and returns its response, answering the server's own requests
    /// (progress tokens, registrations) with `null` meanwhile.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self
                .messages
                .recv_timeout(TIMEOUT)
                .expect("an LSP message in time");
            match (m.get("id"), m.get("method")) {
                (Some(_), Some(_)) => {
                    self.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
                }
                (Some(got), None) if *got == json!(id) => return m,
                _ => {}
            }
        }
    }
}

fn lsp_writer(root: PathBuf) -> Vec<String> {
    let mut lsp = Lsp::start(&root);
    let uri = format!("file://{}", root.display());
    let init = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": uri, "capabilities": {}}),
    );
    let mut problems = Vec::new();
    if init.get("error").is_some() {
        problems.push(format!("lsp initialize: {init}"));
    }
    lsp.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    for i in 0..WRITES {
        let (command, args) = if i % 2 == 0 {
            (
                "loci.remember",
                json!({"subject": "topic:shared", "body": format!("lsp note {i}")}),
            )
        } else {
            ("loci.decide", json!({"text": format!("lsp decision {i}")}))
        };
        let r = lsp.request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": [args]}),
        );
        if r.get("error").is_some() {
            problems.push(format!("lsp write {i}: {r}"));
        }
    }
    lsp.request("shutdown", Value::Null);
    lsp.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    match lsp.child.wait() {
        Ok(status) if status.success() => {}
        other => problems.push(format!("lsp exit: {other:?}")),
    }
    problems
}

fn cli_writer(root: PathBuf) -> Vec<String> {
    let mut problems = Vec::new();
    for i in 0..WRITES {
        let (status, _, stderr) = if i % 2 == 0 {
            run(
                &root,
                &[
                    "remember",
                    "topic:shared",
                    "--text",
                    &format!("cli note {i}"),
                ],
            )
        } else {
            run(&root, &["decide", &format!("cli decision {i}")])
        };
        let lower = stderr.to_ascii_lowercase();
        if !status.success() || lower.contains("busy") || lower.contains("locked") {
            problems.push(format!("cli write {i}: {status}: {stderr}"));
        }
    }
    problems
}

fn json_of(root: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (status, stdout, stderr) = run(root, &all);
    assert!(status.success(), "loci {args:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("loci {args:?}: {e}: {stdout}"))
}

#[test]
fn b20_three_processes_write_one_store_concurrently() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_path_buf();
    write(&root, "a.rs", "fn a() {}\n");
    let (status, _, stderr) = run(&root, &["scan"]);
    assert!(status.success(), "{stderr}");

    let writers = vec![
        std::thread::spawn({
            let root = root.clone();
            move || mcp_writer(root, "mcp-one")
        }),
        std::thread::spawn({
            let root = root.clone();
            move || lsp_writer(root)
        }),
        std::thread::spawn({
            let root = root.clone();
            move || cli_writer(root)
        }),
    ];
    let mut problems = Vec::new();
    for w in writers {
        problems.extend(w.join().expect("writer thread"));
    }
    assert!(problems.is_empty(), "{problems:#?}");

    // Every write is present exactly once, versions are gapless.
    let per_page = WRITES / 2;
    for (subject, prefix) in [("topic:shared", "note"), ("decisions", "decision")] {
        let history = json_of(&root, &["history", subject]);
        let versions: Vec<i64> = history["result"]["revisions"]
            .as_array()
            .expect("revisions")
            .iter()
            .map(|r| r["version"].as_i64().unwrap_or(0))
            .collect();
        let expected: Vec<i64> = (1..=(3 * per_page) as i64).collect();
        assert_eq!(versions, expected, "{subject}: gapless versions");
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        if subject == "decisions" {
            let shown = json_of(&root, &["show", subject]);
            let body = shown["result"]["revision"]["body"].as_str().unwrap_or("");
            for line in body.lines().filter(|l| l.starts_with("- ")) {
                let entry = line.trim_start_matches("- ");
                let text = entry.split(" — ").next().unwrap_or(entry);
                *seen.entry(text.to_string()).or_default() += 1;
            }
        } else {
            for v in 1..=(3 * per_page) {
                let shown = json_of(&root, &["show", subject, "--version", &v.to_string()]);
                let body = shown["result"]["revision"]["body"]
                    .as_str()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                *seen.entry(body).or_default() += 1;
            }
        }
        for writer in ["mcp-one", "lsp", "cli"] {
            for i in 0..WRITES {
                let is_note = i % 2 == 0;
                if is_note != (prefix == "note") {
                    continue;
                }
                let text = format!("{writer} {prefix} {i}");
                assert_eq!(
                    seen.get(&text),
                    Some(&1),
                    "{subject}: `{text}` exactly once"
                );
            }
        }
        assert_eq!(seen.len(), 3 * per_page, "{subject}: nothing else");
    }
}

//! Keystroke latency and memory of `loci lsp`, in-process.
//!
//! Copies a Python standard library (the `.py` files of `lib/python3.X`, given as the
//! first argument, default `/root/.pyenv/versions/3.11.7/lib/python3.11`) to a temporary
//! workspace, starts the server on in-memory streams with `analyzedNotifications`, waits
//! for the initial scan, opens a ~3,500-line module (`typing.py`, or the second argument),
//! then types 200 characters one at a time. Latency is measured from writing each
//! `didChange` to reading the `$/loci/analyzed` notification for that version (parse
//! reusing the edited tree, symbol extraction, findings). Prints p50/p95/max and the
//! process's resident memory.
//!
//! With `LOCI_BIN=path/to/loci`, the same session then runs against the real binary over
//! pipes on the already scanned workspace, and its peak resident memory is sampled from
//! `/proc`.
//!
//! Run: `cargo run --release -p loci-lsp --example keystroke_latency [STDLIB] [FILE]`.

#![allow(clippy::print_stdout)] // a benchmark prints its figures

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

fn frame(body: &Value) -> Vec<u8> {
    let body = body.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

async fn read_frame<R: tokio::io::AsyncRead + Unpin>(r: &mut BufReader<R>) -> Option<Value> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

/// Copies every `.py` file under `from` (skipping `site-packages` and `__pycache__`).
fn copy_python_files(from: &Path, to: &Path) -> std::io::Result<usize> {
    let mut count = 0;
    let mut stack = vec![from.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name();
            if name == "site-packages" || name == "__pycache__" {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "py") {
                let rel = path.strip_prefix(from).unwrap_or(&path);
                let dest = to.join(rel);
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::copy(&path, &dest)?;
                count += 1;
            }
        }
    }
    Ok(count)
}

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// What one session measured.
struct Report {
    scan: Duration,
    summary: String,
    lines: usize,
    first: Value,
    latencies: Vec<Duration>,
    micros: Vec<Duration>,
}

/// One editor session over `read`/`write`: initialize on `root`, wait for the scan, open
/// `module`, type 200 characters one at a time, shut down.
async fn session<R, W>(read: R, mut write: W, root: &Path, module: &str) -> Report
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(bytes) = out_rx.recv().await {
            if write.write_all(&bytes).await.is_err() || write.flush().await.is_err() {
                return;
            }
        }
    });
    // Reader: answers server requests, forwards everything else.
    let (in_tx, mut in_rx) = mpsc::unbounded_channel::<Value>();
    let answer = out_tx.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(read);
        while let Some(message) = read_frame(&mut reader).await {
            if message.get("method").is_some()
                && let Some(id) = message.get("id")
            {
                let _ = answer.send(frame(
                    &json!({ "jsonrpc": "2.0", "id": id, "result": null }),
                ));
            }
            if in_tx.send(message).is_err() {
                return;
            }
        }
    });
    let send = |v: Value| {
        let _ = out_tx.send(frame(&v));
    };
    let root_uri = format!("file://{}", root.display());
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": null, "rootUri": root_uri,
        "capabilities": { "window": { "workDoneProgress": true } },
        "initializationOptions": { "analyzedNotifications": true } } }),
    );
    let started = Instant::now();
    while let Some(m) = in_rx.recv().await {
        if m.get("id") == Some(&json!(1)) && m.get("method").is_none() {
            break;
        }
    }
    send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    let mut summary = String::new();
    while let Some(m) = in_rx.recv().await {
        if m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end" {
            summary = m["params"]["value"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            break;
        }
    }
    let scan = started.elapsed();

    let path = root.join(module);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let lines = text.lines().count();
    let uri = format!("file://{}", path.display());
    send(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": uri, "languageId": "python", "version": 1, "text": text } } }),
    );
    let mut analyzed: HashMap<i64, Value> = HashMap::new();
    let mut wait = async |version: i64| -> Value {
        loop {
            if let Some(v) = analyzed.remove(&version) {
                return v;
            }
            let Some(m) = in_rx.recv().await else {
                return Value::Null;
            };
            if m["method"] == "$/loci/analyzed" && m["params"]["uri"] == json!(uri) {
                let v = m["params"]["version"].as_i64().unwrap_or(0);
                analyzed.insert(v, m["params"].clone());
            }
        }
    };
    let first = wait(1).await;
    // Type 200 characters at the start of a line in the middle of the file.
    let mut row = (lines / 2) as u32;
    let typed = "value = compute(alpha, beta) + 1  # typing in the middle of the module\n";
    let mut latencies = Vec::new();
    let mut micros = Vec::new();
    let mut column = 0u32;
    for i in 0..200usize {
        let c = typed.chars().nth(i % typed.chars().count()).unwrap_or('x');
        let version = i as i64 + 2;
        let t0 = Instant::now();
        send(
            json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": uri, "version": version },
            "contentChanges": [{ "range": {
                "start": { "line": row, "character": column },
                "end": { "line": row, "character": column } }, "text": c.to_string() }] } }),
        );
        let params = wait(version).await;
        latencies.push(t0.elapsed());
        micros.push(Duration::from_micros(
            params["micros"].as_u64().unwrap_or(0),
        ));
        if c == '\n' {
            row += 1;
            column = 0;
        } else {
            column += 1;
        }
    }
    send(json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown" }));
    while let Some(m) = in_rx.recv().await {
        if m.get("id") == Some(&json!(2)) && m.get("method").is_none() {
            break;
        }
    }
    send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    latencies.sort();
    micros.sort();
    Report {
        scan,
        summary,
        lines,
        first,
        latencies,
        micros,
    }
}

fn print(label: &str, module: &str, r: &Report) {
    println!("{label}:");
    println!(
        "  initial scan: {:.1} s ({})",
        r.scan.as_secs_f64(),
        r.summary
    );
    println!(
        "  document: {module}, {} lines; first analysis {} µs, {} symbols",
        r.lines, r.first["micros"], r.first["symbols"]
    );
    println!(
        "  didChange → $/loci/analyzed over 200 keystrokes: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        percentile(&r.latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&r.latencies, 0.95).as_secs_f64() * 1e3,
        r.latencies
            .last()
            .copied()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e3,
    );
    println!(
        "  of which parse + extract: p50 {:.2} ms, p95 {:.2} ms",
        percentile(&r.micros, 0.5).as_secs_f64() * 1e3,
        percentile(&r.micros, 0.95).as_secs_f64() * 1e3,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let stdlib = PathBuf::from(
        args.get(1)
            .cloned()
            .unwrap_or_else(|| "/root/.pyenv/versions/3.11.7/lib/python3.11".into()),
    );
    let module = args.get(2).cloned().unwrap_or_else(|| "typing.py".into());
    let tmp = std::env::temp_dir().join(format!("loci-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let files = copy_python_files(&stdlib, &tmp)?;
    println!(
        "workspace: {files} .py files copied from {}",
        stdlib.display()
    );

    // In-process, over in-memory streams.
    let rss_before = rss_mib();
    let (client_io, server_io) = tokio::io::duplex(1 << 22);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(loci_lsp::serve(
        server_read,
        server_write,
        loci_lsp::ServerOptions::default(),
    ));
    let (read, write) = tokio::io::split(client_io);
    let report = session(read, write, &tmp, &module).await;
    print("in-process (fresh workspace: full scan)", &module, &report);
    println!(
        "  resident memory of this process: {rss_before:.0} MiB before, {:.0} MiB after",
        rss_mib()
    );

    // The real binary over pipes, on the workspace scanned above (the usual case of an
    // editor opening an indexed checkout), when LOCI_BIN names it.
    if let Some(bin) = std::env::var_os("LOCI_BIN") {
        let mut child = tokio::process::Command::new(bin)
            .arg("lsp")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id().unwrap_or(0);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the child".into());
        };
        let rss = tokio::spawn(async move {
            // Peak resident memory of the child, sampled while the session runs.
            let mut peak = 0.0f64;
            loop {
                let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                    return peak;
                };
                let kib = |key: &str| {
                    status
                        .lines()
                        .find_map(|l| l.strip_prefix(key))
                        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
                        .unwrap_or(0.0)
                };
                peak = peak.max(kib("VmRSS:") / 1024.0);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        let report = session(stdout, stdin, &tmp, &module).await;
        let _ = child.wait().await;
        print(
            "`loci lsp` process (workspace already scanned)",
            &module,
            &report,
        );
        println!(
            "  peak resident memory of the server process: {:.0} MiB",
            rss.await.unwrap_or(0.0)
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}

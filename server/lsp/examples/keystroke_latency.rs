//! Keystroke latency and memory of `loci lsp`, in-process.
//!
//! Copies a Python standard library (the `.py` files of `lib/python3.X`, given as the
//! first argument, default `/root/.pyenv/versions/3.11.7/lib/python3.11`) to a temporary
//! workspace, starts the server on in-memory streams with `analyzedNotifications`, waits
//! for the initial scan, opens a ~3,500-line module (`typing.py`, or the second argument),
//! then types 200 characters one at a time inside the body of a function in the middle of
//! the module. Memory is attached first (through the engine, as `loci remember` would):
//! the module's page names 40 of its symbols in backticks, including the edited function,
//! and 20 pages of other files name it too, so every keystroke checks that memory and the
//! first one turns it stale (a `publishDiagnostics`). Latency is measured from writing
//! each `didChange` to reading the `$/loci/analyzed` notification for that version, which
//! the server sends after the parse (reusing the edited tree), symbol extraction, the
//! memory findings, and the `publishDiagnostics` when they changed. Prints p50/p95/max,
//! the number of `publishDiagnostics` seen, and the process's resident memory.
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

/// Where the benchmark types: inside the body of the function nearest the middle of
/// `module`.
struct Target {
    /// The function's qualified name (`_SpecialForm.__getitem__`).
    name: String,
    /// Zero-based line of its first body line.
    line: u32,
    /// That line's indentation, in bytes (ASCII spaces).
    indent: String,
}

/// Scans `root` with the engine and attaches memory to `module`: its own page names 40 of
/// its symbols (the edited function among them) and 20 other files' pages name the edited
/// function too. Returns where to type.
fn attach_memory(root: &Path, module: &str) -> Result<Target, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(root.join(module))?;
    let language = loci_core::Language::from_path(module).ok_or("not a parsed language")?;
    let analysis = loci_core::analyze(
        module,
        language,
        &text,
        &loci_core::AnalyzeOptions::default(),
    );
    let middle = text.lines().count() as u32 / 2;
    let lines: Vec<&str> = text.lines().collect();
    let function = analysis
        .symbols
        .iter()
        .filter(|s| s.kind.as_str() == "function" || s.kind.as_str() == "method")
        .filter(|s| s.span.end_line > s.span.line + 3)
        .min_by_key(|s| s.span.line.abs_diff(middle))
        .ok_or("no function with a body")?;
    // The first body line after the signature (skipping a docstring is not needed: any
    // line inside the body will do).
    let line = function.span.line + 1;
    let body = lines.get(line as usize).copied().unwrap_or("");
    let indent: String = body.chars().take_while(|c| *c == ' ').collect();

    let mut ws = loci_engine::Workspace::open(root, None)?;
    ws.scan(&|_| {})?;
    let opts = loci_engine::memory::WriteOptions {
        author: Some("bench:keystroke".into()),
        ..Default::default()
    };
    let mut named: Vec<String> = vec![format!("`{}()`", function.qualified_name)];
    named.extend(
        analysis
            .symbols
            .iter()
            .filter(|s| s.key != function.key && s.parent.is_none())
            .take(39)
            .map(|s| format!("`{}`", s.qualified_name)),
    );
    let page = format!(
        "`{module}` is the module being edited. Worth knowing: {}.",
        named.join(", ")
    );
    ws.remember(module, &page, &opts)?;
    let mut others: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".py") && name != module {
            others.push(name);
        }
    }
    others.sort();
    for other in others.iter().take(20) {
        let body = format!(
            "`{other}` relies on `{}()` in `{module}`.",
            function.qualified_name
        );
        ws.remember(other, &body, &opts)?;
    }
    Ok(Target {
        name: function.qualified_name.clone(),
        line,
        indent,
    })
}

/// What one session measured.
struct Report {
    scan: Duration,
    summary: String,
    lines: usize,
    first: Value,
    latencies: Vec<Duration>,
    micros: Vec<Duration>,
    /// `publishDiagnostics` notifications for the module while typing.
    diagnostics: usize,
}

/// One editor session over `read`/`write`: initialize on `root`, wait for the scan, open
/// `module`, type 200 characters one at a time at `target`, shut down.
async fn session<R, W>(read: R, mut write: W, root: &Path, module: &str, target: &Target) -> Report
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
    let diagnostics = std::cell::Cell::new(0usize);
    let mut wait = async |version: i64| -> Value {
        loop {
            if let Some(v) = analyzed.remove(&version) {
                return v;
            }
            let Some(m) = in_rx.recv().await else {
                return Value::Null;
            };
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == json!(uri)
            {
                diagnostics.set(diagnostics.get() + 1);
            }
            if m["method"] == "$/loci/analyzed" && m["params"]["uri"] == json!(uri) {
                let v = m["params"]["version"].as_i64().unwrap_or(0);
                analyzed.insert(v, m["params"].clone());
            }
        }
    };
    let first = wait(1).await;
    let opened_with = diagnostics.get();
    // Type 200 characters at the start of the function's first body line, a new
    // statement per line, indented like the body.
    let mut row = target.line;
    let typed = "value = compute(alpha, beta) + 1  # typing inside the function\n";
    let indent_width = target.indent.len() as u32;
    let mut latencies = Vec::new();
    let mut micros = Vec::new();
    let mut column = indent_width;
    for i in 0..200usize {
        let c = typed.chars().nth(i % typed.chars().count()).unwrap_or('x');
        let text = if c == '\n' {
            format!("\n{}", target.indent)
        } else {
            c.to_string()
        };
        let version = i as i64 + 2;
        let t0 = Instant::now();
        send(
            json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": uri, "version": version },
            "contentChanges": [{ "range": {
                "start": { "line": row, "character": column },
                "end": { "line": row, "character": column } }, "text": text }] } }),
        );
        let params = wait(version).await;
        latencies.push(t0.elapsed());
        micros.push(Duration::from_micros(
            params["micros"].as_u64().unwrap_or(0),
        ));
        if c == '\n' {
            row += 1;
            column = indent_width;
        } else {
            column += 1;
        }
    }
    let diagnostics = diagnostics.get() - opened_with;
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
        diagnostics,
    }
}

fn print(label: &str, module: &str, target: &Target, r: &Report) {
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
        "  typing in `{}` (line {}), which 21 memory pages name: {} publishDiagnostics while typing",
        target.name,
        target.line + 1,
        r.diagnostics
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
    let target = attach_memory(&tmp, &module)?;

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
    let report = session(read, write, &tmp, &module, &target).await;
    print(
        "in-process (workspace scanned, memory attached)",
        &module,
        &target,
        &report,
    );
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
        let report = session(stdout, stdin, &tmp, &module, &target).await;
        let _ = child.wait().await;
        print(
            "`loci lsp` process (workspace already scanned)",
            &module,
            &target,
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

//! Helpers for tests that drive the real `loci` binary: a `loci mcp` child process
//! spoken to in JSON-RPC lines over its stdin/stdout, with stderr collected.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// How long one wait may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// The binary under test.
pub fn loci() -> &'static str {
    env!("CARGO_BIN_EXE_loci")
}

/// Writes `text` to `root/rel`, creating directories.
pub use crate::fixture::write;

/// Runs `loci -C root ARGS`, returning (status, stdout, stderr).
pub fn run(root: &Path, args: &[&str]) -> (ExitStatus, String, String) {
    let out = Command::new(loci())
        .arg("-C")
        .arg(root)
        .args(args)
        .env_remove("LOCI_DB")
        .env_remove("LOCI_SESSION")
        .stdin(Stdio::null())
        .output()
        .expect("run loci");
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A running `loci mcp` over stdio.
pub struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    next_id: u64,
}

impl Mcp {
    /// Starts `loci -C root mcp` with extra environment variables.
    pub fn start(root: &Path, env: &[(&str, &str)]) -> Mcp {
        let mut cmd = Command::new(loci());
        cmd.arg("-C")
            .arg(root)
            .arg("mcp")
            .env_remove("LOCI_DB")
            .env_remove("LOCI_AUTHOR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn loci mcp");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let collected = Arc::new(Mutex::new(String::new()));
        let sink = collected.clone();
        let stderr_reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        let stdin = child.stdin.take();
        Mcp {
            child,
            stdin,
            lines,
            stderr: collected,
            stderr_reader: Some(stderr_reader),
            next_id: 1,
        }
    }

    /// Sends one raw line.
    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .expect("write to loci mcp");
    }

    /// Sends one message.
    pub fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// The next stdout line, which must be one JSON-RPC 2.0 message.
    pub fn recv(&self) -> Value {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => parse_message(&line),
            Err(RecvTimeoutError::Timeout) => {
                panic!("no message within {TIMEOUT:?}; stderr:\n{}", self.stderr())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("loci mcp closed stdout; stderr:\n{}", self.stderr())
            }
        }
    }

    /// Reads messages until the response to `id`.
    pub fn response(&self, id: u64) -> Value {
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                return m;
            }
        }
    }

    /// `initialize` + `notifications/initialized`.
    pub fn initialize(&mut self, client: &str) -> Value {
        let id = self.id();
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": client, "version": "1"}}}),
        );
        let r = self.response(id);
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    /// A fresh request id.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Calls a tool and returns the JSON-RPC response.
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let id = self.id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
        self.response(id)
    }

    /// Kills the server (SIGKILL on Unix), by its handle; [`Mcp::finish`] then collects
    /// what it wrote before it died.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Closes stdin and waits for the process to exit; returns its status, every stdout
    /// line not read yet (each checked to be a JSON-RPC message) and all of stderr.
    pub fn finish(mut self) -> (ExitStatus, Vec<Value>, String) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        loop {
            match self.lines.recv_timeout(TIMEOUT) {
                Ok(line) => rest.push(parse_message(&line)),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!(
                        "loci mcp did not exit after stdin closed; stderr:\n{}",
                        self.stderr()
                    );
                }
            }
        }
        let status = self.child.wait().expect("wait for loci mcp");
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        (status, rest, self.stderr())
    }
}

impl Mcp {
    /// Closes stdin and polls the process until it exits, failing the test if it runs
    /// past [`TIMEOUT`]; returns its status, how long after the close it exited (to
    /// within the polling interval, 10 ms), every stdout line not read yet and stderr.
    pub fn close_and_wait(mut self) -> (ExitStatus, Duration, Vec<Value>, String) {
        drop(self.stdin.take());
        let closed = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("poll loci mcp") {
                break status;
            }
            if closed.elapsed() > TIMEOUT {
                let _ = self.child.kill();
                panic!(
                    "loci mcp did not exit within {TIMEOUT:?} after stdin closed; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let exited = closed.elapsed();
        let mut rest = Vec::new();
        // The process is gone: its stdout ends once the lines it wrote are read.
        while let Ok(line) = self.lines.recv_timeout(TIMEOUT) {
            rest.push(parse_message(&line));
        }
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        (status, exited, rest, self.stderr())
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        // Only this test's own child, by handle.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A running `loci mcp --http` and the address it listens on.
pub struct HttpServer {
    child: Child,
    /// Where it listens (loopback when it bound an unspecified address).
    pub addr: SocketAddr,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `loci -C root mcp --http BIND EXTRA...` and waits until it says where it listens.
pub fn start_http(root: &Path, bind: &str, extra: &[&str]) -> HttpServer {
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

/// Parses a stdout line, failing the test unless it is one JSON-RPC 2.0 message.
pub fn parse_message(line: &str) -> Value {
    let v: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:.300}"));
    assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line:.300}");
    let is_response =
        v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some());
    let is_message = v.get("method").and_then(Value::as_str).is_some();
    assert!(
        is_response || is_message,
        "not a JSON-RPC message: {line:.300}"
    );
    v
}

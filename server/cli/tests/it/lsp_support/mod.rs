//! A `loci lsp` process driven over stdio by the tests: framed JSON-RPC out, frames read on
//! a thread, server requests answered with null on the way.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

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

pub struct Lsp {
    child: Child,
    stdin: ChildStdin,
    frames: Receiver<Value>,
    next_id: i64,
}

impl Lsp {
    pub fn start(root: &std::path::Path) -> Lsp {
        Lsp::start_with_env(root, &[])
    }

    /// [`Lsp::start`] with more environment variables (team memory's `PGPASSWORD`).
    pub fn start_with_env(root: &std::path::Path, env: &[(&str, &str)]) -> Lsp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_loci"))
            .arg("lsp")
            .current_dir(root)
            .envs(env.iter().copied())
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

    pub fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message `wanted` accepts; requests from the server are answered (null)
    /// and, like everything else on the way, passed over.
    pub fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
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

    /// The next message to arrive before `deadline`, `None` when none did; requests from
    /// the server are answered (null) and passed over. `deadline` now only takes what has
    /// already arrived.
    pub fn next_before(&mut self, deadline: Instant) -> Option<Value> {
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let v = match self.frames.recv_timeout(wait) {
                Ok(v) => v,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its stdout"),
            };
            if v.get("method").is_some() && v.get("id").is_some() {
                let id = v["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
                continue;
            }
            return Some(v);
        }
    }

    /// The next message, whatever it is, unanswered (the caller answers a request).
    pub fn recv(&mut self) -> Value {
        self.frames
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|_| panic!("no message within {TIMEOUT:?}"))
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
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

impl Lsp {
    /// Waits for the process to end (after `exit`): its stdout closes, unread messages
    /// are passed over, then its status. Fails the test after the timeout.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        loop {
            match self.frames.recv_timeout(TIMEOUT) {
                Ok(_) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("loci lsp did not exit within {TIMEOUT:?}")
                }
            }
        }
        self.child.wait().expect("waiting for loci lsp")
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `loci ARGS` in `root` (no `LOCI_DB`, no session) and asserts it succeeded.
pub fn loci(root: &std::path::Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(args)
        .current_dir(root)
        .env_remove("LOCI_DB")
        .env_remove("LOCI_SESSION")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
}

/// A small `json/decoder.py` in CPython's shape: `JSONDecoder.decode` calls `raw_decode`.
pub const DECODER: &str = "\
class JSONDecoder:
    def decode(self, s):
        obj, end = self.raw_decode(s)
        return obj

    def raw_decode(self, s, idx=0):
        obj, end = scan_once(s, idx)
        return obj, end
";

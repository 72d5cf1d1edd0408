//! Resource bounds (docs/reliability.md section 6): the long-running servers bound glibc
//! malloc's arenas, the fault the soak (`bench/soak.py`) found.
//!
//! `loci lsp` and `loci mcp` re-execute themselves once at start with
//! `glibc.malloc.arena_max` in `GLIBC_TUNABLES` (server/cli/src/malloc.rs). These tests
//! read the environment the running server was executed with (`/proc/PID/environ`) after
//! it answered `initialize`, so after any re-execution.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

const LOCI: &str = env!("CARGO_BIN_EXE_loci");

/// How long a server may take to answer `initialize`.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Which server, and how its messages are framed.
#[derive(Clone, Copy)]
enum Server {
    Lsp,
    Mcp,
}

/// Starts the server with `GLIBC_TUNABLES` set to `tunables` (removed when `None`),
/// waits for its answer to `initialize`, and returns the `GLIBC_TUNABLES` the process
/// that answered was executed with (`None` when unset). A re-execution keeps the process
/// id, so `/proc/PID/environ` of the spawned id is the answering program's.
fn tunables_of_running_server(server: Server, tunables: Option<&str>) -> Option<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(LOCI);
    match server {
        Server::Lsp => cmd.arg("lsp"),
        Server::Mcp => cmd.arg("-C").arg(dir.path()).arg("mcp"),
    };
    cmd.env_remove("LOCI_DB")
        .env_remove("RUST_LOG")
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match tunables {
        Some(t) => cmd.env("GLIBC_TUNABLES", t),
        None => cmd.env_remove("GLIBC_TUNABLES"),
    };
    let mut child: Child = cmd.spawn().expect("spawn loci");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let request = match server {
        Server::Lsp => {
            let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}"#;
            format!("Content-Length: {}\r\n\r\n{body}", body.len())
        }
        Server::Mcp => concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","#,
            r#""capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
            "\n"
        )
        .to_string(),
    };
    stdin
        .write_all(request.as_bytes())
        .expect("send initialize");
    stdin.flush().expect("flush");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut out = BufReader::new(stdout);
        let answer = match server {
            Server::Mcp => {
                let mut line = String::new();
                out.read_line(&mut line).map(|_| line)
            }
            Server::Lsp => (|| {
                let mut length = 0;
                loop {
                    let mut header = String::new();
                    out.read_line(&mut header)?;
                    let header = header.trim();
                    if header.is_empty() {
                        break;
                    }
                    if let Some(v) = header.strip_prefix("Content-Length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                out.read_exact(&mut body)?;
                Ok(String::from_utf8_lossy(&body).into_owned())
            })(),
        };
        let _ = tx.send(answer);
    });
    let answer = rx
        .recv_timeout(TIMEOUT)
        .expect("an answer to initialize")
        .expect("reading the answer");
    assert!(
        answer.contains(r#""id":1"#) && answer.contains("result"),
        "initialize answered: {answer}"
    );
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("read environ");
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "server exit: {status}");
    tunables_in_environ(&environ)
}

/// `GLIBC_TUNABLES` in a `/proc/PID/environ` block. glibc parses the variable in place at
/// start and overwrites the `:` between tunables with NULs, so the tunables after the
/// first appear as entries of their own (`glibc.…=…`, a name no variable has): they are
/// joined back.
fn tunables_in_environ(environ: &[u8]) -> Option<String> {
    let mut entries = environ
        .split(|b| *b == 0)
        .map(|kv| String::from_utf8_lossy(kv).into_owned());
    let mut value =
        entries.find_map(|kv| kv.strip_prefix("GLIBC_TUNABLES=").map(str::to_string))?;
    for rest in entries.take_while(|kv| kv.starts_with("glibc.")) {
        value.push(':');
        value.push_str(&rest);
    }
    Some(value)
}

#[test]
fn fault_server_rss_ratcheted_with_one_malloc_arena_per_thread() {
    // Both servers run with one arena: with an arena per blocking thread, each keeps the
    // largest working set a request had on it, and the soak's MCP server grew 68 MiB/h
    // with 7 MiB live.
    for server in [Server::Lsp, Server::Mcp] {
        assert_eq!(
            tunables_of_running_server(server, None).as_deref(),
            Some("glibc.malloc.arena_max=1")
        );
    }
}

#[test]
fn a_servers_other_tunables_are_kept_and_its_own_arena_bound_wins() {
    assert_eq!(
        tunables_of_running_server(Server::Mcp, Some("glibc.malloc.tcache_count=0")).as_deref(),
        Some("glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1")
    );
    assert_eq!(
        tunables_of_running_server(Server::Lsp, Some("glibc.malloc.arena_max=8")).as_deref(),
        Some("glibc.malloc.arena_max=8")
    );
}

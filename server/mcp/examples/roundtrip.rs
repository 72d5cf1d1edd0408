//! Benchmark: MCP tool round-trip latency over stdio against the real `loci` binary.
//!
//! ```text
//! cargo build --release -p loci-cli
//! cargo run --release -p loci-mcp --example roundtrip -- target/release/loci <workspace> [calls]
//! ```
//!
//! Scan the workspace first (`loci scan <workspace>`). Sends `initialize`, then `calls`
//! sequential `tools/call` requests per tool (`symbol` over a rotation of names, `why`,
//! and `context` when the server lists it) and prints p50/p95/max in milliseconds, the
//! response sizes, and the cost of a call that finds the periodic refresh due (the first
//! call after the refresh interval, which runs an incremental no-op scan).

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Client {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: u64,
}

impl Client {
    fn request(&mut self, method: &str, params: Value) -> (Value, usize, Duration) {
        self.id += 1;
        let line = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        let started = Instant::now();
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .expect("write");
        loop {
            let mut buf = String::new();
            let n = self.stdout.read_line(&mut buf).expect("read");
            assert!(n > 0, "loci mcp closed its output");
            let v: Value = serde_json::from_str(&buf).expect("one JSON message per line");
            if v["id"] == json!(self.id) {
                return (v, buf.len(), started.elapsed());
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> (Value, usize, Duration) {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn report(name: &str, mut times: Vec<Duration>, bytes: &[usize]) {
    times.sort();
    let mean_bytes = bytes.iter().sum::<usize>() / bytes.len().max(1);
    eprintln!(
        "{name:<8} n={:<4} p50={:>7.2} ms  p95={:>7.2} ms  max={:>7.2} ms  mean response {} bytes",
        times.len(),
        percentile(&times, 0.50),
        percentile(&times, 0.95),
        percentile(&times, 1.0),
        mean_bytes
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: roundtrip <loci-binary> <workspace> [calls-per-tool]");
        std::process::exit(2);
    }
    let calls: usize = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(200);
    let mut child = Command::new(&args[1])
        .args(["-C", &args[2], "mcp"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn loci mcp");
    let mut c = Client {
        stdin: child.stdin.take().expect("stdin"),
        stdout: BufReader::new(child.stdout.take().expect("stdout")),
        id: 0,
    };
    let (_, _, t) = c.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "roundtrip", "version": "1"}}),
    );
    eprintln!("initialize: {:.2} ms", t.as_secs_f64() * 1000.0);
    writeln!(
        c.stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .expect("write");
    let (tools, _, _) = c.request("tools/list", json!({}));
    let has_context = tools["result"]["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "context"));

    // The first call waits for the startup refresh.
    let (_, _, t) = c.call("symbol", json!({"name": "join"}));
    eprintln!(
        "first call (waits for the startup refresh): {:.2} ms",
        t.as_secs_f64() * 1000.0
    );
    let (_, _, _) = c.call(
        "remember",
        json!({"subject": ".", "body": "Benchmark note: the standard library's `os.path.join()`."}),
    );

    let names = [
        "join",
        "urlopen",
        "TestCase",
        "dumps",
        "Path",
        "OrderedDict",
        "run",
        "HTTPConnection",
        "deepcopy",
        "namedtuple",
    ];
    let mut times = Vec::new();
    let mut bytes = Vec::new();
    for i in 0..calls {
        let (v, n, t) = c.call("symbol", json!({"name": names[i % names.len()]}));
        assert!(v.get("result").is_some(), "{v}");
        times.push(t);
        bytes.push(n);
    }
    report("symbol", times, &bytes);

    let mut times = Vec::new();
    let mut bytes = Vec::new();
    for _ in 0..calls {
        let (v, n, t) = c.call("why", json!({"target": "os.path.join"}));
        assert!(v.get("result").is_some(), "{v}");
        times.push(t);
        bytes.push(n);
    }
    report("why", times, &bytes);

    if has_context {
        let mut times = Vec::new();
        let mut bytes = Vec::new();
        let queries = [
            "json encoder",
            "http client connection",
            "path join",
            "unittest test case",
            "url open request",
            "ordered dict",
            "deep copy",
            "named tuple",
            "subprocess run",
            "email parser",
        ];
        let mut abstained = 0;
        for i in 0..calls {
            let (v, n, t) = c.call("context", json!({"query": queries[i % queries.len()]}));
            assert!(v.get("result").is_some(), "{v}");
            if v["result"]["structuredContent"]["result"]["abstained"] == json!(true) {
                abstained += 1;
            }
            times.push(t);
            bytes.push(n);
        }
        report("context", times, &bytes);
        eprintln!("context  abstained on {abstained} of {calls} calls");
    } else {
        eprintln!("context  (not offered by this server yet)");
    }

    // A call that finds the periodic refresh due pays for an incremental no-op scan.
    let mut due = Vec::new();
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(2100));
        let (_, _, t) = c.call("symbol", json!({"name": "join"}));
        due.push(t);
    }
    report("refresh", due, &[0]);
    drop(c);
    let _ = child.wait();
}

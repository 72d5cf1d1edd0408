//! A client that behaves as Helix does: it types in bursts of 50 changes at ~30 ms
//! intervals and drops every `publishDiagnostics` whose version is older than its
//! document's ("Version (2) is out of date … dropping"). The final diagnostics, for the
//! last version of each burst, must arrive all the same. `loci lsp` as a real process over
//! stdio.
//!
//! The time from writing a burst's last change to receiving its diagnostics is printed
//! (p50, p95, max over the bursts): `LOCI_BENCH_BURSTS=20
//! LOCI_BENCH_DECODER=/usr/lib/python3.11/json/decoder.py cargo test -p loci-cli --test
//! lsp_helix -- --nocapture` is the benchmark of docs/benchmarks.md (`LOCI_BENCH_DECODER`:
//! CPython's `json/decoder.py` instead of the small one below; it must define
//! `JSONDecoder.raw_decode` ending in `        return obj, end`).

use crate::lsp_support;

use std::time::{Duration, Instant};

use lsp_support::{DECODER, Lsp, loci};
use serde_json::{Value, json};

/// Changes per burst, and the pause between two of them (typing speed).
const CHANGES: usize = 50;
const INTERVAL: Duration = Duration::from_millis(30);
/// How long the final diagnostics may take before the test fails (a debug build on a
/// loaded machine; the benchmark reports the real figure).
const DEADLINE: Duration = Duration::from_secs(20);

/// What the Helix-like client holds for one document.
struct HelixDocument {
    uri: String,
    version: i64,
    /// The last diagnostics it accepted, with their version.
    diagnostics: Option<(i64, Vec<Value>)>,
    /// Publishes dropped as out of date.
    dropped: usize,
}

impl HelixDocument {
    /// Takes one message as Helix does: a publish older than the document is dropped.
    fn receive(&mut self, message: &Value) {
        if message["method"] != "textDocument/publishDiagnostics"
            || message["params"]["uri"] != json!(self.uri)
        {
            return;
        }
        let version = message["params"]["version"]
            .as_i64()
            .unwrap_or(self.version);
        if version < self.version {
            self.dropped += 1;
            return;
        }
        let diagnostics = message["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        self.diagnostics = Some((version, diagnostics));
    }
}

/// `p`-th percentile (0–100) of sorted `values`, nearest rank.
fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[test]
fn fault_helix_dropped_the_only_publish_and_lost_the_stale_mark() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("json")).unwrap();
    let decoder = match std::env::var_os("LOCI_BENCH_DECODER") {
        Some(path) => std::fs::read_to_string(path).expect("reading LOCI_BENCH_DECODER"),
        None => DECODER.to_string(),
    };
    std::fs::write(root.join("json/decoder.py"), &decoder).unwrap();
    loci(&root, &["scan"]);
    loci(
        &root,
        &[
            "remember",
            "json/decoder.py",
            "--text",
            "`JSONDecoder.raw_decode()` returns the object and where it ended.",
        ],
    );
    let uri = format!("file://{}/json/decoder.py", root.display());

    let mut lsp = Lsp::start(&root);
    lsp.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": format!("file://{}", root.display()),
            "capabilities": {},
            "initializationOptions": {"scan": false},
        }),
    );
    lsp.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    lsp.send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": decoder}}}),
    );
    let mut doc = HelixDocument {
        uri: uri.clone(),
        version: 1,
        diagnostics: None,
        dropped: 0,
    };

    // Typing at the end of `return obj, end` in `raw_decode`'s body: the memory is stale
    // from the first change on, and its diagnostic stays the same through every burst.
    let line = decoder
        .lines()
        .position(|l| l == "        return obj, end")
        .unwrap();
    let definition = decoder
        .lines()
        .position(|l| l.starts_with("    def raw_decode("))
        .unwrap();
    let mut column = "        return obj, end".len();
    let bursts: usize = std::env::var("LOCI_BENCH_BURSTS")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(3);
    let mut latencies = Vec::new();
    for _ in 0..bursts {
        let mut last_sent = Instant::now();
        for change in 0..CHANGES {
            doc.version += 1;
            let at = json!({"line": line, "character": column});
            lsp.send(
                json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": doc.version},
                "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]}}),
            );
            last_sent = Instant::now();
            column += 1;
            // What arrived since the last change is read now that this one is sent, as
            // an editor busy with the keystroke would: a publish for the version before is
            // out of date.
            while let Some(m) = lsp.next_before(Instant::now()) {
                doc.receive(&m);
            }
            if change + 1 < CHANGES {
                // The pace of typing (the scenario, not a wait for a result).
                std::thread::sleep(INTERVAL);
            }
        }
        // The final diagnostics, for the last version, within the deadline.
        let deadline = last_sent + DEADLINE;
        while doc.diagnostics.as_ref().map(|d| d.0) != Some(doc.version) {
            match lsp.next_before(deadline) {
                Some(m) => doc.receive(&m),
                None => panic!(
                    "no diagnostics for version {} within {DEADLINE:?} of the last change \
                     (accepted: {:?}, dropped as out of date: {})",
                    doc.version, doc.diagnostics, doc.dropped
                ),
            }
        }
        latencies.push(last_sent.elapsed());
        let (_, diagnostics) = doc.diagnostics.clone().unwrap();
        let seen: Vec<Value> = diagnostics
            .iter()
            .map(|d| json!([d["severity"], d["code"], d["message"], d["range"]["start"]]))
            .collect();
        assert_eq!(
            seen,
            [json!([
                2,
                "stale_memory",
                "memory `json/decoder.py` v1 claim `JSONDecoder.raw_decode()` is stale: body of \
                 json/decoder.py#JSONDecoder.raw_decode@method changed since it was written",
                {"line": definition, "character": 8}
            ])]
        );
    }
    latencies.sort();
    eprintln!(
        "keystroke → final diagnostic over {bursts} bursts of {CHANGES} changes every {INTERVAL:?}: \
         p50 {:?}, p95 {:?}, max {:?}; {} publishes dropped as out of date",
        percentile(&latencies, 50),
        percentile(&latencies, 95),
        latencies.last().unwrap(),
        doc.dropped
    );
}

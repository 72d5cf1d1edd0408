//! Case B20: one store, many processes. Two `loci mcp` servers (driven over stdio; the
//! language server lives on another branch, so a second MCP server stands in for it) and
//! the CLI write memory to the same database at once. Every write lands exactly once,
//! revision numbers are gapless per page, and no process reports busy or locked.

mod mcp_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_support::{Mcp, run, write};
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
    let (status, _) = mcp.finish();
    if !status.success() {
        problems.push(format!("{name} exited with {status}"));
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
            move || mcp_writer(root, "mcp-two")
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
        for writer in ["mcp-one", "mcp-two", "cli"] {
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

//! Concurrent writers: four processes — `loci lsp`, `loci mcp` and two CLI writers — write
//! memory to one store at once (remember, decide, learn, confirm), interleaved with edits,
//! scans and reads. Afterwards every write is present exactly once, revision numbers are
//! gapless per page, no client saw an error (busy, locked or any other), the store passes
//! its integrity checks, and the map equals a fresh scan's.
//!
//! Size: `LOCI_STRESS_WRITES` writes per process (default 40; the dedicated run in
//! docs/reliability.md uses 1000). With `LOCI_STRESS_REPORT=FILE` the measured throughput
//! is written to FILE as JSON.

use crate::mcp_support;
use crate::reliability;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_support::{Mcp, run, write};
use reliability::{Lsp, assert_same_map, dump_map, env_usize, integrity, open_ro};
use serde_json::{Value, json};

/// One operation a writer performs.
#[derive(Clone, Debug)]
enum Op {
    Remember { subject: String, body: String },
    Decide(String),
    Learn(String),
    Confirm(String),
    Scan,
    Read(u32),
}

impl Op {
    fn is_write(&self) -> bool {
        matches!(
            self,
            Op::Remember { .. } | Op::Decide(_) | Op::Learn(_) | Op::Confirm(_)
        )
    }
}

/// The door a writer uses.
enum Door {
    Lsp(Box<Lsp>),
    Mcp(Box<Mcp>),
    Cli(PathBuf),
}

impl Door {
    /// Performs `op` as `author`; `Err` holds the client-visible failure.
    fn perform(&mut self, op: &Op, author: &str) -> Result<(), String> {
        match self {
            Door::Mcp(mcp) => {
                let (tool, args) = match op {
                    Op::Remember { subject, body } => (
                        "remember",
                        json!({"subject": subject, "body": body, "author": author}),
                    ),
                    Op::Decide(t) => ("decide", json!({"text": t, "author": author})),
                    Op::Learn(t) => ("learn", json!({"text": t, "author": author})),
                    Op::Confirm(s) => ("confirm", json!({"subject": s, "author": author})),
                    Op::Scan => ("scan", json!({})),
                    Op::Read(k) => match k % 3 {
                        0 => ("search", json!({"query": "note"})),
                        1 => ("show", json!({"subject": "topic:shared"})),
                        _ => ("history", json!({"subject": "decisions"})),
                    },
                };
                let r = mcp.call(tool, args);
                if r.get("error").is_some() || r["result"]["isError"] == json!(true) {
                    return Err(r.to_string());
                }
                Ok(())
            }
            Door::Lsp(lsp) => {
                let (command, args) = match op {
                    Op::Remember { subject, body } => (
                        // Each revision one note, as the other doors write it (the
                        // editor's remember adds to the page unless told to replace).
                        "loci.remember",
                        json!({"subject": subject, "body": body, "author": author, "replace": true}),
                    ),
                    Op::Decide(t) => ("loci.decide", json!({"text": t, "author": author})),
                    Op::Learn(t) => ("loci.learn", json!({"text": t, "author": author})),
                    Op::Confirm(s) => ("loci.confirm", json!({"subject": s, "author": author})),
                    Op::Scan => ("loci.scan", json!({})),
                    Op::Read(k) => match k % 2 {
                        0 => ("loci.context", json!({"query": "shared note"})),
                        _ => ("loci.recap", json!({"n": 2})),
                    },
                };
                let r = lsp.command(command, args);
                if r.get("error").is_some() {
                    return Err(r.to_string());
                }
                Ok(())
            }
            Door::Cli(root) => {
                let author_flag = ["--author", author];
                let args: Vec<&str> = match op {
                    Op::Remember { subject, body } => {
                        let mut a = vec!["remember", subject.as_str(), "--text", body.as_str()];
                        a.extend(author_flag);
                        a
                    }
                    Op::Decide(t) => {
                        let mut a = vec!["decide", t.as_str()];
                        a.extend(author_flag);
                        a
                    }
                    Op::Learn(t) => {
                        let mut a = vec!["learn", t.as_str()];
                        a.extend(author_flag);
                        a
                    }
                    Op::Confirm(s) => {
                        let mut a = vec!["confirm", s.as_str()];
                        a.extend(author_flag);
                        a
                    }
                    Op::Scan => vec!["scan"],
                    Op::Read(k) => match k % 3 {
                        0 => vec!["search", "note"],
                        1 => vec!["show", "topic:shared"],
                        _ => vec!["history", "decisions"],
                    },
                };
                let (status, _, stderr) = run(root, &args);
                // Notes (`note: no scan yet …` before the first scan lands) are for the
                // user, not failures; any other stderr line is.
                let unexpected = stderr
                    .lines()
                    .any(|l| !l.trim().is_empty() && !l.starts_with("note: "));
                if !status.success() || unexpected {
                    return Err(format!("loci {args:?}: {status}: {stderr}"));
                }
                Ok(())
            }
        }
    }
}

/// What one writer did.
struct Outcome {
    name: &'static str,
    problems: Vec<String>,
    writes: usize,
    scans: usize,
    reads: usize,
    elapsed: Duration,
    started: Instant,
    finished: Instant,
    /// Server log lines about a busy database (retries inside the store, not surfaced).
    busy_retries: usize,
}

/// The operations of writer `name`: `writes` memory writes cycling remember, decide,
/// learn, confirm; a read after every fifth write; an edit of the writer's own file (and
/// every other time a new file) and a scan after every tenth.
fn plan(name: &str, writes: usize) -> Vec<(Op, Option<usize>)> {
    let mut ops = Vec::new();
    for i in 0..writes {
        let op = match i % 4 {
            0 => Op::Remember {
                subject: "topic:shared".into(),
                body: format!("{name} note {i}"),
            },
            1 => Op::Decide(format!("{name} decision {i}")),
            2 => Op::Learn(format!("{name} lesson {i}")),
            _ => Op::Confirm("topic:shared".into()),
        };
        ops.push((op, None));
        if i % 5 == 4 {
            ops.push((Op::Read(i as u32 / 5), None));
        }
        if i % 10 == 9 {
            ops.push((Op::Scan, Some(i)));
        }
    }
    ops
}

/// Rewrites the writer's own module with `i + 1` functions; every other time also adds
/// a new file importing it.
fn edit(root: &Path, name: &str, i: usize) {
    let module = name.replace('-', "_");
    let mut text = String::new();
    for k in 0..=i {
        text.push_str(&format!("def {module}_f{k}(x):\n    return x + {k}\n\n"));
    }
    write(root, &format!("src/{module}.py"), &text);
    if (i / 10) % 2 == 1 {
        write(
            root,
            &format!("src/{module}_{i}.py"),
            &format!(
                "from src.{module} import {module}_f0\n\ndef use_{i}():\n    return {module}_f0({i})\n"
            ),
        );
    }
}

fn writer(root: PathBuf, name: &'static str, writes: usize) -> Outcome {
    let author = format!("agent:{name}");
    let mut door = match name {
        "lsp" => {
            let mut lsp = Lsp::start(&root);
            let init = lsp.initialize(&root);
            assert!(init.get("error").is_none(), "lsp initialize: {init}");
            Door::Lsp(Box::new(lsp))
        }
        "mcp" => {
            let mut mcp = Mcp::start(&root, &[("RUST_LOG", "warn")]);
            mcp.initialize(name);
            Door::Mcp(Box::new(mcp))
        }
        _ => Door::Cli(root.clone()),
    };
    let mut out = Outcome {
        name,
        problems: Vec::new(),
        writes: 0,
        scans: 0,
        reads: 0,
        elapsed: Duration::ZERO,
        started: Instant::now(),
        finished: Instant::now(),
        busy_retries: 0,
    };
    for (op, edit_at) in plan(name, writes) {
        if let Some(i) = edit_at {
            edit(&root, name, i);
        }
        match door.perform(&op, &author) {
            Ok(()) => {}
            Err(e) => out.problems.push(format!("{name} {op:?}: {e}")),
        }
        match op {
            Op::Scan => out.scans += 1,
            Op::Read(_) => out.reads += 1,
            ref w if w.is_write() => out.writes += 1,
            _ => {}
        }
    }
    out.finished = Instant::now();
    out.elapsed = out.finished - out.started;
    let log = match door {
        Door::Lsp(lsp) => {
            let log = lsp.stderr();
            if let Err(e) = lsp.finish() {
                out.problems.push(e);
            }
            log
        }
        Door::Mcp(mcp) => {
            let (status, _, log) = mcp.finish();
            if !status.success() {
                out.problems
                    .push(format!("mcp exited with {status}: {log}"));
            }
            log
        }
        Door::Cli(_) => String::new(),
    };
    out.busy_retries = log.matches("database busy").count();
    out
}

/// Revision bodies of `subject`, oldest first, with their versions.
fn revisions(conn: &loci_store::rusqlite::Connection, subject: &str) -> Vec<(i64, String)> {
    let mut stmt = conn
        .prepare(
            "SELECT r.version, r.body FROM revisions r JOIN pages p USING (page_id)
             WHERE p.subject = ?1 ORDER BY r.version",
        )
        .expect("prepare");
    stmt.query_map([subject], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

#[test]
fn b20_four_processes_write_one_store_concurrently() {
    let writes = env_usize("LOCI_STRESS_WRITES", 40);
    assert!(
        writes >= 4 && writes.is_multiple_of(4),
        "LOCI_STRESS_WRITES must be a multiple of 4"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical root");
    for k in 0..20 {
        write(
            &root,
            &format!("pkg/m{k}.py"),
            &format!("from pkg.m0 import base\n\ndef f{k}():\n    return base({k})\n"),
        );
    }
    write(&root, "pkg/m0.py", "def base(x):\n    return x\n");
    write(&root, "README.md", "# stress\n\nSee `pkg/m0.py`.\n");
    // No store yet: the four processes create it, migrate it and scan it at once, as an
    // editor and an agent started together on a fresh checkout do.

    const NAMES: [&str; 4] = ["lsp", "mcp", "cli-a", "cli-b"];
    let threads: Vec<_> = NAMES
        .iter()
        .map(|&name| {
            let root = root.clone();
            std::thread::spawn(move || writer(root, name, writes))
        })
        .collect();
    let outcomes: Vec<Outcome> = threads
        .into_iter()
        .map(|t| t.join().expect("writer thread"))
        .collect();
    let problems: Vec<&String> = outcomes.iter().flat_map(|o| &o.problems).collect();
    let busy: Vec<&&String> = problems
        .iter()
        .filter(|p| {
            let p = p.to_ascii_lowercase();
            p.contains("busy") || p.contains("locked")
        })
        .collect();
    assert!(
        busy.is_empty(),
        "busy or locked surfaced to a client: {busy:#?}"
    );
    assert!(problems.is_empty(), "clients saw errors: {problems:#?}");

    let db = root.join(".loci/loci.db");
    let conn = open_ro(&db);
    // Gapless versions on every page.
    let pages: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT subject FROM pages ORDER BY subject")
            .expect("pages");
        stmt.query_map([], |r| r.get(0))
            .expect("pages")
            .map(|r| r.expect("row"))
            .collect()
    };
    // Each decision and lesson is a page of its own, numbered without gaps however the
    // writers interleaved.
    let per_kind = writes / 4;
    let entries = NAMES.len() * per_kind;
    let mut expected_pages: Vec<String> = (1..=entries)
        .flat_map(|n| [format!("decision:{n}"), format!("lesson:{n}")])
        .chain(["topic:shared".to_string()])
        .collect();
    expected_pages.sort();
    assert_eq!(pages, expected_pages);
    let versions: Vec<i64> = revisions(&conn, "topic:shared")
        .iter()
        .map(|r| r.0)
        .collect();
    let expected: Vec<i64> = (1..=entries as i64).collect();
    assert_eq!(versions, expected, "topic:shared: gapless versions 1..n");
    // Every remembered note exactly once.
    let mut notes: BTreeMap<String, usize> = BTreeMap::new();
    for (_, body) in revisions(&conn, "topic:shared") {
        *notes.entry(body).or_default() += 1;
    }
    let expected_notes: BTreeMap<String, usize> = NAMES
        .iter()
        .flat_map(|n| {
            (0..writes)
                .filter(|i| i % 4 == 0)
                .map(move |i| (format!("{n} note {i}"), 1))
        })
        .collect();
    assert_eq!(
        notes, expected_notes,
        "topic:shared: every note exactly once"
    );
    // Every decision and lesson exactly once, each its own entry of one revision, by its
    // writer.
    for (prefix, word, rest) in [("decision:", "decision", 1), ("lesson:", "lesson", 2)] {
        let mut written: BTreeMap<String, usize> = BTreeMap::new();
        let mut stmt = conn
            .prepare(
                "SELECT r.version, r.body, r.author FROM revisions r JOIN pages p USING (page_id)
                 WHERE p.subject LIKE ?1 || '%'",
            )
            .expect("prepare");
        let rows: Vec<(i64, String, String)> = stmt
            .query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .map(|r| r.expect("row"))
            .collect();
        for (version, body, author) in rows {
            assert_eq!(version, 1, "{prefix}: one revision per entry");
            *written.entry(format!("{body} — {author}")).or_default() += 1;
        }
        let expected: BTreeMap<String, usize> = NAMES
            .iter()
            .flat_map(|n| {
                (0..writes)
                    .filter(|i| i % 4 == rest)
                    .map(move |i| (format!("{n} {word} {i} — agent:{n}"), 1))
            })
            .collect();
        assert_eq!(written, expected, "{prefix}: every entry exactly once");
    }
    // Every confirm recorded exactly once, by its author.
    for name in NAMES {
        let confirms: i64 = conn
            .query_row(
                "SELECT count(*) FROM events WHERE kind = 'confirm'
                 AND json_extract(payload, '$.author') = ?1",
                [format!("agent:{name}")],
                |r| r.get(0),
            )
            .expect("confirms");
        assert_eq!(confirms, per_kind as i64, "{name}: confirms recorded");
    }
    assert_eq!(integrity(&conn), ["ok"], "integrity after the stress run");

    // The map that concurrent scans left behind equals a fresh scan of the same tree.
    let (status, _, stderr) = run(&root, &["scan"]);
    assert!(status.success(), "{stderr}");
    let got = dump_map(&open_ro(&db));
    let fresh_dir = tempfile::tempdir().expect("tempdir");
    let fresh_db = fresh_dir.path().join("fresh.db");
    let (status, _, stderr) = run(&root, &["--db", fresh_db.to_str().expect("utf-8"), "scan"]);
    assert!(status.success(), "{stderr}");
    assert_same_map("after the stress run", &got, &dump_map(&open_ro(&fresh_db)));

    // Throughput, for docs/benchmarks.md.
    let first = outcomes.iter().map(|o| o.started).min().expect("writers");
    let last = outcomes.iter().map(|o| o.finished).max().expect("writers");
    let wall = (last - first).as_secs_f64();
    let total: usize = outcomes.iter().map(|o| o.writes).sum();
    let report = json!({
        "writes_per_process": writes,
        "wall_s": wall,
        "writes_per_s": total as f64 / wall,
        "processes": outcomes.iter().map(|o| json!({
            "name": o.name,
            "writes": o.writes,
            "scans": o.scans,
            "reads": o.reads,
            "elapsed_s": o.elapsed.as_secs_f64(),
            "writes_per_s": o.writes as f64 / o.elapsed.as_secs_f64(),
            "busy_retries_logged": o.busy_retries,
        })).collect::<Vec<Value>>(),
    });
    eprintln!("{report:#}");
    if let Ok(path) = std::env::var("LOCI_STRESS_REPORT") {
        std::fs::write(&path, format!("{report:#}\n")).expect("write the report");
    }
}

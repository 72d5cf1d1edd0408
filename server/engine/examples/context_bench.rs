//! The context benchmark, self-contained: on each corpus it scans the tree into a fresh
//! database, writes the case file's memory (and, for the stdlib, generated pages up to
//! `--pages`), then reports
//!
//! - retrieval quality from `loci eval` (recall@k, MRR, nDCG@k, abstention precision and
//!   recall) for `loci context` and plain FTS5 BM25 side by side, in the same run;
//! - in-process latency of `context` (p50/p95, ms; target p95 ≤ 5 ms on the stdlib with
//!   500 pages) against its reference, plain FTS5 BM25 over the same three indexes with
//!   the question's content terms ORed (as `loci eval`'s baseline), alternating A B A B,
//!   with the median, min and max of the per-query ratios;
//! - whole-process latency of `loci context` (p50/p95, ms; target p95 ≤ 10 ms), when a
//!   `loci` binary is found (`--loci BIN`, or `loci` next to this example's directory, as
//!   `cargo build --release -p loci-cli` leaves it).
//!
//! Usage (from the repository root):
//! `cargo run --release --example context_bench -p loci-engine -- [--corpus all|stdlib|loci]
//! [--pages N] [--rounds R] [--cli-runs N] [--k K] [--loci BIN] [--stdlib-root DIR] [--keep DIR] [--verbose]`.
//! Defaults: all, 500 pages, 5 rounds, 3 CLI runs per query, k = 5. The stdlib corpus is a
//! copy of the Python standard library's `.py` files without `site-packages` in
//! `$TMPDIR/loci-bench-stdlib` (the one bench/scan_bench.py makes; made here when missing,
//! from `python3`'s `sysconfig` stdlib path). Prints one JSON object per corpus, then a
//! markdown table of all of them. Exits 2 on bad arguments, 1 when a corpus cannot be set up.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a benchmark prints its figures

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use loci_engine::Workspace;
use loci_engine::context::{ContextRequest, EvalReport};
use loci_engine::memory::WriteOptions;

/// Options from the command line.
struct Args {
    corpus: String,
    pages: usize,
    rounds: usize,
    cli_runs: usize,
    k: usize,
    loci: Option<PathBuf>,
    stdlib_root: Option<PathBuf>,
    /// Keep the corpora's databases in this directory (`<corpus>.db`) for profiling.
    keep: Option<PathBuf>,
    /// Print every case's outcome to stderr.
    verbose: bool,
}

fn parse_args() -> std::result::Result<Args, String> {
    let mut a = Args {
        corpus: "all".into(),
        pages: 500,
        rounds: 5,
        cli_runs: 3,
        k: 5,
        loci: None,
        stdlib_root: None,
        keep: None,
        verbose: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: String| {
            v.parse::<usize>()
                .map_err(|_| format!("{flag} wants a whole number, got {v:?}"))
        };
        match flag.as_str() {
            "--corpus" => a.corpus = value()?,
            "--pages" => a.pages = number(value()?)?,
            "--rounds" => a.rounds = number(value()?)?.max(1),
            "--cli-runs" => a.cli_runs = number(value()?)?,
            "--k" => a.k = number(value()?)?.max(1),
            "--loci" => a.loci = Some(PathBuf::from(value()?)),
            "--stdlib-root" => a.stdlib_root = Some(PathBuf::from(value()?)),
            "--keep" => a.keep = Some(PathBuf::from(value()?)),
            "--verbose" => a.verbose = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if !["all", "stdlib", "loci"].contains(&a.corpus.as_str()) {
        return Err(format!(
            "--corpus is all, stdlib or loci, not {:?}",
            a.corpus
        ));
    }
    Ok(a)
}

fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[(((v.len() - 1) as f64) * p).round() as usize]
}

/// The Python stdlib copy (made when missing): every `.py` file under `sysconfig`'s stdlib
/// path except `site-packages`.
fn stdlib_corpus(given: Option<&Path>) -> std::result::Result<PathBuf, String> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    let dest = std::env::temp_dir().join("loci-bench-stdlib");
    if dest.is_dir() {
        return Ok(dest);
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .map_err(|e| format!("running python3 to find the stdlib: {e}"))?;
    let src = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !src.is_dir() {
        return Err(format!("python3 names no stdlib directory ({src:?})"));
    }
    let tmp = std::env::temp_dir().join(format!("loci-bench-stdlib.{}", std::process::id()));
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(&src).unwrap_or(&p).to_path_buf();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if rel != Path::new("site-packages") && rel != Path::new("dist-packages") {
                    stack.push(p);
                }
            } else if kind.is_file() && p.extension().is_some_and(|x| x == "py") {
                let to = tmp.join(&rel);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("{}: {e}", parent.display()))?;
                }
                std::fs::copy(&p, &to).map_err(|e| format!("{}: {e}", p.display()))?;
            }
        }
    }
    std::fs::rename(&tmp, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(dest)
}

/// Writes `n` pages about files of the map that have symbols, spread over the tree, each
/// a few sentences of prose naming the file, its symbols and an import in backticks.
/// Returns how many it wrote.
fn write_pages(ws: &mut Workspace, n: usize) -> std::result::Result<usize, String> {
    if n == 0 {
        return Ok(0);
    }
    let sql = |e: loci_store::rusqlite::Error| format!("reading the map: {e}");
    let conn = ws.store().conn();
    let mut stmt = conn
        .prepare(
            "SELECT f.path, group_concat(s.qualified_name || '|' || s.kind, char(10))
             FROM files f JOIN symbols s USING (file_id)
             WHERE s.kind IN ('class', 'function', 'method')
             GROUP BY f.path ORDER BY f.path",
        )
        .map_err(sql)?;
    let files: Vec<(String, Vec<(String, String)>)> = stmt
        .query_map([], |r| {
            let syms: String = r.get(1)?;
            Ok((
                r.get::<_, String>(0)?,
                syms.lines()
                    .filter_map(|l| l.split_once('|'))
                    .map(|(q, k)| (q.to_string(), k.to_string()))
                    .collect(),
            ))
        })
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    drop(stmt);
    let mut stmt = conn
        .prepare(
            "SELECT a.path, b.path FROM deps d JOIN files a ON a.file_id = d.from_file_id
             JOIN files b ON b.file_id = d.to_file_id ORDER BY a.path, b.path",
        )
        .map_err(sql)?;
    let deps: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    drop(stmt);
    let step = (files.len() / n).max(1);
    let mut written = 0;
    for (i, (path, syms)) in files.iter().step_by(step).take(n).enumerate() {
        let names: Vec<String> = syms
            .iter()
            .take(4)
            .map(|(q, k)| {
                if k == "class" {
                    format!("`{q}`")
                } else {
                    format!("`{q}()`")
                }
            })
            .collect();
        let import = deps
            .iter()
            .find(|(a, _)| a == path)
            .map(|(_, b)| format!(" It imports `{b}`, so a change there can break it."))
            .unwrap_or_default();
        let body = match i % 3 {
            0 => format!(
                "`{path}` is where {} live.{import} Read {} first when changing it; the tests cover the common paths but not the error handling.",
                names.join(", "),
                names[0]
            ),
            1 => format!(
                "Notes on `{path}`:\n\n- Entry points: {}.\n- {} is called from several modules; keep its signature stable.{import}\n- Performance matters here only for large inputs.",
                names.join(", "),
                names[0]
            ),
            _ => format!(
                "We changed {} in `{path}` last quarter after a bug report about edge cases.{import} The remaining helpers ({}) are thin wrappers.",
                names[0],
                names[1..].join(", ")
            ),
        };
        let opts = WriteOptions {
            author: Some("bench:generated".into()),
            summary: Some(format!("notes on {path}")),
            ..Default::default()
        };
        ws.remember(path, &body, &opts)
            .map_err(|e| format!("writing a page about {path}: {e}"))?;
        written += 1;
    }
    Ok(written)
}

/// The reference: plain FTS5 BM25 over the same three indexes with the same terms.
fn bm25(ws: &Workspace, query: &str) -> usize {
    let terms = loci_engine::context::search::content_terms(query);
    let Some(expr) = loci_engine::context::search::any_of(&terms) else {
        return 0;
    };
    let conn = ws.store().conn();
    let mut n = 0;
    n += loci_store::memory::search_revisions(conn, &expr, true, 20).map_or(0, |v| v.len());
    n += loci_store::search::search_symbols(conn, &expr, None, 20).map_or(0, |v| v.len());
    n += loci_store::search::search_docs(conn, &expr, None, 20).map_or(0, |v| v.len());
    n
}

/// The `loci` binary to time as a whole process, if there is one.
fn loci_binary(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = given {
        return Some(p.to_path_buf());
    }
    // target/<profile>/examples/context_bench → target/<profile>/loci
    let exe = std::env::current_exe().ok()?;
    let candidate = exe.parent()?.parent()?.join("loci");
    candidate.is_file().then_some(candidate)
}

/// The queries of a case file with their open files.
fn queries(cases: &Path) -> std::result::Result<Vec<(String, Vec<String>)>, String> {
    let text = std::fs::read_to_string(cases).map_err(|e| format!("{}: {e}", cases.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            let q = v.get("query")?.as_str()?.to_string();
            let open = v
                .get("open_files")
                .and_then(|o| o.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            Some((q, open))
        })
        .collect())
}

/// One corpus: set up, evaluate, time. Returns its JSON figures.
fn run(
    name: &str,
    root: &Path,
    cases: &Path,
    pages: usize,
    args: &Args,
) -> std::result::Result<serde_json::Value, String> {
    let work = args.keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("loci-context-bench-{}", std::process::id()))
    });
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let db = work.join(format!("{name}.db"));
    let _ = std::fs::remove_file(&db);
    let mut ws = Workspace::open(root, Some(&db)).map_err(|e| format!("opening {name}: {e}"))?;
    let started = Instant::now();
    ws.scan(&|_| {})
        .map_err(|e| format!("scanning {}: {e}", root.display()))?;
    let scan_s = started.elapsed().as_secs_f64();
    let written = write_pages(&mut ws, pages)?;
    // The case file's memory lines, in this database too: the CLI runs below time
    // `context` on the same memory `eval` measures quality on (in its scratch copy).
    ws.write_case_memory(cases)
        .map_err(|e| format!("writing the memory of {}: {e}", cases.display()))?;
    // Measures quality (both systems, one run).
    let report: EvalReport = ws
        .eval(cases, args.k)
        .map_err(|e| format!("evaluating {}: {e}", cases.display()))?
        .result;
    if args.verbose {
        for c in &report.cases {
            eprintln!(
                "{name} {:<28} loci rank {:>4} bm25 rank {:>4} best {:>5.1} recall {:.2}{}",
                c.id,
                c.loci_rank.map_or("-".into(), |r| r.to_string()),
                c.bm25_rank.map_or("-".into(), |r| r.to_string()),
                c.best_relevance,
                c.loci_recall,
                if c.abstained { " abstained" } else { "" }
            );
        }
    }
    let page_count: i64 = ws
        .store()
        .conn()
        .query_row(
            "SELECT count(*) FROM pages WHERE current_revision_id IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .map_err(|e| format!("counting pages: {e}"))?;
    let qs = queries(cases)?;

    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut abstained = 0;
    for round in 0..=args.rounds {
        for (q, open) in &qs {
            let req = ContextRequest {
                query: q.clone(),
                open_files: open.clone(),
                budget: None,
                floor: None,
            };
            let t = Instant::now();
            let answer = ws
                .context(&req)
                .map_err(|e| format!("context {q:?}: {e}"))?;
            let ta = t.elapsed().as_secs_f64() * 1000.0;
            let t = Instant::now();
            std::hint::black_box(bm25(&ws, q));
            let tb = t.elapsed().as_secs_f64() * 1000.0;
            // Round 0 warms the caches (page cache, prepared statements, import graph).
            if round > 0 {
                a.push(ta);
                b.push(tb);
                ratios.push(ta / tb.max(1e-6));
                abstained += usize::from(answer.result.abstained);
            }
        }
    }
    drop(ws);

    let cli = time_cli(args, &db, root, &qs)?;
    if args.keep.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }

    let (loci, base) = (&report.systems[0], &report.systems[1]);
    let quality = |s: &loci_engine::context::SystemScores| {
        serde_json::json!({
            "recall_at_k": s.recall_at_k,
            "mrr": s.mrr,
            "ndcg_at_k": s.ndcg_at_k,
            "abstention_precision": s.abstention_precision,
            "abstention_recall": s.abstention_recall,
        })
    };
    Ok(serde_json::json!({
        "corpus": name,
        "root": root.display().to_string(),
        "scan_s": scan_s,
        "pages_generated": written,
        "pages": page_count,
        "k": report.k,
        "in_scope": report.in_scope,
        "out_of_scope": report.out_of_scope,
        "unknown_gold": report.unknown_gold,
        "loci": quality(loci),
        "bm25": quality(base),
        "in_process": {
            "queries": qs.len(),
            "samples": a.len(),
            "abstained": abstained,
            "context_p50_ms": percentile(&a, 0.5),
            "context_p95_ms": percentile(&a, 0.95),
            "bm25_p50_ms": percentile(&b, 0.5),
            "bm25_p95_ms": percentile(&b, 0.95),
            "ratio_median": percentile(&ratios, 0.5),
            "ratio_min": percentile(&ratios, 0.0),
            "ratio_max": percentile(&ratios, 1.0),
        },
        "cli": cli,
    }))
}

/// The `loci` binary's `context` timed on every query, `args.cli_runs` times (p50 and
/// p95 in ms), or `null` when no run is asked for or no binary is found.
fn time_cli(
    args: &Args,
    db: &Path,
    root: &Path,
    qs: &[(String, Vec<String>)],
) -> std::result::Result<serde_json::Value, String> {
    let mut cli = serde_json::Value::Null;
    if args.cli_runs > 0
        && let Some(bin) = loci_binary(args.loci.as_deref())
    {
        let mut t = Vec::new();
        for _ in 0..args.cli_runs {
            for (q, open) in qs {
                let mut cmd = Command::new(&bin);
                cmd.arg("--db").arg(db).arg("-C").arg(root);
                cmd.arg("context").arg(q);
                for f in open {
                    cmd.arg("--open").arg(f);
                }
                cmd.stdout(Stdio::null()).stderr(Stdio::null());
                let started = Instant::now();
                let status = cmd
                    .status()
                    .map_err(|e| format!("running {}: {e}", bin.display()))?;
                t.push(started.elapsed().as_secs_f64() * 1000.0);
                // 0: an answer; 1: nothing found (an abstention); anything else is an error.
                if !matches!(status.code(), Some(0 | 1)) {
                    return Err(format!("`loci context {q:?}` exited with {status}"));
                }
            }
        }
        cli = serde_json::json!({
            "binary": bin.display().to_string(),
            "samples": t.len(),
            "p50_ms": percentile(&t, 0.5),
            "p95_ms": percentile(&t, 0.95),
        });
    }
    Ok(cli)
}

fn table(results: &[serde_json::Value]) -> String {
    let f = |v: &serde_json::Value| v.as_f64().map_or("-".into(), |x| format!("{x:.3}"));
    let ms = |v: &serde_json::Value| v.as_f64().map_or("-".into(), |x| format!("{x:.2}"));
    let mut s = String::from(
        "| corpus | pages | system | recall@k | MRR | nDCG@k | abst. precision | abst. recall | p50 ms | p95 ms | CLI p95 ms |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in results {
        for (sys, p50, p95, cli) in [
            (
                "loci",
                "context_p50_ms",
                "context_p95_ms",
                ms(&r["cli"]["p95_ms"]),
            ),
            ("bm25", "bm25_p50_ms", "bm25_p95_ms", "-".to_string()),
        ] {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r["corpus"].as_str().unwrap_or("?"),
                r["pages"],
                if sys == "loci" {
                    "loci context"
                } else {
                    "fts5 bm25"
                },
                f(&r[sys]["recall_at_k"]),
                f(&r[sys]["mrr"]),
                f(&r[sys]["ndcg_at_k"]),
                f(&r[sys]["abstention_precision"]),
                f(&r[sys]["abstention_recall"]),
                ms(&r["in_process"][p50]),
                ms(&r["in_process"][p95]),
                cli,
            ));
        }
    }
    s
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "context_bench: {e}\nusage: context_bench [--corpus all|stdlib|loci] [--pages N] [--rounds R] [--cli-runs N] [--k K] [--loci BIN] [--stdlib-root DIR] [--keep DIR] [--verbose]"
            );
            std::process::exit(2);
        }
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut results = Vec::new();
    let mut corpora: Vec<(&str, std::result::Result<PathBuf, String>, PathBuf, usize)> = Vec::new();
    if args.corpus != "loci" {
        corpora.push((
            "stdlib",
            stdlib_corpus(args.stdlib_root.as_deref()),
            repo.join("fixtures/eval/stdlib.jsonl"),
            args.pages,
        ));
    }
    if args.corpus != "stdlib" {
        corpora.push((
            "loci",
            Ok(repo.clone()),
            repo.join("fixtures/eval/loci.jsonl"),
            0,
        ));
    }
    for (name, root, cases, pages) in corpora {
        let outcome = root.and_then(|root| run(name, &root, &cases, pages, &args));
        match outcome {
            Ok(v) => {
                println!("{v}");
                results.push(v);
            }
            Err(e) => {
                eprintln!("context_bench: {name}: {e}");
                std::process::exit(1);
            }
        }
    }
    if results.iter().all(|r| r["cli"].is_null()) && args.cli_runs > 0 {
        eprintln!(
            "context_bench: no `loci` binary next to this example (build it with `cargo build --release -p loci-cli`, or pass --loci BIN); whole-process latency not measured"
        );
    }
    println!("\n{}", table(&results));
}

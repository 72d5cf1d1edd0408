//! In-process latency of `context` against its reference, plain FTS5 BM25 on the same
//! store (the three indexes queried with the question's content terms ORed, as
//! `loci eval`'s baseline does), alternating A B A B; and, with `--pages N`, the memory it
//! runs against: N pages generated from the map, prose naming paths and symbols in
//! backticks. Driven by bench/context_bench.py.
//!
//! Usage: `context_bench ROOT DB QUERIES.jsonl [--pages N] [--rounds R]`. QUERIES is a case
//! file (fixtures/eval/*.jsonl: its memory lines are written first, its queries timed).
//! Prints one JSON object: p50/p95 of each side in milliseconds and the median, min and max
//! of the per-pair ratios context / BM25.

#![allow(clippy::print_stdout)] // a benchmark prints its figures

use std::path::PathBuf;
use std::time::Instant;

use loci_engine::Workspace;
use loci_engine::context::ContextRequest;
use loci_engine::memory::WriteOptions;

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[(((v.len() - 1) as f64) * p).round() as usize]
}

/// Writes `n` pages about files of the map that have symbols, spread over the tree, each
/// a few sentences of prose naming the file, its symbols and an import in backticks.
fn write_pages(ws: &mut Workspace, n: usize) -> usize {
    let conn = ws.store().conn();
    let mut stmt = conn
        .prepare(
            "SELECT f.path, group_concat(s.qualified_name || '|' || s.kind, char(10))
             FROM files f JOIN symbols s USING (file_id)
             WHERE s.kind IN ('class', 'function', 'method')
             GROUP BY f.path ORDER BY f.path",
        )
        .expect("symbols by file");
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
        .expect("symbols by file")
        .collect::<Result<_, _>>()
        .expect("symbols by file");
    drop(stmt);
    let deps: Vec<(String, String)> = {
        let mut stmt = conn
            .prepare("SELECT a.path, b.path FROM deps d JOIN files a ON a.file_id = d.from_file_id JOIN files b ON b.file_id = d.to_file_id")
            .expect("deps");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("deps")
            .collect::<Result<_, _>>()
            .expect("deps")
    };
    let step = (files.len() / n.max(1)).max(1);
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
        ws.remember(path, &body, &opts).expect("remember");
        written += 1;
    }
    written
}

/// The reference: plain FTS5 BM25 over the same three indexes with the same terms.
fn bm25(ws: &Workspace, query: &str) -> usize {
    let terms = loci_engine::search::content_terms(query);
    let Some(expr) = loci_engine::search::any_of(&terms) else {
        return 0;
    };
    let conn = ws.store().conn();
    let mut n = loci_store::memory::search_revisions(conn, &expr, true, 20)
        .expect("bm25 memory")
        .len();
    n += loci_store::search::search_symbols(conn, &expr, None, 20)
        .expect("bm25 symbols")
        .len();
    n += loci_store::search::search_docs(conn, &expr, None, 20)
        .expect("bm25 docs")
        .len();
    n
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: context_bench ROOT DB QUERIES.jsonl [--pages N] [--rounds R]");
        std::process::exit(2);
    }
    let flag = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let pages = flag("--pages", 0);
    let rounds = flag("--rounds", 5);
    let (root, db, cases) = (
        PathBuf::from(&args[0]),
        PathBuf::from(&args[1]),
        PathBuf::from(&args[2]),
    );
    let mut ws = Workspace::open(&root, Some(&db)).expect("open the workspace");
    let written = if pages > 0 {
        write_pages(&mut ws, pages)
    } else {
        0
    };
    // Writes the case file's memory lines; its report is not used here.
    ws.eval(&cases, 5).expect("case file");
    let queries: Vec<(String, Vec<String>)> = std::fs::read_to_string(&cases)
        .expect("case file")
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
        .collect();
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut abstained = 0;
    for round in 0..=rounds {
        for (q, open) in &queries {
            let req = ContextRequest {
                query: q.clone(),
                open_files: open.clone(),
                budget: None,
                floor: None,
            };
            let t = Instant::now();
            let answer = ws.context(&req).expect("context");
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
    println!(
        "{}",
        serde_json::json!({
            "pages_written": written,
            "queries": queries.len(),
            "samples": a.len(),
            "abstained": abstained,
            "context_p50_ms": percentile(&a, 0.5),
            "context_p95_ms": percentile(&a, 0.95),
            "bm25_p50_ms": percentile(&b, 0.5),
            "bm25_p95_ms": percentile(&b, 0.95),
            "ratio_median": percentile(&ratios, 0.5),
            "ratio_min": percentile(&ratios, 0.0),
            "ratio_max": percentile(&ratios, 1.0),
        })
    );
}

//! Single-threaded benchmark of analysis against a bare tree-sitter parse.
//!
//! Usage: `cargo run --release -p loci-core --example parse_bench -- <dir> [ext] [rounds]`
//! (`ext` defaults to `py`, `rounds` to 3). Reads every `*.<ext>` file under `<dir>` into
//! memory (skipping `site-packages` and `__pycache__` directories), then reports, as the
//! best of `rounds` runs:
//!
//! - (a) parse only: `tree_sitter::Parser::parse` with no options, tree dropped;
//! - (b) full analyze: [`loci_core::analyze`] (parse with the timeout callback, query,
//!   walk, fingerprints, imports), plus its split into `parse` and `extract`;
//!
//! and the totals of symbols, references and imports found. For profilers,
//! `BENCH_PARSE_ONLY=1` and `BENCH_ANALYZE_ONLY=1` run just one of the two, once.

// A benchmark reports on stdout.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loci_core::analyze::{extract, parse};
use loci_core::{AnalyzeOptions, Language, analyze};

fn collect(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                // Installed third-party packages are not the standard library.
                if path
                    .file_name()
                    .is_some_and(|n| n == "site-packages" || n == "__pycache__")
                {
                    continue;
                }
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
}

fn best<T>(rounds: usize, mut run: impl FnMut() -> T) -> (Duration, T) {
    let mut best: Option<(Duration, T)> = None;
    for _ in 0..rounds {
        let start = Instant::now();
        let value = run();
        let elapsed = start.elapsed();
        if best.as_ref().is_none_or(|(b, _)| elapsed < *b) {
            best = Some((elapsed, value));
        }
    }
    best.expect("at least one round")
}

/// One file: its path under the directory, its language, its text (without a BOM).
type File = (String, Language, String);

/// Every `*.<ext>` file under `dir` that has a language, read into memory.
fn read_files(dir: &str, ext: &str) -> Vec<File> {
    let mut paths = Vec::new();
    collect(Path::new(dir), ext, &mut paths);
    paths
        .iter()
        .filter_map(|p| {
            let rel = p
                .strip_prefix(dir)
                .unwrap_or(p)
                .to_string_lossy()
                .replace('\\', "/");
            let language = Language::from_path(&rel)?;
            let bytes = std::fs::read(p).ok()?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let text = text
                .strip_prefix('\u{feff}')
                .map(str::to_string)
                .unwrap_or(text);
            Some((rel, language, text))
        })
        .collect()
}

/// Compiles each language's query once, reporting the time: a one-time cost per language
/// and process, kept out of the timings.
fn compile_queries(files: &[File]) {
    let mut languages: Vec<Language> = files.iter().map(|(_, l, _)| *l).collect();
    languages.sort();
    languages.dedup();
    for language in languages {
        let start = Instant::now();
        let compiled = language.query().is_ok();
        println!(
            "{} query compiled once in {:.1} ms{}",
            language.name(),
            start.elapsed().as_secs_f64() * 1e3,
            if compiled { "" } else { " (FAILED)" }
        );
    }
}

/// For profilers: analyze only, once.
fn analyze_only(files: &[File], options: &AnalyzeOptions) {
    let start = Instant::now();
    let mut symbols = 0usize;
    for (path, language, text) in files {
        symbols += analyze(path, *language, text, options).symbols.len();
    }
    println!(
        "analyze only: {:.3} s ({symbols} symbols)",
        start.elapsed().as_secs_f64()
    );
}

/// For profilers: bare parse only, once.
fn parse_only(files: &[File]) {
    let mut parser = tree_sitter::Parser::new();
    let start = Instant::now();
    for (_, language, text) in files {
        parser
            .set_language(&language.grammar())
            .expect("grammar loads");
        drop(parser.parse(text, None));
    }
    println!("parse only: {:.3} s", start.elapsed().as_secs_f64());
}

/// The best of the rounds of bare parse and analyze, and what the last round found.
#[derive(Default)]
struct Rounds {
    parse_time: Duration,
    analyze_time: Duration,
    nodes: usize,
    /// Symbols, references, imports, files with syntax errors or degraded.
    totals: (usize, usize, usize, usize),
    /// Symbols whose body the walk did not reach (depth limit).
    unreached: usize,
}

/// Parse and analyze alternate file by file, so that load from other processes on the
/// machine weighs on both alike; each round sums both, the best round is reported.
fn alternate_rounds(files: &[File], options: &AnalyzeOptions, rounds: usize) -> Rounds {
    let mut parsers: Vec<Option<tree_sitter::Parser>> =
        Language::ALL.iter().map(|_| None).collect();
    let mut best_round: Option<(Duration, Duration)> = None;
    let mut out = Rounds::default();
    let empty_body = loci_core::fingerprint::short_hash(b"");
    for _ in 0..rounds {
        let (mut parse_sum, mut analyze_sum) = (Duration::ZERO, Duration::ZERO);
        out.nodes = 0;
        out.totals = (0, 0, 0, 0);
        out.unreached = 0;
        for (path, language, text) in files {
            let parser = parsers[*language as usize].get_or_insert_with(|| {
                let mut p = tree_sitter::Parser::new();
                p.set_language(&language.grammar()).expect("grammar loads");
                p
            });
            let start = Instant::now();
            if let Some(tree) = parser.parse(text, None) {
                out.nodes += tree.root_node().descendant_count();
            }
            let middle = Instant::now();
            let analysis = analyze(path, *language, text, options);
            let end = Instant::now();
            parse_sum += middle - start;
            analyze_sum += end - middle;
            out.totals.0 += analysis.symbols.len();
            out.unreached += analysis
                .symbols
                .iter()
                .filter(|s| s.body_fingerprint == empty_body)
                .count();
            out.totals.1 += analysis.refs.len();
            out.totals.2 += analysis.imports.len();
            out.totals.3 += usize::from(analysis.degraded.is_some() || analysis.error_nodes > 0);
        }
        if best_round.is_none_or(|(p, a)| parse_sum + analyze_sum < p + a) {
            best_round = Some((parse_sum, analyze_sum));
        }
    }
    (out.parse_time, out.analyze_time) = best_round.unwrap_or_default();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: parse_bench <dir> [ext] [rounds]");
        std::process::exit(2);
    };
    let ext = args.get(2).map_or("py", String::as_str);
    let rounds: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let files = read_files(dir, ext);
    let bytes: usize = files.iter().map(|(_, _, t)| t.len()).sum();
    let lines: usize = files.iter().map(|(_, _, t)| t.lines().count()).sum();
    println!(
        "{} files, {} lines, {:.1} MB",
        files.len(),
        lines,
        bytes as f64 / 1e6
    );

    let options = AnalyzeOptions::default();
    compile_queries(&files);
    if std::env::var_os("BENCH_ANALYZE_ONLY").is_some() {
        analyze_only(&files, &options);
        return;
    }
    if std::env::var_os("BENCH_PARSE_ONLY").is_some() {
        parse_only(&files);
        return;
    }
    let Rounds {
        parse_time,
        analyze_time,
        nodes,
        totals,
        unreached,
    } = alternate_rounds(&files, &options, rounds);
    // The split: loci's parse (with the timeout callback), then extract alone.
    let trees: Vec<_> = files
        .iter()
        .map(|(_, language, text)| parse(*language, text, None, &options).0)
        .collect();
    let (extract_time, _) = best(rounds, || {
        let mut symbols = 0usize;
        for ((path, language, text), tree) in files.iter().zip(&trees) {
            if let Some(tree) = tree {
                symbols += extract(path, *language, text, tree, &options).symbols.len();
            }
        }
        symbols
    });
    println!(
        "(a) parse only:   {:>8.3} s  ({} nodes)",
        parse_time.as_secs_f64(),
        nodes
    );
    println!(
        "(b) full analyze: {:>8.3} s  = {:.3}x parse  (extract alone {:.3} s)",
        analyze_time.as_secs_f64(),
        analyze_time.as_secs_f64() / parse_time.as_secs_f64(),
        extract_time.as_secs_f64()
    );
    println!(
        "totals: {} symbols, {} refs, {} imports; {} files with syntax errors or degraded; \
         {unreached} symbols whose body the walk did not reach (depth limit)",
        totals.0, totals.1, totals.2, totals.3
    );
}

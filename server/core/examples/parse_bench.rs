//! Single-threaded benchmark of analysis against a bare tree-sitter parse.
//!
//! Usage: `cargo run --release -p loci-core --example parse_bench -- <dir> [ext] [rounds]`
//! (`ext` defaults to `py`, `rounds` to 3). Reads every `*.<ext>` file under `<dir>` into
//! memory (skipping `site-packages` and `__pycache__` directories), then reports, as the best of `rounds` runs:
//!
//! - (a) parse only: `tree_sitter::Parser::parse` with no options, tree dropped;
//! - (b) full analyze: [`loci_core::analyze`] (parse with the timeout callback, query,
//!   walk, fingerprints, imports), plus its split into `parse` and `extract`;
//!
//! and the totals of symbols, references and imports found.

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: parse_bench <dir> [ext] [rounds]");
        std::process::exit(2);
    };
    let ext = args.get(2).map_or("py", String::as_str);
    let rounds: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let mut paths = Vec::new();
    collect(Path::new(dir), ext, &mut paths);
    let files: Vec<(String, Language, String)> = paths
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
        .collect();
    let bytes: usize = files.iter().map(|(_, _, t)| t.len()).sum();
    let lines: usize = files.iter().map(|(_, _, t)| t.lines().count()).sum();
    println!(
        "{} files, {} lines, {:.1} MB",
        files.len(),
        lines,
        bytes as f64 / 1e6
    );

    let options = AnalyzeOptions::default();
    if std::env::var_os("BENCH_ANALYZE_ONLY").is_some() {
        // For profilers: analyze only.
        let start = Instant::now();
        let mut symbols = 0usize;
        for (path, language, text) in &files {
            symbols += analyze(path, *language, text, &options).symbols.len();
        }
        println!(
            "analyze only: {:.3} s ({symbols} symbols)",
            start.elapsed().as_secs_f64()
        );
        return;
    }
    if std::env::var_os("BENCH_PARSE_ONLY").is_some() {
        // For profilers: bare parse only.
        let mut parser = tree_sitter::Parser::new();
        let start = Instant::now();
        for (_, language, text) in &files {
            parser
                .set_language(&language.grammar())
                .expect("grammar loads");
            drop(parser.parse(text, None));
        }
        println!("parse only: {:.3} s", start.elapsed().as_secs_f64());
        return;
    }
    if std::env::var_os("BENCH_PARSE_COMPARE").is_some() {
        // Bare parse vs loci's parse (progress callback), alternating per file.
        let mut parser = tree_sitter::Parser::new();
        let (mut bare, mut ours) = (Duration::ZERO, Duration::ZERO);
        for (_, language, text) in &files {
            parser
                .set_language(&language.grammar())
                .expect("grammar loads");
            let t0 = Instant::now();
            drop(parser.parse(text, None));
            let t1 = Instant::now();
            drop(parse(*language, text, None, &options));
            let t2 = Instant::now();
            bare += t1 - t0;
            ours += t2 - t1;
        }
        println!(
            "bare parse {:.3} s, loci parse {:.3} s",
            bare.as_secs_f64(),
            ours.as_secs_f64()
        );
        return;
    }
    // Parse and analyze alternate file by file, so that load from other processes on the
    // machine weighs on both alike; each round sums both, the best round is reported.
    let mut parsers: Vec<Option<tree_sitter::Parser>> =
        Language::ALL.iter().map(|_| None).collect();
    let mut best_round: Option<(Duration, Duration)> = None;
    let mut nodes = 0usize;
    let mut totals = (0usize, 0usize, 0usize, 0usize);
    for _ in 0..rounds {
        let (mut parse_sum, mut analyze_sum) = (Duration::ZERO, Duration::ZERO);
        nodes = 0;
        totals = (0, 0, 0, 0);
        for (path, language, text) in &files {
            let parser = parsers[*language as usize].get_or_insert_with(|| {
                let mut p = tree_sitter::Parser::new();
                p.set_language(&language.grammar()).expect("grammar loads");
                p
            });
            let start = Instant::now();
            if let Some(tree) = parser.parse(text, None) {
                nodes += tree.root_node().descendant_count();
            }
            let middle = Instant::now();
            let analysis = analyze(path, *language, text, &options);
            let end = Instant::now();
            parse_sum += middle - start;
            analyze_sum += end - middle;
            totals.0 += analysis.symbols.len();
            totals.1 += analysis.refs.len();
            totals.2 += analysis.imports.len();
            totals.3 += usize::from(analysis.degraded.is_some() || analysis.error_nodes > 0);
        }
        if best_round.is_none_or(|(p, a)| parse_sum + analyze_sum < p + a) {
            best_round = Some((parse_sum, analyze_sum));
        }
    }
    let (parse_time, analyze_time) = best_round.unwrap_or_default();
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
    if std::env::var_os("BENCH_DETAIL").is_some() {
        use tree_sitter::StreamingIterator;
        let (query_time, matches) = best(rounds, || {
            let mut cursor = tree_sitter::QueryCursor::new();
            let mut n = 0usize;
            for ((_, language, text), tree) in files.iter().zip(&trees) {
                let (Some(tree), Ok(query)) = (tree, language.query()) else {
                    continue;
                };
                let mut it = cursor.matches(query, tree.root_node(), text.as_bytes());
                while it.next().is_some() {
                    n += 1;
                }
            }
            n
        });
        let (walk_time, visited) = best(rounds, || {
            let mut n = 0usize;
            for tree in trees.iter().flatten() {
                let mut cursor = tree.walk();
                'walk: loop {
                    n += cursor.node().kind_id() as usize & 1;
                    if cursor.goto_first_child() {
                        continue;
                    }
                    while !cursor.goto_next_sibling() {
                        if !cursor.goto_parent() {
                            break 'walk;
                        }
                    }
                }
            }
            n
        });
        // The same, per file right after its parse (trees hot in cache, as in `analyze`).
        let mut cursor = tree_sitter::QueryCursor::new();
        let (mut tp, mut tq, mut tw, mut te) = (
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
        );
        let mut tw2 = Duration::ZERO;
        for (path, language, text) in &files {
            let t0 = Instant::now();
            let Some(tree) = parse(*language, text, None, &options).0 else {
                continue;
            };
            let t1 = Instant::now();
            let mut it = cursor.matches(
                language.query().expect("query"),
                tree.root_node(),
                text.as_bytes(),
            );
            while it.next().is_some() {}
            let t2 = Instant::now();
            let mut c = tree.walk();
            'walk: loop {
                std::hint::black_box(c.node().kind_id());
                if c.goto_first_child() {
                    continue;
                }
                while !c.goto_next_sibling() {
                    if !c.goto_parent() {
                        break 'walk;
                    }
                }
            }
            let t3 = Instant::now();
            let mut c = tree.walk();
            'walk2: loop {
                std::hint::black_box(c.node().kind_id());
                if c.goto_first_child() {
                    continue;
                }
                while !c.goto_next_sibling() {
                    if !c.goto_parent() {
                        break 'walk2;
                    }
                }
            }
            let t3b = Instant::now();
            tw2 += t3b - t3;
            let t3 = Instant::now();
            std::hint::black_box(extract(path, *language, text, &tree, &options));
            let t4 = Instant::now();
            tp += t1 - t0;
            tq += t2 - t1;
            tw += t3 - t2;
            te += t4 - t3;
        }
        println!(
            "    hot: parse {:.3} s, query {:.3} s, bare walk {:.3} s (again {:.3} s), extract {:.3} s",
            tp.as_secs_f64(),
            tq.as_secs_f64(),
            tw.as_secs_f64(),
            tw2.as_secs_f64(),
            te.as_secs_f64()
        );
        println!(
            "    query alone:  {:>8.3} s  ({matches} matches)",
            query_time.as_secs_f64()
        );
        println!(
            "    bare walk:    {:>8.3} s  ({visited})",
            walk_time.as_secs_f64()
        );
    }
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
        "totals: {} symbols, {} refs, {} imports; {} files with syntax errors or degraded",
        totals.0, totals.1, totals.2, totals.3
    );
}

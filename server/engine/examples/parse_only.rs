//! The benchmark reference for `loci scan`: walk the tree the same way, read every file
//! loci would parse and run a bare tree-sitter parse on the same number of threads — no
//! extraction, no database. `loci scan` is measured against this (bench/scan_bench.py).
//!
//! Usage: `parse_only DIR [THREADS]` (THREADS 0 = one per core). Prints
//! `files=N bytes=B ms=T`.

use std::time::Instant;

use loci_core::{AnalyzeOptions, Language};
use rayon::prelude::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: parse_only DIR [THREADS]");
        std::process::exit(2);
    };
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(0);
    let started = Instant::now();
    let root = std::path::Path::new(&dir);
    let walked = loci_engine::map::walk(root, 2 << 20, u64::MAX, threads, &Default::default());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(16 << 20)
        .build()
        .expect("thread pool");
    let options = AnalyzeOptions::default();
    let (files, bytes) = pool.install(|| {
        walked
            .files
            .par_iter()
            .filter_map(|f| {
                let lang = Language::from_path(&f.path)?;
                let bytes = std::fs::read(&f.abs).ok()?;
                let text = String::from_utf8_lossy(&bytes);
                let (tree, _) = loci_core::analyze::parse(lang, &text, None, &options);
                drop(tree);
                Some(bytes.len())
            })
            .fold(|| (0usize, 0usize), |(n, b), len| (n + 1, b + len))
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    use std::io::Write;
    let _ = writeln!(
        std::io::stdout(),
        "files={files} bytes={bytes} ms={}",
        started.elapsed().as_millis()
    );
}

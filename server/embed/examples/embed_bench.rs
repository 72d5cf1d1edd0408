//! Benchmark of loci-embed on real code: model load time, throughput at several batch sizes,
//! the latency of one short query, and peak memory.
//!
//! `cargo run --release -p loci-embed --example embed_bench -- [MODEL_DIR] [PY_DIR] [N] [THREADS]`
//!
//! MODEL_DIR defaults to `target/ci/models/all-MiniLM-L6-v2` (from `.ci/setup`), PY_DIR to the
//! Python standard library (asked of `python3`), N to 2,000: the texts are the first N
//! function definitions (`def` line and indented body) of PY_DIR's `.py` files in path order,
//! each truncated by the embedder to its 256 word pieces; THREADS (default 1) is
//! `Embedder::set_threads`. Numbers go to stdout, with CPU time beside wall time: on a shared
//! machine the wall time depends on the neighbours.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loci_embed::Embedder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let model = args.next().map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci/models/all-MiniLM-L6-v2")
    });
    let py_dir = match args.next() {
        Some(d) => PathBuf::from(d),
        None => python_stdlib()?,
    };
    let n: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2000);
    let threads: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);

    // Load: the first load may read from disk; the rest from the page cache, as a CLI process
    // started again and again does.
    let mut loads = Vec::new();
    let mut embedder = None;
    let mut rss_after_load = 0.0;
    for _ in 0..5 {
        let t = Instant::now();
        let e = Embedder::load(&model)?;
        loads.push(t.elapsed());
        if embedder.is_none() {
            rss_after_load = peak_rss_mib();
        }
        embedder = Some(e);
    }
    let mut embedder = embedder.expect("loaded five times");
    embedder.set_threads(threads)?;
    println!(
        "model          {} ({} dimensions)",
        embedder.model_id(),
        embedder.dim()
    );
    println!("threads        {}", embedder.threads());
    println!(
        "load           first {:.1} ms, then median {:.1} ms (of 4)",
        ms(loads[0]),
        ms(median(&mut loads[1..].to_vec()))
    );

    let texts = function_texts(&py_dir, n)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "corpus         {} function definitions from {} ({:.0} bytes mean)",
        texts.len(),
        py_dir.display(),
        bytes as f64 / texts.len() as f64
    );

    for batch in [1, 8, 16, 32] {
        embedder.set_batch_size(batch)?;
        reset_peak_rss();
        let cpu = cpu_seconds();
        let t = Instant::now();
        let vectors = embedder.embed(&refs)?;
        let took = t.elapsed();
        let cpu = cpu_seconds() - cpu;
        assert_eq!(vectors.len(), refs.len());
        println!(
            "batch {batch:>2}       {:.1} texts/s ({:.1} s for {}; {:.1} CPU s, {:.1} texts per CPU s; peak RSS {:.0} MiB)",
            refs.len() as f64 / took.as_secs_f64(),
            took.as_secs_f64(),
            refs.len(),
            cpu,
            refs.len() as f64 / cpu,
            peak_rss_mib()
        );
    }

    let query = "escape a string for use in a POSIX shell";
    embedder.set_batch_size(16)?;
    reset_peak_rss();
    embedder.embed(&[query])?; // warm
    let mut times = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        embedder.embed(&[query])?;
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "query          p50 {:.2} ms, p95 {:.2} ms (200 runs of {query:?}; peak RSS {:.0} MiB)",
        ms(times[times.len() / 2]),
        ms(times[times.len() * 95 / 100]),
        peak_rss_mib()
    );
    println!("peak RSS       {rss_after_load:.0} MiB after one load");
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// User plus system CPU time of this process so far, all threads, in seconds (Linux's
/// /proc/self/stat counts it in clock ticks of 1/100 s; 0 where there is no /proc). Wall
/// time on a shared machine depends on the neighbours; CPU time much less.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Resets VmHWM to the current RSS (Linux: "5" to /proc/self/clear_refs; elsewhere nothing).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// VmHWM from /proc/self/status, in MiB (0 where there is no /proc).
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

fn python_stdlib() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()?;
    Ok(PathBuf::from(String::from_utf8(out.stdout)?.trim()))
}

/// The first `n` function definitions of the `.py` files under `dir`, walked in path order:
/// each `def` line with the lines after it that are blank or indented deeper.
fn function_texts(dir: &Path, n: usize) -> std::io::Result<Vec<String>> {
    let mut files = Vec::new();
    collect_py(dir, &mut files)?;
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let Ok(source) = std::fs::read_to_string(&file) else {
            continue; // not UTF-8
        };
        let lines: Vec<&str> = source.lines().collect();
        let mut i = 0;
        while i < lines.len() && out.len() < n {
            let line = lines[i];
            let indent = line.len() - line.trim_start().len();
            if line.trim_start().starts_with("def ") {
                let mut end = i + 1;
                while end < lines.len() {
                    let l = lines[end];
                    if !l.trim().is_empty() && l.len() - l.trim_start().len() <= indent {
                        break;
                    }
                    end += 1;
                }
                out.push(lines[i..end].join("\n"));
                i = end;
            } else {
                i += 1;
            }
        }
        if out.len() >= n {
            break;
        }
    }
    Ok(out)
}

fn collect_py(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n != "site-packages" && n != "__pycache__")
            {
                collect_py(&path, files)?;
            }
        } else if path.extension().is_some_and(|e| e == "py") {
            files.push(path);
        }
    }
    Ok(())
}

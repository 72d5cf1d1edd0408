//! Benchmark of `loci scan --scip` on a real crate (docs/benchmarks.md, "Precise references
//! from a SCIP index"): scans ROOT into a fresh store, answers `callers` of each SYMBOL,
//! imports the SCIP index, answers them again, and prints the times and counts.
//!
//! `cargo run --release -p loci-engine --example scip_bench -- ROOT INDEX [SYMBOL ...]`
//! (`SCIP_BENCH_DB=FILE` keeps the store there; it must not exist yet).

#![allow(clippy::print_stdout)] // a benchmark prints its figures

use std::time::Instant;

use loci_engine::Workspace;
use loci_engine::map::{MAX_INDEX_BYTES, MIN_CONFIDENCE};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: scip_bench ROOT INDEX [SYMBOL ...]";
    let root = std::path::PathBuf::from(args.next().ok_or(usage)?);
    let index = std::path::PathBuf::from(args.next().ok_or(usage)?);
    let symbols: Vec<String> = args.collect();
    let store = tempfile::tempdir()?;
    // `SCIP_BENCH_DB=path` keeps the store for a look afterwards.
    let db = std::env::var_os("SCIP_BENCH_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| store.path().join("loci.db"));
    let mut ws = Workspace::open(&root, Some(&db))?;
    let t = Instant::now();
    let scan = ws.scan(&|_| {})?.result;
    println!(
        "scan: {} files, {} symbols, {} refs in {:.2}s",
        scan.totals.files,
        scan.totals.symbols,
        scan.totals.refs,
        t.elapsed().as_secs_f64()
    );
    let callers =
        |ws: &Workspace, s: &str| -> Result<(u64, u64, u64), Box<dyn std::error::Error>> {
            let c = ws.callers_with(s, 0, MIN_CONFIDENCE, true)?.result;
            let scip = c
                .calls
                .iter()
                .filter(|r| r.source.as_deref() == Some("scip"))
                .count() as u64;
            Ok((c.calls.len() as u64, scip, c.weaker))
        };
    let touch = std::env::var_os("SCIP_BENCH_TOUCH").map(|t| root.join(t));
    if let Some(path) = &touch {
        println!(
            "rescan (one file changed, no scip): {:.3}s",
            touched_rescan(&mut ws, path)?
        );
    }
    let before: Vec<_> = symbols
        .iter()
        .map(|s| callers(&ws, s))
        .collect::<Result<_, _>>()?;
    let t = Instant::now();
    let r = ws.import_scip(&index, MAX_INDEX_BYTES)?.result;
    let import = t.elapsed().as_secs_f64();
    println!(
        "import: {import:.2}s ({} bytes)",
        std::fs::metadata(&index)?.len()
    );
    loci_engine::text::scip_import(&mut std::io::stdout(), &r)?;
    for (s, (calls, _, weaker)) in symbols.iter().zip(&before) {
        let (after, scip, after_weaker) = callers(&ws, s)?;
        println!(
            "callers {s}: before {calls} listed (+{weaker} weaker), after {after} listed \
             ({scip} stated by scip, +{after_weaker} weaker)"
        );
    }
    // A rescan with nothing changed, then one with one file touched.
    let t = Instant::now();
    let again = ws.scan(&|_| {})?.result;
    println!(
        "rescan (nothing changed): {:.3}s, scip coverage reported: {}",
        t.elapsed().as_secs_f64(),
        again.scip.is_some()
    );
    // `SCIP_BENCH_TOUCH=PATH` (repo-relative): a rescan after a comment is appended to that
    // file, before and after the import; the file and its mtime are restored afterwards.
    if let Some(path) = &touch {
        let took = touched_rescan(&mut ws, path)?;
        let c = ws.scan(&|_| {})?.result.scip.unwrap_or_default();
        println!(
            "rescan (one file changed, with scip): {took:.3}s: coverage after it and the \
             restore: {} files, {} edges, {} dropped",
            c.files,
            c.edges,
            c.dropped.len()
        );
    }
    Ok(())
}

/// Appends a comment to `path`, rescans, restores the file with its mtime, and returns the
/// rescan's seconds.
fn touched_rescan(
    ws: &mut Workspace,
    path: &std::path::Path,
) -> Result<f64, Box<dyn std::error::Error>> {
    let text = std::fs::read(path)?;
    let modified = std::fs::metadata(path)?.modified()?;
    let mut changed = text.clone();
    changed.extend_from_slice(b"\n// touched by scip_bench\n");
    std::fs::write(path, &changed)?;
    let t = Instant::now();
    let scanned = ws.scan(&|_| {});
    let took = t.elapsed().as_secs_f64();
    std::fs::write(path, &text)?;
    std::fs::File::options()
        .write(true)
        .open(path)?
        .set_modified(modified)?;
    scanned?;
    Ok(took)
}

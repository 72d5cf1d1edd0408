//! Prints, for each file given, its language and how many symbols, imports and references
//! loci's analysis finds in it: the figures of the language coverage table in
//! `docs/languages.md`. A directory is walked instead, and what every file of a parsed
//! language gives is totalled with the analysis's wall time (the per-file cost of the
//! language registry, `docs/benchmarks.md`, "Languages").
//!
//! Run: `cargo run -p loci-core --example coverage -- FILE_OR_DIR...`.

use std::path::Path;
use std::time::Instant;

use loci_core::{AnalyzeOptions, Language, analyze};

fn main() {
    let mut out = String::new();
    for arg in std::env::args().skip(1) {
        if Path::new(&arg).is_dir() {
            out.push_str(&walk_total(Path::new(&arg)));
            continue;
        }
        let Some(language) = Language::from_path(&arg) else {
            out.push_str(&format!("{arg}: not a parsed language\n"));
            continue;
        };
        let text = match std::fs::read_to_string(&arg) {
            Ok(text) => text,
            Err(e) => {
                out.push_str(&format!("{arg}: cannot read: {e}\n"));
                continue;
            }
        };
        let analysis = analyze(&arg, language, &text, &AnalyzeOptions::default());
        out.push_str(&format!(
            "{}\t{}\tlines={}\tsymbols={}\timports={}\trefs={}\terrors={}\n",
            language.name(),
            arg,
            text.lines().count(),
            analysis.symbols.len(),
            analysis.imports.len(),
            analysis.refs.len(),
            analysis.error_nodes
        ));
    }
    eprint!("{out}");
}

/// Analyses every file under `root` whose language loci parses (UTF-8 text only) and
/// returns one line of totals with the wall time of reading and analysing them.
fn walk_total(root: &Path) -> String {
    let mut stack = vec![root.to_path_buf()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Some(language) = Language::from_path(&path.to_string_lossy()) {
                files.push((path, language));
            }
        }
    }
    files.sort();
    let start = Instant::now();
    let (mut analysed, mut symbols, mut refs) = (0usize, 0usize, 0usize);
    for (path, language) in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let analysis = analyze(
            &path.to_string_lossy(),
            *language,
            &text,
            &AnalyzeOptions::default(),
        );
        analysed += 1;
        symbols += analysis.symbols.len();
        refs += analysis.refs.len();
    }
    format!(
        "{}\tfiles={analysed}\tsymbols={symbols}\trefs={refs}\tseconds={:.2}\n",
        root.display(),
        start.elapsed().as_secs_f64()
    )
}

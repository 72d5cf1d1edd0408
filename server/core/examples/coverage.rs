//! Prints, for each file given, its language and how many symbols, imports and references
//! loci's analysis finds in it: the figures of the language coverage table in
//! `docs/languages.md`. Run: `cargo run -p loci-core --example coverage -- FILE...`.

use loci_core::{AnalyzeOptions, Language, analyze};

fn main() {
    let mut out = String::new();
    for path in std::env::args().skip(1) {
        let Some(language) = Language::from_path(&path) else {
            out.push_str(&format!("{path}: not a parsed language\n"));
            continue;
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                out.push_str(&format!("{path}: cannot read: {e}\n"));
                continue;
            }
        };
        let analysis = analyze(&path, language, &text, &AnalyzeOptions::default());
        out.push_str(&format!(
            "{}\t{}\tlines={}\tsymbols={}\timports={}\trefs={}\terrors={}\n",
            language.name(),
            path,
            text.lines().count(),
            analysis.symbols.len(),
            analysis.imports.len(),
            analysis.refs.len(),
            analysis.error_nodes
        ));
    }
    eprint!("{out}");
}

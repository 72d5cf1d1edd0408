//! Code chunks: the units of a file's text that the code-text index holds.
//!
//! Every line of a source file belongs to the innermost definition whose span holds it,
//! or to the file's module-level code when none does. A chunk is a run of consecutive
//! lines of one owner (a class's header and docstring; each method is its own chunk), at
//! most [`CHUNK_LINES`] lines; runs without a word (a lone `}`) are left out. Bodies, comments,
//! docstrings and string literals are all in it: an error message quoted in a question
//! finds the function that raises it, a "how" question the comments that explain it.
//!
//! Why windows: FTS5's BM25 normalises by length (b = 0.75, fixed), so a 150-line function
//! holding the question's rarest words ranks below short ones holding its common words
//! (`shlex.read_token` and "No closing quotation"). Runs of equal size keep the ranks
//! comparable.

use crate::Symbol;

/// The most lines one chunk holds; an owner with more lines is cut into several chunks.
/// 100 keeps all but the longest functions whole: on both development sets (docs/
/// benchmarks.md, "Retrieval") windows of 75–100 lines ranked best, 25 and 150–250
/// worse, 50 in between.
pub const CHUNK_LINES: usize = 100;

/// One chunk of a file's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeChunk {
    /// Index into the file's symbols of the definition whose lines these are; `None` for
    /// module-level code.
    pub symbol: Option<usize>,
    /// Zero-based first line.
    pub start_line: u32,
    /// Zero-based last line (inclusive).
    pub end_line: u32,
    /// The lines `start_line..=end_line`, joined with `\n`.
    pub text: String,
}

/// The chunks of `text`, whose definitions are `symbols` (as [`crate::analyze`] found
/// them): module-level code first, then each definition's in the order of `symbols`;
/// chunks without a word are left out.
pub fn code_chunks(text: &str, symbols: &[Symbol]) -> Vec<CodeChunk> {
    let lines: Vec<&str> = text.lines().collect();
    // The owner of each line: the innermost definition holding it. Symbols come in source
    // order with parents before children, so a later span that holds the line is inner
    // (a sibling starting on the same line as the previous one's end takes that line).
    let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
    let mut order: Vec<usize> = (0..symbols.len()).collect();
    order.sort_by_key(|&i| {
        (
            symbols[i].span.line,
            std::cmp::Reverse(symbols[i].span.end_line),
        )
    });
    for &i in &order {
        let span = &symbols[i].span;
        let last = (span.end_line as usize).min(lines.len().saturating_sub(1));
        for slot in owner.iter_mut().take(last + 1).skip(span.line as usize) {
            *slot = Some(i);
        }
    }
    // The comments, attributes and decorators right above a definition are its own (a
    // Rust or JSDoc doc comment, `#[derive]`, `@property` sit outside the node's span).
    for &i in &order {
        let start = symbols[i].span.line as usize;
        let outer = owner.get(start).copied().flatten();
        let parent = symbols[i].parent.map(|p| p as usize);
        let mut line = start;
        while line > 0 {
            let above = lines[line - 1].trim_start();
            let prefix = ["///", "//!", "//", "/*", "*", "#[", "#!", "@", "--", "#"]
                .iter()
                .any(|p| above.starts_with(p));
            if above.is_empty() || !prefix || owner[line - 1] != parent || outer != Some(i) {
                break;
            }
            owner[line - 1] = Some(i);
            line -= 1;
        }
    }
    let mut by_owner: Vec<Vec<usize>> = vec![Vec::new(); symbols.len() + 1];
    for (line, o) in owner.iter().enumerate() {
        by_owner[o.map_or(0, |i| i + 1)].push(line);
    }
    let mut chunks = Vec::new();
    for (slot, owned) in by_owner.iter().enumerate() {
        // Contiguous lines only: a chunk's span is exactly its lines (module-level code
        // between two `impl` blocks is not one chunk of lines 126–645).
        let contiguous = owned.chunk_by(|a, b| b - a == 1);
        for run in contiguous.flat_map(|run| run.chunks(CHUNK_LINES)) {
            if !run
                .iter()
                .any(|&l| lines[l].chars().any(char::is_alphanumeric))
            {
                continue;
            }
            let text: Vec<&str> = run.iter().map(|&l| lines[l]).collect();
            chunks.push(CodeChunk {
                symbol: slot.checked_sub(1),
                start_line: run[0] as u32,
                end_line: run[run.len() - 1] as u32,
                text: text.join("\n"),
            });
        }
    }
    chunks
}

/// The text of a chunk as an embedding model sees it: its path, its definition's
/// qualified name (empty for module-level code) and its lines.
pub fn embed_text(path: &str, name: &str, body: &str) -> String {
    if name.is_empty() {
        format!("{path}\n{body}")
    } else {
        format!("{path} {name}\n{body}")
    }
}

/// The key of a chunk's vector: the content hash of its [`embed_text`]. A chunk whose
/// text is unchanged keeps its vector when its file is rewritten.
pub fn embed_hash(path: &str, name: &str, body: &str) -> String {
    crate::fingerprint::content_hash(embed_text(path, name, body).as_bytes())
}

/// The words of a repo-relative path as the code-text index holds them: every segment's
/// identifier words, and their joined form when there are several, without the file's
/// extension (`json/encoder.py` → `json encoder`; `clap_builder/src/mkeymap.rs` →
/// `clapbuilder clap builder src mkeymap`), as [`crate::terms`] indexes identifiers.
pub fn path_words(path: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for segment in path.split('/') {
        let stem = segment.rsplit_once('.').map_or(segment, |(s, _)| s);
        if stem.is_empty() {
            continue;
        }
        let words = crate::terms::identifier_words(stem);
        if words.len() > 1 {
            out.push(words.concat());
        }
        out.extend(words);
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AnalyzeOptions, Language, analyze};

    fn chunks_of(path: &str, text: &str) -> Vec<(Option<String>, u32, u32, String)> {
        let lang = Language::from_path(path).expect("a mapped language");
        let a = analyze(path, lang, text, &AnalyzeOptions::default());
        code_chunks(text, &a.symbols)
            .into_iter()
            .map(|c| {
                (
                    c.symbol.map(|i| a.symbols[i].qualified_name.clone()),
                    c.start_line,
                    c.end_line,
                    c.text,
                )
            })
            .collect()
    }

    #[test]
    fn python_definitions_own_their_lines_and_module_code_is_its_own_chunk() {
        let text = "import os\n\nclass Lexer:\n    \"\"\"Splits shell-like text.\"\"\"\n    quotes = '\"'\n\n    def read(self):\n        raise ValueError(\"No closing quotation\")\n\nDEBUG = 0\n";
        assert_eq!(
            chunks_of("shlex.py", text),
            vec![
                (None, 0, 1, "import os\n".into()),
                (
                    Some("Lexer".into()),
                    2,
                    5,
                    "class Lexer:\n    \"\"\"Splits shell-like text.\"\"\"\n    quotes = '\"'\n"
                        .into()
                ),
                (
                    Some("Lexer.read".into()),
                    6,
                    7,
                    "    def read(self):\n        raise ValueError(\"No closing quotation\")"
                        .into()
                ),
                (Some("DEBUG".into()), 9, 9, "DEBUG = 0".into()),
            ]
        );
    }

    #[test]
    fn rust_items_and_impl_methods_are_chunks_with_the_comments_above_them() {
        let text = "//! Dates.\nuse std::fmt;\n\n/// A cached header.\npub struct Date { at: u64 }\n\nimpl Date {\n    // Re-render once a second.\n    fn update(&mut self) { self.at += 1; }\n}\n";
        let got: Vec<(Option<String>, u32, u32)> = chunks_of("date.rs", text)
            .into_iter()
            .map(|(s, a, b, _)| (s, a, b))
            .collect();
        assert_eq!(
            got,
            // `impl Date` is no definition: its lines are module-level code, and its closing
            // `}` (no word) no chunk. A definition's comments above it are its own.
            vec![
                (None, 0, 2),
                (None, 5, 6),
                (Some("Date".into()), 3, 4),
                (Some("Date.update".into()), 7, 8),
            ]
        );
    }

    #[test]
    fn javascript_functions_and_long_bodies_are_cut_into_windows() {
        let mut text = String::from("function big() {\n");
        for i in 0..220 {
            text.push_str(&format!("  step{i}();\n"));
        }
        text.push_str("}\nconst x = 1;\n");
        let got: Vec<(Option<String>, u32, u32)> = chunks_of("big.js", &text)
            .into_iter()
            .map(|(s, a, b, _)| (s, a, b))
            .collect();
        assert_eq!(
            got,
            vec![
                (None, 222, 222),
                (Some("big".into()), 0, 99),
                (Some("big".into()), 100, 199),
                (Some("big".into()), 200, 221),
            ]
        );
    }

    #[test]
    fn path_words_split_segments_and_drop_extensions() {
        assert_eq!(path_words("json/encoder.py"), "json encoder");
        assert_eq!(
            path_words("clap_builder/src/mkeymap.rs"),
            "clapbuilder clap builder src mkeymap"
        );
        assert_eq!(
            path_words("src/HttpClient.ts"),
            "src httpclient http client"
        );
    }

    /// A chunk's span is exactly its lines: the module-level lines of a file are not one
    /// chunk whatever lies between them (rayon-core's `registry.rs` would have a
    /// module-level chunk "lines 126–645", the `impl` headers and closing braces around
    /// every method, and the answer would serve lines 126–165 for it).
    #[test]
    fn fault_module_level_code_around_definitions_was_one_chunk_spanning_them() {
        let methods = (0..30)
            .map(|i| format!("    fn m{i}(&self) -> u32 {{\n        {i}\n    }}\n"))
            .collect::<String>();
        let text = format!(
            "use std::sync::Mutex;\n\npub struct Registry {{ jobs: Mutex<u32> }}\n\nimpl Registry {{\n{methods}}}\n\nimpl Drop for Registry {{\n    fn drop(&mut self) {{}}\n}}\n"
        );
        let chunks = chunks_of("registry.rs", &text);
        for (owner, start, end, body) in &chunks {
            assert_eq!(
                body.split('\n').count() as u32,
                end - start + 1,
                "{owner:?} {start}..={end}: {body:?}"
            );
        }
        let module: Vec<(u32, u32)> = chunks
            .iter()
            .filter(|c| c.0.is_none())
            .map(|c| (c.1, c.2))
            .collect();
        assert_eq!(module, vec![(0, 1), (3, 4), (95, 97)]);
    }
}

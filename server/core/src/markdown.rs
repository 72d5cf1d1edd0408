//! Markdown split into sections for search: one chunk per heading (outside fenced code),
//! long sections cut at blank lines to at most [`MAX_CHUNK_BYTES`].

use serde::{Deserialize, Serialize};

/// Largest chunk, in bytes (about 500 tokens).
pub const MAX_CHUNK_BYTES: usize = 2_000;

/// One searchable section of a markdown document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The nearest heading above (without `#`), or `""` before the first heading.
    pub heading: String,
    /// Zero-based first line.
    pub line: u32,
    /// Zero-based last line.
    pub end_line: u32,
    /// The text, heading line included.
    pub text: String,
}

/// Splits `text` into chunks, in document order; empty sections are dropped.
pub fn chunks(text: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut current = Chunk {
        heading: String::new(),
        line: 0,
        end_line: 0,
        text: String::new(),
    };
    let mut in_fence = false;
    let flush = |c: &mut Chunk, out: &mut Vec<Chunk>, next_line: u32, heading: &str| {
        if !c.text.trim().is_empty() {
            out.push(std::mem::replace(
                c,
                Chunk {
                    heading: heading.to_string(),
                    line: next_line,
                    end_line: next_line,
                    text: String::new(),
                },
            ));
        } else {
            *c = Chunk {
                heading: heading.to_string(),
                line: next_line,
                end_line: next_line,
                text: String::new(),
            };
        }
    };
    for (i, line) in (0u32..).zip(text.lines()) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        let is_heading = !in_fence
            && trimmed.starts_with('#')
            && trimmed.trim_start_matches('#').starts_with(' ');
        if is_heading {
            heading = trimmed.trim_start_matches('#').trim().to_string();
            flush(&mut current, &mut out, i, &heading);
        } else if current.text.len() + line.len() > MAX_CHUNK_BYTES && line.trim().is_empty() {
            flush(&mut current, &mut out, i, &heading);
        }
        current.text.push_str(line);
        current.text.push('\n');
        current.end_line = i;
    }
    let end = current.end_line;
    flush(&mut current, &mut out, end, &heading);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunk_per_heading_and_fences_are_not_headings() {
        let md = "intro\n# One\na\n```\n# not a heading\n```\n## Two\nb\n";
        let got: Vec<(String, u32, u32)> = chunks(md)
            .into_iter()
            .map(|c| (c.heading, c.line, c.end_line))
            .collect();
        assert_eq!(
            got,
            [
                ("".into(), 0, 0),
                ("One".into(), 1, 5),
                ("Two".into(), 6, 7)
            ]
        );
    }
}

//! Markdown split into sections for search: one chunk per heading, ATX (`# Title`) or
//! setext (`Title` over `=====` / `-----`), outside fenced code;
//! long sections cut at blank lines to at most [`MAX_CHUNK_BYTES`].

use serde::{Deserialize, Serialize};

/// Largest chunk, in bytes (about 500 tokens).
pub const MAX_CHUNK_BYTES: usize = 2_000;

/// One searchable section of a markdown document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The nearest heading above (without `#` or its underline), or `""` before the first heading.
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
    let lines: Vec<&str> = text.lines().collect();
    let mut starts = headings(&lines).into_iter().peekable();
    for (i, line) in (0u32..).zip(lines.iter().copied()) {
        if let Some((_, h)) = starts.next_if(|(at, _)| *at == i as usize) {
            heading = h;
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

/// Where sections start: `(line, heading text)` for every ATX heading (`# Title`) and every
/// setext heading (paragraph lines underlined by `===` or `---`), in line order. A setext
/// heading starts at its paragraph's first line and its text is the paragraph's lines
/// joined by a space.
///
/// The rules are CommonMark's (<https://spec.commonmark.org/0.31.2/#setext-headings>),
/// simplified: an underline is up to 3 spaces of indentation, then only `=` or only `-`,
/// then trailing whitespace, right after a paragraph line. Not paragraphs: blank lines,
/// lines inside fenced code (``` or ~~~, closed by the same character at least as long),
/// indented code (4+ spaces not continuing a paragraph), ATX headings, thematic breaks,
/// and lines of a list item or block quote (from their marker line up to the next blank
/// line). YAML front matter (`---` on the first line up to the next `---` or `...`) is
/// skipped, so its delimiters are not headings.
fn headings(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    // The first line and text lines of the open paragraph, if any.
    let mut para: Option<(usize, Vec<&str>)> = None;
    // Inside a list item or block quote, until a blank line.
    let mut in_container = false;
    let mut i = 0;
    if lines.first().is_some_and(|l| l.trim_end() == "---")
        && let Some(end) = lines[1..]
            .iter()
            .position(|l| matches!(l.trim_end(), "---" | "..."))
    {
        i = end + 2;
    }
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim();
        if let Some((ch, len)) = fence {
            let run = body.len() - body.trim_start_matches(ch).len();
            if indent < 4 && run >= len && body.trim_start_matches(ch).is_empty() {
                fence = None;
            }
            i += 1;
            continue;
        }
        if body.is_empty() {
            para = None;
            in_container = false;
            i += 1;
            continue;
        }
        if indent < 4 {
            if let Some(f) = fence_open(body) {
                fence = Some(f);
                para = None;
                i += 1;
                continue;
            }
            if underline(body)
                && let Some((start, text)) = para.take()
            {
                out.push((
                    start,
                    text.iter().map(|t| t.trim()).collect::<Vec<_>>().join(" "),
                ));
                i += 1;
                continue;
            }
            if body.starts_with('#') && body.trim_start_matches('#').starts_with(' ') {
                out.push((i, body.trim_start_matches('#').trim().to_string()));
                para = None;
                i += 1;
                continue;
            }
            if thematic_break(body) {
                para = None;
                i += 1;
                continue;
            }
            if container_marker(body) {
                para = None;
                in_container = true;
                i += 1;
                continue;
            }
        }
        if in_container {
            // A lazy continuation of the list item or block quote.
        } else if let Some((_, text)) = para.as_mut() {
            text.push(line);
        } else if indent < 4 {
            para = Some((i, vec![line]));
        }
        i += 1;
    }
    out
}

/// A setext underline (without its up-to-3-space indentation): `=`s or `-`s, then
/// whitespace (level 1 for `=`, 2 for `-`; chunks do not keep the level).
fn underline(body: &str) -> bool {
    body.chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '-') && body.trim_end().chars().all(|x| x == c))
}

/// An opening code fence: 3+ backticks or tildes. Returns the character and run length.
fn fence_open(body: &str) -> Option<(char, usize)> {
    let c = body.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let run = body.len() - body.trim_start_matches(c).len();
    let info = &body[run..];
    (run >= 3 && !(c == '`' && info.contains('`'))).then_some((c, run))
}

/// A thematic break: 3+ of the same `*`, `-` or `_`, spaces allowed between.
fn thematic_break(body: &str) -> bool {
    let Some(c) = body.chars().next().filter(|c| matches!(c, '*' | '-' | '_')) else {
        return false;
    };
    body.chars().all(|x| x == c || x == ' ' || x == '\t')
        && body.chars().filter(|&x| x == c).count() >= 3
}

/// The first line of a block quote (`>`) or list item (`-`, `+`, `*`, or 1-9 digits then
/// `.` or `)`, followed by a space or the end of the line).
fn container_marker(body: &str) -> bool {
    if body.starts_with('>') {
        return true;
    }
    let rest = if let Some(r) = body.strip_prefix(['-', '+', '*']) {
        r
    } else {
        let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || digits > 9 {
            return false;
        }
        match body[digits..].strip_prefix(['.', ')']) {
            Some(r) => r,
            None => return false,
        }
    };
    rest.is_empty() || rest.starts_with([' ', '\t'])
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

    fn cut(md: &str) -> Vec<(String, u32, u32)> {
        chunks(md)
            .into_iter()
            .map(|c| (c.heading, c.line, c.end_line))
            .collect()
    }

    /// A paragraph is the heading's text, so a line right above `1.10.3` joins it; a
    /// `---` after a blank line, a list item or a block quote is a thematic break or lazy
    /// text; fences, indented code and front matter hold no headings.
    #[test]
    fn fault_setext_headings_were_not_section_boundaries() {
        let md = "\
---
title: front matter
---
intro

1.10.3
======
fixes
  more

1.10.2
 ===  \t
one
two lines
---

---
after a break
- item
---
```
text
---
```
> quote
===

    indented
    ---
Heading
    lazy
   -
tail
# Atx
";
        let got = cut(md);
        let want: Vec<(String, u32, u32)> = vec![
            ("".into(), 0, 4),
            ("1.10.3".into(), 5, 9),
            ("1.10.2".into(), 10, 11),
            ("one two lines".into(), 12, 28),
            ("Heading lazy".into(), 29, 32),
            ("Atx".into(), 33, 33),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn fault_setext_headings_cut_a_real_changelog() {
        let md = "1.10.3\n======\nA fix.\n\nBug fixes:\n\n* [BUG #1] x\n\n1.10.2\n======\ny\n\nOld\n---\nz\n";
        assert_eq!(
            cut(md),
            [
                ("1.10.3".into(), 0, 7),
                ("1.10.2".into(), 8, 11),
                ("Old".into(), 12, 14)
            ]
        );
    }
}

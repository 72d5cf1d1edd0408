//! A definition's signature line and documentation: the docstring or the comment block
//! above it, markers stripped and indentation cleaned.

use super::*;

/// The definition's first line (from byte `start`), trimmed, or the line holding its name
/// (byte `name`) when the first line is only an annotation/attribute (`@Override`,
/// `[Serializable]`); cut to [`MAX_SIGNATURE_BYTES`] on a char boundary.
pub(super) fn signature_line(
    language: Language,
    text: &str,
    lines: &RowIndex,
    start: usize,
    name: usize,
) -> String {
    let line_at = |at: usize| -> &str {
        let (mut begin, end) = lines.row_of(at);
        // Deep inside a long line (minified code): the definition's own text, not the
        // line's first bytes, which every definition on that line would share.
        if at.min(end) - begin > MAX_SIGNATURE_BYTES {
            begin = at.min(end);
        }
        text.get(begin..end).unwrap_or("").trim()
    };
    let mut line = line_at(start);
    if is_attribute_line(language, line) {
        line = line_at(name);
    }
    truncate_on_char(line, MAX_SIGNATURE_BYTES).to_string()
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub(crate) fn truncate_on_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `inspect.cleandoc`: strip the first line, dedent the rest by their common indentation,
/// drop leading and trailing blank lines.
pub(crate) fn clean_doc(raw: &str) -> String {
    let mut lines = raw.lines();
    let first = lines.next().unwrap_or("").trim().to_string();
    let rest: Vec<&str> = lines.collect();
    let indent = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = vec![first];
    for line in rest {
        let cut = line
            .char_indices()
            .nth(indent)
            .map_or(line.len(), |(i, _)| i)
            .min(line.len() - line.trim_start().len());
        out.push(line[cut..].trim_end().to_string());
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// Whether a trimmed line is an attribute or decorator that may sit between a doc comment
/// and its definition.
pub(super) fn is_attribute_line(language: Language, line: &str) -> bool {
    (language.spec().attribute_line)(line)
}

/// The block of line-leading comments directly above `def` (attribute/decorator lines
/// in between are skipped), markers stripped; `None` when there is none.
pub(super) fn doc_above(
    language: Language,
    text: &str,
    lines: &RowIndex,
    def: Node<'_>,
    comments: &[CommentSpan],
) -> Option<String> {
    if comments.is_empty() {
        return None;
    }
    let bytes = text.as_bytes();
    let mut line_start = lines.start_of(def.start_byte());
    // A comment documents the first definition of its line (after `export default`,
    // `template <class T>`, `var`): not every definition of a minified line
    // (`var a=function(){…};var b=…`), which would all get the license comment above it.
    // A `;`, `{` or `}` before the definition on its line means something came first.
    let before = text.get(line_start..def.start_byte()).unwrap_or("");
    if before.bytes().any(|b| matches!(b, b';' | b'{' | b'}')) {
        return None;
    }
    // The row right above the definition, past attribute lines.
    let mut row = def.start_position().row;
    while row > 0 && line_start > 0 {
        let prev_start = lines.start_of(line_start - 1);
        let line = text.get(prev_start..line_start - 1).unwrap_or("").trim();
        if !line.is_empty() && is_attribute_line(language, line) {
            row -= 1;
            line_start = prev_start;
        } else {
            break;
        }
    }
    if row == 0 {
        return None;
    }
    // Last comment starting before the definition.
    let mut i = comments.partition_point(|c| c.start < line_start);
    let mut block: Vec<&CommentSpan> = Vec::new();
    let mut want_end_row = row - 1;
    while i > 0 {
        let c = &comments[i - 1];
        let leading = bytes
            .get(lines.start_of(c.start)..c.start)
            .is_some_and(|b| b.iter().all(|b| b.is_ascii_whitespace()));
        // Contiguous (ends on the line above the previous one) and alone on its line.
        if c.end_row != want_end_row || !leading {
            break;
        }
        // Inner doc comments (`//!`, `/*!`) document the enclosing module, not what follows.
        let raw = text.get(c.start..c.end).unwrap_or("");
        if raw.starts_with("//!") || raw.starts_with("/*!") {
            break;
        }
        block.push(c);
        if c.start_row == 0 {
            break;
        }
        want_end_row = c.start_row - 1;
        i -= 1;
    }
    if block.is_empty() {
        return None;
    }
    block.reverse();
    let mut lines: Vec<String> = Vec::new();
    for c in block {
        let raw = text.get(c.start..c.end).unwrap_or("");
        for line in raw.lines() {
            let own = language
                .spec()
                .extraction
                .comment_markers
                .iter()
                .find_map(|marker| line.trim().strip_prefix(marker));
            lines.push(match own {
                Some(rest) => {
                    let rest = rest.trim_end();
                    // OCaml's `(* .. *)` closes on its line.
                    let rest = rest.strip_suffix("*)").unwrap_or(rest);
                    rest.strip_prefix(' ')
                        .unwrap_or(rest)
                        .trim_end()
                        .to_string()
                }
                None => strip_comment_markers(line).to_string(),
            });
        }
    }
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    // Remove the indentation all lines share (`/**  text */`, aligned `*` blocks).
    let indent = lines
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let doc = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_else(|| l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n");
    (!doc.is_empty()).then_some(doc)
}

/// One comment line without its markers (`///`, `//!`, `//`, `/**`, `/*`, `*/`, a leading
/// `*`, `#`) and the space after them.
pub(super) fn strip_comment_markers(line: &str) -> &str {
    let mut l = line.trim();
    for prefix in ["///", "//!", "//", "/**", "/*!", "/*", "#", "--"] {
        if let Some(rest) = l.strip_prefix(prefix) {
            l = rest;
            break;
        }
    }
    if let Some(rest) = l.strip_suffix("*/") {
        l = rest;
    }
    let l = l.trim_end();
    let l = if let Some(rest) = l.trim_start().strip_prefix('*') {
        if line.trim_start().starts_with('*') {
            rest
        } else {
            l
        }
    } else {
        l
    };
    l.strip_prefix(' ').unwrap_or(l).trim_end()
}

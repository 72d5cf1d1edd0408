//! Vue and Svelte single-file components: the `<script>` blocks of a `.vue` or `.svelte`
//! file, parsed as TypeScript in place (tree-sitter's included ranges), so symbols,
//! references and imports keep the file's own byte offsets and lines. The template and
//! style blocks are not parsed: their text is in no tree, hence in no fingerprint.
//!
//! TypeScript's grammar reads both `<script>` and `<script lang="ts">` (a JavaScript
//! block is TypeScript without types); JSX in a `lang="tsx"` block is not read. Imports
//! resolve as JavaScript/TypeScript ones do, and references link to the JavaScript group.

use tree_sitter::{Point, Range};

use super::{Extraction, Language, Spec};

/// Vue: `.vue` files.
pub(crate) const VUE: Spec = Spec {
    name: "vue",
    extensions: &["vue"],
    link_group: Some(Language::JavaScript),
    extraction: Extraction {
        script_ranges: Some(script_ranges),
        ..super::javascript::TYPESCRIPT.extraction
    },
    ..super::javascript::TYPESCRIPT
};

/// Svelte: `.svelte` files.
pub(crate) const SVELTE: Spec = Spec {
    name: "svelte",
    extensions: &["svelte"],
    ..VUE
};

/// The byte ranges (with their points) of the contents of every top-level `<script ..>`
/// block, in order. A file with none gets one empty range at its start (no range at all
/// would make tree-sitter parse the whole file). Tags are found by their lower-case
/// names; a `<script` inside a template string is taken too (rare in components).
pub(crate) fn script_ranges(text: &str) -> Vec<Range> {
    let mut ranges = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find("<script").map(|i| at + i) {
        let after_name = open + "<script".len();
        // `<scripts>` or `<script-x>` is another tag.
        if text[after_name..]
            .chars()
            .next()
            .is_some_and(|c| !(c == '>' || c.is_whitespace()))
        {
            at = after_name;
            continue;
        }
        let Some(start) = text[after_name..].find('>').map(|i| after_name + i + 1) else {
            break;
        };
        let Some(end) = text[start..].find("</script").map(|i| start + i) else {
            break;
        };
        ranges.push(Range {
            start_byte: start,
            end_byte: end,
            start_point: point_at(text, start),
            end_point: point_at(text, end),
        });
        at = end;
    }
    if ranges.is_empty() {
        ranges.push(Range {
            start_byte: 0,
            end_byte: 0,
            start_point: Point::new(0, 0),
            end_point: Point::new(0, 0),
        });
    }
    ranges
}

/// The row and byte column of byte `at` of `text`.
fn point_at(text: &str, at: usize) -> Point {
    let before = &text.as_bytes()[..at.min(text.len())];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let column = at
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
    Point::new(row, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_blocks_are_found_with_their_points() {
        let text = "<template>\n  <p/>\n</template>\n<script setup lang=\"ts\">\nconst a = 1\n</script>\n<scripts>x</scripts>\n<script>b()</script>\n";
        let ranges: Vec<(usize, usize, (usize, usize))> = script_ranges(text)
            .iter()
            .map(|r| {
                (
                    r.start_byte,
                    r.end_byte,
                    (r.start_point.row, r.start_point.column),
                )
            })
            .collect();
        assert_eq!(ranges, [(54, 67, (3, 24)), (106, 109, (7, 8))]);
        assert_eq!(&text[54..67], "\nconst a = 1\n");
        assert_eq!(&text[106..109], "b()");
    }

    #[test]
    fn a_component_without_script_parses_nothing() {
        let ranges = script_ranges("<h1>hi</h1>");
        assert_eq!(ranges.len(), 1);
        assert_eq!((ranges[0].start_byte, ranges[0].end_byte), (0, 0));
    }
}

//! The one place where byte offsets meet lines and columns.
//!
//! loci stores byte offsets; editors, SARIF and people speak `(line, column)`, where the
//! column counts code units of an [`Encoding`] (the LSP's negotiated encoding: UTF-16
//! unless client and server agreed on `utf-8` or `utf-32`). Two line rules live here,
//! each named for where it comes from:
//!
//! - **Lines** ([`LineIndex`], [`count_lines`]): `\n`, `\r\n` and a lone `\r` each end a
//!   line (LSP 3.17, "Text Documents": "`\n`, `\r\n` and `\r`"). Positions past the end
//!   of a line clamp to the line's end (the LSP says so for `character`), and positions
//!   past the last line clamp to the end of the text, so a client that sends `(3,0)` for
//!   a three-line document or `(0,1000000)` for "the whole line" gets the obvious answer
//!   instead of a panic. An offset inside a multi-unit character (a UTF-16 surrogate
//!   pair, a UTF-8 sequence) rounds down to the character's start.
//! - **Rows** ([`RowIndex`], [`LineIndex::ts_point`], [`row_column`]): only `\n` ends a
//!   row, as tree-sitter counts them (`Point::row`); a `\r` before it belongs to the row.
//!   What was located by tree-sitter points (symbols' docs and signatures, claims'
//!   lines) uses rows, so that a text with lone `\r`s keeps the rows its tree has.
//!
//! Lines and columns are zero-based here; a door that prints one-based numbers adds one.
//! The `line-index` crate does not treat a lone `\r` as a line end, hence this module.
//! The LSP's types (`Position`, `PositionEncodingKind`) are converted in the language
//! server's `position` module, on top of this one.

/// A zero-based line and a column in code units of some [`Encoding`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineCol {
    /// Zero-based line.
    pub line: u32,
    /// Code units since the line's start.
    pub col: u32,
}

/// What a column counts (`Position.character` in the LSP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units, the protocol's default.
    #[default]
    Utf16,
    /// Unicode scalar values.
    Utf32,
}

impl Encoding {
    /// Code units of `c` in this encoding.
    pub fn width(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf32 => 1,
        }
    }

    /// Code units of `text` in this encoding.
    pub fn units(self, text: &str) -> u32 {
        match self {
            Encoding::Utf8 => text.len() as u32,
            Encoding::Utf16 => text.encode_utf16().count() as u32,
            Encoding::Utf32 => text.chars().count() as u32,
        }
    }

    /// The byte offset in `line` after its first `units` code units: `None` when that falls
    /// inside a character or past the line's end (a strict inverse of [`Encoding::units`],
    /// for positions another tool wrote; [`LineIndex::offset_checked`] clamps instead).
    pub fn byte_offset(self, line: &str, units: u32) -> Option<usize> {
        if self == Encoding::Utf8 {
            let at = units as usize;
            return line.is_char_boundary(at).then_some(at);
        }
        let mut counted = 0u32;
        for (i, c) in line.char_indices() {
            if counted == units {
                return Some(i);
            }
            counted += self.width(c);
        }
        (counted == units).then_some(line.len())
    }
}

/// Line starts of one text, in bytes. Rebuild it whenever the text changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of each line; the first is 0. A text ending with a line
    /// end has a last, empty line starting at its length.
    starts: Vec<u32>,
    /// Text length in bytes.
    len: u32,
    /// Whether a lone `\r` ends some line (tree-sitter counts only `\n` as a row end, so
    /// tree-sitter points then differ from LSP lines).
    lone_cr: bool,
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = Vec::with_capacity(bytes.len() / 32 + 1);
        starts.push(0);
        let mut lone_cr = false;
        for end in line_ends(bytes) {
            lone_cr |= end.lone_cr;
            starts.push(end.next as u32);
        }
        LineIndex {
            starts,
            len: bytes.len() as u32,
            lone_cr,
        }
    }

    /// Number of lines (at least 1; a trailing line end starts an empty last line).
    pub fn line_count(&self) -> u32 {
        self.starts.len() as u32
    }

    /// Text length in bytes.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Byte range of line `line`'s content, without its line end; `None` past the last line.
    pub fn line_range(&self, text: &str, line: u32) -> Option<(usize, usize)> {
        let start = *self.starts.get(line as usize)? as usize;
        let mut end = self
            .starts
            .get(line as usize + 1)
            .map_or(self.len as usize, |s| *s as usize);
        let bytes = text.as_bytes();
        if end > start && bytes.get(end - 1) == Some(&b'\n') {
            end -= 1;
        }
        if end > start && bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Some((start, end))
    }

    /// The byte offset of `position`, or `None` when its line is past the last line.
    /// A column past the line's end clamps to the line's end.
    pub fn offset_checked(&self, text: &str, position: LineCol, encoding: Encoding) -> Option<u32> {
        let (start, end) = self.line_range(text, position.line)?;
        let line = text.get(start..end).unwrap_or_default();
        if encoding == Encoding::Utf8 || line.is_ascii() {
            let mut at = (position.col as usize).min(line.len());
            while !line.is_char_boundary(at) {
                at -= 1;
            }
            return Some((start + at) as u32);
        }
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            let next = units + encoding.width(c);
            if next > position.col {
                return Some((start + i) as u32);
            }
            units = next;
        }
        Some(end as u32)
    }

    /// The byte offset of `position`, clamped: a line past the last line means the end of
    /// the text.
    pub fn offset(&self, text: &str, position: LineCol, encoding: Encoding) -> u32 {
        self.offset_checked(text, position, encoding)
            .unwrap_or(self.len)
    }

    /// The position of byte `offset` (clamped to the text, rounded down to a character
    /// boundary). An offset inside a `\r\n` pair belongs to the line it ends.
    pub fn position(&self, text: &str, offset: u32, encoding: Encoding) -> LineCol {
        let mut offset = (offset.min(self.len)) as usize;
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&(offset as u32)) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line] as usize;
        let (_, end) = self.line_range(text, line as u32).unwrap_or((start, start));
        let upto = offset.min(end).max(start);
        let slice = text.get(start..upto).unwrap_or_default();
        LineCol {
            line: line as u32,
            col: encoding.units(slice),
        }
    }

    /// The tree-sitter point (row = `\n`s before `offset`, column = bytes since the last
    /// `\n`) of byte `offset`, which must be a char boundary within the text.
    pub fn ts_point(&self, text: &str, offset: u32) -> (usize, usize) {
        let offset = (offset.min(self.len)) as usize;
        if !self.lone_cr {
            // Without lone CRs, every line start follows a `\n`: lines and rows agree.
            let line = match self.starts.binary_search(&(offset as u32)) {
                Ok(i) => i,
                Err(i) => i - 1,
            };
            return (line, offset - self.starts[line] as usize);
        }
        let before = &text.as_bytes()[..offset];
        let row = before.iter().filter(|b| **b == b'\n').count();
        let col = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(offset, |i| offset - i - 1);
        (row, col)
    }
}

/// One line end: where the next line starts, and whether the end was a lone `\r`.
struct LineEnd {
    /// Byte offset of the next line's first byte.
    next: usize,
    /// The end is a `\r` not followed by `\n`.
    lone_cr: bool,
}

/// The line ends of `bytes`, in order: `\n`, `\r\n` (one end) and a lone `\r`.
fn line_ends(bytes: &[u8]) -> impl Iterator<Item = LineEnd> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let at = i;
            i += 1;
            match bytes[at] {
                b'\n' => {
                    return Some(LineEnd {
                        next: i,
                        lone_cr: false,
                    });
                }
                b'\r' => {
                    let lone_cr = bytes.get(i) != Some(&b'\n');
                    if !lone_cr {
                        i += 1;
                    }
                    return Some(LineEnd { next: i, lone_cr });
                }
                _ => {}
            }
        }
        None
    })
}

/// Lines in `text`: `\n`, `\r\n` and a lone `\r` each end a line; a last line without an
/// ending counts, and an empty text has none (unlike [`LineIndex::line_count`], which
/// counts the empty line after a final line end).
pub fn count_lines(text: &str) -> usize {
    let mut n = 0;
    let mut last = 0;
    for end in line_ends(text.as_bytes()) {
        n += 1;
        last = end.next;
    }
    n + usize::from(last < text.len())
}

/// The one-based line and one-based column, in `encoding` units, of byte `offset` (clamped
/// to the text, rounded down to a character boundary), for messages people read.
pub fn line_col_one_based(text: &str, offset: usize, encoding: Encoding) -> (usize, usize) {
    let p = LineIndex::new(text).position(text, offset as u32, encoding);
    (p.line as usize + 1, p.col as usize + 1)
}

/// Where each row of a text starts, rows as tree-sitter counts them (only `\n` ends one),
/// built once per text so that finding an offset's row costs a binary search, not a scan
/// to the previous newline (which would make a one-line minified file quadratic in its
/// number of definitions).
pub struct RowIndex {
    /// Byte offset of each row's first byte; `starts[0] == 0`.
    starts: Vec<usize>,
    len: usize,
}

impl RowIndex {
    /// Indexes `bytes`.
    pub fn new(bytes: &[u8]) -> Self {
        let mut starts = vec![0];
        starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        RowIndex {
            starts,
            len: bytes.len(),
        }
    }

    /// The start of the row holding `at` (the byte after the last `\n` before `at`).
    pub fn start_of(&self, at: usize) -> usize {
        self.row_of(at).0
    }

    /// The row holding `at` (clamped to the text): its start, and its end (its `\n`, or
    /// the end of the text).
    pub fn row_of(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.len);
        let next = self.starts.partition_point(|&s| s <= at);
        let begin = self.starts[next - 1];
        let end = self.starts.get(next).map_or(self.len, |s| s - 1);
        (begin, end)
    }
}

/// The column, in `encoding` units, of byte column `byte_column` of row `row` (rows end
/// only at `\n`, as tree-sitter counts them; a `\r` before the `\n` is part of the row).
/// A byte column past the row's end clamps to it, one inside a character rounds down to
/// the character's start; `None` when the text has no such row.
pub fn row_column(text: &str, row: usize, byte_column: usize, encoding: Encoding) -> Option<u32> {
    let l = text.split('\n').nth(row)?;
    let mut cut = byte_column.min(l.len());
    while !l.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(encoding.units(&l[..cut]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, col: u32) -> LineCol {
        LineCol { line, col }
    }

    const ALL: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32];

    #[test]
    fn byte_offsets_of_columns_are_strict() {
        let line = "aé😀b";
        for (encoding, columns) in [
            (Encoding::Utf8, [0, 1, 3, 7, 8]),
            (Encoding::Utf16, [0, 1, 2, 4, 5]),
            (Encoding::Utf32, [0, 1, 2, 3, 4]),
        ] {
            let bytes: Vec<Option<usize>> = columns
                .iter()
                .map(|&c| encoding.byte_offset(line, c))
                .collect();
            assert_eq!(
                bytes,
                [Some(0), Some(1), Some(3), Some(7), Some(8)],
                "{encoding:?}"
            );
        }
        assert_eq!(Encoding::Utf8.byte_offset(line, 2), None);
        assert_eq!(Encoding::Utf16.byte_offset(line, 3), None);
        assert_eq!(Encoding::Utf32.byte_offset(line, 5), None);
    }

    #[test]
    fn line_ends_lf_crlf_and_lone_cr() {
        let text = "a\nb\r\nc\rd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        for (offset, expected) in [
            (0, pos(0, 0)),
            (2, pos(1, 0)),
            (5, pos(2, 0)),
            (7, pos(3, 0)),
        ] {
            assert_eq!(index.position(text, offset, Encoding::Utf16), expected);
            assert_eq!(index.offset(text, expected, Encoding::Utf16), offset);
        }
        // `\r` of `\r\n` and past-the-end characters clamp to the line's end.
        assert_eq!(index.position(text, 4, Encoding::Utf16), pos(1, 1));
        assert_eq!(index.offset(text, pos(1, 9), Encoding::Utf16), 3);
        assert_eq!(index.offset(text, pos(2, 9), Encoding::Utf16), 6);
    }

    #[test]
    fn trailing_newline_starts_an_empty_line() {
        let text = "abc\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 2);
        assert_eq!(index.offset(text, pos(1, 0), Encoding::Utf16), 4);
        assert_eq!(index.offset_checked(text, pos(2, 0), Encoding::Utf16), None);
    }

    #[test]
    fn out_of_range_positions_clamp() {
        // B08: (0,0)-(3,0) on a three-line text is the whole text; (0,1000000) is (0,3).
        let text = "a\nb\nc";
        let index = LineIndex::new(text);
        assert_eq!(index.offset(text, pos(3, 0), Encoding::Utf16), 5);
        assert_eq!(index.offset(text, pos(50, 7), Encoding::Utf8), 5);
        let text = "abc\n";
        let index = LineIndex::new(text);
        assert_eq!(index.offset(text, pos(0, 1_000_000), Encoding::Utf16), 3);
        assert_eq!(index.position(text, 99, Encoding::Utf16), pos(1, 0));
    }

    #[test]
    fn non_ascii_columns_per_encoding() {
        // B05: `target` starts at byte 14, UTF-16 unit 12, code point 11.
        let text = "/* 😀 */ fn target() {}";
        let index = LineIndex::new(text);
        let offset = text.find("target").unwrap() as u32;
        assert_eq!(index.position(text, offset, Encoding::Utf8), pos(0, 14));
        assert_eq!(index.position(text, offset, Encoding::Utf16), pos(0, 12));
        assert_eq!(index.position(text, offset, Encoding::Utf32), pos(0, 11));
        for (encoding, character) in [
            (Encoding::Utf8, 14),
            (Encoding::Utf16, 12),
            (Encoding::Utf32, 11),
        ] {
            assert_eq!(index.offset(text, pos(0, character), encoding), offset);
        }
    }

    #[test]
    fn round_trips_with_non_ascii_before_and_inside() {
        let text = "é😀你好\r\n  x = \"😀é\"\rfin 你\n";
        let index = LineIndex::new(text);
        for encoding in ALL {
            for (offset, _) in text.char_indices() {
                let offset = offset as u32;
                let p = index.position(text, offset, encoding);
                let back = index.offset(text, p, encoding);
                // Offsets on a line end map to the line's end: `\r` and `\n` of `\r\n`
                // share the position at the end of the line.
                let expected = if text[offset as usize..].starts_with('\n')
                    && text[..offset as usize].ends_with('\r')
                {
                    offset - 1
                } else {
                    offset
                };
                assert_eq!(back, expected, "{encoding:?} offset {offset} → {p:?}");
            }
        }
    }

    #[test]
    fn inside_a_surrogate_pair_rounds_down() {
        let text = "a😀b";
        let index = LineIndex::new(text);
        // UTF-16 unit 2 is the low surrogate of 😀.
        assert_eq!(index.offset(text, pos(0, 2), Encoding::Utf16), 1);
        assert_eq!(index.offset(text, pos(0, 3), Encoding::Utf16), 5);
        // Byte 3 is inside 😀.
        assert_eq!(index.offset(text, pos(0, 3), Encoding::Utf8), 1);
        assert_eq!(index.position(text, 3, Encoding::Utf16), pos(0, 1));
    }

    #[test]
    fn tree_sitter_points_count_only_lf() {
        let text = "a\rb\nc";
        let index = LineIndex::new(text);
        assert_eq!(index.ts_point(text, 2), (0, 2));
        assert_eq!(index.ts_point(text, 4), (1, 0));
        let text = "a\r\nb";
        let index = LineIndex::new(text);
        assert_eq!(index.ts_point(text, 3), (1, 0));
    }

    #[test]
    fn count_lines_treats_crlf_and_lone_cr_as_line_ends() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\r\nb"), 2);
        assert_eq!(count_lines("a\rb\rc\n"), 3);
        assert_eq!(count_lines("\r"), 1);
        assert_eq!(count_lines("\n\n"), 2);
    }

    #[test]
    fn one_based_line_and_column_for_people() {
        let text = "a\r\nb\réx";
        assert_eq!(line_col_one_based(text, 0, Encoding::Utf32), (1, 1));
        assert_eq!(line_col_one_based(text, 3, Encoding::Utf32), (2, 1));
        assert_eq!(line_col_one_based(text, 7, Encoding::Utf32), (3, 2));
    }

    /// The row index answers what a scan from `at` to the `\n`s on either side answers,
    /// in a binary search instead of a scan (quadratic on one-line minified files).
    #[test]
    fn fault_line_index_matches_a_scan_to_the_surrounding_newlines() {
        for text in [
            "",
            "\n",
            "a",
            "ab\n",
            "a\n\nbc\n",
            "\n\nxy",
            "one\ntwo\nthree",
        ] {
            let bytes = text.as_bytes();
            let rows = RowIndex::new(bytes);
            for at in 0..=bytes.len() + 1 {
                let clamped = at.min(bytes.len());
                let begin = bytes[..clamped]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let end = bytes[clamped..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |i| clamped + i);
                assert_eq!(rows.row_of(at), (begin, end), "{text:?} at {at}");
            }
        }
        assert_eq!(RowIndex::new(b"ab\ncd").row_of(4), (3, 5));
    }

    #[test]
    fn row_columns_count_only_lf_and_clamp() {
        let text = "a\r😀b\né";
        assert_eq!(row_column(text, 0, 6, Encoding::Utf16), Some(4));
        assert_eq!(row_column(text, 0, 3, Encoding::Utf16), Some(2));
        assert_eq!(row_column(text, 0, 99, Encoding::Utf16), Some(5));
        assert_eq!(row_column(text, 1, 2, Encoding::Utf16), Some(1));
        assert_eq!(row_column(text, 2, 0, Encoding::Utf16), None);
    }
}

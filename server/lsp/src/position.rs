//! The one place where byte offsets meet LSP positions.
//!
//! loci stores byte offsets; LSP speaks `(line, character)` where `character` counts code
//! units of the negotiated encoding (LSP 3.17, "Position" and "PositionEncodingKind":
//! UTF-16 unless client and server agreed on `utf-8` or `utf-32`). Line ends are `\n`,
//! `\r\n` and a lone `\r` (LSP 3.17, "Text Documents": "`\n`, `\r\n` and `\r`"). Positions
//! past the end of a line clamp to the line's end (the spec says so for `character`), and
//! positions past the last line clamp to the end of the document, so a client that sends
//! `(3,0)` for a three-line document or `(0,1000000)` for "the whole line" gets the
//! obvious answer instead of a panic. An offset inside a multi-unit character (a UTF-16
//! surrogate pair, a UTF-8 sequence) rounds down to the character's start.
//!
//! The `line-index` crate does not treat a lone `\r` as a line end, hence this module.

use tower_lsp_server::ls_types::{Position, PositionEncodingKind};

/// What `Position.character` counts.
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
    /// Picks the encoding from the client's offered list: UTF-8 first (no conversion),
    /// then UTF-32, else UTF-16. Returns the encoding and what to announce in
    /// `capabilities.positionEncoding`: `None` when the client offered no list (it then
    /// assumes UTF-16), never a kind the client did not offer.
    pub fn negotiate(
        offered: Option<&[PositionEncodingKind]>,
    ) -> (Encoding, Option<PositionEncodingKind>) {
        let Some(offered) = offered else {
            return (Encoding::Utf16, None);
        };
        for (kind, encoding) in [
            (PositionEncodingKind::UTF8, Encoding::Utf8),
            (PositionEncodingKind::UTF32, Encoding::Utf32),
            (PositionEncodingKind::UTF16, Encoding::Utf16),
        ] {
            if offered.contains(&kind) {
                return (encoding, Some(kind));
            }
        }
        // The client offered only kinds we do not know; UTF-16 is mandatory for both
        // sides, but we announce nothing rather than a kind outside its list.
        (Encoding::Utf16, None)
    }

    /// Code units of `c` in this encoding.
    fn width(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf32 => 1,
        }
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
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i as u32 + 1),
                b'\r' => {
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    } else {
                        lone_cr = true;
                    }
                    starts.push(i as u32 + 1);
                }
                _ => {}
            }
            i += 1;
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
    fn line_range(&self, text: &str, line: u32) -> Option<(usize, usize)> {
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
    /// A `character` past the line's end clamps to the line's end.
    pub fn offset_checked(
        &self,
        text: &str,
        position: Position,
        encoding: Encoding,
    ) -> Option<u32> {
        let (start, end) = self.line_range(text, position.line)?;
        let line = text.get(start..end).unwrap_or_default();
        if encoding == Encoding::Utf8 || line.is_ascii() {
            let mut at = (position.character as usize).min(line.len());
            while !line.is_char_boundary(at) {
                at -= 1;
            }
            return Some((start + at) as u32);
        }
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            let next = units + encoding.width(c);
            if next > position.character {
                return Some((start + i) as u32);
            }
            units = next;
        }
        Some(end as u32)
    }

    /// The byte offset of `position`, clamped: a line past the last line means the end of
    /// the text.
    pub fn offset(&self, text: &str, position: Position, encoding: Encoding) -> u32 {
        self.offset_checked(text, position, encoding)
            .unwrap_or(self.len)
    }

    /// The position of byte `offset` (clamped to the text, rounded down to a character
    /// boundary). An offset inside a `\r\n` pair belongs to the line it ends.
    pub fn position(&self, text: &str, offset: u32, encoding: Encoding) -> Position {
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
        let character = match encoding {
            Encoding::Utf8 => slice.len() as u32,
            Encoding::Utf16 => slice.encode_utf16().count() as u32,
            Encoding::Utf32 => slice.chars().count() as u32,
        };
        Position {
            line: line as u32,
            character,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    const ALL: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32];

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
    fn negotiation_never_announces_an_unoffered_kind() {
        assert_eq!(Encoding::negotiate(None), (Encoding::Utf16, None));
        assert_eq!(
            Encoding::negotiate(Some(&[PositionEncodingKind::UTF16])),
            (Encoding::Utf16, Some(PositionEncodingKind::UTF16))
        );
        assert_eq!(
            Encoding::negotiate(Some(&[
                PositionEncodingKind::UTF16,
                PositionEncodingKind::UTF32,
                PositionEncodingKind::UTF8
            ])),
            (Encoding::Utf8, Some(PositionEncodingKind::UTF8))
        );
        assert_eq!(
            Encoding::negotiate(Some(&[
                PositionEncodingKind::UTF32,
                PositionEncodingKind::UTF16
            ])),
            (Encoding::Utf32, Some(PositionEncodingKind::UTF32))
        );
        assert_eq!(
            Encoding::negotiate(Some(&[PositionEncodingKind::new("utf-7")])),
            (Encoding::Utf16, None)
        );
    }
}

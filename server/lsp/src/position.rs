//! LSP positions over `loci_core::position`: the negotiation of the position encoding
//! (LSP 3.17, "PositionEncodingKind") and the conversion of `ls_types::Position` to and
//! from byte offsets. The line rule, the clamping and the encodings' units are
//! `loci_core::position`'s; this module only speaks the protocol's types.

use loci_core::position::{self as core_position, LineCol};
use tower_lsp_server::ls_types::{Position, PositionEncodingKind};

pub use loci_core::position::Encoding;

/// Picks the encoding from the client's offered list: UTF-8 first (no conversion), then
/// UTF-32, else UTF-16. Returns the encoding and what to announce in
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
    // The client offered only kinds we do not know; UTF-16 is mandatory for both sides,
    // but we announce nothing rather than a kind outside its list.
    (Encoding::Utf16, None)
}

/// Line starts of one document (`loci_core::position::LineIndex`), read and answered in
/// LSP positions. Rebuild it whenever the text changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex(core_position::LineIndex);

fn line_col(position: Position) -> LineCol {
    LineCol {
        line: position.line,
        col: position.character,
    }
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> LineIndex {
        LineIndex(core_position::LineIndex::new(text))
    }

    /// Number of lines (at least 1; a trailing line end starts an empty last line).
    pub fn line_count(&self) -> u32 {
        self.0.line_count()
    }

    /// Text length in bytes.
    pub fn len(&self) -> u32 {
        self.0.len()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The byte offset of `position`, or `None` when its line is past the last line.
    /// A `character` past the line's end clamps to the line's end.
    pub fn offset_checked(
        &self,
        text: &str,
        position: Position,
        encoding: Encoding,
    ) -> Option<u32> {
        self.0.offset_checked(text, line_col(position), encoding)
    }

    /// The byte offset of `position`, clamped: a line past the last line means the end of
    /// the text.
    pub fn offset(&self, text: &str, position: Position, encoding: Encoding) -> u32 {
        self.0.offset(text, line_col(position), encoding)
    }

    /// The position of byte `offset` (clamped to the text, rounded down to a character
    /// boundary). An offset inside a `\r\n` pair belongs to the line it ends.
    pub fn position(&self, text: &str, offset: u32, encoding: Encoding) -> Position {
        let p = self.0.position(text, offset, encoding);
        Position {
            line: p.line,
            character: p.col,
        }
    }

    /// The tree-sitter point (row = `\n`s before `offset`, column = bytes since the last
    /// `\n`) of byte `offset`, which must be a char boundary within the text.
    pub fn ts_point(&self, text: &str, offset: u32) -> (usize, usize) {
        self.0.ts_point(text, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_convert_both_ways() {
        let text = "é\r\nab";
        let index = LineIndex::new(text);
        let p = Position {
            line: 1,
            character: 1,
        };
        assert_eq!(index.offset(text, p, Encoding::Utf16), 5);
        assert_eq!(index.position(text, 5, Encoding::Utf16), p);
    }

    #[test]
    fn negotiation_never_announces_an_unoffered_kind() {
        assert_eq!(negotiate(None), (Encoding::Utf16, None));
        assert_eq!(
            negotiate(Some(&[PositionEncodingKind::UTF16])),
            (Encoding::Utf16, Some(PositionEncodingKind::UTF16))
        );
        assert_eq!(
            negotiate(Some(&[
                PositionEncodingKind::UTF16,
                PositionEncodingKind::UTF32,
                PositionEncodingKind::UTF8
            ])),
            (Encoding::Utf8, Some(PositionEncodingKind::UTF8))
        );
        assert_eq!(
            negotiate(Some(&[
                PositionEncodingKind::UTF32,
                PositionEncodingKind::UTF16
            ])),
            (Encoding::Utf32, Some(PositionEncodingKind::UTF32))
        );
        assert_eq!(
            negotiate(Some(&[PositionEncodingKind::new("utf-7")])),
            (Encoding::Utf16, None)
        );
    }
}

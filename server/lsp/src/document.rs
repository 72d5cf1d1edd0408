//! Open documents: text, version, line index and tree-sitter tree, edited in place.
//!
//! Rule (style.md 4): every content change of a `didChange` is applied here, in order and
//! synchronously, before the handler awaits anything. Each ranged change is converted to
//! byte offsets against the text produced by the previous change (the line index is rebuilt
//! between changes), clamped, and mirrored into the tree as a tree-sitter [`InputEdit`] in
//! bytes, so the next parse can reuse the old tree.

use std::path::PathBuf;
use std::sync::Arc;

use loci_core::tree_sitter::{InputEdit, Point, Tree};
use loci_core::{FileAnalysis, Language};
use tower_lsp_server::ls_types::{Diagnostic, Range, TextDocumentContentChangeEvent, Uri};

use crate::position::{Encoding, LineIndex};

/// Where an open document lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file path, for `file:` URIs.
    pub path: Option<PathBuf>,
    /// The workspace root holding it (canonical), if any; `None` is single-file mode.
    pub root: Option<PathBuf>,
    /// The path used in symbol keys: repo-relative and `/`-separated under a root, else
    /// the file name (or the whole URI for non-file schemes).
    pub key_path: String,
}

/// One document the client has open.
pub struct Document {
    /// Where it lives.
    pub location: Location,
    /// Its language, when loci parses it.
    pub language: Option<Language>,
    /// The current text.
    pub text: String,
    /// The client's version of `text`.
    pub version: i32,
    /// Line starts of `text`.
    pub index: LineIndex,
    /// The last parse, edited to match `text` (reparse it with [`loci_core::analyze::parse`]
    /// and this as the old tree). `None` before the first parse or after a full replacement.
    pub tree: Option<Tree>,
    /// The analysis of some version (compare [`Overlay::version`] with `version`).
    pub overlay: Option<Arc<Overlay>>,
    /// Whether a background analysis task is running for this document.
    pub analysis_running: bool,
    /// Whether the document changed while that task ran (it then runs again).
    pub analysis_pending: bool,
    /// The diagnostics last published for it.
    pub published: Vec<Diagnostic>,
    /// The document version the last publish carried; `None` before the first publish.
    /// A client may drop a publish whose version is older than its document's (Helix
    /// does), so once anything was published, an analysis of a newer version publishes
    /// again even when the diagnostics are the same (see `Inner::publish_findings`).
    pub published_version: Option<i32>,
}

/// The analysis of one version of an open document: the overlay that takes precedence
/// over the stored map for this file.
#[derive(Debug)]
pub struct Overlay {
    /// The document version analysed.
    pub version: i32,
    /// The path used in its symbol keys (a document moved to another workspace folder
    /// keeps its version but needs new keys).
    pub key_path: String,
    /// The text of that version.
    pub text: Arc<str>,
    /// Its line index.
    pub index: LineIndex,
    /// Symbols (and, once core has them, references and imports) with byte spans into `text`.
    pub analysis: FileAnalysis,
    /// Wall time of parse plus extraction, in microseconds.
    pub micros: u64,
    /// Why this version is a secret (a secret path glob, or a credential-shaped token and
    /// its position), when it is: it was not parsed, and nothing of it is served.
    pub secret: Option<String>,
}

/// What a background analysis needs from a document, taken under the map's lock.
pub struct Snapshot {
    /// The document version.
    pub version: i32,
    /// Its text.
    pub text: Arc<str>,
    /// Its line index.
    pub index: LineIndex,
    /// The old tree, edited to match `text`.
    pub tree: Option<Tree>,
    /// Its language.
    pub language: Option<Language>,
    /// The path used in symbol keys.
    pub key_path: String,
}

impl Document {
    /// A document as `didOpen` gives it, with the editor's `languageId`.
    pub fn new(location: Location, language_id: &str, text: String, version: i32) -> Document {
        let language = document_language(&location, language_id);
        let index = LineIndex::new(&text);
        Document {
            location,
            language,
            text,
            version,
            index,
            tree: None,
            overlay: None,
            analysis_running: false,
            analysis_pending: false,
            published: Vec::new(),
            published_version: None,
        }
    }

    /// Applies one content change (a full replacement when `range` is absent), with
    /// positions in `encoding`, clamped to the text.
    pub fn apply(&mut self, change: TextDocumentContentChangeEvent, encoding: Encoding) {
        let Some(range) = change.range else {
            self.text = change.text;
            self.index = LineIndex::new(&self.text);
            self.tree = None;
            return;
        };
        let (start, end) = self.byte_range(range, encoding);
        let start_position = point(self.index.ts_point(&self.text, start));
        let old_end_position = point(self.index.ts_point(&self.text, end));
        self.text
            .replace_range(start as usize..end as usize, &change.text);
        self.index = LineIndex::new(&self.text);
        let new_end = start + change.text.len() as u32;
        let new_end_position = point(self.index.ts_point(&self.text, new_end));
        if let Some(tree) = &mut self.tree {
            tree.edit(&InputEdit {
                start_byte: start as usize,
                old_end_byte: end as usize,
                new_end_byte: new_end as usize,
                start_position,
                old_end_position,
                new_end_position,
            });
        }
    }

    /// A range's byte offsets, clamped, with `start <= end`.
    pub fn byte_range(&self, range: Range, encoding: Encoding) -> (u32, u32) {
        let start = self.index.offset(&self.text, range.start, encoding);
        let end = self.index.offset(&self.text, range.end, encoding);
        (start.min(end), start.max(end))
    }

    /// The current overlay, if it is for the current version.
    pub fn current_overlay(&self) -> Option<Arc<Overlay>> {
        self.overlay
            .as_ref()
            .filter(|o| o.version == self.version && o.key_path == self.location.key_path)
            .cloned()
    }

    /// What an analysis of the current version needs.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            version: self.version,
            text: Arc::from(self.text.as_str()),
            index: self.index.clone(),
            tree: self.tree.clone(),
            language: self.language,
            key_path: self.location.key_path.clone(),
        }
    }
}

/// The language of a document: its file extension's ([`Language::from_path`], as the scan
/// decides, so the overlay and the map agree), else, only when its file name has no
/// extension (an untitled buffer, an extensionless script such as `bin/deploy` or
/// `.bashrc`), the editor's `languageId` ([`crate::languages::from_language_id`]). A file
/// with an extension loci does not parse (`.mm`, `.txt`) stays unparsed whatever its
/// `languageId`.
pub fn document_language(location: &Location, language_id: &str) -> Option<Language> {
    let path = location
        .path
        .as_deref()
        .and_then(|p| p.to_str())
        .unwrap_or(&location.key_path);
    if let Some(language) =
        Language::from_path(path).or_else(|| Language::from_path(&location.key_path))
    {
        return Some(language);
    }
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    // `.bashrc` has no extension: a leading dot starts the name.
    let has_extension = name.trim_start_matches('.').contains('.');
    if has_extension {
        return None;
    }
    crate::languages::from_language_id(language_id)
}

fn point((row, column): (usize, usize)) -> Point {
    Point { row, column }
}

/// Every node of `tree` in document order, one per line: its kind (named nodes bare,
/// anonymous ones quoted, `MISSING` marked), byte range and tree-sitter start and end
/// points (row, byte column), indented by depth. Two trees with the same dump have the
/// same shape and the same positions: `loci.debug.text` returns it so tests can compare
/// the incrementally reparsed tree with a fresh parse.
pub fn tree_dump(tree: &Tree) -> String {
    let mut out = String::new();
    let mut cursor = tree.walk();
    let mut depth = 0usize;
    'walk: loop {
        let n = cursor.node();
        let kind = if n.is_named() {
            n.kind().to_string()
        } else {
            format!("{:?}", n.kind())
        };
        let missing = if n.is_missing() { " MISSING" } else { "" };
        let (s, e) = (n.start_position(), n.end_position());
        out.push_str(&format!(
            "{:indent$}{kind}{missing} {}..{} ({},{})-({},{})\n",
            "",
            n.start_byte(),
            n.end_byte(),
            s.row,
            s.column,
            e.row,
            e.column,
            indent = depth * 2
        ));
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        if cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                break 'walk;
            }
            depth -= 1;
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// The location of `uri` given the workspace roots (canonical paths): the longest root
/// containing the file wins.
pub fn locate(uri: &Uri, roots: &[PathBuf]) -> Location {
    let path = file_path(uri);
    let Some(path) = path else {
        return Location {
            path: None,
            root: None,
            key_path: uri.as_str().to_string(),
        };
    };
    let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
    let root = roots
        .iter()
        .filter(|r| canonical.starts_with(r) || path.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .cloned();
    let key_path = match &root {
        Some(root) => {
            let rel = canonical
                .strip_prefix(root)
                .or_else(|_| path.strip_prefix(root))
                .unwrap_or(&path);
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        }
        None => path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.to_string_lossy().into_owned()),
    };
    Location {
        path: Some(path),
        root,
        key_path,
    }
}

/// The file path of a `file:` URI.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    uri.to_file_path().map(|p| p.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Position;

    fn doc(text: &str) -> Document {
        let location = Location {
            path: None,
            root: None,
            key_path: "a.rs".into(),
        };
        Document::new(location, "rust", text.into(), 1)
    }

    fn change(
        range: Option<((u32, u32), (u32, u32))>,
        text: &str,
    ) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: range.map(|((l0, c0), (l1, c1))| Range {
                start: Position {
                    line: l0,
                    character: c0,
                },
                end: Position {
                    line: l1,
                    character: c1,
                },
            }),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn several_changes_apply_in_sequence() {
        // B06
        let mut d = doc("ab");
        d.apply(change(Some(((0, 1), (0, 1))), "x"), Encoding::Utf16);
        d.apply(change(Some(((0, 2), (0, 2))), "y"), Encoding::Utf16);
        assert_eq!(d.text, "axyb");
        let mut d = doc("ab");
        d.apply(change(Some(((0, 0), (0, 0))), "1\n"), Encoding::Utf16);
        d.apply(change(Some(((1, 0), (1, 1))), "Z"), Encoding::Utf16);
        assert_eq!(d.text, "1\nZb");
    }

    #[test]
    fn past_the_end_ranges_clamp() {
        // B08 (a)
        let mut d = doc("a\nb\nc");
        d.apply(change(Some(((0, 0), (3, 0))), ""), Encoding::Utf16);
        assert_eq!(d.text, "");
        let mut d = doc("abc\n");
        d.apply(change(Some(((0, 1_000_000), (9, 9))), "!"), Encoding::Utf16);
        assert_eq!(d.text, "abc!");
    }

    #[test]
    fn incremental_edit_keeps_the_tree_in_step() {
        let mut d = doc("fn a() {}\n");
        let language = Language::Rust;
        let options = loci_core::AnalyzeOptions::default();
        d.tree = loci_core::analyze::parse(language, &d.text, None, &options).0;
        d.apply(change(Some(((0, 4), (0, 4))), "bc"), Encoding::Utf16);
        let (tree, _) = loci_core::analyze::parse(language, &d.text, d.tree.as_ref(), &options);
        let fresh = loci_core::analyze::parse(language, &d.text, None, &options).0;
        assert_eq!(
            tree.map(|t| t.root_node().to_sexp()),
            fresh.map(|t| t.root_node().to_sexp())
        );
    }

    /// Random edits (non-ASCII, CRLF and lone CR, ranges past the end) keep the edited
    /// tree in step: an incremental reparse equals a fresh parse after every edit.
    #[test]
    fn random_edits_reparse_like_a_fresh_parse() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(n.max(1))) as u32
        };
        let pieces = [
            "fn é() {}\n",
            "😀",
            "你好",
            "\r\n",
            "\r",
            "\n",
            "struct S;",
            "{",
            "}",
            "x",
            "// c\n",
            "",
        ];
        let options = loci_core::AnalyzeOptions::default();
        for encoding in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            let mut d = doc("fn main() {\n    let s = \"é😀\";\r\n}\rfn b() {}\n");
            d.tree = loci_core::analyze::parse(Language::Rust, &d.text, None, &options).0;
            for _ in 0..300 {
                let lines = d.index.line_count() + 1;
                let (l0, l1) = (next(lines), next(lines));
                let (c0, c1) = (next(12), next(12));
                let ((l0, c0), (l1, c1)) = if (l0, c0) <= (l1, c1) {
                    ((l0, c0), (l1, c1))
                } else {
                    ((l1, c1), (l0, c0))
                };
                let text = pieces[next(pieces.len() as u32) as usize];
                d.apply(change(Some(((l0, c0), (l1, c1))), text), encoding);
                assert_eq!(d.index, LineIndex::new(&d.text));
                let (tree, _) =
                    loci_core::analyze::parse(Language::Rust, &d.text, d.tree.as_ref(), &options);
                let fresh = loci_core::analyze::parse(Language::Rust, &d.text, None, &options).0;
                assert_eq!(
                    tree.as_ref().map(tree_dump),
                    fresh.as_ref().map(tree_dump),
                    "{encoding:?} after inserting {text:?} at ({l0},{c0})-({l1},{c1}) into {:?}",
                    d.text
                );
                d.tree = tree;
            }
        }
    }

    fn language(path: Option<&str>, key_path: &str, language_id: &str) -> Option<Language> {
        let location = Location {
            path: path.map(PathBuf::from),
            root: None,
            key_path: key_path.into(),
        };
        document_language(&location, language_id)
    }

    #[test]
    fn the_extension_decides_when_there_is_one() {
        // As the scan: a `.h` is C whatever the editor calls it; `.m` is Objective-C.
        assert_eq!(language(Some("/r/x.h"), "x.h", "cpp"), Some(Language::C));
        assert_eq!(
            language(Some("/r/a.m"), "a.m", "matlab"),
            Some(Language::ObjC)
        );
        assert_eq!(
            language(Some("/r/a.kt"), "a.kt", "plaintext"),
            Some(Language::Kotlin)
        );
        // An extension loci does not parse stays unparsed.
        assert_eq!(language(Some("/r/a.mm"), "a.mm", "objcpp"), None);
        assert_eq!(language(Some("/r/notes.txt"), "notes.txt", "lua"), None);
    }

    #[test]
    fn fault_extensionless_scripts_and_untitled_buffers_were_never_parsed() {
        // The languageId was ignored: an extensionless script or an untitled buffer got
        // no symbols in any editor.
        assert_eq!(
            language(Some("/r/bin/deploy"), "bin/deploy", "shellscript"),
            Some(Language::Bash)
        );
        assert_eq!(
            language(Some("/home/u/.bashrc"), ".bashrc", "sh"),
            Some(Language::Bash)
        );
        assert_eq!(
            language(None, "untitled:Untitled-1", "kotlin"),
            Some(Language::Kotlin)
        );
        assert_eq!(
            language(None, "untitled:Untitled-2", "hcl"),
            Some(Language::Hcl)
        );
        assert_eq!(language(None, "untitled:Untitled-3", "plaintext"), None);
    }
}

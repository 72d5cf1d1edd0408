//! Comment- and whitespace-insensitive fingerprints computed from tree-sitter trees, and
//! the plain content hash.
//!
//! One iterative preorder walk of the tree (a [`TreeCursor`], never recursion, so a
//! 100,000-deep tree cannot overflow the stack) writes a *token stream*: for every visited
//! node its kind id (2 bytes, little-endian), and for every named leaf its text
//! (4-byte little-endian length, then the bytes). Anonymous leaves (keywords, punctuation)
//! are fully described by their kind. Skipped, with their whole subtree:
//!
//! - comments: every node whose kind name contains `comment`;
//! - Python docstrings: an expression statement made of one string that is the first
//!   statement of a module, class body or function body. A docstring is documentation, so
//!   editing it is a doc change, not a code change, just like a comment above a function
//!   in other languages;
//! - nodes deeper than the depth limit (the walk reports that it hit the limit).
//!
//! Whitespace never enters the stream (it is not part of any token), except inside leaves
//! where it means something (string literals); in leaves where it is layout (`jsx_text`,
//! PHP inline `text`, C `preproc_arg`) runs of whitespace are collapsed to one space.
//!
//! Because a subtree's preorder is a contiguous slice of the file's preorder, the walk
//! records where each definition's subtree starts and ends in the stream, and each
//! fingerprint is the BLAKE3 hash of a slice: the file fingerprint hashes the whole
//! stream, a symbol's body fingerprint its subtree's slice, and its signature fingerprint
//! the slice from the definition's start to its body (the `body` field; without one, up to
//! the first token on a later line). Fingerprints are the first 8 bytes of the hash as 16
//! hex digits. Kind ids are the grammar's, so fingerprints are stable for a given grammar
//! version (a grammar upgrade may change them, like it may change the tree).

use tree_sitter::{Node, Tree, TreeCursor};

use crate::lang::LangQuery;

/// Content hash of raw file bytes: the first 16 bytes of BLAKE3, as 32 hex digits.
pub fn content_hash(bytes: &[u8]) -> String {
    let hash = blake3::hash(bytes);
    hash.to_hex()[..32].to_string()
}

/// A 16-hex-digit fingerprint (first 8 bytes of BLAKE3) of arbitrary bytes: the form of
/// every fingerprint in [`crate::FileAnalysis`] and [`crate::Symbol`].
pub fn short_hash(bytes: &[u8]) -> String {
    let hash = blake3::hash(bytes);
    hash.to_hex()[..16].to_string()
}

/// Fingerprint used when a file could not be parsed (parse timeout): a hash of the raw
/// text, domain-separated from tree fingerprints. Any byte change, comments and whitespace
/// included, changes it.
pub fn raw_text_fingerprint(text: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"loci raw text\0");
    hasher.update(text.as_bytes());
    hasher.finalize().to_hex()[..16].to_string()
}

/// A definition whose stream slices the walk records. `body` is the node whose start ends
/// the signature, if the definition has one.
pub(crate) struct DefProbe<'tree> {
    pub(crate) node: Node<'tree>,
    pub(crate) body: Option<Node<'tree>>,
}

/// Where a definition's pieces lie in the token stream, as byte offsets into it.
/// All zero for a definition the walk never reached (below the depth limit).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DefMarks {
    pub(crate) entry: usize,
    pub(crate) signature_end: usize,
    pub(crate) exit: usize,
}

/// A comment the walk passed, for doc extraction: its byte range and rows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CommentSpan {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) start_row: usize,
    pub(crate) end_row: usize,
}

/// What one walk of a tree produced.
pub(crate) struct Walk {
    /// The token stream (see the module docs).
    pub(crate) stream: Vec<u8>,
    /// Per probe (same order as given), its slices of the stream.
    pub(crate) marks: Vec<DefMarks>,
    /// Comments, in document order.
    pub(crate) comments: Vec<CommentSpan>,
    /// ERROR and MISSING nodes visited.
    pub(crate) error_nodes: u32,
    /// Whether some subtree was cut at the depth limit.
    pub(crate) too_deep: bool,
}

struct Frame {
    kind: u16,
    /// No named, non-comment child entered yet (Python docstring detection).
    first_statement_pending: bool,
}

/// Walks `tree` once (see the module docs). `probes` must be sorted by start byte, outer
/// definitions before the ones they contain.
pub(crate) fn walk(
    tree: &Tree,
    text: &str,
    tables: &LangQuery,
    probes: &[DefProbe<'_>],
    max_depth: u32,
    mut stream: Vec<u8>,
) -> Walk {
    stream.clear();
    let bytes = text.as_bytes();
    let py = tables.py;
    let is_python = py.module != u16::MAX;
    let mut marks = vec![DefMarks::default(); probes.len()];
    let mut opened = vec![false; probes.len()];
    let mut comments = Vec::new();
    let mut error_nodes = 0u32;
    let mut too_deep = false;
    // Probes not yet entered start at `next_probe`; `open` holds entered, not yet exited
    // probes (innermost last); `pending_signature` those whose signature is still open.
    let mut next_probe = 0usize;
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut pending_signature: Vec<usize> = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut cursor: TreeCursor<'_> = tree.walk();

    loop {
        // ---- enter cursor.node()
        let node = cursor.node();
        let kind = node.kind_id();
        let mut skip = false;
        if tables
            .is_comment
            .get(kind as usize)
            .copied()
            .unwrap_or(false)
        {
            skip = true;
            let start = node.start_position();
            let end = node.end_position();
            // Line comments of some grammars (Rust) include their newline.
            let end_row = if end.column == 0 && end.row > start.row {
                end.row - 1
            } else {
                end.row
            };
            comments.push(CommentSpan {
                start: node.start_byte(),
                end: node.end_byte(),
                start_row: start.row,
                end_row,
            });
        } else if node.is_named() {
            if is_python
                && kind == py.expression_statement
                && let Some(parent) = frames.last()
            {
                skip = parent.first_statement_pending
                    && is_docstring_statement(node, parent.kind, &frames, py);
            }
            if let Some(parent) = frames.last_mut() {
                parent.first_statement_pending = false;
            }
        }
        if !skip {
            if node.is_error() || node.is_missing() {
                error_nodes = error_nodes.saturating_add(1);
            }
            // Close signatures that end at this node, open probes that start here.
            if !pending_signature.is_empty() {
                let row = node.start_position().row;
                pending_signature.retain(|&i| {
                    let probe = &probes[i];
                    let ends = match probe.body {
                        Some(body) => body.id() == node.id(),
                        None => row > probe.node.start_position().row,
                    };
                    if ends {
                        marks[i].signature_end = stream.len();
                    }
                    !ends
                });
            }
            let start = node.start_byte();
            while next_probe < probes.len() && probes[next_probe].node.start_byte() < start {
                next_probe += 1;
            }
            let mut j = next_probe;
            while j < probes.len() && probes[j].node.start_byte() == start {
                if !opened[j] && probes[j].node.id() == node.id() {
                    opened[j] = true;
                    marks[j].entry = stream.len();
                    open.push((j, node.id()));
                    pending_signature.push(j);
                }
                j += 1;
            }
            stream.extend_from_slice(&kind.to_le_bytes());

            let at_limit = frames.len() as u64 >= u64::from(max_depth);
            if !at_limit && cursor.goto_first_child() {
                frames.push(Frame {
                    kind,
                    first_statement_pending: true,
                });
                continue;
            }
            if node.child_count() > 0 {
                // Cut at the depth limit.
                too_deep = true;
            } else if node.is_named() {
                let text = bytes
                    .get(node.start_byte()..node.end_byte())
                    .unwrap_or_default();
                if tables
                    .collapse_ws
                    .get(kind as usize)
                    .copied()
                    .unwrap_or(false)
                {
                    push_collapsed(&mut stream, text);
                } else {
                    stream.extend_from_slice(&(text.len() as u32).to_le_bytes());
                    stream.extend_from_slice(text);
                }
            }
        }
        // ---- exit cursor.node(), then move on to the next sibling or up.
        let mut exiting = node.id();
        loop {
            while let Some(&(probe, id)) = open.last() {
                if id != exiting {
                    break;
                }
                open.pop();
                marks[probe].exit = stream.len();
                if let Some(pos) = pending_signature.iter().position(|&i| i == probe) {
                    pending_signature.remove(pos);
                    marks[probe].signature_end = stream.len();
                }
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Walk {
                    stream,
                    marks,
                    comments,
                    error_nodes,
                    too_deep,
                };
            }
            frames.pop();
            exiting = cursor.node().id();
        }
    }
}

/// Whether the Python `expression_statement` `node` (whose parent has kind
/// `parent_kind`) is a docstring: a lone string, first statement of a module or of a
/// class or function body.
fn is_docstring_statement(
    node: Node<'_>,
    parent_kind: u16,
    frames: &[Frame],
    py: crate::lang::PythonKinds,
) -> bool {
    let in_body = if parent_kind == py.module {
        true
    } else if parent_kind == py.block {
        frames.len() >= 2 && {
            let grand = frames[frames.len() - 2].kind;
            grand == py.function_definition || grand == py.class_definition
        }
    } else {
        false
    };
    in_body
        && node.named_child_count() == 1
        && node
            .named_child(0)
            .is_some_and(|c| c.kind_id() == py.string)
}

/// Appends a length-prefixed copy of `text` with whitespace runs collapsed to one space
/// and leading/trailing whitespace removed.
fn push_collapsed(stream: &mut Vec<u8>, text: &[u8]) {
    let len_at = stream.len();
    stream.extend_from_slice(&0u32.to_le_bytes());
    let body_at = stream.len();
    let mut pending_space = false;
    for &b in text {
        if b.is_ascii_whitespace() {
            pending_space = stream.len() > body_at;
        } else {
            if pending_space {
                stream.push(b' ');
                pending_space = false;
            }
            stream.push(b);
        }
    }
    let len = (stream.len() - body_at) as u32;
    stream[len_at..body_at].copy_from_slice(&len.to_le_bytes());
}

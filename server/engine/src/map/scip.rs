//! Precise references from a SCIP index (`loci scan --scip FILE`): a compiler-grade
//! indexer (`rust-analyzer scip`, `scip-python`, `scip-typescript`, `scip-java`) says
//! which definition every identifier names; loci writes those edges into its map as
//! stated references (confidence 1.0), replacing its name-based guesses at the same places.
//!
//! Rules:
//! - The index must be of this workspace: its `project_root` is the workspace root or a
//!   folder inside it (a crate of a monorepo); its documents' paths are relative to it.
//! - A document is imported only when its file is in the map with the content the index
//!   saw: the file is not newer than the index file, every occurrence lies inside its
//!   text, and every definition's text is the name the index gives it. Otherwise it is
//!   reported as stale and its references stay name-based.
//! - A definition maps to the loci symbol whose name starts at the same place; a reference
//!   to it becomes an edge to that symbol. A reference to anything else (another crate,
//!   the standard library, a local variable, a field loci does not map) becomes "no target"
//!   where loci had a reference of its own at that place (its guess was wrong), and is not
//!   stored otherwise. A reference into the map where loci had no reference (a macro's
//!   arguments, a function passed as a value) is added.
//! - Nothing is written until the whole index was read and checked, then in one
//!   transaction: a malformed, foreign or oversized index changes nothing.
//! - After every scan that changed the map, [`reconcile`] keeps the edges that still hold
//!   and drops the others (`loci_store::scip`): an edge holds while the file it is in and
//!   the file of its target are unchanged since the import.

use std::collections::{HashMap, HashSet};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use loci_core::SymbolKind;
use loci_store::Store;
use loci_store::scip::{self as stored, Document as StoredDocument, Edge};
use protobuf::CodedInputStream;
use protobuf::rt::WireType;
use scip::types::{Document, Metadata, PositionEncoding, SymbolRole};
use serde::Serialize;

use crate::{EngineError, Result};

/// The largest index `loci scan --scip` reads: 1 GiB. Documents are read one at a time and
/// only their occurrences are kept, so memory grows with the occurrences, not the file;
/// above this the index is refused before anything is read.
pub const MAX_INDEX_BYTES: u64 = 1 << 30;

/// Paths listed per category of [`ScipImport`] (the rest are counted).
const EXAMPLES: usize = 20;

/// What `loci scan --scip FILE` imported.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScipImport {
    /// The index file.
    pub index: String,
    /// The indexer, `name version`.
    pub tool: String,
    /// The folder the index is of, relative to the workspace (`.` for the root).
    pub project_root: String,
    /// Documents in the index.
    pub documents: u64,
    /// Documents imported: their files' references now come from the index.
    pub covered: u64,
    /// Documents whose file is not in the map (not scanned, ignored, another language).
    pub not_in_map: u64,
    /// Up to 20 of them.
    pub not_in_map_examples: Vec<String>,
    /// Documents not imported because their file changed since the index was written.
    pub stale: Vec<StaleDocument>,
    /// Definitions of the covered documents that are a loci symbol.
    pub definitions: u64,
    /// Definitions loci has no symbol for (fields, variants, `impl` blocks, parameters).
    pub definitions_unmapped: u64,
    /// Edges recorded: references of covered files, each with its target or with none.
    pub references: u64,
    /// Of those, where loci had resolved the same target.
    pub confirmed: u64,
    /// Where loci had resolved another target (its guess was wrong).
    pub corrected: u64,
    /// Where loci had a reference and no target (the index resolved it).
    pub resolved: u64,
    /// Where the target is outside the map and loci had guessed one inside it (cleared).
    pub cleared: u64,
    /// Where the target is outside the map and loci had no target either.
    pub external: u64,
    /// Where loci had no reference at all (added to the map).
    pub added: u64,
    /// References to local variables and parameters: not edges of the map.
    pub locals: u64,
    /// References to definitions in documents not imported (stale, not in the map): left
    /// to loci's own resolution.
    pub unchecked: u64,
    /// Milliseconds spent, reading to writing.
    pub duration_ms: u64,
}

/// A document of an index that was not imported, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StaleDocument {
    /// Repo-relative path.
    pub path: String,
    /// Why (`modified after the index was written`, `line 12 reads "foo", the index says "bar"`).
    pub reason: String,
}

/// What a scan did to the map's SCIP edges ([`reconcile`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ScipCoverage {
    /// Files whose references come from a SCIP index, after this scan.
    pub files: u64,
    /// Edges the index states in them.
    pub edges: u64,
    /// Files that changed since the import: their references are name-based again.
    pub dropped: Vec<String>,
    /// Edges written again into the map after the scan had re-resolved them by name.
    pub restored: u64,
}

/// One occurrence as read, before its document is checked.
struct RawOccurrence {
    /// `[start line, start char, end line, end char]` in the document's encoding.
    range: [i32; 4],
    /// Index into the interned symbols; [`LOCAL`] for a local symbol.
    symbol: u32,
    /// `SymbolRole` bits.
    roles: i32,
}

/// The symbol of every local occurrence: locals are never edges of the map.
const LOCAL: u32 = u32::MAX;

/// A document as read: its occurrences, until the metadata is known and its file checked.
struct RawDocument {
    relative_path: String,
    encoding: PositionEncoding,
    occurrences: Vec<RawOccurrence>,
}

/// An occurrence placed in its file's text.
struct Placed {
    start: u32,
    end: u32,
    line: u32,
    column: u32,
    symbol: u32,
    roles: i32,
    text: String,
    /// The next bytes after it open a call: `(`, or `::<` (a turbofish).
    called: bool,
}

/// A covered document, checked.
struct Checked {
    path: String,
    file_id: i64,
    content_hash: String,
    occurrences: Vec<Placed>,
}

/// Reads the SCIP index at `index` and writes its edges into the map of `root`.
///
/// Errors: [`EngineError::Io`] when the index cannot be read;
/// [`EngineError::InvalidArgument`] (argument `scip`) when it is larger than `max_bytes`,
/// is not a SCIP index, or is of a folder outside `root`. Nothing is written then.
pub fn import(root: &Path, store: &mut Store, index: &Path, max_bytes: u64) -> Result<ScipImport> {
    let started = Instant::now();
    let io = |source| EngineError::Io {
        path: index.to_path_buf(),
        source,
    };
    let invalid = |message: String| EngineError::InvalidArgument {
        name: "scip".into(),
        message: format!("{}: {message}", index.display()),
    };
    let file = std::fs::File::open(index).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.len() > max_bytes {
        return Err(invalid(format!(
            "the index is {} bytes, more than the {max_bytes} bytes loci reads; index a \
             smaller part of the repository (a crate, a package) and import each",
            meta.len()
        )));
    }
    let written = meta.modified().map_err(io)?;
    let (metadata, documents, symbols) = read_index(file).map_err(|e| {
        invalid(format!(
            "not a SCIP index ({e}); write one with `rust-analyzer scip .`, `scip-python \
             index`, `scip-typescript index` or `scip-java index`"
        ))
    })?;
    let Some(metadata) = metadata else {
        return Err(invalid(
            "not a SCIP index: it has no metadata (an empty or truncated file?)".into(),
        ));
    };
    let prefix = project_prefix(root, &metadata.project_root).map_err(invalid)?;
    let tool = metadata
        .tool_info
        .as_ref()
        .map(|t| format!("{} {}", t.name, t.version).trim().to_string())
        .unwrap_or_default();
    let mut report = ScipImport {
        index: index.display().to_string(),
        tool: tool.clone(),
        project_root: if prefix.is_empty() {
            ".".into()
        } else {
            prefix.trim_end_matches('/').to_string()
        },
        documents: documents.len() as u64,
        ..ScipImport::default()
    };
    let names: Vec<Option<String>> = symbols.iter().map(|s| symbol_name(s)).collect();

    // Check each document against its file and place its occurrences.
    let conn = store.conn();
    let (checked, unchecked) =
        check_documents(conn, root, &prefix, documents, written, &names, &mut report)?;
    let defined = definitions(conn, &checked, &mut report)?;
    let edges = edges(conn, &checked, &unchecked, &defined, &mut report)?;
    let covered = write_documents(store, &checked, &edges, &tool)?;
    report.covered = covered;
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// An index symbol's definition in the map: its key, symbol id, file id and kind.
type Defined = (String, i64, i64, SymbolKind);

/// Each document checked against its file in the map, its occurrences placed; a
/// document whose file is not in the map, or changed since the index was written, is
/// reported and skipped. Returns the documents checked and the symbols defined in those
/// skipped (what refers to them is not known).
fn check_documents(
    conn: &loci_store::rusqlite::Connection,
    root: &Path,
    prefix: &str,
    documents: Vec<RawDocument>,
    written: SystemTime,
    names: &[Option<String>],
    report: &mut ScipImport,
) -> Result<(Vec<Checked>, HashSet<u32>)> {
    let mut checked: Vec<Checked> = Vec::new();
    // Symbols defined in documents not imported: what refers to them is not known.
    let mut unchecked: HashSet<u32> = HashSet::new();
    let mut skip = |doc: &RawDocument| {
        unchecked.extend(
            doc.occurrences
                .iter()
                .filter(|o| o.symbol != LOCAL && o.roles & SymbolRole::Definition as i32 != 0)
                .map(|o| o.symbol),
        )
    };
    for doc in documents {
        let path = format!("{prefix}{}", doc.relative_path);
        let Some((file_id, content_hash)) = stored::file(conn, &path)? else {
            skip(&doc);
            report.not_in_map += 1;
            if report.not_in_map_examples.len() < EXAMPLES {
                report.not_in_map_examples.push(path);
            }
            continue;
        };
        match check_document(root, &path, &doc, &content_hash, written, names) {
            Ok(occurrences) => checked.push(Checked {
                path,
                file_id,
                content_hash,
                occurrences,
            }),
            Err(reason) => {
                skip(&doc);
                report.stale.push(StaleDocument { path, reason })
            }
        }
    }
    Ok((checked, unchecked))
}

/// Definitions: an index symbol → the loci symbol named at the same place.
fn definitions(
    conn: &loci_store::rusqlite::Connection,
    checked: &[Checked],
    report: &mut ScipImport,
) -> Result<HashMap<u32, Defined>> {
    let mut defined: HashMap<u32, Defined> = HashMap::new();
    for doc in checked {
        let at = stored::symbols_by_name_place(conn, doc.file_id)?;
        for o in &doc.occurrences {
            if o.symbol == LOCAL || o.roles & SymbolRole::Definition as i32 == 0 {
                continue;
            }
            match at.get(&(o.line, o.column)) {
                Some((id, key, kind)) => {
                    report.definitions += 1;
                    defined.insert(
                        o.symbol,
                        (key.clone(), *id, doc.file_id, SymbolKind::parse(kind)),
                    );
                }
                None => report.definitions_unmapped += 1,
            }
        }
    }
    Ok(defined)
}

/// References: an edge per place, counted in the report by what it does to the map's
/// own reference there (confirmed, corrected, resolved, cleared, external, added).
fn edges(
    conn: &loci_store::rusqlite::Connection,
    checked: &[Checked],
    unchecked: &HashSet<u32>,
    defined: &HashMap<u32, Defined>,
    report: &mut ScipImport,
) -> Result<Vec<Edge>> {
    let mut edges: Vec<Edge> = Vec::new();
    for doc in checked {
        let refs = stored::refs_by_place(conn, doc.file_id)?;
        for o in &doc.occurrences {
            if o.roles & SymbolRole::Definition as i32 != 0 {
                continue;
            }
            let own = refs.get(&o.start);
            if o.symbol == LOCAL {
                report.locals += 1;
                if own.is_none() {
                    continue;
                }
            }
            if unchecked.contains(&o.symbol) {
                report.unchecked += 1;
                continue;
            }
            let target = defined.get(&o.symbol).filter(|_| o.symbol != LOCAL);
            let kind = match (own, target) {
                (Some((kind, old)), Some((_, id, ..))) => {
                    match old {
                        Some(old) if old == id => report.confirmed += 1,
                        Some(_) => report.corrected += 1,
                        None => report.resolved += 1,
                    }
                    kind.clone()
                }
                (Some((kind, old)), None) => {
                    if old.is_some() {
                        report.cleared += 1;
                    } else {
                        report.external += 1;
                    }
                    kind.clone()
                }
                // An import statement's names are the imports' business, not an edge.
                (None, Some(_)) if o.roles & SymbolRole::Import as i32 != 0 => continue,
                (None, Some((.., kind))) => {
                    report.added += 1;
                    added_kind(*kind, o.called).to_string()
                }
                (None, None) => continue,
            };
            report.references += 1;
            edges.push(Edge {
                file_id: doc.file_id,
                start_byte: o.start,
                end_byte: o.end,
                line: o.line,
                column: o.column,
                name: o.text.clone(),
                kind,
                target_key: target.map(|(key, ..)| key.clone()),
                target_file_id: target.map(|(_, _, file, _)| *file),
                added: own.is_none(),
            });
        }
    }
    Ok(edges)
}

/// Replaces the stored documents and edges of the files checked, in one transaction;
/// returns how many files the index now covers.
fn write_documents(
    store: &mut Store,
    checked: &[Checked],
    edges: &[Edge],
    tool: &str,
) -> Result<u64> {
    let imported_at = crate::envelope::now_rfc3339();
    let docs: Vec<StoredDocument> = checked
        .iter()
        .map(|d| StoredDocument {
            file_id: d.file_id,
            content_hash: d.content_hash.clone(),
            tool: tool.to_string(),
            imported_at: imported_at.clone(),
        })
        .collect();
    let ids: Vec<i64> = checked.iter().map(|d| d.file_id).collect();
    tracing::debug!(
        covered = ids.len(),
        paths = ?checked.iter().take(3).map(|d| &d.path).collect::<Vec<_>>(),
        "importing scip documents"
    );
    store.write(|tx| {
        let touched = stored::drop_documents(tx, &ids)?;
        stored::insert_documents(tx, &docs, edges)?;
        stored::apply(tx, &ids, &touched)?;
        Ok(())
    })?;
    Ok(ids.len() as u64)
}

/// After a scan that changed the map: drops the coverage of files that changed since the
/// import and writes again into `refs` the edges the scan re-resolved by name. `None` when
/// no file is covered (nothing to do).
pub fn reconcile(store: &mut Store) -> Result<Option<ScipCoverage>> {
    if !stored::has_documents(store.conn())? {
        return Ok(None);
    }
    let stale = stored::stale_documents(store.conn())?;
    let stale_ids: Vec<i64> = stale.iter().map(|(id, _)| *id).collect();
    let applied = store.write(|tx| {
        let touched = stored::drop_documents(tx, &stale_ids)?;
        let covered = stored::document_ids(tx)?;
        stored::apply(tx, &covered, &touched)
    })?;
    let (files, edges) = stored::coverage(store.conn())?;
    Ok(Some(ScipCoverage {
        files,
        edges,
        dropped: stale.into_iter().map(|(_, path)| path).collect(),
        restored: applied.updated + applied.inserted,
    }))
}

/// Reads an index one document at a time: its metadata, its documents' occurrences, and
/// the symbols they name (interned; the occurrences hold their index).
fn read_index(
    file: std::fs::File,
) -> protobuf::Result<(Option<Metadata>, Vec<RawDocument>, Vec<String>)> {
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut input = CodedInputStream::new(&mut reader);
    let mut metadata = None;
    let mut documents = Vec::new();
    let mut interned: HashMap<String, u32> = HashMap::new();
    let mut symbols: Vec<String> = Vec::new();
    // `Index`: 1 metadata, 2 documents, 3 external symbols (not needed: a symbol outside
    // the documents is outside the map).
    while let Some(tag) = input.read_raw_tag_or_eof()? {
        let (field, wire) = (tag >> 3, tag & 7);
        let Some(wire) = WireType::new(wire) else {
            return Err(protobuf::Error::from(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("unknown wire type {wire} of field {field}"),
            )));
        };
        match (field, wire) {
            (1, WireType::LengthDelimited) => metadata = Some(input.read_message::<Metadata>()?),
            (2, WireType::LengthDelimited) => {
                let doc: Document = input.read_message()?;
                let encoding = doc
                    .position_encoding
                    .enum_value()
                    .unwrap_or(PositionEncoding::UnspecifiedPositionEncoding);
                let occurrences = doc
                    .occurrences
                    .into_iter()
                    .filter_map(|o| {
                        let range = match o.range[..] {
                            [l, s, e] => [l, s, l, e],
                            [l, s, el, e] => [l, s, el, e],
                            _ => return None,
                        };
                        let symbol = if o.symbol.is_empty() {
                            return None;
                        } else if o.symbol.starts_with("local ") {
                            LOCAL
                        } else if let Some(i) = interned.get(&o.symbol) {
                            *i
                        } else {
                            let i = symbols.len() as u32;
                            interned.insert(o.symbol.clone(), i);
                            symbols.push(o.symbol);
                            i
                        };
                        Some(RawOccurrence {
                            range,
                            symbol,
                            roles: o.symbol_roles,
                        })
                    })
                    .collect();
                documents.push(RawDocument {
                    relative_path: doc.relative_path,
                    encoding,
                    occurrences,
                });
            }
            (_, wire) => input.skip_field(wire)?,
        }
    }
    Ok((metadata, documents, symbols))
}

/// The prefix that makes the index's document paths repo-relative: `""` when its
/// `project_root` is `root`, `crates/foo/` when it is that folder of it.
fn project_prefix(root: &Path, project_root: &str) -> std::result::Result<String, String> {
    let Some(path) = project_root.strip_prefix("file://") else {
        return Err(format!(
            "its project root `{project_root}` is not a file:// URI; not a SCIP index of a \
             folder on this machine"
        ));
    };
    let path = PathBuf::from(percent_decode(path));
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (root_c, path_c) = (canonical(root), canonical(&path));
    match path_c.strip_prefix(&root_c) {
        Ok(rel) => {
            let rel = rel.to_string_lossy().replace('\\', "/");
            Ok(if rel.is_empty() {
                rel
            } else {
                format!("{rel}/")
            })
        }
        Err(_) => Err(format!(
            "the index is of {}, which is not this workspace ({}) nor inside it; run the \
             indexer in this workspace",
            path.display(),
            root.display()
        )),
    }
}

/// `%20` → ` ` in a URI path (SCIP writers percent-encode paths with spaces).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The name a symbol's last descriptor gives it (`block_on` of
/// `rust-analyzer cargo tokio 1.0 runtime/Runtime#block_on().`), when it has one.
fn symbol_name(symbol: &str) -> Option<String> {
    let parsed = scip::symbol::parse_symbol(symbol).ok()?;
    let last = parsed.descriptors.last()?;
    (!last.name.is_empty()).then(|| last.name.clone())
}

/// Places a document's occurrences in its file's text and checks the file is the one the
/// index saw; `Err` says why not.
fn check_document(
    root: &Path,
    path: &str,
    doc: &RawDocument,
    content_hash: &str,
    index_written: SystemTime,
    names: &[Option<String>],
) -> std::result::Result<Vec<Placed>, String> {
    let full = root.join(path);
    let bytes = std::fs::read(&full).map_err(|e| format!("cannot read it: {e}"))?;
    if loci_core::fingerprint::content_hash(&bytes) != content_hash {
        return Err("changed since the last scan: scan again, then import".into());
    }
    if let Ok(modified) = std::fs::metadata(&full).and_then(|m| m.modified())
        // Not newer, nor written in the same clock tick (file times are coarse).
        && modified >= index_written
    {
        return Err("modified after the index was written: index again".into());
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut line_starts = vec![0usize];
    line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let line_text = |line: usize| -> Option<&str> {
        let start = *line_starts.get(line)?;
        let end = line_starts
            .get(line + 1)
            .map(|e| e - 1)
            .unwrap_or(text.len());
        Some(text[start..end].trim_end_matches('\r'))
    };
    let mut placed = Vec::with_capacity(doc.occurrences.len());
    for o in &doc.occurrences {
        let [l, s, el, e] = o.range;
        // Identifiers are on one line; a multi-line occurrence is no identifier of the map.
        if l != el || l < 0 || s < 0 || e < s {
            continue;
        }
        let line = l as usize;
        let Some(lt) = line_text(line) else {
            return Err(format!(
                "the index has line {} and the file {} lines: index again",
                line + 1,
                line_starts.len()
            ));
        };
        let (Some(sb), Some(eb)) = (
            to_byte(lt, s as usize, doc.encoding),
            to_byte(lt, e as usize, doc.encoding),
        ) else {
            return Err(format!(
                "line {} is shorter than the index says: index again",
                line + 1
            ));
        };
        let word = &lt[sb..eb];
        if o.roles & SymbolRole::Definition as i32 != 0
            && o.symbol != LOCAL
            && let Some(Some(name)) = names.get(o.symbol as usize)
            && name != word
            && !word.is_empty()
            && word.chars().all(|c| c.is_alphanumeric() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            return Err(format!(
                "line {} reads `{word}` where the index defines `{name}`: index again",
                line + 1
            ));
        }
        let rest = &lt[eb..];
        let start = line_starts[line] + sb;
        placed.push(Placed {
            start: start as u32,
            end: (start + eb - sb) as u32,
            line: line as u32,
            column: sb as u32,
            symbol: o.symbol,
            roles: o.roles,
            text: word.to_string(),
            called: rest.starts_with('(') || rest.starts_with("::<"),
        });
    }
    Ok(placed)
}

/// The byte offset in `line` of a column counted in `encoding`'s units, if it is inside
/// the line (on a character boundary). An unspecified encoding is UTF-16's, LSP's default.
fn to_byte(line: &str, column: usize, encoding: PositionEncoding) -> Option<usize> {
    use loci_core::position::Encoding;
    let encoding = match encoding {
        PositionEncoding::UTF8CodeUnitOffsetFromLineStart => Encoding::Utf8,
        PositionEncoding::UTF32CodeUnitOffsetFromLineStart => Encoding::Utf32,
        PositionEncoding::UTF16CodeUnitOffsetFromLineStart
        | PositionEncoding::UnspecifiedPositionEncoding => Encoding::Utf16,
    };
    encoding.byte_offset(line, u32::try_from(column).ok()?)
}

/// The kind of a reference the import adds (loci had none there): a call when it names a
/// function or method and a call opens after it, a type when it names a type.
fn added_kind(kind: SymbolKind, called: bool) -> &'static str {
    use SymbolKind as K;
    match kind {
        K::Function | K::Method if called => "call",
        K::Class | K::Struct | K::Enum | K::Union | K::Trait | K::Interface | K::Type => "type",
        _ => "other",
    }
}

//! Reading code through the map: `callees` (a definition's outgoing calls), `outline` (a
//! file's definitions) and `source` (a definition's text, with the memory about it and
//! whether that memory is stale). The questions agents ask of peers' tools (codanna's
//! `get_calls`, Serena's `get_symbols_overview` and `find_symbol` with `include_body`,
//! codebase-memory-mcp's `get_code_snippet`), each one engine operation.

use loci_store::map::{self, RefHit, SymbolHit};
use loci_store::memory as mem;
use serde::Serialize;

use crate::{EngineError, Envelope, Result, Workspace};

/// Lines of a definition a `source` answer holds at most; the rest is counted
/// (`Source::lines_omitted`).
pub const SOURCE_LINES: u32 = 400;

/// Bytes of a memory page's body a `source` answer holds at most (`show` returns it whole).
pub const MEMORY_EXCERPT_BYTES: usize = 1_200;

/// Other definitions of the same name a `source` answer names.
const OTHERS_NAMED: usize = 10;

/// The outgoing calls of the definitions a name matched.
#[derive(Clone, Debug, Serialize)]
pub struct Callees {
    /// The definitions the name matched, by path and line, at most the listing's limit
    /// (the calls are those of all of them).
    pub sources: Vec<SymbolHit>,
    /// How many definitions the name matched.
    pub sources_total: u64,
    /// The calls written inside them (nested definitions included), by definition, line
    /// and column: `target_key` is what a call resolved to, `None` when unresolved or
    /// resolved below `min_confidence` (a guess: [`Callees::guesses`]).
    pub calls: Vec<RefHit>,
    /// The least confidence a target is shown at.
    pub min_confidence: f64,
    /// Calls listed whose target was a guess below `min_confidence`, shown unresolved.
    pub guesses: u64,
}

/// A file's definitions, in document order.
#[derive(Clone, Debug, Serialize)]
pub struct Outline {
    /// The file, as the map names it.
    pub path: String,
    /// Its language, as the scan detected it.
    pub language: Option<String>,
    /// Its definitions listed, in document order; `depth` of each is the count of `.` in
    /// its qualified name (0: top level).
    pub symbols: Vec<OutlineEntry>,
    /// How many definitions the file has.
    pub total: u64,
}

/// One definition of an outline.
#[derive(Clone, Debug, Serialize)]
pub struct OutlineEntry {
    /// Nesting depth: 0 for a top-level definition, 1 for a member of one, …
    pub depth: u32,
    /// The definition.
    #[serde(flatten)]
    pub symbol: SymbolHit,
}

/// A definition's source text, with the memory about it.
#[derive(Clone, Debug, Serialize)]
pub struct Source {
    /// The definition shown: the first the name matched (exact matches first).
    pub symbol: SymbolHit,
    /// Keys of other definitions the name matched (at most 10; `others_total` counts
    /// them): pass one as `name` to see it.
    pub others: Vec<String>,
    /// How many other definitions the name matched.
    pub others_total: u64,
    /// The definition's lines as the file on disk holds them now, from `symbol.line`
    /// (zero-based) on, at most [`SOURCE_LINES`].
    pub text: String,
    /// Lines of the definition not in `text`.
    pub lines_omitted: u32,
    /// Memory about it: the page of its file, then pages with a claim resolved to it.
    pub memory: Vec<MemoryNote>,
}

/// A memory page's current revision, as a `source` answer shows it.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryNote {
    /// The page's subject (`show` it to read it whole).
    pub subject: String,
    /// The revision's version.
    pub version: i64,
    /// Who wrote it.
    pub author: String,
    /// When (RFC 3339).
    pub created_at: String,
    /// Its body, at most [`MEMORY_EXCERPT_BYTES`] (cut at a line end where one is near).
    pub body: String,
    /// Whether `body` was cut.
    pub cut: bool,
}

impl Workspace {
    /// The calls written inside the definitions `symbol` names (as
    /// [`Workspace::callers`] names them: a name, qualified name, key, or a dotted name as
    /// code spells it), at most `limit` listed (0: all), by definition then line; `limits`
    /// counts the calls.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty name.
    pub fn callees(
        &self,
        symbol: &str,
        limit: u32,
        min_confidence: f64,
    ) -> Result<Envelope<Callees>> {
        self.store.read(|| {
            let written = super::query::non_empty("symbol", symbol)?;
            let super::Edges { min_confidence, .. } = super::Edges {
                min_confidence,
                ..super::Edges::default()
            }
            .checked()?;
            let conn = self.store.conn();
            let (mut sources, sources_total) =
                self.lookup_as_written(written, super::query::LIST_LIMIT)?;
            // A member inside a matched class is read with the class.
            sources
                .dedup_by(|b, a| a.path == b.path && a.line <= b.line && b.end_line <= a.end_line);
            let mut calls: Vec<RefHit> = Vec::new();
            let mut total = 0u64;
            for s in &sources {
                let room = if limit == 0 {
                    u32::MAX
                } else {
                    limit.saturating_sub(calls.len() as u32).max(1)
                };
                let (hits, n) = map::calls_within(conn, &s.path, s.line, s.end_line, room)?;
                total += n;
                if limit == 0 || calls.len() < limit as usize {
                    calls.extend(hits);
                }
            }
            if limit > 0 {
                calls.truncate(limit as usize);
                sources.truncate(limit as usize);
            }
            // A target below the confidence asked is a name matched, not a call's target
            // (`s.decode()` is no `codecs` decoder's): shown unresolved, as `callers`
            // leaves such calls out.
            let mut guesses = 0u64;
            for call in calls
                .iter_mut()
                .filter(|c| c.target_key.is_some() && c.confidence < min_confidence)
            {
                call.target_key = None;
                guesses += 1;
            }
            let paths = sources.iter().map(|s| s.path.clone()).collect();
            let listed = calls.len() as u64;
            let mut env = self.envelope(
                Callees {
                    sources,
                    sources_total,
                    calls,
                    min_confidence,
                    guesses,
                },
                paths,
            )?;
            env.limits = crate::envelope::Limits {
                budget: (limit > 0).then_some(u64::from(limit)),
                used: listed,
                truncated: total > listed,
                omitted: total - listed,
            };
            if sources_total == 0 {
                self.note_unknown_symbol(&mut env, written)?;
            }
            Ok(env)
        })
    }

    /// The definitions of the mapped file `path` (or the module as code imports it:
    /// `json.decoder`, a package's folder: [`Workspace::file_or_module`]), in document order, at most `limit` (0: all); `limits` counts them.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty path or one outside the
    /// workspace; [`EngineError::NotFound`] when the map has no such file (a folder is
    /// named as one).
    pub fn outline(&self, path: &str, limit: u32) -> Result<Envelope<Outline>> {
        self.store.read(|| {
            let path = match self.file_or_module(path) {
                // A folder no package's file is: say what outline takes (`map_path` speaks
                // of imports).
                Err(EngineError::NotFound(m)) if m.contains("is a folder") => {
                    return Err(EngineError::NotFound(m.replace(
                        "the map records imports per file",
                        "outline takes a file",
                    )));
                }
                other => other?,
            };
            let conn = self.store.conn();
            let language = map::file_language(conn, &path)?;
            let all = map::symbols_in_file(conn, &path)?;
            let total = all.len() as u64;
            let keep = if limit == 0 {
                all.len()
            } else {
                limit as usize
            };
            let symbols: Vec<OutlineEntry> = all
                .into_iter()
                .take(keep)
                .map(|symbol| OutlineEntry {
                    depth: symbol.qualified_name.matches('.').count() as u32,
                    symbol,
                })
                .collect();
            let listed = symbols.len() as u64;
            let mut env = self.envelope(
                Outline {
                    path: path.clone(),
                    language,
                    symbols,
                    total,
                },
                vec![path],
            )?;
            env.limits = crate::envelope::Limits {
                budget: (limit > 0).then_some(u64::from(limit)),
                used: listed,
                truncated: total > listed,
                omitted: total - listed,
            };
            Ok(env)
        })
    }

    /// The source text of the definition `name` names (the first match, exact matches
    /// first; the others are named), read from the file on disk, with the memory about it:
    /// its file's page and the pages with a claim resolved to it, whose staleness is in
    /// `stale_warnings`.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty name;
    /// [`EngineError::NotFound`] when no definition has that name (with the nearest
    /// names), [`EngineError::Io`] when its file cannot be read.
    pub fn source(&self, name: &str) -> Result<Envelope<Source>> {
        self.store.read(|| {
            let written = super::query::non_empty("name", name)?;
            let name = super::names::qualified_form(written);
            let conn = self.store.conn();
            let (mut hits, total) = self.lookup_as_written(&name, OTHERS_NAMED as u32 + 1)?;
            if hits.is_empty() {
                let mut probe = self.envelope((), Vec::new())?;
                self.note_unknown_symbol(&mut probe, written)?;
                let why: Vec<String> = probe
                    .capability
                    .notes
                    .into_iter()
                    .filter(|n| {
                        n.starts_with("no symbol named")
                            || n.contains("changed on disk")
                            || n.contains("(`loci stats` lists")
                    })
                    .collect();
                return Err(EngineError::NotFound(why.join("; ")));
            }
            let symbol = hits.remove(0);
            let full = self.root().join(&symbol.path);
            let file = std::fs::read(&full).map_err(|source| EngineError::Io {
                path: full.clone(),
                source,
            })?;
            let file = String::from_utf8_lossy(&file);
            let wanted = symbol.end_line.saturating_sub(symbol.line) + 1;
            let shown = wanted.min(SOURCE_LINES);
            let mut text = String::new();
            for line in file
                .split_inclusive('\n')
                .skip(symbol.line as usize)
                .take(shown as usize)
            {
                text.push_str(line);
            }
            if !text.ends_with('\n') && !text.is_empty() {
                text.push('\n');
            }
            // Memory: the file's page, then the pages whose claims name this definition.
            let mut revisions = Vec::new();
            let mut subjects = Vec::new();
            if let Some(page) = mem::page_by_subject(conn, &symbol.path)?
                && let Some(rev) = page.current_revision_id
            {
                revisions.push(rev);
                subjects.push(page.subject);
            }
            for claim in mem::live_claims_resolved_to(conn, &symbol.key)? {
                if !revisions.contains(&claim.revision_id) {
                    revisions.push(claim.revision_id);
                }
            }
            let mut memory = Vec::new();
            for &id in &revisions {
                if let Some(r) = mem::revision_by_id(conn, id)? {
                    let (body, cut) = excerpt(&r.body, MEMORY_EXCERPT_BYTES);
                    memory.push(MemoryNote {
                        subject: r.subject,
                        version: r.version,
                        author: r.author,
                        created_at: r.created_at,
                        body,
                        cut,
                    });
                }
            }
            let others: Vec<String> = hits.into_iter().map(|h| h.key).collect();
            let relies = vec![symbol.path.clone()];
            self.memory_envelope(
                Source {
                    others_total: total.saturating_sub(1),
                    others,
                    text,
                    lines_omitted: wanted - shown,
                    symbol,
                    memory,
                },
                &revisions,
                relies,
            )
        })
    }
}

/// `body` cut to at most `max` bytes, at the last line end in its second half when there
/// is one, else at a character boundary; and whether it was cut.
fn excerpt(body: &str, max: usize) -> (String, bool) {
    if body.len() <= max {
        return (body.to_string(), false);
    }
    let mut end = max;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(nl) = body[..end].rfind('\n').filter(|&nl| nl > max / 2) {
        end = nl + 1;
    }
    (body[..end].to_string(), true)
}

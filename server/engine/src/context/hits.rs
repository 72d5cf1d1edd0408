//! `search`: FTS5 BM25 hits over memory (current revisions), symbols (identifier-aware
//! terms, signatures, doc comments) and documentation sections; any user text is safe and
//! every token must match. `context` gathers its text candidates through the same indexes.

use std::collections::HashSet;

use loci_store::memory as mem;
use loci_store::search::{self as fts, FtsTable};
use serde::{Deserialize, Serialize};

use crate::{EngineError, Envelope, Result, Workspace};

use super::{open::*, score::*};

/// What a search hit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HitKind {
    /// A memory page (its current revision).
    Memory,
    /// A symbol definition.
    Symbol,
    /// A documentation section.
    Doc,
    /// A code file (from the import graph).
    File,
}

/// One search hit, with its provenance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchHit {
    /// What it is.
    pub kind: HitKind,
    /// Page subject, symbol key, or `path#heading`.
    pub id: String,
    /// The file it is in or about, if any.
    pub path: Option<String>,
    /// Zero-based line, if any.
    pub line: Option<u32>,
    /// A title: subject and version, qualified name, or heading.
    pub title: String,
    /// A snippet around the match.
    pub snippet: String,
    /// BM25 magnitude (higher is better; FTS5's rank negated).
    pub bm25: f64,
    /// Where it came from: `revision 3 by agent:x at …`, `path:line`.
    pub provenance: String,
}

impl SearchHit {
    /// A symbol's hit: titled `kind qualified.name`, its signature as the snippet, its
    /// `path:line` (one-based) as provenance; `line` is zero-based.
    pub(super) fn symbol(
        key: &str,
        kind: &str,
        qualified_name: &str,
        path: &str,
        line: u32,
        signature: &str,
        bm25: f64,
    ) -> SearchHit {
        SearchHit {
            kind: HitKind::Symbol,
            id: key.to_string(),
            path: Some(path.to_string()),
            line: Some(line),
            title: format!("{kind} {qualified_name}"),
            snippet: signature.to_string(),
            bm25,
            provenance: format!("{path}:{}", line + 1),
        }
    }

    /// [`SearchHit::symbol`] for a symbol row of the map.
    pub(super) fn of_symbol(s: &loci_store::map::SymbolHit, bm25: f64) -> SearchHit {
        SearchHit::symbol(
            &s.key,
            &s.kind,
            &s.qualified_name,
            &s.path,
            s.line,
            &s.signature,
            bm25,
        )
    }
}

/// Search options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SearchOptions {
    /// Only these kinds (all when empty).
    #[serde(default)]
    pub kinds: Vec<HitKind>,
    /// Only items at this path or under it (a path-component prefix: `server/core` takes
    /// `server/core` and `server/core/…`, not `server/core2/…`; a trailing `/` changes
    /// nothing). Memory pages match by subject, symbols and docs by their file.
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// Hits per kind, 1 to [`SEARCH_LIMIT_MAX`] (default 10); others are refused.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Rows a full-text index may match while gathering `context` candidates: terms are taken
/// rarest first until their document frequencies add up to this (at least one term), so a
/// question full of common words costs what a specific one does. The other terms still
/// count in coverage.
///
/// Measured with `context_bench` on both case sets (2026-12-01): at 2,000 the stdlib set
/// had recall@5 0.386 and MRR 0.301, at 1,000 0.414 and 0.324 (the common words a
/// question also holds pull in rows that outrank the rare ones), at 500
/// 0.386 and 0.349 with lower abstention precision; loci's own set was the same at all
/// three. Ranking the matched rows is most of a search's cost (FTS5's `bm25()` reads
/// each row's column sizes and position lists, about 1.5 µs a row), so 1,000 halves it.
pub(super) const RETRIEVAL_ROWS: u64 = 1_000;

/// The most hits per kind a search returns: a larger `limit` is refused, not cut.
pub const SEARCH_LIMIT_MAX: u32 = 1000;

impl Workspace {
    /// Full-text search over memory, symbols and docs.
    ///
    /// Every word must match; when no row holds them all, rows holding any of them are
    /// ranked instead (a question in words, `how does get_matches parse arguments`,
    /// finds what `get_matches` finds). A one-word query that is a symbol's exact name puts
    /// those definitions first among the symbol hits: BM25 ranks a struct with a long
    /// doc comment below every short member whose name merely contains the word.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for a `limit` outside 1 to
    /// [`SEARCH_LIMIT_MAX`], or a path prefix
    /// outside the workspace; [`EngineError::NotFound`] for a path prefix that names no
    /// mapped file or folder and no memory's subject.
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Envelope<Vec<SearchHit>>> {
        if let Some(limit) = options.limit
            && !(1..=SEARCH_LIMIT_MAX).contains(&limit)
        {
            return Err(EngineError::InvalidArgument {
                name: "limit".into(),
                message: format!("{limit}: a search returns 1 to {SEARCH_LIMIT_MAX} hits per kind"),
            });
        }
        self.store.read(|| self.search_in_snapshot(query, options))
    }

    pub(super) fn search_in_snapshot(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Envelope<Vec<SearchHit>>> {
        let (query, query_notes) = super::search::bounded(query.trim());
        let mut hits = match super::search::fts_query(query) {
            Some(q) => self.search_hits(&q, options)?,
            None => Vec::new(),
        };
        self.check_cancelled()?;
        if hits.is_empty()
            && let Some(any) = super::search::fts_query_any(query)
        {
            hits = self.search_hits(&any, options)?;
        }
        // A long doc section is indexed in chunks that share its id: list it once, at its
        // best chunk (each index's hits come best first).
        let mut seen = HashSet::new();
        hits.retain(|h| seen.insert((h.kind, h.id.clone())));
        if options.kinds.is_empty() || options.kinds.contains(&HitKind::Symbol) {
            hits = self.exact_symbols_first(query, hits, options)?;
        }
        let used = hits.len() as u64;
        // The memory served is checked as `show` checks it; the files hit, against the disk.
        let conn = self.store.conn();
        let mut revisions = Vec::new();
        for h in hits.iter().filter(|h| h.kind == HitKind::Memory) {
            revisions
                .extend(mem::page_by_subject(conn, &h.id)?.and_then(|p| p.current_revision_id));
        }
        let relies = hits.iter().filter_map(|h| h.path.clone()).collect();
        let mut env = self.memory_envelope(hits, &revisions, relies)?;
        env.capability.notes.extend(query_notes);
        env.limits.used = used;
        Ok(env)
    }

    /// The options' path filter, repo-relative, inside the workspace and without a
    /// trailing `/` (`server/core/` is `server/core`); `None` for none or the root (`.`).
    /// It is a path, not a string prefix: see [`under_path`].
    pub(super) fn path_prefix(&self, options: &SearchOptions) -> Result<Option<String>> {
        let Some(p) = options.path_prefix.as_deref() else {
            return Ok(None);
        };
        let rel = self.contain("path", p)?;
        if rel == "." {
            return Ok(None);
        }
        // A prefix that names nothing (`--path srv/` for `server/`) is the caller's
        // mistake, said as such, not "nothing matches", as if the words were at fault.
        if !self.path_known(&rel)? {
            return Err(EngineError::NotFound(format!(
                "`{rel}`: no file or folder of that path in the map, and no memory about one \
                 (misspelt, not scanned, ignored, or skipped)"
            )));
        }
        Ok(Some(rel))
    }

    /// `hits` with the symbols named exactly `name` (case-sensitively, under the path
    /// prefix) first among the symbol hits, each once; the symbol hits stay within the limit.
    pub(super) fn exact_symbols_first(
        &self,
        name: &str,
        hits: Vec<SearchHit>,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Ok(hits);
        }
        let limit = options.limit.unwrap_or(10);
        let prefix = self.path_prefix(options)?;
        let prefix = prefix.as_deref();
        let top = hits
            .iter()
            .filter(|h| h.kind == HitKind::Symbol)
            .map(|h| h.bm25)
            .fold(0.0, f64::max);
        let exact: Vec<SearchHit> = loci_store::map::find_symbols(self.store.conn(), name, limit)?
            .into_iter()
            .filter(|s| s.name == name || s.qualified_name == name)
            .filter(|s| prefix.is_none_or(|p| under_path(&s.path, p)))
            .map(|s| SearchHit::of_symbol(&s, top))
            .collect();
        if exact.is_empty() {
            return Ok(hits);
        }
        let (symbols, others): (Vec<SearchHit>, Vec<SearchHit>) =
            hits.into_iter().partition(|h| h.kind == HitKind::Symbol);
        let mut ranked = exact;
        for h in symbols {
            if !ranked.iter().any(|e| e.id == h.id) {
                ranked.push(h);
            }
        }
        ranked.truncate(limit as usize);
        // Memory hits come first, then symbols, then docs, as `search_hits` orders them.
        let (memory, docs): (Vec<SearchHit>, Vec<SearchHit>) =
            others.into_iter().partition(|h| h.kind == HitKind::Memory);
        Ok(memory.into_iter().chain(ranked).chain(docs).collect())
    }

    /// Hits for an FTS5 MATCH expression, per kind in `options` (best first within a kind).
    pub(crate) fn search_hits(
        &self,
        fts_query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        let limit = options.limit.unwrap_or(10);
        let want = |k: HitKind| options.kinds.is_empty() || options.kinds.contains(&k);
        let prefix = self.path_prefix(options)?;
        let prefix = prefix.as_deref();
        let mut hits = Vec::new();
        for (kind, table) in [
            (HitKind::Memory, FtsTable::Revisions),
            (HitKind::Symbol, FtsTable::Symbols),
            (HitKind::Doc, FtsTable::Docs),
        ] {
            if want(kind) {
                hits.extend(
                    self.index_hits(table, fts_query, prefix, limit, true)?
                        .into_iter()
                        .map(|(h, _, _)| h),
                );
            }
        }
        Ok(hits)
    }

    /// Hits of one full-text index, best first, each with the text it was matched in and,
    /// for memory, the revision. Without `snippets`, memory hits carry an empty snippet
    /// (`context` serves bodies and summaries, never snippets) and cost one statement.
    pub(super) fn index_hits(
        &self,
        table: FtsTable,
        fts_query: &str,
        prefix: Option<&str>,
        limit: u32,
        snippets: bool,
    ) -> Result<Vec<(SearchHit, String, Option<mem::Revision>)>> {
        let conn = self.store.conn();
        let mut hits = Vec::new();
        match table {
            FtsTable::Revisions => {
                // Twice the hits when a path prefix will drop some; without one the first
                // `limit` are all kept, and the index's order (rank, then row id) makes them
                // the same rows a larger fetch would begin with.
                let fetch = if prefix.is_some() { limit * 2 } else { limit };
                let found: Vec<(mem::Revision, f64, String)> = if snippets {
                    let mut v = Vec::new();
                    for h in mem::search_revisions(conn, fts_query, true, fetch)? {
                        if let Some(r) = mem::revision_by_id(conn, h.revision_id)? {
                            v.push((r, h.rank, h.snippet));
                        }
                    }
                    v
                } else {
                    mem::search_current_revisions(conn, fts_query, fetch)?
                        .into_iter()
                        .map(|(r, rank)| (r, rank, String::new()))
                        .collect()
                };
                for (r, rank, snippet) in found {
                    if let Some(p) = prefix
                        && !under_path(&r.subject, p)
                        && !(loci_store::logs::log_of_entry(&r.subject).is_some()
                            && linked_to(conn, r.revision_id, &[format!("{p}/")], &HashSet::new())?)
                    {
                        // A decision or lesson is at a path when a claim of its is: one
                        // about a file or folder there (its subject, `--subject logging`),
                        // or about the folder holding it.
                        continue;
                    }
                    let text = match &r.summary {
                        Some(summary) => format!("{summary}\n\n{}", r.body),
                        None => r.body.clone(),
                    };
                    hits.push((
                        SearchHit {
                            kind: HitKind::Memory,
                            id: r.subject.clone(),
                            path: Some(r.subject.clone()).filter(|s| self.root.join(s).exists()),
                            line: None,
                            title: format!("{} (v{})", r.subject, r.version),
                            snippet,
                            bm25: -rank,
                            provenance: format!(
                                "revision {} by {} at {}",
                                r.version, r.author, r.created_at
                            ),
                        },
                        text,
                        Some(r),
                    ));
                    if hits.len() as u32 >= limit {
                        break;
                    }
                }
            }
            FtsTable::Symbols => {
                for s in fts::search_symbols(conn, fts_query, prefix, limit)? {
                    let text = symbol_text(&s.qualified_name, &s.signature, s.doc.as_deref());
                    hits.push((
                        SearchHit::symbol(
                            &s.key,
                            &s.kind,
                            &s.qualified_name,
                            &s.path,
                            s.line,
                            &s.signature,
                            -s.rank,
                        ),
                        text,
                        None,
                    ));
                }
            }
            FtsTable::Docs => {
                for d in fts::search_docs(conn, fts_query, prefix, limit)? {
                    let text = format!("{}\n\n{}", d.heading, d.text);
                    hits.push((
                        SearchHit {
                            kind: HitKind::Doc,
                            id: format!("{}#{}", d.path, d.heading),
                            path: Some(d.path.clone()),
                            line: Some(d.line),
                            title: if d.heading.is_empty() {
                                d.path.clone()
                            } else {
                                d.heading.clone()
                            },
                            snippet: d.snippet,
                            bm25: -d.rank,
                            provenance: format!("{}:{}", d.path, d.line + 1),
                        },
                        text,
                        None,
                    ));
                }
            }
            // The code's text is retrieved by `super::retrieve`, file by file.
            FtsTable::CodeChunks
            | FtsTable::FileText
            | FtsTable::SecondaryChunks
            | FtsTable::SecondaryFileText => {}
        }
        let checked = self.map_checked_by_these_rules();
        hits.retain(|(hit, text, _)| {
            self.map_text_served(checked, hit.path.as_deref().unwrap_or(""), text)
        });
        Ok(hits)
    }
}

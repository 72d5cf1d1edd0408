//! Code candidates for `context`: the files retrieval ranks (`super::retrieve`), each as its
//! best chunks, and a question about dependents answered from the map.

use std::collections::{BTreeMap, HashMap, HashSet};

use loci_core::secondary::secondary_code;
use loci_store::search::FtsTable;

use super::search::Term;
use crate::{Result, Workspace};

use super::open::module_named_in;
use super::{hits::*, named::*, score::*};

impl Workspace {
    /// The code items of a question: the files [`Workspace::code_candidates`] ranks (with
    /// `named_ids`, the files of the paths the question names (the first `named_files`)
    /// and of the symbols it names, as one more list), each served as its best chunks — a definition as a symbol item, module-level
    /// code as a file item — at the file's relevance: [`CODE_POINTS`] × the IDF-weighted
    /// share of the question's terms the best of the first files holds (or, with
    /// embeddings, the best chunk's cosine, if more) × the decay of its fused rank. A
    /// question about what depends on a file ([`super::retrieve::asks_for_dependents`])
    /// puts that file's direct dependents first: the file it names, or else the best one
    /// found. Each file's best share goes to `symbol_files` (the pages about it score it).
    /// Returns whether text the question quotes was found verbatim.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn code_items(
        &self,
        q: &super::context::Question,
        dense: Option<(Vec<i64>, f64, std::sync::Arc<HashSet<i64>>)>,
        (named_ids, named_files, named_keys): (&[i64], usize, &[NamedKey]),
        cands: &mut BTreeMap<(HitKind, String), Candidate>,
        symbol_files: &mut BTreeMap<String, f64>,
    ) -> Result<bool> {
        use super::retrieve::RankedList;
        let (query, terms, asks) = (q.query, q.terms.as_slice(), q.asks);
        let conn = self.store.conn();
        let mut extra = Vec::new();
        if !named_ids.is_empty() {
            extra.push(RankedList {
                name: "named in the question",
                weight: 1.0,
                files: named_ids.to_vec(),
                sees: None,
            });
        }
        // A question about tests (examples, vendored code) naming a definition asks for
        // the code of that kind using it: those files, most references first, are a list
        // of their own (the definition's file is the "named" one).
        if asks.any() && !named_keys.is_empty() {
            let users = self.referrers(named_keys, |p| {
                secondary_code(p).is_some() && asks.demotes(Some(p)).is_none()
            })?;
            let mut files = Vec::new();
            for (path, _) in users {
                files.extend(loci_store::map::file_id(conn, &path)?);
            }
            if !files.is_empty() {
                extra.push(RankedList {
                    name: "uses the named definition",
                    weight: 1.0,
                    files,
                    sees: None,
                });
            }
        }
        let dense_best = dense.as_ref().map_or(0.0, |(_, best, _)| *best);
        if let Some((files, _, embedded)) = dense {
            extra.push(RankedList {
                name: "embeddings",
                weight: 1.0,
                files,
                sees: Some(embedded),
            });
        }
        let demoted = |p: &str| asks.demotes(Some(p)).is_some();
        let mut hits =
            self.code_candidates(query, terms, extra, asks.any(), &demoted, CODE_FILES)?;
        let (rows, dfs) = self.term_frequencies(FtsTable::FileText, terms)?;
        let weights: Vec<f64> = dfs.iter().map(|&df| idf(rows, df)).collect();
        let decay_at = |rank: usize| RANK_K / (RANK_K + rank as f64);
        let chunk_symbols: Vec<i64> = hits
            .iter()
            .flat_map(|h| &h.chunks)
            .filter_map(|c| c.symbol_id)
            .collect();
        let keys = loci_store::map::symbol_keys_by_ids(conn, &chunk_symbols)?;
        // Tests inside a file of code (a Rust `mod tests`) answer a question about tests
        // only: the file's other chunks are shown first.
        if !asks.any() {
            for hit in &mut hits {
                hit.chunks.sort_by_key(|c| {
                    c.symbol_id
                        .and_then(|id| keys.get(&id))
                        .is_some_and(|key| loci_core::secondary::in_test_module(key))
                });
            }
        }
        // Items follow the fused order; how much of the question the ranking holds sets
        // how relevant it is as a whole.
        let (coverages, strength) = self.code_strength(&hits, terms, &weights, dense_best)?;
        let mut best = 0.0f64;
        for (rank, hit) in hits.iter().enumerate() {
            // The file holding the most of the text the question quotes, verbatim, is
            // relevant whatever its other words: such a question never abstains, and its
            // answer serves that code, not an index line of it.
            let quoted_first = hit.signals.iter().any(|s| s == "quoted text #1");
            let relevance = CODE_POINTS * strength * decay_at(rank);
            let relevance = if quoted_first {
                relevance.max(self.config.context.floor)
            } else {
                relevance
            };
            best = best.max(relevance);
            let share = strength * decay_at(rank);
            if share > 0.0 {
                let e = symbol_files.entry(hit.path.clone()).or_insert(0.0);
                *e = e.max(share);
            }
            let why = match coverages.get(rank) {
                Some(coverage) => format!(
                    "code ({:.0}% of the question; {})",
                    coverage * 100.0,
                    hit.signals.join(", ")
                ),
                None => format!("code ({})", hit.signals.join(", ")),
            };
            // Up to the file's relevance, not on top of what its own text already earned.
            for (_, key, _) in named_keys.iter().filter(|(p, _, _)| *p == hit.path) {
                if let Some(c) = cands.get_mut(&(HitKind::Symbol, key.clone()))
                    && relevance > c.text_points
                {
                    c.add(relevance - c.text_points, true, why.clone());
                    c.text_points = relevance;
                }
            }
            let chunks: Vec<_> = hit.chunks.iter().take(CODE_CHUNKS_SHOWN).collect();
            if chunks.is_empty() {
                let c = cands
                    .entry((HitKind::File, hit.path.clone()))
                    .or_insert_with(|| {
                        Candidate::new(HitKind::File, hit.path.clone(), Some(hit.path.clone()))
                    });
                c.text_points = c.text_points.max(relevance);
                c.add(relevance, true, why);
                c.digest = format!("`{}` holds the question's words", hit.path);
                continue;
            }
            self.chunk_candidates(hit, &chunks, relevance, &why, &keys, cands);
        }
        let quoted = hits
            .iter()
            .any(|h| h.signals.iter().any(|s| s.starts_with("quoted text")));
        if !super::retrieve::asks_for_dependents(query) {
            return Ok(quoted);
        }
        let dependents = self.dependents(query, &hits, named_ids, named_files, named_keys)?;
        let (main, secondary): (Vec<_>, Vec<_>) =
            dependents.into_iter().partition(|(p, _, _)| !demoted(p));
        self.dependent_candidates(main.into_iter().chain(secondary), best, cands);
        Ok(quoted)
    }

    /// How much of the question the code ranking holds: the IDF-weighted shares of the
    /// first [`CODE_STRENGTH_FILES`] fused files (one lookup per term each; the rest
    /// follow the fused order whatever their share), and the ranking's strength, the best
    /// of those, of the file each text index ranks first (wherever fusion put it: a term the
    /// question shares with two files only, `espidf`, ranks them first in the whole-file
    /// index, while files full of its common word, `feature`, lead the fusion) and, with
    /// embeddings, of the best chunk's cosine with the question (a paraphrase shares no
    /// word with the code it asks about).
    fn code_strength(
        &self,
        hits: &[super::retrieve::FileHit],
        terms: &[Term],
        weights: &[f64],
        dense_best: f64,
    ) -> Result<(Vec<f64>, f64)> {
        let coverages: Vec<f64> = hits
            .iter()
            .take(CODE_STRENGTH_FILES)
            .map(|h| self.code_coverage(h, terms, weights))
            .collect::<Result<_>>()?;
        let leaders: Vec<f64> = hits
            .iter()
            .skip(CODE_STRENGTH_FILES)
            .filter(|h| {
                h.signals
                    .iter()
                    .any(|s| s == "file text #1" || s == "code chunks #1")
            })
            .map(|h| self.code_coverage(h, terms, weights))
            .collect::<Result<_>>()?;
        let strength = coverages
            .iter()
            .chain(&leaders)
            .copied()
            .fold(dense_best, f64::max);
        Ok((coverages, strength))
    }

    /// The dependents a dependents question asks for (path, why, digest; in order) as
    /// candidates above the best code item (`best`) and every candidate found so far: the
    /// graph answers that question. A doc section sharing its other words ("which files use
    /// X") is not what depends on X, and the definition it names is what changes, not what
    /// breaks: it follows them.
    fn dependent_candidates(
        &self,
        dependents: impl Iterator<Item = (String, String, String)>,
        best: f64,
        cands: &mut BTreeMap<(HitKind, String), Candidate>,
    ) {
        let best_found = cands.values().map(Candidate::score).fold(best, f64::max);
        let top = best_found.max(self.config.context.floor) + DEPENDENT_POINTS;
        for (i, (path, why, digest)) in dependents.enumerate() {
            let points = top - 0.01 * i as f64;
            let key = (HitKind::File, path.clone());
            let c = cands
                .entry(key)
                .or_insert_with(|| Candidate::new(HitKind::File, path.clone(), Some(path.clone())));
            c.text_points = c.text_points.max(points);
            c.relevance = 0.0;
            c.add(points, true, why);
            c.digest = digest;
            if c.full.is_empty() {
                c.full = c.digest.clone();
            }
        }
    }

    /// A file's best chunks as candidates at `relevance` (each next one a little less): a
    /// definition as its symbol, module-level code as `path:line` with its source.
    #[tracing::instrument(level = "debug", skip_all)]
    fn chunk_candidates(
        &self,
        hit: &super::retrieve::FileHit,
        chunks: &[&super::retrieve::ChunkHit],
        relevance: f64,
        why: &str,
        keys: &HashMap<i64, String>,
        cands: &mut BTreeMap<(HitKind, String), Candidate>,
    ) {
        for (i, chunk) in chunks.iter().enumerate() {
            // The file's chunks follow each other, best first.
            let points = relevance - 0.01 * i as f64;
            // A definition is its symbol; module-level code is `path:line` (the path
            // alone is the memory page about the file).
            let key = match chunk.symbol_id.and_then(|id| keys.get(&id)) {
                Some(key) => (HitKind::Symbol, key.clone()),
                None => (
                    HitKind::File,
                    format!("{}:{}", hit.path, chunk.start_line + 1),
                ),
            };
            if cands.contains_key(&key) {
                continue;
            }
            let mut c = Candidate::new(key.0, key.1.clone(), Some(hit.path.clone()));
            c.line = Some(chunk.start_line);
            c.text_points = points;
            c.add(points, true, why.to_string());
            if key.0 == HitKind::File {
                c.full = self.chunk_full(&hit.path, chunk.start_line, chunk.end_line);
                c.digest = format!(
                    "module-level code of `{}` (lines {}–{})",
                    hit.path,
                    chunk.start_line + 1,
                    chunk.end_line + 1
                );
            }
            cands.insert(key, c);
        }
    }
    /// The files with references resolved to the definitions `named_keys` (at least
    /// [`super::retrieve::DEPENDENT_CONFIDENCE`]) whose path `keep` admits, each with its
    /// count of references: most first, ties in path order.
    fn referrers(
        &self,
        named_keys: &[NamedKey],
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<(String, usize)>> {
        let keys: Vec<&str> = named_keys.iter().map(|(_, k, _)| k.as_str()).collect();
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for r in loci_store::map::refs_to_any(self.store.conn(), &keys, None, DEPENDENT_REFS)? {
            if r.confidence >= super::retrieve::DEPENDENT_CONFIDENCE && keep(&r.path) {
                *count.entry(r.path).or_default() += 1;
            }
        }
        // A stable sort of a map: ties stay in path order.
        let mut count: Vec<(String, usize)> = count.into_iter().collect();
        count.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        Ok(count)
    }

    /// The dependents of what a question about dependents asks about, each as its path, why
    /// it is one, and what the answer says of it: the files with references resolved to the
    /// definitions it names, else the direct dependents of the file it names (by path, or a
    /// module by name: [`module_named_in`]) or of the best file found (`hits`), those the
    /// map links first.
    fn dependents(
        &self,
        query: &str,
        hits: &[super::retrieve::FileHit],
        named_ids: &[i64],
        named_files: usize,
        named_keys: &[NamedKey],
    ) -> Result<Vec<(String, String, String)>> {
        let conn = self.store.conn();
        let module = match named_files {
            0 => module_named_in(conn, query)?,
            _ => None,
        };
        // A question naming a module and definitions of it ("if I change reprlib (Repr /
        // recursive_repr)") is about the module.
        let about_module = module
            .as_ref()
            .is_some_and(|m| named_keys.iter().any(|(path, _, _)| path == m));
        let found = if named_files == 0 && !named_keys.is_empty() && !about_module {
            // A question about what uses a definition it names ("who calls shlex.quote?")
            // is answered from the references resolved to it, not from its file's
            // importers (nor from the best file found: `unittest/mock.py`, for its
            // `call`s). The files defining it are what changes, not what breaks.
            // The names as the question wrote them (`shlex.quote`).
            let mut written: Vec<&str> = named_keys.iter().map(|(_, _, n)| n.as_str()).collect();
            written.dedup();
            let named = ticked(&written);
            self.referrers(named_keys, |p| {
                !named_keys.iter().any(|(path, _, _)| path == p)
            })?
            .into_iter()
            .map(|(path, n)| {
                let why = format!("refers to {named}");
                let digest = format!(
                    "`{path}` {why} ({n} reference{})",
                    if n == 1 { "" } else { "s" }
                );
                (path, why, digest)
            })
            .collect()
        } else {
            // The file the question names by path, else the module it names by name, else
            // the best one found.
            let mut named_file = named_ids[..named_files].first().copied();
            if let Some(path) = &module {
                named_file = loci_store::map::file_id(conn, path)?;
            }
            let Some(target) = named_file.or(hits.first().map(|h| h.file_id)) else {
                return Ok(Vec::new());
            };
            let Some(target_path) = loci_store::map::file_path(conn, target)? else {
                return Ok(Vec::new());
            };
            let found = self.direct_dependents(target)?;
            let mut dependents = found.uses;
            // Files that name the module in their code (`unlock_notify::wait(…)` inside a
            // macro the map cannot parse) come after those the map links: only for a
            // module whose name is an identifier of several words, rare enough to be a
            // mention. The module's declaration (`mod unlock_notify;`) comes last, mention
            // or not: it uses nothing.
            let mentions = self.files_naming_module(&target_path)?;
            let declares = |id: i64| found.declare.iter().any(|(d, _)| *d == id);
            for (id, path) in mentions
                .into_iter()
                .filter(|(id, _)| !declares(*id))
                .chain(found.declare.clone())
            {
                if id != target && !dependents.iter().any(|(d, _)| *d == id) {
                    dependents.push((id, path));
                }
            }
            dependents
                .into_iter()
                .map(|(_, path)| {
                    let why = format!("depends directly on `{target_path}`");
                    let digest = format!("`{path}` {why} (imports it or calls into it)");
                    (path, why, digest)
                })
                .collect()
        };
        Ok(found)
    }

    /// The source of lines `start..=end` (zero-based) of `path` as a FULL item: a heading
    /// and at most [`FULL_SOURCE_LINES`] lines; empty when the file cannot be served.
    pub(super) fn chunk_full(&self, path: &str, start: u32, end: u32) -> String {
        let Some((text, _)) = self.read_served_as_scanned(path) else {
            return String::new();
        };
        let last = end.min(start + FULL_SOURCE_LINES - 1);
        let mut source: Vec<&str> = text
            .lines()
            .skip(start as usize)
            .take((last - start + 1) as usize)
            .collect();
        while source.last().is_some_and(|l| l.trim().is_empty()) {
            source.pop();
        }
        let more = if end > last { "\n…" } else { "" };
        format!(
            "### {path}:{} (module-level code)\n```\n{}{more}\n```\n",
            start + 1,
            source.join("\n")
        )
    }
}

/// A definition the question names: its file, its key, and the name as written.
pub(super) type NamedKey = (String, String, String);

/// The most references read to answer what uses a definition the question names.
pub(super) const DEPENDENT_REFS: u32 = 2_000;

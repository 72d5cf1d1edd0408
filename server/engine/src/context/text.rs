//! Text candidates for `context`: memory, symbols and docs holding the question's words,
//! and the pages near the files found and the open ones.

use std::collections::{BTreeMap, HashSet};

use loci_store::memory as mem;
use loci_store::search::FtsTable;

use super::search::Term;
use crate::{Result, Workspace};

use super::{hits::*, open::*, score::*};

impl Workspace {
    /// The pages the structure step of [`Workspace::context`] can score, by subject: those
    /// about the files of matching symbols (`symbol_files`), the memory candidates found so
    /// far, every topic, and those [`module_points`] and [`unmapped_points`] give points
    /// from the open entries: an open file, its folder, that folder's parents and what is
    /// under it (siblings, child folders); an open folder (`dir/`), its parents and what is
    /// under it; the folder of an open file the map lacks and what is under it. An open
    /// entry at the root reaches every page, so then all are read. Reading all 505 pages
    /// of the stdlib benchmark store costs a fifth of a question nothing answers
    /// (callgrind: 10.46 M instructions with it, 8.50 M without).
    pub(super) fn pages_near(
        &self,
        open: &[String],
        unmapped_open: &[(String, Option<String>)],
        symbol_files: &BTreeMap<String, f64>,
        cands: &BTreeMap<(HitKind, String), Candidate>,
    ) -> Result<std::sync::Arc<Vec<mem::Page>>> {
        // Decisions and lessons whose claims resolve into an open file or folder.
        let entries = loci_store::logs::entries_about(self.store.conn(), open, OPEN_ENTRIES)?;
        let mut subjects: Vec<&str> = symbol_files.keys().map(String::as_str).collect();
        subjects.extend(entries.iter().map(String::as_str));
        subjects.extend(
            cands
                .keys()
                .filter(|(kind, _)| *kind == HitKind::Memory)
                .map(|(_, id)| id.as_str()),
        );
        let mut under: Vec<&str> = Vec::new();
        for f in open {
            let dir = match f.strip_suffix('/') {
                Some(dir) => dir,
                None => {
                    subjects.push(f);
                    dir_of(f)
                }
            };
            if dir.is_empty() || dir == "." {
                return self.cached_pages();
            }
            under.push(dir);
            subjects.extend([dir, "."]);
            let mut d = dir;
            while let Some((parent, _)) = d.rsplit_once('/') {
                subjects.push(parent);
                d = parent;
            }
        }
        for dir in unmapped_open.iter().filter_map(|(_, dir)| dir.as_deref()) {
            subjects.push(dir);
            under.push(dir);
        }
        Ok(std::sync::Arc::new(mem::pages_near(
            self.store.conn(),
            &subjects,
            &under,
        )?))
    }

    /// The full-text candidates of a question's content terms: per index, the terms rarest
    /// first up to [`RETRIEVAL_ROWS`], ORed; each hit with the IDF-weighted share of all
    /// the terms its best passage holds (symbols are one passage).
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn text_candidates(
        &self,
        terms: &[Term],
        asks: Asks,
        limit: u32,
    ) -> Result<(Vec<TextHit>, Vec<f64>)> {
        if terms.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut rows = 0u64;
        let mut per_table: Vec<(FtsTable, Vec<u64>)> = Vec::new();
        // Memory and documentation are searched here; the code's text, by file and chunk,
        // in `super::retrieve`. The terms' rarity is counted over all of it.
        for table in [FtsTable::Revisions, FtsTable::Docs, FtsTable::FileText] {
            let (n, term_dfs) = self.term_frequencies(table, terms)?;
            rows += n;
            per_table.push((table, term_dfs));
        }
        let weights: Vec<f64> = (0..terms.len())
            .map(|i| idf(rows, per_table.iter().map(|(_, d)| d[i]).sum()))
            .collect();
        let mut out = Vec::new();
        for (table, dfs) in per_table.iter().filter(|(t, _)| *t != FtsTable::FileText) {
            let taken = super::retrieve::rarest_first(terms, dfs, RETRIEVAL_ROWS);
            // The rows that hold every term: few, and BM25's length normalisation can rank
            // a long text holding them all below the top rows of the disjunction, the more
            // so when common terms were left out of it (`shutil.copytree`'s docstring for
            // "recursively copy a directory"). They join at their own ranks, as in rank
            // fusion.
            let present: Vec<&Term> = (0..terms.len())
                .filter(|&i| dfs[i] > 0)
                .map(|i| &terms[i])
                .collect();
            let conjunction = (present.len() > 1)
                .then(|| super::search::all_of(present.iter().copied()))
                .flatten();
            let Some(expr) = super::search::any_of(taken) else {
                continue;
            };
            let mut seen: HashSet<String> = HashSet::new();
            for expr in std::iter::once(expr).chain(conjunction) {
                let hits = self.index_hits(*table, &expr, None, limit, false)?;
                let places = asks.places(&hits, code_path);
                for (rank, (hit, text, revision)) in hits.into_iter().enumerate() {
                    if !seen.insert(hit.id.clone()) {
                        continue;
                    }
                    let units = if *table == FtsTable::Symbols {
                        vec![text.clone()]
                    } else {
                        passages(&text)
                    };
                    out.push(TextHit {
                        hit,
                        coverage: coverage(&units, terms, &weights),
                        rank,
                        place: places[rank],
                        revision,
                        text,
                    });
                }
            }
        }
        Ok((out, weights))
    }
}

//! `context`: what an agent should know before it touches something.
//!
//! `context` answers questions in prose, in phases that each read the [`Question`] and add
//! to what was [`Found`] (text, named definitions, code, structure, hops here; memory
//! details in `details.rs`; ranking and packing in `pack.rs`). It takes
//! the question's content terms (no function words, plurals folded), gathers candidates
//! from each index (the terms rarest first, ORed) and from the structure (symbols the
//! question names, pages about the files of matching symbols, the pages of open files
//! and their folders, each open file itself (its outline) and its main symbols (public
//! definitions, the most referenced first), when neither the question's words nor memory
//! about the open files' folders are relevant, one import hop from the top seeds,
//! personalized PageRank over the
//! import graph around the open files when memory is thin), scores them with irag's
//! retrieval weights, and packs them into FULL / DIGEST / INDEX tiers under a token
//! budget — or abstains when nothing clears the floor.
//!
//! Scoring (seeds/irag "Retrieval scoring"; docs/context.md has the table, `score.rs`
//! the weights): the open
//! file's module +50 (parent, child or sibling +25); a full-text hit up to +30: 30 × the
//! IDF-weighted share of the question's terms in its best passage × the rank decay
//! 60 / (60 + rank); a symbol match in a page's file up to +24; a symbol the question
//! names +15; a symbol a top-3 relevant page names, half that page's full-text points
//! when they clear the floor (relevance: the page holds the question); stale −20; open
//! contradictions (of memory, or of a doc section's lines) −40, a warning banner and a
//! stale warning each; memory naming a name the question writes that
//! the code no longer has +15 relevance and a banner, and never dropped by its penalties
//! (false memory about the question is shown as false); test code −5 unless the question is about
//! tests; and, only for items that are relevant on their own, one link-hop from a top-3
//! seed +15 (pages and files), a symbol a top-3 relevant page names +15, updated within 7
//! days +10 and decisions and lessons +25 — the latter only when the entry also has a signal of
//! its own: full-text points at least half the best full-text points of the answer
//! ([`EPISODIC_TEXT_SHARE`]), or a claim resolved to an open file or a symbol the question
//! names (or its file). An item at no points or below gets no line at all. Abstention
//! looks only at relevance (module, text and symbol points), never at hops or boosts, so
//! a question about nothing never returns a decision.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use loci_store::memory as mem;
use serde::{Deserialize, Serialize};

use super::search::Term;
use crate::{EngineError, Envelope, Result, StaleWarning, Workspace};

// Paths the rest of the engine names items by.
pub(crate) use super::graph::ImportGraph;
pub(crate) use super::hits::SearchHit;
pub(crate) use super::pack::estimate_tokens;
use super::{code::*, hits::*, named::*, open::*, score::*};

/// A context request.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ContextRequest {
    /// The question or task.
    pub query: String,
    /// Files open in the editor or being worked on (repo-relative).
    #[serde(default)]
    pub open_files: Vec<String>,
    /// Token budget (tokens ≈ characters / 4, an estimate); default `[context] budget`.
    #[serde(default)]
    pub budget: Option<u64>,
    /// Relevance floor below which the answer abstains; default `[context] floor`.
    #[serde(default)]
    pub floor: Option<f64>,
}

/// How much of an item is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Tier {
    /// Complete body (pages), or signature, doc and source (symbols).
    Full,
    /// Change summary or first 200 characters; signature and first doc line.
    Digest,
    /// One line with score and staleness.
    Index,
}

/// One item of a context answer.
#[derive(Clone, Debug, Serialize)]
pub struct ContextItem {
    /// Tier served.
    pub tier: Tier,
    /// What it is.
    pub kind: HitKind,
    /// Page subject, symbol key, `path#heading`, or file path.
    pub id: String,
    /// The file it is in or about.
    pub path: Option<String>,
    /// Total score.
    pub score: f64,
    /// The relevance part of the score (what abstention looks at).
    pub relevance: f64,
    /// The signals that scored it (`fts +21.3`, `open module +50`, ...).
    pub signals: Vec<String>,
    /// Whether memory in it is stale.
    pub stale: bool,
    /// Open contradictions about it.
    pub contradictions: u64,
    /// The served text.
    pub text: String,
}

/// The answer to `context`.
#[derive(Clone, Debug, Serialize)]
pub struct ContextAnswer {
    /// The question.
    pub query: String,
    /// True when nothing cleared the floor: the agent is told "nothing relevant".
    pub abstained: bool,
    /// The best relevance found (to compare with the floor).
    pub best_relevance: f64,
    /// The floor used.
    pub floor: f64,
    /// The item of the best relevance (abstained or not), if any.
    pub best_candidate: Option<String>,
    /// Names the question uses (`Kubernetes`, `io_uring`, `JSON Schema`) that nothing in
    /// the code, memory or docs holds; any makes the answer abstain at a floor above 0
    /// (a question whose quoted text the code holds verbatim is never checked).
    pub unknown_names: Vec<String>,
    /// A recap of the last sessions (heads the answer).
    pub recap: String,
    /// Warnings that must be read first (contradicted memory).
    pub banners: Vec<String>,
    /// Items, best first.
    pub items: Vec<ContextItem>,
    /// Estimated tokens used (characters / 4).
    pub tokens_estimated: u64,
    /// The whole answer as markdown.
    pub markdown: String,
}

/// The smallest token budget a `context` answer can honour: its header and one INDEX
/// line (tokens ≈ characters / 4). A smaller one is refused, not silently raised.
pub const MIN_BUDGET: u64 = 50;

/// Characters of a session's task, and of its summary, that the recap heading a
/// `context` answer quotes (a DIGEST's length; `loci recap` shows them whole).
pub const RECAP_CHARS: usize = 200;

/// A question being answered: what it asks and what is open. Built once, read by every
/// phase of [`Workspace::context`].
pub(super) struct Question<'q> {
    /// The question, bounded.
    pub(super) query: &'q str,
    /// Tokens the answer may use.
    pub(super) budget: u64,
    /// Relevance an answer needs not to abstain.
    pub(super) floor: f64,
    /// What counts as relevant for seeding hops and earning boosts: the floor, or the
    /// configured one when the caller asked for everything (eval passes −∞).
    pub(super) relevant_at: f64,
    /// The open entries (files, folders as `src/`) and the files the question names.
    pub(super) open: Vec<String>,
    /// The entries the editor or agent opened.
    pub(super) opened: Vec<String>,
    /// Open files the map lacks, each with its mapped folder when it has one.
    pub(super) unmapped_open: Vec<(String, Option<String>)>,
    /// Open folders.
    pub(super) open_folders: Vec<String>,
    /// Files the question names by path or by a name only one file has.
    pub(super) named_files: Vec<String>,
    /// Its content terms (none when it only asks about the code at hand).
    pub(super) terms: Vec<Term>,
    /// What it asks about test, example and vendored code.
    pub(super) asks: Asks,
}

impl Question<'_> {
    /// Whether code or a doc at `score` is worth serving, if only as an index line: above
    /// 0 and at half the floor or more (a word of the question matched once is not).
    pub(super) fn worth_serving(&self, score: f64) -> bool {
        score > 0.0 && score >= self.floor / 2.0
    }
}

/// What the phases of [`Workspace::context`] have found so far.
#[derive(Default)]
pub(super) struct Found {
    /// The candidates, by kind and id.
    pub(super) cands: BTreeMap<(HitKind, String), Candidate>,
    /// Files of matching symbols, with the best share of the question one holds.
    pub(super) symbol_files: BTreeMap<String, f64>,
    /// Revisions read by the memory search, by id (the memory phase needs them again).
    pub(super) revisions: HashMap<i64, mem::Revision>,
    /// The definitions the question names, each with the name as written.
    pub(super) named: Vec<(String, loci_store::map::SymbolHit)>,
    /// Files of the paths and definitions the question names, paths first.
    pub(super) named_ids: Vec<i64>,
    /// The definitions the question names, by file.
    pub(super) named_keys: Vec<NamedKey>,
    /// The symbols the question names, and their files.
    pub(super) named_targets: HashSet<String>,
    /// Whether the question names a definition by a qualified name the map resolves.
    pub(super) named_qualified: bool,
    /// Whether text the question quotes is in the code verbatim.
    pub(super) quoted_found: bool,
    /// Names the question uses that nothing holds.
    pub(super) missing: Vec<String>,
    /// Names of members their owner does not have (`typing.override`): missing unless
    /// the question quotes text the code holds or names a definition that is there.
    pub(super) missing_members: Vec<String>,
    /// How dense retrieval stood.
    pub(super) dense_notes: Vec<String>,
    /// Memory pages near what was found and what is open.
    pub(super) pages: std::sync::Arc<Vec<mem::Page>>,
    /// Decisions and lessons pages with a claim about an open file.
    pub(super) about_open: Vec<String>,
    /// Whether the map was checked by the secret rules configured now.
    pub(super) checked: bool,
    /// Open contradictions.
    pub(super) contradictions: Vec<loci_store::audit::Contradiction>,
    /// Stale marks, by the candidate they belong to.
    pub(super) stale_warnings: Vec<(String, StaleWarning)>,
    /// Warnings the answer opens with, by the candidate each is about: only those of
    /// candidates the answer serves are given.
    pub(super) banners: Vec<(String, String)>,
}

impl Workspace {
    /// Ranked, tiered context for a question under a token budget; see the module docs.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty request, a budget under
    /// [`MIN_BUDGET`], or a floor that is not a finite number (nothing clears an infinite
    /// one, and none is ever below −∞: a very low floor, say −1000, never abstains).
    pub fn context(&self, req: &ContextRequest) -> Result<Envelope<ContextAnswer>> {
        if let Some(floor) = req.floor
            && floor.is_infinite()
        {
            return Err(EngineError::InvalidArgument {
                name: "floor".into(),
                message: format!(
                    "{floor}: the floor is a finite number of points (a very low one, say -1000, never abstains)"
                ),
            });
        }
        self.context_any_floor(req)
    }

    /// [`Workspace::context`] with any floor, −∞ included: eval and calibrate rank every
    /// candidate without abstaining.
    pub(crate) fn context_any_floor(
        &self,
        req: &ContextRequest,
    ) -> Result<Envelope<ContextAnswer>> {
        self.store.read(|| self.context_in_snapshot(req))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    fn context_in_snapshot(&self, req: &ContextRequest) -> Result<Envelope<ContextAnswer>> {
        let (query, query_notes) = super::search::bounded(req.query.trim());
        let budget = req.budget.unwrap_or(self.config.context.budget);
        if budget < MIN_BUDGET {
            return Err(EngineError::InvalidArgument {
                name: "budget".into(),
                message: format!(
                    "{budget} tokens is too small: an answer needs at least {MIN_BUDGET} (its header and one index line)"
                ),
            });
        }
        let floor = req.floor.unwrap_or(self.config.context.floor);
        if floor.is_nan() {
            // NaN compares false with everything: it would turn abstention off.
            return Err(EngineError::InvalidArgument {
                name: "floor".into(),
                message: "the floor is a number of points, not NaN".into(),
            });
        }
        if query.is_empty() && req.open_files.is_empty() {
            // Answered empty, as `search` answers an empty query: an explicit abstention,
            // not an invalid argument.
            let markdown = format!("{EMPTY_QUESTION}.\n");
            let answer = ContextAnswer {
                query: String::new(),
                abstained: true,
                best_relevance: 0.0,
                floor,
                best_candidate: None,
                unknown_names: Vec::new(),
                recap: String::new(),
                banners: Vec::new(),
                items: Vec::new(),
                tokens_estimated: 0,
                markdown,
            };
            let mut env = self.envelope(answer, Vec::new())?;
            env.capability.notes.push(EMPTY_QUESTION.to_string());
            env.limits.budget = Some(budget);
            return Ok(env);
        }
        let q = self.question(req, query, budget, floor)?;
        let mut g = Found::default();
        self.text_phase(&q, &mut g)?;
        self.named_phase(&q, &mut g)?;
        self.code_phase(&q, &mut g)?;
        self.structure_phase(&q, &mut g)?;
        self.hops_phase(&q, &mut g)?;
        self.memory_phase(&q, &mut g)?;
        self.docs_phase(&q, &mut g)?;
        self.symbols_phase(&mut g)?;
        self.demotions_phase(&q, &mut g);
        let packed = self.pack_phase(&q, &mut g)?;
        self.finish(&q, g, packed, query_notes)
    }

    /// The question as asked: its bounded text, budget and floor, the open entries (files,
    /// folders, and files the map lacks) with the files it names, and its content terms.
    fn question<'q>(
        &self,
        req: &ContextRequest,
        query: &'q str,
        budget: u64,
        floor: f64,
    ) -> Result<Question<'q>> {
        // What counts as relevant for seeding hops and earning boosts: the floor, or the
        // configured one when the caller asked for everything (eval passes −∞).
        let relevant_at = if floor.is_finite() {
            floor
        } else {
            self.config.context.floor
        };
        let conn = self.store.conn();
        let open: Vec<String> = req
            .open_files
            .iter()
            .map(|f| self.contain("open_files", f))
            .collect::<Result<_>>()?;
        // Each open entry is a mapped file, a folder holding mapped files (kept as `src/`:
        // what is in it is its module), or neither. A file the map lacks (an editor's new,
        // unsaved file, or a mistyped path) is not an open file: in a mapped folder below
        // the root it brings that folder's memory and that of the files in it, as a new
        // file there would need ([`unmapped_points`]), and nothing else (its folder's
        // parents, the root among them, are not its module: `--open email/nosuch.py` must
        // not serve the root page first); anywhere else it earns nothing (at the root,
        // "beside it" is every top-level file, which a mistyped `nosuch.py` would
        // serve). The answer says which, in its notes and its markdown.
        let place = |p: &str| -> Result<(bool, bool)> {
            Ok((
                loci_store::map::file_exists(conn, p)?,
                loci_store::map::folder_has_files(conn, p)?,
            ))
        };
        let mut unmapped_open: Vec<(String, Option<String>)> = Vec::new();
        let mut open_folders: Vec<String> = Vec::new();
        let mut open_entries = Vec::with_capacity(open.len());
        for f in open {
            let (is_file, is_folder) = place(&f)?;
            if is_file || f == "." {
                open_entries.push(f);
            } else if is_folder {
                open_folders.push(f.clone());
                open_entries.push(format!("{f}/"));
            } else {
                let dir = dir_of(&f).to_string();
                let near = !dir.is_empty() && place(&dir)?.1;
                unmapped_open.push((f, near.then_some(dir)));
            }
        }
        // The entries the editor or agent opened; `open` adds the files the question names.
        let opened = open_entries.clone();
        let mut open = open_entries;
        // A file the question names (`src/number.rs`, or a file name only one mapped file
        // has: `number.rs`) is an open file too: "before editing src/number.rs" is about
        // that file and its memory page.
        let named_files = files_named_in(conn, query)?;
        for f in &named_files {
            if !open.contains(f) {
                open.push(f.clone());
            }
        }
        // 1. Text: memory, symbols, docs, weighed by how much of the question they hold.
        let terms = super::search::content_terms(query);
        // A question that only asks about the code at hand ("what should I know before I
        // touch this?", the question agents ask most) names no topic: with files open it
        // is about them, and its words are searched for nowhere (`CookieJar`'s docstring,
        // "You may not need to know about this class", would answer it in their place).
        let terms = if !open.is_empty()
            && terms
                .iter()
                .all(|t| t.words.iter().all(|w| AT_HAND_WORDS.contains(&w.as_str())))
        {
            Vec::new()
        } else {
            terms
        };
        // A question about what depends on something asks it in words of its own ("which
        // modules would break if I changed X"): those words find the dependents through the
        // map, not text that happens to hold them (`filename_changed_hook`, `get_break`).
        let terms = if super::retrieve::asks_for_dependents(query) {
            let cue = |t: &Term| t.words.iter().all(|w| super::retrieve::dependent_cue(w));
            let kept: Vec<Term> = terms.iter().filter(|t| !cue(t)).cloned().collect();
            if kept.is_empty() { terms } else { kept }
        } else {
            terms
        };
        let asks = if terms.is_empty() {
            Asks::default()
        } else {
            Asks::of_question(query)
        };
        Ok(Question {
            query,
            budget,
            floor,
            relevant_at,
            open,
            opened,
            unmapped_open,
            open_folders,
            named_files,
            terms,
            asks,
        })
    }

    /// Phase 1, text: memory, symbols and docs holding the question's words, weighed by how much of
    /// the question they hold, and the definitions the question names at rank 0.
    #[tracing::instrument(level = "debug", skip_all)]
    fn text_phase(&self, q: &Question, g: &mut Found) -> Result<()> {
        let conn = self.store.conn();
        // A candidate found in several passages (a long section is several chunks) scores
        // its best passage once: the rule is "up to +30", and summing weak passages let a
        // long document outrank the code that answers the question.
        let (mut text_hits, weights) = self.text_candidates(&q.terms, q.asks, TEXT_HITS)?;
        self.check_cancelled()?;
        // Symbols the question names (`Store::write`, `parse_config`, a one-word question).
        // Each is also a text hit at rank 0: the definition a question names is its best
        // match, even where FTS5's length normalisation ranks a long doc comment below the
        // hits kept (`namedtuple`, with a 40-line docstring, came after 50 of its tests).
        // Text that asks nothing (pasted: an error, a log line) names nothing: the names in
        // a message are what it tells the reader to use, not what the reader asks about
        // (`enable_time` in tokio's "timers are disabled. Call `enable_time` on the
        // runtime builder" is not about `Builder.enable_time` but about the code raising it),
        // nor does a message the question quotes (`Registry` in "I/O source already
        // registered with a `Registry`").
        // A capitalized word inside a sentence names a type when one is defined by that
        // name ("where is the Teddy SIMD prefilter"): a type's name is a proper noun, while
        // a variant or constant so named is usually the English word (`Unicode`).
        let (names, proper) = if super::search::pasted_spans(q.query).is_empty() {
            let asked = super::search::without_quoted_messages(q.query);
            let names = super::search::identifier_tokens(&asked);
            let proper: Vec<String> = super::search::proper_nouns(&asked)
                .into_iter()
                .filter(|w| !names.contains(w))
                .collect();
            (names, proper)
        } else {
            (Vec::new(), Vec::new())
        };
        let typed: Vec<(String, bool)> = names
            .into_iter()
            .map(|n| (n, false))
            .chain(proper.into_iter().map(|n| (n, true)))
            .collect();
        for (name, types_only) in typed {
            let wanted = name.replace("::", ".");
            let mut found = named_symbols(conn, &wanted)?;
            // A bare name names no module declaration (`mod serde_json;`): "serde_json's
            // preserve_order feature" is about the crate, whose files its words find.
            if !wanted.contains('.') {
                found.retain(|s| s.kind != "module");
            }
            if types_only {
                found.retain(|s| {
                    s.qualified_name == s.name && loci_core::SymbolKind::parse(&s.kind).is_type()
                });
            }
            // A bare name defined in many files (`__init__`, `name`, `new`) names a kind of
            // definition, not one: its words are searched as the question's other words
            // are (every `__init__` of the stdlib, in path order, would lead the answer),
            // unless another word of the question names the module of a few of them
            // ("codecs StreamReader": `codecs.py`'s, not the hundred encodings').
            let files: HashSet<&str> = found.iter().map(|s| s.path.as_str()).collect();
            if !wanted.contains('.') && files.len() > NAMED_FILES {
                found = super::named::qualified_by_words(conn, &wanted, q.query)?;
                if found.is_empty() {
                    continue;
                }
            }
            if wanted.contains('.') && !found.is_empty() {
                g.named_qualified = true;
            }
            if found.is_empty() && super::named::member_missing(conn, &name, &wanted)? {
                g.missing_members.push(name.clone());
            }
            for s in found {
                if !q.terms.is_empty() {
                    let text = symbol_text(&s.qualified_name, &s.signature, s.doc.as_deref());
                    text_hits.push(TextHit {
                        hit: SearchHit::of_symbol(&s, 0.0),
                        coverage: coverage(&[text], &q.terms, &weights),
                        rank: 0,
                        place: 0,
                        revision: None,
                        text: String::new(),
                    });
                }
                g.named.push((name.clone(), s));
            }
        }
        // Best first (a stable sort keeps ties in index order), so each item's first hit
        // is the one it scores.
        let decay_at = |rank: usize| RANK_K / (RANK_K + rank as f64);
        text_hits.sort_by(|a, b| {
            (b.coverage * decay_at(b.place)).total_cmp(&(a.coverage * decay_at(a.place)))
        });
        let mut scored: HashSet<(HitKind, String)> = HashSet::new();
        for th in text_hits {
            let decay = decay_at(th.rank);
            let prior = TEXT_POINTS * th.coverage * (decay_at(th.place) - decay);
            if let Some(r) = th.revision {
                g.revisions.insert(r.revision_id, r);
            }
            let h = th.hit;
            if !scored.insert((h.kind, h.id.clone())) {
                continue;
            }
            let c = g
                .cands
                .entry((h.kind, h.id.clone()))
                .or_insert_with(|| Candidate::new(h.kind, h.id.clone(), h.path.clone()));
            c.line = h.line;
            c.text_points = TEXT_POINTS * th.coverage * decay;
            c.add(
                c.text_points,
                true,
                format!("text ({:.0}% of the question)", th.coverage * 100.0),
            );
            if prior.abs() >= 0.05 {
                c.add(
                    prior,
                    false,
                    if prior > 0.0 {
                        "ranked before the test, example or vendored code of its index"
                    } else {
                        "ranked after the other code of its index"
                    },
                );
            }
            if h.kind == HitKind::Symbol {
                if let Some(p) = &h.path {
                    let e = g.symbol_files.entry(p.clone()).or_insert(0.0);
                    *e = e.max(th.coverage * decay);
                }
                c.digest = h.snippet.clone();
            }
            if h.kind == HitKind::Doc {
                // The matched chunk is the section's text (FULL), its first 200 characters
                // the DIGEST; the search snippet, with its `[match]` marks, is for `search`.
                let body = th
                    .text
                    .split_once("\n\n")
                    .map_or(th.text.as_str(), |(_, b)| b)
                    .trim();
                c.full = format!(
                    "### {} ({}:{})\n{body}\n",
                    h.title,
                    h.path.as_deref().unwrap_or_default(),
                    h.line.unwrap_or(0) + 1
                );
                c.digest = crate::memory::memory::first_chars(body, 200);
            }
        }
        Ok(())
    }

    /// The definitions the question names, as candidates of their own (+15) and as the
    /// files fusion ranks with the code.
    #[tracing::instrument(level = "debug", skip_all)]
    fn named_phase(&self, q: &Question, g: &mut Found) -> Result<()> {
        let conn = self.store.conn();
        for f in &q.named_files {
            if let Some(id) = loci_store::map::file_id(conn, f)? {
                g.named_ids.push(id);
            }
        }
        for (_, s) in &g.named {
            if let Some(id) = loci_store::map::file_id(conn, &s.path)?
                && !g.named_ids.contains(&id)
            {
                g.named_ids.push(id);
            }
        }
        // The definitions the question names, by file: each is served with its file's code
        // relevance (the file's best chunks may be others: `shlex.split`'s file led with
        // its `__all__`, and `split` itself, with only the +15 it is named for, was 37th).
        g.named_keys = g
            .named
            .iter()
            .map(|(name, s)| (s.path.clone(), s.key.clone(), name.clone()))
            .collect();
        // The symbols the question names, and their files: a decisions or lessons page
        // whose claims resolve to one is linked to the question.
        g.named_targets = g
            .named
            .iter()
            .flat_map(|(_, s)| [s.key.clone(), s.path.clone()])
            .collect();
        // A question quoting text the code holds verbatim asks for the code holding it (where
        // an error is raised): a definition named beside the message (`re.compile` in
        // "re.compile raises error \"unterminated character set\"") is context, not the
        // answer.
        let quoted = super::search::quoted_expression(&super::search::quoted_spans(q.query));
        let quote_held = match quoted.filter(|_| !g.named.is_empty()) {
            Some(expr) => loci_store::search::table_holds(
                conn,
                loci_store::search::FtsTable::FileText,
                &expr,
            )?,
            None => false,
        };
        for (name, s) in std::mem::take(&mut g.named) {
            let c = g
                .cands
                .entry((HitKind::Symbol, s.key.clone()))
                .or_insert_with(|| {
                    Candidate::new(HitKind::Symbol, s.key.clone(), Some(s.path.clone()))
                });
            c.line = Some(s.line);
            // A question about the tests (examples, vendored code) of a definition it names
            // asks for that code: the definition is what it is about, not the answer.
            let about_tests =
                q.asks.any() && loci_core::secondary::secondary_code(&s.path).is_none();
            if !about_tests && !quote_held {
                c.add(
                    NAMED_POINTS,
                    true,
                    format!("named in the question (`{name}`)"),
                );
            }
            let e = g.symbol_files.entry(s.path.clone()).or_insert(0.0);
            *e = e.max(0.5);
        }
        // The code: the files that answer the question, fused from the code-text indexes
        // and the files of the symbols and paths it names (`super::retrieve`), each served
        // as its best chunks; a question about what depends on a file, its dependents first.
        Ok(())
    }

    /// The code: the files that answer the question, fused from the code-text indexes and the
    /// files of the symbols and paths it names (`super::retrieve`), each served as its best
    /// chunks; then the names the question uses that nothing holds.
    #[tracing::instrument(level = "debug", skip_all)]
    fn code_phase(&self, q: &Question, g: &mut Found) -> Result<()> {
        let mut dense_best = 0.0f64;
        if !q.terms.is_empty() {
            let dense = match self.dense_files(q.query) {
                super::embed::DenseState::Off => None,
                super::embed::DenseState::Ready {
                    files,
                    best,
                    missing,
                    chunks,
                    embedded,
                } => {
                    dense_best = best;
                    if missing > 0 {
                        g.dense_notes.push(format!(
                            "embeddings: {} of {chunks} code chunks have vectors (`loci embed` adds the rest)",
                            chunks - missing
                        ));
                    }
                    Some((files, embedded))
                }
                super::embed::DenseState::Failed(why) => {
                    g.dense_notes.push(format!(
                        "embeddings unavailable, answered from the text alone: {why}"
                    ));
                    None
                }
            };
            g.quoted_found = self.code_items(
                q,
                dense.map(|(files, embedded)| (files, dense_best, embedded)),
                (&g.named_ids, q.named_files.len(), &g.named_keys),
                &mut g.cands,
                &mut g.symbol_files,
            )?;
        }
        // Names the question uses (`Kubernetes`, `io_uring`, `JSON Schema`) that nothing
        // loci can answer from holds: the question is about something else. Not a name of
        // two characters (`W0`, `S3`: too short to tell a product from a value), nor a run
        // of words one of which names a definition ("TOMLDecodeError Cannot overwrite" is a
        // class and a message, not one name), nor a name code reads on a module it
        // imports (`crypt.METHOD_BLOWFISH`, which `crypt.py` builds at run time).
        if !g.quoted_found && !g.named_qualified {
            g.missing.append(&mut g.missing_members);
            // The first names only, as the first terms only are searched.
            let names = super::search::names_in(q.query);
            for (name, tokens) in names.into_iter().take(super::search::MAX_QUERY_TERMS) {
                let defined_word = tokens.len() > 1
                    && name
                        .split(' ')
                        .any(|word| g.named_keys.iter().any(|(_, _, named)| named == word));
                let last = name.rsplit('.').next().unwrap_or(&name);
                let read_on_a_module = || -> Result<bool> {
                    Ok(loci_core::terms::is_identifier(last)
                        && loci_store::map::read_on_a_module(self.store.conn(), last, None)?)
                };
                if name.chars().count() > 2
                    && !defined_word
                    && !g.missing.contains(&name)
                    && !self.corpus_holds(
                        &super::search::name_expression(&name, &tokens),
                        q.asks.any(),
                    )?
                    && !read_on_a_module()?
                {
                    g.missing.push(name);
                }
            }
        }
        Ok(())
    }

    /// Phase 2, structure: pages about the files of matching symbols, about open files and their
    /// folders, topics holding those files; code and docs in the open modules; the open files'
    /// outlines when nothing else is relevant.
    #[tracing::instrument(level = "debug", skip_all)]
    fn structure_phase(&self, q: &Question, g: &mut Found) -> Result<()> {
        let conn = self.store.conn();
        // 2. Structure: pages about the files of matching symbols, about open files and
        //    their folders, topics holding those files; code and docs in the open modules.
        // Whether the question's words find anything relevant (text and named symbols are
        // all the relevance there is so far), and whether memory about a folder holding an
        // open file (the root aside) is relevant: when neither, the open files are what
        // the question is about (their outlines and main symbols, below).
        let question_found = g.cands.values().any(|c| c.relevance >= q.relevant_at);
        let mut module_memory = false;
        self.check_cancelled()?;
        g.pages = self.pages_near(&q.open, &q.unmapped_open, &g.symbol_files, &g.cands)?;
        for page in g.pages.iter() {
            if page.current_revision_id.is_none() {
                continue;
            }
            let subject = &page.subject;
            let mut points: Vec<(f64, String)> = Vec::new();
            if let Some(share) = g.symbol_files.get(subject) {
                points.push((
                    SYMBOL_FILE_POINTS * share,
                    "symbol match in this file".into(),
                ));
            }
            let folder = page.kind == "folder" || page.kind == "root";
            // Only pages about a place have a module: `decisions`, `lessons` and topics
            // are not files at the root, siblings of every file open there.
            if folder || page.kind == "file" {
                points.extend(
                    module_points(subject, folder, &q.open)
                        .or_else(|| unmapped_points(subject, folder, &q.unmapped_open)),
                );
            }
            // Decisions and lessons about an open file (a claim resolved to it, to a symbol
            // in it, or into an open folder) are memory about it, as its page is (a
            // decision about `http/client.py` belongs in `--open http/client.py`), and the
            // +25 such a claim earns (below) asks for relevance.
            if (page.kind == "decisions" || page.kind == "lessons")
                && !q.open.is_empty()
                && let Some(rev) = page.current_revision_id
                && linked_to(conn, rev, &q.open, &HashSet::new())?
            {
                points.push((EPISODIC_OPEN_POINTS, "a claim about an open file".into()));
                g.about_open.push(subject.clone());
            }
            if page.kind == "topic" {
                let members = mem::topic_members(conn, page.page_id)?;
                if members
                    .iter()
                    .any(|m| g.symbol_files.contains_key(m) || q.open.contains(m))
                {
                    points.push((TOPIC_POINTS, "topic holds a matching file".into()));
                }
            }
            let key = (HitKind::Memory, subject.clone());
            if points.is_empty() && !g.cands.contains_key(&key) {
                continue;
            }
            let c = g
                .cands
                .entry(key)
                .or_insert_with(|| Candidate::new(HitKind::Memory, subject.clone(), None));
            for (p, why) in points {
                c.add(p, true, why);
            }
            if page.kind == "folder"
                && c.relevance >= q.relevant_at
                && q.open.iter().any(|f| under_path(f, subject))
            {
                module_memory = true;
            }
        }
        // Code and docs near what is open; a file the question names is ranked as code by
        // fusion (`code_items`), and its neighbours are not the question's.
        for c in g.cands.values_mut().filter(|c| c.kind != HitKind::Memory) {
            if let Some((p, why)) = c.path.clone().and_then(|f| {
                module_points(&f, false, &q.opened)
                    .or_else(|| unmapped_points(&f, false, &q.unmapped_open))
            }) {
                c.add(p, true, why);
            }
        }
        // When neither the question's words nor memory about the open files' folders are
        // relevant, the open files are what the question is about: their outlines and
        // main symbols are candidates too, at the open module's +50 ("what should I know
        // before I touch this?" is answered whether or not the file has a page; its page,
        // if any, is served with them). Bounded: a few symbols a file, top-level first.
        // Taken for every question, they outranked what a question did find, and the
        // folder's memory (the open module's +50 is more than any text match).
        let expand = !question_found && !module_memory;
        g.checked = self.map_checked_by_these_rules();
        let mut open_symbols = 0usize;
        let mut expanded = 0u32;
        for f in &q.open {
            if !expand || f.ends_with('/') || f == "." {
                continue;
            }
            let (total, top_level, first) =
                loci_store::map::file_outline(conn, f, OUTLINE_SYMBOLS)?;
            let first: Vec<_> = first
                .into_iter()
                .filter(|s| self.symbol_text_served(g.checked, s))
                .collect();
            let mut taken: Vec<(HitKind, String)> = vec![(HitKind::File, f.clone())];
            let c = g
                .cands
                .entry((HitKind::File, f.clone()))
                .or_insert_with(|| Candidate::new(HitKind::File, f.clone(), Some(f.clone())));
            (c.full, c.digest) = open_file_outline(conn, f, total, top_level, &first)?;
            let main: Vec<_> =
                loci_store::map::file_main_symbols(conn, f, OPEN_FILE_SYMBOLS as u32 * 2)?
                    .into_iter()
                    .filter(|s| self.symbol_text_served(g.checked, s))
                    .collect();
            for s in main.into_iter().take(OPEN_FILE_SYMBOLS) {
                if open_symbols == OPEN_SYMBOLS_TOTAL {
                    break;
                }
                open_symbols += 1;
                let key = (HitKind::Symbol, s.key.clone());
                if !g.cands.contains_key(&key) {
                    let mut c = Candidate::new(HitKind::Symbol, s.key.clone(), Some(s.path));
                    c.line = Some(s.line);
                    g.cands.insert(key.clone(), c);
                    taken.push(key);
                }
            }
            for key in taken {
                expanded += 1;
                if let Some(c) = g.cands.get_mut(&key)
                    && c.relevance == 0.0
                    && let Some((p, why)) = module_points(f, false, &q.open)
                {
                    c.order = expanded;
                    c.add(p, true, why);
                }
            }
        }
        Ok(())
    }

    /// Phase 3, one link-hop from the top-3 relevant seeds, symbols the top pages name, and
    /// personalized PageRank when memory is thin. Hops support an item; they are not evidence
    /// on their own.
    #[tracing::instrument(level = "debug", skip_all)]
    fn hops_phase(&self, q: &Question, g: &mut Found) -> Result<()> {
        let conn = self.store.conn();
        // 3. One link-hop from the top-3 relevant seeds (files), and personalized PageRank
        //    when memory is thin. Hops support an item; they are not evidence on their own.
        let mut seeds: Vec<(f64, String)> = g
            .cands
            .values()
            .filter(|c| c.relevance >= q.relevant_at)
            .filter_map(|c| c.path.clone().map(|p| (c.relevance, p)))
            .collect();
        seeds.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        // The top three distinct files (a file's page and its symbols are one seed).
        let mut top: Vec<String> = Vec::new();
        for (_, path) in seeds {
            if top.len() == 3 {
                break;
            }
            if !top.contains(&path) {
                top.push(path);
            }
        }
        let seed_files: BTreeSet<String> = top.into_iter().chain(q.open.iter().cloned()).collect();
        let mut neighbours: BTreeSet<String> = BTreeSet::new();
        for s in &seed_files {
            neighbours.extend(loci_store::map::import_neighbours(conn, s)?);
        }
        // Per page, as in the seed: symbols and doc sections stand on their own text. Like
        // every boost, a hop lifts only what is relevant on its own.
        // Code files are ranked by fusion (`code_items`), which weighs their links itself.
        for c in g
            .cands
            .values_mut()
            .filter(|c| c.kind == HitKind::Memory)
            .filter(|c| c.relevance >= q.relevant_at)
        {
            let file = c
                .path
                .clone()
                .or_else(|| (c.kind == HitKind::Memory).then(|| c.id.clone()));
            if file
                .as_ref()
                .is_some_and(|f| neighbours.contains(f) && !seed_files.contains(f))
            {
                c.add(HOP_POINTS, false, "one import hop from a top result");
            }
        }
        // The other link: symbols that the top three relevant pages name (their resolved
        // symbol claims). A page whose own full-text points clear the floor holds the
        // question, and what it names is evidence: the symbol gains half the page's text
        // points (up to +15) as relevance ("put user text into a shell command line" finds
        // the decision naming `shlex.quote`, whose own text shares no word with it). From
        // any other seed page the link is support, not evidence: +15 only for a symbol
        // relevant on its own (a page sharing only the word "before" with the question
        // must not lift the symbols it names, at relevance 0, above the method the
        // question names).
        let page_text: HashMap<String, f64> = g
            .cands
            .values()
            .filter(|c| c.kind == HitKind::Memory)
            .map(|c| (c.id.clone(), c.text_points))
            .collect();
        let mut seed_pages: Vec<(f64, String)> = g
            .cands
            .values()
            .filter(|c| c.kind == HitKind::Memory && c.relevance >= q.relevant_at)
            .map(|c| (c.relevance, c.id.clone()))
            .collect();
        seed_pages.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (_, subject) in seed_pages.into_iter().take(3) {
            let Some(rev_id) = g
                .pages
                .iter()
                .find(|p| p.subject == subject)
                .and_then(|p| p.current_revision_id)
            else {
                continue;
            };
            let mut named: Vec<String> = Vec::new();
            for claim in mem::claims_of(conn, rev_id)? {
                if claim.kind == "symbol"
                    && let Some(key) = claim.resolved
                    && !named.contains(&key)
                    && named.len() < MEMORY_LINKS
                {
                    named.push(key);
                }
            }
            let text = page_text.get(&subject).copied().unwrap_or(0.0);
            for key in named {
                if text >= q.relevant_at {
                    let path = key.split_once('#').map(|(p, _)| p.to_string());
                    let c = g
                        .cands
                        .entry((HitKind::Symbol, key.clone()))
                        .or_insert_with(|| Candidate::new(HitKind::Symbol, key.clone(), path));
                    c.add(
                        text * NAMED_BY_MEMORY_SHARE,
                        true,
                        format!("named by memory `{subject}`, which holds the question"),
                    );
                } else if let Some(c) = g.cands.get_mut(&(HitKind::Symbol, key))
                    && c.relevance >= q.relevant_at
                {
                    c.add(
                        NAMED_BY_PAGE_POINTS,
                        false,
                        format!("named by memory `{subject}`"),
                    );
                }
            }
        }
        let memory_relevant = g
            .cands
            .values()
            .filter(|c| c.kind == HitKind::Memory && c.relevance >= q.relevant_at)
            .count();
        // Where memory is thin, the files nearest the open ones in the import graph (as
        // Aider's repo map ranks them) are candidates of their own: support, not evidence,
        // so they are served as index lines after what is relevant (the memory about the
        // open file and its outline come first).
        // Personalized to the open files only: seeded with the question's top results too,
        // a weak match elsewhere would bring the files around it (`urllib/parse.py` for
        // `json/encoder.py` open, through `http/cookiejar.py`).
        let open_files: BTreeSet<String> = q
            .opened
            .iter()
            .filter(|f| !f.ends_with('/') && f.as_str() != ".")
            .cloned()
            .collect();
        if memory_relevant < 3 && !open_files.is_empty() {
            let graph = self.import_graph()?;
            for (file, rank) in graph.personalized_pagerank(conn, &open_files, 5)? {
                if seed_files.contains(&file) {
                    continue;
                }
                let c = g
                    .cands
                    .entry((HitKind::File, file.clone()))
                    .or_insert_with(|| {
                        Candidate::new(HitKind::File, file.clone(), Some(file.clone()))
                    });
                c.add(
                    CENTRALITY_POINTS * rank,
                    false,
                    "import-graph centrality near the seeds",
                );
            }
        }
        Ok(())
    }
}

/// What `context` says when asked nothing: a blank question and no open files. It
/// abstains (`abstained: true`), with this in its markdown and its notes.
pub const EMPTY_QUESTION: &str =
    "the question is empty and no files are open: there is nothing to look for";

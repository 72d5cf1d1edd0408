//! `search` and `context`: what an agent should know before it touches something.
//!
//! `search` is FTS5 BM25 over memory (current revisions), symbols (identifier-aware
//! terms, signatures, doc comments) and documentation sections; any user text is safe
//! (case B18) and every token must match. `context` answers questions in prose: it takes
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
//! Scoring (seeds/irag "Retrieval scoring"; docs/context.md has the table): the open
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

use loci_core::secondary::{Secondary, secondary_code};
use loci_store::memory as mem;
use loci_store::search::{self as fts, FtsTable};
use serde::{Deserialize, Serialize};

use super::search::Term;
use crate::{EngineError, Envelope, Result, StaleWarning, Workspace};

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
    fn symbol(
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
    fn of_symbol(s: &loci_store::map::SymbolHit, bm25: f64) -> SearchHit {
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

pub(crate) fn estimate_tokens(s: &str) -> u64 {
    s.chars().count().div_ceil(4) as u64
}

/// [`estimate_tokens`] of `s` and the line end the markdown puts after it.
fn line_tokens(s: &str) -> u64 {
    (s.chars().count() + 1).div_ceil(4) as u64
}

/// Whether the repo-relative `path` is `prefix` or lies under the folder `prefix/` (the
/// `search --path` filter; `prefix` has no trailing `/`). `server/core2/x.rs` is not under
/// `server/core`: the filter had been a string prefix.
pub fn under_path(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

#[derive(Clone, Debug)]
struct Candidate {
    kind: HitKind,
    id: String,
    path: Option<String>,
    line: Option<u32>,
    relevance: f64,
    boost: f64,
    /// The full-text points in `relevance` (what [`EPISODIC_TEXT_SHARE`] compares).
    text_points: f64,
    /// Among items of equal score, the order (ascending, then by id): 0 for all but an
    /// open file's outline and symbols, which follow it in outline order (1, 2, …), after
    /// the others of their score (the file's page first).
    order: u32,
    signals: Vec<String>,
    full: String,
    /// For symbols: the definition, whose source is read only if it is served FULL.
    symbol: Option<loci_store::map::SymbolHit>,
    digest: String,
    stale: bool,
    contradictions: u64,
}

impl Candidate {
    fn new(kind: HitKind, id: String, path: Option<String>) -> Candidate {
        Candidate {
            kind,
            id,
            path,
            line: None,
            relevance: 0.0,
            boost: 0.0,
            text_points: 0.0,
            order: 0,
            signals: Vec::new(),
            full: String::new(),
            symbol: None,
            digest: String::new(),
            stale: false,
            contradictions: 0,
        }
    }

    fn score(&self) -> f64 {
        self.relevance + self.boost
    }

    fn add(&mut self, points: f64, relevant: bool, why: impl Into<String>) {
        if relevant {
            self.relevance += points;
        } else {
            self.boost += points;
        }
        self.signals.push(format!("{} {points:+.1}", why.into()));
    }
}

/// Rows a full-text index may match while gathering `context` candidates: terms are taken
/// rarest first until their document frequencies add up to this (at least one term), so a
/// question full of common words costs what a specific one does. The other terms still
/// count in coverage.
///
/// Measured with `context_bench` on both case sets (2026-12-01): at 2,000 the stdlib set
/// had recall@5 0.386 and MRR 0.301, at 1,000 0.414 and 0.324 (the common words a
/// question also holds had been pulling in rows that outranked the rare ones), at 500
/// 0.386 and 0.349 with lower abstention precision; loci's own set was the same at all
/// three. Ranking the matched rows is most of a search's cost (FTS5's `bm25()` reads
/// each row's column sizes and position lists, about 1.5 µs a row), so 1,000 halves it.
const RETRIEVAL_ROWS: u64 = 1_000;

/// Symbols a seed page may bring in through its claims (the first ones it names).
const MEMORY_LINKS: usize = 8;

/// The share of a page's full-text points that a symbol it names gains as relevance, when
/// those points clear the floor (the page holds the question). Measured with
/// `context_bench` (2026-12-04, recall@5 / MRR / nDCG@5): with the +15 "named by memory"
/// boost on any symbol a seed page named (relevance 0 or not), 0.476 / 0.445 / 0.421 on
/// the stdlib set and 0.380 / 0.418 on loci's; with the boost only for symbols relevant on
/// their own, 0.452 / 0.492 / 0.427 and 0.389 / 0.424 (the decision naming `shlex.quote`
/// no longer brought it); with this share at 0.5 as well, 0.481 / 0.492 / 0.446 and
/// 0.389 / 0.424.
const NAMED_BY_MEMORY_SHARE: f64 = 0.5;

/// Full-text hits per index that `context` weighs (coverage re-ranks them).
const TEXT_HITS: u32 = 50;

/// Files of the code ranking that `context` weighs (each one costs a share lookup per
/// term of the question).
const CODE_FILES: usize = 20;

/// The first files of the code ranking whose best share of the question sets the
/// ranking's strength (its relevance).
const CODE_STRENGTH_FILES: usize = 3;

/// Chunks served per file of the code ranking (its best ones).
const CODE_CHUNKS_SHOWN: usize = 2;

/// The most relevance points a file of the code ranking scores: a full-text hit's.
const CODE_POINTS: f64 = 30.0;

/// The points of a symbol the question names, and of memory naming one that the code no
/// longer has.
const NAMED_POINTS: f64 = 15.0;

/// The score false memory about what the question names keeps after its penalties: above
/// nothing, below everything else served.
const FALSE_SHOWN_POINTS: f64 = 0.5;

/// Points above the best code item that the direct dependents of the file a dependents
/// question is about score: the graph answers that question, the text does not.
const DEPENDENT_POINTS: f64 = 5.0;

/// The rank constant of the FTS points' decay, `k / (k + rank)` (0-based rank within one
/// index), as in reciprocal rank fusion (Cormack et al., 2009, k = 60).
const RANK_K: f64 = 60.0;

/// A full-text candidate of `context`.
struct TextHit {
    hit: SearchHit,
    /// The share (0..=1) of the question's term weight found in the hit's best passage.
    coverage: f64,
    /// 0-based rank within its index (BM25's order): what its relevance decays by.
    rank: usize,
    /// Its rank once secondary code is moved after the other hits of its index
    /// ([`Asks::places`]): what its score decays by; the difference is a prior.
    place: usize,
    /// For memory, the revision matched (step 4 of `context` reads it from here).
    revision: Option<mem::Revision>,
    /// The text it was matched in (for a doc section, its chunk: what FULL serves).
    text: String,
}

/// The file of a code or doc hit ([`Asks::places`] demotes by it); `None` for memory, which
/// is about a place rather than in it.
fn code_path(hit: &(SearchHit, String, Option<mem::Revision>)) -> Option<&str> {
    (hit.0.kind != HitKind::Memory)
        .then_some(hit.0.path.as_deref())
        .flatten()
}

/// Inverse document frequency as BM25 has it: `ln(1 + (N − df + 0.5) / (df + 0.5))`.
fn idf(rows: u64, df: u64) -> f64 {
    let (n, df) = (rows as f64, df.min(rows) as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Paragraphs, list items and headings of a markdown text: the units a question's terms
/// must meet in, so a long page does not match by scattering them.
fn passages(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        let starts_item = t.starts_with("- ")
            || t.starts_with("* ")
            || t.starts_with("+ ")
            || t.starts_with('#')
            || t.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if (t.is_empty() || starts_item) && !current.trim().is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push_str(line);
        current.push('\n');
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// At most this many lines of a symbol's source are served FULL.
const FULL_SOURCE_LINES: u32 = 40;

/// Points off secondary code (tests, examples, vendored code: [`secondary_code`]) when
/// the question does not ask about it. Measured with `context_bench` (recall@5 / MRR): at
/// 0, 0.443 / 0.337 on the stdlib set and 0.393 / 0.465 on loci's; at 5, 0.443 / 0.354
/// and 0.393 / 0.474; at 10, 0.443 / 0.355 and 0.380 / 0.470. A prior, not relevance:
/// abstention never sees it. Besides the points, such code is ranked after the rest of
/// its index's hits (see [`Asks::places`]).
const TEST_CODE_PENALTY: f64 = 5.0;

/// Which kinds of [`Secondary`] code a question asks about: those it names (`test`,
/// `mock`, `fixture`…; `example`, `demo`…; `vendor`, `third party`…) are ranked as any
/// other code, the others demoted.
#[derive(Clone, Copy, Debug, Default)]
struct Asks {
    tests: bool,
    examples: bool,
    vendored: bool,
}

impl Asks {
    /// What the question's content terms ask about.
    fn of(terms: &[Term]) -> Asks {
        // A word asks unless the question excludes it ("non-test modules").
        let any = |f: fn(&str) -> bool| {
            terms.iter().any(|t| {
                t.words
                    .iter()
                    .enumerate()
                    .any(|(i, w)| f(w) && (i == 0 || t.words[i - 1] != "non"))
            })
        };
        Asks {
            tests: any(is_test_word),
            examples: any(|w| {
                matches!(
                    w,
                    "example" | "examples" | "demo" | "demos" | "sample" | "samples"
                )
            }),
            vendored: any(|w| {
                matches!(
                    w,
                    "vendor" | "vendored" | "vendoring" | "vendors" | "third" | "thirdparty"
                )
            }),
        }
    }

    /// Whether the question asks about any kind of secondary code.
    fn any(self) -> bool {
        self.tests || self.examples || self.vendored
    }

    /// The kind of secondary code at `path` that this question demotes, if any.
    fn demotes(self, path: Option<&str>) -> Option<Secondary> {
        let kind = secondary_code(path?)?;
        let asked = match kind {
            Secondary::Test => self.tests,
            Secondary::Example => self.examples,
            Secondary::Vendored => self.vendored,
        };
        (!asked).then_some(kind)
    }

    /// Each of `hits`' place (one index's hits, best first): the others (the code under
    /// test) are numbered among themselves, skipping the demoted ones, and a demoted hit
    /// keeps its BM25 rank. An item's score decays by its place and its relevance by its
    /// BM25 rank, the difference being a prior (a signal of its own): the code under test
    /// takes the ranks BM25 gave to its tests, so a test ranks above it only on more of
    /// the question's words, not on a shorter text; abstention, the pages of matching
    /// symbols' files and the hop seeds see BM25's ranks, as before. With the 5 points
    /// alone a test at BM25 rank 0 (30 points) had outranked the code at rank 20 (22.5).
    /// Measured with `context_bench` and `loci eval` (2026-12-02, recall@5 / MRR): moving
    /// the demoted hits in relevance too made the stdlib set abstain on an in-scope
    /// question (its best item was a test) and answer an out-of-scope one (0.476 / 0.398
    /// → 0.448 / 0.455); as a prior that also moved the tests after all the others, loci's
    /// set lost `server/engine/tests/it/walk.rs`, a gold item (rank 6 → 22; MRR 0.436 →
    /// 0.434); as here, 0.476 / 0.445 on the stdlib set and 0.380 / 0.437 on loci's
    /// (0.368 / 0.436 without).
    fn places<T>(self, hits: &[T], path: impl Fn(&T) -> Option<&str>) -> Vec<usize> {
        let demoted: Vec<bool> = hits
            .iter()
            .map(|h| self.demotes(path(h)).is_some())
            .collect();
        let mut first = 0;
        demoted
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if d {
                    i
                } else {
                    first += 1;
                    first - 1
                }
            })
            .collect()
    }
}

/// Whether a content word asks about tests (`test`, `tests`, `testing`, `spec`, `mock`,
/// `fixture`; content terms are lower-case with plurals folded).
fn is_test_word(word: &str) -> bool {
    matches!(
        word,
        "test"
            | "tests"
            | "testing"
            | "tested"
            | "spec"
            | "specs"
            | "mock"
            | "mocks"
            | "fixture"
            | "fixtures"
            | "unittest"
            | "pytest"
    )
}

/// A symbol's text as coverage reads it: its qualified name, the name's words, its first
/// line and doc comment (what `symbols_fts` indexes).
fn symbol_text(qualified_name: &str, signature: &str, doc: Option<&str>) -> String {
    format!(
        "{qualified_name} {}\n{signature}\n{}",
        loci_core::terms::symbol_terms(qualified_name),
        doc.unwrap_or_default()
    )
}

/// The share of `weights` (one per term) held by the best of `passages`. A passage holds a
/// term as [`Term::found_in`] has it for the passage's [`super::search::words_in`]; this
/// checks the same in one pass over the passage's words without building the word set.
fn coverage(passages: &[String], terms: &[Term], weights: &[f64]) -> f64 {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let joined: Vec<(String, String, Vec<String>)> = terms
        .iter()
        .map(|t| {
            let j = t.joined();
            let stem = super::search::s_stem(&j);
            let bases = if t.words.len() == 1 {
                super::search::base_forms(&j)
            } else {
                Vec::new()
            };
            (j, stem, bases)
        })
        .collect();
    let mut best = 0.0f64;
    let mut found = vec![false; terms.len()];
    let mut words_found: Vec<Vec<bool>> =
        terms.iter().map(|t| vec![false; t.words.len()]).collect();
    for p in passages {
        found.iter_mut().for_each(|f| *f = false);
        words_found.iter_mut().flatten().for_each(|f| *f = false);
        let mut check = |word: &str| {
            for (i, t) in terms.iter().enumerate() {
                if word == joined[i].0
                    || word == joined[i].1
                    || joined[i].2.iter().any(|b| b == word)
                {
                    found[i] = true;
                }
                if t.words.len() > 1 {
                    for (j, w) in t.words.iter().enumerate() {
                        if word == w {
                            words_found[i][j] = true;
                        }
                    }
                }
            }
        };
        let mut check_with_stem = |word: &str| {
            check(word);
            if word.ends_with('s') {
                let stem = super::search::s_stem(word);
                if stem != word {
                    check(&stem);
                }
            }
        };
        for run in p.split(|c: char| !c.is_alphanumeric()) {
            if run.is_empty() {
                continue;
            }
            if run.chars().any(char::is_uppercase) {
                check_with_stem(&run.to_lowercase());
                let parts = super::search::identifier_words(run);
                if parts.len() > 1 {
                    for part in &parts {
                        check_with_stem(part);
                    }
                }
            } else {
                check_with_stem(run);
            }
        }
        let held: f64 = (0..terms.len())
            .filter(|&i| {
                found[i] || (terms[i].words.len() > 1 && words_found[i].iter().all(|&f| f))
            })
            .map(|i| weights[i])
            .sum();
        best = best.max(held);
    }
    best / total
}

/// The smallest token budget a `context` answer can honour: its header and one INDEX
/// line (tokens ≈ characters / 4). A smaller one is refused, not silently raised.
pub const MIN_BUDGET: u64 = 50;

/// The names the note about names nothing holds lists; it counts the rest.
const NOTE_NAMES: usize = 10;

/// The most hits per kind a search returns: a larger `limit` is refused, not cut.
pub const SEARCH_LIMIT_MAX: u32 = 1000;

/// Sessions the recap heading a `context` answer lists, newest first.
const RECAP_SESSIONS: u32 = 3;

/// Characters of a session's task, and of its summary, that the recap heading a
/// `context` answer quotes (a DIGEST's length; `loci recap` shows them whole).
pub const RECAP_CHARS: usize = 200;

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
    /// [`SEARCH_LIMIT_MAX`] (0 used to give one hit, 5,000 a thousand), or a path prefix
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

    fn search_in_snapshot(
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
    fn path_prefix(&self, options: &SearchOptions) -> Result<Option<String>> {
        let Some(p) = options.path_prefix.as_deref() else {
            return Ok(None);
        };
        let rel = self.contain("path", p)?;
        if rel == "." {
            return Ok(None);
        }
        // `--path srv/` (for `server/`) had answered "nothing matches", as if the words
        // were at fault.
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
    fn exact_symbols_first(
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
    fn index_hits(
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

    /// The pages the structure step of [`Workspace::context`] can score, by subject: those
    /// about the files of matching symbols (`symbol_files`), the memory candidates found so
    /// far, every topic, and those [`module_points`] and [`unmapped_points`] give points
    /// from the open entries: an open file, its folder, that folder's parents and what is
    /// under it (siblings, child folders); an open folder (`dir/`), its parents and what is
    /// under it; the folder of an open file the map lacks and what is under it. An open
    /// entry at the root reaches every page, so then all are read. Reading all 505 pages
    /// of the stdlib benchmark store had been a fifth of a question nothing answers
    /// (callgrind: 10.46 M instructions with it, 8.50 M without).
    fn pages_near(
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
    fn text_candidates(
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
    fn code_items(
        &self,
        query: &str,
        terms: &[Term],
        dense: Option<(Vec<i64>, f64, std::sync::Arc<HashSet<i64>>)>,
        (named_ids, named_files, named_keys): (&[i64], usize, &[NamedKey]),
        cands: &mut BTreeMap<(HitKind, String), Candidate>,
        symbol_files: &mut BTreeMap<String, f64>,
    ) -> Result<bool> {
        use super::retrieve::RankedList;
        let conn = self.store.conn();
        let asks = Asks::of(terms);
        let mut extra = Vec::new();
        if !named_ids.is_empty() {
            extra.push(RankedList {
                name: "named in the question",
                weight: 1.0,
                files: named_ids.to_vec(),
                sees: None,
            });
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
        let hits = self.code_candidates(query, terms, extra, asks.any(), &demoted, CODE_FILES)?;
        let (rows, dfs) = self.term_frequencies(FtsTable::FileText, terms)?;
        let weights: Vec<f64> = dfs.iter().map(|&df| idf(rows, df)).collect();
        let decay_at = |rank: usize| RANK_K / (RANK_K + rank as f64);
        let chunk_symbols: Vec<i64> = hits
            .iter()
            .flat_map(|h| h.chunks.iter().take(CODE_CHUNKS_SHOWN))
            .filter_map(|c| c.symbol_id)
            .collect();
        let keys = loci_store::map::symbol_keys_by_ids(conn, &chunk_symbols)?;
        // Items follow the fused order; how much of the question the best of the first
        // few files holds sets how relevant the ranking is as a whole.
        // Only the first few files' shares are read (one lookup per term each): the rest
        // follow the fused order whatever their share.
        let coverages: Vec<f64> = hits
            .iter()
            .take(CODE_STRENGTH_FILES)
            .map(|h| self.code_coverage(h, terms, &weights))
            .collect::<Result<_>>()?;
        // With embeddings, the best chunk's cosine with the question counts as its share:
        // a paraphrase shares no word with the code it asks about.
        let strength = coverages.iter().copied().fold(dense_best, f64::max);
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
            for (i, chunk) in chunks.into_iter().enumerate() {
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
                c.add(points, true, why.clone());
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
        let quoted = hits
            .iter()
            .any(|h| h.signals.iter().any(|s| s.starts_with("quoted text")));
        if !super::retrieve::asks_for_dependents(query) {
            return Ok(quoted);
        }
        // Each dependent as its path, why it is one, and what the answer says of it.
        let dependents: Vec<(String, String, String)> = if named_files == 0
            && !named_keys.is_empty()
        {
            // A question about what uses a definition it names ("who calls shlex.quote?")
            // is answered from the references resolved to it, not from its file's
            // importers (nor from the best file found: `unittest/mock.py`, for its
            // `call`s).
            let keys: Vec<&str> = named_keys.iter().map(|(_, k, _)| k.as_str()).collect();
            // The names as the question wrote them (`shlex.quote`).
            let mut written: Vec<&str> = named_keys.iter().map(|(_, _, n)| n.as_str()).collect();
            written.dedup();
            let named = ticked(&written);
            let mut count: BTreeMap<String, usize> = BTreeMap::new();
            for r in loci_store::map::refs_to_any(conn, &keys, None, DEPENDENT_REFS)? {
                if r.confidence >= super::retrieve::DEPENDENT_CONFIDENCE {
                    *count.entry(r.path).or_default() += 1;
                }
            }
            // Most references first; ties in path order (a stable sort of a map).
            let mut count: Vec<(String, usize)> = count.into_iter().collect();
            count.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
            count
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
            // The file the question names by path, else the best one found.
            let named_file = named_ids[..named_files].first().copied();
            let Some(target) = named_file.or(hits.first().map(|h| h.file_id)) else {
                return Ok(quoted);
            };
            let Some(target_path) = loci_store::map::file_path(conn, target)? else {
                return Ok(quoted);
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
        let (main, secondary): (Vec<_>, Vec<_>) =
            dependents.into_iter().partition(|(p, _, _)| !demoted(p));
        let top = best.max(self.config.context.floor) + DEPENDENT_POINTS;
        for (i, (path, why, digest)) in main.into_iter().chain(secondary).enumerate() {
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
        Ok(quoted)
    }

    /// The source of lines `start..=end` (zero-based) of `path` as a FULL item: a heading
    /// and at most [`FULL_SOURCE_LINES`] lines; empty when the file cannot be served.
    fn chunk_full(&self, path: &str, start: u32, end: u32) -> String {
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
            // Answered empty, as `search` answers an empty query (it had been an invalid
            // argument here and "nothing found" there): an explicit abstention.
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
        // parents, the root among them, are not its module: `--open email/nosuch.py` had
        // served the root page first); anywhere else it earns nothing (at the root,
        // "beside it" is every top-level file: a mistyped `nosuch.py` had served them
        // all). The answer says which, in its notes and its markdown.
        let place = |p: &str| -> Result<(bool, bool)> {
            conn.prepare_cached(
                "SELECT EXISTS(SELECT 1 FROM files WHERE path = ?1),
                        EXISTS(SELECT 1 FROM files WHERE path > ?1 || '/' AND path < ?1 || '0')",
            )
            .and_then(|mut st| st.query_row([p], |r| Ok((r.get(0)?, r.get(1)?))))
            .map_err(|e| loci_store::StoreError::sqlite("looking up an open file", e).into())
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
        // has: `number.rs`) is an open file too: "before editing src/number.rs" had
        // abstained although the file had a memory page.
        let named_files = files_named_in(conn, query)?;
        for f in &named_files {
            if !open.contains(f) {
                open.push(f.clone());
            }
        }
        let mut cands: BTreeMap<(HitKind, String), Candidate> = BTreeMap::new();

        // 1. Text: memory, symbols, docs, weighed by how much of the question they hold.
        let terms = super::search::content_terms(query);
        // A question that only asks about the code at hand ("what should I know before I
        // touch this?", the question agents ask most) names no topic: with files open it
        // is about them, and its words are searched for nowhere (`CookieJar`'s docstring,
        // "You may not need to know about this class", had answered it in their place).
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
        let asks = Asks::of(&terms);
        let mut symbol_files: BTreeMap<String, f64> = BTreeMap::new();
        // Revisions read by the memory search, by id (step 4 needs them again).
        let mut revisions: HashMap<i64, mem::Revision> = HashMap::new();
        // A candidate found in several passages (a long section is several chunks) scores
        // its best passage once: the rule is "up to +30", and summing weak passages let a
        // long document outrank the code that answers the question.
        let (mut text_hits, weights) = self.text_candidates(&terms, asks, TEXT_HITS)?;
        self.check_cancelled()?;
        // Symbols the question names (`Store::write`, `parse_config`, a one-word question).
        // Each is also a text hit at rank 0: the definition a question names is its best
        // match, even where FTS5's length normalisation ranks a long doc comment below the
        // hits kept (`namedtuple`, with a 40-line docstring, came after 50 of its tests).
        let mut named: Vec<(String, loci_store::map::SymbolHit)> = Vec::new();
        // Whether the question names a definition by a qualified name the map resolves
        // (`json.dumps`, `Runtime::block_on`): it is about this code, whatever else it
        // names ("in my Flask app, how does json.dumps …").
        let mut named_qualified = false;
        for name in super::search::identifier_tokens(query) {
            let wanted = name.replace("::", ".");
            let found = named_symbols(conn, &wanted)?;
            // A bare name defined in many files (`__init__`, `name`, `new`) names a kind of
            // definition, not one: its words are searched as the question's other words
            // are (every `__init__` of the stdlib, in path order, had led the answer).
            let files: HashSet<&str> = found.iter().map(|s| s.path.as_str()).collect();
            if !wanted.contains('.') && files.len() > NAMED_FILES {
                continue;
            }
            if wanted.contains('.') && !found.is_empty() {
                named_qualified = true;
            }
            for s in found {
                if !terms.is_empty() {
                    let text = symbol_text(&s.qualified_name, &s.signature, s.doc.as_deref());
                    text_hits.push(TextHit {
                        hit: SearchHit::of_symbol(&s, 0.0),
                        coverage: coverage(&[text], &terms, &weights),
                        rank: 0,
                        place: 0,
                        revision: None,
                        text: String::new(),
                    });
                }
                named.push((name.clone(), s));
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
            let prior = 30.0 * th.coverage * (decay_at(th.place) - decay);
            if let Some(r) = th.revision {
                revisions.insert(r.revision_id, r);
            }
            let h = th.hit;
            if !scored.insert((h.kind, h.id.clone())) {
                continue;
            }
            let c = cands
                .entry((h.kind, h.id.clone()))
                .or_insert_with(|| Candidate::new(h.kind, h.id.clone(), h.path.clone()));
            c.line = h.line;
            c.text_points = 30.0 * th.coverage * decay;
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
                    let e = symbol_files.entry(p.clone()).or_insert(0.0);
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
        let mut named_ids: Vec<i64> = Vec::new();
        for f in &named_files {
            if let Some(id) = loci_store::map::file_id(conn, f)? {
                named_ids.push(id);
            }
        }
        for (_, s) in &named {
            if let Some(id) = loci_store::map::file_id(conn, &s.path)?
                && !named_ids.contains(&id)
            {
                named_ids.push(id);
            }
        }
        // The definitions the question names, by file: each is served with its file's code
        // relevance (the file's best chunks may be others: `shlex.split`'s file led with
        // its `__all__`, and `split` itself, with only the +15 it is named for, was 37th).
        let named_keys: Vec<NamedKey> = named
            .iter()
            .map(|(name, s)| (s.path.clone(), s.key.clone(), name.clone()))
            .collect();
        // The symbols the question names, and their files: a decisions or lessons page
        // whose claims resolve to one is linked to the question.
        let named_targets: HashSet<String> = named
            .iter()
            .flat_map(|(_, s)| [s.key.clone(), s.path.clone()])
            .collect();
        for (name, s) in named {
            let c = cands
                .entry((HitKind::Symbol, s.key.clone()))
                .or_insert_with(|| {
                    Candidate::new(HitKind::Symbol, s.key.clone(), Some(s.path.clone()))
                });
            c.line = Some(s.line);
            c.add(
                NAMED_POINTS,
                true,
                format!("named in the question (`{name}`)"),
            );
            let e = symbol_files.entry(s.path.clone()).or_insert(0.0);
            *e = e.max(0.5);
        }
        // The code: the files that answer the question, fused from the code-text indexes
        // and the files of the symbols and paths it names (`super::retrieve`), each served
        // as its best chunks; a question about what depends on a file, its dependents first.
        // Whether text the question quotes is in the code verbatim: such a question is
        // about this code, whatever else it names.
        let mut quoted_found = false;
        let mut dense_notes: Vec<String> = Vec::new();
        let mut dense_best = 0.0f64;
        if !terms.is_empty() {
            let dense = match self.dense_files(query) {
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
                        dense_notes.push(format!(
                            "embeddings: {} of {chunks} code chunks have vectors (`loci embed` adds the rest)",
                            chunks - missing
                        ));
                    }
                    Some((files, embedded))
                }
                super::embed::DenseState::Failed(why) => {
                    dense_notes.push(format!(
                        "embeddings unavailable, answered from the text alone: {why}"
                    ));
                    None
                }
            };
            quoted_found = self.code_items(
                query,
                &terms,
                dense.map(|(files, embedded)| (files, dense_best, embedded)),
                (&named_ids, named_files.len(), &named_keys),
                &mut cands,
                &mut symbol_files,
            )?;
        }
        // Names the question uses (`Kubernetes`, `io_uring`, `JSON Schema`) that nothing
        // loci can answer from holds: the question is about something else.
        let mut missing: Vec<String> = Vec::new();
        if !quoted_found && !named_qualified {
            // The first names only, as the first terms only are searched.
            let names = super::search::names_in(query);
            for (name, tokens) in names.into_iter().take(super::search::MAX_QUERY_TERMS) {
                if !self.corpus_holds(&super::search::name_expression(&tokens), asks.any())? {
                    missing.push(name);
                }
            }
        }
        // 2. Structure: pages about the files of matching symbols, about open files and
        //    their folders, topics holding those files; code and docs in the open modules.
        // Whether the question's words find anything relevant (text and named symbols are
        // all the relevance there is so far), and whether memory about a folder holding an
        // open file (the root aside) is relevant: when neither, the open files are what
        // the question is about (their outlines and main symbols, below).
        let question_found = cands.values().any(|c| c.relevance >= relevant_at);
        let mut module_memory = false;
        self.check_cancelled()?;
        let pages = self.pages_near(&open, &unmapped_open, &symbol_files, &cands)?;
        // The decisions and lessons pages with a claim about an open file.
        let mut about_open: Vec<String> = Vec::new();
        for page in pages.iter() {
            if page.current_revision_id.is_none() {
                continue;
            }
            let subject = &page.subject;
            let mut points: Vec<(f64, String)> = Vec::new();
            if let Some(share) = symbol_files.get(subject) {
                points.push((24.0 * share, "symbol match in this file".into()));
            }
            let folder = page.kind == "folder" || page.kind == "root";
            // Only pages about a place have a module: `decisions`, `lessons` and topics
            // are not files at the root, siblings of every file open there.
            if folder || page.kind == "file" {
                points.extend(
                    module_points(subject, folder, &open)
                        .or_else(|| unmapped_points(subject, folder, &unmapped_open)),
                );
            }
            // Decisions and lessons about an open file (a claim resolved to it, to a symbol
            // in it, or into an open folder) are memory about it, as its page is: a
            // decision about `http/client.py` had been left out of `--open
            // http/client.py`, and the +25 such a claim earns (below) asks for relevance.
            if (page.kind == "decisions" || page.kind == "lessons")
                && !open.is_empty()
                && let Some(rev) = page.current_revision_id
                && linked_to(conn, rev, &open, &HashSet::new())?
            {
                points.push((EPISODIC_OPEN_POINTS, "a claim about an open file".into()));
                about_open.push(subject.clone());
            }
            if page.kind == "topic" {
                let members = mem::topic_members(conn, page.page_id)?;
                if members
                    .iter()
                    .any(|m| symbol_files.contains_key(m) || open.contains(m))
                {
                    points.push((25.0, "topic holds a matching file".into()));
                }
            }
            let key = (HitKind::Memory, subject.clone());
            if points.is_empty() && !cands.contains_key(&key) {
                continue;
            }
            let c = cands
                .entry(key)
                .or_insert_with(|| Candidate::new(HitKind::Memory, subject.clone(), None));
            for (p, why) in points {
                c.add(p, true, why);
            }
            if page.kind == "folder"
                && c.relevance >= relevant_at
                && open.iter().any(|f| under_path(f, subject))
            {
                module_memory = true;
            }
        }
        // Code and docs near what is open; a file the question names is ranked as code by
        // fusion (`code_items`), and its neighbours are not the question's.
        for c in cands.values_mut().filter(|c| c.kind != HitKind::Memory) {
            if let Some((p, why)) = c.path.clone().and_then(|f| {
                module_points(&f, false, &opened)
                    .or_else(|| unmapped_points(&f, false, &unmapped_open))
            }) {
                c.add(p, true, why);
            }
        }
        // When neither the question's words nor memory about the open files' folders are
        // relevant, the open files are what the question is about: their outlines and
        // main symbols are candidates too, at the open module's +50 ("what should I know
        // before I touch this?" had abstained unless the file had a page; its page, if
        // any, is served with them). Bounded: a few symbols a file, top-level first.
        // Taken for every question, they outranked what a question did find, and the
        // folder's memory (the open module's +50 is more than any text match).
        let expand = !question_found && !module_memory;
        let checked = self.map_checked_by_these_rules();
        let mut open_symbols = 0usize;
        let mut expanded = 0u32;
        for f in &open {
            if !expand || f.ends_with('/') || f == "." {
                continue;
            }
            let (total, top_level, first) =
                loci_store::map::file_outline(conn, f, OUTLINE_SYMBOLS)?;
            let first: Vec<_> = first
                .into_iter()
                .filter(|s| self.symbol_text_served(checked, s))
                .collect();
            let mut taken: Vec<(HitKind, String)> = vec![(HitKind::File, f.clone())];
            let c = cands
                .entry((HitKind::File, f.clone()))
                .or_insert_with(|| Candidate::new(HitKind::File, f.clone(), Some(f.clone())));
            (c.full, c.digest) = open_file_outline(conn, f, total, top_level, &first)?;
            let main: Vec<_> =
                loci_store::map::file_main_symbols(conn, f, OPEN_FILE_SYMBOLS as u32 * 2)?
                    .into_iter()
                    .filter(|s| self.symbol_text_served(checked, s))
                    .collect();
            for s in main.into_iter().take(OPEN_FILE_SYMBOLS) {
                if open_symbols == OPEN_SYMBOLS_TOTAL {
                    break;
                }
                open_symbols += 1;
                let key = (HitKind::Symbol, s.key.clone());
                if !cands.contains_key(&key) {
                    let mut c = Candidate::new(HitKind::Symbol, s.key.clone(), Some(s.path));
                    c.line = Some(s.line);
                    cands.insert(key.clone(), c);
                    taken.push(key);
                }
            }
            for key in taken {
                expanded += 1;
                if let Some(c) = cands.get_mut(&key)
                    && c.relevance == 0.0
                    && let Some((p, why)) = module_points(f, false, &open)
                {
                    c.order = expanded;
                    c.add(p, true, why);
                }
            }
        }
        // 3. One link-hop from the top-3 relevant seeds (files), and personalized PageRank
        //    when memory is thin. Hops support an item; they are not evidence on their own.
        let mut seeds: Vec<(f64, String)> = cands
            .values()
            .filter(|c| c.relevance >= relevant_at)
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
        let seed_files: BTreeSet<String> = top.into_iter().chain(open.iter().cloned()).collect();
        let mut neighbours: BTreeSet<String> = BTreeSet::new();
        for s in &seed_files {
            neighbours.extend(import_neighbours(conn, s)?);
        }
        // Per page, as in the seed: symbols and doc sections stand on their own text. Like
        // every boost, a hop lifts only what is relevant on its own.
        // Code files are ranked by fusion (`code_items`), which weighs their links itself.
        for c in cands
            .values_mut()
            .filter(|c| c.kind == HitKind::Memory)
            .filter(|c| c.relevance >= relevant_at)
        {
            let file = c
                .path
                .clone()
                .or_else(|| (c.kind == HitKind::Memory).then(|| c.id.clone()));
            if file
                .as_ref()
                .is_some_and(|f| neighbours.contains(f) && !seed_files.contains(f))
            {
                c.add(15.0, false, "one import hop from a top result");
            }
        }
        // The other link: symbols that the top three relevant pages name (their resolved
        // symbol claims). A page whose own full-text points clear the floor holds the
        // question, and what it names is evidence: the symbol gains half the page's text
        // points (up to +15) as relevance ("put user text into a shell command line" finds
        // the decision naming `shlex.quote`, whose own text shares no word with it). From
        // any other seed page the link is support, not evidence: +15 only for a symbol
        // relevant on its own (a page sharing the word "before" with the question had
        // lifted the three symbols it names, at relevance 0, above the method the question
        // named).
        let page_text: HashMap<String, f64> = cands
            .values()
            .filter(|c| c.kind == HitKind::Memory)
            .map(|c| (c.id.clone(), c.text_points))
            .collect();
        let mut seed_pages: Vec<(f64, String)> = cands
            .values()
            .filter(|c| c.kind == HitKind::Memory && c.relevance >= relevant_at)
            .map(|c| (c.relevance, c.id.clone()))
            .collect();
        seed_pages.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (_, subject) in seed_pages.into_iter().take(3) {
            let Some(rev_id) = pages
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
                if text >= relevant_at {
                    let path = key.split_once('#').map(|(p, _)| p.to_string());
                    let c = cands
                        .entry((HitKind::Symbol, key.clone()))
                        .or_insert_with(|| Candidate::new(HitKind::Symbol, key.clone(), path));
                    c.add(
                        text * NAMED_BY_MEMORY_SHARE,
                        true,
                        format!("named by memory `{subject}`, which holds the question"),
                    );
                } else if let Some(c) = cands.get_mut(&(HitKind::Symbol, key))
                    && c.relevance >= relevant_at
                {
                    c.add(15.0, false, format!("named by memory `{subject}`"));
                }
            }
        }
        let memory_relevant = cands
            .values()
            .filter(|c| c.kind == HitKind::Memory && c.relevance >= relevant_at)
            .count();
        // Where memory is thin, the files nearest the open ones in the import graph (as
        // Aider's repo map ranks them) are candidates of their own: support, not evidence,
        // so they are served as index lines after what is relevant (the memory about the
        // open file and its outline come first).
        // Personalized to the open files only: seeded with the question's top results too,
        // a weak match elsewhere had brought the files around it (`urllib/parse.py` for
        // `json/encoder.py` open, through `http/cookiejar.py`).
        let open_files: BTreeSet<String> = opened
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
                let c = cands
                    .entry((HitKind::File, file.clone()))
                    .or_insert_with(|| {
                        Candidate::new(HitKind::File, file.clone(), Some(file.clone()))
                    });
                c.add(12.0 * rank, false, "import-graph centrality near the seeds");
            }
        }
        // 4. Memory details: bodies, recency, staleness, contradictions.
        let week_ago = jiff::Timestamp::now()
            .checked_sub(jiff::SignedDuration::from_hours(24 * 7))
            .map(|t| t.to_string())
            .unwrap_or_default();
        let contradictions = loci_store::audit::contradictions(conn, Some("open"))?;
        let best_text = cands.values().map(|c| c.text_points).fold(0.0, f64::max);
        let mut stale_warnings = Vec::new();
        let mut banners = Vec::new();
        let page_of: HashMap<&str, &mem::Page> =
            pages.iter().map(|p| (p.subject.as_str(), p)).collect();
        // The current revision of every memory candidate (most were read by the search),
        // then the staleness of all of them at once.
        for c in cands.values().filter(|c| c.kind == HitKind::Memory) {
            if let Some(id) = page_of
                .get(c.id.as_str())
                .and_then(|p| p.current_revision_id)
                && !revisions.contains_key(&id)
                && let Some(r) = mem::revision_by_id(conn, id).ok().flatten()
            {
                revisions.insert(id, r);
            }
        }
        let current = |subject: &str| {
            let page = *page_of.get(subject)?;
            Some((revisions.get(&page.current_revision_id?)?, page))
        };
        let pairs: Vec<(&mem::Revision, &mem::Page)> = cands
            .values()
            .filter(|c| c.kind == HitKind::Memory)
            .filter_map(|c| current(&c.id))
            .collect();
        let mut staleness = self.cached_staleness(&pairs)?;
        // The names the question writes as identifiers, by their last segment.
        let question_names: HashSet<String> = super::search::identifier_tokens(query)
            .iter()
            .map(|n| last_segment(n).to_string())
            .collect();
        for c in cands.values_mut().filter(|c| c.kind == HitKind::Memory) {
            let Some((rev, page)) = current(&c.id) else {
                continue;
            };
            // What the memory says about code the question names and the code no longer
            // has: it is false about the very thing asked, so it is shown as false.
            let stale = staleness.remove(&rev.revision_id).unwrap_or_default();
            let mut false_names: Vec<&str> = Vec::new();
            for s in &stale {
                if matches!(s.reason, crate::audit::audit::StaleReason::Deleted { .. })
                    && let Some(t) = s.claim_text.as_deref()
                    && question_names.contains(last_segment(t))
                    && !false_names.contains(&t)
                {
                    false_names.push(t);
                }
            }
            if !false_names.is_empty() {
                c.add(
                    NAMED_POINTS,
                    true,
                    format!("names {}, named in the question", ticked(&false_names)),
                );
            }
            // Boosts lift what is relevant; they never make an irrelevant page relevant. The
            // episodic boost also asks for a signal of the page's own (see
            // `EPISODIC_TEXT_SHARE`): one common word had put the lessons page first.
            if c.relevance >= relevant_at {
                if (page.kind == "decisions" || page.kind == "lessons")
                    && (c.text_points >= EPISODIC_TEXT_SHARE * best_text
                        || linked_to(conn, rev.revision_id, &open, &named_targets)?)
                {
                    c.add(25.0, false, page.kind.clone());
                }
                if rev.created_at >= week_ago {
                    c.add(10.0, false, "updated this week");
                }
            }
            if !stale.is_empty() {
                c.stale = true;
                c.add(-20.0, false, "stale");
                stale_warnings.extend(stale.iter().map(|s| {
                    let warning = StaleWarning {
                        path: s.subject.clone(),
                        reason: s.describe(),
                    };
                    (c.id.clone(), warning)
                }));
            }
            let open_here = contradictions
                .iter()
                .filter(|x| x.origin == "page" && x.subject == c.id)
                .count() as u64;
            if open_here > 0 {
                c.contradictions = open_here;
                c.add(-40.0, false, "open contradictions");
            }
            // Model-written text ranks below human-written text of equal relevance: it is
            // stored like any memory and trusted like none (issue 35).
            if rev
                .author
                .starts_with(crate::memory::synthesis::MODEL_AUTHOR_PREFIX)
            {
                c.add(
                    -crate::memory::synthesis::MODEL_WRITTEN_POINTS,
                    false,
                    "written by a model",
                );
            }
            // Penalties put false memory about what the question names after the rest,
            // never out of the answer.
            if !false_names.is_empty() && c.score() <= 0.0 {
                c.add(
                    FALSE_SHOWN_POINTS - c.score(),
                    false,
                    "false about what the question names: shown, marked",
                );
            }
            // A page at no points or below gets no index line (see the packing), so no
            // banner either: it would warn about memory the answer does not show.
            if !false_names.is_empty() && c.score() > 0.0 {
                banners.push(format!(
                    "⚠ memory `{}` names {}, which the code no longer has: it is false about \
                     what you asked until it is corrected (`loci lint`)",
                    c.id,
                    ticked(&false_names)
                ));
            } else if open_here > 0 && c.score() > 0.0 {
                banners.push(format!("⚠ memory `{}` has {open_here} open contradiction(s) with the code; verify before relying on it (`loci lint`)", c.id));
            }
            c.full = format!(
                "### {} (v{}, {} by {})\n{}{}\n",
                rev.subject,
                rev.version,
                &rev.created_at[..rev.created_at.len().min(10)],
                rev.author,
                if c.stale {
                    "> stale: the code changed since this was written\n"
                } else {
                    ""
                },
                rev.body.trim_end()
            );
            c.digest = rev
                .summary
                .clone()
                .unwrap_or_else(|| crate::memory::memory::first_chars(&rev.body, 200));
        }
        // The repository's docs are checked by lint too (origin `doc`): a section holding a
        // claim lint found false is served with its contradictions, as memory is (−40, a
        // banner, a warning each), never as if it were true.
        for c in cands.values_mut().filter(|c| c.kind == HitKind::Doc) {
            let (Some(path), Some(line)) = (c.path.clone(), c.line) else {
                continue;
            };
            let end = doc_section_end(conn, &path, line)?.unwrap_or(line);
            let false_here: Vec<&loci_store::audit::Contradiction> = contradictions
                .iter()
                .filter(|x| x.origin == "doc" && x.subject == path)
                .filter(|x| line <= x.line && x.line <= end)
                .collect();
            if false_here.is_empty() {
                continue;
            }
            c.contradictions = false_here.len() as u64;
            // Demoted, never dropped: a section the answer would have served is served
            // after the rest, marked, rather than hidden by its penalty.
            let served = c.score() > 0.0;
            c.add(-40.0, false, "open contradictions");
            if served && c.score() <= 0.0 {
                c.add(
                    FALSE_SHOWN_POINTS - c.score(),
                    false,
                    "false in part: shown, marked",
                );
            }
            stale_warnings.extend(false_here.iter().map(|x| {
                (
                    c.id.clone(),
                    StaleWarning {
                        path: path.clone(),
                        reason: doc_false_reason(x),
                    },
                )
            }));
            if c.score() > 0.0 {
                banners.push(format!(
                    "⚠ doc `{}` has {} open contradiction(s) with the code; verify before relying on it (`loci lint`)",
                    c.id,
                    false_here.len()
                ));
            }
        }
        let symbol_keys: Vec<&str> = cands
            .values()
            .filter(|c| c.kind == HitKind::Symbol)
            .map(|c| c.id.as_str())
            .collect();
        let mut symbols = loci_store::map::symbols_by_keys(conn, &symbol_keys)?;
        // A key memory names (a stale page's claim) may be gone from the map: an answer
        // never lists code that no longer exists (a renamed method was served as live).
        cands.retain(|(kind, id), _| *kind != HitKind::Symbol || symbols.contains_key(id));
        // A symbol whose first line or doc comment a secret rule configured since the scan
        // finds is left out, as its file's source is.
        let withheld: Vec<String> = symbols
            .values()
            .filter(|s| !self.symbol_text_served(checked, s))
            .map(|s| s.key.clone())
            .collect();
        for key in &withheld {
            symbols.remove(key);
            cands.remove(&(HitKind::Symbol, key.clone()));
        }
        for c in cands.values_mut().filter(|c| c.kind == HitKind::Symbol) {
            if let Some(s) = symbols.remove(&c.id) {
                let doc = s
                    .doc
                    .as_deref()
                    .map(|d| crate::memory::memory::first_chars(d, 200))
                    .unwrap_or_default();
                c.digest = format!(
                    "`{}` — {}:{}{}",
                    s.signature,
                    s.path,
                    s.line + 1,
                    if doc.is_empty() {
                        String::new()
                    } else {
                        format!(" — {doc}")
                    }
                );
                c.symbol = Some(s);
            }
        }
        for c in cands
            .values_mut()
            .filter(|c| c.kind == HitKind::Doc || c.kind == HitKind::File)
        {
            if c.full.is_empty() {
                c.full = c.digest.clone();
            }
            if c.digest.is_empty() {
                c.digest = c.id.clone();
            }
        }

        // Test code answers a question about tests; otherwise it is usage, not the answer
        // (examples and vendored code alike, and the memory about them: a page on
        // `test/test_urlparse.py`).
        for c in cands.values_mut() {
            let place = match c.kind {
                HitKind::Symbol | HitKind::File => c.path.as_deref(),
                HitKind::Memory => Some(c.id.as_str()),
                HitKind::Doc => None,
            };
            if let Some(kind) = asks.demotes(place) {
                c.add(-TEST_CODE_PENALTY, false, kind.signal());
            }
        }

        // An open file's outline and main symbols never outrank the memory about it: its
        // page, and the decisions and lessons with a claim about an open file. A stale page
        // (−20) had dropped below its file's constants to a last one-line digest, though it
        // is what the reader must see, and fix, first; and the symbols a fresh page names
        // (+15) had come before the page and the decision about the file.
        let memory_scores: Vec<(Option<String>, f64)> = cands
            .values()
            .filter(|c| c.kind == HitKind::Memory && c.score() > 0.0)
            .map(|c| {
                // A decision or lesson about an open file is about each open file.
                let about = (!about_open.contains(&c.id)).then(|| c.id.clone());
                (about, c.score())
            })
            .collect();
        for c in cands.values_mut().filter(|c| c.order > 0) {
            let cap = memory_scores
                .iter()
                .filter(|(about, _)| about.is_none() || about.as_ref() == c.path.as_ref())
                .map(|&(_, score)| score)
                .fold(f64::INFINITY, f64::min);
            if c.score() > cap {
                c.add(cap - c.score(), false, "after the memory about its file");
            }
        }

        // 5. Rank, abstain or pack.
        let mut ranked: Vec<Candidate> = cands.into_values().collect();
        ranked.sort_by(|a, b| {
            b.score()
                .total_cmp(&a.score())
                .then_with(|| a.order.cmp(&b.order))
                .then_with(|| a.id.cmp(&b.id))
        });
        let best_relevance = ranked.iter().map(|c| c.relevance).fold(0.0, f64::max);
        let best_candidate = ranked
            .iter()
            .filter(|c| c.relevance == best_relevance && best_relevance > 0.0)
            .map(|c| c.id.clone())
            .next();
        // A floor that is not finite asks for every candidate (eval, calibrate).
        // A name nothing holds abstains at any floor above 0; a floor at or below 0 asks
        // for every candidate (eval and calibrate pass −∞).
        // Text the question quotes, found verbatim in the code, is a strong lexical match:
        // such a question never abstains.
        let abstained =
            !quoted_found && (best_relevance < floor || (!missing.is_empty() && floor > 0.0));
        let (recap, recap_left_out) = self.recap_block(RECAP_SESSIONS, budget / 4)?;
        let recap_cut = recap_left_out > 0;
        // The recap and the blank line the markdown puts after it.
        let mut used = if recap.is_empty() {
            0
        } else {
            line_tokens(&recap)
        };
        if !abstained {
            // The heading and the closing line are part of what the reader is given; the
            // closing line at its longest (every candidate left out).
            used += estimate_tokens(&heading(query))
                + estimate_tokens(&footer(budget, budget, ranked.len() as u64));
        }
        let mut items = Vec::new();
        let mut omitted = 0u64;
        let mut truncated = recap_cut;
        let mut full_served = 0;
        // The source lines each symbol served FULL shows: (path, first, last), zero-based.
        let mut shown: Vec<(&str, u32, u32)> = Vec::new();
        if !abstained {
            for banner in &banners {
                used += line_tokens(banner);
            }
            // A candidate at no points or below (test code that matched nothing else,
            // a stale page found by a hop) is not worth even an index line.
            for c in ranked.iter().filter(|c| c.score() > 0.0) {
                let index_line = format!(
                    "- {} ({:?}, score {:.0}{})",
                    c.id,
                    c.kind,
                    c.score(),
                    if c.stale { ", stale" } else { "" }
                );
                // A symbol whose lines a symbol served FULL already shows (a nested
                // function and its parent) is not shown again.
                let lines = c.symbol.as_ref().map(|s| {
                    let last = s.end_line.max(s.line).min(s.line + FULL_SOURCE_LINES - 1);
                    (s.path.as_str(), s.line, last)
                });
                let mut tiers: Vec<(Tier, String)> = Vec::new();
                if c.relevance >= floor {
                    let overlaps = lines.is_some_and(|(p, a, b)| {
                        shown.iter().any(|&(q, x, y)| p == q && a <= y && x <= b)
                    });
                    if full_served < max_full(budget) && !overlaps {
                        let full = match &c.symbol {
                            Some(s) => self.symbol_full(s),
                            None => c.full.clone(),
                        };
                        if !full.is_empty() {
                            tiers.push((Tier::Full, full));
                        }
                    }
                    let stale = if c.stale { " (stale)" } else { "" };
                    tiers.push((
                        Tier::Digest,
                        format!("- **{}**{stale} — {}", c.id, c.digest),
                    ));
                }
                tiers.push((Tier::Index, index_line));
                let mut served = false;
                for (i, (tier, text)) in tiers.iter().enumerate() {
                    let cost = line_tokens(text);
                    if used + cost <= tier_ceiling(*tier, budget) {
                        used += cost;
                        if *tier == Tier::Full {
                            full_served += 1;
                            shown.extend(lines);
                        }
                        if i > 0 {
                            truncated = true;
                        }
                        items.push(ContextItem {
                            tier: *tier,
                            kind: c.kind,
                            id: c.id.clone(),
                            path: c.path.clone(),
                            score: c.score(),
                            relevance: c.relevance,
                            signals: c.signals.clone(),
                            stale: c.stale,
                            contradictions: c.contradictions,
                            text: text.clone(),
                        });
                        served = true;
                        break;
                    }
                }
                if !served {
                    omitted += 1;
                    truncated = true;
                }
            }
        }
        let mut open_notes: Vec<String> = unmapped_open
            .iter()
            .map(|(f, near)| match near {
                Some(dir) => format!("open file `{f}` is not in the map (no such file, ignored, or not scanned yet): only the memory of `{dir}` and of the files in it scored open-file points"),
                None => format!("open file `{f}` is not in the map (no such file, ignored, or not scanned yet), so nothing near it scored open-file points"),
            })
            .collect();
        // A recap the budget cut says so: it had vanished without a word under a small
        // budget (fault test `fault_the_recap_vanished_silently_under_a_small_budget`).
        if recap_left_out > 0 {
            let what = if recap.is_empty() {
                "the recap of the last sessions was left out".to_string()
            } else {
                format!(
                    "the recap leaves out {} older {}",
                    recap_left_out,
                    if recap_left_out == 1 {
                        "session"
                    } else {
                        "sessions"
                    }
                )
            };
            open_notes.push(format!(
                "{what}: it gets a quarter of the {budget}-token budget, too little (`loci recap` shows them)"
            ));
        }
        if abstained && !missing.is_empty() {
            // A note names a few: it must not echo a long question back.
            let mut names: Vec<String> = missing
                .iter()
                .take(NOTE_NAMES)
                .map(|n| format!("`{n}`"))
                .collect();
            if missing.len() > NOTE_NAMES {
                names.push(format!("{} more", missing.len() - NOTE_NAMES));
            }
            open_notes.push(format!(
                "the question names {}, which nothing in the code, memory or docs holds",
                names.join(", ")
            ));
            // Files skipped as secrets (or otherwise) may define them (issue 32).
            open_notes.extend(self.left_out_note()?);
        }
        if abstained {
            // An open folder abstained without a word: what it counts for is not what an
            // open file does.
            use loci_store::rusqlite::OptionalExtension;
            for dir in &open_folders {
                let example: Option<String> = conn
                    .prepare_cached(
                        "SELECT path FROM files WHERE substr(path, 1, length(?1) + 1) = ?1 || '/' ORDER BY size DESC, path LIMIT 1",
                    )
                    .and_then(|mut st| st.query_row([dir], |r| r.get(0)).optional())
                    .map_err(|e| loci_store::StoreError::sqlite("listing an open folder", e))?;
                open_notes.push(format!(
                    "open folder `{dir}`: memory about it and about its files scores open-file points, but only an open file brings its outline and symbols{}",
                    example
                        .map(|f| format!(" (open a file in it, such as `{f}`)"))
                        .unwrap_or_default()
                ));
            }
        }
        // How dense retrieval stood (vectors missing or partial, the model unusable): in the
        // markdown too, which is what a reader sees.
        open_notes.extend(dense_notes);
        let markdown = render(
            query,
            abstained,
            (best_relevance, floor, best_candidate.as_deref()),
            (&recap, &open_notes),
            &banners,
            &items,
            (used, budget, omitted),
        );
        let mut relies: Vec<String> = items.iter().filter_map(|i| i.path.clone()).collect();
        relies.sort();
        relies.dedup();
        let answer = ContextAnswer {
            query: query.to_string(),
            abstained,
            best_relevance,
            floor,
            best_candidate,
            unknown_names: missing,
            recap,
            banners: if abstained { Vec::new() } else { banners },
            items,
            tokens_estimated: used,
            markdown,
        };
        // Only what the answer serves: a warning about a page left out names something the
        // reader cannot see (and its line is outside the budget). The served memory gets
        // the envelope `show` and `why` give it (`memory_envelope_with`): the files it
        // relies on checked against the disk, its stale marks (read above for ranking),
        // and what lint found false in it.
        let served: HashSet<&str> = answer.items.iter().map(|i| i.id.as_str()).collect();
        let marks: Vec<StaleWarning> = stale_warnings
            .into_iter()
            .filter(|(id, _)| served.contains(id.as_str()))
            .map(|(_, w)| w)
            .collect();
        let served_revisions: Vec<i64> = answer
            .items
            .iter()
            .filter(|i| i.kind == HitKind::Memory)
            .filter_map(|i| page_of.get(i.id.as_str())?.current_revision_id)
            .collect();
        let mut env = self.memory_envelope_with(answer, &served_revisions, relies, marks)?;
        env.capability.notes.extend(open_notes);
        env.capability.notes.extend(query_notes);
        // Pages behind the code, as the last sync or lint counted them (one meta row):
        // an agent hears that memory lags the commits, and what to run.
        env.capability.notes.extend(self.pages_behind_note()?);
        env.limits.budget = Some(budget);
        env.limits.used = used;
        env.limits.truncated = truncated;
        env.limits.omitted = omitted;
        Ok(env)
    }

    /// The last `n` sessions as a compact markdown block (empty when there are none),
    /// within `max_tokens` (estimated): one line per session, its task and summary cut
    /// to their first line and [`RECAP_CHARS`] characters each, newest first, and the
    /// older lines left out when they do not fit. Also says how many sessions were left
    /// out.
    pub fn recap_block(&self, n: u32, max_tokens: u64) -> Result<(String, usize)> {
        let sessions = mem::recent_sessions(self.store.conn(), n)?;
        if sessions.is_empty() {
            return Ok((String::new(), 0));
        }
        let total = sessions.len();
        let mut out = String::from("## Recent sessions\n");
        let mut kept = 0;
        for s in sessions {
            let line = format!(
                "- #{} {} ({}): {}{}\n",
                s.session_id,
                &s.started_at[..s.started_at.len().min(10)],
                s.author,
                s.task
                    .as_deref()
                    .map_or("no task".into(), |t| crate::memory::memory::first_chars(
                        t,
                        RECAP_CHARS
                    )),
                s.summary
                    .as_deref()
                    .map(|x| format!(" — {}", crate::memory::memory::first_chars(x, RECAP_CHARS)))
                    .unwrap_or_default()
            );
            if estimate_tokens(&out) + estimate_tokens(&line) > max_tokens {
                break;
            }
            out.push_str(&line);
            kept += 1;
        }
        if kept == 0 {
            return Ok((String::new(), total));
        }
        Ok((out, total - kept))
    }

    /// A symbol served FULL: a heading, its source (up to [`FULL_SOURCE_LINES`] lines),
    /// then its doc comment when the source does not already show it (a Python docstring
    /// is inside the body; a Rust or JSDoc comment comes before the definition's first
    /// line). In a file edited since the scan, the definition is found again by its first
    /// line (the nearest line holding it) and the heading gives its line now; when no
    /// line holds it, or the file cannot be served, the answer is empty (the item is then
    /// served as a digest) rather than other code at the old lines.
    fn symbol_full(&self, s: &loci_store::map::SymbolHit) -> String {
        let Some((text, as_scanned)) = self.read_served_as_scanned(&s.path) else {
            return String::new();
        };
        let lines: Vec<&str> = text.lines().collect();
        let Some(start) = current_start(s, as_scanned, &lines) else {
            return String::new();
        };
        // A definition ends on or after its first line; clamp a malformed row.
        let span = s.end_line.saturating_sub(s.line) as usize;
        let last = (start + span).min(start + FULL_SOURCE_LINES as usize - 1);
        let mut source = lines
            .iter()
            .skip(start)
            .take(last + 1 - start)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        if start + span > last {
            source.push_str("\n…");
        }
        let doc = s.doc.as_deref().unwrap_or_default();
        let shown = doc
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .is_some_and(|first| source.contains(first));
        format!(
            "### {} {} ({}:{})\n```\n{source}\n```\n{}",
            s.kind,
            s.qualified_name,
            s.path,
            start + 1,
            if shown { "" } else { doc }
        )
    }
}

/// The zero-based line where `s` starts in its file as it is now, split into `lines`: its
/// stored line while the file is as the last scan read it (`as_scanned`), else the nearest
/// line whose trimmed text starts with its signature; `None` when no line does.
fn current_start(
    s: &loci_store::map::SymbolHit,
    as_scanned: bool,
    lines: &[&str],
) -> Option<usize> {
    let stored = s.line as usize;
    if as_scanned {
        return (stored < lines.len().max(1)).then_some(stored);
    }
    let signature = s.signature.trim();
    (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with(signature))
        .min_by_key(|&i| i.abs_diff(stored))
}

/// The share of the best full-text points (over all candidates) that a decision or lesson
/// must hold for its +25, unless its claims link it to the question (see
/// [`linked_to`]). Relevance over the floor is not enough: an entry sharing one common word
/// with the question would be put above the page that answers (fault test `fault_the_lessons_boost_put_a_page_sharing_one_word_first`).
const EPISODIC_TEXT_SHARE: f64 = 0.5;

/// Relevance points of a decision or lesson with a claim resolved to an open file, a
/// symbol in one, or into an open folder ([`linked_to`]): a sibling's (+25). With the episodic +25 it
/// earns with it, the decision about an open file comes with the file's own page (+50),
/// before its outline and main symbols.
const EPISODIC_OPEN_POINTS: f64 = 25.0;

/// Whether the revision has a claim resolved to an open file, a symbol in one, a path in
/// an open folder, a folder holding an open file or folder (the subject of `decide …
/// --subject logging`), or a symbol the question names or its file (`targets`): a
/// structural link between a
/// decisions or lessons page and the question.
fn linked_to(
    conn: &loci_store::rusqlite::Connection,
    revision_id: i64,
    open: &[String],
    targets: &HashSet<String>,
) -> loci_store::Result<bool> {
    if open.is_empty() && targets.is_empty() {
        return Ok(false);
    }
    Ok(mem::claims_of(conn, revision_id)?.iter().any(|claim| {
        claim.resolved.as_deref().is_some_and(|r| {
            let file = r.split_once('#').map_or(r, |(p, _)| p);
            targets.contains(r)
                || open.iter().any(|o| match o.strip_suffix('/') {
                    Some(dir) => under_path(file, dir) || under_path(dir, file),
                    None => file == o || under_path(o, file),
                })
        })
    }))
}

/// Symbols of each open file that `context` takes as candidates (its main ones:
/// [`loci_store::map::file_main_symbols`], public definitions and the most referenced
/// first; in source order, `shutil.py` had served `_WINDOWS` and `COPY_BUFSIZE`); they
/// score the open module's +50 as any item in the file does. A file of 2,000 symbols gives
/// 8, not 2,000.
const OPEN_FILE_SYMBOLS: usize = 8;

/// Decisions and lessons about the open files that `context` scores, newest first.
const OPEN_ENTRIES: usize = 50;

/// Open-file symbols taken over all open files (an editor may send every open tab).
const OPEN_SYMBOLS_TOTAL: usize = 24;

/// Symbols an open file's outline lists (top-level ones), and files importing it.
const OUTLINE_SYMBOLS: u32 = 30;
const OUTLINE_IMPORTERS: usize = 10;

/// An open file's outline, as its FULL text and its DIGEST: how many symbols it has, its
/// top-level ones (signature and one-based line; `first` is what
/// [`loci_store::map::file_outline`] gave, without what must not be served), and the files
/// importing it (its dependents). The first [`OUTLINE_IMPORTERS`] are named.
fn open_file_outline(
    conn: &loci_store::rusqlite::Connection,
    path: &str,
    total: u64,
    top_level: u64,
    first: &[loci_store::map::SymbolHit],
) -> loci_store::Result<(String, String)> {
    use loci_store::Context;
    let importers: Vec<String> = conn
        .prepare_cached(
            "SELECT DISTINCT b.path FROM files a JOIN deps d ON d.to_file_id = a.file_id
                 JOIN files b ON b.file_id = d.from_file_id WHERE a.path = ?1 ORDER BY b.path",
        )
        .and_then(|mut st| {
            st.query_map([path], |r| r.get::<_, String>(0))?
                .collect::<loci_store::rusqlite::Result<Vec<_>>>()
        })
        .ctx(|| format!("reading the files importing {path}"))?;
    let top: Vec<&loci_store::map::SymbolHit> = first
        .iter()
        .filter(|s| !s.qualified_name.contains('.'))
        .collect();
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    let mut full = format!(
        "### {path} (open file: {total} symbol{}, {top_level} top-level)\n",
        plural(total)
    );
    for s in &top {
        full.push_str(&format!(
            "- `{}` — line {}\n",
            s.signature.trim(),
            s.line + 1
        ));
    }
    if top_level > top.len() as u64 {
        full.push_str(&format!(
            "- … {} more top-level\n",
            top_level - top.len() as u64
        ));
    }
    let named = |list: &[String]| {
        let mut out = list
            .iter()
            .take(OUTLINE_IMPORTERS)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if list.len() > OUTLINE_IMPORTERS {
            out.push_str(&format!(" and {} more", list.len() - OUTLINE_IMPORTERS));
        }
        out
    };
    let imported = if importers.is_empty() {
        "imported by no mapped file".to_string()
    } else {
        format!(
            "imported by {} file(s): {}",
            importers.len(),
            named(&importers)
        )
    };
    full.push_str(&format!(
        "{}{}\n",
        imported[..1].to_uppercase(),
        &imported[1..]
    ));
    let names: Vec<&str> = top.iter().take(5).map(|s| s.name.as_str()).collect();
    let digest = format!(
        "open file: {total} symbol{}{}; {imported}",
        plural(total),
        if names.is_empty() {
            String::new()
        } else {
            format!(
                " ({}{})",
                names.join(", "),
                if top_level > names.len() as u64 {
                    ", …"
                } else {
                    ""
                }
            )
        }
    );
    Ok((full, digest))
}

/// The mapped files a question names, in its order: each word that is a mapped path
/// (`server/store/src/lib.rs`, `Cargo.toml`: an indexed lookup), or the name of a source
/// or markdown file that exactly one mapped file has (`number.rs`; `lib.rs`, which many
/// have, names none). A file name is matched against every path, so only words with an
/// extension loci parses or records as markdown are tried that way (`os.path.join` and
/// `e.g.` are not). Quotes, backticks and trailing punctuation around a word are dropped.
fn files_named_in(
    conn: &loci_store::rusqlite::Connection,
    query: &str,
) -> loci_store::Result<Vec<String>> {
    use loci_store::Context;
    let mut out: Vec<String> = Vec::new();
    let mut by_path = conn
        .prepare_cached("SELECT path FROM files WHERE path = ?1")
        .ctx(|| "looking up file paths".into())?;
    let mut by_name = conn
        .prepare_cached(
            "SELECT path FROM files WHERE path = ?1 OR substr(path, -length(?1) - 1) = '/' || ?1
             LIMIT 2",
        )
        .ctx(|| "looking up file names".into())?;
    for word in query.split_whitespace() {
        let w = word
            .trim_matches(|c: char| {
                matches!(
                    c,
                    '`' | '"' | '\'' | '(' | ')' | ',' | ';' | ':' | '?' | '!'
                )
            })
            .trim_end_matches('.')
            .trim_start_matches("./");
        let Some((_, ext)) = w.rsplit_once('.') else {
            continue;
        };
        if w.is_empty() || ext.is_empty() || !ext.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let stmt = if w.contains('/') || loci_core::lang::file_language_name(w).is_none() {
            &mut by_path
        } else {
            &mut by_name
        };
        let found: Vec<String> = stmt
            .query_map([w], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .ctx(|| format!("looking up the file name {w}"))?;
        // The one file of that name, or the one at that very path (`cmd.py` at the root,
        // beside `lib2to3/.../cmd.py`).
        let named = match found.as_slice() {
            [only] => Some(only),
            several => several.iter().find(|p| p.as_str() == w),
        };
        if let Some(f) = named
            && !out.contains(f)
        {
            out.push(f.clone());
        }
    }
    Ok(out)
}

/// The symbols a name in a question names (`wanted`, with `.` for `::`): those whose
/// name, qualified name or key it is; else, for a path, the symbols its last segments name
/// in a file whose path holds each leading segment (`regex.escape` is the crate-level
/// `escape` of `regex-1.13.2/src/lib.rs`, `os.path.join` the `join` of `posixpath.py`: the
/// map qualifies a name by its enclosing definitions, not by crate or module). Top-level
/// definitions (qualified by nothing) come before members and nested items of the same
/// name: `serde_json::Value` is the enum, not an associated `type Value`. At most
/// [`NAMED_SYMBOLS`], chosen from up to [`NAMED_SYMBOL_ROWS`] rows.
fn named_symbols(
    conn: &loci_store::rusqlite::Connection,
    wanted: &str,
) -> loci_store::Result<Vec<loci_store::map::SymbolHit>> {
    let chosen = |mut found: Vec<loci_store::map::SymbolHit>| {
        // Stable: by path and line within each part.
        found.sort_by_key(|s| s.qualified_name != s.name);
        found.truncate(NAMED_SYMBOLS);
        found
    };
    let found = loci_store::map::find_symbols(conn, wanted, NAMED_SYMBOL_ROWS)?;
    if !found.is_empty() {
        return Ok(chosen(found));
    }
    let segments: Vec<&str> = wanted.split('.').filter(|s| !s.is_empty()).collect();
    let folded = |s: &str| s.to_lowercase().replace('-', "_");
    for k in 1..segments.len() {
        let dropped: Vec<String> = segments[..k].iter().map(|s| folded(s)).collect();
        let under: Vec<_> =
            loci_store::map::find_symbols(conn, &segments[k..].join("."), NAMED_SYMBOL_ROWS)?
                .into_iter()
                .filter(|s| {
                    let path = folded(&s.path);
                    dropped.iter().all(|d| path.contains(d.as_str()))
                })
                .collect();
        if !under.is_empty() {
            return Ok(chosen(under));
        }
    }
    Ok(Vec::new())
}

/// The most symbols one name in a question stands for.
const NAMED_SYMBOLS: usize = 20;

/// A definition the question names: its file, its key, and the name as written.
type NamedKey = (String, String, String);

/// The most references read to answer what uses a definition the question names.
const DEPENDENT_REFS: u32 = 2_000;

/// The most files a bare name (no `.` or `::`) may be defined in and still name
/// definitions: more, and it names a kind of definition (`__init__`, `new`, `name`).
const NAMED_FILES: usize = 3;

/// The rows [`named_symbols`] reads per name (an indexed lookup, by path): enough that the
/// top-level definition and the file its leading segments name are among them (the
/// `Value` enum of `serde_json` was row 31 of 37 `Value`s in six crates).
const NAMED_SYMBOL_ROWS: u32 = 500;

/// The last segment of a name as written (`Parser::parse()` → `parse`).
fn last_segment(name: &str) -> &str {
    let name = name.trim_end_matches("()");
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

/// Names in backticks, joined: `` `a()`, `b` ``.
fn ticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The open-module points of an item about `path` (a folder when `folder`): the best over
/// the open files of +50 for the same file or the file's own folder, +25 for a parent or
/// child folder or a sibling file; over the open folders (`dir/`), +50 for what is in one
/// and +25 for a parent folder.
fn module_points(path: &str, folder: bool, open: &[String]) -> Option<(f64, String)> {
    let mut best: Option<(f64, String)> = None;
    for f in open {
        let f_dir = dir_of(f);
        let points = if let Some(dir) = f.strip_suffix('/') {
            // An open folder: what is in it is its module, its parents its parents.
            if path == dir || path.starts_with(f.as_str()) {
                Some((50.0, format!("open module {dir}")))
            } else if folder && (path == "." || dir.starts_with(&format!("{path}/"))) {
                Some((25.0, format!("parent of {dir}")))
            } else {
                None
            }
        } else if path == f || (folder && (path == f_dir || (path == "." && f_dir.is_empty()))) {
            Some((50.0, format!("open module {f}")))
        } else if folder
            && (path == "."
                || f_dir.starts_with(&format!("{path}/"))
                || path.starts_with(&format!("{f_dir}/")))
        {
            Some((25.0, format!("parent/child of {f}")))
        } else if !folder && dir_of(path) == f_dir {
            Some((25.0, format!("sibling of {f}")))
        } else {
            None
        };
        if let Some(p) = points
            && best.as_ref().is_none_or(|b| p.0 > b.0)
        {
            best = Some(p);
        }
    }
    best
}

/// The open-module points of an item about `path` (a folder when `folder`) from the open
/// files the map lacks (`unmapped`: each with its folder when that folder is mapped and
/// not the root): +50 for that folder itself, +25 for a file in it; nothing for its
/// parents, children or anything else. A file the map lacks has no module of its own, so
/// only what its folder holds is near it (an unsaved new file needs what a file beside
/// it would); the root's page is not (`--open email/nosuch.py` had served `.` first).
fn unmapped_points(
    path: &str,
    folder: bool,
    unmapped: &[(String, Option<String>)],
) -> Option<(f64, String)> {
    unmapped
        .iter()
        .filter_map(|(f, dir)| {
            let dir = dir.as_deref()?;
            if folder && path == dir {
                Some((
                    50.0,
                    format!("folder of the open file {f} (not in the map)"),
                ))
            } else if !folder && dir_of(path) == dir {
                Some((25.0, format!("beside the open file {f} (not in the map)")))
            } else {
                None
            }
        })
        .fold(None, |best: Option<(f64, String)>, p| match best {
            Some(b) if b.0 >= p.0 => Some(b),
            _ => Some(p),
        })
}

/// The whole answer as markdown: the recap, a `> note:` line per open file the map lacks
/// (`notes`), then an abstention line, or the banners, heading, items and closing line.
fn render(
    query: &str,
    abstained: bool,
    (best, floor, best_candidate): (f64, f64, Option<&str>),
    (recap, notes): (&str, &[String]),
    banners: &[String],
    items: &[ContextItem],
    (used, budget, omitted): (u64, u64, u64),
) -> String {
    let mut out = String::new();
    if !recap.is_empty() {
        out.push_str(recap);
        out.push('\n');
    }
    for n in notes {
        out.push_str(&format!("> note: {n}\n"));
    }
    if abstained {
        let to = if query.is_empty() {
            "the open files".to_string()
        } else {
            format!("`{}`", quoted_query(query))
        };
        let best = match best_candidate {
            Some(id) if best >= floor => format!(
                "best candidate `{id}` at relevance {}, floor {}",
                points(best),
                points(floor)
            ),
            Some(id) => format!(
                "best candidate `{id}` at relevance {} < floor {}",
                points(best),
                points(floor)
            ),
            None => format!("best relevance {} < floor {}", points(best), points(floor)),
        };
        out.push_str(&format!("Nothing in memory, code or docs is relevant enough to {to} ({best}). Read the code directly.\n"));
        return out;
    }
    for b in banners {
        out.push_str(b);
        out.push('\n');
    }
    out.push_str(&heading(query));
    // Best first, whatever each item's tier: a body packed for a lower item does not put
    // it above a better one that only fitted as a digest.
    for i in items {
        out.push_str(&i.text);
        out.push('\n');
    }
    out.push_str(&footer(used, budget, omitted));
    out
}

/// What `context` says when asked nothing: a blank question and no open files. It
/// abstains (`abstained: true`), with this in its markdown and its notes.
pub const EMPTY_QUESTION: &str =
    "the question is empty and no files are open: there is nothing to look for";

/// Characters of the question that an answer's heading quotes.
const HEADING_QUERY_CHARS: usize = 200;

/// An answer's heading: the question, its first [`HEADING_QUERY_CHARS`] characters, or
/// "the open files" when there is none.
fn heading(query: &str) -> String {
    if query.is_empty() {
        return "## Context for the open files\n".to_string();
    }
    format!("## Context for `{}`\n", quoted_query(query))
}

/// The question as an answer quotes it: its first [`HEADING_QUERY_CHARS`] characters, and
/// `…` when it is longer (an abstention had quoted a 10 KB question whole).
fn quoted_query(query: &str) -> String {
    let q: String = query.chars().take(HEADING_QUERY_CHARS).collect();
    if q.len() < query.len() {
        format!("{q}…")
    } else {
        q
    }
}

/// The share of the budget up to which items may be served at `tier`: FULL bodies up to
/// three quarters of it, digests up to nine tenths, index lines all of it. Without the
/// ceilings, three bodies could fill a budget and leave no line for anything else found
/// (2,000 tokens served three items, 1,000 tokens seven).
fn tier_ceiling(tier: Tier, budget: u64) -> u64 {
    match tier {
        Tier::Full => budget * 3 / 4,
        Tier::Digest => budget * 9 / 10,
        Tier::Index => budget,
    }
}

/// The most items served FULL under `budget` tokens: 3, and one more for every 1,000
/// tokens over 2,000 (a budget of 100,000 had served 3 bodies and 2,962 tokens).
fn max_full(budget: u64) -> usize {
    3 + (budget.saturating_sub(2_000) / 1_000) as usize
}

/// An answer's closing line: the tokens used of the budget, and what was left out.
fn footer(used: u64, budget: u64, omitted: u64) -> String {
    format!(
        "\n_≈{used} of {budget} tokens (an estimate: characters / 4){}_\n",
        if omitted > 0 {
            format!("; {omitted} more item(s) left out")
        } else {
            String::new()
        }
    )
}

/// The files one import away from `path`, either way (what it imports and what imports
/// it), by two indexed lookups; empty for a path not in the map.
fn import_neighbours(
    conn: &loci_store::rusqlite::Connection,
    path: &str,
) -> loci_store::Result<Vec<String>> {
    use loci_store::Context;
    let mut stmt = conn
        .prepare_cached(
            "SELECT b.path FROM files a JOIN deps d ON d.from_file_id = a.file_id
                 JOIN files b ON b.file_id = d.to_file_id WHERE a.path = ?1
             UNION ALL
             SELECT b.path FROM files a JOIN deps d ON d.to_file_id = a.file_id
                 JOIN files b ON b.file_id = d.from_file_id WHERE a.path = ?1",
        )
        .ctx(|| "reading import neighbours".into())?;
    let rows = stmt
        .query_map([path], |r| r.get::<_, String>(0))
        .ctx(|| format!("reading the import neighbours of {path}"))?;
    rows.collect::<loci_store::rusqlite::Result<_>>()
        .ctx(|| format!("reading the import neighbours of {path}"))
}

/// The file import graph (importer → imported, one edge per `deps` row), by file id: what
/// personalized PageRank walks. Nodes are the files that take part in an edge, numbered
/// in file-id order; paths are looked up only for the files it returns.
#[derive(Debug, Default)]
pub(crate) struct ImportGraph {
    /// file id → node
    index: HashMap<i64, usize>,
    /// node → file id
    ids: Vec<i64>,
    /// importer → imported
    out: Vec<Vec<usize>>,
}

impl ImportGraph {
    /// Reads every resolved import edge (integers only: no paths, no sort of strings).
    pub(crate) fn load(conn: &loci_store::rusqlite::Connection) -> loci_store::Result<ImportGraph> {
        use loci_store::Context;
        let mut g = ImportGraph::default();
        let mut stmt = conn
            .prepare_cached(
                "SELECT from_file_id, to_file_id FROM deps WHERE to_file_id IS NOT NULL
                 ORDER BY from_file_id, to_file_id",
            )
            .ctx(|| "reading the import graph".into())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .ctx(|| "reading the import graph".into())?;
        let mut edges = Vec::new();
        for row in rows {
            edges.push(row.ctx(|| "reading the import graph".into())?);
        }
        let mut ids: Vec<i64> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
        ids.sort_unstable();
        ids.dedup();
        g.index = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        g.out = vec![Vec::new(); ids.len()];
        g.ids = ids;
        for (a, b) in edges {
            let (ia, ib) = (g.index[&a], g.index[&b]);
            g.out[ia].push(ib);
        }
        Ok(g)
    }

    /// PageRank personalized to `seeds` (paths; damping 0.85, 20 iterations; as Aider's
    /// repo map ranks files), returning the top `k` files other than the seeds with scores
    /// normalized to the best (ties in file-id order).
    fn personalized_pagerank(
        &self,
        conn: &loci_store::rusqlite::Connection,
        seeds: &BTreeSet<String>,
        k: usize,
    ) -> loci_store::Result<Vec<(String, f64)>> {
        use loci_store::Context;
        use loci_store::rusqlite::OptionalExtension;
        let n = self.ids.len();
        let mut seed_ids: Vec<usize> = Vec::new();
        for s in seeds {
            let id: Option<i64> = conn
                .prepare_cached("SELECT file_id FROM files WHERE path = ?1")
                .and_then(|mut st| st.query_row([s], |r| r.get(0)).optional())
                .ctx(|| format!("looking up {s}"))?;
            if let Some(&i) = id.and_then(|id| self.index.get(&id)) {
                seed_ids.push(i);
            }
        }
        if n == 0 || seed_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut p = vec![0.0; n];
        for &s in &seed_ids {
            p[s] = 1.0 / seed_ids.len() as f64;
        }
        let mut r = p.clone();
        for _ in 0..20 {
            let mut next: Vec<f64> = p.iter().map(|x| 0.15 * x).collect();
            let mut dangling = 0.0;
            for (i, edges) in self.out.iter().enumerate() {
                if edges.is_empty() {
                    dangling += r[i];
                    continue;
                }
                let share = 0.85 * r[i] / edges.len() as f64;
                for &j in edges {
                    next[j] += share;
                }
            }
            for &s in &seed_ids {
                next[s] += 0.85 * dangling / seed_ids.len() as f64;
            }
            r = next;
        }
        let mut ranked: Vec<(usize, f64)> = r
            .into_iter()
            .enumerate()
            .filter(|(i, v)| *v > 0.0 && !seed_ids.contains(i))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let best = ranked.first().map(|x| x.1).unwrap_or(1.0);
        let mut out = Vec::new();
        for (i, v) in ranked.into_iter().take(k) {
            let path: Option<String> = conn
                .prepare_cached("SELECT path FROM files WHERE file_id = ?1")
                .and_then(|mut st| st.query_row([self.ids[i]], |r| r.get(0)).optional())
                .ctx(|| "reading a file path".into())?;
            if let Some(path) = path {
                out.push((path, (v / best).min(1.0)));
            }
        }
        Ok(out)
    }
}

/// The words of a question that asks about the code at hand without naming a topic (with
/// the stop words of [`super::search::content_terms`]): "what should I know before I touch
/// this?", "anything to keep in mind when changing this file?", "how does this work?".
/// Sorted.
const AT_HAND_WORDS: &[&str] = &[
    "anything",
    "before",
    "careful",
    "change",
    "changes",
    "changing",
    "code",
    "edit",
    "editing",
    "file",
    "important",
    "keep",
    "know",
    "mind",
    "modify",
    "modifying",
    "need",
    "read",
    "refactor",
    "refactoring",
    "something",
    "tell",
    "touch",
    "touching",
    "understand",
    "update",
    "updating",
    "watch",
    "work",
    "working",
    "works",
];

/// A score or floor in points as a reader takes it in: one decimal, or for magnitudes of
/// a million and more (any finite floor is allowed) scientific notation, so `--floor 1e308`
/// is not echoed as 309 digits.
fn points(x: f64) -> String {
    if x.abs() < 1e6 {
        format!("{x:.1}")
    } else {
        format!("{x:.1e}")
    }
}

/// The last line (zero-based, inclusive) of the doc section of `path` that starts at
/// `line`, as the scan chunked it; `None` when the map holds no such section.
fn doc_section_end(
    conn: &loci_store::rusqlite::Connection,
    path: &str,
    line: u32,
) -> Result<Option<u32>> {
    use loci_store::rusqlite::OptionalExtension;
    conn.prepare_cached(
        "SELECT d.end_line FROM doc_chunks d JOIN files f USING (file_id)
          WHERE f.path = ?1 AND d.line = ?2 LIMIT 1",
    )
    .and_then(|mut st| {
        st.query_row(loci_store::rusqlite::params![path, line], |r| r.get(0))
            .optional()
    })
    .map_err(|e| loci_store::StoreError::sqlite("reading a doc section", e).into())
}

/// An open contradiction of a doc in words: `` docs/a.md:5 claim `f()` is false: TRUTH
/// (did you mean `g`?) (contradiction #7) `` (one-based line, as `loci lint` prints it).
fn doc_false_reason(c: &loci_store::audit::Contradiction) -> String {
    let mut reason = format!(
        "{}:{} claim `{}` is false: {}",
        c.subject,
        c.line + 1,
        c.claim,
        c.truth.as_deref().unwrap_or(&c.kind)
    );
    if let Some(s) = &c.suggestion {
        reason.push_str(&format!(" (did you mean `{s}`?)"));
    }
    reason.push_str(&format!(" (contradiction #{})", c.contradiction_id));
    reason
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::search::{content_terms, words_in};

    /// The one-pass coverage equals the word-set definition it replaces.
    #[test]
    fn coverage_agrees_with_the_word_sets() {
        let text = "Opens `parseConfig` and the HTTPServer.\n\n- Queries are cached; parse_config runs once.\n\n# Files\nstatus of classes";
        let units = passages(text);
        assert_eq!(units.len(), 3, "{units:?}");
        for q in [
            "parse_config",
            "ParseConfig cache",
            "how are queries cached",
            "http server files",
            "class status",
            "nothing here",
            "config parse opens",
        ] {
            let terms = content_terms(q);
            let weights: Vec<f64> = (1..=terms.len()).map(|i| i as f64).collect();
            let total: f64 = weights.iter().sum();
            let expected = units
                .iter()
                .map(|p| {
                    let words = words_in(p);
                    terms
                        .iter()
                        .zip(&weights)
                        .filter(|(t, _)| t.found_in(&words))
                        .map(|(_, w)| w)
                        .sum::<f64>()
                })
                .fold(0.0, f64::max)
                / total;
            assert_eq!(coverage(&units, &terms, &weights), expected, "{q}");
        }
        assert_eq!(
            coverage(&units, &content_terms("ParseConfig cache"), &[1.0, 1.0]),
            0.5
        );
        assert_eq!(
            coverage(
                &units,
                &content_terms("queries cached parse_config"),
                &[1.0, 1.0, 2.0]
            ),
            1.0
        );
    }
}

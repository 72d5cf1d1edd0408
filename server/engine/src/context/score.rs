//! Candidates and how they score: the weights table (every point value of `context`, with
//! its reason), the IDF-weighted share of a question a passage holds, and what the question
//! asks about test, example and vendored code.

use loci_core::secondary::{Secondary, secondary_code};
use loci_store::memory as mem;

use super::search::Term;

use super::hits::*;

#[derive(Clone, Debug)]
pub(super) struct Candidate {
    pub(super) kind: HitKind,
    pub(super) id: String,
    pub(super) path: Option<String>,
    pub(super) line: Option<u32>,
    pub(super) relevance: f64,
    pub(super) boost: f64,
    /// The full-text points in `relevance` (what [`EPISODIC_TEXT_SHARE`] compares).
    pub(super) text_points: f64,
    /// Among items of equal score, the order (ascending, then by id): 0 for all but an
    /// open file's outline and symbols, which follow it in outline order (1, 2, …), after
    /// the others of their score (the file's page first).
    pub(super) order: u32,
    pub(super) signals: Vec<String>,
    pub(super) full: String,
    /// For symbols: the definition, whose source is read only if it is served FULL.
    pub(super) symbol: Option<loci_store::map::SymbolHit>,
    pub(super) digest: String,
    pub(super) stale: bool,
    pub(super) contradictions: u64,
}

impl Candidate {
    pub(super) fn new(kind: HitKind, id: String, path: Option<String>) -> Candidate {
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

    pub(super) fn score(&self) -> f64 {
        self.relevance + self.boost
    }

    pub(super) fn add(&mut self, points: f64, relevant: bool, why: impl Into<String>) {
        if relevant {
            self.relevance += points;
        } else {
            self.boost += points;
        }
        self.signals.push(format!("{} {points:+.1}", why.into()));
    }
}

// The weights table: every point value `context` gives, with its reason (seeds/irag
// "Retrieval scoring"; docs/context.md has the table). Relevance points count toward
// abstention; boosts and penalties only order what is relevant on its own.

/// Relevance of a full-text hit at the top of its index holding all of the question:
/// its share of the question × the decay of its rank scales it down.
pub(super) const TEXT_POINTS: f64 = 30.0;

/// Relevance of memory about an open file or folder, and of code in it: the module the
/// reader is in.
pub(super) const OPEN_MODULE_POINTS: f64 = 50.0;

/// Relevance of memory about the parent, a child or a sibling of an open file, and of a
/// mapped folder's memory beside an open file the map lacks.
pub(super) const NEAR_MODULE_POINTS: f64 = 25.0;

/// Relevance of a memory page about a file holding matching symbols, × the best share of
/// the question one of them holds.
pub(super) const SYMBOL_FILE_POINTS: f64 = 24.0;

/// Relevance of a topic page holding a matching or open file.
pub(super) const TOPIC_POINTS: f64 = 25.0;

/// Boost of memory one import away from a top-3 seed file.
pub(super) const HOP_POINTS: f64 = 15.0;

/// Boost of a relevant symbol that a top-3 seed page names (when the page's own text does
/// not hold the question; when it does, [`NAMED_BY_MEMORY_SHARE`] applies).
pub(super) const NAMED_BY_PAGE_POINTS: f64 = 15.0;

/// Boost of a file near the open ones in the import graph, × its personalized PageRank.
pub(super) const CENTRALITY_POINTS: f64 = 12.0;

/// Boost of a relevant decisions or lessons page with a signal of its own
/// ([`EPISODIC_TEXT_SHARE`]).
pub(super) const EPISODIC_POINTS: f64 = 25.0;

/// Boost of relevant memory updated within the last seven days.
pub(super) const RECENT_POINTS: f64 = 10.0;

/// Penalty of stale memory: the code it names changed since it was written.
pub(super) const STALE_POINTS: f64 = -20.0;

/// Penalty of memory or a doc section with open contradictions.
pub(super) const CONTRADICTED_POINTS: f64 = -40.0;

/// Symbols a seed page may bring in through its claims (the first ones it names).
pub(super) const MEMORY_LINKS: usize = 8;

/// The share of a page's full-text points that a symbol it names gains as relevance, when
/// those points clear the floor (the page holds the question). Measured with
/// `context_bench` (2026-12-04, recall@5 / MRR / nDCG@5): with the +15 "named by memory"
/// boost on any symbol a seed page named (relevance 0 or not), 0.476 / 0.445 / 0.421 on
/// the stdlib set and 0.380 / 0.418 on loci's; with the boost only for symbols relevant on
/// their own, 0.452 / 0.492 / 0.427 and 0.389 / 0.424 (the decision naming `shlex.quote`
/// no longer brought it); with this share at 0.5 as well, 0.481 / 0.492 / 0.446 and
/// 0.389 / 0.424.
pub(super) const NAMED_BY_MEMORY_SHARE: f64 = 0.5;

/// Full-text hits per index that `context` weighs (coverage re-ranks them).
pub(super) const TEXT_HITS: u32 = 50;

/// Files of the code ranking that `context` weighs (each one costs a share lookup per
/// term of the question).
pub(super) const CODE_FILES: usize = 20;

/// The first files of the code ranking whose best share of the question (with that of
/// each index's first file) sets the ranking's strength (its relevance).
pub(super) const CODE_STRENGTH_FILES: usize = 3;

/// Chunks served per file of the code ranking (its best ones).
pub(super) const CODE_CHUNKS_SHOWN: usize = 2;

/// The most relevance points a file of the code ranking scores: a full-text hit's.
pub(super) const CODE_POINTS: f64 = 30.0;

/// The points of a symbol the question names, and of memory naming one that the code no
/// longer has.
pub(super) const NAMED_POINTS: f64 = 15.0;

/// The score false memory about what the question names keeps after its penalties: above
/// nothing, below everything else served.
pub(super) const FALSE_SHOWN_POINTS: f64 = 0.5;

/// Points above the best code item and doc section that the direct
/// dependents of the file a dependents question is about score: the graph answers that
/// question, the text does not.
pub(super) const DEPENDENT_POINTS: f64 = 5.0;

/// The rank constant of the FTS points' decay, `k / (k + rank)` (0-based rank within one
/// index), as in reciprocal rank fusion (Cormack et al., 2009, k = 60).
pub(super) const RANK_K: f64 = 60.0;

/// A full-text candidate of `context`.
pub(super) struct TextHit {
    pub(super) hit: SearchHit,
    /// The share (0..=1) of the question's term weight found in the hit's best passage.
    pub(super) coverage: f64,
    /// 0-based rank within its index (BM25's order): what its relevance decays by.
    pub(super) rank: usize,
    /// Its rank once secondary code is moved after the other hits of its index
    /// ([`Asks::places`]): what its score decays by; the difference is a prior.
    pub(super) place: usize,
    /// For memory, the revision matched (step 4 of `context` reads it from here).
    pub(super) revision: Option<mem::Revision>,
    /// The text it was matched in (for a doc section, its chunk: what FULL serves).
    pub(super) text: String,
}

/// The file of a code or doc hit ([`Asks::places`] demotes by it); `None` for memory, which
/// is about a place rather than in it.
pub(super) fn code_path(hit: &(SearchHit, String, Option<mem::Revision>)) -> Option<&str> {
    (hit.0.kind != HitKind::Memory)
        .then_some(hit.0.path.as_deref())
        .flatten()
}

/// Inverse document frequency as BM25 has it: `ln(1 + (N − df + 0.5) / (df + 0.5))`.
pub(super) fn idf(rows: u64, df: u64) -> f64 {
    let (n, df) = (rows as f64, df.min(rows) as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Paragraphs, list items and headings of a markdown text: the units a question's terms
/// must meet in, so a long page does not match by scattering them.
pub(super) fn passages(text: &str) -> Vec<String> {
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
pub(super) const FULL_SOURCE_LINES: u32 = 40;

/// Points off secondary code (tests, examples, vendored code: [`secondary_code`]) when
/// the question does not ask about it. Measured with `context_bench` (recall@5 / MRR): at
/// 0, 0.443 / 0.337 on the stdlib set and 0.393 / 0.465 on loci's; at 5, 0.443 / 0.354
/// and 0.393 / 0.474; at 10, 0.443 / 0.355 and 0.380 / 0.470. A prior, not relevance:
/// abstention never sees it. Besides the points, such code is ranked after the rest of
/// its index's hits (see [`Asks::places`]).
pub(super) const TEST_CODE_PENALTY: f64 = 5.0;

/// Which kinds of [`Secondary`] code a question asks about: those it names (`test`,
/// `mock`, `fixture`…; `example`, `demo`…; `vendor`, `third party`…) are ranked as any
/// other code, the others demoted.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Asks {
    tests: bool,
    examples: bool,
    vendored: bool,
}

impl Asks {
    /// What `query` asks about in its own words: a message it quotes is the code's words,
    /// not the asker's ("Sample larger than population" asks about no example code).
    pub(super) fn of_question(query: &str) -> Asks {
        Asks::of(&super::search::content_terms(
            &super::search::without_quoted_messages(query),
        ))
    }

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
    pub(super) fn any(self) -> bool {
        self.tests || self.examples || self.vendored
    }

    /// The kind of secondary code at `path` that this question demotes, if any.
    pub(super) fn demotes(self, path: Option<&str>) -> Option<Secondary> {
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
    /// alone a test at BM25 rank 0 (30 points) would outrank the code at rank 20 (22.5).
    /// Measured with `context_bench` and `loci eval` (2026-12-02, recall@5 / MRR): moving
    /// the demoted hits in relevance too made the stdlib set abstain on an in-scope
    /// question (its best item was a test) and answer an out-of-scope one (0.476 / 0.398
    /// → 0.448 / 0.455); as a prior that also moved the tests after all the others, loci's
    /// set lost `server/engine/tests/it/walk.rs`, a gold item (rank 6 → 22; MRR 0.436 →
    /// 0.434); as here, 0.476 / 0.445 on the stdlib set and 0.380 / 0.437 on loci's
    /// (0.368 / 0.436 without).
    pub(super) fn places<T>(self, hits: &[T], path: impl Fn(&T) -> Option<&str>) -> Vec<usize> {
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
pub(super) fn is_test_word(word: &str) -> bool {
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
pub(super) fn symbol_text(qualified_name: &str, signature: &str, doc: Option<&str>) -> String {
    format!(
        "{qualified_name} {}\n{signature}\n{}",
        loci_core::terms::symbol_terms(qualified_name),
        doc.unwrap_or_default()
    )
}

/// The share of `weights` (one per term) held by the best of `passages`. A passage holds a
/// term as [`Term::found_in`] has it for the passage's [`super::search::words_in`]; this
/// checks the same in one pass over the passage's words without building the word set.
pub(super) fn coverage(passages: &[String], terms: &[Term], weights: &[f64]) -> f64 {
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

/// The share of the best full-text points (over all candidates) that a decision or lesson
/// must hold for its +25, unless its claims link it to the question (see
/// [`linked_to`]). Relevance over the floor is not enough: an entry sharing one common word
/// with the question would be put above the page that answers (fault test `fault_the_lessons_boost_put_a_page_sharing_one_word_first`).
pub(super) const EPISODIC_TEXT_SHARE: f64 = 0.5;

/// Relevance points of a decision or lesson with a claim resolved to an open file, a
/// symbol in one, or into an open folder ([`linked_to`]): a sibling's (+25). With the episodic +25 it
/// earns with it, the decision about an open file comes with the file's own page (+50),
/// before its outline and main symbols.
pub(super) const EPISODIC_OPEN_POINTS: f64 = 25.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::search::{content_terms, words_in};

    #[test]
    fn fault_the_words_of_a_quoted_message_asked_about_example_code() {
        let quoted = Asks::of_question(
            "I'm getting \"Sample larger than population or is negative\". Which function raises it?",
        );
        assert!(!quoted.any(), "{quoted:?}");
        let asked = Asks::of_question("Where are the sample programs for the mock server?");
        assert!(
            asked.examples && asked.tests && !asked.vendored,
            "{asked:?}"
        );
    }

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

//! Code retrieval for `context`: which files answer a question, and their best chunks.
//!
//! One pipeline (docs/context.md, "Retrieval"):
//!
//! 1. **Candidates** from several indexes, each a ranked list of files: BM25 over whole
//!    files (`file_text_fts`) and over code chunks (`code_chunks_fts`, a file at its best
//!    chunk), both holding the code's own text and the path's words; the files of the
//!    symbols the question names; with embeddings, the chunks nearest the question. Test,
//!    example and vendored code comes after the rest of each list unless the question asks
//!    about it.
//! 2. **Fusion**: reciprocal rank fusion, `Σ weight / (RRF_K + rank)` over the lists
//!    (Cormack, Clarke and Büttcher, SIGIR 2009): ranks, not scores, so indexes whose
//!    scores are not comparable (BM25 of files, of chunks, cosine) add up.
//! 3. **The map as evidence**: a question about what depends on a file ("what breaks if I
//!    change X", "which modules import X") is answered from the reverse-dependency graph:
//!    the file it names, or else the best file found, and then its direct dependents
//!    first.
//!
//! Relevance (what abstention compares with the floor) is the IDF-weighted share of the
//! question's terms the file holds ([`Workspace::code_coverage`]), decayed by its fused
//! rank as every full-text hit's is.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use loci_store::search::FtsTable;

use super::search::Term;
use crate::{Result, Workspace};

/// The `k` of reciprocal rank fusion: a hit at rank r (0-based) adds `weight / (k + r + 1)`.
/// 60 is the constant of the original paper, and of most systems since.
pub const RRF_K: f64 = 60.0;

/// The most files of code that may hold a name the question uses for the chunks holding it
/// to rank as a list of their own ([`Workspace::rare_names`]).
const RARE_NAME_FILES: u64 = 8;

/// Files the whole-file index returns per question.
const FILE_HITS: u32 = 100;

/// Chunks the chunk index returns per question.
const CHUNK_HITS: u32 = 300;

/// Rows a full-text index may match while gathering candidates: the question's terms are
/// asked rarest first until their document frequencies add up to this (at least one term),
/// so a question full of common words costs what a specific one does. Ranking is the cost
/// (FTS5 computes BM25 for every matched row, about 1.5 µs each).
const MATCHED_ROWS: u64 = 8_000;

/// The weight of the chunks holding text the question quotes verbatim, in fusion: twice
/// a text index's, so the file holding the message is first even where another file
/// leads both text indexes by the words of its path (`runtime/local_runtime/runtime.rs`
/// would lead a question quoting tokio's "Cannot start a runtime from within a runtime").
const QUOTED_WEIGHT: f64 = 2.0;

/// The files found whose tests a question about tests asks for ([`Workspace::tests_named_after`]).
const SUBJECTS: usize = 3;

/// Paths holding a subject's name read per subject: its tests among them.
const TESTS_OF_A_SUBJECT: u32 = 200;

/// Best chunks kept per file.
pub const CHUNKS_PER_FILE: usize = 3;

/// The BM25 weight of the path column against the text column, in both code-text indexes:
/// a question naming a module's words ("the toml reader", "the regex module") finds it.
/// Equal weight ranked best on both development sets (docs/benchmarks.md, "Retrieval":
/// 0.5, 1, 1.5, 2 and 3 measured).
const PATH_WEIGHT: f64 = 1.0;

/// One chunk that matched.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkHit {
    /// Its definition (`symbols.symbol_id`); `None` for module-level code.
    pub symbol_id: Option<i64>,
    /// Zero-based first line.
    pub start_line: u32,
    /// Zero-based last line (inclusive).
    pub end_line: u32,
}

/// A file that answers the question, as fusion ranked it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileHit {
    /// Repo-relative path.
    pub path: String,
    /// `files.file_id`.
    pub file_id: i64,
    /// The fused score (sum of the lists' reciprocal ranks, weighted).
    pub fused: f64,
    /// Its best chunks, best first (at most [`CHUNKS_PER_FILE`]).
    pub chunks: Vec<ChunkHit>,
    /// Where it ranked in each list (`file text #1`, `chunk #3`, `named symbol`).
    pub signals: Vec<String>,
}

/// One ranked list of files for fusion.
pub struct RankedList {
    /// What it is (`file text`, `code chunks`, `named symbols`, `embeddings`).
    pub name: &'static str,
    /// Its weight in fusion.
    pub weight: f64,
    /// File ids, best first, each once.
    pub files: Vec<i64>,
    /// The files the list can rank, when not all: embeddings see only the files with
    /// vectors (a file edited since `loci embed` has none until it runs again).
    pub sees: Option<Arc<HashSet<i64>>>,
}

/// Fuses ranked lists by reciprocal rank: each file's score is the sum over the lists of
/// `weight / (RRF_K + rank + 1)`; ties keep the order in which the lists first gave the
/// files. A list that cannot see a file neither helps nor hurts it: the file gets from
/// that list the mean reciprocal rank of the lists that ranked it (without this, a file
/// edited since `loci embed`, missing from the embeddings list, fell from first to 29th in
/// a small repository where every other file is in every list). Returns `(file_id, score,
/// signals)`, best first.
pub fn fuse(lists: &[RankedList]) -> Vec<(i64, f64, Vec<String>)> {
    let mut scores: Vec<(i64, f64, Vec<String>)> = Vec::new();
    // Per file: the sum of its reciprocal ranks, and in how many lists.
    let mut ranked: Vec<(f64, f64)> = Vec::new();
    let mut at: HashMap<i64, usize> = HashMap::new();
    for list in lists {
        for (rank, &id) in list.files.iter().enumerate() {
            let i = *at.entry(id).or_insert_with(|| {
                scores.push((id, 0.0, Vec::new()));
                ranked.push((0.0, 0.0));
                scores.len() - 1
            });
            let rr = 1.0 / (RRF_K + rank as f64 + 1.0);
            scores[i].1 += list.weight * rr;
            scores[i].2.push(format!("{} #{}", list.name, rank + 1));
            ranked[i].0 += rr;
            ranked[i].1 += 1.0;
        }
    }
    for list in lists {
        let Some(sees) = &list.sees else {
            continue;
        };
        for (i, score) in scores.iter_mut().enumerate() {
            if !sees.contains(&score.0) {
                score.1 += list.weight * ranked[i].0 / ranked[i].1;
                score
                    .2
                    .push(format!("{} (not embedded: as the others)", list.name));
            }
        }
    }
    // A stable sort: equal scores keep first-seen order.
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores
}

/// Words of a question that ask what depends on something: "which modules import X",
/// "blast radius of X", "who calls into X". Lower-case, matched against the question's
/// words (and the two-word phrases among them).
const DEPENDENT_WORDS: &[&str] = &[
    "blast radius",
    "build on it",
    "builds on it",
    "built on it",
    "callers of",
    "calls into",
    "calls it",
    "depend on",
    "dependents",
    "depends on",
    "import it",
    "imports it",
    "importers",
    "reference it",
    "references it",
    "relies on",
    "rely on",
    "subclasses of",
    "uses it",
    "what calls",
    "what imports",
    "what uses",
    "who calls",
    "who implements",
    "who imports",
    "who subclasses",
    "who uses",
];

/// Words that ask what a change does ("what breaks if I change X", "which modules are
/// affected if I alter X"): they ask for dependents beside a word of changing
/// ([`CHANGE_WORDS`]) only, as every such question of the development and trial sets
/// has one; "soft line breaks", "how does the locale affect sorting" ask about the code.
const CONSEQUENCE_WORDS: &[&str] = &[
    "affect",
    "affected",
    "affects",
    "break",
    "breaks",
    "need updating",
    "needs updating",
    "stop working",
    "stops working",
];

/// Words of changing code, which make [`CONSEQUENCE_WORDS`] ask for dependents.
const CHANGE_WORDS: &[&str] = &[
    "alter",
    "altered",
    "change",
    "changed",
    "changes",
    "changing",
    "delete",
    "edit",
    "modify",
    "modifying",
    "refactor",
    "refactoring",
    "remove",
    "rename",
    "renaming",
    "replace",
    "rewrite",
    "touch",
    "update",
];

/// Inflections of the words a question about dependents asks with that
/// [`DEPENDENT_WORDS`] does not hold ("what breaks if I change X", "who uses it").
/// "module" and "file" are not among them: dropping them from the question's terms too
/// cost stdlib-dev's impact questions recall (1.0 → 0.917).
const DEPENDENT_INFLECTIONS: &[&str] = &[
    "broken",
    "call",
    "callers",
    "change",
    "changed",
    "changes",
    "changing",
    "dependent",
    "use",
    "used",
];

/// Whether `word` (lower-case) is one a question about dependents asks with — a word of
/// [`DEPENDENT_WORDS`] or one of its [`DEPENDENT_INFLECTIONS`] —, not its topic: "would
/// break if I changed" finds the dependents through the map, not code holding those
/// words (`filename_changed_hook`, `get_break`).
pub(crate) fn dependent_cue(word: &str) -> bool {
    DEPENDENT_INFLECTIONS.contains(&word)
        || DEPENDENT_WORDS
            .iter()
            .chain(CONSEQUENCE_WORDS)
            .any(|phrase| phrase.split(' ').any(|w| w == word))
}

/// Whether a question asks what depends on something (see [`DEPENDENT_WORDS`]), or which
/// files import or use a module ("which modules import X directly", "what depends on X"),
/// in its own words (not those of a message it quotes).
pub fn asks_for_dependents(query: &str) -> bool {
    // The words of an error message it shows ask nothing: "ValueError: path must be None
    // or list of paths to look for modules in - what call triggers this?"
    let words = super::search::tokens(&super::search::without_messages(query));
    let at = |phrase: &str| {
        let parts: Vec<&str> = phrase.split(' ').collect();
        words
            .windows(parts.len())
            .position(|w| w.iter().zip(&parts).all(|(a, b)| a == b))
    };
    let has = |phrase: &str| at(phrase).is_some();
    // "X relies on Y" asks for Y's dependents only when Y is what the question is about:
    // "the helpers it relies on", "what does X depend on" ask what the subject uses.
    let asks_what_it_uses = |start: usize| {
        start
            .checked_sub(1)
            .is_some_and(|i| matches!(words[i].as_str(), "it" | "this" | "they"))
            || words[..start]
                .iter()
                .any(|w| matches!(w.as_str(), "does" | "do" | "did"))
    };
    if DEPENDENT_WORDS
        .iter()
        .any(|p| at(p).is_some_and(|start| !(p.ends_with(" on") && asks_what_it_uses(start))))
    {
        return true;
    }
    if CONSEQUENCE_WORDS.iter().any(|p| has(p))
        && words.iter().any(|w| CHANGE_WORDS.contains(&w.as_str()))
    {
        return true;
    }
    // "which (other) modules/files import X", "what depends on X", "every module that
    // imports it", "files that reference that module", "which types implement X": a word
    // of using after the word that asks ("when I import a module, .. which loader
    // compiles the file" asks how importing works), and a word of places, both in the
    // clause that word opens: "which code picks the reader, and which one turns expat's
    // callbacks into startElement calls" asks for no dependents. Nor does a clause whose
    // word of using follows `does`: "which generator does the random module use" asks
    // what the module uses.
    let asks = |w: &String| matches!(w.as_str(), "which" | "what" | "who" | "every" | "all");
    let starts: Vec<usize> = (0..words.len()).filter(|&i| asks(&words[i])).collect();
    starts.iter().enumerate().any(|(n, &from)| {
        let to = starts.get(n + 1).copied().unwrap_or(words.len());
        let clause = &words[from..to];
        let auxiliary = |w: &String| matches!(w.as_str(), "does" | "do" | "did");
        clause
            .iter()
            .position(|w| is_use_word(w))
            .is_some_and(|at| !clause[..at].iter().any(auxiliary))
            && clause.iter().any(|w| is_place_word(w))
    })
}

/// A word a question about dependents asks with for using ([`asks_for_dependents`]).
fn is_use_word(w: &str) -> bool {
    matches!(
        w,
        "import"
            | "imports"
            | "depends"
            | "depend"
            | "reference"
            | "references"
            | "use"
            | "uses"
            | "call"
            | "calls"
            | "implement"
            | "implements"
            | "subclass"
            | "subclasses"
            | "inherit"
            | "inherits"
            | "extend"
            | "extends"
    )
}

/// A word a question about dependents names the dependents with ([`asks_for_dependents`]).
fn is_place_word(w: &str) -> bool {
    matches!(
        w,
        "modules"
            | "files"
            | "module"
            | "file"
            | "crates"
            | "packages"
            | "callers"
            | "types"
            | "classes"
            | "structs"
            | "functions"
            | "code"
    )
}

impl Workspace {
    /// The files that answer `query`, whose content terms are `terms`, fused from the
    /// code-text indexes (the terms by file and by chunk, the text it quotes by chunk) and
    /// `extra` lists (named symbols, embeddings), best first, at most `limit`; each with
    /// its best chunks. Test, example and vendored code has indexes of its own
    /// (`loci_core::secondary`), asked when `secondary` (the question is about such code)
    /// or when the others hold none of the question's terms; `demoted(path)` says whether
    /// a file is secondary code the question does not ask about: such files come after the
    /// others in each list.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) fn code_candidates(
        &self,
        query: &str,
        terms: &[Term],
        extra: Vec<RankedList>,
        secondary: bool,
        demoted: &dyn Fn(&str) -> bool,
        limit: usize,
    ) -> Result<Vec<FileHit>> {
        let mut lists: Vec<RankedList> = Vec::new();
        let mut chunks_of: HashMap<i64, Vec<ChunkHit>> = HashMap::new();
        let mut paths: HashMap<i64, String> = HashMap::new();
        let mut ask = |secondary: bool, lists: &mut Vec<RankedList>| -> Result<()> {
            let (files, chunks) = if secondary {
                (
                    "file text (tests, examples, vendored)",
                    "code chunks (tests, examples, vendored)",
                )
            } else {
                ("file text", "code chunks")
            };
            if let Some(found) =
                self.files_by_bm25(FtsTable::file_text(secondary), terms, &mut paths)?
            {
                lists.push(RankedList {
                    name: files,
                    weight: 1.0,
                    files: found,
                    sees: None,
                });
            }
            if let Some(found) = self.chunks_by_bm25(
                FtsTable::chunks(secondary),
                terms,
                &mut paths,
                &mut chunks_of,
            )? {
                lists.push(RankedList {
                    name: chunks,
                    weight: 1.0,
                    files: found,
                    sees: None,
                });
            }
            Ok(())
        };
        // A question about such code asks its indexes first (fusion breaks ties by the
        // order lists give files in).
        if secondary {
            ask(true, &mut lists)?;
        }
        let primary = lists.len();
        ask(false, &mut lists)?;
        if !secondary && lists.iter().all(|l| l.files.is_empty()) {
            ask(true, &mut lists)?;
        }
        if secondary && super::search::asks_for_tests(query) {
            let named = super::open::module_named_in(self.store.conn(), query)?;
            let tests = self.tests_named_after(named, &lists[primary..], &paths)?;
            if !tests.is_empty() {
                for (id, path) in &tests {
                    paths.insert(*id, path.clone());
                }
                lists.push(RankedList {
                    name: "tests named after the code found",
                    weight: 1.0,
                    files: tests.into_iter().map(|(id, _)| id).collect(),
                    sees: None,
                });
            }
        }
        // Names it uses that few files hold (`PYTHONASYNCIODEBUG`, read in one function):
        // the chunks holding one, as for quoted text (whose chunks, found next, come before
        // them in a file holding both). A name is written to be found, and BM25 alone can
        // rank it below a common word's forms (`read`, `reads`), each weighed as a term.
        let asked: &[FtsTable] = if secondary {
            &[FtsTable::CodeChunks, FtsTable::SecondaryChunks]
        } else {
            &[FtsTable::CodeChunks]
        };
        let rare = match self.rare_names(query, secondary)? {
            Some(expr) => self.files_holding(&expr, asked, &mut paths, &mut chunks_of)?,
            None => Vec::new(),
        };
        // Text the question quotes (an error message, a docstring's words), or the whole
        // of text that asks nothing (pasted): the chunks holding a piece of it verbatim,
        // in any code. They are their files' best chunks: the function raising the error,
        // not the ones sharing the question's words.
        let pasted = super::search::pasted_spans(query);
        let (spans, name) = if pasted.is_empty() {
            (super::search::quoted_spans(query), "quoted text")
        } else {
            (pasted, "pasted text")
        };
        if let Some(expr) = super::search::quoted_expression(&spans) {
            let tables = [FtsTable::CodeChunks, FtsTable::SecondaryChunks];
            lists.push(RankedList {
                name,
                weight: QUOTED_WEIGHT,
                files: self.files_holding(&expr, &tables, &mut paths, &mut chunks_of)?,
                sees: None,
            });
        }
        if !rare.is_empty() {
            lists.push(RankedList {
                name: "rare name",
                weight: 1.0,
                files: rare,
                sees: None,
            });
        }
        // Values it lists as examples (`y/yes/on/1`), held together: the table of them.
        let listed = super::listed::listed_values(query);
        if let Some(expr) = super::listed::listed_expression(&listed) {
            lists.push(RankedList {
                name: "values listed together",
                weight: 1.0,
                files: self.files_holding(&expr, asked, &mut paths, &mut chunks_of)?,
                sees: None,
            });
        }
        lists.extend(extra);
        // Paths of the files only the extra lists gave.
        let unknown: Vec<i64> = lists
            .iter()
            .flat_map(|l| l.files.iter().copied())
            .filter(|id| !paths.contains_key(id))
            .collect();
        for id in unknown {
            if let Some(path) = loci_store::map::file_path(self.store.conn(), id)? {
                paths.insert(id, path);
            }
        }
        for list in &mut lists {
            list.files.retain(|id| paths.contains_key(id));
            // Stable: secondary code after the rest, each part in its own order.
            let (main, secondary): (Vec<i64>, Vec<i64>) =
                list.files.iter().partition(|id| !demoted(&paths[*id]));
            list.files = main.into_iter().chain(secondary).collect();
        }
        Ok(fuse(&lists)
            .into_iter()
            .take(limit)
            .map(|(file_id, fused, signals)| FileHit {
                path: paths[&file_id].clone(),
                file_id,
                fused,
                chunks: chunks_of.remove(&file_id).unwrap_or_default(),
                signals,
            })
            .collect())
    }

    /// An FTS5 expression for the names `query` uses ([`super::search::names_in`], one token
    /// each) that are [`super::search::written_as_code`] and that one to
    /// [`RARE_NAME_FILES`] files of code hold (test, example and vendored code too when
    /// `secondary`); `None` when it uses none.
    fn rare_names(&self, query: &str, secondary: bool) -> Result<Option<String>> {
        let conn = self.store.conn();
        let mut tables = vec![FtsTable::file_text(false)];
        if secondary {
            tables.push(FtsTable::file_text(true));
        }
        let mut rare = Vec::new();
        for (name, tokens) in super::search::names_in(query) {
            let [term] = tokens.as_slice() else {
                continue;
            };
            if !super::search::written_as_code(&name) {
                continue;
            }
            // Counted as the phrase, not bounded by its words' own counts: `SOURCE_DATE_EPOCH`
            // is in few files, `source`, `date` and `epoch` in many.
            let mut files = 0;
            for table in &tables {
                files += loci_store::search::rows_matching(
                    conn,
                    *table,
                    &term.expr(),
                    RARE_NAME_FILES as u32 + 1,
                )?;
            }
            if (1..=RARE_NAME_FILES).contains(&files) {
                rare.push(term.clone());
            }
        }
        Ok(super::search::any_of(&rare))
    }

    /// The files of the chunks of `tables` matching `expr` (text held verbatim, values held
    /// together), best first by BM25; those chunks become their files' best, before the
    /// ones `chunks_of` held: the function raising the error, not the ones sharing the
    /// question's words.
    #[tracing::instrument(level = "debug", skip_all)]
    fn files_holding(
        &self,
        expr: &str,
        tables: &[FtsTable],
        paths: &mut HashMap<i64, String>,
        chunks_of: &mut HashMap<i64, Vec<ChunkHit>>,
    ) -> Result<Vec<i64>> {
        let mut files = Vec::new();
        let mut held_of: HashMap<i64, Vec<ChunkHit>> = HashMap::new();
        for table in tables {
            let rows = self.ranked_chunks(*table, expr, 0.0)?;
            files.extend(by_file(rows, paths, &mut held_of));
        }
        for (id, mut held) in held_of {
            for c in chunks_of.remove(&id).unwrap_or_default() {
                if !held.contains(&c) {
                    held.push(c);
                }
            }
            held.truncate(CHUNKS_PER_FILE);
            chunks_of.insert(id, held);
        }
        Ok(files)
    }

    /// For a question asking for tests ([`super::search::asks_for_tests`]): the test files
    /// named after the module the question names (`named`: "the tests for the bisect
    /// module", [`super::open::module_named_in`]), then after the code it finds ([`SUBJECTS`]
    /// subjects in all, the others from the fused `primary` lists, `paths` their paths):
    /// `tests/zero.rs` for
    /// `src/flavors/zero.rs`, `test/test_shlex.py` for `shlex.py`
    /// ([`loci_core::secondary::tested_name`]), in the order of the code they test. A
    /// question about the tests of something it describes in words finds that code first;
    /// its tests hold the same words less densely than the code, and a long test file
    /// less densely than a short one about something else.
    #[tracing::instrument(level = "debug", skip_all)]
    fn tests_named_after(
        &self,
        named: Option<String>,
        primary: &[RankedList],
        paths: &HashMap<i64, String>,
    ) -> Result<Vec<(i64, String)>> {
        use loci_core::secondary::{same_name, secondary_code, subject_name, tested_name};
        let mut tests: Vec<(i64, String)> = Vec::new();
        let found = fuse(primary)
            .into_iter()
            .filter_map(|(id, _, _)| paths.get(&id).cloned())
            .filter(|p| secondary_code(p).is_none() && named.as_ref() != Some(p));
        let subjects: Vec<String> = named.iter().cloned().chain(found).take(SUBJECTS).collect();
        for subject in &subjects {
            let name = subject_name(subject);
            for (id, path) in loci_store::map::files_with_path_holding(
                self.store.conn(),
                name,
                TESTS_OF_A_SUBJECT,
            )? {
                let tests_it = tested_name(&path).is_some_and(|t| same_name(t, name));
                if tests_it && !tests.iter().any(|(t, _)| *t == id) {
                    tests.push((id, path));
                }
            }
        }
        Ok(tests)
    }

    /// The files of the whole-file index `table` holding `terms`, best first by BM25 (at
    /// most [`FILE_HITS`]), their paths added to `paths`; `None` when it holds none of the
    /// terms. The files are joined after the top hits are chosen: joining every matched
    /// row first cost a lookup each.
    #[tracing::instrument(level = "debug", skip_all)]
    fn files_by_bm25(
        &self,
        table: FtsTable,
        terms: &[Term],
        paths: &mut HashMap<i64, String>,
    ) -> Result<Option<Vec<i64>>> {
        let Some(expr) = self.pruned_expression(table, terms)? else {
            return Ok(None);
        };
        let rows = loci_store::search::files_by_bm25(
            self.store.conn(),
            table,
            &expr,
            PATH_WEIGHT,
            FILE_HITS,
        )?;
        Ok(Some(
            rows.into_iter()
                .map(|(id, path)| {
                    paths.insert(id, path);
                    id
                })
                .collect(),
        ))
    }

    /// The files of the chunks of `table` holding `terms`, best first by their best chunk's
    /// BM25 (of at most [`CHUNK_HITS`] chunks), their paths added to `paths` and their best
    /// chunks to `chunks_of`; `None` when the index holds none of the terms.
    #[tracing::instrument(level = "debug", skip_all)]
    fn chunks_by_bm25(
        &self,
        table: FtsTable,
        terms: &[Term],
        paths: &mut HashMap<i64, String>,
        chunks_of: &mut HashMap<i64, Vec<ChunkHit>>,
    ) -> Result<Option<Vec<i64>>> {
        let Some(expr) = self.pruned_expression(table, terms)? else {
            return Ok(None);
        };
        let rows = self.ranked_chunks(table, &expr, PATH_WEIGHT)?;
        // In Rust every item at module level is a definition, so a module-level chunk is
        // the module's docs, imports and `mod` lines: a Rust file ranks by its best
        // definition, and by such text only after every file a definition placed. Python's
        // module level is code, and ranks as such.
        let mut placed: HashSet<i64> = HashSet::new();
        let mut order: Vec<i64> = Vec::new();
        for (file_id, path, c) in &rows {
            let places =
                c.symbol_id.is_some() || loci_core::lang::file_language_name(path) != Some("rust");
            if places && placed.insert(*file_id) {
                order.push(*file_id);
            }
        }
        let files = by_file(rows, paths, chunks_of);
        order.extend(files.into_iter().filter(|f| !placed.contains(f)));
        Ok(Some(order))
    }

    /// The chunks of `table` matching `expr`, best first by BM25 with the path column
    /// weighted `path_weight` (at most [`CHUNK_HITS`]): each with its file and the file's
    /// path. Files are joined after the top chunks are chosen: joining every matched row
    /// first cost a lookup each.
    fn ranked_chunks(
        &self,
        table: FtsTable,
        expr: &str,
        path_weight: f64,
    ) -> Result<Vec<(i64, String, ChunkHit)>> {
        let rows = loci_store::search::chunks_by_bm25(
            self.store.conn(),
            table,
            expr,
            path_weight,
            CHUNK_HITS,
        )?;
        Ok(rows
            .into_iter()
            .map(|c| {
                (
                    c.file_id,
                    c.path,
                    ChunkHit {
                        symbol_id: c.symbol_id,
                        start_line: c.start_line,
                        end_line: c.end_line,
                    },
                )
            })
            .collect())
    }

    /// The FTS5 expression asking `table` for any of `terms`, rarest first until their
    /// document frequencies add up to [`MATCHED_ROWS`] ([`rarest_first`]); `None` when no
    /// term is in the index.
    #[tracing::instrument(level = "debug", skip_all, fields(table = table.name()), ret)]
    fn pruned_expression(&self, table: FtsTable, terms: &[Term]) -> Result<Option<String>> {
        let (_, dfs) = self.term_frequencies(table, terms)?;
        Ok(super::search::any_of(rarest_first(
            terms,
            &dfs,
            MATCHED_ROWS,
        )))
    }

    /// The rows of `table` and the document frequency of each of `terms` in it: a one-word
    /// term's forms added up (an upper bound of their union); for several words, the joined
    /// form or the rarest word (an upper bound for the phrase), whichever is more common.
    pub(crate) fn term_frequencies(
        &self,
        table: FtsTable,
        terms: &[Term],
    ) -> Result<(u64, Vec<u64>)> {
        let mut lookups: Vec<String> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for t in terms {
            for w in t.forms().into_iter().chain(t.words.iter().cloned()) {
                if !w.contains(' ') && !at.contains_key(&w) {
                    at.insert(w.clone(), lookups.len());
                    lookups.push(w);
                }
            }
        }
        let (rows, dfs) = self.store.term_stats(table, &lookups)?;
        let df_of = |w: &str| at.get(w).map_or(0, |&i| dfs[i]);
        let dfs = terms
            .iter()
            .map(|t| {
                if t.words.len() == 1 {
                    t.forms().iter().map(|f| df_of(f)).sum()
                } else {
                    let rarest = t.words.iter().map(|w| df_of(w)).min().unwrap_or(0);
                    df_of(&t.joined()).max(rarest)
                }
            })
            .collect();
        Ok((rows, dfs))
    }

    /// The IDF-weighted share of `terms` that the file `file_id` holds anywhere in its text
    /// or path (`weights` are the terms' IDFs): one indexed lookup per term.
    pub(crate) fn code_coverage(
        &self,
        file: &FileHit,
        terms: &[Term],
        weights: &[f64],
    ) -> Result<f64> {
        let conn = self.store.conn();
        let mut held = 0.0;
        let mut total = 0.0;
        let table = FtsTable::file_text(loci_core::secondary::secondary_code(&file.path).is_some());
        for (t, w) in terms.iter().zip(weights) {
            total += w;
            if loci_store::search::row_matches(conn, table, &t.expr(), file.file_id)? {
                held += w;
            }
        }
        Ok(if total > 0.0 { held / total } else { 0.0 })
    }

    /// The files that depend directly on `file_id` (they import it, or their references
    /// resolve into it), strongest first: those that do both, then those whose references
    /// are stated or at least [`DEPENDENT_CONFIDENCE`], then those that only import it (a
    /// re-export), by reference count then path. The second list holds the files that
    /// only declare it (a Rust `mod x;`: the parent module compiles it, nothing more), which
    /// come after every file that uses it.
    pub(crate) fn direct_dependents(&self, file_id: i64) -> Result<Dependents> {
        let rows = loci_store::map::dependent_rows(self.store.conn(), file_id)?;
        let mut kept: Vec<(u8, i64, String, i64)> = rows
            .into_iter()
            .filter(|r| r.imports || r.confidence >= DEPENDENT_CONFIDENCE)
            .map(|r| {
                let uses = r.imports && !r.declares;
                let strength = match (uses, r.refs > 0 && r.confidence >= DEPENDENT_CONFIDENCE) {
                    (true, true) => 0,
                    (false, true) => 1,
                    (true, false) => 2,
                    (false, false) => 3,
                };
                (strength, -r.refs, r.path, r.file_id)
            })
            .collect();
        kept.sort();
        let (declare, uses): (Vec<_>, Vec<_>) = kept.into_iter().partition(|k| k.0 == 3);
        let pairs = |v: Vec<(u8, i64, String, i64)>| {
            v.into_iter().map(|(_, _, path, id)| (id, path)).collect()
        };
        Ok(Dependents {
            uses: pairs(uses),
            declare: pairs(declare),
        })
    }

    /// The files whose code names the module at `path` by its file name (a path in a
    /// macro the map cannot parse: `unlock_notify::wait(…)`; an import it did not resolve),
    /// when that name is an identifier of several words (`unlock_notify.rs` →
    /// `unlock_notify`, found as its joined form `unlocknotify`), at most
    /// [`MENTION_FILES`] from each whole-file index, best BM25 first, primary code first;
    /// none for a one-word name (`cmd`, `date`: every mention would be a word), nor for a
    /// C or C++ file, which other files use only through an `#include` and name in
    /// comments ("include those headers").
    pub(crate) fn files_naming_module(&self, path: &str) -> Result<Vec<(i64, String)>> {
        if matches!(
            loci_core::Language::from_path(path),
            Some(loci_core::Language::C | loci_core::Language::Cpp)
        ) {
            return Ok(Vec::new());
        }
        let file = path.rsplit('/').next().unwrap_or(path);
        let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
        let words = super::search::identifier_words(stem);
        if words.len() < 2 {
            return Ok(Vec::new());
        }
        let expr = format!("text : \"{}\"", words.concat());
        let mut found = Vec::new();
        for table in [FtsTable::FileText, FtsTable::SecondaryFileText] {
            let rows =
                loci_store::search::files_matching(self.store.conn(), table, &expr, MENTION_FILES)?;
            found.extend(rows);
        }
        Ok(found)
    }

    /// Whether anything the question can be answered from — the code's text (its symbols'
    /// names among it), memory, documentation — holds the FTS5 expression `expr` (one
    /// lookup per index). Test, example and vendored code answers only a question about
    /// such code (`secondary`): a name only a test's data holds (`NETSCAPE_SPKI` in a
    /// lib2to3 test fixture, for a question about SPKI pinning) is not in the code the
    /// question is about.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) fn corpus_holds(&self, expr: &str, secondary: bool) -> Result<bool> {
        let mut tables = vec![FtsTable::FileText, FtsTable::Revisions, FtsTable::Docs];
        if secondary {
            tables.push(FtsTable::SecondaryFileText);
        }
        for table in tables {
            if loci_store::search::table_holds(self.store.conn(), table, expr)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The files of `rows` (chunks, best first) in the order of their best chunk; each file's
/// path added to `paths` and its first [`CHUNKS_PER_FILE`] chunks to `chunks_of`.
fn by_file(
    rows: Vec<(i64, String, ChunkHit)>,
    paths: &mut HashMap<i64, String>,
    chunks_of: &mut HashMap<i64, Vec<ChunkHit>>,
) -> Vec<i64> {
    let mut files = Vec::new();
    for (file_id, path, chunk) in rows {
        paths.insert(file_id, path);
        let kept = chunks_of.entry(file_id).or_default();
        if kept.is_empty() {
            files.push(file_id);
        }
        if kept.len() < CHUNKS_PER_FILE {
            kept.push(chunk);
        }
    }
    files
}

/// The terms an index is asked for: those it holds (`dfs`, their document frequencies),
/// rarest first until their frequencies add up to `rows` (at least one term), so a question
/// full of common words costs what a specific one does; the others still count in the
/// coverage of what is found.
pub(crate) fn rarest_first<'t>(terms: &'t [Term], dfs: &[u64], rows: u64) -> Vec<&'t Term> {
    let mut order: Vec<usize> = (0..terms.len()).filter(|&i| dfs[i] > 0).collect();
    order.sort_by_key(|&i| (dfs[i], i));
    let mut taken = Vec::new();
    let mut matched = 0u64;
    for i in order {
        if !taken.is_empty() && matched + dfs[i] > rows {
            break;
        }
        matched += dfs[i];
        taken.push(&terms[i]);
    }
    taken
}

/// The direct dependents of a file ([`Workspace::direct_dependents`]), as `(file_id,
/// path)`.
pub(crate) struct Dependents {
    /// The files that use it, strongest first.
    pub uses: Vec<(i64, String)>,
    /// The files that only declare it as a module.
    pub declare: Vec<(i64, String)>,
}

/// The most files [`Workspace::files_naming_module`] returns.
const MENTION_FILES: u32 = 10;

/// The least confidence of a name-matched reference edge that makes a file a dependent
/// (`ref_deps`): 0.5 and above are the resolver's matches on an import or the enclosing
/// type; 0.2 to 0.3 are bare names matched across the repository.
pub const DEPENDENT_CONFIDENCE: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_adds_reciprocal_ranks_and_keeps_first_seen_order_on_ties() {
        let lists = vec![
            RankedList {
                name: "file text",
                weight: 1.0,
                files: vec![1, 2, 3],
                sees: None,
            },
            RankedList {
                name: "code chunks",
                weight: 1.0,
                files: vec![3, 2, 4],
                sees: None,
            },
        ];
        let fused = fuse(&lists);
        let order: Vec<i64> = fused.iter().map(|f| f.0).collect();
        // 3: 1/63 + 1/61 = 0.032266; 2: 2/62 = 0.032258; 1: 1/61; 4: 1/63.
        assert_eq!(order, vec![3, 2, 1, 4]);
        assert!((fused[0].1 - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert!((fused[1].1 - 2.0 / 62.0).abs() < 1e-12);
        assert_eq!(fused[0].2, vec!["file text #3", "code chunks #1"]);
        let tie = fuse(&[
            RankedList {
                name: "a",
                weight: 1.0,
                files: vec![7],
                sees: None,
            },
            RankedList {
                name: "b",
                weight: 1.0,
                files: vec![5],
                sees: None,
            },
        ]);
        assert_eq!(tie.iter().map(|f| f.0).collect::<Vec<_>>(), vec![7, 5]);
    }

    /// A list that cannot see a file (embeddings, before the file is embedded) gives it
    /// the mean of its other reciprocal ranks, so it keeps its place.
    #[test]
    fn fusion_gives_a_file_a_list_cannot_see_its_mean_rank_there() {
        let sees: Arc<HashSet<i64>> = Arc::new([2, 3].into_iter().collect());
        let lists = [
            RankedList {
                name: "file text",
                weight: 1.0,
                files: vec![1, 2, 3],
                sees: None,
            },
            RankedList {
                name: "code chunks",
                weight: 1.0,
                files: vec![1, 3, 2],
                sees: None,
            },
            RankedList {
                name: "embeddings",
                weight: 1.0,
                files: vec![3, 2],
                sees: Some(sees),
            },
        ];
        let fused = fuse(&lists);
        // 1: 2/61 + 1/61 (its mean, unseen by embeddings); 3: 1/63 + 1/62 + 1/61;
        // 2: 1/62 + 1/63 + 1/62.
        assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 3, 2]);
        assert!((fused[0].1 - 3.0 / 61.0).abs() < 1e-12);
        assert_eq!(
            fused[0].2,
            vec![
                "file text #1",
                "code chunks #1",
                "embeddings (not embedded: as the others)"
            ]
        );
    }

    #[test]
    fn dependent_questions_are_told_from_others() {
        for q in [
            "Which stdlib modules build directly on cmd.py, i.e. would break if cmd.py changed?",
            "blast radius of modifying webbrowser.py",
            "I'm refactoring dis.py. Which non-test modules import it directly?",
            "What depends on configparser.py?",
            "who calls into unlock_notify.rs directly?",
            "Which files in the crate import from pathutil.rs?",
            "If I alter numbers.py, which modules that import it might be affected?",
            "what breaks if I modify the fnv hasher module in globset",
        ] {
            assert!(asks_for_dependents(q), "{q}");
        }
        for q in [
            "Where's the import hook that lets modules be loaded out of a .zip archive?",
            "How does the tokenizer open the .py file as text with that encoding?",
            "Which function raises ValueError: No closing quotation?",
            "how are imports resolved",
        ] {
            assert!(!asks_for_dependents(q), "{q}");
        }
    }

    /// Fault from a fresh-user trial: these served the definition they name, not what
    /// subclasses, implements or uses it.
    #[test]
    fn fault_subclasses_implementors_and_what_stops_working_were_not_asked_for() {
        for q in [
            "who subclasses _markupbase.ParserBase",
            "if I remove asyncore.dispatcher what other stdlib modules stop working",
            "which types implement the ArrayVecImpl trait",
            "what uses asyncore.dispatcher",
        ] {
            assert!(asks_for_dependents(q), "{q}");
        }
        assert!(!asks_for_dependents(
            "how does the worker stop working threads on shutdown"
        ));
    }

    /// Fault from a fresh-user trial: "which modules call X", "which code uses X" and
    /// "what needs updating if I change X" served X's own file first.
    #[test]
    fn fault_which_modules_call_and_what_needs_updating_were_not_asked_for() {
        for q in [
            "which modules call _check_arg_types to reject mixing str and bytes",
            "which code uses __future__ compiler_flag",
            "if I change the Vector trait in vector.rs which generic search code needs updating",
        ] {
            assert!(asks_for_dependents(q), "{q}");
        }
    }

    /// Fault from a fresh-user trial: "what calls Shard::init_with?" served the method's
    /// definition and none of its callers, which "who calls" found.
    #[test]
    fn fault_what_calls_and_callers_of_were_not_asked_for() {
        for q in [
            "what calls Shard::init_with?",
            "callers of ZipFile.open",
            "what imports email.utils",
        ] {
            assert!(asks_for_dependents(q), "{q}");
        }
    }

    /// Fault from a fresh-user trial: "which modules build on it" served a search for
    /// `build`; a how-question that imports a module before asking which loader compiles
    /// the file asked for the dependents of `pkgutil.py`.
    #[test]
    fn fault_build_on_it_was_no_dependents_question_and_importing_a_module_was() {
        for q in [
            "I'm about to refactor socketserver.py (TCPServer, StreamRequestHandler). Which modules build on it directly?",
            "which modules rely on copyreg.py",
        ] {
            assert!(asks_for_dependents(q), "{q}");
        }
        assert!(!asks_for_dependents(
            "When I import a module, how does the import system find it on sys.path and which loader compiles the file?"
        ));
    }

    /// Fault from a fresh-user trial: "where are the helpers it relies on defined?" served
    /// the importers of `curses/textpad.py`, three test files among them, above the
    /// helpers' `curses/ascii.py`: what the subject relies on is no dependents question.
    #[test]
    fn fault_what_it_relies_on_asked_for_its_dependents() {
        for q in [
            "In the curses text-entry box, how is each keystroke interpreted, and where are the control-character constants and helpers it relies on defined?",
            "what does urllib.request depend on",
        ] {
            assert!(!asks_for_dependents(q), "{q}");
        }
        for q in [
            "which modules rely on it",
            "what depends on this module",
            "Which files in the crate depend on pathutil.rs?",
        ] {
            assert!(asks_for_dependents(q), "{q}");
        }
    }

    /// Fault from a fresh-user trial: "ValueError: path must be None or list of paths to
    /// look for modules in - what call triggers this?" listed `pkgutil.py`'s importers
    /// before the function raising it: the message's "modules" and the question's "what
    /// call" read as "which modules call".
    #[test]
    fn fault_the_words_of_a_quoted_error_asked_for_dependents() {
        assert!(!asks_for_dependents(
            "ValueError: path must be None or list of paths to look for modules in - what call triggers this?"
        ));
        assert!(!asks_for_dependents(
            "what call raises \"cannot import modules from here\"?"
        ));
        assert!(asks_for_dependents(
            "ValueError: bad path - which modules call iter_modules?"
        ));
    }

    /// Fault from a fresh-user trial: "Which generator does the random module use" listed
    /// eleven files importing `random.py` before its `Random`.
    #[test]
    fn fault_what_a_module_uses_was_asked_as_what_uses_it() {
        assert!(!asks_for_dependents(
            "Which generator does the random module use and how is it seeded?"
        ));
        assert!(!asks_for_dependents("what files does cmd.py import?"));
        assert!(asks_for_dependents(
            "which bstr modules use the unicode module"
        ));
        assert!(asks_for_dependents("Which modules import cmd.py?"));
    }

    /// Fault from a fresh-user trial: "which code picks and creates the reader, and which
    /// one turns expat's callbacks into startElement calls?" served the test files calling
    /// `xml.sax.parse` first: "which code" and "calls" are two clauses apart.
    #[test]
    fn fault_a_word_of_using_in_another_clause_asked_for_dependents() {
        assert!(!asks_for_dependents(
            "How does xml.sax.parse hook the expat parser up to my ContentHandler: which code picks and creates the reader, and which one turns expat's callbacks into startElement calls?"
        ));
        assert!(asks_for_dependents("Which code calls the reader?"));
    }

    /// "soft line breaks" had asked for the dependents of the file found: quoprimime's
    /// importers came before quoprimime.
    #[test]
    fn fault_line_breaks_in_a_how_question_asked_for_dependents() {
        for q in [
            "How are long lines broken with soft line breaks when encoding quoted-printable data?",
            "how does the locale affect string sorting",
        ] {
            assert!(!asks_for_dependents(q), "{q}");
        }
        assert!(asks_for_dependents(
            "which modules are affected if I rename the line breaking helper"
        ));
    }
}

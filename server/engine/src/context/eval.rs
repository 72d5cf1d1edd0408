//! `eval` and `calibrate`: retrieval quality measured on a case file, side by side with
//! plain FTS5 BM25 over the same sources.
//!
//! Case files are JSON lines. Setup lines define memory the questions rely on:
//! `{"memory": {"subject": "Lib/json/decoder.py", "body": "...", "summary": "..."}}`; a
//! body for `decisions` or `lessons` is a log, each of its `- ` items one entry.
//! `eval` and `calibrate` write it into a scratch copy of the database (SQLite's online
//! backup, in a temporary directory), never into the workspace's own: a case set's
//! decisions must not become the ones agents are served.
//! [`Workspace::write_case_memory`] writes it for real (the benchmark times `context` on it).
//! Case lines: `{"id": "q1", "query": "...", "open_files": ["..."], "gold": ["path",
//! "path#Qual.name@kind"], "out_of_scope": false}`. An item matches a gold entry when its
//! id or its file is that entry, or it is a symbol of that file; `decisions` and `lessons`
//! are met by any of their entries.
//!
//! Metrics (binary relevance): recall@k, MRR (first relevant rank), nDCG@k; and for
//! abstention, precision and recall of "abstained" on out-of-scope cases.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::context::ContextRequest;
use super::hits::SearchOptions;
use crate::memory::memory::WriteOptions;
use crate::{EngineError, Envelope, Result, Workspace};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryLine {
    subject: String,
    body: String,
    #[serde(default)]
    summary: Option<String>,
}

/// One evaluation case. A case file line with any other key (a misspelt `open_file` or
/// `out_of_scop`) is refused, naming the key: ignored, it would change what the case
/// measures without a word.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// A name for reports (required, unique in its file).
    pub id: String,
    /// The question.
    pub query: String,
    /// Open files.
    #[serde(default)]
    pub open_files: Vec<String>,
    /// Relevant paths or symbol keys.
    #[serde(default)]
    pub gold: Vec<String>,
    /// True when nothing in the repository answers it (the system should abstain).
    #[serde(default)]
    pub out_of_scope: bool,
}

/// Quality of one system on a case set.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SystemScores {
    /// `loci context` or `fts5 bm25`.
    pub system: String,
    /// Mean recall@k over in-scope cases (`None`, JSON `null`, without any: undefined,
    /// not 0).
    pub recall_at_k: Option<f64>,
    /// Mean reciprocal rank over in-scope cases (`None` without any).
    pub mrr: Option<f64>,
    /// Mean nDCG@k over in-scope cases (`None` without any).
    pub ndcg_at_k: Option<f64>,
    /// Of the cases it abstained on, the share that were out of scope (`None` when it
    /// abstained on none: undefined, not a perfect 1).
    pub abstention_precision: Option<f64>,
    /// Of the out-of-scope cases, the share it abstained on (`None` without any).
    pub abstention_recall: Option<f64>,
    /// Median latency per query, milliseconds (in-process).
    pub p50_ms: f64,
    /// 95th-percentile latency per query, milliseconds (in-process).
    pub p95_ms: f64,
}

/// Per-case outcome.
#[derive(Clone, Debug, Serialize)]
pub struct CaseOutcome {
    /// The case id.
    pub id: String,
    /// Rank (1-based) of the first relevant item for loci, if within the list.
    pub loci_rank: Option<usize>,
    /// The same for the BM25 baseline.
    pub bm25_rank: Option<usize>,
    /// loci's recall@k on this case: the share of its gold entries in the first k items.
    pub loci_recall: f64,
    /// The same for the BM25 baseline.
    pub bm25_recall: f64,
    /// Whether loci abstained.
    pub abstained: bool,
    /// loci's best relevance.
    pub best_relevance: f64,
}

/// An evaluation report.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// The cutoff.
    pub k: usize,
    /// In-scope cases.
    pub in_scope: usize,
    /// Out-of-scope cases.
    pub out_of_scope: usize,
    /// loci and the baseline.
    pub systems: Vec<SystemScores>,
    /// Per case.
    pub cases: Vec<CaseOutcome>,
    /// Gold entries that name nothing in the map or memory (`case: entry`): a case file
    /// out of date with the code; those cases cannot be answered.
    pub unknown_gold: Vec<String>,
}

impl EvalReport {
    /// A markdown table of the systems.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{} in-scope and {} out-of-scope cases, k = {}\n\n| system | recall@{k} | MRR | nDCG@{k} | abstention precision | abstention recall | p50 ms | p95 ms |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
            self.in_scope,
            self.out_of_scope,
            self.k,
            k = self.k
        );
        let figure = |v: Option<f64>, places: usize| match v {
            Some(v) => format!("{v:.places$}"),
            None => "n/a".to_string(),
        };
        for x in &self.systems {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {:.2} | {:.2} |\n",
                x.system,
                figure(x.recall_at_k, 3),
                figure(x.mrr, 3),
                figure(x.ndcg_at_k, 3),
                figure(x.abstention_precision, 2),
                figure(x.abstention_recall, 2),
                x.p50_ms,
                x.p95_ms
            ));
        }
        if !self.unknown_gold.is_empty() {
            s.push_str(&format!(
                "\nGold entries that name nothing in the map or memory: {}\n",
                self.unknown_gold.join(", ")
            ));
        }
        s
    }
}

/// The chosen abstention floor.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// The floor.
    pub floor: f64,
    /// Balanced accuracy of "abstain iff best relevance < floor" on the cases.
    pub balanced_accuracy: f64,
    /// In-scope cases.
    pub in_scope: usize,
    /// Out-of-scope cases.
    pub out_of_scope: usize,
}

/// An item matches a gold entry that names it, its file, or its log (`decisions` is met by
/// any decision).
fn matches(gold: &str, id: &str, path: Option<&str>) -> bool {
    id == gold
        || loci_store::logs::log_of_entry(id) == Some(gold)
        || path == Some(gold)
        || id
            .strip_prefix(gold)
            .is_some_and(|rest| rest.starts_with('#'))
}

/// Recall@k, reciprocal rank and nDCG@k of a ranked list of `(id, path)`.
fn score_ranking(
    ranked: &[(String, Option<String>)],
    gold: &[String],
    k: usize,
) -> (f64, f64, f64, Option<usize>) {
    let mut found = vec![false; gold.len()];
    let mut first = None;
    let mut dcg = 0.0;
    for (i, (id, path)) in ranked.iter().enumerate() {
        let mut relevant = false;
        for (g, seen) in gold.iter().zip(found.iter_mut()) {
            if !*seen && matches(g, id, path.as_deref()) {
                *seen = i < k || *seen;
                relevant = true;
                if i >= k {
                    // Counted for MRR only.
                }
            }
        }
        if relevant {
            first.get_or_insert(i + 1);
            if i < k {
                dcg += 1.0 / ((i + 2) as f64).log2();
            }
        }
    }
    let recall = if gold.is_empty() {
        0.0
    } else {
        found.iter().filter(|f| **f).count() as f64 / gold.len() as f64
    };
    let ideal: f64 = (0..gold.len().min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ndcg = if ideal > 0.0 {
        (dcg / ideal).min(1.0)
    } else {
        0.0
    };
    let rr = first.map(|r| 1.0 / r as f64).unwrap_or(0.0);
    (recall, rr, ndcg, first)
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

/// The most in-scope cases a calibrated floor may abstain on: 5% (an agent told
/// "nothing relevant" for a question the code answers stops asking).
pub const MAX_IN_SCOPE_ABSTENTION: f64 = 0.05;

/// The floor with the best balanced accuracy among those that abstain on at most
/// [`MAX_IN_SCOPE_ABSTENTION`] of the in-scope cases (midpoints between observed values);
/// returns it with its balanced accuracy.
fn best_floor(inside: &[f64], outside: &[f64]) -> (f64, f64) {
    let mut points: Vec<f64> = inside
        .iter()
        .chain(outside)
        .copied()
        .filter(|p| p.is_finite())
        .collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    let mut candidates: Vec<f64> = points.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    candidates.extend(points.first().map(|p| p - 1.0));
    candidates.extend(points.last().map(|p| p + 1.0));
    let accuracy = |floor: f64| {
        let tpr = if inside.is_empty() {
            1.0
        } else {
            inside.iter().filter(|&&x| x >= floor).count() as f64 / inside.len() as f64
        };
        let tnr = if outside.is_empty() {
            1.0
        } else {
            outside.iter().filter(|&&x| x < floor).count() as f64 / outside.len() as f64
        };
        (tpr + tnr) / 2.0
    };
    let kept = |floor: f64| {
        inside.is_empty()
            || inside.iter().filter(|&&x| x < floor).count() as f64 / inside.len() as f64
                <= MAX_IN_SCOPE_ABSTENTION
    };
    let mut best = (0.0, -1.0);
    for f in candidates.into_iter().filter(|&f| kept(f)) {
        let a = accuracy(f);
        if a > best.1 {
            best = (f, a);
        }
    }
    best
}

/// A case file: the memory its set defines and its cases.
struct CaseFile {
    memory: Vec<MemoryLine>,
    cases: Vec<Case>,
}

fn read_cases(path: &Path) -> Result<CaseFile> {
    let text = std::fs::read_to_string(path).map_err(|source| EngineError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |n: usize, e: serde_json::Error| EngineError::InvalidArgument {
        name: "cases".into(),
        message: format!("{}:{}: {e}", path.display(), n + 1),
    };
    let mut file = CaseFile {
        memory: Vec::new(),
        cases: Vec::new(),
    };
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(n, e))?;
        match value.get("memory") {
            Some(_) if value.as_object().is_some_and(|o| o.len() > 1) => {
                let others: Vec<&String> = value
                    .as_object()
                    .into_iter()
                    .flat_map(|o| o.keys())
                    .filter(|k| *k != "memory")
                    .collect();
                return Err(EngineError::InvalidArgument {
                    name: "cases".into(),
                    message: format!(
                        "{}:{}: a memory line holds only `memory`, not {}",
                        path.display(),
                        n + 1,
                        others
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
            Some(m) => file
                .memory
                .push(serde_json::from_value(m.clone()).map_err(|e| bad(n, e))?),
            None => {
                let case: Case = serde_json::from_value(value).map_err(|e| bad(n, e))?;
                // A case that can score nothing, or one two lines share the name of,
                // would skew the figures without a word.
                let refuse = |message: String| EngineError::InvalidArgument {
                    name: "cases".into(),
                    message: format!("{}:{}: {message}", path.display(), n + 1),
                };
                if case.id.trim().is_empty() {
                    return Err(refuse(
                        "a case with an empty `id` (each case needs a name of its own)".into(),
                    ));
                }
                if case.out_of_scope && !case.gold.is_empty() {
                    return Err(refuse(format!(
                        "case `{}` is out of scope but names gold: drop `gold`, or `out_of_scope: true`",
                        case.id
                    )));
                }
                if !case.out_of_scope && case.gold.is_empty() {
                    return Err(refuse(format!(
                        "case `{}` is in scope but names no gold (give `gold`, or `out_of_scope: true`)",
                        case.id
                    )));
                }
                if !case.out_of_scope && case.query.trim().is_empty() && case.open_files.is_empty()
                {
                    return Err(refuse(format!(
                        "case `{}` is in scope but asks nothing (an empty query and no open files): context abstains on it",
                        case.id
                    )));
                }
                if file.cases.iter().any(|c| c.id == case.id) {
                    return Err(refuse(format!("case id `{}` is used twice", case.id)));
                }
                file.cases.push(case);
            }
        }
    }
    Ok(file)
}

impl Workspace {
    /// Writes the memory lines of the case file at `path` into this workspace, by
    /// `eval:setup`, where a page's current body differs (so running it twice writes
    /// nothing new). Returns how many revisions it wrote. `eval` and `calibrate` do not
    /// call it on the workspace: they write the memory into a scratch copy.
    pub fn write_case_memory(&mut self, path: &Path) -> Result<usize> {
        let file = read_cases(path)?;
        self.write_memory_lines(&file.memory)
    }

    fn write_memory_lines(&mut self, lines: &[MemoryLine]) -> Result<usize> {
        let mut written = 0;
        for m in lines {
            // A log is written as its entries: each one this store lacks is added.
            if let Some(log) = crate::memory::logs::log_named(&m.subject) {
                let held: Vec<String> = self
                    .log_revisions(log)?
                    .into_iter()
                    .map(|r| r.body)
                    .collect();
                for text in loci_store::logs::entry_texts(&m.body) {
                    if !held.contains(&text) {
                        let opts = WriteOptions {
                            author: Some("eval:setup".into()),
                            summary: m.summary.clone(),
                            ..Default::default()
                        };
                        match log {
                            "lessons" => self.learn(&text, None, &opts)?,
                            _ => self.decide(&text, None, &opts)?,
                        };
                        written += 1;
                    }
                }
                continue;
            }
            let current = self
                .show(&m.subject, None)
                .ok()
                .map(|s| s.result.revision.body);
            if current.as_deref() != Some(m.body.as_str()) {
                let opts = WriteOptions {
                    author: Some("eval:setup".into()),
                    summary: m.summary.clone(),
                    ..Default::default()
                };
                self.remember(&m.subject, &m.body, &opts)?;
                written += 1;
            }
        }
        Ok(written)
    }

    /// Runs `f` where the case file's memory is written: on this workspace when the file
    /// defines none, else on a scratch copy of its database in a temporary directory
    /// (removed after), opened on the same root and configuration.
    fn with_case_memory<T>(
        &mut self,
        file: &CaseFile,
        f: impl FnOnce(&mut Workspace) -> Result<T>,
    ) -> Result<T> {
        if file.memory.is_empty() {
            return f(self);
        }
        let dir = tempfile::tempdir().map_err(|source| EngineError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
        let db = dir.path().join("eval.db");
        self.store.backup_online(&db, None)?;
        let mut scratch = Workspace::open(&self.root, Some(&db))?;
        scratch.write_memory_lines(&file.memory)?;
        f(&mut scratch)
    }

    /// Runs every case through `context` and through plain BM25; see the module docs.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for `k` = 0 (no rank is within it) or a
    /// file with no cases; a file that cannot be read or holds a malformed line.
    pub fn eval(&mut self, path: &Path, k: usize) -> Result<Envelope<EvalReport>> {
        if k == 0 {
            return Err(EngineError::InvalidArgument {
                name: "k".into(),
                message: "the cutoff k is at least 1".into(),
            });
        }
        let file = read_cases(path)?;
        if file.cases.is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "cases".into(),
                message: format!("{} holds no case lines", path.display()),
            });
        }
        self.with_case_memory(&file, |ws| ws.eval_cases(&file.cases, k))
    }

    fn eval_cases(&self, cases: &[Case], k: usize) -> Result<Envelope<EvalReport>> {
        let floor = self.config.context.floor;
        let mut loci = SystemScores {
            system: "loci context".into(),
            ..Default::default()
        };
        let mut bm25 = SystemScores {
            system: "fts5 bm25".into(),
            ..Default::default()
        };
        let (mut loci_ms, mut bm25_ms) = (Vec::new(), Vec::new());
        // (abstained, out of scope) and (best BM25, out of scope) per case.
        let mut loci_abst: Vec<(bool, bool)> = Vec::new();
        let mut bm25_top: Vec<(f64, bool)> = Vec::new();
        let mut outcomes = Vec::new();
        let in_scope = cases.iter().filter(|c| !c.out_of_scope).count();
        // Sums over the in-scope cases: (recall, reciprocal rank, nDCG) per system.
        let (mut loci_sum, mut bm25_sum) = ([0.0; 3], [0.0; 3]);
        let mut unknown_gold = Vec::new();
        for case in cases {
            for g in &case.gold {
                if !loci_store::search::names_anything(self.store.conn(), g)? {
                    unknown_gold.push(format!("{}: {g}", case.id));
                }
            }
        }
        for case in cases {
            let req = ContextRequest {
                query: case.query.clone(),
                open_files: case.open_files.clone(),
                budget: Some(1_000_000),
                floor: Some(f64::NEG_INFINITY),
            };
            let started = Instant::now();
            let answer = self.context_any_floor(&req)?.result;
            loci_ms.push(started.elapsed().as_secs_f64() * 1000.0);
            // As `context` decides at the configured floor: below it, or a name nothing holds.
            let abstained = answer.best_relevance < floor || !answer.unknown_names.is_empty();
            // An answer that abstains serves nothing: it retrieves nothing, whatever it
            // ranked (an abstained case earns no recall for its ranking). The
            // baseline's ranking is scored whole: its floor is picked after, on all cases.
            let ranked: Vec<(String, Option<String>)> = if abstained {
                Vec::new()
            } else {
                answer
                    .items
                    .iter()
                    .map(|i| (i.id.clone(), i.path.clone()))
                    .collect()
            };
            loci_abst.push((abstained, case.out_of_scope));

            // The baseline: plain BM25 over the same indexes for the same content terms
            // (all of them ORed), merged by raw score.
            let started = Instant::now();
            let terms = super::search::content_terms(&case.query);
            let mut hits = match super::search::any_of(&terms) {
                Some(expr) => self.search_hits(
                    &expr,
                    &SearchOptions {
                        kinds: Vec::new(),
                        path_prefix: None,
                        limit: Some(20),
                    },
                )?,
                None => Vec::new(),
            };
            bm25_ms.push(started.elapsed().as_secs_f64() * 1000.0);
            hits.sort_by(|a, b| b.bm25.total_cmp(&a.bm25).then_with(|| a.id.cmp(&b.id)));
            bm25_top.push((hits.first().map_or(0.0, |h| h.bm25), case.out_of_scope));
            let baseline: Vec<(String, Option<String>)> = hits
                .iter()
                .map(|h| (h.id.clone(), h.path.clone()))
                .collect();

            let (r1, rr1, n1, first1) = score_ranking(&ranked, &case.gold, k);
            let (r2, rr2, n2, first2) = score_ranking(&baseline, &case.gold, k);
            if !case.out_of_scope {
                for (sum, x) in loci_sum.iter_mut().zip([r1, rr1, n1]) {
                    *sum += x;
                }
                for (sum, x) in bm25_sum.iter_mut().zip([r2, rr2, n2]) {
                    *sum += x;
                }
            }
            outcomes.push(CaseOutcome {
                id: case.id.clone(),
                loci_rank: first1,
                bm25_rank: first2,
                loci_recall: r1,
                bm25_recall: r2,
                abstained,
                best_relevance: answer.best_relevance,
            });
        }
        // A mean over no case is undefined: `None`, never 0 (nor 1).
        let mean = |sum: f64, n: usize| (n > 0).then(|| sum / n as f64);
        for (s, sum) in [(&mut loci, loci_sum), (&mut bm25, bm25_sum)] {
            s.recall_at_k = mean(sum[0], in_scope);
            s.mrr = mean(sum[1], in_scope);
            s.ndcg_at_k = mean(sum[2], in_scope);
        }
        let abstention = |pairs: &[(bool, bool)]| {
            let abstained = pairs.iter().filter(|p| p.0).count();
            let correct = pairs.iter().filter(|p| p.0 && p.1).count();
            let out = pairs.iter().filter(|p| p.1).count();
            (mean(correct as f64, abstained), mean(correct as f64, out))
        };
        (loci.abstention_precision, loci.abstention_recall) = abstention(&loci_abst);
        // The baseline abstains on its own best floor over raw BM25 (its best case).
        let inside: Vec<f64> = bm25_top.iter().filter(|p| !p.1).map(|p| p.0).collect();
        let outside: Vec<f64> = bm25_top.iter().filter(|p| p.1).map(|p| p.0).collect();
        let (bm25_floor, _) = best_floor(&inside, &outside);
        let bm25_abst: Vec<(bool, bool)> = bm25_top
            .iter()
            .map(|(top, out)| (*top < bm25_floor, *out))
            .collect();
        (bm25.abstention_precision, bm25.abstention_recall) = abstention(&bm25_abst);
        loci.p50_ms = percentile(loci_ms.clone(), 0.5);
        loci.p95_ms = percentile(loci_ms, 0.95);
        bm25.p50_ms = percentile(bm25_ms.clone(), 0.5);
        bm25.p95_ms = percentile(bm25_ms, 0.95);
        let report = EvalReport {
            k,
            in_scope,
            out_of_scope: cases.len() - in_scope,
            systems: vec![loci, bm25],
            cases: outcomes,
            unknown_gold,
        };
        self.envelope(report, Vec::new())
    }

    /// Picks the floor that best separates in-scope from out-of-scope cases.
    pub fn calibrate(&mut self, path: &Path) -> Result<Envelope<Calibration>> {
        let file = read_cases(path)?;
        let outside = file.cases.iter().filter(|c| c.out_of_scope).count();
        if outside == 0 || outside == file.cases.len() {
            return Err(EngineError::InvalidArgument {
                name: "cases".into(),
                message: format!(
                    "{} holds {} in-scope and {outside} out-of-scope cases: a floor separates the two, so it needs some of each",
                    path.display(),
                    file.cases.len() - outside
                ),
            });
        }
        self.with_case_memory(&file, |ws| ws.calibrate_cases(&file.cases))
    }

    fn calibrate_cases(&self, cases: &[Case]) -> Result<Envelope<Calibration>> {
        let (mut inside, mut outside) = (Vec::new(), Vec::new());
        for case in cases {
            let req = ContextRequest {
                query: case.query.clone(),
                open_files: case.open_files.clone(),
                budget: Some(1_000),
                floor: Some(f64::NEG_INFINITY),
            };
            let answer = self.context_any_floor(&req)?.result;
            // A case that names what nothing holds abstains at any floor: the floor
            // separates the others. As −∞ it is on the abstaining side of every floor.
            let best = if answer.unknown_names.is_empty() {
                answer.best_relevance
            } else {
                f64::NEG_INFINITY
            };
            if case.out_of_scope {
                outside.push(best)
            } else {
                inside.push(best)
            }
        }
        let (floor, balanced_accuracy) = best_floor(&inside, &outside);
        self.envelope(
            Calibration {
                floor,
                balanced_accuracy,
                in_scope: inside.len(),
                out_of_scope: outside.len(),
            },
            Vec::new(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_metrics_are_exact() {
        let ranked = vec![
            ("a.py#f@function".to_string(), Some("a.py".to_string())),
            ("notes".to_string(), None),
            ("b.py".to_string(), Some("b.py".to_string())),
        ];
        let (recall, rr, ndcg, first) = score_ranking(&ranked, &["b.py".into(), "a.py".into()], 2);
        assert_eq!(first, Some(1));
        assert_eq!(rr, 1.0);
        assert_eq!(recall, 0.5, "b.py is at rank 3, outside k = 2");
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((ndcg - 1.0 / ideal).abs() < 1e-9);
    }

    #[test]
    fn the_floor_separates_the_two_sets() {
        let (floor, acc) = best_floor(&[30.0, 25.0, 18.0], &[4.0, 9.0]);
        assert_eq!(acc, 1.0);
        assert!(floor > 9.0 && floor < 18.0, "{floor}");
    }
}

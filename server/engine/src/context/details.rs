//! The details of `context`'s candidates once gathered: memory's bodies, recency,
//! staleness and contradictions; docs lint found false; symbols as the map has them now;
//! demotions of secondary code and of open files' outlines.

use std::collections::{HashMap, HashSet};

use loci_store::memory as mem;

use super::context::{Found, Question};
use super::{hits::*, named::*, open::*, score::*};
use crate::{Result, StaleWarning, Workspace};

impl Workspace {
    /// Phase 4, memory details: bodies, recency, staleness, contradictions.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn memory_phase(&self, q: &Question, g: &mut Found) -> Result<()> {
        let conn = self.store.conn();
        // 4. Memory details: bodies, recency, staleness, contradictions.
        let week_ago = jiff::Timestamp::now()
            .checked_sub(jiff::SignedDuration::from_hours(24 * 7))
            .map(|t| t.to_string())
            .unwrap_or_default();
        g.contradictions = loci_store::audit::contradictions(conn, Some("open"))?;
        let best_text = g.cands.values().map(|c| c.text_points).fold(0.0, f64::max);
        let page_of: HashMap<&str, &mem::Page> =
            g.pages.iter().map(|p| (p.subject.as_str(), p)).collect();
        // The current revision of every memory candidate (most were read by the search),
        // then the staleness of all of them at once.
        for c in g.cands.values().filter(|c| c.kind == HitKind::Memory) {
            if let Some(id) = page_of
                .get(c.id.as_str())
                .and_then(|p| p.current_revision_id)
                && !g.revisions.contains_key(&id)
                && let Some(r) = mem::revision_by_id(conn, id).ok().flatten()
            {
                g.revisions.insert(id, r);
            }
        }
        let current = |subject: &str| {
            let page = *page_of.get(subject)?;
            Some((g.revisions.get(&page.current_revision_id?)?, page))
        };
        let pairs: Vec<(&mem::Revision, &mem::Page)> = g
            .cands
            .values()
            .filter(|c| c.kind == HitKind::Memory)
            .filter_map(|c| current(&c.id))
            .collect();
        let mut staleness = self.cached_staleness(&pairs)?;
        // The names the question writes as identifiers, by their last segment.
        let question_names: HashSet<String> = super::search::identifier_tokens(q.query)
            .iter()
            .map(|n| last_segment(n).to_string())
            .collect();
        for c in g.cands.values_mut().filter(|c| c.kind == HitKind::Memory) {
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
            // `EPISODIC_TEXT_SHARE`): one common word must not put the lessons page first.
            if c.relevance >= q.relevant_at {
                if (page.kind == "decisions" || page.kind == "lessons")
                    && (c.text_points >= EPISODIC_TEXT_SHARE * best_text
                        || linked_to(conn, rev.revision_id, &q.open, &g.named_targets)?)
                {
                    c.add(EPISODIC_POINTS, false, page.kind.clone());
                }
                if rev.created_at >= week_ago {
                    c.add(RECENT_POINTS, false, "updated this week");
                }
            }
            if !stale.is_empty() {
                c.stale = true;
                c.add(STALE_POINTS, false, "stale");
                g.stale_warnings.extend(stale.iter().map(|s| {
                    let warning = StaleWarning {
                        path: s.subject.clone(),
                        reason: s.describe(),
                    };
                    (c.id.clone(), warning)
                }));
            }
            let open_here = g
                .contradictions
                .iter()
                .filter(|x| x.origin == "page" && x.subject == c.id)
                .count() as u64;
            if open_here > 0 {
                c.contradictions = open_here;
                c.add(CONTRADICTED_POINTS, false, "open contradictions");
            }
            // Model-written text ranks below human-written text of equal relevance: it is
            // stored like any memory and trusted like none.
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
                g.banners.push((
                    c.id.clone(),
                    format!(
                        "⚠ memory `{}` names {}, which the code no longer has: it is false \
                         about what you asked until it is corrected (`loci lint`)",
                        c.id,
                        ticked(&false_names)
                    ),
                ));
            } else if open_here > 0 && c.score() > 0.0 {
                g.banners.push((c.id.clone(), format!("⚠ memory `{}` has {open_here} open contradiction(s) with the code; verify before relying on it (`loci lint`)", c.id)));
            }
            memory_texts(c, rev);
        }
        Ok(())
    }

    /// The repository's docs are checked by lint too (origin `doc`): a section holding a
    /// claim lint found false is served with its contradictions, as memory is (−40, a
    /// banner, a warning each), never as if it were true.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn docs_phase(&self, q: &Question, g: &mut Found) -> Result<()> {
        let conn = self.store.conn();
        for c in g.cands.values_mut().filter(|c| c.kind == HitKind::Doc) {
            let (Some(path), Some(line)) = (c.path.clone(), c.line) else {
                continue;
            };
            let end = loci_store::map::doc_section_end(conn, &path, line)?.unwrap_or(line);
            let false_here: Vec<&loci_store::audit::Contradiction> = g
                .contradictions
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
            let served = q.worth_serving(c.score());
            c.add(CONTRADICTED_POINTS, false, "open contradictions");
            if served && c.score() <= 0.0 {
                c.add(
                    FALSE_SHOWN_POINTS - c.score(),
                    false,
                    "false in part: shown, marked",
                );
            }
            g.stale_warnings.extend(false_here.iter().map(|x| {
                (
                    c.id.clone(),
                    StaleWarning {
                        path: path.clone(),
                        reason: doc_false_reason(x),
                    },
                )
            }));
            if c.score() > 0.0 {
                g.banners.push((
                    c.id.clone(),
                    format!(
                        "⚠ doc `{}` has {} open contradiction(s) with the code; verify before relying on it (`loci lint`)",
                        c.id,
                        false_here.len()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Symbols as the map has them now (a key memory names may be gone), withheld when a
    /// secret rule finds their text; every doc and file item with its text.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn symbols_phase(&self, g: &mut Found) -> Result<()> {
        let conn = self.store.conn();
        let symbol_keys: Vec<&str> = g
            .cands
            .values()
            .filter(|c| c.kind == HitKind::Symbol)
            .map(|c| c.id.as_str())
            .collect();
        let mut symbols = loci_store::map::symbols_by_keys(conn, &symbol_keys)?;
        // A key memory names (a stale page's claim) may be gone from the map: an answer
        // never lists code that no longer exists (a renamed method is not live).
        g.cands
            .retain(|(kind, id), _| *kind != HitKind::Symbol || symbols.contains_key(id));
        // A symbol whose first line or doc comment a secret rule configured since the scan
        // finds is left out, as its file's source is.
        let withheld: Vec<String> = symbols
            .values()
            .filter(|s| !self.symbol_text_served(g.checked, s))
            .map(|s| s.key.clone())
            .collect();
        for key in &withheld {
            symbols.remove(key);
            g.cands.remove(&(HitKind::Symbol, key.clone()));
        }
        for c in g.cands.values_mut().filter(|c| c.kind == HitKind::Symbol) {
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
        for c in g
            .cands
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
        Ok(())
    }

    /// Test, example and vendored code after the rest unless asked about; an open file's
    /// outline after the memory about it.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn demotions_phase(&self, q: &Question, g: &mut Found) {
        // Test code answers a question about tests; otherwise it is usage, not the answer
        // (examples and vendored code alike, and the memory about them: a page on
        // `test/test_urlparse.py`).
        for c in g.cands.values_mut() {
            let place = match c.kind {
                HitKind::Symbol | HitKind::File => c.path.as_deref(),
                HitKind::Memory => Some(c.id.as_str()),
                HitKind::Doc => None,
            };
            if let Some(kind) = q.asks.demotes(place) {
                c.add(-TEST_CODE_PENALTY, false, kind.signal());
            }
        }

        // An open file's outline and main symbols never outrank the memory about it: its
        // page, and the decisions and lessons with a claim about an open file. A stale page
        // (−20) would otherwise drop below its file's constants to a last one-line digest,
        // though it is what the reader must see, and fix, first; and the symbols a fresh
        // page names (+15) would come before the page and the decision about the file.
        let memory_scores: Vec<(Option<String>, f64)> = g
            .cands
            .values()
            .filter(|c| c.kind == HitKind::Memory && c.score() > 0.0)
            .map(|c| {
                // A decision or lesson about an open file is about each open file.
                let about = (!g.about_open.contains(&c.id)).then(|| c.id.clone());
                (about, c.score())
            })
            .collect();
        for c in g.cands.values_mut().filter(|c| c.order > 0) {
            let cap = memory_scores
                .iter()
                .filter(|(about, _)| about.is_none() || about.as_ref() == c.path.as_ref())
                .map(|&(_, score)| score)
                .fold(f64::INFINITY, f64::min);
            if c.score() > cap {
                c.add(cap - c.score(), false, "after the memory about its file");
            }
        }
    }
}

/// An open contradiction of a doc in words: `` docs/a.md:5 claim `f()` is false: TRUTH
/// (did you mean `g`?) (contradiction #7) `` (one-based line, as `loci lint` prints it).
pub(super) fn doc_false_reason(c: &loci_store::audit::Contradiction) -> String {
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

/// A memory candidate's texts: FULL, its revision with a heading (and a stale mark), and
/// DIGEST, its summary or its first 200 characters.
fn memory_texts(c: &mut Candidate, rev: &mem::Revision) {
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

//! Packing an answer: items into FULL / DIGEST / INDEX tiers under a token budget, the
//! recap of recent sessions, and the markdown a reader is given.

use std::collections::{HashMap, HashSet};

use loci_store::memory as mem;

use crate::{Envelope, Result, StaleWarning, Workspace};

use super::context::{ContextAnswer, ContextItem, Found, Question, RECAP_CHARS, Tier};
use super::hits::HitKind;
use super::{open::*, score::*};

/// The names the note about names nothing holds lists; it counts the rest.
const NOTE_NAMES: usize = 10;

/// Sessions the recap heading a `context` answer lists, newest first.
const RECAP_SESSIONS: u32 = 3;

/// Tokens of `s`, estimated as characters / 4.
pub(crate) fn estimate_tokens(s: &str) -> u64 {
    s.chars().count().div_ceil(4) as u64
}

/// [`estimate_tokens`] of `s` and the line end the markdown puts after it.
pub(super) fn line_tokens(s: &str) -> u64 {
    (s.chars().count() + 1).div_ceil(4) as u64
}

impl Workspace {
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
    pub(super) fn symbol_full(&self, s: &loci_store::map::SymbolHit) -> String {
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

/// The whole answer as markdown: the recap, a `> note:` line per open file the map lacks
/// (`notes`), then an abstention line, or the banners, heading, items and closing line.
pub(super) fn render(
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
        // Relevant enough but abstaining: the question names what nothing here holds
        // (the notes above say which names).
        if best >= floor {
            let candidate = best_candidate.map_or(String::new(), |id| {
                format!(
                    "; the best candidate, `{id}` at relevance {}, is about something else",
                    points(best)
                )
            });
            out.push_str(&format!("Nothing in memory, code or docs answers {to}: it names what they do not hold{candidate}. Read the code directly.\n"));
            return out;
        }
        let best = match best_candidate {
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

/// Characters of the question that an answer's heading quotes.
pub(super) const HEADING_QUERY_CHARS: usize = 200;

/// An answer's heading: the question, its first [`HEADING_QUERY_CHARS`] characters, or
/// "the open files" when there is none.
pub(super) fn heading(query: &str) -> String {
    if query.is_empty() {
        return "## Context for the open files\n".to_string();
    }
    format!("## Context for `{}`\n", quoted_query(query))
}

/// The question as an answer quotes it: its first [`HEADING_QUERY_CHARS`] characters, and
/// `…` when it is longer (an abstention must not quote a 10 KB question whole).
pub(super) fn quoted_query(query: &str) -> String {
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
pub(super) fn tier_ceiling(tier: Tier, budget: u64) -> u64 {
    match tier {
        Tier::Full => budget * 3 / 4,
        Tier::Digest => budget * 9 / 10,
        Tier::Index => budget,
    }
}

/// The most items served FULL under `budget` tokens: 3, and one more for every 1,000
/// tokens over 2,000 (a budget of 100,000 serves up to 101 bodies, not 3).
pub(super) fn max_full(budget: u64) -> usize {
    3 + (budget.saturating_sub(2_000) / 1_000) as usize
}

/// An answer's closing line: the tokens used of the budget, and what was left out.
pub(super) fn footer(used: u64, budget: u64, omitted: u64) -> String {
    format!(
        "\n_≈{used} of {budget} tokens (an estimate: characters / 4){}_\n",
        if omitted > 0 {
            format!("; {omitted} more item(s) left out")
        } else {
            String::new()
        }
    )
}

/// An answer packed under its budget.
pub(super) struct Packed {
    pub(super) abstained: bool,
    pub(super) best_relevance: f64,
    pub(super) best_candidate: Option<String>,
    pub(super) recap: String,
    pub(super) recap_left_out: usize,
    /// Tokens used.
    pub(super) used: u64,
    pub(super) items: Vec<ContextItem>,
    /// Candidates left out for the budget.
    pub(super) omitted: u64,
    pub(super) truncated: bool,
}

impl Workspace {
    /// Phase 5: rank, abstain or pack.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn pack_phase(&self, q: &Question, g: &mut Found) -> Result<Packed> {
        // 5. Rank, abstain or pack.
        let mut ranked: Vec<Candidate> = std::mem::take(&mut g.cands).into_values().collect();
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
        let abstained = !g.quoted_found
            && (best_relevance < q.floor || (!g.missing.is_empty() && q.floor > 0.0));
        let (recap, recap_left_out) = self.recap_block(RECAP_SESSIONS, q.budget / 4)?;
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
            used += estimate_tokens(&heading(q.query))
                + estimate_tokens(&footer(q.budget, q.budget, ranked.len() as u64));
        }
        let mut items = Vec::new();
        let mut omitted = 0u64;
        let mut truncated = recap_cut;
        let mut full_served = 0;
        // The source lines each symbol served FULL shows: (path, first, last), zero-based.
        let mut shown: Vec<(&str, u32, u32)> = Vec::new();
        if !abstained {
            for (_, banner) in &g.banners {
                used += line_tokens(banner);
            }
            // A candidate at no points or below (test code that matched nothing else,
            // a stale page found by a hop) is not worth even an index line, nor code or a
            // doc at less than half the floor ([`Question::worth_serving`]); memory is, and
            // a doc section kept for its contradictions, being what the answer must not
            // hide.
            let worth = |c: &&Candidate| {
                c.score() > 0.0
                    && (c.kind == HitKind::Memory
                        || c.contradictions > 0
                        || q.worth_serving(c.score()))
            };
            for c in ranked.iter().filter(worth) {
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
                if c.relevance >= q.floor {
                    let overlaps = lines.is_some_and(|(p, a, b)| {
                        shown.iter().any(|&(q, x, y)| p == q && a <= y && x <= b)
                    });
                    if full_served < max_full(q.budget) && !overlaps {
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
                    if used + cost <= tier_ceiling(*tier, q.budget) {
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
        Ok(Packed {
            abstained,
            best_relevance,
            best_candidate,
            recap,
            recap_left_out,
            used,
            items,
            omitted,
            truncated,
        })
    }

    /// The answer: its notes, markdown and envelope.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(super) fn finish(
        &self,
        q: &Question,
        g: Found,
        packed: Packed,
        query_notes: Vec<String>,
    ) -> Result<Envelope<ContextAnswer>> {
        let conn = self.store.conn();
        let Packed {
            abstained,
            best_relevance,
            best_candidate,
            recap,
            recap_left_out,
            mut used,
            items,
            omitted,
            truncated,
        } = packed;
        let page_of: HashMap<&str, &mem::Page> =
            g.pages.iter().map(|p| (p.subject.as_str(), p)).collect();
        let mut open_notes: Vec<String> = q.unmapped_open
            .iter()
            .map(|(f, near)| match near {
                Some(dir) => format!("open file `{f}` is not in the map (no such file, ignored, or not scanned yet): only the memory of `{dir}` and of the files in it scored open-file points"),
                None => format!("open file `{f}` is not in the map (no such file, ignored, or not scanned yet), so nothing near it scored open-file points"),
            })
            .collect();
        // A recap the budget cut says so (`fault_the_recap_vanished_silently_under_a_small_budget`).
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
                "{what}: it gets a quarter of the {}-token budget, too little (`loci recap` shows them)",
                q.budget
            ));
        }
        if abstained && !g.missing.is_empty() {
            // A note names a few: it must not echo a long question back.
            let mut names: Vec<String> = g
                .missing
                .iter()
                .take(NOTE_NAMES)
                .map(|n| format!("`{n}`"))
                .collect();
            if g.missing.len() > NOTE_NAMES {
                names.push(format!("{} more", g.missing.len() - NOTE_NAMES));
            }
            open_notes.push(format!(
                "the question names {}, which nothing in the code, memory or docs holds",
                names.join(", ")
            ));
            // Files skipped as secrets (or otherwise) may define them.
            open_notes.extend(self.left_out_note()?);
        }
        if abstained {
            // An open folder abstained without a word: what it counts for is not what an
            // open file does.
            for dir in &q.open_folders {
                let example = loci_store::map::largest_file_under(conn, dir)?;
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
        open_notes.extend(g.dense_notes);
        // Only the warnings about what the answer serves: a banner or stale mark about a
        // page or doc left out names something the reader cannot see (a banner's tokens
        // were kept for it, unused).
        let served: HashSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
        let mut banners = Vec::new();
        for (id, banner) in &g.banners {
            if served.contains(id.as_str()) {
                banners.push(banner.clone());
            } else if !abstained {
                used -= line_tokens(banner);
            }
        }
        let marks: Vec<StaleWarning> = g
            .stale_warnings
            .into_iter()
            .filter(|(id, _)| served.contains(id.as_str()))
            .map(|(_, w)| w)
            .collect();
        let markdown = render(
            q.query,
            abstained,
            (best_relevance, q.floor, best_candidate.as_deref()),
            (&recap, &open_notes),
            &banners,
            &items,
            (used, q.budget, omitted),
        );
        let mut relies: Vec<String> = items.iter().filter_map(|i| i.path.clone()).collect();
        relies.sort();
        relies.dedup();
        let answer = ContextAnswer {
            query: q.query.to_string(),
            abstained,
            best_relevance,
            floor: q.floor,
            best_candidate,
            unknown_names: g.missing,
            recap,
            banners: if abstained { Vec::new() } else { banners },
            items,
            tokens_estimated: used,
            markdown,
        };
        // The served memory gets the envelope `show` and `why` give it
        // (`memory_envelope_with`): the files it relies on checked against the disk, its
        // stale marks (read above for ranking), and what lint found false in it.
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
        env.limits.budget = Some(q.budget);
        env.limits.used = used;
        env.limits.truncated = truncated;
        env.limits.omitted = omitted;
        Ok(env)
    }
}

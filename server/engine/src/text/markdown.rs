//! The markdown flavour of answers, as an editor shows them (the language server's
//! command results, opened as a document or shown as a message): a bold title line, the
//! memory quoted, then the envelope's stale warnings and notes. The plain text of the same
//! answers, which the CLI prints and MCP tools return, is the parent module's; an answer
//! type has one renderer per flavour, here or there, and no door renders its own.

use std::fmt::Write as _;

use crate::Envelope;
use crate::context::{ContextAnswer, Why};
use crate::map::{Impact, ScanReport};
use crate::memory::{SessionView, Shown, Written};
use crate::store_types::Contradiction;

/// A `context` answer: its own markdown.
pub fn context(env: &Envelope<ContextAnswer>) -> String {
    env.result.markdown.clone()
}

/// A dismissed contradiction (`resolve`).
pub fn resolved(env: &Envelope<Contradiction>) -> String {
    let c = &env.result;
    format!(
        "Dismissed #{} {} `{}` in `{}`: it will not be reported again.",
        c.contradiction_id, c.kind, c.claim, c.subject
    )
}

/// Markdown for an impact answer.
pub fn impact(env: &Envelope<Impact>) -> String {
    let i = &env.result;
    let mut s = format!(
        "**Impact of `{}`** ({}, depth {}, {})\n\n",
        i.target.join("`, `"),
        i.mode,
        i.depth,
        super::edges_followed(i.hard, i.min_confidence)
    );
    if i.nodes.is_empty() {
        s.push_str("Nothing depends on it in the map.\n");
    }
    for n in &i.nodes {
        let _ = writeln!(
            s,
            "- {} `{}` via {} at `{}` ({}, {:.2})",
            n.depth,
            n.id,
            n.via.kind,
            n.via.at,
            super::provenance(&n.via.provenance, n.via.source.as_deref()),
            n.via.confidence
        );
    }
    if env.limits.omitted > 0 {
        let _ = write!(
            s,
            "\n… and {} more, not listed ({} in all; `\"limit\": 0` lists all{}).\n",
            env.limits.omitted,
            i.dependents,
            super::direct_ones(i)
                .map(|d| format!(
                    ", `\"depth\": 1` the {}",
                    crate::words::count(d, "direct one")
                ))
                .unwrap_or_default()
        );
    }
    if i.weaker > 0 {
        let _ = write!(
            s,
            "\n{} more only through weaker edges (below confidence {:.2}), not counted; \
             `\"min_confidence\": 0` follows them.\n",
            i.weaker, i.min_confidence
        );
    }
    if i.secondary_left_out > 0 {
        let _ = write!(
            s,
            "\n{} in tests, examples or vendored code left out (`\"no_tests\"`), not \
             walked through.\n",
            crate::words::count(i.secondary_left_out, "dependent")
        );
    }
    let _ = write!(s, "\n{} files affected.", i.files_affected);
    push_warnings(&mut s, env);
    s
}

/// Markdown for a memory write.
pub fn written(env: &Envelope<Written>) -> String {
    let w = &env.result;
    let mut s = format!(
        "Wrote `{}` v{} as {}{}",
        w.page.subject,
        w.revision.version,
        w.revision.author,
        if w.replayed {
            " (replayed: an identical earlier request)"
        } else {
            ""
        }
    );
    if !w.claims.is_empty() {
        let claims: Vec<String> = w
            .claims
            .iter()
            .map(|c| match (&c.resolved, c.definitions.is_empty()) {
                (Some(r), _) => format!("`{}` → `{r}`", c.text),
                (None, false) => format!("`{}` → {} definitions", c.text, c.definitions.len()),
                (None, true) => format!("`{}` (unresolved)", c.text),
            })
            .collect();
        let _ = write!(s, "\n\nClaims: {}", claims.join(", "));
    }
    push_warnings(&mut s, env);
    s
}

/// Markdown for `confirm`.
pub fn confirmed(env: &Envelope<Shown>) -> String {
    let c = &env.result;
    let mut s = format!(
        "Confirmed `{}` v{}: {} claims re-snapshotted against the code",
        c.page.subject,
        c.revision.version,
        c.claims.len()
    );
    push_warnings(&mut s, env);
    s
}

/// Markdown for `why`.
pub fn why(env: &Envelope<Why>) -> String {
    let w = &env.result;
    let mut s = format!(
        "**Why `{}`**: `{}` v{} by {} at {} (matched by {})",
        w.query,
        w.subject,
        w.revision.version,
        w.revision.author,
        w.revision.created_at,
        w.matched_by
    );
    if let Some(summary) = &w.revision.summary {
        let _ = write!(s, "\n\n_{summary}_");
    }
    let quoted: Vec<String> = w
        .entry
        .as_deref()
        .unwrap_or(&w.revision.body)
        .lines()
        .take(8)
        .map(|l| format!("> {l}"))
        .collect();
    if !quoted.is_empty() {
        let _ = write!(s, "\n\n{}", quoted.join("\n"));
    }
    if let Some(session) = &w.session {
        let _ = write!(
            s,
            "\n\nSession #{}{} by {}",
            session.session_id,
            session
                .task
                .as_deref()
                .map(|t| format!(" ({t})"))
                .unwrap_or_default(),
            session.author
        );
    }
    for e in &w.events {
        let _ = write!(s, "\n- event #{} `{}`", e.event_id, e.kind);
    }
    if let Some(note) = &w.commit_note {
        let _ = write!(s, "\n\nCommit: {note}");
    }
    if let Some(commit) = &w.commit {
        let _ = write!(s, "\n\nCommit `{}`", commit.hash);
    }
    push_warnings(&mut s, env);
    s
}

/// Markdown for `recap`.
pub fn recap(env: &Envelope<Vec<SessionView>>) -> String {
    let mut s = String::from("**Recent sessions**");
    if env.result.is_empty() {
        s.push_str("\n\nNo sessions yet.");
    }
    for v in &env.result {
        let _ = write!(
            s,
            "\n\n- #{} {} by {}, {}{}",
            v.session.session_id,
            v.session.task.as_deref().unwrap_or("(no task)"),
            v.session.author,
            v.session.started_at,
            v.session
                .ended_at
                .as_deref()
                .map(|e| format!(" – {e}"))
                .unwrap_or_else(|| " (open)".into())
        );
        for p in &v.digest.pages {
            let _ = write!(s, "\n  - `{}` v{}", p.subject, p.version);
        }
        for d in &v.digest.decisions {
            let _ = write!(s, "\n  - decision: {d}");
        }
        for l in &v.digest.lessons {
            let _ = write!(s, "\n  - lesson: {l}");
        }
    }
    push_warnings(&mut s, env);
    s
}

/// An answer in its plain text (as the CLI prints it), in a code block under a bold title:
/// for answers that have no markdown of their own (`sync`, synthesis).
pub fn text<T>(
    title: &str,
    env: &Envelope<T>,
    render: impl FnOnce(super::Out, &T) -> std::io::Result<()>,
) -> String {
    let text = super::to_string(|o| render(o, &env.result));
    let mut s = format!("**{title}**\n\n```text\n{}\n```", text.trim_end());
    push_warnings(&mut s, env);
    s
}

/// A scan: its [`scan_summary`] under the root scanned.
pub fn scan(root: &str, env: &Envelope<ScanReport>) -> String {
    let mut s = format!("**Scan of `{root}`**: {}", scan_summary(&env.result));
    push_warnings(&mut s, env);
    s
}

fn push_warnings<T>(s: &mut String, env: &Envelope<T>) {
    for w in &env.stale_warnings {
        let _ = write!(s, "\n\n⚠ `{}`: {}", w.path, w.reason);
    }
    for note in &env.capability.notes {
        let _ = write!(s, "\n\n_{note}_");
    }
}

/// One line about a scan: what changed and what the map holds (an editor's status
/// message, and [`scan`]).
pub fn scan_summary(r: &ScanReport) -> String {
    let mut s = format!(
        "{} files, {} symbols; {} added, {} modified, {} deleted, {} renamed, {} unchanged in {} ms",
        r.totals.files,
        r.totals.symbols,
        r.added.len(),
        r.modified.len(),
        r.deleted.len(),
        r.renamed.len(),
        r.unchanged,
        r.duration_ms
    );
    let skipped: u64 = r.skipped.values().sum();
    if skipped > 0 {
        let reasons: Vec<String> = r.skipped.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        s.push_str(&format!("; skipped {skipped} ({})", reasons.join(", ")));
    }
    s
}

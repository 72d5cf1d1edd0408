//! Plug points for what loci's memory and audit say about code: findings (diagnostics and
//! their code actions), per-symbol memory counts (code lenses) and memory lines in hovers.
//!
//! Each function here is the one place the language server asks the engine about memory:
//! live claims about a file, judged by the engine (`loci_engine::audit::live`) against the
//! editor's overlay as the user types (stale, or false: deleted, renamed, never existed),
//! or against the map for a file that is not open. Nothing is judged here. Everything a
//! follow-up request needs travels in the returned `data` (style.md rule 8), never in
//! server memory. No LSP types here: byte spans in, plain data out; the `server` module converts.

use std::collections::BTreeMap;

use loci_core::Symbol;
use loci_engine::Workspace;
use loci_engine::audit::{LiveClaim, Truth, Verdict};
use loci_engine::context::RevisionBrief;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How serious a finding is, as the client shows it (LSP `DiagnosticSeverity`). The
/// severity of each class of finding is a setting ([`Severities`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// `error`.
    Error,
    /// `warning`.
    Warning,
    /// `information`.
    Information,
    /// `hint`.
    Hint,
}

/// The severity of each class of finding (`initializationOptions.staleSeverity` and
/// `falseSeverity`). Rule: stale memory — what it names changed since it was written — is a
/// warning, so that editors filtering at "warning and above" show it and VS Code counts it;
/// false memory or docs — what they name is deleted, renamed, never existed or is
/// contradicted — is a warning too by default (it is about memory, not code that fails to
/// build), and can be raised to an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Severities {
    /// For `stale_memory`.
    pub stale: Severity,
    /// For false claims (`missing_symbol`, `missing_path`, `version_mismatch`).
    pub false_claim: Severity,
}

impl Default for Severities {
    fn default() -> Self {
        Severities {
            stale: Severity::Warning,
            false_claim: Severity::Warning,
        }
    }
}

impl Severities {
    fn of(&self, truth: Truth) -> Severity {
        match truth {
            Truth::Stale => self.stale,
            Truth::False => self.false_claim,
        }
    }
}

/// One follow-up a finding offers (a code action running a `loci.*` command).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindingAction {
    /// What the editor shows (`Confirm memory of login`).
    pub title: String,
    /// The command (`loci.confirm`).
    pub command: String,
    /// Its one JSON object argument.
    pub arguments: Value,
}

/// One thing the audit says about a document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Byte range `[start, end)` into the document text the finding was computed on.
    pub span: (u32, u32),
    /// How serious it is.
    pub severity: Severity,
    /// A stable code (`stale_memory`, `contradicted_claim`, `missing_path`, ...).
    pub code: String,
    /// The message, in words.
    pub message: String,
    /// What a follow-up needs (claim id, revision, symbol key); goes to `Diagnostic.data`.
    pub data: Value,
    /// Follow-ups offered as code actions.
    pub actions: Vec<FindingAction>,
}

/// Memory attached to one symbol, for its code lens and hover.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SymbolMemory {
    /// Memories (current page revisions) that mention the symbol.
    pub memories: u32,
    /// How many of them are stale about it.
    pub stale: u32,
    /// How many of them are false about it (name it under an old name, say).
    pub false_claims: u32,
    /// Markdown paragraphs for the hover: per revision, one line per mention (subject,
    /// version, author, date, commit, verdict), then the revision's text, quoted and
    /// trimmed.
    pub hover_lines: Vec<String>,
    /// Revisions counted.
    revisions: Vec<i64>,
    /// Stale revisions counted.
    stale_revisions: Vec<i64>,
    /// False revisions counted.
    false_revisions: Vec<i64>,
}

/// An open document's unsaved text and its symbols (spans are bytes into the text).
pub type Live<'a> = (&'a str, &'a [Symbol]);

/// The engine's judgement of the memory about `key_path`: against `live` (the overlay:
/// unsaved text and symbols) when the document is open, else the map's
/// ([`Workspace::file_memory`]). Empty in single-file mode or when the store cannot be
/// read (logged).
fn judge(ws: &Workspace, key_path: &str, live: Option<Live<'_>>) -> Vec<LiveClaim> {
    let judged = match live {
        Some((text, symbols)) => ws.judge_open_file(key_path, text, symbols),
        None => ws.file_memory(key_path).map(|mentions| {
            mentions
                .into_iter()
                .map(|m| LiveClaim {
                    verdict: m.stale.map(|message| Verdict {
                        truth: Truth::Stale,
                        kind: "stale_memory".into(),
                        message,
                        suggestion: None,
                    }),
                    at: Some(m.key.clone()),
                    target: m.key,
                    subject: m.subject,
                    revision_id: m.revision_id,
                    version: m.version,
                    author: m.author,
                    created_at: m.created_at,
                    claim_id: m.claim_id,
                    claim_text: m.claim_text,
                })
                .collect()
        }),
    };
    judged.unwrap_or_else(|e| {
        tracing::warn!("judging memory about {key_path}: {e}");
        Vec::new()
    })
}

/// Memory about each symbol of one file that has any, by the key of the symbol it shows
/// on (a claim about a renamed definition shows on the new one): see [`judge`]. With
/// `hover`, the hover lines name each revision's commit and quote its text (a lens needs
/// only the counts, and skips reading them).
pub fn memory_for_document(
    ws: Option<&Workspace>,
    key_path: &str,
    live: Option<Live<'_>>,
    hover: bool,
) -> BTreeMap<String, SymbolMemory> {
    let Some(ws) = ws else {
        return BTreeMap::new();
    };
    let mut out: BTreeMap<String, SymbolMemory> = BTreeMap::new();
    // Per symbol, per revision (in order of first mention): its lines, then its text.
    let mut blocks: BTreeMap<String, Vec<(i64, Vec<String>)>> = BTreeMap::new();
    let mut briefs: BTreeMap<i64, Option<RevisionBrief>> = BTreeMap::new();
    for c in judge(ws, key_path, live) {
        let Some(at) = c.at.clone() else { continue };
        let entry = out.entry(at.clone()).or_default();
        if !entry.revisions.contains(&c.revision_id) {
            entry.revisions.push(c.revision_id);
            entry.memories += 1;
        }
        let brief = briefs
            .entry(c.revision_id)
            .or_insert_with(|| {
                if !hover {
                    return None;
                }
                ws.revision_brief(c.revision_id).unwrap_or_else(|e| {
                    tracing::warn!("reading revision {}: {e}", c.revision_id);
                    None
                })
            })
            .clone();
        let date = c.created_at.get(..10).unwrap_or(&c.created_at);
        let commit = brief.as_ref().and_then(|b| match (&b.commit, &b.head) {
            (Some(hash), _) => Some(format!(", commit `{}`", short(hash))),
            (None, Some(head)) => Some(format!(", written at HEAD `{}`", short(head))),
            (None, None) => None,
        });
        let mut line = format!(
            "memory `{}` v{} by {} ({date}{})",
            c.subject,
            c.version,
            c.author,
            commit.unwrap_or_default()
        );
        match &c.verdict {
            Some(v) => {
                let (counted, count) = match v.truth {
                    Truth::Stale => (&mut entry.stale_revisions, &mut entry.stale),
                    Truth::False => (&mut entry.false_revisions, &mut entry.false_claims),
                };
                if !counted.contains(&c.revision_id) {
                    counted.push(c.revision_id);
                    *count += 1;
                }
                line.push_str(&format!(" — ⚠ {}", v.message));
            }
            None => line.push_str(" — current"),
        }
        let list = blocks.entry(at).or_default();
        let block = match list.iter_mut().position(|(r, _)| *r == c.revision_id) {
            Some(i) => &mut list[i].1,
            None => {
                list.push((c.revision_id, Vec::new()));
                &mut list.last_mut().expect("just pushed").1
            }
        };
        if !block.contains(&line) {
            block.push(line);
        }
    }
    for (at, list) in blocks {
        let Some(entry) = out.get_mut(&at) else {
            continue;
        };
        for (revision_id, lines) in list {
            entry.hover_lines.extend(lines);
            if let Some(Some(brief)) = briefs.get(&revision_id)
                && let Some(quote) = quote(&brief.body)
            {
                entry.hover_lines.push(quote);
            }
        }
    }
    out
}

/// The first 12 hex digits of a commit id.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// Lines of a memory's text shown in a hover, at most.
pub const HOVER_TEXT_LINES: usize = 4;
/// Characters of a memory's text shown in a hover, at most.
pub const HOVER_TEXT_CHARS: usize = 400;

/// A memory's text as a hover quotes it: trimmed, its first [`HOVER_TEXT_LINES`] non-blank
/// lines and at most [`HOVER_TEXT_CHARS`] characters, `…` where cut; `None` when empty.
fn quote(body: &str) -> Option<String> {
    let lines: Vec<&str> = body
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    let mut chars = 0;
    let mut cut = lines.len() > HOVER_TEXT_LINES;
    for line in lines.iter().take(HOVER_TEXT_LINES) {
        let n = line.chars().count();
        if chars + n > HOVER_TEXT_CHARS {
            let keep: String = line.chars().take(HOVER_TEXT_CHARS - chars).collect();
            out.push(keep.trim_end().to_string());
            cut = true;
            break;
        }
        chars += n;
        out.push((*line).to_string());
    }
    if cut && let Some(last) = out.last_mut() {
        last.push_str(" …");
    }
    Some(
        out.iter()
            .map(|l| format!("> {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// Claims in a markdown buffer that the code contradicts, at their exact spans, as the
/// user types (the engine's `check_markdown_live`, with the open code documents'
/// unsaved definitions): missing paths (with "replace with" when the new path is known),
/// missing symbols (deleted or renamed in a buffer too), version mismatches.
fn markdown_findings(
    ws: Option<&Workspace>,
    key_path: &str,
    text: &str,
    open: &[(&str, &str, &[Symbol])],
    severities: &Severities,
) -> Vec<Finding> {
    let Some(ws) = ws else {
        return Vec::new();
    };
    let found = match ws.check_markdown_live(key_path, text, open) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("checking claims in {key_path}: {e}");
            return Vec::new();
        }
    };
    found
        .into_iter()
        .map(|t| {
            let f = &t.finding;
            let mut actions = Vec::new();
            if let Some(id) = t.contradiction_id {
                actions.push(FindingAction {
                    title: format!("loci: dismiss this finding (#{id})"),
                    command: "loci.resolve".into(),
                    arguments: json!({ "contradiction": id }),
                });
            }
            let replace = (f.kind == "missing_path")
                .then(|| f.suggestion.clone())
                .flatten();
            Finding {
                span: t.span,
                severity: severities.false_claim,
                code: f.kind.to_string(),
                message: loci_engine::audit::describe(f),
                data: json!({
                    "finding_key": f.finding_key,
                    "contradiction_id": t.contradiction_id,
                    "replace": replace,
                }),
                actions,
            }
        })
        .collect()
}

/// Whether `key_path` is a markdown document (its claims are checked as a doc's).
pub fn is_markdown(key_path: &str) -> bool {
    key_path.ends_with(".md") || key_path.ends_with(".markdown")
}

/// Findings for one document: `key_path` is the path in symbol keys, `text` and `symbols`
/// the document as the editor holds it (the overlay), with byte spans into `text`; `open`
/// the other open code documents (path, text, symbols), which a markdown document's claims
/// are checked against. `ws` is `None` in single-file mode.
///
/// On code: each live claim about the file that is stale or false (the engine's
/// [`Workspace::judge_open_file`]), on the name of the definition it shows on, else on the
/// file's first line, with "confirm" and "why" actions. On markdown: its false claims.
pub fn findings_for_document(
    ws: Option<&Workspace>,
    key_path: &str,
    text: &str,
    symbols: &[Symbol],
    open: &[(&str, &str, &[Symbol])],
    severities: &Severities,
) -> Vec<Finding> {
    if is_markdown(key_path) {
        return markdown_findings(ws, key_path, text, open, severities);
    }
    let Some(ws) = ws else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in judge(ws, key_path, Some((text, symbols))) {
        let Some(verdict) = &c.verdict else { continue };
        // On the definition's name; else the file's first line (to its end).
        let span =
            c.at.as_deref()
                .and_then(|key| symbols.iter().find(|s| s.key == key))
                .map(|s| (s.name_span.start, s.name_span.end))
                .unwrap_or_else(|| (0, text.find('\n').unwrap_or(text.len()) as u32));
        out.push(Finding {
            span,
            severity: severities.of(verdict.truth),
            code: verdict.kind.clone(),
            message: verdict.message.clone(),
            data: json!({
                "key": c.at,
                "target": c.target,
                "subject": c.subject,
                "revision_id": c.revision_id,
                "version": c.version,
                "claim_id": c.claim_id,
                "suggestion": verdict.suggestion,
            }),
            actions: vec![
                FindingAction {
                    title: format!("loci: confirm memory `{}` (still true)", c.subject),
                    command: "loci.confirm".into(),
                    arguments: json!({ "subject": c.subject }),
                },
                FindingAction {
                    title: format!("loci: why `{}`", c.subject),
                    command: "loci.why".into(),
                    arguments: json!({ "target": c.subject }),
                },
            ],
        });
    }
    out
}

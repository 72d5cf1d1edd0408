//! Plug points for what loci's memory and audit say about code: findings (diagnostics and
//! their code actions), per-symbol memory counts (code lenses) and memory lines in hovers.
//!
//! Each function here is the one place the language server asks the engine about memory:
//! live claims about a file's symbols (`Workspace::file_memory`), judged stale against the
//! editor's overlay (as the user types) or the map. Contradictions (claims whose target is
//! missing) plug in here when the engine's audit exposes them per file. Everything a
//! follow-up request needs travels in the returned `data` (style.md rule 8), never in
//! server memory. No LSP types here: byte spans in, plain data out; `server.rs` converts.

use std::collections::BTreeMap;

use loci_core::Symbol;
use loci_engine::Workspace;
use serde::Serialize;
use serde_json::{Value, json};

/// How serious a finding is (issue 5: stale memory on code is Information, a
/// contradiction a Warning; a missing path in a doc is an Error).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A claim in a doc names a path that does not exist.
    Error,
    /// Memory or a doc contradicts the code.
    Warning,
    /// Memory is stale (the code under it changed since it was written).
    Information,
    /// A hint.
    Hint,
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
    /// Markdown lines for the hover, one per mention.
    pub hover_lines: Vec<String>,
    /// The stale claims, for diagnostics.
    pub stale_claims: Vec<StaleClaim>,
    /// Revisions counted.
    revisions: Vec<i64>,
    /// Stale revisions counted.
    stale_revisions: Vec<i64>,
}

/// A claim about a symbol that no longer matches the code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StaleClaim {
    /// The page's subject.
    pub subject: String,
    /// The revision.
    pub revision_id: i64,
    /// Its version.
    pub version: i64,
    /// The claim.
    pub claim_id: i64,
    /// Why it is stale, in words.
    pub reason: String,
}

/// The live fingerprints of one symbol of an open document (from the overlay), for
/// staleness as the user types: `(body, signature)`, 16 hex digits each.
pub type LiveFingerprints = BTreeMap<String, (String, String)>;

/// Memory about each symbol of one file that has any, by symbol key. `live` holds the
/// overlay's fingerprints: a claim is stale when the symbol's body or signature in the
/// editor differs from its snapshot; a symbol missing from `live` is judged against the
/// map (moved, deleted, changed on disk).
pub fn memory_for_document(
    ws: Option<&Workspace>,
    key_path: &str,
    live: &LiveFingerprints,
) -> BTreeMap<String, SymbolMemory> {
    let Some(ws) = ws else {
        return BTreeMap::new();
    };
    let mentions = match ws.file_memory(key_path) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("reading memory about {key_path}: {e}");
            return BTreeMap::new();
        }
    };
    let mut out: BTreeMap<String, SymbolMemory> = BTreeMap::new();
    for m in mentions {
        let stale = match live.get(&m.key) {
            Some((body, signature)) => {
                let signature_changed = m
                    .signature_snapshot
                    .as_deref()
                    .is_some_and(|s| s != signature);
                let body_changed = m.snapshot.as_deref().is_some_and(|s| s != body);
                if signature_changed {
                    Some(format!(
                        "memory `{}` v{} claim `{}` is stale: signature of {} changed since it was written",
                        m.subject, m.version, m.claim_text, m.key
                    ))
                } else if body_changed {
                    Some(format!(
                        "memory `{}` v{} claim `{}` is stale: body of {} changed since it was written",
                        m.subject, m.version, m.claim_text, m.key
                    ))
                } else {
                    None
                }
            }
            None => m.stale.clone(),
        };
        let entry = out.entry(m.key.clone()).or_default();
        if !entry.revisions.contains(&m.revision_id) {
            entry.revisions.push(m.revision_id);
            entry.memories += 1;
        }
        let date = m.created_at.get(..10).unwrap_or(&m.created_at);
        let mut line = format!(
            "memory `{}` v{} by {} ({date})",
            m.subject, m.version, m.author
        );
        match &stale {
            Some(reason) => {
                if !entry.stale_revisions.contains(&m.revision_id) {
                    entry.stale_revisions.push(m.revision_id);
                    entry.stale += 1;
                }
                line.push_str(&format!(" — ⚠ {reason}"));
                entry.stale_claims.push(StaleClaim {
                    subject: m.subject.clone(),
                    revision_id: m.revision_id,
                    version: m.version,
                    claim_id: m.claim_id,
                    reason: reason.clone(),
                });
            }
            None => line.push_str(" — current"),
        }
        if !entry.hover_lines.contains(&line) {
            entry.hover_lines.push(line);
        }
    }
    out
}

/// Claims in a markdown buffer that the code contradicts, at their exact spans, as the
/// user types (the engine's `check_markdown`): missing paths (with "replace with" when
/// the new path is known), missing symbols, version mismatches.
fn markdown_findings(ws: Option<&Workspace>, key_path: &str, text: &str) -> Vec<Finding> {
    let Some(ws) = ws else {
        return Vec::new();
    };
    let found = match ws.check_markdown(key_path, text) {
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
                severity: if f.severity == "high" {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                code: f.kind.to_string(),
                message: loci_engine::lint::describe(f),
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

/// Findings for one document: `key_path` is the path in symbol keys, `symbols` the
/// document's current symbols (the overlay when it is open), with byte spans into the
/// text the caller converts with. `ws` is `None` in single-file mode.
///
/// Today: stale memory about a symbol (a warning on its name, with "confirm" and "why"
/// actions). Plug point for the engine's audit (contradicted claims, false claims in
/// markdown) when it lands.
pub fn findings_for_document(
    ws: Option<&Workspace>,
    key_path: &str,
    text: &str,
    symbols: &[Symbol],
) -> Vec<Finding> {
    if key_path.ends_with(".md") || key_path.ends_with(".markdown") {
        return markdown_findings(ws, key_path, text);
    }
    let live: LiveFingerprints = symbols
        .iter()
        .map(|s| {
            (
                s.key.clone(),
                (s.body_fingerprint.clone(), s.signature_fingerprint.clone()),
            )
        })
        .collect();
    let memory = memory_for_document(ws, key_path, &live);
    let mut out = Vec::new();
    for s in symbols {
        let Some(m) = memory.get(&s.key) else {
            continue;
        };
        for claim in &m.stale_claims {
            out.push(Finding {
                span: (s.name_span.start, s.name_span.end),
                severity: Severity::Information,
                code: "stale_memory".into(),
                message: claim.reason.clone(),
                data: json!({
                    "key": s.key,
                    "subject": claim.subject,
                    "revision_id": claim.revision_id,
                    "version": claim.version,
                    "claim_id": claim.claim_id,
                }),
                actions: vec![
                    FindingAction {
                        title: format!("loci: confirm memory `{}` (still true)", claim.subject),
                        command: "loci.confirm".into(),
                        arguments: json!({ "subject": claim.subject }),
                    },
                    FindingAction {
                        title: format!("loci: why `{}`", claim.subject),
                        command: "loci.why".into(),
                        arguments: json!({ "target": claim.subject }),
                    },
                ],
            });
        }
    }
    out
}

//! Memory judged against an editor's unsaved text (the language server's overlay): the
//! audit's rules ([`super::audit`] for staleness, [`super::lint`] for false claims,
//! [`super::renamed`] for a definition found again under another name) applied with the
//! open files' definitions taking precedence over the map's for those files. The language
//! server converts what these return; it judges nothing itself.
//!
//! Rules, for a code file `path` open with definitions `symbols`:
//! - a live symbol claim (a page's current revision) that resolved to a definition of
//!   `path` and whose key the buffer still defines is **stale** when the buffer's body or
//!   signature fingerprint differs from the claim's snapshot (the audit's `BodyChanged`,
//!   `SignatureChanged`), else current;
//! - one whose key the buffer no longer defines is **false** (`missing_symbol`): renamed
//!   when the buffer holds a definition with the snapshot's body (or kind and signature)
//!   under another name ([`super::renamed`]; shown on that definition), else deleted (shown
//!   on the file's first line) — unless exactly one definition of its qualified name
//!   exists in another file of the map: then it moved, and is stale (`Moved`);
//! - any other claim of a page about `path` that lint finds false (a symbol that never
//!   existed, a missing path, a version the manifests contradict) is **false** with lint's
//!   kind and truth ([`Workspace::check_revision`]), unless the buffer now defines the
//!   symbol; shown on the definition its qualifier names (`JSONEncoder` for
//!   `JSONEncoder.encode_fast()`) when the buffer has it, else on the first line.
//!
//! For a markdown text, [`Workspace::check_markdown_live`] is lint's `check_markdown` with
//! the open code files' definitions in place of the map's for those files.

use std::collections::{BTreeSet, HashSet};

use loci_core::Symbol;
use loci_core::claims::ClaimKind;
use loci_store::audit::NewFinding;
use loci_store::memory as mem;
use serde::Serialize;

use super::audit::{StaleReason, Staleness};
use super::lint::TextFinding;
use super::renamed::{Snapshot, renamed_in_text};
use crate::memory::claims::{SymbolResolution, resolve_symbol};
use crate::{Result, Workspace};

/// Whether a claim is out of date or no longer true.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Truth {
    /// What it names exists but changed since it was written (or moved to another file).
    Stale,
    /// What it names is not there: deleted, renamed, never existed, or contradicted.
    False,
}

/// Why a live claim is not current.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Stale or false.
    pub truth: Truth,
    /// A stable code: `stale_memory` for stale claims, lint's kind for false ones
    /// (`missing_symbol`, `missing_path`, `version_mismatch`).
    pub kind: String,
    /// The whole message (`` memory `a.py` v1 claim `f()` is stale: body of a.py#f@function
    /// changed since it was written ``).
    pub message: String,
    /// What the claim should name now, when known (the renamed definition's name).
    pub suggestion: Option<String>,
}

/// One live claim about an open code file, judged against its buffer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LiveClaim {
    /// The page's subject.
    pub subject: String,
    /// The revision (the page's current one).
    pub revision_id: i64,
    /// Its version.
    pub version: i64,
    /// Who wrote it.
    pub author: String,
    /// When (RFC 3339).
    pub created_at: String,
    /// The claim.
    pub claim_id: i64,
    /// The claim as written (`` `login()` ``).
    pub claim_text: String,
    /// What it named: the symbol key it resolved to in this file, else its target.
    pub target: String,
    /// Key of the buffer's definition the claim belongs on (the claimed one, or the one
    /// it was renamed to, or its qualifier's); `None`: the file's first line.
    pub at: Option<String>,
    /// `None` when the claim is current.
    pub verdict: Option<Verdict>,
}

impl Workspace {
    /// Every live claim about the code file `path` (repo-relative) judged against its
    /// unsaved `text` and that text's `symbols` (spans are bytes into `text`), by the rules
    /// of the module docs; in the order of [`Workspace::file_memory`], then the claims of
    /// pages about `path` that lint finds false, by claim id.
    ///
    /// Errors: reading the store.
    pub fn judge_open_file(
        &self,
        path: &str,
        text: &str,
        symbols: &[Symbol],
    ) -> Result<Vec<LiveClaim>> {
        let options = self.config.scan.analyze_options();
        let mut out = Vec::new();
        let mut judged: HashSet<i64> = HashSet::new();
        for m in self.file_memory(path)? {
            judged.insert(m.claim_id);
            out.push(self.judge_tracked(path, text, symbols, &options, m)?);
        }
        self.false_claims_in_buffer(path, symbols, &judged, &mut out)?;
        Ok(out)
    }

    /// A tracked claim about a definition of the file, judged against the buffer: stale
    /// when the definition's signature or body changed, false when it is gone (renamed
    /// to a definition with its body or signature, or gone from the buffer).
    fn judge_tracked(
        &self,
        path: &str,
        text: &str,
        symbols: &[Symbol],
        options: &loci_core::AnalyzeOptions,
        m: crate::map::editor::SymbolMention,
    ) -> Result<LiveClaim> {
        let what = format!(
            "memory `{}` v{} claim `{}`",
            m.subject, m.version, m.claim_text
        );
        let (at, verdict) = match symbols.iter().find(|s| s.key == m.key) {
            Some(s) => {
                let changed = if m
                    .signature_snapshot
                    .as_deref()
                    .is_some_and(|f| f != s.signature_fingerprint)
                {
                    Some("signature")
                } else if m
                    .snapshot
                    .as_deref()
                    .is_some_and(|f| f != s.body_fingerprint)
                {
                    Some("body")
                } else {
                    None
                };
                let verdict = changed.map(|part| Verdict {
                    truth: Truth::Stale,
                    kind: "stale_memory".into(),
                    message: format!(
                        "{what} is stale: {part} of {} changed since it was written",
                        m.key
                    ),
                    suggestion: None,
                });
                (Some(m.key.clone()), verdict)
            }
            None => {
                let renamed = m.snapshot.as_deref().and_then(|body| {
                    renamed_in_text(
                        path,
                        text,
                        symbols,
                        options,
                        &Snapshot {
                            key: &m.key,
                            body,
                            signature: m.signature_snapshot.as_deref(),
                        },
                    )
                });
                match renamed {
                    Some(r) => (
                        Some(r.key.clone()),
                        Some(Verdict {
                            truth: Truth::False,
                            kind: "missing_symbol".into(),
                            message: format!(
                                "{what} is false: {} is not in the buffer; `{}` here has {} \
                                     (renamed to `{}`?)",
                                m.key,
                                r.qualified_name,
                                r.evidence.words(),
                                r.name
                            ),
                            suggestion: Some(r.name),
                        }),
                    ),
                    None => (None, Some(self.gone_from_buffer(path, &m, &what)?)),
                }
            }
        };
        Ok(LiveClaim {
            subject: m.subject,
            revision_id: m.revision_id,
            version: m.version,
            author: m.author,
            created_at: m.created_at,
            claim_id: m.claim_id,
            claim_text: m.claim_text,
            target: m.key,
            at,
            verdict,
        })
    }

    /// The other claims of the current revision of the page about this file (unless it is
    /// pinned) that lint finds false, except those `judged` already and symbol claims the
    /// buffer defines, added to `out`.
    fn false_claims_in_buffer(
        &self,
        path: &str,
        symbols: &[Symbol],
        judged: &HashSet<i64>,
        out: &mut Vec<LiveClaim>,
    ) -> Result<()> {
        let conn = self.store.conn();
        let Some(page) = mem::page_by_subject(conn, path)? else {
            return Ok(());
        };
        let Some(revision_id) = page.current_revision_id.filter(|_| !page.pinned) else {
            return Ok(());
        };
        let Some(rev) = mem::revision_by_id(conn, revision_id)? else {
            return Ok(());
        };
        let claims = mem::claims_of(conn, revision_id)?;
        let mut findings: Vec<(i64, crate::memory::ClaimFinding)> =
            self.check_revision(revision_id)?.into_iter().collect();
        findings.sort_by_key(|(id, _)| *id);
        for (claim_id, f) in findings {
            if judged.contains(&claim_id) {
                continue;
            }
            let Some(claim) = claims.iter().find(|c| c.claim_id == claim_id) else {
                continue;
            };
            if claim.kind == ClaimKind::Symbol.as_str() && defines(symbols, &claim.target) {
                continue;
            }
            let qualifier = claim.target.rsplit_once('.').map(|(q, _)| q);
            let at = qualifier.and_then(|q| {
                symbols
                    .iter()
                    .find(|s| ends_at_segment(&s.qualified_name, q))
                    .map(|s| s.key.clone())
            });
            let mut message = format!(
                "memory `{}` v{} claim `{}` is false: {}",
                page.subject,
                rev.version,
                claim.text,
                f.truth.as_deref().unwrap_or(&f.kind)
            );
            if let Some(s) = &f.suggestion {
                message.push_str(&format!(" (did you mean `{s}`?)"));
            }
            out.push(LiveClaim {
                subject: page.subject.clone(),
                revision_id,
                version: rev.version,
                author: rev.author.clone(),
                created_at: rev.created_at.clone(),
                claim_id,
                claim_text: claim.text.clone(),
                target: claim.target.clone(),
                at,
                verdict: Some(Verdict {
                    truth: Truth::False,
                    kind: f.kind,
                    message,
                    suggestion: f.suggestion,
                }),
            });
        }
        Ok(())
    }

    /// The verdict on a claim whose definition the buffer of `path` no longer holds and
    /// holds under no other name: moved (stale) when exactly one definition of its
    /// qualified name is in another file of the map, else deleted (false).
    fn gone_from_buffer(
        &self,
        path: &str,
        m: &crate::map::editor::SymbolMention,
        what: &str,
    ) -> Result<Verdict> {
        let conn = self.store.conn();
        let qualified = m
            .key
            .split_once('#')
            .map(|(_, q)| q.split('@').next().unwrap_or(q))
            .unwrap_or(&m.key);
        let elsewhere: Vec<_> = loci_store::map::find_symbols(conn, qualified, 3)?
            .into_iter()
            .filter(|h| h.path != path && h.qualified_name == qualified)
            .collect();
        if let [to] = elsewhere.as_slice() {
            let mark = Staleness {
                subject: m.subject.clone(),
                revision_id: m.revision_id,
                version: m.version,
                claim_id: Some(m.claim_id),
                claim_text: Some(m.claim_text.clone()),
                reason: StaleReason::Moved {
                    from: m.key.clone(),
                    to: to.key.clone(),
                },
            };
            return Ok(Verdict {
                truth: Truth::Stale,
                kind: "stale_memory".into(),
                message: mark.describe(),
                suggestion: None,
            });
        }
        Ok(Verdict {
            truth: Truth::False,
            kind: "missing_symbol".into(),
            message: format!("{what} is false: {} was deleted", m.key),
            suggestion: None,
        })
    }

    /// [`Workspace::check_markdown`] of a markdown `text` at `path`, with the definitions
    /// of open code files (`open`: repo-relative path, unsaved text, its symbols) in place
    /// of the map's for those files: a symbol claim the map resolves to a definition of an
    /// open file whose buffer no longer defines it is `missing_symbol` (with the name it
    /// was renamed to, when the buffer shows one), and one lint finds missing that a
    /// buffer now defines is no finding.
    ///
    /// Errors: reading the store, a bad `[lint] docs` glob.
    pub fn check_markdown_live(
        &self,
        path: &str,
        text: &str,
        open: &[(&str, &str, &[Symbol])],
    ) -> Result<Vec<TextFinding>> {
        let mut out = self.check_markdown(path, text)?;
        if open.is_empty() {
            return Ok(out);
        }
        // Lint's missing symbols that a buffer now defines.
        out.retain(|t| {
            t.finding.kind != "missing_symbol"
                || !open
                    .iter()
                    .any(|(_, _, symbols)| defines(symbols, &t.finding.target))
        });
        let reported: BTreeSet<(u32, u32)> = out.iter().map(|t| t.span).collect();
        let conn = self.store.conn();
        let options = self.config.scan.analyze_options();
        for c in super::lint::doc_claims(text)
            .iter()
            .filter(|c| is_symbol(c))
        {
            if reported.contains(&(c.start, c.end)) {
                continue;
            }
            let SymbolResolution::Unique(hit) = resolve_symbol(conn, &c.target, None)? else {
                continue;
            };
            let Some((open_path, open_text, symbols)) =
                open.iter().find(|(p, _, _)| *p == hit.path)
            else {
                continue;
            };
            if symbols.iter().any(|s| s.key == hit.key) || defines(symbols, &c.target) {
                continue;
            }
            let renamed = renamed_in_text(
                open_path,
                open_text,
                symbols,
                &options,
                &Snapshot {
                    key: &hit.key,
                    body: &hit.body_fingerprint,
                    signature: Some(&hit.signature_fingerprint),
                },
            );
            let (truth, suggestion) = match &renamed {
                Some(r) => (
                    format!(
                        "`{}` is not in the unsaved {}; `{}` there has {}",
                        c.target,
                        hit.path,
                        r.qualified_name,
                        r.evidence.words()
                    ),
                    // In the claim's form, as lint suggests it: qualified when it is.
                    Some(if c.target.contains('.') {
                        r.qualified_name.clone()
                    } else {
                        r.name.clone()
                    }),
                ),
                None => (
                    format!("`{}` is deleted in the unsaved {}", c.target, hit.path),
                    None,
                ),
            };
            out.push(TextFinding {
                span: (c.start, c.end),
                contradiction_id: None,
                finding: NewFinding {
                    finding_key: format!("doc:{path}:missing_symbol:{}", c.target),
                    origin: "doc",
                    subject: path.to_string(),
                    revision_id: None,
                    kind: "missing_symbol",
                    severity: "medium",
                    claim: c.text.clone(),
                    target: c.target.clone(),
                    truth: Some(truth),
                    suggestion,
                    line: c.line,
                    column: c.column,
                    end_column: c.column + (c.end - c.start),
                },
            });
        }
        out.sort_by_key(|t| t.span);
        Ok(out)
    }
}

fn is_symbol(c: &loci_core::claims::Claim) -> bool {
    c.kind == ClaimKind::Symbol
}

/// Whether `qualified` is `target` or ends with it at a segment boundary.
fn ends_at_segment(qualified: &str, target: &str) -> bool {
    qualified == target
        || qualified
            .strip_suffix(target)
            .is_some_and(|rest| rest.ends_with('.'))
}

/// Whether one of `symbols` is what the normalized claim `target` (`A.b`) names.
fn defines(symbols: &[Symbol], target: &str) -> bool {
    symbols
        .iter()
        .any(|s| ends_at_segment(&s.qualified_name, target))
}

//! One text checked without recording: `check_markdown` (an editor's unsaved doc) and
//! `explain_claim` (what the map says about one claim).

use loci_core::claims::{ClaimKind, extract_claims};
use loci_store::audit::{self as au, NewFinding};
use serde::Serialize;

use crate::map::manifests;
use crate::memory::claims::{SymbolResolution, resolve_path, resolve_symbol};
use crate::{Result, Workspace};

use super::rules::Check;
use super::{Ctx, build_globs};

/// A finding in a markdown buffer, for live diagnostics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TextFinding {
    /// Byte range `[start, end)` of the claim in the text.
    pub span: (u32, u32),
    /// The finding (kind, severity, truth, suggestion, identity).
    pub finding: NewFinding,
    /// The stored contradiction with the same identity, if lint recorded one (for
    /// "dismiss").
    pub contradiction_id: Option<i64>,
}

impl Workspace {
    /// Checks the claims of a markdown text (an editor buffer, saved or not) as lint would
    /// check the doc at `path`, without writing anything. Findings a human dismissed are
    /// left out; docs outside the `[lint] docs` globs give nothing.
    pub fn check_markdown(&self, path: &str, text: &str) -> Result<Vec<TextFinding>> {
        let globs = build_globs(&self.config.lint.docs)?;
        if !globs.is_match(path) || doc_ignored(text) {
            return Ok(Vec::new());
        }
        let conn = self.store.conn();
        let mut ctx = Ctx::new(self);
        let doc_dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        let stored = au::contradictions(conn, None)?;
        let mut out = Vec::new();
        for c in doc_claims(text) {
            let was_resolved =
                au::doc_claim_resolved_before(conn, path, c.kind.as_str(), &c.target)?;
            let check = Check::of_doc(path, doc_dir, &c, was_resolved);
            let (Some(finding), _) = ctx.check(&check)? else {
                continue;
            };
            let existing = stored.iter().find(|x| x.finding_key == finding.finding_key);
            if existing.is_some_and(|x| x.status == "dismissed") {
                continue;
            }
            out.push(TextFinding {
                span: (c.start, c.end),
                contradiction_id: existing.map(|x| x.contradiction_id),
                finding,
            });
        }
        Ok(out)
    }
}

impl Workspace {
    /// The truth about one claim, as markdown for a hover: where a path or symbol is
    /// defined (with its signature and doc), what the manifests declare for a version, or
    /// "not found" with the nearest match.
    pub fn explain_claim(&self, claim: &loci_core::claims::Claim) -> Result<String> {
        let conn = self.store.conn();
        Ok(match claim.kind {
            ClaimKind::Path => match resolve_path(conn, &claim.target)? {
                Some((path, Some(_))) => {
                    let (lines, language) = loci_store::map::file_lines_and_language(conn, &path)?;
                    format!(
                        "`{path}` — {} file, {}",
                        language.unwrap_or_else(|| "a".into()),
                        crate::words::count(lines, "line")
                    )
                }
                Some((path, None)) => {
                    let n = loci_store::map::count_files_under(conn, &path)?;
                    format!(
                        "`{path}/` — folder, {} in the map",
                        crate::words::count(n, "file")
                    )
                }
                None if self.root.join(&claim.target).exists() => format!(
                    "`{}` exists but is not in the map (ignored or skipped)",
                    claim.target
                ),
                None => {
                    let mut ctx = Ctx::new(self);
                    match ctx.path_suggestion(&claim.target)? {
                        Some(s) => {
                            format!("`{}` **not found** — did you mean `{s}`?", claim.target)
                        }
                        None => format!("`{}` **not found** in the workspace", claim.target),
                    }
                }
            },
            ClaimKind::Symbol => match resolve_symbol(conn, &claim.target, None)? {
                SymbolResolution::Unique(s) => {
                    let doc = s
                        .doc
                        .as_deref()
                        .map(|d| format!("\n\n{}", crate::memory::memory::first_chars(d, 300)))
                        .unwrap_or_default();
                    format!(
                        "{} `{}` at `{}:{}`\n```\n{}\n```{doc}",
                        s.kind,
                        s.qualified_name,
                        s.path,
                        s.line + 1,
                        s.signature
                    )
                }
                SymbolResolution::Ambiguous(_) => {
                    let last = claim.target.rsplit('.').next().unwrap_or(&claim.target);
                    let hits = loci_store::map::find_symbols(conn, last, 6)?;
                    let list: Vec<String> = hits
                        .iter()
                        .take(5)
                        .map(|h| {
                            format!(
                                "- {} `{}` at `{}:{}`",
                                h.kind,
                                h.qualified_name,
                                h.path,
                                h.line + 1
                            )
                        })
                        .collect();
                    format!("`{}` is ambiguous:\n{}", claim.target, list.join("\n"))
                }
                SymbolResolution::Missing => {
                    let mut ctx = Ctx::new(self);
                    let last = claim.target.rsplit('.').next().unwrap_or(&claim.target);
                    match ctx.closest_name(last)? {
                        Some((n, _)) => format!(
                            "`{}` **not found** in the map — nearest: `{n}`",
                            claim.target
                        ),
                        None => format!("`{}` **not found** in the map", claim.target),
                    }
                }
            },
            ClaimKind::Version => {
                let paths = loci_store::map::all_paths(conn)?;
                let name = manifests::normalize_name(&claim.target);
                let declared: Vec<String> = manifests::load(&self.root, &paths)
                    .into_iter()
                    .filter(|d| manifests::normalize_name(&d.name) == name)
                    .map(|d| format!("- `{}` {} in `{}`", d.name, d.spec, d.manifest))
                    .collect();
                if declared.is_empty() {
                    format!("`{}` is not declared in any manifest", claim.target)
                } else {
                    format!(
                        "`{}` is declared as:\n{}",
                        claim.target,
                        declared.join("\n")
                    )
                }
            }
        })
    }
}

/// What ends a doc line whose claims are deliberate examples, not claims (docs/audit.md).
const IGNORE_LINE: &str = "<!-- loci: ignore -->";

/// What a line of a doc that is a deliberate example as a whole is.
const IGNORE_FILE: &str = "<!-- loci: ignore-file -->";

/// Whether the doc `text` is skipped whole: a line of it is [`IGNORE_FILE`].
pub(crate) fn doc_ignored(text: &str) -> bool {
    text.lines().any(|l| l.trim() == IGNORE_FILE)
}

/// The claims of the doc `text` that are checked: those on a line without
/// [`IGNORE_LINE`].
pub(crate) fn doc_claims(text: &str) -> Vec<loci_core::claims::Claim> {
    let lines: Vec<&str> = text.split('\n').collect();
    extract_claims(text)
        .into_iter()
        .filter(|c| {
            !lines
                .get(c.line as usize)
                .is_some_and(|l| l.contains(IGNORE_LINE))
        })
        .collect()
}

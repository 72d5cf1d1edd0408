//! Findings recorded: the scope a lint run speaks for, how its findings open, recur,
//! resolve or stay suppressed, and the checks of one revision as it is written.

use std::collections::{BTreeSet, HashMap, HashSet};

use loci_store::audit::{self as au, NewFinding, Recorded};
use loci_store::memory as mem;

use crate::{EngineError, Result, Workspace};

use super::{Ctx, describe, page_check};

/// The contradictions a recording of findings may resolve ([`record_findings`]).
pub(crate) enum Scope<'a> {
    /// Every contradiction: lint checked everything.
    Everything,
    /// Those of the documents (with `docs`) and of the memory pages `subjects`: the pages
    /// a lint of what changed checked, or the page of a memory write.
    Pages {
        docs: bool,
        subjects: HashSet<&'a str>,
    },
}

impl Scope<'_> {
    fn holds(&self, c: &au::Contradiction) -> bool {
        match self {
            Scope::Everything => true,
            Scope::Pages { docs, subjects } => match c.origin.as_str() {
                "doc" => *docs,
                _ => subjects.contains(c.subject.as_str()),
            },
        }
    }
}

/// Records lint's findings at scan revision `scan_id`, as `loci lint` does: each failing
/// check opens, refreshes, reopens (a regression) or is suppressed by a human dismissal
/// (identical findings are one), and every open contradiction in `scope` whose check no
/// longer fails is auto-resolved, each change with its knowledge-change row. A memory
/// write records what its page's claims fail at once, so `context` warns about it before
/// anyone runs `loci lint`. Returns (opened, recurred, resolved, suppressed).
pub(crate) fn record_findings(
    tx: &loci_store::rusqlite::Transaction<'_>,
    findings: &[NewFinding],
    scan_id: i64,
    scope: &Scope<'_>,
) -> loci_store::Result<(u64, u64, u64, u64)> {
    let mut c = (0u64, 0u64, 0u64, 0u64);
    let mut failing = BTreeSet::new();
    for f in findings {
        if !failing.insert(f.finding_key.clone()) {
            continue; // identical findings are one
        }
        let (_, recorded) = au::record_finding(tx, f, scan_id)?;
        let detail = describe(f);
        match recorded {
            Recorded::Opened => {
                c.0 += 1;
                au::insert_knowledge_change(tx, scan_id, "became_false", &f.subject, &detail)?;
            }
            Recorded::Recurred => {
                c.1 += 1;
                au::insert_knowledge_change(tx, scan_id, "recurred", &f.subject, &detail)?;
            }
            Recorded::Suppressed => c.3 += 1,
            Recorded::StillOpen => {}
        }
    }
    for open in au::contradictions(tx, Some("open"))? {
        if !scope.holds(&open) {
            continue;
        }
        if !failing.contains(&open.finding_key) {
            au::close(tx, open.contradiction_id, false, None, Some(scan_id))?;
            c.2 += 1;
            au::insert_knowledge_change(
                tx,
                scan_id,
                "no_longer_false",
                &open.subject,
                &format!("{} `{}` holds again", open.kind, open.claim),
            )?;
        }
    }
    Ok(c)
}

impl Workspace {
    /// What `loci lint` would report about the claims of the revision `revision_id`, by
    /// claim id, without recording anything: findings a human dismissed are left out.
    ///
    /// Errors: reading the store, or an unknown revision ([`EngineError::NotFound`]).
    pub fn check_revision(
        &self,
        revision_id: i64,
    ) -> Result<HashMap<i64, crate::memory::ClaimFinding>> {
        let (_, findings) = self.revision_findings(revision_id)?;
        Ok(self.claim_findings(findings)?)
    }

    /// What a memory write's claims fail, recorded as `loci lint` records it
    /// ([`record_findings`] for the page of `revision_id`, when that revision is still the
    /// page's current one) and returned by claim id as [`Workspace::check_revision`] gives
    /// it. A claim the write already knows is false is never served by `context` first
    /// and without a warning until someone runs `loci lint`: the open contradiction (its
    /// −40 and banner) exists as soon as the write does, and a revision that corrects the
    /// page resolves the contradictions of the one it replaces.
    pub(crate) fn record_revision_findings(
        &mut self,
        revision_id: i64,
    ) -> Result<HashMap<i64, crate::memory::ClaimFinding>> {
        let (subject, findings) = self.revision_findings(revision_id)?;
        let conn = self.store.conn();
        // Before the first scan nothing is checked (lint refuses to run), so nothing is
        // recorded or resolved either.
        if self.map_is_built()? {
            let current = mem::page_by_subject(conn, &subject)?
                .is_some_and(|p| p.current_revision_id == Some(revision_id));
            let open_here = au::contradictions(conn, Some("open"))?
                .iter()
                .any(|x| x.origin == "page" && x.subject == subject);
            if current && (!findings.is_empty() || open_here) {
                let scan_id = loci_store::map::scan_revision(conn)?;
                let only: Vec<NewFinding> = findings.iter().map(|(_, f)| f.clone()).collect();
                self.store.write(|tx| {
                    // Still current inside the transaction: another writer may have
                    // published a newer revision since.
                    let still = mem::page_by_subject(tx, &subject)?
                        .is_some_and(|p| p.current_revision_id == Some(revision_id));
                    if still {
                        let scope = Scope::Pages {
                            docs: false,
                            subjects: HashSet::from([subject.as_str()]),
                        };
                        record_findings(tx, &only, scan_id, &scope)?;
                    }
                    Ok(())
                })?;
            }
        }
        Ok(self.claim_findings(findings)?)
    }

    /// Lint's findings about the claims of the revision `revision_id`, by claim id, with
    /// the revision's subject; dismissed ones included (recording suppresses them).
    fn revision_findings(&self, revision_id: i64) -> Result<(String, Vec<(i64, NewFinding)>)> {
        let conn = self.store.conn();
        let rev = mem::revision_by_id(conn, revision_id)?
            .ok_or_else(|| EngineError::NotFound(format!("no revision {revision_id}")))?;
        let claims = mem::claims_of(conn, revision_id)?;
        let mut out = Vec::new();
        // Before the first scan every path would be "missing" (lint refuses to run then).
        if claims.is_empty() || !self.map_is_built()? {
            return Ok((rev.subject, out));
        }
        // The manifests are read only if a version claim needs them (reading them and
        // every path costs 3 ms of a 14 ms write on the stdlib).
        let mut ctx = Ctx::new(self);
        for claim in &claims {
            if let (Some(f), _) = ctx.check(&page_check(&rev.subject, claim, &claims))? {
                out.push((claim.claim_id, f));
            }
        }
        Ok((rev.subject, out))
    }

    /// `findings` as a write's claims show them, by claim id, without those a human
    /// dismissed.
    fn claim_findings(
        &self,
        findings: Vec<(i64, NewFinding)>,
    ) -> loci_store::Result<HashMap<i64, crate::memory::ClaimFinding>> {
        if findings.is_empty() {
            return Ok(HashMap::new());
        }
        let stored = au::contradictions(self.store.conn(), Some("dismissed"))?;
        Ok(findings
            .into_iter()
            .filter(|(_, f)| !stored.iter().any(|x| x.finding_key == f.finding_key))
            .map(|(claim_id, f)| {
                (
                    claim_id,
                    crate::memory::ClaimFinding {
                        kind: f.kind.to_string(),
                        severity: f.severity.to_string(),
                        truth: f.truth,
                        suggestion: f.suggestion,
                    },
                )
            })
            .collect())
    }
}

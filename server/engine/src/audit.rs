//! The audit: memory checked against the code. Staleness (a claim's target still exists
//! but its fingerprint differs from the snapshot taken when the claim was written; a file
//! page whose file's semantic fingerprint changed) is computed here, deterministically and
//! at read time, so it is never out of date.

use loci_store::map;
use loci_store::memory as mem;
use loci_store::rusqlite::Connection;
use serde::Serialize;

use crate::memory::file_fingerprint;

/// Why a piece of memory is stale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum StaleReason {
    /// The symbol's body changed (comments and whitespace do not count).
    BodyChanged {
        /// The symbol key.
        target: String,
    },
    /// The symbol's signature changed.
    SignatureChanged {
        /// The symbol key.
        target: String,
    },
    /// The symbol is gone from its file but a definition with its name exists elsewhere.
    Moved {
        /// The old key.
        from: String,
        /// The new key.
        to: String,
    },
    /// The target no longer exists.
    Deleted {
        /// The path or symbol key.
        target: String,
    },
    /// The file changed (its semantic fingerprint differs).
    FileChanged {
        /// The path.
        path: String,
    },
}

/// One stale mark.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Staleness {
    /// The page's subject.
    pub subject: String,
    /// The revision concerned.
    pub revision_id: i64,
    /// Its version.
    pub version: i64,
    /// The claim, when the mark is about a claim (not the page's own file).
    pub claim_id: Option<i64>,
    /// The claim's text, if any.
    pub claim_text: Option<String>,
    /// Why.
    pub reason: StaleReason,
}

impl Staleness {
    /// A one-line description (`` `login()` is stale: body changed since 2026-11-01 ``).
    pub fn describe(&self) -> String {
        let what = match &self.claim_text {
            Some(t) => format!("memory `{}` v{} claim `{t}`", self.subject, self.version),
            None => format!("memory `{}` v{}", self.subject, self.version),
        };
        let why = match &self.reason {
            StaleReason::BodyChanged { target } => format!("body of {target} changed"),
            StaleReason::SignatureChanged { target } => format!("signature of {target} changed"),
            StaleReason::Moved { from, to } => format!("{from} moved to {to}"),
            StaleReason::Deleted { target } => format!("{target} was deleted"),
            StaleReason::FileChanged { path } => format!("{path} changed"),
        };
        format!("{what} is stale: {why} since it was written")
    }
}

/// A symbol's current fingerprints, for comparing with a claim's snapshots.
struct Fingerprints {
    body: String,
    signature: String,
}

/// The fingerprints of the symbol with exactly this key (as [`map::symbol_by_key`] finds
/// it, without reading the rest of its row).
fn symbol_fingerprints(conn: &Connection, key: &str) -> loci_store::Result<Option<Fingerprints>> {
    use loci_store::Context;
    use loci_store::rusqlite::OptionalExtension;
    conn.prepare_cached(
        "SELECT s.body_fingerprint, s.signature_fingerprint FROM symbols s
         JOIN files f USING (file_id) WHERE s.key = ?1",
    )
    .and_then(|mut st| {
        st.query_row([key], |r| {
            Ok(Fingerprints {
                body: r.get(0)?,
                signature: r.get(1)?,
            })
        })
        .optional()
    })
    .ctx(|| format!("reading symbol {key}"))
}

/// Stale marks of one revision (none for pinned pages).
pub fn revision_staleness(
    conn: &Connection,
    revision_id: i64,
) -> loci_store::Result<Vec<Staleness>> {
    let Some(rev) = mem::revision_by_id(conn, revision_id)? else {
        return Ok(Vec::new());
    };
    let Some(page) = mem::page_by_id(conn, rev.page_id)? else {
        return Ok(Vec::new());
    };
    revision_staleness_of(conn, &rev, &page)
}

/// [`revision_staleness`] of a revision and its page already read (`page` must be
/// `rev`'s page).
pub fn revision_staleness_of(
    conn: &Connection,
    rev: &mem::Revision,
    page: &mem::Page,
) -> loci_store::Result<Vec<Staleness>> {
    let revision_id = rev.revision_id;
    if page.pinned {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mark = |claim: Option<&mem::ClaimRow>, reason| Staleness {
        subject: page.subject.clone(),
        revision_id,
        version: rev.version,
        claim_id: claim.map(|c| c.claim_id),
        claim_text: claim.map(|c| c.text.clone()),
        reason,
    };
    if page.kind == "file"
        && let Some((Some(snapshot), _)) = mem::page_snapshot(conn, revision_id)?
    {
        match file_fingerprint(conn, &page.subject)? {
            Some(now) if now != snapshot => out.push(mark(
                None,
                StaleReason::FileChanged {
                    path: page.subject.clone(),
                },
            )),
            None => out.push(mark(
                None,
                StaleReason::Deleted {
                    target: page.subject.clone(),
                },
            )),
            _ => {}
        }
    }
    for claim in mem::claims_of(conn, revision_id)? {
        let (Some(resolved), Some(snapshot)) = (&claim.resolved, &claim.snapshot) else {
            continue;
        };
        match claim.kind.as_str() {
            "path" => match file_fingerprint(conn, resolved)? {
                Some(now) if &now != snapshot => out.push(mark(
                    Some(&claim),
                    StaleReason::FileChanged {
                        path: resolved.clone(),
                    },
                )),
                None => out.push(mark(
                    Some(&claim),
                    StaleReason::Deleted {
                        target: resolved.clone(),
                    },
                )),
                _ => {}
            },
            "symbol" => match symbol_fingerprints(conn, resolved)? {
                Some(now) => {
                    if claim
                        .signature_snapshot
                        .as_deref()
                        .is_some_and(|s| s != now.signature)
                    {
                        out.push(mark(
                            Some(&claim),
                            StaleReason::SignatureChanged {
                                target: resolved.clone(),
                            },
                        ));
                    } else if &now.body != snapshot {
                        out.push(mark(
                            Some(&claim),
                            StaleReason::BodyChanged {
                                target: resolved.clone(),
                            },
                        ));
                    }
                }
                None => {
                    let name = resolved
                        .split_once('#')
                        .map(|(_, q)| q.split('@').next().unwrap_or(q))
                        .unwrap_or(resolved);
                    let moved = map::find_symbols(conn, name, 2)?;
                    if moved.len() == 1 {
                        out.push(mark(
                            Some(&claim),
                            StaleReason::Moved {
                                from: resolved.clone(),
                                to: moved[0].key.clone(),
                            },
                        ));
                    } else {
                        out.push(mark(
                            Some(&claim),
                            StaleReason::Deleted {
                                target: resolved.clone(),
                            },
                        ));
                    }
                }
            },
            _ => {}
        }
    }
    Ok(out)
}

//! What editor adapters (the language server) need beyond the facade's operations: a
//! file's symbols with byte ranges, and a walk cap set by the editor.

use loci_store::StoreError;
use serde::Serialize;

use crate::{Envelope, Result, Workspace};

/// A symbol of one file with the byte ranges an adapter converts to positions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileSymbol {
    /// Stable key.
    pub key: String,
    /// Bare name.
    pub name: String,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind (`function`, `class`, ...).
    pub kind: String,
    /// Definition's first byte.
    pub start_byte: u32,
    /// One past the definition's last byte.
    pub end_byte: u32,
    /// Name's first byte.
    pub name_start_byte: u32,
    /// One past the name's last byte.
    pub name_end_byte: u32,
    /// First line of the definition.
    pub signature: String,
    /// Doc comment, if any.
    pub doc: Option<String>,
    /// Key of the enclosing definition.
    pub parent_key: Option<String>,
}

impl Workspace {
    /// Every symbol the map holds for `path` (repo-relative), in document order; empty
    /// when the map does not have the file. The envelope's `stale_warnings` say when the
    /// file changed on disk since it was scanned (the byte ranges are then out of date).
    pub fn file_symbols(&self, path: &str) -> Result<Envelope<Vec<FileSymbol>>> {
        let mut stmt = self
            .store
            .conn()
            .prepare_cached(
                "SELECT s.key, s.name, s.qualified_name, s.kind, s.start_byte, s.end_byte,
                    s.name_start_byte, s.name_end_byte, s.signature, s.doc, s.parent_key
                 FROM symbols s JOIN files f USING (file_id)
                 WHERE f.path = ?1 ORDER BY s.start_byte, s.key",
            )
            .map_err(|e| StoreError::sqlite("reading file symbols", e))?;
        let rows = stmt
            .query_map([path], |r| {
                Ok(FileSymbol {
                    key: r.get(0)?,
                    name: r.get(1)?,
                    qualified_name: r.get(2)?,
                    kind: r.get(3)?,
                    start_byte: r.get(4)?,
                    end_byte: r.get(5)?,
                    name_start_byte: r.get(6)?,
                    name_end_byte: r.get(7)?,
                    signature: r.get(8)?,
                    doc: r.get(9)?,
                    parent_key: r.get(10)?,
                })
            })
            .and_then(|rows| rows.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite(format!("reading symbols of {path}"), e))?;
        self.envelope(rows, vec![path.to_string()])
    }

    /// Caps the walk of later scans at `max_files` files (the rest is skipped with reason
    /// `file_limit`); the language server uses it for home directories.
    pub fn set_max_files(&mut self, max_files: u64) {
        self.config.scan.max_files = max_files;
    }
}

/// A live claim about a symbol: a page's current revision mentions it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SymbolMention {
    /// The symbol key the claim resolved to.
    pub key: String,
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
    /// Body fingerprint of the symbol when the claim was snapshotted.
    pub snapshot: Option<String>,
    /// Signature fingerprint then.
    pub signature_snapshot: Option<String>,
    /// Why the claim is stale against the map, in words, if it is.
    pub stale: Option<String>,
}

impl Workspace {
    /// Every live claim (in a page's current revision) about a symbol of `path`, by key
    /// then revision, with its staleness against the map. A claim tracked as a set of
    /// definitions is mentioned once per definition of the set in `path`, with that
    /// definition's snapshots; it is marked stale at the definitions that changed (at all
    /// of them when its name is gone).
    pub fn file_memory(&self, path: &str) -> Result<Vec<SymbolMention>> {
        let conn = self.store.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT c.resolved, p.subject, r.revision_id, r.version, r.author, r.created_at,
                    c.claim_id, c.text, c.snapshot, c.signature_snapshot
                 FROM claims c
                 JOIN pages p ON p.current_revision_id = c.revision_id
                 JOIN revisions r ON r.revision_id = c.revision_id
                 WHERE c.kind = 'symbol' AND c.resolved >= ?1 AND c.resolved < ?2
                 UNION ALL
                 SELECT j.value ->> 'key', p.subject, r.revision_id, r.version, r.author,
                    r.created_at, c.claim_id, c.text, j.value ->> 'body', j.value ->> 'signature'
                 FROM claims c, json_each(c.definitions) j
                 JOIN pages p ON p.current_revision_id = c.revision_id
                 JOIN revisions r ON r.revision_id = c.revision_id
                 WHERE c.definitions IS NOT NULL
                    AND j.value ->> 'key' >= ?1 AND j.value ->> 'key' < ?2
                 ORDER BY 1, 3, 7",
            )
            .map_err(|e| StoreError::sqlite("reading memory about symbols", e))?;
        // Keys are `path#...`: the range [`path#`, `path$`) holds exactly this file's keys.
        let rows = stmt
            .query_map([format!("{path}#"), format!("{path}$")], |r| {
                Ok(SymbolMention {
                    key: r.get(0)?,
                    subject: r.get(1)?,
                    revision_id: r.get(2)?,
                    version: r.get(3)?,
                    author: r.get(4)?,
                    created_at: r.get(5)?,
                    claim_id: r.get(6)?,
                    claim_text: r.get(7)?,
                    snapshot: r.get(8)?,
                    signature_snapshot: r.get(9)?,
                    stale: None,
                })
            })
            .and_then(|rows| rows.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite(format!("reading memory about {path}"), e))?;
        let mut out = rows;
        let mut revisions: Vec<i64> = out.iter().map(|m| m.revision_id).collect();
        revisions.sort_unstable();
        revisions.dedup();
        for revision in revisions {
            for mark in crate::audit::audit::revision_staleness(conn, revision)? {
                let Some(claim) = mark.claim_id else { continue };
                let concerns = |key: &str| match &mark.reason {
                    crate::audit::audit::StaleReason::DefinitionsChanged {
                        removed,
                        changed,
                        ..
                    } => removed.iter().chain(changed).any(|k| k == key),
                    _ => true,
                };
                for m in out
                    .iter_mut()
                    .filter(|m| m.claim_id == claim && concerns(&m.key))
                {
                    m.stale = Some(mark.describe());
                }
            }
        }
        Ok(out)
    }
}

/// Whether the process `pid` runs on this machine (the store is a local file, so every
/// process sharing it does). Where `/proc` is missing, every process is taken to run.
fn process_running(pid: i64) -> bool {
    if pid == i64::from(std::process::id()) {
        return true;
    }
    let proc = std::path::Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

impl Workspace {
    /// Shares the open document `path` (repo-relative) at `version` with the other
    /// processes of this store when its `text` differs from the file on disk, and stops
    /// sharing it when it does not (saved, or undone): agents' answers about the file
    /// then judge memory against what the engineer is typing. A buffer over
    /// [`loci_store::unsaved::MAX_SHARED_BYTES`] is not shared. Buffers of language
    /// servers no longer running are dropped on the way.
    ///
    /// Errors: store errors (a busy store among them).
    pub fn share_unsaved(&mut self, path: &str, version: i64, text: &str) -> Result<()> {
        use loci_store::unsaved;
        let on_disk = std::fs::read(self.root.join(path)).ok();
        let share =
            on_disk.as_deref() != Some(text.as_bytes()) && text.len() <= unsaved::MAX_SHARED_BYTES;
        let pid = i64::from(std::process::id());
        self.store.write(|tx| {
            unsaved::drop_servers(tx, None, &|p| !process_running(p))?;
            if share {
                unsaved::put(tx, path, version, text, pid)
            } else {
                unsaved::drop_path(tx, path)
            }
        })?;
        Ok(())
    }

    /// Stops sharing the buffer of `path` (closed in the editor), or with `None` every
    /// buffer this process shares (the language server shuts down).
    ///
    /// Errors: store errors.
    pub fn stop_sharing_unsaved(&mut self, path: Option<&str>) -> Result<()> {
        use loci_store::unsaved;
        let pid = i64::from(std::process::id());
        self.store.write(|tx| match path {
            Some(path) => unsaved::drop_path(tx, path),
            None => unsaved::drop_servers(tx, Some(pid), &|p| !process_running(p)).map(|_| ()),
        })?;
        Ok(())
    }

    /// What an answer relying on `paths` must say about the ones open with unsaved edits
    /// in a running language server of another process: a note per buffer in
    /// `capability` (which then has `overlay`), and a warning for each claim of memory
    /// about that file the unsaved text makes stale or false ([`Workspace::judge_open_file`],
    /// the rules the editor's own diagnostics follow), "unsaved in editor". A process never
    /// reads its own buffers: the language server has them in memory.
    pub(crate) fn unsaved_warnings(
        &self,
        paths: &[&str],
        capability: &mut crate::Capability,
    ) -> Result<Vec<crate::StaleWarning>> {
        let own = i64::from(std::process::id());
        let buffers = loci_store::unsaved::of_paths(self.store.conn(), paths)?;
        let mut out = Vec::new();
        for b in buffers
            .into_iter()
            .filter(|b| b.server_pid != own && process_running(b.server_pid))
        {
            let Some(language) = loci_core::Language::from_path(&b.path) else {
                continue;
            };
            capability.overlay = true;
            capability.notes.push(format!(
                "{}: unsaved in an editor (version {}, {}): memory about it is judged against \
                 that text",
                b.path, b.version, b.updated_at
            ));
            let options = self.config.scan.analyze_options();
            let analysis = loci_core::analyze::analyze(&b.path, language, &b.text, &options);
            for claim in self.judge_open_file(&b.path, &b.text, &analysis.symbols)? {
                if let Some(v) = claim.verdict {
                    out.push(crate::StaleWarning {
                        path: claim.subject,
                        reason: format!("unsaved in editor (version {}): {}", b.version, v.message),
                    });
                }
            }
        }
        Ok(out)
    }
}

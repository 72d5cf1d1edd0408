//! What editor adapters (the language server) need beyond the facade's operations: a
//! file's symbols with byte ranges, and a walk cap set by the editor.

use crate::{Envelope, Result, Workspace};

pub use loci_store::map::FileSymbol;
pub use loci_store::memory::SymbolMention;

impl Workspace {
    /// Every symbol the map holds for `path` (repo-relative), in document order; empty
    /// when the map does not have the file. The envelope's `stale_warnings` say when the
    /// file changed on disk since it was scanned (the byte ranges are then out of date).
    pub fn file_symbols(&self, path: &str) -> Result<Envelope<Vec<FileSymbol>>> {
        let rows = loci_store::map::file_symbols(self.store.conn(), path)?;
        self.envelope(rows, vec![path.to_string()])
    }

    /// Caps the walk of later scans at `max_files` files (the rest is skipped with reason
    /// `file_limit`); the language server uses it for home directories.
    pub fn set_max_files(&mut self, max_files: u64) {
        self.config.scan.max_files = max_files;
    }
}

impl Workspace {
    /// Every live claim (in a page's current revision) about a symbol of `path`, by key
    /// then revision, with its staleness against the map. A claim tracked as a set of
    /// definitions is mentioned once per definition of the set in `path`, with that
    /// definition's snapshots; it is marked stale at the definitions that changed (at all
    /// of them when its name is gone).
    pub fn file_memory(&self, path: &str) -> Result<Vec<SymbolMention>> {
        let conn = self.store.conn();
        let rows = loci_store::memory::symbol_mentions(conn, path)?;
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

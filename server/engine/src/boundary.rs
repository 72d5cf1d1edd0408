//! The workspace boundary: every path an argument names is resolved by
//! [`Workspace::contain`], and every workspace file the engine reads to answer is read by
//! [`Workspace::read_served`], so no argument reads or writes outside the root and no
//! answer carries a secret.
//!
//! Rules: an absolute path must lie under the root; a `..` segment is refused (not
//! normalised away: an argument that climbs is a mistake or an attack, either way worth
//! saying); a path whose existing part passes through a symbolic link leading out of the
//! root (or a broken one) is refused. Only paths given as command-line files that the
//! user reads for themselves (`remember --file`, `eval CASES`, `--db`, `--root`) are not
//! confined: they are the user's own reads on their machine, not memory or map content.

use std::path::{Component, Path};

use crate::{EngineError, Result, Workspace};

impl Workspace {
    /// `path` as a caller gave it (absolute, `./`-prefixed or repo-relative, `/`-separated)
    /// in repo-relative form, `.` for the root itself. Nothing needs to exist. Errors:
    /// [`EngineError::InvalidArgument`] naming `argument` when the path is outside the
    /// root, has a `..` segment, or leads out through a symbolic link.
    pub fn contain(&self, argument: &str, path: &str) -> Result<String> {
        let given = path.trim();
        let refuse = |message: String| EngineError::InvalidArgument {
            name: argument.into(),
            message,
        };
        let p = Path::new(given);
        let relative: String = if p.is_absolute() {
            // Compare canonical forms when the path exists (the root may be reached
            // through a link), else the path as written.
            let canonical = p.canonicalize().ok();
            let under = canonical
                .as_deref()
                .and_then(|c| c.strip_prefix(&self.root).ok())
                .or_else(|| p.strip_prefix(&self.root).ok());
            match under {
                Some(rel) => crate::map::walk::relative(Path::new(""), rel),
                None => {
                    return Err(refuse(format!(
                        "`{given}` is outside the workspace {}",
                        self.root.display()
                    )));
                }
            }
        } else {
            given.to_string()
        };
        let mut segments = Vec::new();
        for segment in relative.split('/') {
            match segment {
                "" | "." => {}
                ".." => return Err(refuse(format!("`{given}` leaves the workspace (`..`)"))),
                s => segments.push(s),
            }
        }
        if segments.is_empty() {
            return Ok(".".into());
        }
        let rel = segments.join("/");
        if let Some(link) = escapes(&self.root, &rel) {
            return Err(refuse(format!(
                "`{given}` leads out of the workspace through the symbolic link `{link}`"
            )));
        }
        Ok(rel)
    }

    /// The text of the workspace file `path` (repo-relative) for an answer, or `None` when
    /// it must not be served: outside the root, not a regular file (symbolic links are
    /// not followed), unreadable or not UTF-8, or a secret by its path or its text.
    pub fn read_served(&self, path: &str) -> Option<String> {
        self.read_served_as_scanned(path).map(|(text, _)| text)
    }

    /// [`Workspace::read_served`], and whether the text is what the last scan read (the
    /// map holds its content hash): a caller placing the map's line numbers in it needs
    /// to know, and the hash is computed once.
    pub(crate) fn read_served_as_scanned(&self, path: &str) -> Option<(String, bool)> {
        let rel = self.contain("path", path).ok()?;
        let abs = self.root.join(&rel);
        if !abs.symlink_metadata().ok()?.is_file() {
            return None;
        }
        let text = std::fs::read_to_string(&abs).ok()?;
        // The last scan took this very text at this path with these rules: the walk skips
        // a path a rule names, and a scan keeps no file in which one finds a credential.
        // Checking again would only build the path matcher (0.3 ms) and compile the rules
        // the text wakes (3 ms of a `loci context` on the stdlib).
        let as_scanned = self.unchanged_since_scan(&rel, &text);
        if !(as_scanned && self.map_checked_by_these_rules())
            && (self.secrets.path_rule(&rel).is_some() || self.secrets.find_token(&text).is_some())
        {
            return None;
        }
        Some((text, as_scanned))
    }

    /// Whether the last finished scan used this workspace's secret rules: then every text
    /// the map holds passed them (a scan keeps no file in which they find a credential,
    /// and memory was checked when written). When rules were configured since, each text
    /// is checked with [`Workspace::map_text_served`] before it is served.
    pub(crate) fn map_checked_by_these_rules(&self) -> bool {
        loci_store::read_meta(self.store.conn(), crate::map::scan::SECRET_RULES_META)
            .ok()
            .flatten()
            .is_some_and(|f| f == self.secrets.fingerprint())
    }

    /// Whether text the map holds for `path` (a symbol's signature and doc comment, a
    /// documentation section, a memory body) may be served when the rules changed since
    /// the last scan (`checked` is [`Workspace::map_checked_by_these_rules`], read once per
    /// answer): only text in which they find no credential, of a path they do not name.
    pub(crate) fn map_text_served(&self, checked: bool, path: &str, text: &str) -> bool {
        checked
            || (self.secrets.path_rule(path).is_none() && self.secrets.find_token(text).is_none())
    }

    /// [`Workspace::map_text_served`] for a symbol's first line and doc comment.
    pub(crate) fn symbol_text_served(&self, checked: bool, s: &loci_store::map::SymbolHit) -> bool {
        let text = format!("{}\n{}", s.signature, s.doc.as_deref().unwrap_or_default());
        self.map_text_served(checked, &s.path, &text)
    }

    /// Whether `text`, the content of `rel`, is what the last scan of `rel` read (the map
    /// holds its content hash). Any error reading the map is a no.
    fn unchanged_since_scan(&self, rel: &str, text: &str) -> bool {
        loci_store::map::content_hash(self.store.conn(), rel)
            .ok()
            .flatten()
            .is_some_and(|h| h == loci_core::fingerprint::content_hash(text.as_bytes()))
    }
}

/// Whether the repo-relative `rel` under the canonical `root` leads out of it through a
/// symbolic link (or a broken one): the longest existing prefix, resolved, must stay
/// under the root. Returns the offending link's repo-relative path.
pub fn escapes(root: &Path, rel: &str) -> Option<String> {
    let mut probe = root.join(rel);
    loop {
        if let Ok(meta) = probe.symlink_metadata() {
            let leads_out = match probe.canonicalize() {
                Ok(target) => !target.starts_with(root),
                Err(_) => meta.file_type().is_symlink(),
            };
            return leads_out.then(|| first_link(root, rel).unwrap_or_else(|| rel.to_string()));
        }
        if !probe.pop() || probe == root {
            return None;
        }
    }
}

/// The first component of `rel` under `root` that is a symbolic link.
fn first_link(root: &Path, rel: &str) -> Option<String> {
    let mut at = root.to_path_buf();
    for c in Path::new(rel).components() {
        if let Component::Normal(name) = c {
            at.push(name);
            if at.symlink_metadata().ok()?.file_type().is_symlink() {
                return Some(crate::map::walk::relative(root, &at));
            }
        }
    }
    None
}

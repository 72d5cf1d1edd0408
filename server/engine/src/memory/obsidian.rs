//! `loci export --obsidian DIR`: memory as an Obsidian vault, so that Obsidian's graph view
//! shows its shape. One note per page with a revision (file pages under `pages/`, folder
//! pages and the root's under `folders/`, topics under `topics/`, decisions and lessons
//! under `decisions/` and `lessons/`), each with front matter (subject, version, author,
//! date, commit, stale) and `[[wikilinks]]`: a file page to the pages of the files it
//! imports, a topic to its members, a decision or lesson to the pages its claims name.
//!
//! Re-exporting updates the vault in place: a note whose text is unchanged is not
//! rewritten (its modification time stays), a page's note is replaced by its new text, and
//! a note loci wrote before whose page is gone is removed. loci remembers what it wrote in
//! `.loci-vault.json` at the vault's root and never touches any other file there (the
//! user's own notes, `.obsidian/`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use loci_store::memory::{self as mem, Page, Revision};
use serde::{Deserialize, Serialize};

use crate::{EngineError, Envelope, Result, Workspace};

/// The file, at the vault's root, listing the notes loci wrote.
pub const VAULT_MANIFEST: &str = ".loci-vault.json";

/// What an export did to the vault. Paths are vault-relative, `/`-separated, sorted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VaultReport {
    /// The vault folder as given.
    pub dir: String,
    /// Notes written (new or changed).
    pub written: Vec<String>,
    /// Notes already up to date.
    pub unchanged: Vec<String>,
    /// Notes of pages that are gone, removed.
    pub removed: Vec<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct Manifest {
    notes: BTreeSet<String>,
}

impl Workspace {
    /// Writes (or updates) the vault at `dir`, creating it if needed.
    ///
    /// Errors: [`EngineError::Io`] when a note cannot be written or `dir` cannot be made;
    /// [`EngineError::InvalidArgument`] when `dir` is inside `.loci/`.
    pub fn export_obsidian(&self, dir: &Path) -> Result<Envelope<VaultReport>> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| EngineError::Io { path, source }
        };
        if dir
            .canonicalize()
            .ok()
            .zip(self.root.join(crate::LOCI_DIR).canonicalize().ok())
            .is_some_and(|(d, l)| d.starts_with(l))
        {
            return Err(EngineError::InvalidArgument {
                name: "obsidian".into(),
                message: "the vault cannot live inside .loci/".into(),
            });
        }
        let notes = self.vault_notes()?;
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let manifest_path = dir.join(VAULT_MANIFEST);
        let before: Manifest = std::fs::read_to_string(&manifest_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let mut report = VaultReport {
            dir: dir.display().to_string(),
            ..Default::default()
        };
        for (rel, text) in &notes {
            let path = dir.join(rel);
            if std::fs::read_to_string(&path).is_ok_and(|t| &t == text) {
                report.unchanged.push(rel.clone());
                continue;
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::write(&path, text).map_err(io(&path))?;
            report.written.push(rel.clone());
        }
        for rel in &before.notes {
            if notes.contains_key(rel) || rel.contains("..") {
                continue;
            }
            let path = dir.join(rel);
            match std::fs::remove_file(&path) {
                Ok(()) => report.removed.push(rel.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&path)(e)),
            }
        }
        let manifest = Manifest {
            notes: notes.keys().cloned().collect(),
        };
        let text = serde_json::to_string_pretty(&manifest)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        std::fs::write(&manifest_path, text + "\n").map_err(io(&manifest_path))?;
        self.envelope(report, Vec::new())
    }

    /// Every note: vault-relative path → text.
    fn vault_notes(&self) -> Result<BTreeMap<String, String>> {
        let conn = self.store.conn();
        let pages: Vec<Page> = mem::pages(conn)?
            .into_iter()
            .filter(|p| p.current_revision_id.is_some())
            .filter(|p| p.subject != "decisions" && p.subject != "lessons")
            .collect();
        let note_of: HashMap<String, String> = pages
            .iter()
            .map(|p| (p.subject.clone(), note_path(p)))
            .collect();
        let stale: BTreeSet<i64> = crate::audit::audit::current_staleness(conn)?
            .into_iter()
            .map(|s| s.revision_id)
            .collect();
        let mut out = BTreeMap::new();
        for page in &pages {
            let Some(rev) = mem::revision_by_id(conn, page.current_revision_id.unwrap_or(0))?
            else {
                continue;
            };
            let commit = loci_store::synthesis::revision_head(conn, rev.revision_id)?;
            let mut links: BTreeSet<String> = BTreeSet::new();
            let heading;
            match page.kind.as_str() {
                "file" => {
                    heading = "Imports";
                    for d in loci_store::map::deps_from(conn, &page.subject)? {
                        if let Some(to) = d.to
                            && to != page.subject
                            && let Some(note) = note_of.get(&to)
                        {
                            links.insert(wikilink(note, &to));
                        }
                    }
                }
                "topic" => {
                    heading = "Members";
                    for m in mem::topic_members(conn, page.page_id)? {
                        links.insert(match note_of.get(&m) {
                            Some(note) => wikilink(note, &m),
                            None => format!("`{m}` (no page)"),
                        });
                    }
                }
                _ => {
                    heading = "About";
                    for c in mem::claims_of(conn, rev.revision_id)? {
                        let target = c.resolved.as_deref().unwrap_or(&c.target);
                        let path = target.split('#').next().unwrap_or(target);
                        let path = path.trim_end_matches('/');
                        if path != page.subject
                            && let Some(note) = note_of.get(path)
                        {
                            links.insert(wikilink(note, path));
                        }
                    }
                }
            }
            out.insert(
                note_of[&page.subject].clone(),
                note_text(
                    page,
                    &rev,
                    commit.as_deref(),
                    stale.contains(&rev.revision_id),
                    heading,
                    &links,
                ),
            );
        }
        Ok(out)
    }
}

/// Where a page's note lives in the vault.
fn note_path(p: &Page) -> String {
    let s = &p.subject;
    match p.kind.as_str() {
        "file" => format!("pages/{s}.md"),
        "folder" => format!("folders/{s}.md"),
        "root" => "folders/(root).md".into(),
        "topic" => format!("topics/{}.md", s.trim_start_matches("topic:")),
        _ => match s.split_once(':') {
            Some((log, n)) => format!("{log}s/{log} {n}.md"),
            None => format!("{s}.md"),
        },
    }
}

/// `[[path/of/note|label]]` (the note's path without `.md`).
fn wikilink(note: &str, label: &str) -> String {
    format!("[[{}|{label}]]", note.trim_end_matches(".md"))
}

/// A YAML string: double-quoted with `"` and `\` escaped.
fn yaml(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn note_text(
    page: &Page,
    rev: &Revision,
    commit: Option<&str>,
    stale: bool,
    heading: &str,
    links: &BTreeSet<String>,
) -> String {
    let mut t = String::from("---\n");
    t.push_str(&format!("subject: {}\n", yaml(&page.subject)));
    t.push_str(&format!("kind: {}\n", page.kind));
    t.push_str(&format!("version: {}\n", rev.version));
    t.push_str(&format!("author: {}\n", yaml(&rev.author)));
    t.push_str(&format!("date: {}\n", rev.created_at));
    t.push_str(&format!(
        "commit: {}\n",
        commit.map(yaml).unwrap_or_else(|| "null".into())
    ));
    t.push_str(&format!("stale: {stale}\n"));
    t.push_str("---\n\n");
    t.push_str(rev.body.trim_end());
    t.push('\n');
    if !links.is_empty() {
        t.push_str(&format!("\n## {heading}\n\n"));
        for l in links {
            t.push_str(&format!("- {l}\n"));
        }
    }
    t
}

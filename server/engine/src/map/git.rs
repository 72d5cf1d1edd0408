//! Read-only git history of the workspace's repository, read with `gix` (never by running
//! `git`): the repository's state, recent commits with their file changes and rename
//! detection, the history of one file across renames, and where a path moved to.
//!
//! Paths in and out are workspace-relative and `/`-separated. The workspace root may be a
//! subdirectory of the repository (the repository is found by searching upward, and linked
//! worktrees whose `.git` is a file work too): paths are relative to the workspace root and
//! changes outside it are dropped.
//!
//! Every commit's changes are the tree diff against its first parent (a root commit adds
//! everything; a merge is diffed against its first parent only), with rename detection like
//! git's default: exact renames plus renames with at least 50% similar content, copies not
//! tracked, at most 1000 candidate pairs per commit. Repository configuration such as
//! `diff.renames` is deliberately not consulted, so answers do not depend on the user's git
//! setup; global and system git configuration are not read at all.
//!
//! Repository states never panic: an unborn `HEAD` (`git init`, no commits) is an empty
//! history, not an error; a plain directory is [`RepoState::NotARepository`] for
//! [`repo_state`] and [`GitError::NotARepository`] ("not a git repository") for the
//! history functions; a shallow clone stops at the shallow boundary and says so.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::diff::tree_with_rewrites::ChangeRef;
use gix::revision::walk::Sorting;
use gix::traverse::commit::simple::CommitTimeOrder;
use serde::Serialize;

/// What can go wrong while reading git history. Messages are lower-case and start with the
/// workspace root they concern.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No git repository contains the workspace root. Distinct from an unborn repository,
    /// which is not an error.
    #[error("{path}: not a git repository (nor any of its parent directories)")]
    NotARepository {
        /// The workspace root that was searched from.
        path: PathBuf,
    },
    /// The workspace root could not be read (it does not exist, or permission denied).
    #[error("{path}: {source}")]
    Io {
        /// The workspace root.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A path argument is empty, absolute or leaves the workspace (`..`).
    #[error("invalid path `{path}`: {message}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The repository was found but could not be opened or read (a corrupt object, a
    /// missing object outside a shallow boundary, an unreadable reference, ...).
    #[error("{path}: cannot {action}: {source}")]
    Git {
        /// The workspace root.
        path: PathBuf,
        /// What was being done, such as "read commit 1a2b...".
        action: String,
        /// The error from `gix`.
        #[source]
        source: gix::Error,
    },
}

/// What the workspace's git repository looks like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RepoState {
    /// No repository contains the workspace root: a plain directory. Git features are
    /// unavailable; everything else works.
    NotARepository,
    /// A repository without commits yet (`git init`): "no commits yet".
    Unborn {
        /// The branch the first commit will create, short form (`main`), when `HEAD` names one.
        branch: Option<String>,
    },
    /// `HEAD` is on a branch.
    Branch {
        /// The branch's short name (`main`, `feature/x`).
        name: String,
        /// The commit the branch points to, full hex id.
        head: String,
    },
    /// `HEAD` points directly at a commit (`git checkout --detach`).
    Detached {
        /// The commit, full hex id.
        head: String,
    },
}

/// How a commit changed one path, relative to its first parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChangeKind {
    /// The path is new (or was moved into the workspace from outside it).
    Added,
    /// The content or mode changed.
    Modified,
    /// The path is gone (or was moved out of the workspace).
    Deleted,
    /// The path is the new name of `from` (identical or at least 50% similar content); the
    /// content may also have changed.
    Renamed {
        /// The old path, workspace-relative.
        from: String,
    },
}

/// One changed path of a commit. Only files (blobs, symlinks, submodule entries) are
/// listed, never directories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// Workspace-relative, `/`-separated path (the new path of a rename).
    pub path: String,
    /// What happened to it (flattened in JSON: `{"path": "b.py", "kind": "renamed", "from": "a.py"}`).
    #[serde(flatten)]
    pub kind: ChangeKind,
}

/// One commit with its changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitInfo {
    /// Full hex commit id.
    pub hash: String,
    /// Full hex ids of the parents, first parent first, as recorded in the commit (a parent
    /// beyond a shallow boundary is listed although it is not in the clone).
    pub parents: Vec<String>,
    /// The whole message, trimmed (decoded as UTF-8, invalid bytes replaced).
    pub message: String,
    /// The first line of the message.
    pub summary: String,
    /// The author as `Name <email>`.
    pub author: String,
    /// The author time as RFC 3339 in UTC (`2024-01-02T03:04:05Z`).
    pub time: String,
    /// The changes against the first parent, within the workspace, sorted by path. Empty for
    /// a commit at a shallow boundary, whose parent is not in the clone.
    pub changes: Vec<FileChange>,
}

/// The result of [`history`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct History {
    /// Commits, oldest first.
    pub commits: Vec<CommitInfo>,
    /// `since` was given but is not a commit in this repository (history rewritten, or it
    /// lies beyond a shallow boundary): the commits are the last `limit` ones instead.
    pub since_missing: bool,
    /// The repository is a shallow clone and the returned history reaches its shallow
    /// boundary: older commits exist but are not in the clone.
    pub shallow: bool,
    /// More commits matched than `limit`; the oldest were left out.
    pub truncated: bool,
}

/// How many commits [`file_history`] examines per commit asked for: it walks at most
/// `limit * FILE_HISTORY_WALK_FACTOR` commits from `HEAD`.
pub const FILE_HISTORY_WALK_FACTOR: usize = 50;

/// The user's git identity, for the author of memory writes: `NAME <EMAIL>`, `NAME` or
/// `EMAIL` from `user.name` / `user.email` — of the repository holding `root` (its own
/// configuration over the global one), else of the global configuration. `None` when
/// neither is set (or the configuration cannot be read).
pub fn user_identity(root: Option<&Path>) -> Option<String> {
    let (name, email) = match root.map(gix::discover) {
        Some(Ok(repo)) => {
            let config = repo.config_snapshot();
            (config.string("user.name"), config.string("user.email"))
        }
        _ => match gix::config::File::from_globals() {
            Ok(config) => (config.string("user.name"), config.string("user.email")),
            Err(_) => (None, None),
        },
    };
    let clean = |v: Option<gix::bstr::BString>| {
        v.map(|b| b.to_str_lossy().trim().to_string())
            .filter(|s| !s.is_empty())
    };
    match (clean(name), clean(email)) {
        (Some(n), Some(e)) => Some(format!("{n} <{e}>")),
        (Some(n), None) => Some(n),
        (None, Some(e)) => Some(e),
        (None, None) => None,
    }
}

/// Reports the state of the repository containing `root`.
///
/// # Errors
///
/// [`GitError::Io`] if `root` cannot be read; [`GitError::Git`] if the repository is found
/// but `HEAD` cannot be read. A plain directory is not an error: it is
/// [`RepoState::NotARepository`].
pub fn repo_state(root: &Path) -> Result<RepoState, GitError> {
    let ws = match Ws::open(root) {
        Ok(ws) => ws,
        Err(GitError::NotARepository { .. }) => return Ok(RepoState::NotARepository),
        Err(err) => return Err(err),
    };
    let head = ws.repo.head().map_err(|e| ws.err("read HEAD", e))?;
    let branch = match &head.kind {
        gix::head::Kind::Unborn(name) => {
            return Ok(RepoState::Unborn {
                branch: Some(name.shorten().to_str_lossy().into_owned()),
            });
        }
        gix::head::Kind::Symbolic(reference) => {
            Some(reference.name.shorten().to_str_lossy().into_owned())
        }
        gix::head::Kind::Detached { .. } => None,
    };
    let head = match ws.head_commit()? {
        Some(id) => id.to_string(),
        None => return Ok(RepoState::Unborn { branch }),
    };
    Ok(match branch {
        Some(name) => RepoState::Branch { name, head },
        None => RepoState::Detached { head },
    })
}

/// Reads the commit `HEAD` points at, again and again, cheaply: the repository is found
/// once ([`HeadWatch::open`]), and each [`HeadWatch::head`] reads `HEAD` and the branch it
/// names (a loose reference file, else `packed-refs`) — a few small file reads, no object
/// access and no configuration. For a language server that checks, on every burst of
/// edits, whether a commit, checkout, merge or pull made outside the editor moved `HEAD`.
///
/// Holds paths only (a `gix` repository is not `Send` without its `parallel` feature), so
/// it can be shared between threads.
#[derive(Clone, Debug)]
pub struct HeadWatch {
    git_dir: PathBuf,
    common_dir: PathBuf,
    object_hash: gix::hash::Kind,
}

impl HeadWatch {
    /// Finds the repository containing `root` (searching upward, as every function here
    /// does). `None` for a plain directory or a repository that cannot be opened.
    pub fn open(root: &Path) -> Option<HeadWatch> {
        let ws = Ws::open(root).ok()?;
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        Some(HeadWatch {
            git_dir: canonical(ws.repo.git_dir()),
            common_dir: canonical(ws.repo.common_dir()),
            object_hash: ws.repo.object_hash(),
        })
    }

    /// The repository's own directory (`.git`, or a linked worktree's
    /// `.git/worktrees/NAME`): where `HEAD` lives.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The directory shared by all worktrees: where `refs/heads/` and `packed-refs` live
    /// (the same as [`HeadWatch::git_dir`] outside linked worktrees).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The commit `HEAD` points at, full hex; `None` when `HEAD` is unborn or cannot be
    /// read (a half-written reference during a git command: the next check sees it).
    pub fn head(&self) -> Option<String> {
        use gix::refs::Target;
        let store = if self.git_dir == self.common_dir {
            gix::refs::file::Store::at(self.git_dir.clone(), self.object_hash)
        } else {
            gix::refs::file::Store::for_linked_worktree(
                self.git_dir.clone(),
                self.common_dir.clone(),
                self.object_hash,
            )
        };
        let mut reference = store.try_find("HEAD").ok()??;
        // HEAD names a branch, which names the commit; at most a few hops.
        for _ in 0..5 {
            match reference.target {
                Target::Object(id) => return Some(id.to_string()),
                Target::Symbolic(name) => reference = store.try_find(name.as_ref()).ok()??,
            }
        }
        None
    }
}

/// Where the git hooks of the repository containing `root` live, and where `root` is in
/// its working tree: `core.hooksPath` of the repository's own configuration (relative to
/// the working tree when relative), else `hooks/` of the common directory (shared by
/// linked worktrees); and the workspace root relative to the working tree (`/`-separated,
/// with a trailing `/`; empty when the workspace is the whole repository). Global and
/// system configuration are not read (as everywhere in this module).
///
/// # Errors
///
/// [`GitError::NotARepository`] for a plain directory, [`GitError::Io`] if `root` cannot
/// be read.
pub fn hooks_location(root: &Path) -> Result<(PathBuf, String), GitError> {
    let ws = Ws::open(root)?;
    let configured = ws
        .repo
        .config_snapshot()
        .string("core.hooksPath")
        .map(|v| PathBuf::from(v.to_str_lossy().into_owned()))
        .filter(|p| !p.as_os_str().is_empty());
    let dir = match configured {
        Some(p) if p.is_absolute() => p,
        Some(p) => ws
            .repo
            .workdir()
            .unwrap_or_else(|| ws.repo.common_dir())
            .join(p),
        None => ws.repo.common_dir().join("hooks"),
    };
    Ok((dir, ws.prefix.clone()))
}

/// Commits reachable from `HEAD` that are not reachable from `since` (exclusive, like
/// `git log since..HEAD`), oldest first, at most `limit` (the newest `limit` when more exist,
/// with [`History::truncated`] set). Commits are ordered by commit time.
///
/// `since` is a full or abbreviated commit id. `None`, or a `since` that is not found (see
/// [`History::since_missing`]), means the last `limit` commits. A `since` that still exists
/// but is no longer an ancestor of `HEAD` (an amended or rebased commit kept alive by the
/// reflog) is not "missing": the answer is the commits after the fork point, as with
/// `git log since..HEAD`. An unborn `HEAD` gives an
/// empty history. Cost: `limit` commits are walked and diffed, plus, with `since`, the part
/// of history needed to separate the two sides.
///
/// # Errors
///
/// [`GitError::NotARepository`] for a plain directory, [`GitError::Io`] if `root` cannot
/// be read, [`GitError::Git`] if an object cannot be read.
pub fn history(root: &Path, since: Option<&str>, limit: usize) -> Result<History, GitError> {
    let ws = Ws::open(root)?;
    let Some(head) = ws.head_commit()? else {
        return Ok(History::default());
    };
    let mut out = History::default();
    let hidden = match since {
        Some(since) => match ws.resolve_commit(since) {
            Some(id) => vec![id],
            None => {
                out.since_missing = true;
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    let mut ids = ws.walk_newest_first(head, hidden, limit.saturating_add(1))?;
    out.truncated = ids.len() > limit;
    ids.truncate(limit);
    ids.reverse();
    let shallow = ws.shallow_commits()?;
    let mut differ = Differ::new(&ws)?;
    for id in ids {
        let boundary = shallow.binary_search(&id).is_ok();
        out.shallow |= boundary;
        let (info, _) = ws.commit_info(id, boundary, &mut differ)?;
        out.commits.push(info);
    }
    Ok(out)
}

/// Commits touching `path` (a file or a directory, workspace-relative), newest first, at
/// most `limit`, following renames back like `git log --follow`: when a commit created
/// `path` by renaming another file, older commits are matched against the old name (one
/// name is followed at a time; renames are followed for files, not for directories).
///
/// A commit touches the path when the path's content differs from its first parent (for a
/// merge: from every parent, so a merge that took one side's version unchanged is not
/// listed). Each returned commit carries all its changes within the workspace, not only
/// this path's. Walks at most `limit * `[`FILE_HISTORY_WALK_FACTOR`] commits from `HEAD`,
/// so a file last touched longer ago than that gives fewer commits. A commit at a shallow
/// boundary is never listed (its parent is unknown). An unborn `HEAD` gives no commits.
///
/// # Errors
///
/// [`GitError::InvalidPath`] for an empty, absolute or `..` path, otherwise as [`history`].
pub fn file_history(root: &Path, path: &str, limit: usize) -> Result<Vec<CommitInfo>, GitError> {
    let rel = normalize_path(path)?;
    let ws = Ws::open(root)?;
    let Some(head) = ws.head_commit()? else {
        return Ok(Vec::new());
    };
    let mut tracked = ws.to_repo_path(&rel);
    let max_walk = limit.saturating_mul(FILE_HISTORY_WALK_FACTOR);
    let shallow = ws.shallow_commits()?;
    let mut differ = Differ::new(&ws)?;
    let mut out = Vec::new();
    let walk = ws.walk(head, Vec::new())?;
    for info in walk.take(max_walk) {
        if out.len() >= limit {
            break;
        }
        let id = info.map_err(|e| ws.err("walk history", e))?.id;
        if shallow.binary_search(&id).is_ok() {
            continue;
        }
        let commit = ws.find_commit(id)?;
        let now = ws.entry_at_commit(&commit, &tracked)?;
        let mut before = Vec::new();
        for parent in commit.parent_ids() {
            let parent = ws.find_commit(parent.detach())?;
            before.push(ws.entry_at_commit(&parent, &tracked)?);
        }
        let touched = match before.as_slice() {
            [] => now.is_some(),
            [first] => *first != now,
            all => all.iter().all(|entry| *entry != now),
        };
        if !touched {
            continue;
        }
        let (info, raw) = ws.commit_info(id, false, &mut differ)?;
        if now.is_some() && before.first().is_some_and(Option::is_none) {
            // Created here (relative to the first parent): a rename continues under the old name.
            if let Some(from) = raw.iter().find_map(|change| match change {
                RawChange::Renamed { from, to } if *to == tracked => Some(from.clone()),
                _ => None,
            }) {
                tracked = from;
            }
        }
        out.push(info);
    }
    Ok(out)
}

/// The text of `path` (workspace-relative) in commit `commit` (a full or abbreviated id):
/// `None` when the commit is not found here or has no file at that path. Invalid UTF-8 is
/// replaced. Page synthesis diffs it against the working tree (the code since a page's
/// revision was written).
///
/// # Errors
///
/// [`GitError::InvalidPath`] for an empty, absolute or `..` path, otherwise as [`history`].
pub fn file_at(root: &Path, commit: &str, path: &str) -> Result<Option<String>, GitError> {
    let rel = normalize_path(path)?;
    let ws = Ws::open(root)?;
    let Some(id) = ws.resolve_commit(commit) else {
        return Ok(None);
    };
    let commit = ws.find_commit(id)?;
    let Some((blob, mode)) = ws.entry_at_commit(&commit, &ws.to_repo_path(&rel))? else {
        return Ok(None);
    };
    if !mode.is_blob() {
        return Ok(None);
    }
    let object = ws
        .repo
        .find_object(blob)
        .map_err(|e| ws.err(format!("read `{rel}` at commit {id}"), e))?;
    Ok(Some(String::from_utf8_lossy(&object.data).into_owned()))
}

/// Where `path` (workspace-relative) moved to in later history: the last name in the chain
/// of renames starting at `path` (`a` renamed to `b`, later `b` to `c`, gives `c`), replayed
/// oldest first over the last `limit` commits from `HEAD`. Used to suggest the new path for a
/// claim naming a path that no longer exists.
///
/// `None` if `path` was not renamed within those commits, if the chain ends where it started,
/// or if it ends outside the workspace. The returned path may itself have been deleted
/// later; check it exists before suggesting it. Only commits that remove the followed name
/// are diffed, so the cost is mostly the walk.
///
/// # Errors
///
/// [`GitError::InvalidPath`] for an empty, absolute or `..` path, otherwise as [`history`].
pub fn renamed_to(root: &Path, path: &str, limit: usize) -> Result<Option<String>, GitError> {
    let rel = normalize_path(path)?;
    let ws = Ws::open(root)?;
    let Some(head) = ws.head_commit()? else {
        return Ok(None);
    };
    let start = ws.to_repo_path(&rel);
    let mut current = start.clone();
    let shallow = ws.shallow_commits()?;
    let mut differ = Differ::new(&ws)?;
    let mut ids = ws.walk_newest_first(head, Vec::new(), limit)?;
    ids.reverse();
    for id in ids {
        if shallow.binary_search(&id).is_ok() {
            continue;
        }
        let commit = ws.find_commit(id)?;
        let Some(parent) = commit.parent_ids().next() else {
            continue;
        };
        let parent = ws.find_commit(parent.detach())?;
        // Only a commit that removes the followed name can rename it.
        if ws.entry_at_commit(&parent, &current)?.is_none()
            || ws.entry_at_commit(&commit, &current)?.is_some()
        {
            continue;
        }
        let old_tree = ws.tree_of(&parent)?;
        let new_tree = ws.tree_of(&commit)?;
        let raw = differ.diff(&ws, Some(old_tree), new_tree, id)?;
        if let Some(to) = raw.into_iter().find_map(|change| match change {
            RawChange::Renamed { from, to } if from == current => Some(to),
            _ => None,
        }) {
            current = to;
        }
    }
    if current == start {
        return Ok(None);
    }
    Ok(ws.to_workspace_path(&current))
}

/// Checks a workspace-relative path argument and returns it without `./` parts and
/// trailing slashes.
fn normalize_path(path: &str) -> Result<String, GitError> {
    let invalid = |message: &str| GitError::InvalidPath {
        path: path.to_owned(),
        message: message.to_owned(),
    };
    let unified = path.replace('\\', "/");
    if unified.starts_with('/') || Path::new(path).is_absolute() {
        return Err(invalid("expected a workspace-relative path"));
    }
    let mut parts = Vec::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(invalid("`..` leaves the workspace")),
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(invalid(
            "expected a file or directory path, not the workspace root",
        ));
    }
    Ok(parts.join("/"))
}

/// A change with repository-relative paths, before mapping to the workspace.
enum RawChange {
    Added(String),
    Modified(String),
    Deleted(String),
    Renamed { from: String, to: String },
}

/// An opened repository and where the workspace sits in it.
struct Ws {
    repo: gix::Repository,
    root: PathBuf,
    /// The workspace root relative to the repository's working tree, `/`-separated, with a
    /// trailing `/`; empty when the workspace is the whole repository.
    prefix: String,
}

impl Ws {
    fn open(root: &Path) -> Result<Ws, GitError> {
        let io = |source| GitError::Io {
            path: root.to_owned(),
            source,
        };
        let root_abs = std::fs::canonicalize(root).map_err(io)?;
        if !root_abs.is_dir() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "not a directory",
            )));
        }
        let options = gix::open::Options::isolated();
        let trust = gix::sec::trust::Mapping {
            full: options.clone(),
            reduced: options,
        };
        let repo =
            match gix::ThreadSafeRepository::discover_opts(&root_abs, Default::default(), trust) {
                Ok(repo) => gix::Repository::from(repo),
                Err(err) => {
                    use gix::discover::upwards::Error as Upwards;
                    return Err(match err.downcast_any_ref::<Upwards>() {
                        Some(
                            Upwards::NoGitRepository { .. }
                            | Upwards::NoGitRepositoryWithinCeiling { .. }
                            | Upwards::NoGitRepositoryWithinFs { .. },
                        ) => GitError::NotARepository {
                            path: root.to_owned(),
                        },
                        _ => GitError::Git {
                            path: root.to_owned(),
                            action: "open the git repository".to_owned(),
                            source: err,
                        },
                    });
                }
            };
        let mut repo = repo;
        repo.object_cache_size_if_unset(8 * 1024 * 1024);
        let prefix = repo
            .workdir()
            .and_then(|workdir| std::fs::canonicalize(workdir).ok())
            .and_then(|workdir| {
                root_abs.strip_prefix(&workdir).ok().map(|rel| {
                    rel.components()
                        .map(|c| format!("{}/", c.as_os_str().to_string_lossy()))
                        .collect::<String>()
                })
            })
            .unwrap_or_default();
        Ok(Ws {
            repo,
            root: root.to_owned(),
            prefix,
        })
    }

    fn err(&self, action: impl Into<String>, source: gix::Error) -> GitError {
        GitError::Git {
            path: self.root.clone(),
            action: action.into(),
            source,
        }
    }

    /// The commit `HEAD` resolves to, or `None` when `HEAD` is unborn.
    fn head_commit(&self) -> Result<Option<ObjectId>, GitError> {
        let mut head = self.repo.head().map_err(|e| self.err("read HEAD", e))?;
        if head.is_unborn() {
            return Ok(None);
        }
        let commit = head
            .peel_to_commit()
            .map_err(|e| self.err("resolve HEAD to a commit", e))?;
        Ok(Some(commit.id))
    }

    /// Resolves a full or abbreviated commit id; `None` when it is not a commit here.
    fn resolve_commit(&self, spec: &str) -> Option<ObjectId> {
        let spec = spec.trim();
        if spec.is_empty() || !spec.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let id = match ObjectId::from_hex(spec.as_bytes()) {
            Ok(id) => id,
            Err(_) => self
                .repo
                .rev_parse_single(format!("{spec}^{{commit}}").as_str())
                .ok()?
                .detach(),
        };
        self.repo.find_commit(id).ok().map(|commit| commit.id)
    }

    /// Ids of the shallow boundary commits, sorted; empty for a complete clone.
    fn shallow_commits(&self) -> Result<Vec<ObjectId>, GitError> {
        let commits = self
            .repo
            .shallow_commits()
            .map_err(|e| self.err("read the shallow file", e))?;
        let mut ids: Vec<ObjectId> = commits
            .map(|c| c.iter().copied().collect())
            .unwrap_or_default();
        ids.sort();
        Ok(ids)
    }

    fn walk(
        &self,
        head: ObjectId,
        hidden: Vec<ObjectId>,
    ) -> Result<gix::revision::Walk<'_>, GitError> {
        self.repo
            .rev_walk([head])
            .sorting(Sorting::ByCommitTime(CommitTimeOrder::NewestFirst))
            .with_hidden(hidden)
            .all()
            .map_err(|e| self.err("walk history", e))
    }

    /// Up to `max` commit ids reachable from `head` but not from `hidden`, newest first.
    fn walk_newest_first(
        &self,
        head: ObjectId,
        hidden: Vec<ObjectId>,
        max: usize,
    ) -> Result<Vec<ObjectId>, GitError> {
        let mut ids = Vec::new();
        for info in self.walk(head, hidden)?.take(max) {
            ids.push(info.map_err(|e| self.err("walk history", e))?.id);
        }
        Ok(ids)
    }

    fn find_commit(&self, id: ObjectId) -> Result<gix::Commit<'_>, GitError> {
        self.repo
            .find_commit(id)
            .map_err(|e| self.err(format!("read commit {id}"), e))
    }

    fn tree_of<'r>(&self, commit: &gix::Commit<'r>) -> Result<gix::Tree<'r>, GitError> {
        commit
            .tree()
            .map_err(|e| self.err(format!("read the tree of commit {}", commit.id), e))
    }

    /// The id and mode of the entry at repository path `path` in `commit`'s tree.
    fn entry_at_commit(
        &self,
        commit: &gix::Commit<'_>,
        path: &str,
    ) -> Result<Option<(ObjectId, gix::objs::tree::EntryMode)>, GitError> {
        let tree = self.tree_of(commit)?;
        let entry = tree
            .lookup_entry(path.split('/').map(str::as_bytes))
            .map_err(|e| self.err(format!("look up `{path}` in commit {}", commit.id), e))?;
        Ok(entry.map(|entry| (entry.object_id(), entry.mode())))
    }

    /// The workspace-relative form of a repository path; `None` when outside the workspace.
    fn to_workspace_path(&self, repo_path: &str) -> Option<String> {
        repo_path
            .strip_prefix(self.prefix.as_str())
            .filter(|rel| !rel.is_empty())
            .map(str::to_owned)
    }

    fn to_repo_path(&self, workspace_path: &str) -> String {
        format!("{}{workspace_path}", self.prefix)
    }

    /// Reads a commit and diffs it against its first parent (not at a shallow `boundary`).
    /// Returns the commit and its raw repository-relative changes.
    fn commit_info(
        &self,
        id: ObjectId,
        boundary: bool,
        differ: &mut Differ,
    ) -> Result<(CommitInfo, Vec<RawChange>), GitError> {
        let commit = self.find_commit(id)?;
        let parents: Vec<ObjectId> = commit.parent_ids().map(gix::Id::detach).collect();
        let author = commit
            .author()
            .map_err(|e| self.err(format!("read the author of commit {id}"), e))?
            .trim();
        let time = jiff::Timestamp::from_second(author.seconds())
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
            .to_string();
        let message = commit.message_raw_sloppy().to_str_lossy().trim().to_owned();
        let summary = message
            .lines()
            .next()
            .unwrap_or_default()
            .trim_end()
            .to_owned();
        let raw = if boundary {
            Vec::new()
        } else {
            let old_tree = match parents.first() {
                Some(parent) => Some(self.tree_of(&self.find_commit(*parent)?)?),
                None => None,
            };
            let new_tree = self.tree_of(&commit)?;
            differ.diff(self, old_tree, new_tree, id)?
        };
        let mut changes: Vec<FileChange> = raw
            .iter()
            .filter_map(|change| self.to_file_change(change))
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        let info = CommitInfo {
            hash: id.to_string(),
            parents: parents.iter().map(ToString::to_string).collect(),
            message,
            summary,
            author: format!(
                "{} <{}>",
                author.name.to_str_lossy(),
                author.email.to_str_lossy()
            ),
            time,
            changes,
        };
        Ok((info, raw))
    }

    /// Maps a raw change into the workspace: renames across its edge become additions or
    /// deletions, changes outside it are dropped.
    fn to_file_change(&self, change: &RawChange) -> Option<FileChange> {
        let (path, kind) = match change {
            RawChange::Added(path) => (self.to_workspace_path(path)?, ChangeKind::Added),
            RawChange::Modified(path) => (self.to_workspace_path(path)?, ChangeKind::Modified),
            RawChange::Deleted(path) => (self.to_workspace_path(path)?, ChangeKind::Deleted),
            RawChange::Renamed { from, to } => {
                match (self.to_workspace_path(from), self.to_workspace_path(to)) {
                    (Some(from), Some(to)) => (to, ChangeKind::Renamed { from }),
                    (None, Some(to)) => (to, ChangeKind::Added),
                    (Some(from), None) => (from, ChangeKind::Deleted),
                    (None, None) => return None,
                }
            }
        };
        Some(FileChange { path, kind })
    }
}

/// Tree-diff state reused across the commits of one call.
struct Differ {
    cache: gix::diff::blob::Platform,
    state: gix::diff::tree::State,
}

impl Differ {
    fn new(ws: &Ws) -> Result<Differ, GitError> {
        let cache = ws
            .repo
            .diff_resource_cache_for_tree_diff()
            .map_err(|e| ws.err("prepare the diff of trees", e))?;
        Ok(Differ {
            cache,
            state: Default::default(),
        })
    }

    /// The changes from `old` (`None`: the empty tree) to `new`, with rename detection.
    /// When similarity cannot be computed (blobs missing, as in a partial clone), only exact
    /// renames are detected.
    fn diff(
        &mut self,
        ws: &Ws,
        old: Option<gix::Tree<'_>>,
        new: gix::Tree<'_>,
        commit: ObjectId,
    ) -> Result<Vec<RawChange>, GitError> {
        let old = old.unwrap_or_else(|| ws.repo.empty_tree());
        let similar = gix::diff::Rewrites::default();
        match self.diff_with(ws, &old, &new, similar) {
            Ok(changes) => Ok(changes),
            Err(_) => {
                let exact = gix::diff::Rewrites {
                    percentage: None,
                    ..Default::default()
                };
                self.diff_with(ws, &old, &new, exact)
                    .map_err(|e| ws.err(format!("diff commit {commit} against its parent"), e))
            }
        }
    }

    fn diff_with(
        &mut self,
        ws: &Ws,
        old: &gix::Tree<'_>,
        new: &gix::Tree<'_>,
        rewrites: gix::diff::Rewrites,
    ) -> Result<Vec<RawChange>, gix::Error> {
        use gix::objs::TreeRefIter;
        let mut out = Vec::new();
        let result = gix::diff::tree_with_rewrites(
            TreeRefIter::from_bytes(&old.data, old.id.kind()),
            TreeRefIter::from_bytes(&new.data, new.id.kind()),
            &mut self.cache,
            &mut self.state,
            &ws.repo.objects,
            |change| {
                if let Some(change) = raw_change(change) {
                    out.push(change);
                }
                Ok(std::ops::ControlFlow::Continue(()))
            },
            gix::diff::tree_with_rewrites::Options {
                location: Some(gix::diff::tree::recorder::Location::Path),
                rewrites: Some(rewrites),
            },
        );
        self.cache.clear_resource_cache_keep_allocation();
        match result {
            Ok(_) => Ok(out),
            Err(gix::diff::tree::Error::Failure(err)) => Err(err),
            Err(err @ gix::diff::tree::Error::Cancelled) => Err(gix::Error::from_error(err)),
        }
    }
}

/// Converts one `gix` change to a file change; directories yield nothing.
fn raw_change(change: ChangeRef<'_>) -> Option<RawChange> {
    let path = |location: &gix::bstr::BStr| location.to_str_lossy().into_owned();
    match change {
        ChangeRef::Addition {
            location,
            entry_mode,
            ..
        } => (!entry_mode.is_tree()).then(|| RawChange::Added(path(location))),
        ChangeRef::Deletion {
            location,
            entry_mode,
            ..
        } => (!entry_mode.is_tree()).then(|| RawChange::Deleted(path(location))),
        ChangeRef::Modification {
            location,
            previous_entry_mode,
            entry_mode,
            ..
        } => match (previous_entry_mode.is_tree(), entry_mode.is_tree()) {
            (false, false) => Some(RawChange::Modified(path(location))),
            (true, false) => Some(RawChange::Added(path(location))),
            (false, true) => Some(RawChange::Deleted(path(location))),
            (true, true) => None,
        },
        ChangeRef::Rewrite {
            source_location,
            location,
            entry_mode,
            copy,
            ..
        } => {
            if entry_mode.is_tree() {
                None
            } else if copy {
                Some(RawChange::Added(path(location)))
            } else {
                Some(RawChange::Renamed {
                    from: path(source_location),
                    to: path(location),
                })
            }
        }
    }
}

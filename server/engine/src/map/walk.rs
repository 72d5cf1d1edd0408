//! Walking the working tree with the `ignore` crate, with git's ignore semantics.
//!
//! Rules (cases B13 and B15 in shared/cases; `git check-ignore` is the oracle in tests):
//! - Inside a git repository (`.git` directory or file, for worktrees and submodules, at
//!   the root or above it): nested `.gitignore` files with negations and anchored
//!   patterns, `.git/info/exclude` and the global excludes file apply, and ignore files
//!   above the repository root do not.
//! - Outside any repository (an extracted tarball): the workspace's own `.gitignore`
//!   files still apply, and nothing above the workspace root is consulted.
//! - `.lociignore` files (gitignore syntax) apply everywhere and win over `.gitignore`.
//! - `.git` (directory or file), `.loci`, `.hg`, `.svn` and `.jj` are never walked. Other hidden
//!   files are walked (git tracks them). Symbolic links are not followed (so loops cannot
//!   hang and links cannot lead outside the workspace); they are counted as skipped.
//! - Files whose path matches a secret glob ([`crate::secrets`]) are skipped without being
//!   opened, with reason `secret`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use serde::Serialize;

use crate::secrets::SecretRules;

/// A file the walk found, with what `stat` said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkedFile {
    /// Repo-relative, `/`-separated.
    pub path: String,
    /// Absolute path.
    pub abs: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
}

/// The time a scan compares to tell whether a file changed, in nanoseconds since the Unix
/// epoch (0 if unknown): the later of its modification time and, on Unix, its
/// status-change time (`st_ctime`, which a rename, a `write` and a `chmod` set and no
/// tool sets back). A modification time alone missed two files of the same size written
/// in one clock tick and then swapped by renames (`mv a t; mv b a; mv t b`, or a git
/// checkout): both kept their size and time, and the map kept the old code. Git's index
/// compares `st_ctime` for the same reason. Stored in `files.mtime_ns`.
pub fn change_time_ns(meta: &std::fs::Metadata) -> i64 {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let changed = meta
            .ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.ctime_nsec());
        modified.max(changed)
    }
    #[cfg(not(unix))]
    {
        modified
    }
}

/// Why a path is not in the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Larger than `scan.max_file_size`.
    TooLarge,
    /// Contains a NUL byte in its first 8 KiB (git's heuristic).
    Binary,
    /// A symbolic link (not followed).
    Symlink,
    /// Could not be read (permissions, I/O error).
    Unreadable,
    /// Disappeared between the walk and the read.
    Vanished,
    /// Beyond `scan.max_files`.
    FileLimit,
    /// A secret by its path or its text ([`crate::secrets`]): never indexed or served.
    Secret,
    /// Not a regular file: a FIFO, socket or device node. Reading a FIFO would block the
    /// scan until a writer opens it, so it is skipped and counted, never read.
    NotRegular,
    /// A path that is not valid UTF-8. The map, LSP URIs and JSON hold UTF-8 paths; two such
    /// names decoded lossily became one path and failed the whole scan on its `UNIQUE`
    /// constraint. The skip's path shows each invalid byte as `\xNN`.
    NonUtf8Path,
}

impl std::str::FromStr for SkipReason {
    type Err = String;

    fn from_str(s: &str) -> Result<SkipReason, String> {
        [
            SkipReason::TooLarge,
            SkipReason::Binary,
            SkipReason::Symlink,
            SkipReason::Unreadable,
            SkipReason::Vanished,
            SkipReason::FileLimit,
            SkipReason::Secret,
            SkipReason::NotRegular,
            SkipReason::NonUtf8Path,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
        .ok_or_else(|| format!("unknown skip reason `{s}`"))
    }
}

impl SkipReason {
    /// The snake_case name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too_large",
            SkipReason::Binary => "binary",
            SkipReason::Symlink => "symlink",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Vanished => "vanished",
            SkipReason::FileLimit => "file_limit",
            SkipReason::Secret => "secret",
            SkipReason::NotRegular => "not_regular",
            SkipReason::NonUtf8Path => "non_utf8_path",
        }
    }
}

/// A path that was skipped, with why and, for errors, the message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skip {
    /// Repo-relative path (or the absolute path when outside the root).
    pub path: String,
    /// Why.
    pub reason: SkipReason,
    /// Details (the OS error), if any.
    pub detail: Option<String>,
    /// Size in bytes, when known (0 otherwise).
    #[serde(skip)]
    pub size: u64,
    /// Modification time in ns since the epoch, when known (0 otherwise).
    #[serde(skip)]
    pub mtime_ns: i64,
}

/// The walk's result: files sorted by path, and skips sorted by path.
#[derive(Clone, Debug, Default)]
pub struct Walk {
    /// Files to consider, sorted by path.
    pub files: Vec<WalkedFile>,
    /// Skipped paths, sorted by path.
    pub skips: Vec<Skip>,
}

/// Names never walked (a `.git` file, for worktrees, is skipped like the directory).
pub const ALWAYS_SKIPPED_DIRS: [&str; 5] = [".git", ".loci", ".hg", ".svn", ".jj"];

/// True when `dir` or an ancestor contains `.git` (a directory, or a file for worktrees
/// and submodules).
pub fn in_git_repository(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// Walks `root`. Never fails: unreadable directories become [`SkipReason::Unreadable`].
/// `max_file_size` in bytes; `max_files` caps how many files are returned: the walk
/// stops as soon as it finds one more (a home directory is not walked to the end) and
/// reports the unwalked remainder as one entry for the root with
/// [`SkipReason::FileLimit`]. Which files are kept then depends on the walk order.
/// Files matching a path rule of `secrets` are skipped with [`SkipReason::Secret`].
pub fn walk(
    root: &Path,
    max_file_size: u64,
    max_files: u64,
    threads: usize,
    secrets: &SecretRules,
) -> Walk {
    let git = in_git_repository(root);
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .git_ignore(true)
        .git_exclude(git)
        .git_global(git)
        .require_git(git)
        .parents(git)
        .ignore(false)
        .add_custom_ignore_filename(".lociignore")
        .threads(threads)
        .filter_entry(|e| !ALWAYS_SKIPPED_DIRS.iter().any(|d| e.file_name() == *d));
    let state = Mutex::new((Vec::new(), Vec::new()));
    let found = AtomicU64::new(0);
    let stopped = AtomicBool::new(false);
    builder.build_parallel().run(|| {
        let state = &state;
        let found = &found;
        let stopped = &stopped;
        Box::new(move |entry| {
            let (file, skip) = classify(root, entry, max_file_size, secrets);
            if file.is_some() || skip.is_some() {
                let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(f) = file {
                    if found.fetch_add(1, Ordering::Relaxed) + 1 > max_files {
                        stopped.store(true, Ordering::Relaxed);
                        return ignore::WalkState::Quit;
                    }
                    guard.0.push(f);
                }
                if let Some(s) = skip {
                    guard.1.push(s);
                }
            }
            ignore::WalkState::Continue
        })
    });
    let (mut files, mut skips): (Vec<WalkedFile>, Vec<Skip>) =
        state.into_inner().unwrap_or_else(|p| p.into_inner());
    files.sort_by(|a, b| a.path.cmp(&b.path));
    if stopped.load(Ordering::Relaxed) {
        skips.push(Skip {
            path: String::new(),
            reason: SkipReason::FileLimit,
            detail: Some(format!(
                "the walk stopped after {}; the rest of the tree was not listed",
                crate::words::count(max_files, "file")
            )),
            size: 0,
            mtime_ns: 0,
        });
    }
    skips.sort_by(|a, b| a.path.cmp(&b.path));
    Walk { files, skips }
}

/// Why a listed file whose metadata cannot be read is skipped: gone since its directory was
/// listed ([`SkipReason::Vanished`]), or there and not ours to read
/// ([`SkipReason::Unreadable`]): a file in a directory without execute permission cannot be
/// stat'ed (EACCES): it is there, so it is not `vanished`.
fn metadata_skip(err: &ignore::Error) -> SkipReason {
    match err.io_error().map(std::io::Error::kind) {
        Some(std::io::ErrorKind::NotFound) => SkipReason::Vanished,
        _ => SkipReason::Unreadable,
    }
}

/// What a file that is neither a regular file, a directory nor a symbolic link is.
fn special_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    let _ = file_type;
    "not a regular file"
}

fn classify(
    root: &Path,
    entry: Result<ignore::DirEntry, ignore::Error>,
    max_file_size: u64,
    secrets: &SecretRules,
) -> (Option<WalkedFile>, Option<Skip>) {
    let entry = match entry {
        Ok(entry) => entry,
        Err(err) => {
            let path = error_path(&err)
                .map(|p| relative(root, &p))
                .unwrap_or_default();
            return (
                None,
                Some(Skip {
                    path,
                    reason: SkipReason::Unreadable,
                    detail: Some(err.to_string()),
                    size: 0,
                    mtime_ns: 0,
                }),
            );
        }
    };
    let Some(file_type) = entry.file_type() else {
        return (None, None); // stdin; cannot happen for a directory walk
    };
    let path = relative(root, entry.path());
    if file_type.is_symlink() {
        return (
            None,
            Some(Skip {
                path,
                reason: SkipReason::Symlink,
                detail: None,
                size: 0,
                mtime_ns: 0,
            }),
        );
    }
    if file_type.is_dir() {
        return (None, None);
    }
    if !file_type.is_file() {
        return (
            None,
            Some(Skip {
                path,
                reason: SkipReason::NotRegular,
                detail: Some(special_kind(&file_type).into()),
                size: 0,
                mtime_ns: 0,
            }),
        );
    }
    // A path that decoded without U+FFFD was UTF-8: only the others are looked at again.
    if path.contains('\u{FFFD}') {
        let under = entry.path().strip_prefix(root).unwrap_or(entry.path());
        if under.to_str().is_none() {
            return (
                None,
                Some(Skip {
                    path: escaped(under),
                    reason: SkipReason::NonUtf8Path,
                    detail: Some("the path is not valid UTF-8".into()),
                    size: 0,
                    mtime_ns: 0,
                }),
            );
        }
    }
    if let Some(glob) = secrets.path_rule(&path) {
        return (
            None,
            Some(Skip {
                path,
                reason: SkipReason::Secret,
                detail: Some(format!("matches the secret pattern `{glob}`")),
                size: 0,
                mtime_ns: 0,
            }),
        );
    }
    let meta = match entry.metadata() {
        Ok(m) => m,
        Err(err) => {
            return (
                None,
                Some(Skip {
                    path,
                    reason: metadata_skip(&err),
                    detail: Some(err.to_string()),
                    size: 0,
                    mtime_ns: 0,
                }),
            );
        }
    };
    let mtime_ns = change_time_ns(&meta);
    if meta.len() > max_file_size {
        return (
            None,
            Some(Skip {
                path,
                reason: SkipReason::TooLarge,
                detail: Some(format!("{} bytes", meta.len())),
                size: meta.len(),
                mtime_ns,
            }),
        );
    }
    (
        Some(WalkedFile {
            path,
            abs: entry.into_path(),
            size: meta.len(),
            mtime_ns,
        }),
        None,
    )
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

/// `path` relative to `root`, `/`-separated; the path itself if it is not under `root`.
pub fn relative(root: &Path, path: &Path) -> String {
    // A walked path is `root` joined with names: on Unix, the bytes after `root/` are the
    // stored form already when they are UTF-8 and hold no `.` or empty component; parsing
    // components was a seventh of a scan that changed nothing.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let (bytes, root) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
        let rest = if root.is_empty() {
            Some(bytes)
        } else if root.ends_with(b"/") {
            bytes.strip_prefix(root)
        } else {
            bytes
                .strip_prefix(root)
                .and_then(|rest| rest.strip_prefix(b"/"))
        };
        if let Some(rest) = rest
            && rest
                .split(|&b| b == b'/')
                .all(|name| !name.is_empty() && name != b".")
            && let Ok(rest) = std::str::from_utf8(rest)
        {
            return rest.to_owned();
        }
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut out = String::new();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&c.as_os_str().to_string_lossy());
    }
    out
}

/// `path` (`/`-separated) with every byte that is not valid UTF-8 written `\xNN`.
/// (Elsewhere than on Unix, where a path is not bytes: the lossy decoding.)
fn escaped(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in path.as_os_str().as_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().into_owned()
    }
}

/// Counts skips by reason.
pub fn count_skips(skips: &[Skip]) -> BTreeMap<SkipReason, u64> {
    let mut out = BTreeMap::new();
    for s in skips {
        *out.entry(s.reason).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in a directory without execute permission cannot be stat'ed (EACCES) and is
    /// `unreadable`, not `vanished` as if deleted. (The walk's own errors are built here:
    /// running as root, the tests would stat it regardless.)
    #[test]
    fn fault_a_file_in_a_directory_without_execute_permission_was_reported_vanished() {
        let denied = ignore::Error::WithPath {
            path: "locked/a.py".into(),
            err: Box::new(ignore::Error::Io(std::io::Error::from_raw_os_error(13))),
        };
        assert_eq!(metadata_skip(&denied), SkipReason::Unreadable);
        let gone = ignore::Error::WithPath {
            path: "gone.py".into(),
            err: Box::new(ignore::Error::Io(std::io::Error::from(
                std::io::ErrorKind::NotFound,
            ))),
        };
        assert_eq!(metadata_skip(&gone), SkipReason::Vanished);
    }

    /// The byte shortcut of `relative` gives what the components give, and leaves the
    /// paths it cannot take (`.` or empty components) to them.
    #[test]
    fn relative_paths_are_the_components_joined_with_slashes() {
        let cases = [
            ("/r", "/r/a/b.py", "a/b.py"),
            ("/r/", "/r/a/b.py", "a/b.py"),
            ("", "a/b.py", "a/b.py"),
            ("/r", "/r/a//b.py", "a/b.py"),
            ("/r", "/r/./a/b.py", "a/b.py"),
            ("/r", "/r/a/b/", "a/b"),
            ("/r", "/r", ""),
            ("/r", "/r/über/ä.py", "über/ä.py"),
            ("/r", "/r/../a.py", "../a.py"),
        ];
        for (root, path, want) in cases {
            assert_eq!(
                relative(Path::new(root), Path::new(path)),
                want,
                "{root} {path}"
            );
        }
    }
}

//! Git history read through `gix` against repositories built with the git CLI (states:
//! unborn, detached, no repository; renames, `since`, limits, shallow clones, workspaces in
//! a subdirectory, linked worktrees, file history across renames).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use loci_engine::map::git::{
    ChangeKind, CommitInfo, FileChange, GitError, HeadWatch, History, RepoState, file_history,
    history, renamed_to, repo_state,
};

/// The first commit's time; each commit is one minute later.
const EPOCH: u64 = 1_700_000_000;

/// A repository built with the git CLI, with deterministic authors and dates.
struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    commits: u64,
}

impl Repo {
    /// `git init -b main` in a fresh temporary directory.
    fn init() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        let repo = Repo {
            _dir: dir,
            root,
            commits: 0,
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A sibling path of the repository inside the same temporary directory.
    fn sibling(&self, name: &str) -> PathBuf {
        self.root.parent().unwrap().join(name)
    }

    fn git(&self, args: &[&str]) -> String {
        git_in(&self.root, args, EPOCH + self.commits * 60)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Stages everything and commits; returns the new commit's full id.
    fn commit(&mut self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.commits += 1;
        self.rev("HEAD")
    }

    fn rev(&self, spec: &str) -> String {
        self.git(&["rev-parse", spec]).trim().to_owned()
    }
}

/// Runs git in `dir` with no user or system configuration and fixed identities and dates.
fn git_in(dir: &Path, args: &[&str], time: u64) -> String {
    let date = format!("{time} +0000");
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Ann Example",
            "-c",
            "user.email=ann@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Ten lines, so that a one-line edit keeps a renamed file 90% similar.
fn ten_lines(tag: &str) -> String {
    (0..10).map(|i| format!("def f{i}_{tag}():\n")).collect()
}

fn added(path: &str) -> FileChange {
    FileChange {
        path: path.to_owned(),
        kind: ChangeKind::Added,
    }
}

fn modified(path: &str) -> FileChange {
    FileChange {
        path: path.to_owned(),
        kind: ChangeKind::Modified,
    }
}

fn deleted(path: &str) -> FileChange {
    FileChange {
        path: path.to_owned(),
        kind: ChangeKind::Deleted,
    }
}

fn renamed(from: &str, to: &str) -> FileChange {
    FileChange {
        path: to.to_owned(),
        kind: ChangeKind::Renamed {
            from: from.to_owned(),
        },
    }
}

fn hashes(commits: &[CommitInfo]) -> Vec<&str> {
    commits.iter().map(|c| c.hash.as_str()).collect()
}

fn summaries(commits: &[CommitInfo]) -> Vec<&str> {
    commits.iter().map(|c| c.summary.as_str()).collect()
}

/// A repository with commits `c1` .. `cN`, each adding `fI.txt`.
fn linear(n: usize) -> (Repo, Vec<String>) {
    let mut repo = Repo::init();
    let ids = (1..=n)
        .map(|i| {
            repo.write(&format!("f{i}.txt"), &format!("{i}\n"));
            repo.commit(&format!("c{i}"))
        })
        .collect();
    (repo, ids)
}

#[test]
fn b24a_unborn_head_is_an_empty_history_not_an_error() {
    let repo = Repo::init();
    repo.write("a.py", "x = 1\n");

    assert_eq!(
        repo_state(&repo.root).unwrap(),
        RepoState::Unborn {
            branch: Some("main".to_owned())
        }
    );
    assert_eq!(history(&repo.root, None, 10).unwrap(), History::default());
    assert_eq!(
        history(
            &repo.root,
            Some("0123456789abcdef0123456789abcdef01234567"),
            10
        )
        .unwrap(),
        History::default()
    );
    assert_eq!(file_history(&repo.root, "a.py", 10).unwrap(), Vec::new());
    assert_eq!(renamed_to(&repo.root, "a.py", 10).unwrap(), None);
    assert_eq!(
        serde_json::to_value(repo_state(&repo.root).unwrap()).unwrap(),
        serde_json::json!({ "kind": "unborn", "branch": "main" })
    );
}

#[test]
fn b24b_detached_head_reports_the_commit_and_history_works() {
    let (repo, ids) = linear(2);
    assert_eq!(
        repo_state(&repo.root).unwrap(),
        RepoState::Branch {
            name: "main".to_owned(),
            head: ids[1].clone()
        }
    );

    let first = repo.rev("HEAD~1");
    repo.git(&["checkout", "-q", "--detach", "HEAD~1"]);

    assert_eq!(first, ids[0]);
    assert_eq!(
        repo_state(&repo.root).unwrap(),
        RepoState::Detached {
            head: first.clone()
        }
    );
    let h = history(&repo.root, None, 10).unwrap();
    assert_eq!(hashes(&h.commits), [first.as_str()]);
    assert_eq!(h.commits[0].changes, [added("f1.txt")]);
    assert!(!h.truncated && !h.shallow && !h.since_missing);
}

#[test]
fn b24c_plain_directory_is_not_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();

    assert_eq!(repo_state(dir.path()).unwrap(), RepoState::NotARepository);
    let err = history(dir.path(), None, 10).unwrap_err();
    assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: not a git repository (nor any of its parent directories)",
            dir.path().display()
        )
    );
    assert!(matches!(
        file_history(dir.path(), "a.py", 10),
        Err(GitError::NotARepository { .. })
    ));
    assert!(matches!(
        renamed_to(dir.path(), "a.py", 10),
        Err(GitError::NotARepository { .. })
    ));
    assert_eq!(
        serde_json::to_value(RepoState::NotARepository).unwrap(),
        serde_json::json!({ "kind": "not_a_repository" })
    );
}

#[test]
fn a_missing_workspace_root_is_an_io_error_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = repo_state(&missing).unwrap_err();
    assert!(matches!(err, GitError::Io { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("{}: ", missing.display())),
        "{err}"
    );
}

#[test]
fn added_modified_and_deleted_files_with_commit_metadata() {
    let mut repo = Repo::init();
    repo.write("a.py", "a = 1\n");
    repo.write("b.py", "b = 1\n");
    repo.write("dir/c.py", "c = 1\n");
    let c1 = repo.commit("First");
    repo.write("a.py", "a = 2\n");
    std::fs::remove_file(repo.root.join("b.py")).unwrap();
    repo.write("d.py", "completely different content\n");
    let c2 = repo.commit("Second change\n\nWith a body.\n\n");

    let h = history(&repo.root, None, 10).unwrap();
    assert_eq!(
        h,
        History {
            commits: vec![
                CommitInfo {
                    hash: c1.clone(),
                    parents: vec![],
                    message: "First".to_owned(),
                    summary: "First".to_owned(),
                    author: "Ann Example <ann@example.com>".to_owned(),
                    time: "2023-11-14T22:13:20Z".to_owned(),
                    changes: vec![added("a.py"), added("b.py"), added("dir/c.py")],
                },
                CommitInfo {
                    hash: c2,
                    parents: vec![c1],
                    message: "Second change\n\nWith a body.".to_owned(),
                    summary: "Second change".to_owned(),
                    author: "Ann Example <ann@example.com>".to_owned(),
                    time: "2023-11-14T22:14:20Z".to_owned(),
                    changes: vec![modified("a.py"), deleted("b.py"), added("d.py")],
                },
            ],
            since_missing: false,
            shallow: false,
            truncated: false,
        }
    );
}

#[test]
fn git_mv_with_a_small_edit_is_a_rename() {
    let mut repo = Repo::init();
    repo.write("a.py", &ten_lines("a"));
    repo.commit("add a");
    repo.git(&["mv", "a.py", "b.py"]);
    repo.write("b.py", &ten_lines("a").replace("f9_a", "f9_changed"));
    repo.commit("move a to b");

    // git itself agrees that this is a rename.
    let status = repo.git(&["diff", "--name-status", "-M", "HEAD~1", "HEAD"]);
    assert!(
        status.starts_with("R0") && status.ends_with("a.py\tb.py\n"),
        "{status}"
    );

    repo.write("pkg/x.py", &ten_lines("x"));
    repo.write("pkg/y.py", &ten_lines("y"));
    repo.commit("add pkg");
    repo.git(&["mv", "pkg", "lib"]);
    repo.commit("rename the directory");

    let h = history(&repo.root, None, 10).unwrap();
    assert_eq!(h.commits[1].changes, [renamed("a.py", "b.py")]);
    assert_eq!(
        h.commits[3].changes,
        [
            renamed("pkg/x.py", "lib/x.py"),
            renamed("pkg/y.py", "lib/y.py")
        ]
    );
    assert_eq!(
        serde_json::to_value(&h.commits[1].changes[0]).unwrap(),
        serde_json::json!({ "path": "b.py", "kind": "renamed", "from": "a.py" })
    );
}

#[test]
fn a_rewrite_below_half_similar_is_a_delete_and_an_add() {
    let mut repo = Repo::init();
    repo.write("a.py", &ten_lines("a"));
    repo.commit("add a");
    repo.git(&["mv", "a.py", "b.py"]);
    repo.write("b.py", &ten_lines("b"));
    repo.commit("move and rewrite");

    let h = history(&repo.root, None, 10).unwrap();
    assert_eq!(h.commits[1].changes, [deleted("a.py"), added("b.py")]);
}

#[test]
fn since_is_exclusive_and_commits_are_oldest_first() {
    let (repo, ids) = linear(4);

    let h = history(&repo.root, Some(&ids[1]), 10).unwrap();
    assert_eq!(hashes(&h.commits), [ids[2].as_str(), ids[3].as_str()]);
    assert!(!h.since_missing && !h.truncated);

    let abbreviated = history(&repo.root, Some(&ids[1][..8]), 10).unwrap();
    assert_eq!(abbreviated, h);

    let none = history(&repo.root, Some(&ids[3]), 10).unwrap();
    assert_eq!(none, History::default());
}

#[test]
fn unknown_since_falls_back_to_the_last_commits_and_says_so() {
    let (repo, ids) = linear(3);
    for since in ["0123456789abcdef0123456789abcdef01234567", "main~1", ""] {
        let h = history(&repo.root, Some(since), 2).unwrap();
        assert_eq!(
            hashes(&h.commits),
            [ids[1].as_str(), ids[2].as_str()],
            "{since}"
        );
        assert!(h.since_missing && h.truncated, "{since}");
    }
}

#[test]
fn since_from_a_rewritten_history_lists_commits_after_the_fork() {
    let (repo, ids) = linear(3);
    // Amend c3: the old c3 still exists as an object but is no longer reachable from HEAD.
    repo.write("f3.txt", "amended\n");
    repo.git(&["commit", "-q", "-a", "--amend", "-m", "c3 amended"]);

    let h = history(&repo.root, Some(&ids[2]), 10).unwrap();
    assert_eq!(summaries(&h.commits), ["c3 amended"]);
    assert!(!h.since_missing);
}

#[test]
fn limit_keeps_the_newest_commits_and_marks_truncation() {
    let (repo, ids) = linear(5);

    let h = history(&repo.root, None, 2).unwrap();
    assert_eq!(hashes(&h.commits), [ids[3].as_str(), ids[4].as_str()]);
    assert!(h.truncated);

    let all = history(&repo.root, None, 5).unwrap();
    assert_eq!(summaries(&all.commits), ["c1", "c2", "c3", "c4", "c5"]);
    assert!(!all.truncated);

    let zero = history(&repo.root, None, 0).unwrap();
    assert!(zero.commits.is_empty() && zero.truncated);

    let since = history(&repo.root, Some(&ids[0]), 3).unwrap();
    assert_eq!(summaries(&since.commits), ["c3", "c4", "c5"]);
    assert!(since.truncated);
}

#[test]
fn merge_commits_are_diffed_against_their_first_parent() {
    let mut repo = Repo::init();
    repo.write("m.py", "m = 1\n");
    repo.write("s.py", "s = 1\n");
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("s.py", "s = 2\n");
    let side = repo.commit("side");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("m.py", "m = 2\n");
    let main = repo.commit("main");
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    repo.commits += 1;

    let h = history(&repo.root, None, 10).unwrap();
    assert_eq!(
        summaries(&h.commits),
        ["base", "side", "main", "merge side"]
    );
    let merge = &h.commits[3];
    assert_eq!(merge.parents, [main, side]);
    assert_eq!(merge.changes, [modified("s.py")]);

    // The merge took the side's `s.py` unchanged: only the side commit touched it.
    let fh = file_history(&repo.root, "s.py", 10).unwrap();
    assert_eq!(summaries(&fh), ["side", "base"]);
}

#[test]
fn shallow_clone_stops_at_the_boundary() {
    let (repo, ids) = linear(4);
    let clone = repo.sibling("clone");
    let url = format!("file://{}", repo.root.display());
    git_in(
        repo.root.parent().unwrap(),
        &["clone", "-q", "--depth", "2", &url, "clone"],
        EPOCH,
    );

    let h = history(&clone, None, 10).unwrap();
    assert_eq!(hashes(&h.commits), [ids[2].as_str(), ids[3].as_str()]);
    assert!(h.shallow && !h.truncated && !h.since_missing);
    // The boundary commit's parent is not in the clone: its changes are unknown.
    assert_eq!(h.commits[0].parents, [ids[1].clone()]);
    assert_eq!(h.commits[0].changes, []);
    assert_eq!(h.commits[1].changes, [added("f4.txt")]);

    let newest = history(&clone, None, 1).unwrap();
    assert_eq!(hashes(&newest.commits), [ids[3].as_str()]);
    assert!(newest.truncated && !newest.shallow);

    let beyond = history(&clone, Some(&ids[0]), 10).unwrap();
    assert!(beyond.since_missing && beyond.shallow);
    assert_eq!(beyond.commits.len(), 2);

    let fh = file_history(&clone, "f4.txt", 10).unwrap();
    assert_eq!(hashes(&fh), [ids[3].as_str()]);
    assert_eq!(file_history(&clone, "f3.txt", 10).unwrap(), []);
    assert_eq!(
        repo_state(&clone).unwrap(),
        RepoState::Branch {
            name: "main".to_owned(),
            head: ids[3].clone()
        }
    );
}

#[test]
fn workspace_in_a_subdirectory_sees_paths_relative_to_it() {
    let mut repo = Repo::init();
    repo.write("top.py", "top = 1\n");
    repo.write("incoming.py", &ten_lines("in"));
    repo.write("sub/x.py", "x = 1\n");
    repo.write("sub/outgoing.py", &ten_lines("out"));
    repo.write("sub/inner/y.py", &ten_lines("y"));
    repo.commit("base");
    repo.write("top.py", "top = 2\n");
    repo.write("sub/x.py", "x = 2\n");
    repo.git(&["mv", "incoming.py", "sub/incoming.py"]);
    repo.git(&["mv", "sub/outgoing.py", "outgoing.py"]);
    repo.git(&["mv", "sub/inner/y.py", "sub/y.py"]);
    repo.commit("shuffle");
    repo.write("top.py", "top = 3\n");
    repo.commit("outside only");

    let ws = repo.root.join("sub");
    let h = history(&ws, None, 10).unwrap();
    assert_eq!(summaries(&h.commits), ["base", "shuffle", "outside only"]);
    assert_eq!(
        h.commits[0].changes,
        [added("inner/y.py"), added("outgoing.py"), added("x.py")]
    );
    assert_eq!(
        h.commits[1].changes,
        [
            added("incoming.py"),
            deleted("outgoing.py"),
            modified("x.py"),
            renamed("inner/y.py", "y.py"),
        ]
    );
    assert_eq!(h.commits[2].changes, []);

    assert_eq!(
        summaries(&file_history(&ws, "x.py", 10).unwrap()),
        ["shuffle", "base"]
    );
    assert_eq!(
        summaries(&file_history(&ws, "y.py", 10).unwrap()),
        ["shuffle", "base"]
    );
    assert_eq!(
        renamed_to(&ws, "inner/y.py", 10).unwrap(),
        Some("y.py".to_owned())
    );
    // Moved out of the workspace: there is no workspace path to suggest.
    assert_eq!(renamed_to(&ws, "outgoing.py", 10).unwrap(), None);
    assert!(matches!(repo_state(&ws).unwrap(), RepoState::Branch { .. }));
}

#[test]
fn linked_worktree_reads_its_own_head() {
    let (repo, ids) = linear(2);
    let wt = repo.sibling("wt");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        wt.to_str().unwrap(),
    ]);
    assert!(wt.join(".git").is_file());
    std::fs::write(wt.join("feature.txt"), "f\n").unwrap();
    git_in(&wt, &["add", "-A"], EPOCH + 600);
    git_in(&wt, &["commit", "-q", "-m", "on feature"], EPOCH + 600);
    let tip = git_in(&wt, &["rev-parse", "HEAD"], EPOCH).trim().to_owned();

    assert_eq!(
        repo_state(&wt).unwrap(),
        RepoState::Branch {
            name: "feature".to_owned(),
            head: tip
        }
    );
    let h = history(&wt, Some(&ids[1]), 10).unwrap();
    assert_eq!(summaries(&h.commits), ["on feature"]);
    assert_eq!(h.commits[0].changes, [added("feature.txt")]);
    // The main checkout is still on `main`.
    assert_eq!(
        summaries(&history(&repo.root, None, 10).unwrap().commits),
        ["c1", "c2"]
    );
}

#[test]
fn file_history_follows_a_rename_back() {
    let mut repo = Repo::init();
    repo.write("a.py", &ten_lines("a"));
    let c1 = repo.commit("add a");
    repo.write("a.py", &ten_lines("a").replace("f0_a", "f0_edit"));
    let c2 = repo.commit("edit a");
    repo.write("other.py", "o = 1\n");
    repo.commit("unrelated");
    repo.git(&["mv", "a.py", "b.py"]);
    repo.write(
        "b.py",
        &ten_lines("a")
            .replace("f0_a", "f0_edit")
            .replace("f5_a", "f5_b"),
    );
    let c4 = repo.commit("rename a to b");
    repo.write("b.py", &ten_lines("b").replace("f9_b", "f9_final"));
    let c5 = repo.commit("rewrite b");

    let fh = file_history(&repo.root, "b.py", 10).unwrap();
    assert_eq!(hashes(&fh), [c5.as_str(), &c4, &c2, &c1]);
    assert_eq!(fh[1].changes, [renamed("a.py", "b.py")]);

    assert_eq!(
        hashes(&file_history(&repo.root, "b.py", 2).unwrap()),
        [c5.as_str(), &c4]
    );
    assert_eq!(
        hashes(&file_history(&repo.root, "./b.py", 1).unwrap()),
        [c5.as_str()]
    );
    // The old name's own history ends where it was renamed away.
    assert_eq!(
        hashes(&file_history(&repo.root, "a.py", 10).unwrap()),
        [c4.as_str(), &c2, &c1]
    );
    assert_eq!(file_history(&repo.root, "never.py", 10).unwrap(), []);
    assert_eq!(file_history(&repo.root, "b.py", 0).unwrap(), []);
}

#[test]
fn file_history_of_a_directory_and_of_a_deleted_file() {
    let mut repo = Repo::init();
    repo.write("src/a.py", "a = 1\n");
    repo.write("gone.py", "g = 1\n");
    repo.commit("base");
    repo.write("README", "readme\n");
    repo.commit("readme");
    repo.write("src/b.py", "b = 1\n");
    std::fs::remove_file(repo.root.join("gone.py")).unwrap();
    repo.commit("add b, remove gone");

    assert_eq!(
        summaries(&file_history(&repo.root, "src/", 10).unwrap()),
        ["add b, remove gone", "base"]
    );
    let gone = file_history(&repo.root, "gone.py", 10).unwrap();
    assert_eq!(summaries(&gone), ["add b, remove gone", "base"]);
    assert_eq!(gone[0].changes, [deleted("gone.py"), added("src/b.py")]);
}

#[test]
fn path_arguments_must_stay_inside_the_workspace() {
    let (repo, _) = linear(1);
    for path in ["../x.py", "/etc/passwd", "", ".", "a/../../b"] {
        let err = file_history(&repo.root, path, 10).unwrap_err();
        assert!(
            matches!(err, GitError::InvalidPath { .. }),
            "{path}: {err:?}"
        );
        assert!(err.to_string().starts_with("invalid path"), "{err}");
        assert!(matches!(
            renamed_to(&repo.root, path, 10),
            Err(GitError::InvalidPath { .. })
        ));
    }
}

#[test]
fn renamed_to_follows_a_chain_of_renames() {
    let mut repo = Repo::init();
    repo.write("a.py", &ten_lines("a"));
    repo.write("keep.py", "k = 1\n");
    repo.commit("add a");
    repo.git(&["mv", "a.py", "b.py"]);
    repo.commit("a to b");
    repo.write("keep.py", "k = 2\n");
    repo.commit("unrelated");
    repo.git(&["mv", "b.py", "c.py"]);
    repo.write("c.py", &ten_lines("a").replace("f3_a", "f3_c"));
    repo.commit("b to c");

    assert_eq!(
        renamed_to(&repo.root, "a.py", 10).unwrap(),
        Some("c.py".to_owned())
    );
    assert_eq!(
        renamed_to(&repo.root, "b.py", 10).unwrap(),
        Some("c.py".to_owned())
    );
    assert_eq!(renamed_to(&repo.root, "c.py", 10).unwrap(), None);
    assert_eq!(renamed_to(&repo.root, "keep.py", 10).unwrap(), None);
    assert_eq!(renamed_to(&repo.root, "never.py", 10).unwrap(), None);
    // Only the newest commit (b to c) is within the limit.
    assert_eq!(renamed_to(&repo.root, "a.py", 1).unwrap(), None);
    assert_eq!(
        renamed_to(&repo.root, "b.py", 1).unwrap(),
        Some("c.py".to_owned())
    );
}

#[test]
fn partial_clone_without_blobs_still_reports_exact_renames() {
    let mut repo = Repo::init();
    repo.git(&["config", "uploadpack.allowFilter", "true"]);
    repo.write("a.py", &ten_lines("a"));
    repo.write("b.py", &ten_lines("b"));
    repo.commit("add");
    repo.git(&["mv", "a.py", "a2.py"]);
    repo.git(&["mv", "b.py", "b2.py"]);
    repo.write("b2.py", &ten_lines("b").replace("f0_b", "f0_x"));
    repo.commit("moves");
    let url = format!("file://{}", repo.root.display());
    git_in(
        repo.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            "--no-checkout",
            "--filter=blob:none",
            &url,
            "partial",
        ],
        EPOCH,
    );
    let partial = repo.sibling("partial");

    let h = history(&partial, None, 10).unwrap();
    assert_eq!(summaries(&h.commits), ["add", "moves"]);
    // `a.py` moved unchanged (same blob); `b.py`'s similarity needs blobs the clone lacks.
    assert_eq!(
        h.commits[1].changes,
        [renamed("a.py", "a2.py"), deleted("b.py"), added("b2.py")]
    );
}

#[test]
fn history_of_thousands_of_commits_reads_only_the_newest() {
    let repo = Repo::init();
    const N: usize = 3000;
    let mut stream = String::new();
    for i in 0..N {
        let time = EPOCH + i as u64 * 60;
        let data = format!("v{i}\n");
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter Ann Example <ann@example.com> {time} +0000\ndata {}\nc{i}\n",
            format!("c{i}\n").len() - 1
        ));
        stream.push_str(&format!(
            "M 100644 inline src/f{}.txt\ndata {}\n{data}\n",
            i % 50,
            data.len()
        ));
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(&repo.root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());

    let started = std::time::Instant::now();
    let h = history(&repo.root, None, 200).unwrap();
    let elapsed = started.elapsed();
    assert_eq!(h.commits.len(), 200);
    assert!(h.truncated);
    assert_eq!(h.commits[0].summary, format!("c{}", N - 200));
    assert_eq!(h.commits[199].summary, format!("c{}", N - 1));
    assert_eq!(
        h.commits[199].changes,
        [modified(&format!("src/f{}.txt", (N - 1) % 50))]
    );
    // Generous for an unoptimised test build on a loaded machine; it takes a few ms in practice.
    assert!(elapsed.as_secs() < 5, "history took {elapsed:?}");

    let fh = file_history(&repo.root, "src/f0.txt", 10).unwrap();
    assert_eq!(fh.len(), 10);
    assert_eq!(fh[0].summary, format!("c{}", N - 50));
}

/// `HeadWatch` follows `HEAD` through a commit, a checkout of another branch, packed
/// references and a detached `HEAD`, and in a linked worktree (its own `HEAD`, the shared
/// branches); unborn and plain directories have none.
#[test]
fn head_watch_follows_head_through_commits_checkouts_and_packed_refs() {
    let mut repo = Repo::init();
    let watch = HeadWatch::open(&repo.root).expect("a repository");
    assert_eq!(watch.head(), None, "unborn");
    repo.write("a.txt", "a\n");
    let first = repo.commit("first");
    assert_eq!(watch.head().as_deref(), Some(first.as_str()));
    repo.write("a.txt", "b\n");
    let second = repo.commit("second");
    assert_eq!(watch.head().as_deref(), Some(second.as_str()));
    repo.git(&["checkout", "-q", "-b", "side", &first]);
    assert_eq!(watch.head().as_deref(), Some(first.as_str()));
    repo.git(&["pack-refs", "--all"]);
    assert!(!repo.root.join(".git/refs/heads/side").exists());
    assert_eq!(watch.head().as_deref(), Some(first.as_str()), "packed");
    repo.git(&["checkout", "-q", "--detach", &second]);
    assert_eq!(watch.head().as_deref(), Some(second.as_str()), "detached");

    let linked = repo.sibling("linked");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "wt",
        &linked.display().to_string(),
        &first,
    ]);
    let in_worktree = HeadWatch::open(&linked).expect("a linked worktree");
    assert_ne!(in_worktree.git_dir(), in_worktree.common_dir());
    assert_eq!(in_worktree.head().as_deref(), Some(first.as_str()));
    git_in(
        &linked,
        &["commit", "-q", "--allow-empty", "-m", "in the worktree"],
        EPOCH + 600,
    );
    let moved = git_in(&linked, &["rev-parse", "HEAD"], EPOCH + 600);
    assert_eq!(in_worktree.head().as_deref(), Some(moved.trim()));
    assert_eq!(
        watch.head().as_deref(),
        Some(second.as_str()),
        "its own HEAD"
    );

    let plain = tempfile::tempdir().unwrap();
    assert!(HeadWatch::open(plain.path()).is_none());
}

//! The walker against git's own answer (cases B13, B15): `git check-ignore` is the oracle.

use std::path::Path;
use std::process::Command;

use loci_engine::map::{SkipReason, walk};

use crate::fixture::{files, write};

fn git(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
}

fn walked(root: &Path) -> Vec<String> {
    walk(root, 2 << 20, 1_000_000, 1, &Default::default())
        .files
        .into_iter()
        .map(|f| f.path)
        .collect()
}

/// True when `git check-ignore` says the path is ignored.
fn git_ignores(root: &Path, rel: &str) -> bool {
    git(root, &["check-ignore", "-q", "--no-index", rel])
        .status
        .success()
}

#[test]
fn b13_nested_negation_and_anchored_patterns_match_git_check_ignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    write(root, ".gitignore", "**/vendor/\n/gen/**\n");
    write(root, "a/.gitignore", "!vendor\n");
    write(root, "a/vendor/f.rs", "fn f() {}\n");
    write(root, "b/vendor/g.rs", "fn g() {}\n");
    write(root, "gen/x.rs", "fn x() {}\n");
    write(root, "lib/gen/y.rs", "fn y() {}\n");
    write(root, "web/.gitignore", ".output\n");
    write(root, "web/.output/bundle.js", "x()\n");

    let files = walked(root);
    for rel in [
        "a/vendor/f.rs",
        "b/vendor/g.rs",
        "gen/x.rs",
        "lib/gen/y.rs",
        "web/.output/bundle.js",
    ] {
        assert_eq!(
            !files.contains(&rel.to_string()),
            git_ignores(root, rel),
            "loci and git check-ignore disagree on {rel}; loci walked {files:?}"
        );
    }
    let sources: Vec<&String> = files
        .iter()
        .filter(|p| !p.ends_with(".gitignore"))
        .collect();
    assert_eq!(sources, ["a/vendor/f.rs", "lib/gen/y.rs"]);
}

#[test]
fn b15a_gitignore_without_git_directory_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    write(&root, ".gitignore", "target/\n");
    write(&root, "src/a.rs", "fn a() {}\n");
    write(&root, "target/gen.rs", "fn gen() {}\n");
    assert_eq!(walked(&root), [".gitignore", "src/a.rs"]);
}

#[test]
fn b15b_ignore_files_above_the_repository_root_do_not_blind_the_walk() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "*\n");
    let root = dir.path().join("proj");
    write(&root, "src/a.rs", "fn a() {}\n");
    git(&root, &["init", "-q"]);
    assert_eq!(walked(&root), ["src/a.rs"]);
}

#[test]
fn lociignore_applies_and_git_info_exclude_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    files(
        root,
        "
//- .lociignore
generated/
//- .git/info/exclude
scratch.py
//- generated/big.py
x = 1
//- scratch.py
x = 1
//- keep.py
x = 1
",
    );
    assert_eq!(walked(root), [".lociignore", "keep.py"]);
}

#[test]
fn dot_git_file_worktree_is_treated_as_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main");
    write(&main, "a.py", "x = 1\n");
    write(&main, ".gitignore", "ignored.py\n");
    git(&main, &["init", "-q"]);
    git(&main, &["add", "."]);
    git(
        &main,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    );
    let wt = dir.path().join("wt");
    let out = git(&main, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(wt.join(".git").is_file());
    write(&wt, "ignored.py", "x = 2\n");
    assert_eq!(walked(&wt), [".gitignore", "a.py"]);
}

#[cfg(unix)]
#[test]
fn symlink_loops_do_not_hang_and_links_are_counted_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/x.py", "x = 1\n");
    std::os::unix::fs::symlink(root.join("a"), root.join("a/loop")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("outside")).unwrap();
    let w = walk(root, 2 << 20, 1_000_000, 2, &Default::default());
    assert_eq!(
        w.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["a/x.py"]
    );
    let skips: Vec<(&str, SkipReason)> = w
        .skips
        .iter()
        .map(|s| (s.path.as_str(), s.reason))
        .collect();
    assert_eq!(
        skips,
        [
            ("a/loop", SkipReason::Symlink),
            ("outside", SkipReason::Symlink)
        ]
    );
}

#[test]
fn files_over_the_size_cap_are_skipped_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "small.py", "x = 1\n");
    write(root, "big.py", &"x = 1\n".repeat(100));
    let w = walk(root, 100, 1_000_000, 1, &Default::default());
    assert_eq!(
        w.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["small.py"]
    );
    assert_eq!(w.skips.len(), 1);
    assert_eq!(w.skips[0].path, "big.py");
    assert_eq!(w.skips[0].reason, SkipReason::TooLarge);
    assert_eq!(w.skips[0].detail.as_deref(), Some("600 bytes"));
}

#[test]
fn the_file_limit_bounds_the_walk() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..10 {
        write(root, &format!("f{i}.py"), "x = 1\n");
    }
    let w = walk(root, 2 << 20, 4, 1, &Default::default());
    assert_eq!(w.files.len(), 4);
    let limited: Vec<&str> = w
        .skips
        .iter()
        .filter(|s| s.reason == SkipReason::FileLimit)
        .map(|s| s.path.as_str())
        .collect();
    // The walk stopped at the cap: the unwalked remainder is one entry for the root.
    assert_eq!(limited, [""]);
}

/// Fault: a FIFO (`mkfifo fifo.py`) was neither mapped nor counted as skipped; reading it
/// would block the scan until a writer opened it.
#[test]
fn fault_a_fifo_was_neither_mapped_nor_counted_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "x = 1\n");
    let made = Command::new("mkfifo")
        .arg(root.join("fifo.py"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let w = walk(root, 2 << 20, 1_000_000, 1, &Default::default());
    assert_eq!(
        w.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["a.py"]
    );
    let skips: Vec<(&str, SkipReason, Option<&str>)> = w
        .skips
        .iter()
        .map(|s| (s.path.as_str(), s.reason, s.detail.as_deref()))
        .collect();
    assert_eq!(skips, [("fifo.py", SkipReason::NotRegular, Some("a FIFO"))]);
    assert_eq!(SkipReason::NotRegular.as_str(), "not_regular");
    assert_eq!("not_regular".parse(), Ok(SkipReason::NotRegular));
}

//! The command line and secrets (issue 9, item 5): `loci scan` counts secret files as
//! skipped, `remember --file` reads the file the user named (a read they asked for, even
//! outside the workspace) but refuses a body holding a credential, and subjects outside
//! the workspace are refused with exit code 2.

use std::path::Path;
use std::process::{Command, Output};

use crate::fixture::write;

fn loci(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(args)
        .current_dir(dir)
        .env("LOCI_AUTHOR", "human:test")
        .env_remove("LOCI_SESSION")
        .env_remove("LOCI_DB")
        .output()
        .expect("loci runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn scan_counts_secret_files_and_remember_refuses_a_credential_from_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    write(&root, "src/app.py", "def main():\n    pass\n");
    write(&root, ".env", "TOKEN=1\n");
    write(&root, "keys/deploy.key", "k\n");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let scan = loci(&root, &["scan"]);
    assert_eq!(scan.status.code(), Some(0), "{}", stderr(&scan));
    let out = String::from_utf8_lossy(&scan.stdout);
    assert!(out.contains("skipped: 2 secret"), "{out}");

    // A body file outside the workspace is read: the user asked for it.
    write(dir.path(), "notes.md", "`main()` starts the app.\n");
    let ok = loci(&root, &["remember", "src/app.py", "--file", "../notes.md"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    // One holding a credential is refused, with the rule and position, not the token.
    let key = ["AKIA", "Q7WJ2M5XRT3K9HBN"].concat();
    write(
        dir.path(),
        "leak.md",
        &format!("Deploy notes\n\nkey: {key}\n"),
    );
    let refused = loci(&root, &["remember", "src/app.py", "--file", "../leak.md"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        stderr(&refused).lines().next().unwrap_or_default(),
        "loci: invalid argument `body`: contains a secret (aws_access_key_id) at line 3, \
         column 6; loci does not store credentials in memory. Remove it (or put a placeholder \
         such as <TOKEN> in its place) and write again"
    );
    let history = loci(&root, &["history", "src/app.py", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(
        json["result"]["revisions"].as_array().map(Vec::len),
        Some(1)
    );

    let outside = loci(&root, &["remember", "../notes.md", "--text", "x"]);
    assert_eq!(outside.status.code(), Some(2));
    assert_eq!(
        stderr(&outside).trim(),
        "loci: invalid argument `subject`: `../notes.md` leaves the workspace (`..`)"
    );
}

/// The trial's misses through the command line: `.ENV` and a YAML file holding a URL
/// password are counted as secret by `scan`; `remember --text` and `decide` refuse an
/// assignment or URL credential naming the rule and position, never the value.
#[test]
fn scan_skips_upper_case_secret_names_and_url_passwords_and_writes_refuse_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let password = ["s3cr3t", "Pa55"].concat();
    write(&root, "src/app.py", "def main():\n    pass\n");
    write(&root, ".ENV", "A=1\n");
    write(
        &root,
        "config/db.yml",
        &format!("url: postgres://app:{password}@db.internal:5432/x\n"),
    );
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let scan = loci(&root, &["scan"]);
    assert_eq!(scan.status.code(), Some(0), "{}", stderr(&scan));
    let out = String::from_utf8_lossy(&scan.stdout);
    assert!(out.contains("skipped: 2 secret"), "{out}");

    let text = format!("Staging uses postgres://app:{password}@db.internal/x");
    let refused = loci(&root, &["remember", "src/app.py", "--text", &text]);
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert_eq!(
        message.lines().next().unwrap_or_default(),
        "loci: invalid argument `body`: contains a secret (url_credentials) at line 1, \
         column 29; loci does not store credentials in memory. Remove it (or put a placeholder \
         such as <TOKEN> in its place) and write again"
    );
    assert!(!message.contains(&password), "{message}");
    let decided = loci(
        &root,
        &[
            "decide",
            &format!("CI sets DB_PASSWORD={password} for tests"),
        ],
    );
    assert_eq!(decided.status.code(), Some(2));
    let message = stderr(&decided);
    assert!(
        message.starts_with(
            "loci: invalid argument `text`: contains a secret (password_assignment) at line 1, \
             column 21;"
        ),
        "{message}"
    );
    assert!(!message.contains(&password), "{message}");
}

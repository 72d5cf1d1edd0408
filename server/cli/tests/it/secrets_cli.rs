//! The command line and secrets: `loci scan` counts secret files as skipped, `remember
//! --file` reads the file the user named (a read they asked for, even outside the
//! workspace) but refuses a body holding a credential, and subjects outside the workspace
//! are refused with exit code 2.

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

/// The fault: `loci symbol PrfUsingHmac`, a name defined in a file the scan skipped as a
/// secret, said only "no symbol", and `loci stats` did not list the file: a user could not
/// tell that the map left a file out on purpose. An answer that finds nothing now says how
/// many files were skipped and why, and `stats` names them.
#[test]
fn fault_no_symbol_did_not_say_that_a_file_was_skipped_as_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    write(&root, "src/app.rs", "pub fn start() {}\n");
    let key = ["AKIA", "Q7WJ2M5XRT3K9HBN"].concat();
    write(
        &root,
        "src/vault.rs",
        &format!("pub struct PrfUsingHmac;\nconst KEY: &str = \"{key}\";\n"),
    );
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let scan = loci(&root, &["scan"]);
    assert_eq!(scan.status.code(), Some(0), "{}", stderr(&scan));
    let note = "1 file was skipped as a secret: this answer may miss what it defines \
                (`loci stats` lists it)";
    let detail = "contains a secret (aws_access_key_id) at line 2, column 20";

    let symbol = loci(&root, &["symbol", "PrfUsingHmac"]);
    assert_eq!(symbol.status.code(), Some(1));
    assert_eq!(
        stderr(&symbol),
        format!(
            "note: {note}\nloci: no symbol named `PrfUsingHmac` in the map (`search` finds \
             words in code and docs)\n"
        )
    );
    let json = loci(&root, &["symbol", "PrfUsingHmac", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let notes = json["capability"]["notes"].as_array().unwrap();
    assert_eq!(
        notes.iter().filter(|n| n.as_str() == Some(note)).count(),
        1,
        "{json}"
    );
    // `callers` shares the path; `outline` of the skipped file says which skip.
    let callers = loci(&root, &["callers", "PrfUsingHmac"]);
    assert_eq!(callers.status.code(), Some(1));
    assert!(
        stderr(&callers).starts_with(&format!("note: {note}\n")),
        "{}",
        stderr(&callers)
    );
    let outline = loci(&root, &["outline", "src/vault.rs"]);
    assert_eq!(outline.status.code(), Some(1));
    assert_eq!(
        stderr(&outline),
        format!(
            "note: {note}\nloci: `src/vault.rs` is not in the map: the last scan skipped it \
             (secret: {detail})\n"
        )
    );

    let stats = loci(&root, &["stats"]);
    assert_eq!(stats.status.code(), Some(0), "{}", stderr(&stats));
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(
        text.ends_with(&format!(
            "skipped: 1 secret\n  src/vault.rs: secret ({detail})\n"
        )),
        "{text}"
    );
    let stats = loci(&root, &["stats", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(json["result"]["skipped"], serde_json::json!({"secret": 1}));
    assert_eq!(
        json["result"]["skipped_files"],
        serde_json::json!([{"path": "src/vault.rs", "reason": "secret", "detail": detail}])
    );
    assert_eq!(json["result"]["degraded"], serde_json::json!(0));
    assert_eq!(json["result"]["degraded_files"], serde_json::json!([]));

    // A name that is found has no such note.
    let found = loci(&root, &["symbol", "start"]);
    assert_eq!(found.status.code(), Some(0));
    assert_eq!(stderr(&found), "");
}

/// The fault: secret files added to a map whose mapped files had not changed were never
/// recorded (the scan changed nothing, so it wrote no skips), so neither `stats` nor a note
/// could name them. `stats` lists at most 20, then a count.
#[test]
fn fault_secret_files_added_to_an_unchanged_map_were_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    write(&root, "src/app.rs", "pub fn start() {}\n");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let scan = loci(&root, &["scan"]);
    assert_eq!(scan.status.code(), Some(0), "{}", stderr(&scan));
    for i in 0..25 {
        write(&root, &format!("conf/.env.{i:02}"), "X=1\n");
    }
    let scan = loci(&root, &["scan"]);
    assert_eq!(scan.status.code(), Some(0), "{}", stderr(&scan));

    let stats = loci(&root, &["stats"]);
    let text = String::from_utf8_lossy(&stats.stdout);
    let listed: String = (0..20)
        .map(|i| format!("  conf/.env.{i:02}: secret (matches the secret pattern `.env*`)\n"))
        .collect();
    assert!(
        text.ends_with(&format!("skipped: 25 secret\n{listed}  … and 5 more\n")),
        "{text}"
    );
    let stats = loci(&root, &["stats", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(json["result"]["skipped"], serde_json::json!({"secret": 25}));
    assert_eq!(
        json["result"]["skipped_files"].as_array().map(Vec::len),
        Some(20)
    );

    // A `.env` defines nothing: "no symbol" carries no note about it (the stdlib's 23
    // test certificates would put one on every such answer).
    let symbol = loci(&root, &["symbol", "Missing"]);
    assert_eq!(symbol.status.code(), Some(1));
    assert!(!stderr(&symbol).contains("note:"), "{}", stderr(&symbol));
}

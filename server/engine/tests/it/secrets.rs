//! Secrets and the workspace boundary: secret files are never indexed, searched or served;
//! memory text holding a credential is refused; no argument reads or writes outside the
//! root; facts never run unless enabled.
//!
//! Credential-shaped strings are assembled from pieces at run time, so this file is not
//! itself a secret to loci's own scan or to push protection.

use loci_engine::map::LIST_LIMIT;

use loci_engine::context::{ContextRequest, SearchOptions};
use loci_engine::memory::WriteOptions;
use loci_engine::{EngineError, Workspace};

use crate::fixture::write;

fn aws() -> String {
    ["AKIA", "Q7WJ2M5XRT3K9HBN"].concat()
}

fn github() -> String {
    ["ghp_", "J4p3cUZJG46YHahcneutq5AoJPOneuszrczF"].concat()
}

fn by(author: &str) -> WriteOptions {
    WriteOptions {
        author: Some(author.into()),
        ..Default::default()
    }
}

fn paths(ws: &Workspace) -> Vec<String> {
    let conn = ws.store().conn();
    let mut stmt = conn
        .prepare("SELECT path FROM files ORDER BY path")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// (path, detail) of every skip with reason `secret`, from the store.
fn secret_skips(ws: &Workspace) -> Vec<(String, String)> {
    let conn = ws.store().conn();
    let mut stmt = conn
        .prepare("SELECT path, detail FROM skipped_files WHERE reason = 'secret' ORDER BY path")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn invalid(err: EngineError) -> (String, String) {
    match err {
        EngineError::InvalidArgument { name, message } => (name, message),
        other => panic!("expected an invalid argument, got {other}"),
    }
}

/// A workspace with secrets by name and by content next to ordinary code and docs.
fn secret_workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".env", "DATABASE_URL=postgres://u:p@db/app\n");
    write(root, "deploy/.env.production", "API=1\n");
    write(root, "certs/server.pem", "not really a key\n");
    write(root, "home/id_rsa", "not really a key\n");
    write(
        root,
        "src/settings.py",
        &format!("def load_credentials():\n    return \"{}\"\n", aws()),
    );
    write(
        root,
        "docs/setup.md",
        &format!("# Setup\n\nExport `GITHUB_TOKEN={}` first.\n", github()),
    );
    write(
        root,
        "src/app.py",
        "def main():\n    return load_config()\n",
    );
    write(root, "docs/guide.md", "# Guide\n\nRun `main()` to start.\n");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

#[test]
fn secret_files_are_skipped_by_the_walk_with_the_reason_secret() {
    let (_dir, mut ws) = secret_workspace();
    assert_eq!(paths(&ws), ["docs/guide.md", "src/app.py"]);
    assert_eq!(
        secret_skips(&ws),
        [
            (".env".into(), "matches the secret pattern `.env*`".into()),
            (
                "certs/server.pem".into(),
                "matches the secret pattern `*.pem`".into()
            ),
            (
                "deploy/.env.production".into(),
                "matches the secret pattern `.env*`".into()
            ),
            (
                "docs/setup.md".into(),
                "contains a secret (github_token) at line 3, column 22".into()
            ),
            (
                "home/id_rsa".into(),
                "matches the secret pattern `id_rsa*`".into()
            ),
            (
                "src/settings.py".into(),
                "contains a secret (aws_access_key_id) at line 2, column 13".into()
            ),
        ]
    );
    // The report counts them; a rescan of unchanged files keeps the count without
    // reading them again.
    let report = ws.scan(&|_| {}).unwrap().result;
    assert_eq!(report.skipped.get("secret"), Some(&6));
    assert!(!report.changed);
}

#[test]
fn search_and_context_never_return_secret_files() {
    let (_dir, ws) = secret_workspace();
    let all = SearchOptions::default();
    for query in ["load_credentials", "GITHUB_TOKEN", "Setup", "DATABASE_URL"] {
        let hits = ws.search(query, &all).unwrap().result;
        assert!(hits.is_empty(), "{query}: {hits:?}");
    }
    assert_eq!(ws.search("main", &all).unwrap().result.len(), 2);
    let answer = ws
        .context(&ContextRequest {
            query: "load credentials settings token".into(),
            open_files: vec!["src/settings.py".into()],
            budget: None,
            floor: Some(0.0),
        })
        .unwrap()
        .result;
    assert!(!answer.markdown.contains("AKIA"), "{}", answer.markdown);
    assert!(
        answer
            .items
            .iter()
            .all(|i| i.path.as_deref() != Some("src/settings.py")),
        "{:?}",
        answer.items
    );
}

#[test]
fn a_file_that_gains_a_secret_leaves_the_map_and_returns_when_it_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/client.py", "def connect():\n    return 1\n");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(ws.symbol("connect", LIST_LIMIT).unwrap().result.len(), 1);
    write(
        root,
        "src/client.py",
        &format!("def connect():\n    return '{}'\n", github()),
    );
    let report = ws.scan(&|_| {}).unwrap().result;
    assert_eq!(report.deleted, ["src/client.py"]);
    assert!(ws.symbol("connect", LIST_LIMIT).unwrap().result.is_empty());
    assert_eq!(secret_skips(&ws).len(), 1);
    write(root, "src/client.py", "def connect():\n    return 2\n");
    let report = ws.scan(&|_| {}).unwrap().result;
    assert_eq!(report.added, ["src/client.py"]);
    assert!(secret_skips(&ws).is_empty());
}

#[test]
fn a_new_secret_rule_applies_to_files_that_did_not_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/a.py", "KEY = 'INT-9f8e7d6c5b4a3921'\n");
    write(root, "src/b.py", "def b():\n    pass\n");
    write(root, "local.secret", "x\n");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(paths(&ws), ["local.secret", "src/a.py", "src/b.py"]);
    write(
        root,
        ".loci/config.toml",
        "[secrets]\npaths = [\"*.secret\"]\n\n[secrets.tokens]\ninternal = '\\bINT-[0-9a-f]{16}\\b'\n",
    );
    let mut ws = Workspace::open(root, None).unwrap();
    let report = ws.scan(&|_| {}).unwrap().result;
    assert_eq!(report.deleted, ["local.secret", "src/a.py"]);
    assert_eq!(paths(&ws), ["src/b.py"]);
    assert_eq!(
        secret_skips(&ws),
        [
            (
                "local.secret".into(),
                "matches the secret pattern `*.secret`".into()
            ),
            (
                "src/a.py".into(),
                "contains a secret (internal) at line 1, column 8".into()
            ),
        ]
    );
}

#[test]
fn an_invalid_secret_pattern_is_a_config_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".loci/config.toml",
        "[secrets.tokens]\nbroken = '(unclosed'\n",
    );
    let err = Workspace::open(dir.path(), None).err().unwrap().to_string();
    assert!(err.contains(".loci/config.toml"), "{err}");
    assert!(err.contains("secrets.tokens.broken"), "{err}");
}

/// A scanned workspace whose `src/vault.py` keeps `key` (a Python literal) in
/// `open_vault`, and the question that serves its source.
fn vault(key: &str) -> (tempfile::TempDir, Workspace, ContextRequest) {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "src/vault.py",
        &format!("def open_vault():\n    key = {key}\n    return key\n"),
    );
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let ask = ContextRequest {
        query: "open_vault".into(),
        open_files: Vec::new(),
        budget: Some(4_000),
        floor: Some(0.0),
    };
    (dir, ws, ask)
}

#[test]
fn context_does_not_serve_lines_of_a_file_that_gained_a_secret_since_the_scan() {
    let (dir, ws, ask) = vault("None");
    let before = ws.context(&ask).unwrap().result.markdown;
    assert!(before.contains("key = None"), "{before}");
    // Written on disk, not rescanned: the map still has the file, the answer must not
    // carry its new text.
    write(
        dir.path(),
        "src/vault.py",
        &format!("def open_vault():\n    key = '{}'\n    return key\n", aws()),
    );
    let after = ws.context(&ask).unwrap().result.markdown;
    assert!(!after.contains("AKIA"), "{after}");
    assert!(!after.contains("key = None"), "{after}");
}

/// A served file is checked again unless the last scan checked this very text with these
/// very rules: a rule configured since the scan applies to files that did not change,
/// before any rescan.
#[test]
fn context_does_not_serve_a_file_that_a_rule_added_since_the_scan_finds() {
    let (dir, ws, ask) = vault("'INT-9f8e7d6c5b4a3921'");
    let before = ws.context(&ask).unwrap().result.markdown;
    assert!(before.contains("INT-9f8e7d6c5b4a3921"), "{before}");
    write(
        dir.path(),
        ".loci/config.toml",
        "[secrets.tokens]\ninternal = '\\bINT-[0-9a-f]{16}\\b'\n",
    );
    let ws = Workspace::open(dir.path(), None).unwrap();
    let after = ws.context(&ask).unwrap().result.markdown;
    assert!(!after.contains("INT-9f8e7d6c5b4a3921"), "{after}");
    assert!(after.contains("open_vault"), "{after}");
}

/// Fault found by a fresh-user trial: after a secret rule was configured (by pattern or
/// by path), documentation sections and doc comments the map had stored before were still
/// served by `context`, `search` and `symbol` until the next scan; only files served whole
/// were checked again.
#[test]
fn fault_text_the_map_stored_before_a_new_secret_rule_was_still_served() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let token = ["INT-9f3a7c1e", "5b2d8046"].concat();
    write(
        root,
        "docs/vault.md",
        &format!("# Vault rotation\n\nThe rotation job signs with `{token}`.\n"),
    );
    write(
        root,
        "src/escrow.py",
        &format!("def escrow_release():\n    \"\"\"Release with {token}.\"\"\"\n    return 1\n"),
    );
    write(
        root,
        "docs/ledger.md",
        "# Ledger\n\nThe ledger balances nightly.\n",
    );
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let ask = |q: &str| ContextRequest {
        query: q.into(),
        open_files: Vec::new(),
        budget: Some(4_000),
        floor: Some(0.0),
    };
    let served = |ws: &Workspace| -> String {
        let mut all = String::new();
        for q in ["vault rotation job", "escrow release", "ledger balances"] {
            all.push_str(&ws.context(&ask(q)).unwrap().result.markdown);
            let hits = ws.search(q, &SearchOptions::default()).unwrap().result;
            all.push_str(&serde_json::to_string(&hits).unwrap());
        }
        let symbols = ws.symbol("escrow_release", LIST_LIMIT).unwrap().result;
        all.push_str(&serde_json::to_string(&symbols).unwrap());
        all
    };
    let before = served(&ws);
    assert!(before.contains(&token), "{before}");
    assert!(before.contains("nightly"), "{before}");
    write(
        root,
        ".loci/config.toml",
        "[secrets]\npaths = [\"docs/ledger.md\"]\n\n[secrets.tokens]\ninternal = '\\bINT-[0-9a-f]{16}\\b'\n",
    );
    let ws = Workspace::open(root, None).unwrap();
    let after = served(&ws);
    assert!(!after.contains(&token), "{after}");
    assert!(!after.contains("nightly"), "{after}");
    // The symbol is still found, without its first line and doc comment.
    let symbols = ws.symbol("escrow_release", LIST_LIMIT).unwrap().result;
    assert_eq!(symbols.len(), 1);
    assert_eq!(
        (symbols[0].signature.as_str(), &symbols[0].doc),
        ("", &None)
    );
}

#[test]
fn memory_text_with_a_credential_is_refused_naming_the_argument_rule_and_position() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/app.py", "def main():\n    pass\n");
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let body = format!("Deploys use\n  the key {} for S3.", aws());
    let expected = "contains a secret (aws_access_key_id) at line 2, column 11";
    let (name, message) = invalid(ws.remember("src/app.py", &body, &by("a")).unwrap_err());
    assert_eq!(name, "body");
    assert!(message.starts_with(expected), "{message}");
    assert!(!message.contains("AKIA"), "{message}");
    let (name, message) = invalid(ws.decide(&body, None, &by("a")).unwrap_err());
    assert_eq!(
        (name.as_str(), message.starts_with(expected)),
        ("text", true)
    );
    let (name, _) = invalid(ws.learn(&body, Some("src/app.py"), &by("a")).unwrap_err());
    assert_eq!(name, "text");
    let opts = WriteOptions {
        summary: Some(format!("rotated {}", github())),
        ..by("a")
    };
    let (name, message) = invalid(ws.remember("src/app.py", "Fine text.", &opts).unwrap_err());
    assert_eq!(name, "summary");
    assert!(
        message.starts_with("contains a secret (github_token) at line 1, column 9"),
        "{message}"
    );
    for (args, argument) in [
        ((body.as_str(), "true", Some("x")), "claim"),
        (
            ("claim", &format!("curl -H 'X: {}'", aws())[..], Some("x")),
            "cmd",
        ),
        (("claim", "true", Some(&body[..])), "expect"),
    ] {
        let (claim, cmd, expect) = args;
        let (name, _) = invalid(ws.fact_add(claim, cmd, expect, None, &by("a")).unwrap_err());
        assert_eq!(name, argument);
    }
    let (name, _) = invalid(ws.session_begin(Some(&body), None).unwrap_err());
    assert_eq!(name, "task");
    let s = ws.session_begin(Some("ok"), None).unwrap().result;
    let (name, _) = invalid(ws.session_end(s.session_id, Some(&body)).unwrap_err());
    assert_eq!(name, "summary");
    let (name, _) = invalid(ws.resolve(1, Some(&body), None).unwrap_err());
    assert_eq!(name, "notes");
    // Nothing was stored: no page, no fact, the session still open.
    assert!(matches!(
        ws.show("src/app.py", None),
        Err(EngineError::NotFound(_))
    ));
    assert!(matches!(
        ws.show("decisions", None),
        Err(EngineError::NotFound(_))
    ));
    assert!(ws.fact_list().unwrap().result.is_empty());
    let conn = ws.store().conn();
    let stored: i64 = conn
        .query_row(
            "SELECT count(*) FROM revisions WHERE instr(body, 'AKIA') > 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, 0);
    // Placeholders are fine.
    ws.remember(
        "src/app.py",
        "Deploys use the key AKIAXXXXXXXXXXXXXXXX (placeholder).",
        &by("a"),
    )
    .unwrap();
}

fn db_password() -> String {
    ["s3cr3t", "Pa55"].concat()
}

fn aws_secret() -> String {
    ["q7WJ2m5X/rT3k9HBn", "4Lp8Vd1Zs6Yc0Fg+uE2hRj7"].concat()
}

/// The trial's misses: credentials in shapes outside the token list (assignments, URL
/// passwords) and secret file names in another letter case were indexed. They are
/// skipped now, naming the rule and the position; code that reads or names a password
/// and documentation URLs stay in the map.
#[test]
fn assignment_and_url_credentials_and_secret_names_in_any_case_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".ENV", "A=1\n");
    write(root, "home/Id_RSA", "not really a key\n");
    write(root, "certs/SERVER.PEM", "not really a key\n");
    write(
        root,
        "config/aws.ini",
        &format!("[default]\naws_secret_access_key = {}\n", aws_secret()),
    );
    write(
        root,
        "config/database.yml",
        &format!(
            "production:\n  url: postgres://app:{}@db.internal:5432/x\n",
            db_password()
        ),
    );
    write(
        root,
        "deploy/prod.py",
        &format!("DEBUG = False\nDB_PASSWORD = \"{}\"\n", db_password()),
    );
    write(
        root,
        "src/login.py",
        "def login():\n    password = input()\n    token = None\n    return password\n",
    );
    write(
        root,
        "docs/urls.md",
        "# URLs\n\nLike `http://user:password@example.com/` or `ftp://joe:pass@host/`.\n",
    );
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(paths(&ws), ["docs/urls.md", "src/login.py"]);
    assert_eq!(
        secret_skips(&ws),
        [
            (".ENV".into(), "matches the secret pattern `.env*`".into()),
            (
                "certs/SERVER.PEM".into(),
                "matches the secret pattern `*.pem`".into()
            ),
            (
                "config/aws.ini".into(),
                "contains a secret (aws_secret_access_key) at line 2, column 25".into()
            ),
            (
                "config/database.yml".into(),
                "contains a secret (url_credentials) at line 2, column 23".into()
            ),
            (
                "deploy/prod.py".into(),
                "contains a secret (password_assignment) at line 2, column 16".into()
            ),
            (
                "home/Id_RSA".into(),
                "matches the secret pattern `id_rsa*`".into()
            ),
        ]
    );
    for query in ["postgres", "DB_PASSWORD", "aws_secret_access_key"] {
        let hits = ws.search(query, &SearchOptions::default()).unwrap().result;
        assert!(hits.is_empty(), "{query}: {hits:?}");
    }
}

/// Memory writes apply the same rules as the scan: an assignment or a URL password is
/// refused with the argument, rule and position, and nothing of it is stored.
#[test]
fn memory_text_with_an_assignment_or_url_credential_is_refused_and_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/app.py", "def main():\n    pass\n");
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let url = format!(
        "Staging DB:\n  postgres://app:{}@db.internal:5432/x",
        db_password()
    );
    let (name, message) = invalid(ws.remember("src/app.py", &url, &by("a")).unwrap_err());
    assert_eq!(name, "body");
    assert!(
        message.starts_with("contains a secret (url_credentials) at line 2, column 18;"),
        "{message}"
    );
    assert!(!message.contains(&db_password()), "{message}");
    let assignment = format!("Local runs need password={}", ["hun", "ter2"].concat());
    let (name, message) = invalid(ws.decide(&assignment, None, &by("a")).unwrap_err());
    assert_eq!(name, "text");
    assert!(
        message.starts_with("contains a secret (password_assignment) at line 1, column 26;"),
        "{message}"
    );
    assert!(!message.contains("ter2"), "{message}");
    let aws = format!("CI sets aws_secret_access_key: {}", aws_secret());
    let (name, message) = invalid(ws.learn(&aws, None, &by("a")).unwrap_err());
    assert_eq!(name, "text");
    assert!(
        message.starts_with("contains a secret (aws_secret_access_key) at line 1, column 32;"),
        "{message}"
    );
    assert!(!message.contains(&aws_secret()), "{message}");
    let conn = ws.store().conn();
    let stored: i64 = conn
        .query_row(
            "SELECT count(*) FROM revisions WHERE instr(body, ?1) > 0 OR instr(body, 'ter2') > 0",
            [db_password()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, 0);
    // Prose about passwords, code that reads one and documentation URLs are fine.
    ws.remember(
        "src/app.py",
        "`password = input()` reads it; `password=None` disables auth; see \
         `http://user:password@example.com/`.",
        &by("a"),
    )
    .unwrap();
}

/// The fresh-user trial's second round: a `.npmrc` token, a Docker `config.json` auth,
/// a PuTTY key, a JWT and `MYSQL_PWD` were indexed and accepted as memory. The scan
/// skips them naming the rule and position, `*.ppk` by its name, and memory refuses
/// them; their documentation spellings stay in the map.
#[test]
fn npmrc_docker_putty_jwt_and_pwd_credentials_are_skipped_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let uuid = ["3f9c2a71-8d4e-4b6a", "-9e15-c07d2b8f6a43"].concat();
    write(
        root,
        ".npmrc",
        &format!("registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={uuid}\n"),
    );
    write(
        root,
        "docker/config.json",
        &[
            "{\"auths\": {\"ghcr.io\": {\"auth\": \"",
            "ZGVwbG95OlhrOSN2UTJtTHA3",
            "\"}}}\n",
        ]
        .concat(),
    );
    write(
        root,
        "keys/deploy.txt",
        &["PuTTY-User-Key-File-3: ssh-ed25519\n", "Encryption: none\n"].concat(),
    );
    write(root, "keys/deploy.ppk", "not really a key\n");
    write(
        root,
        "ci/env.sh",
        &format!("export MYSQL_PWD='{}'\n", db_password()),
    );
    write(
        root,
        "docs/npm.md",
        "# npm\n\nPut `//registry.npmjs.org/:_authToken=${NPM_TOKEN}` in `.npmrc`; send \
         `Authorization: Bearer <token>`.\n",
    );
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(paths(&ws), ["docs/npm.md"]);
    assert_eq!(
        secret_skips(&ws),
        [
            (
                ".npmrc".into(),
                "contains a secret (npmrc_auth) at line 2, column 34".into()
            ),
            (
                "ci/env.sh".into(),
                "contains a secret (password_assignment) at line 1, column 19".into()
            ),
            (
                "docker/config.json".into(),
                "contains a secret (docker_auth) at line 1, column 33".into()
            ),
            (
                "keys/deploy.ppk".into(),
                "matches the secret pattern `*.ppk`".into()
            ),
            (
                "keys/deploy.txt".into(),
                "contains a secret (putty_private_key) at line 1, column 1".into()
            ),
        ]
    );
    let jwt = [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.",
        "eyJzdWIiOiJ1LTcyOTEiLCJpYXQiOjE3MzMwMDAwMDB9.",
        "kX3vP9qLm2Tz7Rw4Yb8Nc1Hd6Fs0Jg5Ue_Ai-Vo",
    ]
    .concat();
    let note = format!("Staging session cookie:\n{jwt}");
    let (name, message) = invalid(ws.learn(&note, None, &by("a")).unwrap_err());
    assert_eq!(name, "text");
    assert!(
        message.starts_with("contains a secret (jwt) at line 2, column 1;"),
        "{message}"
    );
    assert!(!message.contains(&jwt), "{message}");
}

/// A workspace with a directory and a file outside it, and links to both from inside.
fn bounded_workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    write(&outside, "notes.md", "private\n");
    write(&outside, "lib.py", "def private():\n    pass\n");
    let root = dir.path().join("ws");
    write(&root, "src/app.py", "import lib\n\ndef main():\n    pass\n");
    write(&root, "src/inner.py", "def inner():\n    pass\n");
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("lib.py"), root.join("src/lib.py")).unwrap();
    std::os::unix::fs::symlink(root.join("src/inner.py"), root.join("src/alias.py")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere"), root.join("broken")).unwrap();
    let mut ws = Workspace::open(&root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

#[test]
fn path_arguments_that_leave_the_workspace_are_refused_by_every_operation() {
    let (dir, mut ws) = bounded_workspace();
    let outside_file = dir.path().join("outside/lib.py").display().to_string();
    let escapes = [
        "../outside/lib.py".to_string(),
        "src/../../outside/lib.py".to_string(),
        outside_file.clone(),
        "out".to_string(),
        "out/notes.md".to_string(),
        "src/lib.py".to_string(),
        "broken".to_string(),
    ];
    for path in &escapes {
        let (name, message) = invalid(ws.remember(path, "x", &by("a")).unwrap_err());
        assert_eq!(name, "subject", "{path}");
        assert!(
            message.contains("outside the workspace")
                || message.contains("leaves the workspace")
                || message.contains("through the symbolic link"),
            "{path}: {message}"
        );
        assert_eq!(
            invalid(ws.confirm(path, &by("a")).unwrap_err()).0,
            "subject",
            "{path}"
        );
        assert_eq!(
            invalid(ws.show(path, None).unwrap_err()).0,
            "subject",
            "{path}"
        );
        assert_eq!(
            invalid(ws.history(path).unwrap_err()).0,
            "subject",
            "{path}"
        );
        assert_eq!(
            invalid(ws.decide("d", Some(path), &by("a")).unwrap_err()).0,
            "subject",
            "{path}"
        );
        assert_eq!(
            invalid(ws.topic_set("t", path, true, &by("a")).unwrap_err()).0,
            "subject",
            "{path}"
        );
        assert_eq!(
            invalid(ws.deps(path, false).unwrap_err()).0,
            "path",
            "{path}"
        );
        assert_eq!(
            invalid(ws.impact(path, 2, false).unwrap_err()).0,
            "target",
            "{path}"
        );
        let ask = ContextRequest {
            query: "main".into(),
            open_files: vec![path.clone()],
            budget: None,
            floor: None,
        };
        assert_eq!(
            invalid(ws.context(&ask).unwrap_err()).0,
            "open_files",
            "{path}"
        );
        let prefix = SearchOptions {
            path_prefix: Some(path.clone()),
            ..Default::default()
        };
        assert_eq!(
            invalid(ws.search("main", &prefix).unwrap_err()).0,
            "path",
            "{path}"
        );
    }
    for query in [
        "../outside/lib.py",
        outside_file.as_str(),
        "../outside/lib.py:1",
    ] {
        assert_eq!(invalid(ws.why(query).unwrap_err()).0, "target", "{query}");
    }
    // The symbolic links were not followed by the scan either.
    assert!(ws.symbol("private", LIST_LIMIT).unwrap().result.is_empty());
    assert!(ws.read_served("out/notes.md").is_none());
    assert!(ws.read_served("src/lib.py").is_none());
    assert!(ws.read_served("src/alias.py").is_none());
    assert_eq!(
        ws.read_served("src/inner.py").as_deref(),
        Some("def inner():\n    pass\n")
    );
}

#[test]
fn paths_inside_the_workspace_are_accepted_in_every_spelling() {
    let (_dir, mut ws) = bounded_workspace();
    let root = ws.root().to_path_buf();
    for (given, rel) in [
        ("src/app.py", "src/app.py"),
        ("./src/app.py", "src/app.py"),
        ("src//app.py", "src/app.py"),
        ("src/", "src"),
        (".", "."),
        (&*format!("{}/src/app.py", root.display()), "src/app.py"),
        ("src/alias.py", "src/alias.py"),
        ("not/yet/there.py", "not/yet/there.py"),
    ] {
        assert_eq!(ws.contain("path", given).unwrap(), rel, "{given}");
    }
    ws.remember("./src/app.py", "`main()` starts it.", &by("a"))
        .unwrap();
    assert_eq!(
        ws.show("src/app.py", None).unwrap().result.revision.version,
        1
    );
}

#[test]
fn init_agents_does_not_read_or_write_through_a_link_out_of_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    write(&outside, "AGENTS.md", "someone else's file\n");
    std::fs::create_dir_all(outside.join("cursor")).unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(outside.join("AGENTS.md"), root.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("cursor"), root.join(".cursor")).unwrap();
    let ws = Workspace::open(&root, None).unwrap();
    let report = loci_engine::init::wire_agents(ws.root(), &Default::default()).unwrap();
    let skipped: Vec<(&str, Option<&str>)> = report
        .files
        .iter()
        .filter(|f| f.path == "AGENTS.md" || f.path == ".cursor/mcp.json")
        .map(|f| (f.path.as_str(), f.note.as_deref()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                ".cursor/mcp.json",
                Some(
                    "`.cursor` is a symbolic link out of the workspace; loci does not read or write through it"
                )
            ),
            (
                "AGENTS.md",
                Some(
                    "`AGENTS.md` is a symbolic link out of the workspace; loci does not read or write through it"
                )
            ),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("AGENTS.md")).unwrap(),
        "someone else's file\n"
    );
    assert!(!outside.join("cursor/mcp.json").exists());
    assert!(root.join("CLAUDE.md").is_file());
}

#[test]
fn facts_never_run_unless_enabled_not_even_from_scan_lint_or_check() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/app.py", "def main():\n    pass\n");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.fact_add("it runs", "touch ran", None, Some(0), &by("a"))
        .unwrap();
    write(root, "src/app.py", "def main():\n    return 1\n");
    ws.scan(&|_| {}).unwrap();
    ws.lint().unwrap();
    ws.check().unwrap();
    ws.context(&ContextRequest {
        query: "it runs".into(),
        open_files: Vec::new(),
        budget: None,
        floor: None,
    })
    .unwrap();
    let (name, _) = invalid(ws.fact_run(None).unwrap_err());
    assert_eq!(name, "facts.run");
    assert!(!root.join("ran").exists());
    assert_eq!(ws.fact_list().unwrap().result[0].last_status, None);
}

#[test]
fn an_import_holding_a_credential_is_refused_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/app.py", "def main():\n    pass\n");
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember("src/app.py", "`main()` starts it.", &by("a"))
        .unwrap();
    ws.fact_add("it runs", "true", None, Some(0), &by("a"))
        .unwrap();
    let clean = ws.export_memory().unwrap().result;

    let other = tempfile::tempdir().unwrap();
    write(other.path(), "src/app.py", "def main():\n    pass\n");
    let mut dst = Workspace::open(other.path(), None).unwrap();
    let mut body = clean.clone();
    body.pages[0].revisions[0].body = format!("Uses\nkey {}.", aws());
    body.pages[0].revisions[0].hash = None;
    let (name, message) = invalid(dst.import_memory(&body, "memory.json").unwrap_err());
    assert_eq!(name, "FILE");
    assert!(
        message.starts_with(
            "memory.json: pages[0] (`src/app.py`) revisions[0] body contains a secret \
             (aws_access_key_id) at line 2, column 5;"
        ),
        "{message}"
    );
    assert!(!message.contains("AKIA"), "{message}");
    let mut summary = clean.clone();
    summary.pages[0].revisions[0].summary = Some(github());
    summary.pages[0].revisions[0].hash = None;
    let (_, message) = invalid(dst.import_memory(&summary, "memory.json").unwrap_err());
    assert!(
        message.starts_with("memory.json: pages[0] (`src/app.py`) revisions[0] summary"),
        "{message}"
    );
    let mut fact = clean.clone();
    fact.facts[0].command = format!("curl -u {}", aws());
    fact.facts[0].hash = None;
    let (_, message) = invalid(dst.import_memory(&fact, "memory.json").unwrap_err());
    assert!(
        message.starts_with("memory.json: facts[0] command contains a secret"),
        "{message}"
    );
    // A claim's key in the snapshots is stored too.
    let mut key = clean.clone();
    key.pages[0].revisions[0].tracked.as_mut().unwrap()[0].resolved =
        Some(format!("src/app.py#{}", aws()));
    let (_, message) = invalid(dst.import_memory(&key, "memory.json").unwrap_err());
    assert!(
        message.starts_with(
            "memory.json: pages[0] (`src/app.py`) revisions[0] tracked[0] contains a secret"
        ),
        "{message}"
    );
    // Nothing of the refused documents was stored; the clean one imports.
    let pages: i64 = dst
        .store()
        .conn()
        .query_row("SELECT count(*) FROM pages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pages, 0);
    assert!(dst.fact_list().unwrap().result.is_empty());
    let report = dst.import_memory(&clean, "memory.json").unwrap().result;
    assert_eq!((report.revisions_added, report.facts_added), (1, 1));
}

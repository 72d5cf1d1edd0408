//! The `loci` binary end to end: exit codes, JSON envelopes, errors on stderr, and SARIF
//! that validates against the official SARIF 2.1.0 schema.

use crate::damage;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::fixture::write;

fn loci(dir: &Path, args: &[&str]) -> Output {
    run(Command::new(env!("CARGO_BIN_EXE_loci")), dir, args)
}

/// Runs `cmd` (a `loci` command line) with `args` in `dir`, as a test author, outside any
/// session and with no `LOCI_DB` from the environment.
fn run(mut cmd: Command, dir: &Path, args: &[&str]) -> Output {
    cmd.args(args)
        .current_dir(dir)
        .env("LOCI_AUTHOR", "human:test")
        .env_remove("LOCI_SESSION")
        .env_remove("LOCI_DB")
        .output()
        .expect("loci runs")
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app/models.py",
        "class User:\n    def save(self):\n        return 1\n",
    );
    write(
        dir.path(),
        "app/views.py",
        "from .models import User\n\ndef show():\n    return User().save()\n",
    );
    dir
}

#[test]
fn exit_codes_are_0_found_1_nothing_found_2_usage_or_environment() {
    let dir = repo();
    let root = dir.path();
    let scan = loci(root, &["scan", "--json"]);
    assert_eq!(
        scan.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&scan.stderr)
    );
    assert!(root.join(".loci/loci.db").exists());
    assert_eq!(
        std::fs::read_to_string(root.join(".loci/.gitignore"))
            .unwrap()
            .lines()
            .last(),
        Some("*")
    );

    let found = loci(root, &["symbol", "User"]);
    assert_eq!(found.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&found.stdout).lines().next(),
        Some("app/models.py:1: class User  [app/models.py#User@class]")
    );

    let nothing = loci(root, &["symbol", "Nope"]);
    assert_eq!(nothing.status.code(), Some(1));
    assert!(nothing.stdout.is_empty());

    let missing = loci(root, &["deps", "no/such.py"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim(),
        "loci: `no/such.py` is not in the map (not scanned, ignored, or skipped)"
    );

    let usage = loci(root, &["symbol"]);
    assert_eq!(usage.status.code(), Some(2));
    let bad = loci(root, &["remember", "../outside.py", "--text", "x"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).starts_with("loci: invalid argument `subject`"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// Fault (trial): `loci why FILE:99999`, past the file's end, answered as if normal. The
/// engine refuses it, naming the file and its line count, and the CLI exits 2.
#[test]
fn fault_why_past_the_end_of_a_file_exited_0() {
    let dir = repo();
    let root = dir.path();
    loci(root, &["scan"]);
    loci(
        root,
        &["remember", "app/models.py", "-t", "users are saved"],
    );
    let past = loci(root, &["why", "app/models.py:99999"]);
    assert_eq!(past.status.code(), Some(2));
    assert!(past.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&past.stderr).trim(),
        "loci: invalid argument `target`: `app/models.py:99999`: line 99999 is past the end of `app/models.py`, which has 3 lines"
    );
    assert_eq!(
        loci(root, &["why", "app/models.py:3"]).status.code(),
        Some(0)
    );
}

#[test]
fn json_output_is_the_engine_envelope() {
    let dir = repo();
    let root = dir.path();
    loci(root, &["scan"]);
    let out = loci(root, &["callers", "User", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for field in [
        "result",
        "index",
        "capability",
        "stale_warnings",
        "freshness",
        "limits",
    ] {
        assert!(
            v.get(field).is_some(),
            "envelope field {field} missing: {v}"
        );
    }
    assert_eq!(v["index"]["files"], 2);
    assert_eq!(v["result"]["calls"][0]["path"], "app/views.py");
    assert_eq!(
        v["result"]["calls"][0]["target_key"],
        "app/models.py#User@class"
    );
    assert_eq!(v["capability"]["git"], false);
    // A file edited after the scan is flagged in the answer that relies on it (B25).
    write(
        root,
        "app/views.py",
        "from .models import User\n\n\ndef show():\n    return User().save()\n",
    );
    let v: Value =
        serde_json::from_slice(&loci(root, &["callers", "User", "--json"]).stdout).unwrap();
    assert_eq!(v["stale_warnings"][0]["path"], "app/views.py");
    assert_eq!(
        v["stale_warnings"][0]["reason"],
        "changed on disk since the last scan"
    );
}

#[test]
fn context_phases_are_timed_on_stderr_at_debug_and_stdout_keeps_the_answer() {
    let dir = repo();
    let root = dir.path();
    loci(root, &["scan"]);
    let out = Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(["context", "how does User.save work", "--json"])
        .current_dir(root)
        .env("RUST_LOG", "loci_engine::context=debug")
        .env("NO_COLOR", "1")
        .env_remove("LOCI_DB")
        .output()
        .expect("loci runs");
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"]["items"][0]["path"], "app/models.py");
    let log = String::from_utf8(out.stderr).unwrap();
    let timed = |phase: &str| {
        log.lines()
            .any(|l| l.contains(&format!("{phase}: ")) && l.contains("close time.busy="))
    };
    for phase in [
        "text_phase",
        "code_phase",
        "chunks_by_bm25",
        "files_by_bm25",
        "hops_phase",
        "pack_phase",
        "context_in_snapshot",
    ] {
        assert!(timed(phase), "no time for {phase} in:\n{log}");
    }
    // The expression each index was asked, as the answer's log states it.
    assert!(
        log.contains(r#"pruned_expression{table="code_chunks_fts"}"#)
            && log.contains("return=Ok(Some("),
        "{log}"
    );
}

#[test]
fn a_newer_database_is_refused_with_exit_2_and_left_untouched() {
    let dir = repo();
    let root = dir.path();
    loci(root, &["scan"]);
    let db = root.join(".loci/loci.db");
    {
        let conn = loci_store::rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations(version, name) VALUES (999, 'future')",
            [],
        )
        .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let out = loci(root, &["stats"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("schema version 999 is newer than this loci supports"),
        "{err}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let schema = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/ci/sarif-2.1.0.json"
    );
    assert!(
        Path::new(schema).exists(),
        "the SARIF schema is missing: run .ci/setup (it fetches {schema})"
    );
    let dir = repo();
    let root = dir.path();
    write(
        root,
        "AGENTS.md",
        "Models are in `app/model.py`; call `User.delete()`.\nWe use café-lib@1.0 — `app/views.py`.\n",
    );
    write(root, "requirements.txt", "cafe-lib==2.0\n");
    loci(root, &["scan"]);
    loci(
        root,
        &[
            "remember",
            "app/models.py",
            "--text",
            "`User.save()` returns 1.",
        ],
    );
    write(
        root,
        "app/models.py",
        "class User:\n    def save(self):\n        return 2\n",
    );
    loci(root, &["scan"]);
    let out = loci(root, &["check", "--sarif"]);
    assert_eq!(out.status.code(), Some(1), "findings fail the gate");
    let sarif_path = root.join("out.sarif");
    std::fs::write(&sarif_path, &out.stdout).unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules: Vec<&str> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "missing_path",
            "missing_symbol",
            "stale_memory",
            "stale_memory"
        ]
    );
    let validate = Command::new("python3")
        .args(["-c", "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))); print('valid')"])
        .arg(&sarif_path)
        .arg(schema)
        .output()
        .expect("python3 runs");
    assert!(
        validate.status.success(),
        "SARIF does not validate (run .ci/setup for jsonschema): {}",
        String::from_utf8_lossy(&validate.stderr)
    );
}

/// Fault: `loci check` on a database no scan had filled (a fresh clone, a mistyped
/// `--db`) said "check passed" and exited 0: a gate over an empty map passes vacuously.
#[test]
fn check_on_an_unscanned_database_is_an_error_not_a_pass() {
    let dir = repo();
    assert!(loci(dir.path(), &["init"]).status.success());
    let check = loci(dir.path(), &["check"]);
    assert_eq!(check.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(
        stderr.starts_with("loci: the map is empty: no scan has finished on this database"),
        "{stderr}"
    );
    assert!(loci(dir.path(), &["scan"]).status.success());
    assert_eq!(loci(dir.path(), &["check"]).status.code(), Some(0));
}

/// Fault: a lookup that found nothing exited 1 with nothing on stdout or stderr.
#[test]
fn a_lookup_that_finds_nothing_says_so_on_stderr() {
    let dir = repo();
    assert!(loci(dir.path(), &["scan"]).status.success());
    for (args, said) in [
        (
            &["symbol", "NoSuchThing"][..],
            "loci: no symbol named `NoSuchThing` in the map (`search` finds words in code and docs)\n",
        ),
        (
            &["refs", "NoSuchThing"][..],
            "loci: no references to `NoSuchThing` in the map\n",
        ),
        (
            &["search", "zzzzqq"][..],
            "loci: nothing matches `zzzzqq`\n",
        ),
    ] {
        let out = loci(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), said, "{args:?}");
    }
}

/// Fault: an error whose message carries its OS cause printed that cause twice
/// ("already exists; …: already exists; …").
#[test]
fn an_error_message_names_its_cause_once() {
    let dir = repo();
    assert!(loci(dir.path(), &["scan"]).status.success());
    write(dir.path(), "taken.db", "");
    let out = loci(dir.path(), &["backup", "taken.db"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("a backup never overwrites").count(),
        1,
        "{stderr}"
    );
}

/// Fault: `loci session begin` printed a sentence and the `export` line on stdout, so
/// neither `S=$(loci session begin)` nor `eval "$(loci session begin)"` worked.
#[test]
fn session_begin_prints_only_the_shell_line_on_stdout() {
    let dir = repo();
    let out = loci(dir.path(), &["session", "begin", "--task", "try it"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "export LOCI_SESSION=1\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "session 1 begun: try it\nnote: no scan yet: run `loci scan` to build the map\n"
    );
}

/// Fault: `loci --db /typo/x.db stats` (or `check`) created the directory and an empty
/// database and answered from it; a command that only reads never creates a store. (Nor
/// does `scan` create a missing folder: see
/// `fault_a_db_in_a_missing_folder_made_the_folders`.)
#[test]
fn a_read_only_command_at_a_missing_database_is_refused_and_creates_nothing() {
    let dir = repo();
    std::fs::create_dir(dir.path().join("typo")).unwrap();
    let missing = dir.path().join("typo/x.db");
    let db = missing.to_str().unwrap();
    for command in ["stats", "check", "symbol"] {
        let mut args = vec!["--db", db, command];
        if command == "symbol" {
            args.push("User");
        }
        let out = loci(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("loci: {db}: no such database; `loci scan --db {db}` creates it\n"),
            "{command}"
        );
    }
    assert_eq!(names_in(&dir.path().join("typo")), Vec::<String>::new());
    assert!(loci(dir.path(), &["--db", db, "scan"]).status.success());
    assert_eq!(
        loci(dir.path(), &["--db", db, "stats"]).status.code(),
        Some(0)
    );
}

#[test]
fn impact_of_a_file_counts_its_dependent_files_without_the_target() {
    let dir = repo();
    assert!(loci(dir.path(), &["scan"]).status.success());
    let out = loci(dir.path(), &["impact", "app/models.py"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "impact of app/models.py (depth 3, edges at confidence 0.50 or more): 1 dependent file\n  app/views.py  <- import at app/views.py:1 (stated, 1.00)\n"
    );
    let out = loci(dir.path(), &["impact", "User"]);
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        first,
        "impact of app/models.py#User@class (depth 3, edges at confidence 0.50 or more): 2 dependents in 1 file"
    );
}

/// `--no-tests` reaches the engine: a test importing the module is counted, not listed.
#[test]
fn impact_no_tests_counts_the_tests_it_leaves_out() {
    let dir = repo();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("tests/test_models.py"),
        "from app.models import User\n\ndef test_user():\n    User()\n",
    )
    .unwrap();
    assert!(loci(dir.path(), &["scan"]).status.success());
    let out = loci(dir.path(), &["impact", "app/models.py", "--no-tests"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "impact of app/models.py (depth 3, edges at confidence 0.50 or more): 1 dependent file\n  app/views.py  <- import at app/views.py:1 (stated, 1.00)\n1 dependent in tests, examples or vendored code left out (`--no-tests`), not walked through\n"
    );
}

/// `callers --no-tests` reaches the engine: a test's call is counted, not listed; when
/// tests alone call the symbol, the exit is 1 with a message saying so, unless weaker calls
/// outside tests were left out (fresh-user trial: the message had said there were none).
#[test]
fn callers_no_tests_counts_the_calls_it_leaves_out() {
    let dir = repo();
    write(
        dir.path(),
        "tests/test_models.py",
        "from app.models import User\nfrom app.util import helper\n\ndef test_user():\n    User().save()\n    helper()\n",
    );
    write(dir.path(), "app/util.py", "def helper():\n    return 1\n");
    write(dir.path(), "app/jobs.py", "def nightly():\n    return 2\n");
    write(
        dir.path(),
        "tests/test_jobs.py",
        "from app.jobs import nightly\n\ndef test_nightly(runner):\n    nightly()\n    runner.nightly()\n",
    );
    write(
        dir.path(),
        "app/cron.py",
        "def run(sched):\n    return sched.nightly()\n",
    );
    assert!(loci(dir.path(), &["scan"]).status.success());
    let out = loci(dir.path(), &["callers", "User.save", "--no-tests"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "definition app/models.py#User.save@method (app/models.py:2)\napp/views.py:4:19: call save in app/views.py#show@function -> app/models.py#User.save@method (stated, 1.00)\n… and 1 call in tests, examples or vendored code (at any confidence), left out (`--no-tests`)\n"
    );
    let only_tests = loci(dir.path(), &["callers", "helper", "--no-tests"]);
    assert_eq!(
        (
            only_tests.status.code(),
            String::from_utf8_lossy(&only_tests.stderr).trim_end()
        ),
        (
            Some(1),
            "loci: no callers of `helper` outside tests, examples and vendored code: 1 there, left out (`--no-tests`)"
        )
    );
    let weaker_outside = loci(dir.path(), &["callers", "nightly", "--no-tests"]);
    assert_eq!(
        String::from_utf8_lossy(&weaker_outside.stderr).trim_end(),
        "loci: no callers of `nightly` at confidence 0.50 or more"
    );
}

/// Fault (fresh-user trial): `loci impact X --hard` said "0 dependents in 3 files": the
/// file count was the target's own files plus the dependents', so a walk that kept no
/// edge still named files. The summary counts the files that hold a dependent.
#[test]
fn fault_impact_counted_the_targets_own_files_as_files_with_dependents() {
    let dir = repo();
    write(
        dir.path(),
        "app/admin.py",
        "class User:\n    def save(self):\n        return 2\n",
    );
    write(
        dir.path(),
        "app/jobs.py",
        "class User:\n    def save(self):\n        return 3\n",
    );
    assert!(loci(dir.path(), &["scan"]).status.success());
    let first_line = |args: &[&str]| {
        let out = loci(dir.path(), args);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    // `User().save()` after `from .models import User` is stated (the import binds
    // `User` to the file defining it), so `--hard` keeps it; the targets' own three files
    // are not counted as files holding a dependent.
    assert_eq!(
        first_line(&["impact", "User.save", "--hard"]),
        "impact of app/admin.py#User.save@method, app/jobs.py#User.save@method, \
         app/models.py#User.save@method (depth 3, stated edges only): 1 dependent in 1 file"
    );
    assert_eq!(
        first_line(&["impact", "User.save"]),
        "impact of app/admin.py#User.save@method, app/jobs.py#User.save@method, \
         app/models.py#User.save@method (depth 3, edges at confidence 0.50 or more): 1 \
         dependent in 1 file"
    );
    let out = loci(dir.path(), &["impact", "User.save", "--hard", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            &v["result"]["dependents"],
            &v["result"]["dependent_files"],
            &v["result"]["files_affected"]
        ),
        (&Value::from(1), &Value::from(1), &Value::from(4))
    );
}

/// A widely imported file's impact lists the nearest `--limit` dependents (default 100)
/// and says how many more there are and how to see them; `--limit 0` lists all; the JSON
/// envelope carries the same cut in `limits` and the exact counts in the result.
/// Fault found by a fresh-user trial: `impact` of a file nothing depends on and a
/// `context` that abstained exited 1 ("nothing found") with nothing on stderr, and
/// `--depth 0` was taken as 1.
#[test]
fn fault_nothing_found_from_impact_and_context_said_nothing_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "core.py", "def run():\n    return 1\n");
    write(root, "leaf.py", "import core\n");
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["impact", "leaf.py"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: nothing depends on `leaf.py` within depth 3\n"
    );
    let out = loci(root, &["context", "bake a chocolate cake"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: nothing relevant to `bake a chocolate cake` cleared the floor (the answer abstained)\n"
    );
    let out = loci(root, &["impact", "core.py", "--depth", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--depth"), "{err}");
}

/// Fault from a fresh-user trial: `impact` of a widely used file listed hundreds of files
/// reached at depth 3 with no word of how to see the few direct dependents alone.
#[test]
fn fault_a_deep_impact_did_not_say_how_to_list_the_direct_dependents() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "core.py", "X = 1\n");
    write(root, "mid.py", "import core\n");
    for n in 0..6 {
        write(root, &format!("leaf{n}.py"), "import mid\n");
    }
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["impact", "core.py", "--limit", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines().last(),
        Some(
            "... and 5 more, not listed (7 in all: 1 at depth 1, 6 at depth 2); \
             `--limit 0` lists all, `--depth 1` the 1 direct one"
        ),
        "{text}"
    );
}

#[test]
fn impact_lists_the_nearest_dependents_up_to_the_limit_and_says_how_many_were_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "core.py", "X = 1\n");
    // 104 direct importers, and one that imports the first of them (depth 2).
    for n in 0..104 {
        write(root, &format!("m{n:03}.py"), "import core\n");
    }
    write(root, "top.py", "import m000\n");
    assert!(loci(root, &["scan"]).status.success());

    let out = loci(root, &["impact", "core.py"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 102, "{text}");
    assert_eq!(
        lines[0],
        "impact of core.py (depth 3, edges at confidence 0.50 or more): 105 dependent files"
    );
    assert_eq!(lines[1], "  m000.py  <- import at m000.py:1 (stated, 1.00)");
    assert_eq!(
        lines[100],
        "  m099.py  <- import at m099.py:1 (stated, 1.00)"
    );
    assert_eq!(
        lines[101],
        "... and 5 more, not listed (105 in all: 104 at depth 1, 1 at depth 2); \
         `--limit 0` lists all"
    );

    let out = loci(root, &["impact", "core.py", "--limit", "3"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "impact of core.py (depth 3, edges at confidence 0.50 or more): 105 dependent files\n\
         \x20 m000.py  <- import at m000.py:1 (stated, 1.00)\n\
         \x20 m001.py  <- import at m001.py:1 (stated, 1.00)\n\
         \x20 m002.py  <- import at m002.py:1 (stated, 1.00)\n\
         ... and 102 more, not listed (105 in all: 104 at depth 1, 1 at depth 2); \
         `--limit 0` lists all\n"
    );

    let out = loci(root, &["impact", "core.py", "--limit", "0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 106, "{text}");
    assert_eq!(
        lines[104],
        "  m103.py  <- import at m103.py:1 (stated, 1.00)"
    );
    assert_eq!(
        lines[105],
        "    top.py  <- import at top.py:1 (stated, 1.00)"
    );

    let out = loci(root, &["impact", "core.py", "--json", "--limit", "2"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["limits"],
        serde_json::json!({"budget": 2, "used": 2, "truncated": true, "omitted": 103})
    );
    let r = &v["result"];
    assert_eq!(
        (&r["dependents"], &r["by_depth"], &r["files_affected"]),
        (
            &serde_json::json!(105),
            &serde_json::json!([104, 1]),
            &serde_json::json!(106)
        )
    );
    let ids: Vec<&str> = r["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["id"].as_str())
        .collect();
    assert_eq!(ids, ["m000.py", "m001.py"]);
    assert_eq!(
        r["files"],
        serde_json::json!(["core.py", "m000.py", "m001.py"])
    );

    let out = loci(root, &["impact", "core.py", "--json", "--limit", "0"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["limits"],
        serde_json::json!({"budget": null, "used": 105, "truncated": false, "omitted": 0})
    );
    assert_eq!(v["result"]["nodes"].as_array().map(Vec::len), Some(105));
    assert_eq!(v["result"]["files"].as_array().map(Vec::len), Some(106));
}

/// Fault found by a fresh-user trial: a store the user cannot write (a 0444 file in a 0555
/// directory: a teammate's checkout, a read-only mount) could not even be read, "attempt to
/// write a readonly database", because opening it set WAL and looked for migrations with
/// write access. Now it opens read-only: answers work, every write is refused with a
/// message that says why, and the file is left byte-for-byte untouched. Run as `nobody`
/// through `setpriv` when the tests run as root, whom permissions do not stop.
#[test]
fn fault_a_read_only_store_could_not_be_read() {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo();
    let root = dir.path();
    assert_eq!(loci(root, &["scan"]).status.code(), Some(0));
    // Everything on the way must be reachable by another user.
    let bin = root.join("loci-bin");
    std::fs::copy(env!("CARGO_BIN_EXE_loci"), &bin).unwrap();
    for p in [root, &root.join("app")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let db = root.join(".loci/loci.db");
    // Found by the third trial: a `.loci/` copied without its hidden `.gitignore` was
    // refused outright ("Permission denied"), because opening wrote the file first.
    std::fs::remove_file(root.join(".loci/.gitignore")).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(root.join(".loci"), std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = std::fs::read(&db).unwrap();
    let run = |args: &[&str]| as_other_user(&bin, root, args);
    let symbol = run(&["symbol", "User"]);
    assert_eq!(
        String::from_utf8_lossy(&symbol.stdout),
        "app/models.py:1: class User  [app/models.py#User@class]\n    class User:\n",
        "{}",
        String::from_utf8_lossy(&symbol.stderr)
    );
    assert_eq!(symbol.status.code(), Some(0));
    let stats = run(&["stats"]);
    assert_eq!(stats.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&stats.stdout).contains("2 files"),
        "{}",
        String::from_utf8_lossy(&stats.stdout)
    );
    let db_shown = db.display().to_string();
    for (args, what) in [
        (
            &["remember", "app/models.py", "-t", "users are saved"][..],
            "a write",
        ),
        (&["scan"][..], "updating the map"),
        (
            &["restore", "elsewhere.db"][..],
            "restoring a backup into it",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "loci: {db_shown}: the store is read-only (no write permission on it or its \
                 directory); {what} was refused: answers come from the store as it is\n"
            ),
            "{args:?}"
        );
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the store is untouched"
    );
    assert_eq!(names_in(&root.join(".loci")), ["loci.db", "loci.db-lock"]);
    std::fs::set_permissions(root.join(".loci"), std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Fault found by a fresh-user trial: the scan summary said `skipped: 1 too_large` and
/// left the user to guess which file. It now names the skipped files other than binary
/// ones, with the reason and its detail (never a secret's text).
#[test]
fn fault_scan_summary_did_not_name_the_skipped_files() {
    let dir = repo();
    let root = dir.path();
    write(root, "app/huge.py", &"x".repeat(3 << 20));
    write(root, "app/blob.dat", "\0\0\0binary\0");
    let out = loci(root, &["scan"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tail: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("skipped:"))
        .collect();
    assert_eq!(
        tail,
        [
            "skipped: 1 binary, 1 too_large",
            "  app/huge.py: too_large (3145728 bytes)",
        ],
        "{stdout}"
    );
}

/// `loci` as another user when the tests run as root (whom permissions do not stop), else
/// as this one; `bin` must be a copy the other user can run.
fn as_other_user(bin: &Path, dir: &Path, args: &[&str]) -> Output {
    let uid = Command::new("id").arg("-u").output().unwrap();
    let cmd = if String::from_utf8_lossy(&uid.stdout).trim() == "0" {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin);
        c
    } else {
        Command::new(bin)
    };
    run(cmd, dir, args)
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Faults found by the fresh-user trial in the read-only open: (1) in a directory the
/// reader may write, reading a write-protected store left a `-shm` and a `-wal` of the
/// reader's, read-only, and the owner's writes failed on them afterwards ("attempt to write
/// a readonly database") until someone deleted them; (2) a store with a `-wal` but no
/// `-shm` (a writer killed, files copied) was read without the log's commits, answering
/// from before them with no warning.
#[test]
fn fault_a_read_only_open_left_files_that_refused_the_owners_writes() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    let dir = repo();
    let root = dir.path();
    assert_eq!(loci(root, &["scan"]).status.code(), Some(0));
    let bin = root.join("loci-bin");
    std::fs::copy(env!("CARGO_BIN_EXE_loci"), &bin).unwrap();
    mode(root, 0o755).unwrap();
    mode(&root.join("app"), 0o755).unwrap();
    let loci_dir = root.join(".loci");
    let db = loci_dir.join("loci.db");
    // (1) The reader may write the directory, not the file.
    mode(&loci_dir, 0o777).unwrap();
    mode(&db, 0o444).unwrap();
    let stats = as_other_user(&bin, root, &["stats"]);
    assert_eq!(
        stats.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    assert_eq!(
        names_in(&loci_dir),
        [".gitignore", "loci.db", "loci.db-lock"]
    );
    mode(&db, 0o644).unwrap();
    let owner = loci(
        root,
        &[
            "remember",
            "app/models.py",
            "-t",
            "User is saved by save().",
        ],
    );
    assert_eq!(
        owner.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&owner.stderr)
    );

    // (2) A copy taken while a writer held commits in its log.
    let copy = root.join("copy");
    std::fs::create_dir(&copy).unwrap();
    let writer = loci_store::rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint = 0;
             INSERT INTO meta(key, value) VALUES ('left-in-the-log', '1');",
        )
        .unwrap();
    std::fs::copy(&db, copy.join("loci.db")).unwrap();
    std::fs::copy(loci_dir.join("loci.db-wal"), copy.join("loci.db-wal")).unwrap();
    drop(writer);
    mode(&copy.join("loci.db"), 0o444).unwrap();
    mode(&copy, 0o555).unwrap();
    let copy_db = copy.join("loci.db");
    let out = as_other_user(&bin, root, &["stats", "--db", copy_db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let shown = copy_db.display();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "loci: {shown}: the store is read-only and its write-ahead log ({shown}-wal) holds \
             commits that only a process allowed to write can apply; run any loci command as \
             the store's owner, then read again\n"
        )
    );
    assert_eq!(names_in(&copy), ["loci.db", "loci.db-wal"]);
    mode(&copy, 0o755).unwrap();
}

/// Fault found by the fresh-user trial: `--db /dev/null` was opened as a database, and
/// SQLite created `/dev/null-journal` and loci its lock file beside it.
#[test]
fn fault_a_db_that_is_not_a_regular_file_was_opened() {
    let dir = repo();
    let out = loci(dir.path(), &["stats", "--db", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: /dev/null: not a regular file: a loci store is a SQLite database file\n"
    );
    assert!(!Path::new("/dev/null-lock").exists());
    assert!(!Path::new("/dev/null-journal").exists());
}

/// Fault: in a subfolder, `loci impact parse.py` answered "no file or symbol named
/// `parse.py`": path arguments were read as root-relative only. A path that exists
/// relative to the current directory (or an absolute one inside the workspace) now names
/// the file as git would; a root-relative path, a symbol or a subject still works.
#[test]
fn fault_a_path_relative_to_the_current_directory_was_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "pkg/core.py", "def run():\n    return 1\n");
    write(root, "pkg/leaf.py", "import pkg.core\n");
    write(root, "app.py", "from pkg import leaf\n");
    assert!(loci(root, &["scan"]).status.success());
    let sub = root.join("pkg");
    let from_sub = loci(&sub, &["deps", "leaf.py"]);
    assert!(from_sub.status.success(), "{from_sub:?}");
    assert_eq!(
        String::from_utf8_lossy(&from_sub.stdout),
        "pkg/leaf.py:1: pkg.core -> pkg/core.py\n"
    );
    let impact = loci(&sub, &["impact", "core.py", "--depth", "1"]);
    assert!(impact.status.success(), "{impact:?}");
    assert!(
        String::from_utf8_lossy(&impact.stdout).starts_with("impact of pkg/core.py (depth 1, "),
        "{impact:?}"
    );
    let up = loci(&sub, &["deps", "../app.py"]);
    assert!(
        String::from_utf8_lossy(&up.stdout).starts_with("app.py:1: "),
        "{up:?}"
    );
    let absolute = root.canonicalize().unwrap().join("pkg/leaf.py");
    let abs = loci(root, &["deps", absolute.to_str().unwrap()]);
    assert_eq!(abs.stdout, from_sub.stdout, "{abs:?}");
    // Root-relative paths and symbol names still work from the subfolder.
    assert_eq!(loci(&sub, &["deps", "pkg/leaf.py"]).stdout, from_sub.stdout);
    assert!(loci(&sub, &["symbol", "run"]).status.success());
    // Memory written from the subfolder is about the file the map names.
    let wrote = loci(&sub, &["remember", "core.py", "--text", "Runs the core."]);
    assert!(wrote.status.success(), "{wrote:?}");
    let shown = loci(root, &["show", "pkg/core.py"]);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("Runs the core."),
        "{shown:?}"
    );
    let decided = loci(
        &sub,
        &["decide", "Keep run() pure.", "--subject", "core.py"],
    );
    assert!(decided.status.success(), "{decided:?}");
    let log = loci(root, &["show", "decisions"]);
    assert!(
        String::from_utf8_lossy(&log.stdout).contains("pkg/core.py"),
        "{log:?}"
    );
}

/// Fault: `loci context` printed three closing lines: the answer's own ("_≈298 of 300
/// tokens …; 58 more item(s) left out_"), then the CLI's count of the same, then
/// "(truncated: more results than shown)". The answer's own line is the only one.
#[test]
fn fault_a_context_answer_ended_with_three_closing_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for n in 0..30 {
        write(
            root,
            &format!("ledger{n}.py"),
            &format!("def reconcile_ledger_{n}():\n    \"\"\"Reconciles ledger {n}.\"\"\"\n"),
        );
    }
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(
        root,
        &["context", "reconcile the ledger", "--budget", "100"],
    );
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last: Vec<&str> = stdout.lines().rev().take(2).collect();
    assert!(
        last[0].starts_with("_≈") && last[0].contains("left out_"),
        "{stdout}"
    );
    assert_eq!(last[1], "", "{stdout}");
    assert_eq!(stdout.matches("of 100 tokens").count(), 1, "{stdout}");
    assert!(!stdout.contains("items, ~"), "{stdout}");
    assert!(!stdout.contains("(truncated"), "{stdout}");
}

/// Fault: `loci stats --db empty.db` on an existing empty file wrote loci's schema into it
/// (SQLite takes an empty file for a new database), though a command that only reads never
/// creates a store. It is now refused with exit 2 and the file is left empty.
#[test]
fn fault_a_read_only_command_at_an_empty_file_made_it_a_database() {
    let dir = repo();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let db = empty.to_str().unwrap();
    let out = loci(dir.path(), &["--db", db, "stats"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "loci: {db}: an empty file, not a loci database; `loci scan --db {db}` makes it one\n"
        )
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}

/// Fault (fresh-user trial): a 10 KB question was echoed whole in the "nothing found"
/// message on stderr. Messages quote the first 80 characters and `…`.
#[test]
fn fault_a_long_query_was_echoed_whole_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "core.py", "def run():\n    return 1\n");
    assert!(loci(root, &["scan"]).status.success());
    let query = "q".repeat(10_000);
    let out = loci(root, &["search", &query]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("loci: nothing matches `{}…`\n", "q".repeat(80))
    );
}

/// Fault (fresh-user trial): a read-only command in a repository with no `.loci/loci.db`
/// yet created `.loci/` and an empty database and answered from it. It is refused with
/// what to run, by the same check that refuses a missing or empty `--db`, and creates
/// nothing.
#[test]
fn fault_a_read_only_command_at_the_default_path_created_the_database() {
    let dir = repo();
    let root = dir.path();
    let db = root.canonicalize().unwrap().join(".loci/loci.db");
    let said = format!(
        "loci: no database yet at {}; run `loci scan` (or `loci init`) to create it\n",
        db.display()
    );
    for args in [
        &["symbol", "User"][..],
        &["refs", "User"],
        &["callers", "User.save"],
        &["deps", "app/views.py"],
        &["impact", "app/models.py"],
        &["stats"],
        &["search", "user"],
        &["context", "user"],
        &["show", "app/models.py"],
        &["check"],
        &["--json", "stats"],
    ] {
        let out = loci(root, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), said, "{args:?}");
        if args[0] == "--json" {
            // The failure's envelope (fault_an_exit_2_error_printed_no_json_envelope).
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["error"]["kind"], "missing_store", "{args:?}");
        } else {
            assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}");
        }
    }
    assert!(!root.join(".loci").exists());
    // An empty file at the default path is refused the same way.
    std::fs::create_dir(root.join(".loci")).unwrap();
    std::fs::write(&db, b"").unwrap();
    let out = loci(root, &["stats"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "loci: {}: an empty file, not a loci database; `loci scan` makes it one\n",
            db.display()
        )
    );
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
    assert!(loci(root, &["scan"]).status.success());
    assert_eq!(loci(root, &["stats"]).status.code(), Some(0));
}

/// Fault (fresh-user trial): `loci deps nosuch --json` exited 1 with nothing on stdout, so
/// a script parsing the answer failed on empty input. Every `--json` lookup that finds
/// nothing prints the envelope, with a null result and the error where the engine
/// answered "not found" (the shape MCP tools use), or its empty result.
#[test]
fn fault_a_json_lookup_that_found_nothing_printed_no_envelope() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    for (args, message) in [
        (
            &["deps", "nosuch", "--json"][..],
            Some("`nosuch` is not in the map (not scanned, ignored, or skipped)"),
        ),
        (
            &["deps", "nosuch", "--reverse", "--json"],
            Some("`nosuch` is not in the map (not scanned, ignored, or skipped)"),
        ),
        (
            &["impact", "nosuch", "--json"],
            Some("no file or symbol named `nosuch` in the map"),
        ),
        (
            &["show", "nosuch", "--json"],
            Some("no memory about `nosuch` yet"),
        ),
        (
            &["history", "nosuch", "--json"],
            Some("no memory about `nosuch` yet"),
        ),
        (
            &["why", "nosuch", "--json"],
            Some("no memory explains `nosuch`"),
        ),
        (
            &["resolve", "999", "--json"],
            Some("no contradiction 999; `loci lint` lists them"),
        ),
    ] {
        let out = loci(root, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: no JSON envelope on stdout: {e}"));
        assert_eq!(v["index"]["files"], 2, "{args:?}");
        match message {
            Some(message) => {
                assert_eq!(v["result"], Value::Null, "{args:?}");
                assert_eq!(
                    v["error"],
                    serde_json::json!({"kind": "not_found", "message": message}),
                    "{args:?}"
                );
                assert_eq!(
                    String::from_utf8_lossy(&out.stderr),
                    format!("loci: {message}\n"),
                    "{args:?}"
                );
            }
            None => assert_eq!(v.get("error"), None, "{args:?}"),
        }
    }
    // Human output is unchanged: nothing on stdout.
    let out = loci(root, &["deps", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

/// Fault (fresh-user trial): a scan after `git mv a.py b.py` said "1 added, 0 modified, 1
/// deleted, 1 renamed": the rename was counted three times (and the drift ledger had an
/// add, a delete and a rename). A renamed file is counted (and listed, in `--json`, and in
/// the ledger) as renamed only.
#[test]
fn fault_the_scan_summary_counted_a_rename_also_as_an_add_and_a_delete() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    std::fs::rename(root.join("app/models.py"), root.join("app/user.py")).unwrap();
    let out = loci(root, &["scan", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(
        (&r["added"], &r["modified"], &r["deleted"], &r["renamed"]),
        (
            &serde_json::json!([]),
            &serde_json::json!([]),
            &serde_json::json!([]),
            &serde_json::json!([{"from": "app/models.py", "to": "app/user.py"}])
        )
    );
    // The drift ledger has one entry for it too.
    let drift = loci(root, &["drift", "--since", "1"]);
    assert_eq!(
        String::from_utf8_lossy(&drift.stdout),
        "drift after scan 1:\n  scan 2 rename           app/user.py (app/models.py)\n"
    );
    std::fs::rename(root.join("app/user.py"), root.join("app/models.py")).unwrap();
    let out = loci(root, &["scan"]);
    let summary = String::from_utf8_lossy(&out.stdout);
    let first = summary.lines().next().unwrap_or_default();
    let counts = first.split_once(": ").map_or("", |(_, c)| c);
    assert_eq!(
        counts, "0 added, 0 modified, 0 deleted, 1 renamed, 1 unchanged",
        "{summary}"
    );
}

/// Fault found by a fresh-user trial: `loci context --open FILE` with no question was
/// refused by clap ("QUERY is required") though the engine answers about the open files;
/// with neither a question nor open files, the engine's refusal must reach the user.
#[test]
fn fault_context_with_open_files_and_no_question_was_refused() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    // Accepted, and answered with the open file itself: its outline and its symbols (the
    // method, inside the class served FULL, as a digest).
    let out = loci(root, &["context", "--open", "app/models.py"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "## Context for the open files\n### app/models.py (open file: 2 symbols, 1 top-level)\n- `class User:` — line 1\nImported by 1 file(s): app/views.py\n\n### class User (app/models.py:1)\n```\nclass User:\n    def save(self):\n        return 1\n```\n\n- **app/models.py#User.save@method** — `def save(self):` — app/models.py:2\n\n_≈99 of 2000 tokens (an estimate: characters / 4)_\n"
    );
    assert!(out.stderr.is_empty());
    // Neither: answered empty (see `fault_an_empty_query_exited_1_in_search_and_2_in_context`).
    let out = loci(root, &["context"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: the question is empty and no files are open: there is nothing to look for\n"
    );
}

/// Fault found by a fresh-user trial: `loci context "x" --floor -1000` failed in clap
/// ("unexpected argument '-1'"): a negative floor is a number.
#[test]
fn fault_a_negative_context_floor_was_taken_for_a_flag() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["--json", "context", "user", "--floor", "-1000"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&v["result"]["floor"], &v["result"]["abstained"]),
        (&Value::from(-1000.0), &Value::Bool(false)),
        "{v:#}"
    );
}

/// With `--json`, an exit-2 failure printed nothing on stdout: a script reading the
/// envelope got no JSON at all. It now gets the envelope with `error: {kind, message}`
/// (as a not-found answer does), the message also on stderr. clap's own parse errors
/// stay as clap prints them (stderr only).
#[test]
fn fault_an_exit_2_error_printed_no_json_envelope() {
    let dir = repo();
    let root = dir.path();
    let failure = |out: &Output| -> Value {
        assert_eq!(out.status.code(), Some(2));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {:?}", String::from_utf8_lossy(&out.stdout));
        });
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.trim_end(),
            format!("loci: {}", v["error"]["message"].as_str().unwrap())
        );
        v
    };

    // No store: nothing was opened, and the envelope says so.
    let v = failure(&loci(root, &["stats", "--json"]));
    assert_eq!(v["error"]["kind"], "missing_store");
    assert_eq!(
        v["error"]["message"],
        format!(
            "no database yet at {}; run `loci scan` (or `loci init`) to create it",
            root.canonicalize()
                .unwrap_or(root.to_path_buf())
                .join(".loci/loci.db")
                .display()
        )
    );
    assert_eq!(v["result"], Value::Null);
    assert_eq!(v["index"]["revision"], 0);
    assert_eq!(
        v["capability"]["notes"],
        serde_json::json!(["no store was read: the command failed before one was open"])
    );
    assert!(!root.join(".loci").exists());
    // Human mode: stdout stays empty.
    let human = loci(root, &["stats"]);
    assert_eq!(human.status.code(), Some(2));
    assert!(human.stdout.is_empty());

    // A bad argument the engine checks, after the store was opened: its state is there.
    assert_eq!(loci(root, &["scan"]).status.code(), Some(0));
    let v = failure(&loci(
        root,
        &["remember", "../outside.py", "--text", "x", "--json"],
    ));
    assert_eq!(v["error"]["kind"], "invalid_argument");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid argument `subject`"),
        "{v}"
    );
    assert_eq!(v["index"]["files"], 2);
    assert_eq!(v["index"]["revision"], 1);

    // A database of a newer schema is refused before it is read.
    {
        let db = root.join(".loci/loci.db");
        let conn = loci_store::rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations(version, name) VALUES (999, 'future')",
            [],
        )
        .unwrap();
    }
    let v = failure(&loci(root, &["symbol", "User", "--json"]));
    assert_eq!(v["error"]["kind"], "newer_schema");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("schema version 999 is newer than this loci supports"),
        "{v}"
    );
    assert_eq!(v["index"]["revision"], 0);

    // clap's parse errors: clap's message on stderr, no envelope.
    let usage = loci(root, &["symbol", "--json"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(usage.stdout.is_empty());
}

/// Fault found by a fresh-user trial: `loci lint` in a folder never scanned created a
/// store and passed with "0 claims checked", while `check` refused; against an empty map
/// every path a page names would have been a contradiction. `lint` now refuses both ways,
/// creating nothing.
#[test]
fn fault_lint_in_an_unscanned_folder_created_a_store_and_passed() {
    let dir = repo();
    let root = dir.path();
    let out = loci(root, &["lint"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!root.join(".loci").exists());
    let init = loci(root, &["init"]);
    assert_eq!(init.status.code(), Some(0));
    let out = loci(root, &["lint"]);
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()),
        (
            Some(2),
            "loci: the map is empty: no scan has finished on this database, so there is nothing to check memory against; run `loci scan` first\n".to_string()
        )
    );
}

/// An unscanned map is an environment error (exit 2), and its JSON kind said `not_found`,
/// the kind of exit 1 ("nothing found"): scripts branching on the kind read it as an answer.
#[test]
fn fault_lint_on_an_unscanned_map_reported_kind_not_found() {
    let dir = repo();
    let root = dir.path();
    assert_eq!(loci(root, &["init"]).status.code(), Some(0));
    for command in ["lint", "check"] {
        let out = loci(root, &[command, "--json"]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("an envelope");
        assert_eq!(
            (out.status.code(), json["error"]["kind"].as_str()),
            (Some(2), Some("unscanned")),
            "{command}"
        );
    }
}

/// Fault (fresh-user trial): a first `loci sync` in a repository with a long history
/// printed one line per commit read, 200 by default. It lists the newest 10 and counts
/// the others; `--json` still has every one.
#[test]
fn fault_a_first_sync_printed_a_line_for_each_of_200_commits() {
    let dir = repo();
    let root = dir.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    for i in 1..=14 {
        write(
            root,
            "app/models.py",
            &format!("class User:\n    n = {i}\n"),
        );
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", &format!("change {i}")]);
    }
    let out = loci(root, &["sync"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("sync (git): branch main at "),
        "{text}"
    );
    assert!(lines[0].ends_with("; 14 commits, 15 new events"), "{text}");
    assert_eq!(lines[1], "  … 4 older commits (`--json` lists them all)");
    let messages: Vec<&str> = lines[2..12]
        .iter()
        .map(|l| l.rsplit_once(' ').map_or("", |(_, m)| m))
        .collect();
    assert_eq!(
        messages,
        ["5", "6", "7", "8", "9", "10", "11", "12", "13", "14"]
    );
    // Nothing new since: an empty list and no count line.
    let again = loci(root, &["sync", "--json"]);
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["result"]["commits"], serde_json::json!([]));
}

/// Fault (fresh-user trial): a claim naming a method that two modules define
/// (`RegexBuilder::new` in `string` and `bytes`) was reported "(not found in the map)" when
/// remembered, though `loci symbol new` lists both. An ambiguous claim is tracked as the
/// set of its definitions and the line names them; a unique one shows its key (see
/// fault_an_ambiguous_claim_never_went_stale_in_check for what the set does).
#[test]
fn fault_an_ambiguous_claim_was_reported_not_found_in_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub mod string {\n    pub struct RegexBuilder;\n    impl RegexBuilder {\n        pub fn new() -> Self { RegexBuilder }\n    }\n}\npub mod bytes {\n    pub struct RegexBuilder;\n    impl RegexBuilder {\n        pub fn new() -> Self { RegexBuilder }\n        pub fn build(&self) {}\n    }\n}\n",
    );
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(
        root,
        &[
            "remember",
            "src/lib.rs",
            "-t",
            "Start with `RegexBuilder::new`, then `RegexBuilder::build`.",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "wrote src/lib.rs v1 by human:test\n  symbol `RegexBuilder::new` (2 definitions, tracked as a set: src/lib.rs#bytes.RegexBuilder.new@method, src/lib.rs#string.RegexBuilder.new@method)\n  symbol `RegexBuilder::build` -> src/lib.rs#bytes.RegexBuilder.build@method\n"
    );
}

/// Fault: a claim naming `RegexBuilder::new`, which two modules define, was never
/// snapshotted, so `loci check` passed whatever became of either definition. Editing one
/// body now fails the gate with the definition named, `loci why` finds the memory by the
/// name, and `loci confirm` takes the set again.
#[test]
fn fault_an_ambiguous_claim_never_went_stale_in_check() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lib = "pub mod string {\n    pub struct RegexBuilder;\n    impl RegexBuilder {\n        pub fn new() -> Self { RegexBuilder }\n    }\n}\npub mod bytes {\n    pub struct RegexBuilder;\n    impl RegexBuilder {\n        pub fn new() -> Self { RegexBuilder }\n    }\n}\n";
    write(root, "src/lib.rs", lib);
    write(root, "src/main.rs", "fn main() {}\n");
    assert!(loci(root, &["scan"]).status.success());
    assert!(
        loci(
            root,
            &[
                "remember",
                "src/main.rs",
                "-t",
                "Build with `RegexBuilder::new`."
            ]
        )
        .status
        .success()
    );
    assert_eq!(loci(root, &["check"]).status.code(), Some(0));
    write(
        root,
        "src/lib.rs",
        &lib.replacen(
            "pub fn new() -> Self { RegexBuilder }",
            "pub fn new() -> Self { let b = RegexBuilder; b }",
            1,
        ),
    );
    let out = loci(root, &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "stale: memory `src/main.rs` v1 claim `RegexBuilder::new` is stale: the definitions of RegexBuilder.new changed (changed src/lib.rs#string.RegexBuilder.new@method) since it was written\n\
         checked memory (what changed since the last lint) and 0 docs: 0 claims, 0 open contradictions (0 new, 0 recurred, 0 resolved), 1 stale mark on 1 page\n\
         check FAILED: 0 open contradictions (max 0), 1 stale page (max 0)\n"
    );
    let why = loci(root, &["why", "RegexBuilder::new"]);
    let text = String::from_utf8_lossy(&why.stdout);
    assert_eq!(
        text.lines().next(),
        Some("src/main.rs v1 (matched by symbol)"),
        "{text}"
    );
    assert!(
        text.contains("  claim `RegexBuilder::new` -> src/lib.rs#bytes.RegexBuilder.new@method, src/lib.rs#string.RegexBuilder.new@method\n"),
        "{text}"
    );
    // Confirming says what it did first, not only the page.
    let confirmed = loci(root, &["confirm", "src/main.rs"]);
    assert!(confirmed.status.success());
    assert_eq!(
        String::from_utf8_lossy(&confirmed.stdout).lines().next(),
        Some("confirmed src/main.rs v1: 1 claim checked against the code as it is now")
    );
    assert_eq!(loci(root, &["check"]).status.code(), Some(0));
}

/// Fault: `loci import` of memory about a file the importing repository lacks (exported
/// from another checkout) left `loci check` passing: nothing it claimed had a snapshot
/// here. The page is marked deleted and the claims that resolved where it was written are
/// missing symbols; the imported text is kept.
#[test]
fn fault_imported_memory_about_missing_code_passed_check() {
    let from = tempfile::tempdir().unwrap();
    write(
        from.path(),
        "src/parse.py",
        "def tokenize(text):\n    return text.split()\n",
    );
    assert!(loci(from.path(), &["scan"]).status.success());
    assert!(
        loci(
            from.path(),
            &["remember", "src/parse.py", "-t", "Start at `tokenize()`."]
        )
        .status
        .success()
    );
    let export = from.path().join("memory.json");
    assert!(
        loci(
            from.path(),
            &["export", "--output", export.to_str().unwrap()]
        )
        .status
        .success()
    );
    let to = tempfile::tempdir().unwrap();
    write(to.path(), "lib/other.py", "def other():\n    pass\n");
    assert!(loci(to.path(), &["scan"]).status.success());
    let imported = loci(to.path(), &["import", export.to_str().unwrap()]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&imported.stdout),
        format!(
            "imported {}: 1 page created, 1 revision added, 0 already here; 0 facts added, 0 already here; 0 topic members added\n\
             \x20 note: `src/parse.py` is not a file of this checkout: its page is kept, and lint marks it deleted until it exists\n\
             \x20 note: `src/parse.py`: 1 claim resolved where it was exported but names nothing here: `tokenize()`; lint reports it\n",
            export.display()
        )
    );
    let out = loci(to.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "memory src/parse.py\n\
         \x20 line 1 of the page: missing_symbol [medium] #1 `tokenize()`: no symbol `tokenize` in the map\n\
         stale: memory `src/parse.py` v1 is stale: src/parse.py does not exist here (it was missing when this revision was written or imported)\n\
         checked memory (what changed since the last lint) and 0 docs: 1 claim, 1 open contradiction (1 new, 0 recurred, 0 resolved), 1 stale mark on 1 page\n\
         check FAILED: 1 open contradiction (max 0), 1 stale page (max 0)\n"
    );
    let shown = loci(to.path(), &["show", "src/parse.py"]);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("Start at `tokenize()`."),
        "the imported text is kept"
    );
}

/// Fault (fresh-user trial): `loci scan pkg` inside a scanned workspace made a second store
/// in `pkg/.loci`, and every command run in `pkg/` then used it: the workspace's memory
/// about `pkg/m.py` looked lost there. Such a scan is refused with what to run instead;
/// `loci -C pkg init` makes `pkg` a workspace of its own, which it then scans.
#[test]
fn fault_scanning_a_folder_of_a_workspace_made_a_second_store_that_hid_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "pkg/m.py", "def f():\n    pass\n");
    assert!(loci(root, &["scan"]).status.success());
    assert!(
        loci(root, &["remember", "pkg/m.py", "-t", "about m"])
            .status
            .success()
    );
    let out = loci(root, &["scan", "pkg"]);
    assert_eq!(out.status.code(), Some(2));
    let outer = root.canonicalize().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "loci: pkg is inside the workspace {} (its .loci/ holds the map and the memory): run `loci scan` there, or `loci -C pkg init` to make it a workspace of its own\n",
            outer.display()
        )
    );
    assert!(!root.join("pkg/.loci").exists(), "no second store");
    let shown = loci(&root.join("pkg"), &["show", "m.py"]);
    assert_eq!(
        shown.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    // Made a workspace of its own on purpose, it is scanned.
    assert!(loci(root, &["-C", "pkg", "init"]).status.success());
    assert_eq!(loci(root, &["scan", "pkg"]).status.code(), Some(0));
}

/// Fault (fresh-user trial): after `main` was renamed in the code but before a scan, `loci
/// lint` found nothing and `loci check` passed: they judged memory against the map of the
/// last scan. Both refresh the map first.
#[test]
fn fault_lint_and_check_passed_after_code_changes_not_yet_scanned() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "def main():\n    return 1\n");
    assert!(loci(root, &["scan"]).status.success());
    assert!(
        loci(root, &["remember", "a.py", "-t", "Entry: `main()`."])
            .status
            .success()
    );
    assert_eq!(loci(root, &["check"]).status.code(), Some(0));
    write(root, "a.py", "def start():\n    return 1\n");
    let lint = loci(root, &["lint", "--json"]);
    let v: Value = serde_json::from_slice(&lint.stdout).unwrap();
    let kinds: Vec<&str> = v["result"]["contradictions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["missing_symbol"],
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    assert_eq!(v["freshness"]["changed_since_scan"], 0);
    assert_eq!(loci(root, &["check"]).status.code(), Some(1));
}

/// Fault (fresh-user trial): `loci deps FILE` of a file without imports exited 1 with no
/// word on either stream; it says what it did not find, as the other lookups do.
#[test]
fn fault_deps_of_a_file_without_imports_printed_nothing() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["deps", "app/models.py"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: `app/models.py` imports nothing the map records\n"
    );
    let out = loci(root, &["deps", "app/views.py", "--reverse"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: nothing in the map imports `app/views.py`\n"
    );
    // Found: printed, exit 0, nothing on stderr.
    let out = loci(root, &["deps", "app/models.py", "--reverse"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
}

/// The envelope of a `--json` answer that exited non-zero, checked: exit `code`, `error`
/// is `{kind, message}`, and stderr is `loci: {message}`.
#[track_caller]
fn failed_json(out: &Output, code: i32, kind: &str, message: &str) -> Value {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {:?}", String::from_utf8_lossy(&out.stdout));
    });
    assert_eq!(
        v["error"],
        serde_json::json!({"kind": kind, "message": message}),
        "{v:#}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("loci: {message}\n")
    );
    v
}

/// Fault (fresh-user trial): `loci symbol nosuch --json`, `loci search '!!!' --json` and
/// other answers that exit 1 printed an envelope without the `error` that `deps` of a path
/// not in the map had: a script could not tell why. Every non-zero exit's envelope now has
/// `error: {kind, message}`, the message also on stderr, and the result as it was.
#[test]
fn fault_a_json_answer_that_exited_1_did_not_say_why() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    for (args, message) in [
        (
            &["symbol", "nosuch", "--json"][..],
            "no symbol named `nosuch` in the map (`search` finds words in code and docs)",
        ),
        (
            &["refs", "nosuch", "--json"],
            "no references to `nosuch` in the map",
        ),
        (
            &["callers", "nosuch", "--json"],
            "no symbol named `nosuch` in the map (`search` finds words in code and docs)",
        ),
        // A symbol nothing calls is not a typo: the two do not read alike.
        (
            &["callers", "show", "--json"],
            "no callers of `show` in the map",
        ),
        (&["search", "!!!", "--json"], "nothing matches `!!!`"),
        (&["search", "zzqq", "--json"], "nothing matches `zzqq`"),
        (
            &["deps", "app/models.py", "--json"],
            "`app/models.py` imports nothing the map records",
        ),
        (
            &["deps", "README.md", "--json"],
            "`README.md` is not in the map (not scanned, ignored, or skipped)",
        ),
        (
            &["context", "zzqq", "--json"],
            "nothing relevant to `zzqq` cleared the floor (the answer abstained)",
        ),
        (
            &["recap", "--json"],
            "no sessions yet; `loci session begin` starts one",
        ),
        (
            &["topic", "list", "--json"],
            "no topics yet; `loci topic add TOPIC MEMBER` makes one",
        ),
        (
            &["fact", "list", "--json"],
            "no facts yet; `loci fact add --claim TEXT --cmd COMMAND` records one",
        ),
    ] {
        let v = failed_json(&loci(root, args), 1, "not_found", message);
        assert_eq!(v["index"]["files"], 2, "{args:?}");
    }
    failed_json(
        &loci(root, &["drift", "--since", "1", "--json"]),
        1,
        "not_found",
        "no drift after scan 1: no file changed since",
    );
    // Lists keep their (empty) result; a lookup of something absent has none.
    let v = failed_json(
        &loci(root, &["symbol", "nosuch", "--json"]),
        1,
        "not_found",
        "no symbol named `nosuch` in the map (`search` finds words in code and docs)",
    );
    assert_eq!(v["result"], serde_json::json!([]));
    // Findings: lint and check say what they found.
    assert!(
        loci(root, &["remember", "app", "-t", "see `app/gone.py`"])
            .status
            .success()
    );
    let v = failed_json(
        &loci(root, &["lint", "--json"]),
        1,
        "findings",
        "lint found 1 open contradiction and 0 stale marks",
    );
    assert_eq!(v["result"]["contradictions"][0]["claim"], "app/gone.py");
    failed_json(
        &loci(root, &["check", "--json"]),
        1,
        "check_failed",
        "check failed: 1 open contradiction (max 0), 0 stale pages (max 0)",
    );
    // Human mode: the same message on stderr.
    let out = loci(root, &["symbol", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: no symbol named `nosuch` in the map (`search` finds words in code and docs)\n"
    );
    // Exit 0 has no `error`.
    let out = loci(root, &["symbol", "User", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.get("error"), None);
}

/// Fault (fresh-user trial): `loci --db /nonexistent/deeper/x.db scan` made both
/// directories. A `--db` in a folder that does not exist is refused, naming the folder;
/// loci's own `.loci/` is still made.
#[test]
fn fault_a_db_in_a_missing_folder_made_the_folders() {
    let dir = repo();
    let root = dir.path();
    let db = root.join("no/deeper/x.db");
    let db = db.to_str().unwrap();
    for command in ["scan", "stats", "init"] {
        let out = loci(root, &["--db", db, command]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "loci: invalid argument `db`: no such directory: {}/no/deeper (the folder of the database {db}); create it first, or give a path in an existing folder\n",
                root.display()
            ),
            "{command}"
        );
    }
    assert!(!root.join("no").exists());
    assert!(!root.join(".loci").exists());
    let out = loci(root, &["--db", db, "scan", "--json"]);
    let v = failed_json(
        &out,
        2,
        "invalid_argument",
        &format!(
            "invalid argument `db`: no such directory: {}/no/deeper (the folder of the database {db}); create it first, or give a path in an existing folder",
            root.display()
        ),
    );
    assert_eq!(v["result"], Value::Null);
    // The workspace's own `.loci/` is loci's to make, for a `--db` in it too.
    let own = root.join(".loci/other.db");
    assert!(
        loci(root, &["--db", own.to_str().unwrap(), "scan"])
            .status
            .success()
    );
    assert!(own.is_file());
    assert!(loci(root, &["scan"]).status.success());
    assert!(root.join(".loci/loci.db").is_file());
}

/// Fault (fresh-user trial): a damaged database (random bytes, a truncated copy) failed
/// with SQLite's words only ("reading the schema version: file is not a database"),
/// naming neither the file nor the way out. The message names the database and `loci
/// restore`, the file is left byte for byte, and `loci restore` does work on it (it had
/// failed the same way: it opened the damaged store first).
#[test]
fn fault_a_damaged_database_named_neither_its_path_nor_the_way_out() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let backup = root.join("good.db");
    assert!(
        loci(root, &["backup", backup.to_str().unwrap()])
            .status
            .success()
    );
    let db = root.canonicalize().unwrap().join(".loci/loci.db");
    let real = std::fs::read(&db).unwrap();
    let message = |detail: &str| {
        format!(
            "{}: the database is damaged ({detail}). `loci export -o FILE` may still save the memory it holds; `loci restore BACKUP` puts a backup in its place and keeps the damaged file in {}; or move it aside and run `loci scan` for a new one (the memory it held would be lost)",
            db.display(),
            db.parent().unwrap().join("backups").display()
        )
    };
    let noise: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for (bytes, detail) in [
        (noise.clone(), "file is not a database"),
        (
            real[..real.len() / 2].to_vec(),
            "database disk image is malformed",
        ),
    ] {
        std::fs::write(&db, &bytes).unwrap();
        for args in [
            &["stats"][..],
            &["scan"],
            &["symbol", "User"],
            &["remember", "app", "-t", "x"],
        ] {
            let out = loci(root, args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                format!("loci: {}\n", message(detail)),
                "{args:?}"
            );
        }
        failed_json(
            &loci(root, &["stats", "--json"]),
            2,
            "corrupt",
            &message(detail),
        );
        assert!(
            std::fs::read(&db).unwrap() == bytes,
            "the damaged file was changed"
        );
    }
    // Damage that opening does not reach (the symbols' pages) is named the same way when
    // a query reaches it; the rest of the store still answers.
    let damaged = {
        std::fs::write(&db, &real).unwrap();
        let bytes = damage::symbols_damaged(&db);
        std::fs::write(&db, &bytes).unwrap();
        bytes
    };
    let out = loci(root, &["symbol", "User"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("loci: {}\n", message("database disk image is malformed"))
    );
    assert_eq!(loci(root, &["recap"]).status.code(), Some(1));
    // A backup of it reads the damage too (naming the database, not its hidden partial
    // copy with "nothing was restored").
    let out = loci(root, &["backup", "again.db"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "loci: {}: the database is damaged (",
            db.display()
        )) && err.contains("`loci restore BACKUP` puts a backup in its place"),
        "{err}"
    );
    assert!(!root.join("again.db").exists());
    assert!(
        std::fs::read(&db).unwrap() == damaged,
        "the damaged file was changed"
    );
    // The way out: restore puts the backup in place and keeps the damaged file.
    let out = loci(root, &["restore", backup.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = names_in(&db.parent().unwrap().join("backups"));
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].starts_with("loci-damaged-"), "{kept:?}");
    assert!(std::fs::read(db.parent().unwrap().join("backups").join(&kept[0])).unwrap() == damaged);
    assert_eq!(
        String::from_utf8_lossy(&loci(root, &["symbol", "User"]).stdout)
            .lines()
            .next(),
        Some("app/models.py:1: class User  [app/models.py#User@class]")
    );
    // Damaged again: the message now names the backup loci kept.
    std::fs::write(&db, &noise).unwrap();
    let out = loci(root, &["stats"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "puts a backup in its place (the newest loci made: {}) and keeps",
            db.parent()
                .unwrap()
                .join("backups")
                .join(&kept[0])
                .display()
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fault (fresh-user trial): `loci -C /nonexistent stats` said "/nonexistent: not a
/// directory", as if something were there. It says "no such directory"; "not a
/// directory" is for a file.
#[test]
fn fault_a_missing_root_was_called_not_a_directory() {
    let dir = repo();
    let root = dir.path();
    let missing = root.join("nowhere");
    let out = loci(root, &["-C", missing.to_str().unwrap(), "stats"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("loci: no such directory: {}\n", missing.display())
    );
    let file = root.join("app/models.py");
    let out = loci(root, &["-C", file.to_str().unwrap(), "stats"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("loci: {}: not a directory\n", file.display())
    );
    let out = loci(root, &["scan", missing.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("loci: no such directory: {}\n", missing.display())
    );
    assert!(!missing.exists());
}

/// Fault (fresh-user trial): `loci context --open SOMEDIR` abstained without a word. An
/// open folder scores the memory about it and its files, not the outlines an open file
/// brings: an abstaining answer now says so, naming a file in it (the markdown in text
/// mode, once: not again on stderr; `capability.notes` in JSON).
#[test]
fn fault_an_open_folder_abstained_without_a_note() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let note = "open folder `app`: memory about it and about its files scores open-file points, but only an open file brings its outline and symbols (open a file in it, such as `app/views.py`)";
    let out = loci(root, &["context", "--open", "app"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "> note: {note}\nNothing in memory, code or docs is relevant enough to the open files (best relevance 0.0 < floor 10.5). Read the code directly.\n"
        )
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: nothing relevant to the open files cleared the floor (the answer abstained)\n"
    );
    let v = failed_json(
        &loci(root, &["context", "--open", "app", "--json"]),
        1,
        "not_found",
        "nothing relevant to the open files cleared the floor (the answer abstained)",
    );
    assert_eq!(
        v["capability"]["notes"],
        serde_json::json!([
            "not a git repository: history features are unavailable",
            note
        ])
    );
    // Memory about the folder is what it brings.
    assert!(
        loci(root, &["remember", "app", "-t", "the app package"])
            .status
            .success()
    );
    let out = loci(root, &["context", "--open", "app"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fault (fresh-user trial): `loci search ""` exited 1 ("nothing matches ``") and `loci
/// context ""` exited 2 (an invalid argument). A blank question is answered empty by both
/// (exit 1, saying it was empty; context abstains); `eval` refuses an in-scope case that
/// asks nothing instead of scoring it.
#[test]
fn fault_an_empty_query_exited_1_in_search_and_2_in_context() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    for q in ["", "   "] {
        let out = loci(root, &["search", q]);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "loci: the query is empty: there is nothing to search for\n"
        );
        let out = loci(root, &["context", q]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "the question is empty and no files are open: there is nothing to look for.\n"
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "loci: the question is empty and no files are open: there is nothing to look for\n"
        );
        let v = failed_json(
            &loci(root, &["context", q, "--json"]),
            1,
            "not_found",
            "the question is empty and no files are open: there is nothing to look for",
        );
        assert_eq!(v["result"]["abstained"], true);
        failed_json(
            &loci(root, &["search", q, "--json"]),
            1,
            "not_found",
            "the query is empty: there is nothing to search for",
        );
    }
    write(
        root,
        "cases.jsonl",
        "{\"id\": \"blank\", \"query\": \" \", \"gold\": [\"app/models.py\"]}\n",
    );
    let out = loci(root, &["eval", "cases.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: invalid argument `cases`: cases.jsonl:1: case `blank` is in scope but asks nothing (an empty query and no open files): context abstains on it\n"
    );
}

/// Fault (fresh-user trial): `loci context foo --floor -inf` (and `--floor -5` on some
/// builds) was taken by clap for a flag ("unexpected argument '-i'"). Numeric options and
/// arguments take negative values, so the answer is the option's own check.
#[test]
fn fault_a_negative_number_was_taken_for_a_flag() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["context", "user", "--floor", "-5"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = loci(root, &["context", "user", "--floor", "-inf"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: invalid argument `floor`: -inf: the floor is a finite number of points (a very low one, say -1000, never abstains)\n"
    );
    for (args, starts) in [
        (
            &["impact", "app/models.py", "--depth", "-1"][..],
            "error: invalid value '-1' for '--depth <DEPTH>': a whole number of hops, at least 1",
        ),
        (
            &["search", "user", "--limit", "-1"],
            "error: invalid value '-1' for '--limit <LIMIT>': a whole number of hits, at least 0",
        ),
        (
            &["recap", "-2"],
            "error: invalid value '-2' for '[N]': a whole number of sessions, at least 1",
        ),
    ] {
        let out = loci(root, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(starts), "{args:?}: {err}");
    }
    // A negative version reaches the engine, which has none: nothing found.
    let out = loci(root, &["rollback", "app", "-1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("loci: "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fault (fresh-user trial): messages counted in the plural whatever the count ("1
/// commits", "1 files"). One helper words every count-noun message.
#[test]
fn fault_a_count_of_one_was_in_the_plural() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "one.py", "X = 1\n");
    let out = loci(root, &["scan"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        &lines[1..],
        [
            "map: 1 file, 1 line, 1 symbol, 0 refs (0 resolved), 0 deps (0 unresolved imports)",
            "  python             1 file          1 line",
        ]
    );
    let out = loci(root, &["stats"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .skip(1)
            .collect::<Vec<_>>(),
        [
            "1 file, 1 line, 1 symbol, 0 refs (0 resolved), 0 deps, 0 unresolved imports",
            "  python             1 file          1 line",
        ]
    );
    assert!(
        loci(root, &["remember", "one.py", "-t", "see `one.py`"])
            .status
            .success()
    );
    let out = loci(root, &["lint"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "checked memory (what changed since the last lint) and 0 docs: 1 claim, 0 open contradictions (0 new, 0 recurred, 0 resolved), 0 stale marks on 0 pages\n"
    );
    let out = loci(root, &["export", "-o", "memory.json"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "exported 1 page, 1 revision, 0 facts, 0 sessions and 0 dismissals to memory.json\n"
    );
}

/// Fault (fresh-user trial): `loci backup` said "268 pages", meaning SQLite's pages, where
/// loci's memory has pages of its own. It says bytes and "database pages".
#[test]
fn fault_backup_said_pages_meaning_sqlite_pages() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["backup", "b.db"]);
    assert_eq!(out.status.code(), Some(0));
    let bytes = std::fs::metadata(root.join("b.db")).unwrap().len();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "backed up to b.db ({bytes} bytes: {} database pages of SQLite, copied in 1 step with 0 restarts for concurrent writes); integrity check ok\n",
            bytes / 4096
        )
    );
}

/// Fault found while checking the trial's faults: `loci deps app` and `loci impact app`,
/// of a folder the map holds, said "`app` is not in the map" / "no file or symbol named
/// `app`". They say it is a folder and name a file in it (exit 1 as before).
#[test]
fn fault_deps_and_impact_of_a_folder_said_it_was_not_in_the_map() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    for (args, message) in [
        (
            &["deps", "app"][..],
            "`app` is a folder: the map records imports per file (such as `app/views.py`)",
        ),
        (
            &["impact", "app/"],
            "`app` is a folder: impact takes a file or a symbol (such as `app/views.py`)",
        ),
    ] {
        let out = loci(root, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("loci: {message}\n")
        );
    }
}

/// Faults found by a fresh-user trial: `why PATH:LINE` took PATH as root-relative only
/// (`why models.py:1` in `app/` found nothing, though `impact`, `show` and `remember` take
/// paths relative to the current folder); `topic rm TYPO PATH` exited 0 and made an empty
/// page `topic:TYPO` for good; and `pin`, `confirm` or `rollback` of a missing page or
/// version exited 2 where `show` exits 1 ("nothing found").
#[test]
fn fault_why_from_a_subfolder_topic_rm_of_a_typo_and_not_found_exit_codes() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    assert!(
        loci(
            root,
            &["remember", "app/models.py", "-t", "`User.save` returns 1."]
        )
        .status
        .success()
    );
    let out = loci(&root.join("app"), &["why", "models.py:1"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("app/models.py v1 (matched by path)\n"),
        "{out:?}"
    );
    let out = loci(root, &["topic", "rm", "nosuch", "app"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: no topic `topic:nosuch` (`loci topic list` shows the topics)\n"
    );
    assert!(
        loci(root, &["topic", "add", "billing", "app"])
            .status
            .success()
    );
    let out = loci(root, &["topic", "rm", "billing", "app/views.py"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: `app/views.py` is not a member of `topic:billing`\n"
    );
    let topics = loci(root, &["topic", "list"]);
    assert_eq!(
        String::from_utf8_lossy(&topics.stdout),
        "topic:billing: app\n"
    );
    for (args, message) in [
        (
            &["pin", "nosuch.py"][..],
            "loci: no memory about `nosuch.py` yet\n",
        ),
        (
            &["rollback", "app/models.py", "5"][..],
            "loci: `app/models.py` has no version 5\n",
        ),
    ] {
        let out = loci(root, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), message, "{args:?}");
    }
}

/// Fault found by a fresh-user trial: `remember` said "no single definition in the map:
/// not tracked" for a path the map lacks, a symbol with no definition and a symbol with
/// more definitions than a set tracks alike. Each kind now says which.
#[test]
fn fault_every_untracked_claim_was_called_no_single_definition() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(
        root,
        &[
            "remember",
            "app/models.py",
            "-t",
            "See `nosuch/file.py` and `print()`.",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "wrote app/models.py v1 by human:test\n  path `nosuch/file.py` (missing_path [high]: `nosuch/file.py` does not exist; `loci lint` reports it)\n  symbol `print()` (no definition in the map, or more than the 8 a set tracks: not tracked)\n"
    );
    assert!(
        loci_engine::memory::untracked_reason("symbol").contains(&format!(
            "the {} a set tracks",
            loci_engine::memory::MAX_TRACKED_DEFINITIONS
        ))
    );
}

/// Fault (fresh-user trial): `loci export` then `loci import` into a checkout with the same
/// code showed no stale mark for a note that was stale where it was exported (its claimed
/// function's body had changed): the import took new snapshots here. It keeps the
/// exported ones now, so `lint` marks the note there and here alike.
#[test]
fn fault_export_then_import_confirmed_a_stale_note() {
    let from = tempfile::tempdir().unwrap();
    write(
        from.path(),
        "mail/policy.py",
        "def fold(x):\n    return x\n",
    );
    assert!(loci(from.path(), &["scan"]).status.success());
    assert!(
        loci(
            from.path(),
            &["remember", "mail/policy.py", "-t", "Folding is `fold()`."]
        )
        .status
        .success()
    );
    let changed = "def fold(x):\n    return x + 1\n";
    write(from.path(), "mail/policy.py", changed);
    assert!(loci(from.path(), &["scan"]).status.success());
    // The scan checked the claim already; an import is checked by the next lint.
    let marks = |checked: &str| {
        format!(
            "stale: memory `mail/policy.py` v1 is stale: mail/policy.py changed since it was written\n\
             stale: memory `mail/policy.py` v1 claim `fold()` is stale: body of mail/policy.py#fold@function changed since it was written\n\
             checked memory (what changed since the last lint) and 0 docs: {checked}, 0 open contradictions (0 new, 0 recurred, 0 resolved), 2 stale marks on 1 page\n"
        )
    };
    assert_eq!(
        String::from_utf8_lossy(&loci(from.path(), &["lint"]).stdout),
        marks("0 claims")
    );
    let export = from.path().join("memory.json");
    assert!(
        loci(
            from.path(),
            &["export", "--output", export.to_str().unwrap()]
        )
        .status
        .success()
    );
    let to = tempfile::tempdir().unwrap();
    write(to.path(), "mail/policy.py", changed);
    assert!(loci(to.path(), &["scan"]).status.success());
    let imported = loci(to.path(), &["import", export.to_str().unwrap()]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&loci(to.path(), &["lint"]).stdout),
        marks("1 claim")
    );
}

/// Fault (fresh-user trial): `loci context q --budget -5` said "invalid digit found in
/// string" (Rust's parse error) and `--depth 0` "0 is not in 1..=4294967295". Every count
/// option names its unit and its least value; the engine's finer limits still apply.
#[test]
fn fault_a_negative_budget_said_invalid_digit() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    for (args, want) in [
        (
            &["context", "user", "--budget", "-5"][..],
            "error: invalid value '-5' for '--budget <BUDGET>': a whole number of tokens, at least 50",
        ),
        (
            &["impact", "app/models.py", "--depth", "0"],
            "error: invalid value '0' for '--depth <DEPTH>': a whole number of hops, at least 1",
        ),
        (
            &["impact", "app/models.py", "--depth", "99999999999"],
            "error: invalid value '99999999999' for '--depth <DEPTH>': a whole number of hops, at least 1: 99999999999 is too large",
        ),
        (
            &["sync", "--limit", "0"],
            "error: invalid value '0' for '--limit <LIMIT>': a whole number of commits, at least 1",
        ),
        (
            &["eval", "cases.jsonl", "--k", "two"],
            "error: invalid value 'two' for '--k <K>': a whole number of ranks, at least 0",
        ),
    ] {
        let out = loci(root, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().next(), Some(want), "{args:?}: {err}");
    }
    // Fault (fresh-user trial): "at least 0", then the engine refused 0 to 49. The least
    // budget the engine answers is the one the option names.
    let out = loci(root, &["context", "user", "--budget", "49"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.lines().next(),
        Some(
            "error: invalid value '49' for '--budget <BUDGET>': a whole number of tokens, at least 50"
        ),
        "{err}"
    );
    assert!(
        loci(root, &["context", "user", "--budget", "50"])
            .status
            .code()
            != Some(2)
    );
}

/// Fault (fresh-user trial): `loci context q --floor 1e308` echoed the floor as 309
/// digits in its abstention line. Magnitudes of a million and more are written in
/// scientific notation.
#[test]
fn fault_a_huge_floor_was_echoed_in_full() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["context", "user", "--floor", "1e308"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(" < floor 1.0e308). Read the code directly."),
        "{text}"
    );
    assert!(text.len() < 400, "{text}");
}

/// Fault (fresh-user trial): `loci drift --since 999` on a store with two scans printed an
/// empty report, which reads as "nothing changed". A scan that does not exist is a usage
/// error naming the scans there are.
#[test]
fn fault_drift_since_a_scan_that_does_not_exist_printed_an_empty_report() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["init"]).status.success());
    let out = loci(root, &["drift", "--since", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: invalid argument `since`: there is no scan 1: no scan has finished yet\n"
    );
    assert!(loci(root, &["scan"]).status.success());
    write(root, "app/extra.py", "X = 1\n");
    assert!(loci(root, &["scan"]).status.success());
    for since in ["999", "-1"] {
        let out = loci(root, &["drift", "--since", since]);
        assert_eq!(out.status.code(), Some(2), "{since}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "loci: invalid argument `since`: there is no scan {since}: scans are numbered 0 (before the first) to 2 (the last)\n"
            )
        );
    }
    let out = loci(root, &["drift", "--since", "0"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fault (fresh-user trial): `loci backup missing/b.db` made the folder `missing/` where
/// `--db missing/x.db` refuses it. Neither makes a folder a user typed.
#[test]
fn fault_backup_made_missing_folders_that_db_refuses() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["backup", "missing/deeper/b.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: invalid argument `PATH`: no such directory: missing/deeper (the folder of the backup missing/deeper/b.db); create it first, or give a path in an existing folder\n"
    );
    assert!(!root.join("missing").exists());
    std::fs::create_dir_all(root.join("missing/deeper")).unwrap();
    assert_eq!(
        loci(root, &["backup", "missing/deeper/b.db"]).status.code(),
        Some(0)
    );
}

/// Fault (fresh-user trial): `loci restore copy.db` of a copy of a live store (a WAL
/// database) left `copy.db-wal` and `copy.db-shm` beside the user's file: SQLite's
/// read-only connection makes both and cannot remove them. The backup is read as the
/// read-only store is, creating nothing.
#[test]
fn fault_restoring_from_a_wal_database_left_a_wal_and_shm_beside_it() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let copy = root.join("copy.db");
    std::fs::copy(root.join(".loci/loci.db"), &copy).unwrap();
    let header = std::fs::read(&copy).unwrap();
    assert_eq!((header[18], header[19]), (2, 2), "the copy is in WAL mode");
    let out = loci(root, &["restore", copy.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!root.join("copy.db-wal").exists());
    assert!(!root.join("copy.db-shm").exists());
    // A -wal without a -shm (a killed writer's) is named, and nothing is restored.
    std::fs::write(root.join("copy.db-wal"), b"").unwrap();
    let out = loci(root, &["restore", copy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("it has a write-ahead log (-wal) that a killed writer left unapplied"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!root.join("copy.db-shm").exists());
}

/// Fault (fresh-user trial): `loci --db notes.txt restore b.db` replaced a text file with
/// the backup (keeping it under backups/ as "damaged"): a `--db` that is not a SQLite file
/// at all, outside loci's own folder, is refused and left as it was.
#[test]
fn fault_restore_replaced_a_file_that_was_not_a_database() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    assert!(loci(root, &["backup", "b.db"]).status.success());
    write(root, "notes.txt", "important\n");
    let out = loci(root, &["--db", "notes.txt", "restore", "b.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "loci: invalid argument `db`: notes.txt is not a SQLite database (it does not begin with SQLite's header): loci will not put a backup in its place; check --db, or move the file aside first\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "important\n"
    );
    assert!(!root.join("backups").exists());
}

/// `loci refs NAME` stopped at 1,000 rows and said only "(truncated: more results than
/// shown)", and `--json` had `limits.omitted: 0`: how many more there were was not told.
#[test]
fn fault_a_cut_listing_did_not_say_how_many_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let calls: String = (0..5).map(|_| "    step()\n").collect();
    write(
        root,
        "m.py",
        &format!("def step():\n    pass\n\ndef run():\n{calls}"),
    );
    assert_eq!(loci(root, &["scan"]).status.code(), Some(0));
    let cut = loci(root, &["callers", "step", "--limit", "2"]);
    assert_eq!(cut.status.code(), Some(0));
    let text = String::from_utf8(cut.stdout).unwrap();
    assert!(
        text.ends_with("... and 3 more, not listed; `--limit 0` lists all\n"),
        "{text}"
    );
    let json = loci(root, &["refs", "step", "--limit", "2", "--json"]);
    let env: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(env["result"].as_array().unwrap().len(), 2);
    assert_eq!(env["limits"]["omitted"], 3);
    assert_eq!(env["limits"]["budget"], 2);
    assert_eq!(env["limits"]["truncated"], true);
    let all = loci(root, &["refs", "step", "--limit", "0", "--json"]);
    let env: Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(env["result"].as_array().unwrap().len(), 5);
    assert_eq!(env["limits"]["omitted"], 0);
    let bad = loci(root, &["refs", "step", "--limit", "-1"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Fault found by a trial: `remember` answered "no file or folder of that path in the
/// map: not tracked" for a misspelt path that `loci lint` then reported as
/// `missing_path [high]`; and lint suggested nothing for a typo of the file beside it.
/// The write says what lint will say, with the nearest file.
#[test]
fn fault_remember_called_a_path_lint_reports_missing_not_tracked() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(
        root,
        &[
            "remember",
            "app/views.py",
            "-t",
            "Rows come from `app/modles.py` (`User.save()`, `User.load()`).",
            "--json",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    let claims = env["result"]["claims"].as_array().unwrap();
    assert_eq!(
        claims[0]["finding"],
        serde_json::json!({
            "kind": "missing_path",
            "severity": "high",
            "truth": "`app/modles.py` does not exist",
            "suggestion": "app/models.py"
        })
    );
    assert_eq!(claims[1]["resolved"], "app/models.py#User.save@method");
    assert!(claims[1].get("finding").is_none(), "{claims:?}");
    assert_eq!(claims[2]["finding"]["kind"], "missing_symbol");
    let lint = String::from_utf8(loci(root, &["lint"]).stdout).unwrap();
    assert!(
        lint.contains("missing_path [high] #1 `app/modles.py`: `app/modles.py` does not exist (did you mean `app/models.py`?)"),
        "{lint}"
    );
}

/// Fault: the scan summary said "invalid UTF-8 replaced in 1 file" and not which.
#[test]
fn fault_the_scan_summary_did_not_name_the_files_with_invalid_utf8() {
    let dir = repo();
    let root = dir.path();
    std::fs::write(root.join("app/latin1.py"), b"name = '\xe9t\xe9'\n").unwrap();
    let out = loci(root, &["scan"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.ends_with("invalid UTF-8 replaced (U+FFFD) in 1 file:\n  app/latin1.py\n"),
        "{text}"
    );
}

/// Fault found by a trial: `loci search WORDS --path P` took `P` from the workspace root
/// even in a subfolder, where every other path argument is taken from the current folder
/// (`cd email && loci search header --path header.py` said no such path).
#[test]
fn fault_search_path_was_not_taken_from_the_current_folder() {
    let dir = repo();
    let root = dir.path();
    // A `save` outside `app/`, which the whole workspace would find.
    write(root, "tools/save.py", "def save():\n    return 2\n");
    assert!(loci(root, &["scan"]).status.success());
    let app = root.join("app");
    let out = loci(&app, &["search", "User", "--path", "models.py", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = env["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| *p == "app/models.py"),
        "{paths:?}"
    );
    // `.` there is the folder, not the workspace.
    let paths_of = |out: Output| -> Vec<String> {
        let env: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut paths: Vec<String> = env["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect();
        paths.sort();
        paths.dedup();
        paths
    };
    assert_eq!(
        paths_of(loci(&app, &["search", "save", "--json"])),
        ["app/models.py", "tools/save.py"]
    );
    assert_eq!(
        paths_of(loci(&app, &["search", "save", "--path", ".", "--json"])),
        ["app/models.py"]
    );
}

/// Fault found by a trial: a symbol key whose path is written from the current folder
/// (`models.py#User@class` in `app/`) named no symbol, though paths are taken from there.
#[test]
fn fault_a_symbol_key_was_not_taken_from_the_current_folder() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(&root.join("app"), &["symbol", "models.py#User@class"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("app/models.py:1: class User  [app/models.py#User@class]\n"),
        "{text}"
    );
}

/// Found by a fresh-user trial: `context` with an open file the map does not hold said so
/// twice on a terminal, in the answer's markdown and again on stderr. The answer says it
/// once; stderr is left for what the answer does not say.
#[test]
fn fault_a_context_note_on_an_open_file_was_printed_twice() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["context", "save the user", "--open", "app/nope.py"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let note = "open file `app/nope.py` is not in the map";
    assert_eq!(stdout.matches(note).count(), 1, "{stdout}");
    assert!(!stderr.contains(note), "{stderr}");
    // With --json the note is in the envelope's capability notes.
    let out = loci(
        root,
        &[
            "context",
            "save the user",
            "--open",
            "app/nope.py",
            "--json",
        ],
    );
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = env["capability"]["notes"].as_array().unwrap();
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.as_str().unwrap().starts_with(note))
            .count(),
        1,
        "{env:#}"
    );
}

/// Fault (fresh-user trial): `loci search -band` (any query starting with `-`) failed with
/// clap's "unexpected argument '-b'" (exit 2). The query of `search` and `context` takes
/// a leading hyphen; flags given before or after it are still flags.
#[test]
fn fault_a_query_starting_with_a_hyphen_was_taken_for_a_flag() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    assert!(
        loci(
            root,
            &["remember", "app", "--text", "Pass -band to the resampler."]
        )
        .status
        .success()
    );
    for args in [
        &["search", "-band", "--kind", "memory", "--json"][..],
        &["search", "--kind", "memory", "-band", "--json"],
        &["--json", "search", "-band", "--kind", "memory"],
        &["search", "--kind", "memory", "--json", "--", "-band"],
    ] {
        let out = loci(root, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let env: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ids: Vec<&str> = env["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["app"], "{args:?}");
    }
    let out = loci(
        root,
        &["context", "-band resampler", "--budget", "300", "--json"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["result"]["query"], "-band resampler");
    assert_eq!(env["limits"]["budget"], 300);
    // A flag that is not one is still refused, as before, when no query is pending.
    let out = loci(root, &["search", "band", "--nonsense"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Fault (fresh-user trial): `loci symbol extra` right after `def extra()` was written,
/// before a rescan, said only "no symbol named `extra`": an agent took the function for
/// missing. The answer now says on stderr that mapped files changed since the scan.
#[test]
fn fault_not_found_from_a_stale_map_said_nothing_of_it() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    write(
        root,
        "app/models.py",
        "class User:\n    def save(self):\n        return 1\n\ndef extra():\n    return 2\n",
    );
    let out = loci(root, &["symbol", "extra"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "note: 1 mapped file changed on disk since the last scan: this answer may miss what it defines now (`loci scan` maps it)",
            "loci: no symbol named `extra` in the map (`search` finds words in code and docs)",
        ]
    );
}

/// A question longer than a command line holds (128 KiB per argument on Linux) had no way
/// in: `-` reads it from stdin, and the answer says which part of it was used.
#[test]
fn fault_a_question_over_the_command_line_limit_could_not_be_asked() {
    use std::io::Write;
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    // Invalid UTF-8 (a stray 0xFF) is a question too: it reads as U+FFFD.
    let mut sent = format!("User.save {}", "the ".repeat(40_000)).into_bytes();
    sent.push(0xFF);
    let question = String::from_utf8_lossy(&sent).into_owned();
    let mut child = Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(["context", "-", "--json"])
        .current_dir(root)
        .env_remove("LOCI_DB")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&sent).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["result"]["items"][0]["id"],
        "app/models.py#User.save@method"
    );
    assert!(
        v["capability"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n
                == &Value::from(format!(
                    "the query is {} bytes: its first 16384 were read",
                    question.trim_end().len()
                ))),
        "{}",
        v["capability"]["notes"]
    );
    // Without `--json` the note goes to stderr, as every note about an answer does.
    let mut child = Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(["context", "-"])
        .current_dir(root)
        .env_remove("LOCI_DB")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&sent).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "note: the query is {} bytes: its first 16384 were read",
            question.trim_end().len()
        )),
        "{stderr}"
    );
}

/// Fault: a store with a damaged page of memory passed `scan`, `stats` and `remember` with
/// exit 0, and failed only the queries that read the page. `stats` checks the tables of
/// memory first; `scan` and `remember` when a check is due, and a query that meets the
/// damage between checks is diagnosed by the same check: each says so, naming the table. A
/// read of the map still answers.
#[test]
fn fault_a_damaged_page_of_memory_passed_scan_stats_and_remember() {
    let dir = repo();
    let root = dir.path();
    assert!(loci(root, &["scan"]).status.success());
    for i in 0..50 {
        let subject = format!("topic:m{i}");
        let body = "Users are saved by `User.save()`. ".repeat(20);
        assert!(
            loci(root, &["remember", &subject, "-t", &body])
                .status
                .success()
        );
    }
    let db = root.canonicalize().unwrap().join(".loci/loci.db");
    let conn = loci_store::rusqlite::Connection::open(&db).unwrap();
    let page_size: usize = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let root_page: usize = conn
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = 'revisions'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[(root_page - 1) * page_size..root_page * page_size].fill(0xA5);
    std::fs::write(&db, &bytes).unwrap();
    for args in [&["stats"][..], &["scan"], &["remember", "app", "-t", "x"]] {
        let out = loci(root, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!(
                "loci: {}: the database is damaged (table revisions: ",
                db.display()
            )),
            "{args:?}: {err}"
        );
    }
    let out = loci(root, &["symbol", "User"]);
    assert_eq!(out.status.code(), Some(0));
}

/// The code-reading commands answer exactly on a fixture — dotted names as code spells them
/// (`pkg.getLogger` is `getLogger` in `pkg/__init__.py`), outgoing calls, a file's outline,
/// a definition's source with its memory, the memory listing — and an empty answer says why
/// ("did you mean").
#[test]
fn code_reading_commands_answer_exactly_on_a_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "pkg/__init__.py",
        "from .util import parse\n\n\ndef getLogger(name=None):\n    \"\"\"Return a logger.\"\"\"\n    return _make(parse(name))\n\n\ndef _make(x):\n    return x\n",
    );
    write(
        root,
        "pkg/util.py",
        "def parse(text):\n    return text.strip()\n",
    );
    assert!(loci(root, &["scan"]).status.success());
    let stdout = |args: &[&str]| {
        let out = loci(root, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        stdout(&["symbol", "pkg.util.parse"]),
        "pkg/util.py:1: function parse  [pkg/util.py#parse@function]\n    def parse(text):\n"
    );
    assert_eq!(
        stdout(&["callees", "pkg.getLogger"]),
        "definition pkg/__init__.py#getLogger@function (pkg/__init__.py:4)\n\
         pkg/__init__.py:6:12: _make -> pkg/__init__.py#_make@function (derived, 0.90)\n\
         pkg/__init__.py:6:18: parse -> pkg/util.py#parse@function (stated, 1.00)\n"
    );
    assert_eq!(
        stdout(&["outline", "pkg/__init__.py"]),
        "pkg/__init__.py (python, 2 definitions)\n  4: function getLogger  def getLogger(name=None):\n  9: function _make  def _make(x):\n"
    );
    assert!(
        loci(
            root,
            &[
                "remember",
                "pkg/__init__.py",
                "--text",
                "Loggers come from `getLogger()`."
            ]
        )
        .status
        .success()
    );
    let source = stdout(&["source", "pkg.getLogger"]);
    let (code, memory) = source.split_once("\nmemory ").unwrap();
    assert_eq!(
        code,
        "pkg/__init__.py:4-6: function getLogger  [pkg/__init__.py#getLogger@function]\n    4  def getLogger(name=None):\n    5      \"\"\"Return a logger.\"\"\"\n    6      return _make(parse(name))\n"
    );
    assert!(
        memory.starts_with("pkg/__init__.py v1 by human:test at ")
            && memory.ends_with(":\nLoggers come from `getLogger()`.\n"),
        "{memory}"
    );
    assert_eq!(
        stdout(&["list"]),
        "pkg/__init__.py (file v1 by human:test): Loggers come from `getLogger()`.\n"
    );
    let json: Value = serde_json::from_str(&stdout(&["list", "pkg", "--json"])).unwrap();
    assert_eq!(json["result"][0]["subject"], "pkg/__init__.py");
    assert_eq!(json["result"][0]["stale"], Value::Null);

    // Nothing found says why, with the nearest names.
    let miss = loci(root, &["symbol", "getLoger"]);
    assert_eq!(miss.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&miss.stderr),
        "loci: no symbol named `getLoger` in the map; did you mean `getLogger`?\n"
    );
    let miss = loci(root, &["source", "nope"]);
    assert_eq!(miss.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&miss.stderr),
        "loci: no symbol named `nope` in the map (`search` finds words in code and docs)\n"
    );
    // A package's folder is its `__init__.py`.
    let package = loci(root, &["outline", "pkg"]);
    assert_eq!(package.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&package.stdout).starts_with("pkg/__init__.py (python, "),
        "{}",
        String::from_utf8_lossy(&package.stdout)
    );
}

/// `callers` and `impact` list edges at confidence 0.50 or more by default, say how many
/// weaker ones they left out, and `--min-confidence` moves the line; a confidence outside
/// [0, 1] is a usage error (exit 2).
#[test]
fn callers_and_impact_count_the_edges_below_the_confidence_asked() {
    let dir = repo();
    let root = dir.path();
    // `x.save()` on a value of unknown type: a name match, 0.20.
    write(root, "app/util.py", "def touch(x):\n    return x.save()\n");
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["callers", "User.save"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "definition app/models.py#User.save@method (app/models.py:2)\n\
         app/views.py:4:19: call save in app/views.py#show@function -> app/models.py#User.save@method (stated, 1.00)\n\
         … and 1 weaker call, not listed: resolved below confidence 0.50 (a name matched, the receiver's type unknown); `--min-confidence 0` lists them\n"
    );
    let out = loci(root, &["callers", "User.save", "--min-confidence", "0"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "definition app/models.py#User.save@method (app/models.py:2)\n\
         app/views.py:4:19: call save in app/views.py#show@function -> app/models.py#User.save@method (stated, 1.00)\n\
         app/util.py:2:14: call save in app/util.py#touch@function -> app/models.py#User.save@method (derived, 0.20)\n"
    );
    // At 1, stated calls only.
    let out = loci(
        root,
        &["callers", "User.save", "--min-confidence", "1", "--json"],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&v["result"]["calls"][0]["path"], &v["result"]["weaker"]),
        (&Value::from("app/views.py"), &Value::from(1))
    );
    let out = loci(root, &["impact", "app/models.py", "--min-confidence", "0"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "impact of app/models.py (depth 3, every resolved edge): 2 dependent files\n  \
         app/views.py  <- import at app/views.py:1 (stated, 1.00)\n  \
         app/util.py  <- call at app/util.py:2 (derived, 0.20)\n"
    );
    let out = loci(root, &["impact", "app/models.py", "--depth", "1"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "impact of app/models.py (depth 1, edges at confidence 0.50 or more): 1 dependent file\n  \
         app/views.py  <- import at app/views.py:1 (stated, 1.00)\n\
         1 more dependent file only through weaker edges (below confidence 0.50), not counted: \
         `--min-confidence 0` follows them\n"
    );
    for bad in ["2", "-0.5", "high"] {
        let out = loci(root, &["impact", "app/models.py", "--min-confidence", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("a confidence from 0 (every edge) to 1 (stated only)"),
            "{err}"
        );
    }
}

/// Fault from a fresh-user trial: `callees json.loads` printed `s.decode()` as a call of
/// `codecs.py#BufferedIncrementalDecoder.decode` (0.20), where `callers` hides anything
/// under 0.50: a target below the confidence asked is a name matched, shown unresolved and
/// counted, as `callers` counts what it leaves out.
#[test]
fn fault_callees_showed_a_name_match_as_the_target_of_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "codec.py",
        "class Decoder:\n    def decode(self, s):\n        return s\n",
    );
    write(
        root,
        "app.py",
        "from codec import Decoder\n\n\ndef load(s):\n    return Decoder().decode(s.decode())\n",
    );
    assert!(loci(root, &["scan"]).status.success());
    let stdout = |args: &[&str]| String::from_utf8(loci(root, args).stdout).unwrap();
    assert_eq!(
        stdout(&["callees", "load"]),
        "definition app.py#load@function (app.py:4)\n\
         app.py:5:12: Decoder -> codec.py#Decoder@class (stated, 1.00)\n\
         app.py:5:22: decode -> codec.py#Decoder.decode@method (stated, 1.00)\n\
         app.py:5:31: decode -> unresolved\n\
         1 call shown unresolved: only a name matched, below confidence 0.50; `--min-confidence 0` shows the guesses\n"
    );
    assert!(
        stdout(&["callees", "load", "--min-confidence", "0"])
            .contains("app.py:5:31: decode -> codec.py#Decoder.decode@method (derived, 0.")
    );
}

/// Fault from a break-test: `loci callers Method::is_idempotent` listed "10 calls of
/// `.is_idempotent(` on values of unknown type, not listed", then said "no callers of
/// `Method::is_idempotent` in the map": which was it? It says what it did not tie.
#[test]
fn fault_calls_on_values_of_unknown_type_were_then_no_callers_in_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The call matched `Method`'s by name alone: `Verb`'s has none tied to it.
    write(
        root,
        "src/lib.rs",
        "pub struct Method;\nimpl Method {\n    pub fn is_idempotent(&self) -> bool { true }\n}\n\
         pub struct Verb;\nimpl Verb {\n    pub fn is_idempotent(&self) -> bool { true }\n}\n\
         pub fn retry(x: &dyn Request) -> bool { x.method().is_idempotent() }\n",
    );
    assert!(loci(root, &["scan"]).status.success());
    let out = loci(root, &["callers", "Verb::is_idempotent"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 call of `.is_idempotent(` on values of unknown type"),
        "{stdout}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "loci: no call tied to `Verb::is_idempotent`: 1 by its name on values of unknown type (above)"
    );
}

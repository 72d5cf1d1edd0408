//! Faults a fresh-user trial found in loci's trust checks, each end to end over the
//! `loci` binary: what an answer serving memory or docs says is false or stale about them,
//! `resolve` of a finding lint had closed, a dismissal across a rename, and the snapshot of
//! a page written before its file was mapped.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::fixture::write;

/// Runs `loci ARGS` in `root` as a test author, outside any session; (exit code, stdout,
/// stderr).
fn loci(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_loci"))
        .args(args)
        .current_dir(root)
        .env("LOCI_AUTHOR", "human:test")
        .env_remove("LOCI_SESSION")
        .env_remove("LOCI_DB")
        .output()
        .expect("loci runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `loci ARGS --json`, which must answer (exit 0, or 1 for `lint` finding something),
/// and parses its envelope.
fn json(root: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = loci(root, &all);
    assert!(code == 0 || code == 1, "{args:?}: {out}{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}{err}"))
}

/// Runs `loci ARGS`, which must succeed.
fn ok(root: &Path, args: &[&str]) -> String {
    let (code, out, err) = loci(root, args);
    assert_eq!(code, 0, "{args:?}: {out}{err}");
    out
}

/// The reasons of an envelope's stale warnings, in order.
fn reasons(env: &Value) -> Vec<String> {
    env["stale_warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no stale_warnings in {env}"))
        .iter()
        .map(|w| {
            format!(
                "{}: {}",
                w["path"].as_str().unwrap(),
                w["reason"].as_str().unwrap()
            )
        })
        .collect()
}

const NET: &str = "def urlsplit(url):\n    \"\"\"Split a URL; the netloc is checked.\"\"\"\n    netloc = url.split(\"/\")[2]\n    _check_netloc(netloc)\n    return netloc\n\n\ndef _check_netloc(netloc):\n    if \"@\" in netloc:\n        raise ValueError(\"bad netloc\")\n";

/// Fault: `context` served memory and a doc section that name a function the code does not
/// have — lint had an open contradiction about each — with no stale warning (and the doc
/// with no banner either), while `show` and `why` warned about the same page. Every answer
/// that serves memory or a doc says what lint found false in it, through the same check
/// (`memory_envelope_with`).
#[test]
fn fault_context_served_memory_lint_found_false_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "net.py", NET);
    write(
        root,
        "docs/net.md",
        "# URLs\n\n## Netloc checks\n\nurlsplit checks the netloc with `_checknetloc()`.\n",
    );
    ok(root, &["scan"]);
    ok(
        root,
        &[
            "decide",
            "urlsplit checks the netloc with `_checknetloc()` before returning it",
            "--subject",
            "net.py",
        ],
    );
    let lint = json(root, &["lint"]);
    let found: Vec<String> = lint["result"]["contradictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("#{} {} {}", c["contradiction_id"], c["subject"], c["claim"]))
        .collect();
    assert_eq!(
        found,
        [
            "#2 \"decision:1\" \"_checknetloc()\"",
            "#1 \"docs/net.md\" \"_checknetloc()\""
        ]
    );
    let false_decision = "decision:1: memory `decision:1` v1 claim `_checknetloc()` is false: no symbol `_checknetloc` in the map; `_check_netloc` has a similar name (did you mean `_check_netloc`?) (contradiction #2)";
    let context = json(root, &["context", "how does urlsplit check the netloc"]);
    assert_eq!(
        context["result"]["banners"],
        json!([
            "⚠ memory `decision:1` has 1 open contradiction(s) with the code; verify before relying on it (`loci lint`)",
            "⚠ doc `docs/net.md#Netloc checks` has 1 open contradiction(s) with the code; verify before relying on it (`loci lint`)"
        ])
    );
    assert_eq!(
        reasons(&context),
        [
            "docs/net.md: docs/net.md:5 claim `_checknetloc()` is false: no symbol `_checknetloc` in the map; `_check_netloc` has a similar name (did you mean `_check_netloc`?) (contradiction #1)",
            false_decision
        ]
    );
    // The doc section is demoted after the rest, never dropped.
    let served: Vec<String> = context["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| format!("{} {}", i["id"].as_str().unwrap(), i["contradictions"]))
        .collect();
    assert_eq!(
        served,
        [
            "net.py#urlsplit@function 0",
            "net.py#_check_netloc@function 0",
            "decision:1 1",
            "docs/net.md#Netloc checks 1"
        ]
    );
    // `show` and `why` (which now takes an entry's own name) say the same about it.
    assert_eq!(
        reasons(&json(root, &["show", "decision:1"])),
        [false_decision]
    );
    assert_eq!(reasons(&json(root, &["why", "net.py:8"])), [false_decision]);
    let why = json(root, &["why", "decision:1"]);
    assert_eq!(
        (&why["result"]["subject"], reasons(&why)),
        (&json!("decision:1"), vec![false_decision.to_string()])
    );
}

/// Fault: `why FILE:LINE` listed the other decisions about the same line ("also: decision:1
/// v1") with no warning, though one of them was stale: only the matched entry's marks were
/// given. Every entry the answer names is checked.
#[test]
fn fault_why_listed_a_stale_also_entry_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    ok(root, &["scan"]);
    ok(
        root,
        &[
            "decide",
            "Keep `hello()` returning an int",
            "--subject",
            "app.py",
        ],
    );
    write(root, "app.py", "def hello():\n    return 2\n");
    ok(root, &["scan"]);
    ok(
        root,
        &[
            "decide",
            "Callers of `hello()` may compare it with 2",
            "--subject",
            "app.py",
        ],
    );
    let why = json(root, &["why", "app.py:1"]);
    assert_eq!(
        (&why["result"]["subject"], &why["result"]["others"]),
        (&json!("decision:2"), &json!([["decision:1", 1]]))
    );
    let stale = [
        "decision:1: memory `decision:1` v1 claim `hello()` is stale: body of app.py#hello@function changed since it was written",
        "decision:1: memory `decision:1` v1 claim `app.py` is stale: app.py changed since it was written",
    ];
    assert_eq!(reasons(&why), stale);
    // The human answer ends with the entries it lists and their warnings.
    let text = ok(root, &["why", "app.py:1"]);
    let tail: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  also:"))
        .collect();
    assert_eq!(
        tail,
        [
            "  also: decision:1 v1",
            "warning: decision:1: memory `decision:1` v1 claim `hello()` is stale: body of app.py#hello@function changed since it was written",
            "warning: decision:1: memory `decision:1` v1 claim `app.py` is stale: app.py changed since it was written",
        ]
    );
}

/// Fault: `loci resolve ID` of a finding lint had already resolved (the code no longer
/// contradicted it) recorded a human dismissal of it, so when the claim became false again
/// lint stayed silent. It is refused, names how the finding was closed, and writes nothing:
/// the finding recurs as any resolved one does.
#[test]
fn fault_resolve_dismissed_a_finding_lint_had_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    ok(root, &["scan"]);
    ok(
        root,
        &["remember", "app.py", "--text", "Greets with `helo()`."],
    );
    let open = json(root, &["lint"]);
    assert_eq!(
        open["result"]["contradictions"][0]["contradiction_id"],
        json!(1)
    );
    write(
        root,
        "app.py",
        "def hello():\n    return 1\n\n\ndef helo():\n    return hello()\n",
    );
    ok(root, &["scan"]);
    let closed = json(root, &["lint"]);
    assert_eq!(closed["result"]["contradictions"], json!([]));
    let (code, out, err) = loci(root, &["resolve", "1", "--notes", "a typo"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            2,
            "",
            "loci: invalid argument `id`: contradiction 1 (missing_symbol `helo()` in app.py) was resolved already by lint: the code no longer contradicts it; nothing changed (lint reports it again if it recurs)\n"
        )
    );
    // Nothing was dismissed: the claim false again is reported again, as a recurrence.
    write(root, "app.py", "def hello():\n    return 1\n");
    ok(root, &["scan"]);
    let again = json(root, &["lint"]);
    let c = &again["result"]["contradictions"][0];
    assert_eq!(
        (
            &c["contradiction_id"],
            &c["status"],
            &c["reopened"],
            &c["notes"]
        ),
        (&json!(1), &json!("open"), &json!(1), &json!(null))
    );
}

/// Fault: a dismissal did not follow its file's rename: after `git mv` and a scan the page
/// moved, but its dismissed finding stayed with the old path, and lint reported the same
/// finding again on the renamed file (a doc's alike).
#[test]
fn fault_a_dismissal_was_lost_when_its_file_was_renamed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    write(root, "docs/a.md", "# App\n\nGreets with `helo()`.\n");
    ok(root, &["scan"]);
    ok(
        root,
        &["remember", "app.py", "--text", "Greets with `helo()`."],
    );
    let lint = json(root, &["lint"]);
    let ids: Vec<(String, i64)> = lint["result"]["contradictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["subject"].as_str().unwrap().to_string(),
                c["contradiction_id"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [("app.py".to_string(), 2), ("docs/a.md".to_string(), 1)]
    );
    for (_, id) in &ids {
        ok(
            root,
            &["resolve", &id.to_string(), "--notes", "helo is our word"],
        );
    }
    std::fs::rename(root.join("app.py"), root.join("greet.py")).unwrap();
    std::fs::rename(root.join("docs/a.md"), root.join("docs/b.md")).unwrap();
    ok(root, &["scan"]);
    let lint = json(root, &["lint"]);
    assert_eq!(lint["result"]["contradictions"], json!([]));
    // The dismissals moved with their files, notes and all.
    let export: Value = serde_json::from_str(&ok(root, &["export"])).unwrap();
    let dismissed: Vec<String> = export["dismissals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d["finding_key"].as_str().unwrap(), d["notes"]))
        .collect();
    assert_eq!(
        dismissed,
        [
            "doc:docs/b.md:missing_symbol:helo \"helo is our word\"",
            "page:greet.py:missing_symbol:helo \"helo is our word\""
        ]
    );
}

/// Fault: a file page written before its file was mapped (before the first scan) kept a
/// snapshot without a fingerprint: no later edit of the file marked it stale, and `export`
/// carried no fingerprint. The scan that maps the file snapshots it.
#[test]
fn fault_a_page_written_before_its_file_was_mapped_was_never_marked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    ok(root, &["remember", "app.py", "--text", "Says hello."]);
    // A file with the same code, mapped before its page was written: the snapshot the
    // first page must now hold.
    write(root, "same.py", "def hello():\n    return 1\n");
    ok(root, &["scan"]);
    ok(root, &["remember", "same.py", "--text", "Says hello too."]);
    let export: Value = serde_json::from_str(&ok(root, &["export"])).unwrap();
    let fingerprints: Vec<(&str, &Value)> = export["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["subject"].as_str().unwrap(),
                &p["revisions"][0]["subject_fingerprint"],
            )
        })
        .collect();
    assert_eq!(fingerprints.len(), 2);
    assert!(fingerprints[1].1.is_string(), "{fingerprints:?}");
    assert_eq!(
        fingerprints,
        [
            ("app.py", fingerprints[1].1),
            ("same.py", fingerprints[1].1)
        ]
    );
    write(root, "app.py", "def hello():\n    return 2\n");
    ok(root, &["scan"]);
    let lint = json(root, &["lint"]);
    assert_eq!(
        lint["result"]["stale"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (&s["subject"], &s["reason"]))
            .collect::<Vec<_>>(),
        [(
            &json!("app.py"),
            &json!({"kind": "file_changed", "path": "app.py"})
        )]
    );
    let show = json(root, &["show", "app.py"]);
    assert_eq!(
        reasons(&show),
        ["app.py: memory `app.py` v1 is stale: app.py changed since it was written"]
    );
}

/// Fault: importing an export written before a rename here moved the page back onto its old
/// path, which no longer exists ("page moved: greet.py -> app.py", then marked deleted).
/// The page stays where its file is, and the report names both paths.
#[test]
fn fault_import_of_an_older_export_moved_a_page_onto_a_path_that_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    ok(root, &["scan"]);
    ok(root, &["remember", "app.py", "--text", "Says hello."]);
    let export = root.join("memory.json");
    ok(root, &["export", "-o", export.to_str().unwrap()]);
    std::fs::rename(root.join("app.py"), root.join("greet.py")).unwrap();
    ok(root, &["scan"]);
    let imported = ok(root, &["import", export.to_str().unwrap()]);
    assert_eq!(
        imported.lines().skip(1).collect::<Vec<_>>(),
        [
            "  note: `app.py` is `greet.py` here, and `app.py` does not exist here (renamed since the export was written): its revisions were imported under `greet.py`, which was not moved"
        ]
    );
    assert_eq!(
        ok(root, &["list"]),
        "greet.py (file v1 by human:test): Says hello.\n"
    );
}

/// Faults: `show decisions` headed the log "v2", read as its second revision (it counts
/// entries), and `why` labelled an entry's event with the id of the page holding it
/// (`decision:2:v1` for `decision:1`).
#[test]
fn fault_the_log_header_and_the_why_event_label_named_the_wrong_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app.py", "def hello():\n    return 1\n");
    ok(root, &["scan"]);
    ok(root, &["remember", "app.py", "--text", "Says hello."]);
    ok(
        root,
        &["decide", "Keep `hello()` small", "--subject", "app.py"],
    );
    ok(root, &["decide", "Greet in English", "--subject", "app.py"]);
    let shown = ok(root, &["show", "decisions"]);
    let header = shown.lines().next().unwrap();
    assert_eq!(
        header.split_once(" at ").map(|(h, _)| h),
        Some("# decisions — 2 entries, the latest by human:test")
    );
    let why = ok(root, &["why", "decision:1"]);
    let event: Vec<&str> = why
        .lines()
        .filter(|l| l.starts_with("  event #"))
        .map(|l| l.split_once(" at ").map_or(l, |(e, _)| e))
        .collect();
    assert_eq!(event, ["  event #2 decision decision:1 v1"]);
}

/// Fault: a claim naming a function by its module path (`pkg.utils.formataddr()`) was
/// silently re-pointed when the module was renamed (`pkg/utils.py` to `pkg/addr.py`): the
/// name resolved through the package `pkg` to any file under it, so lint called prose
/// naming a module that is gone fine. A farther qualifier segment names only the package's
/// own module, and the suggestion names the module the definition is in now.
#[test]
fn fault_a_dotted_module_claim_was_silently_repointed_after_a_rename() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "pkg/__init__.py", "");
    write(
        root,
        "pkg/utils.py",
        "def formataddr(pair):\n    return \"%s <%s>\" % pair\n",
    );
    write(
        root,
        "main.py",
        "from pkg.utils import formataddr\n\nprint(formataddr((\"a\", \"b@c\")))\n",
    );
    ok(root, &["scan"]);
    let wrote = ok(
        root,
        &[
            "remember",
            "main.py",
            "--text",
            "Formats with `pkg.utils.formataddr()`.",
        ],
    );
    assert_eq!(
        wrote.lines().nth(1),
        Some("  symbol `pkg.utils.formataddr()` -> pkg/utils.py#formataddr@function")
    );
    std::fs::rename(root.join("pkg/utils.py"), root.join("pkg/addr.py")).unwrap();
    ok(root, &["scan"]);
    let lint = json(root, &["lint"]);
    let found: Vec<(&Value, &Value, &Value)> = lint["result"]["contradictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (&c["claim"], &c["truth"], &c["suggestion"]))
        .collect();
    assert_eq!(
        found,
        [(
            &json!("pkg.utils.formataddr()"),
            &json!(
                "no symbol `pkg.utils.formataddr` in the map; `formataddr` in pkg/addr.py has the same body"
            ),
            &json!("pkg.addr.formataddr")
        )]
    );
}

/// Fault: `loci lint --db STORE` run from another directory mapped that directory into the
/// store — the store did not record its root — and marked all of its memory false. The
/// store records the root it maps; a command run elsewhere with `--db` answers for that
/// root, and a root given (`-C`, `scan PATH`) that is not the store's is refused with both
/// directories named, the store untouched.
#[test]
fn fault_a_store_used_from_another_directory_mapped_that_directory() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    write(&a, "app.py", "def hello():\n    return 1\n");
    write(&b, "other.py", "def other():\n    return 2\n");
    let (a, b) = (a.canonicalize().unwrap(), b.canonicalize().unwrap());
    ok(&a, &["scan"]);
    ok(
        &a,
        &[
            "remember",
            "app.py",
            "--text",
            "Calls `hello()` in `app.py`.",
        ],
    );
    let db = a.join(".loci/loci.db");
    let db = db.to_str().unwrap();

    // From b, the store answers for a: nothing false, a's map kept.
    let (code, out, err) = loci(&b, &["lint", "--db", db, "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        err,
        format!(
            "note: {db} is the store of {}: answering for {}\n",
            a.display(),
            a.display()
        )
    );
    let lint: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            lint["result"]["contradictions"].clone(),
            lint["result"]["stale"].clone()
        ),
        (json!([]), json!([]))
    );
    let stats = json(&b, &["stats", "--db", db]);
    assert_eq!(stats["result"]["totals"]["files"], json!(1), "{stats}");

    // A root given that is not the store's: refused, naming both, nothing written.
    let refused = format!(
        "{db} is the store of {a}, not of {b}: run loci in {a} (or pass `-C {a}`); mapping {b} into it would mark its memory false. To map {b}, give it a store of its own (`loci -C {b} scan`, or another `--db`)",
        a = a.display(),
        b = b.display()
    );
    for args in [
        vec!["-C", b.to_str().unwrap(), "lint", "--db", db],
        vec!["scan", b.to_str().unwrap(), "--db", db],
    ] {
        let mut with_json = args.clone();
        with_json.push("--json");
        let (code, out, err) = loci(&b, &with_json);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        let env: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        assert_eq!(
            (
                env["error"]["kind"].as_str(),
                env["error"]["message"].as_str()
            ),
            (Some("other_root"), Some(refused.as_str())),
            "{args:?}"
        );
    }
    let lint = json(&a, &["lint"]);
    assert_eq!(
        (
            lint["result"]["contradictions"].clone(),
            lint["result"]["stale"].clone()
        ),
        (json!([]), json!([]))
    );
    assert_eq!(json(&a, &["stats"])["result"]["totals"]["files"], json!(1));
}

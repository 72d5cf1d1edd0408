//! The audit end to end on git repositories the tests create: docs and memory checked
//! against the code, contradictions that auto-resolve, recur and can be dismissed,
//! staleness that ignores comments, drift, sync and why's commit chain.

use std::path::Path;
use std::process::Command;

use loci_engine::Workspace;
use loci_engine::memory::WriteOptions;

use crate::fixture::{files, write};

fn git(root: &Path, args: &[&str]) {
    git_at(root, args, "2026-01-02T03:04:05Z");
}

fn git_at(root: &Path, args: &[&str], date: &str) {
    let out = Command::new("git")
        .args(["-c", "user.name=Ann", "-c", "user.email=ann@example.com"])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn by(author: &str) -> WriteOptions {
    WriteOptions {
        author: Some(author.into()),
        ..Default::default()
    }
}

/// A repository whose AGENTS.md is right at first; then `util.py` is renamed,
/// `legacy_total()` removed and the pinned version bumped.
fn repo() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app/util.py", "def fmt(x):\n    return str(x)\n");
    write(
        root,
        "app/billing.py",
        "def total(items):\n    return sum(items)\n\ndef legacy_total(items):\n    return total(items)\n",
    );
    write(root, "requirements.txt", "requests==2.31.0\n");
    write(
        root,
        "AGENTS.md",
        "# Agents\n\nFormatting is in `app/util.py`; sums use `legacy_total()`.\nWe pin requests@2.31.0.\n<!-- loci: ignore --> `app/example.py` is hypothetical.\n",
    );
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "initial import"]);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

#[test]
fn docs_that_name_a_renamed_path_a_removed_function_and_a_wrong_version_are_contradicted() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    let clean = ws.lint().unwrap().result;
    assert!(
        clean.contradictions.is_empty(),
        "{:#?}",
        clean.contradictions
    );
    assert_eq!(clean.docs_checked, ["AGENTS.md"]);

    git(root, &["mv", "app/util.py", "app/format.py"]);
    write(
        root,
        "app/billing.py",
        "def total(items):\n    return sum(items)\n",
    );
    write(root, "requirements.txt", "requests==2.32.3\n");
    git(
        root,
        &[
            "commit",
            "-qam",
            "rename util, drop legacy_total, bump requests",
        ],
    );
    ws.scan(&|_| {}).unwrap();

    let report = ws.lint().unwrap().result;
    type Row = (String, u32, u32, String, Option<String>, Option<String>);
    let found: Vec<Row> = report
        .contradictions
        .iter()
        .map(|c| {
            (
                c.kind.clone(),
                c.line,
                c.column,
                c.claim.clone(),
                c.truth.clone(),
                c.suggestion.clone(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "missing_path".into(),
                2,
                18,
                "app/util.py".into(),
                Some("`app/util.py` does not exist".into()),
                Some("app/format.py".into())
            ),
            (
                "missing_symbol".into(),
                2,
                42,
                "legacy_total()".into(),
                Some("no symbol `legacy_total` in the map; `total` has a similar name".into()),
                Some("total".into())
            ),
            (
                "version_mismatch".into(),
                3,
                7,
                "requests@2.31.0".into(),
                Some("declared: requests 2.32.3 in requirements.txt".into()),
                None
            ),
        ]
    );
    // Identical findings stay one row across runs.
    let again = ws.lint().unwrap().result;
    assert_eq!(again.contradictions.len(), 3);
    assert_eq!((again.opened, again.resolved), (0, 0));
}

#[test]
fn findings_auto_resolve_recur_and_stay_dismissed() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    write(root, "requirements.txt", "requests==2.32.3\n");
    ws.scan(&|_| {}).unwrap();
    let open = ws.lint().unwrap().result.contradictions;
    assert_eq!(open.len(), 1);
    let id = open[0].contradiction_id;

    // Fixed in the manifest: auto-resolved.
    write(root, "requirements.txt", "requests==2.31.0\n");
    ws.scan(&|_| {}).unwrap();
    let all = loci_store::audit::contradictions(ws.store().conn(), None).unwrap();
    assert_eq!(
        (all[0].status.as_str(), all[0].resolution_kind.as_deref()),
        ("resolved", Some("auto"))
    );

    // Broken again: the same finding recurs (a regression), not a new one.
    write(root, "requirements.txt", "requests==2.0.0\n");
    ws.scan(&|_| {}).unwrap();
    let all = loci_store::audit::contradictions(ws.store().conn(), None).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(
        (
            all[0].contradiction_id,
            all[0].status.as_str(),
            all[0].reopened
        ),
        (id, "open", 1)
    );

    // A human dismissal suppresses it for good.
    ws.resolve(id, Some("we vendor our own requests"), None)
        .unwrap();
    let report = ws.lint().unwrap().result;
    assert!(report.contradictions.is_empty());
    assert_eq!(report.suppressed, 1);
    let c = loci_store::audit::contradiction_by_id(ws.store().conn(), id)
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            c.status.as_str(),
            c.resolution_kind.as_deref(),
            c.notes.as_deref()
        ),
        (
            "dismissed",
            Some("human"),
            Some("we vendor our own requests")
        )
    );

    // The knowledge archive tells the story scan by scan.
    let drift = ws.drift(Some(0)).unwrap().result;
    let story: Vec<&str> = drift.knowledge.iter().map(|k| k.change.as_str()).collect();
    assert_eq!(story, ["became_false", "no_longer_false", "recurred"]);
}

#[test]
fn memory_staleness_ignores_comments_and_names_body_and_signature_changes() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.remember(
        "app/billing.py",
        "`total()` sums the items.",
        &by("human:ann"),
    )
    .unwrap();
    write(
        root,
        "app/billing.py",
        "# totals\ndef total(items):\n    # add them up\n    return sum(items)  # builtin\n\ndef legacy_total(items):\n    return total(items)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let report = ws.lint().unwrap().result;
    assert!(
        report.stale.is_empty(),
        "comment-only edits do not stale: {:#?}",
        report.stale
    );

    write(
        root,
        "app/billing.py",
        "def total(items):\n    return sum(items) or 0\n\ndef legacy_total(items):\n    return total(items)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let reasons: Vec<String> = ws
        .lint()
        .unwrap()
        .result
        .stale
        .iter()
        .map(|s| serde_json::to_string(&s.reason).unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            r#"{"kind":"file_changed","path":"app/billing.py"}"#,
            r#"{"kind":"body_changed","target":"app/billing.py#total@function"}"#
        ]
    );

    write(
        root,
        "app/billing.py",
        "def total(items, start=0):\n    return sum(items) or 0\n\ndef legacy_total(items):\n    return total(items)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let report = ws.lint().unwrap().result;
    let reasons: Vec<String> = report
        .stale
        .iter()
        .map(|s| serde_json::to_string(&s.reason).unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            r#"{"kind":"file_changed","path":"app/billing.py"}"#,
            r#"{"kind":"signature_changed","target":"app/billing.py#total@function"}"#
        ]
    );
    assert_eq!(report.stale_pages, ["app/billing.py"]);
    let drift = ws.drift(Some(0)).unwrap().result;
    assert!(
        drift.files.iter().any(|d| d.kind == "signature_change"
            && d.detail.as_deref() == Some("app/billing.py#total@function")),
        "{:#?}",
        drift.files
    );

    ws.confirm("app/billing.py", &by("human:reviewer")).unwrap();
    assert!(ws.lint().unwrap().result.stale.is_empty());
}

#[test]
fn check_gates_on_thresholds_and_emits_sarif_with_real_locations() {
    let (dir, mut ws) = repo();
    write(dir.path(), "requirements.txt", "requests==9.0.0\n");
    ws.scan(&|_| {}).unwrap();
    let check = ws.check().unwrap().result;
    assert!(!check.passed);
    let sarif = loci_engine::audit::to_sarif(&ws, &check);
    assert_eq!(sarif["version"], "2.1.0");
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "version_mismatch");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "AGENTS.md"
    );
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        4
    );
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startColumn"],
        8
    );

    write(
        dir.path(),
        ".loci/config.toml",
        "[check]\nmax_contradictions = 1\n",
    );
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    assert!(ws.check().unwrap().result.passed);
}

/// The memory the rename tests follow: an agent's page about `app/util.py`.
fn remember_util(ws: &mut Workspace) {
    ws.remember(
        "app/util.py",
        "Formatting helpers; `fmt()` is the entry point.",
        &by("agent:claude"),
    )
    .unwrap();
}

#[test]
fn sync_records_commits_moves_renamed_pages_and_why_shows_the_chain() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    let first = ws.sync(None).unwrap().result;
    assert_eq!(first.mode, "git");
    assert_eq!(first.commits.len(), 1);
    remember_util(&mut ws);

    git(root, &["mv", "app/util.py", "app/format.py"]);
    // Committed after the memory was written (a date after now).
    git_at(
        root,
        &["commit", "-qm", "rename util to format"],
        "2099-01-01T00:00:00Z",
    );
    // The scan sees the rename and moves the page; the commit then moves nothing more.
    let scanned = ws.scan(&|_| {}).unwrap().result;
    let moved: Vec<(&str, &str)> = scanned
        .pages_moved
        .iter()
        .map(|m| (m.from.as_str(), m.to.as_str()))
        .collect();
    assert_eq!(moved, [("app/util.py", "app/format.py")]);
    let second = ws.sync(None).unwrap().result;
    assert_eq!(
        second
            .commits
            .iter()
            .map(|c| c.1.as_str())
            .collect::<Vec<_>>(),
        ["rename util to format"]
    );
    assert_eq!(second.pages_moved, Vec::<(String, String)>::new());
    // Idempotent: syncing again records nothing new.
    assert_eq!(ws.sync(None).unwrap().result.events_added, 0);

    let history = ws.history("app/format.py").unwrap().result;
    assert_eq!(
        history.revisions.len(),
        1,
        "the renamed page keeps its history"
    );
    let why = ws.why("app/format.py").unwrap().result;
    assert_eq!(
        (why.subject.as_str(), why.revision.author.as_str()),
        ("app/format.py", "agent:claude")
    );
    let kinds: Vec<&str> = why.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["remember", "rename"]);
    let commit = why.commit.expect("the commit behind the memory");
    assert_eq!(commit.message, "initial import");
    assert_eq!(commit.author, "Ann <ann@example.com>");
    assert!(commit.files.contains(&"app/util.py".to_string()));
    assert!(
        ws.lint().unwrap().result.stale.is_empty(),
        "a rename is not staleness"
    );
}

/// Fault (fresh-user trial): after two renames, `why` showed only the last one; the first
/// name was still used to find the commit behind the memory, but the reader could not see
/// how the page got from it to its subject. Every rename of the chain is listed, oldest
/// first.
#[test]
fn fault_why_listed_only_the_last_rename_of_a_chain() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.sync(None).unwrap();
    remember_util(&mut ws);
    for (from, to, when) in [
        ("app/util.py", "app/format.py", "2099-01-01T00:00:00Z"),
        ("app/format.py", "app/text.py", "2099-01-02T00:00:00Z"),
    ] {
        git(root, &["mv", from, to]);
        git_at(root, &["commit", "-qm", &format!("rename {from}")], when);
        ws.scan(&|_| {}).unwrap();
        ws.sync(None).unwrap();
    }
    let why = ws.why("app/text.py").unwrap().result;
    assert_eq!(why.subject, "app/text.py");
    let renames: Vec<(String, String)> = why
        .events
        .iter()
        .filter(|e| e.kind == "rename")
        .map(|e| {
            let v: serde_json::Value =
                serde_json::from_str(e.payload.as_deref().unwrap_or("{}")).unwrap();
            (
                v["from"].as_str().unwrap_or("").to_string(),
                e.subject.clone(),
            )
        })
        .collect();
    assert_eq!(
        renames,
        [
            ("app/util.py".to_string(), "app/format.py".to_string()),
            ("app/format.py".to_string(), "app/text.py".to_string())
        ]
    );
    assert_eq!(why.events[0].kind, "remember");
    assert_eq!(
        why.commit.expect("the commit behind the memory").message,
        "initial import"
    );
}

#[test]
fn sync_without_git_records_snapshots_and_unborn_head_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "def a():\n    pass\n");
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    let r = ws.sync(None).unwrap().result;
    assert_eq!(
        (r.mode, r.state.as_str()),
        ("snapshot", "not a git repository")
    );
    assert_eq!(r.commits[0].0, "snapshot:1");
    let again = ws.sync(None).unwrap().result;
    assert_eq!(again.notes, ["nothing changed since the last snapshot"]);

    let unborn = tempfile::tempdir().unwrap();
    git(unborn.path(), &["init", "-q", "-b", "main"]);
    let mut ws = Workspace::open(unborn.path(), None).unwrap();
    let r = ws.sync(None).unwrap().result;
    assert_eq!(r.state, "no commits yet on main");
}

/// Fault: `Config::default()` in docs/configuration.md was reported as a missing symbol,
/// though `#[derive(Default)]` provides it; a derive or a prelude trait gives members the
/// map never sees. A call to an unknown member that no trait provides is still reported.
#[test]
fn a_derived_or_trait_provided_method_on_a_known_type_is_not_a_missing_symbol() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "#[derive(Default, Clone)]\npub struct Config {\n    pub x: u32,\n}\n\nimpl Config {\n    pub fn load() -> Self {\n        Self::default()\n    }\n}\n",
    );
    write(
        root,
        "AGENTS.md",
        "# Agents\n\nBuild one with `Config::default()`, `Config::clone()` or `Config::load()`; `Config::reload()` is gone.\n",
    );
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let report = ws.lint().unwrap().result;
    let found: Vec<(String, String)> = report
        .contradictions
        .iter()
        .map(|c| (c.kind.clone(), c.claim.clone()))
        .collect();
    assert_eq!(
        found,
        [("missing_symbol".to_string(), "Config::reload()".to_string())]
    );
}

/// Fault: `git mv` + commit + `loci sync` without a `loci scan` left the map on the old
/// tree, so the moved page warned that its own file "was deleted" and that its symbols
/// had "moved to" the old path. Sync refreshes the map before it reads history.
#[test]
fn sync_after_a_committed_rename_refreshes_the_map_first() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.sync(None).unwrap();
    remember_util(&mut ws);
    git(root, &["mv", "app/util.py", "app/format.py"]);
    git_at(
        root,
        &["commit", "-qm", "rename util to format"],
        "2099-01-01T00:00:00Z",
    );
    let synced = ws.sync(None).unwrap().result;
    assert_eq!(
        synced.pages_moved,
        [("app/util.py".to_string(), "app/format.py".to_string())]
    );
    let why = ws.why("app/format.py").unwrap();
    assert_eq!(why.result.subject, "app/format.py");
    assert_eq!(why.stale_warnings.len(), 0, "{:#?}", why.stale_warnings);
    assert_eq!(why.freshness.changed_since_scan, Some(0));
}

/// `context` reads the staleness of all its memory candidates in one batch; the batch must
/// mark exactly what one revision at a time marks (file changed, body and signature
/// changed, a deleted symbol, a deleted path).
#[test]
fn batched_staleness_marks_what_one_revision_at_a_time_marks() {
    use loci_engine::audit::{revision_staleness, revisions_staleness};
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.remember(
        "app/billing.py",
        "`total()` sums the items; `legacy_total()` wraps it.",
        &by("human:ann"),
    )
    .unwrap();
    ws.remember(
        "app",
        "Formatting lives in `app/util.py`.",
        &by("human:ann"),
    )
    .unwrap();
    ws.remember("app/util.py", "`fmt()` formats.", &by("human:ann"))
        .unwrap();
    write(
        root,
        "app/billing.py",
        "def total(items, start=0):\n    return sum(items) or start\n",
    );
    std::fs::remove_file(root.join("app/util.py")).unwrap();
    ws.scan(&|_| {}).unwrap();
    let conn = ws.store().conn();
    let pages = loci_store::memory::pages(conn).unwrap();
    let revisions: Vec<loci_store::memory::Revision> = pages
        .iter()
        .filter_map(|p| p.current_revision_id)
        .map(|id| {
            loci_store::memory::revision_by_id(conn, id)
                .unwrap()
                .unwrap()
        })
        .collect();
    let pairs: Vec<_> = revisions
        .iter()
        .map(|r| (r, pages.iter().find(|p| p.page_id == r.page_id).unwrap()))
        .collect();
    let batch = revisions_staleness(conn, &pairs).unwrap();
    assert_eq!(batch.len(), revisions.len());
    let mut reasons = Vec::new();
    for r in &revisions {
        let one = revision_staleness(conn, r.revision_id).unwrap();
        assert_eq!(batch[&r.revision_id], one, "{}", r.subject);
        reasons.extend(one.iter().map(|s| {
            format!(
                "{} {}",
                s.subject,
                serde_json::to_string(&s.reason).unwrap()
            )
        }));
    }
    reasons.sort();
    assert_eq!(
        reasons,
        [
            r#"app {"kind":"deleted","target":"app/util.py"}"#,
            r#"app/billing.py {"kind":"deleted","target":"app/billing.py#legacy_total@function"}"#,
            r#"app/billing.py {"kind":"file_changed","path":"app/billing.py"}"#,
            r#"app/billing.py {"kind":"signature_changed","target":"app/billing.py#total@function"}"#,
            r#"app/util.py {"kind":"deleted","target":"app/util.py"}"#,
            r#"app/util.py {"kind":"deleted","target":"app/util.py#fmt@function"}"#,
        ]
    );
}

/// The stale reasons of the current lint, as JSON.
fn stale_reasons(ws: &mut Workspace) -> Vec<String> {
    ws.lint()
        .unwrap()
        .result
        .stale
        .iter()
        .map(|s| serde_json::to_string(&s.reason).unwrap())
        .collect()
}

/// Fault: a claim naming a method that two classes define (`parse()`, written unqualified,
/// in `JsonReader` and `XmlReader`) was never snapshotted ("no single definition in the
/// map: not tracked"), so no edit of either could ever make it stale and deleting both
/// was never reported. It is snapshotted as the set of the definitions it names (their
/// keys and body and signature fingerprints): a changed body, an added or removed
/// definition marks it stale and says which, the name gone is `deleted` and a
/// `missing_symbol`, and `confirm` takes the set again.
#[test]
fn fault_an_ambiguous_claim_was_never_snapshotted_so_it_never_went_stale() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let two = "class JsonReader:\n    def parse(self, text):\n        return text\n\nclass XmlReader:\n    def parse(self, text):\n        return text.strip()\n";
    write(root, "app/readers.py", two);
    write(root, "app/main.py", "def main():\n    pass\n");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let written = ws
        .remember(
            "app/main.py",
            "Input goes through `parse()`.",
            &by("human:ann"),
        )
        .unwrap()
        .result;
    let json_key = "app/readers.py#JsonReader.parse@method";
    let xml_key = "app/readers.py#XmlReader.parse@method";
    assert_eq!(
        (
            written.claims[0].resolved.as_deref(),
            written.claims[0].definitions.clone()
        ),
        (None, vec![json_key.to_string(), xml_key.to_string()])
    );
    assert_eq!(
        written.claims[0].untracked_or_set().as_deref(),
        Some(
            "2 definitions, tracked as a set: app/readers.py#JsonReader.parse@method, app/readers.py#XmlReader.parse@method"
        )
    );
    assert_eq!(stale_reasons(&mut ws), Vec::<String>::new());

    // A comment is no change; a body is.
    write(
        root,
        "app/readers.py",
        &two.replace("return text\n", "return text  # as is\n"),
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(stale_reasons(&mut ws), Vec::<String>::new());
    write(
        root,
        "app/readers.py",
        &two.replace("return text\n", "return text.lower()\n"),
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        stale_reasons(&mut ws),
        [format!(
            r#"{{"kind":"definitions_changed","target":"parse","added":[],"removed":[],"changed":["{json_key}"]}}"#
        )]
    );
    let report = ws.lint().unwrap().result;
    assert_eq!(
        report.stale[0].describe(),
        format!(
            "memory `app/main.py` v1 claim `parse()` is stale: the definitions of parse changed (changed {json_key}) since it was written"
        )
    );
    ws.confirm("app/main.py", &by("human:ann")).unwrap();
    assert_eq!(stale_reasons(&mut ws), Vec::<String>::new());

    // A third definition, and one of the two gone.
    write(
        root,
        "app/readers.py",
        "class JsonReader:\n    def parse(self, text):\n        return text.lower()\n\nclass CsvReader:\n    def parse(self, text):\n        return text.split(',')\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        stale_reasons(&mut ws),
        [format!(
            r#"{{"kind":"definitions_changed","target":"parse","added":["app/readers.py#CsvReader.parse@method"],"removed":["{xml_key}"],"changed":[]}}"#
        )]
    );

    // No `parse` left at all: deleted, and a missing symbol.
    write(root, "app/readers.py", "class JsonReader:\n    pass\n");
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        stale_reasons(&mut ws),
        [r#"{"kind":"deleted","target":"parse"}"#]
    );
    let findings: Vec<(String, String)> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .iter()
        .map(|c| (c.kind.clone(), c.claim.clone()))
        .collect();
    assert_eq!(
        findings,
        [("missing_symbol".to_string(), "parse()".to_string())]
    );
}

/// Fault: a new revision of a page whose file had been deleted took no fingerprint (the
/// map no longer held the file), so the deletion that had marked the page stale
/// disappeared from `check` with the new revision. A revision written while its file is
/// in neither the map nor the working tree keeps the page marked deleted.
#[test]
fn fault_a_new_revision_of_a_page_whose_file_was_deleted_hid_the_deletion() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.remember("app/util.py", "Formatting helpers.", &by("human:ann"))
        .unwrap();
    std::fs::remove_file(root.join("app/util.py")).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        stale_reasons(&mut ws),
        [r#"{"kind":"deleted","target":"app/util.py"}"#]
    );
    ws.remember("app/util.py", "Formatting helpers, gone.", &by("human:ann"))
        .unwrap();
    assert_eq!(
        stale_reasons(&mut ws),
        [r#"{"kind":"deleted","target":"app/util.py","missing_when_written":true}"#]
    );
    assert_eq!(ws.check().unwrap().result.lint.stale_pages, ["app/util.py"]);
}

/// A claim tracked as a set of definitions shows in the editor at each of them (the
/// memory about a file's symbols), stale only where a definition changed, and a rename of
/// their file carries the set along instead of marking every key removed.
#[test]
fn a_claim_tracked_as_a_set_is_shown_at_each_definition_and_follows_a_rename() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    let two = "class JsonReader:\n    def parse(self, text):\n        return text\n\nclass XmlReader:\n    def parse(self, text):\n        return text.strip()\n";
    write(root, "app/readers.py", two);
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "app/billing.py",
        "Input goes through `parse()`.",
        &by("human:ann"),
    )
    .unwrap();
    let mentions = |ws: &Workspace, path: &str| -> Vec<(String, bool)> {
        ws.file_memory(path)
            .unwrap()
            .into_iter()
            .map(|m| (m.key, m.stale.is_some()))
            .collect()
    };
    assert_eq!(
        mentions(&ws, "app/readers.py"),
        [
            ("app/readers.py#JsonReader.parse@method".to_string(), false),
            ("app/readers.py#XmlReader.parse@method".to_string(), false)
        ]
    );
    write(
        root,
        "app/readers.py",
        &two.replace("text.strip()", "text.lstrip()"),
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        mentions(&ws, "app/readers.py"),
        [
            ("app/readers.py#JsonReader.parse@method".to_string(), false),
            ("app/readers.py#XmlReader.parse@method".to_string(), true)
        ]
    );
    ws.confirm("app/billing.py", &by("human:ann")).unwrap();

    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "readers"]);
    git(root, &["mv", "app/readers.py", "app/parsers.py"]);
    git(root, &["commit", "-qm", "rename"]);
    ws.scan(&|_| {}).unwrap();
    assert_eq!(stale_reasons(&mut ws), Vec::<String>::new());
    assert_eq!(
        mentions(&ws, "app/parsers.py"),
        [
            ("app/parsers.py#JsonReader.parse@method".to_string(), false),
            ("app/parsers.py#XmlReader.parse@method".to_string(), false)
        ]
    );
}

/// The page's subject narrows a set as it breaks a tie: `parse()` on the page of a file
/// whose two classes define it is tracked as those two, not with every `parse` elsewhere
/// (the stdlib's `email/parser.py` has four among many); a `parse` added elsewhere
/// changes nothing, one added in the file does.
#[test]
fn a_set_claim_is_narrowed_to_the_definitions_in_its_page_subject() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let readers = "class Parser:\n    def parse(self, fp):\n        return fp\n\nclass BytesParser:\n    def parse(self, fp):\n        return bytes(fp)\n";
    write(root, "mail/parser.py", readers);
    write(root, "json/decoder.py", "def parse(s):\n    return s\n");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let written = ws
        .remember(
            "mail/parser.py",
            "Both start at `parse()`.",
            &by("human:ann"),
        )
        .unwrap()
        .result;
    assert_eq!(
        written.claims[0].definitions,
        [
            "mail/parser.py#BytesParser.parse@method",
            "mail/parser.py#Parser.parse@method"
        ]
    );
    write(
        root,
        "csv/reader.py",
        "def parse(s):\n    return s.split(',')\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(stale_reasons(&mut ws), Vec::<String>::new());
    write(
        root,
        "mail/parser.py",
        &format!("{readers}\nclass HeaderParser:\n    def parse(self, fp):\n        return fp\n"),
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        stale_reasons(&mut ws),
        [
            r#"{"kind":"file_changed","path":"mail/parser.py"}"#,
            r#"{"kind":"definitions_changed","target":"parse","added":["mail/parser.py#HeaderParser.parse@method"],"removed":[],"changed":[]}"#
        ]
    );
}

/// Fault: memory about a file the last scan skipped (grown past the size cap, turned
/// binary, holding a secret) said the file "was deleted" while it was on disk, and a page
/// written about such a file said it "does not exist here". The map no longer holds it,
/// so the mark says that instead, with the skip's reason: `unmapped`, for the page and
/// for its symbol claims; mapped again, the marks are gone.
#[test]
fn fault_memory_about_a_skipped_file_said_it_was_deleted() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.remember("app/util.py", "`fmt()` formats.", &by("human:ann"))
        .unwrap();
    write(root, "app/util.py", "def fmt(x):\n    return str(x)\n\0\n");
    ws.scan(&|_| {}).unwrap();
    let unmapped =
        |target: &str| format!(r#"{{"kind":"unmapped","target":"{target}","reason":"binary"}}"#);
    assert_eq!(
        stale_reasons(&mut ws),
        [
            unmapped("app/util.py"),
            unmapped("app/util.py#fmt@function")
        ]
    );
    let stale = ws.lint().unwrap().result.stale;
    assert_eq!(
        stale[0].describe(),
        "memory `app/util.py` v1 cannot be checked: app/util.py is no longer mapped (the last \
         scan skipped its file: binary)"
    );
    write(root, "app/util.py", "def fmt(x):\n    return str(x)\n");
    ws.scan(&|_| {}).unwrap();
    assert_eq!(stale_reasons(&mut ws), Vec::<String>::new());
}

/// Fault: renaming `_checknetloc` to `_validate_netloc` in `urllib/parse.py`, same body,
/// made lint suggest `_check_close`, the most similar name. A renamed definition is found
/// by the claim's snapshot: its body first, then (same file and kind) its signature, and
/// only then by name; the truth names the evidence.
#[test]
fn fault_a_renamed_definition_was_suggested_by_a_similar_name_not_by_its_body() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let check = "    if not netloc or netloc.isascii():\n        return\n    n = netloc.replace('@', '')\n    raise ValueError(n)\n";
    let before = format!(
        "def _checknetloc(netloc):\n{check}\n\
         def _check_close(netloc):\n    return netloc.endswith(':')\n\n\
         def _splitnetloc(url, start=0):\n    return url[start:]\n\n\
         def _coerce(*args):\n    return args\n"
    );
    write(root, "urllib/parse.py", &before);
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "parse"]);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "urllib/parse.py",
        "Netlocs are checked by `_checknetloc()`.\nURLs are split by `_splitnetloc()`.\nArguments go through `_coerce()`.\n",
        &by("human:ann"),
    )
    .unwrap();
    assert!(ws.lint().unwrap().result.contradictions.is_empty());

    // `_checknetloc` renamed, same body; `_splitnetloc` renamed with a new signature and
    // body; `_coerce` renamed with the same parameters and a new body.
    let after = format!(
        "def _validate_netloc(netloc):\n{check}\n\
         def _check_close(netloc):\n    return netloc.endswith(':')\n\n\
         def _split_netloc(url, begin):\n    return url[begin:] or url\n\n\
         def _coerce_all(*args):\n    return tuple(args)\n"
    );
    write(root, "urllib/parse.py", &after);
    git(root, &["commit", "-qam", "rename the netloc helpers"]);
    ws.scan(&|_| {}).unwrap();
    ws.sync(None).unwrap();
    let found: Vec<(String, Option<String>, Option<String>)> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .into_iter()
        .map(|c| (c.claim, c.truth, c.suggestion))
        .collect();
    let row = |claim: &str, truth: &str, suggestion: &str| {
        (
            claim.to_string(),
            Some(truth.to_string()),
            Some(suggestion.to_string()),
        )
    };
    assert_eq!(
        found,
        [
            row(
                "_checknetloc()",
                "no symbol `_checknetloc` in the map; `_validate_netloc` in urllib/parse.py \
                 has the same body",
                "_validate_netloc"
            ),
            row(
                "_splitnetloc()",
                "no symbol `_splitnetloc` in the map; `_split_netloc` has a similar name",
                "_split_netloc"
            ),
            row(
                "_coerce()",
                "no symbol `_coerce` in the map; `_coerce_all` in urllib/parse.py has the \
                 same signature",
                "_coerce_all"
            ),
        ]
    );
}

/// Fault found by a fresh-user trial: deleting `RotatingFileHandler.shouldRollover` made
/// lint suggest `BaseRotatingHandler.emit`, "the same signature", and deleting `A.stop`
/// suggested `A.go`: `(self, record)` and `(self)` are most methods' signatures. A
/// signature is evidence only when one definition of the file has it and the old name names
/// no definition left.
#[test]
fn fault_a_deleted_method_was_suggested_as_any_method_with_its_signature() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "m.py",
        "class A:\n    def go(self):\n        return 1\n\n    def stop(self):\n        return 2\n\n\
         class B:\n    def go(self):\n        return 3\n\n\
         class Base:\n    def emit(self, record):\n        return record\n\n\
         class Rotating(Base):\n    def should_roll(self, record):\n        return 4\n\n\
         class Timed(Base):\n    def should_roll(self, record):\n        return 5\n",
    );
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "m"]);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "m.py",
        "`A.stop()` halts. `Rotating.should_roll()` decides.\n",
        &by("human:ann"),
    )
    .unwrap();
    assert!(ws.lint().unwrap().result.contradictions.is_empty());
    write(
        root,
        "m.py",
        "class A:\n    def go(self):\n        return 1\n\n\
         class B:\n    def go(self):\n        return 3\n\n\
         class Base:\n    def emit(self, record):\n        return record\n\n\
         class Rotating(Base):\n    pass\n\n\
         class Timed(Base):\n    def should_roll(self, record):\n        return 5\n",
    );
    git(root, &["commit", "-qam", "delete two methods"]);
    ws.scan(&|_| {}).unwrap();
    ws.sync(None).unwrap();
    let found: Vec<(String, Option<String>, Option<String>)> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .into_iter()
        .map(|c| (c.claim, c.truth, c.suggestion))
        .collect();
    let gone = |claim: &str, name: &str| {
        (
            claim.to_string(),
            Some(format!("no symbol `{name}` in the map")),
            None,
        )
    };
    assert_eq!(
        found,
        [
            gone("A.stop()", "A.stop"),
            gone("Rotating.should_roll()", "Rotating.should_roll")
        ]
    );
}

/// Fault found by the fresh-user trial: when one of a page's two stale claims recovered
/// (its function restored) while the other's function was deleted, the knowledge log said
/// "revision 3 is current again": the whole page, by a row id. It names the claim.
#[test]
fn fault_the_log_said_a_revision_was_current_again_while_it_was_still_stale() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = |go: &str, stop: bool| {
        format!(
            "class A:\n    def go(self):\n        return 1\n{}\n\
             def go():\n    return {go}\n",
            if stop {
                "\n    def stop(self):\n        return 2\n"
            } else {
                ""
            }
        )
    };
    write(root, "m.py", &text("3", true));
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "m.py",
        "`A.stop()` halts and `go()` runs.\n",
        &by("human:ann"),
    )
    .unwrap();
    ws.lint().unwrap();
    write(root, "m.py", &text("33", true));
    ws.scan(&|_| {}).unwrap();
    ws.lint().unwrap();
    write(root, "m.py", &text("3", false));
    ws.scan(&|_| {}).unwrap();
    ws.lint().unwrap();
    let log: Vec<(String, String)> =
        loci_store::audit::knowledge_changes_since(ws.store().conn(), 0)
            .unwrap()
            .into_iter()
            .filter(|c| c.change == "no_longer_stale")
            .map(|c| (c.subject, c.detail))
            .collect();
    assert_eq!(
        log,
        [(
            "m.py".to_string(),
            "memory `m.py` v1 claim `go()` is current again".to_string()
        )]
    );
}

/// Fault found by a trial: a misspelt member (`Header.encod()`) was told "did you mean
/// `encode`?", the bare member, not the name to write; `Span::nwe()` the same in Rust's
/// spelling. The suggestion keeps the claim's qualifier and separator, and a claim whose
/// member only a type in it has (`header.encode()` on the module `header`) was told to mean itself.
#[test]
fn fault_a_misspelt_member_was_suggested_without_its_qualifier() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "mail/header.py",
        "class Header:\n    def encode(self, splitchars=';, '):\n        return splitchars\n",
    );
    write(
        root,
        "src/span.rs",
        "pub struct Span;\n\nimpl Span {\n    pub fn new() -> Span {\n        Span\n    }\n}\n",
    );
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let written = ws
        .remember(
            "mail/header.py",
            "Encoding is `Header.encod()`; spans come from `Span::nwe()`; `header.encode()` too.",
            &by("human:ann"),
        )
        .unwrap()
        .result;
    let suggested: Vec<Option<String>> = written
        .claims
        .iter()
        .map(|c| c.finding.as_ref().and_then(|f| f.suggestion.clone()))
        .collect();
    assert_eq!(
        suggested,
        [
            Some("Header.encode".to_string()),
            Some("Span::new".to_string()),
            // The member is another type's: the claim itself is no suggestion.
            None
        ]
    );
    let module = written.claims[2].finding.as_ref().unwrap();
    assert_eq!(
        module.truth.as_deref(),
        Some("no symbol `header.encode` in the map")
    );
    let lint: Vec<Option<String>> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .into_iter()
        .map(|c| c.suggestion)
        .collect();
    assert_eq!(lint, suggested);
}

/// The marks a reader is served from what the last scan stored are the marks made from
/// the map, through every change that makes them differ: an edit the next scan maps, a
/// memory write, a pin; while a scan runs (or after one was killed) and under other
/// rules, no stored row is used.
#[test]
fn stored_marks_are_the_marks_made_from_the_map_and_unused_once_out_of_date() {
    use loci_engine::audit::{MARK_RULES, revisions_staleness, stored_staleness};
    use loci_store::memory as mem;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app/util.py", "def fmt(x):\n    return str(x)\n");
    write(root, "app/other.py", "def keep():\n    return 1\n");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "app/other.py",
        "Formatting is `fmt()`; `keep()` stays.",
        &by("a"),
    )
    .unwrap();
    ws.remember("app/util.py", "`fmt()` turns anything into text.", &by("a"))
        .unwrap();
    // (stored, made from the map) for every current revision.
    let marks = |ws: &Workspace| {
        let conn = ws.store().conn();
        let pages = mem::pages(conn).unwrap();
        let revisions: Vec<mem::Revision> = pages
            .iter()
            .map(|p| {
                mem::revision_by_id(conn, p.current_revision_id.unwrap())
                    .unwrap()
                    .unwrap()
            })
            .collect();
        let pairs: Vec<(&mem::Revision, &mem::Page)> = revisions.iter().zip(&pages).collect();
        let ids: Vec<i64> = revisions.iter().map(|r| r.revision_id).collect();
        (
            stored_staleness(conn, &ids).unwrap(),
            revisions_staleness(conn, &pairs).unwrap(),
        )
    };
    // Written after the scan: each write stored its revision's marks (none stale).
    let (stored, made) = marks(&ws);
    assert_eq!(stored.len(), 2);
    assert_eq!(stored, made);
    assert!(made.values().all(|m| m.is_empty()));

    // An edit: the scan that maps it stores the new marks.
    write(root, "app/util.py", "def fmt(x):\n    return repr(x)\n");
    ws.scan(&|_| {}).unwrap();
    let (stored, made) = marks(&ws);
    assert_eq!(stored.len(), 2);
    assert_eq!(stored, made);
    assert_eq!(made.values().map(Vec::len).sum::<usize>(), 3, "{made:#?}");

    // A pin drops the page's row (its marks are none now); the next scan stores it again.
    ws.pin("app/util.py", true, &by("a")).unwrap();
    let (stored, made) = marks(&ws);
    assert_eq!(stored.len(), 1);
    assert_eq!(
        stored.values().map(Vec::len).sum::<usize>(),
        1,
        "{stored:#?}"
    );
    assert_eq!(made.values().map(Vec::len).sum::<usize>(), 1);
    ws.scan(&|_| {}).unwrap();
    let (stored, made) = marks(&ws);
    assert_eq!((stored.len(), &stored), (2, &made));

    // A scan that is running (or was killed) has changed the map as far as a reader
    // knows: no stored row is used.
    let conn = ws.store().conn();
    conn.execute(
        "INSERT INTO scans(started_at) VALUES ('2026-12-04T00:00:00Z')",
        [],
    )
    .unwrap();
    assert!(marks(&ws).0.is_empty());
    ws.scan(&|_| {}).unwrap();
    assert_eq!(marks(&ws).0.len(), 2);

    // Rows stored under other rules are not used.
    ws.store()
        .conn()
        .execute("UPDATE revision_marks SET rules = ?1", [MARK_RULES + 1])
        .unwrap();
    assert!(marks(&ws).0.is_empty());
}

/// Fault (fresh-user trial): `why` of memory written before any `loci sync` showed no
/// commit and gave no hint, though its session had recorded HEAD when it began. It now says
/// why there is no commit and what is known instead.
#[test]
fn fault_why_without_a_synced_commit_gave_no_hint() {
    let (_dir, mut ws) = repo();
    let session = ws
        .session_begin(Some("fmt work"), Some("agent:claude"))
        .unwrap()
        .result;
    let head = session
        .head
        .clone()
        .expect("a session in a git repository records HEAD");
    ws.remember(
        "app/util.py",
        "Formatting helpers; `fmt()` is the entry point.",
        &WriteOptions {
            session: Some(session.session_id),
            ..by("agent:claude")
        },
    )
    .unwrap();
    let why = ws.why("app/util.py").unwrap().result;
    assert!(why.commit.is_none());
    assert_eq!(
        why.commit_note.as_deref(),
        Some(
            format!(
                "git history is not read yet: `loci sync` reads it; its session began at HEAD {} on main",
                &head[..12]
            )
            .as_str()
        )
    );
    // After a sync the commit that wrote the file is known, and nothing needs saying.
    ws.sync(None).unwrap();
    let why = ws.why("app/util.py").unwrap().result;
    assert_eq!(why.commit.map(|c| c.hash), Some(head));
    assert_eq!(why.commit_note, None);
}

/// Fault (fresh-user trial): a claim written twice in one page (`total()` in two
/// sentences) was two stale marks, so lint counted "3 stale marks on 1 page" where two
/// facts had gone stale. A fact is marked once however often the body names it.
#[test]
fn fault_a_claim_written_twice_was_marked_stale_twice() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.remember(
        "app/billing.py",
        "`total()` sums the items; `legacy_total()` wraps it. Call `total()` for new code.",
        &by("human:ann"),
    )
    .unwrap();
    write(
        root,
        "app/billing.py",
        "def total(items):\n    return sum(items) + 0\n\ndef legacy_total(items):\n    return total(items) * 1\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        stale_reasons(&mut ws),
        [
            r#"{"kind":"file_changed","path":"app/billing.py"}"#,
            r#"{"kind":"body_changed","target":"app/billing.py#total@function"}"#,
            r#"{"kind":"body_changed","target":"app/billing.py#legacy_total@function"}"#,
        ]
    );
    // `why` lists the claim once too.
    let why = ws.why("app/billing.py:1").unwrap().result;
    let claims: Vec<&str> = why.claims.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(claims, ["total()"]);
}

/// A file whose functions hold string literals with escapes, and a file page naming two of
/// them and a method that two classes define (a claim tracked as a set).
const LITERALS: &str = "def f():\n    return \"a\\tb\"\n\ndef g():\n    return 1\n\nclass A:\n    def parse(self):\n        return \"x\\ty\"\n\nclass B:\n    def parse(self):\n        return 'y'\n";

/// Scans [`LITERALS`], remembers its page, then makes the map and memory as an older
/// analysis version would have left them: every fingerprint of `app/text.py` and every
/// snapshot of them as the older rules computed it (`old …`), except three snapshots that
/// were already stale (`g()`'s body, `B.parse`'s body in the set, taken from other code).
fn memory_under_older_rules() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "app/text.py", LITERALS);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "app/text.py",
        "`f()` returns a tab-separated pair, `g()` a one and `parse()` the text.",
        &by("human:ann"),
    )
    .unwrap();
    ws.store()
        .conn()
        .execute_batch(&format!(
            "UPDATE symbols SET body_fingerprint = 'old body ' || key,
                                signature_fingerprint = 'old sig ' || key;
             UPDATE files SET fingerprint = 'old file' WHERE path = 'app/text.py';
             UPDATE page_snapshots SET fingerprint = 'old file';
             UPDATE claims SET snapshot = 'old body ' || resolved,
                               signature_snapshot = 'old sig ' || resolved
              WHERE resolved IS NOT NULL;
             UPDATE claims SET snapshot = 'stale body' WHERE text = 'g()';
             UPDATE claims SET definitions = (
                 SELECT json_group_array(json_object(
                     'key', key,
                     'body', CASE WHEN key LIKE '%#B.%' THEN 'stale body' ELSE 'old body ' || key END,
                     'signature', 'old sig ' || key))
                   FROM (SELECT key FROM symbols WHERE name = 'parse' ORDER BY key))
              WHERE definitions IS NOT NULL;
             UPDATE meta SET value = '{}' WHERE key = 'analysis_version';",
            loci_core::ANALYSIS_VERSION - 1
        ))
        .unwrap();
    (dir, ws)
}

/// `(text, snapshot, signature snapshot, definitions as JSON)` of every claim, in body order.
type ClaimSnapshot = (
    String,
    Option<String>,
    Option<String>,
    Option<serde_json::Value>,
);

fn claim_snapshots(ws: &Workspace) -> Vec<ClaimSnapshot> {
    let conn = ws.store().conn();
    let mut stmt = conn
        .prepare(
            "SELECT text, snapshot, signature_snapshot, definitions FROM claims ORDER BY start_byte",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let definitions: Option<String> = r.get(3)?;
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            definitions.map(|d| serde_json::from_str(&d).unwrap()),
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// `(body, signature)` fingerprints of a symbol in the map.
fn fingerprints(ws: &Workspace, key: &str) -> (String, String) {
    ws.store()
        .conn()
        .query_row(
            "SELECT body_fingerprint, signature_fingerprint FROM symbols WHERE key = ?1",
            [key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
}

/// Fault: ANALYSIS_VERSION 13 changed how fingerprints are computed (the text of string
/// literals counts), so the scan that analysed every file again gave unchanged code new
/// fingerprints, and memory snapshotted under the older rules (claims, a file page, a claim
/// tracked as a set) was marked stale though no code had changed. That scan now carries
/// each snapshot that equalled the old fingerprint to the new one; a snapshot that was
/// already stale stays stale.
#[test]
fn fault_a_new_analysis_version_staled_memory_about_unchanged_code() {
    let (_dir, mut ws) = memory_under_older_rules();
    assert_eq!(ws.scan(&|_| {}).unwrap().result.reanalysed, 1);
    let (a, b) = ("app/text.py#A.parse@method", "app/text.py#B.parse@method");
    assert_eq!(
        stale_reasons(&mut ws),
        [
            r#"{"kind":"body_changed","target":"app/text.py#g@function"}"#.to_string(),
            format!(
                r#"{{"kind":"definitions_changed","target":"parse","added":[],"removed":[],"changed":["{b}"]}}"#
            ),
        ]
    );
    let (f, g) = (
        fingerprints(&ws, "app/text.py#f@function"),
        fingerprints(&ws, "app/text.py#g@function"),
    );
    let (a_now, b_now) = (fingerprints(&ws, a), fingerprints(&ws, b));
    assert_eq!(
        claim_snapshots(&ws),
        [
            ("f()".to_string(), Some(f.0), Some(f.1), None),
            (
                "g()".to_string(),
                Some("stale body".into()),
                Some(g.1),
                None
            ),
            (
                "parse()".to_string(),
                None,
                None,
                Some(serde_json::json!([
                    {"key": a, "body": a_now.0, "signature": a_now.1},
                    {"key": b, "body": "stale body", "signature": b_now.1},
                ]))
            ),
        ]
    );
    let (page, file): (String, String) = ws
        .store()
        .conn()
        .query_row(
            "SELECT (SELECT fingerprint FROM page_snapshots),
                    (SELECT fingerprint FROM files WHERE path = 'app/text.py')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(page, file);
    assert_ne!(file, "old file");
}

/// The other side of the fault above: a file whose content changed as well carries no
/// snapshot forward, so every snapshot taken under the older rules stays stale.
#[test]
fn a_file_edited_across_a_new_analysis_version_keeps_its_memory_stale() {
    let (dir, mut ws) = memory_under_older_rules();
    write(
        dir.path(),
        "app/text.py",
        &format!("{LITERALS}\ndef h():\n    return 2\n"),
    );
    let before = claim_snapshots(&ws);
    let report = ws.scan(&|_| {}).unwrap().result;
    assert_eq!(
        (report.reanalysed, report.modified),
        (0, vec!["app/text.py".to_string()])
    );
    assert_eq!(claim_snapshots(&ws), before);
    let (a, b) = ("app/text.py#A.parse@method", "app/text.py#B.parse@method");
    assert_eq!(
        stale_reasons(&mut ws),
        [
            r#"{"kind":"file_changed","path":"app/text.py"}"#.to_string(),
            r#"{"kind":"signature_changed","target":"app/text.py#f@function"}"#.to_string(),
            r#"{"kind":"signature_changed","target":"app/text.py#g@function"}"#.to_string(),
            format!(
                r#"{{"kind":"definitions_changed","target":"parse","added":[],"removed":[],"changed":["{a}","{b}"]}}"#
            ),
        ]
    );
}

/// Fault: lint compared every distinct name of the map with every failing claim (40 s per
/// lint on 1.09 M symbols). Candidates now come from indexes, bounded per query; with more
/// names sharing the first characters than one query reads, a slip in those characters is
/// still found (`__gettatr__` folds to `gettatr`, not under `gett`).
#[test]
fn fault_lint_compared_every_name_of_the_map_with_every_failing_claim() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut text: String = (0..3000)
        .map(|i| format!("def get_x{i:04}():\n    return {i}\n\n"))
        .collect();
    text.push_str("def __getattr__(name):\n    return name\n");
    write(root, "big.py", &text);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let written = ws
        .remember(
            "big.py",
            "Attributes go through `__gettatr__()`; the first is `get_x000()`.",
            &by("human:ann"),
        )
        .unwrap()
        .result;
    let suggested: Vec<Option<String>> = written
        .claims
        .iter()
        .map(|c| c.finding.as_ref().and_then(|f| f.suggestion.clone()))
        .collect();
    assert_eq!(
        suggested,
        [
            Some("__getattr__".to_string()),
            Some("get_x0000".to_string())
        ]
    );
}

/// The open contradictions (key, truth, suggestion) and stale marks lint reports.
fn verdicts(report: &loci_engine::audit::LintReport) -> (Vec<String>, Vec<String>) {
    let mut open: Vec<String> = report
        .contradictions
        .iter()
        .map(|c| {
            format!(
                "{} | {} | {}",
                c.finding_key,
                c.truth.as_deref().unwrap_or("-"),
                c.suggestion.as_deref().unwrap_or("-")
            )
        })
        .collect();
    open.sort();
    (open, report.stale.iter().map(|s| s.describe()).collect())
}

/// Lints what changed (a scan just did, or writes did) with the marks the scan kept or
/// made, then everything with every mark made again, and asserts that checking
/// everything finds nothing to open or resolve and reports the same contradictions and
/// marks; returns the open contradictions' keys.
fn lint_of_what_changed_agrees_with_lint_of_everything(ws: &mut Workspace) -> Vec<String> {
    // The open contradictions of memory pages, then the stale marks.
    let changed = ws.lint().unwrap().result;
    // Every claim checked and every mark made again from the map as it is.
    ws.store()
        .conn()
        .execute_batch(
            "INSERT OR IGNORE INTO map_changes(name) VALUES ('*'); DELETE FROM revision_marks;",
        )
        .unwrap();
    let everything = ws.lint().unwrap().result;
    assert_eq!(everything.memory_checked, "all");
    assert_eq!(
        (everything.opened, everything.recurred, everything.resolved),
        (0, 0, 0),
        "{:#?}",
        everything.contradictions
    );
    assert_eq!(verdicts(&changed), verdicts(&everything));
    let (open, stale) = verdicts(&everything);
    let mut out: Vec<String> = open
        .iter()
        .map(|o| o.split(" | ").next().unwrap().to_string())
        .filter(|k| k.starts_with("page:"))
        .collect();
    out.extend(stale);
    out
}

#[test]
fn lint_and_marks_follow_only_what_changed_and_agree_with_a_check_of_everything() {
    let (dir, mut ws) = repo();
    let root = dir.path();
    ws.remember(
        "app/billing.py",
        "`total()` sums; `legacy_total()` wraps it; amounts print with `fmt()` from `app/util.py`.",
        &by("a"),
    )
    .unwrap();
    ws.remember(
        "app",
        "`encode_fast()` never existed here; we pin requests@2.31.0; `app/` holds the code.",
        &by("a"),
    )
    .unwrap();
    ws.decide(
        "Keep `fmt()` returning a str",
        Some("app/util.py"),
        &by("a"),
    )
    .unwrap();
    // Pages naming nothing that changes below: a lint of what changed never reads them.
    for n in 0..20 {
        ws.learn(&format!("Lesson {n}: `total()` is pure"), None, &by("a"))
            .unwrap();
    }
    // The scan linted everything; this lint checks the writes since.
    let first = ws.lint().unwrap().result;
    assert_eq!(first.memory_checked, "changed");
    assert!(
        first.contradictions.is_empty(),
        "{:#?}",
        first.contradictions
    );
    let quiet = ws.lint().unwrap().result;
    assert_eq!(
        (quiet.memory_checked, quiet.claims_checked),
        ("changed", 3),
        "only AGENTS.md's three claims: nothing changed"
    );

    // A definition renamed in place: the claims naming it, and only those.
    write(
        root,
        "app/billing.py",
        "def total(items):\n    return sum(items)\n\ndef old_total(items):\n    return total(items)\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "page:app/billing.py:missing_symbol:legacy_total",
            "memory `app/billing.py` v1 is stale: app/billing.py changed since it was written",
            "memory `app/billing.py` v1 claim `legacy_total()` is stale: app/billing.py#legacy_total@function was deleted since it was written",
        ]
    );

    // A file renamed, a manifest changed.
    git(root, &["mv", "app/util.py", "app/format.py"]);
    write(root, "requirements.txt", "requests==2.32.3\n");
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "page:app/billing.py:missing_path:app/util.py",
            "page:app/billing.py:missing_symbol:legacy_total",
            "page:app:version_mismatch:requests@2.31.0",
            "page:decision:1:missing_path:app/util.py",
            "memory `app/billing.py` v1 is stale: app/billing.py changed since it was written",
            "memory `app/billing.py` v1 claim `legacy_total()` is stale: app/billing.py#legacy_total@function was deleted since it was written",
        ]
    );

    // The definition back: its contradiction resolves; a write after the lint is checked
    // by the next one whatever the map did.
    write(
        root,
        "app/billing.py",
        "def total(items):\n    return sum(items)\n\ndef legacy_total(items):\n    return total(items)\n",
    );
    ws.scan(&|_| {}).unwrap();
    ws.store()
        .conn()
        .execute("DELETE FROM meta WHERE key = 'linted_revision'", [])
        .unwrap();
    ws.lint().unwrap();
    ws.remember(
        "app/format.py",
        "`fmt()` lives here; not `fmt_money()`.",
        &by("a"),
    )
    .unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "page:app/billing.py:missing_path:app/util.py",
            "page:app:version_mismatch:requests@2.31.0",
            "page:decision:1:missing_path:app/util.py",
        ]
    );

    // Fresh-user trial: a claim that never named anything, and a path outside the map (a
    // git-ignored build output), whose verdicts no change of their own name moves.
    write(root, ".gitignore", "build/\n");
    ws.scan(&|_| {}).unwrap();
    // No subject: a call the page's own code lacks is another rule (see
    // `fault_a_call_that_never_resolved_stayed_silent`).
    ws.decide(
        "Keep `frobnicate()` pure; it writes `build/report.txt`",
        None,
        &by("a"),
    )
    .unwrap();
    let before = [
        "page:app/billing.py:missing_path:app/util.py",
        "page:app:version_mismatch:requests@2.31.0",
        "page:decision:1:missing_path:app/util.py",
        "page:decision:2:missing_path:build/report.txt",
    ];
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        before
    );
    // A near miss of `frobnicate` added in another file: "did you mean `frobnicat`".
    write(root, "lib/extra.py", "def frobnicat():\n    return 1\n");
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "page:app/billing.py:missing_path:app/util.py",
            "page:app:version_mismatch:requests@2.31.0",
            "page:decision:1:missing_path:app/util.py",
            "page:decision:2:missing_path:build/report.txt",
            "page:decision:2:missing_symbol:frobnicate",
        ]
    );
    let open = ws.lint().unwrap().result.contradictions;
    let frob = open.iter().find(|c| c.claim == "frobnicate()").unwrap();
    assert_eq!(
        (frob.truth.as_deref(), frob.suggestion.as_deref()),
        (
            Some("no symbol `frobnicate` in the map; `frobnicat` has a similar name"),
            Some("frobnicat")
        )
    );
    // It goes again: the claim is silent again.
    std::fs::remove_file(root.join("lib/extra.py")).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        before
    );
    // The ignored file appears, with no change to the map, then goes.
    write(root, "build/report.txt", "ok\n");
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "page:app/billing.py:missing_path:app/util.py",
            "page:app:version_mismatch:requests@2.31.0",
            "page:decision:1:missing_path:app/util.py",
        ]
    );
    std::fs::remove_file(root.join("build/report.txt")).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        before
    );
}

/// Fault: an import that moved a page back to the subject it was exported under left its
/// open contradiction on the old subject, and a lint of what changed resolved it while the
/// claim still failed (a lint of everything then reopened it). A page's moves are changes a
/// lint checks again, and a contradiction left on a subject without a page makes the lint
/// check everything. (The import moves it because `a.py` is on disk again; to a path that
/// is gone it does not move it, see
/// `fault_import_of_an_older_export_moved_a_page_onto_a_path_that_is_gone`.)
#[test]
fn fault_an_import_that_moved_a_page_resolved_a_contradiction_that_still_failed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "def hello():\n    return 1\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "a"]);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember("a.py", "Calls `helo()` and `hello()`.", &by("a"))
        .unwrap();
    ws.lint().unwrap();
    let doc = ws.export_memory().unwrap().result;
    git(root, &["mv", "a.py", "b.py"]);
    git(root, &["commit", "-qm", "b"]);
    ws.scan(&|_| {}).unwrap();
    ws.lint().unwrap();
    write(root, "a.py", "def hello():\n    return 1\n");
    ws.import_memory(&doc, "memory.json").unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        ["page:a.py:missing_symbol:helo"]
    );
}

/// Fault: a decision written after a rename, naming the old function in call form
/// (`_checknetloc()` about a file where it became `_validate_netloc`), got no mark at all:
/// a name that never resolved and is no near miss was taken for no claim about code. A call
/// that a page about code names, that the map defines nowhere and that the page's code
/// never makes, is a `missing_symbol` — unless its clause says it is absent, the code there
/// calls it (a builtin), or the page is about no code of the map.
#[test]
fn fault_a_call_that_never_resolved_stayed_silent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "net/parse.py",
        "def urlsplit(url):\n    netloc = url.split('/')[2]\n    _validate_netloc(netloc)\n    return netloc\n\n\ndef _validate_netloc(netloc):\n    if len(netloc) > 255:\n        raise ValueError(netloc)\n",
    );
    write(root, "net/other.py", "def other():\n    return 2\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "a"]);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.decide(
        "`urlsplit()` must call `_checknetloc()` first; `len()` bounds the netloc; `print()` helps",
        Some("net/parse.py"),
        &by("a"),
    )
    .unwrap();
    ws.remember(
        "net",
        "`encode_fast()` never existed here; `quote_plus_fast()` was removed. Callers use `urlsplit()`.",
        &by("a"),
    )
    .unwrap();
    // About no code of the map: not checked so.
    ws.learn("Tests rely on `rotate_now()`", None, &by("a"))
        .unwrap();
    let written = ws.lint().unwrap().result;
    let found: Vec<(String, Option<String>, Option<String>)> = written
        .contradictions
        .iter()
        .map(|c| (c.finding_key.clone(), c.truth.clone(), c.suggestion.clone()))
        .collect();
    assert_eq!(
        found,
        [(
            "page:decision:1:missing_symbol:_checknetloc".to_string(),
            Some(
                "no symbol `_checknetloc` in the map, and net/parse.py neither defines nor calls it"
                    .to_string()
            ),
            None
        )]
    );
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        ["page:decision:1:missing_symbol:_checknetloc"]
    );
    // The file calls it (an import from elsewhere): the code there makes that call.
    write(
        root,
        "net/parse.py",
        "from vendor import _checknetloc\n\n\ndef urlsplit(url):\n    netloc = url.split('/')[2]\n    _checknetloc(netloc)\n    if len(netloc) > 255:\n        raise ValueError(netloc)\n    return netloc\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "memory `decision:1` v1 claim `urlsplit()` is stale: body of net/parse.py#urlsplit@function changed since it was written",
            "memory `decision:1` v1 claim `net/parse.py` is stale: net/parse.py changed since it was written",
            "memory `net` v1 claim `urlsplit()` is stale: body of net/parse.py#urlsplit@function changed since it was written",
        ]
    );
    // It calls it no more: reported again.
    write(
        root,
        "net/parse.py",
        "def urlsplit(url):\n    netloc = url.split('/')[2]\n    if len(netloc) > 255:\n        raise ValueError(netloc)\n    return netloc\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "page:decision:1:missing_symbol:_checknetloc",
            "memory `decision:1` v1 claim `urlsplit()` is stale: body of net/parse.py#urlsplit@function changed since it was written",
            "memory `decision:1` v1 claim `net/parse.py` is stale: net/parse.py changed since it was written",
            "memory `net` v1 claim `urlsplit()` is stale: body of net/parse.py#urlsplit@function changed since it was written",
        ]
    );
    // Defined elsewhere: the claim names something, and the lint of what changed resolves
    // the finding as a lint of everything does.
    write(
        root,
        "net/legacy.py",
        "def _checknetloc(netloc):\n    return netloc\n",
    );
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "memory `decision:1` v1 claim `urlsplit()` is stale: body of net/parse.py#urlsplit@function changed since it was written",
            "memory `decision:1` v1 claim `net/parse.py` is stale: net/parse.py changed since it was written",
            "memory `net` v1 claim `urlsplit()` is stale: body of net/parse.py#urlsplit@function changed since it was written",
        ]
    );
}

/// Fault (measured on the stdlib): a page about a file naming a builtin the file calls
/// (`len()`, with `le` defined elsewhere) was reported as a near miss ("did you mean
/// `le`"), as was `os.rename()` (`os.renames`), and `TCPServer.serve_forever()` (inherited
/// from a class the map does not link) as a missing member. A name that never resolved and
/// that the page's own code refers to is that code's use of something outside the map; a
/// typo or a member the code does not use is still reported.
#[test]
fn fault_a_builtin_the_code_calls_was_reported_as_a_near_miss() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "app.py",
        "def bound(netloc):\n    return len(netloc) < 256\n\n\ndef run(srv):\n    srv.serve_forever()\n",
    );
    write(root, "posix.py", "def le(a, b):\n    return a <= b\n");
    write(
        root,
        "base.py",
        "class Server:\n    def start(self):\n        pass\n",
    );
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "a"]);
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "app.py",
        "`bound()` keeps `len()` of the netloc under 256; `boundd()` is its twin. `run()` calls `Server.serve_forever()`, never `Server.stop()`.",
        &by("a"),
    )
    .unwrap();
    let open: Vec<(String, Option<String>)> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .iter()
        .map(|c| (c.finding_key.clone(), c.suggestion.clone()))
        .collect();
    assert_eq!(
        open,
        [
            (
                "page:app.py:missing_symbol:boundd".to_string(),
                Some("bound".to_string())
            ),
            ("page:app.py:missing_symbol:Server.stop".to_string(), None),
        ]
    );
    assert_eq!(
        lint_of_what_changed_agrees_with_lint_of_everything(&mut ws),
        [
            "page:app.py:missing_symbol:Server.stop",
            "page:app.py:missing_symbol:boundd"
        ]
    );
}

/// Lint, the editor's check of a markdown buffer and its live check skip the same doc
/// lines: those holding `<!-- loci: ignore -->` (docs/audit.md). Lint had skipped any line
/// containing `loci: ignore`, so a note such as "(loci: ignore this)" hid a false claim
/// from `loci lint` that the editor reported.
#[test]
fn fault_lint_and_the_editor_skipped_different_doc_lines() {
    let (dir, mut ws) = repo();
    let doc = "# Notes\n\nThe helper is `app/nowhere.py` (loci: ignore this paragraph? no).\n<!-- loci: ignore --> `app/example.py` is hypothetical.\n";
    write(dir.path(), "docs/notes.md", doc);
    ws.scan(&|_| {}).unwrap();
    let linted: Vec<(String, String)> = ws
        .lint()
        .unwrap()
        .result
        .contradictions
        .iter()
        .filter(|c| c.subject == "docs/notes.md")
        .map(|c| (c.kind.clone(), c.target.clone()))
        .collect();
    let edited: Vec<(String, String)> = ws
        .check_markdown("docs/notes.md", doc)
        .unwrap()
        .iter()
        .map(|t| (t.finding.kind.to_string(), t.finding.target.clone()))
        .collect();
    assert_eq!(
        linted,
        [("missing_path".to_string(), "app/nowhere.py".to_string())]
    );
    assert_eq!(linted, edited);
}

/// Fault from a fresh-user trial: base64's README, which mentions `std::error::Error`, was
/// reported as a contradiction ("did you mean `std::error::ContextError`?", winnow's type)
/// and warned about in answers on other questions: a path's last qualifier (`error`) was
/// matched to any `error.rs` of the map though its first segment (`std`) names nothing of
/// it. A path whose first segment the map has is still checked. A Rust path starts with a
/// crate, a type or a module at a crate's root: `rkyv::Archive` is the crate `rkyv`'s, not
/// a near miss of `Archived` in compact_str's `src/features/rkyv.rs`; nor is a member every
/// type may have (`Value::to_string()`, from `Display`) a near miss of `Value::String`.
#[test]
fn fault_a_standard_library_path_was_a_near_miss_of_a_module_of_the_map() {
    let found = lint_of(
        r#"
//- winnow/src/error.rs
pub struct ContextError;
//- serde_json/src/value.rs
pub enum Value {
    Null,
    String(String),
}
//- compact_str/src/features/rkyv.rs
pub struct Archived;
pub fn archive() {}
//- base64/README.md
# base64

Without `std` you lose `std::error::Error`; winnow's is `winnow::error::ContextErorr`.
With the feature, `rkyv::Archive` is implemented.
Print with `Value::to_string()`.
"#,
    );
    assert_eq!(
        found,
        [(
            "winnow::error::ContextErorr".to_string(),
            Some("winnow::error::ContextError".to_string())
        )]
    );
}

/// The open contradictions `lint` finds in a fresh map of the `files` fixture, as (claim,
/// suggestion).
fn lint_of(fixture: &str) -> Vec<(String, Option<String>)> {
    let dir = tempfile::tempdir().unwrap();
    files(dir.path(), fixture);
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.lint()
        .unwrap()
        .result
        .contradictions
        .into_iter()
        .map(|c| (c.claim, c.suggestion))
        .collect()
}

/// Fault from a fresh-user trial: tinyvec's `debug_metadata/README.md` names
/// `tests/debugger_visualizer.rs`, which is `tinyvec/tests/debugger_visualizer.rs`, and lint
/// reported it missing (high): a README inside a package names the package's files from a
/// folder above its own, not only from the repository's root or its own folder. A bare file
/// name the repository never had (`sqlite3.h`, in rusqlite's README) is the reader's, not a
/// missing path.
#[test]
fn fault_a_path_relative_to_a_folder_above_the_doc_was_missing() {
    let found = lint_of(
        r#"
//- tinyvec/tests/debugger_visualizer.rs
fn main() {}
//- tinyvec/debug_metadata/README.md
# Debugger

See `tests/debugger_visualizer.rs` and `tests/missing_visualizer.rs`.
Point the build at the directory holding `sqlite3.h`.
"#,
    );
    assert_eq!(found, [("tests/missing_visualizer.rs".to_string(), None)]);
}

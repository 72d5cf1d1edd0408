//! Page synthesis with real processes: the fixture scripts under `fixtures/synthesis/`
//! stand in for a model. The plan on a fixture repository, prompts within budget and free
//! of secrets, revisions with provenance and `llm_runs` rows, the page naming a missing
//! symbol landing with its contradiction, nothing written when a run fails, times out,
//! answers nothing or answers a credential.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use loci_engine::memory::WriteOptions;
use loci_engine::memory::synthesis::{PlanItem, Reason, Targets};
use loci_engine::{EngineError, Workspace};

use crate::fixture::write;

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=Ann", "-c", "user.email=ann@example.com"])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn fixture(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/synthesis")
        .join(script)
        .canonicalize()
        .unwrap()
}

const AUTH: &str = "def login(user, password):\n    return check(user, password)\n\n\ndef check(u, p):\n    return bool(u and p)\n";

/// A committed repository: `src/auth.py` imported by two files, `src/util.py` by none,
/// and a README (no symbols).
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/__init__.py", "");
    write(root, "src/auth.py", AUTH);
    write(
        root,
        "src/app.py",
        "from src.auth import login\n\n\ndef main():\n    return login('a', 'b')\n",
    );
    write(
        root,
        "src/billing.py",
        "from src.auth import check\nfrom src.util import money\n\n\nclass Invoice:\n    def total(self):\n        return money(0)\n",
    );
    write(
        root,
        "src/util.py",
        "def money(x):\n    return round(x, 2)\n",
    );
    write(root, "README.md", "# demo\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "first"]);
    dir
}

/// Opens the workspace with `[synthesis]` set to `settings` (TOML lines), and scans it.
fn open(root: &Path, settings: &str) -> Workspace {
    std::fs::create_dir_all(root.join(".loci")).unwrap();
    std::fs::write(
        root.join(".loci/config.toml"),
        format!("[synthesis]\n{settings}\n"),
    )
    .unwrap();
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws
}

fn command(script: &str, args: &str) -> String {
    format!(
        "command = \"sh {} {args}\"\nmodel = \"stub\"",
        fixture(script).display()
    )
}

fn by(author: &str) -> WriteOptions {
    WriteOptions {
        author: Some(author.into()),
        ..Default::default()
    }
}

fn count(ws: &Workspace, table: &str) -> i64 {
    ws.store()
        .conn()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

/// An `llm_runs` row: revision, event, command, model, prompt and answer tokens, wall ms,
/// exit status.
type RunRow<'a> = (i64, i64, &'a str, &'a str, i64, i64, i64, i64);

fn plan_lines(items: &[PlanItem]) -> Vec<String> {
    items
        .iter()
        .map(|i| {
            format!(
                "{} {} {} fan-in {} v{} [{}]",
                i.reason.word(),
                i.kind,
                i.subject,
                i.fan_in,
                i.version,
                i.changed.join(", ")
            )
        })
        .collect()
}

#[test]
fn unconfigured_synthesis_says_how_to_configure_it_and_does_nothing() {
    let dir = repository();
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let before = count(&ws, "revisions");
    let plan = ws.synthesis_plan().unwrap_err();
    let dry = ws.synthesis_prompts(&Targets::Pending).unwrap_err();
    let run = ws.synthesize(&Targets::Pending, None, &|_| {}).unwrap_err();
    for e in [&plan, &dry, &run] {
        assert!(matches!(e, EngineError::Config { .. }), "{e}");
        let message = e.to_string();
        assert!(
            message.contains("page synthesis is off: no `[synthesis] command` is set")
                && message.contains("[synthesis]\ncommand = \"claude -p\""),
            "{message}"
        );
    }
    assert_eq!(count(&ws, "revisions"), before);
    assert_eq!(count(&ws, "llm_runs"), 0);
}

#[test]
fn the_plan_lists_missing_pages_by_fan_in_then_stale_pages_with_changed_symbols_then_rollups() {
    let dir = repository();
    let root = dir.path();
    let mut ws = open(root, &command("answer.sh", ""));
    ws.remember(
        "src/auth.py",
        "`login()` checks the password with `check()`.",
        &by("human:ann"),
    )
    .unwrap();
    // The body of `login` changes after the page was written (committed, then rescanned).
    write(
        root,
        "src/auth.py",
        &AUTH.replace(
            "    return check(user, password)",
            "    if not user:\n        return False\n    return check(user, password)",
        ),
    );
    git(
        root,
        &["commit", "-q", "-am", "login refuses an empty user"],
    );
    ws.scan(&|_| {}).unwrap();
    let plan = ws.synthesis_plan().unwrap().result;
    assert_eq!(
        plan_lines(&plan.items),
        [
            "missing file src/util.py fan-in 1 v0 []",
            "missing file src/app.py fan-in 0 v0 []",
            "missing file src/billing.py fan-in 0 v0 []",
            "stale file src/auth.py fan-in 0 v1 [login]",
            "rollup folder src fan-in 0 v0 [src/auth.py]",
        ]
    );
    assert_eq!(plan.max_pages, 20);
}

#[test]
fn a_stale_page_s_prompt_holds_the_changed_code_its_diff_the_page_and_what_names_it() {
    let dir = repository();
    let root = dir.path();
    let mut ws = open(root, &command("answer.sh", ""));
    ws.remember(
        "src/auth.py",
        "`login()` checks the password with `check()`.",
        &by("human:ann"),
    )
    .unwrap();
    ws.decide(
        "Passwords are never logged",
        Some("src/auth.py"),
        &by("human:ann"),
    )
    .unwrap();
    write(
        root,
        "src/auth.py",
        &AUTH.replace(
            "    return check(user, password)",
            "    if not user:\n        return False\n    return check(user, password)",
        ),
    );
    ws.scan(&|_| {}).unwrap();
    let dry = ws
        .synthesis_prompts(&Targets::Paths(vec!["src/auth.py".into()]))
        .unwrap()
        .result;
    let p = &dry.prompts[0];
    assert_eq!(p.reason, Reason::Stale);
    let sections: Vec<&str> = p.text.lines().filter(|l| l.starts_with("## ")).collect();
    let want = [
        "## Decisions and lessons that name it",
        "## The current page (v1, by human:ann, ",
        "## Outline of `src/auth.py` (2 symbols, 8 lines)",
        "## Changed since v1 (commit ",
        "## Diff of `src/auth.py` since v1",
    ];
    assert_eq!(sections.len(), want.len(), "{sections:?}");
    for (got, want) in sections.iter().zip(want) {
        assert!(
            got.starts_with(want),
            "{got:?} does not start with {want:?}"
        );
    }
    assert!(
        p.text
            .contains("- decision:1: Passwords are never logged (about `src/auth.py`)")
    );
    assert!(p.text.contains(
        "@@ -2,0 +2,2 @@\n def login(user, password):\n+    if not user:\n+        return False\n"
    ));
    assert!(p.text.contains("### function `login` (lines 1–4)"));
    assert!(
        p.text
            .contains("- function `check` (line 7): def check(u, p):")
    );
    assert!(p.text.contains("cite every file, function") || p.text.contains("Cite every file"));
    assert_eq!(p.tokens, (p.text.chars().count() as u64).div_ceil(4));
    assert_eq!(dry.total_tokens, p.tokens);
}

#[test]
fn prompts_fit_max_tokens_and_withhold_what_the_secret_rules_find() {
    let dir = repository();
    let root = dir.path();
    let mut big = String::new();
    for i in 0..200 {
        big.push_str(&format!(
            "def handler_{i}(request, response, context):\n    return dispatch_{i}(request, response, context)\n\n"
        ));
    }
    big.push_str("def connect():\n    return open_session(\"tok_q8w3e7r1t5y9u2i4o6p0\")\n");
    write(root, "src/big.py", &big);
    {
        open(
            root,
            &format!("{}\nmax_tokens = 700", command("answer.sh", "")),
        );
    }
    // A rule configured after the scan: the map still holds the file, the prompt must not.
    std::fs::write(
        root.join(".loci/config.toml"),
        format!(
            "[synthesis]\n{}\nmax_tokens = 700\n\n[secrets.tokens]\ninternal = \"tok_[a-z0-9]{{20}}\"\n",
            command("answer.sh", "")
        ),
    )
    .unwrap();
    let ws = Workspace::open(root, None).unwrap();
    let dry = ws.synthesis_prompts(&Targets::Pending).unwrap().result;
    assert_eq!(dry.prompts.len(), 5);
    for p in &dry.prompts {
        assert!(p.tokens <= 700, "{} has {} tokens", p.subject, p.tokens);
        assert!(!p.text.contains("tok_q8w3"), "{}", p.text);
    }
    let big = dry
        .prompts
        .iter()
        .find(|p| p.subject == "src/big.py")
        .unwrap();
    assert_eq!(big.withheld, ["## Code"]);
    assert!(
        big.text
            .contains("(withheld: it holds a secret (internal))")
    );
    assert_eq!(big.cut.len(), 1, "{:?}", big.cut);
    assert!(
        big.cut[0].starts_with("## Outline of `src/big.py` (201 symbols, 602 lines) ("),
        "{:?}",
        big.cut
    );
    assert!(big.text.contains("more line(s) cut to fit max_tokens"));
}

#[test]
fn answers_become_revisions_by_the_model_with_their_llm_runs() {
    let dir = repository();
    let mut ws = open(
        dir.path(),
        &format!("{}\nmax_pages = 2", command("answer.sh", "")),
    );
    let dry = ws.synthesis_prompts(&Targets::Pending).unwrap().result;
    assert_eq!(dry.left, 2);
    let report = ws
        .synthesize(&Targets::Pending, None, &|_| {})
        .unwrap()
        .result;
    assert_eq!(
        (report.command.as_str(), report.model.as_str()),
        ("sh", "stub")
    );
    assert_eq!(report.left, 2);
    let summary: Vec<(&str, &str, Option<i64>, Option<i64>)> = report
        .runs
        .iter()
        .map(|r| {
            (
                r.subject.as_str(),
                r.status.as_str(),
                r.exit_code,
                r.version,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("src/auth.py", "written", Some(0), Some(1)),
            ("src/util.py", "written", Some(0), Some(1)),
        ]
    );
    let shown = ws.show("src/util.py", None).unwrap().result;
    assert_eq!(shown.revision.author, "llm:stub");
    assert_eq!(
        shown.revision.body,
        "# `src/util.py`\n\nDrafted from the outline: `money()`\n"
    );
    assert_eq!(
        shown.revision.summary.as_deref(),
        Some("synthesized by stub (missing)")
    );
    assert_eq!(shown.revision.event_id, report.runs[1].event_id);
    let kind: String = ws
        .store()
        .conn()
        .query_row(
            "SELECT kind FROM events WHERE event_id = ?1",
            [report.runs[1].event_id.unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kind, "synthesis");
    // Claims are extracted and resolved as for any write.
    let resolved: Vec<(String, Option<String>)> = shown
        .claims
        .iter()
        .map(|c| (c.text.clone(), c.resolved.clone()))
        .collect();
    assert_eq!(
        resolved,
        [
            ("src/util.py".to_string(), Some("src/util.py".to_string())),
            (
                "money()".to_string(),
                Some("src/util.py#money@function".to_string())
            ),
        ]
    );
    let runs = loci_store::synthesis::llm_runs(ws.store().conn()).unwrap();
    let rows: Vec<RunRow> = runs
        .iter()
        .map(|r| {
            (
                r.revision_id,
                r.event_id,
                r.command.as_str(),
                r.model.as_str(),
                r.prompt_tokens,
                r.answer_tokens,
                r.wall_ms,
                r.exit_status,
            )
        })
        .collect();
    let expected: Vec<RunRow> = report
        .runs
        .iter()
        .zip(&dry.prompts)
        .map(|(r, p)| {
            assert_eq!(
                r.prompt_tokens, p.tokens,
                "the dry run's prompt is the one sent"
            );
            (
                r.revision_id.unwrap(),
                r.event_id.unwrap(),
                "sh",
                "stub",
                p.tokens as i64,
                r.answer_tokens as i64,
                r.wall_ms as i64,
                0,
            )
        })
        .collect();
    assert_eq!(rows, expected);
    // The estimate of what the command printed (before the trailing space was trimmed).
    let printed = "# `src/util.py`\n\nDrafted from the outline: `money()` \n";
    assert_eq!(
        runs[1].answer_tokens as usize,
        printed.chars().count().div_ceil(4)
    );
    // The next plan no longer lists them; the folder now rolls them up.
    let plan = ws.synthesis_plan().unwrap().result;
    assert_eq!(
        plan_lines(&plan.items),
        [
            "missing file src/app.py fan-in 0 v0 []",
            "missing file src/billing.py fan-in 0 v0 []",
            "rollup folder src fan-in 0 v0 [src/auth.py, src/util.py]",
        ]
    );
}

#[test]
fn a_page_naming_a_missing_symbol_lands_with_its_contradiction() {
    let dir = repository();
    let mut ws = open(dir.path(), &command("missing.sh", ""));
    let report = ws
        .synthesize(
            &Targets::Paths(vec!["src/billing.py".into()]),
            None,
            &|_| {},
        )
        .unwrap()
        .result;
    assert_eq!(report.runs[0].status, "written");
    assert_eq!(
        report.runs[0].findings.len(),
        1,
        "{:?}",
        report.runs[0].findings
    );
    assert!(
        report.runs[0].findings[0].contains("Invoice.subtotal"),
        "{:?}",
        report.runs[0].findings
    );
    let open: Vec<(String, String, String)> =
        loci_store::audit::contradictions(ws.store().conn(), Some("open"))
            .unwrap()
            .into_iter()
            .map(|c| (c.subject, c.kind, c.claim))
            .collect();
    assert_eq!(
        open,
        [(
            "src/billing.py".to_string(),
            "missing_symbol".to_string(),
            "Invoice.subtotal()".to_string()
        )]
    );
}

#[test]
fn failed_timed_out_empty_and_credential_answers_write_nothing() {
    let dir = repository();
    let root = dir.path();
    let pid_file = root.join("sleep.pid");
    let cases = [
        (
            command("fail.sh", ""),
            "failed",
            Some(1),
            "exit 1: model unavailable",
        ),
        (
            format!(
                "{}\ntimeout_ms = 300",
                command("hang.sh", &pid_file.display().to_string())
            ),
            "timeout",
            None,
            "no answer within 300 ms; the command was killed",
        ),
        (
            "command = \"true\"\nmodel = \"stub\"".to_string(),
            "empty",
            Some(0),
            "the command printed nothing",
        ),
        (
            command("leak.sh", ""),
            "refused",
            Some(0),
            "the answer contains a secret (aws_access_key_id) at line 3, column 19; loci does \
             not store credentials in memory",
        ),
        (
            "command = \"/nonexistent/model-cli\"\nmodel = \"stub\"".to_string(),
            "error",
            None,
            "cannot start `/nonexistent/model-cli`: No such file or directory (os error 2)",
        ),
    ];
    for (settings, status, exit, message) in cases {
        let mut ws = open(root, &settings);
        let before = (count(&ws, "revisions"), count(&ws, "events"));
        let report = ws
            .synthesize(&Targets::Paths(vec!["src/util.py".into()]), None, &|_| {})
            .unwrap()
            .result;
        let run = &report.runs[0];
        assert_eq!(
            (run.status.as_str(), run.exit_code, run.message.as_deref()),
            (status, exit, Some(message)),
            "{settings}"
        );
        assert_eq!(run.version, None);
        assert_eq!((count(&ws, "revisions"), count(&ws, "events")), before);
        assert_eq!(count(&ws, "llm_runs"), 0);
    }
    // The hanging script's background sleep was killed with it (no orphan).
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for a reaper that is not us.
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        if matches!(state, None | Some('Z') | Some('X')) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "sleep {pid} outlived the run: {stat}"
        );
        std::thread::yield_now();
    }
}

#[test]
fn context_ranks_model_written_text_below_human_written_text_of_equal_relevance() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let code = "def refill(bucket):\n    return bucket\n";
    write(root, "gateway/limiter_a.py", code);
    write(root, "gateway/limiter_b.py", code);
    let mut ws = open(root, "command = \"true\"");
    let text = "Token bucket throttling: refill happens lazily on each request.";
    ws.remember("gateway/limiter_b.py", text, &by("llm:stub"))
        .unwrap();
    ws.remember("gateway/limiter_a.py", text, &by("human:ann"))
        .unwrap();
    let answer = ws
        .context(&loci_engine::context::ContextRequest {
            query: "token bucket throttling refill lazily".into(),
            open_files: Vec::new(),
            budget: None,
            floor: None,
        })
        .unwrap()
        .result;
    let memory: Vec<(&str, f64, &[String])> = answer
        .items
        .iter()
        .filter(|i| i.kind == loci_engine::context::HitKind::Memory)
        .map(|i| (i.id.as_str(), i.relevance, i.signals.as_slice()))
        .collect();
    let ids: Vec<&str> = memory.iter().map(|m| m.0).collect();
    assert_eq!(
        ids,
        ["gateway/limiter_a.py", "gateway/limiter_b.py"],
        "{memory:?}"
    );
    // The same text: the model's page, written first, even ranked a little ahead by the
    // search (relevance decays by rank); the rule puts the human's first.
    assert!(memory[1].1 >= memory[0].1, "{memory:?}");
    let model_signal = |signals: &[String]| {
        signals
            .iter()
            .filter(|s| s.starts_with("written by a model"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(model_signal(memory[0].2), Vec::<String>::new());
    assert_eq!(model_signal(memory[1].2), ["written by a model -4.0"]);
}

/// Each sync and each lint store how many pages are behind the code (and a sync the `HEAD`
/// it saw), without git reads for the count; a `context` answer carries it as a note,
/// saying what to run; a synthesis run that writes pages lowers it.
#[test]
fn the_count_of_pages_behind_the_code_is_stored_by_sync_and_lint_and_noted_by_context() {
    let dir = repository();
    let root = dir.path();
    let mut ws = open(root, &command("answer.sh", ""));
    let question = loci_engine::context::ContextRequest {
        query: "how does login check the password".into(),
        open_files: Vec::new(),
        budget: None,
        floor: None,
    };
    assert_eq!(ws.pages_behind_recorded().unwrap(), None);
    ws.remember(
        "src/auth.py",
        "`login()` checks the password with `check()`.",
        &by("human:ann"),
    )
    .unwrap();
    ws.sync(None).unwrap();
    let head = ws.store().meta(loci_engine::map::SYNCED_HEAD_META).unwrap();
    assert_eq!(head.as_deref().map(str::len), Some(40));
    // The folder rolls up its first file page.
    assert_eq!(ws.pages_behind_recorded().unwrap(), Some(1));
    write(
        root,
        "src/auth.py",
        &AUTH.replace(
            "    return check(user, password)",
            "    return check(user, password) and user",
        ),
    );
    git(root, &["commit", "-q", "-am", "login"]);
    ws.scan(&|_| {}).unwrap();
    ws.lint().unwrap();
    assert_eq!(ws.count_pages_behind().unwrap(), 2);
    assert_eq!(ws.pages_behind_recorded().unwrap(), Some(2));
    let notes = ws.context(&question).unwrap().capability.notes;
    assert!(
        notes.contains(&"2 pages behind the code — run `loci synthesize --pending` (MCP tool `synthesize`) to redraft them; `loci sync` lists them".to_string()),
        "{notes:?}"
    );
    ws.synthesize(
        &loci_engine::memory::synthesis::Targets::Paths(vec!["src/auth.py".into()]),
        None,
        &|_| {},
    )
    .unwrap();
    // The page is redrafted; the folder still rolls it up.
    assert_eq!(ws.pages_behind_recorded().unwrap(), Some(1));
    let notes = ws.context(&question).unwrap().capability.notes;
    assert!(
        notes.contains(&"1 page behind the code — run `loci synthesize --pending` (MCP tool `synthesize`) to redraft it; `loci sync` lists it".to_string()),
        "{notes:?}"
    );
}

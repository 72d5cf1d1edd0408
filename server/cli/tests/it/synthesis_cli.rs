//! `loci synthesize` through the real binary: off until `[synthesis] command` is set (exit
//! 2 and how to set it, nothing written), the plan, a dry run's exact prompt, a run with a
//! fixture script as the model, and a failed run's exit 1.

use crate::mcp_support;

use std::path::Path;

use mcp_support::{run, write};

fn fixture(script: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/synthesis")
        .join(script)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "lib/money.py",
        "def money(x):\n    return round(x, 2)\n",
    );
    write(
        root,
        "lib/invoice.py",
        "from lib.money import money\n\n\ndef total(lines):\n    return money(sum(lines))\n",
    );
    let (status, _, err) = run(root, &["scan"]);
    assert!(status.success(), "{err}");
    dir
}

/// `[synthesis]` with `fixtures/synthesis/answer.sh` as the model, labelled `stub`.
fn configure_the_stub(root: &Path) {
    configure(
        root,
        &format!(
            "command = \"sh {}\"\nmodel = \"stub\"",
            fixture("answer.sh")
        ),
    );
}

fn configure(root: &Path, settings: &str) {
    write(
        root,
        ".loci/config.toml",
        &format!("[synthesis]\n{settings}\n"),
    );
}

#[test]
fn unconfigured_every_synthesis_command_says_how_to_configure_it_and_exits_2() {
    let dir = repository();
    let root = dir.path();
    for args in [
        &["synthesize", "--plan"][..],
        &["synthesize", "--pending", "--dry-run"],
        &["synthesize", "lib/money.py"],
    ] {
        let (status, out, err) = run(root, args);
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(out, "");
        assert!(
            err.starts_with("loci: ")
                && err.contains("invalid configuration: page synthesis is off: no `[synthesis] command` is set, and loci calls no model on its own")
                && err.contains("[synthesis]\ncommand = \"claude -p\"\nmodel = \"claude-sonnet\""),
            "{err}"
        );
    }
    let (_, out, _) = run(root, &["history", "lib/money.py"]);
    assert_eq!(out, "", "nothing was written");
}

#[test]
fn the_plan_a_dry_run_and_a_run_through_the_binary() {
    let dir = repository();
    let root = dir.path();
    configure_the_stub(root);
    let (status, out, err) = run(root, &["synthesize", "--plan"]);
    assert!(status.success(), "{err}");
    assert_eq!(
        out,
        "missing   lib/money.py  fan-in 1\n\
         missing   lib/invoice.py  fan-in 0\n\
         2 pages; one run writes at most 20 ([synthesis] max_pages): `loci synthesize --pending`\n"
    );
    let (status, out, err) = run(root, &["synthesize", "lib/money.py", "--dry-run"]);
    assert!(status.success(), "{err}");
    assert!(
        out.starts_with("===== prompt for lib/money.py (requested, ≈")
            || out.starts_with("===== prompt for lib/money.py (missing, ≈"),
        "{out}"
    );
    assert!(out.contains("## Outline of `lib/money.py` (1 symbols, 2 lines)\n\n- function `money` (line 1): def money(x):\n"), "{out}");
    assert!(
        out.ends_with("=====\n") && out.contains("===== 1 prompt, ≈"),
        "{out}"
    );
    let (status, out, err) = run(root, &["synthesize", "--pending"]);
    assert!(status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("wrote lib/money.py v1 by llm:stub ("),
        "{out}"
    );
    assert!(
        lines[1].starts_with("wrote lib/invoice.py v1 by llm:stub ("),
        "{out}"
    );
    assert_eq!(lines[2], "2 pages of 2 written by `sh`");
    // Each page's command may run for minutes: the run says which page it is on (a line
    // each on stderr when that is not a terminal).
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("synthesize: "))
            .collect::<Vec<_>>(),
        [
            "synthesize: page 1 of 2: lib/money.py",
            "synthesize: page 2 of 2: lib/invoice.py"
        ],
        "{err}"
    );
    let (_, out, _) = run(root, &["show", "lib/money.py"]);
    assert!(out.contains("Drafted from the outline: `money()`"), "{out}");
}

/// After the code changes under written pages, `loci sync` says which pages are behind
/// it and how to write them: the plan's stale pages and roll-ups.
#[test]
fn sync_lists_the_pages_the_changes_put_behind_the_code() {
    let dir = repository();
    let root = dir.path();
    configure_the_stub(root);
    let (status, _, err) = run(root, &["synthesize", "--pending"]);
    assert!(status.success(), "{err}");
    write(
        root,
        "lib/money.py",
        "def money(x):\n    return round(x, 3)\n",
    );
    let (status, out, err) = run(root, &["sync"]);
    assert!(status.success(), "{err}");
    let behind: Vec<&str> = out.lines().skip_while(|l| !l.contains("behind")).collect();
    assert_eq!(
        behind,
        [
            "2 pages behind the code (`loci synthesize --plan` lists them, `--pending` writes them):",
            "  stale  lib/money.py: lib/money.py, money()",
            "  rollup lib: lib/invoice.py, lib/money.py",
        ],
        "{out}"
    );
    let (_, out, _) = run(root, &["sync", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let subjects: Vec<&str> = v["result"]["pages_behind"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["lib/money.py", "lib"]);
}

#[test]
fn a_run_that_writes_nothing_exits_1_and_says_why() {
    let dir = repository();
    let root = dir.path();
    configure(
        root,
        &format!("command = \"sh {}\"\nmodel = \"stub\"", fixture("fail.sh")),
    );
    let (status, out, err) = run(root, &["synthesize", "lib/money.py"]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(
        out,
        "failed lib/money.py: exit 1: model unavailable; nothing written\n0 pages of 1 written by `sh`\n"
    );
    let (_, out, _) = run(root, &["history", "lib/money.py"]);
    assert_eq!(out, "");
}

/// An agent runs the plan over MCP (the official Python SDK as the client) and hears a
/// `notifications/progress` per page, in order, before the answer: each page's command
/// may run for minutes.
#[test]
fn an_agent_drafts_pages_over_mcp_and_hears_progress_per_page() {
    let dir = repository();
    let root = dir.path();
    configure_the_stub(root);
    let script = r#"
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

async def main():
    heard = []
    async def progress(done, total, message):
        heard.append([done, total, message])
    server = StdioServerParameters(command=sys.argv[1], args=["mcp"], cwd=sys.argv[2])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("synthesize", {}, progress_callback=progress)
            text = "".join(c.text for c in r.content if c.type == "text")
            print(json.dumps({"heard": heard, "text": text}))

asyncio.run(main())
"#;
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            script,
            mcp_support::loci(),
            &root.display().to_string(),
        ])
        .output()
        .expect("run python3 (the MCP SDK: `pip install mcp`, as .ci/run does)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("the client's JSON");
    assert_eq!(
        v["heard"],
        serde_json::json!([
            [0.0, 2.0, "writing the page of lib/money.py"],
            [1.0, 2.0, "writing the page of lib/invoice.py"]
        ])
    );
    let text = v["text"].as_str().unwrap();
    assert!(
        text.starts_with("wrote lib/money.py v1 by llm:stub (")
            && text.contains("\nwrote lib/invoice.py v1 by llm:stub (")
            && text.ends_with("2 pages of 2 written by `sh`\n"),
        "{text}"
    );
}

/// Runs `git ARGS` in `root` with `path` as `PATH` (no global or system configuration, a
/// fixed identity); (stdout, stderr), failing unless git succeeds.
fn git(root: &Path, path: &str, args: &[&str]) -> (String, String) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=Ann", "-c", "user.email=ann@example.com"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(root)
        .env("PATH", path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("LOCI_DB")
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `PATH` with `git`, the shell's tools and, when `with_loci`, the binary under test.
fn path_with(with_loci: bool, bin: &Path) -> String {
    let git = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let git = Path::new(String::from_utf8_lossy(&git.stdout).trim()).to_path_buf();
    std::fs::create_dir_all(bin).unwrap();
    let link = bin.join("git");
    if !link.exists() {
        std::os::unix::fs::symlink(&git, &link).unwrap();
    }
    let loci = Path::new(mcp_support::loci()).parent().unwrap();
    if with_loci {
        format!("{}:{}:/usr/bin:/bin", bin.display(), loci.display())
    } else {
        format!("{}:/usr/bin:/bin", bin.display())
    }
}

/// A git repository of `repository()` with its first commit, a page about `lib/money.py`
/// and a sync: one page behind the code (the folder `lib` rolls up its new file page).
fn committed_repository(path: &str) -> tempfile::TempDir {
    let dir = repository();
    let root = dir.path();
    write(root, ".gitignore", ".loci/\n");
    git(root, path, &["init", "-q", "-b", "main"]);
    git(root, path, &["add", "."]);
    git(root, path, &["commit", "-q", "-m", "money"]);
    let (status, _, err) = run(
        root,
        &[
            "remember",
            "lib/money.py",
            "--text",
            "`money()` rounds to cents.",
        ],
    );
    assert!(status.success(), "{err}");
    let (status, _, err) = run(root, &["sync", "--quiet"]);
    assert!(status.success(), "{err}");
    dir
}

/// The stderr note of `loci context QUERY`.
fn context_notes(root: &Path) -> Vec<String> {
    let (status, _, err) = run(root, &["context", "how is money rounded"]);
    assert!(status.success(), "{err}");
    err.lines()
        .filter(|l| l.contains("behind the code"))
        .map(str::to_string)
        .collect()
}

/// Without an editor: `loci init --git-hook` adds a block to the post-commit, post-merge,
/// post-checkout and post-rewrite hooks that runs `loci sync --quiet`, keeping a hook
/// already there (and skipping one that is not a shell script); a real `git commit` then
/// syncs, so `context` says the pages behind the code at once. A commit where `loci` is not
/// on `PATH` still succeeds, silently; `--remove-git-hook` puts the hooks back as they
/// were.
#[test]
fn a_git_hook_syncs_after_each_commit_and_never_fails_git() {
    let bin = tempfile::tempdir().unwrap();
    let with_loci = path_with(true, bin.path());
    let dir = committed_repository(&with_loci);
    let root = dir.path();
    let hooks = root.join(".git/hooks");
    let mine = "#!/bin/sh\necho mine >> hook.log\nexit 0\n";
    write(&hooks, "post-commit", mine);
    write(
        &hooks,
        "post-merge",
        "#!/usr/bin/env python3\nprint('merged')\n",
    );
    assert_eq!(
        context_notes(root),
        [
            "note: 1 page behind the code — `loci sync` lists it (MCP tool `sync`); update it, or set `[synthesis] command` and run `loci synthesize --pending`"
        ]
    );

    let (status, out, err) = run(root, &["init", "--git-hook"]);
    assert!(status.success(), "{err}");
    let hooks_dir = hooks.canonicalize().unwrap();
    let listed: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("post-commit"))
        .collect();
    assert_eq!(
        listed,
        [
            format!("added     {}/post-commit", hooks_dir.display()),
            format!(
                "skipped   {}/post-merge: a `python3` script, not a shell script: add `loci sync --quiet` to it yourself",
                hooks_dir.display()
            ),
            format!("created   {}/post-checkout", hooks_dir.display()),
            format!("created   {}/post-rewrite", hooks_dir.display()),
        ],
        "{out}"
    );
    let block = loci_engine_block("post-commit");
    assert_eq!(
        std::fs::read_to_string(hooks.join("post-commit")).unwrap(),
        format!("#!/bin/sh\n{block}echo mine >> hook.log\nexit 0\n")
    );
    let (status, out, _) = run(root, &["init", "--git-hook"]);
    assert!(status.success());
    assert!(
        out.contains(&format!("unchanged {}/post-commit\n", hooks_dir.display())),
        "{out}"
    );

    // A commit in a terminal: the hook syncs, and the change shows at once.
    write(
        root,
        "lib/money.py",
        "def money(x):\n    return round(x, 3)\n",
    );
    let (_, err) = git(root, &with_loci, &["commit", "-q", "-am", "three places"]);
    assert_eq!(err, "");
    assert_eq!(
        std::fs::read_to_string(root.join("hook.log")).unwrap(),
        "mine\n"
    );
    assert_eq!(
        context_notes(root),
        [
            "note: 2 pages behind the code — `loci sync` lists them (MCP tool `sync`); update them, or set `[synthesis] command` and run `loci synthesize --pending`"
        ]
    );

    // Without loci on PATH the commit goes through, and nothing is said.
    let without = path_with(false, bin.path());
    write(root, "lib/tax.py", "def tax(x):\n    return x\n");
    git(root, &without, &["add", "lib/tax.py"]);
    let (_, err) = git(root, &without, &["commit", "-q", "-m", "tax"]);
    assert_eq!(err, "");

    let (status, out, err) = run(root, &["init", "--remove-git-hook"]);
    assert!(status.success(), "{err}");
    assert!(
        out.contains(&format!("removed   {}/post-commit\n", hooks_dir.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "deleted   {}/post-checkout\n",
            hooks_dir.display()
        )),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("post-commit")).unwrap(),
        mine
    );
    assert!(!hooks.join("post-checkout").exists());
}

/// The block `loci init --git-hook` writes into `hook` for a workspace at the
/// repository's root.
fn loci_engine_block(hook: &str) -> String {
    let cond = if hook == "post-checkout" {
        " && [ \"$3\" != 0 ]"
    } else {
        ""
    };
    format!(
        "# >>> loci sync: added by `loci init --git-hook`, removed by `loci init --remove-git-hook`\n\
         if command -v loci >/dev/null 2>&1 && [ -d ./.loci ]{cond}; then\n  loci -C . sync --quiet </dev/null >/dev/null 2>&1 || :\nfi\n\
         # <<< loci sync\n"
    )
}

/// For agents: after a commit put pages behind the code, an answer over MCP (the official
/// Python SDK as the client) says how many and what to run.
#[test]
fn an_agent_hears_how_many_pages_are_behind_the_code_in_its_answers() {
    let bin = tempfile::tempdir().unwrap();
    let path = path_with(true, bin.path());
    let dir = committed_repository(&path);
    let root = dir.path();
    configure_the_stub(root);
    write(
        root,
        "lib/money.py",
        "def money(x):\n    return round(x, 3)\n",
    );
    git(root, &path, &["commit", "-q", "-am", "three places"]);
    let (status, _, err) = run(root, &["sync", "--quiet"]);
    assert!(status.success(), "{err}");
    let script = r#"
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["mcp"], cwd=sys.argv[2])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            began = await session.call_tool("session_begin", {"task": "round money"})
            began_notes = (began.structured_content or {}).get("capability", {}).get("notes", [])
            r = await session.call_tool("context", {"query": "how is money rounded"})
            text = "".join(c.text for c in r.content if c.type == "text")
            notes = (r.structured_content or {}).get("capability", {}).get("notes", [])
            print(json.dumps({"text": text, "notes": notes, "began": began_notes}))

asyncio.run(main())
"#;
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            script,
            mcp_support::loci(),
            &root.display().to_string(),
        ])
        .output()
        .expect("run python3 (the MCP SDK: `pip install mcp`, as .ci/run does)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("the client's JSON");
    let note = "2 pages behind the code — run `loci synthesize --pending` (MCP tool `synthesize`) to redraft them; `loci sync` lists them";
    let text = v["text"].as_str().unwrap();
    assert!(text.contains(&format!("\nnote: {note}\n")), "{text}");
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(note)),
        "{}",
        v["notes"]
    );
    // An agent starting its task hears it first.
    assert!(
        v["began"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(note)),
        "{}",
        v["began"]
    );
}

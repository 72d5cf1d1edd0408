//! `loci synthesize` through the real binary: off until `[synthesis] command` is set (exit
//! 2 and how to set it, nothing written), the plan, a dry run's exact prompt, a run with a
//! fixture script as the model, and a failed run's exit 1.

mod mcp_support;

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

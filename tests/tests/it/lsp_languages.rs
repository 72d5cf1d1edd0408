//! Every language loci maps reaches the live overlay whatever an editor calls it (issue
//! 32/33): over a scanned copy of `fixtures/polyglot`, a document of each language gets
//! the same symbols under every file extension of the registry (`Spec::extensions`) and,
//! with no extension (an untitled buffer, an extensionless script), under every editor's
//! `languageId` (`loci_lsp::languages`); a memory about a function of each language goes
//! stale when the function's body is edited in the buffer.

use crate::support;

use std::path::Path;

use expect_test::expect;
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
            name.clone()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_extension_and_every_editor_language_id_gets_the_overlay() {
    let (_dir, root, mut client, files) = polyglot().await;
    let mut opened = 0;
    for language in Language::ALL {
        // The language's first fixture file that defines something.
        let mut first = None;
        for file in files
            .iter()
            .filter(|f| Language::from_path(f) == Some(language))
        {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let u = uri(&root.join(file));
            client
                .open(&u, editor_names(language).vscode[0], 1, &text)
                .await;
            let symbols = outline(&client.symbols(&u).await);
            if !symbols.is_empty() {
                first = Some((file.clone(), text, symbols));
                break;
            }
        }
        let Some((file, text, expected)) = first else {
            panic!("{language:?}: no fixture file with symbols");
        };

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

/// Where an edit in `text[from..to]` changes a body's tokens (not only its layout or
/// comments), and what to insert there: before the first numeric literal (`7`), after a
/// string's opening quote (`x`), else at the end of the first called name (`x`: `trim(`
/// becomes `trimx(`).
fn literal_in(text: &str, from: usize, to: usize) -> Option<(usize, &'static str)> {
    let bytes = text.as_bytes();
    let to = to.min(bytes.len());
    let word = |i: usize| i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    (from..to)
        .find_map(|i| match bytes[i] {
            b'0'..=b'9' if !word(i) => Some((i, "7")),
            b'"' => Some((i + 1, "x")),
            _ => None,
        })
        // Not the definition's own name (`from` is just after it on a one-line function).
        .or_else(|| {
            (from + 1..to)
                .find(|&i| bytes[i] == b'(' && word(i))
                .map(|i| (i, "x"))
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

/// The definitions of a documentSymbol answer, depth first.
fn definitions(symbols: &Value, out: &mut Vec<Value>) {
    for s in symbols.as_array().into_iter().flatten() {
        out.push(s.clone());
        definitions(&s["children"], out);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_language_shows_stale_memory_as_you_type() {
    let (_dir, root, mut client, files) = polyglot().await;
    let mut stale = Vec::new();
    for language in Language::ALL {
        // The first function of the language's fixtures (else definition) with a literal
        // in its body whose name, as a claim, resolves to it.
        let mut found = None;
        'files: for file in files
            .iter()
            .filter(|f| Language::from_path(f) == Some(language))
        {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let u = uri(&root.join(file));
            let mut candidates = Vec::new();
            definitions(&client.symbols(&u).await, &mut candidates);
            // Functions and methods first (Terraform has none: its blocks), and of those,
            // the ones of several lines: their body is below their signature.
            let one_line = |s: &Value| s["range"]["start"]["line"] == s["range"]["end"]["line"];
            let function = |s: &Value| s["kind"] == json!(12) || s["kind"] == json!(6);
            candidates.sort_by_key(|s| (!function(s), one_line(s)));
            for symbol in candidates {
                let name = symbol["name"].as_str().unwrap().to_string();
                // After the name, from the line after its line when there is one.
                let name_line = symbol["selectionRange"]["start"]["line"].as_u64().unwrap();
                let body_start = if one_line(&symbol) {
                    offset(&text, &symbol["selectionRange"]["end"])
                } else {
                    offset(&text, &json!({ "line": name_line + 1, "character": 0 }))
                };
                let body_end = offset(&text, &symbol["range"]["end"]);
                let Some((at, insert)) = literal_in(&text, body_start, body_end) else {
                    continue;
                };
                // Below the name's line the edit is in the body; on a one-line function
                // (all of Scala's fixture) where the signature ends is the grammar's
                // (Kotlin's `fun f() = x` keeps the body in it, Scala's does not).
                let parts: &[&str] = if one_line(&symbol) {
                    &["body", "signature"]
                } else {
                    &["body"]
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
                    // This definition: in this file, its last name segment.
                    .filter(|key| {
                        key.strip_prefix(&format!("{file}#"))
                            .and_then(|k| k.split('@').next())
                            .is_some_and(|q| q.rsplit('.').next() == Some(name.as_str()))
                    })
                    .map(str::to_string)
                else {
                    continue;
                };
                let version = markdown
                    .split_once(" v")
                    .and_then(|(_, v)| v.split(' ').next())
                    .unwrap()
                    .to_string();
                found = Some((file.clone(), text, u, name, key, version, at, insert, parts));
                break 'files;
            }
        }
        let Some((file, text, u, name, key, version, at, insert, parts)) = found else {
            panic!(
                "{language:?}: no definition with a literal in its body whose name resolves to it"
            );
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
        let part = parts
            .iter()
            .find(|part| {
                messages
                    == [format!(
                        "memory `{file}` v{version} claim `{name}()` is stale: {part} of {key} changed since it was written"
                    )]
            })
            .unwrap_or_else(|| {
                panic!("{language:?}: not one stale memory of {key} ({parts:?}): {published:#}")
            });
        stale.push(format!("{language:?}: {part} of {key}"));
    }
    // What went stale in each language, and whether as a body or a signature change.
    expect![[r#"
        Rust: body of rust/src/lib.rs#open_default@function
        Python: signature of python/app/__init__.py#__all__@constant
        JavaScript: body of svelte/src/lib/format.js#formatPrice@function
        TypeScript: body of vue/src/format.ts#formatPrice@function
        Tsx: body of web/src/App.tsx#App@function
        Go: body of go/inventory/item.go#Item.Valid@method
        Java: body of java/com/acme/App.java#App.main@method
        C: body of c/list.c#list_push@function
        Cpp: body of cpp/src/main.cpp#main@function
        CSharp: body of csharp/App/Program.cs#Acme.App.Program.Main@method
        Ruby: body of ruby/lib/shop/cart.rb#Shop.Cart.total@method
        Php: body of php/src/Controllers/UserController.php#Controller@interface
        Kotlin: body of kotlin/src/com/acme/shop/Cart.kt#Cart.add@method
        Swift: body of swift/Inventory.swift#availability@function
        Scala: body of scala/Orders.scala#Order.invoice@method
        Lua: body of lua/shop/cart.lua#Cart.new@method
        Bash: body of bash/deploy.sh#upload@function
        Elixir: body of elixir/lib/shop/cart.ex#Shop.Cart.add@function
        Haskell: signature of haskell/src/Shop/Price.hs#priceOf@function
        Zig: body of zig/cart.zig#Cart.init@method
        Dart: body of dart/lib/shop.dart#Cart.add@method
        OCaml: body of ocaml/cart.ml#total@function
        Julia: body of julia/src/Shop.jl#Shop.total@function
        R: body of r/analysis.R#summarise_sales@function
        Erlang: signature of erlang/src/shop.hrl#CURRENCY@macro
        Hcl: body of hcl/main.tf#region@constant
        Solidity: body of solidity/Ownable.sol#Ownable.onlyOwner@method
        ObjC: body of objc/Cart.m#CartLimit@function
        Proto: body of proto/shop/v1/cart.proto#Line@class
        Vue: body of vue/src/components/CartView.vue#checkout@function
        Svelte: body of svelte/src/lib/Cart.svelte#add@function"#]]
    .assert_eq(&stale.join("\n"));
    client.shutdown().await;
}

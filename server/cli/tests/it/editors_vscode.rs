//! The VS Code extension's manifest against the server (style.md rule 11, one source of
//! truth for settings): every setting `loci.NAME` (no dot) is the server's
//! `initializationOptions.NAME` with the same type and default, every user-facing field of
//! `loci_lsp::InitializationOptions` has a setting, the docs' settings table matches the
//! manifest, the extension activates on exactly the languages loci parses plus markdown
//! (and selects their files by extension too), and docs/languages.md's table of editor
//! names is the server's (`loci_lsp::languages`).

use crate::editors_common;

use std::collections::BTreeSet;

use editors_common::{assert_attached, read};
use loci_core::Language;
use loci_lsp::InitializationOptions;
use serde_json::{Map, Value, json};

/// Fields of `InitializationOptions` that are for tests and benchmarks, not for users.
/// `showResults` is set by the extension itself (false: it shows answers itself), not by a
/// user's setting.
const INTERNAL: &[&str] = &["analyzedNotifications", "debugCommands", "showResults"];

fn manifest() -> Value {
    serde_json::from_str(&read("editors/vscode/package.json")).expect("package.json is JSON")
}

fn properties(manifest: &Value) -> &Map<String, Value> {
    manifest["contributes"]["configuration"]["properties"]
        .as_object()
        .expect("contributes.configuration.properties")
}

/// `loci.NAME` with no further dot: a server setting.
fn server_key(setting: &str) -> Option<&str> {
    setting
        .strip_prefix("loci.")
        .filter(|k| !k.is_empty() && !k.contains('.'))
}

/// A value of the schema's type that differs from `default`, to prove the server accepts
/// the type (not just the default).
fn other_value(schema: &Value, default: &Value) -> Value {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        other => panic!("unexpected type {other}"),
    };
    if types.contains(&"boolean") {
        json!(!default.as_bool().expect("a boolean default"))
    } else if types.contains(&"integer") {
        json!(default.as_u64().unwrap_or(0) + 7)
    } else if let Some(values) = schema["enum"].as_array() {
        values
            .iter()
            .find(|v| *v != default)
            .cloned()
            .expect("an enum of more than one value")
    } else {
        panic!("no sample for types {types:?}")
    }
}

#[test]
fn vscode_server_settings_match_initialization_options() {
    let manifest = manifest();
    let defaults = serde_json::to_value(InitializationOptions::default()).unwrap();
    let defaults = defaults.as_object().unwrap();
    let mut covered = BTreeSet::new();
    for (setting, schema) in properties(&manifest) {
        let Some(key) = server_key(setting) else {
            assert!(
                setting.starts_with("loci.server.") || setting.starts_with("loci.trace."),
                "{setting}: an extension-only setting lives under loci.server.* or loci.trace.*"
            );
            continue;
        };
        let server_default = defaults
            .get(key)
            .unwrap_or_else(|| panic!("{setting}: the server has no initializationOptions.{key}"));
        assert_eq!(
            &schema["default"], server_default,
            "{setting}: VS Code's default differs from the server's"
        );
        for value in [
            schema["default"].clone(),
            other_value(schema, server_default),
        ] {
            let parsed: Result<InitializationOptions, _> =
                serde_json::from_value(json!({ key: value }));
            assert!(
                parsed.is_ok(),
                "{setting} = {value}: the server refuses it: {parsed:?}"
            );
        }
        let description = schema["markdownDescription"].as_str().unwrap_or_default();
        assert!(
            description.contains(&format!("`initializationOptions.{key}`")),
            "{setting}: its description names the server setting"
        );
        covered.insert(key.to_string());
    }
    let expected: BTreeSet<String> = defaults
        .keys()
        .filter(|k| !INTERNAL.contains(&k.as_str()))
        .cloned()
        .collect();
    assert_eq!(
        covered, expected,
        "every user-facing server option has a VS Code setting"
    );
    // `loci.maxFiles` says it overrides `scan.max_files` of .loci/config.toml: that exists.
    let config = serde_json::to_value(loci_engine::Config::default()).unwrap();
    assert!(config["scan"]["max_files"].is_u64());
}

#[test]
fn vscode_settings_table_in_docs_matches_the_manifest() {
    let manifest = manifest();
    let doc = read("docs/editors/vscode.md");
    let mut rows: Vec<(String, String)> = doc
        .lines()
        .filter(|l| l.starts_with("| `loci."))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                cells[1].trim_matches('`').to_string(),
                cells[2].trim_matches('`').to_string(),
            )
        })
        .collect();
    let mut expected: Vec<(String, String)> = properties(&manifest)
        .iter()
        .map(|(k, v)| {
            let default = match &v["default"] {
                Value::String(s) => format!("\"{s}\""),
                other => other.to_string(),
            };
            (k.clone(), default)
        })
        .collect();
    rows.sort();
    expected.sort();
    assert_eq!(
        rows, expected,
        "docs/editors/vscode.md's settings table (setting, default)"
    );
}

#[test]
fn vscode_activates_on_the_parsed_languages_plus_markdown() {
    let manifest = manifest();
    let on_language: Vec<String> = manifest["activationEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str()?.strip_prefix("onLanguage:").map(str::to_string))
        .collect();
    assert_attached(
        "package.json's onLanguage activation events",
        "vscode",
        &on_language,
    );
    // The document selector comes from src/languages.ts: the same list.
    let source = read("editors/vscode/src/languages.ts");
    assert_attached(
        "editors/vscode/src/languages.ts LANGUAGES",
        "vscode",
        &ts_list(&source, "LANGUAGES"),
    );
}

#[test]
fn vscode_selects_every_parsed_extension() {
    // Without an extension for its language, VS Code calls a `.kt` file `plaintext`: the
    // selector also takes files by extension, every extension loci parses.
    let source = read("editors/vscode/src/languages.ts");
    let expected: Vec<String> = Language::ALL
        .into_iter()
        .flat_map(|l| l.spec().extensions.iter().map(|e| e.to_string()))
        .collect();
    assert_eq!(
        ts_list(&source, "EXTENSIONS"),
        expected,
        "editors/vscode/src/languages.ts EXTENSIONS: Spec::extensions of Language::ALL, in order"
    );
}

/// The quoted items of `export const NAME ... = [ ... ];` in a TypeScript source, one
/// per line.
fn ts_list(source: &str, name: &str) -> Vec<String> {
    let start = source
        .find(&format!("export const {name}"))
        .unwrap_or_else(|| panic!("no `export const {name}`"));
    source[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("];"))
        .filter_map(|l| {
            l.trim()
                .strip_prefix('\'')?
                .strip_suffix("',")
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn fault_server_path_only_worked_as_a_machine_setting() {
    // code-server's extension host does not inherit the server's PATH, and a `machine`
    // setting cannot be set per user or workspace.
    let manifest = manifest();
    assert_eq!(
        properties(&manifest)["loci.server.path"]["scope"],
        json!("machine-overridable")
    );
}

#[test]
fn editor_names_table_in_docs_matches_the_server() {
    // docs/languages.md "Editors": one row per language (its `Language::name`), its names
    // in VS Code, Neovim and Helix (`loci_lsp::languages`), then markdown.
    let doc = read("docs/languages.md");
    let section = &doc[doc.find("## Editors").expect("an Editors section")..];
    let rows: Vec<String> = section
        .lines()
        .skip_while(|l| !l.starts_with("| language |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(str::to_string)
        .collect();
    let mut expected: Vec<String> = Language::ALL
        .into_iter()
        .map(|language| {
            let names = loci_lsp::languages::editor_names(language);
            format!(
                "| {} | {} | {} | {} |",
                language.name(),
                names.vscode.join(", "),
                names.neovim.join(", "),
                names.helix.join(", ")
            )
        })
        .collect();
    expected.push("| markdown | markdown | markdown | markdown |".into());
    assert_eq!(rows, expected, "docs/languages.md's table of editor names");
}

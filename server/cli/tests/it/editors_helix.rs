//! `editors/helix/languages.toml`: `loci` is an additional language server for exactly
//! the languages loci parses (Helix's names) plus markdown, after each language's own
//! servers, with a quiet `RUST_LOG`; the doc page carries the same snippet.

use crate::editors_common;

use std::collections::BTreeSet;

use editors_common::{assert_attached, read};

fn snippet() -> toml::Table {
    let text = read("editors/helix/languages.toml");
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("editors/helix/languages.toml does not parse: {e}"))
}

#[test]
fn helix_server_definition() {
    let table = snippet();
    let server = &table["language-server"]["loci"];
    assert_eq!(server["command"].as_str(), Some("loci"));
    assert_eq!(
        server["args"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>()),
        Some(vec!["lsp"])
    );
    assert_eq!(server["environment"]["RUST_LOG"].as_str(), Some("warn"));
    let keys: Vec<&String> = table["language-server"]
        .as_table()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["loci"], "the snippet defines only loci's server");
}

#[test]
fn helix_languages_are_exactly_the_parsed_ones_plus_markdown() {
    let table = snippet();
    let languages = table["language"].as_array().expect("[[language]] entries");
    let mut names = Vec::new();
    for language in languages {
        let name = language["name"]
            .as_str()
            .expect("a language name")
            .to_string();
        // A server is a name, or a table with its name and the features it is used for
        // (Helix's defaults for Erlang).
        let servers: Vec<&str> = language["language-servers"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no language-servers"))
            .iter()
            .map(|v| {
                v.as_str()
                    .or_else(|| v.get("name")?.as_str())
                    .unwrap_or_else(|| panic!("{name}: a server with no name: {v}"))
            })
            .collect();
        assert_eq!(
            servers.last(),
            Some(&"loci"),
            "{name}: loci comes last: {servers:?}"
        );
        // Helix's default servers come before loci (none for `matlab`).
        assert!(
            servers.len() >= 2 || name == "matlab",
            "{name}: keep Helix's default servers before loci: {servers:?}"
        );
        let unique: BTreeSet<&&str> = servers.iter().collect();
        assert_eq!(
            unique.len(),
            servers.len(),
            "{name}: a server listed twice: {servers:?}"
        );
        let keys: BTreeSet<&str> = language
            .as_table()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from(["name", "language-servers"]),
            "{name}: the snippet only adds servers, it changes nothing else"
        );
        names.push(name);
    }
    assert_attached("editors/helix/languages.toml", "helix", &names);
}

#[test]
fn helix_doc_carries_the_snippet() {
    let doc = read("docs/editors/helix.md");
    let snippet = read("editors/helix/languages.toml");
    assert!(
        doc.contains(&format!("```toml\n{snippet}```")),
        "docs/editors/helix.md must include editors/helix/languages.toml verbatim in a ```toml block"
    );
    for command in ["loci.context", "loci.why", "loci.impact"] {
        assert!(
            doc.contains(&format!(":lsp-workspace-command {command}")),
            "docs/editors/helix.md shows :lsp-workspace-command {command}"
        );
    }
}

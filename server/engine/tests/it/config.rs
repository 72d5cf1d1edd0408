//! docs/configuration.md lists every setting with its default: the TOML block there parses
//! into `Config`, equals `Config::default()`, and has exactly the keys `Config` has.

use std::collections::BTreeSet;

use loci_engine::Config;

fn keys(table: &toml::Table) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (section, value) in table {
        match value.as_table() {
            Some(t) => out.extend(t.keys().map(|k| format!("{section}.{k}"))),
            None => {
                out.insert(section.clone());
            }
        }
    }
    out
}

#[test]
fn the_configuration_doc_lists_every_setting_with_its_default() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/configuration.md"
    ))
    .unwrap();
    let block = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/configuration.md has a ```toml block");
    let documented: Config = toml::from_str(block).expect("the block is a valid config");
    assert_eq!(documented, Config::default(), "defaults in the doc differ");
    let in_doc = keys(&toml::from_str(block).unwrap());
    let in_code = keys(&toml::Table::try_from(Config::default()).unwrap());
    assert_eq!(in_doc, in_code, "keys in docs/configuration.md vs Config");
}

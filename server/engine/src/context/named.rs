//! The definitions a question names (`Store::write`, `shlex.quote`), found in the map.

/// The symbols a name in a question names (`wanted`, with `.` for `::`): those whose
/// name, qualified name or key it is; else, for a path, the symbols its last segments name
/// in a file whose path has each leading segment as a folder or file name
/// ([`path_names`]: `regex.escape` is the crate-level `escape` of
/// `regex-1.13.2/src/lib.rs`, `email.message.Message.get` the method of
/// `email/message.py`: the map qualifies a name by its enclosing definitions, not by crate
/// or module; `list.append` is not `ScrolledList.append` of `idlelib/scrolledlist.py`). Top-level
/// definitions (qualified by nothing) come before members and nested items of the same
/// name: `serde_json::Value` is the enum, not an associated `type Value`. At most
/// [`NAMED_SYMBOLS`], chosen from up to [`NAMED_SYMBOL_ROWS`] rows.
pub(super) fn named_symbols(
    conn: &loci_store::rusqlite::Connection,
    wanted: &str,
) -> loci_store::Result<Vec<loci_store::map::SymbolHit>> {
    let chosen = |mut found: Vec<loci_store::map::SymbolHit>| {
        // Stable: by path and line within each part.
        found.sort_by_key(|s| s.qualified_name != s.name);
        found.truncate(NAMED_SYMBOLS);
        found
    };
    let found = loci_store::map::find_symbols(conn, wanted, NAMED_SYMBOL_ROWS)?;
    if !found.is_empty() {
        return Ok(chosen(found));
    }
    let segments: Vec<&str> = wanted.split('.').filter(|s| !s.is_empty()).collect();
    for k in 1..segments.len() {
        let dropped: Vec<String> = segments[..k].iter().map(|s| folded(s)).collect();
        let under: Vec<_> =
            loci_store::map::find_symbols(conn, &segments[k..].join("."), NAMED_SYMBOL_ROWS)?
                .into_iter()
                .filter(|s| {
                    let names = path_names(&s.path);
                    dropped.iter().all(|d| names.contains(d))
                })
                .collect();
        if !under.is_empty() {
            return Ok(chosen(under));
        }
    }
    Ok(Vec::new())
}

/// A name folded for comparing with paths: lower case, `-` as `_` (`regex-syntax` is the
/// crate `regex_syntax`).
fn folded(name: &str) -> String {
    name.to_lowercase().replace('-', "_")
}

/// The names a path gives its module, [`folded`]: each folder's, without a version suffix
/// (`regex-1.13.2` → `regex`), and the file's without its extension (`message.py` →
/// `message`).
fn path_names(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path.split('/').collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let versioned = part
                .match_indices('-')
                .find(|(at, _)| part[at + 1..].starts_with(|c: char| c.is_ascii_digit()));
            let part = versioned.map_or(*part, |(at, _)| &part[..at]);
            let part = match part.rsplit_once('.') {
                Some((stem, _)) if i == last && !stem.is_empty() => stem,
                _ => part,
            };
            folded(part)
        })
        .collect()
}

/// The most symbols one name in a question stands for.
pub(super) const NAMED_SYMBOLS: usize = 20;

/// The most files a bare name (no `.` or `::`) may be defined in and still name
/// definitions: more, and it names a kind of definition (`__init__`, `new`, `name`).
pub(super) const NAMED_FILES: usize = 3;

/// The rows [`named_symbols`] reads per name (an indexed lookup, by path): enough that the
/// top-level definition and the file its leading segments name are among them (the
/// `Value` enum of `serde_json` was row 31 of 37 `Value`s in six crates).
pub(super) const NAMED_SYMBOL_ROWS: u32 = 500;

/// The last segment of a name as written (`Parser::parse()` → `parse`).
pub(super) fn last_segment(name: &str) -> &str {
    let name = name.trim_end_matches("()");
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

/// Names in backticks, joined: `` `a()`, `b` ``.
pub(super) fn ticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::path_names;

    #[test]
    fn a_path_names_its_folders_and_its_file_without_versions_or_extensions() {
        assert_eq!(
            path_names("regex-1.13.2/src/lib.rs"),
            ["regex", "src", "lib"]
        );
        assert_eq!(
            path_names("regex-syntax/src/hir/mod.rs"),
            ["regex_syntax", "src", "hir", "mod"]
        );
        assert_eq!(
            path_names("idlelib/scrolledlist.py"),
            ["idlelib", "scrolledlist"]
        );
        assert_eq!(path_names(".github/x"), [".github", "x"]);
    }
}

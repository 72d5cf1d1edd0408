//! The definitions a question names (`Store::write`, `shlex.quote`), found in the map.

/// The symbols a name in a question names (`wanted`, with `.` for `::`): those whose
/// name, qualified name or key it is; else, for a path, the symbols its last segments name
/// in a file whose path holds each leading segment (`regex.escape` is the crate-level
/// `escape` of `regex-1.13.2/src/lib.rs`, `os.path.join` the `join` of `posixpath.py`: the
/// map qualifies a name by its enclosing definitions, not by crate or module). Top-level
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
    let folded = |s: &str| s.to_lowercase().replace('-', "_");
    for k in 1..segments.len() {
        let dropped: Vec<String> = segments[..k].iter().map(|s| folded(s)).collect();
        let under: Vec<_> =
            loci_store::map::find_symbols(conn, &segments[k..].join("."), NAMED_SYMBOL_ROWS)?
                .into_iter()
                .filter(|s| {
                    let path = folded(&s.path);
                    dropped.iter().all(|d| path.contains(d.as_str()))
                })
                .collect();
        if !under.is_empty() {
            return Ok(chosen(under));
        }
    }
    Ok(Vec::new())
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

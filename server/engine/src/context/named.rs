//! The definitions a question names (`Store::write`, `shlex.quote`), found in the map.

use std::collections::HashSet;

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
#[tracing::instrument(level = "debug", skip(conn))]
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

/// The definitions of a bare name `wanted` defined in many files whose path names a module
/// or folder another word of `query` is ([`path_names`]: "codecs StreamReader" →
/// `codecs.py#StreamReader`), when they are in at most [`NAMED_FILES`] files; else none.
pub(super) fn qualified_by_words(
    conn: &loci_store::rusqlite::Connection,
    wanted: &str,
    query: &str,
) -> loci_store::Result<Vec<loci_store::map::SymbolHit>> {
    let name = folded(wanted);
    let words: HashSet<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(folded)
        .filter(|w| w.len() > 1 && *w != name && !super::search::is_stopword(w))
        .collect();
    let found: Vec<_> = loci_store::map::find_symbols(conn, wanted, NAMED_SYMBOL_ROWS)?
        .into_iter()
        .filter(|s| path_names(&s.path).iter().any(|p| words.contains(p)))
        .collect();
    let files: HashSet<&str> = found.iter().map(|s| s.path.as_str()).collect();
    Ok(if files.len() <= NAMED_FILES {
        found
    } else {
        Vec::new()
    })
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

/// Whether a name of several segments (`typing.override`, `warnings.deprecated`) that
/// names nothing ([`named_symbols`] found none) names a member its module does not have:
/// the leading segments are one module file of the map (`typing.py`; a Rust module only
/// when written with `::`, as Rust spells a module's member: `time.busy` is a field), and
/// neither that file nor a file it imports defines the last segment, nor does the file
/// import it by name or import everything (`*`) from a module the map does not have
/// (`os.stat` comes from C through `from posix import *`), nor does code read it on that
/// module (`crypt.METHOD_BLOWFISH`, built at run time). A file name (`cmd.py`), a module
/// (`http.client`), a type's member (methods come from bases and traits the map may not
/// have) and an owner the map does not have (`os.path`, `core` of two crates) say nothing.
/// `written` is the name as the question writes it, `wanted` with `.` for `::`.
#[tracing::instrument(level = "debug", skip(conn))]
pub(super) fn member_missing(
    conn: &loci_store::rusqlite::Connection,
    written: &str,
    wanted: &str,
) -> loci_store::Result<bool> {
    let Some((owner, member)) = wanted.rsplit_once('.') else {
        return Ok(false);
    };
    // The one module file of a name, or none.
    let module = |name: &str| -> loci_store::Result<Option<String>> {
        let found: Vec<String> = loci_store::map::files_named(
            conn,
            &super::open::module_files(&name.replace('.', "/")),
            NAMED_SYMBOLS as u32,
        )?
        .into_iter()
        .filter(|p| loci_core::secondary::secondary_code(p).is_none())
        .collect();
        Ok(match found.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        })
    };
    if owner.is_empty()
        || member.is_empty()
        || loci_core::lang::file_language_name(wanted).is_some()
        || module(wanted)?.is_some()
        || loci_store::map::read_on_a_module(conn, member, Some(owner))?
    {
        return Ok(false);
    }
    let Some(file) = module(owner)? else {
        return Ok(false);
    };
    if loci_core::lang::file_language_name(&file) == Some("rust") && !written.contains("::") {
        return Ok(false);
    }
    for (from, names) in loci_store::map::file_imports(conn, &file)? {
        let star = names.iter().any(|n| n == "*");
        if names.iter().any(|n| n == member) || (star && module(&from)?.is_none()) {
            return Ok(false);
        }
    }
    let mut files = vec![file.clone()];
    for edge in loci_store::map::deps_from(conn, &file)? {
        if let Some(to) = edge.to
            && !files.contains(&to)
        {
            files.push(to);
        }
    }
    for f in &files {
        if loci_store::map::file_symbols(conn, f)?
            .iter()
            .any(|s| s.name == member)
        {
            return Ok(false);
        }
    }
    Ok(true)
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

//! Names the map could mean: near-miss candidates and their similarity, module qualifiers,
//! whether a qualifier names a type, and renames the scans saw.

use crate::Result;

/// How many distinct names one candidate query reads at most.
const CANDIDATES_PER_QUERY: u32 = 2048;

/// The names a suggestion for `name` is chosen among, each read through an index, so the
/// cost is bounded by [`CANDIDATES_PER_QUERY`] per query and not by the size of the map
/// (comparing every distinct name of 1.09 M symbols with every failing claim costs 40 s
/// per lint):
/// - the same folded name (`_split_netloc` for `_splitnetloc`, `HTTPServer` for
///   `HttpServer`; folded as [`loci_store::map::fold_name`]);
/// - the folded names sharing its first characters: the shortest prefix (0 to 4
///   characters, Jaro-Winkler's prefix) whose names fit in one query, else the
///   4-character one cut at the limit (a misspelling after the fourth character, or at
///   any place when few names share the first: `encod` / `encode`);
/// - the same with one slip in the first four characters (two neighbours swapped, one
///   dropped: `gettatr` / `getattr`), each range cut at a quarter of the limit;
/// - one word apart: its words less the first or the last (`total` for `legacy_total`),
///   and names holding its words with one more (`legacy_total`, `total_items` for
///   `total`, by the identifier terms of the full-text index).
///
/// What it misses: in a large map, a wrong or missing letter in the first four
/// characters of a name whose first characters many names share (`rypo` for `typo`).
pub(super) fn name_candidates(
    conn: &loci_store::rusqlite::Connection,
    name: &str,
) -> Result<Vec<String>> {
    use loci_store::map::{fold_name, names_folded_as, names_folded_with_prefix, names_with_words};
    let folded = fold_name(name);
    let mut out: Vec<String> = names_folded_as(conn, &folded, CANDIDATES_PER_QUERY)?;
    let chars: Vec<char> = folded.chars().collect();
    // Prefix 0 is every name: a map of few names offers them all, as before the index.
    for k in 0..=chars.len().min(4) {
        let prefix: String = chars[..k].iter().collect();
        let names = names_folded_with_prefix(conn, &prefix, CANDIDATES_PER_QUERY + 1)?;
        let fits = names.len() <= CANDIDATES_PER_QUERY as usize;
        if fits || k == chars.len().min(4) {
            out.extend(names);
            break;
        }
    }
    // A slip within the first four characters, where the ranges above look no further
    // when many names share the first ones (`__gettatr__` folds to `gettatr`, whose
    // `getattr` is not under `gett`): the prefix with two neighbours swapped or one
    // character dropped, each a smaller range.
    let head: Vec<char> = chars.iter().take(4).copied().collect();
    let mut slips: Vec<String> = Vec::new();
    for i in 0..head.len() {
        if i + 1 < head.len() {
            let mut swapped = head.clone();
            swapped.swap(i, i + 1);
            slips.push(swapped.into_iter().collect());
        }
        if head.len() > 2 {
            let mut dropped = head.clone();
            dropped.remove(i);
            slips.push(dropped.into_iter().collect());
        }
    }
    slips.sort();
    slips.dedup();
    for prefix in slips.iter().filter(|p| p.chars().ne(head.iter().copied())) {
        out.extend(names_folded_with_prefix(
            conn,
            prefix,
            CANDIDATES_PER_QUERY / 4,
        )?);
    }
    let words = crate::context::search::identifier_words(name);
    if words.len() > 1 {
        for fewer in [&words[1..], &words[..words.len() - 1]] {
            out.extend(names_folded_as(
                conn,
                &fewer.concat(),
                CANDIDATES_PER_QUERY,
            )?);
        }
    }
    out.extend(names_with_words(conn, &words, CANDIDATES_PER_QUERY)?);
    out.sort();
    out.dedup();
    Ok(out)
}

/// How alike a member written in a claim is to a member of the type or module it names,
/// 0 to 1: Jaro-Winkler, raised to 0.9 for one extra word around the same words
/// (`legacy_total` / `total`) and for one edit of a name of three or more characters
/// (Damerau–Levenshtein: `Span::nwe` / `new`, whose Jaro-Winkler is 0.56, the match
/// window of a short name being one char).
pub(super) fn member_similarity(name: &str, candidate: &str) -> f64 {
    let near = one_word_apart(name, candidate)
        || (name.chars().count() >= 3 && strsim::damerau_levenshtein(name, candidate) == 1);
    strsim::jaro_winkler(name, candidate).max(if near { 0.9 } else { 0.0 })
}

/// True when the identifier words of one are those of the other plus one word at either
/// end (`legacy_total` / `total`, `parse_config` / `parse_config_file`).
pub(super) fn one_word_apart(a: &str, b: &str) -> bool {
    words_one_apart(
        &crate::context::search::identifier_words(a),
        &crate::context::search::identifier_words(b),
    )
}

/// [`one_word_apart`] of two names' identifier words.
pub(super) fn words_one_apart(wa: &[String], wb: &[String]) -> bool {
    let (short, long) = if wa.len() <= wb.len() {
        (wa, wb)
    } else {
        (wb, wa)
    };
    !short.is_empty()
        && long.len() == short.len() + 1
        && (long[1..] == short[..] || long[..short.len()] == short[..])
        && short.concat().len() >= 4
}

/// The module qualifier `q` (dotted) of a top-level definition now in `path`: `q` when its
/// last segment still names the file or a folder holding it, else `q` with that segment
/// replaced by the file's module name (its stem, or its folder's name for an index file
/// such as `__init__.py` or `mod.rs`).
pub(super) fn module_qualifier(q: &str, path: &str) -> String {
    let last = q.rsplit('.').next().unwrap_or(q);
    if path
        .split('/')
        .any(|part| part.split('.').next() == Some(last))
    {
        return q.to_string();
    }
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let module = match stem {
        "__init__" | "mod" | "lib" | "index" => parts.next().unwrap_or(stem),
        _ => stem,
    };
    match q.rsplit_once('.') {
        Some((outer, _)) => format!("{outer}.{module}"),
        None => module.to_string(),
    }
}

/// Whether the last segment of `qualifier` names a type in the map (class, struct,
/// enum, union, trait, interface, module, type) — what a `Type.member()` claim is about.
pub(super) fn names_a_type(
    conn: &loci_store::rusqlite::Connection,
    qualifier: &str,
) -> Result<bool> {
    // The type-like kinds of `loci_core::SymbolKind`.
    const TYPE_KINDS: &[&str] = &[
        "class",
        "struct",
        "enum",
        "union",
        "trait",
        "interface",
        "module",
        "type",
    ];
    let scope = qualifier.rsplit('.').next().unwrap_or(qualifier);
    Ok(loci_store::map::find_symbols(conn, scope, 50)?
        .iter()
        .any(|s| s.name == scope && TYPE_KINDS.contains(&s.kind.as_str())))
}

/// Where the scans saw `path` renamed to, following later renames (`a` → `b` → `c`), when
/// the path it ends at is in the map.
/// Where the folder `path` went, from the last rename the scans saw of a file under it:
/// `a/x/f.py` → `b/x/f.py` says `a` → `b`, when `b` holds files of the map. A rename the
/// scan could not tell apart (another file of the same content moved in the same scan)
/// says nothing.
pub(super) fn scanned_folder_rename(
    conn: &loci_store::rusqlite::Connection,
    path: &str,
) -> Result<Option<String>> {
    let folder = path.trim_end_matches('/');
    if folder.is_empty() {
        return Ok(None);
    }
    let last = loci_store::audit::last_rename_under(conn, folder)?;
    let Some((old, new)) = last else {
        return Ok(None);
    };
    let inside = &old[folder.len()..];
    let Some(to) = new
        .strip_suffix(inside)
        .filter(|t| !t.is_empty() && *t != folder)
    else {
        return Ok(None);
    };
    let mapped = loci_store::map::folder_has_files(conn, to)?;
    Ok(mapped.then(|| to.to_string()))
}

pub(super) fn scanned_rename(
    conn: &loci_store::rusqlite::Connection,
    path: &str,
) -> Result<Option<String>> {
    let mut at = path.to_string();
    // A bound on the chain: renames back and forth must not loop.
    for _ in 0..16 {
        let Some(next) = loci_store::audit::renamed_to(conn, &at)? else {
            break;
        };
        at = next;
    }
    if at == path {
        return Ok(None);
    }
    let mapped = loci_store::map::file_exists(conn, &at)?;
    Ok(mapped.then_some(at))
}

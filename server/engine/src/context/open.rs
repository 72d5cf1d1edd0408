//! What is open in the editor, and the files a question names: their outlines, the
//! module points of what is near them, and the memory linked to them.

use std::collections::HashSet;

use loci_core::secondary::secondary_code;
use loci_store::memory as mem;

use super::score::{NEAR_MODULE_POINTS, OPEN_MODULE_POINTS};

/// Whether the repo-relative `path` is `prefix` or lies under the folder `prefix/` (the
/// `search --path` filter; `prefix` has no trailing `/`). `server/core2/x.rs` is not under
/// `server/core`: the filter is by folder, not by string prefix.
pub fn under_path(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

pub(super) fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// The zero-based line where `s` starts in its file as it is now, split into `lines`: its
/// stored line while the file is as the last scan read it (`as_scanned`), else the nearest
/// line whose trimmed text starts with its signature; `None` when no line does.
pub(super) fn current_start(
    s: &loci_store::map::SymbolHit,
    as_scanned: bool,
    lines: &[&str],
) -> Option<usize> {
    let stored = s.line as usize;
    if as_scanned {
        return (stored < lines.len().max(1)).then_some(stored);
    }
    let signature = s.signature.trim();
    (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with(signature))
        .min_by_key(|&i| i.abs_diff(stored))
}

/// Whether the revision has a claim resolved to an open file, a symbol in one, a path in
/// an open folder, a folder holding an open file or folder (the subject of `decide …
/// --subject logging`), or a symbol the question names or its file (`targets`): a
/// structural link between a
/// decisions or lessons page and the question.
pub(super) fn linked_to(
    conn: &loci_store::rusqlite::Connection,
    revision_id: i64,
    open: &[String],
    targets: &HashSet<String>,
) -> loci_store::Result<bool> {
    if open.is_empty() && targets.is_empty() {
        return Ok(false);
    }
    Ok(mem::claims_of(conn, revision_id)?.iter().any(|claim| {
        claim.resolved.as_deref().is_some_and(|r| {
            let file = r.split_once('#').map_or(r, |(p, _)| p);
            targets.contains(r)
                || open.iter().any(|o| match o.strip_suffix('/') {
                    Some(dir) => under_path(file, dir) || under_path(dir, file),
                    None => file == o || under_path(o, file),
                })
        })
    }))
}

/// Symbols of each open file that `context` takes as candidates (its main ones:
/// [`loci_store::map::file_main_symbols`], public definitions and the most referenced
/// first; in source order, `shutil.py` would serve `_WINDOWS` and `COPY_BUFSIZE`); they
/// score the open module's +50 as any item in the file does. A file of 2,000 symbols gives
/// 8, not 2,000.
pub(super) const OPEN_FILE_SYMBOLS: usize = 8;

/// Decisions and lessons about the open files that `context` scores, newest first.
pub(super) const OPEN_ENTRIES: usize = 50;

/// Open-file symbols taken over all open files (an editor may send every open tab).
pub(super) const OPEN_SYMBOLS_TOTAL: usize = 24;

/// Symbols an open file's outline lists (top-level ones), and files importing it.
pub(super) const OUTLINE_SYMBOLS: u32 = 30;
pub(super) const OUTLINE_IMPORTERS: usize = 10;

/// An open file's outline, as its FULL text and its DIGEST: how many symbols it has, its
/// top-level ones (signature and one-based line; `first` is what
/// [`loci_store::map::file_outline`] gave, without what must not be served), and the files
/// importing it (its dependents). The first [`OUTLINE_IMPORTERS`] are named.
pub(super) fn open_file_outline(
    conn: &loci_store::rusqlite::Connection,
    path: &str,
    total: u64,
    top_level: u64,
    first: &[loci_store::map::SymbolHit],
) -> loci_store::Result<(String, String)> {
    let importers = loci_store::map::importer_paths(conn, path)?;
    let top: Vec<&loci_store::map::SymbolHit> = first
        .iter()
        .filter(|s| !s.qualified_name.contains('.'))
        .collect();
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    let mut full = format!(
        "### {path} (open file: {total} symbol{}, {top_level} top-level)\n",
        plural(total)
    );
    for s in &top {
        full.push_str(&format!(
            "- `{}` — line {}\n",
            s.signature.trim(),
            s.line + 1
        ));
    }
    if top_level > top.len() as u64 {
        full.push_str(&format!(
            "- … {} more top-level\n",
            top_level - top.len() as u64
        ));
    }
    let named = |list: &[String]| {
        let mut out = list
            .iter()
            .take(OUTLINE_IMPORTERS)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if list.len() > OUTLINE_IMPORTERS {
            out.push_str(&format!(" and {} more", list.len() - OUTLINE_IMPORTERS));
        }
        out
    };
    let imported = if importers.is_empty() {
        "imported by no mapped file".to_string()
    } else {
        format!(
            "imported by {} file(s): {}",
            importers.len(),
            named(&importers)
        )
    };
    full.push_str(&format!(
        "{}{}\n",
        imported[..1].to_uppercase(),
        &imported[1..]
    ));
    let names: Vec<&str> = top.iter().take(5).map(|s| s.name.as_str()).collect();
    let digest = format!(
        "open file: {total} symbol{}{}; {imported}",
        plural(total),
        if names.is_empty() {
            String::new()
        } else {
            format!(
                " ({}{})",
                names.join(", "),
                if top_level > names.len() as u64 {
                    ", …"
                } else {
                    ""
                }
            )
        }
    );
    Ok((full, digest))
}

/// The files a module of each language is, by its bare name `NAME`.
const MODULE_FILES: &[&str] = &[
    "{}.py",
    "{}/__init__.py",
    "{}.rs",
    "{}/mod.rs",
    "{}.js",
    "{}.ts",
    "{}/index.js",
    "{}/index.ts",
    "{}.rb",
];

/// The files a module named `name` (`typing`, `collections/abc`) may be ([`MODULE_FILES`]).
pub(super) fn module_files(name: &str) -> Vec<String> {
    MODULE_FILES.iter().map(|f| f.replace("{}", name)).collect()
}

/// The module a question about dependents names by its bare name ("what depends on
/// fnmatch", "which modules import selectors", "the unicode module"): a word right after
/// one of the question's dependents cues (`a`, `an`, `the` skipped) or right before
/// `module`, `package` or `crate`, that names exactly one module file ([`MODULE_FILES`])
/// outside test, example and vendored code. A word qualifying a name (`shlex` in
/// `shlex.quote`, `task` in `task::spawn`) names that definition, not its module. The first
/// such word; `None` when none is.
pub(super) fn module_named_in(
    conn: &loci_store::rusqlite::Connection,
    query: &str,
) -> loci_store::Result<Option<String>> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let (mut words, mut qualifiers) = (Vec::new(), Vec::new());
    let mut start = None;
    for (at, c) in query.char_indices().chain([(query.len(), ' ')]) {
        match (is_word(c), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                words.push(query[from..at].to_lowercase());
                qualifiers.push(qualifies(&query[at..]));
                start = None;
            }
            _ => {}
        }
    }
    let is_article = |w: &str| matches!(w, "a" | "an" | "the");
    let named_here = |i: usize| {
        let before = words[..i]
            .iter()
            .rev()
            .find(|w| !is_article(w))
            .is_some_and(|w| super::retrieve::dependent_cue(w));
        let after = words
            .get(i + 1)
            .is_some_and(|w| matches!(w.as_str(), "module" | "package" | "crate"));
        before || after
    };
    for (i, word) in words.iter().enumerate() {
        if word.len() < 2
            || qualifiers[i]
            || is_article(word)
            || super::retrieve::dependent_cue(word)
            || !named_here(i)
        {
            continue;
        }
        let found = loci_store::map::files_named(conn, &module_files(word), 20)?;
        let mut main = found.into_iter().filter(|p| secondary_code(p).is_none());
        if let (Some(only), None) = (main.next(), main.next()) {
            return Ok(Some(only));
        }
    }
    Ok(None)
}

/// Whether the text after a word makes it a qualifier: `.` or `::` and a name that is not a
/// module file's extension (`quote` in `shlex.quote`, not `py` in `shlex.py`).
fn qualifies(rest: &str) -> bool {
    let Some(next) = rest.strip_prefix("::").or_else(|| rest.strip_prefix('.')) else {
        return false;
    };
    let name = &next[..next
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(next.len())];
    !name.is_empty()
        && !MODULE_FILES
            .iter()
            .any(|f| f.strip_prefix("{}.") == Some(name))
}

/// The mapped files a question names, in its order: each word that is a mapped path
/// (`server/store/src/lib.rs`, `Cargo.toml`: an indexed lookup), or the end of exactly one
/// mapped path, a path's last folders (`utils/cache.rs`) or a source or markdown file's
/// name (`number.rs`; `lib.rs`, which many have, names none unless another word of the
/// question names a folder of one: "heck's lib.rs"), as `loci impact` reads a
/// path. A file name is matched against every path, so only words with an
/// extension loci parses or records as markdown are tried that way (`os.path.join` and
/// `e.g.` are not). A dotted Python module name names the one file of that module
/// (`email.headerregistry`: `email/headerregistry.py`, or a package's `__init__.py`). Quotes,
/// backticks and trailing punctuation around a word are dropped.
pub(super) fn files_named_in(
    conn: &loci_store::rusqlite::Connection,
    query: &str,
) -> loci_store::Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    // The question's words as a folder would be named ("heck's" names `heck`).
    let folder_words: Vec<&str> = query
        .split_whitespace()
        .map(|word| {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            word.strip_suffix("'s").unwrap_or(word)
        })
        .collect();
    for word in query.split_whitespace() {
        let w = word
            .trim_matches(|c: char| {
                matches!(
                    c,
                    '`' | '"' | '\'' | '(' | ')' | ',' | ';' | ':' | '?' | '!'
                )
            })
            .trim_end_matches('.')
            .trim_start_matches("./");
        if let Some(module) = python_module_files(w)
            && let [only] = loci_store::map::files_named(conn, &module, 2)?.as_slice()
            && !out.contains(only)
        {
            out.push(only.clone());
            continue;
        }
        let Some((_, ext)) = w.rsplit_once('.') else {
            continue;
        };
        if w.is_empty() || ext.is_empty() || !ext.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let found: Vec<String> = if loci_store::map::file_exists(conn, w)? {
            vec![w.to_string()]
        } else if w.contains('/') || loci_core::lang::file_language_name(w).is_some() {
            loci_store::map::files_named(conn, &[w.to_string()], NAMESAKES)?
        } else {
            Vec::new()
        };
        // The one file of that name, or the one at that very path (`cmd.py` at the root,
        // beside `lib2to3/.../cmd.py`), or the one below a folder another word of the
        // question names ("heck's lib.rs": `heck/src/lib.rs`).
        let in_named_folder = |p: &&String| {
            let mut folders = p.rsplit('/').skip(1);
            folders.any(|f| {
                folder_words
                    .iter()
                    .any(|word| *word != w && word.eq_ignore_ascii_case(f))
            })
        };
        let named = match found.as_slice() {
            [only] => Some(only),
            several => several.iter().find(|p| p.as_str() == w).or_else(|| {
                let mut placed = several.iter().filter(in_named_folder);
                match (placed.next(), placed.next()) {
                    (Some(one), None) => Some(one),
                    _ => None,
                }
            }),
        };
        if let Some(f) = named
            && !out.contains(f)
        {
            out.push(f.clone());
        }
    }
    Ok(out)
}

/// The most files of one name read for a file a question names ([`files_named_in`]).
const NAMESAKES: u32 = 256;

/// The files a dotted Python module name (`email.headerregistry`, `concurrent.futures`)
/// may be: `email/headerregistry.py` or `email/headerregistry/__init__.py`. `None` for a
/// word of one part or with a part that is no identifier (`utf-8.txt`, `1.2`).
fn python_module_files(word: &str) -> Option<[String; 2]> {
    let parts: Vec<&str> = word.split('.').collect();
    if parts.len() < 2 || !parts.iter().all(|p| loci_core::terms::is_identifier(p)) {
        return None;
    }
    let path = parts.join("/");
    Some([format!("{path}.py"), format!("{path}/__init__.py")])
}

/// The open-module points of an item about `path` (a folder when `folder`): the best over
/// the open files of +50 for the same file or the file's own folder, +25 for a parent or
/// child folder or a sibling file; over the open folders (`dir/`), +50 for what is in one
/// and +25 for a parent folder.
pub(super) fn module_points(path: &str, folder: bool, open: &[String]) -> Option<(f64, String)> {
    let mut best: Option<(f64, String)> = None;
    for f in open {
        let f_dir = dir_of(f);
        let points = if let Some(dir) = f.strip_suffix('/') {
            // An open folder: what is in it is its module, its parents its parents.
            if path == dir || path.starts_with(f.as_str()) {
                Some((OPEN_MODULE_POINTS, format!("open module {dir}")))
            } else if folder && (path == "." || dir.starts_with(&format!("{path}/"))) {
                Some((NEAR_MODULE_POINTS, format!("parent of {dir}")))
            } else {
                None
            }
        } else if path == f || (folder && (path == f_dir || (path == "." && f_dir.is_empty()))) {
            Some((OPEN_MODULE_POINTS, format!("open module {f}")))
        } else if folder
            && (path == "."
                || f_dir.starts_with(&format!("{path}/"))
                || path.starts_with(&format!("{f_dir}/")))
        {
            Some((NEAR_MODULE_POINTS, format!("parent/child of {f}")))
        } else if !folder && dir_of(path) == f_dir {
            Some((NEAR_MODULE_POINTS, format!("sibling of {f}")))
        } else {
            None
        };
        if let Some(p) = points
            && best.as_ref().is_none_or(|b| p.0 > b.0)
        {
            best = Some(p);
        }
    }
    best
}

/// The open-module points of an item about `path` (a folder when `folder`) from the open
/// files the map lacks (`unmapped`: each with its folder when that folder is mapped and
/// not the root): +50 for that folder itself, +25 for a file in it; nothing for its
/// parents, children or anything else. A file the map lacks has no module of its own, so
/// only what its folder holds is near it (an unsaved new file needs what a file beside
/// it would); the root's page is not (`--open email/nosuch.py` must not serve `.` first).
pub(super) fn unmapped_points(
    path: &str,
    folder: bool,
    unmapped: &[(String, Option<String>)],
) -> Option<(f64, String)> {
    unmapped
        .iter()
        .filter_map(|(f, dir)| {
            let dir = dir.as_deref()?;
            if folder && path == dir {
                Some((
                    OPEN_MODULE_POINTS,
                    format!("folder of the open file {f} (not in the map)"),
                ))
            } else if !folder && dir_of(path) == dir {
                Some((
                    NEAR_MODULE_POINTS,
                    format!("beside the open file {f} (not in the map)"),
                ))
            } else {
                None
            }
        })
        .fold(None, |best: Option<(f64, String)>, p| match best {
            Some(b) if b.0 >= p.0 => Some(b),
            _ => Some(p),
        })
}

/// The words of a question that asks about the code at hand without naming a topic (with
/// the stop words of [`super::search::content_terms`]): "what should I know before I touch
/// this?", "anything to keep in mind when changing this file?", "how does this work?".
/// Sorted.
pub(super) const AT_HAND_WORDS: &[&str] = &[
    "anything",
    "before",
    "careful",
    "change",
    "changes",
    "changing",
    "code",
    "edit",
    "editing",
    "file",
    "important",
    "keep",
    "know",
    "mind",
    "modify",
    "modifying",
    "need",
    "read",
    "refactor",
    "refactoring",
    "something",
    "tell",
    "touch",
    "touching",
    "understand",
    "update",
    "updating",
    "watch",
    "work",
    "working",
    "works",
];

/// A score or floor in points as a reader takes it in: one decimal, or for magnitudes of
/// a million and more (any finite floor is allowed) scientific notation, so `--floor 1e308`
/// is not echoed as 309 digits.
pub(super) fn points(x: f64) -> String {
    if x.abs() < 1e6 {
        format!("{x:.1}")
    } else {
        format!("{x:.1e}")
    }
}

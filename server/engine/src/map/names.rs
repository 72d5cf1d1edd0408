//! A name as the user writes it, read as the map's symbols and modules: a qualified name in
//! any language's spelling (`Regex::new`, `a->b`, `urllib.parse.urlsplit`), a module path
//! as code imports it, a name re-exported by a package, and the names nearest one the map
//! lacks.

use loci_store::map::{self, SymbolHit};

use crate::{Envelope, Result, Workspace};

impl Workspace {
    /// The symbols `name` names (a name, a qualified name in the map's `.` form, or a key;
    /// see [`map::lookup_symbols`]), at most `limit`, and how many there are in all. A
    /// dotted name that names none is read as code spells it, a module path and then a
    /// name in that module: `urllib.parse.urlsplit` is `urlsplit` in `urllib/parse.py`,
    /// `logging.getLogger` is `getLogger` in `logging/__init__.py`, `a.b.C.m` the method
    /// `C.m` of `a/b.py` (the module may lie below any folder: `Lib/urllib/parse.py`); a
    /// module that defines no such name but re-exports it names the definition it imports
    /// (`unittest.TestCase`: [`Workspace::reexported_symbols`]). The name is read in
    /// the map's form first ([`qualified_form`]); a name invoked as a macro (`select!`,
    /// `rmcp::object!`) names only macros, and a `#[macro_export]` one is at its crate's
    /// root wherever its file is.
    pub(crate) fn lookup_as_written(
        &self,
        written: &str,
        limit: u32,
    ) -> Result<(Vec<SymbolHit>, u64)> {
        let name = qualified_form(written);
        if !written.trim_end().ends_with('!') || name.contains('#') {
            return self.lookup_qualified(&name, limit);
        }
        let mut macros: Vec<SymbolHit> = self
            .lookup_qualified(&name, u32::MAX)?
            .0
            .into_iter()
            .filter(|h| h.kind == "macro")
            .collect();
        if macros.is_empty()
            && let Some((crate_name, _)) = name.split_once('.')
        {
            // The crate's own macros: in a folder its package names (`rmcp/`,
            // `rmcp-0.8.1/`), or anywhere when the map is that crate (`crate::`, or the
            // root `Cargo.toml` names it); no other crate's namesakes.
            let named: Vec<SymbolHit> =
                map::lookup_symbols(self.store.conn(), last_segment(&name), u32::MAX)?
                    .into_iter()
                    .filter(|h| h.kind == "macro")
                    .collect();
            let in_crate =
                |h: &SymbolHit| h.path.split('/').any(|p| is_crate_folder(p, crate_name));
            macros = if named.iter().any(in_crate) {
                named.into_iter().filter(|h| in_crate(h)).collect()
            } else if crate_name == "crate" || self.root_crate().as_deref() == Some(crate_name) {
                named
            } else {
                Vec::new()
            };
        }
        let total = macros.len() as u64;
        macros.truncate(limit as usize);
        Ok((macros, total))
    }

    /// The name code gives the crate of the root `Cargo.toml` (`None` without one): the
    /// crate a map of its own repository is.
    fn root_crate(&self) -> Option<String> {
        super::manifests::rust_library(&self.root, "Cargo.toml").map(|(name, _)| name)
    }

    /// [`Workspace::lookup_as_written`] of a name in the map's form.
    fn lookup_qualified(&self, name: &str, limit: u32) -> Result<(Vec<SymbolHit>, u64)> {
        let conn = self.store.conn();
        let hits = map::lookup_symbols(conn, name, limit)?;
        if !hits.is_empty() {
            let total = if (hits.len() as u64) < u64::from(limit) {
                hits.len() as u64
            } else {
                map::count_lookup_symbols(conn, name)?
            };
            return Ok((hits, total));
        }
        if name.contains('#') || !name.contains('.') {
            return Ok((hits, 0));
        }
        // `crate::byte_str::ByteStr` is written from inside a crate: its module path is
        // what follows, and `crate::Row` names what the crate's root holds or re-exports,
        // read as the bare name.
        let name = name.strip_prefix("crate.").unwrap_or(name);
        if !name.contains('.') {
            return self.lookup_qualified(name, limit);
        }
        let mut found = Vec::new();
        let segments: Vec<&str> = name.split('.').collect();
        // The longest module path first: `a.b.c` is `c` in `a/b` before `b.c` in `a`.
        for split in (1..segments.len()).rev() {
            let module = segments[..split].join("/");
            let rest = segments[split..].join(".");
            let last = segments[split - 1];
            if last.is_empty() || rest.is_empty() {
                continue;
            }
            let modules: Vec<String> = paths_of_module(conn, last)?
                .into_iter()
                .filter(|path| module_file(path, &module))
                .collect();
            for path in &modules {
                found.extend(map::symbols_in_file_named(conn, path, &rest)?);
            }
            // `tokio::task::yield_now` is the function `task/mod.rs` re-exports as well as
            // the `mod yield_now;` it declares.
            if found.iter().all(|h| h.kind == "module") {
                for path in &modules {
                    found.extend(self.reexported_symbols(path, &rest, REEXPORT_HOPS)?);
                }
            }
            if !found.is_empty() {
                break;
            }
        }
        let total = found.len() as u64;
        found.truncate(limit as usize);
        Ok((found, total))
    }

    /// The symbols named `name` that the module file `path` re-exports: defined in a file
    /// one of its imports of `name`'s first segment (or a glob) resolved to, or re-exported
    /// by that file in turn, at most `hops` files further (`unittest.TestCase` is
    /// `unittest/case.py`'s, through `from .case import TestCase` in
    /// `unittest/__init__.py`; `tokio::spawn` through `pub use task::spawn;` twice).
    fn reexported_symbols(&self, path: &str, name: &str, hops: u32) -> Result<Vec<SymbolHit>> {
        let conn = self.store.conn();
        let first = name.split('.').next().unwrap_or(name);
        let modules: Vec<String> = map::file_imports(conn, path)?
            .into_iter()
            .filter(|(_, names)| names.iter().any(|n| n == first || n == "*"))
            .map(|(module, _)| module)
            .collect();
        let mut found = Vec::new();
        let edges = map::deps_from(conn, path)?;
        let targets = edges
            .iter()
            .filter(|e| modules.contains(&e.module))
            .filter_map(|e| e.to.as_deref());
        for to in targets {
            let mut here = map::symbols_in_file_named(conn, to, name)?;
            if here.is_empty() && hops > 1 {
                here = self.reexported_symbols(to, name, hops - 1)?;
            }
            found.extend(here);
        }
        found.sort_by(|a, b| a.key.cmp(&b.key));
        found.dedup_by(|a, b| a.key == b.key);
        Ok(found)
    }

    /// The mapped file `path` names ([`Workspace::map_path`]), else the module it names as
    /// code imports it (`json.decoder`; `json`, a package's folder, is `json/__init__.py`:
    /// [`Workspace::module_named`]); the path's error when it names neither.
    pub(crate) fn file_or_module(&self, path: &str) -> Result<String> {
        match self.map_path(path) {
            Err(e @ crate::EngineError::InvalidArgument { .. }) => Err(e),
            Err(e) => match self.modules_named(path)?.as_slice() {
                [only] => Ok(only.clone()),
                [] => Err(e),
                several => Err(crate::EngineError::NotFound(format!(
                    "`{path}` names several modules: {}{}; give the path of one",
                    several[..several.len().min(5)].join(", "),
                    if several.len() > 5 { ", …" } else { "" }
                ))),
            },
            found => found,
        }
    }

    /// The mapped source file that is the module `name` names as code imports it
    /// (`reprlib`, `json.decoder`, `nix::unistd`: [`module_file`]): the one at that very
    /// path (`types.py` before `wsgiref/types.py`, `nix/src/unistd.rs`), else the only one;
    /// `None` when no file is, or several are and none at that path.
    pub(crate) fn module_named(&self, name: &str) -> Result<Option<String>> {
        Ok(match self.modules_named(name)?.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        })
    }

    /// The mapped source files that may be the module `name` names: those at that very
    /// path if any, else every one whose path ends in it, by path.
    fn modules_named(&self, name: &str) -> Result<Vec<String>> {
        let dotted = qualified_form(name);
        if !dotted.split('.').all(loci_core::terms::is_identifier) {
            return Ok(Vec::new());
        }
        let module = dotted.replace('.', "/");
        let last = module.rsplit('/').next().unwrap_or(&module);
        let (mut at_path, mut ending) = (Vec::new(), Vec::new());
        for path in paths_of_module(self.store.conn(), last)? {
            if loci_core::Language::from_path(&path).is_none() {
                continue;
            }
            let stems = module_stems(&path);
            if stems.contains(&module) {
                at_path.push(path);
            } else if stems.iter().any(|stem| ends_in_module(stem, &module)) {
                ending.push(path);
            }
        }
        let mut found = if at_path.is_empty() { ending } else { at_path };
        found.sort();
        Ok(found)
    }

    /// For an answer that found no symbol named `name`: why, as a note (no such symbol,
    /// and the names nearest it: "did you mean"), and whether the map is behind the disk
    /// ([`Workspace::note_changes_behind_nothing`]).
    pub(crate) fn note_unknown_symbol<T>(&self, env: &mut Envelope<T>, name: &str) -> Result<()> {
        let near = self.names_near(name)?;
        let shown: String = name.chars().take(80).collect();
        env.capability.notes.push(if near.is_empty() {
            format!("no symbol named `{shown}` in the map (`search` finds words in code and docs)")
        } else {
            format!(
                "no symbol named `{shown}` in the map; did you mean {}?",
                near.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
        self.note_changes_behind_nothing(env)
    }

    /// Up to five names of the map nearest the last segment of `name`: the same name
    /// folded (case and `_` ignored) first, then the names sharing its first three folded
    /// characters, by edit distance (Damerau-Levenshtein, normalized, at least 0.6). Reads
    /// one range of the folded-name index (`symbols_by_folded_name`), at most 2,000 names.
    fn names_near(&self, name: &str) -> Result<Vec<String>> {
        const NEAR: usize = 5;
        let conn = self.store.conn();
        let folded = map::fold_name(last_segment(name));
        if folded.is_empty() {
            return Ok(Vec::new());
        }
        let mut near = map::names_folded_as(conn, &folded, NEAR as u32)?;
        let prefix: String = folded.chars().take(3).collect();
        let mut ranked: Vec<(f64, String)> = map::names_folded_with_prefix(conn, &prefix, 2_000)?
            .into_iter()
            .filter(|n| !near.contains(n))
            .map(|n| {
                let score = strsim::normalized_damerau_levenshtein(&folded, &map::fold_name(&n));
                (score, n)
            })
            .filter(|(score, _)| *score >= 0.6)
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        near.extend(ranked.into_iter().map(|(_, n)| n));
        near.truncate(NEAR);
        Ok(near)
    }
}

/// A qualified name as the map writes it: `::` (Rust, C++, PHP, Ruby) and `->` (PHP, C++)
/// are written `.`, the separator of `qualified_name` (`Regex::new` → `Regex.new`). A
/// symbol key (`path#Regex.new@method`) is left as given, but for a leading `./` on its
/// path, which is dropped (`./email/message.py#Message.get@method` names the symbol of
/// `email/message.py#Message.get@method`).
pub(crate) fn qualified_form(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains('#') {
        let mut key = name;
        while let Some(rest) = key.strip_prefix("./") {
            key = rest;
        }
        return std::borrow::Cow::Borrowed(key);
    }
    // A macro is named as invoked: `select!` is `select`.
    let name = name.strip_suffix('!').unwrap_or(name);
    // A qualified path names its type's item: `<HeaderMap as Clone>::clone` is
    // `HeaderMap::clone`, `<itoa::Buffer>::new` is `itoa::Buffer::new`.
    if let Some((inside, item)) = name.strip_prefix('<').and_then(|n| n.split_once(">::"))
        && !inside.contains('<')
    {
        let ty = inside.split_once(" as ").map_or(inside, |(ty, _)| ty);
        let path = format!("{}::{item}", ty.trim());
        return std::borrow::Cow::Owned(qualified_form(&path).into_owned());
    }
    if !(name.contains("::") || name.contains("->")) {
        return std::borrow::Cow::Borrowed(name);
    }
    // A Rust path's generic arguments name no definition: `Slab<T>::insert` is `Slab.insert`.
    let mut depth = 0usize;
    let plain: String = name
        .chars()
        .filter(|&c| {
            match c {
                '<' => depth += 1,
                '>' if depth > 0 => {
                    depth -= 1;
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect();
    let dotted = plain.replace("::", ".").replace("->", ".");
    std::borrow::Cow::Owned(dotted.trim_start_matches('.').to_string())
}

/// Whether a folder is the package of the Rust crate `name`: named as the crate (with `-`
/// for `_`), or so followed by a version (`rmcp-0.8.1`, as the cargo registry holds it).
fn is_crate_folder(folder: &str, name: &str) -> bool {
    let folder = folder.replace('-', "_");
    folder == name
        || folder
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
}

/// `a.b.foo` / `A::foo` → `foo`.
pub(crate) fn last_segment(name: &str) -> &str {
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

/// Files read as candidates for a module path ([`Workspace::lookup_as_written`]).
const MODULE_CANDIDATES: u32 = 10_000;

/// How many files a module path's name is followed through re-exports
/// ([`Workspace::lookup_as_written`]): `tokio::spawn` is `pub use`d twice.
const REEXPORT_HOPS: u32 = 3;

/// The mapped paths that may be a module whose last segment is `last`: those containing it
/// or, for a Rust crate's name, the package's folder as Cargo spells it
/// (`crossbeam_channel` is the crate of `crossbeam-channel/`).
fn paths_of_module(conn: &loci_store::rusqlite::Connection, last: &str) -> Result<Vec<String>> {
    let mut paths = map::paths_containing(conn, last, MODULE_CANDIDATES)?;
    if last.contains('_') {
        paths.extend(map::paths_containing(
            conn,
            &last.replace('_', "-"),
            MODULE_CANDIDATES,
        )?);
        paths.sort();
        paths.dedup();
    }
    Ok(paths)
}

/// Whether the mapped file `path` is the module `module` (`/`-separated, `urllib/parse`):
/// `module.EXT` or `module/__init__.EXT`, `module/index.EXT`, `module/mod.rs`, at the root
/// or below a folder.
fn module_file(path: &str, module: &str) -> bool {
    module_stems(path)
        .iter()
        .any(|stem| stem == module || ends_in_module(stem, module))
}

/// Whether the module path `stem` ends in the module `module` below a folder
/// (`Lib/urllib/parse` in `urllib/parse`).
fn ends_in_module(stem: &str, module: &str) -> bool {
    stem.strip_suffix(module)
        .is_some_and(|before| before.ends_with('/'))
}

/// The module paths the mapped file `path` is, from the repository's root: its path
/// without the extension (and without a package's `/__init__`, `/index` or `/mod`), and
/// for a Rust file below a crate's `src/` the crate's folder then the module
/// (`nix/src/unistd.rs`: `nix/unistd`; `slab/src/lib.rs`: `slab`; `same-file/src/unix.rs`:
/// `same_file/unix` too).
fn module_stems(path: &str) -> Vec<String> {
    let Some((stem, ext)) = path.rsplit_once('.') else {
        return Vec::new();
    };
    let mut stems = vec![stem.to_string()];
    if let Some(package) = ["/__init__", "/index", "/mod"]
        .iter()
        .find_map(|s| stem.strip_suffix(s))
    {
        stems.insert(0, package.to_string());
    }
    let stem = stems[0].clone();
    if ext == "rs"
        && let Some((krate, module)) = stem.split_once("/src/")
    {
        // A crate is named with `_` where its package's folder has `-`.
        let (folders, package) = krate.rsplit_once('/').unwrap_or(("", krate));
        let mut names = vec![package.to_string()];
        if package.contains('-') {
            names.push(package.replace('-', "_"));
        }
        for name in names {
            let krate = if folders.is_empty() {
                name
            } else {
                format!("{folders}/{name}")
            };
            stems.push(if module == "lib" {
                krate
            } else {
                format!("{krate}/{module}")
            });
        }
    }
    stems
}

#[cfg(test)]
mod tests {
    use super::{module_file, qualified_form};

    #[test]
    fn a_module_path_names_its_file_or_package() {
        assert!(module_file("urllib/parse.py", "urllib/parse"));
        assert!(module_file("Lib/urllib/parse.py", "urllib/parse"));
        assert!(module_file("logging/__init__.py", "logging"));
        assert!(module_file("src/util/index.ts", "util"));
        assert!(!module_file("myurllib/parse.py", "urllib/parse"));
        assert!(!module_file("urllib/parser.py", "urllib/parse"));
        assert!(module_file("nix/src/unistd.rs", "nix/unistd"));
        assert!(module_file("vendor/nix/src/sys/mod.rs", "nix/sys"));
        assert!(module_file("slab/src/lib.rs", "slab"));
        assert!(!module_file("nix/src/unistd.py", "nix/unistd"));
        assert!(module_file(
            "crossbeam-channel/src/lib.rs",
            "crossbeam_channel"
        ));
        assert!(module_file(
            "vendor/same-file/src/unix.rs",
            "same_file/unix"
        ));
        assert!(module_file(
            "crossbeam-channel/src/lib.rs",
            "crossbeam-channel"
        ));
    }

    #[test]
    fn a_rust_path_drops_its_generic_arguments_and_leading_colons() {
        assert_eq!(qualified_form("Slab<T>::insert"), "Slab.insert");
        assert_eq!(qualified_form("HashMap<K, Vec<V>>::get"), "HashMap.get");
        assert_eq!(qualified_form("::new"), "new");
        assert_eq!(qualified_form("a->b"), "a.b");
    }

    #[test]
    fn a_qualified_path_names_its_type_and_a_macro_is_named_without_its_bang() {
        assert_eq!(
            qualified_form("<HeaderMap as Clone>::clone"),
            "HeaderMap.clone"
        );
        assert_eq!(qualified_form("<itoa::Buffer>::new"), "itoa.Buffer.new");
        assert_eq!(qualified_form("select!"), "select");
        assert_eq!(
            qualified_form("crossbeam_channel::select!"),
            "crossbeam_channel.select"
        );
    }
}

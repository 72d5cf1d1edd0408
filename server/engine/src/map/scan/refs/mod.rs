//! Reference resolution: the references of a scan's changed files (held packed until
//! every definition is known, or written unresolved by a bulk load and read back),
//! resolved to definitions with a provenance and a confidence, and the stored references
//! a change of names or imports may now resolve differently.

use std::collections::{BTreeSet, HashMap, HashSet};

use loci_core::imports::PathIndex;
use loci_core::{Import, Language, Receiver, RefKind, Span};
use loci_store::map::{self, RefRow};
use loci_store::rusqlite::params;
use loci_store::{Context, Store};
use std::num::NonZeroI64;

use super::imports::{read_keyed_each, split_names};
use crate::Result;

/// The references of a scan's changed files, held until every definition is known and
/// they can be resolved. A first scan holds every reference of the repository here (345,000
/// for the standard library, millions for a large monorepo), so each is packed into 32
/// bytes and its name is interned: as `RefRow`s with owned names they took 140 bytes each,
/// the largest part of a first scan's memory.
#[derive(Default)]
pub(super) struct PendingRefs {
    /// (file id, range of `refs`), in write order.
    files: Vec<(i64, std::ops::Range<usize>)>,
    refs: Vec<PendingRef>,
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
    /// (index into `refs`, target symbol id), ascending: the references their own file
    /// resolves ([`loci_core::Reference::target`]; few, so not a field of every ref).
    local: Vec<(u32, i64)>,
    /// (index into `refs`, index into `names` of its receiver's name), ascending
    /// ([`loci_core::Reference::receiver_name`]: only refs on another object have one).
    receivers: Vec<(u32, u32)>,
}

/// One unresolved reference: see [`PendingRefs`].
pub(super) struct PendingRef {
    /// Index into [`PendingRefs::names`].
    name: u32,
    kind: loci_core::RefKind,
    receiver: Receiver,
    line: u32,
    column: u32,
    start_byte: u32,
    end_byte: u32,
    /// Row id of the innermost enclosing definition (row ids start at 1).
    enclosing: Option<NonZeroI64>,
}

impl PendingRefs {
    /// Adds a file's references (none for a file that was not analysed); `symbol_ids` are
    /// the row ids of its symbols, in order.
    pub(super) fn push(&mut self, file_id: i64, refs: &[loci_core::Reference], symbol_ids: &[i64]) {
        let start = self.refs.len();
        for r in refs {
            let name = self.intern(&r.name);
            if let Some(&id) = r.target.and_then(|i| symbol_ids.get(i as usize)) {
                self.local.push((self.refs.len() as u32, id));
            }
            if let Some(receiver) = &r.receiver_name {
                let id = self.intern(receiver);
                self.receivers.push((self.refs.len() as u32, id));
            }
            self.refs.push(PendingRef {
                name,
                kind: r.kind,
                receiver: r.receiver,
                line: r.span.line,
                column: r.span.column,
                start_byte: r.span.start,
                end_byte: r.span.end,
                enclosing: r
                    .enclosing
                    .and_then(|i| symbol_ids.get(i as usize))
                    .and_then(|&id| NonZeroI64::new(id)),
            });
        }
        self.files.push((file_id, start..self.refs.len()));
    }

    /// The index of `name` in [`PendingRefs::names`], added if new.
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// A file's references as rows, resolved with `resolver`.
    fn rows<'a>(
        &'a self,
        file_id: i64,
        range: std::ops::Range<usize>,
        resolver: &'a Resolver,
    ) -> impl Iterator<Item = RefRow<'a>> + 'a {
        let start = range.start;
        self.refs[range].iter().enumerate().map(move |(k, r)| {
            let name = &*self.names[r.name as usize];
            let enclosing_id = r.enclosing.map(NonZeroI64::get);
            let local = self
                .local
                .binary_search_by_key(&((start + k) as u32), |&(i, _)| i)
                .ok()
                .map(|i| self.local[i].1);
            let receiver_name = self
                .receivers
                .binary_search_by_key(&((start + k) as u32), |&(i, _)| i)
                .ok()
                .map(|i| &*self.names[self.receivers[i].1 as usize]);
            // A member of a type the file defines, resolved by the file: as sure as a
            // same-file `self.f()` (see `Resolver::resolve`).
            let (target_id, provenance, confidence) = match local {
                Some(id) => (Some(id), "derived", SAME_FILE_CONFIDENCE),
                None => resolver.resolve(
                    file_id,
                    name,
                    r.kind,
                    enclosing_id,
                    r.receiver,
                    receiver_name,
                ),
            };
            RefRow {
                name,
                kind: r.kind.as_str(),
                receiver: r.receiver.as_str(),
                receiver_name,
                line: r.line,
                column: r.column,
                start_byte: r.start_byte,
                end_byte: r.end_byte,
                enclosing_id,
                target_id,
                provenance,
                confidence,
            }
        })
    }
}

/// A file's references as rows before resolution: those its own file resolves
/// ([`loci_core::Reference::target`]) resolved as [`PendingRefs::rows`] resolves them, the
/// others unresolved as [`Resolver::resolve`] leaves a name it cannot place, for
/// [`resolve_written_refs`].
pub(super) fn unresolved_rows<'a>(
    refs: &'a [loci_core::Reference],
    symbol_ids: &'a [i64],
) -> impl Iterator<Item = RefRow<'a>> + 'a {
    refs.iter().map(move |r| {
        let target_id = r.target.and_then(|i| symbol_ids.get(i as usize)).copied();
        let (provenance, confidence) = match target_id {
            Some(_) => ("derived", SAME_FILE_CONFIDENCE),
            None => UNRESOLVED_AS,
        };
        RefRow {
            name: &r.name,
            kind: r.kind.as_str(),
            receiver: r.receiver.as_str(),
            receiver_name: r.receiver_name.as_deref(),
            line: r.span.line,
            column: r.span.column,
            start_byte: r.span.start,
            end_byte: r.span.end,
            enclosing_id: r
                .enclosing
                .and_then(|i| symbol_ids.get(i as usize))
                .copied(),
            target_id,
            provenance,
            confidence,
        }
    })
}

/// The provenance and confidence [`Resolver::resolve`] gives a reference it cannot
/// resolve.
const UNRESOLVED_AS: (&str, f64) = ("derived", 0.0);

/// References a batch of [`resolve_written_refs`] reads and resolves at once: in name
/// order, where each batch reads its names' definitions, and in the order they were
/// written, where every definition is read at once (a batch then needs nothing more).
const RESOLVE_BATCH_REFS: (i64, i64) = (100_000, 20_000);

/// Definitions a map may have for [`resolve_written_refs`] to read them all at once (the
/// stdlib has 78,000, which with every file's imports add about 45 MiB to its first scan's
/// resident set), and its references in the order they
/// were written: reading them in name order instead, and the definitions name by name,
/// cost the stdlib's first scan 0.9 s more.
const RESOLVE_AT_ONCE_DEFINITIONS: i64 = 250_000;

/// Resolves the references a bulk load wrote unresolved ([`unresolved_rows`]), `batch` at a
/// time (by name, written order: [`RESOLVE_BATCH_REFS`]), each batch's new targets written
/// in one transaction. A
/// map of more than `at_once` definitions ([`RESOLVE_AT_ONCE_DEFINITIONS`]) is resolved
/// in name order:
/// each batch reads the definitions of the names it uses (and of the calls its typed
/// receivers' type expressions make) and the scopes its references are written in, so
/// memory holds one batch's references and definitions and every file's paths and
/// imports, never the map's definitions (990,000 on a 48,000-file map had taken 360 MiB).
/// The rows, and what each resolves to, are those [`PendingRefs::rows`] writes.
pub(super) fn resolve_written_refs(
    store: &mut Store,
    modules: PathIndex,
    batch: (i64, i64),
    at_once: i64,
) -> Result<()> {
    let definitions: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM symbols", [], |r| r.get(0))
        .ctx(|| "counting definitions".into())?;
    let by_name = definitions > at_once;
    let batch = if by_name { batch.0 } else { batch.1 };
    let mut resolver = Resolver::default();
    if by_name {
        // The batches are read by name and their definitions looked up by name.
        store.write(map::create_name_indexes)?;
    } else {
        resolver.read_definitions(store.conn(), None)?;
    }
    resolver.read_paths(store.conn(), None)?;
    resolver.read_imports(store.conn(), None)?;
    resolver.modules = modules;
    let mut after = (String::new(), 0i64);
    loop {
        type Row = (
            i64,
            i64,
            String,
            Option<i64>,
            Receiver,
            Option<String>,
            RefKind,
        );
        let rows: Vec<Row> = {
            let mut stmt = store
                .conn()
                .prepare_cached(if by_name {
                    "SELECT ref_id, file_id, name, enclosing_id, receiver, receiver_name, kind
                     FROM refs WHERE (name, ref_id) > (?1, ?2) AND target_id IS NULL
                     ORDER BY name, ref_id LIMIT ?3"
                } else {
                    // The same parameters; the name (?1) orders nothing here.
                    "SELECT ref_id, file_id, name, enclosing_id, receiver, receiver_name, kind
                     FROM refs WHERE ref_id > ?2 AND target_id IS NULL
                     ORDER BY ref_id LIMIT ?3"
                })
                .ctx(|| "reading refs to resolve".into())?;
            stmt.query_map(params![after.0, after.1, batch], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    Receiver::parse(r.get::<_, Option<String>>(4)?.as_deref()),
                    r.get(5)?,
                    RefKind::parse(&r.get::<_, String>(6)?),
                ))
            })
            .ctx(|| "reading refs to resolve".into())?
            .collect::<std::result::Result<_, _>>()
            .ctx(|| "reading refs to resolve".into())?
        };
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = (last.2.clone(), last.0);
        if by_name {
            let names: BTreeSet<&str> = rows
                .iter()
                .map(|r| r.2.as_str())
                .chain(
                    rows.iter()
                        .filter_map(|r| r.5.as_deref())
                        .flat_map(called_names),
                )
                .collect();
            let enclosing: BTreeSet<i64> = rows.iter().filter_map(|r| r.3).collect();
            resolver.read_definitions(store.conn(), Some(&names))?;
            resolver.parents.clear();
            resolver.read_scopes(store.conn(), "s.symbol_id", &enclosing)?;
        }
        let updates: Vec<(i64, Option<i64>, &'static str, f64)> = rows
            .iter()
            .filter_map(
                |(ref_id, file_id, name, enclosing, receiver, receiver_name, kind)| {
                    let (t, p, c) = resolver.resolve(
                        *file_id,
                        name,
                        *kind,
                        *enclosing,
                        *receiver,
                        receiver_name.as_deref(),
                    );
                    (t.is_some() || (p, c) != UNRESOLVED_AS).then_some((*ref_id, t, p, c))
                },
            )
            .collect();
        store.write(|tx| {
            for (ref_id, target, provenance, confidence) in &updates {
                map::set_ref_target(tx, *ref_id, *target, provenance, *confidence)?;
            }
            Ok(())
        })?;
    }
}

/// A definition, as reference resolution sees it.
/// Whether a symbol of `kind` ([`loci_core::SymbolKind::as_str`]) is a type a `type`
/// reference may name.
fn is_type_kind(kind: &str) -> bool {
    use loci_core::SymbolKind as K;
    matches!(
        K::parse(kind),
        K::Class | K::Struct | K::Enum | K::Union | K::Trait | K::Interface | K::Type
    )
}

/// Whether a symbol of `kind` can be what a call names: anything but a module
/// (namespace, package), a trait or interface, or a type alias (Rust's `type Err`).
fn is_callable_kind(kind: &str) -> bool {
    use loci_core::SymbolKind as K;
    !matches!(
        K::parse(kind),
        K::Module | K::Trait | K::Interface | K::Type
    )
}

/// The last segment of a qualified name's scope: `Builder` for `Builder.new`, `Inner` for
/// `Outer.Inner.f`, `None` for a top-level name.
fn owner_of(qualified: &str) -> Option<Box<str>> {
    qualified
        .rsplit_once('.')
        .map(|(scope, _)| scope.rsplit('.').next().unwrap_or(scope).into())
}

/// Whether a definition's owner (see [`owner_of`]) is a type by the naming convention
/// (capitalised): a type declared in it (Rust's associated `type Value = Json;`, a nested
/// class) is named through it, not by its bare name (`Value` in a signature had resolved
/// to an `impl Visitor`'s `Value`, serde_json's was meant).
fn def_owner_is_type(owner: Option<&str>) -> bool {
    owner.is_some_and(|o| o.starts_with(|c: char| c.is_uppercase()))
}

#[derive(Clone)]
struct Def {
    id: i64,
    parent: Option<i64>,
    /// The last segment of the scope its qualified name gives (`Builder` for
    /// `Builder.new`), if any.
    owner: Option<Box<str>>,
    /// Its qualified name has two segments (`Type.member`): the owner is top-level.
    top_member: bool,
    /// It is a module (`mod m { .. }`, a namespace): no call or module path names it.
    module: bool,
    /// It is a member of a type (a method, a field, an enum variant, an associated item):
    /// in Rust, Python, Go, JavaScript, TypeScript and PHP a bare name never means one.
    member: bool,
    file_id: i64,
    /// The type path its signature declares it returns, for a function or method
    /// ([`Language::return_type`]; `Self` as written): what a call of it is, when a type
    /// expression calls it ([`Resolver::evaluate`]).
    returns: Option<Box<str>>,
}

/// The definitions of one name.
#[derive(Default)]
struct Defs {
    /// In key order, so every choice is deterministic.
    all: Vec<Def>,
    /// (file id, index into `all`), sorted: the definitions in one file are found by a
    /// binary search, not a scan of all of them (a name like `get` has thousands of
    /// definitions in a monorepo, and each of its references asked about several files).
    by_file: Vec<(i64, u32)>,
}

impl Defs {
    /// The definitions in `file_id`, in key order.
    fn in_file(&self, file_id: i64) -> impl Iterator<Item = (u32, &Def)> {
        let start = self.by_file.partition_point(|&(f, _)| f < file_id);
        self.by_file[start..]
            .iter()
            .take_while(move |&&(f, _)| f == file_id)
            .map(|&(_, i)| (i, &self.all[i as usize]))
    }
}

/// The definitions of one link group of languages ([`Language::link_group`]), by name.
#[derive(Default)]
struct Names {
    /// name → its definitions.
    defs: HashMap<String, Defs>,
    /// name → its definitions that can be called (not modules, traits, interfaces or
    /// type aliases), for the names that have others too: what a `call` may name
    /// (`Err(e)` is no call of an associated `type Err`). A name not here has only
    /// callable definitions.
    callables: HashMap<String, Defs>,
    /// name → its definitions that are types (classes, structs, enums, unions, traits,
    /// interfaces, type aliases): what a `type` reference may name.
    types: HashMap<String, Defs>,
}

#[derive(Default)]
struct Resolver {
    /// link group → the definitions in files of its languages. A reference looks only
    /// in its own file's group ([`Resolver::names_for`]), so no rule below can link
    /// languages that [`Language::links_to`] keeps apart.
    groups: HashMap<Language, Names>,
    /// symbol id → its parent's id, and the last segment of its qualified name's scope
    /// (`Accels` for `Accels.needles`: a method of an `impl` has no parent symbol).
    parents: HashMap<i64, (Option<i64>, Option<Box<str>>)>,
    /// file → (module, imported names)
    imports: HashMap<i64, Vec<(String, Vec<String>)>>,
    /// file → (module, target file), by module then target path: file ids follow the
    /// order parser threads finish in, so they must never decide between two targets.
    deps: HashMap<i64, Vec<(String, i64)>>,
    /// file → its path's last component without the extension (`xml/dom/minidom.py` →
    /// `minidom`), to tell a submodule an import names from the module itself.
    stems: HashMap<i64, String>,
    /// file → its path, for the files of the definitions read and the files resolving.
    paths: HashMap<i64, Box<str>>,
    /// Every path of the map, with the repository's Rust crates: what a Rust path names
    /// ([`Resolver::resolve_module_path`]), by the rules `use` resolves with.
    modules: PathIndex,
}

/// What [`Resolver::load`] reads: everything, or only what references named `names` in
/// `files` need.
struct Needs<'a> {
    names: &'a BTreeSet<&'a str>,
    files: &'a BTreeSet<i64>,
}

impl Resolver {
    /// Loads the definitions, parents, imports and deps reference resolution uses: of the
    /// whole map in one pass per table (`needs` is `None`), or only what resolving the
    /// references named `needs.names` in `needs.files` needs, by indexed lookups. A rescan
    /// after a few edits resolves a few files' references; loading every definition of a
    /// 50,000-file map for it took 8.7 s and 339 MiB. The lookups need the map's
    /// secondary indexes (a first scan's bulk load drops them, and reads everything).
    fn load(conn: &loci_store::rusqlite::Connection, needs: Option<Needs<'_>>) -> Result<Resolver> {
        let mut r = Resolver::default();
        let files = needs.as_ref().map(|n| n.files);
        r.read_definitions(conn, needs.as_ref().map(|n| n.names))?;
        // Paths of the files the definitions read are in, and of the files resolving.
        let path_of: BTreeSet<i64> = r
            .groups
            .values()
            .flat_map(|n| n.defs.values())
            .flat_map(|d| d.all.iter().map(|d| d.file_id))
            .chain(files.into_iter().flatten().copied())
            .collect();
        r.read_paths(conn, needs.is_some().then_some(&path_of))?;
        if let Some(files) = files {
            r.read_scopes(conn, "s.file_id", files)?;
        }
        r.read_imports(conn, files)?;
        Ok(r)
    }

    /// Reads the definitions of `wanted` names (of every name when `None`, and then every
    /// symbol's scope too: each is a definition read), in place of those read before.
    fn read_definitions(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        wanted: Option<&BTreeSet<&str>>,
    ) -> Result<()> {
        self.groups.clear();
        let mut uncallable: HashSet<i64> = HashSet::new();
        read_keyed_each(
            conn,
            "reading definitions",
            "SELECT s.name, s.symbol_id, s.file_id, p.symbol_id, s.qualified_name, s.kind, p.kind,
                    f.language, s.signature
             FROM symbols s JOIN files f ON f.file_id = s.file_id
             LEFT JOIN symbols p ON p.key = s.parent_key",
            "",
            ("s.name", wanted),
            "s.key",
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, String>(5)?,
                    row.get::<_, Option<String>>(6)?,
                    row.get::<_, Option<String>>(7)?,
                    row.get::<_, Option<String>>(8)?,
                ))
            },
            |(name, id, file_id, parent, qualified, kind, parent_kind, language, signature)| {
                // `Builder` for `Builder.new`, `Inner` for `Outer.Inner.f`: methods of an
                // `impl` have no parent symbol, only their qualified name.
                let owner: Option<Box<str>> = owner_of(&qualified);
                if wanted.is_none() {
                    // Every symbol is a definition read here: no separate parents pass.
                    self.parents.insert(id, (parent, owner.clone()));
                }
                // A member of a type: a method, anything declared in a class, struct, enum or
                // trait, or in an `impl` of a (capitalised) type: an enum variant, an
                // associated `type Err`.
                let member = owner.is_some()
                    && (kind == "method"
                        || parent_kind.as_deref().is_some_and(is_type_kind)
                        || (parent.is_none()
                            && owner
                                .as_deref()
                                .is_some_and(|o| o.starts_with(|c: char| c.is_uppercase()))));
                let top_member = qualified.matches('.').count() == 1;
                let nested_type = def_owner_is_type(owner.as_deref());
                let parsed = language.as_deref().and_then(Language::from_name);
                let returns = match (parsed, signature) {
                    (Some(l), Some(signature)) if kind == "function" || kind == "method" => {
                        l.return_type(&signature, &name).map(String::into_boxed_str)
                    }
                    _ => None,
                };
                let def = Def {
                    id,
                    parent,
                    owner,
                    top_member,
                    module: kind == "module",
                    member,
                    file_id,
                    returns,
                };
                // A definition in a file of no parsed language (a Markdown heading) is what
                // no reference names.
                let Some(group) = language
                    .as_deref()
                    .and_then(Language::from_name)
                    .map(Language::link_group)
                else {
                    return;
                };
                let names = self.groups.entry(group).or_default();
                if is_type_kind(&kind) && !nested_type {
                    let types = names.types.entry(name.clone()).or_default();
                    types.by_file.push((file_id, types.all.len() as u32));
                    types.all.push(def.clone());
                }
                if !is_callable_kind(&kind) {
                    uncallable.insert(id);
                }
                let defs = names.defs.entry(name).or_default();
                defs.by_file.push((file_id, defs.all.len() as u32));
                defs.all.push(def);
            },
        )?;
        for names in self.groups.values_mut() {
            // The few names some of whose definitions cannot be called (a module, a trait,
            // a type alias) get their callable ones apart; every other name's are all
            // callable.
            for (name, defs) in &names.defs {
                if defs.all.iter().any(|d| uncallable.contains(&d.id)) {
                    let mut callables = Defs::default();
                    for d in defs.all.iter().filter(|d| !uncallable.contains(&d.id)) {
                        callables
                            .by_file
                            .push((d.file_id, callables.all.len() as u32));
                        callables.all.push(d.clone());
                    }
                    names.callables.insert(name.clone(), callables);
                }
            }
            for defs in names
                .defs
                .values_mut()
                .chain(names.types.values_mut())
                .chain(names.callables.values_mut())
            {
                defs.by_file.sort_unstable();
            }
        }
        Ok(())
    }

    /// Reads the paths of the files `ids` (of every file when `None`).
    fn read_paths(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        ids: Option<&BTreeSet<i64>>,
    ) -> Result<()> {
        read_keyed_each(
            conn,
            "reading paths",
            "SELECT file_id, path FROM files",
            "",
            ("file_id", ids),
            "file_id",
            |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
            |(id, path)| {
                self.paths.insert(id, path.into());
            },
        )
    }

    /// Reads the scopes ([`Resolver::parents`]) of the symbols whose `column` (`s.file_id`
    /// or `s.symbol_id`) is one of `keys`.
    fn read_scopes(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        column: &str,
        keys: &BTreeSet<i64>,
    ) -> Result<()> {
        read_keyed_each(
            conn,
            "reading parents",
            "SELECT s.symbol_id, p.symbol_id, s.qualified_name FROM symbols s
             LEFT JOIN symbols p ON p.key = s.parent_key",
            "",
            (column, Some(keys)),
            "s.symbol_id",
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, Option<i64>>(1)?,
                    row.get::<_, String>(2)?,
                ))
            },
            |(id, parent, qualified)| {
                self.parents.insert(id, (parent, owner_of(&qualified)));
            },
        )
    }

    /// Reads the imports and resolved imports (deps) of the files `files` (of every file
    /// when `None`).
    fn read_imports(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        files: Option<&BTreeSet<i64>>,
    ) -> Result<()> {
        read_keyed_each(
            conn,
            "reading imports",
            "SELECT file_id, module, names FROM imports",
            "names != ''",
            ("file_id", files),
            "import_id",
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            },
            |(file_id, module, names)| {
                self.imports
                    .entry(file_id)
                    .or_default()
                    .push((module, split_names(&names)));
            },
        )?;
        read_keyed_each(
            conn,
            "reading deps",
            "SELECT d.from_file_id, d.module, d.to_file_id, f.path FROM deps d
             JOIN files f ON f.file_id = d.to_file_id",
            "",
            ("d.from_file_id", files),
            "d.module, f.path",
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, String>(3)?,
                ))
            },
            |(from, module, to, path)| {
                self.deps.entry(from).or_default().push((module, to));
                self.stems.entry(to).or_insert_with(|| stem_of(&path));
            },
        )
    }

    /// The definitions a reference written in file `file_id` may resolve to: those of
    /// its language's link group ([`Language::link_group`]); none for a file of no parsed
    /// language.
    fn names_for(&self, file_id: i64) -> Option<&Names> {
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p))?;
        self.groups.get(&language.link_group())
    }

    /// Whether `target` is a definition of `name` in file `file_id`.
    fn defined_in(&self, file_id: i64, name: &str, target: i64) -> bool {
        self.names_for(file_id)
            .and_then(|n| n.defs.get(name))
            .is_some_and(|defs| defs.in_file(file_id).any(|(_, d)| d.id == target))
    }

    /// Resolves a reference's `name`, written in file `file_id` inside definition
    /// `enclosing`, looked up on `receiver` (see [`Receiver`]). Returns the target's row
    /// id, provenance and confidence.
    ///
    /// A `type` reference (`kind`: a type named in a signature, a field, an annotation)
    /// looks only at the definitions that are types; every other kind at all of them.
    ///
    /// A bare name ([`Receiver::None`]), in order: a name imported by a resolved import
    /// (stated, 1.0); a definition in the same file (derived, 0.9; a sibling of the
    /// enclosing definition first); a definition in an imported file (derived, 0.7, or 0.5
    /// when several); the only definition of that name anywhere (derived, 0.5); otherwise
    /// unresolved.
    ///
    /// A name on the enclosing object or type (`self.f()`, `this.f()`, `Self::f()`,
    /// [`Receiver::Own`]): the same rules without the import one (a member is never the
    /// imported module-level name of the same spelling). A member written on the name of
    /// a type the file defines (`Foo::new()`) never gets here: its file resolved it
    /// ([`loci_core::Reference::target`], derived, 0.9).
    ///
    /// A name on something the file imports (`util.fmt()` after `from . import util`,
    /// [`Receiver::Imported`]): the bare-name rules without the import and same-file ones
    /// (what an import brings in is defined elsewhere): a definition in an imported file
    /// (0.7, or 0.5 when several), else the only definition anywhere (0.5).
    ///
    /// A name on any other receiver (`self.meta.is_match(x)`, `obj.parse()`,
    /// [`Receiver::Other`]): the map knows the receiver's text, not its type, so a
    /// same-named definition is only a guess. A definition in the same file or in one
    /// imported file gets 0.3 (the same file's methods of *other* types first, as the
    /// enclosing type would have been written `self`); several imported candidates, or
    /// only the one definition of that name anywhere, get 0.2. 0.3 sits below every
    /// bare-name guess (0.5 and up), so a receiver call never outranks a bare call's
    /// evidence, and stays above 0, so `callers` still lists it, marked as a guess.
    fn resolve(
        &self,
        file_id: i64,
        name: &str,
        kind: RefKind,
        enclosing: Option<i64>,
        receiver: Receiver,
        receiver_name: Option<&str>,
    ) -> (Option<i64>, &'static str, f64) {
        // A type named in a signature, field or annotation is a type: `Path` in
        // `fn f(p: &Path)` had resolved to an enum variant `ClaimKind::Path`.
        // Only the definitions of languages this file's links to: never a same-named one
        // of another language (see `Language::link_group`).
        let Some(names) = self.names_for(file_id) else {
            return (None, "derived", 0.0);
        };
        let defs = match kind {
            RefKind::Type => names.types.get(name),
            RefKind::Call => names.callables.get(name).or_else(|| names.defs.get(name)),
            _ => names.defs.get(name),
        };
        let Some(defs) = defs else {
            return (None, "derived", 0.0);
        };
        // A value whose type its file made evident (`rt.block_on(..)` after `let rt =
        // Runtime::new()?`): its type expression evaluated through the map's declared
        // return types, then a member of that type (derived: the type is inferred, never
        // proven; [`TYPED_CERTAIN`] where the type's name is bound as a stated edge would
        // be). Otherwise the value's type is unknown here (a call the map cannot follow, a
        // method a trait or a base class gives): a name on another value.
        if receiver == Receiver::Typed {
            if let Some(ty) = receiver_name.and_then(|e| self.evaluate(file_id, e))
                && let Some((Some(id), provenance, confidence)) =
                    self.member_of_named_type(file_id, defs, Receiver::Other, Some(&ty))
            {
                return if provenance == "stated" {
                    (Some(id), "derived", TYPED_CERTAIN)
                } else {
                    (Some(id), provenance, confidence)
                };
            }
            return self.resolve(file_id, name, kind, enclosing, Receiver::Other, None);
        }
        // A Rust path naming a module (`crate::from_str()`, `std::fs::read()`): the
        // crate's module tree, never a same-named definition nearby.
        if receiver == Receiver::Path
            && let Some(path) = receiver_name
        {
            // The standard library is not in the map (unless the map is it): `std::fs::File`
            // is not the repository's own `fs/file.rs#File`.
            let first = path.split('.').next().unwrap_or(path);
            if matches!(first, "std" | "core" | "alloc")
                && !self.modules.rust_crates.contains_key(first)
            {
                return (None, "derived", 0.0);
            }
            let last = path.rsplit('.').next().unwrap_or(path);
            if !last.starts_with(|c: char| c.is_uppercase()) {
                return self.resolve_module_path(file_id, name, defs, path);
            }
        }
        let other = matches!(receiver, Receiver::Other | Receiver::Path);
        let deps = self.deps.get(&file_id);
        if let Some(found) = self.member_of_named_type(file_id, defs, receiver, receiver_name) {
            return found;
        }
        // A Rust path names a module or a type, which the rules above follow; past them it
        // is no same-named definition nearby (`RangedI64ValueParser::<i64>::new()` had gone
        // to `BoolValueParser.new` beside it).
        if receiver == Receiver::Path {
            return (None, "derived", 0.0);
        }
        if receiver == Receiver::None
            && let Some(imports) = self.imports.get(&file_id)
        {
            for (module, names) in imports {
                if !names.iter().any(|n| n == name) {
                    continue;
                }
                // The module itself before the submodules the import also names: in
                // `from xml.dom import minidom, Node`, `Node` is xml/dom/__init__.py's,
                // not minidom's own `Node`.
                let targets = deps.into_iter().flatten().filter(|(m, _)| m == module);
                let named = |to: &i64| {
                    self.stems
                        .get(to)
                        .is_some_and(|stem| names.iter().any(|n| n == stem))
                };
                let (submodules, own): (Vec<_>, Vec<_>) = targets.partition(|(_, to)| named(to));
                for (_, to) in own.into_iter().chain(submodules) {
                    // A module-level definition: no parent, and no owner (the methods of
                    // an `impl` have no parent symbol, only their qualified name: `pub use
                    // crate::m::make` had bound the free `make` to `D::make` beside it).
                    if let Some((_, d)) = defs
                        .in_file(*to)
                        .find(|(_, d)| d.parent.is_none() && d.owner.is_none())
                    {
                        return (Some(d.id), "stated", 1.0);
                    }
                }
            }
        }
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p));
        // In these languages a bare name is never a member of the enclosing type (that is
        // written `self.f()`, `this.f()`, `$this->f()`, `Self::f()`), so never a member at
        // all: a bare `Err(e)` in Rust is no enum variant `Foo::Err`, a bare `set(..)` in
        // a Python method no method `Morsel.set` beside it.
        let explicit_members = language.is_some_and(|l| l.spec().resolution.explicit_members);
        // Python's class body is the exception: `_deprecate(assertEqual)` written in it
        // names the class's own `_deprecate`, and `class CompNone(CompBase)` in it the
        // class's own `CompBase` (a class's bases are written in the scope around it).
        let enclosing_scope = enclosing.and_then(|k| self.parents.get(&k));
        let body = |d: &Def| {
            d.parent.is_some()
                && (d.parent == enclosing
                    || (kind == RefKind::Inherit
                        && enclosing_scope.is_some_and(|(p, _)| d.parent == *p)))
        };
        // A name on some other value (`wd.min_depth(..)`, `self._transport.close()`) is
        // never the very definition the call is written in (a `close` calling another
        // object's `close` is no recursion), and in Rust, Go, Java, C# and C++, where a
        // value is no module, a method or field of it: never a free function (a test's
        // `fn min_depth` had been taken). In Python a value may be a module
        // (`ssl = import_module('ssl')`), in JavaScript a function.
        let values_are_members = language.is_some_and(|l| l.spec().resolution.values_are_members);
        let eligible = |d: &Def| {
            if receiver == Receiver::Other {
                return (d.member || !values_are_members) && Some(d.id) != enclosing;
            }
            !(receiver == Receiver::None && explicit_members && d.member && !body(d))
        };
        // Outside its file, a bare name is a top-level definition: a function's nested
        // `callback` or a test module's `wrap` is not what a parameter or closure of that
        // name in another file calls.
        let visible =
            |d: &Def| receiver != Receiver::None || (d.parent.is_none() && d.owner.is_none());
        let same: Vec<&Def> = if receiver == Receiver::Imported {
            Vec::new()
        } else {
            defs.in_file(file_id)
                .map(|(_, d)| d)
                .filter(|d| eligible(d))
                .collect()
        };
        if !same.is_empty() {
            let (enclosing_parent, enclosing_owner) =
                enclosing_scope.map_or((None, None), |(p, o)| (*p, o.as_deref()));
            if other {
                let best = same
                    .iter()
                    .find(|d| {
                        d.parent.is_some() && d.parent != enclosing_parent && d.parent != enclosing
                    })
                    .unwrap_or(&same[0]);
                return (Some(best.id), "derived", 0.3);
            }
            // On the enclosing type (`self.len()`): a member of that type, by its name
            // (the methods of an `impl` have no parent symbol); `self.len()` in
            // `impl<A> Accels<A>` had gone to `Accel.len` beside it, first in key order.
            let own_type = (receiver == Receiver::Own)
                .then(|| {
                    same.iter()
                        .find(|d| d.owner.is_some() && d.owner.as_deref() == enclosing_owner)
                })
                .flatten();
            if receiver == Receiver::Own
                && own_type.is_none()
                && own_by_type(language, enclosing_owner)
            {
                return self.resolve_own_elsewhere(file_id, defs, enclosing_owner);
            }
            let best = own_type
                .or_else(|| {
                    same.iter()
                        .find(|d| d.parent.is_some() && d.parent == enclosing_parent)
                })
                .or_else(|| {
                    same.iter()
                        .find(|d| d.parent.is_some() && d.parent == enclosing)
                })
                .or_else(|| same.iter().find(|d| d.parent.is_none()))
                .unwrap_or(&same[0]);
            return (Some(best.id), "derived", SAME_FILE_CONFIDENCE);
        }
        if receiver == Receiver::Own {
            let enclosing_owner = enclosing_scope.and_then(|(_, o)| o.as_deref());
            if own_by_type(language, enclosing_owner) {
                return self.resolve_own_elsewhere(file_id, defs, enclosing_owner);
            }
        }
        // Go: a package is its directory, and every file of it sees the others' names.
        if receiver == Receiver::None
            && language.is_some_and(|l| l.spec().resolution.directory_packages)
            && let Some(here) = self.paths.get(&file_id)
        {
            let dir = here.rsplit_once('/').map_or("", |(d, _)| d);
            let package: Vec<&Def> = defs
                .all
                .iter()
                .filter(|d| {
                    !d.member
                        && self.paths.get(&d.file_id).is_some_and(|p| {
                            p.ends_with(".go") && p.rsplit_once('/').map_or("", |(d, _)| d) == dir
                        })
                })
                .collect();
            if let Some(d) = package.first() {
                let confidence = if package.len() == 1 {
                    SAME_FILE_CONFIDENCE
                } else {
                    0.7
                };
                return (Some(d.id), "derived", confidence);
            }
        }
        // Definitions in imported files: how many, and the first in key order. On an
        // imported name (`util.Open()`), the files of the imports that bind that name
        // only: `util.Open` had gone to the `Open` of another package the file imports.
        let bound = receiver_name
            .filter(|_| receiver == Receiver::Imported)
            .and_then(|r| r.split('.').next())
            .map(|binding| self.bound_by(file_id, binding, language));
        // Where the language's import rules are all known here, a name on an import that
        // binds no file of the map is outside it (`threading.Lock()`, Go `net.Dial()`): not
        // a same-named definition anywhere (`asyncio/locks.py#Lock`, `Socket.Dial`).
        let bindings_known = language.is_some_and(|l| l.spec().resolution.bindings_known);
        if bindings_known && bound.as_ref().is_some_and(|files| files.is_empty()) {
            return (None, "derived", 0.0);
        }
        let mut targets: Vec<i64> = bound
            .clone()
            .filter(|files| !files.is_empty())
            .unwrap_or_else(|| deps.into_iter().flatten().map(|(_, to)| *to).collect());
        targets.sort_unstable();
        targets.dedup();
        // On an imported module's name (`logging.getLogger()` after `import logging`) a
        // module-level definition is meant, not a method beside it: the first in key
        // order had been `Manager.getLogger`. Members are the fallback.
        let on_module = receiver == Receiver::Imported
            && receiver_name.is_some_and(|r| {
                !r.rsplit('.')
                    .next()
                    .unwrap_or(r)
                    .starts_with(|c: char| c.is_uppercase())
            });
        let mut imported = 0usize;
        let mut first: Option<u32> = None;
        for module_level in [on_module, false] {
            for &to in &targets {
                for (i, d) in defs.in_file(to) {
                    if (module_level && (d.parent.is_some() || d.owner.is_some()))
                        || !eligible(d)
                        || !visible(d)
                    {
                        continue;
                    }
                    imported += 1;
                    first = Some(first.map_or(i, |f| f.min(i)));
                }
            }
            if first.is_some() || !on_module {
                break;
            }
        }
        if let Some(i) = first {
            let confidence = match (other, imported == 1) {
                (false, true) => 0.7,
                (false, false) => 0.5,
                (true, true) => 0.3,
                (true, false) => 0.2,
            };
            return (Some(defs.all[i as usize].id), "derived", confidence);
        }
        // The only definition anywhere; for a type, one declared at the top of its file
        // (a type declared in a function or module is reached through an import: a
        // test's local `type Row` had taken every `Row` of the repository).
        // (Only in languages linked to the use's, as every rule here: a Rust `Item` had
        // resolved to a Go struct, a Rust `compiled.get()` to Python's `Message.get`.) (On an imported module's name, `unittest.skipUnless` re-exported by the package's
        // `__init__.py`, only a top-level one: `os.write` is no method `write`.)
        if defs.all.len() == 1
            && eligible(&defs.all[0])
            && visible(&defs.all[0])
            && !(on_module && (defs.all[0].parent.is_some() || defs.all[0].owner.is_some()))
            && (kind != RefKind::Type || defs.all[0].owner.is_none())
        {
            return (
                Some(defs.all[0].id),
                "derived",
                if other { 0.2 } else { 0.5 },
            );
        }
        (None, "derived", 0.0)
    }
}

/// Whether `self.f()` written in `language` in a definition scoped by `owner` names a
/// member of that type and no other, which [`Resolver::resolve_own_elsewhere`] then
/// answers: Rust and Go have no inheritance, and the scope is a known type (capitalised:
/// `Accels` for `Accels.needles`).
fn own_by_type(language: Option<Language>, owner: Option<&str>) -> bool {
    language.is_some_and(|l| l.spec().resolution.own_by_type)
        && owner.is_some_and(|o| o.starts_with(|c: char| c.is_uppercase()))
}

impl Resolver {
    /// The type a [`Receiver::Typed`] reference's type expression names
    /// ([`loci_core::Reference::receiver_name`]: a type path, or a free function's call,
    /// then the methods called on it, `Builder.new_multi_thread().enable_all().build()`),
    /// each call's type being the return type its definition declares
    /// ([`Language::return_type`]; `Self` is the definition's owner): a free function in
    /// this file, else in an imported file, else the only one of that name; a method of
    /// the type so far as [`Resolver::member_of_named_type`] picks one. `None` when a call
    /// is not in the map or declares no type the map can follow.
    fn evaluate(&self, file_id: i64, expr: &str) -> Option<String> {
        let names = self.names_for(file_id)?;
        let segments: Vec<&str> = expr.split('.').collect();
        let Some(first_call) = segments.iter().position(|s| s.ends_with("()")) else {
            return Some(expr.to_string());
        };
        let mut ty: Option<String> = (first_call > 0).then(|| segments[..first_call].join("."));
        for segment in &segments[first_call..] {
            // A collection's element (`for rt in rts()`): `Runtime[]` → `Runtime`.
            if *segment == "[]" {
                ty = Some(ty?.strip_suffix("[]")?.to_string());
                continue;
            }
            let method = segment.strip_suffix("()")?;
            let defs = names
                .callables
                .get(method)
                .or_else(|| names.defs.get(method))?;
            let def = match &ty {
                None => {
                    let free = |d: &&Def| d.owner.is_none() && d.parent.is_none() && !d.module;
                    let imported = |f: i64| {
                        self.deps
                            .get(&file_id)
                            .into_iter()
                            .flatten()
                            .any(|(_, to)| *to == f)
                    };
                    // In this file, a function of an inline module too (`mod tests { fn
                    // rt() -> Runtime }`).
                    defs.in_file(file_id)
                        .map(|(_, d)| d)
                        .find(|d| !d.member && !d.module)
                        .or_else(|| defs.all.iter().filter(free).find(|d| imported(d.file_id)))
                        .or_else(|| {
                            let mut all = defs.all.iter().filter(free);
                            match (all.next(), all.next()) {
                                (Some(d), None) => Some(d),
                                _ => None,
                            }
                        })?
                }
                Some(ty) => {
                    let (Some(id), _, _) =
                        self.member_of_named_type(file_id, defs, Receiver::Other, Some(ty))?
                    else {
                        return None;
                    };
                    defs.all.iter().find(|d| d.id == id)?
                }
            };
            let returns = def.returns.as_deref()?;
            ty = Some(if returns == "Self" {
                def.owner.as_deref()?.to_string()
            } else {
                returns.to_string()
            });
        }
        ty
    }

    /// A member written on a type's name (`Builder::new_multi_thread()`,
    /// `runtime::Builder::new()`, `Parser.create()`), or called on a value of that type
    /// ([`Receiver::Typed`] once evaluated): the members of types of that name, in this
    /// file, then in imported files, then anywhere. `None` when the rule does not decide
    /// (no receiver name, or a lower-case one no top-level type answers), for the rules
    /// after it.
    fn member_of_named_type(
        &self,
        file_id: i64,
        defs: &Defs,
        receiver: Receiver,
        receiver_name: Option<&str>,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        let deps = self.deps.get(&file_id);
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p));
        // A member written on a type's name (`Builder::new_multi_thread()`,
        // `runtime::Builder::new()`, `Parser.create()`): the members of types of that
        // name, in this file, then in imported files, then anywhere.
        let (type_name, leading) = receiver_name.and_then(|path| {
            let mut segments: Vec<&str> = path.split('.').collect();
            let last = segments.pop()?;
            // A crate's own name is where its paths start, not a folder: `indicatif::
            // ProgressBar::new()` in the crate's tests is its `ProgressBar`.
            segments.retain(|s| {
                !matches!(*s, "crate" | "self" | "super" | "Self")
                    && !self.modules.rust_crates.contains_key(*s)
            });
            Some((last, segments))
        })?;
        // `runtime::Builder` is a `Builder` in a file whose path holds `runtime`, the
        // module right before it (earlier segments may name the crate: `tokio::`):
        // `meta::Regex::new()` (another crate's `Regex`) is not this crate's.
        let placed = |d: &Def| {
            let path = self.paths.get(&d.file_id).map_or("", |p| &**p);
            leading.last().is_none_or(|seg| {
                path.split('/')
                    .any(|part| part == *seg || part.split('.').next() == Some(*seg))
            })
        };
        // A capitalised name is a type's by convention (`Builder`, `Regex`); a lower-case
        // one is more often a variable or a module (`c = C(); c.foo()`), so it names
        // only a top-level class of that name (`datetime.fromtimestamp`).
        let capitalised = type_name.starts_with(|c: char| c.is_uppercase());
        let typed: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| {
                d.owner.as_deref() == Some(type_name) && placed(d) && (capitalised || d.top_member)
            })
            .collect();
        // A member of a type the map does not hold (`Arc::new`, `thread::Builder::new`,
        // another crate's `meta::Regex::new`): not any same-named member nearby. (In
        // Go a capitalised name is any exported one: `DefaultSocket.Dial()` is a call on
        // a package variable.)
        if typed.is_empty()
            && capitalised
            && language.is_none_or(|l| l.spec().resolution.capitalised_types)
        {
            return Some((None, "derived", 0.0));
        }
        if let Some(first) = typed.first() {
            // Certain where the parser proves which type the name is: an import of this
            // file binds it to a file that defines it with this member once, as a bare
            // name an import binds is (stated, 1.0). `--hard` follows these.
            let (files, paths) = self.type_bound_in(file_id, receiver, receiver_name, type_name);
            let mut certain = typed.iter().filter(|d| {
                files.contains(&d.file_id)
                    || self
                        .paths
                        .get(&d.file_id)
                        .is_some_and(|p| paths.iter().any(|b| **b == **p))
            });
            if let (Some(d), None) = (certain.next(), certain.next()) {
                return Some((Some(d.id), "stated", 1.0));
            }
            let imported = |f: i64| deps.into_iter().flatten().any(|(_, to)| *to == f);
            // The nearest: most folders in common with this file (`super::Builder::new()`
            // in `task/join_set.rs` is `task`'s); the first in key order of those.
            let common = |d: &Def| self.folders_in_common(file_id, d.file_id);
            let best = typed
                .iter()
                .find(|d| d.file_id == file_id)
                .or_else(|| typed.iter().find(|d| imported(d.file_id)))
                .or_else(|| typed.iter().min_by_key(|d| std::cmp::Reverse(common(d))))
                .unwrap_or(first);
            let confidence = if typed.len() == 1 { 0.7 } else { 0.5 };
            return Some((Some(best.id), "derived", confidence));
        }
        None
    }

    /// How many leading path components two files' paths share: the nearest of several
    /// candidates is the one sharing most folders with the use (`super::Builder::new()`
    /// in `task/join_set.rs` is `task`'s `Builder`).
    fn folders_in_common(&self, a: i64, b: i64) -> usize {
        let path = |f: i64| self.paths.get(&f).map_or("", |p| &**p);
        path(a)
            .split('/')
            .zip(path(b).split('/'))
            .take_while(|(x, y)| x == y)
            .count()
    }

    /// `self.f()` / `Self::f()` inside a type `owner` whose file defines no member `f` of
    /// it. Rust and Go: a member of that type in another file (an `impl` or method set
    /// split across files: `self.loose_iter()` in `Store` is `loose/iter.rs#Store.loose_iter`),
    /// the nearest by folders (derived, 0.7, or 0.5 when several); otherwise nothing: a
    /// method the type derives or takes from a trait or the standard library
    /// (`self.clone()` under `#[derive(Clone)]`, `self.as_str()` on `String`) is no member
    /// of another type beside it (`Error.clone`, `Id.as_str` at 0.7–0.9 had been given).
    /// Only for Rust and Go ([`own_by_type`]): the other languages inherit members from
    /// base classes, which the same-file and import rules guess at.
    fn resolve_own_elsewhere(
        &self,
        file_id: i64,
        defs: &Defs,
        owner: Option<&str>,
    ) -> (Option<i64>, &'static str, f64) {
        let members: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| d.owner.as_deref() == owner)
            .collect();
        let common = |d: &&&Def| self.folders_in_common(file_id, d.file_id);
        match members.iter().min_by_key(|d| std::cmp::Reverse(common(d))) {
            Some(d) if members.len() == 1 => (Some(d.id), "derived", 0.7),
            Some(d) => (Some(d.id), "derived", 0.5),
            None => (None, "derived", 0.0),
        }
    }

    /// The files where the type a member is written on (`type_name`, the last segment of
    /// `receiver_name`) is bound by a parser's proof, for [`Resolver::resolve`] to state
    /// the member there: for a bare type name (`Foo.create()`, `Builder::new()`), the
    /// files that this file's imports naming it resolved to (`from m import Foo`, `use
    /// crate::rt::builder::Builder;`, `import a.b.Foo;`); for a Rust path
    /// (`crate::rt::builder::Builder::new()`), the files its module part resolves to by
    /// the crate's module tree, as a `use` of it would. A re-export (`pub use
    /// builder::Builder;` in `rt/mod.rs`) is not followed: the type is not defined in the
    /// file bound, so the member stays derived. The files by id (imports), and by path
    /// (module paths).
    fn type_bound_in(
        &self,
        file_id: i64,
        receiver: Receiver,
        receiver_name: Option<&str>,
        type_name: &str,
    ) -> (Vec<i64>, Vec<String>) {
        let Some(path) = receiver_name else {
            return (Vec::new(), Vec::new());
        };
        match path.rsplit_once('.') {
            None => {
                let modules: Vec<&str> = self
                    .imports
                    .get(&file_id)
                    .into_iter()
                    .flatten()
                    .filter(|(_, names)| names.iter().any(|n| n == type_name))
                    .map(|(module, _)| module.as_str())
                    .collect();
                let files = self
                    .deps
                    .get(&file_id)
                    .into_iter()
                    .flatten()
                    .filter(|(module, _)| modules.contains(&module.as_str()))
                    .map(|(_, to)| *to)
                    .collect();
                (files, Vec::new())
            }
            Some((module, _)) if receiver == Receiver::Path => {
                let Some(here) = self.paths.get(&file_id) else {
                    return (Vec::new(), Vec::new());
                };
                let import = Import {
                    module: module.replace('.', "::"),
                    names: vec![type_name.to_string()],
                    span: Span::default(),
                };
                let paths =
                    loci_core::imports::resolve(Language::Rust, here, &import, &self.modules);
                (Vec::new(), paths)
            }
            Some(_) => (Vec::new(), Vec::new()),
        }
    }

    /// The files that the imports of `file_id` binding `binding` resolved to: those
    /// listing it as a name (`from . import util`, `use crate::de;`), and those whose
    /// module the language binds to it (Python `import os.path` binds `os`, Go
    /// `import "x/pkg/util"` binds `util`, Java `import a.b.Util;` binds `Util`).
    fn bound_by(&self, file_id: i64, binding: &str, language: Option<Language>) -> Vec<i64> {
        let named: Vec<&str> = self
            .imports
            .get(&file_id)
            .into_iter()
            .flatten()
            .filter(|(_, names)| names.iter().any(|n| n == binding))
            .map(|(module, _)| module.as_str())
            .collect();
        let binds = |module: &str| {
            named.contains(&module)
                || language.is_some_and(|l| (l.spec().module_binding)(module) == Some(binding))
        };
        self.deps
            .get(&file_id)
            .into_iter()
            .flatten()
            .filter(|(module, _)| binds(module))
            .map(|(_, to)| *to)
            .collect()
    }

    /// A name on a Rust path naming a module ([`Receiver::Path`] whose last segment is
    /// not capitalised: `crate::from_str()`, `super::helper()`, `de::from_str()` after
    /// `crate::`, `std::fs::read()`), by the crate's module tree as a `use` of that path
    /// resolves ([`loci_core::imports::resolve`]), in order:
    ///
    /// 1. `super::f()` where the file itself defines a free `f`: that one (derived, 0.9);
    ///    an inline `mod tests` calls its file's functions so;
    /// 2. a free definition (no owner, not a module) in the module file the path names, or one of an
    ///    inline module of the path's last name in the file that holds it (stated, 1.0);
    /// 3. a path to a module of the map that defines no such name re-exports it (`pub use
    ///    crate::de::from_str;` in `lib.rs`): the free definitions of the name in that
    ///    crate's folder (derived, 0.7, or 0.5 when several: one in a file named after it
    ///    first, as `mod spawn; pub use spawn::spawn;` writes it, then the one sharing most
    ///    folders with the use);
    /// 4. a path to no module of the map (`std::fs::read()`, another crate's
    ///    `loom::model()`): unresolved, never a same-named definition nearby
    ///    (`std::fs::canonicalize(p)` had resolved to the enclosing `canonicalize`,
    ///    serde_json's `crate::from_str(s)` to the method `Map.from_str` beside it).
    fn resolve_module_path(
        &self,
        file_id: i64,
        name: &str,
        defs: &Defs,
        path: &str,
    ) -> (Option<i64>, &'static str, f64) {
        const UNRESOLVED: (Option<i64>, &str, f64) = (None, "derived", 0.0);
        let Some(here) = self.paths.get(&file_id) else {
            return UNRESOLVED;
        };
        let segments: Vec<&str> = path.split('.').collect();
        // A free item: no owner (not `Map.from_str`), and no module (`mod spawn;` is not
        // what `tokio::spawn()` calls).
        let free = |d: &Def| d.owner.is_none() && !d.module;
        if segments == ["super"]
            && let Some((_, d)) = defs.in_file(file_id).find(|(_, d)| free(d))
        {
            return (Some(d.id), "derived", SAME_FILE_CONFIDENCE);
        }
        let files_of = |segments: &[&str]| {
            let import = Import {
                module: segments.join("::"),
                names: vec![name.to_string()],
                span: Span::default(),
            };
            loci_core::imports::resolve(Language::Rust, here, &import, &self.modules)
        };
        let path_of = |d: &Def| self.paths.get(&d.file_id).map_or("", |p| &**p);
        let files = files_of(&segments);
        let Some(module) = files.first() else {
            return UNRESOLVED;
        };
        if let Some(d) = defs
            .all
            .iter()
            .find(|d| free(d) && files.iter().any(|f| f == path_of(d)))
        {
            return (Some(d.id), "stated", 1.0);
        }
        if let [parent @ .., last] = &segments[..]
            && !parent.is_empty()
        {
            let files = files_of(parent);
            if let Some(d) = defs.all.iter().find(|d| {
                d.owner.as_deref() == Some(*last)
                    && !d.module
                    && files.iter().any(|f| f == path_of(d))
            }) {
                return (Some(d.id), "stated", 1.0);
            }
        }
        let (crate_dir, _) = loci_core::imports::rust_crate_root(module, &self.modules);
        let inside = |p: &str| {
            p.ends_with(".rs")
                && (crate_dir.is_empty()
                    || p.strip_prefix(crate_dir.as_str())
                        .is_some_and(|rest| rest.starts_with('/')))
        };
        let exported: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| free(d) && inside(path_of(d)))
            .collect();
        // A file named after the item first (`mod spawn; pub use spawn::spawn;`), then
        // the one sharing most folders with the use.
        let rank = |d: &&&Def| {
            let common = self.folders_in_common(file_id, d.file_id);
            (stem_of(path_of(d)) != name, std::cmp::Reverse(common))
        };
        match exported.iter().min_by_key(rank) {
            Some(d) if exported.len() == 1 => (Some(d.id), "derived", 0.7),
            Some(d) => (Some(d.id), "derived", 0.5),
            None => UNRESOLVED,
        }
    }
}

/// The confidence of a method called on a value whose type its file made evident, where
/// the type's name is bound to the file defining that member as a stated edge's would be
/// ([`Receiver::Typed`]): above an inferred member of a named type (0.7), below the same
/// file's (0.9), since the type is inferred from the code around the call, not proven.
const TYPED_CERTAIN: f64 = 0.8;

/// The confidence of a same-file definition for a bare name or a name on the enclosing
/// object or type (or on a type the file defines; see [`loci_core::Receiver::Own`]).
const SAME_FILE_CONFIDENCE: f64 = 0.9;

/// A path's last component without its extensions: `xml/dom/minidom.py` → `minidom`.
fn stem_of(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file).to_string()
}

/// The names a type expression calls (`rt()`, `Builder.new_multi_thread().build()`:
/// `rt`; `new_multi_thread`, `build`), none for any other name.
fn called_names(expr: &str) -> impl Iterator<Item = &str> {
    expr.split('.').filter_map(|s| s.strip_suffix("()"))
}

/// Above this many changed files a scan loads the whole map's definitions at once (one
/// pass over the table) instead of looking up the names its references use.
const TARGETED_RESOLVE_MAX_FILES: usize = 1024;

/// Resolves the pending references of changed files and re-resolves stored references
/// that use a changed name, live in a file whose imports changed, or pointed into a file
/// this scan rewrote (`retarget`). With `all` (after an interrupted scan, whose changed
/// names and rewritten targets were never recorded), every stored reference is resolved
/// again and every reference edge (`ref_deps`) rewritten. With `written` (a bulk first
/// scan), the references were stored with their files instead of held in `pending`, and
/// are resolved from the store.
#[allow(clippy::too_many_arguments)]
pub(super) fn resolve_refs(
    store: &mut Store,
    pending: PendingRefs,
    changed_names: &BTreeSet<String>,
    deps_changed: &BTreeSet<i64>,
    retarget: &BTreeSet<i64>,
    modules: PathIndex,
    all: bool,
    written: bool,
) -> Result<()> {
    if written {
        // Every stored reference is this scan's own: the map held nothing before it.
        resolve_written_refs(
            store,
            modules,
            RESOLVE_BATCH_REFS,
            RESOLVE_AT_ONCE_DEFINITIONS,
        )?;
        store.write(map::rebuild_ref_deps)?;
        return Ok(());
    }
    let pending_files: HashSet<i64> = pending.files.iter().map(|(id, _)| *id).collect();
    // Stored refs of unchanged files that may resolve differently now, and whether to
    // rewrite them even when they resolve as before:
    // (ref, file, name, enclosing, target, provenance, confidence, receiver, its name,
    // kind).
    type Stored = (
        i64,
        i64,
        String,
        Option<i64>,
        Option<i64>,
        String,
        f64,
        Receiver,
        Option<String>,
        RefKind,
    );
    const COLUMNS: &str = "ref_id, file_id, name, enclosing_id, target_id, provenance, confidence, receiver, receiver_name, kind";
    let read = |r: &loci_store::rusqlite::Row<'_>| -> loci_store::rusqlite::Result<Stored> {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            Receiver::parse(r.get::<_, Option<String>>(7)?.as_deref()),
            r.get(8)?,
            RefKind::parse(&r.get::<_, String>(9)?),
        ))
    };
    let mut stored: Vec<(Stored, bool)> = Vec::new();
    let mut seen = HashSet::new();
    {
        let conn = store.conn();
        let mut by_name = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM refs WHERE name = ?1"))
            .ctx(|| "reading refs".into())?;
        let mut by_file = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM refs WHERE file_id = ?1"))
            .ctx(|| "reading refs".into())?;
        let mut by_id = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM refs WHERE ref_id = ?1"))
            .ctx(|| "reading refs".into())?;
        let mut consider = |row: Stored, force: bool| {
            if !pending_files.contains(&row.1) && seen.insert(row.0) {
                stored.push((row, force));
            }
        };
        // With `all`, every stored reference is read below, once the resolver is loaded.
        let changed_names = if all { &BTreeSet::new() } else { changed_names };
        let deps_changed = if all { &BTreeSet::new() } else { deps_changed };
        for name in changed_names {
            for row in by_name
                .query_map([name], read)
                .ctx(|| "reading refs".into())?
            {
                consider(row.ctx(|| "reading refs".into())?, false);
            }
        }
        for file_id in deps_changed {
            for row in by_file
                .query_map([file_id], read)
                .ctx(|| "reading refs".into())?
            {
                consider(row.ctx(|| "reading refs".into())?, false);
            }
        }
        // Their old target ids are gone even when the key survived: always rewrite.
        for ref_id in retarget {
            for row in by_id
                .query_map([ref_id], read)
                .ctx(|| "reading refs".into())?
            {
                consider(row.ctx(|| "reading refs".into())?, true);
            }
        }
    }
    let files: BTreeSet<i64> = pending_files
        .iter()
        .copied()
        .chain(stored.iter().map(|(row, _)| row.1))
        .collect();
    let mut resolver = if !all
        && files.len() <= TARGETED_RESOLVE_MAX_FILES
        && !map::bulk_indexes_missing(store.conn())?
    {
        // The calls of typed receivers' type expressions are looked up too
        // (`Builder.new_multi_thread().build()`: `new_multi_thread`, `build`).
        let receivers = pending
            .names
            .iter()
            .map(|n| &**n)
            .chain(stored.iter().filter_map(|(row, _)| row.8.as_deref()));
        let names: BTreeSet<&str> = pending
            .names
            .iter()
            .map(|n| &**n)
            .chain(stored.iter().map(|(row, _)| row.2.as_str()))
            .chain(receivers.flat_map(called_names))
            .collect();
        Resolver::load(
            store.conn(),
            Some(Needs {
                names: &names,
                files: &files,
            }),
        )?
    } else {
        Resolver::load(store.conn(), None)?
    };
    resolver.modules = modules;
    // A stored reference's new resolution, if it must be written.
    let update = |row: &Stored, force: bool| -> Option<(i64, Option<i64>, &'static str, f64)> {
        let (
            ref_id,
            file_id,
            name,
            enclosing,
            target,
            provenance,
            confidence,
            receiver,
            receiver_name,
            kind,
        ) = row;
        // A name on the enclosing or a same-file type that resolved in its own file stays
        // resolved until that file changes (and then its refs are rewritten, not stored):
        // what it resolved to depends on nothing else. Its file may have chosen the
        // target itself (`Foo::new()`, `Reference::target`), which `resolve` cannot redo.
        if *receiver == Receiver::Own
            && !force
            && target.is_some_and(|t| resolver.defined_in(*file_id, name, t))
        {
            return None;
        }
        let (t, p, c) = resolver.resolve(
            *file_id,
            name,
            *kind,
            *enclosing,
            *receiver,
            receiver_name.as_deref(),
        );
        (force || t != *target || p != provenance || c != *confidence).then_some((*ref_id, t, p, c))
    };
    let mut updates: Vec<(i64, Option<i64>, &'static str, f64)> = stored
        .iter()
        .filter_map(|(row, force)| update(row, *force))
        .collect();
    if all {
        // One pass over the table, a row at a time: memory holds the updates, never the
        // whole map's references.
        let conn = store.conn();
        let mut every = conn
            .prepare(&format!("SELECT {COLUMNS} FROM refs"))
            .ctx(|| "reading refs".into())?;
        for row in every.query_map([], read).ctx(|| "reading refs".into())? {
            let row = row.ctx(|| "reading refs".into())?;
            if !pending_files.contains(&row.1) && !seen.contains(&row.0) {
                updates.extend(update(&row, false));
            }
        }
    }
    for chunk in pending.files.chunks(256) {
        store.write(|tx| {
            for (file_id, range) in chunk {
                map::insert_refs(
                    tx,
                    *file_id,
                    pending.rows(*file_id, range.clone(), &resolver),
                )?;
            }
            Ok(())
        })?;
    }
    for chunk in updates.chunks(4096) {
        store.write(|tx| {
            for (ref_id, target, provenance, confidence) in chunk {
                map::set_ref_target(tx, *ref_id, *target, provenance, *confidence)?;
            }
            Ok(())
        })?;
    }
    // The file edges of resolved references (`ref_deps`): of every file whose references
    // were written or re-resolved; in one pass when that is most of the map (a first
    // scan's bulk load has no index to look them up by).
    let updated: HashSet<i64> = updates.iter().map(|u| u.0).collect();
    let touched: BTreeSet<i64> = pending_files
        .iter()
        .copied()
        .chain(
            stored
                .iter()
                .filter(|(row, _)| updated.contains(&row.0))
                .map(|(row, _)| row.1),
        )
        .collect();
    if all || touched.len() > TARGETED_RESOLVE_MAX_FILES || map::bulk_indexes_missing(store.conn())?
    {
        store.write(map::rebuild_ref_deps)?;
    } else if !touched.is_empty() {
        let touched: Vec<i64> = touched.into_iter().collect();
        for chunk in touched.chunks(256) {
            store.write(|tx| map::replace_ref_deps(tx, chunk))?;
        }
    }
    Ok(())
}

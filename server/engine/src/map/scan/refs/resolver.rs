//! What reference resolution reads from the map: definitions by link group and name,
//! their files, scopes and owners, and each file's imports and deps ([`Resolver::load`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use loci_core::Language;
use loci_core::imports::PathIndex;
use loci_store::map;

use crate::Result;
use crate::map::scan::imports::split_names;

use super::rules::stem_of;

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
/// class) is named through it, not by its bare name (`Value` in a signature is not an
/// `impl Visitor`'s `Value` beside it).
fn def_owner_is_type(owner: Option<&str>) -> bool {
    owner.is_some_and(|o| o.starts_with(|c: char| c.is_uppercase()))
}

#[derive(Clone)]
pub(super) struct Def {
    pub(super) id: i64,
    pub(super) parent: Option<i64>,
    /// The last segment of the scope its qualified name gives (`Builder` for
    /// `Builder.new`), if any.
    pub(super) owner: Option<Box<str>>,
    /// Its qualified name has two segments (`Type.member`): the owner is top-level.
    pub(super) top_member: bool,
    /// It is a module (`mod m { .. }`, a namespace): no call or module path names it.
    pub(super) module: bool,
    /// It is a macro (Rust's `macro_rules!`): in scope from where its text declares it,
    /// with no import.
    pub(super) textual: bool,
    /// It is a member of a type (a method, a field, an enum variant, an associated item):
    /// in Rust, Python, Go, JavaScript, TypeScript and PHP a bare name never means one.
    pub(super) member: bool,
    pub(super) file_id: i64,
    /// The type path its signature declares it returns, for a function or method
    /// ([`Language::return_type`]; `Self` as written): what a call of it is, when a type
    /// expression calls it ([`Resolver::evaluate`]).
    pub(super) returns: Option<Box<str>>,
    /// The bases its signature declares, for a class ([`Language::bases`]): where the
    /// members it does not define are looked up ([`Resolver::inherited_member`]).
    pub(super) bases: Box<[Box<str>]>,
}

/// The definitions of one name.
#[derive(Default)]
pub(super) struct Defs {
    /// In key order, so every choice is deterministic.
    pub(super) all: Vec<Def>,
    /// (file id, index into `all`), sorted: the definitions in one file are found by a
    /// binary search, not a scan of all of them (a name like `get` has thousands of
    /// definitions in a monorepo, and each of its references asked about several files).
    pub(super) by_file: Vec<(i64, u32)>,
}

impl Defs {
    /// The definitions in `file_id`, in key order.
    pub(super) fn in_file(&self, file_id: i64) -> impl Iterator<Item = (u32, &Def)> {
        let start = self.by_file.partition_point(|&(f, _)| f < file_id);
        self.by_file[start..]
            .iter()
            .take_while(move |&&(f, _)| f == file_id)
            .map(|&(_, i)| (i, &self.all[i as usize]))
    }
}

/// The definitions of one link group of languages ([`Language::link_group`]), by name.
#[derive(Default)]
pub(super) struct Names {
    /// name → its definitions.
    pub(super) defs: HashMap<String, Defs>,
    /// name → its definitions that can be called (not modules, traits, interfaces or
    /// type aliases), for the names that have others too: what a `call` may name
    /// (`Err(e)` is no call of an associated `type Err`). A name not here has only
    /// callable definitions.
    pub(super) callables: HashMap<String, Defs>,
    /// name → its definitions that are types (classes, structs, enums, unions, traits,
    /// interfaces, type aliases): what a `type` reference may name.
    pub(super) types: HashMap<String, Defs>,
    /// name → its definitions that are macros: what a macro invocation may name.
    pub(super) macros: HashMap<String, Defs>,
}

/// The most definitions around a reference [`Resolver::imports_seen`] looks in: deeper
/// nesting is written by generators, not people.
const MAX_SCOPE_DEPTH: usize = 16;

/// An import that binds names (`from m import a, b`, `use m::{a, b}`), as resolution reads
/// it.
pub(super) struct Binding {
    /// The module as written.
    pub(super) module: String,
    /// The names it binds (`*` for a glob).
    pub(super) names: Vec<String>,
    /// The definition it is written in, whose references alone see its names; `None` at
    /// module level, seen by the whole file.
    pub(super) scope: Option<i64>,
}

impl Binding {
    /// Whether it binds `name`.
    pub(super) fn binds(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

#[derive(Default)]
pub(super) struct Resolver {
    /// link group → the definitions in files of its languages. A reference looks only
    /// in its own file's group ([`Resolver::names_for`]), so no rule below can link
    /// languages that [`Language::links_to`] keeps apart.
    pub(super) groups: HashMap<Language, Names>,
    /// symbol id → its parent's id, and the last segment of its qualified name's scope
    /// (`Accels` for `Accels.needles`: a method of an `impl` has no parent symbol).
    pub(super) parents: HashMap<i64, (Option<i64>, Option<Box<str>>)>,
    /// file → its imports that bind names, in import order.
    pub(super) imports: HashMap<i64, Vec<Binding>>,
    /// file → (module, target file), by module then target path: file ids follow the
    /// order parser threads finish in, so they must never decide between two targets.
    pub(super) deps: HashMap<i64, Vec<(String, i64)>>,
    /// file → its path's last component without the extension (`xml/dom/minidom.py` →
    /// `minidom`), to tell a submodule an import names from the module itself.
    pub(super) stems: HashMap<i64, String>,
    /// file → its path, for the files of the definitions read, the files resolving and
    /// the files they import.
    pub(super) paths: HashMap<i64, Box<str>>,
    /// Every path of the map, with the repository's Rust crates: what a Rust path names
    /// ([`Resolver::resolve_module_path`]), by the rules `use` resolves with.
    pub(super) modules: PathIndex,
}

/// What [`Resolver::load`] reads: everything, or only what references named `names` in
/// `files` need.
pub(super) struct Needs<'a> {
    pub(super) names: &'a BTreeSet<&'a str>,
    pub(super) files: &'a BTreeSet<i64>,
}

impl Resolver {
    /// Loads the definitions, parents, imports and deps reference resolution uses: of the
    /// whole map in one pass per table (`needs` is `None`), or only what resolving the
    /// references named `needs.names` in `needs.files` needs, by indexed lookups. A rescan
    /// after a few edits resolves a few files' references; loading every definition of a
    /// 50,000-file map for it took 8.7 s and 339 MiB. The lookups need the map's
    /// secondary indexes (a first scan's bulk load drops them, and reads everything).
    pub(super) fn load(
        conn: &loci_store::rusqlite::Connection,
        needs: Option<Needs<'_>>,
    ) -> Result<Resolver> {
        let mut r = Resolver::default();
        let files = needs.as_ref().map(|n| n.files);
        if let Some(files) = files {
            r.read_scopes(conn, map::ScopesOf::Files, files)?;
        }
        match &needs {
            Some(needs) => r.read_definitions_with_bases(conn, needs.names)?,
            None => r.read_definitions(conn, None)?,
        }
        // Paths of the files the definitions read are in, and of the files resolving.
        let path_of: BTreeSet<i64> = r
            .groups
            .values()
            .flat_map(|n| n.defs.values())
            .flat_map(|d| d.all.iter().map(|d| d.file_id))
            .chain(files.into_iter().flatten().copied())
            .collect();
        r.read_paths(conn, needs.is_some().then_some(&path_of))?;
        r.read_imports(conn, files)?;
        // The files those import, for the names they re-export
        // ([`Resolver::resolve`]'s imported names), and the files of the classes read
        // with bases, which their bases are resolved from.
        if let Some(files) = files {
            let classes = r
                .groups
                .values()
                .flat_map(|names| names.types.values())
                .flat_map(|defs| &defs.all)
                .filter(|d| !d.bases.is_empty())
                .map(|d| d.file_id);
            let imported: BTreeSet<i64> = files
                .iter()
                .filter_map(|f| r.deps.get(f))
                .flatten()
                .map(|&(_, to)| to)
                .chain(classes)
                .filter(|to| !files.contains(to))
                .collect();
            r.read_imports(conn, Some(&imported))?;
        }
        Ok(r)
    }

    /// Reads the definitions of `wanted` names (of every name when `None`, and then every
    /// symbol's scope too: each is a definition read), in place of those read before.
    pub(super) fn read_definitions(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        wanted: Option<&BTreeSet<&str>>,
    ) -> Result<()> {
        self.groups.clear();
        self.add_definitions(conn, wanted)
    }

    /// Reads the definitions of `names` in place of those read before, with those of the
    /// scopes read so far (a method's class, `Leaf` for `Leaf.go`) and of every base the
    /// classes read declare, transitively: what [`Resolver::inherited_by_class`]
    /// follows.
    pub(super) fn read_definitions_with_bases(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        names: &BTreeSet<&str>,
    ) -> Result<()> {
        let mut read: BTreeSet<String> = names
            .iter()
            .map(|n| n.to_string())
            .chain(
                self.parents
                    .values()
                    .filter_map(|(_, owner)| owner.as_deref().map(str::to_string)),
            )
            .collect();
        let mut next = read.clone();
        self.groups.clear();
        while !next.is_empty() {
            let wanted: BTreeSet<&str> = next.iter().map(String::as_str).collect();
            self.add_definitions(conn, Some(&wanted))?;
            let bases: BTreeSet<String> = self
                .groups
                .values()
                .flat_map(|names| names.types.values())
                .flat_map(|defs| &defs.all)
                .flat_map(|d| d.bases.iter())
                .map(|base| base.rsplit('.').next().unwrap_or(base).to_string())
                .filter(|base| !read.contains(base))
                .collect();
            read.extend(bases.iter().cloned());
            next = bases;
        }
        Ok(())
    }

    /// Adds the definitions of `wanted` names (see [`Resolver::read_definitions`]) to those
    /// read before, which hold none of them.
    fn add_definitions(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        wanted: Option<&BTreeSet<&str>>,
    ) -> Result<()> {
        let mut uncallable: HashSet<i64> = HashSet::new();
        map::each_definition(conn, wanted, |d| {
            let map::DefinitionRow {
                name,
                symbol_id: id,
                file_id,
                parent_id: parent,
                qualified_name: qualified,
                kind,
                parent_kind,
                language,
                signature,
            } = d;
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
            let returns = match (parsed, &signature) {
                (Some(l), Some(signature)) if kind == "function" || kind == "method" => {
                    l.return_type(signature, &name).map(String::into_boxed_str)
                }
                _ => None,
            };
            let bases = match (parsed, &signature) {
                (Some(l), Some(signature)) if is_type_kind(&kind) => l
                    .bases(signature, &name)
                    .into_iter()
                    .map(String::into_boxed_str)
                    .collect(),
                _ => Box::default(),
            };
            let def = Def {
                id,
                parent,
                owner,
                top_member,
                module: kind == "module",
                textual: kind == "macro",
                member,
                file_id,
                returns,
                bases,
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
            if kind == "macro" {
                let macros = names.macros.entry(name.clone()).or_default();
                macros.by_file.push((file_id, macros.all.len() as u32));
                macros.all.push(def.clone());
            }
            // A Rust macro is invoked as `m!(..)` (a reference of kind macro), never called.
            if !is_callable_kind(&kind) || (kind == "macro" && parsed == Some(Language::Rust)) {
                uncallable.insert(id);
            }
            let defs = names.defs.entry(name).or_default();
            defs.by_file.push((file_id, defs.all.len() as u32));
            defs.all.push(def);
        })?;
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
                .chain(names.macros.values_mut())
                .chain(names.callables.values_mut())
            {
                defs.by_file.sort_unstable();
            }
        }
        Ok(())
    }

    /// Reads the paths of the files `ids` (of every file when `None`).
    pub(super) fn read_paths(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        ids: Option<&BTreeSet<i64>>,
    ) -> Result<()> {
        Ok(map::each_file_path(conn, ids, |id, path| {
            self.paths.insert(id, path.into());
        })?)
    }

    /// Reads the scopes ([`Resolver::parents`]) of the symbols of the files, or of the
    /// ids, `keys` (`of`).
    pub(super) fn read_scopes(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        of: map::ScopesOf,
        keys: &BTreeSet<i64>,
    ) -> Result<()> {
        let mut keys = std::borrow::Cow::Borrowed(keys);
        let mut of = of;
        // The definitions around them too, transitively: what a reference's enclosing
        // class and the imports it sees ([`Resolver::imports_seen`]) are looked up along.
        while !keys.is_empty() {
            let mut around = BTreeSet::new();
            map::each_scope(conn, of, &keys, |id, parent, qualified| {
                around.extend(parent);
                self.parents.insert(id, (parent, owner_of(&qualified)));
            })?;
            around.retain(|p| !self.parents.contains_key(p));
            keys = std::borrow::Cow::Owned(around);
            of = map::ScopesOf::Symbols;
        }
        Ok(())
    }

    /// The imports of `file_id` whose names a reference written in `enclosing` sees: those
    /// written in it or in a definition around it, innermost first, then the file's
    /// module-level ones. An import written in another definition binds nothing here.
    pub(super) fn imports_seen(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
    ) -> impl Iterator<Item = &Binding> + '_ {
        let imports = self.imports.get(&file_id).map_or(&[][..], Vec::as_slice);
        let scoped = imports.iter().any(|b| b.scope.is_some());
        let mut around: Vec<i64> = Vec::new();
        let mut at = enclosing.filter(|_| scoped);
        while let Some(id) = at
            && around.len() < MAX_SCOPE_DEPTH
        {
            around.push(id);
            at = self.parents.get(&id).and_then(|&(parent, _)| parent);
        }
        let inner = around
            .into_iter()
            .flat_map(move |s| imports.iter().filter(move |b| b.scope == Some(s)));
        inner.chain(imports.iter().filter(|b| b.scope.is_none()))
    }

    /// Reads the imports and resolved imports (deps) of the files `files` (of every file
    /// when `None`).
    pub(super) fn read_imports(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        files: Option<&BTreeSet<i64>>,
    ) -> Result<()> {
        map::each_naming_import(conn, files, |file_id, module, names, scope| {
            self.imports.entry(file_id).or_default().push(Binding {
                module,
                names: split_names(&names),
                scope,
            });
        })?;
        Ok(map::each_resolved_dep(
            conn,
            files,
            |from, module, to, path| {
                self.deps.entry(from).or_default().push((module, to));
                self.stems.entry(to).or_insert_with(|| stem_of(&path));
                self.paths.entry(to).or_insert_with(|| path.into());
            },
        )?)
    }

    /// The definitions a reference written in file `file_id` may resolve to: those of
    /// its language's link group ([`Language::link_group`]); none for a file of no parsed
    /// language.
    pub(super) fn names_for(&self, file_id: i64) -> Option<&Names> {
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p))?;
        self.groups.get(&language.link_group())
    }

    /// Whether a definition in file `to` can be what a name written in file `from` means
    /// without an import binding that name: `to` is in `from`'s package
    /// ([`PathIndex::package_of`]) or in a package `from` imports a file of. A crate never
    /// means another crate's `Result` or `Ok` unless it imports from that crate.
    pub(super) fn reachable(&self, from: i64, to: i64) -> bool {
        let package = |f: i64| {
            self.modules
                .package_of(self.paths.get(&f).map_or("", |p| &**p))
        };
        let target = package(to);
        from == to
            || package(from) == target
            || self
                .deps
                .get(&from)
                .is_some_and(|deps| deps.iter().any(|(_, t)| package(*t) == target))
    }

    /// Whether `target` is a definition of `name` in file `file_id`.
    pub(super) fn defined_in(&self, file_id: i64, name: &str, target: i64) -> bool {
        self.names_for(file_id)
            .and_then(|n| n.defs.get(name))
            .is_some_and(|defs| defs.in_file(file_id).any(|(_, d)| d.id == target))
    }
}

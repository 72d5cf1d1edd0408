//! The resolution rules: which definition a reference names (same file, imported names,
//! imported files, unique global name, typed receivers, module paths), with a
//! provenance and a confidence.

use loci_core::{Import, Language, Receiver, RefKind, Span};

use super::resolver::{Binding, Def, Defs, Resolver};

impl Resolver {
    /// Resolves a reference's `name`, written in file `file_id` inside definition
    /// `enclosing`, looked up on `receiver` (see [`Receiver`]). Returns the target's row
    /// id, provenance and confidence.
    ///
    /// A `type` reference (`kind`: a type named in a signature, a field, an annotation)
    /// looks only at the definitions that are types; every other kind at all of them.
    ///
    /// A bare name ([`Receiver::None`]), in order: a name imported by a resolved import
    /// (stated, 1.0); a definition in the same file (derived, 0.9; a sibling of the
    /// enclosing definition first); nothing more for a name imported only from modules
    /// outside the map ([`Resolver::imported_from_outside`]); a definition in an imported
    /// file (derived, 0.7, or 0.5 when several), where an import binds only what it names
    /// (Python, Rust: `Resolution::names_imported`) a file a glob imports; the only
    /// definition of that name anywhere, if the use's package sees it
    /// ([`Resolver::reachable`]; derived, 0.5) and the file may have it
    /// ([`Resolver::unimported`]); otherwise unresolved.
    ///
    /// A name on the enclosing object or type (`self.f()`, `this.f()`, `Self::f()`,
    /// [`Receiver::Own`]): the same rules without the import one (a member is never the
    /// imported module-level name of the same spelling). A member written on the name of
    /// a type the file defines (`Foo::new()`) never gets here: its file resolved it
    /// ([`loci_core::Reference::target`], derived, 0.9). In a language with inheritance,
    /// `self.f()` in a class that does not define `f` is first the `f` its bases give
    /// ([`Resolver::inherited_by_class`]).
    ///
    /// A name on something the file imports (`util.fmt()` after `from . import util`,
    /// [`Receiver::Imported`]): the bare-name rules without the import and same-file ones
    /// (what an import brings in is defined elsewhere): a definition in an imported file
    /// (0.7, or 0.5 when several), or one such a file re-exports (`unittest.TestCase`,
    /// which `unittest/__init__.py` imports from `.case`), else the only definition
    /// anywhere (0.5). A name used
    /// under its import's alias (`g()` after `from m import f as g`, the reference to `f`
    /// on the import) is the imported name first (stated, 1.0), and nothing more when
    /// only modules outside the map import it or its import binds no file of the map
    /// (`use crossbeam_deque::Worker as Deque;` beside the file's own `Worker`).
    ///
    /// A name on any other receiver (`self.meta.is_match(x)`, `obj.parse()`,
    /// [`Receiver::Other`]): the map knows the receiver's text, not its type, so a
    /// same-named definition is only a guess. A definition in the same file or in one
    /// imported file gets 0.3 (the same file's methods of *other* types first, as the
    /// enclosing type would have been written `self`); several imported candidates, or
    /// only the one definition of that name anywhere, get 0.2. 0.3 sits below every
    /// bare-name guess (0.5 and up), so a receiver call never outranks a bare call's
    /// evidence, and stays above 0, so `callers` still lists it, marked as a guess.
    pub(super) fn resolve(
        &self,
        file_id: i64,
        name: &str,
        kind: RefKind,
        enclosing: Option<i64>,
        receiver: Receiver,
        receiver_name: Option<&str>,
    ) -> (Option<i64>, &'static str, f64) {
        // A type named in a signature, field or annotation is a type, never an enum
        // variant of the same name (`Path` in `fn f(p: &Path)` is no `ClaimKind::Path`).
        // Only the definitions of languages this file's links to: never a same-named one
        // of another language (see `Language::link_group`).
        let Some(names) = self.names_for(file_id) else {
            return (None, "derived", 0.0);
        };
        let defs = match kind {
            RefKind::Type => names.types.get(name),
            RefKind::Call => names.callables.get(name).or_else(|| names.defs.get(name)),
            RefKind::Macro => names.macros.get(name),
            _ => names.defs.get(name),
        };
        let Some(defs) = defs else {
            return (None, "derived", 0.0);
        };
        // On an import only other definitions see: on a value ([`Resolver::bound_elsewhere`]).
        if receiver == Receiver::Imported && self.bound_elsewhere(file_id, enclosing, receiver_name)
        {
            return self.resolve(
                file_id,
                name,
                kind,
                enclosing,
                Receiver::Other,
                receiver_name,
            );
        }
        // A value whose type its file made evident (`rt.block_on(..)` after `let rt =
        // Runtime::new()?`): its type expression evaluated through the map's declared
        // return types, then a member of that type (derived: the type is inferred, never
        // proven; [`TYPED_CERTAIN`] where the type's name is bound as a stated edge would
        // be). Otherwise the value's type is unknown here (a call the map cannot follow, a
        // method a trait or a base class gives): a name on another value.
        if receiver == Receiver::Typed {
            if let Some(ty) = receiver_name.and_then(|e| self.evaluate(file_id, enclosing, e)) {
                // Where members come from base classes, the class the file names by the type
                // holds the member or inherits it: a namesake class elsewhere defining it
                // (`c/Base.java#Base.only` for `super.only()` under `import a.Base;`) is
                // not it, once every base of the class is known (a base the map does not
                // resolve, `class Bdb(_bdb.Bdb)`, may be where the member is).
                let inherits = self
                    .paths
                    .get(&file_id)
                    .and_then(|p| Language::from_path(p))
                    .is_some_and(|l| !l.spec().resolution.own_by_type);
                // Asked only of a member found, as finding the class walks its bases.
                let of_class = |id: i64| {
                    !inherits
                        || self
                            .class_named(file_id, enclosing, &ty, 0)
                            .filter(|(class, _)| self.bases_known(class, 0))
                            .is_none_or(|(class, _)| {
                                defs.all
                                    .iter()
                                    .any(|d| d.id == id && d.parent == Some(class.id))
                            })
                };
                if let Some((Some(id), provenance, confidence)) =
                    self.member_of_named_type(file_id, enclosing, defs, Receiver::Other, Some(&ty))
                    && of_class(id)
                {
                    return if provenance == "stated" {
                        (Some(id), "derived", TYPED_CERTAIN)
                    } else {
                        (Some(id), provenance, confidence)
                    };
                }
                if let Some(found) = self.inherited_by_type(file_id, enclosing, defs, &ty) {
                    return found;
                }
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
        // A name used under the alias its import gives it (`from m import f as g`, `use
        // a::f as g;`: the reference is to `f`, on the import) is the name the import binds,
        // and never a namesake in its own file; nor a member of a type of its name (`Q()`
        // after `from m import Parser as Q` is no `Parser.Parser`).
        let aliased = receiver == Receiver::Imported && receiver_name == Some(name);
        if !aliased
            && let Some(found) =
                self.member_of_named_type(file_id, enclosing, defs, receiver, receiver_name)
        {
            return found;
        }
        // A Rust path names a module or a type, which the rules above follow; past them it
        // is no same-named definition nearby (`RangedI64ValueParser::<i64>::new()` is not
        // the `BoolValueParser.new` beside it).
        if receiver == Receiver::Path {
            return (None, "derived", 0.0);
        }
        if (receiver == Receiver::None || aliased)
            && let Some(found) = match kind {
                RefKind::Macro => self.imported_macro(file_id, enclosing, name, defs),
                _ => None,
            }
            .or_else(|| self.resolve_imported_name(file_id, enclosing, name, defs, deps))
        {
            return found;
        }
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p));
        // `self.m()` in a class that does not define `m`, in a language with inheritance
        // (and a bare call in a method where a bare name may be a member: Java's
        // `helper()` is `this.helper()`): the `m` a base defines.
        let resolution = language.map(|l| l.spec().resolution).unwrap_or_default();
        let on_own = receiver == Receiver::Own
            || (receiver == Receiver::None
                && kind == RefKind::Call
                && !resolution.explicit_members);
        if on_own
            && !resolution.own_by_type
            && let Some(class) = self.enclosing_class(file_id, enclosing)
            && let Some(found) = self.inherited_by_class(defs, class)
        {
            return found;
        }
        let admits = Admits {
            receiver,
            kind,
            enclosing,
            enclosing_scope: enclosing.and_then(|k| self.parents.get(&k)),
            explicit_members: language.is_some_and(|l| l.spec().resolution.explicit_members),
            values_are_members: language.is_some_and(|l| l.spec().resolution.values_are_members),
            name,
        };
        if let Some(found) = self.resolve_in_file(file_id, defs, &admits, language, other) {
            return found;
        }
        if (receiver == Receiver::None || aliased)
            && self.imported_from_outside(file_id, enclosing, name, language, deps)
            || aliased && self.bound_by(file_id, enclosing, name, language).is_empty()
        {
            return (None, "derived", 0.0);
        }
        if receiver == Receiver::None
            && let Some(found) = match kind {
                RefKind::Macro => self.macro_of_crate(file_id, defs),
                _ => self.resolve_in_package(file_id, defs, language),
            }
        {
            return found;
        }
        self.resolve_in_imported_files(file_id, defs, &admits, language, receiver_name, other)
    }

    /// A macro the file imports by name where the reference is written (`use
    /// tracing::trace;`, or as `use log::info as linfo;`), else by a glob (`use
    /// tracing::*;`): the one the import's path names (`tracing::trace!`), as
    /// `#[macro_export]` puts a macro at its crate's root.
    fn imported_macro(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        name: &str,
        defs: &Defs,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        let by_name = self
            .imports_seen(file_id, enclosing)
            .filter(|b| b.binds(name));
        let by_glob = self
            .imports_seen(file_id, enclosing)
            .filter(|b| b.binds("*"));
        by_name.chain(by_glob).find_map(|binding| {
            let path = binding.module.replace("::", ".");
            let found = self.resolve_module_path(file_id, name, defs, &path);
            found.0.is_some().then_some(found)
        })
    }

    /// A bare name the file imports by name (`from m import f`) where the reference is
    /// written (`enclosing`): a module-level definition of that name in a file the import
    /// resolved to, stated (1.0).
    fn resolve_imported_name(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        name: &str,
        defs: &Defs,
        deps: Option<&Vec<(String, i64)>>,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        for Binding { module, names, .. } in self.imports_seen(file_id, enclosing) {
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
            let targets: Vec<i64> = own
                .into_iter()
                .chain(submodules)
                .map(|(_, to)| *to)
                .collect();
            if let Some(id) = targets.iter().find_map(|&to| module_level(defs, to)) {
                return Some((Some(id), "stated", 1.0));
            }
            // A file that imports the name itself re-exports it (`pub use
            // crate::throughput::Throughput;` in `lib.rs`, `from .decoder import
            // JSONDecoder` in a package's `__init__.py`): the name is its import's, one
            // file further.
            if let Some(id) = targets
                .iter()
                .find_map(|&to| self.reexported(to, name, defs))
            {
                return Some((Some(id), "stated", 1.0));
            }
        }
        None
    }

    /// The module-level definition of `name` (`defs`) that the file `file_id` imports by
    /// name, or by a glob (`from .runners import *`), from a file it resolved to: what it
    /// re-exports. An import anywhere in it counts: at module level, in an inline module
    /// (`mod unix { pub use … }`), or in a function (the lazy `__getattr__` of
    /// `concurrent/futures/__init__.py`); this is asked only of a file that does not define
    /// the name itself.
    fn reexported(&self, file_id: i64, name: &str, defs: &Defs) -> Option<i64> {
        let deps = self.deps.get(&file_id)?;
        self.imports
            .get(&file_id)?
            .iter()
            .filter(|b| b.binds(name) || b.binds("*"))
            .flat_map(|b| deps.iter().filter(move |(m, _)| *m == b.module))
            .find_map(|&(_, to)| module_level(defs, to))
    }

    /// Whether the file imports `name` by name only from modules outside the map (`use
    /// std::collections::HashMap;`, Python's `from _ssl import SSLError`): then it is
    /// theirs, never a same-named definition in another file of the repository. Outside
    /// the map is an import that resolved to no file, in a language whose import rules
    /// are all known here; in Rust, the standard library's crates (a path's first segment
    /// may name a local module, or a crate the map holds).
    fn imported_from_outside(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        name: &str,
        language: Option<Language>,
        deps: Option<&Vec<(String, i64)>>,
    ) -> bool {
        let outside = |module: &str| match language {
            Some(Language::Rust) => {
                let first = module.split("::").next().unwrap_or(module);
                matches!(first, "std" | "core" | "alloc")
                    && !self.modules.rust_crates.contains_key(first)
            }
            // A relative import (`from .compat import X`) names the repository's own code,
            // whether or not it resolved.
            Some(l) => l.spec().resolution.bindings_known && !module.starts_with('.'),
            None => false,
        };
        let mut binding = self
            .imports_seen(file_id, enclosing)
            .filter(|b| b.binds(name))
            .peekable();
        binding.peek().is_some()
            && binding.all(|b| {
                !deps.into_iter().flatten().any(|(m, _)| *m == b.module) && outside(&b.module)
            })
    }

    /// A definition in the reference's own file ([`SAME_FILE_CONFIDENCE`]; 0.3 on another
    /// value), preferring a member of the enclosing type, then a sibling, then a
    /// top-level one; `self.f()` where only a member of the enclosing type may answer
    /// ([`own_by_type`]) looks for that type elsewhere.
    fn resolve_in_file(
        &self,
        file_id: i64,
        defs: &Defs,
        admits: &Admits<'_>,
        language: Option<Language>,
        other: bool,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        let receiver = admits.receiver;
        let enclosing = admits.enclosing;
        let enclosing_scope = admits.enclosing_scope;
        let same: Vec<&Def> = if receiver == Receiver::Imported {
            Vec::new()
        } else {
            defs.in_file(file_id)
                .map(|(_, d)| d)
                .filter(|d| admits.eligible(d))
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
                return Some((Some(best.id), "derived", 0.3));
            }
            // On the enclosing type (`self.len()`): a member of that type, by its name
            // (the methods of an `impl` have no parent symbol), never the first same-named
            // member of another type in key order (`self.len()` in `impl<A> Accels<A>` is
            // not `Accel.len` beside it).
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
                return Some(self.resolve_own_elsewhere(file_id, defs, enclosing_owner));
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
            return Some((Some(best.id), "derived", SAME_FILE_CONFIDENCE));
        }
        if receiver == Receiver::Own {
            let enclosing_owner = enclosing_scope.and_then(|(_, o)| o.as_deref());
            if own_by_type(language, enclosing_owner) {
                return Some(self.resolve_own_elsewhere(file_id, defs, enclosing_owner));
            }
        }
        None
    }

    /// Go: a package is its directory, and every file of it sees the others' names; a
    /// bare name defined once in the package gets [`SAME_FILE_CONFIDENCE`], else 0.7.
    fn resolve_in_package(
        &self,
        file_id: i64,
        defs: &Defs,
        language: Option<Language>,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        if !language.is_some_and(|l| l.spec().resolution.directory_packages) {
            return None;
        }
        let here = self.paths.get(&file_id)?;
        let dir = here.rsplit_once('/').map_or("", |(d, _)| d);
        let package: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| {
                !d.member
                    && self.paths.get(&d.file_id).is_some_and(|p| {
                        Language::from_path(p) == language
                            && p.rsplit_once('/').map_or("", |(d, _)| d) == dir
                    })
            })
            .collect();
        let d = package.first()?;
        let confidence = if package.len() == 1 {
            SAME_FILE_CONFIDENCE
        } else {
            0.7
        };
        Some((Some(d.id), "derived", confidence))
    }

    /// A bare macro invocation its file neither defines nor imports: the macro of that
    /// name at the top level of a file of its own package (a Rust crate's `macro_rules!`
    /// are in scope by their text: `#[macro_use] mod macros;` puts them in every module
    /// after it; one written in a function or a `mod tests` is seen there only), when it
    /// has one (variants of one definition are one), derived 0.7; another crate's
    /// namesake (`tracing`'s exported `debug!` beside clap's own) does not make it
    /// ambiguous.
    fn macro_of_crate(
        &self,
        file_id: i64,
        defs: &Defs,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        let package = |f: i64| {
            self.modules
                .package_of(self.paths.get(&f).map_or("", |p| &**p))
        };
        let here = package(file_id);
        let mut own = defs
            .all
            .iter()
            .filter(|d| d.parent.is_none() && d.owner.is_none() && package(d.file_id) == here);
        let one = own.next()?;
        own.all(|d| variants(d, one))
            .then_some((Some(one.id), "derived", 0.7))
    }

    /// Definitions in imported files (0.7 when one answers, 0.5 when several; 0.3 and 0.2
    /// on another value), else the only definition anywhere (0.5, or 0.2).
    fn resolve_in_imported_files(
        &self,
        file_id: i64,
        defs: &Defs,
        admits: &Admits<'_>,
        language: Option<Language>,
        receiver_name: Option<&str>,
        other: bool,
    ) -> (Option<i64>, &'static str, f64) {
        let receiver = admits.receiver;
        let deps = self.deps.get(&file_id);
        // Definitions in imported files: how many, and the first in key order. On an
        // imported name (`util.Open()`), the files of the imports that bind that name
        // only, never the `Open` of another package the file imports.
        let bound = receiver_name
            .filter(|_| receiver == Receiver::Imported)
            .and_then(|r| r.split('.').next())
            .map(|binding| self.bound_by(file_id, admits.enclosing, binding, language));
        // Where the language's import rules are all known here, a name on an import that
        // binds no file of the map is outside it (`threading.Lock()`, Go `net.Dial()`): not
        // a same-named definition anywhere (`asyncio/locks.py#Lock`, `Socket.Dial`).
        let bindings_known = language.is_some_and(|l| l.spec().resolution.bindings_known);
        if bindings_known && bound.as_ref().is_some_and(|files| files.is_empty()) {
            return (None, "derived", 0.0);
        }
        // A bare name, where an import binds only what it names: the files its globs
        // import (`open()` after `import bz2` is the builtin, never `bz2.open`).
        let globbed = receiver == Receiver::None
            && language.is_some_and(|l| l.spec().resolution.names_imported);
        let globs = |module: &str| {
            self.imports_seen(file_id, admits.enclosing)
                .any(|b| b.module == module && b.binds("*"))
        };
        let mut targets: Vec<i64> = bound
            .clone()
            .filter(|files| !files.is_empty())
            .unwrap_or_else(|| {
                deps.into_iter()
                    .flatten()
                    .filter(|(module, _)| !globbed || globs(module))
                    .map(|(_, to)| *to)
                    .collect()
            });
        targets.sort_unstable();
        targets.dedup();
        // On an imported module's name (`logging.getLogger()` after `import logging`) a
        // module-level definition is meant, not a method beside it (such as
        // `Manager.getLogger`, first in key order). Members are the fallback.
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
                        || !admits.eligible(d)
                        || !admits.visible(d)
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
        // A package that defines no such name but re-exports it (`unittest.TestCase`, which
        // `unittest/__init__.py` imports from `.case`): the definition it imports, as sure
        // as one it defined.
        if first.is_none() && receiver == Receiver::Imported {
            first = bound
                .iter()
                .flatten()
                .filter_map(|&to| self.reexported(to, admits.name, defs))
                .filter_map(|id| defs.all.iter().position(|d| d.id == id))
                .find(|&i| admits.eligible(&defs.all[i]))
                .map(|i| i as u32);
            imported = usize::from(first.is_some());
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
        // (a type declared in a function or module is reached through an import, so a
        // test's local `type Row` does not take every `Row` of the repository). Only in
        // languages linked to the use's, as every rule here, and where the use's package
        // sees it. On an imported module's name (`unittest.skipUnless` re-exported by the
        // package's `__init__.py`), only a top-level one: `os.write` is no method `write`.
        // Never for a constant read by its name (kind other): upper-case names repeat across
        // unrelated modules (`ARITH` in `ast.py` is no `test_decimal.py#ARITH`), and a
        // module reads its own, its imports' or its star imports' ones.
        // Nor for a bare name its file does not import where every name a file uses is
        // imported ([`Resolver::unimported`]). Variants of one definition are one.
        let Some(one) = defs.all.first() else {
            return (None, "derived", 0.0);
        };
        if defs.all.iter().all(|d| variants(d, one))
            && admits.kind != RefKind::Other
            && (one.textual || !self.unimported(file_id, admits, language))
            && self.reachable(file_id, one.file_id)
            && admits.eligible(one)
            && admits.visible(one)
            && !(on_module && (one.parent.is_some() || one.owner.is_some()))
            && (admits.kind != RefKind::Type || one.owner.is_none())
        {
            return (Some(one.id), "derived", if other { 0.2 } else { 0.5 });
        }
        (None, "derived", 0.0)
    }
}

impl Resolver {
    /// Whether the bare name of `admits` is one its file does not import (by name, nor by
    /// a glob that did not resolve, which may bring it; a resolved glob's files are
    /// [`Resolver::resolve_in_imported_files`]), in a language where every name
    /// a file uses is defined in it, imported or the language's prelude
    /// (`Resolution::names_imported`): then it is never the one definition of that name
    /// anywhere (a bare `Result` in Rust is the prelude's, not another module's private
    /// `type Result`), unless that is a macro, in scope by its text (`tri!` of
    /// serde_json's `lib.rs`).
    fn unimported(&self, file_id: i64, admits: &Admits<'_>, language: Option<Language>) -> bool {
        let resolved = |module: &str| {
            self.deps
                .get(&file_id)
                .is_some_and(|deps| deps.iter().any(|(m, _)| m == module))
        };
        admits.receiver == Receiver::None
            && language.is_some_and(|l| l.spec().resolution.names_imported)
            && !self
                .imports_seen(file_id, admits.enclosing)
                .any(|b| b.binds(admits.name) || (b.binds("*") && !resolved(&b.module)))
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
    /// is not in the map or declares no type the map can follow. Written in `enclosing`,
    /// whose imports it sees.
    pub(super) fn evaluate(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        expr: &str,
    ) -> Option<String> {
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
                                (Some(d), None) if self.reachable(file_id, d.file_id) => Some(d),
                                _ => None,
                            }
                        })?
                }
                Some(ty) => {
                    let (Some(id), _, _) = self.member_of_named_type(
                        file_id,
                        enclosing,
                        defs,
                        Receiver::Other,
                        Some(ty),
                    )?
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
    /// file, then in imported files, then anywhere its package sees
    /// ([`Resolver::reachable`]). `None` when the rule does not decide (no receiver name,
    /// or a lower-case one no top-level type answers), for the rules after it.
    pub(super) fn member_of_named_type(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
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
        // name, in this file, then in imported files, then anywhere its package sees.
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
                d.owner.as_deref() == Some(type_name)
                    && placed(d)
                    && (capitalised || d.top_member)
                    && self.reachable(file_id, d.file_id)
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
            let (files, paths) =
                self.type_bound_in(file_id, enclosing, receiver, receiver_name, type_name);
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
    pub(super) fn folders_in_common(&self, a: i64, b: i64) -> usize {
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
    /// of another type beside it (no `Error.clone`, `Id.as_str` at 0.7–0.9).
    /// Only for Rust and Go ([`own_by_type`]): the other languages inherit members from
    /// base classes, which the same-file and import rules guess at.
    pub(super) fn resolve_own_elsewhere(
        &self,
        file_id: i64,
        defs: &Defs,
        owner: Option<&str>,
    ) -> (Option<i64>, &'static str, f64) {
        let members: Vec<&Def> = defs
            .all
            .iter()
            .filter(|d| d.owner.as_deref() == owner && self.reachable(file_id, d.file_id))
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
    pub(super) fn type_bound_in(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        receiver: Receiver,
        receiver_name: Option<&str>,
        type_name: &str,
    ) -> (Vec<i64>, Vec<String>) {
        let Some(path) = receiver_name else {
            return (Vec::new(), Vec::new());
        };
        match path.rsplit_once('.') {
            None => {
                // Where the reference is written, else anywhere in its file: a value's type
                // may be made in another method (`self.loop = BaseSelectorEventLoop()` in a
                // `setUp` that imports it).
                let binding = |b: &&Binding| b.binds(type_name);
                let mut modules: Vec<&str> = self
                    .imports_seen(file_id, enclosing)
                    .filter(binding)
                    .map(|b| b.module.as_str())
                    .collect();
                if modules.is_empty() {
                    let all = self.imports.get(&file_id).map_or(&[][..], Vec::as_slice);
                    modules = all
                        .iter()
                        .filter(binding)
                        .map(|b| b.module.as_str())
                        .collect();
                }
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
                    enclosing: None,
                };
                let paths =
                    loci_core::imports::resolve(Language::Rust, here, &import, &self.modules);
                (Vec::new(), paths)
            }
            Some(_) => (Vec::new(), Vec::new()),
        }
    }

    /// Whether the first segment of `receiver_name` is bound in file `file_id` only by
    /// imports that `enclosing` does not see: by name in other definitions, and by no
    /// module import (whose scope is not read: `import json` binds `json` file-wide). The
    /// parser marks a name on anything an import of its file binds, and such a name is a
    /// value here (`charset.get_body_encoding()` on a local `charset`, beside another
    /// method's `from email import charset`).
    fn bound_elsewhere(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        receiver_name: Option<&str>,
    ) -> bool {
        let Some(first) = receiver_name.and_then(|r| r.split('.').next()) else {
            return false;
        };
        let language = self
            .paths
            .get(&file_id)
            .and_then(|p| Language::from_path(p));
        let by_module = self.deps.get(&file_id).is_some_and(|deps| {
            deps.iter().any(|(module, _)| {
                language.is_some_and(|l| (l.spec().module_binding)(module) == Some(first))
            })
        });
        let by_name = |b: &&Binding| b.binds(first);
        !by_module
            && self
                .imports
                .get(&file_id)
                .is_some_and(|all| all.iter().any(|b| by_name(&b)))
            && !self.imports_seen(file_id, enclosing).any(|b| by_name(&b))
    }

    /// The files that the imports of `file_id` binding `binding` where `enclosing` sees
    /// them resolved to: those listing it as a name (`from . import util`, `use
    /// crate::de;`), and those whose module the language binds to it (Python `import
    /// os.path` binds `os`, Go `import "x/pkg/util"` binds `util`, Java `import a.b.Util;`
    /// binds `Util`).
    pub(super) fn bound_by(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        binding: &str,
        language: Option<Language>,
    ) -> Vec<i64> {
        let named: Vec<&str> = self
            .imports_seen(file_id, enclosing)
            .filter(|b| b.binds(binding))
            .map(|b| b.module.as_str())
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
    ///    (`std::fs::canonicalize(p)` is not the enclosing `canonicalize`, nor
    ///    serde_json's `crate::from_str(s)` the method `Map.from_str` beside it).
    pub(super) fn resolve_module_path(
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
                enclosing: None,
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
        // the one sharing most folders with the use. Variants of one definition are one
        // candidate.
        let rank = |d: &&&Def| {
            let common = self.folders_in_common(file_id, d.file_id);
            (stem_of(path_of(d)) != name, std::cmp::Reverse(common))
        };
        match exported.iter().min_by_key(rank) {
            Some(d) if exported.iter().all(|e| variants(e, d)) => (Some(d.id), "derived", 0.7),
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
pub(super) const SAME_FILE_CONFIDENCE: f64 = 0.9;

/// Whether `a` and `b` are variants of one definition: the same name in the same scope of
/// one file (`#[cfg(unix)]` and `#[cfg(not(unix))]` twins, the two arms of tokio's
/// `select!`, Python's `try: from _c import f` / `except ImportError: def f`).
fn variants(a: &Def, b: &Def) -> bool {
    a.file_id == b.file_id && a.owner == b.owner && a.parent == b.parent
}

/// A path's last component without its extensions: `xml/dom/minidom.py` → `minidom`.
pub(super) fn stem_of(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file).to_string()
}

/// The names a type expression calls (`rt()`, `Builder.new_multi_thread().build()`:
/// `rt`; `new_multi_thread`, `build`), none for any other name.
pub(super) fn called_names(expr: &str) -> impl Iterator<Item = &str> {
    expr.split('.').filter_map(|s| s.strip_suffix("()"))
}

/// Which definitions a reference's rules admit, given how and where it is written.
struct Admits<'a> {
    receiver: Receiver,
    kind: RefKind,
    /// The definition the reference is written in.
    enclosing: Option<i64>,
    /// The enclosing definition's parent and owner.
    enclosing_scope: Option<&'a (Option<i64>, Option<Box<str>>)>,
    /// In these languages a bare name is never a member of the enclosing type (that is
    /// written `self.f()`, `this.f()`, `$this->f()`, `Self::f()`), so never a member at
    /// all: a bare `Err(e)` in Rust is no enum variant `Foo::Err`, a bare `set(..)` in
    /// a Python method no method `Morsel.set` beside it.
    explicit_members: bool,
    /// A name on some other value is, in Rust, Go, Java, C# and C++, where a value is no
    /// module, a method or field of it: never a free function (a test's `fn min_depth`).
    /// In Python a value may be a module (`ssl = import_module('ssl')`), in JavaScript a
    /// function.
    values_are_members: bool,
    /// The name looked up.
    name: &'a str,
}

impl Admits<'_> {
    /// Whether `d` is written in the body around the reference. Python's class body is
    /// the exception to explicit members: `_deprecate(assertEqual)` written in it names
    /// the class's own `_deprecate`, and `class CompNone(CompBase)` in it the class's own
    /// `CompBase` (a class's bases are written in the scope around it).
    fn body(&self, d: &Def) -> bool {
        d.parent.is_some()
            && (d.parent == self.enclosing
                || (self.kind == RefKind::Inherit
                    && self.enclosing_scope.is_some_and(|(p, _)| d.parent == *p)))
    }

    /// Whether `d` may answer at all. A name on some other value (`wd.min_depth(..)`,
    /// `self._transport.close()`) is never the very definition the call is written in (a
    /// `close` calling another object's `close` is no recursion).
    fn eligible(&self, d: &Def) -> bool {
        if self.receiver == Receiver::Other {
            return (d.member || !self.values_are_members) && Some(d.id) != self.enclosing;
        }
        !(self.receiver == Receiver::None && self.explicit_members && d.member && !self.body(d))
    }

    /// Whether `d` may answer from another file: outside its file, a bare name is a
    /// top-level definition (a function's nested `callback` or a test module's `wrap` is
    /// not what a parameter or closure of that name in another file calls).
    fn visible(&self, d: &Def) -> bool {
        self.receiver != Receiver::None || (d.parent.is_none() && d.owner.is_none())
    }
}

/// The module-level definition among `defs` in the file `file_id`: no parent, and no
/// owner (the methods of an `impl` have no parent symbol, only their qualified name, so
/// `pub use crate::m::make` binds the free `make`, never a `D::make` beside it).
fn module_level(defs: &Defs, file_id: i64) -> Option<i64> {
    defs.in_file(file_id)
        .find(|(_, d)| d.parent.is_none() && d.owner.is_none())
        .map(|(_, d)| d.id)
}

//! Members a class inherits: `self.m()` in a class that does not define `m`, and a member
//! of a typed value's class that one of its bases defines, found through the bases each
//! class's signature declares ([`loci_core::Language::bases`]), each base resolved as the
//! class's file names it.

use loci_core::{Receiver, RefKind};

use super::resolver::{Def, Defs, Resolver};

/// How many classes up a base chain is followed: deeper is a cycle the map cannot tell
/// from a real chain (`class Error(Error)` naming an imported `Error` it did not resolve).
const MAX_DEPTH: usize = 8;

/// How many enclosing definitions up from a reference its class is looked for (a closure
/// in a method is two).
const MAX_NESTING: usize = 4;

impl Resolver {
    /// `self.m()` written in a method of `class` that does not define `m`, in a language
    /// with inheritance: the `m` of the first of its bases to define one, depth first in
    /// the order they are written (derived, with the lowest confidence of the bases
    /// followed and at most the same file's 0.9). `None` when `class` defines `m` itself
    /// or no base in the map defines it.
    pub(super) fn inherited_by_class(
        &self,
        defs: &Defs,
        class: &Def,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        if defs
            .in_file(class.file_id)
            .any(|(_, d)| d.parent == Some(class.id))
        {
            return None;
        }
        let (member, confidence) = self.inherited_member(defs, class, 0)?;
        Some((Some(member.id), "derived", confidence.min(0.9)))
    }

    /// A member named by `defs` on a value of type `path` (written in file `file_id`, in
    /// the definition `enclosing`) that the type's class does not define but one of its
    /// bases does: as [`Resolver::inherited_by_class`] finds it.
    pub(super) fn inherited_by_type(
        &self,
        file_id: i64,
        enclosing: Option<i64>,
        defs: &Defs,
        path: &str,
    ) -> Option<(Option<i64>, &'static str, f64)> {
        let (class, sure) = self.class_named(file_id, enclosing, path, 0).or_else(|| {
            // A value's type may be made in another method, whose import binds it
            // (`self.loop = BaseSelectorEventLoop()` in a `setUp` that imports it).
            let first = path.split('.').next()?;
            let imports = self.imports.get(&file_id)?;
            let scope = imports.iter().find(|b| b.binds(first))?.scope;
            self.class_named(file_id, scope, path, 0)
        })?;
        let (member, confidence) = self.inherited_member(defs, class, 0)?;
        Some((Some(member.id), "derived", sure.min(confidence).min(0.9)))
    }

    /// The class whose method `enclosing` is, or a function nested in one, in file
    /// `file_id`.
    pub(super) fn enclosing_class(&self, file_id: i64, enclosing: Option<i64>) -> Option<&Def> {
        let mut at = enclosing?;
        for _ in 0..MAX_NESTING {
            let (parent, owner) = self.parents.get(&at)?;
            let parent = (*parent)?;
            if let Some(class) = owner.as_deref().and_then(|o| self.class_by_id(o, parent)) {
                return (class.file_id == file_id).then_some(class);
            }
            at = parent;
        }
        None
    }

    /// The class definition `id`, named `name`, if its name's definitions are read.
    fn class_by_id(&self, name: &str, id: i64) -> Option<&Def> {
        self.groups
            .values()
            .find_map(|names| names.types.get(name)?.all.iter().find(|d| d.id == id))
    }

    /// The first member among `defs` that `class` inherits, depth first through its
    /// bases in order, with the lowest confidence of the bases resolved on the way.
    fn inherited_member<'d>(
        &self,
        defs: &'d Defs,
        class: &Def,
        depth: usize,
    ) -> Option<(&'d Def, f64)> {
        if depth >= MAX_DEPTH {
            return None;
        }
        // Bases are read where the class statement is written: in its parent.
        let written_in = self.parents.get(&class.id).and_then(|&(parent, _)| parent);
        class.bases.iter().find_map(|base| {
            let (base, sure) = self.class_named(class.file_id, written_in, base, class.id)?;
            let own = defs
                .in_file(base.file_id)
                .map(|(_, d)| d)
                .find(|d| d.parent == Some(base.id));
            match own {
                Some(d) => Some((d, sure)),
                None => self
                    .inherited_member(defs, base, depth + 1)
                    .map(|(d, c)| (d, c.min(sure))),
            }
        })
    }

    /// Whether every base of `class`, and of its bases in turn, is a class of the map: then
    /// what it has, it defines or inherits from them, and nothing else.
    pub(super) fn bases_known(&self, class: &Def, depth: usize) -> bool {
        if depth >= MAX_DEPTH {
            return false;
        }
        let written_in = self.parents.get(&class.id).and_then(|&(parent, _)| parent);
        class.bases.iter().all(|base| {
            self.class_named(class.file_id, written_in, base, class.id)
                .is_some_and(|(base, _)| self.bases_known(base, depth + 1))
        })
    }

    /// The class a type path written in file `file_id`, in the definition `written_in`,
    /// names (`Base`, `unittest.TestCase`), resolved as a base written there would be, with
    /// its confidence; never `except` itself (`class Error(Error)`).
    pub(super) fn class_named(
        &self,
        file_id: i64,
        written_in: Option<i64>,
        path: &str,
        except: i64,
    ) -> Option<(&Def, f64)> {
        let (module, name) = match path.rsplit_once('.') {
            Some((module, name)) => (Some(module), name),
            None => (None, path),
        };
        // `unittest.TestCase` is written on a name the file's imports bind, as the
        // parser marks it ([`Receiver::Imported`]); another dotted path is on a value.
        let receiver = match module {
            None => Receiver::None,
            Some(module) => {
                let first = module.split('.').next().unwrap_or(module);
                let language = self
                    .paths
                    .get(&file_id)
                    .and_then(|p| loci_core::Language::from_path(p));
                if self
                    .bound_by(file_id, written_in, first, language)
                    .is_empty()
                {
                    Receiver::Other
                } else {
                    Receiver::Imported
                }
            }
        };
        let (Some(id), _, confidence) = self.resolve(
            file_id,
            name,
            RefKind::Inherit,
            written_in,
            receiver,
            module,
        ) else {
            return None;
        };
        (id != except && confidence > 0.3)
            .then(|| self.class_by_id(name, id))
            .flatten()
            .map(|class| (class, confidence))
    }
}

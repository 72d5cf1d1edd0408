//! Reference resolution: the references of a scan's changed files (held packed until
//! every definition is known, or written unresolved by a bulk load and read back),
//! resolved to definitions with a provenance and a confidence, and the stored references
//! a change of names or imports may now resolve differently.

mod bases;
mod resolver;
mod rules;

use std::collections::{BTreeSet, HashMap, HashSet};

use loci_core::Receiver;
use loci_core::imports::PathIndex;
use loci_store::Store;
use loci_store::map::{self, RefRow, StoredRef};
use std::num::NonZeroI64;

use crate::Result;

use self::resolver::{Needs, Resolver};
use self::rules::{SAME_FILE_CONFIDENCE, called_names};

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
/// imports, never the map's definitions (990,000 on a 48,000-file map take 360 MiB).
/// The rows, and what each resolves to, are those [`PendingRefs::rows`] writes.
pub(super) fn resolve_written_refs(
    store: &mut Store,
    modules: PathIndex,
    batch: (i64, i64),
    at_once: i64,
) -> Result<()> {
    let definitions = map::count_all_symbols(store.conn())?;
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
        let rows = map::unresolved_refs_after(store.conn(), by_name, (&after.0, after.1), batch)?;
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
            resolver.parents.clear();
            resolver.read_scopes(store.conn(), map::ScopesOf::Symbols, &enclosing)?;
            resolver.read_definitions_with_bases(store.conn(), &names)?;
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
    // With `all`, every stored reference is read below, once the resolver is loaded.
    let (changed_names, deps_changed) = if all {
        (&BTreeSet::new(), &BTreeSet::new())
    } else {
        (changed_names, deps_changed)
    };
    let (stored, seen) =
        stored_to_resolve(store, &pending_files, changed_names, deps_changed, retarget)?;
    let resolver = load_resolver(store, &pending, &pending_files, &stored, modules, all)?;
    let mut updates: Vec<(i64, Option<i64>, &'static str, f64)> = stored
        .iter()
        .filter_map(|(row, force)| new_resolution(&resolver, row, *force))
        .collect();
    if all {
        // One pass over the table, a row at a time: memory holds the updates, never the
        // whole map's references.
        map::each_stored_ref(store.conn(), map::StoredRefs::All, |row| {
            if !pending_files.contains(&row.1) && !seen.contains(&row.0) {
                updates.extend(new_resolution(&resolver, &row, false));
            }
        })?;
    }
    write_resolutions(store, &pending, &resolver, &updates)?;
    rewrite_ref_deps(store, &pending_files, &stored, &updates, all)
}

/// Stored references of unchanged files that may resolve differently now (named
/// `changed_names`, in files whose deps changed, or whose target is to be redone), each
/// with whether to rewrite it even when it resolves as before; and the ids read.
#[allow(clippy::type_complexity)]
fn stored_to_resolve(
    store: &Store,
    pending_files: &HashSet<i64>,
    changed_names: &BTreeSet<String>,
    deps_changed: &BTreeSet<i64>,
    retarget: &BTreeSet<i64>,
) -> Result<(Vec<(StoredRef, bool)>, HashSet<i64>)> {
    let mut stored: Vec<(StoredRef, bool)> = Vec::new();
    let mut seen = HashSet::new();
    let conn = store.conn();
    let mut consider = |row: StoredRef, force: bool| {
        if !pending_files.contains(&row.1) && seen.insert(row.0) {
            stored.push((row, force));
        }
    };
    for name in changed_names {
        map::each_stored_ref(conn, map::StoredRefs::Named(name), |row| {
            consider(row, false)
        })?;
    }
    for file_id in deps_changed {
        map::each_stored_ref(conn, map::StoredRefs::InFile(*file_id), |row| {
            consider(row, false)
        })?;
    }
    // Their old target ids are gone even when the key survived: always rewrite.
    for ref_id in retarget {
        map::each_stored_ref(conn, map::StoredRefs::Id(*ref_id), |row| {
            consider(row, true)
        })?;
    }
    Ok((stored, seen))
}

/// The resolver for this pass: only what the pending and stored references need (their
/// names, and the calls of typed receivers' type expressions) when few files resolve and
/// the map's indexes are there, else the whole map.
fn load_resolver(
    store: &Store,
    pending: &PendingRefs,
    pending_files: &HashSet<i64>,
    stored: &[(StoredRef, bool)],
    modules: PathIndex,
    all: bool,
) -> Result<Resolver> {
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
    Ok(resolver)
}

/// A stored reference's new resolution (ref, target, provenance, confidence), if it must
/// be written: always when `force`, else when it changed.
fn new_resolution(
    resolver: &Resolver,
    row: &StoredRef,
    force: bool,
) -> Option<(i64, Option<i64>, &'static str, f64)> {
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
}

/// Writes the pending files' references, resolved, and the stored references' new
/// resolutions, in short transactions.
fn write_resolutions(
    store: &mut Store,
    pending: &PendingRefs,
    resolver: &Resolver,
    updates: &[(i64, Option<i64>, &'static str, f64)],
) -> Result<()> {
    for chunk in pending.files.chunks(256) {
        store.write(|tx| {
            for (file_id, range) in chunk {
                map::insert_refs(
                    tx,
                    *file_id,
                    pending.rows(*file_id, range.clone(), resolver),
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
    Ok(())
}

/// The file edges of resolved references (`ref_deps`): of every file whose references
/// were written or re-resolved; in one pass when that is most of the map (a first scan's
/// bulk load has no index to look them up by).
fn rewrite_ref_deps(
    store: &mut Store,
    pending_files: &HashSet<i64>,
    stored: &[(StoredRef, bool)],
    updates: &[(i64, Option<i64>, &'static str, f64)],
    all: bool,
) -> Result<()> {
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

//! Imports and file dependencies: writing a file's imports and resolved edges, the
//! edges from and to a file, and the importers of a file within a depth (`impact`).

use super::*;
use std::collections::HashSet;

/// Inserts a file's import statements; `symbol_ids` are the ids of the file's symbols, in
/// the order of its analysis (what [`Import::enclosing`] indexes).
pub fn insert_imports(
    tx: &Transaction<'_>,
    file_id: i64,
    imports: &[Import],
    symbol_ids: &[i64],
) -> Result<()> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO imports(file_id, module, names, line, enclosing_id) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .ctx(|| "preparing import insert".into())?;
    for i in imports {
        let enclosing = i.enclosing.and_then(|k| symbol_ids.get(k as usize));
        stmt.execute(params![
            file_id,
            i.module,
            i.names.join(","),
            i.span.line,
            enclosing
        ])
        .ctx(|| format!("inserting import {}", i.module))?;
    }
    Ok(())
}

/// Replaces the outgoing dependency edges of a file. `edges` are
/// `(module as written, resolved target file id or None, first line, count)`.
pub fn replace_deps(
    tx: &Transaction<'_>,
    from_file_id: i64,
    edges: &[(String, Option<i64>, u32, u32)],
) -> Result<()> {
    tx.prepare_cached("DELETE FROM deps WHERE from_file_id = ?1")
        .ctx(|| "clearing deps".into())?
        .execute([from_file_id])
        .ctx(|| "clearing deps".into())?;
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO deps(from_file_id, module, to_file_id, line, count) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .ctx(|| "preparing dep insert".into())?;
    for (module, to, line, count) in edges {
        stmt.execute(params![from_file_id, module, to, line, count])
            .ctx(|| format!("inserting dep {module}"))?;
    }
    Ok(())
}

/// A dependency edge between two files (or to an unresolved module).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DepEdge {
    /// Importing file.
    pub from: String,
    /// Imported file; `None` when unresolved.
    pub to: Option<String>,
    /// The module as written.
    pub module: String,
    /// Zero-based line of the first import statement behind the edge.
    pub line: u32,
    /// Number of import statements behind the edge.
    pub count: u32,
}

pub(super) fn dep_edge(r: &rusqlite::Row<'_>) -> rusqlite::Result<DepEdge> {
    Ok(DepEdge {
        from: r.get(0)?,
        to: r.get(1)?,
        module: r.get(2)?,
        line: r.get(3)?,
        count: r.get(4)?,
    })
}

/// Edges out of `path` (its imports), resolved and unresolved, ordered by module.
pub fn deps_from(conn: &Connection, path: &str) -> Result<Vec<DepEdge>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT a.path, b.path, d.module, d.line, d.count FROM deps d
             JOIN files a ON a.file_id = d.from_file_id
             LEFT JOIN files b ON b.file_id = d.to_file_id
             WHERE a.path = ?1 ORDER BY d.line, d.module, b.path",
        )
        .ctx(|| "reading deps".into())?;
    let rows = stmt
        .query_map([path], dep_edge)
        .ctx(|| format!("reading deps of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading deps of {path}"))
}

/// The import statements of `path` as (module as written, names imported: `*` for a
/// star import, none for a plain `import m`), in line order.
///
/// Errors: [`StoreError::Sqlite`] when the imports cannot be read.
pub fn file_imports(conn: &Connection, path: &str) -> Result<Vec<(String, Vec<String>)>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT i.module, i.names FROM imports i JOIN files f USING (file_id)
             WHERE f.path = ?1 ORDER BY i.line, i.import_id",
        )
        .ctx(|| "reading imports".into())?;
    let rows = stmt
        .query_map([path], |r| {
            let names: String = r.get(1)?;
            Ok((
                r.get(0)?,
                names
                    .split(',')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
            ))
        })
        .ctx(|| format!("reading imports of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading imports of {path}"))
}

/// Edges into `path` (the files that import it), ordered by importer.
pub fn deps_to(conn: &Connection, path: &str) -> Result<Vec<DepEdge>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT a.path, b.path, d.module, d.line, d.count FROM deps d
             JOIN files a ON a.file_id = d.from_file_id
             JOIN files b ON b.file_id = d.to_file_id
             WHERE b.path = ?1 ORDER BY a.path, d.line",
        )
        .ctx(|| "reading reverse deps".into())?;
    let rows = stmt
        .query_map([path], dep_edge)
        .ctx(|| format!("reading reverse deps of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading reverse deps of {path}"))
}

/// A file reached by [`importers_within`].
#[derive(Clone, Debug, PartialEq)]
pub struct Importer {
    /// The importing file.
    pub path: String,
    /// Hops from the target (1 = imports it directly).
    pub depth: u32,
    /// The file one hop closer to the target that it depends on (through the surest
    /// edge, then the smallest path, when it depends on several of that level).
    pub imports: String,
    /// Zero-based line of the first import statement behind that edge, or of the
    /// strongest reference.
    pub line: u32,
    /// `import`, or the kind of the strongest reference behind the edge (`call`, `type`,
    /// `inherit`) when the file does not import that one.
    pub kind: String,
    /// `stated` for an import; a reference's own.
    pub provenance: String,
    /// 1.0 for an import; a reference's own.
    pub confidence: f64,
}

/// What [`importers_within`] found: every importer counted, the nearest listed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Importers {
    /// Importers reached at each depth: `by_depth[0]` at depth 1, ...; up to the deepest
    /// level reached (empty when nothing imports the file).
    pub by_depth: Vec<u64>,
    /// The first `limit` importers by depth, then confidence (the surest first), then
    /// path (all of them for limit 0).
    pub listed: Vec<Importer>,
    /// Files of test, example and vendored code the walk reached and left out (asked
    /// without `secondary`): neither counted in `by_depth`, listed, nor walked through.
    pub secondary_left_out: u64,
}

/// Whether the `deps` row `d` only declares its file: a Rust `mod x;` (a `self::x` module
/// imported with no names), which compiles the module and uses nothing of it.
const DECLARES: &str = "(d.module LIKE 'self::%' AND instr(substr(d.module, 7), '::') = 0
     AND EXISTS(SELECT 1 FROM imports i WHERE i.file_id = d.from_file_id
                AND i.module = d.module AND i.names = ''))";

/// Above this many files whose paths a walk needs, they are read in one pass over the
/// path index instead of one lookup each (a lookup costs about five rows of the pass).
pub(super) const PATH_SCAN_MIN: usize = 256;

/// The files that depend on `path`, transitively, to `depth` hops: those that import it
/// (`deps`) and those whose references of kind call, type or inherit resolved into it
/// (`ref_deps`: a Java class of its package, a Go file of its directory, a Rust file
/// calling `crate::Deserializer::from_str()` without a `use`; only those at
/// `min_confidence` or more, and with `hard`, only stated ones). A breadth-first walk of
/// the reverse graph over file ids, one cached indexed lookup per file expanded
/// (`deps_by_target` and the key of `ref_deps`, in one statement). Each file is counted
/// once, at the depth it is first reached; `path` itself is not. A file that only
/// declares what it reached (a Rust `mod x;`, [`DECLARES`]) is a dependent, and the walk
/// goes no further through it: the files using the crate root use it for other modules'
/// sake. Only the first `limit`
/// dependents (0: all) are listed, by depth, then by the confidence of the surest edge
/// into the level before (an import, 1.0, first), then path, each with that edge, and
/// only the files of the levels those come from have
/// their paths read: the dependents of a widely imported module (CPython's
/// `urllib/parse.py` reaches over 800 files) are counted without a path lookup each.
/// Without `secondary`, test, example and vendored code ([`loci_core::secondary`]) is
/// left out: such a file is no dependent and the walk goes no further through it (every
/// test reaches the test suite's helpers; what depends on a test is tests), at one path
/// lookup per file reached.
///
/// Errors: [`StoreError::Sqlite`] when a read fails.
pub fn importers_within(
    conn: &Connection,
    path: &str,
    depth: u32,
    hard: bool,
    min_confidence: f64,
    secondary: bool,
    limit: u32,
) -> Result<Importers> {
    let ctx = || format!("walking the dependents of {path}");
    let Some(start) = conn
        .query_row("SELECT file_id FROM files WHERE path = ?1", [path], |r| {
            r.get::<_, i64>(0)
        })
        .optional()
        .ctx(ctx)?
    else {
        return Ok(Importers::default());
    };
    let walk = walk_dependents(conn, path, start, depth, hard, min_confidence, secondary)?;
    let by_depth: Vec<u64> = walk.levels[1..].iter().map(|l| l.len() as u64).collect();
    // The levels the listing comes from: up to the first whose end reaches the limit.
    let mut shown = walk.levels.len() - 1;
    if limit > 0 {
        let mut total = 0;
        for (i, l) in walk.levels[1..].iter().enumerate() {
            total += l.len();
            if total >= limit as usize {
                shown = i + 1;
                break;
            }
        }
    }
    let paths = level_paths(conn, path, &walk, shown)?;
    let secondary_left_out = walk.left_out.len() as u64;
    let listed = list_dependents(path, walk, &paths, shown, limit)?;
    Ok(Importers {
        by_depth,
        listed,
        secondary_left_out,
    })
}

/// The reverse graph walked from one file, level by level (see [`importers_within`]).
struct Dependents {
    /// The depth each file was first reached at.
    depth_of: HashMap<i64, u32, IdHash>,
    /// The files first reached at each depth; `levels[0]` is the start.
    levels: Vec<Vec<i64>>,
    /// The edges from each level's files into the level before, `(from, to, rank, line,
    /// reference)`: rank 0 for an import, 1 for a stated reference, 2 for a derived one,
    /// whose kind, provenance and confidence are `references[reference]`.
    edges: Vec<(i64, i64, u8, u32, u32)>,
    /// `(kind, provenance, confidence)` of the reference edges.
    references: Vec<(String, String, f64)>,
    /// The files of secondary code reached and left out.
    left_out: HashSet<i64, IdHash>,
}

/// The breadth-first walk of [`importers_within`] from file `start` (`path`), to `depth`
/// hops, one cached indexed lookup per file expanded.
fn walk_dependents(
    conn: &Connection,
    path: &str,
    start: i64,
    depth: u32,
    hard: bool,
    min_confidence: f64,
    secondary: bool,
) -> Result<Dependents> {
    let ctx = || format!("walking the dependents of {path}");
    let mut path_of = conn
        .prepare_cached("SELECT path FROM files WHERE file_id = ?1")
        .ctx(ctx)?;
    let mut left_out: HashSet<i64, IdHash> = HashSet::default();
    // Import edges (no kind), then reference edges; grouping or ordering in SQL cost
    // more than the rows it saved.
    let mut dependents_of = conn
        .prepare_cached(&format!(
            "SELECT from_file_id, line, NULL, NULL, NULL, {DECLARES} FROM deps d
                  WHERE to_file_id = ?1
                 UNION ALL
                 SELECT from_file_id, line, kind, provenance, confidence, 0 FROM ref_deps
                  WHERE to_file_id = ?1 AND (?2 = 0 OR provenance = 'stated')
                    AND confidence >= ?3"
        ))
        .ctx(ctx)?;
    let mut depth_of: HashMap<i64, u32, IdHash> = HashMap::default();
    depth_of.insert(start, 0);
    let mut levels: Vec<Vec<i64>> = vec![vec![start]];
    let mut edges: Vec<(i64, i64, u8, u32, u32)> = Vec::new();
    let mut references: Vec<(String, String, f64)> = Vec::new();
    // The files of the last level that use what they reach, not only declare it.
    let mut users: HashSet<i64, IdHash> = HashSet::default();
    users.insert(start);
    for d in 1..=depth {
        let mut level = Vec::new();
        let mut level_users: HashSet<i64, IdHash> = HashSet::default();
        for &to in &levels[d as usize - 1] {
            // A file that only declares a module (a Rust `mod x;`) compiles it and uses
            // nothing of it: what depends on that file depends on it for something else.
            if !users.contains(&to) {
                continue;
            }
            let mut rows = dependents_of
                .query(params![to, hard, min_confidence])
                .ctx(ctx)?;
            while let Some(row) = rows.next().ctx(ctx)? {
                let from: i64 = row.get(0).ctx(ctx)?;
                if !secondary && !depth_of.contains_key(&from) {
                    if left_out.contains(&from) {
                        continue;
                    }
                    let path: String = path_of.query_row([from], |r| r.get(0)).ctx(ctx)?;
                    if loci_core::secondary::secondary_code(&path).is_some() {
                        left_out.insert(from);
                        continue;
                    }
                }
                match depth_of.get(&from) {
                    None => {
                        depth_of.insert(from, d);
                        level.push(from);
                    }
                    Some(&at) if at == d => {}
                    Some(_) => continue,
                }
                if !row.get::<_, bool>(5).ctx(ctx)? {
                    level_users.insert(from);
                }
                let line: u32 = row.get(1).ctx(ctx)?;
                let kind: Option<String> = row.get(2).ctx(ctx)?;
                match kind {
                    None => edges.push((from, to, 0, line, u32::MAX)),
                    Some(kind) => {
                        let provenance: String = row.get(3).ctx(ctx)?;
                        let rank = if provenance == "stated" { 1 } else { 2 };
                        edges.push((from, to, rank, line, references.len() as u32));
                        references.push((kind, provenance, row.get(4).ctx(ctx)?));
                    }
                }
            }
        }
        if level.is_empty() {
            break;
        }
        levels.push(level);
        users = level_users;
    }
    Ok(Dependents {
        depth_of,
        levels,
        edges,
        references,
        left_out,
    })
}

/// The paths of the files of levels `0..=shown` of `walk`: in one pass over the path
/// index above [`PATH_SCAN_MIN`] files, else one lookup each.
fn level_paths(
    conn: &Connection,
    path: &str,
    walk: &Dependents,
    shown: usize,
) -> Result<HashMap<i64, String, IdHash>> {
    let ctx = || format!("walking the dependents of {path}");
    let needed: usize = walk.levels[..=shown].iter().map(Vec::len).sum();
    let mut paths: HashMap<i64, String, IdHash> = HashMap::default();
    paths.reserve(needed);
    if needed > PATH_SCAN_MIN {
        let mut all = conn
            .prepare_cached("SELECT file_id, path FROM files")
            .ctx(ctx)?;
        let mut rows = all.query([]).ctx(ctx)?;
        while let Some(row) = rows.next().ctx(ctx)? {
            let id: i64 = row.get(0).ctx(ctx)?;
            if walk.depth_of.get(&id).is_some_and(|&d| d as usize <= shown) {
                paths.insert(id, row.get(1).ctx(ctx)?);
            }
        }
    } else {
        let mut path_of = conn
            .prepare_cached("SELECT path FROM files WHERE file_id = ?1")
            .ctx(ctx)?;
        for &id in walk.levels[..=shown].iter().flatten() {
            paths.insert(id, path_of.query_row([id], |r| r.get(0)).ctx(ctx)?);
        }
    }
    Ok(paths)
}

/// The first `limit` dependents (0: all) of levels `1..=shown`, each with the surest
/// edge into the level before, by depth, then confidence (the surest first), then path.
fn list_dependents(
    path: &str,
    walk: Dependents,
    paths: &HashMap<i64, String, IdHash>,
    shown: usize,
    limit: u32,
) -> Result<Vec<Importer>> {
    let ctx = || format!("walking the dependents of {path}");
    let Dependents {
        levels,
        mut edges,
        references,
        ..
    } = walk;
    let path_of = |id: &i64| -> Result<&String> {
        paths
            .get(id)
            .ok_or_else(|| StoreError::Corrupt(format!("{}: file {id} has no path", ctx())))
    };
    edges.sort_unstable();
    let mut listed = Vec::new();
    for (i, level) in levels.iter().enumerate().take(shown + 1).skip(1) {
        let mut reached = Vec::with_capacity(level.len());
        for &from in level {
            // The surest edge into the level before: an import, then a stated reference,
            // then the most confident one; of equals, the one into the smallest path, then
            // the first line.
            let first = edges.partition_point(|e| e.0 < from);
            // (the edge's sort key, its reference).
            let mut best: Option<(EdgeKey<'_>, u32)> = None;
            for &(_, to, rank, line, reference) in edges[first..].iter().take_while(|e| e.0 == from)
            {
                let confidence = references
                    .get(reference as usize)
                    .map_or(1.0, |(_, _, c)| *c);
                // Descending confidence as an ascending key (confidences are in [0, 1]).
                let doubt = (1.0 - confidence).max(0.0).to_bits();
                let candidate = (rank, doubt, path_of(&to)?, line);
                if best.is_none_or(|(b, _)| candidate < b) {
                    best = Some((candidate, reference));
                }
            }
            let ((_, _, imports, line), reference) = best.ok_or_else(|| {
                StoreError::Corrupt(format!("{}: file {from} was reached by no edge", ctx()))
            })?;
            let (kind, provenance, confidence) = match references.get(reference as usize) {
                Some((kind, provenance, confidence)) => {
                    (kind.clone(), provenance.clone(), *confidence)
                }
                None => ("import".to_string(), "stated".to_string(), 1.0),
            };
            reached.push(Importer {
                path: path_of(&from)?.clone(),
                depth: i as u32,
                imports: imports.clone(),
                line,
                kind,
                provenance,
                confidence,
            });
        }
        // Each hop by confidence, the surest first, then by path.
        reached.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then_with(|| a.path.cmp(&b.path))
        });
        let room = if limit == 0 {
            reached.len()
        } else {
            (limit as usize).saturating_sub(listed.len())
        };
        listed.extend(reached.into_iter().take(room));
    }
    Ok(listed)
}

/// How [`importers_within`] ranks the edges out of one file, the surest first: rank (0 an
/// import, 1 a stated reference, 2 a derived one), doubt (`1 - confidence` as ordered
/// bits), the path of the file it goes into, its line.
pub(super) type EdgeKey<'a> = (u8, u64, &'a String, u32);

/// A hasher for file ids (integer keys this crate made itself, so no defence against
/// chosen collisions is needed): a multiply and a rotate instead of SipHash, whose cost
/// showed in walks of a thousand files.
#[derive(Clone, Copy, Default)]
pub(super) struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

/// The [`std::hash::Hasher`] of [`IdHash`].
pub(super) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

/// The files one import away from `path`, either way (what it imports and what imports
/// it), by two indexed lookups; empty for a path not in the map.
///
/// Errors: [`StoreError::Sqlite`] when the map cannot be read.
pub fn import_neighbours(conn: &Connection, path: &str) -> Result<Vec<String>> {
    let ctx = || format!("reading the import neighbours of {path}");
    let mut stmt = conn
        .prepare_cached(
            "SELECT b.path FROM files a JOIN deps d ON d.from_file_id = a.file_id
                 JOIN files b ON b.file_id = d.to_file_id WHERE a.path = ?1
             UNION ALL
             SELECT b.path FROM files a JOIN deps d ON d.to_file_id = a.file_id
                 JOIN files b ON b.file_id = d.from_file_id WHERE a.path = ?1",
        )
        .ctx(ctx)?;
    let rows = stmt.query_map([path], |r| r.get::<_, String>(0)).ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// Every resolved import edge, `(importer, imported)` file ids, in that order.
///
/// Errors: [`StoreError::Sqlite`] when the map cannot be read.
pub fn import_edges(conn: &Connection) -> Result<Vec<(i64, i64)>> {
    let ctx = || "reading the import graph".to_string();
    let mut stmt = conn
        .prepare_cached(
            "SELECT from_file_id, to_file_id FROM deps WHERE to_file_id IS NOT NULL
             ORDER BY from_file_id, to_file_id",
        )
        .ctx(ctx)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// The paths of the files importing the file at `path` (resolved imports), each once, by
/// path.
///
/// Errors: [`StoreError::Sqlite`] when the map cannot be read.
pub fn importer_paths(conn: &Connection, path: &str) -> Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT DISTINCT b.path FROM files a JOIN deps d ON d.to_file_id = a.file_id
             JOIN files b ON b.file_id = d.from_file_id WHERE a.path = ?1 ORDER BY b.path",
    )
    .and_then(|mut st| {
        st.query_map([path], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()
    })
    .ctx(|| format!("reading the files importing {path}"))
}

/// One file depending directly on another, as [`dependent_rows`] reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct DependentRow {
    /// `files.file_id` of the dependent.
    pub file_id: i64,
    /// Its repo-relative path.
    pub path: String,
    /// Whether it imports the file.
    pub imports: bool,
    /// Whether every import of it only declares the file (a Rust `mod x;`, a `self::x`
    /// module with no names), not uses it.
    pub declares: bool,
    /// References from it resolved into the file.
    pub refs: i64,
    /// The best confidence of those references (a stated one counts 1.0); 0 without any.
    pub confidence: f64,
}

/// The files depending directly on the file `file_id`: importing it (`deps`) or with
/// references resolved into it (`ref_deps`), one row each, in no stated order.
///
/// Errors: [`StoreError::Sqlite`] when the map cannot be read.
pub fn dependent_rows(conn: &Connection, file_id: i64) -> Result<Vec<DependentRow>> {
    conn.prepare_cached(&format!(
        "SELECT f.file_id, f.path, max(e.imports), min(e.declares), sum(e.refs),
                max(e.confidence) FROM (
             SELECT d.from_file_id AS id, 1 AS imports, 0 AS refs, 0.0 AS confidence,
                    {DECLARES} AS declares
             FROM deps d WHERE d.to_file_id = ?1 AND d.from_file_id != ?1
             UNION ALL
             SELECT from_file_id, 0, count,
                    CASE provenance WHEN 'stated' THEN 1.0 ELSE confidence END, 1
             FROM ref_deps WHERE to_file_id = ?1 AND from_file_id != ?1
         ) e JOIN files f ON f.file_id = e.id GROUP BY f.file_id"
    ))
    .and_then(|mut st| {
        st.query_map([file_id], |r| {
            Ok(DependentRow {
                file_id: r.get(0)?,
                path: r.get(1)?,
                imports: r.get(2)?,
                declares: r.get(3)?,
                refs: r.get(4)?,
                confidence: r.get(5)?,
            })
        })?
        .collect()
    })
    .ctx(|| "reading a file's dependents".into())
}

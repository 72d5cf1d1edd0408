//! Reads keyed by a set: the scan's bulk reads of imports, deps, definitions, paths and
//! scopes, of the whole map in one pass or of the wanted keys by indexed lookups.

use std::collections::BTreeSet;

use rusqlite::{Row, ToSql};

use super::*;

/// The rows of `select` (`SELECT … FROM …`, no `WHERE`) that pass `filter` (an SQL
/// condition, `""` for none), handed to `each` as they are read: of the whole table in
/// one pass when the key set of `keyed` (a column, and the keys wanted) is `None`, else of
/// each wanted key by one indexed lookup (`column = ?1`), keys in their set's order.
/// Within one key the rows come in `order` in both modes, which is all the callers rely
/// on: they group the rows by key (across keys, a full pass is in `order` only). `what`
/// names the read in errors. Rows are not collected: a whole map's definitions collected
/// before use had held every row's strings at once (1.19 M symbols on a 50,000-file map).
#[allow(clippy::too_many_arguments)]
fn read_keyed_each<K: ToSql, T>(
    conn: &Connection,
    what: &str,
    select: &str,
    filter: &str,
    (column, keys): (&str, Option<&BTreeSet<K>>),
    order: &str,
    mut read: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    mut each: impl FnMut(T),
) -> Result<()> {
    let ctx = || what.to_string();
    let and = if filter.is_empty() {
        String::new()
    } else {
        format!(" AND {filter}")
    };
    match keys {
        None => {
            let filter = if filter.is_empty() {
                String::new()
            } else {
                format!(" WHERE {filter}")
            };
            let mut stmt = conn
                .prepare(&format!("{select}{filter} ORDER BY {order}"))
                .ctx(ctx)?;
            for row in stmt.query_map([], &mut read).ctx(ctx)? {
                each(row.ctx(ctx)?);
            }
        }
        Some(keys) => {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "{select} WHERE {column} = ?1{and} ORDER BY {order}"
                ))
                .ctx(ctx)?;
            for key in keys {
                for row in stmt.query_map([key], &mut read).ctx(ctx)? {
                    each(row.ctx(ctx)?);
                }
            }
        }
    }
    Ok(())
}

/// An import as stored, with its file: (file id, path, language, module, names, line).
pub type ImportRow = (i64, String, Option<String>, String, String, u32);

/// The imports of the files `files` (of every file when `None`), each file's in import
/// order (the order they were written in).
///
/// Errors: [`StoreError::Sqlite`] when the imports cannot be read.
pub fn import_rows(conn: &Connection, files: Option<&BTreeSet<i64>>) -> Result<Vec<ImportRow>> {
    let mut out = Vec::new();
    read_keyed_each(
        conn,
        "reading imports",
        "SELECT i.file_id, f.path, f.language, i.module, i.names, i.line
         FROM imports i JOIN files f USING (file_id)",
        "",
        ("i.file_id", files),
        "i.import_id",
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        },
        |row| out.push(row),
    )?;
    Ok(out)
}

/// A stored dep edge: (importing file id, (module, imported file id, line, count)).
pub type DepRow = (i64, (String, Option<i64>, u32, u32));

/// The stored deps of `files` (of every file when `None`), each file's by module, then
/// imported file.
///
/// Errors: [`StoreError::Sqlite`] when the deps cannot be read.
pub fn dep_rows(conn: &Connection, files: Option<&BTreeSet<i64>>) -> Result<Vec<DepRow>> {
    let mut out = Vec::new();
    read_keyed_each(
        conn,
        "reading deps",
        "SELECT from_file_id, module, to_file_id, line, count FROM deps",
        "",
        ("from_file_id", files),
        "module, to_file_id",
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?),
            ))
        },
        |row| out.push(row),
    )?;
    Ok(out)
}

/// A definition as the reference resolver reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionRow {
    /// Bare name.
    pub name: String,
    /// Row id.
    pub symbol_id: i64,
    /// Its file's row id.
    pub file_id: i64,
    /// The row id of its parent symbol (by `parent_key`), if the map has it.
    pub parent_id: Option<i64>,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind (`function`, `class`, ...).
    pub kind: String,
    /// Its parent's kind.
    pub parent_kind: Option<String>,
    /// Its file's language.
    pub language: Option<String>,
    /// First line of the definition.
    pub signature: Option<String>,
}

/// Hands `each` the definitions named one of `names` (every definition when `None`),
/// each name's by key.
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be read.
pub fn each_definition(
    conn: &Connection,
    names: Option<&BTreeSet<&str>>,
    each: impl FnMut(DefinitionRow),
) -> Result<()> {
    read_keyed_each(
        conn,
        "reading definitions",
        "SELECT s.name, s.symbol_id, s.file_id, p.symbol_id, s.qualified_name, s.kind, p.kind,
                f.language, s.signature
         FROM symbols s JOIN files f ON f.file_id = s.file_id
         LEFT JOIN symbols p ON p.key = s.parent_key",
        "",
        ("s.name", names),
        "s.key",
        |row| {
            Ok(DefinitionRow {
                name: row.get(0)?,
                symbol_id: row.get(1)?,
                file_id: row.get(2)?,
                parent_id: row.get(3)?,
                qualified_name: row.get(4)?,
                kind: row.get(5)?,
                parent_kind: row.get(6)?,
                language: row.get(7)?,
                signature: row.get(8)?,
            })
        },
        each,
    )
}

/// Hands `each` `(file id, path)` of the files `ids` (of every file when `None`), by id.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn each_file_path(
    conn: &Connection,
    ids: Option<&BTreeSet<i64>>,
    mut each: impl FnMut(i64, String),
) -> Result<()> {
    read_keyed_each(
        conn,
        "reading paths",
        "SELECT file_id, path FROM files",
        "",
        ("file_id", ids),
        "file_id",
        |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
        |(id, path)| each(id, path),
    )
}

/// Which symbols [`each_scope`] reads: those of the files, or those of the ids, given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopesOf {
    /// The symbols of these files.
    Files,
    /// These symbols.
    Symbols,
}

/// Hands `each` `(symbol id, parent symbol id, qualified name)` of the symbols whose file
/// (with [`ScopesOf::Files`]) or id (with [`ScopesOf::Symbols`]) is one of `keys`, by id
/// within each key.
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be read.
pub fn each_scope(
    conn: &Connection,
    of: ScopesOf,
    keys: &BTreeSet<i64>,
    mut each: impl FnMut(i64, Option<i64>, String),
) -> Result<()> {
    let column = match of {
        ScopesOf::Files => "s.file_id",
        ScopesOf::Symbols => "s.symbol_id",
    };
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
        |(id, parent, qualified)| each(id, parent, qualified),
    )
}

/// Hands `each` `(file id, module, names, enclosing definition id)` of the imports that
/// bind names (`names` not empty; comma-separated) of the files `files` (of every file when
/// `None`), each file's in import order; the definition is `None` for an import at module
/// level.
///
/// Errors: [`StoreError::Sqlite`] when the imports cannot be read.
pub fn each_naming_import(
    conn: &Connection,
    files: Option<&BTreeSet<i64>>,
    mut each: impl FnMut(i64, String, String, Option<i64>),
) -> Result<()> {
    read_keyed_each(
        conn,
        "reading imports",
        "SELECT file_id, module, names, enclosing_id FROM imports",
        "names != ''",
        ("file_id", files),
        "import_id",
        |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, Option<i64>>(3)?,
            ))
        },
        |(file_id, module, names, enclosing)| each(file_id, module, names, enclosing),
    )
}

/// Hands `each` `(importing file id, module, imported file id, imported path)` of the
/// resolved deps of the files `files` (of every file when `None`), each file's by module,
/// then imported path.
///
/// Errors: [`StoreError::Sqlite`] when the deps cannot be read.
pub fn each_resolved_dep(
    conn: &Connection,
    files: Option<&BTreeSet<i64>>,
    mut each: impl FnMut(i64, String, i64, String),
) -> Result<()> {
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
        |(from, module, to, path)| each(from, module, to, path),
    )
}

/// Hands `each` `(file id, path)` of every mapped file, in the order SQLite reads them.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn each_file(conn: &Connection, mut each: impl FnMut(i64, String)) -> Result<()> {
    let ctx = || "reading paths".to_string();
    let mut stmt = conn.prepare("SELECT file_id, path FROM files").ctx(ctx)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .ctx(ctx)?;
    for row in rows {
        let (id, path) = row.ctx(ctx)?;
        each(id, path);
    }
    Ok(())
}

/// Hands `each` `(qualified name, path)` of every namespace and package (module symbol)
/// and the file declaring it.
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be read.
pub fn each_namespace(conn: &Connection, mut each: impl FnMut(String, String)) -> Result<()> {
    let ctx = || "reading namespaces".to_string();
    let mut stmt = conn
        .prepare(
            "SELECT s.qualified_name, f.path FROM symbols s JOIN files f USING (file_id)
             WHERE s.kind = 'module'",
        )
        .ctx(ctx)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .ctx(ctx)?;
    for row in rows {
        let (ns, path) = row.ctx(ctx)?;
        each(ns, path);
    }
    Ok(())
}

/// How many symbols the map holds.
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be counted.
pub fn count_all_symbols(conn: &Connection) -> Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM symbols")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .ctx(|| "counting definitions".into())
}

/// A reference to resolve: (ref, file, name, enclosing, receiver, its name, kind).
pub type UnresolvedRef = (
    i64,
    i64,
    String,
    Option<i64>,
    loci_core::Receiver,
    Option<String>,
    loci_core::RefKind,
);

/// Up to `limit` unresolved references (no target) after `after` (name, ref id): with
/// `by_name`, by name then ref id, past `after` in that order (through the name index);
/// else by ref id, past `after`'s ref id (its name orders nothing).
///
/// Errors: [`StoreError::Sqlite`] when the references cannot be read.
pub fn unresolved_refs_after(
    conn: &Connection,
    by_name: bool,
    after: (&str, i64),
    limit: i64,
) -> Result<Vec<UnresolvedRef>> {
    let ctx = || "reading refs to resolve".to_string();
    let mut stmt = conn
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
        .ctx(ctx)?;
    stmt.query_map(params![after.0, after.1, limit], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            loci_core::Receiver::parse(r.get::<_, Option<String>>(4)?.as_deref()),
            r.get(5)?,
            loci_core::RefKind::parse(&r.get::<_, String>(6)?),
        ))
    })
    .ctx(ctx)?
    .collect::<rusqlite::Result<_>>()
    .ctx(ctx)
}

/// A stored reference: (ref, file, name, enclosing, target, provenance, confidence,
/// receiver, its name, kind).
pub type StoredRef = (
    i64,
    i64,
    String,
    Option<i64>,
    Option<i64>,
    String,
    f64,
    loci_core::Receiver,
    Option<String>,
    loci_core::RefKind,
);

/// The columns of `refs` a [`StoredRef`] is read from, in its order.
const REF_COLUMNS: &str = "ref_id, file_id, name, enclosing_id, target_id, provenance, confidence, receiver, receiver_name, kind";

/// One row of [`REF_COLUMNS`].
fn read_stored_ref(r: &Row<'_>) -> rusqlite::Result<StoredRef> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        loci_core::Receiver::parse(r.get::<_, Option<String>>(7)?.as_deref()),
        r.get(8)?,
        loci_core::RefKind::parse(&r.get::<_, String>(9)?),
    ))
}

/// Which stored references [`each_stored_ref`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredRefs<'a> {
    /// Every one, in one pass over the table, a row at a time.
    All,
    /// Those named this.
    Named(&'a str),
    /// Those written in this file.
    InFile(i64),
    /// The one of this id.
    Id(i64),
}

/// Hands `each` the stored references `which` selects, as SQLite reads them (an index's
/// order for the keyed ones).
///
/// Errors: [`StoreError::Sqlite`] when the references cannot be read.
pub fn each_stored_ref(
    conn: &Connection,
    which: StoredRefs<'_>,
    mut each: impl FnMut(StoredRef),
) -> Result<()> {
    let ctx = || "reading refs".to_string();
    let (column, key): (&str, &dyn ToSql) = match &which {
        StoredRefs::All => {
            let mut every = conn
                .prepare(&format!("SELECT {REF_COLUMNS} FROM refs"))
                .ctx(ctx)?;
            for row in every.query_map([], read_stored_ref).ctx(ctx)? {
                each(row.ctx(ctx)?);
            }
            return Ok(());
        }
        StoredRefs::Named(name) => ("name", name),
        StoredRefs::InFile(file_id) => ("file_id", file_id),
        StoredRefs::Id(ref_id) => ("ref_id", ref_id),
    };
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {REF_COLUMNS} FROM refs WHERE {column} = ?1"
        ))
        .ctx(ctx)?;
    for row in stmt.query_map([key], read_stored_ref).ctx(ctx)? {
        each(row.ctx(ctx)?);
    }
    Ok(())
}

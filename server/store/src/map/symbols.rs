//! Symbols: writing a file's definitions, and the lookups by key, name, qualified
//! suffix, file and container.

use super::*;

/// The row id of every symbol of a file, by key: what [`insert_symbols`] gives the same
/// keys again when the file is rewritten, so references into them from other files stay
/// resolved (new ids would mean resolving every reference into the file again: an edit
/// of `os.py` would re-resolve the calls of a thousand files).
pub fn symbol_ids_by_key(conn: &Connection, file_id: i64) -> Result<HashMap<String, i64>> {
    let mut stmt = conn
        .prepare_cached("SELECT key, symbol_id FROM symbols WHERE file_id = ?1")
        .ctx(|| "reading symbol ids".into())?;
    let rows = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading symbol ids".into())?;
    rows.collect::<rusqlite::Result<HashMap<_, _>>>()
        .ctx(|| "reading symbol ids".into())
}

/// `(key, name, signature fingerprint)` of every symbol of a file.
pub fn symbol_keys(conn: &Connection, file_id: i64) -> Result<Vec<(String, String, String)>> {
    let mut stmt = conn
        .prepare_cached("SELECT key, name, signature_fingerprint FROM symbols WHERE file_id = ?1")
        .ctx(|| "reading symbol keys".into())?;
    let rows = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .ctx(|| "reading symbol keys".into())?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| "reading symbol keys".into())
}

/// Inserts a file's symbols; returns their row ids, in order. A symbol whose key is in
/// `reuse` (the file's old rows, [`symbol_ids_by_key`], deleted since) gets its old id.
pub fn insert_symbols(
    tx: &Transaction<'_>,
    file_id: i64,
    symbols: &[Symbol],
    reuse: &HashMap<String, i64>,
) -> Result<Vec<i64>> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO symbols(file_id, key, name, qualified_name, kind, start_byte, end_byte,
                start_line, end_line, name_start_byte, name_end_byte, name_line, name_column,
                signature, doc, body_fingerprint, signature_fingerprint, parent_key, terms,
                symbol_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        )
        .ctx(|| "preparing symbol insert".into())?;
    // The symbols that keep their id go in first: a new row takes the table's largest id
    // plus one, which may be an id this file held (its old rows are gone) and a later
    // symbol keeps.
    let mut ids = vec![0; symbols.len()];
    for keeps in [true, false] {
        for (i, s) in symbols.iter().enumerate() {
            if reuse.contains_key(&s.key) != keeps {
                continue;
            }
            let parent = s
                .parent
                .and_then(|i| symbols.get(i as usize))
                .map(|p| p.key.as_str());
            stmt.execute(params![
                file_id,
                s.key,
                s.name,
                s.qualified_name,
                s.kind.as_str(),
                s.span.start,
                s.span.end,
                s.span.line,
                s.span.end_line,
                s.name_span.start,
                s.name_span.end,
                s.name_span.line,
                s.name_span.column,
                s.signature,
                s.doc,
                s.body_fingerprint,
                s.signature_fingerprint,
                parent,
                loci_core::terms::symbol_terms(&s.qualified_name),
                reuse.get(&s.key)
            ])
            .ctx(|| format!("inserting symbol {}", s.key))?;
            ids[i] = tx.last_insert_rowid();
        }
    }
    Ok(ids)
}

/// The keys of the symbols `ids` (`symbols.symbol_id`), by id; ids not in the map are left
/// out.
pub fn symbol_keys_by_ids(conn: &Connection, ids: &[i64]) -> Result<HashMap<i64, String>> {
    let json = serde_json::to_string(ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    conn.prepare_cached(
        "SELECT symbol_id, key FROM symbols WHERE symbol_id IN (SELECT value FROM json_each(?1))",
    )
    .and_then(|mut st| {
        st.query_map([json], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    })
    .ctx(|| "reading symbol keys".into())
}

/// A symbol with its file, as queries return it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SymbolHit {
    /// Stable key.
    pub key: String,
    /// Bare name.
    pub name: String,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind.
    pub kind: String,
    /// File path.
    pub path: String,
    /// Zero-based first line of the definition.
    pub line: u32,
    /// Zero-based last line of the definition.
    pub end_line: u32,
    /// Zero-based byte column of the name.
    pub column: u32,
    /// First line of the definition.
    pub signature: String,
    /// Doc comment, if any.
    pub doc: Option<String>,
    /// Body fingerprint.
    pub body_fingerprint: String,
    /// Signature fingerprint.
    pub signature_fingerprint: String,
}

pub(super) const SYMBOL_COLUMNS: &str =
    "s.key, s.name, s.qualified_name, s.kind, f.path, s.start_line,
    s.end_line, s.name_column, s.signature, s.doc, s.body_fingerprint, s.signature_fingerprint";

pub(super) fn symbol_hit(r: &rusqlite::Row<'_>) -> rusqlite::Result<SymbolHit> {
    Ok(SymbolHit {
        key: r.get(0)?,
        name: r.get(1)?,
        qualified_name: r.get(2)?,
        kind: r.get(3)?,
        path: r.get(4)?,
        line: r.get(5)?,
        end_line: r.get(6)?,
        column: r.get(7)?,
        signature: r.get(8)?,
        doc: r.get(9)?,
        body_fingerprint: r.get(10)?,
        signature_fingerprint: r.get(11)?,
    })
}

/// `symbols s` with its file `f`.
pub(super) const SYMBOL_FROM: &str = "symbols s JOIN files f USING (file_id)";

/// The rows of [`find_symbols`]: a symbol named, qualified-named or keyed `?1`.
pub(super) const SYMBOLS_NAMED: &str = "s.name = ?1 OR s.qualified_name = ?1 OR s.key = ?1";

/// Symbols whose name or qualified name equals `name`, or whose key equals it; ordered
/// by path then line. At most `limit` rows ([`count_symbols`] counts them all).
pub fn find_symbols(conn: &Connection, name: &str, limit: u32) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM {SYMBOL_FROM} WHERE {SYMBOLS_NAMED} ORDER BY f.path, s.start_line LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "finding symbols".into())?;
    let rows = stmt
        .query_map(params![name, limit], symbol_hit)
        .ctx(|| format!("finding symbol {name}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("finding symbol {name}"))
}

/// How many symbols [`find_symbols`] finds for `name` without a limit.
pub fn count_symbols(conn: &Connection, name: &str) -> Result<u64> {
    count_rows(conn, SYMBOL_FROM, SYMBOLS_NAMED, params![name])
        .ctx(|| format!("counting symbols named {name}"))
}

/// The rows of [`lookup_symbols`]: a symbol named, qualified-named or keyed `?1`, or named
/// `?2` (the last segment of `?1`) whose qualified name ends with `?3` (`.` then `?1`), of
/// `?4` characters: a suffix at a segment boundary (`RegexBuilder.new` is
/// `string.RegexBuilder.new`). Every term is an indexed lookup (`name`, `qualified_name`,
/// `key`); the suffix is checked on the rows of the name's index only.
pub(super) const SYMBOLS_ENDING: &str = "s.name = ?1 OR s.qualified_name = ?1 OR s.key = ?1
      OR (s.name = ?2 AND substr(s.qualified_name, -?4) = ?3)";

/// Symbols that [`find_symbols`] finds for `name`, and for a qualified name (`a.b`, no
/// `#`) also those whose qualified name ends with it at a segment boundary
/// (`ValueVisitor.visit_map` finds `Value.deserialize.ValueVisitor.visit_map`): exact
/// matches first, then by path and line. At most `limit` rows ([`count_lookup_symbols`]
/// counts them all).
pub fn lookup_symbols(conn: &Connection, name: &str, limit: u32) -> Result<Vec<SymbolHit>> {
    let Some((last, suffix, chars)) = qualified_suffix(name) else {
        return find_symbols(conn, name, limit);
    };
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM {SYMBOL_FROM} WHERE {SYMBOLS_ENDING}
         ORDER BY NOT (s.name = ?1 OR s.qualified_name = ?1 OR s.key = ?1), f.path, s.start_line
         LIMIT ?5"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "finding symbols".into())?;
    let rows = stmt
        .query_map(params![name, last, suffix, chars, limit], symbol_hit)
        .ctx(|| format!("finding symbol {name}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("finding symbol {name}"))
}

/// How many symbols [`lookup_symbols`] finds for `name` without a limit.
pub fn count_lookup_symbols(conn: &Connection, name: &str) -> Result<u64> {
    let Some((last, suffix, chars)) = qualified_suffix(name) else {
        return count_symbols(conn, name);
    };
    count_rows(
        conn,
        SYMBOL_FROM,
        SYMBOLS_ENDING,
        params![name, last, suffix, chars],
    )
    .ctx(|| format!("counting symbols named {name}"))
}

/// For a qualified name (`a.b`, not a key): its last segment, `.` before it whole, and
/// that suffix's length in characters (SQLite's `substr` counts characters).
pub(super) fn qualified_suffix(name: &str) -> Option<(&str, String, i64)> {
    if name.contains('#') {
        return None;
    }
    let (_, last) = name.rsplit_once('.')?;
    if last.is_empty() {
        return None;
    }
    let suffix = format!(".{name}");
    let chars = suffix.chars().count() as i64;
    Some((last, suffix, chars))
}

/// `SELECT COUNT(*) FROM {from} WHERE {filter}`: the size of a listing whose first rows a
/// caller fetched with a `LIMIT` (the listing's own tables and filter, parameters as
/// there without the limit).
pub(super) fn count_rows(
    conn: &Connection,
    from: &str,
    filter: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<u64> {
    conn.prepare_cached(&format!("SELECT COUNT(*) FROM {from} WHERE {filter}"))?
        .query_row(params, |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
}

/// The keys of the symbols defined inside `qualified_name` in the file `path` (its
/// members, theirs, …: qualified names `{qualified_name}.…`), by qualified name. Range of
/// the `qualified_name` index: `A.` < a member of `A` < `A/` ('/' follows '.').
pub fn member_keys(conn: &Connection, path: &str, qualified_name: &str) -> Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT s.key FROM symbols s JOIN files f USING (file_id)
          WHERE s.qualified_name > ?2 || '.' AND s.qualified_name < ?2 || '/' AND f.path = ?1
          ORDER BY s.qualified_name, s.key",
    )
    .and_then(|mut st| {
        st.query_map([path, qualified_name], |r| r.get(0))?
            .collect()
    })
    .ctx(|| format!("reading the members of {qualified_name}"))
}

/// The symbol with exactly this key.
pub fn symbol_by_key(conn: &Connection, key: &str) -> Result<Option<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id) WHERE s.key = ?1"
    );
    conn.prepare_cached(&sql)
        .ctx(|| "reading a symbol".into())?
        .query_row([key], symbol_hit)
        .optional()
        .ctx(|| format!("reading symbol {key}"))
}

/// The symbols with these keys (each as [`symbol_by_key`] finds it), by key, in one
/// statement; keys not in the map are absent.
pub fn symbols_by_keys(conn: &Connection, keys: &[&str]) -> Result<HashMap<String, SymbolHit>> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let json = serde_json::to_string(keys).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE s.key IN (SELECT value FROM json_each(?1))"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading symbols".into())?;
    let rows = stmt
        .query_map([json], symbol_hit)
        .ctx(|| "reading symbols by key".into())?;
    let mut out = HashMap::new();
    for row in rows {
        let s = row.ctx(|| "reading symbols by key".into())?;
        out.entry(s.key.clone()).or_insert(s);
    }
    Ok(out)
}

/// The symbols of the file `path` whose qualified name is `qualified_name`, by line: a
/// name as code spells it with its module path (`urllib.parse.urlsplit` is
/// `urlsplit` in `urllib/parse.py`). One lookup of the `qualified_name` index.
pub fn symbols_in_file_named(
    conn: &Connection,
    path: &str,
    qualified_name: &str,
) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM {SYMBOL_FROM}
         WHERE s.qualified_name = ?2 AND f.path = ?1 ORDER BY s.start_line, s.key"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading symbols".into())?;
    let rows = stmt
        .query_map([path, qualified_name], symbol_hit)
        .ctx(|| format!("reading {qualified_name} in {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading {qualified_name} in {path}"))
}

/// Mapped file paths that contain `part` (a module's last name, `parse`), by path, at
/// most `limit`: the candidates for a module path a dotted name spells. One pass over
/// the `files` table (its paths only).
pub fn paths_containing(conn: &Connection, part: &str, limit: u32) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached("SELECT path FROM files WHERE instr(path, ?1) > 0 ORDER BY path LIMIT ?2")
        .ctx(|| "reading paths".into())?;
    let rows = stmt
        .query_map(params![part, limit], |r| r.get(0))
        .ctx(|| format!("reading paths containing {part}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading paths containing {part}"))
}

/// The calls written in the file `path` between the zero-based lines `first` and `last`
/// (a definition's range: its outgoing calls, those of nested definitions included), by
/// line and column, at most `limit`, and how many there are in all. One lookup of the
/// `refs_by_file` index.
pub fn calls_within(
    conn: &Connection,
    path: &str,
    first: u32,
    last: u32,
    limit: u32,
) -> Result<(Vec<RefHit>, u64)> {
    const WITHIN: &str = "r.file_id = (SELECT file_id FROM files WHERE path = ?1)
          AND r.line >= ?2 AND r.line <= ?3 AND r.kind IN ('call', 'macro')";
    let sql = format!(
        "SELECT {REF_COLUMNS} FROM {REF_FROM} WHERE {WITHIN}
         ORDER BY r.line, r.column LIMIT ?4"
    );
    let ctx = || format!("reading the calls of {path}:{first}-{last}");
    let mut stmt = conn.prepare_cached(&sql).ctx(ctx)?;
    let rows = stmt
        .query_map(params![path, first, last, limit], ref_hit)
        .ctx(ctx)?;
    let hits = rows.collect::<rusqlite::Result<Vec<_>>>().ctx(ctx)?;
    let total = if (hits.len() as u64) < u64::from(limit) {
        hits.len() as u64
    } else {
        count_rows(conn, REF_FROM, WITHIN, params![path, first, last]).ctx(ctx)?
    };
    Ok((hits, total))
}

/// Whether a file at `path` or under it (a folder) refers to `name` (a call, a use, an
/// import), read through `refs_by_name`: what a page about that code may name without the
/// map defining it (a builtin, a dependency's function).
///
/// Errors: [`crate::StoreError::Sqlite`] when the map cannot be read.
pub fn referenced_in(conn: &Connection, name: &str, path: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM refs r JOIN files f ON f.file_id = r.file_id
          WHERE r.name = ?1
            AND (f.path = ?2 OR (f.path > ?2 || '/' AND f.path < ?2 || '0')))",
    )
    .and_then(|mut st| st.query_row(params![name, path], |r| r.get(0)))
    .ctx(|| format!("reading the references to {name} in {path}"))
}

/// The names of the symbols in the file at `path` whose qualified name starts with
/// `prefix` (every symbol of the file for `""`), in no particular order: the names alone,
/// for a lint that compares them with a missing member's name (reading whole rows with
/// [`symbols_in_file`] for every file of a common stem would be most of a lint of a
/// 50,000-file map).
pub fn symbol_names_in_file(conn: &Connection, path: &str, prefix: &str) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT s.name FROM symbols s JOIN files f USING (file_id)
             WHERE f.path = ?1 AND substr(s.qualified_name, 1, length(?2)) = ?2",
        )
        .ctx(|| "reading symbol names".into())?;
    let rows = stmt
        .query_map([path, prefix], |r| r.get(0))
        .ctx(|| format!("reading the symbol names in {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading the symbol names in {path}"))
}

/// Every symbol of a file, in document order.
pub fn symbols_in_file(conn: &Connection, path: &str) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE f.path = ?1 ORDER BY s.start_byte, s.key"
    );
    let mut stmt = conn.prepare_cached(&sql).ctx(|| "reading symbols".into())?;
    let rows = stmt
        .query_map([path], symbol_hit)
        .ctx(|| format!("reading symbols of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading symbols of {path}"))
}

/// The outline of the file `path`: how many symbols it has, how many of them are top-level
/// (a qualified name without `.`: not inside a class, impl or function), and its first
/// `limit` symbols, top-level ones first and each depth in source order. One indexed
/// lookup however many symbols the file has: `context` reads this for an open file.
pub fn file_outline(
    conn: &Connection,
    path: &str,
    limit: u32,
) -> Result<(u64, u64, Vec<SymbolHit>)> {
    let (total, top): (i64, i64) = conn
        .prepare_cached(
            "SELECT count(*), coalesce(sum(instr(s.qualified_name, '.') = 0), 0)
             FROM symbols s JOIN files f USING (file_id) WHERE f.path = ?1",
        )
        .and_then(|mut st| st.query_row([path], |r| Ok((r.get(0)?, r.get(1)?))))
        .ctx(|| format!("counting the symbols of {path}"))?;
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE f.path = ?1
         ORDER BY length(s.qualified_name) - length(replace(s.qualified_name, '.', '')),
                  s.start_byte, s.key
         LIMIT ?2"
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .ctx(|| "reading an outline".into())?;
    let rows = stmt
        .query_map(params![path, limit], symbol_hit)
        .ctx(|| format!("reading the outline of {path}"))?;
    let first = rows
        .collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading the outline of {path}"))?;
    Ok((total.max(0) as u64, top.max(0) as u64, first))
}

/// The `limit` main symbols of the file `path`, for a reader who opened it: top-level
/// before nested; then public before `_private`; then definitions (functions, classes,
/// types, methods) before constants and variables; then the most referenced (resolved
/// references into them, across the map); then source order. One indexed count per symbol
/// of the file.
pub fn file_main_symbols(conn: &Connection, path: &str, limit: u32) -> Result<Vec<SymbolHit>> {
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f USING (file_id)
         WHERE f.path = ?1
         ORDER BY length(s.qualified_name) - length(replace(s.qualified_name, '.', '')),
                  s.name GLOB '_*',
                  s.kind IN ('constant', 'variable', 'field', 'property'),
                  (SELECT count(*) FROM refs r WHERE r.target_id = s.symbol_id) DESC,
                  s.start_byte, s.key
         LIMIT ?2"
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .ctx(|| "reading main symbols".into())?;
    let rows = stmt
        .query_map(params![path, limit], symbol_hit)
        .ctx(|| format!("reading the main symbols of {path}"))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .ctx(|| format!("reading the main symbols of {path}"))
}

/// `(body fingerprint, signature fingerprint)` of the symbol with exactly this key, as
/// [`symbol_by_key`] finds it; `None` when there is none.
///
/// Errors: [`StoreError::Sqlite`] when the symbol cannot be read.
pub fn symbol_fingerprints(conn: &Connection, key: &str) -> Result<Option<(String, String)>> {
    conn.prepare_cached(
        "SELECT s.body_fingerprint, s.signature_fingerprint FROM symbols s
         JOIN files f USING (file_id) WHERE s.key = ?1",
    )
    .and_then(|mut st| {
        st.query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
    })
    .ctx(|| format!("reading symbol {key}"))
}

/// `(body fingerprint, signature fingerprint)` of the symbols with these keys (as
/// [`symbol_fingerprints`] reads each), by key; keys not in the map are absent.
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be read.
pub fn symbols_fingerprints(
    conn: &Connection,
    keys: &[&str],
) -> Result<HashMap<String, (String, String)>> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let json = serde_json::to_string(keys).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT s.key, s.body_fingerprint, s.signature_fingerprint FROM symbols s
             JOIN files f USING (file_id) WHERE s.key IN (SELECT value FROM json_each(?1))",
        )
        .ctx(|| "reading symbol fingerprints".into())?;
    let rows = stmt
        .query_map([json], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .ctx(|| "reading symbol fingerprints".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading symbol fingerprints".into())
}

/// Whether any symbol is named `name`.
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be read.
pub fn name_defined(conn: &Connection, name: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM symbols WHERE name = ?1)")
        .and_then(|mut st| st.query_row([name], |r| r.get(0)))
        .ctx(|| format!("reading whether {name} is defined"))
}

/// A symbol of one file with the byte ranges an adapter converts to positions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileSymbol {
    /// Stable key.
    pub key: String,
    /// Bare name.
    pub name: String,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind (`function`, `class`, ...).
    pub kind: String,
    /// Definition's first byte.
    pub start_byte: u32,
    /// One past the definition's last byte.
    pub end_byte: u32,
    /// Name's first byte.
    pub name_start_byte: u32,
    /// One past the name's last byte.
    pub name_end_byte: u32,
    /// First line of the definition.
    pub signature: String,
    /// Doc comment, if any.
    pub doc: Option<String>,
    /// Key of the enclosing definition.
    pub parent_key: Option<String>,
}

/// Every symbol the map holds for `path` (repo-relative), in document order (start byte,
/// then key); empty when the map does not have the file.
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be read.
pub fn file_symbols(conn: &Connection, path: &str) -> Result<Vec<FileSymbol>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT s.key, s.name, s.qualified_name, s.kind, s.start_byte, s.end_byte,
                s.name_start_byte, s.name_end_byte, s.signature, s.doc, s.parent_key
             FROM symbols s JOIN files f USING (file_id)
             WHERE f.path = ?1 ORDER BY s.start_byte, s.key",
        )
        .map_err(|e| StoreError::sqlite("reading file symbols", e))?;
    let rows = stmt
        .query_map([path], |r| {
            Ok(FileSymbol {
                key: r.get(0)?,
                name: r.get(1)?,
                qualified_name: r.get(2)?,
                kind: r.get(3)?,
                start_byte: r.get(4)?,
                end_byte: r.get(5)?,
                name_start_byte: r.get(6)?,
                name_end_byte: r.get(7)?,
                signature: r.get(8)?,
                doc: r.get(9)?,
                parent_key: r.get(10)?,
            })
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(|e| StoreError::sqlite(format!("reading symbols of {path}"), e))?;
    Ok(rows)
}

/// Where a definition of a file is, as [`symbol_spans`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolSpan {
    /// Stable key.
    pub key: String,
    /// Bare name.
    pub name: String,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind (`function`, `class`, ...).
    pub kind: String,
    /// Definition's first byte.
    pub start_byte: i64,
    /// One past the definition's last byte.
    pub end_byte: i64,
    /// Name's first byte.
    pub name_start_byte: i64,
    /// Key of the enclosing definition.
    pub parent_key: Option<String>,
}

/// The definitions the map holds for `path`, in source order (start byte, then key).
///
/// Errors: [`StoreError::Sqlite`] when the symbols cannot be read.
pub fn symbol_spans(conn: &Connection, path: &str) -> Result<Vec<SymbolSpan>> {
    let ctx = || format!("reading the symbols of {path}");
    let mut stmt = conn
        .prepare_cached(
            "SELECT s.key, s.name, s.qualified_name, s.kind, s.start_byte, s.end_byte,
                    s.name_start_byte, s.parent_key
             FROM symbols s JOIN files f USING (file_id)
             WHERE f.path = ?1 ORDER BY s.start_byte, s.key",
        )
        .ctx(ctx)?;
    let rows = stmt
        .query_map(params![path], |r| {
            Ok(SymbolSpan {
                key: r.get(0)?,
                name: r.get(1)?,
                qualified_name: r.get(2)?,
                kind: r.get(3)?,
                start_byte: r.get(4)?,
                end_byte: r.get(5)?,
                name_start_byte: r.get(6)?,
                parent_key: r.get(7)?,
            })
        })
        .ctx(ctx)?
        .collect::<rusqlite::Result<_>>()
        .ctx(ctx)?;
    Ok(rows)
}

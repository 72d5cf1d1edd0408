//! The map's files: their recorded state and stamps, writing and clearing a file's rows,
//! its fingerprints, and path ↔ id.

use super::*;

/// What the scanner needs to know about a stored file to decide whether to reparse it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileState {
    /// Row id, kept across modifications and renames.
    pub file_id: i64,
    /// Repo-relative path.
    pub path: String,
    /// Size in bytes.
    pub size: i64,
    /// Change time in nanoseconds since the epoch: the later of the file's modification
    /// and status-change times (the engine's `walk::change_time_ns`).
    pub mtime_ns: i64,
    /// BLAKE3 content hash (32 hex digits).
    pub content_hash: String,
    /// Semantic fingerprint, when parsed.
    pub fingerprint: Option<String>,
    /// The scan that last wrote the row.
    pub scan_id: i64,
    /// The content hash the drift ledger last recorded for the file: its content as of
    /// the last scan that finished, `None` if none has (migration 0012). A killed scan may
    /// have rewritten `content_hash` without recording the change; this one it never
    /// touches ([`settle_drift_hashes`]).
    pub drift_hash: Option<String>,
    /// Why its analysis is incomplete (`parse_timeout: ...`, `too_deep: ...`), if it is.
    pub degraded: Option<String>,
}

/// Every stored file's state, by path.
pub fn file_states(conn: &Connection) -> Result<HashMap<String, FileState>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT file_id, path, size, mtime_ns, content_hash, fingerprint, scan_id, drift_hash,
                    degraded
             FROM files",
        )
        .ctx(|| "reading file states".into())?;
    let rows = stmt
        .query_map([], |r| {
            Ok(FileState {
                file_id: r.get(0)?,
                path: r.get(1)?,
                size: r.get(2)?,
                mtime_ns: r.get(3)?,
                content_hash: r.get(4)?,
                fingerprint: r.get(5)?,
                scan_id: r.get(6)?,
                drift_hash: r.get(7)?,
                degraded: r.get(8)?,
            })
        })
        .ctx(|| "reading file states".into())?;
    let mut out = HashMap::new();
    for row in rows {
        let row = row.ctx(|| "reading file states".into())?;
        out.insert(row.path.clone(), row);
    }
    Ok(out)
}

/// Every stored file's path, size (bytes) and change time (ns), as the last scan saw
/// them: what a check against the disk needs, without the hashes.
pub fn file_stamps(conn: &Connection) -> Result<Vec<(String, FileStamp)>> {
    let mut stmt = conn
        .prepare_cached("SELECT path, size, mtime_ns, content_hash FROM files")
        .ctx(|| "reading file states".into())?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                FileStamp {
                    size: r.get(1)?,
                    mtime_ns: r.get(2)?,
                    content_hash: r.get(3)?,
                },
            ))
        })
        .ctx(|| "reading file states".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading file states".into())
}

/// What the last scan saw of a file: enough to tell whether it changed since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: i64,
    /// Change time in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// BLAKE3 content hash ([`loci_core::fingerprint::content_hash`]).
    pub content_hash: String,
}

/// A file's row as the scanner writes it.
#[derive(Clone, Debug)]
pub struct FileRow<'a> {
    /// Repo-relative, `/`-separated path.
    pub path: &'a str,
    /// `Language::name`, `markdown`, or `None` for unknown.
    pub language: Option<&'a str>,
    /// Size in bytes.
    pub size: i64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// BLAKE3 content hash.
    pub content_hash: &'a str,
    /// Semantic fingerprint, when parsed.
    pub fingerprint: Option<&'a str>,
    /// Line count.
    pub lines: i64,
    /// tree-sitter ERROR/MISSING nodes.
    pub error_nodes: i64,
    /// Why analysis is incomplete, if it is.
    pub degraded: Option<&'a str>,
    /// Invalid UTF-8 was replaced.
    pub lossy_utf8: bool,
}

/// Inserts or replaces a file's row (keyed by `existing` file id, else by path) and
/// deletes its symbols, refs, imports and outgoing deps so they can be rewritten.
/// Returns the file id.
pub fn put_file(
    tx: &Transaction<'_>,
    existing: Option<i64>,
    row: &FileRow<'_>,
    scan_id: i64,
) -> Result<i64> {
    let ctx = || format!("writing file {}", row.path);
    let file_id = if let Some(id) = existing {
        tx.prepare_cached(
            "UPDATE files SET path = ?2, language = ?3, size = ?4, mtime_ns = ?5,
                content_hash = ?6, fingerprint = ?7, lines = ?8, error_nodes = ?9,
                degraded = ?10, lossy_utf8 = ?11, scan_id = ?12
             WHERE file_id = ?1",
        )
        .ctx(ctx)?
        .execute(params![
            id,
            row.path,
            row.language,
            row.size,
            row.mtime_ns,
            row.content_hash,
            row.fingerprint,
            row.lines,
            row.error_nodes,
            row.degraded,
            row.lossy_utf8,
            scan_id
        ])
        .ctx(ctx)?;
        clear_file_rows(tx, id)?;
        id
    } else {
        tx.prepare_cached(
            "INSERT INTO files(path, language, size, mtime_ns, content_hash, fingerprint,
                lines, error_nodes, degraded, lossy_utf8, scan_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .ctx(ctx)?
        .execute(params![
            row.path,
            row.language,
            row.size,
            row.mtime_ns,
            row.content_hash,
            row.fingerprint,
            row.lines,
            row.error_nodes,
            row.degraded,
            row.lossy_utf8,
            scan_id
        ])
        .ctx(ctx)?;
        tx.last_insert_rowid()
    };
    Ok(file_id)
}

/// Deletes a file's derived rows (symbols, refs, imports, doc chunks, code text, outgoing
/// deps).
pub fn clear_file_rows(tx: &Transaction<'_>, file_id: i64) -> Result<()> {
    for table in ["file_text_fts", "secondary_file_text_fts"] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))
            .ctx(|| format!("clearing {table}"))?
            .execute([file_id])
            .ctx(|| format!("clearing {table}"))?;
    }
    for table in [
        "symbols",
        "refs",
        "imports",
        "doc_chunks",
        "code_chunks",
        "code_text_words",
    ] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE file_id = ?1"))
            .ctx(|| format!("clearing {table}"))?
            .execute([file_id])
            .ctx(|| format!("clearing {table}"))?;
    }
    for table in ["deps", "ref_deps"] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE from_file_id = ?1"))
            .ctx(|| format!("clearing {table}"))?
            .execute([file_id])
            .ctx(|| format!("clearing {table}"))?;
    }
    Ok(())
}

/// Updates the size and modification time of a file whose content hash is unchanged (the
/// size too: an older scan may have recorded one from another read than the hash).
pub fn touch_file(tx: &Transaction<'_>, file_id: i64, size: i64, mtime_ns: i64) -> Result<()> {
    tx.prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3 WHERE file_id = ?1")
        .ctx(|| "updating size and mtime".into())?
        .execute(params![file_id, size, mtime_ns])
        .ctx(|| "updating size and mtime".into())?;
    Ok(())
}

/// Deletes a file and (by cascade) everything derived from it.
pub fn delete_file(tx: &Transaction<'_>, file_id: i64) -> Result<()> {
    tx.prepare_cached("DELETE FROM files WHERE file_id = ?1")
        .ctx(|| "deleting a file".into())?
        .execute([file_id])
        .ctx(|| "deleting a file".into())?;
    Ok(())
}

/// What memory snapshots of a file and its symbols, as the map holds them
/// ([`file_fingerprints`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileFingerprints {
    /// The file's `ifnull(fingerprint, content_hash)`: what a path claim or a file page
    /// snapshots.
    pub file: String,
    /// `(key, body fingerprint, signature fingerprint)` of each of its symbols.
    pub symbols: Vec<(String, String, String)>,
}

/// The [`FileFingerprints`] of a file as the map holds them now; `None` when the file is
/// not in the map.
pub fn file_fingerprints(conn: &Connection, file_id: i64) -> Result<Option<FileFingerprints>> {
    let ctx = || format!("reading the fingerprints of file {file_id}");
    let Some(file) = conn
        .prepare_cached("SELECT ifnull(fingerprint, content_hash) FROM files WHERE file_id = ?1")
        .ctx(ctx)?
        .query_row([file_id], |r| r.get(0))
        .optional()
        .ctx(ctx)?
    else {
        return Ok(None);
    };
    let mut stmt = conn
        .prepare_cached(
            "SELECT key, body_fingerprint, signature_fingerprint FROM symbols WHERE file_id = ?1",
        )
        .ctx(ctx)?;
    let symbols = stmt
        .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .ctx(ctx)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .ctx(ctx)?;
    Ok(Some(FileFingerprints { file, symbols }))
}

/// The paths of the mapped markdown files (`.md`, `.markdown`), by path.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn markdown_paths(conn: &Connection) -> Result<Vec<String>> {
    let ctx = || "reading paths".to_string();
    let mut stmt = conn
        .prepare_cached(
            "SELECT path FROM files WHERE path LIKE '%.md' OR path LIKE '%.markdown'
             ORDER BY path",
        )
        .ctx(ctx)?;
    let paths = stmt
        .query_map([], |r| r.get(0))
        .ctx(ctx)?
        .collect::<rusqlite::Result<_>>()
        .ctx(ctx)?;
    Ok(paths)
}

/// The path of the file `file_id`, if it is in the map.
pub fn file_path(conn: &Connection, file_id: i64) -> Result<Option<String>> {
    conn.prepare_cached("SELECT path FROM files WHERE file_id = ?1")
        .and_then(|mut st| st.query_row([file_id], |r| r.get(0)).optional())
        .ctx(|| "reading a file's path".into())
}

/// The id of the file at `path`, if it is in the map.
pub fn file_id(conn: &Connection, path: &str) -> Result<Option<i64>> {
    conn.prepare_cached("SELECT file_id FROM files WHERE path = ?1")
        .and_then(|mut st| st.query_row([path], |r| r.get(0)).optional())
        .ctx(|| "reading a file's id".into())
}

/// The mapped files whose path holds `fragment` (ASCII case ignored), at most `limit`, in
/// the order SQLite finds them, each with its id. One pass over the files.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn files_with_path_holding(
    conn: &Connection,
    fragment: &str,
    limit: u32,
) -> Result<Vec<(i64, String)>> {
    conn.prepare_cached(
        "SELECT file_id, path FROM files WHERE instr(lower(path), lower(?1)) > 0 LIMIT ?2",
    )
    .and_then(|mut st| {
        st.query_map(params![fragment, limit], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    })
    .ctx(|| format!("looking up the files whose path holds {fragment}"))
}

/// The semantic fingerprint (or, for an unparsed file, the content hash) of the file at
/// `path`; `None` when it is not in the map.
///
/// Errors: [`StoreError::Sqlite`] when the file cannot be read.
pub fn path_fingerprint(conn: &Connection, path: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT ifnull(fingerprint, content_hash) FROM files WHERE path = ?1")
        .ctx(|| "reading a fingerprint".into())?
        .query_row([path], |r| r.get(0))
        .optional()
        .ctx(|| "reading a fingerprint".into())
}

/// The fingerprints of these files (as [`path_fingerprint`] reads each), by path; paths
/// not in the map are absent.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn path_fingerprints(conn: &Connection, paths: &[&str]) -> Result<HashMap<String, String>> {
    if paths.is_empty() {
        return Ok(HashMap::new());
    }
    let json = serde_json::to_string(paths).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT path, ifnull(fingerprint, content_hash) FROM files
             WHERE path IN (SELECT value FROM json_each(?1))",
        )
        .ctx(|| "reading fingerprints".into())?;
    let rows = stmt
        .query_map([json], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx(|| "reading fingerprints".into())?;
    rows.collect::<rusqlite::Result<_>>()
        .ctx(|| "reading fingerprints".into())
}

/// The file's content hash at `path`; `None` when it is not in the map.
///
/// Errors: [`StoreError::Sqlite`] when the file cannot be read.
pub fn content_hash(conn: &Connection, path: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT content_hash FROM files WHERE path = ?1")
        .and_then(|mut st| st.query_row([path], |r| r.get(0)).optional())
        .ctx(|| format!("reading the content hash of {path}"))
}

/// Whether a file at exactly `path` is in the map.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn file_exists(conn: &Connection, path: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM files WHERE path = ?1)")
        .and_then(|mut st| st.query_row([path], |r| r.get(0)))
        .ctx(|| format!("reading whether {path} is mapped"))
}

/// Every mapped path, in the order SQLite reads them (the path index: by path).
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn all_paths(conn: &Connection) -> Result<Vec<String>> {
    let ctx = || "reading paths".to_string();
    let mut stmt = conn.prepare_cached("SELECT path FROM files").ctx(ctx)?;
    let paths = stmt
        .query_map([], |r| r.get(0))
        .ctx(ctx)?
        .collect::<rusqlite::Result<_>>()
        .ctx(ctx)?;
    Ok(paths)
}

/// `(lines, language)` of the mapped file at `path`.
///
/// Errors: [`StoreError::Sqlite`] when the file is not in the map or cannot be read.
pub fn file_lines_and_language(conn: &Connection, path: &str) -> Result<(i64, Option<String>)> {
    conn.prepare_cached("SELECT lines, language FROM files WHERE path = ?1")
        .and_then(|mut st| st.query_row([path], |r| Ok((r.get(0)?, r.get(1)?))))
        .ctx(|| "reading a file".into())
}

/// The language of the mapped file at `path` (`None` for a file of no language).
///
/// Errors: [`StoreError::Sqlite`] when the file is not in the map or cannot be read.
pub fn file_language(conn: &Connection, path: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT language FROM files WHERE path = ?1")
        .and_then(|mut st| st.query_row([path], |r| r.get(0)))
        .ctx(|| "reading a file's language".into())
}

/// How many mapped files are under the folder `folder` (no trailing `/`), read as a range
/// of the path index: `folder/` < a path under it < `folder0`.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn count_files_under(conn: &Connection, folder: &str) -> Result<i64> {
    conn.prepare_cached("SELECT count(*) FROM files WHERE path > ?1 || '/' AND path < ?1 || '0'")
        .and_then(|mut st| st.query_row([folder], |r| r.get(0)))
        .ctx(|| "counting a folder".into())
}

/// Whether the map holds a file under the folder `folder` (no trailing `/`), read as a
/// range of the path index, as [`count_files_under`] counts them.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn folder_has_files(conn: &Connection, folder: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM files WHERE path > ?1 || '/' AND path < ?1 || '0')",
    )
    .and_then(|mut st| st.query_row([folder], |r| r.get(0)))
    .ctx(|| "looking up a folder".into())
}

/// The largest mapped file under the folder `folder` (no trailing `/`; ties by path), or
/// `None` when the map holds no file under it.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn largest_file_under(conn: &Connection, folder: &str) -> Result<Option<String>> {
    conn.prepare_cached(
        "SELECT path FROM files WHERE path > ?1 || '/' AND path < ?1 || '0' ORDER BY size DESC, path LIMIT 1",
    )
    .and_then(|mut st| st.query_row([folder], |r| r.get(0)).optional())
    .ctx(|| "looking up a folder".into())
}

/// The lines of the mapped file at `path` as the last scan counted them, `None` when the
/// map has no such file.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn file_lines(conn: &Connection, path: &str) -> Result<Option<i64>> {
    conn.prepare_cached("SELECT lines FROM files WHERE path = ?1")
        .and_then(|mut st| st.query_row([path], |r| r.get(0)).optional())
        .ctx(|| format!("counting the lines of {path}"))
}

/// A file's name (its path's last segment) in SQL, as the index `files_by_name` (migration
/// 33) computes it: `rtrim` strips the name's characters (any but `/`) from the end.
const FILE_NAME: &str = "substr(path, length(rtrim(path, replace(path, '/', ''))) + 1)";

/// The statement of [`files_named`] for `names` names: `?1` the first name's last segment,
/// `?2` the name, and so on; the limit last.
pub(super) fn files_named_sql(names: usize) -> String {
    let condition = (1..=names)
        .map(|n| {
            let (last, name) = (2 * n - 1, 2 * n);
            format!(
                "({FILE_NAME} = ?{last} AND (path = ?{name} OR substr(path, -length(?{name}) - 1) = '/' || ?{name}))"
            )
        })
        .collect::<Vec<_>>()
        .join(" OR ");
    format!(
        "SELECT path FROM files WHERE {condition} ORDER BY path LIMIT ?{}",
        2 * names + 1
    )
}

/// The mapped files at one of `names` (repo-relative paths) or ending in `/` and one of
/// them (`cmd.py` finds `cmd.py` and `lib2to3/fixes/cmd.py`), at most `limit`, by path.
/// Each name is looked up by its last segment in the index of file names, so the cost is
/// the files so named, not every file of the map.
///
/// Errors: [`StoreError::Sqlite`] when the files cannot be read.
pub fn files_named(conn: &Connection, names: &[String], limit: u32) -> Result<Vec<String>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let last_segments: Vec<&str> = names
        .iter()
        .map(|n| n.rsplit_once('/').map_or(n.as_str(), |(_, last)| last))
        .collect();
    conn.prepare_cached(&files_named_sql(names.len()))
        .and_then(|mut st| {
            let params = names
                .iter()
                .zip(&last_segments)
                .flat_map(|(n, last)| [last as &dyn rusqlite::ToSql, n as &dyn rusqlite::ToSql])
                .chain(std::iter::once(&limit as &dyn rusqlite::ToSql));
            st.query_map(rusqlite::params_from_iter(params), |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .ctx(|| format!("looking up the files named {}", names.join(", ")))
}

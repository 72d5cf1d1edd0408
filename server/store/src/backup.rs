//! Online backup and validated restore of a loci database, with SQLite's online backup
//! API (`sqlite3_backup_*`).
//!
//! A backup copies the live database a few pages per step, so other processes keep
//! reading and writing while it runs (WAL: a step holds a read snapshot only while it
//! copies). When another connection writes between steps, SQLite restarts the copy; after
//! [`MAX_RESTARTS`] restarts the rest is copied in one step, which in WAL mode still blocks
//! no writer. The copy is written to a temporary file next to the destination, switched to
//! `journal_mode=DELETE` (one self-contained file), checked with `PRAGMA integrity_check`,
//! and only then renamed into place.
//!
//! A restore never writes to the live database until the replacement is proven good: the
//! source is copied to a new file next to the database, validated ([`check_database`]:
//! integrity, a schema version this binary supports, every table that version has), the
//! live database is saved under `backups/`, and the validated copy replaces the live
//! contents in one write transaction (the backup API with the live database as its
//! destination). Replacing the file by `rename(2)` instead would leave other processes
//! writing to the old inode and could replay the old `-wal` file into the new one.

use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::{BUSY_TIMEOUT_MS, Context, MIGRATIONS, Result, SCHEMA_VERSION, Store, StoreError};

/// Pages copied per backup step (4 KiB pages: 1 MiB per step).
pub const PAGES_PER_STEP: c_int = 256;

/// Restarts (the source changed between steps) after which the rest of a backup is copied
/// in a single step.
pub const MAX_RESTARTS: u64 = 8;

/// What a backup did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BackupStats {
    /// The file written.
    pub path: PathBuf,
    /// Database pages copied in the final pass.
    pub pages: u64,
    /// Size of the file written, in bytes.
    pub bytes: u64,
    /// `sqlite3_backup_step` calls that copied pages.
    pub steps: u64,
    /// Times SQLite restarted the copy because another connection wrote.
    pub restarts: u64,
}

/// What [`check_database`] found in a database file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DatabaseCheck {
    /// The highest migration recorded (0: no `schema_migrations` table).
    pub schema_version: i64,
    /// Revisions it holds (0 before the memory schema).
    pub revisions: u64,
    /// Pages it holds.
    pub pages: u64,
    /// Everything wrong with it; empty means usable.
    pub problems: Vec<String>,
}

impl Store {
    /// Copies the whole database to `dest` with the online backup API while other
    /// processes may keep writing; `pages_per_step` defaults to [`PAGES_PER_STEP`]. `dest`
    /// must not exist. The copy holds every transaction committed before the backup began
    /// (and possibly later ones) and passes `PRAGMA integrity_check`.
    ///
    /// Errors: [`StoreError::Io`] when `dest` exists or cannot be written,
    /// [`StoreError::Busy`] when the source stays locked past the busy timeout,
    /// [`StoreError::InvalidDatabase`] if the copy fails its integrity check.
    pub fn backup_online(&self, dest: &Path, pages_per_step: Option<c_int>) -> Result<BackupStats> {
        if dest.exists() {
            return Err(StoreError::Io {
                path: dest.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "already exists; choose a new file name (a backup never overwrites)",
                ),
            });
        }
        let partial = sibling(dest, &format!("partial-{}", std::process::id()));
        // A copy that reads damaged pages, or fails its check, says the database is
        // damaged, not the hidden partial copy ("nothing was restored").
        let damaged = |e: StoreError| match &self.path {
            Some(live) => e.damaged_at(live),
            None => e,
        };
        let result = (|| {
            let mut stats = copy_into_new_file(
                &self.conn,
                &partial,
                pages_per_step.unwrap_or(PAGES_PER_STEP),
            )
            .map_err(damaged)?;
            let check = check_database(&partial)?;
            if !check.problems.is_empty() {
                return Err(match &self.path {
                    Some(live) => StoreError::Damaged {
                        path: live.clone(),
                        detail: check.problems.join("; "),
                        newest_backup: newest_backup(live),
                    },
                    None => StoreError::InvalidDatabase {
                        path: partial.clone(),
                        problems: check.problems,
                    },
                });
            }
            place_without_replacing(&partial, dest)?;
            stats.path = dest.to_path_buf();
            stats.bytes = file_len(dest);
            Ok(stats)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        result
    }

    /// Replaces this database's contents with the database at `src`, after copying `src`
    /// to a new file next to this database and validating the copy with
    /// [`check_database`]. The current contents are first saved with
    /// [`Store::backup_online`] to `backups/<stem>-before-restore-<time>.db` next to the
    /// database; the replacement is one write transaction, so other connections see the
    /// old or the new database, never a mix. An older schema is migrated afterwards (with
    /// the usual pre-migration backup).
    ///
    /// Errors: [`StoreError::InvalidDatabase`] (nothing was changed) when `src` is not a
    /// usable loci database — unreadable, corrupt, from a newer loci, or missing tables;
    /// [`StoreError::Io`] for an in-memory store or file errors.
    pub fn restore_from(&mut self, src: &Path) -> Result<RestoreStats> {
        let live = self.path.clone().ok_or_else(|| StoreError::Io {
            path: PathBuf::from(":memory:"),
            source: std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "an in-memory database cannot be restored into",
            ),
        })?;
        if self.read_only {
            // Before the backup is read or the live store copied aside: neither can help.
            return Err(StoreError::ReadOnly {
                path: live,
                what: "restoring a backup into it".into(),
            });
        }
        let staging = sibling(&live, &format!("restore-{}", std::process::id()));
        let check = stage_backup(src, &staging)?;
        let saved = backup_dir_file(&self.conn, &live, "before-restore")?;
        let replaced = self.backup_online(&saved, None).and_then(|_| {
            let validated = Connection::open_with_flags(
                &staging,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .ctx(|| format!("opening {}", staging.display()))?;
            // Whatever the backup API copies in, caches of the old contents are void.
            self.epoch += 1;
            let backup = Backup::new(&validated, &mut self.conn)
                .ctx(|| format!("restoring into {}", live.display()))?;
            run_steps(&backup, -1, &live).map_err(|e| match &e {
                StoreError::Sqlite { source, .. }
                    if source.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) =>
                {
                    StoreError::InvalidDatabase {
                        path: src.to_path_buf(),
                        problems: vec![
                            "its page size differs from the live database's, which a WAL database cannot take; \
                             restore it with the other loci processes stopped after deleting the live database"
                                .into(),
                        ],
                    }
                }
                _ => e,
            })?;
            Ok(())
        });
        let _ = std::fs::remove_file(&staging);
        replaced?;
        let found = crate::migrate::current_version(&self.conn)?;
        crate::migrate::migrate(self, found)?;
        Ok(RestoreStats {
            restored_from: src.to_path_buf(),
            replaced_saved_to: saved,
            schema_version: check.schema_version,
            pages: check.pages,
            revisions: check.revisions,
        })
    }
}

/// Replaces the damaged database file at `live` (one [`Store::open`] refused with
/// [`StoreError::Damaged`], so no connection can be opened on it to restore into) with the
/// backup at `src`: the backup is copied beside `live` and validated as
/// [`Store::restore_from`] does, then the damaged file (with any `-wal` and `-shm` of it,
/// which must not be applied to the backup) is moved to `<dir>/backups/<stem>-damaged-<UTC
/// time>.db` and the copy takes its place. Nothing is changed when the backup is not a
/// usable loci database ([`StoreError::InvalidDatabase`]). Opening the store afterwards
/// migrates the restored file if it is older. Meant for a file no process can use, so it
/// takes no lock.
pub fn restore_over_damaged(live: &Path, src: &Path) -> Result<RestoreStats> {
    let staging = sibling(live, &format!("restore-{}", std::process::id()));
    let check = stage_backup(src, &staging)?;
    let clock = Connection::open_in_memory().ctx(|| "reading the clock".into())?;
    let saved = backup_dir_file(&clock, live, "damaged")?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    let moved = (|| {
        if let Some(dir) = saved.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        std::fs::rename(live, &saved).map_err(io(live))?;
        for suffix in ["-wal", "-shm"] {
            let mut from = live.as_os_str().to_owned();
            from.push(suffix);
            let from = PathBuf::from(from);
            if from.exists() {
                let mut to = saved.as_os_str().to_owned();
                to.push(suffix);
                std::fs::rename(&from, PathBuf::from(to)).map_err(io(&from))?;
            }
        }
        std::fs::rename(&staging, live).map_err(io(live))
    })();
    if let Err(e) = moved {
        // Put the damaged file back where it was rather than leave no database there.
        if !live.exists() && saved.exists() {
            let _ = std::fs::rename(&saved, live);
        }
        let _ = std::fs::remove_file(&staging);
        return Err(e);
    }
    Ok(RestoreStats {
        restored_from: src.to_path_buf(),
        replaced_saved_to: saved,
        schema_version: check.schema_version,
        pages: check.pages,
        revisions: check.revisions,
    })
}

/// The newest backup loci made of the database at `db` (`<dir>/backups/*.db`, by
/// modification time), if any: what [`StoreError::Damaged`] names as the way back.
pub fn newest_backup(db: &Path) -> Option<PathBuf> {
    let dir = db.parent()?.join("backups");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            !name.starts_with('.') && name.ends_with(".db")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

/// What a restore did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RestoreStats {
    /// The backup restored.
    pub restored_from: PathBuf,
    /// Where the database it replaced was saved.
    pub replaced_saved_to: PathBuf,
    /// The restored file's schema version (before migrating it to this binary's).
    pub schema_version: i64,
    /// Memory pages restored.
    pub pages: u64,
    /// Revisions restored.
    pub revisions: u64,
}

/// Checks a database file without changing it: `PRAGMA integrity_check`, a schema version
/// between 1 and [`SCHEMA_VERSION`], and every table that version's migrations create.
/// Problems are listed in [`DatabaseCheck::problems`]; `Err` only for failures to run the
/// check itself (an in-memory database that cannot be created).
pub fn check_database(path: &Path) -> Result<DatabaseCheck> {
    let mut check = DatabaseCheck::default();
    let conn = match Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(c) => c,
        Err(e) => {
            check.problems.push(format!("cannot open it: {e}"));
            return Ok(check);
        }
    };
    let integrity: std::result::Result<Vec<String>, rusqlite::Error> = (|| {
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect()
    })();
    match integrity {
        Ok(lines) if lines == ["ok"] => {}
        Ok(lines) => {
            let shown: Vec<&str> = lines.iter().take(3).map(String::as_str).collect();
            check.problems.push(format!(
                "integrity_check failed: {}{}",
                shown.join("; "),
                if lines.len() > 3 { "; …" } else { "" }
            ));
            return Ok(check);
        }
        Err(e) => {
            check.problems.push(format!("integrity_check failed: {e}"));
            return Ok(check);
        }
    }
    check.schema_version = match crate::migrate::current_version(&conn) {
        Ok(v) => v,
        Err(e) => {
            check.problems.push(format!(
                "cannot read its schema version: {}",
                root_cause(&e)
            ));
            return Ok(check);
        }
    };
    if check.schema_version == 0 {
        check
            .problems
            .push("not a loci database (no schema_migrations table)".into());
        return Ok(check);
    }
    if check.schema_version > SCHEMA_VERSION {
        check.problems.push(format!(
            "schema version {} is newer than this loci supports ({SCHEMA_VERSION}); upgrade loci",
            check.schema_version
        ));
        return Ok(check);
    }
    let present = table_names(&conn).ctx(|| format!("listing the tables of {}", path.display()))?;
    let missing: Vec<String> = expected_tables(check.schema_version)?
        .into_iter()
        .filter(|t| !present.contains(t))
        .collect();
    if !missing.is_empty() {
        check.problems.push(format!(
            "tables missing for schema version {}: {}",
            check.schema_version,
            missing.join(", ")
        ));
        return Ok(check);
    }
    if present.iter().any(|t| t == "pages") {
        let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, u64>(0));
        check.pages = count("SELECT count(*) FROM pages").ctx(|| "counting pages".into())?;
        check.revisions =
            count("SELECT count(*) FROM revisions").ctx(|| "counting revisions".into())?;
    }
    Ok(check)
}

/// The tables a database at `version` has: those the first `version` migrations create,
/// found by applying them to an in-memory database (one source of truth: the migrations).
fn expected_tables(version: i64) -> Result<Vec<String>> {
    let conn = Connection::open_in_memory().ctx(|| "opening an in-memory database".into())?;
    for m in MIGRATIONS.iter().filter(|m| m.version <= version) {
        conn.execute_batch(m.sql)
            .ctx(|| format!("applying migration {:04}_{}", m.version, m.name))?;
    }
    let mut tables = table_names(&conn).ctx(|| "listing tables".into())?;
    tables.push("schema_migrations".into());
    Ok(tables)
}

fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
         ORDER BY name",
    )?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// Copies `source` into a new database file at `dest` (replacing a leftover one),
/// `pages_per_step` pages at a time (-1: all at once), then makes it a single file
/// (`journal_mode=DELETE`).
fn copy_into_new_file(
    source: &Connection,
    dest: &Path,
    pages_per_step: c_int,
) -> Result<BackupStats> {
    if let Some(dir) = dest.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let _ = std::fs::remove_file(dest);
    let mut out = Connection::open(dest).ctx(|| format!("creating {}", dest.display()))?;
    let mut stats = {
        let backup = Backup::new(source, &mut out)
            .ctx(|| format!("starting a backup to {}", dest.display()))?;
        run_steps(&backup, pages_per_step, dest)?
    };
    out.pragma_update(None, "journal_mode", "DELETE")
        .ctx(|| format!("making {} a single file", dest.display()))?;
    out.close()
        .map_err(|(_, e)| StoreError::sqlite(format!("closing {}", dest.display()), e))?;
    stats.path = dest.to_path_buf();
    stats.bytes = file_len(dest);
    Ok(stats)
}

/// Drives `backup` to completion; see the module docs for the restart rule.
fn run_steps(backup: &Backup<'_, '_>, pages_per_step: c_int, dest: &Path) -> Result<BackupStats> {
    let mut stats = BackupStats::default();
    let mut step = pages_per_step;
    let mut last_remaining: Option<c_int> = None;
    let mut waiting_since: Option<Instant> = None;
    loop {
        let result = backup
            .step(step)
            .ctx(|| format!("copying pages to {}", dest.display()))?;
        match result {
            StepResult::Done => {
                stats.steps += 1;
                stats.pages = backup.progress().pagecount.max(0) as u64;
                return Ok(stats);
            }
            StepResult::More => {
                stats.steps += 1;
                waiting_since = None;
                let progress = backup.progress();
                if last_remaining.is_some_and(|prev| progress.remaining > prev) {
                    stats.restarts += 1;
                    if stats.restarts >= MAX_RESTARTS {
                        step = -1;
                    }
                }
                last_remaining = Some(progress.remaining);
            }
            // Busy, Locked (and any result a newer rusqlite adds): wait and retry.
            _ => {
                let since = *waiting_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_millis(BUSY_TIMEOUT_MS) {
                    return Err(StoreError::Busy {
                        path: dest.to_path_buf(),
                        waited_ms: BUSY_TIMEOUT_MS,
                    });
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Copies the backup `src` to `staging` (a new file beside the live store) and checks the
/// copy ([`check_database`]), so a restore reads the backup once and never puts an
/// unusable file in place. The copy is removed when it fails.
///
/// Errors: [`StoreError::InvalidDatabase`] naming `src` when it is missing, cannot be
/// opened or read, or fails the check.
fn stage_backup(src: &Path, staging: &Path) -> Result<DatabaseCheck> {
    let invalid = |problems: Vec<String>| StoreError::InvalidDatabase {
        path: src.to_path_buf(),
        problems,
    };
    if !src.is_file() {
        return Err(invalid(vec!["no such file".into()]));
    }
    let _ = std::fs::remove_file(staging);
    let staged = (|| {
        let source = crate::read_only_connection(src).map_err(|e| match e {
            StoreError::UnappliedLog { .. } => invalid(vec![
                "it has a write-ahead log (-wal) that a killed writer left unapplied; open it once with `loci --db FILE stats` to apply it, then restore".into(),
            ]),
            e => invalid(vec![format!("cannot open it: {}", root_cause(&e))]),
        })?;
        copy_into_new_file(&source, staging, -1)
            .map_err(|e| invalid(vec![format!("cannot read it: {}", root_cause(&e))]))?;
        let check = check_database(staging)?;
        if !check.problems.is_empty() {
            return Err(invalid(check.problems));
        }
        Ok(check)
    })();
    if staged.is_err() {
        let _ = std::fs::remove_file(staging);
    }
    staged
}

/// `<dir>/.<name>.<tag>`: a hidden file next to `path`.
fn sibling(path: &Path, tag: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "loci.db".into());
    path.with_file_name(format!(".{name}.{tag}"))
}

/// Moves the finished copy `partial` to `dest`, failing with [`StoreError::Io`]
/// (`AlreadyExists`) if `dest` exists by now: a hard link never replaces a file, where
/// rename(2) would (another backup to the same name may have finished since the caller
/// checked). `partial` is removed on success.
fn place_without_replacing(partial: &Path, dest: &Path) -> Result<()> {
    std::fs::hard_link(partial, dest).map_err(|source| StoreError::Io {
        path: dest.to_path_buf(),
        source: if source.kind() == std::io::ErrorKind::AlreadyExists {
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "already exists; choose a new file name (a backup never overwrites)",
            )
        } else {
            source
        },
    })?;
    let _ = std::fs::remove_file(partial);
    Ok(())
}

/// Deletes the incomplete copies that pre-migration backups of `db` killed midway left in
/// its `backups/` directory (`.<stem>-v<N>-<time>.db.partial-<pid>`). Only migrations
/// write such files, under the store lock, which the caller holds: none is being written
/// now. Failures to delete are logged, never fatal (the file is only clutter).
pub(crate) fn remove_partial_migration_backups(db: &Path) {
    let dir = db
        .parent()
        .map(|p| p.join("backups"))
        .unwrap_or_else(|| "backups".into());
    let stem = db
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "loci".into());
    let prefix = format!(".{stem}-v");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.contains(".db.partial-") {
            match std::fs::remove_file(e.path()) {
                Ok(()) => {
                    tracing::info!(path = %e.path().display(), "removed an incomplete backup")
                }
                Err(err) => {
                    tracing::warn!(path = %e.path().display(), "cannot remove an incomplete backup: {err}")
                }
            }
        }
    }
}

/// `<db dir>/backups/<stem>-<tag>-<UTC time>.db`, not yet existing.
pub(crate) fn backup_dir_file(conn: &Connection, db: &Path, tag: &str) -> Result<PathBuf> {
    let dir = db
        .parent()
        .map(|p| p.join("backups"))
        .unwrap_or_else(|| "backups".into());
    let stem = db
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "loci".into());
    let stamp: String = conn
        .query_row("SELECT strftime('%Y%m%dT%H%M%SZ', 'now')", [], |r| r.get(0))
        .ctx(|| "reading the clock".into())?;
    for n in 0.. {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = dir.join(format!("{stem}-{tag}-{stamp}{suffix}.db"));
        if !candidate.exists() {
            return Ok(candidate);
        }
    }
    unreachable!("an unbounded range always yields a free name")
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn root_cause(e: &StoreError) -> String {
    match e {
        StoreError::Sqlite { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy is linked into place, which fails on an existing file: rename(2) replaces a
    /// file, so a backup that checked its destination did not exist, copied, then renamed
    /// the copy into place would overwrite a backup to the same name that finished in
    /// between.
    #[test]
    fn a_finished_backup_never_replaces_a_file_that_appeared_while_it_copied() {
        let dir = tempfile::tempdir().unwrap();
        let partial = dir.path().join(".copy.db.partial-1");
        let dest = dir.path().join("copy.db");
        std::fs::write(&partial, b"this backup").unwrap();
        std::fs::write(&dest, b"the other backup").unwrap();
        let err = place_without_replacing(&partial, &dest).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(std::fs::read(&dest).unwrap(), b"the other backup");
        std::fs::remove_file(&dest).unwrap();
        place_without_replacing(&partial, &dest).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"this backup");
        assert!(!partial.exists(), "the partial copy is gone");
    }
}

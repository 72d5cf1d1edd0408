//! SQLite storage for loci: one database file per checkout (`.loci/loci.db`, WAL),
//! numbered migrations recorded in `schema_migrations`, and typed queries.
//!
//! Architecture invariant: this is the only crate that writes SQL. Every write goes through
//! [`Store::write`], a short `BEGIN IMMEDIATE` transaction (a deferred transaction that
//! later upgrades to a write fails at once with `SQLITE_BUSY` even with a busy timeout).
//! Long work, such as parsing, never happens inside a transaction.

pub mod audit;
pub mod backup;
pub mod common_terms;
mod error;
pub mod logs;
pub mod map;
pub mod memory;
mod migrate;
pub mod scip;
pub mod search;
pub mod synthesis;
pub mod team;
pub mod unsaved;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

pub use error::{Context, Result, StoreError};
pub use migrate::{MIGRATIONS, Migration, SCHEMA_VERSION};
pub use rusqlite;

/// How long a connection waits for another process's write lock before giving up, in
/// milliseconds (SQLite `busy_timeout`).
pub const BUSY_TIMEOUT_MS: u64 = 5_000;

/// How many times [`Store::write`] retries a transaction that still met `SQLITE_BUSY`
/// after the busy timeout, before returning [`StoreError::Busy`].
pub const WRITE_RETRIES: u32 = 3;

/// Prepared statements kept per connection (rusqlite's LRU statement cache).
const PREPARED_STATEMENT_CACHE: usize = 128;

/// An open loci database.
pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
    /// Opened read-only because the file cannot be written (see [`Store::open`]).
    read_only: bool,
    /// Bumped whenever the contents are replaced by other means than SQL statements on
    /// this connection (a restore through the backup API), which neither
    /// `PRAGMA data_version` nor the connection's change count sees.
    epoch: u64,
    /// Term statistics of the snapshot [`Store::data_stamp`] names (see
    /// [`Store::term_stats`]).
    term_cache: std::sync::Mutex<TermStatsCache>,
    /// The schema is current, so a write transaction ends by merging the segments of the
    /// memory's full-text index (see [`Store::write`]); false while migrations run.
    merges_segments: bool,
}

/// Which version of the data a connection sees: `PRAGMA data_version` (changes committed
/// by other connections), the connection's own change count (`sqlite3_total_changes`:
/// rows its statements and their triggers inserted, updated or deleted, committed or
/// not), and the store's epoch. Equal stamps mean equal data; a changed stamp may not
/// mean changed data (a rolled-back write changes it too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataStamp {
    data_version: i64,
    total_changes: u64,
    epoch: u64,
}

/// The settings of every connection: foreign keys on; a page cache of 16 MiB (negative
/// `cache_size` is KiB); and reads through a memory map of up to [`MMAP_BYTES`] instead of
/// a `pread` and a copy per page: a whole `loci context` process on the stdlib spent 6.5%
/// of its time in `pread`, and 8–14% less CPU with the map (2026-12-02,
/// docs/benchmarks.md). The map is address space; its pages are the OS's file cache, but
/// those a process touches count in its RSS, so a scan reads without it
/// ([`Store::set_memory_map`]).
const CONNECTION_PRAGMAS: &str =
    "PRAGMA foreign_keys = ON; PRAGMA cache_size = -16384; PRAGMA mmap_size = 1073741824;"; // MMAP_BYTES

/// The most of the database file a connection maps (`mmap_size`, bytes): 1 GiB.
pub const MMAP_BYTES: u64 = 1 << 30;

/// Entries [`Store::term_stats`] keeps before starting over (a long-running server asked
/// many different questions between two writes).
const TERM_CACHE_ENTRIES: usize = 100_000;

/// Row counts and document frequencies read under one [`DataStamp`].
#[derive(Default)]
struct TermStatsCache {
    stamp: Option<DataStamp>,
    rows: std::collections::HashMap<search::FtsTable, u64>,
    dfs: std::collections::HashMap<(search::FtsTable, String), u64>,
}

/// Bytes percent-encoded in the path of a SQLite `file:` URI: controls, space and the
/// characters that end or escape the path (`?`, `#`, `%`) or are not URI characters.
const URI_PATH_RESERVED: percent_encoding::AsciiSet = percent_encoding::CONTROLS
    .add(b' ')
    .add(b'?')
    .add(b'#')
    .add(b'%')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}');

impl Store {
    fn new(conn: Connection, path: Option<PathBuf>, read_only: bool) -> Store {
        Store {
            conn,
            path,
            read_only,
            epoch: 0,
            term_cache: Default::default(),
            merges_segments: false,
        }
    }

    /// Opens (creating if needed) the database at `path`, sets WAL, foreign keys and the
    /// busy timeout, and brings the schema up to [`SCHEMA_VERSION`]. A non-empty database
    /// that needs migrating is first copied to `<dir>/backups/`. A database whose schema
    /// is newer than this binary is refused with [`StoreError::NewerSchema`] and left
    /// untouched.
    ///
    /// A database that exists but cannot be written (no write permission on it or its
    /// directory, a read-only mount) is opened read-only instead: every read works, and
    /// [`Store::write`] returns [`StoreError::ReadOnly`] without touching it (see
    /// [`Store::is_read_only`]). Such a database must already have this binary's schema.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        if path.exists() && !path.is_file() {
            // `--db /dev/null` or a directory: SQLite would open it and create
            // `/dev/null-journal` and a lock file beside it.
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a regular file: a loci store is a SQLite database file",
                ),
            });
        }
        let opened = match Self::open_read_write(path) {
            Err(e) if e.is_read_only_file() && path.is_file() => {
                tracing::info!(db = %path.display(), error = %e, "the store cannot be written; opening it read-only");
                Self::open_read_only(path)
            }
            other => other,
        };
        // A damaged file (random bytes, a truncated copy) is named with the way out, and
        // any other failure names the file.
        opened.map_err(|e| e.at(path))
    }

    /// The tables of authored memory ([`Store::check_memory`]).
    const MEMORY_TABLES: &[&str] = &[
        "schema_migrations",
        "pages",
        "revisions",
        "claims",
        "sessions",
        "events",
        "facts",
        "topic_members",
        "operations",
        "contradictions",
    ];

    /// `PRAGMA quick_check` of each table of authored memory (the table and its indexes:
    /// <https://sqlite.org/pragma.html#pragma_quick_check>): a damaged page there is
    /// [`StoreError::Damaged`], naming the table, with the ways out. Commands that report
    /// on the store call it first, and those that write memory or the map when a check
    /// is due ([`Store::check_memory_within`]), so that a damaged page does not pass
    /// `scan`, `stats` and `remember` with exit 0 and fail only the queries that read it.
    ///
    /// Cost (measured in-process, docs/benchmarks.md "Issue 37"): 6 ms for a store with
    /// 506 revisions, 120–260 ms for one with 12,280 (the claims' indexes are most of
    /// it); the whole file, which every open would then read, 1.6–1.8 s for a 125–157 MiB
    /// store. Neither is cheap enough for every open of every command (a `context`
    /// answers in 25 ms), so reads do not check.
    pub fn check_memory(&self) -> Result<()> {
        let names: Vec<String> = Self::MEMORY_TABLES
            .iter()
            .map(|t| format!("'{t}'"))
            .collect();
        let present: Vec<String> = self
            .conn
            .prepare(&format!(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({})",
                names.join(", ")
            ))
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .ctx(|| "reading the tables of memory".into())?;
        for table in &present {
            let problems: Vec<String> = self
                .conn
                .prepare(&format!("PRAGMA quick_check({table})"))
                .and_then(|mut st| {
                    st.query_map([], |r| r.get::<_, String>(0))?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                // A root page too damaged to walk fails the pragma itself.
                .or_else(|e| match e.sqlite_error_code() {
                    Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                        Ok(vec![e.to_string()])
                    }
                    _ => Err(e),
                })
                .ctx(|| format!("checking the table {table}"))?;
            if problems.first().is_some_and(|p| p != "ok") {
                return Err(StoreError::Damaged {
                    path: self.path.clone().unwrap_or_default(),
                    detail: format!("table {table}: {}", problems.join("; ")),
                    newest_backup: self.path.as_deref().and_then(backup::newest_backup),
                });
            }
        }
        Ok(())
    }

    /// [`Store::check_memory`], unless a check of this store passed within the last
    /// `max_age` (recorded in `meta`; [`MEMORY_CHECK_INTERVAL`] for what writes or lints,
    /// zero for what reports on the store): the check costs what memory holds (200 ms for
    /// 15,000 entries), and a command that writes or lints one entry at a time must cost
    /// what it adds. Damage a query meets between checks is diagnosed then, by the same
    /// check (`loci` names the table either way).
    ///
    /// Errors: as [`Store::check_memory`]; failing to record the check is not an error
    /// (the next command checks again).
    pub fn check_memory_within(&mut self, max_age: Duration) -> Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let last: Option<u64> = self
            .meta(MEMORY_CHECKED_AT)
            .ok()
            .flatten()
            .and_then(|v| v.parse().ok());
        if last.is_some_and(|t| t <= now && now - t < max_age.as_secs()) {
            return Ok(());
        }
        self.check_memory()?;
        if !self.read_only {
            let _ = self.write(|tx| set_meta(tx, MEMORY_CHECKED_AT, &now.to_string()));
        }
        Ok(())
    }

    fn open_read_write(path: &Path) -> Result<Store> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::sqlite(format!("opening {}", path.display()), e))?;
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            // SQLite opened a write-protected file read-only by itself. Nothing may be
            // read through this connection: in a writable directory the first read would
            // create a `-shm` and `-wal` of this user's, read-only like the file.
            return Err(StoreError::ReadOnly {
                path: path.to_path_buf(),
                what: "opening it for writing".into(),
            });
        }
        let mut store = Store::new(conn, Some(path.to_path_buf()), false);
        let state = store.configure()?;
        let migrated = migrate::migrate(&mut store, state.version)?;
        store.merges_segments = true;
        // After a migration the indexes are those it made: look again.
        if migrated || state.bulk_missing {
            store.finish_interrupted_bulk_load()?;
        }
        Ok(store)
    }

    /// Opens `path` read-only, creating nothing beside it (a `-shm` this user made would
    /// be theirs and read-only, and would refuse the owner's writes afterwards). With the
    /// SQLite URI parameters of <https://sqlite.org/uri.html>:
    /// - another process has the store open (its `-shm` exists): `mode=ro`, reading
    ///   through that `-shm`, so its commits are seen;
    /// - nobody has it open (no `-wal`, no `-shm`: SQLite removes both when the last
    ///   connection closes): `immutable=1`, the file as it is;
    /// - a `-wal` without a `-shm` (a writer was killed): its commits can only be applied
    ///   by a process that may write, so reading now would answer from before them:
    ///   [`StoreError::UnappliedLog`].
    fn open_read_only(path: &Path) -> Result<Store> {
        let conn = read_only_connection(path)?;
        let mut store = Store::new(conn, Some(path.to_path_buf()), true);
        store.configure()?;
        Ok(store)
    }

    /// True when the store was opened read-only because it cannot be written (see
    /// [`Store::open`]): reads work, writes return [`StoreError::ReadOnly`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Restores the indexes and full-text triggers that a first scan's bulk load drops
    /// (see [`map::drop_bulk_indexes`]) when that scan was killed before restoring them,
    /// so searches from any process see the whole map without waiting for the next scan.
    /// Skipped while another connection holds the store lock: a scan is loading now and
    /// restores them itself.
    fn finish_interrupted_bulk_load(&mut self) -> Result<()> {
        if !map::bulk_indexes_missing(&self.conn)? {
            return Ok(());
        }
        let Some(_lock) = self.try_lock()? else {
            return Ok(());
        };
        if map::bulk_indexes_missing(&self.conn)? {
            tracing::info!("restoring the search indexes of a first scan that was interrupted");
            self.write(map::create_bulk_indexes)?;
        }
        Ok(())
    }

    /// Opens a private in-memory database with the full schema (for tests and
    /// single-file mode).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory()
            .map_err(|e| StoreError::sqlite("opening an in-memory database", e))?;
        let mut store = Store::new(conn, None, false);
        let state = store.configure()?;
        migrate::migrate(&mut store, state.version)?;
        store.merges_segments = true;
        Ok(store)
    }

    /// Sets up the connection and reads what opening needs to know of the schema
    /// ([`migrate::read_state`]: a newer or foreign database is refused here, before
    /// anything writes).
    fn configure(&mut self) -> Result<migrate::SchemaState> {
        self.conn
            .busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS))
            .map_err(|e| StoreError::sqlite("setting busy_timeout", e))?;
        // The query planner stability guarantee: plans never depend on bound values.
        // Without it, SQLite 3.54 marks every `column = ?` plan as depending on its
        // value, and rusqlite clears a cached statement's bindings when it is returned
        // to the cache (`sqlite3_clear_bindings` expires such a plan), so every cached
        // statement was compiled again on every use: 40% of `loci check`'s time.
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(|e| StoreError::sqlite("enabling the query planner stability guarantee", e))?;
        // Enough room for every statement of a lint or a scan batch (the default is 16).
        self.conn
            .set_prepared_statement_cache_capacity(PREPARED_STATEMENT_CACHE);
        // Checking the schema version must precede anything that writes (journal_mode
        // writes the header), so that a newer database is left byte-for-byte untouched.
        let state = migrate::read_state(self)?;
        if self.read_only {
            // Nothing that writes: no WAL switch, and no migration to run.
            if state.version < SCHEMA_VERSION {
                return Err(StoreError::ReadOnly {
                    path: self.path.clone().unwrap_or_default(),
                    what: format!(
                        "migrating schema version {} to {SCHEMA_VERSION}",
                        state.version
                    ),
                });
            }
            self.conn
                .execute_batch(CONNECTION_PRAGMAS)
                .map_err(|e| StoreError::sqlite("setting foreign_keys", e))?;
            return Ok(state);
        }
        // The journal mode is kept in the file: only a new database needs the switch.
        // Switching a new database to WAL takes an exclusive lock without SQLite's busy
        // handler, so a process opening it at the same moment as another fails at once
        // ("database is locked"): retry until the busy timeout instead.
        if !state.wal {
            let deadline = std::time::Instant::now() + Duration::from_millis(BUSY_TIMEOUT_MS);
            loop {
                match self.conn.pragma_update(None, "journal_mode", "WAL") {
                    Ok(()) => break,
                    Err(e)
                        if matches!(
                            e.sqlite_error_code(),
                            Some(
                                rusqlite::ErrorCode::DatabaseBusy
                                    | rusqlite::ErrorCode::DatabaseLocked
                            )
                        ) && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => return Err(StoreError::sqlite("setting journal_mode=WAL", e)),
                }
            }
        }
        self.conn
            .execute_batch(&format!(
                "{CONNECTION_PRAGMAS} PRAGMA synchronous = NORMAL;"
            ))
            .map_err(|e| StoreError::sqlite("setting foreign_keys and synchronous", e))?;
        Ok(state)
    }

    /// Reads through a memory map of the file ([`MMAP_BYTES`]) when `on`, else with a
    /// `pread` per page. A scan reads nearly every page of the store while writing it:
    /// through the map, those pages counted in its peak RSS (151 MiB against 106 MiB on
    /// the stdlib), for no gain in time.
    ///
    /// Errors: [`StoreError::Sqlite`] when the pragma fails.
    pub fn set_memory_map(&self, on: bool) -> Result<()> {
        let bytes = if on { MMAP_BYTES } else { 0 };
        self.conn
            .execute_batch(&format!("PRAGMA mmap_size = {bytes};"))
            .map_err(|e| StoreError::sqlite("setting mmap_size", e))
    }

    /// The database file, or `None` for an in-memory database.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The connection, for reads. Writes must use [`Store::write`].
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` in one read transaction (`BEGIN DEFERRED`), so every statement of an
    /// answer sees the same snapshot of the store, and the WAL read lock is taken once
    /// instead of once per statement (per statement, the lock's `fcntl` calls were 16%
    /// of an `impact` that reached 825 files). Inside a transaction already, `f` simply
    /// runs in it. `f` must only read: its writes would be committed with the snapshot.
    pub fn read<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        if !self.conn.is_autocommit() {
            return f();
        }
        self.conn
            .execute_batch("BEGIN DEFERRED")
            .map_err(|e| StoreError::sqlite("beginning a read transaction", e))?;
        let out = f();
        // Nothing was written: ending the snapshot either way only releases the lock.
        let end = if out.is_ok() { "COMMIT" } else { "ROLLBACK" };
        if let Err(e) = self.conn.execute_batch(end)
            && out.is_ok()
        {
            return Err(StoreError::sqlite("ending a read transaction", e).into());
        }
        out
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction and commits it. If SQLite still
    /// reports `SQLITE_BUSY`/`SQLITE_LOCKED` after the busy timeout, the whole transaction is
    /// retried up to [`WRITE_RETRIES`] times, then [`StoreError::Busy`] is returned (a
    /// retryable error; the process never exits). `f` may therefore run more than once
    /// and must not have side effects outside the transaction. Before it commits, the
    /// memory's full-text index gets a bounded merge of its levels
    /// ([`search::merge_levels`], at most [`search::MERGE_PAGES`] pages): memory written
    /// one revision at a time stays a few segments (one per level), which every search
    /// reads, and a write costs what it adds, not what memory holds.
    pub fn write<T>(&mut self, mut f: impl FnMut(&Transaction<'_>) -> Result<T>) -> Result<T> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                path: self.path.clone().unwrap_or_default(),
                what: "a write".into(),
            });
        }
        let mut attempt = 0;
        loop {
            match self.try_write(&mut f) {
                Err(e) if e.is_busy() && attempt < WRITE_RETRIES => {
                    attempt += 1;
                    tracing::warn!(attempt, "database busy; retrying the write transaction");
                    std::thread::sleep(Duration::from_millis(50 << attempt));
                }
                Err(e) if e.is_busy() => {
                    return Err(StoreError::Busy {
                        path: self.path.clone().unwrap_or_default(),
                        waited_ms: BUSY_TIMEOUT_MS * u64::from(WRITE_RETRIES + 1),
                    });
                }
                // A failed write names the file (`database or disk is full` does not).
                other => {
                    return other.map_err(|e| match &self.path {
                        Some(path) => e.at(path),
                        None => e,
                    });
                }
            }
        }
    }

    fn try_write<T>(&mut self, f: &mut impl FnMut(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| StoreError::sqlite("beginning a write transaction", e))?;
        let value = f(&tx)?;
        if self.merges_segments {
            search::merge_levels(&tx, search::FtsTable::Revisions, search::MERGE_PAGES)?;
        }
        tx.commit()
            .map_err(|e| StoreError::sqlite("committing a write transaction", e))?;
        Ok(value)
    }

    /// The version of the data this connection sees now (inside a read transaction: of
    /// its snapshot). For caches of derived facts: while the stamp is equal, so is the
    /// data.
    ///
    /// Errors: [`StoreError::Sqlite`] when `PRAGMA data_version` cannot be read.
    pub fn data_stamp(&self) -> Result<DataStamp> {
        let data_version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(|e| StoreError::sqlite("reading the data version", e))?;
        Ok(DataStamp {
            data_version,
            total_changes: self.conn.total_changes(),
            epoch: self.epoch,
        })
    }

    /// [`search::term_stats`] of `table` for `terms`, from a cache of the current
    /// [`Store::data_stamp`]: a long-running server answering question after question
    /// between two writes reads each term's document frequency once (an `fts5vocab`
    /// lookup walks the term's whole posting list). Shape as [`search::term_stats`]:
    /// `(rows, one document frequency per term)`.
    ///
    /// Errors: as [`search::term_stats`].
    pub fn term_stats(&self, table: search::FtsTable, terms: &[String]) -> Result<(u64, Vec<u64>)> {
        let stamp = self.data_stamp()?;
        let mut cache = self.term_cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.stamp != Some(stamp) || cache.dfs.len() > TERM_CACHE_ENTRIES {
            *cache = TermStatsCache {
                stamp: Some(stamp),
                ..Default::default()
            };
        }
        let rows = match cache.rows.get(&table) {
            Some(&n) => n,
            None => {
                let n = search::fts_row_count(&self.conn, table)?;
                cache.rows.insert(table, n);
                n
            }
        };
        let mut missing: Vec<String> = Vec::new();
        let mut asked = std::collections::HashSet::new();
        for t in terms {
            if !cache.dfs.contains_key(&(table, t.clone())) && asked.insert(t.as_str()) {
                missing.push(t.clone());
            }
        }
        let found = search::document_frequencies(&self.conn, table, &missing)?;
        for (t, df) in missing.into_iter().zip(found) {
            cache.dfs.insert((table, t), df);
        }
        let dfs = terms
            .iter()
            .map(|t| cache.dfs.get(&(table, t.clone())).copied().unwrap_or(0))
            .collect();
        Ok((rows, dfs))
    }

    /// Reads a `meta` value.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| StoreError::sqlite(format!("reading meta {key}"), e))
    }

    /// Takes the store's [`StoreLock`], waiting while another connection holds it
    /// (`for_what` is logged then). An in-memory store has no lock.
    ///
    /// Errors: [`StoreError::Io`] when the lock file cannot be created or locked.
    pub fn lock(&self, for_what: &str) -> Result<StoreLock> {
        let Some((path, file)) = self.lock_file()? else {
            return Ok(StoreLock { _file: None });
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                tracing::info!(lock = %path.display(), "another loci process holds the store lock; waiting to start {for_what}");
                file.lock()
                    .map_err(|source| StoreError::Io { path, source })?;
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(StoreError::Io { path, source });
            }
        }
        Ok(StoreLock { _file: Some(file) })
    }

    /// Takes the store's [`StoreLock`] if no other connection holds it: `None` when one
    /// does. An in-memory store has no lock (always `Some`).
    ///
    /// Errors: [`StoreError::Io`] when the lock file cannot be created or locked.
    pub fn try_lock(&self) -> Result<Option<StoreLock>> {
        let Some((path, file)) = self.lock_file()? else {
            return Ok(Some(StoreLock { _file: None }));
        };
        match file.try_lock() {
            Ok(()) => Ok(Some(StoreLock { _file: Some(file) })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(source)) => Err(StoreError::Io { path, source }),
        }
    }

    /// The lock file, opened (created if missing); `None` for an in-memory store.
    fn lock_file(&self) -> Result<Option<(PathBuf, std::fs::File)>> {
        let Some(db) = &self.path else {
            return Ok(None);
        };
        if self.read_only {
            // Nothing is written through this connection, so it takes no turn.
            return Ok(None);
        }
        let path = lock_path(db);
        let file = open_lock_file(&path)?;
        Ok(Some((path, file)))
    }
}

/// Opens (creating) the lock file `path`, never truncating what another process holds.
fn open_lock_file(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })
}

/// The file a running team listener of the database `db` holds a shared lock on:
/// `<db>-listening`. The OS releases it when the listener's process ends, however it
/// ends, so an answer can tell a live listener's word from a dead one's.
pub fn listening_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-listening");
    PathBuf::from(name)
}

impl Store {
    /// Takes a shared lock on [`listening_path`] for as long as the returned file is
    /// kept: what a team listener holds while it vouches for the replica. `None` for an
    /// in-memory or read-only store.
    ///
    /// Errors: [`StoreError::Io`] when the file cannot be created or locked.
    pub fn hold_listening(&self) -> Result<Option<std::fs::File>> {
        let Some(db) = self.path.as_ref().filter(|_| !self.read_only) else {
            return Ok(None);
        };
        let path = listening_path(db);
        let file = open_lock_file(&path)?;
        file.lock_shared()
            .map_err(|source| StoreError::Io { path, source })?;
        Ok(Some(file))
    }

    /// Whether a process holds [`Store::hold_listening`]'s lock now. False when the file
    /// is missing or cannot be read, and for an in-memory store.
    pub fn listening(&self) -> bool {
        let Some(db) = &self.path else {
            return false;
        };
        let Ok(file) = std::fs::File::open(listening_path(db)) else {
            return false;
        };
        // An exclusive lock taken (and dropped at once) means no listener holds it.
        matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
    }
}

/// The lock file of the database `db`: `<db>-lock`, next to SQLite's `-wal` and `-shm`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-lock");
    PathBuf::from(name)
}

/// An exclusive advisory lock (`flock`) on the file `<database>-lock`, held while the
/// schema is migrated and while the map is rebuilt (scan, lint), so that the processes
/// and connections sharing a store take turns for that work: two scans planning their
/// writes from the same old map would otherwise insert the same files twice. Memory
/// writes and reads never take it. Dropping the guard releases the lock; so does the OS
/// when the holder exits or is killed, so a crash never leaves the store locked.
#[derive(Debug)]
pub struct StoreLock {
    _file: Option<std::fs::File>,
}

/// The first 20 bytes of the file at `path` (SQLite's header starts there,
/// <https://sqlite.org/fileformat2.html#database_header>); `None` for an unreadable or
/// shorter file.
fn header(path: &Path) -> Option<[u8; 20]> {
    use std::io::Read;
    let mut bytes = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ok()
        .map(|()| bytes)
}

/// Whether the file at `path` begins with the 16-byte header string of every SQLite
/// database (`"SQLite format 3\0"`): `loci restore` puts a backup only in the place of
/// a file that is one, or of loci's own.
pub fn is_sqlite_file(path: &Path) -> bool {
    header(path).is_some_and(|h| &h[..16] == b"SQLite format 3\0")
}

/// Whether the SQLite file at `path` is in WAL mode: its header's write and read format
/// versions (bytes 18 and 19) are 2. An unreadable or short file is taken as not.
fn in_wal_mode(path: &Path) -> bool {
    header(path).is_some_and(|h| h[18] == 2 && h[19] == 2)
}

/// A read-only connection to the SQLite database at `path` that creates nothing beside it
/// (see [`Store::open`]'s read-only case for the three states of `-wal` and `-shm`). Also
/// how a backup is read for `loci restore`: a read-only connection to a WAL database with
/// no `-shm` would leave a `-shm` and `-wal` beside the user's backup.
///
/// Errors: [`StoreError::UnappliedLog`] for a `-wal` without a `-shm`;
/// [`StoreError::Sqlite`] when SQLite cannot open the file.
pub(crate) fn read_only_connection(path: &Path) -> Result<Connection> {
    let beside = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let params = match (beside("-wal").exists(), beside("-shm").exists()) {
        (_, true) => "mode=ro",
        // A rollback-journal database read read-only creates nothing, and takes the locks
        // that keep a writer's changes from tearing what it reads.
        (false, false) if !in_wal_mode(path) => "mode=ro",
        (false, false) => "mode=ro&immutable=1",
        (true, false) => {
            return Err(StoreError::UnappliedLog {
                path: path.to_path_buf(),
            });
        }
    };
    let encoded =
        percent_encoding::utf8_percent_encode(&path.to_string_lossy(), &URI_PATH_RESERVED)
            .to_string();
    Connection::open_with_flags(
        format!("file:{encoded}?{params}"),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::sqlite(format!("opening {} read-only", path.display()), e))
}

/// How long a passed [`Store::check_memory`] spares the commands that write memory or
/// lint ([`Store::check_memory_within`]).
pub const MEMORY_CHECK_INTERVAL: Duration = Duration::from_secs(600);

/// `meta` key: when [`Store::check_memory`] last passed, in seconds since the epoch.
const MEMORY_CHECKED_AT: &str = "memory_checked_at";

/// Reads a `meta` value over `conn` (inside a transaction or not); `None` when unset.
///
/// Errors: [`StoreError::Sqlite`] when the value cannot be read.
pub fn read_meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")
        .and_then(|mut st| st.query_row([key], |r| r.get(0)).optional())
        .map_err(|e| StoreError::sqlite(format!("reading meta {key}"), e))
}

/// The calendar day (`YYYY-MM-DD`) SQLite's `strftime` reads in the moment `at`, `None`
/// when it reads no moment there. SQLite rolls an impossible day over (`2026-02-30` is
/// March 2).
///
/// Errors: [`StoreError::Sqlite`] when SQLite fails.
pub fn calendar_day(conn: &Connection, at: &str) -> Result<Option<String>> {
    conn.query_row("SELECT strftime('%Y-%m-%d', ?1)", [at], |r| r.get(0))
        .map_err(|e| StoreError::sqlite("reading a date", e))
}

/// Writes a `meta` value inside a write transaction.
pub fn set_meta(tx: &Transaction<'_>, key: &str, value: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )
    .map_err(|e| StoreError::sqlite(format!("writing meta {key}"), e))?;
    Ok(())
}

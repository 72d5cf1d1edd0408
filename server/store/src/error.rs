//! The store's one error enum.

use std::path::PathBuf;

/// `Result` with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Everything that can go wrong in the store. Messages are lower-case and say what failed,
/// on what, and where possible what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A SQLite call failed; `context` says what loci was doing.
    #[error("{context}: {source}")]
    Sqlite {
        /// What loci was doing (`inserting symbols for src/a.rs`).
        context: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer loci; it is left untouched.
    #[error(
        "{path}: schema version {found} is newer than this loci supports ({supported}); \
         upgrade loci, or point --db at another file. The database was not modified."
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The highest migration recorded in it.
        found: i64,
        /// The highest migration this binary knows.
        supported: i64,
    },
    /// Another process held the write lock for longer than the busy timeout, repeatedly.
    #[error(
        "{path}: the database stayed locked by another process for {waited_ms} ms; \
         the write was not applied, retry it"
    )]
    Busy {
        /// The database file.
        path: PathBuf,
        /// Total time waited, in milliseconds.
        waited_ms: u64,
    },
    /// A filesystem operation around the database failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The database to open is another application's: it has tables but none of loci's
    /// (no `schema_migrations`). It was left untouched.
    #[error(
        "{path}: not a loci database (it has the tables {tables} and no schema_migrations); left untouched: check --db or LOCI_DB"
    )]
    ForeignDatabase {
        /// The file.
        path: PathBuf,
        /// Up to three of its tables, comma-separated (`...` when it has more).
        tables: String,
    },
    /// A file offered as a database (a backup to restore) is not a usable loci database;
    /// nothing was changed.
    #[error("{path}: not a usable loci database: {}; nothing was restored", problems.join("; "))]
    InvalidDatabase {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problems: Vec<String>,
    },
    /// The database can be read but not written (no write permission on the file or its
    /// directory, or a read-only filesystem): a write, a scan or a needed migration was
    /// refused before anything was changed.
    #[error(
        "{path}: the store is read-only (no write permission on it or its directory); \
         {what} was refused: answers come from the store as it is"
    )]
    ReadOnly {
        /// The database file.
        path: PathBuf,
        /// What needed to write (`a write`, `migrating schema version 5 to 8`).
        what: String,
    },
    /// A read-only store whose write-ahead log holds commits nobody has applied (the
    /// writer was killed): only a process that may write can apply them, and reading
    /// without them would answer from before them.
    #[error(
        "{path}: the store is read-only and its write-ahead log ({path}-wal) holds commits \
         that only a process allowed to write can apply; run any loci command as the \
         store's owner, then read again"
    )]
    UnappliedLog {
        /// The database file.
        path: PathBuf,
    },
    /// A value in the database did not have the expected shape.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// SQLite found the database file damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`: random
    /// bytes, a truncated copy). Found at open, nothing was written to it; found by a later
    /// query, the command may have written before it (a scan records its start first). The
    /// message says the ways out, `loci export` first (it reads what still reads).
    #[error(
        "{path}: the database is damaged ({detail}). `loci export -o FILE` may still save the \
         memory it holds; `loci restore BACKUP` puts a backup in its place{} and keeps the \
         damaged file in {}; or move it aside and run `loci scan` for a new one (the memory \
         it held would be lost)",
        newest_backup.as_ref().map(|b| format!(" (the newest loci made: {})", b.display())).unwrap_or_default(),
        path.parent().unwrap_or(std::path::Path::new("")).join("backups").display()
    )]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// SQLite's words (`file is not a database`).
        detail: String,
        /// The newest backup loci made of it (`<dir>/backups/*.db`), if any.
        newest_backup: Option<PathBuf>,
    },
    /// A request broke a rule of the data model (e.g. an optimistic-concurrency conflict).
    #[error("{0}")]
    Conflict(String),
}

impl StoreError {
    /// Wraps a rusqlite error with what loci was doing.
    pub fn sqlite(context: impl Into<String>, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            context: context.into(),
            source,
        }
    }

    /// True when SQLite refused to write because the database file, its directory or
    /// its filesystem is read-only (`SQLITE_READONLY` and its extended codes, or
    /// `SQLITE_CANTOPEN` for a `-shm` that cannot be created).
    pub(crate) fn is_read_only_file(&self) -> bool {
        match self {
            StoreError::ReadOnly { .. } => true,
            StoreError::Sqlite { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
            ),
            _ => false,
        }
    }

    /// A short, stable name for what went wrong, as the doors report it (`error.kind` in
    /// a JSON envelope): `busy` (locked by another process; retryable), `newer_schema`,
    /// `not_a_database` ([`StoreError::ForeignDatabase`], [`StoreError::InvalidDatabase`]),
    /// `read_only` ([`StoreError::ReadOnly`], [`StoreError::UnappliedLog`]), `corrupt`
    /// ([`StoreError::Corrupt`], [`StoreError::Damaged`]),
    /// `conflict`, `io`, or `store` (any other SQLite failure).
    pub fn kind(&self) -> &'static str {
        match self {
            _ if self.is_busy() => "busy",
            StoreError::NewerSchema { .. } => "newer_schema",
            StoreError::ForeignDatabase { .. } | StoreError::InvalidDatabase { .. } => {
                "not_a_database"
            }
            StoreError::ReadOnly { .. } | StoreError::UnappliedLog { .. } => "read_only",
            StoreError::Corrupt(_) | StoreError::Damaged { .. } => "corrupt",
            StoreError::Conflict(_) => "conflict",
            StoreError::Io { .. } => "io",
            StoreError::Sqlite { .. } | StoreError::Busy { .. } => "store",
        }
    }

    /// True when SQLite found the database file damaged (`SQLITE_CORRUPT`,
    /// `SQLITE_NOTADB`), and for [`StoreError::Damaged`].
    pub fn is_damage(&self) -> bool {
        match self {
            StoreError::Damaged { .. } => true,
            StoreError::Sqlite { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
            ),
            _ => false,
        }
    }

    /// This error as [`StoreError::Damaged`] of the database at `path` when it is damage
    /// ([`StoreError::is_damage`]), naming the newest backup under `<dir>/backups/`;
    /// otherwise itself.
    pub fn damaged_at(self, path: &std::path::Path) -> StoreError {
        self.damage_at(path).unwrap_or(self)
    }

    /// [`StoreError::Damaged`] of the database at `path` when this is a SQLite error
    /// saying the file is damaged; `None` for anything else (a `Damaged` already
    /// included).
    pub fn damage_at(&self, path: &std::path::Path) -> Option<StoreError> {
        match self {
            StoreError::Sqlite { source, .. } if self_is_damage(source) => {
                Some(StoreError::Damaged {
                    path: path.to_path_buf(),
                    detail: match source {
                        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
                        other => other.to_string(),
                    },
                    newest_backup: crate::backup::newest_backup(path),
                })
            }
            _ => None,
        }
    }

    /// This error as the database at `path` caused it: damage as [`StoreError::Damaged`]
    /// ([`StoreError::damaged_at`]), and a SQLite error that does not name the file with
    /// its path first (`…/loci.db: committing a write transaction: database or disk is
    /// full`, `…/loci.db: reading the schema version: database is locked`: SQLite's words
    /// alone do not say which file). Other errors are returned as they are (they name their
    /// file already).
    pub fn at(self, path: &std::path::Path) -> StoreError {
        let shown = path.display().to_string();
        match self.damaged_at(path) {
            StoreError::Sqlite { context, source } if !context.contains(&shown) => {
                StoreError::Sqlite {
                    context: format!("{shown}: {context}"),
                    source,
                }
            }
            other => other,
        }
    }

    /// True for `SQLITE_BUSY` / `SQLITE_LOCKED` (and [`StoreError::Busy`]): retryable.
    pub fn is_busy(&self) -> bool {
        match self {
            StoreError::Busy { .. } => true,
            StoreError::Sqlite { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            _ => false,
        }
    }
}

fn self_is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// Adds context to rusqlite results: `stmt.execute(..).ctx("inserting symbols")?`.
pub trait Context<T> {
    /// Wraps the error with `context`.
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, rusqlite::Error> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| StoreError::sqlite(context(), e))
    }
}

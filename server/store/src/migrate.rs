//! Numbered schema migrations, recorded in `schema_migrations`.
//!
//! Rules: migrations are append-only (never edit a shipped one); each runs in its own
//! `BEGIN IMMEDIATE` transaction together with its `schema_migrations` row, so an
//! interrupted migration leaves the previous schema intact (SQLite DDL is transactional);
//! a non-empty database is backed up to `backups/` next to it before the first pending
//! migration; a database with a migration newer than [`SCHEMA_VERSION`] is refused.

use rusqlite::OptionalExtension;

use crate::{Context, Result, Store, StoreError};

/// One schema step.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    /// Its number; versions are 1, 2, 3, ... without gaps.
    pub version: i64,
    /// A short name (`map`, `memory`).
    pub name: &'static str,
    /// The SQL, run as one batch.
    pub sql: &'static str,
}

/// Every migration this binary knows, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "map",
        sql: include_str!("migrations/0001_map.sql"),
    },
    Migration {
        version: 2,
        name: "memory",
        sql: include_str!("migrations/0002_memory.sql"),
    },
    Migration {
        version: 3,
        name: "audit",
        sql: include_str!("migrations/0003_audit.sql"),
    },
    Migration {
        version: 4,
        name: "search",
        sql: include_str!("migrations/0004_search.sql"),
    },
    Migration {
        version: 5,
        name: "rebuild_map",
        sql: include_str!("migrations/0005_rebuild_map.sql"),
    },
    Migration {
        version: 6,
        name: "page_uid",
        sql: include_str!("migrations/0006_page_uid.sql"),
    },
];

/// The schema version this binary writes: the last migration's number.
pub const SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

const CREATE_MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    applied_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT";

/// The highest applied migration, or 0 for a database without `schema_migrations`.
pub(crate) fn current_version(conn: &rusqlite::Connection) -> Result<i64> {
    let has_table: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
            [],
            |r| r.get(0),
        )
        .optional()
        .ctx(|| "reading the schema version".into())?;
    if has_table.is_none() {
        return Ok(0);
    }
    conn.query_row(
        "SELECT ifnull(max(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )
    .ctx(|| "reading the schema version".into())
}

/// Fails with [`StoreError::NewerSchema`] when the database is ahead of this binary.
/// Reads only.
pub(crate) fn refuse_newer(store: &Store) -> Result<()> {
    let found = current_version(&store.conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: store.path.clone().unwrap_or_default(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Applies every pending migration, backing a non-empty database up first.
pub(crate) fn migrate(store: &mut Store) -> Result<()> {
    let current = current_version(&store.conn)?;
    if current >= SCHEMA_VERSION {
        return Ok(());
    }
    if current > 0
        && let Some(path) = store.path.clone()
    {
        let dest = crate::backup::backup_dir_file(&store.conn, &path, &format!("v{current}"))?;
        tracing::info!(from = current, to = SCHEMA_VERSION, backup = %dest.display(), "migrating the database");
        store.backup_online(&dest, None)?;
    }
    for migration in MIGRATIONS.iter().filter(|m| m.version > current) {
        store.write(|tx| {
            tx.execute_batch(CREATE_MIGRATIONS_TABLE)
                .ctx(|| "creating schema_migrations".into())?;
            // Another process may have applied it while we waited for the lock.
            let done: Option<i64> = tx
                .query_row(
                    "SELECT version FROM schema_migrations WHERE version = ?1",
                    [migration.version],
                    |r| r.get(0),
                )
                .optional()
                .ctx(|| "reading schema_migrations".into())?;
            if done.is_some() {
                return Ok(());
            }
            tx.execute_batch(migration.sql).ctx(|| {
                format!(
                    "applying migration {:04}_{}",
                    migration.version, migration.name
                )
            })?;
            tx.execute(
                "INSERT INTO schema_migrations(version, name) VALUES (?1, ?2)",
                rusqlite::params![migration.version, migration.name],
            )
            .ctx(|| "recording the migration".into())?;
            Ok(())
        })?;
    }
    Ok(())
}

//! Numbered schema migrations, recorded in `schema_migrations`.
//!
//! Rules: migrations are append-only (never edit a shipped one); the pending ones run in
//! one `BEGIN IMMEDIATE` transaction together with their `schema_migrations` rows, so an
//! interrupted run leaves the previous schema intact (SQLite DDL is transactional);
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
    /// What SQL cannot do, run after it in the same transaction: derived columns computed
    /// by loci's own code (migration 17's identifier-aware terms).
    pub fill: Option<fn(&rusqlite::Transaction<'_>) -> Result<()>>,
}

/// Every migration this binary knows, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "map",
        sql: include_str!("migrations/0001_map.sql"),
        fill: None,
    },
    Migration {
        version: 2,
        name: "memory",
        sql: include_str!("migrations/0002_memory.sql"),
        fill: None,
    },
    Migration {
        version: 3,
        name: "audit",
        sql: include_str!("migrations/0003_audit.sql"),
        fill: None,
    },
    Migration {
        version: 4,
        name: "search",
        sql: include_str!("migrations/0004_search.sql"),
        fill: None,
    },
    Migration {
        version: 5,
        name: "rebuild_map",
        sql: include_str!("migrations/0005_rebuild_map.sql"),
        fill: None,
    },
    Migration {
        version: 6,
        name: "page_uid",
        sql: include_str!("migrations/0006_page_uid.sql"),
        fill: None,
    },
    Migration {
        version: 7,
        name: "deps_reverse",
        sql: include_str!("migrations/0007_deps_reverse.sql"),
        fill: None,
    },
    Migration {
        version: 8,
        name: "pages_by_revision",
        sql: include_str!("migrations/0008_pages_by_revision.sql"),
        fill: None,
    },
    Migration {
        version: 9,
        name: "ref_receiver",
        sql: include_str!("migrations/0009_ref_receiver.sql"),
        fill: None,
    },
    Migration {
        version: 10,
        name: "rust_type_kinds",
        sql: include_str!("migrations/0010_rust_type_kinds.sql"),
        fill: None,
    },
    Migration {
        version: 11,
        name: "ref_receiver_name",
        sql: include_str!("migrations/0011_ref_receiver_name.sql"),
        fill: None,
    },
    Migration {
        version: 12,
        name: "files_drift_hash",
        sql: include_str!("migrations/0012_files_drift_hash.sql"),
        fill: None,
    },
    Migration {
        version: 13,
        name: "claim_sets",
        sql: include_str!("migrations/0013_claim_sets.sql"),
        fill: None,
    },
    Migration {
        version: 14,
        name: "common_terms",
        sql: include_str!("migrations/0014_common_terms.sql"),
        fill: None,
    },
    Migration {
        version: 15,
        name: "revision_marks",
        sql: include_str!("migrations/0015_revision_marks.sql"),
        fill: None,
    },
    Migration {
        version: 16,
        name: "ref_receiver_path",
        sql: include_str!("migrations/0016_ref_receiver_path.sql"),
        fill: None,
    },
    Migration {
        version: 17,
        name: "text_terms",
        sql: include_str!("migrations/0017_text_terms.sql"),
        fill: Some(fill_text_terms),
    },
    Migration {
        version: 18,
        name: "ref_deps",
        sql: include_str!("migrations/0018_ref_deps.sql"),
        fill: None,
    },
    Migration {
        version: 19,
        name: "code_text",
        sql: include_str!("migrations/0019_code_text.sql"),
        fill: None,
    },
    Migration {
        version: 20,
        name: "secondary_code_text",
        sql: include_str!("migrations/0020_secondary_code_text.sql"),
        fill: None,
    },
    Migration {
        version: 21,
        name: "text_keyed_vectors",
        sql: include_str!("migrations/0021_text_keyed_vectors.sql"),
        fill: None,
    },
    Migration {
        version: 22,
        name: "log_entries",
        sql: include_str!("migrations/0022_log_entries.sql"),
        fill: Some(fill_log_entries),
    },
    Migration {
        version: 23,
        name: "folded_names",
        sql: include_str!("migrations/0023_folded_names.sql"),
        fill: None,
    },
    Migration {
        version: 24,
        name: "map_changes",
        sql: include_str!("migrations/0024_map_changes.sql"),
        fill: None,
    },
    Migration {
        version: 25,
        name: "team",
        sql: include_str!("migrations/0025_team.sql"),
        fill: None,
    },
    Migration {
        version: 26,
        name: "llm_runs",
        sql: include_str!("migrations/0026_llm_runs.sql"),
        fill: None,
    },
    Migration {
        version: 27,
        name: "unsaved_buffers",
        sql: include_str!("migrations/0027_unsaved_buffers.sql"),
        fill: None,
    },
    Migration {
        version: 28,
        name: "code_text_words",
        sql: include_str!("migrations/0028_code_text_words.sql"),
        fill: None,
    },
    Migration {
        version: 29,
        name: "scip",
        sql: include_str!("migrations/0029_scip.sql"),
        fill: None,
    },
    Migration {
        version: 30,
        name: "ref_receiver_typed",
        sql: include_str!("migrations/0030_ref_receiver_typed.sql"),
        fill: None,
    },
    Migration {
        version: 31,
        name: "claims_outside_changes",
        sql: include_str!("migrations/0031_claims_outside_changes.sql"),
        fill: None,
    },
    Migration {
        version: 32,
        name: "import_scopes",
        sql: include_str!("migrations/0032_import_scopes.sql"),
        fill: None,
    },
    Migration {
        version: 33,
        name: "files_by_name",
        sql: include_str!("migrations/0033_files_by_name.sql"),
        fill: None,
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
    refuse_newer_than(store, current_version(&store.conn)?)
}

fn refuse_newer_than(store: &Store, found: i64) -> Result<()> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: store.path.clone().unwrap_or_default(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// What opening a store needs to know of the database before it touches it, read by
/// [`read_state`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct SchemaState {
    /// The highest applied migration (0 for a database without `schema_migrations`).
    pub version: i64,
    /// Whether the database is in WAL mode already.
    pub wal: bool,
    /// Whether indexes or triggers of an interrupted bulk load are missing (see
    /// [`crate::map::bulk_indexes_missing`]); meaningful at [`SCHEMA_VERSION`] only.
    pub bulk_missing: bool,
}

/// Reads the schema version, the journal mode and whether a bulk load's indexes are
/// missing, and refuses a database that is newer than this binary
/// ([`StoreError::NewerSchema`]) or that another application made
/// ([`StoreError::ForeignDatabase`]). Reads only.
///
/// A loci database (it has `schema_migrations`) answers all three in one statement: at
/// every process start, the separate checks' six statements, each its own read
/// transaction with its locks, were a tenth of a `loci symbol`. Any other database (new
/// and empty, or foreign) has them read one by one.
pub(crate) fn read_state(store: &Store) -> Result<SchemaState> {
    let one = format!(
        "SELECT (SELECT ifnull(max(version), 0) FROM schema_migrations),
                (SELECT journal_mode FROM pragma_journal_mode),
                ({})",
        crate::map::bulk_objects_present_sql()
    );
    let state = match store.conn.prepare(&one) {
        Ok(mut stmt) => stmt
            .query_row([], |r| {
                Ok(SchemaState {
                    version: r.get(0)?,
                    wal: r.get::<_, String>(1)?.eq_ignore_ascii_case("wal"),
                    bulk_missing: r.get::<_, usize>(2)? < crate::map::bulk_objects(),
                })
            })
            .ctx(|| "reading the schema version".into())?,
        // The one table a loci database always has is missing.
        Err(rusqlite::Error::SqliteFailure(_, Some(message)))
            if message.starts_with("no such table") =>
        {
            refuse_foreign(store)?;
            let wal: String = store
                .conn
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .ctx(|| "reading the journal mode".into())?;
            SchemaState {
                version: current_version(&store.conn)?,
                wal: wal.eq_ignore_ascii_case("wal"),
                bulk_missing: crate::map::bulk_indexes_missing(&store.conn)?,
            }
        }
        Err(e) => return Err(StoreError::sqlite("reading the schema version", e)),
    };
    refuse_newer_than(store, state.version)?;
    Ok(state)
}

/// Refuses a database that some other application made: it has tables but no
/// `schema_migrations`, the table every loci database has from its first migration on.
/// Migrating it would add loci's tables to it and switch it to WAL, so a mistyped `--db`
/// or `LOCI_DB` would change another program's database for good. It is left untouched.
pub(crate) fn refuse_foreign(store: &Store) -> Result<()> {
    let tables: Vec<String> = store
        .conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
             ORDER BY name = 'schema_migrations' DESC, name LIMIT 4",
        )
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| StoreError::sqlite("reading the tables of the database", e))?;
    if tables.is_empty() || tables.iter().any(|t| t == "schema_migrations") {
        return Ok(());
    }
    let mut shown = tables
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if tables.len() > 3 {
        shown.push_str(", ...");
    }
    Err(StoreError::ForeignDatabase {
        path: store.path.clone().unwrap_or_default(),
        tables: shown,
    })
}

/// Applies every pending migration, backing a non-empty database up first; `found` is
/// the version [`read_state`] read. Processes opening one store at once take turns under
/// the store lock: the first migrates (and backs up, once), the others then find the
/// schema current. Returns whether this call applied any migration.
pub(crate) fn migrate(store: &mut Store, found: i64) -> Result<bool> {
    if found >= SCHEMA_VERSION {
        return Ok(false);
    }
    let _lock = store.lock("migrating the database")?;
    refuse_newer(store)?;
    let current = current_version(&store.conn)?;
    if current >= SCHEMA_VERSION {
        return Ok(false);
    }
    if current > 0
        && let Some(path) = store.path.clone()
    {
        crate::backup::remove_partial_migration_backups(&path);
        let dest = crate::backup::backup_dir_file(&store.conn, &path, &format!("v{current}"))?;
        tracing::info!(from = current, to = SCHEMA_VERSION, backup = %dest.display(), "migrating the database");
        store.backup_online(&dest, None)?;
    }
    apply_pending(store, MIGRATIONS)?;
    Ok(true)
}

/// Applies the migrations of `migrations` that the database lacks, all in one `BEGIN
/// IMMEDIATE` transaction with their `schema_migrations` rows: a run interrupted or
/// failing anywhere leaves the schema it started from, never one between the old and
/// the new.
fn apply_pending(store: &mut Store, migrations: &[Migration]) -> Result<()> {
    store.write(|tx| {
        tx.execute_batch(CREATE_MIGRATIONS_TABLE)
            .ctx(|| "creating schema_migrations".into())?;
        for migration in migrations {
            let done: Option<i64> = tx
                .query_row(
                    "SELECT version FROM schema_migrations WHERE version = ?1",
                    [migration.version],
                    |r| r.get(0),
                )
                .optional()
                .ctx(|| "reading schema_migrations".into())?;
            if done.is_some() {
                continue;
            }
            tx.execute_batch(migration.sql).ctx(|| {
                format!(
                    "applying migration {:04}_{}",
                    migration.version, migration.name
                )
            })?;
            if let Some(fill) = migration.fill {
                fill(tx)?;
            }
            tx.execute(
                "INSERT INTO schema_migrations(version, name) VALUES (?1, ?2)",
                rusqlite::params![migration.version, migration.name],
            )
            .ctx(|| "recording the migration".into())?;
        }
        // A migration may rewrite the map; its totals are counted again.
        crate::map::forget_totals(tx)
    })
}

/// The append-only guards of `revisions`, exactly as `0002_memory.sql` creates them.
pub(crate) const REVISIONS_APPEND_ONLY_UPDATE: &str =
    "CREATE TRIGGER revisions_append_only_update BEFORE UPDATE ON revisions BEGIN
    SELECT RAISE(ABORT, 'revisions are append-only: write a new revision instead of updating one');
END;";
pub(crate) const REVISIONS_APPEND_ONLY_DELETE: &str =
    "CREATE TRIGGER revisions_append_only_delete BEFORE DELETE ON revisions BEGIN
    SELECT RAISE(ABORT, 'revisions are append-only: a revision cannot be deleted');
END;";

/// Migration 22's fill: each decision and lesson becomes a page of its own
/// ([`crate::logs::split_logs`]).
fn fill_log_entries(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    crate::logs::split_logs(tx).map(|_| ())
}

/// Migration 17's fill: the identifier-aware terms ([`crate::search::text_terms`]) of
/// every existing revision (body and summary) and documentation section, then both
/// full-text indexes rebuilt from their content. Revisions are append-only, and stay so:
/// the guard is lifted for this one statement of the migration's transaction (which
/// writes the derived `terms` column only, never a body, summary or author) and put back
/// before it commits.
fn fill_text_terms(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    let revisions: Vec<(i64, String, Option<String>)> = tx
        .prepare("SELECT revision_id, body, summary FROM revisions")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .ctx(|| "reading revisions for their terms".into())?;
    tx.execute_batch("DROP TRIGGER revisions_append_only_update")
        .ctx(|| "lifting the append-only guard".into())?;
    {
        let mut update = tx
            .prepare("UPDATE revisions SET terms = ?2 WHERE revision_id = ?1")
            .ctx(|| "writing revision terms".into())?;
        for (id, body, summary) in &revisions {
            let terms = crate::memory::revision_terms(body, summary.as_deref());
            if !terms.is_empty() {
                update
                    .execute(rusqlite::params![id, terms])
                    .ctx(|| format!("writing the terms of revision {id}"))?;
            }
        }
    }
    tx.execute_batch(REVISIONS_APPEND_ONLY_UPDATE)
        .ctx(|| "restoring the append-only guard".into())?;
    let chunks: Vec<(i64, String, String)> = tx
        .prepare("SELECT chunk_id, heading, text FROM doc_chunks")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .ctx(|| "reading documentation sections for their terms".into())?;
    {
        let mut update = tx
            .prepare("UPDATE doc_chunks SET terms = ?2 WHERE chunk_id = ?1")
            .ctx(|| "writing section terms".into())?;
        for (id, heading, text) in &chunks {
            let terms = crate::map::doc_chunk_terms(heading, text);
            if !terms.is_empty() {
                update
                    .execute(rusqlite::params![id, terms])
                    .ctx(|| format!("writing the terms of section {id}"))?;
            }
        }
    }
    tx.execute_batch(
        "INSERT INTO revisions_fts(revisions_fts) VALUES ('rebuild');
         INSERT INTO doc_chunks_fts(doc_chunks_fts) VALUES ('rebuild');",
    )
    .ctx(|| "rebuilding the memory and documentation indexes".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All pending migrations commit together or not at all: with a transaction each, a
    /// process killed between two of them (or a later one failing) would leave a database
    /// between the old schema and the new.
    #[test]
    fn a_run_of_pending_migrations_failing_halfway_leaves_the_old_schema() {
        let mut store = Store::open_in_memory().unwrap();
        let before = current_version(&store.conn).unwrap();
        let steps = [
            Migration {
                version: before + 1,
                name: "fine",
                sql: "CREATE TABLE halfway (x INTEGER) STRICT;",
                fill: None,
            },
            Migration {
                version: before + 2,
                name: "broken",
                sql: "CREATE TABLE nope (x INTEGER) STRICT; SELECT * FROM no_such_table;",
                fill: None,
            },
        ];
        let err = apply_pending(&mut store, &steps).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("applying migration {:04}_broken", before + 2)),
            "{err}"
        );
        assert_eq!(current_version(&store.conn).unwrap(), before);
        let halfway: i64 = store
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name IN ('halfway', 'nope')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            halfway, 0,
            "the first pending migration was rolled back too"
        );
        apply_pending(&mut store, &steps[..1]).unwrap();
        assert_eq!(current_version(&store.conn).unwrap(), before + 1);
    }
}

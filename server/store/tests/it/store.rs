//! The store's guarantees: migrations recorded, backups before upgrades, newer schemas
//! refused untouched, WAL and foreign keys on, writes that wait instead of failing (B20).

use std::sync::mpsc;

use loci_store::rusqlite::Connection;
use loci_store::{MIGRATIONS, SCHEMA_VERSION, Store, StoreError};

#[test]
fn fresh_database_records_every_migration_and_uses_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".loci/loci.db");
    let store = Store::open(&path).unwrap();
    let versions: Vec<i64> = store
        .conn()
        .prepare("SELECT version FROM schema_migrations ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // Every migration this binary knows (17 is another branch's until they merge).
    assert_eq!(
        versions,
        MIGRATIONS.iter().map(|m| m.version).collect::<Vec<_>>()
    );
    assert_eq!(versions.last(), Some(&SCHEMA_VERSION));
    let mode: String = store
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = store
        .conn()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    assert!(
        !dir.path().join(".loci/backups").exists(),
        "a fresh database needs no backup"
    );
}

#[test]
fn reopening_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    drop(Store::open(&path).unwrap());
    let store = Store::open(&path).unwrap();
    let n: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM schema_migrations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, MIGRATIONS.len() as i64);
}

#[test]
fn upgrading_a_non_empty_database_backs_it_up_first() {
    assert!(
        MIGRATIONS.len() >= 2,
        "needs an older schema to upgrade from"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    {
        // A database as the first release left it: migration 1 only, with data.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
             applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))) STRICT;",
        )
        .unwrap();
        conn.execute_batch(MIGRATIONS[0].sql).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations(version, name) VALUES (1, 'map')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('marker', 'old data')",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let backups: Vec<_> = std::fs::read_dir(dir.path().join("backups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    let name = backups[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with("loci-v1-") && name.ends_with(".db"),
        "{name}"
    );
    let backup = Connection::open(&backups[0]).unwrap();
    let version: i64 = backup
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, 1, "the backup holds the old schema");
    let marker: String = backup
        .query_row("SELECT value FROM meta WHERE key = 'marker'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(marker, "old data");
    assert_eq!(store.meta("marker").unwrap().as_deref(), Some("old data"));
    let version: i64 = store
        .conn()
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

#[test]
fn newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    {
        let store = Store::open(&path).unwrap();
        store
            .conn()
            .execute(
                "INSERT INTO schema_migrations(version, name) VALUES (?1, 'from the future')",
                [SCHEMA_VERSION + 1],
            )
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).err().expect("refused");
    match &err {
        StoreError::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!(*found, SCHEMA_VERSION + 1);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("is newer than this loci supports"),
        "{message}"
    );
    assert!(message.contains("was not modified"), "{message}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is byte-for-byte unchanged"
    );
    assert!(!dir.path().join("backups").exists());
}

#[test]
fn b20_a_second_writer_waits_for_the_first_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    let mut a = Store::open(&path).unwrap();
    let mut b = Store::open(&path).unwrap();
    let (locked_tx, locked_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let writer_a = std::thread::spawn(move || {
        a.write(|tx| {
            tx.execute("INSERT INTO meta(key, value) VALUES ('a', '1')", [])
                .unwrap();
            locked_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            Ok(())
        })
    });
    locked_rx.recv().unwrap();
    let writer_b = std::thread::spawn(move || {
        let r = b.write(|tx| {
            tx.execute("INSERT INTO meta(key, value) VALUES ('b', '2')", [])
                .unwrap();
            Ok(())
        });
        (r, b)
    });
    release_tx.send(()).unwrap();
    writer_a.join().unwrap().unwrap();
    let (r, b) = writer_b.join().unwrap();
    r.unwrap();
    assert_eq!(b.meta("a").unwrap().as_deref(), Some("1"));
    assert_eq!(b.meta("b").unwrap().as_deref(), Some("2"));
}

#[test]
fn a_version_4_database_with_the_old_refs_layout_is_normalized_and_keeps_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    {
        // Migrations 1-4 as an early build wrote them, with refs keyed by symbol keys.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
             applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))) STRICT;",
        )
        .unwrap();
        for m in &MIGRATIONS[..4] {
            conn.execute_batch(m.sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations(version, name) VALUES (?1, ?2)",
                loci_store::rusqlite::params![m.version, m.name],
            )
            .unwrap();
        }
        conn.execute_batch(
            "DROP TABLE refs;
             CREATE TABLE refs (ref_id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, name TEXT NOT NULL,
                 target_key TEXT, enclosing_key TEXT);
             INSERT INTO files(path, size, mtime_ns, content_hash, lines, scan_id) VALUES ('a.py', 1, 1, 'h', 1, 1);
             INSERT INTO refs(file_id, name, target_key) VALUES (1, 'f', 'a.py#f@function');
             INSERT INTO pages(subject, kind) VALUES ('a.py', 'file');
             INSERT INTO revisions(page_id, version, body, author) VALUES (1, 1, 'kept', 'human:a');",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let columns: Vec<String> = store
        .conn()
        .prepare("SELECT name FROM pragma_table_info('refs')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(columns.contains(&"target_id".to_string()), "{columns:?}");
    let files: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        files, 0,
        "the derived map is emptied for the next scan to rebuild"
    );
    let body: String = store
        .conn()
        .query_row("SELECT body FROM revisions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(body, "kept");
}

/// SQLite 3.54 marks a `column = ?` plan as depending on the bound value, and rusqlite
/// clears a cached statement's bindings when it goes back to the cache, which expired
/// the plan: every cached query was compiled again on every use (40% of `loci check`).
/// With the query planner stability guarantee on, a cached query is compiled once.
#[test]
fn cached_statements_are_not_recompiled_on_every_use() {
    use loci_store::rusqlite::StatementStatus;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("loci.db")).unwrap();
    let sql = "SELECT count(*) FROM files f JOIN symbols s USING (file_id)
               WHERE f.file_id = ?1 AND s.name = ?2";
    for (id, name) in [(1, "a"), (2, "b"), (3, "c"), (4, "d")] {
        let mut stmt = store.conn().prepare_cached(sql).unwrap();
        let n: i64 = stmt.query_row((id, name), |r| r.get(0)).unwrap();
        assert_eq!(n, 0);
        assert_eq!(
            stmt.get_status(StatementStatus::RePrepare),
            0,
            "use {id} recompiled the statement"
        );
    }
}

/// A database at migration 1 with a marker row, as the first release left it.
fn version_1_database(path: &std::path::Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
         applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))) STRICT;",
    )
    .unwrap();
    conn.execute_batch(MIGRATIONS[0].sql).unwrap();
    conn.execute(
        "INSERT INTO schema_migrations(version, name) VALUES (1, 'map')",
        [],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('marker', 'old data')",
        [],
    )
    .unwrap();
}

fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Fault found by the concurrent-writers stress test: four processes opening a new store at
/// once each ran the migrations still pending when they looked; one that looked while
/// another was halfway took the database for an old one, backed it up, and two such backups
/// in the same second collided (`output file already exists`: the process could not open
/// the store). Migrations now run under the store lock: the first process migrates, the
/// others find the schema current.
#[test]
fn concurrent_opens_of_a_new_store_migrate_it_once_without_backups() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loci.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
        let opens: Vec<_> = (0..6)
            .map(|_| {
                let path = path.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(|_| ())
                })
            })
            .collect();
        for o in opens {
            o.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        assert_eq!(
            names_in(&dir.path().join("backups")),
            Vec::<String>::new(),
            "round {round}: a new database needs no backup"
        );
        let store = Store::open(&path).unwrap();
        let n: i64 = store
            .conn()
            .query_row("SELECT count(*) FROM schema_migrations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, MIGRATIONS.len() as i64);
    }
}

/// The same race on an old store: it is backed up exactly once, then migrated once.
#[test]
fn concurrent_opens_of_an_old_store_back_it_up_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    version_1_database(&path);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let opens: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                Store::open(&path).map(|_| ())
            })
        })
        .collect();
    for o in opens {
        o.join().unwrap().unwrap();
    }
    let backups = names_in(&dir.path().join("backups"));
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert!(backups[0].starts_with("loci-v1-"), "{backups:?}");
}

/// Fault found by the crash test: a migration killed during its pre-migration backup left
/// its incomplete copy (`backups/.loci-v1-<time>.db.partial-<pid>`) behind for good: every
/// later kill added one, a database's size each. A migration now removes the partial copies
/// earlier migrations left (it holds the store lock, so none is being written), numbers its
/// backup when the name is taken, and never touches a complete backup or another kind of
/// partial file.
#[test]
fn a_migration_rerun_after_one_killed_during_its_backup_removes_the_partial_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    version_1_database(&path);
    let backups = dir.path().join("backups");
    std::fs::create_dir_all(&backups).unwrap();
    // What killed runs left: partial copies (one from a run killed within this second),
    // and a complete backup under this second's name.
    let now = backup_stamp(0);
    let left = [
        format!(".loci-v1-{now}.db.partial-4242"),
        ".loci-v1-20260101T000000Z.db.partial-17".to_string(),
    ];
    for name in &left {
        std::fs::write(backups.join(name), b"SQLite format 3\0trunc").unwrap();
    }
    let earlier = format!("loci-v1-{now}.db");
    std::fs::write(backups.join(&earlier), b"earlier backup").unwrap();
    // Not a migration's: a restore's copy of the live database, written by another process.
    let restore = ".loci-before-restore-20260101T000000Z.db.partial-9".to_string();
    std::fs::write(backups.join(&restore), b"being written").unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.meta("marker").unwrap().as_deref(), Some("old data"));
    let names = names_in(&backups);
    for name in &left {
        assert!(!names.contains(name), "{name} removed: {names:?}");
    }
    assert!(
        names.contains(&restore),
        "another kind of partial file is kept: {names:?}"
    );
    assert_eq!(
        std::fs::read(backups.join(&earlier)).unwrap(),
        b"earlier backup",
        "an existing backup is never overwritten"
    );
    let new: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("loci-v1-") && **n != earlier)
        .collect();
    assert_eq!(new.len(), 1, "one new backup: {names:?}");
    let backup = Connection::open(backups.join(new[0])).unwrap();
    let marker: String = backup
        .query_row("SELECT value FROM meta WHERE key = 'marker'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(marker, "old data");
}

/// `strftime('%Y%m%dT%H%M%SZ', 'now', '+N seconds')`, the stamp a migration names its
/// backup with.
fn backup_stamp(plus_seconds: i64) -> String {
    let conn = Connection::open_in_memory().unwrap();
    conn.query_row(
        "SELECT strftime('%Y%m%dT%H%M%SZ', 'now', ?1)",
        [format!("+{plus_seconds} seconds")],
        |r| r.get(0),
    )
    .unwrap()
}

/// Fault found by running the store tests: processes opening a database that does not exist
/// yet at the same moment failed with "setting journal_mode=WAL: database is locked" at
/// once, because SQLite takes the lock for switching to WAL without its busy handler. The
/// switch is now retried until the busy timeout.
#[test]
fn simultaneous_first_opens_of_a_new_database_never_fail_switching_to_wal() {
    for round in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loci.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let opens: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(|_| ())
                })
            })
            .collect();
        for o in opens {
            o.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        let store = Store::open(&path).unwrap();
        let mode: String = store
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
}

#[test]
fn a_read_sees_one_snapshot_while_another_connection_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".loci/loci.db");
    let reader = Store::open(&path).unwrap();
    let writer = Connection::open(&path).unwrap();
    writer
        .execute("INSERT INTO meta(key, value) VALUES ('k', 'before')", [])
        .unwrap();
    let meta = |s: &Store| -> String {
        s.conn()
            .query_row("SELECT value FROM meta WHERE key = 'k'", [], |r| r.get(0))
            .unwrap()
    };
    let seen: Result<(String, String), StoreError> = reader.read(|| {
        let first = meta(&reader);
        writer
            .execute("UPDATE meta SET value = 'after' WHERE key = 'k'", [])
            .unwrap();
        Ok((first, meta(&reader)))
    });
    assert_eq!(seen.unwrap(), ("before".into(), "before".into()));
    // The snapshot ends with the read: the next statement sees the write.
    assert_eq!(meta(&reader), "after");
    assert!(reader.conn().is_autocommit());
    // Nested reads run in the outer snapshot, and an error ends it too.
    let err: Result<(), StoreError> = reader.read(|| {
        reader.read(|| Ok::<_, StoreError>(()))?;
        Err(StoreError::Busy {
            path: path.clone(),
            waited_ms: 0,
        })
    });
    assert!(err.is_err());
    assert!(reader.conn().is_autocommit());
}

#[test]
fn another_applications_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    {
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch(
                "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);
                 CREATE TABLE orders(id INTEGER PRIMARY KEY);
                 INSERT INTO users VALUES (1, 'ada');",
            )
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    match Store::open(&path) {
        Err(StoreError::ForeignDatabase { path: p, tables }) => {
            assert_eq!(p, path);
            assert_eq!(tables, "orders, users");
        }
        other => panic!("expected ForeignDatabase, got {:?}", other.map(|_| ())),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["app.db"]);
}

/// Inserts a page about `subject` with one revision holding `body`, through `conn`.
fn insert_memory(conn: &Connection, subject: &str, body: &str) {
    conn.execute(
        "INSERT INTO pages(subject, kind) VALUES (?1, 'file') ON CONFLICT(subject) DO NOTHING",
        [subject],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO revisions(page_id, version, body, author)
         SELECT page_id, (SELECT ifnull(max(version), 0) + 1 FROM revisions r WHERE r.page_id = p.page_id), ?2, 'test'
         FROM pages p WHERE subject = ?1",
        [subject, body],
    )
    .unwrap();
}

#[test]
fn fts_row_counts_equal_the_content_tables_after_inserts_and_deletes() {
    use loci_store::search::{FtsTable, fts_row_count};
    let mut store = Store::open_in_memory().unwrap();
    let count = |s: &Store, table: &str| -> u64 {
        s.conn()
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap() as u64
    };
    store
        .write(|tx| {
            tx.execute(
                "INSERT INTO files(path, size, mtime_ns, content_hash, lines, scan_id)
                 VALUES ('a.py', 1, 0, 'h', 1, 1)",
                [],
            )
            .unwrap();
            for name in ["parse_config", "load", "save"] {
                tx.execute(
                    "INSERT INTO symbols(file_id, key, name, qualified_name, kind, start_byte, end_byte,
                         start_line, end_line, name_start_byte, name_end_byte, name_line, name_column,
                         signature, doc, body_fingerprint, signature_fingerprint, terms)
                     VALUES (1, 'a.py#' || ?1, ?1, ?1, 'function', 0, 1, 0, 0, 0, 1, 0, 0,
                         'def ' || ?1, NULL, 'b', 's', ?1)",
                    [name],
                )
                .unwrap();
            }
            tx.execute("DELETE FROM symbols WHERE name = 'load'", []).unwrap();
            Ok(())
        })
        .unwrap();
    insert_memory(store.conn(), "a.py", "first words");
    insert_memory(store.conn(), "a.py", "second words");
    insert_memory(store.conn(), "b.py", "other words");
    assert_eq!(fts_row_count(store.conn(), FtsTable::Symbols).unwrap(), 2);
    assert_eq!(count(&store, "symbols"), 2);
    assert_eq!(fts_row_count(store.conn(), FtsTable::Revisions).unwrap(), 3);
    assert_eq!(count(&store, "revisions"), 3);
    assert_eq!(fts_row_count(store.conn(), FtsTable::Docs).unwrap(), 0);
    assert_eq!(count(&store, "doc_chunks"), 0);
}

#[test]
fn cached_term_stats_follow_writes_of_this_connection_and_of_others() {
    use loci_store::search::FtsTable;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".loci/loci.db");
    let store = Store::open(&path).unwrap();
    let other = Connection::open(&path).unwrap();
    let terms = [
        "alpha".to_string(),
        "gamma".to_string(),
        "alpha".to_string(),
    ];
    let stats = |s: &Store| s.term_stats(FtsTable::Revisions, &terms).unwrap();
    assert_eq!(stats(&store), (0, vec![0, 0, 0]));
    insert_memory(store.conn(), "a.py", "alpha beta");
    assert_eq!(stats(&store), (1, vec![1, 0, 1]));
    insert_memory(&other, "b.py", "alpha gamma");
    assert_eq!(stats(&store), (2, vec![2, 1, 2]));
    // Inside one snapshot the figures are the snapshot's, whatever others commit.
    let seen: Result<_, StoreError> = store.read(|| {
        let before = stats(&store);
        insert_memory(&other, "c.py", "gamma gamma");
        Ok((before, stats(&store)))
    });
    assert_eq!(seen.unwrap(), ((2, vec![2, 1, 2]), (2, vec![2, 1, 2])));
    assert_eq!(stats(&store), (3, vec![2, 2, 2]));
    assert_eq!(
        loci_store::search::term_stats(store.conn(), FtsTable::Revisions, &terms).unwrap(),
        (3, vec![2, 2, 2])
    );
}

/// Symbols `n0` … `n{n-1}` in `a.py`, each with the terms `common` and its name
/// (and `pair` for the first two), starting at symbol id `first`.
fn insert_symbols_with_terms(store: &mut Store, first: usize, n: usize) {
    store
        .write(|tx| {
            tx.execute(
                "INSERT INTO files(path, size, mtime_ns, content_hash, lines, scan_id)
                 VALUES ('a.py', 1, 0, 'h', 1, 1) ON CONFLICT(path) DO NOTHING",
                [],
            )
            .unwrap();
            for i in first..first + n {
                let name = format!("n{i}");
                let terms = if i < 2 {
                    format!("common {name} pair")
                } else {
                    format!("common {name}")
                };
                tx.execute(
                    "INSERT INTO symbols(file_id, key, name, qualified_name, kind, start_byte, end_byte,
                         start_line, end_line, name_start_byte, name_end_byte, name_line, name_column,
                         signature, doc, body_fingerprint, signature_fingerprint, terms)
                     VALUES (1, 'a.py#' || ?1, ?1, ?1, 'function', 0, 1, 0, 0, 0, 1, 0, 0,
                         'def ' || ?1, NULL, 'b', 's', ?2)",
                    [&name, &terms],
                )
                .unwrap();
            }
            Ok(())
        })
        .unwrap();
}

/// A scan lists the map's common terms so that no question walks their posting lists; the
/// list gives the counts a walk gives, holds exactly the terms in at least
/// `COMMON_TERM_ROWS` rows, and is not used once the index changed after it was made.
#[test]
fn common_terms_list_gives_the_counts_a_walk_gives_and_is_not_used_once_stale() {
    use loci_store::search::{
        COMMON_TERM_ROWS, FtsTable, common_terms_current, document_frequencies,
        refresh_common_terms,
    };
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join(".loci/loci.db")).unwrap();
    let n = COMMON_TERM_ROWS as usize + 5;
    insert_symbols_with_terms(&mut store, 0, n);
    let terms: Vec<String> = ["common", "pair", "n3", "absent"]
        .map(String::from)
        .to_vec();
    let walked = document_frequencies(store.conn(), FtsTable::Symbols, &terms).unwrap();
    assert_eq!(walked, [n as u64, 2, 1, 0]);
    assert!(!common_terms_current(store.conn(), FtsTable::Symbols).unwrap());
    store
        .write(|tx| refresh_common_terms(tx, FtsTable::Symbols))
        .unwrap();
    assert!(common_terms_current(store.conn(), FtsTable::Symbols).unwrap());
    let listed: Vec<(String, i64)> = store
        .conn()
        .prepare("SELECT term, doc FROM fts_common_terms WHERE fts = 'symbols_fts' ORDER BY term")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // `def` (the signatures) and `common` are in every row; nothing else reaches the bound.
    assert_eq!(
        listed,
        [
            ("common".to_string(), n as i64),
            ("def".to_string(), n as i64)
        ]
    );
    // The listed count is used: changed behind the list's back, it shows.
    store
        .conn()
        .execute(
            "UPDATE fts_common_terms SET doc = 7 WHERE term = 'common'",
            [],
        )
        .unwrap();
    assert_eq!(
        document_frequencies(store.conn(), FtsTable::Symbols, &terms).unwrap(),
        [7, 2, 1, 0]
    );
    // A symbol more: the index's record is no longer the stamp, and every term is walked.
    insert_symbols_with_terms(&mut store, n, 1);
    assert!(!common_terms_current(store.conn(), FtsTable::Symbols).unwrap());
    assert_eq!(
        document_frequencies(store.conn(), FtsTable::Symbols, &terms).unwrap(),
        [n as u64 + 1, 2, 1, 0]
    );
    store
        .write(|tx| refresh_common_terms(tx, FtsTable::Symbols))
        .unwrap();
    assert_eq!(
        document_frequencies(store.conn(), FtsTable::Symbols, &terms).unwrap(),
        [n as u64 + 1, 2, 1, 0]
    );
    // Memory's index keeps no list.
    store
        .write(|tx| refresh_common_terms(tx, FtsTable::Revisions))
        .unwrap();
    let rows: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM fts_common_terms_stamp WHERE fts = 'revisions_fts'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 0);
}

/// The term vocabularies live in the connection's temp schema, all three made at the first
/// document frequency asked for: in the main schema (tried, to spare each `loci context`
/// process their CREATE statements) `PRAGMA integrity_check` reports every `fts5vocab`
/// table as an error, and a backup is verified with it.
#[test]
fn term_vocabularies_are_made_once_per_connection_in_its_temp_schema() {
    use loci_store::search::FtsTable;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".loci/loci.db")).unwrap();
    insert_memory(store.conn(), "a.py", "alpha beta");
    let terms = ["alpha".to_string(), "delta".to_string()];
    let temp_tables = || -> Vec<String> {
        store
            .conn()
            .prepare("SELECT name FROM temp.sqlite_master ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        store.term_stats(FtsTable::Revisions, &terms).unwrap().1,
        [1, 0]
    );
    let made = [
        "loci_vocab_code_chunks",
        "loci_vocab_docs",
        "loci_vocab_file_text",
        "loci_vocab_revisions",
        "loci_vocab_secondary_chunks",
        "loci_vocab_secondary_file_text",
        "loci_vocab_symbols",
    ];
    assert_eq!(temp_tables(), made);
    for table in [FtsTable::Symbols, FtsTable::Docs] {
        assert_eq!(store.term_stats(table, &terms).unwrap().1, [0, 0]);
    }
    assert_eq!(temp_tables(), made);
    let check: String = store
        .conn()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// The memory-search join reads `pages` through its index on the current revision: without
/// it, every full-text hit scanned every page (quadratic in memory size).
#[test]
fn fault_memory_search_scanned_every_page_for_every_hit() {
    let store = Store::open_in_memory().unwrap();
    let plan: Vec<String> = store
        .conn()
        .prepare(&format!(
            "EXPLAIN QUERY PLAN {}",
            loci_store::memory::CURRENT_HITS
        ))
        .unwrap()
        .query_map(loci_store::rusqlite::params!["\"url\"", 10], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter()
            .any(|step| step.contains("USING COVERING INDEX pages_by_current_revision")),
        "{plan:?}"
    );
    assert!(!plan.iter().any(|step| step == "SCAN p"), "{plan:?}");
}

/// A scan reads without the memory map (through it, every page it touched counted in its
/// peak RSS: 151 MiB against 106 MiB on the stdlib); other reads use it.
#[test]
fn the_memory_map_is_on_except_while_asked_off() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(".loci/loci.db")).unwrap();
    let mmap = |s: &Store| -> i64 {
        s.conn()
            .query_row("PRAGMA mmap_size", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(mmap(&store) as u64, loci_store::MMAP_BYTES);
    store.set_memory_map(false).unwrap();
    assert_eq!(mmap(&store), 0);
    store.set_memory_map(true).unwrap();
    assert_eq!(mmap(&store) as u64, loci_store::MMAP_BYTES);
}

/// Segments (b-trees) of a full-text index, from its `_idx` shadow table.
fn segments(conn: &Connection, fts: &str) -> i64 {
    conn.query_row(
        &format!("SELECT count(DISTINCT segid) FROM {fts}_idx"),
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// 500 memory pages written one per transaction left FTS5's automerge with 20 segments in
/// `revisions_fts`, and every search opened each term in each of them: a `loci context`
/// process ran 18% more instructions than on one segment.
#[test]
fn fault_memory_written_one_page_at_a_time_left_its_index_in_many_segments() {
    let mut store = Store::open_in_memory().unwrap();
    for i in 0..40 {
        store
            .write(|tx| {
                insert_memory(tx, &format!("m{i}.py"), &format!("note {i} about parsing"));
                Ok(())
            })
            .unwrap();
    }
    assert_eq!(segments(store.conn(), "revisions_fts"), 1);
    // The same writes outside `Store::write` (no merge) leave several: the test can fail.
    for i in 0..40 {
        insert_memory(
            store.conn(),
            &format!("n{i}.py"),
            &format!("note {i} about dates"),
        );
    }
    assert!(segments(store.conn(), "revisions_fts") > 1);
    store.write(|_| Ok(())).unwrap();
    assert_eq!(segments(store.conn(), "revisions_fts"), 1);
    let found: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM revisions_fts WHERE revisions_fts MATCH 'note'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, 80);
}

/// A first scan's bulk load rebuilds the symbol and documentation indexes, and `rebuild`
/// flushes a segment per `hashsize` of terms (1 MiB: four for the stdlib's symbols). The
/// restore ends with one segment; a tiny `hashsize` here makes one per symbol.
#[test]
fn a_bulk_load_leaves_each_rebuilt_index_in_one_segment() {
    let mut store = Store::open_in_memory().unwrap();
    store
        .write(|tx| {
            tx.execute_batch(
                "INSERT INTO symbols_fts(symbols_fts, rank) VALUES ('hashsize', 64);
                 INSERT INTO files(path, size, mtime_ns, content_hash, lines, scan_id)
                 VALUES ('a.py', 1, 0, 'h', 1, 1);",
            )
            .unwrap();
            loci_store::map::drop_bulk_indexes(tx)?;
            for i in 0..50 {
                tx.execute(
                    "INSERT INTO symbols(file_id, key, name, qualified_name, kind, start_byte, end_byte,
                         start_line, end_line, name_start_byte, name_end_byte, name_line, name_column,
                         signature, doc, body_fingerprint, signature_fingerprint, terms)
                     VALUES (1, 'a.py#f' || ?1, 'f' || ?1, 'f' || ?1, 'function', 0, 1, 0, 0, 0, 1, 0, 0,
                         'def parse_' || ?1, NULL, 'b', 's', 'parse f' || ?1)",
                    [i],
                )
                .unwrap();
            }
            loci_store::map::create_bulk_indexes(tx)
        })
        .unwrap();
    assert_eq!(segments(store.conn(), "symbols_fts"), 1);
    let found: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM symbols_fts WHERE symbols_fts MATCH 'parse'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, 50);
}

/// Fault (fresh-user trial): FTS5's `snippet()` scores every match of a row against every
/// other, so a search matching a section that repeats the word took 5.8 s at 20,000
/// repeats and never finished at 300,000 (a 1.8 MB file, under the scan's size cap); a
/// memory body alike. A text over `FTS_SNIPPET_CHARS` gets the one-pass `text_snippet`.
#[test]
fn fault_a_section_repeating_the_searched_word_made_search_quadratic() {
    use loci_store::search::{SNIPPET_TOKENS, search_docs, text_snippet};
    let mut store = Store::open_in_memory().unwrap();
    let text = format!("Intro words before the {}end", "zebra ".repeat(100_000));
    store
        .write(|tx| {
            tx.execute(
                "INSERT INTO files(path, size, mtime_ns, content_hash, lines, scan_id)
                 VALUES ('z.md', 1, 0, 'h', 1, 1)",
                [],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO doc_chunks(file_id, heading, line, end_line, text) VALUES (1, 'T', 0, 1, ?1)",
                [&text],
            )
            .unwrap();
            Ok(())
        })
        .unwrap();
    insert_memory(store.conn(), "z.md", &text);
    let docs = search_docs(store.conn(), "\"zebra\"", None, 5).unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(
        docs[0].snippet,
        "…before the [zebra] [zebra] [zebra] [zebra] [zebra] [zebra] [zebra] [zebra] [zebra] [zebra]…"
    );
    assert_eq!(
        docs[0].snippet,
        text_snippet(&text, "\"zebra\"", SNIPPET_TOKENS)
    );
    for current_only in [true, false] {
        let hits = loci_store::memory::search_revisions(store.conn(), "\"zebra\"", current_only, 5)
            .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].snippet, docs[0].snippet);
    }
    // A short text still gets FTS5's own snippet.
    insert_memory(store.conn(), "a.py", "Short note: the zebra crossing.");
    let hits = loci_store::memory::search_revisions(store.conn(), "\"crossing\"", true, 5).unwrap();
    assert_eq!(hits[0].snippet, "Short note: the zebra [crossing].");
}

/// A database at schema `version`, as the migrations' SQL leaves it (their fills not run).
fn database_at(path: &std::path::Path, version: i64) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
         applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))) STRICT;",
    )
    .unwrap();
    for m in MIGRATIONS.iter().filter(|m| m.version <= version) {
        conn.execute_batch(m.sql).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations(version, name) VALUES (?1, ?2)",
            loci_store::rusqlite::params![m.version, m.name],
        )
        .unwrap();
    }
    conn
}

/// Migration 13 (claim sets) on a database at 12: every claim and page snapshot is kept,
/// with nothing tracked as a set, nothing resolved elsewhere and no subject missing, and
/// the new columns read back through the typed queries.
#[test]
fn migration_13_keeps_claims_and_page_snapshots_with_the_untracked_defaults() {
    use loci_store::memory as mem;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    {
        let conn = database_at(&path, 12);
        conn.execute_batch(
            "INSERT INTO pages(subject, kind) VALUES ('a.py', 'file');
             INSERT INTO revisions(page_id, version, body, author) VALUES (1, 1, 'uses `f()`', 'human:a');
             INSERT INTO claims(revision_id, kind, text, target, start_byte, end_byte, line, resolved, snapshot)
                 VALUES (1, 'symbol', 'f()', 'f', 6, 9, 0, 'a.py#f@function', 'fp');
             INSERT INTO page_snapshots(revision_id, fingerprint) VALUES (1, 'file-fp');",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let claims = mem::claims_of(store.conn(), 1).unwrap();
    assert_eq!(
        claims
            .iter()
            .map(|c| (
                c.resolved.as_deref(),
                c.snapshot.as_deref(),
                c.definitions.len(),
                c.resolved_elsewhere
            ))
            .collect::<Vec<_>>(),
        [(Some("a.py#f@function"), Some("fp"), 0, false)]
    );
    let snap = mem::page_snapshot(store.conn(), 1).unwrap().unwrap();
    assert_eq!(
        (snap.fingerprint.as_deref(), snap.subject_missing),
        (Some("file-fp"), false)
    );
    store
        .conn()
        .execute_batch(
            "INSERT INTO claims(revision_id, kind, text, target, start_byte, end_byte, line, definitions, resolved_elsewhere)
                 VALUES (1, 'symbol', 'g()', 'g', 0, 1, 0, '[{\"key\":\"a.py#A.g@method\",\"body\":\"b\",\"signature\":\"s\"}]', 1);",
        )
        .unwrap();
    let set = &mem::claims_of(store.conn(), 1).unwrap()[0];
    assert_eq!(
        (set.definitions.clone(), set.resolved_elsewhere),
        (
            vec![mem::ClaimDefinition {
                key: "a.py#A.g@method".into(),
                body: "b".into(),
                signature: "s".into()
            }],
            true
        )
    );
}

/// `memory::pages_near` reads the pages named, those under the folders given (a range of
/// the `subject` index: `a/b-c` and `a/bc` sort between `a/b/…` neighbours but are not
/// under `a/b`) and every topic, by subject; nothing else.
#[test]
fn pages_near_reads_the_subjects_named_the_pages_under_the_folders_given_and_the_topics() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("loci.db")).unwrap();
    let pages = [
        (".", "root"),
        ("a", "folder"),
        ("a/b", "folder"),
        ("a/b/c.py", "file"),
        ("a/b/e", "folder"),
        ("a/b/e/f.py", "file"),
        ("a/b-c.py", "file"),
        ("a/bc/g.py", "file"),
        ("x/y.py", "file"),
        ("topic:billing", "topic"),
        ("decisions", "decisions"),
    ];
    store
        .write(|tx| {
            for (subject, kind) in pages {
                loci_store::memory::ensure_page(tx, subject, kind)?;
            }
            Ok(())
        })
        .unwrap();
    let subjects = |named: &[&str], under: &[&str]| -> Vec<String> {
        loci_store::memory::pages_near(store.conn(), named, under)
            .unwrap()
            .into_iter()
            .map(|p| p.subject)
            .collect()
    };
    assert_eq!(
        subjects(&["a/b", "a", ".", "decisions"], &["a/b"]),
        [
            ".",
            "a",
            "a/b",
            "a/b/c.py",
            "a/b/e",
            "a/b/e/f.py",
            "decisions",
            "topic:billing"
        ]
    );
    assert_eq!(
        subjects(&["x/y.py", "nosuch"], &[]),
        ["topic:billing", "x/y.py"]
    );
    assert_eq!(
        subjects(&[], &["a/b/e", "x"]),
        ["a/b/e/f.py", "topic:billing", "x/y.py"]
    );
}

/// Fault (fresh-user trial): memory and documentation were indexed as the tokenizer
/// splits text, so a lesson about `RotatingFileHandler.doRollover()` was indexed as
/// `rotatingfilehandler` and `dorollover`, and a question for "rollover" never met it,
/// though the symbol index splits identifiers. Migration 17 gives both indexes the
/// symbols' identifier-aware terms; on a populated database at version 16 it keeps every
/// revision as written, fills the terms of the existing rows, rebuilds both indexes and
/// leaves revisions append-only.
#[test]
fn fault_memory_and_docs_were_indexed_without_identifier_terms() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    let body = "# Lessons\n\n- Call `RotatingFileHandler.doRollover()` only while holding the handler lock (`Handler.acquire()`) — human:a\n";
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
             applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))) STRICT;",
        )
        .unwrap();
        for m in MIGRATIONS.iter().filter(|m| m.version <= 16) {
            conn.execute_batch(m.sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations(version, name) VALUES (?1, ?2)",
                loci_store::rusqlite::params![m.version, m.name],
            )
            .unwrap();
        }
        conn.execute(
            "INSERT INTO pages(subject, kind) VALUES ('lessons', 'lessons')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO revisions(page_id, version, body, summary, author) VALUES (1, 1, ?1, 'uses getLogger', 'human:a')",
            [body],
        )
        .unwrap();
        conn.execute_batch(
            "INSERT INTO files(path, size, mtime_ns, content_hash, lines, scan_id) VALUES ('README.md', 1, 1, 'h', 1, 1);
             INSERT INTO doc_chunks(file_id, heading, line, end_line, text) VALUES (1, 'Logging', 0, 1, 'Use `logging.getLogger(name)` and `parse_config`.');",
        )
        .unwrap();
        let before: i64 = conn
            .query_row(
                "SELECT count(*) FROM revisions_fts WHERE revisions_fts MATCH 'rollover'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(before, 0, "version 16 did not split identifiers");
    }
    let store = Store::open(&path).unwrap();
    let conn = store.conn();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let (kept_body, summary, terms): (String, String, String) = conn
        .query_row("SELECT body, summary, terms FROM revisions", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    // Migration 22 made the log's one entry a page of its own.
    assert_eq!(
        (kept_body.as_str(), summary.as_str()),
        (
            "Call `RotatingFileHandler.doRollover()` only while holding the handler lock (`Handler.acquire()`)",
            "uses getLogger"
        )
    );
    assert_eq!(
        terms,
        "rotating file handler do rollover rotatingfilehandler dorollover get logger getlogger"
    );
    for q in [
        "rollover",
        "\"do rollover\"",
        "\"rotating file handler do rollover\"",
        "logger",
    ] {
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM revisions_fts WHERE revisions_fts MATCH '{}'",
                q.replace('\'', "''")
            )),
            1,
            "memory for {q}"
        );
    }
    for q in ["logger", "parseconfig", "getlogger"] {
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM doc_chunks_fts WHERE doc_chunks_fts MATCH '{q}'"
            )),
            1,
            "docs for {q}"
        );
    }
    let err = conn
        .execute("UPDATE revisions SET body = 'changed'", [])
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    assert_eq!(
        count("SELECT count(*) FROM schema_migrations WHERE version = 17"),
        1
    );
    // A revision written now is indexed with its terms by the insert itself.
    conn.execute(
        "INSERT INTO revisions(page_id, version, body, author, terms)
         VALUES ((SELECT page_id FROM pages WHERE subject = 'lesson:1'), 2, 'see `BufferingHandler`', 'human:a', 'buffering handler bufferinghandler')",
        [],
    )
    .unwrap();
    assert_eq!(
        count("SELECT count(*) FROM revisions_fts WHERE revisions_fts MATCH 'buffering'"),
        1
    );
    conn.execute_batch(
        "INSERT INTO revisions_fts(revisions_fts, rank) VALUES ('integrity-check', 1)",
    )
    .unwrap();
}

/// Migration 22 (log entries) on a database at 21 whose decision log is one page with a
/// revision per write, each holding the whole log: every revision becomes the revision of
/// the entry it changed, keeping its id, author, session and time; each keeps the claims
/// that lie in its entry, moved to their place there with their snapshots; a rewrite of
/// the log is a new version of the entry it edited; a dismissal of a finding about the log
/// is a dismissal of the entry that makes it; and revisions stay append-only.
#[test]
fn migration_22_splits_whole_log_pages_into_entries_keeping_revisions_claims_and_dismissals() {
    use loci_store::memory as mem;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    let v1 = "# Decisions\n\n- Keep `f()` pure (about `a.py`) — human:a\n";
    let v2 = format!("{v1}\n- Use `g()`\n  for IO — agent:b\n");
    let v3 = v2.replace("pure (about", "pure and fast (about");
    {
        let conn = database_at(&path, 21);
        conn.execute_batch(
            "INSERT INTO sessions(session_id, author, start_event_id, start_revision_id)
                 VALUES (1, 'agent:b', 0, 0);
             INSERT INTO pages(page_id, subject, kind, uid) VALUES (1, 'decisions', 'decisions', 'log');
             INSERT INTO pages(page_id, subject, kind) VALUES (2, 'lessons', 'lessons');",
        )
        .unwrap();
        let revision = |id: i64,
                        page: i64,
                        version: i64,
                        body: &str,
                        author: &str,
                        session: Option<i64>| {
            conn.execute(
                "INSERT INTO revisions(revision_id, page_id, version, body, summary, author, session_id, created_at)
                 VALUES (?1, ?2, ?3, ?4, 'summary ' || ?1, ?5, ?6, '2026-01-0' || ?1 || 'T00:00:00Z')",
                loci_store::rusqlite::params![id, page, version, body, author, session],
            )
            .unwrap();
        };
        let claim = |revision: i64, body: &str, text: &str, snapshot: &str| {
            let start = body.find(&format!("`{text}`")).unwrap() + 1;
            let line = body[..start].matches('\n').count();
            conn.execute(
                "INSERT INTO claims(revision_id, kind, text, target, start_byte, end_byte, line, resolved, snapshot)
                 VALUES (?1, 'symbol', ?2, ?2, ?3, ?4, ?5, ?2, ?6)",
                loci_store::rusqlite::params![revision, text, start, start + text.len(), line, snapshot],
            )
            .unwrap();
        };
        revision(1, 1, 1, v1, "human:a", None);
        claim(1, v1, "f()", "f-when-decided");
        revision(2, 1, 2, &v2, "agent:b", Some(1));
        claim(2, &v2, "f()", "f-copied-later");
        claim(2, &v2, "g()", "g-when-decided");
        revision(3, 1, 3, &v3, "human:c", None);
        claim(3, &v3, "f()", "f-when-edited");
        claim(3, &v3, "g()", "g-copied-later");
        revision(
            4,
            2,
            1,
            "# Lessons\n\n- Retry once — agent:b\n",
            "agent:b",
            None,
        );
        conn.execute_batch(
            "INSERT INTO contradictions(finding_key, origin, subject, revision_id, kind, severity,
                 claim, target, line, column, end_column, status)
             VALUES ('page:decisions:missing_symbol:g()', 'page', 'decisions', 3, 'missing_symbol',
                 'high', 'g()', 'g()', 4, 6, 9, 'dismissed');",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let conn = store.conn();
    let pages: Vec<(String, String, String)> = mem::pages(conn)
        .unwrap()
        .iter()
        .map(|p| {
            (
                p.subject.clone(),
                p.kind.clone(),
                mem::page_uid(conn, p.page_id).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pages,
        [
            (
                "decision:1".to_string(),
                "decisions".to_string(),
                "log-1".to_string()
            ),
            ("decision:2".into(), "decisions".into(), "log-2".into()),
            (
                "lesson:1".into(),
                "lessons".into(),
                mem::page_uid(
                    conn,
                    mem::page_by_subject(conn, "lesson:1")
                        .unwrap()
                        .unwrap()
                        .page_id
                )
                .unwrap()
            ),
        ]
    );
    /// Id, version, body, author, session, time and summary of a revision.
    type Provenance = (
        i64,
        i64,
        String,
        String,
        Option<i64>,
        String,
        Option<String>,
    );
    let history = |subject: &str| -> Vec<Provenance> {
        let page = mem::page_by_subject(conn, subject).unwrap().unwrap();
        mem::revisions_of(conn, page.page_id)
            .unwrap()
            .into_iter()
            .map(|r| {
                (
                    r.revision_id,
                    r.version,
                    r.body,
                    r.author,
                    r.session_id,
                    r.created_at,
                    r.summary,
                )
            })
            .collect()
    };
    assert_eq!(
        history("decision:1"),
        [
            (
                1,
                1,
                "Keep `f()` pure (about `a.py`)".to_string(),
                "human:a".to_string(),
                None,
                "2026-01-01T00:00:00Z".to_string(),
                Some("summary 1".to_string())
            ),
            (
                3,
                2,
                "Keep `f()` pure and fast (about `a.py`)".into(),
                "human:c".into(),
                None,
                "2026-01-03T00:00:00Z".into(),
                Some("summary 3".into())
            ),
        ]
    );
    assert_eq!(
        history("decision:2"),
        [(
            2,
            1,
            "Use `g()`\nfor IO".to_string(),
            "agent:b".to_string(),
            Some(1),
            "2026-01-02T00:00:00Z".to_string(),
            Some("summary 2".to_string())
        )]
    );
    assert_eq!(history("lesson:1")[0].2, "Retry once");
    // Each revision keeps the claims in its entry, at their place there, with the
    // snapshots they had.
    let claims = |revision: i64| -> Vec<(String, String, u32, String)> {
        let body = mem::revision_by_id(conn, revision).unwrap().unwrap().body;
        mem::claims_of(conn, revision)
            .unwrap()
            .into_iter()
            .map(|c| {
                let at = body[c.start_byte as usize..c.end_byte as usize].to_string();
                (c.text, at, c.line, c.snapshot.unwrap_or_default())
            })
            .collect()
    };
    assert_eq!(
        claims(1),
        [(
            "f()".to_string(),
            "f()".to_string(),
            0,
            "f-when-decided".to_string()
        )]
    );
    assert_eq!(
        claims(2),
        [(
            "g()".to_string(),
            "g()".to_string(),
            0,
            "g-when-decided".to_string()
        )]
    );
    assert_eq!(
        claims(3),
        [(
            "f()".to_string(),
            "f()".to_string(),
            0,
            "f-when-edited".to_string()
        )]
    );
    let current = |subject: &str| {
        mem::page_by_subject(conn, subject)
            .unwrap()
            .unwrap()
            .current_revision_id
    };
    assert_eq!(
        (current("decision:1"), current("decision:2")),
        (Some(3), Some(2))
    );
    // The dismissal is the entry's now.
    let dismissed: (String, String, i64, i64, String) = conn
        .query_row(
            "SELECT finding_key, subject, revision_id, line, status FROM contradictions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(
        dismissed,
        (
            "page:decision:2:missing_symbol:g()".into(),
            "decision:2".into(),
            2,
            0,
            "dismissed".into()
        )
    );
    // The full-text index reads the entries, and revisions are append-only again.
    let hits = mem::search_revisions(conn, "\"fast\"", false, 5).unwrap();
    assert_eq!(hits.iter().map(|h| h.revision_id).collect::<Vec<_>>(), [3]);
    for sql in [
        "UPDATE revisions SET body = 'x' WHERE revision_id = 1",
        "DELETE FROM revisions WHERE revision_id = 1",
    ] {
        let err = conn.execute(sql, []).unwrap_err().to_string();
        assert!(err.contains("append-only"), "{sql}: {err}");
    }
}

/// A store at `path` with 200 revisions and `before` run on it; then, every connection
/// closed (the log checkpointed into the file), its `revisions` table's root page
/// overwritten (pages are 4096 bytes, numbered from 1).
fn with_memory_then_its_revisions_damaged(path: &std::path::Path, before: impl FnOnce(&mut Store)) {
    let root_page: i64 = {
        let mut store = Store::open(path).unwrap();
        for i in 0..200 {
            insert_memory(store.conn(), &format!("src/m{i}.py"), &"body ".repeat(40));
        }
        before(&mut store);
        store
            .conn()
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'revisions'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let mut bytes = std::fs::read(path).unwrap();
    let at = (root_page as usize - 1) * 4096;
    bytes[at..at + 4096].fill(0xA5);
    std::fs::write(path, &bytes).unwrap();
}

/// Fault: a store with a damaged page of memory passed `scan`, `stats` and `remember` with
/// exit 0 and failed only the queries that read the page. Those commands check the tables
/// of memory first ([`Store::check_memory`]), which refuse it as damaged, naming the table.
#[test]
fn fault_a_store_with_a_damaged_page_of_memory_passed_writes_without_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    with_memory_then_its_revisions_damaged(&path, |store| store.check_memory().unwrap());
    let store = Store::open(&path).unwrap();
    match store.check_memory() {
        Err(e @ StoreError::Damaged { .. }) => {
            assert_eq!(e.kind(), "corrupt");
            let message = e.to_string();
            assert!(
                message.starts_with(&format!(
                    "{}: the database is damaged (table revisions: ",
                    path.display()
                )),
                "{message}"
            );
        }
        Err(other) => panic!("expected a damaged store, got {other}"),
        Ok(()) => panic!("a damaged page of memory passed the check"),
    }
}

/// A passed check of memory spares the commands that check only when due for
/// `MEMORY_CHECK_INTERVAL` (a check costs what memory holds; a write must cost what it
/// adds), and a check is due again once the recorded one is older or unreadable.
#[test]
fn a_passed_check_of_memory_spares_the_next_commands_until_the_interval_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loci.db");
    with_memory_then_its_revisions_damaged(&path, |store| {
        store
            .check_memory_within(loci_store::MEMORY_CHECK_INTERVAL)
            .unwrap()
    });
    let mut store = Store::open(&path).unwrap();
    // Within the interval: not checked again.
    store
        .check_memory_within(loci_store::MEMORY_CHECK_INTERVAL)
        .unwrap();
    assert!(store.check_memory().is_err());
    // The recorded check older than the interval: checked, and refused.
    let old = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - loci_store::MEMORY_CHECK_INTERVAL.as_secs()
        - 1;
    store
        .conn()
        .execute(
            "UPDATE meta SET value = ?1 WHERE key = 'memory_checked_at'",
            [old.to_string()],
        )
        .unwrap();
    match store.check_memory_within(loci_store::MEMORY_CHECK_INTERVAL) {
        Err(e @ StoreError::Damaged { .. }) => {
            assert!(e.to_string().contains("(table revisions: "), "{e}")
        }
        other => panic!("expected a damaged store, got {other:?}"),
    }
}

/// Fault: SQLite's own words ("database or disk is full", "database is locked" while
/// reading the schema version) did not say which file; an error of the store now names it
/// first.
#[test]
fn fault_errors_from_sqlite_did_not_name_the_database_file() {
    use loci_store::rusqlite::{Error, ffi};
    let path = std::path::Path::new("/work/x/.loci/loci.db");
    let full = StoreError::sqlite(
        "committing a write transaction",
        Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_FULL), None),
    );
    assert_eq!(
        full.at(path).to_string(),
        "/work/x/.loci/loci.db: committing a write transaction: Error code 13: database or disk is full"
    );
    let locked = StoreError::sqlite(
        "reading the schema version",
        Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_BUSY), None),
    );
    let named = locked.at(path);
    assert_eq!(
        named.to_string(),
        "/work/x/.loci/loci.db: reading the schema version: Error code 5: database is locked"
    );
    assert_eq!(named.kind(), "busy");
    // Named once, not twice.
    assert_eq!(named.at(path).to_string().matches("loci.db").count(), 1);
}

#[test]
fn fault_looking_a_module_up_by_file_name_read_every_path_of_the_map() {
    let mut store = Store::open_in_memory().unwrap();
    store
        .write(|tx| {
            for path in [
                "cmd.py",
                "lib2to3/fixes/cmd.py",
                "mycmd.py",
                "cmd/__init__.py",
                "email/__init__.py",
                "cmdline/x.py",
            ] {
                tx.execute(
                    "INSERT INTO files(path, size, mtime_ns, content_hash, lines, scan_id)
                     VALUES (?1, 1, 0, 'h', 1, 1)",
                    [path],
                )
                .unwrap();
            }
            Ok(())
        })
        .unwrap();
    let conn = store.conn();
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        loci_store::map::files_named(conn, &names(&["cmd.py", "cmd/__init__.py"]), 10).unwrap(),
        ["cmd.py", "cmd/__init__.py", "lib2to3/fixes/cmd.py"]
    );
    assert_eq!(
        loci_store::map::files_named(conn, &names(&["fixes/cmd.py"]), 10).unwrap(),
        ["lib2to3/fixes/cmd.py"]
    );
    assert_eq!(
        loci_store::map::files_named(conn, &names(&["cmd.py"]), 1).unwrap(),
        ["cmd.py"]
    );
    // A folder is the paths after `folder/`, not those starting with its name.
    assert!(loci_store::map::folder_has_files(conn, "cmd").unwrap());
    assert!(!loci_store::map::folder_has_files(conn, "cmdl").unwrap());
    assert!(loci_store::map::folder_has_files(conn, "lib2to3/fixes").unwrap());
    assert_eq!(
        loci_store::map::largest_file_under(conn, "lib2to3")
            .unwrap()
            .as_deref(),
        Some("lib2to3/fixes/cmd.py")
    );
}

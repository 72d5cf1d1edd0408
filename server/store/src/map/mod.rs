//! Typed queries over the structural map: files, symbols, refs, imports, deps, scans.
//!
//! Positions are stored as byte offsets and zero-based lines, exactly as `loci-core`
//! produces them; conversion to editor encodings happens in the language server.

use std::collections::HashMap;

use loci_core::{Import, Symbol};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use crate::{Context, Result, StoreError};

mod bulk;
mod chunks;
mod deps;
mod files;
mod keyed;
mod names;
mod refs;
mod scans;
mod skipped;
mod stats;
mod symbols;

pub use bulk::*;
pub use chunks::*;
pub use deps::*;
pub use files::*;
pub use keyed::*;
pub use names::*;
pub use refs::*;
pub use scans::*;
pub use skipped::*;
pub use stats::*;
pub use symbols::*;

#[cfg(test)]
mod tests {
    use super::{FileRow, RefRow, insert_refs, put_file};

    /// Each name is a search of the index of file names (migration 33): the statement
    /// spells its expression as the index does.
    #[test]
    fn files_named_searches_the_index_of_file_names() {
        let store = crate::Store::open_in_memory().expect("store");
        let plan: Vec<String> = store
            .conn()
            .prepare(&format!(
                "EXPLAIN QUERY PLAN {}",
                super::files::files_named_sql(2)
            ))
            .expect("plan")
            .query_map(
                ["a.py", "x/a.py", "__init__.py", "a/__init__.py", "9"],
                |r| r.get::<_, String>(3),
            )
            .expect("plan")
            .collect::<Result<_, _>>()
            .expect("plan");
        let searches: Vec<&String> = plan.iter().filter(|l| l.contains("files")).collect();
        assert_eq!(
            searches,
            [
                "SEARCH files USING INDEX files_by_name (<expr>=?)",
                "SEARCH files USING INDEX files_by_name (<expr>=?)"
            ],
            "{plan:?}"
        );
    }

    /// (name, line, start byte, receiver, receiver name) of a stored reference.
    type StoredRef = (String, u32, u32, Option<String>, Option<String>);

    /// 64 + 16 + 4 + 1 + 1 rows go in as five statements of four sizes; every row must
    /// come back in order, with its own values, under ascending row ids.
    #[test]
    fn multi_row_ref_inserts_keep_every_row_and_its_order() {
        let mut store = crate::Store::open_in_memory().expect("store");
        let names: Vec<String> = (0..86).map(|i| format!("name{i}")).collect();
        store
            .write(|tx| {
                tx.execute(
                    "INSERT INTO scans(started_at) VALUES ('2026-12-02T00:00:00Z')",
                    [],
                )
                .expect("scan");
                let scan_id = tx.last_insert_rowid();
                let row = FileRow {
                    path: "a.py",
                    language: Some("python"),
                    size: 1,
                    mtime_ns: 1,
                    content_hash: "00",
                    fingerprint: None,
                    lines: 1,
                    error_nodes: 0,
                    degraded: None,
                    lossy_utf8: false,
                };
                let file_id = put_file(tx, None, &row, scan_id)?;
                let rows = names.iter().enumerate().map(|(i, name)| RefRow {
                    name,
                    kind: "call",
                    receiver: (i % 3 == 0).then_some("other"),
                    receiver_name: (i % 3 == 0).then_some("obj"),
                    line: i as u32,
                    column: 2,
                    start_byte: 10 * i as u32,
                    end_byte: 10 * i as u32 + 5,
                    enclosing_id: None,
                    target_id: None,
                    provenance: "derived",
                    confidence: 0.5,
                });
                insert_refs(tx, file_id, rows)
            })
            .expect("insert");
        let mut stmt = store
            .conn()
            .prepare(
                "SELECT name, line, start_byte, receiver, receiver_name FROM refs ORDER BY ref_id",
            )
            .expect("select");
        let got: Vec<StoredRef> = stmt
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .expect("query")
            .map(|r| r.expect("row"))
            .collect();
        let want: Vec<StoredRef> = (0..86)
            .map(|i| {
                let other = i % 3 == 0;
                (
                    format!("name{i}"),
                    i,
                    10 * i,
                    other.then(|| "other".to_string()),
                    other.then(|| "obj".to_string()),
                )
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn suspended_fts_triggers_match_the_migration() {
        // The symbols trigger is 0004's; the doc chunks one 0017's, which replaced 0004's.
        let migrations = [
            include_str!("../migrations/0004_search.sql"),
            include_str!("../migrations/0017_text_terms.sql"),
        ];
        for (name, _, sql) in super::BULK_FTS_TRIGGERS {
            assert!(
                migrations.iter().any(|m| m.contains(sql)),
                "trigger {name} differs from its migration"
            );
        }
    }

    #[test]
    fn bulk_indexes_match_the_migrations() {
        // A migrated store holds each index as its migrations made it; a bulk load must
        // build the same one again.
        let store = crate::Store::open_in_memory().expect("store");
        for (name, sql) in super::bulk::BULK_INDEXES {
            let migrated: String = store
                .conn()
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .expect("the index of a migrated store");
            assert_eq!(
                sql.replacen("IF NOT EXISTS ", "", 1),
                migrated,
                "index {name} differs from its migration"
            );
        }
    }
}

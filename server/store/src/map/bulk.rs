//! The indexes and FTS triggers dropped for a bulk write (a first scan) and created
//! again after it.

use super::*;

/// Secondary indexes of `symbols`, `refs` and `code_chunks` that a bulk load builds at
/// the end. Their definitions must match the migrations (`0001_map.sql`,
/// `0030_ref_receiver_typed.sql`, `0018_ref_deps.sql`, `0023_folded_names.sql`,
/// `0019_code_text.sql`, `0021_text_keyed_vectors.sql`). Row by row, an index whose keys
/// come in no order (a chunk's hash) costs a b-tree search per insert.
pub(super) const BULK_INDEXES: &[(&str, &str)] = &[
    (
        "refs_by_name",
        "CREATE INDEX IF NOT EXISTS refs_by_name ON refs(name)",
    ),
    (
        "refs_by_target",
        "CREATE INDEX IF NOT EXISTS refs_by_target ON refs(target_id)",
    ),
    (
        "refs_by_file",
        "CREATE INDEX IF NOT EXISTS refs_by_file ON refs(file_id)",
    ),
    (
        "symbols_by_name",
        "CREATE INDEX IF NOT EXISTS symbols_by_name ON symbols(name, qualified_name)",
    ),
    (
        "symbols_by_qualified_name",
        "CREATE INDEX IF NOT EXISTS symbols_by_qualified_name ON symbols(qualified_name)",
    ),
    (
        "symbols_by_folded_name",
        "CREATE INDEX IF NOT EXISTS symbols_by_folded_name ON symbols(lower(replace(name, '_', '')), name)",
    ),
    (
        "code_chunks_by_file",
        "CREATE INDEX IF NOT EXISTS code_chunks_by_file ON code_chunks(file_id)",
    ),
    (
        "code_chunks_by_embed_hash",
        "CREATE INDEX IF NOT EXISTS code_chunks_by_embed_hash ON code_chunks(embed_hash) WHERE embed_hash IS NOT NULL",
    ),
];

/// The full-text triggers a bulk load suspends (FTS5 flushes its pending terms at every
/// statement savepoint, so row-by-row trigger inserts write thousands of tiny segments);
/// the tables are rebuilt in one pass at the end instead. The SQL is exactly that of
/// `0004_search.sql` and `0017_text_terms.sql` (a test checks it).
pub const BULK_FTS_TRIGGERS: &[(&str, &str, &str)] = &[
    (
        "symbols_fts_insert",
        "symbols_fts",
        "CREATE TRIGGER symbols_fts_insert AFTER INSERT ON symbols BEGIN
    INSERT INTO symbols_fts(rowid, terms, signature, doc)
    VALUES (new.symbol_id, new.terms, new.signature, new.doc);
END;",
    ),
    (
        "doc_chunks_fts_insert",
        "doc_chunks_fts",
        "CREATE TRIGGER doc_chunks_fts_insert AFTER INSERT ON doc_chunks BEGIN
    INSERT INTO doc_chunks_fts(rowid, heading, text, terms)
    VALUES (new.chunk_id, new.heading, new.text, new.terms);
END;",
    ),
];

/// Drops the bulk indexes and suspends the full-text insert triggers (before a first
/// scan's bulk load).
pub fn drop_bulk_indexes(tx: &Transaction<'_>) -> Result<()> {
    for (name, _) in BULK_INDEXES {
        tx.execute_batch(&format!("DROP INDEX IF EXISTS {name}"))
            .ctx(|| format!("dropping index {name}"))?;
    }
    for (trigger, _, _) in BULK_FTS_TRIGGERS {
        tx.execute_batch(&format!("DROP TRIGGER IF EXISTS {trigger}"))
            .ctx(|| format!("dropping trigger {trigger}"))?;
    }
    Ok(())
}

/// Creates the bulk indexes that look up references and definitions by name, which a
/// bulk load's reference resolution reads by (the rest come with
/// [`create_bulk_indexes`]; none is built twice).
pub fn create_name_indexes(tx: &Transaction<'_>) -> Result<()> {
    for (name, sql) in BULK_INDEXES {
        if matches!(*name, "refs_by_name" | "symbols_by_name") {
            tx.execute_batch(sql)
                .ctx(|| format!("creating index {name}"))?;
        }
    }
    Ok(())
}

/// True when a bulk load was interrupted before it rebuilt its indexes and triggers.
pub fn bulk_indexes_missing(conn: &Connection) -> Result<bool> {
    let present: usize = conn
        .query_row(&bulk_objects_present_sql(), [], |r| r.get(0))
        .ctx(|| "checking indexes".into())?;
    Ok(present < bulk_objects())
}

/// How many indexes and triggers a bulk load drops and restores.
pub(crate) fn bulk_objects() -> usize {
    BULK_INDEXES.len() + BULK_FTS_TRIGGERS.len()
}

/// A scalar `SELECT` counting the indexes and triggers of [`bulk_objects`] that exist.
pub(crate) fn bulk_objects_present_sql() -> String {
    let names: Vec<String> = BULK_INDEXES
        .iter()
        .map(|(n, _)| *n)
        .chain(BULK_FTS_TRIGGERS.iter().map(|(n, _, _)| *n))
        .map(|n| format!("'{n}'"))
        .collect();
    format!(
        "SELECT count(*) FROM sqlite_master WHERE type IN ('index', 'trigger') AND name IN ({})",
        names.join(", ")
    )
}

/// Creates the bulk indexes if missing, and restores the full-text triggers with a full
/// rebuild of their tables (after a bulk load, and at the start of any scan that finds
/// them missing, so an interrupted load never leaves the map unindexed).
pub fn create_bulk_indexes(tx: &Transaction<'_>) -> Result<()> {
    for (name, sql) in BULK_INDEXES {
        tx.execute_batch(sql)
            .ctx(|| format!("creating index {name}"))?;
    }
    for (trigger, table, sql) in BULK_FTS_TRIGGERS {
        let exists: bool = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?1)",
                [trigger],
                |r| r.get(0),
            )
            .ctx(|| format!("checking trigger {trigger}"))?;
        if !exists {
            // `rebuild` flushes a segment per megabyte of terms (FTS5's `hashsize`): 4
            // for the stdlib's symbols. `optimize` merges them into the one b-tree every
            // search then reads (0.1 s more on the stdlib: 0.34–0.37 s to rebuild, 0.42–0.47 s
            // with the optimize).
            tx.execute_batch(&format!(
                "INSERT INTO {table}({table}) VALUES ('rebuild'); INSERT INTO {table}({table}) VALUES ('optimize');"
            ))
            .ctx(|| format!("rebuilding {table}"))?;
            tx.execute_batch(sql)
                .ctx(|| format!("creating trigger {trigger}"))?;
        }
    }
    Ok(())
}

//! Write latency of memory's full-text index as memory grows: 15,000 revisions written
//! one per transaction into a fresh store (12 words of a 20,000-word vocabulary each),
//! merging the index after each write level by level (`merge_levels`, what
//! `Store::write` runs) or every segment into one (`merge_segments`), in the same run.
//! Prints, at 500, 5,000 and 15,000 revisions, the p50 / p95 of the last 500 writes in ms
//! and the index's segments.
//!
//!     cargo run --release -p loci-store --example memory_index_writes

#![allow(clippy::print_stdout)] // a benchmark prints its figures

use loci_store::Store;
use loci_store::rusqlite::{Connection, TransactionBehavior};
use loci_store::search::{FtsTable, MERGE_PAGES, merge_levels, merge_segments};

fn main() {
    for name in ["levels", "all"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("loci.db");
        drop(Store::open(&path).expect("store"));
        let mut conn = Connection::open(&path).expect("open");
        // As `Store` opens it (WAL, set by the store, persists in the file).
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384;")
            .expect("pragmas");
        let mut times = Vec::new();
        let mut seed = 1u64;
        for i in 0..15_000 {
            let body: Vec<String> = (0..12)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    format!("w{}", (seed >> 33) % 20_000)
                })
                .collect();
            let started = std::time::Instant::now();
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .expect("begin");
            tx.execute(
                "INSERT INTO pages(subject, kind) VALUES (?1, 'file')",
                [format!("m{i}.py")],
            )
            .expect("page");
            tx.execute(
                "INSERT INTO revisions(page_id, version, body, author)
                 VALUES (last_insert_rowid(), 1, ?1, 'bench')",
                [body.join(" ")],
            )
            .expect("revision");
            if name == "levels" {
                merge_levels(&tx, FtsTable::Revisions, MERGE_PAGES).expect("merge");
            } else {
                merge_segments(&tx, FtsTable::Revisions, MERGE_PAGES).expect("merge");
            }
            tx.commit().expect("commit");
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            if [499, 4_999, 14_999].contains(&i) {
                let segments: i64 = conn
                    .query_row(
                        "SELECT count(DISTINCT segid) FROM revisions_fts_idx",
                        [],
                        |r| r.get(0),
                    )
                    .expect("segments");
                let mut last = times[times.len() - 500..].to_vec();
                last.sort_by(f64::total_cmp);
                println!(
                    "{name} {} revisions: p50 {:.2} ms, p95 {:.2} ms, {segments} segments",
                    i + 1,
                    last[250],
                    last[475]
                );
            }
        }
    }
}

//! Damage a store the way a bad disk does, for the tests of how each door names it.

use std::path::Path;

/// The bytes of the database file `db` with every page of the `symbols` table's b-trees
/// overwritten (`0xA5`): the file still opens, and a query that reaches the symbols fails
/// with "database disk image is malformed". The file itself is not changed.
pub fn symbols_damaged(db: &Path) -> Vec<u8> {
    let conn = loci_store::rusqlite::Connection::open(db).unwrap();
    let page_size: usize = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let roots: Vec<usize> = conn
        .prepare("SELECT rootpage FROM sqlite_schema WHERE tbl_name = 'symbols' AND rootpage > 0")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    drop(conn);
    let mut bytes = std::fs::read(db).unwrap();
    for page in roots {
        bytes[(page - 1) * page_size..page * page_size].fill(0xA5);
    }
    bytes
}

//! Incremental upkeep of the common-terms lists of the map's full-text indexes
//! (`fts_common_terms`, migration 0014; [`crate::search::refresh_common_terms`]).
//!
//! Listing the common terms walks a whole index: on a 50,000-file map that is 43% of the
//! CPU of a rescan after 100 edits. A scan that changes a small part of the map records
//! instead the rows it deletes from and inserts into each index, and at its end moves each
//! listed document frequency by what those rows took away and added. The result equals a
//! walk of the index, term for term, because a document frequency counts rows, and the
//! recorded rows are tokenized by the same tokenizer as the index's.
//!
//! Recording: temporary triggers on the tables the indexes are built from copy each
//! deleted or inserted row's indexed text into temporary FTS5 tables, one pair (rows
//! added, rows removed) per index. Memory's index and the symbols' and docs' indexes keep
//! their text in their content tables; the code-text indexes are contentless (their text
//! stays in the working tree), so the scan keeps the distinct words of each of their rows
//! in `code_text_words` (migration 0028, [`code_text_words`]), and the triggers copy those.

use rusqlite::{Connection, OptionalExtension, params};

use crate::map::IndexedChunk;
use crate::search::{COMMON_TERM_ROWS, FtsTable};
use crate::{Context, Result};

/// The words of `text` as the FTS5 `unicode61` tokenizer splits and folds them, each as
/// its id in `dict` (repeats included, in order): `text` is split at every ASCII character
/// that is not a letter or digit (each is a separator to the tokenizer) and ASCII letters
/// are lower-cased (the tokenizer folds case one character at a time); other characters
/// are kept as they are, for the tokenizer to split and fold when the words are indexed.
/// So a row's distinct words joined by spaces give it exactly the terms its texts give
/// it, which is all a document frequency counts.
fn word_ids(text: &str, dict: &mut Dict, ids: &mut Vec<u32>) {
    let bytes = text.as_bytes();
    let mut start = 0;
    for end in 0..=bytes.len() {
        // A non-ASCII character's bytes are all ≥ 0x80: splitting bytes at ASCII
        // separators splits the characters alike.
        if end < bytes.len() && (bytes[end] >= 0x80 || bytes[end].is_ascii_alphanumeric()) {
            continue;
        }
        if end > start {
            ids.push(dict.id(&text[start..end]));
        }
        start = end + 1;
    }
}

/// A file's dictionary of folded words: a word's id is its place in first-seen order.
#[derive(Default)]
struct Dict {
    words: Vec<String>,
    index: std::collections::HashMap<String, u32, std::hash::BuildHasherDefault<FxHasher>>,
    folded: String,
}

impl Dict {
    /// The id of `piece` lower-cased (ASCII letters only); a new word takes the next id.
    fn id(&mut self, piece: &str) -> u32 {
        let word = if piece.bytes().any(|b| b.is_ascii_uppercase()) {
            self.folded.clear();
            self.folded.push_str(piece);
            self.folded.make_ascii_lowercase();
            self.folded.as_str()
        } else {
            piece
        };
        if let Some(&id) = self.index.get(word) {
            return id;
        }
        let id = self.words.len() as u32;
        self.words.push(word.to_string());
        self.index.insert(word.to_string(), id);
        id
    }
}

/// FxHash (rustc's): the dictionary hashes every word of a file's text, short keys for
/// which SipHash cost a tenth of [`code_text_words`].
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut v = [0u8; 8];
            v.copy_from_slice(w);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(v)).wrapping_mul(K);
        }
        for &b in words.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Appends to `row` each of `ids` that `seen` does not mark with `stamp` (the row's
/// number), marking it: a row's distinct words in first-seen order.
fn distinct_ids(ids: &[u32], seen: &mut Vec<u32>, stamp: u32, row: &mut Vec<u32>) {
    for &id in ids {
        let i = id as usize;
        if seen.len() <= i {
            seen.resize(i + 1, 0);
        }
        if seen[i] != stamp {
            seen[i] = stamp;
            row.push(id);
        }
    }
}

/// Appends `v` as an unsigned LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `*at`, advancing it; `None` at a truncated one.
fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The distinct words of every row a file puts in the code-text indexes
/// ([`crate::map::insert_code_text`]), encoded for `code_text_words.words`: the file's
/// dictionary (every word of its rows, each once: a count, then each word's byte length
/// and bytes), then the rows, the file's own row (`file_text_fts`: its path's words and
/// its chunks' texts) first and then each chunk's (`code_chunks_fts`: its path and names,
/// and its text), in insertion order, each a count and indices into the dictionary. All
/// numbers are LEB128 varints: a word the file's chunks share is stored once. Pure: the
/// scan runs it on worker threads.
pub fn code_text_words(path_words: &str, chunks: &[IndexedChunk]) -> Vec<u8> {
    // Each text is split once. A word takes its id where the rows below first meet it:
    // the file's row holds the path's words and every chunk's text, so a chunk's row
    // adds only its names' new words.
    let mut dict = Dict::default();
    let mut path = Vec::new();
    word_ids(path_words, &mut dict, &mut path);
    let texts: Vec<Vec<u32>> = chunks
        .iter()
        .map(|c| {
            let mut ids = Vec::new();
            word_ids(&c.text, &mut dict, &mut ids);
            ids
        })
        .collect();
    let mut seen = Vec::new();
    let mut rows: Vec<Vec<u32>> = Vec::with_capacity(chunks.len() + 1);
    // The file's row: its path's words, then every chunk's text (joined by newlines,
    // separators both).
    let mut file_row = Vec::new();
    distinct_ids(&path, &mut seen, 1, &mut file_row);
    for text in &texts {
        distinct_ids(text, &mut seen, 1, &mut file_row);
    }
    rows.push(file_row);
    let mut names = Vec::new();
    for (stamp, (c, text)) in (2..).zip(chunks.iter().zip(&texts)) {
        let mut row = Vec::new();
        names.clear();
        word_ids(&c.names, &mut dict, &mut names);
        distinct_ids(&path, &mut seen, stamp, &mut row);
        distinct_ids(&names, &mut seen, stamp, &mut row);
        distinct_ids(text, &mut seen, stamp, &mut row);
        rows.push(row);
    }
    let dict = dict.words;
    let mut out = Vec::new();
    put_varint(&mut out, dict.len() as u64);
    for w in &dict {
        put_varint(&mut out, w.len() as u64);
        out.extend_from_slice(w.as_bytes());
    }
    put_varint(&mut out, rows.len() as u64);
    for row in &rows {
        put_varint(&mut out, row.len() as u64);
        for &i in row {
            put_varint(&mut out, u64::from(i));
        }
    }
    out
}

/// The rows of a [`code_text_words`] encoding, each as its words joined by spaces: the
/// file's row first, then its chunks'. `None` for bytes that are not such an encoding.
fn decode_rows(bytes: &[u8]) -> Option<Vec<String>> {
    let mut at = 0;
    let n = get_varint(bytes, &mut at)? as usize;
    let mut dict = Vec::with_capacity(n.min(bytes.len()));
    for _ in 0..n {
        let len = get_varint(bytes, &mut at)? as usize;
        let word = bytes.get(at..at.checked_add(len)?)?;
        dict.push(std::str::from_utf8(word).ok()?);
        at += len;
    }
    let rows = get_varint(bytes, &mut at)? as usize;
    let mut out = Vec::with_capacity(rows.min(bytes.len()));
    for _ in 0..rows {
        let len = get_varint(bytes, &mut at)? as usize;
        let mut text = String::new();
        for k in 0..len {
            let i = get_varint(bytes, &mut at)? as usize;
            if k > 0 {
                text.push(' ');
            }
            text.push_str(dict.get(i)?);
        }
        out.push(text);
    }
    (at == bytes.len()).then_some(out)
}

/// The temporary FTS5 table of rows `added` to (else removed from) `table` while
/// recording.
fn delta_table(table: FtsTable, added: bool) -> String {
    format!(
        "loci_{}_{}",
        if added { "added" } else { "removed" },
        table.name()
    )
}

/// The statements that start recording: the temporary tables and triggers.
fn recording_sql() -> String {
    let mut sql = String::new();
    for table in FtsTable::MAP {
        for added in [true, false] {
            let t = delta_table(table, added);
            sql.push_str(&format!(
                "CREATE VIRTUAL TABLE temp.{t} USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
                 CREATE VIRTUAL TABLE temp.{t}_vocab USING fts5vocab(temp, '{t}', 'row');"
            ));
        }
    }
    // The indexed columns of each content table, as one text (a space between columns:
    // a separator, so no term spans two).
    for (content, columns, table) in [
        ("symbols", ["terms", "signature", "doc"], FtsTable::Symbols),
        ("doc_chunks", ["heading", "text", "terms"], FtsTable::Docs),
    ] {
        for (event, row, added) in [("INSERT", "new", true), ("DELETE", "old", false)] {
            let text = columns
                .iter()
                .map(|c| format!("ifnull({row}.{c}, '')"))
                .collect::<Vec<_>>()
                .join(" || ' ' || ");
            let t = delta_table(table, added);
            sql.push_str(&format!(
                "CREATE TEMP TRIGGER loci_record_{content}_{event} AFTER {event} ON main.{content} BEGIN
                     INSERT INTO {t}(text) VALUES ({text});
                 END;"
            ));
        }
    }
    sql.push_str(
        "CREATE TEMP TABLE loci_code_words(added INTEGER NOT NULL, secondary INTEGER NOT NULL, words BLOB NOT NULL);
         CREATE TEMP TRIGGER loci_record_code_words_INSERT AFTER INSERT ON main.code_text_words BEGIN
             INSERT INTO loci_code_words VALUES (1, new.secondary, new.words);
         END;
         CREATE TEMP TRIGGER loci_record_code_words_DELETE AFTER DELETE ON main.code_text_words BEGIN
             INSERT INTO loci_code_words VALUES (0, old.secondary, old.words);
         END;",
    );
    sql
}

/// Whether `table`'s common-terms list was made from the index as it is now, with the
/// row threshold of this binary ([`COMMON_TERM_ROWS`]).
fn list_current(conn: &Connection, table: FtsTable) -> Result<bool> {
    let fts = table.name();
    let min_doc: Option<i64> = conn
        .prepare_cached(&format!(
            "SELECT min_doc FROM fts_common_terms_stamp
             WHERE fts = '{fts}' AND stamp = coalesce((SELECT block FROM {fts}_data WHERE id = 1), x'')"
        ))
        .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
        .ctx(|| format!("reading the stamp of the common terms of {fts}"))?;
    Ok(min_doc == Some(COMMON_TERM_ROWS as i64))
}

/// Starts recording the changes to the map's full-text indexes, so that
/// [`apply_recorded`] can bring their common-terms lists up to date, and says whether it
/// did: only when every list is current and every row of the code-text indexes has its
/// words in `code_text_words` (a file mapped by a binary from before migration 0028 has
/// none: the lists are then walked again). Recording lasts until [`stop_recording`] on
/// this connection; it starts afresh if it was already on.
///
/// Errors: [`crate::StoreError::Sqlite`] when the stamps cannot be read or the temporary
/// tables and triggers cannot be made.
pub fn start_recording(conn: &Connection) -> Result<bool> {
    stop_recording(conn)?;
    for table in FtsTable::MAP {
        if !list_current(conn, table)? {
            return Ok(false);
        }
    }
    for secondary in [false, true] {
        let words: i64 = conn
            .prepare_cached("SELECT count(*) FROM code_text_words WHERE secondary = ?1")
            .and_then(|mut s| s.query_row([secondary], |r| r.get(0)))
            .ctx(|| "counting the words of the code text".into())?;
        let rows = crate::search::fts_row_count(conn, FtsTable::file_text(secondary))?;
        if words.max(0) as u64 != rows {
            return Ok(false);
        }
    }
    conn.execute_batch(&recording_sql())
        .ctx(|| "recording the changes of the full-text indexes".into())?;
    Ok(true)
}

/// Stops recording ([`start_recording`]): drops the temporary triggers and tables. Does
/// nothing when recording is off.
///
/// Errors: [`crate::StoreError::Sqlite`] when they cannot be dropped.
pub fn stop_recording(conn: &Connection) -> Result<()> {
    let mut sql = String::new();
    for content in ["symbols", "doc_chunks", "code_words"] {
        for event in ["INSERT", "DELETE"] {
            sql.push_str(&format!(
                "DROP TRIGGER IF EXISTS temp.loci_record_{content}_{event};"
            ));
        }
    }
    sql.push_str("DROP TABLE IF EXISTS temp.loci_code_words;");
    for table in FtsTable::MAP {
        for added in [true, false] {
            let t = delta_table(table, added);
            sql.push_str(&format!(
                "DROP TABLE IF EXISTS temp.{t}_vocab; DROP TABLE IF EXISTS temp.{t};"
            ));
        }
    }
    conn.execute_batch(&sql)
        .ctx(|| "ending the record of the full-text indexes' changes".into())
}

/// Brings every common-terms list up to date from what was recorded since
/// [`start_recording`]: each listed term's document frequency moves by the rows added
/// holding it less the rows removed holding it, and leaves the list when it falls below
/// [`COMMON_TERM_ROWS`]; a term not listed that rows added hold is counted in the index
/// (its posting list is short: it was below the threshold) and listed if it reached it.
/// Then each list is stamped with its index's current averages record. Work in
/// proportion to the rows recorded, not to the index. Runs in the caller's write
/// transaction; recording goes on until [`stop_recording`].
///
/// Errors: [`crate::StoreError::Sqlite`] when the record, the index or the list cannot be
/// read or written; [`crate::StoreError::Corrupt`] when a row of `code_text_words` is not
/// an encoding of [`code_text_words`].
pub fn apply_recorded(tx: &Connection) -> Result<()> {
    // The code-text words, row by row, into the tables of their indexes.
    {
        let mut read = tx
            .prepare("SELECT added, secondary, words FROM temp.loci_code_words")
            .ctx(|| "reading the recorded code words".into())?;
        let mut rows = read
            .query([])
            .ctx(|| "reading the recorded code words".into())?;
        while let Some(row) = rows
            .next()
            .ctx(|| "reading the recorded code words".into())?
        {
            let added: bool = row
                .get(0)
                .ctx(|| "reading the recorded code words".into())?;
            let secondary: bool = row
                .get(1)
                .ctx(|| "reading the recorded code words".into())?;
            let words: Vec<u8> = row
                .get(2)
                .ctx(|| "reading the recorded code words".into())?;
            let texts = decode_rows(&words).ok_or_else(|| {
                crate::StoreError::Corrupt("a row of code_text_words is not a word list".into())
            })?;
            let file = delta_table(FtsTable::file_text(secondary), added);
            let chunks = delta_table(FtsTable::chunks(secondary), added);
            for (k, text) in texts.iter().enumerate() {
                let t = if k == 0 { &file } else { &chunks };
                tx.prepare_cached(&format!("INSERT INTO temp.{t}(text) VALUES (?1)"))
                    .and_then(|mut s| s.execute([text]))
                    .ctx(|| "recording the code words".into())?;
            }
        }
    }
    tx.execute_batch("DELETE FROM temp.loci_code_words")
        .ctx(|| "clearing the recorded code words".into())?;
    for table in FtsTable::MAP {
        apply_to(tx, table)?;
    }
    Ok(())
}

/// [`apply_recorded`] for one index.
fn apply_to(tx: &Connection, table: FtsTable) -> Result<()> {
    let fts = table.name();
    let added = delta_table(table, true);
    let removed = delta_table(table, false);
    let ctx = || format!("updating the common terms of {fts}");
    // (term, change of its document frequency, listed frequency if listed)
    let changes: Vec<(String, i64, Option<i64>)> = {
        let mut stmt = tx
            .prepare(&format!(
                "SELECT d.term, d.n, t.doc FROM (
                     SELECT term, sum(n) AS n FROM (
                         SELECT term, doc AS n FROM temp.{added}_vocab
                         UNION ALL SELECT term, -doc FROM temp.{removed}_vocab)
                     GROUP BY term) d
                 LEFT JOIN fts_common_terms t ON t.fts = '{fts}' AND t.term = d.term
                 WHERE d.n != 0"
            ))
            .ctx(ctx)?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .ctx(ctx)?
            .collect::<rusqlite::Result<_>>()
            .ctx(ctx)?
    };
    let min = COMMON_TERM_ROWS as i64;
    let mut set = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO fts_common_terms(fts, term, doc) VALUES (?1, ?2, ?3)",
        )
        .ctx(ctx)?;
    let mut unlist = tx
        .prepare_cached("DELETE FROM fts_common_terms WHERE fts = ?1 AND term = ?2")
        .ctx(ctx)?;
    let mut newcomers = Vec::new();
    for (term, change, listed) in changes {
        match listed {
            Some(doc) if doc + change >= min => {
                set.execute(params![fts, term, doc + change]).ctx(ctx)?;
            }
            Some(_) => {
                unlist.execute(params![fts, term]).ctx(ctx)?;
            }
            // Below the threshold before: only rows added can lift it over.
            None if change > 0 => newcomers.push(term),
            None => {}
        }
    }
    if !newcomers.is_empty() {
        let counts = crate::search::document_frequencies(tx, table, &newcomers)?;
        for (term, doc) in newcomers.iter().zip(counts) {
            if doc >= COMMON_TERM_ROWS {
                set.execute(params![fts, term, doc as i64]).ctx(ctx)?;
            }
        }
    }
    tx.execute(
        &format!(
            "INSERT OR REPLACE INTO fts_common_terms_stamp(fts, stamp, min_doc)
             VALUES ('{fts}', coalesce((SELECT block FROM {fts}_data WHERE id = 1), x''), ?1)"
        ),
        [min],
    )
    .ctx(ctx)?;
    // What is applied is not applied again.
    tx.execute_batch(&format!(
        "DELETE FROM temp.{added}; DELETE FROM temp.{removed};"
    ))
    .ctx(ctx)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(names: &str, text: &str) -> IndexedChunk {
        IndexedChunk {
            symbol: None,
            start_line: 0,
            end_line: 0,
            names: names.into(),
            text: text.into(),
            embed_hash: String::new(),
        }
    }

    #[test]
    fn code_text_words_round_trip_to_each_rows_distinct_folded_words() {
        let words = code_text_words(
            "src auth",
            &[
                chunk("login", "def Login(user):\n    return user.name  # Café"),
                chunk("", "x = 1_000 + Login"),
            ],
        );
        assert_eq!(
            decode_rows(&words).unwrap(),
            [
                "src auth def login user return name café x 1 000",
                "src auth login def user return name café",
                "src auth x 1 000 login",
            ]
        );
    }

    /// [`code_text_words`] as it was before it split each text once: every row's words
    /// found again with a set of strings. The oracle of the test below.
    fn code_text_words_by_sets(path_words: &str, chunks: &[IndexedChunk]) -> Vec<u8> {
        use std::collections::{HashMap, HashSet};
        fn distinct(text: &str, seen: &mut HashSet<String>, word: &mut impl FnMut(&str)) {
            for piece in text.split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric()) {
                let folded = piece.to_ascii_lowercase();
                if !piece.is_empty() && !seen.contains(&folded) {
                    word(&folded);
                    seen.insert(folded);
                }
            }
        }
        let mut dict: Vec<String> = Vec::new();
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut id_of = |w: &str, dict: &mut Vec<String>| -> u32 {
            *index.entry(w.to_string()).or_insert_with(|| {
                dict.push(w.to_string());
                dict.len() as u32 - 1
            })
        };
        let mut rows: Vec<Vec<u32>> = Vec::new();
        let mut seen = HashSet::new();
        let mut file_row = Vec::new();
        distinct(path_words, &mut seen, &mut |w| {
            file_row.push(id_of(w, &mut dict))
        });
        for c in chunks {
            distinct(&c.text, &mut seen, &mut |w| {
                file_row.push(id_of(w, &mut dict))
            });
        }
        rows.push(file_row);
        for c in chunks {
            let mut seen = HashSet::new();
            let mut row = Vec::new();
            for text in [path_words, &c.names, &c.text] {
                distinct(text, &mut seen, &mut |w| row.push(id_of(w, &mut dict)));
            }
            rows.push(row);
        }
        let mut out = Vec::new();
        put_varint(&mut out, dict.len() as u64);
        for w in &dict {
            put_varint(&mut out, w.len() as u64);
            out.extend_from_slice(w.as_bytes());
        }
        put_varint(&mut out, rows.len() as u64);
        for row in &rows {
            put_varint(&mut out, row.len() as u64);
            for &i in row {
                put_varint(&mut out, u64::from(i));
            }
        }
        out
    }

    /// Names with words no text has, words repeated across and within rows, case, digits,
    /// non-ASCII letters and separators: byte for byte the encoding of the set reading.
    #[test]
    fn code_text_words_equal_the_set_reading() {
        let chunks = [
            chunk(
                "Outer inner_Name",
                "class Outer:\n    x = ÉCOLE.école + Straße_2",
            ),
            chunk("", "import os, sys  # os again: OS\n\n"),
            chunk("only_here Ünïcode", "def f(a, b):\n    return a+b+A+B"),
            chunk("f", ""),
            chunk("", "x2 X2 x_2 __dunder__ 1e10 0xFF ½ 日本語 text"),
        ];
        for path in ["", "lib os path", "Src Outer"] {
            for n in 0..=chunks.len() {
                assert_eq!(
                    code_text_words(path, &chunks[..n]),
                    code_text_words_by_sets(path, &chunks[..n]),
                    "{path:?}, {n} chunks"
                );
            }
        }
    }

    #[test]
    fn decode_rows_refuses_truncated_bytes() {
        let words = code_text_words("a", &[chunk("b", "c d")]);
        assert!(decode_rows(&words[..words.len() - 1]).is_none());
        assert!(decode_rows(&[0x80]).is_none());
    }
}

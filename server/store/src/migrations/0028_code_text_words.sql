-- 0028: the distinct words of each row of the code-text indexes, so a scan can keep their
-- common-terms lists (0014) current from what it changed instead of walking each index
-- again (issue 37: 43% of a rescan's CPU after 100 edits on a 50,000-file map).
--
-- The code-text indexes (0019, 0020) are contentless: a deleted row's terms cannot be read
-- back from them. One row per file with code text, written with its index rows and deleted
-- with them: `words` is `loci_store::common_terms::code_text_words` (the file's row and
-- each chunk's row, as distinct words that tokenize to the same terms). Derived data.

CREATE TABLE code_text_words (
    file_id    INTEGER PRIMARY KEY REFERENCES files(file_id) ON DELETE CASCADE,
    secondary  INTEGER NOT NULL,                 -- 1: the rows are in the secondary indexes
    words      BLOB NOT NULL
) STRICT;

-- Files mapped before have no words: the next scan analyses every file again (as after a
-- new analysis version), which writes them.
DELETE FROM meta WHERE key = 'analysis_version';

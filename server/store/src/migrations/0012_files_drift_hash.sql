-- 0012: each file keeps the content hash the drift ledger last recorded for it
-- (`drift_hash`: its content as of the last scan that finished; NULL for a row only
-- scans that never finished wrote). A scan compares what it reads with this hash, not
-- with the row's `content_hash`, which a killed scan may already have rewritten: a
-- change made just before a scan that was killed had been missing from the ledger,
-- since the killed scan's rows looked unchanged to the next one and the killed scan's
-- drift, written when a scan finishes, was lost with it. The finishing scan sets
-- `drift_hash` in the transaction that writes its drift. Rows written before this
-- migration take their current hash (what the ledger had as their last state).

ALTER TABLE files ADD COLUMN drift_hash TEXT;
UPDATE files SET drift_hash = content_hash;

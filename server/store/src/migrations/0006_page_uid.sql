-- 0006: a stable identity for pages across databases, so `loci import` recognizes a page
-- it has seen before even after a rename (the subject moves; the uid stays). Every page
-- gets a random 128-bit hex uid when inserted without one; `loci import` inserts pages
-- with the uid they had in the exporting database.

ALTER TABLE pages ADD COLUMN uid TEXT;
UPDATE pages SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
CREATE UNIQUE INDEX pages_by_uid ON pages(uid);
CREATE TRIGGER pages_uid AFTER INSERT ON pages WHEN new.uid IS NULL BEGIN
    UPDATE pages SET uid = lower(hex(randomblob(16))) WHERE page_id = new.page_id;
END;

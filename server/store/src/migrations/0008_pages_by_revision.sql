-- 0008: pages by their current revision. Memory search keeps the full-text hits that are a
-- page's current revision by joining `pages` on `current_revision_id`; without an index
-- that join scanned every page for every hit (500 pages and a question matching 300
-- revisions: 150,000 rows), growing with the product of the two.

CREATE INDEX pages_by_current_revision ON pages(current_revision_id);

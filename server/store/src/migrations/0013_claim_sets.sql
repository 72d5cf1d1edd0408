-- 0013: memory that one fingerprint cannot check is still checked.
--
-- `claims.definitions`: a symbol claim naming several definitions (`RegexBuilder::new`,
-- defined in two modules) snapshots all of them, as a JSON array of
-- `{"key", "body", "signature"}` (each definition's key and its body and signature
-- fingerprints when the claim was written, ordered by key); the claim is stale when that
-- set or any of those fingerprints changes, and missing when the name is gone. NULL for
-- other claims (`resolved` and `snapshot` hold a single target's snapshot).
--
-- `claims.resolved_elsewhere`: 1 for a claim that came in a `loci import` and resolved in
-- the checkout it was exported from but names nothing here; lint holds it to account as
-- it does a claim that resolved once (`missing_path`, `missing_symbol`).
--
-- `page_snapshots.subject_missing`: 1 when a file page's revision was written (or
-- imported) while its file was neither in the map nor in the working tree; the page is
-- marked deleted until the file exists.
--
-- Rows written before this migration keep the defaults: an ambiguous claim stays
-- untracked until `loci confirm` snapshots it again.

ALTER TABLE claims ADD COLUMN definitions TEXT;
ALTER TABLE claims ADD COLUMN resolved_elsewhere INTEGER NOT NULL DEFAULT 0
    CHECK (resolved_elsewhere IN (0, 1));
ALTER TABLE page_snapshots ADD COLUMN subject_missing INTEGER NOT NULL DEFAULT 0
    CHECK (subject_missing IN (0, 1));
-- The claims tracked as sets, for finding those naming a key (`loci why KEY`).
CREATE INDEX claims_with_definitions ON claims(claim_id) WHERE definitions IS NOT NULL;

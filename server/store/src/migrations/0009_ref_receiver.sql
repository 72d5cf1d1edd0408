-- 0009: what a reference's name is looked up on (`loci_core::Receiver`): NULL for a bare
-- name or an import, 'own' for `self.f()` / `this.f()` / `Self::f()`, 'imported' for a
-- name the file's imports bind (`util.fmt()` after `from . import util`), 'other' for any
-- other receiver (`obj.f()`, `Regex::new()`). Resolution gives a call on another receiver
-- a low confidence instead of the same-file 0.9. Rows written before this migration keep
-- NULL (and resolve as bare names did) until their file is next reparsed.

ALTER TABLE refs ADD COLUMN receiver TEXT CHECK (receiver IN ('own', 'imported', 'other'));

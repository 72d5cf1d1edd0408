-- 0033: files by their name (the path's last segment), for looking a module up by the
-- files it may be (`cmd.py` finds `cmd.py` and `lib2to3/fixes/cmd.py`) through an index
-- rather than a pass over every path: `rtrim` strips the name's characters (any but `/`)
-- from the end, leaving the folder and its `/`. `loci_store::map::files_named` spells the
-- expression the same way, or SQLite does not use the index.
CREATE INDEX files_by_name ON files(substr(path, length(rtrim(path, replace(path, '/', ''))) + 1));

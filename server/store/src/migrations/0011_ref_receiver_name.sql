-- 0011: a reference on another object or an imported name keeps its receiver's last
-- segment when that is an identifier (`Builder` in `runtime::Builder::new()`), so
-- resolution can prefer a member of a type of that name
-- (`loci_core::Reference::receiver_name`). Rows written before this migration keep NULL
-- until the next scan analyses their file again (the analysis version changed with it).

ALTER TABLE refs ADD COLUMN receiver_name TEXT;

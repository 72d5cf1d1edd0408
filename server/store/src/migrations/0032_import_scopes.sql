-- 0032: an import written inside a definition (Rust's `use a::f;` in `fn g` or `mod tests`,
-- Python's `from m import f` in `def g`) binds its names there only: `enclosing_id` is the
-- innermost definition holding the statement (`symbols.symbol_id`, same file), NULL at
-- module level. Rows written before keep NULL (seen file-wide, as before) until the next
-- scan analyses their file again: the analysis version changed with it.
ALTER TABLE imports ADD COLUMN enclosing_id INTEGER;

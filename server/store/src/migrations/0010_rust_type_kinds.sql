-- 0010: Rust structs, enums, unions, type aliases and traits have their own kinds
-- (`struct`, `enum`, `union`, `type`, `trait`) where tree-sitter-rust's tags query says
-- `class` and `interface`. A symbol's key ends in its kind (`path#Name@kind[n]`), and
-- memory names symbols by key: without this rewrite, every page with a claim on a Rust type
-- would go stale ("moved" or "deleted") as soon as its file was next parsed. The kind is
-- read from the stored first line (`pub(crate) struct Name<T> {`); a type whose first line
-- does not start that way keeps its key until its file is next parsed.

CREATE TEMP TABLE rekeyed AS
SELECT symbol_id, old_key, new_kind,
       substr(old_key, 1, prefix) || '@' || new_kind || substr(old_key, prefix + 2 + length(old_kind)) AS new_key
FROM (
    SELECT s.symbol_id, s.key AS old_key, s.kind AS old_kind,
           length(f.path) + 1 + length(s.qualified_name) AS prefix,
           CASE
               WHEN s.kind = 'interface' THEN 'trait'
               WHEN v.rest GLOB 'struct *' THEN 'struct'
               WHEN v.rest GLOB 'enum *' THEN 'enum'
               WHEN v.rest GLOB 'union *' THEN 'union'
               WHEN v.rest GLOB 'type *' THEN 'type'
           END AS new_kind
    FROM symbols s
    JOIN files f USING (file_id)
    -- the first line without its visibility: `pub `, `pub(crate) `, `pub(in a::b) `
    JOIN (SELECT symbol_id,
                 CASE
                     WHEN ltrim(signature) GLOB 'pub(*) *'
                         THEN ltrim(substr(ltrim(signature), instr(ltrim(signature), ')') + 1))
                     WHEN ltrim(signature) GLOB 'pub *' THEN ltrim(substr(ltrim(signature), 4))
                     ELSE ltrim(signature)
                 END AS rest
          FROM symbols) v USING (symbol_id)
    WHERE f.language = 'rust' AND s.kind IN ('class', 'interface')
      AND substr(s.key, 1, length(f.path) + length(s.qualified_name) + length(s.kind) + 2)
          = f.path || '#' || s.qualified_name || '@' || s.kind
)
WHERE new_kind IS NOT NULL;

UPDATE symbols SET kind = r.new_kind, key = r.new_key
FROM rekeyed r WHERE symbols.symbol_id = r.symbol_id;
UPDATE symbols SET parent_key = r.new_key FROM rekeyed r WHERE symbols.parent_key = r.old_key;
UPDATE claims SET resolved = r.new_key FROM rekeyed r WHERE claims.resolved = r.old_key;
UPDATE doc_claims SET resolved = r.new_key FROM rekeyed r WHERE doc_claims.resolved = r.old_key;
UPDATE drift SET detail = r.new_key
FROM rekeyed r WHERE drift.kind = 'signature_change' AND drift.detail = r.old_key;

DROP TABLE rekeyed;

; loci import query for Java: `import com.acme.Util;`, `import com.acme.*;`,
; `import static com.acme.Util.helper;`
(import_declaration [(identifier) (scoped_identifier)] @import.module) @import

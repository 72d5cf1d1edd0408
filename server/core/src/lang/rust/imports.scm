; loci import query for Rust. A `use` tree is flattened in code (it nests arbitrarily);
; `mod foo;` without a body is a module declaration whose file is `foo.rs` or `foo/mod.rs`.
(use_declaration argument: (_) @import.tree) @import
(mod_item name: (identifier) @import.module !body) @import

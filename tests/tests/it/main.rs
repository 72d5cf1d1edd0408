//! End-to-end tests of loci's LSP and MCP servers in-process over in-memory streams.
//!
//! One integration-test binary for the crate: each file here is a module of it, so the
//! tests link once against the crate instead of once per file. Run one file's tests with a
//! filter on its module, e.g. `cargo test --workspace --test it lsp::`.

mod corpus;
mod edit_fuzz;
mod fixture;
mod lsp;
mod lsp_languages;
mod mcp;
mod secrets;
mod support;

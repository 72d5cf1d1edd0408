//! Integration tests of the `loci` binary and its doors (CLI, LSP, MCP, editors, team) over real processes.
//!
//! One integration-test binary for the crate: each file here is a module of it, so the
//! tests link once against the crate instead of once per file. Run one file's tests with a
//! filter on its module, e.g. `cargo test --workspace --test it mcp_stdio::`.

mod cli;
mod damage;
mod editors_common;
mod editors_helix;
mod editors_neovim;
mod editors_vscode;
mod fixture;
mod lsp_commands;
mod lsp_false_memory;
mod lsp_helix;
mod lsp_hostile;
mod lsp_lens;
mod lsp_stdout;
mod lsp_support;
mod mcp_agents;
mod mcp_bounded;
mod mcp_hostile;
mod mcp_http;
mod mcp_python;
mod mcp_stdio;
mod mcp_support;
mod nvim;
mod portability;
mod reliability;
mod reliability_crash;
mod reliability_memory;
mod reliability_rescan;
mod reliability_writers;
mod secrets_cli;
mod synthesis_cli;
mod team;
mod team_support;
mod trust_doors;
mod trust_trial;

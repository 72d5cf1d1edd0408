//! `loci init`: wiring a checkout to the tools around it — AI coding agents to `loci mcp`
//! (`agents`) and git's hooks to `loci sync` ([`hooks`]).

pub(crate) mod agents;
pub mod hooks;

pub use agents::{Action, AgentsOptions, AgentsReport, WiredFile, codex_config_path, wire_agents};

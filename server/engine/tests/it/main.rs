//! Integration tests of loci-engine: scan, memory, context, audit, drift and the rest of the facade.
//!
//! One integration-test binary for the crate: each file here is a module of it, so the
//! tests link once against the crate instead of once per file. Run one file's tests with a
//! filter on its module, e.g. `cargo test --workspace --test it context::`.

mod audit;
mod cancel;
mod config;
mod context;
mod fixture;
mod git;
mod memory;
mod obsidian;
mod portability;
mod query;
mod receivers;
mod scan;
mod scip;
mod secrets;
mod synthesis;
mod walk;

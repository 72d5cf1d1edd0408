//! Answers to an agent's questions (design.md "The facade and the envelope"): `search`,
//! `context` and `why`, and how their retrieval is measured.
//!
//! - `context`: `search` and `context`, what to know before touching something;
//!   `retrieve`: which files answer a question and their best chunks; `embed`: optional
//!   dense vectors fused into it; [`search`]: any user text as a valid FTS5 query.
//! - `why`: the provenance chain behind a piece of memory.
//! - `eval`: `eval` and `calibrate`, retrieval quality on a case file.

// The layer's main file has the layer's name.
mod code;
#[allow(clippy::module_inception)]
pub(crate) mod context;
mod details;
pub(crate) mod embed;
pub(crate) mod eval;
mod graph;
mod hits;
mod named;
mod open;
mod pack;
pub(crate) mod retrieve;
mod score;
pub mod search;
mod text;
pub(crate) mod why;

pub use context::{
    ContextAnswer, ContextItem, ContextRequest, EMPTY_QUESTION, MIN_BUDGET, RECAP_CHARS, Tier,
};
pub use embed::{EmbedProgress, EmbedReport};
pub use eval::{Calibration, CaseOutcome, EvalReport, SystemScores};
pub use hits::{HitKind, SEARCH_LIMIT_MAX, SearchHit, SearchOptions};
pub use why::{RevisionBrief, Why};

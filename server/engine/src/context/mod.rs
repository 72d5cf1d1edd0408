//! Answers to an agent's questions (design.md "The facade and the envelope"): `search`,
//! `context` and `why`, and how their retrieval is measured.
//!
//! - `context`: `search` and `context`, what to know before touching something;
//!   `retrieve`: which files answer a question and their best chunks; `embed`: optional
//!   dense vectors fused into it; [`search`]: any user text as a valid FTS5 query.
//! - `why`: the provenance chain behind a piece of memory.
//! - `eval`: `eval` and `calibrate`, retrieval quality on a case file.

// The layer's main file keeps the name it had and the layer took.
#[allow(clippy::module_inception)]
pub(crate) mod context;
pub(crate) mod embed;
pub(crate) mod eval;
pub(crate) mod retrieve;
pub mod search;
pub(crate) mod why;

pub use context::{
    ContextAnswer, ContextItem, ContextRequest, EMPTY_QUESTION, HitKind, MIN_BUDGET, RECAP_CHARS,
    SEARCH_LIMIT_MAX, SearchHit, SearchOptions, Tier,
};
pub use embed::{EmbedProgress, EmbedReport};
pub use eval::{Calibration, CaseOutcome, EvalReport, SystemScores};
pub use why::{RevisionBrief, Why};

//! Answers to an agent's questions (design.md "The facade and the envelope"): `search`,
//! `context` and `why`, and how their retrieval is measured.
//!
//! - `hits`: `search`, FTS5 BM25 over memory, symbols and docs.
//! - `context`: `context`, what to know before touching something: a `Question` built
//!   once and phases adding to what was `Found` — `text` (memory, symbols, docs holding
//!   its words), `named` (the definitions it names), `code` (the files `retrieve` ranks,
//!   each as its best chunks; dependents from the map), `open` (open files and the files
//!   it names), `graph` (import hops, PageRank), `details` (memory's staleness and
//!   contradictions, docs lint found false), `pack` (rank, abstain, pack under the budget);
//!   `score` holds the candidates and the weights table.
//! - `retrieve`: which files answer a question and their best chunks, fused from the
//!   code-text indexes; `listed`: the values a question lists as examples, held together;
//!   `embed`: optional dense vectors fused into it; [`search`]: any user text as a valid
//!   FTS5 query, and what a question quotes, pastes or names.
//! - `why`: the provenance chain behind a piece of memory.
//! - `eval`: `eval` and `calibrate`, retrieval quality on a case file.

mod code;
// The layer's main file has the layer's name.
#[allow(clippy::module_inception)]
pub(crate) mod context;
mod details;
pub(crate) mod embed;
pub(crate) mod eval;
mod graph;
mod hits;
mod listed;
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

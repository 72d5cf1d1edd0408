//! Requests of the answers over map and memory (`context`, `search`, `why`) and of the
//! audit (`drift`, `resolve`).

use super::{defaults, request};
use crate::audit::DriftReport;
use crate::context::{ContextAnswer, ContextRequest, HitKind, SearchHit, SearchOptions, Why};
use crate::store_types::Contradiction;
use crate::{Envelope, Result, Workspace};

request! {
    /// Arguments of `context`.
    ContextArgs {
        /// The question or task in words. May be left out when `open_files` is given.
        #[serde(default)]
        query: String,
        /// Files you are working on (repo-relative); they and their neighbours rank higher.
        #[serde(default)]
        open_files: Option<Vec<String>>,
        /// Token budget; unset: `[context] budget` of `.loci/config.toml`.
        #[serde(default)]
        budget: Option<u64>,
        /// Relevance floor in points (a hit is worth up to 30); below it loci abstains.
        /// Unset: `[context] floor` of `.loci/config.toml`.
        #[serde(default)]
        floor: Option<f64>,
    }
}

impl ContextArgs {
    /// [`Workspace::context`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<ContextAnswer>> {
        ws.context(&ContextRequest {
            query: self.query.clone(),
            open_files: self.open_files.clone().unwrap_or_default(),
            budget: self.budget,
            floor: self.floor,
        })
    }
}

/// What `search` may return.
#[derive(Clone, Copy, Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    /// Memory pages (their current revision).
    Memory,
    /// Symbol definitions.
    Symbol,
    /// Sections of the repository's documentation.
    Doc,
    /// Code files.
    File,
}

impl From<SearchKind> for HitKind {
    fn from(k: SearchKind) -> HitKind {
        match k {
            SearchKind::Memory => HitKind::Memory,
            SearchKind::Symbol => HitKind::Symbol,
            SearchKind::Doc => HitKind::Doc,
            SearchKind::File => HitKind::File,
        }
    }
}

request! {
    /// Arguments of `search`.
    SearchArgs {
        /// Words to find (BM25 full-text; punctuation is literal).
        query: String,
        /// Only these kinds of hits (unset: all).
        #[serde(default)]
        kinds: Option<Vec<SearchKind>>,
        /// Only hits in this file or folder (whole path components).
        #[serde(default)]
        path: Option<String>,
        /// Hits per kind.
        #[serde(default = "defaults::search_limit")]
        limit: u32,
    }
}

impl SearchArgs {
    /// [`Workspace::search`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Vec<SearchHit>>> {
        ws.search(
            &self.query,
            &SearchOptions {
                kinds: self
                    .kinds
                    .iter()
                    .flatten()
                    .map(|k| HitKind::from(*k))
                    .collect(),
                path_prefix: self.path.clone(),
                limit: Some(self.limit),
            },
        )
    }
}

request! {
    /// Arguments of `why`.
    WhyArgs {
        /// `PATH[:LINE]` (one-based line) or text from a memory.
        #[serde(alias = "query")]
        target: String,
    }
}

impl WhyArgs {
    /// [`Workspace::why`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Why>> {
        ws.why(&self.target)
    }
}

request! {
    /// Arguments of `drift`.
    DriftArgs {
        /// Changes after this scan revision (unset: since the one before the last scan).
        #[serde(default)]
        since: Option<i64>,
    }
}

impl DriftArgs {
    /// [`Workspace::drift`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<DriftReport>> {
        ws.drift(self.since)
    }
}

request! {
    /// Arguments of `resolve`.
    ResolveArgs {
        /// The contradiction's id, as `lint` lists it.
        id: i64,
        /// Why the finding is not a problem.
        #[serde(default)]
        notes: Option<String>,
        /// `session_id` from `session_begin`.
        #[serde(default)]
        session: Option<i64>,
    }
}

impl ResolveArgs {
    /// [`Workspace::resolve`].
    pub fn run(&self, ws: &mut Workspace) -> Result<Envelope<Contradiction>> {
        ws.resolve(self.id, self.notes.as_deref(), self.session)
    }
}

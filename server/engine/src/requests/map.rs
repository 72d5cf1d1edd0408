//! Requests of the map's operations: the structural questions (`symbol`, `references`,
//! `callers`, `callees`, `outline`, `source`, `deps`, `impact`) and `sync`.

use super::{defaults, request};
use crate::map::{Callees, Callers, Deps, Edges, Impact, Outline, Source, SyncReport};
use crate::store_types::{RefHit, SymbolHit};
use crate::{Envelope, Result, Workspace};

request! {
    /// Arguments of `symbol`.
    SymbolArgs {
        /// A name (`login`), qualified or dotted name as code spells it (`AuthService.login`,
        /// `urllib.parse.urlsplit`), or a key (`src/auth.py#AuthService.login@method`).
        name: String,
        /// Rows to list by path and line (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
    }
}

impl SymbolArgs {
    /// [`Workspace::symbol`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Vec<SymbolHit>>> {
        ws.symbol(&self.name, self.limit)
    }
}

request! {
    /// Arguments of `references`.
    ReferencesArgs {
        /// A bare name (every use), a qualified name (`Regex.new`: uses resolved to it or
        /// written on that qualifier) or a key (uses resolved to it).
        name: String,
        /// Rows to list by path and line (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
    }
}

impl ReferencesArgs {
    /// [`Workspace::refs`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Vec<RefHit>>> {
        ws.refs(&self.name, self.limit)
    }
}

request! {
    /// Arguments of `callers`.
    CallersArgs {
        /// A name, qualified or dotted name, or key.
        symbol: String,
        /// Calls to list (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
        /// Least confidence (0: all).
        #[serde(default = "defaults::min_confidence")]
        min_confidence: f64,
        /// Leave out tests, examples, vendored code.
        #[serde(default)]
        no_tests: bool,
    }
}

impl CallersArgs {
    /// [`Workspace::callers_with`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Callers>> {
        ws.callers_with(
            &self.symbol,
            self.limit,
            self.min_confidence,
            !self.no_tests,
        )
    }
}

request! {
    /// Arguments of `callees`.
    CalleesArgs {
        /// A name, qualified or dotted name, or key.
        symbol: String,
        /// Calls to list (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::list_limit")]
        limit: u32,
        /// Least confidence of a target shown (0: all).
        #[serde(default = "defaults::min_confidence")]
        min_confidence: f64,
    }
}

impl CalleesArgs {
    /// [`Workspace::callees`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Callees>> {
        ws.callees(&self.symbol, self.limit, self.min_confidence)
    }
}

request! {
    /// Arguments of `outline`.
    OutlineArgs {
        /// A repository-relative file path.
        path: String,
        /// Definitions to list in document order (0: all).
        #[serde(default = "defaults::list_limit")]
        limit: u32,
    }
}

impl OutlineArgs {
    /// [`Workspace::outline`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Outline>> {
        ws.outline(&self.path, self.limit)
    }
}

request! {
    /// Arguments of `source`.
    SourceArgs {
        /// A name, qualified or dotted name, or key; the first match is shown, others named.
        name: String,
    }
}

impl SourceArgs {
    /// [`Workspace::source`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Source>> {
        ws.source(&self.name)
    }
}

request! {
    /// Arguments of `deps`.
    DepsArgs {
        /// A repository-relative file path.
        path: String,
        /// List the files that import `path` instead.
        #[serde(default)]
        reverse: bool,
    }
}

impl DepsArgs {
    /// [`Workspace::deps`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Deps>> {
        ws.deps(&self.path, self.reverse)
    }
}

request! {
    /// Arguments of `impact`.
    ImpactArgs {
        /// A repository-relative path, or a symbol name or key.
        target: String,
        /// Dependency hops to follow.
        #[serde(default = "defaults::depth")]
        depth: u32,
        /// Follow only stated edges (proven by a parser).
        #[serde(default)]
        hard: bool,
        /// Least confidence (0: all).
        #[serde(default = "defaults::min_confidence")]
        min_confidence: f64,
        /// Dependents to list, nearest first (0: all); the counts are of the whole walk.
        #[serde(default = "defaults::impact_limit")]
        limit: u32,
        /// Leave out tests, examples, vendored code.
        #[serde(default)]
        no_tests: bool,
    }
}

impl ImpactArgs {
    /// [`Workspace::impact_with`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Impact>> {
        ws.impact_with(
            &self.target,
            self.depth,
            Edges {
                hard: self.hard,
                min_confidence: self.min_confidence,
                tests: !self.no_tests,
            },
            self.limit,
        )
    }
}

request! {
    /// Arguments of `sync`.
    SyncArgs {
        /// Commits to read at most (unset: `[sync] max_commits` of `.loci/config.toml`).
        #[serde(default)]
        limit: Option<usize>,
    }
}

impl SyncArgs {
    /// [`Workspace::sync`].
    pub fn run(&self, ws: &mut Workspace) -> Result<Envelope<SyncReport>> {
        ws.sync(self.limit)
    }
}

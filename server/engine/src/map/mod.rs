//! The map (design.md "The map"): the ground truth — the working tree, git history and the
//! manifests — read into files, symbols, references and import edges (derived, rebuildable),
//! and the structural questions asked of it.
//!
//! - [`walk`](walk()) the tree with git's ignore rules, then `scan`: parse what changed,
//!   write the map, resolve imports and references, follow renames (`scan.rs`, its parts
//!   in `scan/`); `scip`: precise references from a compiler's SCIP index.
//! - `git` (read-only history, read with `gix`) and `sync` (that history, or snapshots of
//!   the map, into the event log); `manifests`: dependency versions the repository declares.
//! - `query` (`symbol`, `refs`, `callers`, `deps`, `impact`, `stats`), `code` (`callees`,
//!   `outline`, `source`) and `editor` (what the language server reads beyond those);
//!   `names`: a name as the user writes it, read as symbols and modules.

pub(crate) mod code;
pub(crate) mod editor;
pub mod git;
pub(crate) mod manifests;
pub(crate) mod names;
pub(crate) mod query;
pub(crate) mod scan;
pub(crate) mod scip;
pub(crate) mod sync;
pub(crate) mod walk;

pub use code::{Callees, MemoryNote, Outline, OutlineEntry, SOURCE_LINES, Source};
pub use editor::{FileSymbol, SymbolMention};
pub use query::{
    Callers, Deps, Direction, Edges, FILES_LISTED, IMPACT_LIMIT, Impact, ImpactEdge, ImpactNode,
    LIST_LIMIT, LeftOut, MIN_CONFIDENCE, Stats,
};
pub use scan::{DegradedFile, LanguageCount, Rename, SKIPPED_EXAMPLES, ScanProgress, ScanReport};
pub use scip::{MAX_INDEX_BYTES, ScipCoverage, ScipImport, StaleDocument};
pub use sync::{SYNCED_HEAD_META, SyncReport, SyncStep};
pub use walk::{Skip, SkipReason, Walk, WalkedFile, walk};

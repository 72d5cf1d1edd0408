//! Memory (design.md "Memory"): what people and agents wrote about the code — pages,
//! append-only revisions, decisions and lessons, topics, facts and sessions — authored and
//! never lost, and every way it leaves or enters a checkout.
//!
//! - `memory`: the writes of pages and revisions; `reads`: `show`, `history`, `asof`, the
//!   list, and the warnings of every answer that serves memory; `claims`: claims, their
//!   snapshots and their resolution against the map; `guard`: the limits, versions and
//!   receipts every write checks; `logs`: the decision and lesson logs as views;
//!   `session`: the session diary; `facts`: executable memory.
//! - [`synthesis`]: pages drafted by a configured model command, checked like any other.
//! - `portability` (export, import, backup, restore) and `obsidian` (an Obsidian vault).
//! - [`team`]: the store as a replica of a team's PostgreSQL server.

pub(crate) mod claims;
pub(crate) mod facts;
pub(crate) mod guard;
pub(crate) mod logs;
// The layer's main file has the layer's name.
#[allow(clippy::module_inception)]
pub(crate) mod memory;
pub(crate) mod obsidian;
pub(crate) mod portability;
pub(crate) mod reads;
pub(crate) mod session;
pub mod synthesis;
pub mod team;

pub use claims::{ClaimFinding, ClaimView, MAX_TRACKED_DEFINITIONS, untracked_reason};
pub use facts::{FACT_OUTPUT_CAP, FactRun};
pub use guard::{MAX_AUTHOR_BYTES, MAX_MEMORY_TEXT_BYTES};
pub use memory::{WriteOptions, Written};
pub use obsidian::VaultReport;
pub use portability::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportedDismissal, ExportedFact, ExportedPage,
    ExportedRevision, ExportedSession, ImportReport, MemoryExport, TrackedClaim, parse_export,
};
pub use reads::{AsOf, AsOfPage, History, HistoryEntry, PageEntry, Shown, Topic};
pub use session::{Digest, DigestPage, SessionView};

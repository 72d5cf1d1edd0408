//! The audit (design.md "Audit"): memory and the repository's own docs checked against the
//! map — stale marks, false claims (contradictions), drift — and how findings are reported.
//!
//! - `audit`: staleness of claims and revisions, computed and stored per scan revision.
//! - `lint`: `lint`, `check`, `resolve` and `drift`; `renamed`: the definition a missing
//!   symbol claim named, found again under another name ("did you mean").
//! - `live`: the same rules applied to an editor's unsaved text.
//! - `sarif`: a `check` as SARIF 2.1.0 for code-scanning UIs.

// The layer's main file has the layer's name.
#[allow(clippy::module_inception)]
pub(crate) mod audit;
pub(crate) mod lint;
pub(crate) mod live;
pub(crate) mod renamed;
pub(crate) mod sarif;

pub use audit::{
    MARK_RULES, StaleReason, Staleness, revision_staleness, revisions_staleness, stored_staleness,
};
pub use lint::{CheckReport, DriftReport, LintReport, TextFinding, describe};
pub use live::{LiveClaim, Truth, Verdict};
pub use sarif::to_sarif;

//! Plug points for what loci's memory and audit say about code: findings (diagnostics and
//! their code actions), per-symbol memory counts (code lenses) and memory lines in hovers.
//!
//! Each function here is the one place the language server asks the engine about memory.
//! Today the engine has no memory or audit API yet, so they return what the map alone can
//! say (nothing); when the engine grows `audit`/`why`, each becomes one call. Everything a
//! follow-up request needs travels in the returned `data` (style.md rule 8), never in server
//! memory. No LSP types here: byte spans in, plain data out; `server.rs` converts.

use loci_core::Symbol;
use loci_engine::Workspace;
use serde::Serialize;
use serde_json::Value;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Memory contradicts the code (a claim whose target is missing or differs).
    Error,
    /// Memory is stale (the code under it changed since it was written).
    Warning,
    /// Something worth knowing.
    Information,
    /// A hint.
    Hint,
}

/// One follow-up a finding offers (a code action running a `loci.*` command).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindingAction {
    /// What the editor shows (`Confirm memory of login`).
    pub title: String,
    /// The command (`loci.confirm`).
    pub command: String,
    /// Its one JSON object argument.
    pub arguments: Value,
}

/// One thing the audit says about a document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Byte range `[start, end)` into the document text the finding was computed on.
    pub span: (u32, u32),
    /// How serious it is.
    pub severity: Severity,
    /// A stable code (`stale_memory`, `contradicted_claim`, `missing_path`, ...).
    pub code: String,
    /// The message, in words.
    pub message: String,
    /// What a follow-up needs (claim id, revision, symbol key); goes to `Diagnostic.data`.
    pub data: Value,
    /// Follow-ups offered as code actions.
    pub actions: Vec<FindingAction>,
}

/// Memory attached to one symbol, for its code lens and hover.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SymbolMemory {
    /// Memories (revisions, decisions, lessons, facts) about the symbol.
    pub memories: u32,
    /// How many of them are stale.
    pub stale: u32,
    /// Markdown lines for the hover (most relevant first).
    pub hover_lines: Vec<String>,
}

/// Findings for one document: `key_path` is the path in symbol keys, `symbols` the
/// document's current symbols (the overlay when it is open), `text` the text their spans
/// point into. `ws` is `None` in single-file mode.
///
/// Plug point: will call the engine's audit (stale and contradicted memory per symbol, and
/// false claims in markdown). The map alone has no findings, so this returns none.
pub fn findings_for_document(
    ws: Option<&Workspace>,
    key_path: &str,
    text: &str,
    symbols: &[Symbol],
) -> Vec<Finding> {
    let _ = (ws, key_path, text, symbols);
    Vec::new()
}

/// Memory about the symbol `key`, or `None` when there is none (no code lens then).
///
/// Plug point: will call the engine's memory lookup by symbol key.
pub fn memory_for_symbol(ws: Option<&Workspace>, key: &str) -> Option<SymbolMemory> {
    let _ = (ws, key);
    None
}

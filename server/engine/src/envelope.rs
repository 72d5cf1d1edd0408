//! The envelope every engine operation returns (design.md "The facade and the envelope").

use serde::Serialize;

/// One answer plus the state of the map that produced it, what was available, what it
/// relies on that has changed, and how much of it was cut.
#[derive(Clone, Debug, Serialize)]
pub struct Envelope<T> {
    /// The operation's own result.
    pub result: T,
    /// Which state of the map answered.
    pub index: IndexState,
    /// What was available (languages, git, the editor overlay).
    pub capability: Capability,
    /// Facts this answer relies on that have changed since they were recorded.
    pub stale_warnings: Vec<StaleWarning>,
    /// Whether the files behind the answer were checked against the disk.
    pub freshness: Freshness,
    /// Budget and truncation.
    pub limits: Limits,
    /// Team memory: present only when the checkout is configured with `[team]`; says that
    /// memory is team-backed, how far behind the replica may be, and what waits to be
    /// pushed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamState>,
}

/// The replica's state behind an answer of a team-backed checkout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TeamState {
    /// The server (`postgres://user@host:port/db`, never a password).
    pub server: String,
    /// The highest server event applied here.
    pub high_water_mark: i64,
    /// Server events not applied here yet, as of the last contact (`None`: the server has
    /// not been reached by this process).
    pub behind: Option<i64>,
    /// When this process last read the server's log (RFC 3339), if it did.
    pub synced_at: Option<String>,
    /// Writes made here that wait for the server.
    pub pending_writes: u64,
    /// Queued writes the server refused (a version conflict), kept for `loci team status`.
    pub failed_writes: u64,
    /// The last error talking to the server, if the last contact failed.
    pub last_error: Option<String>,
}

impl<T> Envelope<T> {
    /// The envelope of an answer no store took part in (there is none, or it could not be
    /// opened): an empty [`IndexState`] (revision 0), every language loci parses, git not
    /// checked (`false`), and `note` saying why in [`Capability::notes`].
    pub fn without_store(result: T, note: impl Into<String>) -> Envelope<T> {
        Envelope {
            result,
            index: IndexState::default(),
            capability: Capability {
                languages: loci_core::Language::ALL.iter().map(|l| l.name()).collect(),
                git: false,
                overlay: false,
                notes: vec![note.into()],
            },
            stale_warnings: Vec::new(),
            freshness: Freshness {
                changed_since_scan: None,
                refreshed: Vec::new(),
                checked_at: now_rfc3339(),
            },
            limits: Limits::default(),
            team: None,
        }
    }

    /// The same envelope around a transformed result.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Envelope<U> {
        Envelope {
            result: f(self.result),
            index: self.index,
            capability: self.capability,
            stale_warnings: self.stale_warnings,
            freshness: self.freshness,
            limits: self.limits,
            team: self.team,
        }
    }
}

/// The map state behind an answer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexState {
    /// The scan revision (`scans.scan_id` of the last finished scan; 0 before any scan).
    pub revision: i64,
    /// When that scan finished (RFC 3339, UTC), if any.
    pub scanned_at: Option<String>,
    /// Files in the map.
    pub files: u64,
    /// Symbols in the map.
    pub symbols: u64,
}

/// What the answer could use.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Capability {
    /// Languages loci parses (names as in `loci_core::Language::name`).
    pub languages: Vec<&'static str>,
    /// Whether the workspace is a git repository loci can read.
    pub git: bool,
    /// Whether unsaved editor buffers took part: inside the language server, or a running
    /// language server's buffers of the files the answer relies on, shared through the
    /// store ([`crate::Workspace::share_unsaved`]).
    pub overlay: bool,
    /// Capabilities that were missing or partial, in words (`"no scan yet: run loci scan"`).
    pub notes: Vec<String>,
}

/// One fact the answer relies on that changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StaleWarning {
    /// The file (or memory subject) concerned.
    pub path: String,
    /// Why it is stale, in words.
    pub reason: String,
}

/// Whether the answer's files were compared with the disk.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Freshness {
    /// Files behind this answer whose size or modification time differ from the map;
    /// `None` when not checked.
    pub changed_since_scan: Option<u64>,
    /// Files rescanned before answering (MCP and the language server refresh on read).
    pub refreshed: Vec<String>,
    /// When the check ran (RFC 3339, UTC).
    pub checked_at: String,
}

/// Budget accounting. `budget`/`used` are in the operation's unit (tokens for
/// `context`, rows for listings).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Limits {
    /// The budget asked for, if any.
    pub budget: Option<u64>,
    /// How much of it the answer used.
    pub used: u64,
    /// Whether anything was cut.
    pub truncated: bool,
    /// How many items were left out.
    pub omitted: u64,
}

/// The current time as RFC 3339 in UTC (`2026-11-29T23:00:00.123Z`).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

//! The loci facade: every operation is one function on [`Workspace`] returning one typed
//! result inside an [`Envelope`]. The CLI, the language server and the MCP server are thin
//! adapters over these functions and have no logic of their own.
//!
//! Architecture invariant: no protocol types here (no JSON-RPC, LSP or MCP); results are
//! plain `serde::Serialize` data with zero-based lines and byte columns.
//!
//! # Layout
//!
//! One folder per layer of design.md ("The three layers"), each with its result types
//! re-exported from the folder's module: [`map`] (the working tree and git read into
//! files, symbols, references and imports), [`memory`] (what people and agents wrote),
//! [`audit`] (memory checked against the map), [`context`] (answers over all three), and
//! [`init`] (`loci init`). At the top: this facade, the settings ([`Config`]), the
//! [`Envelope`], the workspace boundary and the [`SecretRules`] every layer honours, the
//! request of each operation every door takes ([`requests`]), and the words every door
//! prints ([`text`], [`words`]).
//!
//! # Operations
//!
//! The `impl Workspace` blocks live beside the code of their layer; this is all of them
//! (a test keeps the list complete).
//!
//! - **The workspace** (`lib.rs`, `boundary.rs`): [`open`](Workspace::open),
//!   [`root`](Workspace::root), [`config`](Workspace::config),
//!   [`secrets`](Workspace::secrets), [`store`](Workspace::store),
//!   [`envelope`](Workspace::envelope), [`set_cancel`](Workspace::set_cancel),
//!   [`check_cancelled`](Workspace::check_cancelled),
//!   [`check_memory_within`](Workspace::check_memory_within),
//!   [`named_damage`](Workspace::named_damage), [`name_damage`](Workspace::name_damage),
//!   [`contain`](Workspace::contain), [`read_served`](Workspace::read_served),
//!   [`left_out_note`](Workspace::left_out_note).
//! - **Map** ([`map`]):
//!   - building it: [`scan`](Workspace::scan), [`import_scip`](Workspace::import_scip),
//!     [`sync`](Workspace::sync), [`sync_with`](Workspace::sync_with);
//!   - structural questions (`map/query.rs`): [`symbol`](Workspace::symbol),
//!     [`refs`](Workspace::refs), [`callers`](Workspace::callers),
//!     [`callers_with`](Workspace::callers_with), [`deps`](Workspace::deps),
//!     [`impact`](Workspace::impact), [`impact_limited`](Workspace::impact_limited),
//!     [`impact_with`](Workspace::impact_with), [`stats`](Workspace::stats),
//!     [`map_path`](Workspace::map_path);
//!   - code through the map (`map/code.rs`): [`callees`](Workspace::callees),
//!     [`outline`](Workspace::outline), [`source`](Workspace::source);
//!   - for editors (`map/editor.rs`): [`file_symbols`](Workspace::file_symbols),
//!     [`file_memory`](Workspace::file_memory), [`set_max_files`](Workspace::set_max_files),
//!     [`share_unsaved`](Workspace::share_unsaved),
//!     [`stop_sharing_unsaved`](Workspace::stop_sharing_unsaved).
//! - **Memory** ([`memory`]):
//!   - pages and revisions (`memory/memory.rs`, `memory/reads.rs`): [`remember`](Workspace::remember),
//!     [`remember_append`](Workspace::remember_append), [`decide`](Workspace::decide),
//!     [`learn`](Workspace::learn), [`show`](Workspace::show),
//!     [`history`](Workspace::history), [`asof`](Workspace::asof),
//!     [`pin`](Workspace::pin), [`rollback`](Workspace::rollback),
//!     [`confirm`](Workspace::confirm), [`topic_set`](Workspace::topic_set),
//!     [`topics`](Workspace::topics), [`memory_list`](Workspace::memory_list),
//!     [`resolve_subject`](Workspace::resolve_subject),
//!     [`false_warnings_for_revisions`](Workspace::false_warnings_for_revisions),
//!     [`stale_warnings_for_revisions`](Workspace::stale_warnings_for_revisions);
//!   - sessions (`memory/session.rs`): [`session_begin`](Workspace::session_begin),
//!     [`session_end`](Workspace::session_end), [`recap`](Workspace::recap);
//!   - facts (`memory/facts.rs`): [`fact_add`](Workspace::fact_add),
//!     [`fact_list`](Workspace::fact_list), [`fact_run`](Workspace::fact_run);
//!   - in and out of a checkout (`memory/portability/`, `memory/obsidian.rs`):
//!     [`export_memory`](Workspace::export_memory),
//!     [`import_memory`](Workspace::import_memory), [`backup`](Workspace::backup),
//!     [`restore`](Workspace::restore), [`restore_damaged`](Workspace::restore_damaged),
//!     [`export_obsidian`](Workspace::export_obsidian);
//!   - page synthesis ([`memory::synthesis`]): [`synthesis_plan`](Workspace::synthesis_plan),
//!     [`synthesis_prompt`](Workspace::synthesis_prompt),
//!     [`synthesis_prompts`](Workspace::synthesis_prompts),
//!     [`synthesize`](Workspace::synthesize), [`pages_behind`](Workspace::pages_behind),
//!     [`pages_behind_brief`](Workspace::pages_behind_brief),
//!     [`pages_behind_note`](Workspace::pages_behind_note),
//!     [`pages_behind_recorded`](Workspace::pages_behind_recorded),
//!     [`count_pages_behind`](Workspace::count_pages_behind);
//!   - team memory ([`memory::team`]): [`team_configured`](Workspace::team_configured),
//!     [`team_init`](Workspace::team_init), [`team_join`](Workspace::team_join),
//!     [`team_status`](Workspace::team_status), [`team_sync`](Workspace::team_sync),
//!     [`team_sync_before_read`](Workspace::team_sync_before_read),
//!     [`team_catch_up_due`](Workspace::team_catch_up_due),
//!     [`team_catch_up`](Workspace::team_catch_up), [`team_export`](Workspace::team_export).
//! - **Audit** ([`audit`]):
//!   - `audit/lint/`: [`lint`](Workspace::lint), [`check`](Workspace::check),
//!     [`check_revision`](Workspace::check_revision),
//!     [`check_markdown`](Workspace::check_markdown), [`resolve`](Workspace::resolve),
//!     [`drift`](Workspace::drift), [`explain_claim`](Workspace::explain_claim),
//!     [`map_is_built`](Workspace::map_is_built);
//!   - against unsaved text (`audit/live.rs`): [`judge_open_file`](Workspace::judge_open_file),
//!     [`check_markdown_live`](Workspace::check_markdown_live).
//! - **Answers** ([`context`]):
//!   - `context/hits.rs`: [`search`](Workspace::search); `context/context.rs`:
//!     [`context`](Workspace::context), its phases in `context/details.rs` and
//!     `context/pack.rs`: [`recap_block`](Workspace::recap_block);
//!   - `context/why.rs`: [`why`](Workspace::why), [`revision_brief`](Workspace::revision_brief);
//!   - dense vectors (`context/embed.rs`): [`embed`](Workspace::embed),
//!     [`embeddings_model_dir`](Workspace::embeddings_model_dir);
//!   - measuring retrieval (`context/eval.rs`): [`eval`](Workspace::eval),
//!     [`calibrate`](Workspace::calibrate),
//!     [`write_case_memory`](Workspace::write_case_memory).

// Every public type an operation returns or takes can be named from outside: a type
// reachable only through a private module is a warning (and `-D warnings` in CI).
#![warn(unnameable_types)]

// The layers (design.md "The three layers"), each a folder: the map, memory, the audit,
// and the answers over them; `init` wires a checkout to git and to agents.
pub mod audit;
pub mod context;
pub mod init;
pub mod map;
pub mod memory;
// One request type per operation, the arguments every door takes (`requests/`).
pub mod requests;

// Cross-cutting: settings, the envelope, the workspace boundary and the secrets every
// layer honours, and the words every door prints.
mod boundary;
pub mod config;
mod envelope;
pub mod secrets;
pub mod text;
pub mod words;

use std::path::{Path, PathBuf};

use loci_store::Store;

pub use config::Config;
pub use envelope::{Capability, Envelope, Freshness, IndexState, Limits, StaleWarning, TeamState};
pub use loci_store::{MEMORY_CHECK_INTERVAL, StoreError};
pub use secrets::SecretRules;
/// Row types of the map, as queries return them.
pub mod store_types {
    pub use loci_store::audit::{Contradiction, DriftRow, KnowledgeChange};
    pub use loci_store::backup::{BackupStats, RestoreStats};
    pub use loci_store::map::{DepEdge, MapCounts, RefHit, SymbolHit};
    pub use loci_store::memory::{ClaimRow, CommitRow, Event, Fact, Page, Revision, Session};
}

/// `Result` with [`EngineError`].
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// What can go wrong in an engine operation.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store failed (SQLite, migrations, a newer schema, a busy database).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A filesystem operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `.loci/config.toml` is invalid.
    #[error("{path}: invalid configuration: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line.
        message: String,
    },
    /// An argument is missing or malformed; `name` is the argument.
    #[error("invalid argument `{name}`: {message}")]
    InvalidArgument {
        /// The argument's name.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// The thing asked about does not exist (a path not in the map, ...).
    #[error("{0}")]
    NotFound(String),
    /// No scan has finished on this database, so the map an operation checks against is
    /// empty (`lint`, `check`): an environment error (exit 2), not "nothing found".
    #[error("{0}")]
    Unscanned(String),
    /// A bug or an environment failure (a thread pool that could not start).
    #[error("internal error: {0}")]
    Internal(String),
    /// The operation was stopped through its [`CancelFlag`] (an MCP client cancelled the
    /// request or went away) before it finished; a read returns nothing, a write changed
    /// nothing.
    #[error("cancelled: the request was withdrawn before it finished; nothing was changed")]
    Cancelled,
    /// The store given (`--db`, `LOCI_DB`) maps another tree, which still exists: a command
    /// run here would have mapped this directory into it and marked its memory false
    /// (the store records the root it maps, [`ROOT_META`]).
    #[error(
        "{db} is the store of {mapped}, not of {root}: run loci in {mapped} (or pass `-C {mapped}`); mapping {root} into it would mark its memory false. To map {root}, give it a store of its own (`loci -C {root} scan`, or another `--db`)",
        db = db.display(), mapped = mapped.display(), root = root.display()
    )]
    OtherRoot {
        /// The store's file.
        db: PathBuf,
        /// The root the store maps.
        mapped: PathBuf,
        /// The root the command was run for.
        root: PathBuf,
    },
    /// Team memory (`[team]`) failed: the server is unreachable, has no or a newer
    /// schema, refused a statement, or the settings are wrong. `kind` is one of
    /// `team_unreachable`, `team_not_initialized`, `newer_schema`, `team_not_permitted`
    /// (the role may only read), `team_server`, `config`.
    #[error("{message}")]
    Team {
        /// A stable name for the failure.
        kind: &'static str,
        /// What failed, never with a password.
        message: String,
    },
}

impl From<loci_team::TeamError> for EngineError {
    fn from(e: loci_team::TeamError) -> EngineError {
        use loci_team::TeamError as T;
        let kind = match &e {
            T::Config(_) => "config",
            T::Unreachable { .. } => "team_unreachable",
            T::NotInitialized { .. } => "team_not_initialized",
            T::NewerSchema { .. } => "newer_schema",
            T::Server { .. } => "team_server",
            T::NotPermitted { .. } => "team_not_permitted",
        };
        EngineError::Team {
            kind,
            message: e.to_string(),
        }
    }
}

impl EngineError {
    /// A short, stable name for what went wrong, as the doors report it (`error.kind` in a
    /// JSON envelope): `invalid_argument`, `not_found`, `unscanned`, `config`, `io`, `internal`,
    /// `other_root`, or the
    /// store's [`StoreError::kind`] (`busy`, `newer_schema`, `not_a_database`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            EngineError::Store(e) => e.kind(),
            EngineError::Io { .. } => "io",
            EngineError::Config { .. } => "config",
            EngineError::InvalidArgument { .. } => "invalid_argument",
            EngineError::NotFound(_) => "not_found",
            EngineError::Unscanned(_) => "unscanned",
            EngineError::Internal(_) => "internal",
            EngineError::Cancelled => "cancelled",
            EngineError::OtherRoot { .. } => "other_root",
            EngineError::Team { kind, .. } => kind,
        }
    }
}

/// A request to stop an operation, shared between the thread running it and whoever may
/// withdraw it (the MCP server, on `notifications/cancelled` or when its client goes
/// away). Cheap to clone; clones share the flag.
///
/// Rule: the engine polls it ([`Workspace::check_cancelled`]) at the natural loop points
/// of long reads (`search` and `context` between their index passes, `impact` at each
/// dependent it walks) and answers [`EngineError::Cancelled`]. Writes never poll it: a
/// write runs whole or, when its caller sees the flag before it starts, not at all.
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl CancelFlag {
    /// A flag not raised.
    pub fn new() -> CancelFlag {
        CancelFlag::default()
    }

    /// Raises the flag: the operations polling it stop at their next check.
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether the flag is raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Acquire)
    }

    /// [`EngineError::Cancelled`] once the flag is raised.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(EngineError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Refuses a database path (`--db`, `LOCI_DB`) whose folder does not exist, naming the
/// folder: a mistyped `--db /nonexistent/deeper/x.db` must not make both directories (and
/// a new, empty store in them). The workspace's own `<root>/.loci/` is not refused: loci
/// makes it. [`EngineError::InvalidArgument`] `db` when the folder is missing or is not
/// a directory.
pub fn check_db_folder(root: &Path, db: &Path) -> Result<()> {
    if in_loci_dir_of(root, db) {
        return Ok(());
    }
    match folder_problem(db, "database") {
        Some(message) => Err(EngineError::InvalidArgument {
            name: "db".into(),
            message,
        }),
        None => Ok(()),
    }
}

/// What is wrong with the folder a new file `path` (a database, a backup) would go in:
/// `None` when it is an existing directory (or `path` has no folder part), else a message
/// naming the folder and the `what` file. loci makes no folder a user typed: a typo would
/// leave a stray folder tree behind.
pub(crate) fn folder_problem(path: &Path, what: &str) -> Option<String> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    if !dir.exists() {
        Some(format!(
            "no such directory: {} (the folder of the {what} {}); create it first, or give a path in an existing folder",
            dir.display(),
            path.display()
        ))
    } else if !dir.is_dir() {
        Some(format!(
            "{}: not a directory (the {what} {} would go in it)",
            dir.display(),
            path.display()
        ))
    } else {
        None
    }
}

/// Whether `db` is a file of `root`'s own `.loci/` (existing or not).
pub(crate) fn in_loci_dir_of(root: &Path, db: &Path) -> bool {
    db.parent().is_some_and(|d| {
        d.file_name() == Some(std::ffi::OsStr::new(LOCI_DIR))
            && d.parent()
                .and_then(|p| p.canonicalize().ok())
                .zip(root.canonicalize().ok())
                .is_some_and(|(p, r)| p == r)
    })
}

/// `meta` key: the root the store maps (canonical, as the last finished scan walked it).
/// A store opened with a root it does not map, from outside that root's `.loci/`, is
/// refused ([`EngineError::OtherRoot`]).
pub const ROOT_META: &str = "root";

/// The directory under the workspace root that holds loci's files.
pub const LOCI_DIR: &str = ".loci";

/// Above this many files an answer relies on, their freshness `stat` calls are spread over
/// the cores; below it, starting the thread pool costs more than the calls it would share.
const PARALLEL_STAT_MIN: usize = 128;

/// One checkout: its root, its store and its settings.
pub struct Workspace {
    root: PathBuf,
    store: Store,
    config: Config,
    /// The compiled `[secrets]` rules.
    secrets: secrets::SecretRules,
    /// The import graph of one scan revision, kept for `context`.
    graph: std::sync::Mutex<Option<(i64, std::sync::Arc<context::context::ImportGraph>)>>,
    /// Facts `context` derives from one version of the store's data (see
    /// [`SnapshotCache`]).
    snapshot: std::sync::Mutex<SnapshotCache>,
    /// The embedding model and the chunk vectors, loaded on first use (see
    /// [`context::embed::Dense`]).
    dense: std::sync::Mutex<context::embed::Dense>,
    /// Polled by long reads (see [`CancelFlag`]); never raised unless a caller set one.
    cancel: CancelFlag,
    /// The team server, when `[team]` (or `LOCI_TEAM_URL`) names one (see [`memory::team`]).
    team: Option<memory::team::TeamLink>,
}

/// What `context` reads again and again between two writes, kept for the
/// [`loci_store::DataStamp`] it was read under: the memory pages and the stale marks of
/// revisions. Both are functions of the stored data alone (staleness compares the claims'
/// snapshots with the map's fingerprints, never the disk), so while the stamp holds they
/// are the same; any write, by this workspace or another process, starts over.
#[derive(Default)]
struct SnapshotCache {
    stamp: Option<loci_store::DataStamp>,
    pages: Option<std::sync::Arc<Vec<loci_store::memory::Page>>>,
    /// Stale marks by revision id.
    staleness: std::collections::HashMap<i64, Vec<audit::audit::Staleness>>,
}

/// Revisions whose stale marks [`SnapshotCache`] keeps before starting over.
const SNAPSHOT_STALENESS_ENTRIES: usize = 50_000;

impl Workspace {
    /// Opens the workspace at `root` with the database at `db` (default
    /// `<root>/.loci/loci.db`), creating `.loci/` (with a `.gitignore` so the database is
    /// never committed by accident) and the schema as needed. A `db` given whose folder
    /// does not exist is refused ([`check_db_folder`]): only loci's own `<root>/.loci/`
    /// is created (for a `db` in it too).
    pub fn open(root: &Path, db: Option<&Path>) -> Result<Workspace> {
        let root = root.canonicalize().map_err(|source| EngineError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let loci_dir = root.join(LOCI_DIR);
        // loci's own folder is made for a database in it, given or not.
        let in_loci_dir = db.is_none_or(|db| in_loci_dir_of(&root, db));
        if let Some(db) = db {
            check_db_folder(&root, db)?;
        }
        if in_loci_dir {
            std::fs::create_dir_all(&loci_dir).map_err(|source| EngineError::Io {
                path: loci_dir.clone(),
                source,
            })?;
        }
        let db_path = db
            .map(Path::to_path_buf)
            .unwrap_or_else(|| loci_dir.join("loci.db"));
        let store = Store::open(&db_path)?;
        // A store given from elsewhere maps the tree it recorded: refuse to serve another
        // (every command that refreshes the map would map this one into it). A recorded
        // root that no longer exists is a checkout that moved: the next scan records this.
        if !in_loci_dir
            && let Some(mapped) = store.meta(ROOT_META)?.map(PathBuf::from)
            && mapped != root
            && mapped.is_dir()
        {
            return Err(EngineError::OtherRoot {
                db: db_path,
                mapped,
                root,
            });
        }
        // Not beside a store opened read-only: the reader writes nothing (and may not be
        // able to: a copied `.loci/` without its `.gitignore` made the store unreadable).
        if loci_dir.is_dir() && !store.is_read_only() {
            let ignore = loci_dir.join(".gitignore");
            if !ignore.exists() {
                std::fs::write(
                    &ignore,
                    "# loci's database and backups are per checkout.\n*\n",
                )
                .map_err(|source| EngineError::Io {
                    path: ignore.clone(),
                    source,
                })?;
            }
        }
        let config_path = loci_dir.join("config.toml");
        let config = Config::load(&config_path)?;
        let secrets = secrets::SecretRules::new(&config.secrets).map_err(|e| match e {
            EngineError::Config { message, .. } => EngineError::Config {
                path: config_path.clone(),
                message,
            },
            other => other,
        })?;
        let team = memory::team::TeamLink::from_config(&config.team).map_err(|e| match e {
            EngineError::Team { message, .. } => EngineError::Config {
                path: config_path.clone(),
                message,
            },
            other => other,
        })?;
        Ok(Workspace {
            root,
            store,
            config,
            secrets,
            graph: std::sync::Mutex::new(None),
            snapshot: Default::default(),
            dense: Default::default(),
            cancel: CancelFlag::default(),
            team,
        })
    }

    /// Makes the operations that follow poll `flag` (see [`CancelFlag`]) instead of the
    /// one set before.
    pub fn set_cancel(&mut self, flag: CancelFlag) {
        self.cancel = flag;
    }

    /// [`EngineError::Cancelled`] once the flag set by [`Workspace::set_cancel`] is raised.
    pub fn check_cancelled(&self) -> Result<()> {
        self.cancel.check()
    }

    /// The workspace root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The settings in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The secret rules in force (`[secrets]` over the defaults).
    pub fn secrets(&self) -> &secrets::SecretRules {
        &self.secrets
    }

    /// The tables of memory checked unless a check passed within `max_age`
    /// ([`Store::check_memory_within`]).
    ///
    /// Errors: [`EngineError::Store`] with [`loci_store::StoreError::Damaged`] naming the
    /// damaged table.
    pub fn check_memory_within(&mut self, max_age: std::time::Duration) -> Result<()> {
        Ok(self.store.check_memory_within(max_age)?)
    }

    /// `e`, a failure of this workspace's database, as its damage when it is damage
    /// ([`StoreError::is_damage`]): [`StoreError::Damaged`] naming the damaged table of
    /// memory when a check of them finds one, else naming the database, with the ways
    /// out either way. `None` for anything else, for a store without a file, and for a
    /// [`StoreError::Damaged`] already named.
    ///
    /// Every door reports damage a query meets this way (a truncated file reads until a
    /// query reaches a missing page): SQLite's words alone, "database disk image is
    /// malformed", name neither the file nor what to do, and the language and MCP
    /// servers would call it `error`.
    pub fn named_damage(&self, e: &StoreError) -> Option<StoreError> {
        if !e.is_damage() {
            return None;
        }
        let path = self.store.path()?;
        if let Err(named) = self.store.check_memory()
            && named.is_damage()
        {
            return Some(named);
        }
        e.damage_at(path)
    }

    /// [`Workspace::named_damage`] of an engine error: a damaged store's failure named
    /// with its database and the ways out; any other error as it is.
    pub fn name_damage(&self, e: EngineError) -> EngineError {
        match &e {
            EngineError::Store(s) => self.named_damage(s).map_or(e, EngineError::Store),
            _ => e,
        }
    }

    /// The store (for adapters that need raw access in tests).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Walks and parses the working tree, updating the map incrementally.
    pub fn scan(
        &mut self,
        progress: &(dyn Fn(map::scan::ScanProgress) + Sync),
    ) -> Result<Envelope<map::scan::ScanReport>> {
        if self.store.is_read_only() {
            // Refused before the walk: a scan of a large tree would fail at its first write.
            return Err(StoreError::ReadOnly {
                path: self.store.path().map(Path::to_path_buf).unwrap_or_default(),
                what: "updating the map".into(),
            }
            .into());
        }
        let started = std::time::Instant::now();
        // A damaged page of memory is said before the scan, not by a later query.
        self.store
            .check_memory_within(loci_store::MEMORY_CHECK_INTERVAL)?;
        let config = self.config.scan.clone();
        // Scans of one store take turns (see `StoreLock`); the lint below is part of it.
        let _lock = self.store.lock("a scan")?;
        // A scan touches most pages: through the memory map they would count in its RSS.
        self.store.set_memory_map(false)?;
        let report = map::scan::scan(
            &self.root,
            &mut self.store,
            &config,
            &self.secrets,
            progress,
        );
        self.store.set_memory_map(true)?;
        let mut report = report?;
        if report.changed {
            // Edges a SCIP index stated hold while their files are unchanged: those the
            // scan re-resolved by name are written again, the others dropped.
            report.scip = map::scip::reconcile(&mut self.store)?;
            if report.scip.is_some() {
                // The edges it wrote back or dropped are rows of `refs`: the totals the
                // scan counted before them are counted again, and kept.
                let totals = loci_store::map::count_totals(self.store.conn(), None)?;
                let scan_id = report.scan_id;
                self.store
                    .write(|tx| loci_store::map::keep_totals(tx, scan_id, &totals))?;
                report.totals = totals.counts;
            }
        }
        if report.changed {
            // Record what the change did to the knowledge at this scan revision.
            self.run_lint()?;
        }
        report.duration_ms = started.elapsed().as_millis() as u64;
        self.envelope(report, Vec::new())
    }

    /// Imports the SCIP index at `index` (`loci scan --scip FILE`, after the scan): its
    /// definitions and references become stated edges of the map for the files it covers
    /// ([`map::scip::import`]; at most `max_bytes`, [`map::scip::MAX_INDEX_BYTES`] by default).
    ///
    /// Errors: [`EngineError::Io`] when the index cannot be read,
    /// [`EngineError::InvalidArgument`] (`scip`) when it is too large, malformed, or of a
    /// folder outside the workspace; nothing is written then.
    pub fn import_scip(
        &mut self,
        index: &Path,
        max_bytes: u64,
    ) -> Result<Envelope<map::scip::ScipImport>> {
        if self.store.is_read_only() {
            return Err(StoreError::ReadOnly {
                path: self.store.path().map(Path::to_path_buf).unwrap_or_default(),
                what: "importing a SCIP index".into(),
            }
            .into());
        }
        let _lock = self.store.lock("a SCIP import")?;
        let report = map::scip::import(&self.root, &mut self.store, index, max_bytes)?;
        self.envelope(report, Vec::new())
    }

    /// Wraps `result` with the index state and capabilities, and compares the given files
    /// (repo-relative paths the answer relies on) with the disk.
    pub fn envelope<T>(&self, result: T, relies_on: Vec<String>) -> Result<Envelope<T>> {
        let conn = self.store.conn();
        let last = loci_store::map::last_finished_scan(conn)?
            .map(|s| (s.scan_id, s.finished_at, s.files, s.symbols));
        let mut capability = Capability {
            languages: loci_core::Language::ALL.iter().map(|l| l.name()).collect(),
            git: map::walk::in_git_repository(&self.root),
            overlay: false,
            notes: Vec::new(),
        };
        let index = match &last {
            Some((revision, scanned_at, files, symbols)) => IndexState {
                revision: *revision,
                scanned_at: scanned_at.clone(),
                files: *files,
                symbols: *symbols,
            },
            None => IndexState::default(),
        };
        // A scan newer than the last finished one that has not finished itself: killed,
        // or running now in another process (it holds the store lock). Either way it has
        // rewritten part of the map, and the references of what it rewrote may be missing.
        let unfinished =
            loci_store::map::unfinished_scan_after(conn, last.as_ref().map_or(0, |l| l.0))?;
        let running = || self.store.try_lock().map(|lock| lock.is_none());
        capability.notes.extend(match (&last, unfinished) {
            (None, None) => Some("no scan yet: run `loci scan` to build the map".to_string()),
            (None, Some(started)) if running()? => Some(format!(
                "no scan yet: the first scan (started {started}) is still running; \
                 the map is partial until it finishes"
            )),
            (None, Some(started)) => Some(format!(
                "no scan yet: the first scan (started {started}) was interrupted before it \
                 finished; the map is partial: run `loci scan` to complete it"
            )),
            (Some(_), Some(started)) if running()? => Some(format!(
                "partial map: a scan started {started} is still running; answers may miss \
                 what it has not written yet"
            )),
            (Some(_), Some(started)) => Some(format!(
                "partial map: the scan started {started} was interrupted before it finished; \
                 references and imports of the files it rewrote are missing: run `loci scan` \
                 to complete it"
            )),
            (Some(_), None) => None,
        });
        // A map an older loci built answers as that loci's analysis did until the next
        // scan analyses it again (`loci_core::ANALYSIS_VERSION`).
        let built_by = self.store.meta(map::scan::ANALYSIS_META)?;
        let current = loci_core::ANALYSIS_VERSION.to_string();
        if last.is_some() && built_by.as_deref() != Some(current.as_str()) {
            capability.notes.push(format!(
                "the map was built by another version of loci's analysis ({}, this loci's is \
                 {current}): references and kinds may be as that version found them until \
                 `loci scan` analyses it again",
                built_by
                    .as_deref()
                    .unwrap_or("before versions were recorded")
            ));
        }
        if !capability.git {
            capability
                .notes
                .push("not a git repository: history features are unavailable".into());
        }
        let (changed, mut stale_warnings) = self.check_files(&relies_on)?;
        let mut relied: Vec<&str> = relies_on.iter().map(String::as_str).collect();
        relied.sort_unstable();
        relied.dedup();
        stale_warnings.extend(self.unsaved_warnings(&relied, &mut capability)?);
        Ok(Envelope {
            result,
            index,
            capability,
            stale_warnings,
            freshness: Freshness {
                changed_since_scan: Some(changed),
                refreshed: Vec::new(),
                checked_at: envelope::now_rfc3339(),
            },
            limits: Limits::default(),
            team: self.team_state()?,
        })
    }

    /// Compares the map's size and mtime of each path with the disk; a difference is a
    /// stale warning ("changed on disk since the last scan" or "deleted since the last scan").
    fn check_files(&self, paths: &[String]) -> Result<(u64, Vec<StaleWarning>)> {
        let mut paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        paths.sort();
        paths.dedup();
        let stats = loci_store::map::file_stats(self.store.conn(), &paths)?;
        let known: Vec<(&str, &loci_store::map::FileStamp)> = paths
            .into_iter()
            .filter_map(|p| stats.get(p).map(|s| (p, s)))
            .collect();
        let root = self.root.as_path();
        let stale = |&(path, stamp): &(&str, &loci_store::map::FileStamp)| {
            changed_on_disk(root, path, stamp).map(|reason| StaleWarning {
                path: path.to_string(),
                reason: reason.into(),
            })
        };
        // A wide answer (an impact reaching 800 files) spends most of its time in these
        // `stat` calls: spread them over the cores. Rayon keeps the input order.
        let warnings: Vec<StaleWarning> = if known.len() > PARALLEL_STAT_MIN {
            use rayon::prelude::*;
            known.par_iter().filter_map(stale).collect()
        } else {
            known.iter().filter_map(stale).collect()
        };
        Ok((warnings.len() as u64, warnings))
    }

    /// For an answer that found nothing: how many mapped files changed or vanished on disk
    /// since the last scan (one `stat` each, over the cores), as
    /// `freshness.changed_since_scan`, and when some did, a note that the answer may be out
    /// of date, so that a name written after the scan is not "not found" with
    /// `changed_since_scan: 0`, as if the map were current. Files added since the scan are
    /// not counted (that needs a walk: `loci scan`).
    pub(crate) fn note_changes_behind_nothing<T>(&self, env: &mut Envelope<T>) -> Result<()> {
        use rayon::prelude::*;
        let stamps = loci_store::map::file_stamps(self.store.conn())?;
        let root = self.root.as_path();
        let changed = |(path, stamp): &(String, loci_store::map::FileStamp)| {
            changed_on_disk(root, path, stamp).is_some()
        };
        let changed = if stamps.len() > PARALLEL_STAT_MIN {
            stamps.par_iter().filter(|s| changed(s)).count()
        } else {
            stamps.iter().filter(|s| changed(s)).count()
        } as u64;
        env.freshness.changed_since_scan = Some(changed);
        if changed > 0 {
            env.capability.notes.push(format!(
                "{changed} mapped file{s} changed on disk since the last scan: this answer \
                 may miss what {they} now (`loci scan` maps {them})",
                s = if changed == 1 { "" } else { "s" },
                they = if changed == 1 {
                    "it defines"
                } else {
                    "they define"
                },
                them = if changed == 1 { "it" } else { "them" },
            ));
        }
        if let Some(note) = self.left_out_note()? {
            env.capability.notes.push(note);
        }
        Ok(())
    }

    /// For an answer that found nothing: when the map leaves source files out — skipped
    /// as secrets, too large, unreadable, … (only files of a language loci maps count: a
    /// certificate, a `.env` or a binary defines nothing, and the stdlib's 23 test
    /// certificates would put the note on every "no symbol") — or holds some only in part
    /// (degraded), a note saying how many and why,
    /// pointing at `loci stats`, which lists them; `None` when it leaves nothing out.
    /// Without it, `loci symbol PrfUsingHmac` would say only "no symbol" of a name defined
    /// in a file skipped as a secret, and the user could not tell the map was missing a
    /// file on purpose.
    pub fn left_out_note(&self) -> Result<Option<String>> {
        let conn = self.store.conn();
        let mut skips: Vec<(String, u64)> = Vec::new();
        for f in loci_store::map::skipped_files(conn)?.into_values() {
            if f.reason == "binary" || loci_core::lang::file_language_name(&f.path).is_none() {
                continue;
            }
            match skips.iter_mut().find(|(r, _)| *r == f.reason) {
                Some((_, n)) => *n += 1,
                None => skips.push((f.reason, 1)),
            }
        }
        // Secrets first (the reason a user least expects), then by reason.
        skips.sort_by(|a, b| (a.0 != "secret", &a.0).cmp(&(b.0 != "secret", &b.0)));
        let (degraded, _) = loci_store::map::degraded_files(conn, 0)?;
        if skips.is_empty() && degraded == 0 {
            return Ok(None);
        }
        let files = skips.iter().map(|(_, n)| n).sum::<u64>() + degraded;
        let mut parts: Vec<String> = Vec::new();
        for (i, (reason, n)) in skips.iter().enumerate() {
            let how = skip_phrase(reason, *n);
            parts.push(match i {
                0 => format!(
                    "{n} file{s} {were} skipped {how}",
                    s = plural(*n),
                    were = if *n == 1 { "was" } else { "were" }
                ),
                _ => format!("{n} {how}"),
            });
        }
        let mut note = parts.join(", ");
        if degraded > 0 {
            if !note.is_empty() {
                note.push_str("; ");
            }
            note.push_str(&format!(
                "{degraded} mapped file{s} {are} degraded (a parse limit cut {their} analysis short)",
                s = plural(degraded),
                are = if degraded == 1 { "is" } else { "are" },
                their = if degraded == 1 { "its" } else { "their" },
            ));
        }
        note.push_str(if files == 1 {
            ": this answer may miss what it defines (`loci stats` lists it)"
        } else {
            ": this answer may miss what they define (`loci stats` lists them)"
        });
        Ok(Some(note))
    }
}

/// `s` unless `n` is 1.
fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// How a note on files left out says they were skipped for `reason` (a `skipped_files`
/// reason), `n` of them: `as secrets`, `as too large`, ….
fn skip_phrase(reason: &str, n: u64) -> String {
    let one = n == 1;
    match reason {
        "secret" if one => "as a secret".into(),
        "secret" => "as secrets".into(),
        "too_large" => "as too large".into(),
        "symlink" if one => "as a symbolic link".into(),
        "symlink" => "as symbolic links".into(),
        "not_regular" if one => "as not a regular file".into(),
        "not_regular" => "as not regular files".into(),
        "file_limit" => "beyond `scan.max_files`".into(),
        "non_utf8_path" if one => "for a path that is not UTF-8".into(),
        "non_utf8_path" => "for paths that are not UTF-8".into(),
        other => format!("as {}", other.replace('_', " ")),
    }
}

/// Why the mapped file `path` (repo-relative, under `root`) no longer is as the last scan
/// saw it, if it is not: deleted, or changed. Size and change time decide, except that a
/// file of the same size whose change time moved (`touch`, a checkout of the same
/// content) is read and compared by content hash: it changed only if its bytes did.
fn changed_on_disk(
    root: &Path,
    path: &str,
    stamp: &loci_store::map::FileStamp,
) -> Option<&'static str> {
    const CHANGED: &str = "changed on disk since the last scan";
    let full = root.join(path);
    match std::fs::metadata(&full) {
        Err(_) => Some("deleted since the last scan"),
        Ok(m) if m.len() as i64 != stamp.size => Some(CHANGED),
        Ok(m) if map::walk::change_time_ns(&m) == stamp.mtime_ns => None,
        Ok(_) => match std::fs::read(&full) {
            Ok(bytes) if loci_core::fingerprint::content_hash(&bytes) == stamp.content_hash => None,
            _ => Some(CHANGED),
        },
    }
}

impl Workspace {
    /// The import graph for the current scan revision (loaded once per revision).
    pub(crate) fn import_graph(&self) -> Result<std::sync::Arc<context::context::ImportGraph>> {
        let revision = loci_store::map::newest_scan_id(self.store.conn())?;
        let mut cache = self.graph.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((rev, g)) = cache.as_ref()
            && *rev == revision
        {
            return Ok(g.clone());
        }
        let g = std::sync::Arc::new(context::context::ImportGraph::load(self.store.conn())?);
        *cache = Some((revision, g.clone()));
        Ok(g)
    }

    /// The snapshot cache, emptied first when the store's data changed since it was
    /// filled. Hold the guard only briefly.
    fn snapshot_cache(&self) -> Result<std::sync::MutexGuard<'_, SnapshotCache>> {
        let stamp = self.store.data_stamp()?;
        let mut cache = self.snapshot.lock().unwrap_or_else(|p| p.into_inner());
        if cache.stamp != Some(stamp) || cache.staleness.len() > SNAPSHOT_STALENESS_ENTRIES {
            *cache = SnapshotCache {
                stamp: Some(stamp),
                ..Default::default()
            };
        }
        Ok(cache)
    }

    /// Every memory page ([`loci_store::memory::pages`]), read once per version of the
    /// data.
    pub(crate) fn cached_pages(&self) -> Result<std::sync::Arc<Vec<loci_store::memory::Page>>> {
        let mut cache = self.snapshot_cache()?;
        if let Some(pages) = &cache.pages {
            return Ok(pages.clone());
        }
        let pages = std::sync::Arc::new(loci_store::memory::pages(self.store.conn())?);
        cache.pages = Some(pages.clone());
        Ok(pages)
    }

    /// [`audit::audit::revisions_staleness`] of `revisions`, each revision's marks read (as the
    /// last scan stored them, [`audit::audit::stored_staleness`]) or computed once per version of
    /// the data. Shape as there: marks by revision id, one entry per
    /// revision given.
    pub(crate) fn cached_staleness(
        &self,
        revisions: &[(&loci_store::memory::Revision, &loci_store::memory::Page)],
    ) -> Result<std::collections::HashMap<i64, Vec<audit::audit::Staleness>>> {
        let mut cache = self.snapshot_cache()?;
        let missing: Vec<(&loci_store::memory::Revision, &loci_store::memory::Page)> = revisions
            .iter()
            .copied()
            .filter(|(r, _)| !cache.staleness.contains_key(&r.revision_id))
            .collect();
        if !missing.is_empty() {
            // The marks the last scan (or the write of a revision since) stored, then the
            // others made from the map.
            let ids: Vec<i64> = missing.iter().map(|(r, _)| r.revision_id).collect();
            let stored = audit::audit::stored_staleness(self.store.conn(), &ids)?;
            let rest: Vec<_> = missing
                .into_iter()
                .filter(|(r, _)| !stored.contains_key(&r.revision_id))
                .collect();
            cache.staleness.extend(stored);
            if !rest.is_empty() {
                let found = audit::audit::revisions_staleness(self.store.conn(), &rest)?;
                cache.staleness.extend(found);
            }
        }
        Ok(revisions
            .iter()
            .filter_map(|(r, _)| {
                cache
                    .staleness
                    .get(&r.revision_id)
                    .map(|marks| (r.revision_id, marks.clone()))
            })
            .collect())
    }
}

/// Finds the workspace root for `start`: the nearest ancestor holding `.loci/`, else the
/// nearest holding `.git`, else `start` itself.
pub fn discover_root(start: &Path) -> PathBuf {
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    for marker in [LOCI_DIR, ".git"] {
        if let Some(dir) = start.ancestors().find(|d| d.join(marker).exists()) {
            return dir.to_path_buf();
        }
    }
    start
}

#[cfg(test)]
mod tests {
    /// Every `pub fn` of an `impl Workspace` block, in any file of the crate, is listed in
    /// the operations of the crate's doc (as `(Workspace::name)`): the facade's list stays
    /// the whole facade.
    #[test]
    fn the_crate_doc_lists_every_workspace_operation() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let doc: String = std::fs::read_to_string(src.join("lib.rs"))
            .unwrap()
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .collect();
        let mut missing = Vec::new();
        let mut files = vec![src.clone()];
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let mut inside = false;
            for line in text.lines() {
                if line.starts_with("impl Workspace {") {
                    inside = true;
                } else if line == "}" {
                    inside = false;
                } else if let Some(rest) = line.strip_prefix("    pub fn ")
                    && inside
                {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !doc.contains(&format!("(Workspace::{name})")) {
                        missing.push(format!("{} {name}", path.display()));
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "not in lib.rs's operations: {missing:?}"
        );
    }
}

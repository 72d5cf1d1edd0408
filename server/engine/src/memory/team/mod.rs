//! Team memory: the checkout's store as a replica of a PostgreSQL server.
//!
//! When `[team] url` (or `LOCI_TEAM_URL`) names a server, the server's append-only event
//! log is the system of record for authored memory: a write ([`Workspace::remember`],
//! `decide`, `learn`, `rollback`, `pin`) goes to the server first, in one server
//! transaction with the revision guard and its operation id, and reaches this store the
//! way every other checkout's writes do — by pulling the log past the replica's
//! high-water mark and applying each event here ([`apply::apply_event`]), where its claims are
//! resolved against this checkout's own map. While the server is unreachable a write
//! queues in the outbox (migration 25) under its operation id and is pushed when it
//! returns; the server stores an operation id once, so a push repeated after a lost reply
//! is a replay, never a second write.
//!
//! Without `[team]` nothing here runs and no answer carries a `team` block.

mod apply;
mod join;
mod writes;

use std::sync::Mutex;

use loci_store::rusqlite::Transaction;
use loci_store::team as replica;
use loci_store::{StoreError, logs};
use loci_team::{NewEvent, Team, TeamError, TeamUrl, UrlSource, WriteOutcome};
use serde::Serialize;

pub use loci_team::InitReport;

use crate::config::TeamConfig;
use crate::{EngineError, Envelope, Result, TeamState, Workspace};

use self::apply::{Applied, apply_event};
pub use self::join::{Diverged, JoinReport, Renumbered};

/// Events read from the server per round trip and applied per local transaction.
const PULL_BATCH: i64 = 500;

/// `meta` key: when this replica last held the server's whole log (RFC 3339), as any
/// process of this checkout saw it — a pull that read the log to its end, or a listener
/// whose connection heard nothing new. Answers that did not reach the server themselves
/// say how far behind they may be from it.
const SYNCED_AT: &str = "team_synced_at";
/// `meta` key: the server's log head at [`SYNCED_AT`].
const SERVER_HEAD: &str = "team_server_head";
/// `meta` key: the error of the last contact a background catch-up failed, until a
/// contact succeeds.
const LAST_ERROR: &str = "team_last_error";
/// `meta` key: when a background catch-up ([`Workspace::team_catch_up`]) last started
/// (RFC 3339), succeeded or not.
const CATCH_UP_AT: &str = "team_catch_up_at";
/// `meta` key: until when a running listener ([`listen`]) vouches for the replica: its
/// connection is up and `LISTEN`s, so nothing the server stores escapes it (RFC 3339).
/// It counts only while the listener's process holds the store's listening lock
/// ([`loci_store::Store::hold_listening`]): a listener that ended, however it ended, no
/// longer keeps catch-ups off.
const CURRENT_UNTIL: &str = "team_current_until";

/// How often, at most, an answer from the replica starts a background catch-up: one
/// started, or a contact made, this recently is enough (and bounds the processes a
/// server that does not answer can gather to one per interval).
pub const CATCH_UP_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// The link to the team server: its address and, once used, one connection.
pub struct TeamLink {
    url: TeamUrl,
    conn: Mutex<Option<Team>>,
    seen: Mutex<Seen>,
}

/// What this process learnt at its last contact with the server.
#[derive(Clone, Debug, Default)]
struct Seen {
    head: Option<i64>,
    synced_at: Option<String>,
    last_error: Option<String>,
    /// Why the outbox could not be pushed, when the server's roles refused it (a role
    /// that may only read): kept until a push succeeds, whatever the pulls do.
    push_error: Option<String>,
}

impl TeamLink {
    /// The link `[team]` and `LOCI_TEAM_URL` describe, if any (no connection yet).
    pub(crate) fn from_config(config: &TeamConfig) -> Result<Option<TeamLink>> {
        let env = std::env::var("LOCI_TEAM_URL")
            .ok()
            .filter(|u| !u.trim().is_empty());
        let url = match (env, &config.url) {
            (Some(u), _) => TeamUrl::parse(&u, UrlSource::Environment)?,
            (None, Some(u)) if !u.trim().is_empty() => TeamUrl::parse(u, UrlSource::ConfigFile)?,
            _ => return Ok(None),
        };
        Ok(Some(TeamLink {
            url,
            conn: Mutex::new(None),
            seen: Mutex::new(Seen::default()),
        }))
    }

    /// Runs `f` on the connection, connecting (and checking the schema) first if there is
    /// none or it dropped; an unreachable server drops the connection. Records the
    /// outcome for the envelope.
    fn call<T>(&self, f: impl FnOnce(&mut Team) -> loci_team::Result<T>) -> loci_team::Result<T> {
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let result = (|| {
            if guard.as_ref().is_none_or(Team::is_closed) {
                let mut team = Team::connect(&self.url)?;
                team.check_schema()?;
                *guard = Some(team);
            }
            f(guard.as_mut().expect("connected above"))
        })();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        match &result {
            Ok(_) => seen.last_error = None,
            Err(e) => {
                if e.is_unreachable() {
                    *guard = None;
                }
                seen.last_error = Some(e.to_string());
            }
        }
        result
    }

    /// The server, without a password.
    pub fn server(&self) -> String {
        self.url.to_string()
    }
}

/// What `loci team sync` (and every command's pull) did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SyncReport {
    /// Queued writes pushed to the server now.
    pub pushed: u64,
    /// Queued writes the server refused now (version conflicts), kept in the outbox.
    pub refused: u64,
    /// Server events applied to this replica now.
    pub pulled: u64,
    /// The replica's high-water mark after it.
    pub high_water_mark: i64,
}

/// What `loci team status` shows.
#[derive(Clone, Debug, Serialize)]
pub struct TeamStatus {
    /// The server, without a password.
    pub server: String,
    /// Whether it answered now.
    pub reachable: bool,
    /// Its loci schema version (when reachable).
    pub schema: Option<i64>,
    /// Whether the URL's role may write (when reachable; false: it may only read, and
    /// writes are refused — docs/team.md, Roles).
    pub writable: Option<bool>,
    /// The highest event on the server (when reachable).
    pub server_head: Option<i64>,
    /// The highest event applied here.
    pub high_water_mark: i64,
    /// Writes waiting for the server.
    pub pending_writes: u64,
    /// Queued writes the server refused, with why.
    pub failed: Vec<FailedWrite>,
    /// The last error, if the server could not be used now.
    pub last_error: Option<String>,
}

/// Whether `event` adds a new entry to a log (`decision:7` at version 0): its number is
/// only the next one its checkout knew, and another free one will do.
fn is_new_entry(event: &NewEvent) -> bool {
    event.kind == "revision"
        && event.expect_version == Some(0)
        && logs::log_of_entry(&event.subject).is_some()
}

/// The subject of the entry `log` adds next in a team-backed checkout: past the highest
/// number the replica holds and those of the entries still queued for the server, so two
/// entries written offline never take one number (the second would be refused when
/// pushed).
fn next_entry_here(conn: &loci_store::rusqlite::Connection, log: &str) -> Result<String> {
    let known = logs::next_entry(conn, log)?;
    let queued = replica::outbox(conn, false)?
        .into_iter()
        .filter_map(|q| serde_json::from_str::<NewEvent>(&q.write).ok())
        .filter(|e| is_new_entry(e) && logs::log_of_entry(&e.subject) == Some(log))
        .filter_map(|e| logs::entry_number(&e.subject))
        .max();
    Ok(match (queued, logs::entry_number(&known)) {
        (Some(q), Some(k)) if q >= k => {
            format!("{}{}", logs::entry_prefix(log).unwrap_or_default(), q + 1)
        }
        _ => known,
    })
}

/// A queued write the server refused.
#[derive(Clone, Debug, Serialize)]
pub struct FailedWrite {
    /// Its operation id.
    pub op_id: String,
    /// The page.
    pub subject: String,
    /// Why.
    pub reason: String,
}

/// A fresh operation id: unique across machines (a hash of this checkout, the process,
/// the time and a counter).
fn new_op_id(root: &std::path::Path) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{}|{}|{}|{nanos}|{}",
        host(),
        root.display(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let hash = blake3::hash(seed.as_bytes()).to_hex();
    format!("w:{}", &hash[..32])
}

fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// A version conflict, in the words of a solo store's ([`super::memory`]).
fn conflict(subject: &str, current: i64, expected: i64) -> EngineError {
    StoreError::Conflict(format!(
        "version conflict on `{subject}`: it is at version {current}, \
         the write expected {expected}; read it again and retry"
    ))
    .into()
}

/// A write the server's roles refused: said with its subject, and that nothing of it was
/// kept (neither stored here nor queued — the role could never push it).
fn not_written(subject: &str, e: TeamError) -> EngineError {
    EngineError::Team {
        kind: "team_not_permitted",
        message: format!("`{subject}` was not written (nothing stored or queued here): {e}"),
    }
}

/// How many writes wait in the outbox.
fn queued_left(conn: &loci_store::rusqlite::Connection) -> Result<u64> {
    Ok(replica::outbox_counts(conn)?.0)
}

fn reused(op: &str) -> EngineError {
    StoreError::Conflict(format!(
        "operation id `{op}` was already used for a different request; use a new id"
    ))
    .into()
}

impl Workspace {
    /// Whether memory is team-backed (`[team]` or `LOCI_TEAM_URL`).
    pub fn team_configured(&self) -> bool {
        self.team.is_some()
    }

    /// The envelope's `team` block (`None` without `[team]`).
    pub(crate) fn team_state(&self) -> Result<Option<TeamState>> {
        let Some(link) = &self.team else {
            return Ok(None);
        };
        let conn = self.store.conn();
        let hwm = replica::high_water_mark(conn)?;
        let (pending, failed) = replica::outbox_counts(conn)?;
        let seen = link.seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let contacted = seen.synced_at.is_some();
        // What this process did not learn itself, another process of this checkout (a
        // listener, a catch-up, an earlier command) recorded.
        let head = match seen.head {
            Some(h) => Some(h),
            None => self
                .store
                .meta(SERVER_HEAD)?
                .and_then(|h| h.parse::<i64>().ok()),
        };
        let synced_at = match seen.synced_at {
            Some(at) => Some(at),
            None => self.store.meta(SYNCED_AT)?,
        };
        let last_error = match seen.push_error.or(seen.last_error) {
            Some(e) => Some(e),
            None if !contacted => self.store.meta(LAST_ERROR)?.filter(|e| !e.is_empty()),
            None => None,
        };
        Ok(Some(TeamState {
            server: link.server(),
            high_water_mark: hwm,
            behind: head.map(|h| (h - hwm).max(0)),
            synced_at,
            pending_writes: pending,
            failed_writes: failed,
            last_error,
        }))
    }

    fn link(&self) -> Result<&TeamLink> {
        self.team
            .as_ref()
            .ok_or_else(|| EngineError::InvalidArgument {
                name: "team".into(),
                message: "no team server is configured: set `[team] url` in .loci/config.toml \
                      or LOCI_TEAM_URL (docs/team.md)"
                    .into(),
            })
    }

    /// `loci team init`: creates or migrates the server's schema.
    pub fn team_init(&mut self) -> Result<Envelope<loci_team::InitReport>> {
        let link = self.link()?;
        let report = {
            let mut team = Team::connect(&link.url)?;
            team.init()?
        };
        self.envelope(report, Vec::new())
    }

    /// `loci team status`: the server, its head, this replica's high-water mark, the
    /// writes waiting and refused, and the last error.
    pub fn team_status(&mut self) -> Result<Envelope<TeamStatus>> {
        let link = self.link()?;
        let state = link.call(|t| t.state());
        let conn = self.store.conn();
        let hwm = replica::high_water_mark(conn)?;
        let (pending, _) = replica::outbox_counts(conn)?;
        let failed = replica::outbox(conn, true)?
            .into_iter()
            .map(|q| FailedWrite {
                subject: serde_json::from_str::<NewEvent>(&q.write)
                    .map(|w| w.subject)
                    .unwrap_or_default(),
                op_id: q.op_id,
                reason: q.failed.unwrap_or_default(),
            })
            .collect();
        let status = match state {
            Ok(s) => {
                link.seen.lock().unwrap_or_else(|p| p.into_inner()).head = Some(s.head);
                TeamStatus {
                    server: link.server(),
                    reachable: true,
                    schema: Some(s.schema),
                    writable: Some(s.writable),
                    server_head: Some(s.head),
                    high_water_mark: hwm,
                    pending_writes: pending,
                    failed,
                    last_error: None,
                }
            }
            Err(e @ (TeamError::NewerSchema { .. } | TeamError::Config(_))) => {
                return Err(e.into());
            }
            Err(e) => TeamStatus {
                server: link.server(),
                reachable: !e.is_unreachable(),
                schema: None,
                writable: None,
                server_head: None,
                high_water_mark: hwm,
                pending_writes: pending,
                failed,
                last_error: Some(e.to_string()),
            },
        };
        self.envelope(status, Vec::new())
    }

    /// Pushes the queued writes, then pulls the server's log past the high-water mark
    /// into this replica. An unreachable server is an error ([`EngineError::Team`] of
    /// kind `team_unreachable`); nothing queued is lost.
    pub fn team_sync(&mut self) -> Result<Envelope<SyncReport>> {
        let (pushed, refused) = self.team_push()?;
        let pulled = self.team_pull(None)?;
        let report = SyncReport {
            pushed,
            refused,
            pulled,
            high_water_mark: replica::high_water_mark(self.store.conn())?,
        };
        self.envelope(report, Vec::new())
    }

    /// What a command that reads memory does first: [`Workspace::team_sync`] when memory
    /// is team-backed, with a failure said on the returned line (for stderr) instead of
    /// failing the read, which answers from the replica. `None` when all went well or
    /// there is no team.
    pub fn team_sync_before_read(&mut self) -> Option<String> {
        if self.team.is_none() || self.store.is_read_only() {
            return None;
        }
        match self.team_sync() {
            Ok(_) => None,
            Err(e) => Some(format!(
                "team memory not synced ({e}); answering from this checkout's replica"
            )),
        }
    }

    /// Whether an answer from the replica should start a background catch-up
    /// ([`Workspace::team_catch_up`], which `loci context` and `loci search` run in a
    /// process of their own after answering, so the answer never waits for the team
    /// server): memory is team-backed, the store writable, no running listener vouches
    /// for the replica (its vouch is unexpired and its process lives), and neither a
    /// contact nor a catch-up happened within
    /// [`CATCH_UP_EVERY`].
    pub fn team_catch_up_due(&self) -> bool {
        if self.team.is_none() || self.store.is_read_only() {
            return false;
        }
        let now = jiff::Timestamp::now();
        // A listener's word holds while its process lives (it holds the listening lock;
        // the OS releases it however the process ends).
        if meta_time(self, CURRENT_UNTIL).is_some_and(|until| now < until) && self.store.listening()
        {
            return false;
        }
        let every = jiff::SignedDuration::try_from(CATCH_UP_EVERY).unwrap_or_default();
        [SYNCED_AT, CATCH_UP_AT]
            .into_iter()
            .filter_map(|key| meta_time(self, key))
            .all(|t| now.duration_since(t) >= every)
    }

    /// The background catch-up an answer from the replica starts: records that it
    /// started ([`Workspace::team_catch_up_due`] counts it), then
    /// [`Workspace::team_sync`]; a failure is recorded for the next answers' `team`
    /// block (`last_error`) and returned.
    pub fn team_catch_up(&mut self) -> Result<Envelope<SyncReport>> {
        self.link()?;
        self.store
            .write(|tx| loci_store::set_meta(tx, CATCH_UP_AT, &crate::envelope::now_rfc3339()))?;
        let synced = self.team_sync();
        if let Err(e) = &synced {
            let message = e.to_string();
            self.store
                .write(|tx| loci_store::set_meta(tx, LAST_ERROR, &message))?;
        }
        synced
    }

    /// What a running listener records while its connection is up and has heard nothing
    /// new: the replica holds the server's log now, and will until `until` unless the
    /// listener says otherwise first.
    fn team_vouch(&mut self, until: std::time::Duration) -> Result<()> {
        if self.store.is_read_only() {
            return Ok(());
        }
        let until = jiff::Timestamp::now()
            .checked_add(jiff::SignedDuration::try_from(until).unwrap_or_default())
            .map(|t| t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string())
            .unwrap_or_default();
        let hwm = replica::high_water_mark(self.store.conn())?;
        Ok(self.store.write(|tx| {
            record_contact(tx, hwm)?;
            loci_store::set_meta(tx, CURRENT_UNTIL, &until)
        })?)
    }

    /// Pushes the outbox in order: `(pushed, refused)`. Stops at an unreachable server.
    fn team_push(&mut self) -> Result<(u64, u64)> {
        let queued = replica::outbox(self.store.conn(), false)?;
        let (mut pushed, mut refused) = (0, 0);
        for q in queued {
            let event: NewEvent = serde_json::from_str(&q.write)
                .map_err(|e| StoreError::Corrupt(format!("queued write {}: {e}", q.op_id)))?;
            let outcome = match self.link()?.call(|t| t.write(&event)) {
                Ok(outcome) => outcome,
                // The role may only read: what is queued stays queued (it is in this
                // checkout's store, and goes once a role that may write pushes it), and
                // the pull that follows still brings the others' writes.
                Err(e) if e.is_not_permitted() => {
                    self.link()?
                        .seen
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push_error = Some(format!(
                        "{} queued writes stay here: {e}",
                        queued_left(self.store.conn())?
                    ));
                    return Ok((pushed, refused));
                }
                Err(e) => return Err(e.into()),
            };
            let refusal = match outcome {
                WriteOutcome::Written { .. } | WriteOutcome::Replayed { .. } => None,
                // A log's entry written offline took the next number this checkout knew;
                // another checkout took it meanwhile: the entry takes the next free one.
                WriteOutcome::Conflict { .. } if is_new_entry(&event) => {
                    match self.push_renumbered(event.clone())? {
                        Some(_) => None,
                        None => Some(format!(
                            "no free number for `{}` after 16 tries; run `loci team sync` again",
                            event.subject
                        )),
                    }
                }
                WriteOutcome::Conflict { current } => Some(
                    conflict(
                        &event.subject,
                        current,
                        event.expect_version.unwrap_or_default(),
                    )
                    .to_string(),
                ),
                WriteOutcome::OpReused => Some(reused(&event.op_id).to_string()),
            };
            self.store.write(|tx| match &refusal {
                None => replica::unqueue(tx, &q.op_id),
                Some(reason) => replica::fail(tx, &q.op_id, reason),
            })?;
            match refusal {
                None => pushed += 1,
                Some(_) => refused += 1,
            }
        }
        if let Some(link) = &self.team {
            link.seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_error = None;
        }
        Ok((pushed, refused))
    }

    /// Pushes a queued new log entry whose number the server already holds under the next
    /// number the replica knows once pulled, up to 16 times: the entry's new subject, or
    /// `None` when every try was taken.
    fn push_renumbered(&mut self, mut event: NewEvent) -> Result<Option<String>> {
        let log = logs::log_of_entry(&event.subject).unwrap_or_default();
        for _ in 0..16 {
            // The replica's next: the entries still queued after this one follow it, so
            // entries written offline keep their order.
            self.team_pull(None)?;
            event.subject = logs::next_entry(self.store.conn(), log)?;
            match self.link()?.call(|t| t.write(&event))? {
                WriteOutcome::Written { .. } | WriteOutcome::Replayed { .. } => {
                    return Ok(Some(event.subject));
                }
                WriteOutcome::Conflict { .. } => continue,
                WriteOutcome::OpReused => return Err(reused(&event.op_id)),
            }
        }
        Ok(None)
    }

    /// Applies the server's events past the high-water mark: returns how many changed
    /// this replica (not those it had already: its own facts, sessions and dismissals,
    /// a join's revisions). `own`
    /// names this process's write (its operation id and session), whose revision keeps
    /// the session it was written in.
    fn team_pull(&mut self, own: Option<(&str, Option<i64>)>) -> Result<u64> {
        let mut applied = 0;
        loop {
            let hwm = replica::high_water_mark(self.store.conn())?;
            let link = self.link()?;
            let (events, head) = link.call(|t| {
                let events = t.events_after(hwm, PULL_BATCH)?;
                let head = match events.last() {
                    Some(_) if events.len() as i64 == PULL_BATCH => None,
                    Some(last) => Some(last.seq),
                    None => Some(hwm),
                };
                Ok((events, head))
            })?;
            {
                let mut seen = link.seen.lock().unwrap_or_else(|p| p.into_inner());
                seen.synced_at = Some(crate::envelope::now_rfc3339());
                if let Some(h) = head {
                    seen.head = Some(h);
                }
            }
            // A short batch is the end of the log: this replica holds all of it once the
            // batch is applied, which is recorded in the same transaction.
            let end = head;
            let read_only = self.store.is_read_only();
            if events.is_empty() {
                if let Some(head) = end
                    && !read_only
                {
                    self.store.write(|tx| record_contact(tx, head))?;
                }
                return Ok(applied);
            }
            let root = self.root.clone();
            applied += self.store.write(|tx| {
                let mut revisions = Vec::new();
                let mut changed = 0;
                for ev in &events {
                    let session = own.filter(|(op, _)| *op == ev.op_id).and_then(|o| o.1);
                    if let Applied::Changed(revision) = apply_event(tx, &root, ev, session)? {
                        changed += 1;
                        revisions.extend(revision);
                    }
                }
                // The stale marks of the batch's revisions, recorded as a write records them.
                crate::audit::audit::store_marks(tx, Some(&revisions))?;
                if let Some(head) = end {
                    record_contact(tx, head)?;
                }
                Ok(changed)
            })?;
            if end.is_some() {
                return Ok(applied);
            }
        }
    }
}

impl Workspace {
    /// `loci team export`: the team's memory as a `loci export` document, which `loci
    /// import` reads into a standalone store — the way out of a team. The server's log is
    /// pulled first, so the document holds everything the team wrote; an unreachable
    /// server is an error (the replica may be behind), not a silent partial export.
    pub fn team_export(&mut self) -> Result<Envelope<super::portability::MemoryExport>> {
        self.team_sync()?;
        self.export_memory()
    }
}

/// Records in the store that this replica holds the server's log up to `head`, its end,
/// now: what answers of processes that did not reach the server say ([`SYNCED_AT`]).
fn record_contact(tx: &Transaction<'_>, head: i64) -> loci_store::Result<()> {
    loci_store::set_meta(tx, SYNCED_AT, &crate::envelope::now_rfc3339())?;
    loci_store::set_meta(tx, SERVER_HEAD, &head.to_string())?;
    loci_store::set_meta(tx, LAST_ERROR, "")
}

/// A `meta` time (RFC 3339), if set and readable.
fn meta_time(ws: &Workspace, key: &str) -> Option<jiff::Timestamp> {
    ws.store.meta(key).ok().flatten()?.parse().ok()
}

/// [`listen`] on a workspace of its own for the checkout at `root` (its store at `db`,
/// default `.loci/loci.db`): what a long-running door (`loci lsp`, `loci mcp`) runs on a
/// thread of its own, so the replica its answers read follows the team's writes as they
/// are made. Blocks until `pulled` returns false; returns at once when the checkout's
/// memory is not team-backed or its store does not open.
pub fn listen_at(
    root: &std::path::Path,
    db: Option<&std::path::Path>,
    tick: std::time::Duration,
    pulled: impl FnMut(u64) -> bool,
) {
    let mut ws = match Workspace::open(root, db) {
        Ok(ws) => ws,
        Err(e) => {
            tracing::warn!("the team listener did not open {}: {e}", root.display());
            return;
        }
    };
    listen(&mut ws, tick, pulled);
}

/// Keeps this workspace's replica current for a long-running door (the language server,
/// the MCP server):
/// a connection of its own `LISTEN`s for the server's events; each notification is pulled
/// at once ([`Workspace::team_sync`]), then `pulled(n)` is called with how many events
/// were applied. `pulled(0)` is also called every `tick` without one, and after a failed
/// contact, which is retried every `tick`; the loop ends when `pulled` returns false. Does
/// nothing without `[team]`.
pub fn listen(ws: &mut Workspace, tick: std::time::Duration, mut pulled: impl FnMut(u64) -> bool) {
    let Some(url) = ws.team.as_ref().map(|l| l.url.clone()) else {
        return;
    };
    // Held while this listener runs: its vouching counts only while it does.
    let _listening = match ws.store.hold_listening() {
        Ok(file) => file,
        Err(e) => {
            tracing::debug!("team listener: {e}");
            None
        }
    };
    loop {
        let mut listener = match Team::connect(&url).and_then(|mut t| {
            t.check_schema()?;
            t.listen()?;
            Ok(t)
        }) {
            Ok(t) => t,
            Err(e) => {
                tracing::debug!("team listener: {e}");
                if !pulled(0) {
                    return;
                }
                std::thread::sleep(tick);
                continue;
            }
        };
        // What was written before the LISTEN began.
        let mut due = true;
        // Whether the replica holds everything the server stored: true after a sync,
        // and while the listening connection hears nothing new.
        let mut current = false;
        loop {
            let n = if due {
                match ws.team_sync() {
                    Ok(env) => {
                        current = true;
                        env.result.pulled
                    }
                    Err(e) => {
                        tracing::debug!("team listener: {e}");
                        current = false;
                        0
                    }
                }
            } else {
                0
            };
            // Answers of other processes need not catch up while this connection is up:
            // vouched for two ticks, renewed every tick.
            if current && let Err(e) = ws.team_vouch(tick * 2) {
                tracing::debug!("team listener: {e}");
            }
            if !pulled(n) {
                // No longer vouched for: the next answers catch up themselves.
                if current && !ws.store.is_read_only() {
                    let _ = ws
                        .store
                        .write(|tx| loci_store::set_meta(tx, CURRENT_UNTIL, ""));
                }
                return;
            }
            match listener.wait(tick) {
                Ok(got) => due = got,
                Err(e) => {
                    tracing::debug!("team listener: {e}");
                    break;
                }
            }
        }
    }
}

//! Team memory (issue 34): the checkout's store as a replica of a PostgreSQL server.
//!
//! When `[team] url` (or `LOCI_TEAM_URL`) names a server, the server's append-only event
//! log is the system of record for authored memory: a write ([`Workspace::remember`],
//! `decide`, `learn`, `rollback`, `pin`) goes to the server first, in one server
//! transaction with the revision guard and its operation id, and reaches this store the
//! way every other checkout's writes do — by pulling the log past the replica's
//! high-water mark and applying each event here ([`apply_event`]), where its claims are
//! resolved against this checkout's own map. While the server is unreachable a write
//! queues in the outbox (migration 25) under its operation id and is pushed when it
//! returns; the server stores an operation id once, so a push repeated after a lost reply
//! is a replay, never a second write.
//!
//! Without `[team]` nothing here runs and no answer carries a `team` block.

use std::sync::Mutex;

use loci_store::memory::{self as mem, NewRevision, Revision};
use loci_store::rusqlite::Transaction;
use loci_store::team as replica;
use loci_store::{Context, StoreError, logs};
use loci_team::{NewEvent, ServerEvent, Team, TeamError, TeamUrl, UrlSource, WriteOutcome};
use serde::Serialize;

pub use loci_team::InitReport;

use super::memory::{ClaimView, WriteOptions, Written};
use super::portability::{
    ExportedDismissal, ExportedFact, ExportedSession, dismissal_words_known, fact_hash,
    record_dismissal, session_key,
};
use crate::config::TeamConfig;
use crate::{EngineError, Envelope, Result, TeamState, Workspace};

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
/// number the replica holds and those of the entries still queued for the server (two
/// entries written offline had taken one number, and the second was refused when pushed).
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

/// What `loci team join` uploaded.
#[derive(Clone, Debug, Default, Serialize)]
pub struct JoinReport {
    /// Pages whose revisions are all on the server now.
    pub pages: u64,
    /// Revisions uploaded now.
    pub revisions: u64,
    /// Revisions that were on the server already (an earlier join): not uploaded again.
    pub already: u64,
    /// Pins uploaded now.
    pub pins: u64,
    /// Topic members, fact definitions, sessions and dismissals uploaded now (each under
    /// an operation id made of its key, so a second join replays them and counts none).
    pub shared: u64,
    /// Decisions and lessons of this store whose number the team's log holds for another
    /// entry: renumbered here before the upload, past the highest number either knows
    /// (their order kept), so both entries live on under numbers every checkout shares.
    pub renumbered: Vec<Renumbered>,
    /// Pages the server holds another history of: this store's revisions of each were
    /// appended to the page's history on the server, the team's text kept current.
    pub diverged: Vec<Diverged>,
    /// Pages that could not be uploaded (by subject): the team wrote the page during
    /// each of three attempts, or an operation id was used for another request.
    pub conflicts: Vec<String>,
    /// Pages with a revision the secret checks refuse (a credential in its text, written
    /// before a rule caught it): not uploaded from that revision on, as `subject: why`.
    pub refused: Vec<String>,
    /// Events of other checkouts applied here afterwards.
    pub pulled: u64,
}

/// A page the team and this store each had a history of before the join.
#[derive(Clone, Debug, Serialize)]
pub struct Diverged {
    /// The page.
    pub subject: String,
    /// This store's revisions appended to the team's history of it.
    pub uploaded: u64,
    /// Their first and last version here.
    pub here: [i64; 2],
    /// Their first and last version in the team's history.
    pub team: [i64; 2],
    /// The page's version now, here and in the team: its text is the team's from
    /// before the join (a revision of the join's, after this store's), unless this
    /// store's last text was the team's already.
    pub current: i64,
    /// How to settle it, in commands.
    pub settle: String,
}

/// A log entry a join renumbered.
#[derive(Clone, Debug, Serialize)]
pub struct Renumbered {
    /// Its subject before (`decision:1`).
    pub from: String,
    /// Its subject now, here and on the server (`decision:3`).
    pub to: String,
}

/// What the team's log holds besides revisions ([`Workspace::team_has`]).
#[derive(Debug, Default)]
struct TeamHas {
    /// Pages the team pinned or unpinned: its latest word on them stands (a replica
    /// behind an unpin does not pin the page again).
    pins: std::collections::HashSet<String>,
    /// `(topic, member)` pairs the team added or removed, likewise.
    members: std::collections::HashSet<(String, String)>,
    /// Fact definitions, by [`fact_hash`].
    facts: std::collections::HashSet<String>,
    /// Sessions by key, and whether the team has them ended.
    sessions: std::collections::HashMap<String, bool>,
    /// Dismissed findings, by key.
    dismissals: std::collections::HashSet<String>,
}

/// The operation id a join uploads version `version` of the page with uid `uid` under.
fn join_op(uid: &str, version: i64) -> String {
    format!("join:{uid}:v{version}")
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

    /// The shared write path of a team-backed checkout ([`super::memory`] calls it in
    /// place of its local transaction): sync, build the body from the replica's current
    /// revision, write to the server with the guard, then pull — the write arrives here
    /// as every event does. A log's new entry takes the next number the replica knows;
    /// another checkout's entry under that number is retried with the next. An
    /// unreachable server queues the write.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn team_write_revision(
        &mut self,
        request: &serde_json::Value,
        opts: &WriteOptions,
        author: &str,
        subject: &str,
        kind: &str,
        event_kind: &str,
        body_for: &mut dyn FnMut(Option<&Revision>) -> Result<String>,
    ) -> Result<Written> {
        let hash = loci_core::fingerprint::content_hash(request.to_string().as_bytes());
        let op_id = match &opts.operation_id {
            Some(op) => format!("op:{op}"),
            None => new_op_id(&self.root),
        };
        // The replica first, so the body and the guard see what the team wrote.
        let offline = match self.team_push().and_then(|_| self.team_pull(None)) {
            Ok(_) => false,
            Err(EngineError::Team {
                kind: "team_unreachable",
                ..
            }) => true,
            Err(e) => return Err(e),
        };
        let entry_log = logs::entry_prefix(subject).is_some();
        let session_payload = self.session_payload(opts.session)?;
        let (branch, commit) = super::memory::git_position(&self.root);
        let _ = branch;
        for _ in 0..16 {
            if let Some((_, Some(rev))) = replica::applied(self.store.conn(), &op_id)? {
                return self.written_from(rev, true);
            }
            let conn = self.store.conn();
            let target = if entry_log {
                next_entry_here(conn, subject)?
            } else {
                subject.to_string()
            };
            let current =
                match mem::page_by_subject(conn, &target)?.and_then(|p| p.current_revision_id) {
                    Some(id) => mem::revision_by_id(conn, id)?,
                    None => None,
                };
            let current_version = current.as_ref().map_or(0, |r| r.version);
            if !entry_log
                && let Some(expected) = opts.expect_version
                && offline
                && expected != current_version
            {
                // Offline, the replica is the best knowledge of the page: a guard that
                // already fails here is said now, not after the server returns.
                return Err(conflict(&target, current_version, expected));
            }
            let body = body_for(current.as_ref())?;
            let event = NewEvent {
                op_id: op_id.clone(),
                request_hash: hash.clone(),
                kind: "revision".into(),
                event_kind: event_kind.into(),
                subject: target.clone(),
                page_kind: kind.into(),
                expect_version: if entry_log {
                    Some(0)
                } else {
                    opts.expect_version
                },
                body: Some(body),
                summary: opts.summary.clone(),
                author: author.into(),
                checkout: Some(format!("{}:{}", host(), self.root.display())),
                commit: commit.clone(),
                written_at: crate::envelope::now_rfc3339(),
                payload: session_payload.clone(),
            };
            let outcome = if offline {
                Err(TeamError::Unreachable {
                    server: self.link()?.server(),
                    message: "not reached before this write".into(),
                })
            } else {
                self.link()?.call(|t| t.write(&event))
            };
            match outcome {
                Ok(
                    WriteOutcome::Written { version, .. } | WriteOutcome::Replayed { version, .. },
                ) => {
                    match self.team_pull(Some((&op_id, opts.session))) {
                        Ok(_) => {}
                        // Stored on the server, which went away before this replica got
                        // it: the write is made (never queue it again), and arrives here
                        // at the next pull.
                        Err(EngineError::Team {
                            kind: "team_unreachable",
                            ..
                        }) => return self.not_yet_pulled(event, version, None),
                        Err(e) => return Err(e),
                    }
                    let rev = replica::applied(self.store.conn(), &op_id)?
                        .and_then(|(_, rev)| rev)
                        .ok_or_else(|| {
                            StoreError::Corrupt(format!(
                                "the team server stored write {op_id} but the replica did not receive it"
                            ))
                        })?;
                    return self.written_from(rev, false);
                }
                Ok(WriteOutcome::Conflict { .. }) if entry_log => {
                    // Another checkout took this entry number: take the next one.
                    self.team_pull(None)?;
                    continue;
                }
                Ok(WriteOutcome::Conflict { current }) => {
                    return Err(conflict(
                        &target,
                        current,
                        opts.expect_version.unwrap_or_default(),
                    ));
                }
                Ok(WriteOutcome::OpReused) => {
                    return Err(reused(opts.operation_id.as_deref().unwrap_or(&op_id)));
                }
                Err(e) if e.is_unreachable() => return self.queue_write(event, current, opts),
                Err(e) if e.is_not_permitted() => return Err(not_written(&target, e)),
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::Internal(format!(
            "no free entry number in `{subject}` after 16 tries; run `loci team sync` and retry"
        )))
    }

    /// Queues a write for the server and answers what it will be: the page at the next
    /// version, not yet in this replica (`queued` holds its operation id).
    fn queue_write(
        &mut self,
        event: NewEvent,
        current: Option<Revision>,
        opts: &WriteOptions,
    ) -> Result<Written> {
        let json = serde_json::to_string(&event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.store
            .write(|tx| replica::queue(tx, &event.op_id, &json))?;
        let version = current.map_or(0, |r| r.version) + 1;
        let op_id = event.op_id.clone();
        self.not_yet_pulled(event, version, Some(op_id))
            .map(|mut w| {
                w.revision.session_id = opts.session;
                w
            })
    }

    /// The answer for a write this replica does not hold yet: the page at `version`
    /// (queued: what it will be), its revision's text as written; `queued` holds the
    /// operation id of a queued write.
    fn not_yet_pulled(
        &mut self,
        event: NewEvent,
        version: i64,
        queued: Option<String>,
    ) -> Result<Written> {
        let conn = self.store.conn();
        let page = mem::page_by_subject(conn, &event.subject)?.unwrap_or(mem::Page {
            page_id: 0,
            subject: event.subject.clone(),
            kind: event.page_kind.clone(),
            pinned: false,
            current_revision_id: None,
            created_at: event.written_at.clone(),
            updated_at: None,
        });
        Ok(Written {
            revision: Revision {
                revision_id: 0,
                page_id: page.page_id,
                subject: event.subject.clone(),
                version,
                body: event.body.clone().unwrap_or_default(),
                summary: event.summary.clone(),
                author: event.author.clone(),
                session_id: None,
                event_id: None,
                created_at: event.written_at.clone(),
            },
            page,
            claims: Vec::new(),
            event_id: 0,
            replayed: false,
            queued,
        })
    }

    /// The [`Written`] of a revision this replica applied.
    fn written_from(&self, revision_id: i64, replayed: bool) -> Result<Written> {
        let conn = self.store.conn();
        let revision = mem::revision_by_id(conn, revision_id)?
            .ok_or_else(|| StoreError::Corrupt(format!("revision {revision_id} vanished")))?;
        let page = mem::page_by_id(conn, revision.page_id)?
            .ok_or_else(|| StoreError::Corrupt("page vanished".into()))?;
        let claims = mem::claims_of(conn, revision_id)?
            .iter()
            .map(ClaimView::from)
            .collect();
        Ok(Written {
            event_id: revision.event_id.unwrap_or_default(),
            page,
            revision,
            claims,
            replayed,
            queued: None,
        })
    }

    /// Pins or unpins a page on the server (the guard and operation id as for a
    /// revision), then pulls.
    pub(crate) fn team_pin(
        &mut self,
        page: &mem::Page,
        pinned: bool,
        opts: &WriteOptions,
        author: &str,
        request: &serde_json::Value,
    ) -> Result<mem::Page> {
        let hash = loci_core::fingerprint::content_hash(request.to_string().as_bytes());
        let op_id = match &opts.operation_id {
            Some(op) => format!("op:{op}"),
            None => new_op_id(&self.root),
        };
        self.team_push()?;
        self.team_pull(None)?;
        let event = NewEvent {
            op_id: op_id.clone(),
            request_hash: hash,
            kind: if pinned { "pin" } else { "unpin" }.into(),
            event_kind: if pinned { "pin" } else { "unpin" }.into(),
            subject: page.subject.clone(),
            page_kind: page.kind.clone(),
            expect_version: opts.expect_version,
            body: None,
            summary: opts.summary.clone(),
            author: author.into(),
            checkout: Some(format!("{}:{}", host(), self.root.display())),
            commit: super::memory::git_position(&self.root).1,
            written_at: crate::envelope::now_rfc3339(),
            payload: self.session_payload(opts.session)?,
        };
        let outcome = self
            .link()?
            .call(|t| t.write(&event))
            .map_err(|e| match e {
                e @ TeamError::NotPermitted { .. } => not_written(&page.subject, e),
                e => e.into(),
            })?;
        match outcome {
            WriteOutcome::Written { .. } | WriteOutcome::Replayed { .. } => {
                self.team_pull(Some((&op_id, opts.session)))?;
            }
            WriteOutcome::Conflict { current } => {
                return Err(conflict(
                    &page.subject,
                    current,
                    opts.expect_version.unwrap_or_default(),
                ));
            }
            WriteOutcome::OpReused => {
                return Err(reused(opts.operation_id.as_deref().unwrap_or(&op_id)));
            }
        }
        mem::page_by_id(self.store.conn(), page.page_id)?
            .ok_or_else(|| StoreError::Corrupt("page vanished".into()).into())
    }

    /// `loci team join`: uploads what this store holds and the team's log does not —
    /// every revision of every page, in version order, each under an operation id made of
    /// its page's uid and version, the pins and topic members the team lacks, and every
    /// topic member, fact definition, session and dismissal the team lacks under an
    /// operation id made of its key — so a second join finds it all on the server and
    /// adds nothing. A page the server holds another history of (another checkout wrote
    /// it first) keeps the team's text current: this store's revisions are appended to
    /// the page's history on the server, and the team's text after them, in one server
    /// transaction ([`JoinReport::diverged`] says where each went and how to settle).
    /// Then pulls what the others wrote (this store's own uploads come back as nothing
    /// new).
    pub fn team_join(&mut self) -> Result<Envelope<JoinReport>> {
        let mut report = JoinReport::default();
        self.join_renumber(&mut report)?;
        // Revisions the team's log holds already: pulled from it, or uploaded by an
        // earlier join whose pull recorded them.
        let on_server: std::collections::HashSet<i64> =
            replica::applied_revisions(self.store.conn())?
                .into_iter()
                .map(|(revision, _)| revision)
                .collect();
        let has = self.team_has()?;
        let checkout = Some(format!("{}:{}", host(), self.root.display()));
        let pages = mem::pages(self.store.conn())?;
        for page in pages {
            let conn = self.store.conn();
            let uid = mem::page_uid(conn, page.page_id)?;
            let revisions = mem::revisions_of(conn, page.page_id)?;
            // This store's own revisions the team's log lacks, in order.
            let mut own = Vec::new();
            let mut refused = None;
            for r in revisions {
                // The secret checks of a write, before anything is sent.
                if let Err(e) = self
                    .accept_text("body", &r.body)
                    .and_then(|()| match &r.summary {
                        Some(s) => self.accept_text("summary", s),
                        None => Ok(()),
                    })
                {
                    refused = Some(format!("{}: v{}: {e}", page.subject, r.version));
                    break;
                }
                let conn = self.store.conn();
                if on_server.contains(&r.revision_id)
                    || replica::applied(conn, &join_op(&uid, r.version))?.is_some()
                {
                    report.already += 1;
                    continue;
                }
                // The kind of write it was here (an export names it), else an import.
                let event_kind = match r.event_id {
                    Some(id) => mem::event_by_id(conn, id)?.map(|e| e.kind),
                    None => None,
                }
                .filter(|k| {
                    [
                        "remember", "decision", "lesson", "rollback", "import", "confirm",
                    ]
                    .contains(&k.as_str())
                })
                .unwrap_or_else(|| "import".into());
                own.push(NewEvent {
                    op_id: join_op(&uid, r.version),
                    request_hash: loci_core::fingerprint::content_hash(r.body.as_bytes()),
                    kind: "revision".into(),
                    event_kind,
                    subject: page.subject.clone(),
                    page_kind: page.kind.clone(),
                    expect_version: Some(r.version - 1),
                    body: Some(r.body.clone()),
                    summary: r.summary.clone(),
                    author: r.author.clone(),
                    checkout: checkout.clone(),
                    commit: None,
                    written_at: r.created_at.clone(),
                    payload: None,
                });
            }
            // This store has the uploaded revisions already: the pull at the end finds each
            // by its operation id (`join:UID:vN`) and records it as applied without
            // applying it again. Recording it here, under its server sequence number, would
            // move the high-water mark past other checkouts' events not pulled yet.
            let mut clean = true;
            let mut rest = own.as_slice();
            while let Some(event) = rest.first() {
                match self.link()?.call(|t| t.write(event))? {
                    WriteOutcome::Written { .. } => report.revisions += 1,
                    WriteOutcome::Replayed { .. } => report.already += 1,
                    WriteOutcome::Conflict { .. } => {
                        clean = self.join_diverged(&mut report, &uid, rest)?;
                        break;
                    }
                    WriteOutcome::OpReused => {
                        clean = false;
                        break;
                    }
                }
                rest = &rest[1..];
            }
            if let Some(why) = refused {
                report.refused.push(why);
                continue;
            }
            if !clean {
                report.conflicts.push(page.subject.clone());
                continue;
            }
            // A pin or a member the team has decided on (this page came from the
            // server, or a checkout pinned, unpinned, added or removed it) is not
            // uploaded: the team's latest word stands.
            if page.pinned && !has.pins.contains(&page.subject) {
                let op_id = format!("join:{uid}:pin");
                if replica::applied(self.store.conn(), &op_id)?.is_none() {
                    let event = NewEvent {
                        op_id: op_id.clone(),
                        request_hash: "pin".into(),
                        kind: "pin".into(),
                        event_kind: "pin".into(),
                        subject: page.subject.clone(),
                        page_kind: page.kind.clone(),
                        expect_version: None,
                        body: None,
                        summary: None,
                        author: super::memory::default_author(),
                        checkout: checkout.clone(),
                        commit: None,
                        written_at: crate::envelope::now_rfc3339(),
                        payload: None,
                    };
                    if let WriteOutcome::Written { .. } = self.link()?.call(|t| t.write(&event))? {
                        report.pins += 1;
                    }
                }
            }
            if page.kind == "topic" {
                for member in mem::topic_members(self.store.conn(), page.page_id)? {
                    if has
                        .members
                        .contains(&(page.subject.clone(), member.clone()))
                    {
                        continue;
                    }
                    let change = TopicChange {
                        member: member.clone(),
                        added: true,
                    };
                    let op = format!(
                        "join:{uid}:member:{}",
                        loci_core::fingerprint::content_hash(member.as_bytes())
                    );
                    let author = super::memory::default_author();
                    self.join_shared(&mut report, op, "topic", &page.subject, &author, &change)?;
                }
            }
            report.pages += 1;
        }
        self.join_unpaged(&mut report, &has)?;
        report.pulled = self.team_pull(None)?;
        self.envelope(report, Vec::new())
    }

    /// A page the server holds another history of: `own` are this store's revisions the
    /// team lacks (in order). They are appended to the page's history on the server,
    /// with their authors, times and this checkout, and then the team's text again —
    /// so no revision of either side is lost and the team's current text stays current
    /// until someone chooses otherwise — in one server transaction, retried when the
    /// team wrote the page meanwhile. Recorded in [`JoinReport::diverged`]; false when
    /// it could not be done (the page is then a conflict).
    fn join_diverged(
        &mut self,
        report: &mut JoinReport,
        uid: &str,
        own: &[NewEvent],
    ) -> Result<bool> {
        let Some(last) = own.last() else {
            return Ok(true);
        };
        let subject = last.subject.clone();
        let here_first = own[0].expect_version.unwrap_or_default() + 1;
        let here_last = last.expect_version.unwrap_or_default() + 1;
        // Three attempts: each reads the team's head and appends after it, or, when the
        // team wrote the page in between, appends nothing.
        for _ in 0..3 {
            let Some((team_head, team_body)) = self.link()?.call(|t| t.head(&subject))? else {
                return Ok(false);
            };
            let mut batch: Vec<NewEvent> = own
                .iter()
                .enumerate()
                .map(|(i, e)| NewEvent {
                    expect_version: Some(team_head + i as i64),
                    payload: Some(
                        serde_json::json!({"joined": {"version": e.expect_version.unwrap_or_default() + 1}})
                            .to_string(),
                    ),
                    ..e.clone()
                })
                .collect();
            let same = last.body.as_deref() == Some(team_body.as_str());
            let uploaded_to = team_head + own.len() as i64;
            if !same {
                let summary = format!(
                    "the team's text, kept current after a join: v{}–v{uploaded_to} are the \
                     history of this page that checkout {} had",
                    team_head + 1,
                    last.checkout.as_deref().unwrap_or("unknown")
                );
                batch.push(NewEvent {
                    op_id: format!("join-keep:{uid}:v{here_last}"),
                    request_hash: loci_core::fingerprint::content_hash(team_body.as_bytes()),
                    kind: "revision".into(),
                    event_kind: "join".into(),
                    subject: subject.clone(),
                    page_kind: last.page_kind.clone(),
                    expect_version: Some(uploaded_to),
                    body: Some(team_body.clone()),
                    summary: Some(summary),
                    author: super::memory::default_author(),
                    checkout: last.checkout.clone(),
                    commit: None,
                    written_at: crate::envelope::now_rfc3339(),
                    payload: None,
                });
            }
            let outcomes = self.link()?.call(|t| t.write_all(&batch))?;
            match outcomes.last() {
                Some(WriteOutcome::OpReused) => return Ok(false),
                // The team wrote the page meanwhile: read its head again.
                Some(WriteOutcome::Conflict { .. }) => continue,
                _ => {}
            }
            let written = outcomes
                .iter()
                .take(own.len())
                .filter(|o| matches!(o, WriteOutcome::Written { .. }))
                .count() as u64;
            report.revisions += written;
            report.already += own.len() as u64 - written;
            let current = if same { uploaded_to } else { uploaded_to + 1 };
            // Here, the team's revisions this store lacks come after its own (the pull),
            // so its last text stays at `here_last` and the page reaches `current`, the
            // server's version: a guard written here holds there.
            let settle = if same {
                "nothing to settle: the team's text is this checkout's".to_string()
            } else {
                format!(
                    "to make this checkout's text current: `loci rollback {subject} \
                     {here_last} --expect-version {current}`; or write the text both \
                     should have: `loci remember {subject} --expect-version {current} …`"
                )
            };
            report.diverged.push(Diverged {
                subject: subject.clone(),
                uploaded: own.len() as u64,
                here: [here_first, here_last],
                team: [team_head + 1, uploaded_to],
                current,
                settle,
            });
            return Ok(true);
        }
        Ok(false)
    }

    /// The first step of [`Workspace::team_join`]: decisions and lessons are numbered per
    /// checkout until they are shared, so two stores that each wrote `decision:1` before
    /// joining hold two different entries under one number. An entry is the team's entry
    /// of its number when it came from the server (a revision of it was applied here) or
    /// when the server's entry of that number is this entry's own earlier upload (its
    /// first revision's operation id names this entry's uid, as a join makes it) — the uid
    /// is an entry's identity, as `loci import` has it. Any other entry whose number the
    /// server holds is renumbered here, past the highest number the server or this store
    /// knows, and so is every entry of its log after it (this store's entries keep their
    /// order); the page moves with its revisions, claims and findings (a `rename` event
    /// records it). Then the upload finds each number free, and every checkout names the
    /// entry alike.
    fn join_renumber(&mut self, report: &mut JoinReport) -> Result<()> {
        let from_server: std::collections::HashSet<i64> =
            replica::applied_revisions(self.store.conn())?
                .into_iter()
                .map(|(_, page)| page)
                .collect();
        for (log, prefix) in logs::LOGS {
            let on_server: std::collections::BTreeMap<i64, String> = self
                .link()?
                .call(|t| t.first_ops(prefix))?
                .into_iter()
                .filter_map(|(subject, op)| Some((logs::entry_number(&subject)?, op)))
                .collect();
            let mut here: Vec<(i64, mem::Page)> = mem::pages(self.store.conn())?
                .into_iter()
                .filter(|p| p.kind == log)
                .filter_map(|p| Some((logs::entry_number(&p.subject)?, p)))
                .collect();
            here.sort_by_key(|(n, _)| *n);
            let highest = |m: Option<&i64>| m.copied().unwrap_or(0);
            let mut next =
                highest(on_server.keys().next_back()).max(highest(here.last().map(|(n, _)| n))) + 1;
            let mut shifting = false;
            for (number, page) in here {
                if from_server.contains(&page.page_id) {
                    continue;
                }
                let uid = mem::page_uid(self.store.conn(), page.page_id)?;
                match on_server.get(&number) {
                    Some(op) if *op == format!("join:{uid}:v1") => continue,
                    None if !shifting => continue,
                    _ => shifting = true,
                }
                let to = format!("{prefix}{next}");
                next += 1;
                let source_ref = format!("team:join:{uid}");
                self.store
                    .write(|tx| crate::map::sync::move_page(tx, &page.subject, &to, &source_ref))?;
                report.renumbered.push(Renumbered {
                    from: page.subject,
                    to,
                });
            }
        }
        Ok(())
    }

    /// What the team's log holds of what a join would upload besides revisions: the
    /// pages it pinned or unpinned, the members it added to or removed from topics, and
    /// the keys of its facts, sessions and dismissals — whichever checkout wrote them,
    /// under whichever operation id.
    fn team_has(&mut self) -> Result<TeamHas> {
        let events = self.link()?.call(|t| {
            t.shared_events(&["pin", "unpin", "topic", "fact", "session", "dismissal"])
        })?;
        let mut has = TeamHas::default();
        for (kind, subject, payload) in events {
            let payload = payload.unwrap_or_default();
            match kind.as_str() {
                "pin" | "unpin" => {
                    has.pins.insert(subject);
                }
                "topic" => {
                    if let Ok(t) = serde_json::from_str::<TopicChange>(&payload) {
                        has.members.insert((subject, t.member));
                    }
                }
                "fact" => {
                    if let Ok(f) = serde_json::from_str::<ExportedFact>(&payload) {
                        has.facts.insert(fact_hash(&f));
                    }
                }
                "session" => {
                    if let Ok(s) = serde_json::from_str::<ExportedSession>(&payload) {
                        let ended = s.ended_at.is_some();
                        let known = has.sessions.entry(s.key).or_default();
                        *known |= ended;
                    }
                }
                "dismissal" => {
                    if let Ok(d) = serde_json::from_str::<ExportedDismissal>(&payload) {
                        has.dismissals.insert(d.finding_key);
                    }
                }
                _ => {}
            }
        }
        Ok(has)
    }

    /// The part of [`Workspace::team_join`] that belongs to no page: every fact definition,
    /// session and dismissal, each passing the secret checks of a write first (a refusal is
    /// named in [`JoinReport::refused`]).
    fn join_unpaged(&mut self, report: &mut JoinReport, has: &TeamHas) -> Result<()> {
        let conn = self.store.conn();
        let facts: Vec<ExportedFact> = mem::facts(conn)?.iter().map(ExportedFact::from).collect();
        let mut sessions = Vec::new();
        for s in mem::sessions(conn)? {
            let digest = match &s.digest {
                Some(json) => serde_json::from_str(json).unwrap_or_default(),
                None => self.digest(&s, None)?,
            };
            sessions.push(ExportedSession::of(s, digest));
        }
        let dismissals: Vec<ExportedDismissal> =
            loci_store::audit::contradictions(conn, Some("dismissed"))?
                .into_iter()
                .map(ExportedDismissal::from)
                .collect();
        for f in facts {
            if has.facts.contains(&fact_hash(&f)) {
                continue;
            }
            let texts = [Some(&f.claim), Some(&f.command), f.expect_output.as_ref()];
            if let Some(e) = texts
                .into_iter()
                .flatten()
                .find_map(|t| self.accept_text("fact", t).err())
            {
                report.refused.push(format!("fact `{}`: {e}", f.claim));
                continue;
            }
            let op = format!("join:fact:{}", fact_hash(&f));
            let author = f.author.clone();
            self.join_shared(report, op, "fact", "", &author, &f)?;
        }
        for s in sessions {
            // The team has it in this state, or ended.
            if has
                .sessions
                .get(&s.key)
                .is_some_and(|ended| *ended || s.ended_at.is_none())
            {
                continue;
            }
            let texts = [s.task.as_ref(), s.summary.as_ref()];
            if let Some(e) = texts
                .into_iter()
                .flatten()
                .find_map(|t| self.accept_text("session", t).err())
            {
                report
                    .refused
                    .push(format!("session {}: {e}", s.started_at));
                continue;
            }
            // Begun and ended are two states of a session: one joined open and ended since
            // is shared again, as ended.
            let state = if s.ended_at.is_some() {
                "ended"
            } else {
                "begun"
            };
            let op = format!("join:session:{}:{state}", s.key);
            let author = s.author.clone();
            self.join_shared(report, op, "session", "", &author, &s)?;
        }
        for d in dismissals {
            if has.dismissals.contains(&d.finding_key) {
                continue;
            }
            if let Some(e) = d
                .notes
                .as_ref()
                .and_then(|n| self.accept_text("notes", n).err())
            {
                report
                    .refused
                    .push(format!("dismissal of `{}` in {}: {e}", d.claim, d.subject));
                continue;
            }
            let op = format!("join:dismissal:{}", d.finding_key);
            let author = super::memory::default_author_in(Some(self.root.as_path()));
            let subject = d.subject.clone();
            self.join_shared(report, op, "dismissal", &subject, &author, &d)?;
        }
        Ok(())
    }

    /// Uploads one joined item that is not a revision under `op_id`; counts it in
    /// [`JoinReport::shared`] when the server stored it now (a replay adds nothing).
    fn join_shared(
        &mut self,
        report: &mut JoinReport,
        op_id: String,
        kind: &str,
        subject: &str,
        author: &str,
        payload: &impl Serialize,
    ) -> Result<()> {
        let payload =
            serde_json::to_string(payload).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let event = NewEvent {
            request_hash: loci_core::fingerprint::content_hash(payload.as_bytes()),
            op_id,
            kind: kind.into(),
            event_kind: "join".into(),
            subject: subject.into(),
            page_kind: if kind == "topic" { "topic" } else { "" }.into(),
            expect_version: None,
            body: None,
            summary: None,
            author: author.into(),
            checkout: Some(format!("{}:{}", host(), self.root.display())),
            commit: None,
            written_at: crate::envelope::now_rfc3339(),
            payload: Some(payload),
        };
        if let WriteOutcome::Written { .. } = self.link()?.call(|t| t.write(&event))? {
            report.shared += 1;
        }
        Ok(())
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

/// How a team-backed checkout shares what it writes to its own store first — fact
/// definitions, sessions and dismissals: each is queued in the outbox in the transaction
/// that writes it here (so neither happens without the other, whatever crashes), then
/// pushed. Unlike a revision these need no guard and no number from the server: each is
/// added once under a key that is the same in every checkout (a fact's content hash, a
/// session's key, a finding's key) and never taken back, so the order in which checkouts
/// apply them does not matter, and applying this checkout's own again from the log
/// changes nothing ([`Applied::Known`]).
pub(crate) struct LocalShare {
    checkout: String,
    commit: Option<String>,
    root: std::path::PathBuf,
}

impl LocalShare {
    /// Queues the event of a write made in `tx`; `payload` is its content as another
    /// checkout applies it.
    pub(crate) fn queue(
        &self,
        tx: &Transaction<'_>,
        kind: &str,
        event_kind: &str,
        subject: &str,
        author: &str,
        payload: &impl Serialize,
    ) -> loci_store::Result<()> {
        let payload =
            serde_json::to_string(payload).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let event = NewEvent {
            op_id: new_op_id(&self.root),
            request_hash: loci_core::fingerprint::content_hash(payload.as_bytes()),
            kind: kind.into(),
            event_kind: event_kind.into(),
            subject: subject.into(),
            page_kind: String::new(),
            expect_version: None,
            body: None,
            summary: None,
            author: author.into(),
            checkout: Some(self.checkout.clone()),
            commit: self.commit.clone(),
            written_at: crate::envelope::now_rfc3339(),
            payload: Some(payload),
        };
        let json = serde_json::to_string(&event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        replica::queue(tx, &event.op_id, &json)
    }
}

impl Workspace {
    /// [`LocalShare`] for this checkout, when memory is team-backed.
    pub(crate) fn team_share(&self) -> Option<LocalShare> {
        self.team.as_ref()?;
        Some(LocalShare {
            checkout: format!("{}:{}", host(), self.root.display()),
            commit: super::memory::git_position(&self.root).1,
            root: self.root.clone(),
        })
    }

    /// After a write [`LocalShare::queue`]d its event: pushes the outbox. A failure is
    /// not the write's (it is stored here and stays queued): the answer's `team` block
    /// says so (`pending_writes`, `last_error`), and the next contact pushes it.
    pub(crate) fn team_push_shared(&mut self) {
        if self.team.is_some()
            && let Err(e) = self.team_push()
        {
            tracing::debug!("a shared write stays queued: {e}");
        }
    }

    /// A revision's payload naming the session it was written in by its key (the same in
    /// every checkout, where the local id is not), so the session's digest holds it
    /// everywhere.
    fn session_payload(&self, session: Option<i64>) -> Result<Option<String>> {
        let Some(id) = session else {
            return Ok(None);
        };
        Ok(mem::session_by_id(self.store.conn(), id)?.map(|s| {
            serde_json::json!({"session": session_key(&s.author, &s.started_at, s.task.as_deref())})
                .to_string()
        }))
    }

    /// Adds (`added`) or removes a member of a topic page on the server — the page's
    /// members are the result of every checkout's additions and removals in the log's
    /// order, so each checkout applies them as the server ordered them, its own included
    /// — then pulls; an unreachable server queues it. Returns the members as they are (or,
    /// queued, will be) after it.
    pub(crate) fn team_topic(
        &mut self,
        topic: &str,
        member: &str,
        added: bool,
        opts: &WriteOptions,
        author: &str,
    ) -> Result<Vec<String>> {
        let payload = serde_json::to_string(&TopicChange {
            member: member.into(),
            added,
        })
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let op_id = match &opts.operation_id {
            Some(op) => format!("op:{op}"),
            None => new_op_id(&self.root),
        };
        let event = NewEvent {
            op_id: op_id.clone(),
            request_hash: loci_core::fingerprint::content_hash(
                format!("{topic}\n{payload}").as_bytes(),
            ),
            kind: "topic".into(),
            event_kind: "topic".into(),
            subject: topic.into(),
            page_kind: "topic".into(),
            expect_version: None,
            body: None,
            summary: opts.summary.clone(),
            author: author.into(),
            checkout: Some(format!("{}:{}", host(), self.root.display())),
            commit: super::memory::git_position(&self.root).1,
            written_at: crate::envelope::now_rfc3339(),
            payload: Some(payload),
        };
        let outcome = self
            .team_push()
            .and_then(|_| self.team_pull(None))
            .and_then(|_| {
                self.link()?.call(|t| t.write(&event)).map_err(|e| match e {
                    e @ TeamError::NotPermitted { .. } => not_written(topic, e),
                    e => e.into(),
                })
            });
        match outcome {
            Ok(WriteOutcome::Written { .. } | WriteOutcome::Replayed { .. }) => {
                self.team_pull(Some((&op_id, opts.session)))?;
            }
            Ok(WriteOutcome::OpReused) => {
                return Err(reused(opts.operation_id.as_deref().unwrap_or(&op_id)));
            }
            // Topics take no guard: the server never answers a conflict.
            Ok(WriteOutcome::Conflict { current }) => {
                return Err(conflict(topic, current, 0));
            }
            Err(EngineError::Team {
                kind: "team_unreachable",
                ..
            }) => {
                let json = serde_json::to_string(&event)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                self.store.write(|tx| replica::queue(tx, &op_id, &json))?;
                let conn = self.store.conn();
                let mut members = match mem::page_by_subject(conn, topic)? {
                    Some(p) => mem::topic_members(conn, p.page_id)?,
                    None => Vec::new(),
                };
                members.retain(|m| m != member);
                if added {
                    members.push(member.into());
                    members.sort();
                }
                return Ok(members);
            }
            Err(e) => return Err(e),
        }
        let conn = self.store.conn();
        Ok(match mem::page_by_subject(conn, topic)? {
            Some(p) => mem::topic_members(conn, p.page_id)?,
            None => Vec::new(),
        })
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

/// What applying one server event did to the replica.
enum Applied {
    /// It changed the replica; a revision names the one it made.
    Changed(Option<i64>),
    /// The replica had it already: this checkout wrote it first (a fact, a session, a
    /// dismissal), joined with it, or a pin left the page as it was.
    Known,
}

/// A server event's payload as `T`.
fn payload<T: serde::de::DeserializeOwned>(ev: &ServerEvent) -> loci_store::Result<T> {
    let json = ev.payload.as_deref().unwrap_or("null");
    serde_json::from_str(json).map_err(|e| {
        StoreError::Corrupt(format!(
            "team event {} ({}) has an unreadable payload: {e}",
            ev.seq, ev.kind
        ))
    })
}

/// The local id of the session a revision event names by key (`{"session": KEY}`), if
/// this replica has that session.
fn session_of(tx: &Transaction<'_>, ev: &ServerEvent) -> loci_store::Result<Option<i64>> {
    let Some(key) = ev
        .payload
        .as_deref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .and_then(|v| v["session"].as_str().map(str::to_string))
    else {
        return Ok(None);
    };
    Ok(mem::sessions(tx)?
        .into_iter()
        .find(|s| session_key(&s.author, &s.started_at, s.task.as_deref()) == key)
        .map(|s| s.session_id))
}

/// The revision of this store a join uploaded as `join:UID:vN`, if this store is the one
/// that joined with it.
fn joined_revision(tx: &Transaction<'_>, op_id: &str) -> loci_store::Result<Option<i64>> {
    let Some((uid, version)) = op_id
        .strip_prefix("join:")
        .and_then(|rest| rest.rsplit_once(":v"))
    else {
        return Ok(None);
    };
    let Ok(version) = version.parse::<i64>() else {
        return Ok(None);
    };
    let Some(page) = mem::page_by_uid(tx, uid)? else {
        return Ok(None);
    };
    Ok(mem::revisions_of(tx, page.page_id)?
        .into_iter()
        .find(|r| r.version == version)
        .map(|r| r.revision_id))
}

/// Applies one server event to the replica, once: a revision is appended to its page
/// (created as needed) with the author, summary and time the server holds, its claims
/// resolved and snapshotted against this checkout's map; a pin sets the page's pin; a
/// topic event adds or removes a member; a fact, a session or a dismissal is recorded
/// unless this replica has it (by its content hash, session key or finding key). An event
/// whose operation id is applied already changes nothing. Every event is recorded as
/// applied, which moves the high-water mark.
fn apply_event(
    tx: &Transaction<'_>,
    root: &std::path::Path,
    ev: &ServerEvent,
    session: Option<i64>,
) -> loci_store::Result<Applied> {
    if replica::applied(tx, &ev.op_id)?.is_some() {
        return Ok(Applied::Known);
    }
    let payload_json = serde_json::json!({
        "team": {"op_id": ev.op_id, "seq": ev.seq, "checkout": ev.checkout, "commit": ev.commit, "author": ev.author}
    })
    .to_string();
    let source_ref = format!("team:{}", ev.op_id);
    let event = |kind: &str, subject: &str, session: Option<i64>| {
        mem::insert_event(tx, kind, &source_ref, subject, Some(&payload_json), session)
    };
    let applied = match ev.kind.as_str() {
        "revision" => {
            if let Some(revision) = joined_revision(tx, &ev.op_id)? {
                replica::record_applied(tx, &ev.op_id, ev.seq, Some(revision))?;
                return Ok(Applied::Known);
            }
            let session = match session {
                Some(s) => Some(s),
                None => session_of(tx, ev)?,
            };
            let page = mem::ensure_page(tx, &ev.subject, &ev.page_kind)?;
            let version: i64 = tx
                .prepare_cached(
                    "SELECT ifnull(max(version), 0) + 1 FROM revisions WHERE page_id = ?1",
                )
                .ctx(|| "reading a page's version".into())?
                .query_row([page.page_id], |r| r.get(0))
                .ctx(|| "reading a page's version".into())?;
            if version != ev.version {
                // The numbering docs/team.md says a join with its own history makes: no
                // warning to the user.
                tracing::debug!(
                    "team event {} makes `{}` version {} on the server, version {version} here \
                     (this checkout's history of the page differs: it joined with its own)",
                    ev.seq,
                    ev.subject,
                    ev.version
                );
            }
            let (event_id, _) = event(&ev.event_kind, &ev.subject, session)?;
            let body = ev.body.as_deref().unwrap_or_default();
            let revision = mem::insert_revision_as(
                tx,
                &NewRevision {
                    page_id: page.page_id,
                    body,
                    summary: ev.summary.as_deref(),
                    author: &ev.author,
                    session_id: session,
                    event_id: Some(event_id),
                },
                version,
                &ev.written_at,
            )?;
            let snapshot = super::memory::subject_snapshot(tx, root, &ev.subject, &page.kind)?;
            super::memory::snapshot_revision(tx, &revision, &ev.subject, snapshot.as_ref(), None)?;
            replica::record_applied(tx, &ev.op_id, ev.seq, Some(revision.revision_id))?;
            return Ok(Applied::Changed(Some(revision.revision_id)));
        }
        "pin" | "unpin" => match mem::page_by_subject(tx, &ev.subject)? {
            Some(page) if page.pinned != (ev.kind == "pin") => {
                mem::set_pinned(tx, page.page_id, ev.kind == "pin")?;
                event(&ev.kind, &ev.subject, session)?;
                Applied::Changed(None)
            }
            _ => Applied::Known,
        },
        "topic" => {
            let t: TopicChange = payload(ev)?;
            let page = mem::ensure_page(tx, &ev.subject, "topic")?;
            if mem::set_topic_member(tx, page.page_id, &t.member, t.added)? {
                event("topic", &ev.subject, session)?;
                Applied::Changed(None)
            } else {
                Applied::Known
            }
        }
        "fact" => {
            let f: ExportedFact = payload(ev)?;
            let hash = fact_hash(&f);
            let known = mem::facts(tx)?
                .iter()
                .any(|x| fact_hash(&ExportedFact::from(x)) == hash);
            if known {
                Applied::Known
            } else {
                mem::insert_fact_as(
                    tx,
                    &mem::Fact {
                        fact_id: 0,
                        claim: f.claim,
                        command: f.command,
                        expect_output: f.expect_output,
                        expect_exit: f.expect_exit,
                        author: f.author,
                        created_at: f.created_at,
                        last_status: None,
                        last_run_at: None,
                    },
                )?;
                event("fact", "", None)?;
                Applied::Changed(None)
            }
        }
        "session" => {
            let s: ExportedSession = payload(ev)?;
            let here = mem::sessions(tx)?
                .into_iter()
                .find(|h| session_key(&h.author, &h.started_at, h.task.as_deref()) == s.key);
            let digest =
                || serde_json::to_string(&s.digest).map_err(|e| StoreError::Corrupt(e.to_string()));
            match here {
                None => {
                    let id = mem::insert_session_as(
                        tx,
                        &s.new_row(s.ended_at.is_some().then(digest).transpose()?),
                    )?;
                    event(&ev.event_kind, "", Some(id))?;
                    Applied::Changed(None)
                }
                Some(h) if h.ended_at.is_none() && s.ended_at.is_some() => {
                    mem::end_session_as(
                        tx,
                        h.session_id,
                        s.ended_at.as_deref().unwrap_or_default(),
                        s.summary.as_deref(),
                        &digest()?,
                    )?;
                    event(&ev.event_kind, "", Some(h.session_id))?;
                    Applied::Changed(None)
                }
                Some(_) => Applied::Known,
            }
        }
        "dismissal" => {
            let d: ExportedDismissal = payload(ev)?;
            if !dismissal_words_known(&d) {
                tracing::warn!(
                    "team event {} dismisses a finding of a kind this loci does not know \
                     (`{}`, `{}`): skipped; upgrade loci",
                    ev.seq,
                    d.origin,
                    d.kind
                );
                Applied::Known
            } else if record_dismissal(tx, &d)? {
                event("resolve", &d.subject, None)?;
                Applied::Changed(None)
            } else {
                Applied::Known
            }
        }
        other => {
            return Err(StoreError::Corrupt(format!(
                "team event {} has an unknown kind `{other}` (a newer loci wrote it?)",
                ev.seq
            )));
        }
    };
    replica::record_applied(tx, &ev.op_id, ev.seq, None)?;
    Ok(applied)
}

/// A topic event's payload: the member, and whether it was added or removed.
#[derive(Debug, Serialize, serde::Deserialize)]
struct TopicChange {
    member: String,
    added: bool,
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

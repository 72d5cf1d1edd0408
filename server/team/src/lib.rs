//! Team memory on PostgreSQL: the server's schema and its numbered migrations, authored
//! writes with the revision guard, and the append-only event log that every checkout's
//! SQLite replica pulls past its high-water mark.
//!
//! Architecture invariant: no SQLite and no engine types here. The engine turns its
//! writes into [`NewEvent`]s and applies [`ServerEvent`]s to its replica
//! (`loci_engine::memory::team`); this crate only speaks PostgreSQL, through the `postgres` crate
//! (tokio-postgres' blocking client) and rustls. Nothing here logs or returns a password.

mod url;

use std::sync::Arc;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::{Client, NoTls};
use serde::{Deserialize, Serialize};

pub use url::{TeamUrl, UrlSource};

/// `Result` with [`TeamError`].
pub type Result<T, E = TeamError> = std::result::Result<T, E>;

/// What can go wrong talking to the team server.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// The `[team]` settings are wrong (a malformed URL, a password in the file).
    #[error("team configuration: {0}")]
    Config(String),
    /// The server cannot be reached (refused, timed out, the connection dropped): writes
    /// queue locally until it returns.
    #[error("the team server {server} is unreachable: {message}")]
    Unreachable {
        /// The server, without a password.
        server: String,
        /// Why, in words.
        message: String,
    },
    /// The server has no loci schema yet.
    #[error("the team server {server} has no loci schema yet: run `loci team init`")]
    NotInitialized {
        /// The server, without a password.
        server: String,
    },
    /// The server's schema is newer than this binary: refused rather than misread.
    #[error(
        "the team server {server} has loci schema version {found}, newer than this loci \
         understands ({supported}): upgrade loci on this machine (nothing was changed)"
    )]
    NewerSchema {
        /// The server, without a password.
        server: String,
        /// The server's schema version.
        found: i64,
        /// This binary's.
        supported: i64,
    },
    /// The server's roles do not let this connection's role write (SQL state 42501,
    /// `insufficient_privilege`): a role set up to only read (docs/team.md, Roles).
    #[error(
        "the team server {server} refused {what} for lack of privilege ({message}): the \
         URL's role may not do it (docs/team.md, Roles: a reader role may only read)"
    )]
    NotPermitted {
        /// The server, without a password (it names the role).
        server: String,
        /// What was being done.
        what: String,
        /// The server's message.
        message: String,
    },
    /// The server refused a statement (a constraint, a trigger).
    #[error("the team server {server} refused {what}: {message}")]
    Server {
        /// The server, without a password.
        server: String,
        /// What was being done.
        what: String,
        /// The server's message.
        message: String,
    },
}

impl TeamError {
    /// True when the server could not be reached (the write should queue).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, TeamError::Unreachable { .. })
    }

    /// True when the server's roles do not let this role write.
    pub fn is_not_permitted(&self) -> bool {
        matches!(self, TeamError::NotPermitted { .. })
    }
}

/// One server schema step: numbered from 1 without gaps, never edited once shipped.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    /// Its number.
    pub version: i64,
    /// A short name.
    pub name: &'static str,
    /// The SQL, run as one batch inside the migration's transaction.
    pub sql: &'static str,
}

/// Every server migration this binary knows, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "events",
        sql: include_str!("migrations/0001_events.sql"),
    },
    Migration {
        version: 2,
        name: "all_authored",
        sql: include_str!("migrations/0002_all_authored.sql"),
    },
];

/// The server schema version this binary writes.
pub const SERVER_SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// The advisory lock every writer takes: sequence numbers then commit in order, so a
/// replica that read up to `seq` N never misses a row numbered below N.
const WRITE_LOCK: i64 = 0x6c6f_6369; // "loci"

/// The event kinds about a page: they take the revision guard and move (a revision) or
/// keep (the others) the page's head version in `loci.pages`. The other kinds (`fact`,
/// `session`, `dismissal`) belong to no page: no guard, version 0.
pub const PAGE_KINDS: &[&str] = &["revision", "pin", "unpin", "topic"];

/// The channel a write notifies, with its `seq` as the payload.
pub const CHANNEL: &str = "loci_events";

/// One authored write, as sent to the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewEvent {
    /// Operation id, unique across machines: a second write under it is a replay.
    pub op_id: String,
    /// A hash of the request, so a reused id with a different request is told apart.
    pub request_hash: String,
    /// `revision`, `pin`, `unpin` (of a page), `topic` (a member added to or removed from
    /// a topic page), `fact`, `session` or `dismissal` (see [`PAGE_KINDS`]).
    pub kind: String,
    /// What the checkout calls the write (`remember`, `decision`, `lesson`, `rollback`,
    /// `join`, `pin`, `topic`, `fact`, `session_begin`, `session_end`, `resolve`).
    pub event_kind: String,
    /// The page's subject.
    pub subject: String,
    /// The page's kind (`file`, `folder`, `root`, `topic`, `decisions`, `lessons`).
    pub page_kind: String,
    /// The revision guard: the page's version the write expects (0: no page yet).
    pub expect_version: Option<i64>,
    /// A revision's markdown.
    pub body: Option<String>,
    /// A revision's one-line summary.
    pub summary: Option<String>,
    /// `human:NAME`, `agent:NAME`, or a model name.
    pub author: String,
    /// Which checkout wrote it (a host and path).
    pub checkout: Option<String>,
    /// The commit the checkout was at.
    pub commit: Option<String>,
    /// When it was written (RFC 3339; a joined revision keeps its own time).
    pub written_at: String,
    /// JSON: the content of an event that is not a revision (a topic member, a fact, a
    /// session, a dismissal), and a revision's session key. Absent in writes queued by
    /// a loci before schema 2.
    #[serde(default)]
    pub payload: Option<String>,
}

/// What the server did with a [`NewEvent`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Stored as event `seq`; the page is now at `version`.
    Written {
        /// The event's sequence number.
        seq: i64,
        /// The page's version after it.
        version: i64,
    },
    /// The operation id was stored before with the same request: nothing was written.
    Replayed {
        /// The earlier event's sequence number.
        seq: i64,
        /// The version it made.
        version: i64,
    },
    /// The page is not at the expected version: nothing was written.
    Conflict {
        /// The page's version on the server.
        current: i64,
    },
    /// The operation id was used before for a different request.
    OpReused,
}

/// One event of the server's log, as a replica applies it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerEvent {
    /// Sequence number (the high-water mark).
    pub seq: i64,
    /// Operation id.
    pub op_id: String,
    /// `revision`, `pin`, `unpin`.
    pub kind: String,
    /// See [`NewEvent::event_kind`].
    pub event_kind: String,
    /// The page's subject.
    pub subject: String,
    /// The page's kind.
    pub page_kind: String,
    /// The page version it made (a pin leaves it).
    pub version: i64,
    /// A revision's markdown.
    pub body: Option<String>,
    /// A revision's summary.
    pub summary: Option<String>,
    /// Its author.
    pub author: String,
    /// The checkout that wrote it.
    pub checkout: Option<String>,
    /// The commit that checkout was at.
    pub commit: Option<String>,
    /// When it was written (RFC 3339).
    pub written_at: String,
    /// See [`NewEvent::payload`].
    #[serde(default)]
    pub payload: Option<String>,
}

/// What `loci team init` did.
#[derive(Clone, Debug, Serialize)]
pub struct InitReport {
    /// The server, without a password.
    pub server: String,
    /// The schema version before.
    pub from: i64,
    /// The schema version now.
    pub to: i64,
}

/// The server's side of `loci team status`.
#[derive(Clone, Debug, Serialize)]
pub struct ServerState {
    /// The schema version.
    pub schema: i64,
    /// The highest event sequence number.
    pub head: i64,
    /// Events in the log.
    pub events: i64,
    /// Pages with a head version.
    pub pages: i64,
    /// Whether this connection's role may append to the log (false: it may only read).
    pub writable: bool,
}

/// A connection to the team server.
pub struct Team {
    client: Client,
    server: String,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Team({})", self.server)
    }
}

/// TLS for `sslmode=prefer`/`require`: rustls with the ring provider, Mozilla's roots
/// plus the certificates of `PGSSLROOTCERT` (a managed server's own CA).
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = std::env::var_os("PGSSLROOTCERT") {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let certs = CertificateDer::pem_file_iter(&path).map_err(|e| {
            TeamError::Config(format!("PGSSLROOTCERT {}: {e}", path.to_string_lossy()))
        })?;
        for cert in certs {
            let cert = cert.map_err(|e| {
                TeamError::Config(format!("PGSSLROOTCERT {}: {e}", path.to_string_lossy()))
            })?;
            roots
                .add(cert)
                .map_err(|e| TeamError::Config(format!("PGSSLROOTCERT: {e}")))?;
        }
    }
    // ring, not aws-lc-rs: no cmake/NASM build. rustls 0.23.48 deprecates ring's
    // provider for lacking post-quantum key exchange; the classical suites it offers are
    // what PostgreSQL servers negotiate today.
    #[allow(deprecated)]
    let provider = rustls::crypto::ring::default_provider();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| TeamError::Config(format!("tls: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl Team {
    /// Connects (TLS as the URL's `sslmode` says: `disable` never, `prefer` when the
    /// server offers it, `require` always).
    pub fn connect(url: &TeamUrl) -> Result<Team> {
        let server = url.to_string();
        let config = url.config();
        let client = if config.get_ssl_mode() == postgres::config::SslMode::Disable {
            config.connect(NoTls)
        } else {
            config.connect(tls()?)
        }
        .map_err(|e| classify(&server, "the connection", e))?;
        Ok(Team { client, server })
    }

    /// The server, without a password.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Whether the connection has dropped.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    fn err(&self, what: &str) -> impl Fn(postgres::Error) -> TeamError + '_ {
        let what = what.to_string();
        move |e| classify(&self.server, &what, e)
    }

    /// The server's schema version: 0 when it has none.
    pub fn schema_version(&mut self) -> Result<i64> {
        let row = self
            .client
            .query_one(
                "SELECT to_regclass('loci.schema_migrations') IS NOT NULL",
                &[],
            )
            .map_err(self.err("reading the schema version"))?;
        if !row.get::<_, bool>(0) {
            return Ok(0);
        }
        let row = self
            .client
            .query_one(
                "SELECT coalesce(max(version), 0)::bigint FROM loci.schema_migrations",
                &[],
            )
            .map_err(self.err("reading the schema version"))?;
        Ok(row.get(0))
    }

    /// Fails unless the server's schema is this binary's: [`TeamError::NotInitialized`]
    /// without one, [`TeamError::NewerSchema`] for a newer one, and for an older one the
    /// same advice as none (`loci team init` migrates it).
    pub fn check_schema(&mut self) -> Result<()> {
        let found = self.schema_version()?;
        if found > SERVER_SCHEMA_VERSION {
            return Err(TeamError::NewerSchema {
                server: self.server.clone(),
                found,
                supported: SERVER_SCHEMA_VERSION,
            });
        }
        if found < SERVER_SCHEMA_VERSION {
            return Err(TeamError::NotInitialized {
                server: self.server.clone(),
            });
        }
        Ok(())
    }

    /// Creates or migrates the schema: the pending migrations in one transaction (with
    /// their rows in `loci.schema_migrations`), under a lock so two `init`s take turns. A
    /// newer schema is refused untouched.
    pub fn init(&mut self) -> Result<InitReport> {
        let server = self.server.clone();
        let err = |what: &'static str| {
            let server = server.clone();
            move |e| classify(&server, what, e)
        };
        let mut tx = self.client.transaction().map_err(err("a transaction"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&(WRITE_LOCK + 1)])
            .map_err(err("the migration lock"))?;
        tx.batch_execute(
            "CREATE SCHEMA IF NOT EXISTS loci;
             CREATE TABLE IF NOT EXISTS loci.schema_migrations (
                 version     bigint PRIMARY KEY,
                 name        text NOT NULL,
                 applied_at  timestamptz NOT NULL DEFAULT now()
             );",
        )
        .map_err(err("creating the schema"))?;
        let from: i64 = tx
            .query_one(
                "SELECT coalesce(max(version), 0)::bigint FROM loci.schema_migrations",
                &[],
            )
            .map_err(err("reading the schema version"))?
            .get(0);
        if from > SERVER_SCHEMA_VERSION {
            return Err(TeamError::NewerSchema {
                server,
                found: from,
                supported: SERVER_SCHEMA_VERSION,
            });
        }
        for m in MIGRATIONS.iter().filter(|m| m.version > from) {
            tx.batch_execute(m.sql).map_err(err("a migration"))?;
            tx.execute(
                "INSERT INTO loci.schema_migrations(version, name) VALUES ($1, $2)",
                &[&m.version, &m.name],
            )
            .map_err(err("recording a migration"))?;
        }
        tx.commit().map_err(err("committing the migrations"))?;
        Ok(InitReport {
            server,
            from,
            to: SERVER_SCHEMA_VERSION,
        })
    }

    /// The server's log head and counts.
    pub fn state(&mut self) -> Result<ServerState> {
        let schema = self.schema_version()?;
        if schema == 0 {
            return Ok(ServerState {
                schema,
                head: 0,
                events: 0,
                pages: 0,
                writable: false,
            });
        }
        let row = self
            .client
            .query_one(
                "SELECT coalesce(max(seq), 0)::bigint, count(*)::bigint,
                        (SELECT count(*)::bigint FROM loci.pages),
                        has_table_privilege('loci.events', 'INSERT')
                   FROM loci.events",
                &[],
            )
            .map_err(self.err("reading the log head"))?;
        Ok(ServerState {
            schema,
            head: row.get(0),
            events: row.get(1),
            pages: row.get(2),
            writable: row.get(3),
        })
    }

    /// Stores one write in one transaction: a repeat of its operation id is a replay (or
    /// [`WriteOutcome::OpReused`] for another request), an expected version that is not
    /// the page's is a [`WriteOutcome::Conflict`]; otherwise the event is appended, the
    /// page's head advances (a revision: version + 1), and listeners are notified.
    pub fn write(&mut self, w: &NewEvent) -> Result<WriteOutcome> {
        let mut outcomes = self.write_all(std::slice::from_ref(w))?;
        Ok(outcomes.pop().expect("one outcome per write"))
    }

    /// Stores `writes` in order in one transaction, each as [`Team::write`] stores one:
    /// all of them, or — at the first [`WriteOutcome::Conflict`] or
    /// [`WriteOutcome::OpReused`] — none (the transaction is rolled back, and nobody is
    /// notified). Returns the outcomes up to and including the first that stopped it.
    pub fn write_all(&mut self, writes: &[NewEvent]) -> Result<Vec<WriteOutcome>> {
        let server = self.server.clone();
        let err = |e| classify(&server, "a write", e);
        let mut tx = self.client.transaction().map_err(err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
            .map_err(err)?;
        let mut outcomes = Vec::with_capacity(writes.len());
        for w in writes {
            let outcome = write_in(&mut tx, &server, w)?;
            let stop = matches!(
                outcome,
                WriteOutcome::Conflict { .. } | WriteOutcome::OpReused
            );
            outcomes.push(outcome);
            if stop {
                // Dropped: rolled back.
                return Ok(outcomes);
            }
        }
        tx.commit().map_err(err)?;
        Ok(outcomes)
    }

    /// The head of a page on the server: its version and the body of its latest
    /// revision, or `None` when the server has no revision of it.
    pub fn head(&mut self, subject: &str) -> Result<Option<(i64, String)>> {
        let row = self
            .client
            .query_opt(
                "SELECT version, body FROM loci.events
                  WHERE subject = $1 AND kind = 'revision' ORDER BY seq DESC LIMIT 1",
                &[&subject],
            )
            .map_err(self.err("reading a page's head"))?;
        Ok(row.map(|r| (i64::from(r.get::<_, i32>(0)), r.get(1))))
    }

    /// The events of the given kinds that carry no body (pins, topic members, facts,
    /// sessions, dismissals), in log order: `(kind, subject, payload)`. What a join
    /// compares its store with, so it uploads only what the team does not have.
    pub fn shared_events(
        &mut self,
        kinds: &[&str],
    ) -> Result<Vec<(String, String, Option<String>)>> {
        let kinds: Vec<String> = kinds.iter().map(|k| (*k).to_string()).collect();
        let rows = self
            .client
            .query(
                "SELECT kind, subject, payload FROM loci.events
                  WHERE kind = ANY($1) ORDER BY seq",
                &[&kinds],
            )
            .map_err(self.err("reading the log"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
    }

    /// Up to `limit` events past `after`, in order.
    pub fn events_after(&mut self, after: i64, limit: i64) -> Result<Vec<ServerEvent>> {
        let rows = self
            .client
            .query(
                "SELECT seq, op_id, kind, event_kind, subject, page_kind, version, body, summary,
                        author, checkout, commit_hash, written_at, payload
                   FROM loci.events WHERE seq > $1 ORDER BY seq LIMIT $2",
                &[&after, &limit],
            )
            .map_err(self.err("reading the log"))?;
        Ok(rows
            .iter()
            .map(|r| ServerEvent {
                seq: r.get(0),
                op_id: r.get(1),
                kind: r.get(2),
                event_kind: r.get(3),
                subject: r.get(4),
                page_kind: r.get(5),
                version: i64::from(r.get::<_, i32>(6)),
                body: r.get(7),
                summary: r.get(8),
                author: r.get(9),
                checkout: r.get(10),
                commit: r.get(11),
                written_at: r.get(12),
                payload: r.get(13),
            })
            .collect())
    }

    /// The pages whose subject starts with `prefix` (a log's entries, `decision:`), each
    /// with the operation id of its first revision: `(subject, op_id)`, by subject.
    pub fn first_ops(&mut self, prefix: &str) -> Result<Vec<(String, String)>> {
        let rows = self
            .client
            .query(
                "SELECT DISTINCT ON (subject) subject, op_id FROM loci.events
                  WHERE kind = 'revision' AND starts_with(subject, $1)
                  ORDER BY subject, seq",
                &[&prefix],
            )
            .map_err(self.err("reading the log's entries"))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Subscribes this connection to [`CHANNEL`].
    pub fn listen(&mut self) -> Result<()> {
        self.client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .map_err(self.err("listening"))
    }

    /// Waits up to `timeout` for a notification on a listening connection; true when one
    /// (or several) arrived. An error means the connection dropped.
    pub fn wait(&mut self, timeout: Duration) -> Result<bool> {
        use postgres::fallible_iterator::FallibleIterator;
        let server = self.server.clone();
        let fail = |e| classify(&server, "waiting for events", e);
        let mut notes = self.client.notifications();
        if notes.timeout_iter(timeout).next().map_err(fail)?.is_none() {
            return Ok(false);
        }
        // Drain what arrived with it.
        let mut rest = notes.iter();
        while rest.next().map_err(fail)?.is_some() {}
        Ok(true)
    }
}

/// One write inside a writer's transaction (the advisory lock taken): see
/// [`Team::write`].
fn write_in(
    tx: &mut postgres::Transaction<'_>,
    server: &str,
    w: &NewEvent,
) -> Result<WriteOutcome> {
    let err = |e| classify(server, "a write", e);
    if let Some(row) = tx
        .query_opt(
            "SELECT seq, version, request_hash FROM loci.events WHERE op_id = $1",
            &[&w.op_id],
        )
        .map_err(err)?
    {
        let hash: String = row.get(2);
        if hash != w.request_hash {
            return Ok(WriteOutcome::OpReused);
        }
        return Ok(WriteOutcome::Replayed {
            seq: row.get(0),
            version: i64::from(row.get::<_, i32>(1)),
        });
    }
    let paged = PAGE_KINDS.contains(&w.kind.as_str());
    let current: i64 = if !paged {
        0
    } else {
        tx.query_opt(
            "SELECT version FROM loci.pages WHERE subject = $1",
            &[&w.subject],
        )
        .map_err(err)?
        .map_or(0, |r| i64::from(r.get::<_, i32>(0)))
    };
    if let Some(expected) = w.expect_version
        && paged
        && expected != current
    {
        return Ok(WriteOutcome::Conflict { current });
    }
    let version = if w.kind == "revision" {
        current + 1
    } else {
        current
    };
    let version32 = i32::try_from(version).map_err(|_| TeamError::Server {
        server: server.to_string(),
        what: "a write".into(),
        message: format!("version {version} out of range"),
    })?;
    let seq: i64 = tx
        .query_one(
            "INSERT INTO loci.events(op_id, request_hash, kind, event_kind, subject,
                 page_kind, version, body, summary, author, checkout, commit_hash, written_at,
                 payload)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
             RETURNING seq",
            &[
                &w.op_id,
                &w.request_hash,
                &w.kind,
                &w.event_kind,
                &w.subject,
                &w.page_kind,
                &version32,
                &w.body,
                &w.summary,
                &w.author,
                &w.checkout,
                &w.commit,
                &w.written_at,
                &w.payload,
            ],
        )
        .map_err(err)?
        .get(0);
    if paged {
        tx.execute(
            "INSERT INTO loci.pages(subject, kind, version, head_seq) VALUES ($1, $2, $3, $4)
             ON CONFLICT (subject) DO UPDATE SET version = EXCLUDED.version, head_seq = EXCLUDED.head_seq",
            &[&w.subject, &w.page_kind, &version32, &seq],
        )
        .map_err(err)?;
    }
    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &seq.to_string()])
        .map_err(err)?;
    Ok(WriteOutcome::Written { seq, version })
}

/// A server error (SQL state) is [`TeamError::Server`] (or a schema state); anything else
/// — refused, timed out, closed — is [`TeamError::Unreachable`], and so are the states
/// of a server going away: class 08 (connection exception) and 57P01–57P03 (shut down by
/// an administrator or a crash, not accepting connections yet): a server stopped in the
/// middle of a write is one to queue the write for, not one that refused it.
fn classify(server: &str, what: &str, e: postgres::Error) -> TeamError {
    let going_away = e.as_db_error().is_some_and(|db| {
        let code = db.code().code();
        code.starts_with("08") || ["57P01", "57P02", "57P03"].contains(&code)
    });
    if going_away {
        return TeamError::Unreachable {
            server: server.to_string(),
            message: e
                .as_db_error()
                .map_or_else(|| e.to_string(), |db| db.message().to_string()),
        };
    }
    match e.as_db_error() {
        Some(db) if *db.code() == SqlState::UNDEFINED_TABLE => TeamError::NotInitialized {
            server: server.to_string(),
        },
        Some(db) if *db.code() == SqlState::INSUFFICIENT_PRIVILEGE => TeamError::NotPermitted {
            server: server.to_string(),
            what: what.to_string(),
            message: db.message().to_string(),
        },
        Some(db) => TeamError::Server {
            server: server.to_string(),
            what: what.to_string(),
            message: db.message().to_string(),
        },
        None => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                message = format!("{message}: {s}");
                source = s.source();
            }
            // tokio-postgres' words name the failure, not the remedy.
            if message.contains("password missing") {
                message.push_str(
                    " (the server asks for a password and none was given: set PGPASSWORD, \
                     or PGPASSFILE or ~/.pgpass, or a service file; never the URL in \
                     .loci/config.toml — docs/team.md)",
                );
            }
            // rustls' words name the failure, not the remedy.
            if message.contains("invalid peer certificate") {
                message.push_str(
                    " (the server's certificate was not verified: loci trusts Mozilla's \
                     roots and the CA certificates of the file PGSSLROOTCERT names; set it to \
                     the server's CA certificate in PEM, and check that the URL's host is a \
                     name or address the certificate holds)",
                );
            }
            TeamError::Unreachable {
                server: server.to_string(),
                message,
            }
        }
    }
}

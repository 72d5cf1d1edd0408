//! Requests of memory's operations: reading pages (`show`, `history`, `asof`,
//! `memory_list`), sessions (`session_begin`, `session_end`, `recap`), the writes
//! (`remember`, `decide`, `learn`, `confirm`, `pin`, `rollback`, `fact_add`) and page
//! synthesis (`synthesize`).

use super::{defaults, request};
use crate::memory::synthesis::Targets;
use crate::memory::{AsOf, History, PageEntry, SessionView, Shown, Written};
use crate::store_types::{Fact, Page, Session};
use crate::{Envelope, Result, Workspace};

request! {
    /// Arguments of `show`.
    ShowArgs {
        /// A path, `.`, `topic:NAME`, `decisions`, `lessons`, `decision:N` or `lesson:N`.
        subject: String,
        /// A version number (unset: the current revision).
        #[serde(default)]
        version: Option<i64>,
    }
}

impl ShowArgs {
    /// [`Workspace::show`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Shown>> {
        ws.show(&self.subject, self.version)
    }
}

request! {
    /// Arguments of `history`.
    HistoryArgs {
        /// A path, `.`, `topic:NAME`, `decisions` or `lessons`.
        subject: String,
    }
}

impl HistoryArgs {
    /// [`Workspace::history`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<History>> {
        ws.history(&self.subject)
    }
}

request! {
    /// Arguments of `asof`.
    AsofArgs {
        /// A date (`2026-11-01`: the end of that day, UTC) or RFC 3339 time.
        date: String,
        /// Also return this subject's revision at that moment.
        #[serde(default)]
        show: Option<String>,
    }
}

impl AsofArgs {
    /// [`Workspace::asof`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<AsOf>> {
        ws.asof(&self.date, self.show.as_deref())
    }
}

request! {
    /// Arguments of `recap`.
    RecapArgs {
        /// How many sessions, newest first.
        #[serde(default = "defaults::recap")]
        n: u32,
    }
}

impl RecapArgs {
    /// [`Workspace::recap`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Vec<SessionView>>> {
        ws.recap(self.n)
    }
}

request! {
    /// Arguments of `memory_list`.
    MemoryListArgs {
        /// Only pages whose subject is this or lies under it (`src/auth`, `topic:`,
        /// `decision:`, `lesson:`); empty: all.
        #[serde(default)]
        prefix: String,
        /// Only these kinds: `file`, `folder`, `root`, `topic`, `decision`, `lesson` (empty: all).
        #[serde(default)]
        kinds: Vec<String>,
        /// Pages to list (0: all); `limits.omitted` counts the rest.
        #[serde(default = "defaults::memory_limit")]
        limit: u32,
    }
}

impl MemoryListArgs {
    /// [`Workspace::memory_list`].
    pub fn run(&self, ws: &Workspace) -> Result<Envelope<Vec<PageEntry>>> {
        ws.memory_list(&self.prefix, &self.kinds, self.limit)
    }
}

request! {
    /// Arguments of `remember`.
    RememberArgs {
        /// A path, `.`, `topic:NAME`, `decision:N` or `lesson:N`.
        subject: String,
        /// The new body (markdown); replaces the current revision, history is kept.
        /// Backticked paths and `symbols()` become checked claims.
        body: String,
    } + write
}

impl RememberArgs {
    /// [`Workspace::remember`]; `default_author` as for `write_options`.
    pub fn run(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
    ) -> Result<Envelope<Written>> {
        ws.remember(
            &self.subject,
            &self.body,
            &self.write_options(default_author),
        )
    }

    /// [`Workspace::remember_append`]: the body added to the page instead of replacing it.
    pub fn run_append(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
    ) -> Result<Envelope<Written>> {
        ws.remember_append(
            &self.subject,
            &self.body,
            &self.write_options(default_author),
        )
    }
}

request! {
    /// Arguments of `decide`.
    DecideArgs {
        /// The decision and its reason, in a sentence or two.
        text: String,
        /// The file, folder or topic it is about.
        #[serde(default)]
        subject: Option<String>,
    } + write
}

impl DecideArgs {
    /// [`Workspace::decide`]; `default_author` as for `write_options`.
    pub fn run(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
    ) -> Result<Envelope<Written>> {
        ws.decide(
            &self.text,
            self.subject.as_deref(),
            &self.write_options(default_author),
        )
    }
}

request! {
    /// Arguments of `learn`.
    LearnArgs {
        /// What went wrong or surprised, and what to do instead.
        text: String,
        /// The file, folder or topic it is about.
        #[serde(default)]
        subject: Option<String>,
    } + write
}

impl LearnArgs {
    /// [`Workspace::learn`]; `default_author` as for `write_options`.
    pub fn run(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
    ) -> Result<Envelope<Written>> {
        ws.learn(
            &self.text,
            self.subject.as_deref(),
            &self.write_options(default_author),
        )
    }
}

request! {
    /// Arguments of `confirm`.
    ConfirmArgs {
        /// The page whose current revision is still true.
        subject: String,
    } + write
}

impl ConfirmArgs {
    /// [`Workspace::confirm`]; `default_author` as for `write_options`.
    pub fn run(&self, ws: &mut Workspace, default_author: Option<&str>) -> Result<Envelope<Shown>> {
        ws.confirm(&self.subject, &self.write_options(default_author))
    }
}

request! {
    /// Arguments of `pin`.
    PinArgs {
        /// The page.
        subject: String,
        /// `true` pins (never marked stale); `false` unpins.
        #[serde(default = "defaults::yes")]
        pinned: bool,
    } + write
}

impl PinArgs {
    /// [`Workspace::pin`]; `default_author` as for `write_options`.
    pub fn run(&self, ws: &mut Workspace, default_author: Option<&str>) -> Result<Envelope<Page>> {
        ws.pin(
            &self.subject,
            self.pinned,
            &self.write_options(default_author),
        )
    }
}

request! {
    /// Arguments of `rollback`.
    RollbackArgs {
        /// The page.
        subject: String,
        /// The version whose body is published again.
        version: i64,
    } + write
}

impl RollbackArgs {
    /// [`Workspace::rollback`]; `default_author` as for `write_options`.
    pub fn run(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
    ) -> Result<Envelope<Written>> {
        ws.rollback(
            &self.subject,
            self.version,
            &self.write_options(default_author),
        )
    }
}

request! {
    /// Arguments of `fact_add`.
    FactAddArgs {
        /// What the command demonstrates.
        claim: String,
        /// The command line (split with shell word rules, never run by a shell).
        cmd: String,
        /// Expected substring of its output.
        #[serde(default)]
        expect_output: Option<String>,
        /// Expected exit code.
        #[serde(default)]
        expect_exit: Option<i64>,
    } + write
}

impl FactAddArgs {
    /// [`Workspace::fact_add`]; `default_author` as for `write_options`.
    pub fn run(&self, ws: &mut Workspace, default_author: Option<&str>) -> Result<Envelope<Fact>> {
        ws.fact_add(
            &self.claim,
            &self.cmd,
            self.expect_output.as_deref(),
            self.expect_exit,
            &self.write_options(default_author),
        )
    }
}

request! {
    /// Arguments of `session_begin`.
    SessionBeginArgs {
        /// What the session sets out to do.
        #[serde(default)]
        task: Option<String>,
        /// Who runs it (unset: `$LOCI_AUTHOR`, else `agent:<client name>`).
        #[serde(default)]
        author: Option<String>,
    }
}

impl SessionBeginArgs {
    /// [`Workspace::session_begin`]; the author, when the request names none, is
    /// `default_author`, else the engine's.
    pub fn run(
        &self,
        ws: &mut Workspace,
        default_author: Option<&str>,
    ) -> Result<Envelope<Session>> {
        ws.session_begin(
            self.task.as_deref(),
            self.author.as_deref().or(default_author),
        )
    }
}

request! {
    /// Arguments of `session_end`.
    SessionEndArgs {
        /// `session_id` from `session_begin`.
        session: i64,
        /// What was done, for the next session's `recap`.
        #[serde(default)]
        summary: Option<String>,
    }
}

impl SessionEndArgs {
    /// [`Workspace::session_end`].
    pub fn run(&self, ws: &mut Workspace) -> Result<Envelope<SessionView>> {
        ws.session_end(self.session, self.summary.as_deref())
    }
}

request! {
    /// Arguments of `synthesize`.
    SynthesizeArgs {
        /// Files or folders (empty: the plan's pages).
        #[serde(default)]
        paths: Vec<String>,
        /// Return the prompts; run nothing.
        #[serde(default)]
        dry_run: bool,
        /// `session_id` from `session_begin`.
        #[serde(default)]
        session: Option<i64>,
    }
}

impl SynthesizeArgs {
    /// The pages to write: `paths`, else the plan's. A dry run is
    /// [`Workspace::synthesis_prompts`], a run [`Workspace::synthesize`] (with progress,
    /// which each door reports its own way).
    pub fn targets(&self) -> Targets {
        if self.paths.is_empty() {
            Targets::Pending
        } else {
            Targets::Paths(self.paths.clone())
        }
    }
}

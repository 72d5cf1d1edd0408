//! Page synthesis (the design's synthesis layer, seed irag: "the model writes prose, SQL
//! does the bookkeeping"): loci decides which pages are missing or behind the code
//! ([`Workspace::synthesis_plan`]), builds each prompt from the map and memory within a
//! token budget ([`Workspace::synthesis_prompt`]), hands it to the command the user named
//! in `[synthesis] command` ([`crate::config::SynthesisConfig`]) and stores the markdown it
//! answers as a revision authored `llm:MODEL` with an `llm_runs` row
//! ([`Workspace::synthesize`]). loci never calls a model on its own: without a command,
//! every entry point here says how to set one and does nothing.
//!
//! Rules:
//! - The command is split by POSIX shell rules (`shell-words`, never run by a shell), run
//!   from the workspace root in a process group of its own, the prompt on its stdin. At the
//!   time limit, and after it exits, the whole group is killed: nothing it started outlives
//!   the run. Stdout is read up to [`MAX_MEMORY_TEXT_BYTES`] + 1 bytes (more is refused),
//!   stderr up to [`STDERR_CAP`].
//! - A prompt is within `[synthesis] max_tokens` (tokens ≈ characters / 4, as `context`
//!   estimates). Sections are kept in priority order (task, contradictions, decisions and
//!   lessons, current page, changed code, diff, outline), each cut at a line when the rest
//!   does not fit, and the cut is said.
//! - Secrets never enter a prompt: a section in which the `[secrets]` rules find a token is
//!   withheld whole, and the prompt says so (the rule, never the text).
//! - Trusted like none: the answer goes through the write path of `remember` (claims
//!   extracted, snapshotted and checked at once, a claim naming nothing lands with its
//!   contradiction), an answer holding a credential is refused, a failed, timed-out or
//!   empty run writes nothing, and `context` ranks model-written text
//!   [`MODEL_WRITTEN_POINTS`] below human-written text of equal relevance.

mod command;
mod prompt;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use loci_store::memory::{self as mem, Page, Revision};
use loci_store::synthesis as syn;
use serde::Serialize;

use super::guard::MAX_MEMORY_TEXT_BYTES;
use super::memory::WriteOptions;
use crate::audit::audit::{StaleReason, current_staleness};
use crate::context::context::estimate_tokens;
use crate::{EngineError, Envelope, Result, Workspace};

use self::command::{Ended, run_command};
use self::prompt::last_line;

/// The author prefix of model-written revisions (`llm:claude-sonnet`).
pub const MODEL_AUTHOR_PREFIX: &str = "llm:";

/// Points `context` takes from a page whose current revision a model wrote, so that
/// human-written text of equal relevance ranks above it (a fifth of the penalty of a stale
/// page: a tie-breaker, not a verdict).
pub const MODEL_WRITTEN_POINTS: f64 = 4.0;

/// The least `[synthesis] max_tokens` accepted: the task alone takes about 200.
pub const MIN_PROMPT_TOKENS: u64 = 500;

/// Bytes of the command's stderr kept for the report.
pub const STDERR_CAP: usize = 4 * 1024;

/// The `meta` key holding how many pages are behind the code, as the last `sync`, `lint`
/// or synthesis run counted them ([`Workspace::pages_behind_recorded`]).
pub const PAGES_BEHIND_META: &str = "pages_behind";

/// The note of an answer when `count` pages are behind the code (`count` > 0):
/// "3 pages behind the code — run `loci synthesize --pending` (MCP tool `synthesize`) to
/// redraft them; `loci sync` lists them" when synthesis is `configured`, else what to do
/// without it.
pub fn pages_behind_note(count: u64, configured: bool) -> String {
    let (pages, them) = if count == 1 {
        ("1 page".to_string(), "it")
    } else {
        (format!("{count} pages"), "them")
    };
    if configured {
        format!(
            "{pages} behind the code — run `loci synthesize --pending` (MCP tool `synthesize`) \
             to redraft {them}; `loci sync` lists {them}"
        )
    } else {
        format!(
            "{pages} behind the code — `loci sync` lists {them} (MCP tool `sync`); update \
             {them}, or set `[synthesis] command` and run `loci synthesize --pending`"
        )
    }
}

/// Why a page is in the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A file with symbols and no page.
    Missing,
    /// A page the code changed under (stale marks).
    Stale,
    /// A folder whose file pages were written since its own page (or that has none).
    Rollup,
    /// Asked for by path, none of the above.
    Requested,
}

impl Reason {
    /// The word the plan prints.
    pub fn word(self) -> &'static str {
        match self {
            Reason::Missing => "missing",
            Reason::Stale => "stale",
            Reason::Rollup => "rollup",
            Reason::Requested => "requested",
        }
    }
}

/// Where a synthesis run is: `done` of `total` pages run, `subject` the one starting now
/// (its command may take minutes).
#[derive(Clone, Copy, Debug)]
pub struct SynthesisProgress<'a> {
    /// Pages run so far.
    pub done: usize,
    /// Pages this run writes.
    pub total: usize,
    /// The page whose command starts now.
    pub subject: &'a str,
}

/// One page the plan would write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanItem {
    /// The page's subject: a file or folder path.
    pub subject: String,
    /// `file` or `folder`.
    pub kind: String,
    /// Why.
    pub reason: Reason,
    /// Files that import it (for a file).
    pub fan_in: u64,
    /// For a stale page, the changed symbols (qualified names, in source order) and the
    /// claims that went stale; for a roll-up, the file pages written since the folder's.
    pub changed: Vec<String>,
    /// The page's current version (0: none yet).
    pub version: i64,
}

/// What `loci synthesize --plan` lists.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Missing pages (largest fan-in first), then stale pages, then roll-ups.
    pub items: Vec<PlanItem>,
    /// `[synthesis] max_pages`: how many of them one run writes.
    pub max_pages: usize,
}

/// One prompt, as `--dry-run` prints it and the command receives it.
#[derive(Clone, Debug, Serialize)]
pub struct Prompt {
    /// The page it is for.
    pub subject: String,
    /// Why.
    pub reason: Reason,
    /// Estimated tokens (characters / 4), at most `[synthesis] max_tokens`.
    pub tokens: u64,
    /// Sections cut or left out to fit the budget.
    pub cut: Vec<String>,
    /// Sections withheld because the secret rules found a token in them.
    pub withheld: Vec<String>,
    /// The exact text.
    pub text: String,
}

/// What `loci synthesize --dry-run` prints.
#[derive(Clone, Debug, Serialize)]
pub struct DryRun {
    /// The prompts, in plan order.
    pub prompts: Vec<Prompt>,
    /// Their estimated tokens together.
    pub total_tokens: u64,
    /// Pages asked for beyond `[synthesis] max_pages` (not built).
    pub left: usize,
}

/// The provenance of one run, as its `llm_runs` row records it.
#[derive(Clone, Debug, Serialize)]
pub struct RunFacts {
    /// The program's name (the command's first word's file name).
    pub command: String,
    /// The model label.
    pub model: String,
    /// Estimated prompt tokens.
    pub prompt_tokens: u64,
    /// Estimated answer tokens.
    pub answer_tokens: u64,
    /// Wall time, milliseconds.
    pub wall_ms: u64,
    /// Exit status (-1 when it had none).
    pub exit_status: i64,
}

/// One page's run.
#[derive(Clone, Debug, Serialize)]
pub struct PageRun {
    /// The page.
    pub subject: String,
    /// Why it was run.
    pub reason: Reason,
    /// `written`; or nothing was written: `failed` (non-zero exit), `timeout`, `empty`,
    /// `refused` (a credential in the answer, or an answer over the size limit), `error`
    /// (the command could not start, or the write was refused).
    pub status: String,
    /// The exit code, when it exited.
    pub exit_code: Option<i64>,
    /// Estimated prompt tokens.
    pub prompt_tokens: u64,
    /// Estimated answer tokens.
    pub answer_tokens: u64,
    /// Wall time, milliseconds.
    pub wall_ms: u64,
    /// The version written.
    pub version: Option<i64>,
    /// The revision written.
    pub revision_id: Option<i64>,
    /// Its `synthesis` event.
    pub event_id: Option<i64>,
    /// What the write's claim check found (as `remember` reports it).
    pub findings: Vec<String>,
    /// Why nothing was written, or the last line of stderr.
    pub message: Option<String>,
}

/// What `loci synthesize` did.
#[derive(Clone, Debug, Serialize)]
pub struct SynthesisReport {
    /// The program's name.
    pub command: String,
    /// The model label (revisions by `llm:MODEL`).
    pub model: String,
    /// One entry per page run, in order.
    pub runs: Vec<PageRun>,
    /// Pages asked for beyond `[synthesis] max_pages` (not run).
    pub left: usize,
}

/// Which pages a run or a dry run is for.
#[derive(Clone, Debug)]
pub enum Targets {
    /// The plan, up to `[synthesis] max_pages`.
    Pending,
    /// These files or folders (workspace-relative or as given to the CLI).
    Paths(Vec<String>),
}

impl Workspace {
    /// The pages synthesis would write and why, without running anything: files that
    /// define symbols and have no page (largest fan-in first, then by path), pages stale
    /// against the code (with the changed symbols named), then folders whose file pages
    /// were written since the folder's page, or that have file pages and no page.
    ///
    /// Errors: [`EngineError::Config`] when `[synthesis] command` is not set.
    pub fn synthesis_plan(&self) -> Result<Envelope<Plan>> {
        self.synthesis_command()?;
        let items = self.plan_items()?;
        self.envelope(
            Plan {
                items,
                max_pages: self.config.synthesis.max_pages,
            },
            Vec::new(),
        )
    }

    fn plan_items(&self) -> Result<Vec<PlanItem>> {
        let mut items: Vec<PlanItem> = syn::files_without_pages(self.store.conn())?
            .into_iter()
            .map(|(subject, fan_in)| PlanItem {
                subject,
                kind: "file".into(),
                reason: Reason::Missing,
                fan_in,
                changed: Vec::new(),
                version: 0,
            })
            .collect();
        let planned: BTreeSet<String> = items.iter().map(|i| i.subject.clone()).collect();
        items.extend(self.behind_items(&planned, true)?);
        Ok(items)
    }

    /// The pages behind the code — stale against it, or folders whose file pages were
    /// written since their own — as the plan lists them (its `stale` and `rollup` items),
    /// whether or not synthesis is configured: what `loci sync` reports after recording
    /// the commits that put them there.
    pub fn pages_behind(&self) -> Result<Vec<PlanItem>> {
        self.behind_items(&BTreeSet::new(), true)
    }

    /// [`Workspace::pages_behind`] without naming the changed symbols of stale file pages
    /// (their `changed` lists only the stale claims): no git reads, only the stale marks
    /// and the pages' revisions.
    pub fn pages_behind_brief(&self) -> Result<Vec<PlanItem>> {
        self.behind_items(&BTreeSet::new(), false)
    }

    /// How many pages are behind the code now ([`Workspace::pages_behind_brief`]'s count).
    pub fn count_pages_behind(&self) -> Result<u64> {
        Ok(self.pages_behind_brief()?.len() as u64)
    }

    /// The count of pages behind the code that the last `sync`, `lint` or synthesis run
    /// stored (meta [`PAGES_BEHIND_META`]), or `None` before any: what answers say without
    /// computing it (one row read).
    pub fn pages_behind_recorded(&self) -> Result<Option<u64>> {
        Ok(self
            .store
            .meta(PAGES_BEHIND_META)?
            .and_then(|v| v.parse().ok()))
    }

    /// Stores `count` as the pages behind the code (meta [`PAGES_BEHIND_META`]); a
    /// read-only store keeps the old count (logged, not an error: the count is a hint).
    pub(crate) fn record_pages_behind(&mut self, count: u64) -> Result<()> {
        if self.pages_behind_recorded()? == Some(count) {
            return Ok(());
        }
        let value = count.to_string();
        match self
            .store
            .write(|tx| loci_store::set_meta(tx, PAGES_BEHIND_META, &value))
        {
            Ok(()) => Ok(()),
            Err(loci_store::StoreError::ReadOnly { .. }) => {
                tracing::debug!("read-only store: the count of pages behind the code is not kept");
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The note an answer carries when pages are behind the code (the recorded count,
    /// [`Workspace::pages_behind_recorded`]): what to run, by whether synthesis is
    /// configured. `None` when none are behind.
    pub fn pages_behind_note(&self) -> Result<Option<String>> {
        let count = match self.pages_behind_recorded()? {
            Some(n) if n > 0 => n,
            _ => return Ok(None),
        };
        let configured = self
            .config
            .synthesis
            .command
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty());
        Ok(Some(pages_behind_note(count, configured)))
    }

    /// The plan's stale pages, then its roll-ups of folders not in `planned`; with
    /// `detail`, each stale file page names its changed symbols (a git diff per page).
    fn behind_items(&self, planned: &BTreeSet<String>, detail: bool) -> Result<Vec<PlanItem>> {
        let conn = self.store.conn();
        let mut items: Vec<PlanItem> = Vec::new();
        let pages: HashMap<String, Page> = mem::pages(conn)?
            .into_iter()
            .map(|p| (p.subject.clone(), p))
            .collect();
        // Stale pages, with what changed.
        let mut stale: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for s in current_staleness(conn)? {
            let Some(page) = pages.get(&s.subject) else {
                continue;
            };
            if page.kind != "file" && page.kind != "folder" {
                continue;
            }
            let named = stale.entry(s.subject.clone()).or_default();
            let what = match (&s.claim_text, &s.reason) {
                (Some(t), _) => Some(t.clone()),
                (None, StaleReason::FileChanged { .. }) => None,
                (None, StaleReason::Deleted { target, .. }) => Some(format!("{target} (deleted)")),
                (None, StaleReason::Moved { from, to }) => Some(format!("{from} (moved to {to})")),
                (None, StaleReason::BodyChanged { target })
                | (None, StaleReason::SignatureChanged { target })
                | (None, StaleReason::Unmapped { target, .. })
                | (None, StaleReason::DefinitionsChanged { target, .. }) => Some(target.clone()),
            };
            if let Some(w) = what
                && !named.contains(&w)
            {
                named.push(w);
            }
        }
        for (subject, claims) in stale {
            let page = &pages[&subject];
            let mut changed = Vec::new();
            if detail
                && page.kind == "file"
                && let Some(rev) = self.current_revision(page)?
                && let Some(since) = self.code_since(&subject, &rev)?
            {
                changed = since
                    .changed
                    .iter()
                    .map(|s| s.qualified_name.clone())
                    .collect();
            }
            for c in claims {
                // `login()` went stale because `login` changed: named once.
                let name = c.trim_end_matches("()");
                let named = changed
                    .iter()
                    .any(|n| n == &c || n == name || n.rsplit('.').next() == Some(name));
                if !named {
                    changed.push(c);
                }
            }
            items.push(PlanItem {
                version: self.version_of(page)?,
                subject,
                kind: page.kind.clone(),
                reason: Reason::Stale,
                fan_in: 0,
                changed,
            });
        }
        // Roll-ups: folders over file pages written since the folder's own page; a folder
        // without a page rolls up the file pages directly in it.
        let mut rollups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let folder_revs: Vec<(&String, i64)> = pages
            .values()
            .filter(|p| p.kind == "folder")
            .filter_map(|p| Some((&p.subject, p.current_revision_id?)))
            .collect();
        for (file, rev) in syn::file_pages(conn)? {
            for (folder, folder_rev) in &folder_revs {
                if file.starts_with(&format!("{folder}/")) && rev > *folder_rev {
                    rollups
                        .entry((*folder).clone())
                        .or_default()
                        .push(file.clone());
                }
            }
            if let Some((parent, _)) = file.rsplit_once('/')
                && pages
                    .get(parent)
                    .is_none_or(|p| p.current_revision_id.is_none())
            {
                rollups
                    .entry(parent.to_string())
                    .or_default()
                    .push(file.clone());
            }
        }
        for (folder, changed) in rollups {
            if planned.contains(&folder) || items.iter().any(|i| i.subject == folder) {
                continue;
            }
            let version = match pages.get(&folder) {
                Some(p) => self.version_of(p)?,
                None => 0,
            };
            items.push(PlanItem {
                subject: folder,
                kind: "folder".into(),
                reason: Reason::Rollup,
                fan_in: 0,
                changed,
                version,
            });
        }
        Ok(items)
    }

    fn current_revision(&self, page: &Page) -> Result<Option<Revision>> {
        Ok(match page.current_revision_id {
            Some(id) => mem::revision_by_id(self.store.conn(), id)?,
            None => None,
        })
    }

    fn version_of(&self, page: &Page) -> Result<i64> {
        Ok(self.current_revision(page)?.map_or(0, |r| r.version))
    }

    /// The plan items `targets` names, at most `[synthesis] max_pages`, and how many more
    /// were asked for.
    fn targeted(&self, targets: &Targets) -> Result<(Vec<PlanItem>, usize)> {
        let max = self.config.synthesis.max_pages;
        let items = match targets {
            Targets::Pending => self.plan_items()?,
            Targets::Paths(paths) => {
                let plan = self.plan_items()?;
                let mut out = Vec::new();
                for p in paths {
                    let (subject, kind) = self.resolve_subject(p)?;
                    if kind != "file" && kind != "folder" {
                        return Err(EngineError::InvalidArgument {
                            name: "path".into(),
                            message: format!(
                                "`{subject}` is not a file or folder; synthesis writes file and \
                                 folder pages"
                            ),
                        });
                    }
                    if out.iter().any(|i: &PlanItem| i.subject == subject) {
                        continue;
                    }
                    let item = match plan.iter().find(|i| i.subject == subject) {
                        Some(i) => i.clone(),
                        None => {
                            let version = match mem::page_by_subject(self.store.conn(), &subject)? {
                                Some(p) => self.version_of(&p)?,
                                None => 0,
                            };
                            PlanItem {
                                subject,
                                kind: kind.into(),
                                reason: Reason::Requested,
                                fan_in: 0,
                                changed: Vec::new(),
                                version,
                            }
                        }
                    };
                    out.push(item);
                }
                out
            }
        };
        let left = items.len().saturating_sub(max);
        Ok((items.into_iter().take(max).collect(), left))
    }

    /// The exact prompts a run of `targets` would send, without running anything.
    ///
    /// Errors: [`EngineError::Config`] when `[synthesis] command` is not set;
    /// [`EngineError::InvalidArgument`] for a path that is not a file or folder.
    pub fn synthesis_prompts(&self, targets: &Targets) -> Result<Envelope<DryRun>> {
        self.synthesis_command()?;
        let (items, left) = self.targeted(targets)?;
        let mut prompts = Vec::new();
        for item in &items {
            prompts.push(self.synthesis_prompt(item)?);
        }
        let total_tokens = prompts.iter().map(|p| p.tokens).sum();
        self.envelope(
            DryRun {
                prompts,
                total_tokens,
                left,
            },
            Vec::new(),
        )
    }

    /// Runs the configured command for each page of `targets` (at most `[synthesis]
    /// max_pages`) and stores each usable answer as a new revision authored `llm:MODEL`.
    /// Every run is reported; a failed one writes nothing.
    ///
    /// Errors: [`EngineError::Config`] when `[synthesis] command` is not set; store errors.
    pub fn synthesize(
        &mut self,
        targets: &Targets,
        session: Option<i64>,
        progress: &dyn Fn(SynthesisProgress),
    ) -> Result<Envelope<SynthesisReport>> {
        let configured = self.synthesis_command()?;
        let (items, left) = self.targeted(targets)?;
        let timeout = Duration::from_millis(self.config.synthesis.timeout_ms);
        let author = format!("{MODEL_AUTHOR_PREFIX}{}", configured.model);
        let mut runs = Vec::new();
        for (done, item) in items.iter().enumerate() {
            progress(SynthesisProgress {
                done,
                total: items.len(),
                subject: &item.subject,
            });
            let prompt = self.synthesis_prompt(item)?;
            let out = run_command(&self.root, &configured.argv, &prompt.text, timeout);
            let answer = String::from_utf8_lossy(&out.stdout).into_owned();
            let mut run = PageRun {
                subject: item.subject.clone(),
                reason: item.reason,
                status: "error".into(),
                exit_code: None,
                prompt_tokens: prompt.tokens,
                answer_tokens: estimate_tokens(&answer),
                wall_ms: out.wall_ms,
                version: None,
                revision_id: None,
                event_id: None,
                findings: Vec::new(),
                message: None,
            };
            let last_stderr = last_line(&out.stderr)
                .filter(|l| self.secrets.find_token(l).is_none())
                .map(str::to_string);
            match out.ended {
                Ended::NotStarted(why) => run.message = Some(why),
                Ended::TimedOut => {
                    run.status = "timeout".into();
                    run.message = Some(format!(
                        "no answer within {} ms; the command was killed",
                        timeout.as_millis()
                    ));
                }
                Ended::Exited(code) => {
                    run.exit_code = Some(code);
                    if code != 0 {
                        run.status = "failed".into();
                        run.message = Some(match last_stderr {
                            Some(l) => format!("exit {code}: {l}"),
                            None => format!("exit {code}"),
                        });
                    } else if out.overflow {
                        run.status = "refused".into();
                        run.message = Some(format!(
                            "the answer is over {MAX_MEMORY_TEXT_BYTES} bytes, the most one \
                             write takes"
                        ));
                    } else if answer.trim().is_empty() {
                        run.status = "empty".into();
                        run.message = Some("the command printed nothing".into());
                    } else if let Some(m) = self.secrets.find_token(&answer) {
                        run.status = "refused".into();
                        run.message = Some(format!(
                            "the answer contains {m}; loci does not store credentials in memory"
                        ));
                    } else {
                        let facts = RunFacts {
                            command: configured.program.clone(),
                            model: configured.model.clone(),
                            prompt_tokens: prompt.tokens,
                            answer_tokens: run.answer_tokens,
                            wall_ms: out.wall_ms,
                            exit_status: code,
                        };
                        let opts = WriteOptions {
                            author: Some(author.clone()),
                            session,
                            summary: Some(format!(
                                "synthesized by {} ({})",
                                configured.model,
                                item.reason.word()
                            )),
                            expect_version: None,
                            operation_id: None,
                        };
                        let answer = answer.trim().to_string() + "\n";
                        match self.write_synthesized(
                            &item.subject,
                            &item.kind,
                            &answer,
                            &opts,
                            &facts,
                        ) {
                            Ok(env) => {
                                let w = env.result;
                                run.status = "written".into();
                                run.version = Some(w.revision.version);
                                run.revision_id = Some(w.revision.revision_id);
                                run.event_id = Some(w.event_id);
                                run.findings = w
                                    .claims
                                    .iter()
                                    .filter_map(|c| c.finding.as_ref().map(|f| f.describe()))
                                    .collect();
                            }
                            Err(e) => run.message = Some(e.to_string()),
                        }
                    }
                }
            }
            runs.push(run);
        }
        if runs.iter().any(|r| r.status == "written") {
            let count = self.count_pages_behind()?;
            self.record_pages_behind(count)?;
        }
        self.envelope(
            SynthesisReport {
                command: configured.program,
                model: configured.model,
                runs,
                left,
            },
            Vec::new(),
        )
    }
}

//! Page synthesis (issue 35; the design's synthesis layer, seed irag: "the model writes
//! prose, SQL does the bookkeeping"): loci decides which pages are missing or behind the
//! code ([`Workspace::synthesis_plan`]), builds each prompt from the map and memory within
//! a token budget ([`Workspace::synthesis_prompt`]), hands it to the command the user named
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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loci_store::map::{self, SymbolHit};
use loci_store::memory::{self as mem, Page, Revision};
use loci_store::synthesis as syn;
use serde::Serialize;

use super::guard::MAX_MEMORY_TEXT_BYTES;
use super::memory::WriteOptions;
use crate::audit::audit::{StaleReason, current_staleness};
use crate::context::context::estimate_tokens;
use crate::{EngineError, Envelope, Result, Workspace};

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

/// The configured command, split.
struct Configured {
    argv: Vec<String>,
    program: String,
    model: String,
}

/// How the command ended.
enum Ended {
    Exited(i64),
    TimedOut,
    NotStarted(String),
}

struct Output {
    ended: Ended,
    stdout: Vec<u8>,
    /// More than the stdout cap was written.
    overflow: bool,
    stderr: String,
    wall_ms: u64,
}

impl Workspace {
    /// The configured command, or the error that says how to configure one.
    fn synthesis_command(&self) -> Result<Configured> {
        let cfg = &self.config.synthesis;
        let config_path = self.root.join(crate::LOCI_DIR).join("config.toml");
        let Some(command) = cfg.command.as_deref().filter(|c| !c.trim().is_empty()) else {
            return Err(EngineError::Config {
                path: config_path,
                message: "page synthesis is off: no `[synthesis] command` is set, and loci \
                          calls no model on its own. Name a command that reads a prompt on \
                          stdin and prints markdown, for example\n\n[synthesis]\ncommand = \
                          \"claude -p\"\nmodel = \"claude-sonnet\"\n\n(see docs/synthesis.md)"
                    .into(),
            });
        };
        let argv = shell_words::split(command).map_err(|e| EngineError::Config {
            path: config_path.clone(),
            message: format!("cannot split `[synthesis] command` into arguments: {e}"),
        })?;
        let Some(first) = argv.first() else {
            return Err(EngineError::Config {
                path: config_path,
                message: "`[synthesis] command` is empty".into(),
            });
        };
        if cfg.max_tokens < MIN_PROMPT_TOKENS {
            return Err(EngineError::Config {
                path: config_path,
                message: format!(
                    "`[synthesis] max_tokens` is {}; a prompt needs at least {MIN_PROMPT_TOKENS}",
                    cfg.max_tokens
                ),
            });
        }
        let program = Path::new(first)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| first.clone());
        let model = cfg
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| program.clone());
        self.accept_author(&format!("{MODEL_AUTHOR_PREFIX}{model}"))?;
        Ok(Configured {
            argv,
            program,
            model,
        })
    }

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

    /// The prompt for one plan item, within `[synthesis] max_tokens`.
    ///
    /// Errors: store errors only (a file that cannot be read is said in the prompt).
    pub fn synthesis_prompt(&self, item: &PlanItem) -> Result<Prompt> {
        let conn = self.store.conn();
        let page = mem::page_by_subject(conn, &item.subject)?;
        let current = match &page {
            Some(p) => self.current_revision(p)?,
            None => None,
        };
        let mut sections: Vec<Section> = Vec::new();
        let what = if item.kind == "folder" {
            format!("the folder `{}/`", item.subject)
        } else {
            format!("the file `{}`", item.subject)
        };
        let why = match item.reason {
            Reason::Missing if item.fan_in > 0 => format!(
                "It has no page yet; {} other file(s) import it.",
                item.fan_in
            ),
            Reason::Missing => "It has no page yet.".to_string(),
            Reason::Stale => format!(
                "Its page (v{}) is behind the code{}.",
                item.version,
                if item.changed.is_empty() {
                    String::new()
                } else {
                    format!(": changed {}", ticked(&item.changed))
                }
            ),
            Reason::Rollup => format!(
                "Pages of its files were written since its own: {}.",
                ticked(&item.changed)
            ),
            Reason::Requested if item.version > 0 => {
                format!(
                    "Rewrite its page (v{}) against the code as it is.",
                    item.version
                )
            }
            Reason::Requested => "It has no page yet.".to_string(),
        };
        let task = format!(
            "# Task\n\nWrite the memory page for {what} of this repository, in markdown, for an \
             engineer or agent about to change it. {why}\n\nSay what it is for, its main parts \
             and how they fit together, how it is used, and what is easy to get wrong. Cite \
             every file, function, type or method you mention in backticks, exactly as the \
             outline below names it (`name`, `Type.method`, `path/to/file.py`), and name only \
             what the material below shows: every citation is checked against the code. Keep \
             what the current page says that is still true, correct what the changed code \
             contradicts, and heed the open contradictions. Answer with the page's markdown \
             only: no preamble, no closing remarks, no code fence around it.\n\n"
        );
        if let Some(rev) = &current {
            let contradictions: Vec<String> =
                loci_store::audit::contradictions(conn, Some("open"))?
                    .into_iter()
                    .filter(|c| c.origin == "page" && c.subject == item.subject)
                    .map(|c| {
                        format!(
                            "- line {}: `{}` ({}{})",
                            c.line + 1,
                            c.claim,
                            c.kind.replace('_', " "),
                            c.truth.map(|t| format!(": {t}")).unwrap_or_default()
                        )
                    })
                    .collect();
            if !contradictions.is_empty() {
                sections.push(Section::new(
                    0,
                    1,
                    "## Open contradictions of the current page".into(),
                    contradictions.join("\n") + "\n",
                ));
            }
            sections.push(Section::new(
                2,
                3,
                format!(
                    "## The current page (v{}, by {}, {})",
                    rev.version,
                    rev.author,
                    &rev.created_at[..rev.created_at.len().min(10)]
                ),
                rev.body.trim_end().to_string() + "\n",
            ));
        }
        let entries = syn::entries_naming(conn, &item.subject)?;
        if !entries.is_empty() {
            let body: String = entries
                .iter()
                .map(|(s, b)| format!("- {s}: {}\n", b.trim().replace('\n', " ")))
                .collect();
            sections.push(Section::new(
                1,
                2,
                "## Decisions and lessons that name it".into(),
                body,
            ));
        }
        if item.kind == "folder" {
            self.folder_sections(item, &mut sections)?;
        } else {
            self.file_sections(item, current.as_ref(), &mut sections)?;
        }
        let (text, tokens, cut, withheld) =
            self.pack(&task, sections, self.config.synthesis.max_tokens);
        Ok(Prompt {
            subject: item.subject.clone(),
            reason: item.reason,
            tokens,
            cut,
            withheld,
            text,
        })
    }

    fn file_sections(
        &self,
        item: &PlanItem,
        current: Option<&Revision>,
        sections: &mut Vec<Section>,
    ) -> Result<()> {
        let conn = self.store.conn();
        let symbols = map::symbols_in_file(conn, &item.subject)?;
        let text = std::fs::read_to_string(self.root.join(&item.subject)).ok();
        let lines = text.as_deref().map_or(0, |t| t.lines().count());
        let mut outline = String::new();
        for s in &symbols {
            let depth = s.qualified_name.matches('.').count();
            outline.push_str(&format!(
                "{}- {} `{}` (line {}): {}\n",
                "  ".repeat(depth.min(4)),
                s.kind,
                s.qualified_name,
                s.line + 1,
                s.signature.lines().next().unwrap_or("").trim()
            ));
        }
        sections.push(Section::new(
            6,
            4,
            format!(
                "## Outline of `{}` ({} symbols, {lines} lines)",
                item.subject,
                symbols.len()
            ),
            outline,
        ));
        let Some(text) = text else {
            return Ok(());
        };
        let since = match current {
            Some(rev) => self.code_since(&item.subject, rev)?,
            None => None,
        };
        let file_lines: Vec<&str> = text.lines().collect();
        let fence = fence_language(&item.subject);
        match since {
            Some(since) if !since.changed.is_empty() || !since.diff.is_empty() => {
                let mut bodies = String::new();
                for s in &since.changed {
                    bodies.push_str(&symbol_body(s, &file_lines, fence));
                }
                if !bodies.is_empty() {
                    sections.push(Section::new(
                        3,
                        5,
                        format!(
                            "## Changed since v{} (commit {}): the symbols' code now",
                            current.map_or(0, |r| r.version),
                            &since.commit[..since.commit.len().min(12)]
                        ),
                        bodies,
                    ));
                }
                sections.push(Section::new(
                    4,
                    6,
                    format!(
                        "## Diff of `{}` since v{}",
                        item.subject,
                        current.map_or(0, |r| r.version)
                    ),
                    format!("```diff\n{}```\n", since.diff),
                ));
            }
            _ => {
                // No history to diff against: the main symbols' code, top level first.
                let mut bodies = String::new();
                let mut top: Vec<&SymbolHit> = symbols
                    .iter()
                    .filter(|s| !s.qualified_name.contains('.'))
                    .collect();
                if top.is_empty() {
                    top = symbols.iter().collect();
                }
                for s in top {
                    bodies.push_str(&symbol_body(s, &file_lines, fence));
                }
                // After the outline when the budget is short: the outline is the map.
                sections.push(Section::new(7, 5, "## Code".into(), bodies));
            }
        }
        Ok(())
    }

    fn folder_sections(&self, item: &PlanItem, sections: &mut Vec<Section>) -> Result<()> {
        let conn = self.store.conn();
        let prefix = format!("{}/", item.subject);
        let mut files = String::new();
        let mut pages_text = String::new();
        for (path, rev_id) in syn::file_pages(conn)? {
            if !path.starts_with(&prefix) {
                continue;
            }
            if let Some(rev) = mem::revision_by_id(conn, rev_id)? {
                files.push_str(&format!(
                    "- `{path}`: {}\n",
                    rev.summary.as_deref().unwrap_or("").trim()
                ));
                pages_text.push_str(&format!(
                    "### `{path}` (v{} by {})\n{}\n\n",
                    rev.version,
                    rev.author,
                    rev.body.trim_end()
                ));
            }
        }
        let mut unpaged = String::new();
        for (path, fan_in) in syn::files_without_pages(conn)? {
            if path.starts_with(&prefix) {
                unpaged.push_str(&format!("- `{path}` (imported by {fan_in})\n"));
            }
        }
        sections.push(Section::new(
            3,
            4,
            format!("## File pages under `{}/`", item.subject),
            pages_text,
        ));
        if !unpaged.is_empty() {
            sections.push(Section::new(
                5,
                5,
                "## Files under it without a page".into(),
                unpaged,
            ));
        }
        sections.push(Section::new(
            4,
            3,
            "## Files with pages (and the summaries of their pages)".into(),
            files,
        ));
        Ok(())
    }

    /// The file as it was when `rev` was written (from git, at the `HEAD` its event
    /// recorded) against the working tree: the diff and the symbols it changed. `None`
    /// without git history for it.
    fn code_since(&self, path: &str, rev: &Revision) -> Result<Option<Since>> {
        let Some(head) = syn::revision_head(self.store.conn(), rev.revision_id)? else {
            return Ok(None);
        };
        let Ok(Some(old)) = crate::map::git::file_at(&self.root, &head, path) else {
            return Ok(None);
        };
        let Ok(new) = std::fs::read_to_string(self.root.join(path)) else {
            return Ok(None);
        };
        let (diff, changed_lines) = line_diff(&old, &new);
        let symbols = map::symbols_in_file(self.store.conn(), path)?;
        let touched: Vec<&SymbolHit> = symbols
            .iter()
            .filter(|s| {
                changed_lines
                    .iter()
                    .any(|&(a, b)| (s.line as usize) < b.max(a + 1) && a <= s.end_line as usize)
            })
            .collect();
        // The innermost: a class is not named for a change inside one of its methods.
        let changed = touched
            .iter()
            .filter(|s| {
                !touched.iter().any(|t| {
                    t.key != s.key
                        && t.line >= s.line
                        && t.end_line <= s.end_line
                        && (t.line, t.end_line) != (s.line, s.end_line)
                })
            })
            .map(|s| (*s).clone())
            .collect();
        Ok(Some(Since {
            commit: head,
            diff,
            changed,
        }))
    }

    /// Packs the sections under `budget` tokens by priority, withholding any that holds a
    /// secret, and renders them in display order after the task. Returns the text, its
    /// estimated tokens, the sections cut or left out and those withheld.
    fn pack(
        &self,
        task: &str,
        mut sections: Vec<Section>,
        budget: u64,
    ) -> (String, u64, Vec<String>, Vec<String>) {
        let mut withheld = Vec::new();
        for s in &mut sections {
            if let Some(m) = self.secrets.find_token(&s.body) {
                withheld.push(s.title.clone());
                s.body = format!("(withheld: it holds a secret ({}))\n", m.rule);
                // A line: kept first, so the model knows something was withheld.
                s.priority = 0;
            }
        }
        let mut left = budget.saturating_sub(estimate_tokens(task));
        let mut cut = Vec::new();
        let mut order: Vec<usize> = (0..sections.len()).collect();
        order.sort_by_key(|&i| sections[i].priority);
        for i in order {
            let s = &mut sections[i];
            let head = format!("{}\n\n", s.title);
            let whole = estimate_tokens(&head) + estimate_tokens(&s.body) + 1;
            if whole <= left {
                left -= whole;
                s.kept = true;
                continue;
            }
            let note_room = 24;
            let room = left.saturating_sub(estimate_tokens(&head) + note_room + 1);
            if room < 16 {
                cut.push(format!("{} (left out)", s.title));
                continue;
            }
            let (kept, dropped) = cut_lines(&s.body, room);
            s.body = format!("{kept}… {dropped} more line(s) cut to fit max_tokens\n");
            if s.body.trim_start().starts_with("```") && !kept.trim_end().ends_with("```") {
                s.body = format!("{kept}```\n… {dropped} more line(s) cut to fit max_tokens\n");
            }
            cut.push(format!("{} ({dropped} lines cut)", s.title));
            left = left.saturating_sub(estimate_tokens(&head) + estimate_tokens(&s.body) + 1);
            s.kept = true;
        }
        sections.sort_by_key(|s| s.display);
        let mut text = task.to_string();
        for s in sections.iter().filter(|s| s.kept) {
            text.push_str(&s.title);
            text.push_str("\n\n");
            text.push_str(&s.body);
            text.push('\n');
        }
        let tokens = estimate_tokens(&text);
        (text, tokens, cut, withheld)
    }
}

/// The code since a page's revision.
struct Since {
    commit: String,
    diff: String,
    changed: Vec<SymbolHit>,
}

/// A part of a prompt.
struct Section {
    /// Lower is kept first when the budget is short.
    priority: u8,
    /// Lower is printed first.
    display: u8,
    title: String,
    body: String,
    kept: bool,
}

impl Section {
    fn new(priority: u8, display: u8, title: String, body: String) -> Section {
        Section {
            priority,
            display,
            title,
            body,
            kept: false,
        }
    }
}

/// The first lines of `text` within `tokens` (characters / 4), and how many were dropped.
fn cut_lines(text: &str, tokens: u64) -> (String, usize) {
    let max_chars = (tokens * 4) as usize;
    let mut kept = String::new();
    let mut chars = 0;
    let mut total = 0;
    let mut dropped = 0;
    for line in text.lines() {
        total += 1;
        let n = line.chars().count() + 1;
        if dropped == 0 && chars + n <= max_chars {
            kept.push_str(line);
            kept.push('\n');
            chars += n;
        } else {
            dropped += 1;
        }
    }
    let _ = total;
    (kept, dropped)
}

/// `` `a`, `b` `` for the prompt.
fn ticked(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The fence language of a path (its extension).
fn fence_language(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(_, ext)| ext)
}

/// A symbol's lines as a fenced block under a heading.
fn symbol_body(s: &SymbolHit, lines: &[&str], fence: &str) -> String {
    let start = (s.line as usize).min(lines.len());
    let end = (s.end_line as usize + 1).min(lines.len()).max(start);
    format!(
        "### {} `{}` (lines {}–{})\n```{fence}\n{}\n```\n",
        s.kind,
        s.qualified_name,
        s.line + 1,
        s.end_line + 1,
        lines[start..end].join("\n")
    )
}

/// A unified line diff of `old` to `new` with three lines of context, and the changed
/// ranges as zero-based half-open line ranges of `new` (a pure removal is an empty range
/// at the line after it).
fn line_diff(old: &str, new: &str) -> (String, Vec<(usize, usize)>) {
    use gix::diff::blob::{Algorithm, Diff, InternedInput};
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let mut out = String::new();
    let mut ranges = Vec::new();
    const CONTEXT: usize = 3;
    for hunk in diff.hunks() {
        let (b0, b1) = (hunk.before.start as usize, hunk.before.end as usize);
        let (a0, a1) = (hunk.after.start as usize, hunk.after.end as usize);
        ranges.push((a0, a1));
        let c0 = a0.saturating_sub(CONTEXT);
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            b0 + 1,
            b1 - b0,
            a0 + 1,
            a1 - a0
        ));
        for l in &new_lines[c0.min(new_lines.len())..a0.min(new_lines.len())] {
            out.push_str(&format!(" {l}\n"));
        }
        for l in &old_lines[b0.min(old_lines.len())..b1.min(old_lines.len())] {
            out.push_str(&format!("-{l}\n"));
        }
        for l in &new_lines[a0.min(new_lines.len())..a1.min(new_lines.len())] {
            out.push_str(&format!("+{l}\n"));
        }
        let c1 = (a1 + CONTEXT).min(new_lines.len());
        for l in &new_lines[a1.min(new_lines.len())..c1] {
            out.push_str(&format!(" {l}\n"));
        }
    }
    (out, ranges)
}

/// The last non-empty line of `text`, at most 200 characters.
fn last_line(text: &str) -> Option<&str> {
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    Some(match line.char_indices().nth(200) {
        Some((i, _)) => &line[..i],
        None => line,
    })
}

/// Runs `argv` from `root` in a process group of its own with `prompt` on stdin, reading
/// stdout up to [`MAX_MEMORY_TEXT_BYTES`] + 1 bytes and stderr up to [`STDERR_CAP`]; kills
/// the whole group at `timeout`, and after the command exits (so nothing it started lives
/// on holding its pipes).
fn run_command(root: &Path, argv: &[String], prompt: &str, timeout: Duration) -> Output {
    let started = Instant::now();
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Output {
                ended: Ended::NotStarted(format!("cannot start `{}`: {e}", argv[0])),
                stdout: Vec::new(),
                overflow: false,
                stderr: String::new(),
                wall_ms: started.elapsed().as_millis() as u64,
            };
        }
    };
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let prompt = prompt.as_bytes().to_vec();
    // A command that never reads its stdin must not block the run: write from a thread,
    // and a closed pipe is not an error.
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&prompt);
        }
        drop(stdin);
    });
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || read_capped(stdout, MAX_MEMORY_TEXT_BYTES));
    let err_reader = std::thread::spawn(move || read_capped(stderr, STDERR_CAP));
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ended::Exited(status.code().map_or(-1, i64::from)),
            Ok(None) if started.elapsed() >= timeout => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break Ended::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break Ended::NotStarted(format!("cannot wait for `{}`: {e}", argv[0]));
            }
        }
    };
    // What the command started in the background goes with it.
    kill_group(pid);
    let _ = writer.join();
    let (stdout, overflow) = out_reader.join().unwrap_or_default();
    let (stderr, _) = err_reader.join().unwrap_or_default();
    Output {
        ended,
        stdout,
        overflow,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        wall_ms: started.elapsed().as_millis() as u64,
    }
}

/// Reads up to `cap` bytes, then stops reading (the writer gets a broken pipe). Returns
/// the bytes and whether more were offered.
fn read_capped(source: Option<impl Read>, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let Some(source) = source else {
        return (out, false);
    };
    let mut limited = source.take(cap as u64 + 1);
    let _ = limited.read_to_end(&mut out);
    let overflow = out.len() > cap;
    out.truncate(cap);
    (out, overflow)
}

/// Kills the process group `pid` leads (the command and everything it started).
#[cfg(unix)]
fn kill_group(pid: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Ok(pid) = i32::try_from(pid) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

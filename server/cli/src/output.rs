//! Rendering engine answers: human-readable text, or the JSON envelope with `--json`.
//! Human output uses one-based lines (`path:line`), as editors and compilers print them.

mod portability;

use std::io::Write;
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use loci_engine::Envelope;
use loci_engine::audit::{CheckReport, DriftReport, LintReport};
use loci_engine::context::{Calibration, ContextAnswer, EvalReport, SearchHit, Why};
use loci_engine::map::{Callers, Deps, Impact, ScanProgress, ScanReport, Stats, SyncReport};
use loci_engine::memory::{AsOf, FactRun, History, SessionView, Shown, Written};
use loci_engine::store_types::Contradiction;
use loci_engine::store_types::{Fact, Page, Session};
use loci_engine::store_types::{RefHit, SymbolHit};
use loci_engine::text;
use serde::Serialize;

pub use loci_engine::words::count;

/// Where answers go. With `--json` the envelope is held until the command's verdict is
/// known ([`Output::finish`]): an answer that exits non-zero carries `error: {kind,
/// message}` beside the envelope's fields, whatever the command (`loci symbol nosuch
/// --json` says why it exits 1).
pub struct Output {
    json: bool,
    /// The envelope printed by [`Output::finish`]: pretty JSON of one object.
    held: std::cell::RefCell<Option<String>>,
    /// Why the answer exits 1, when the method that rendered it knows best (lint's
    /// findings, a failed check): `(error.kind, message)`.
    verdict: std::cell::RefCell<Option<(&'static str, String)>>,
}

type Found = anyhow::Result<bool>;

/// The `error` member of a JSON answer that exits non-zero.
#[derive(Serialize)]
struct ErrorBody<'a> {
    kind: &'a str,
    message: &'a str,
}

impl Output {
    pub fn new(json: bool) -> Output {
        Output {
            json,
            held: Default::default(),
            verdict: Default::default(),
        }
    }

    /// Holds `env` as the answer (`--json`), replacing any held before.
    fn hold<T: Serialize>(&self, env: &Envelope<T>) -> anyhow::Result<()> {
        *self.held.borrow_mut() = Some(serde_json::to_string_pretty(env)?);
        Ok(())
    }

    /// Records why the answer being rendered exits 1 (`kind` as `error.kind` names it).
    fn miss(&self, kind: &'static str, message: String) {
        *self.verdict.borrow_mut() = Some((kind, message));
    }

    /// Why the rendered answer exits 1, if its method said ([`Output::miss`]).
    pub fn verdict(&self) -> Option<(&'static str, String)> {
        self.verdict.borrow_mut().take()
    }

    /// Prints the held envelope (`--json`; nothing otherwise), with `error: {kind,
    /// message}` as its last member when the command exits non-zero (`error` given).
    pub fn finish(&self, error: Option<(&str, &str)>) -> anyhow::Result<()> {
        let Some(mut text) = self.held.borrow_mut().take() else {
            return Ok(());
        };
        if let Some((kind, message)) = error {
            // The envelope is one pretty-printed object: `error` goes before its closing
            // brace, indented as serde_json indents a member.
            let body = serde_json::to_string_pretty(&ErrorBody { kind, message })?;
            let Some(open) = text.strip_suffix("\n}") else {
                anyhow::bail!("internal error: the envelope is not a JSON object");
            };
            text = format!("{open},\n  \"error\": {}\n}}", body.replace('\n', "\n  "));
        }
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        writeln!(out, "{text}")?;
        out.flush()?;
        Ok(())
    }

    fn emit<T: Serialize>(
        &self,
        env: &Envelope<T>,
        human: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        self.emit_with(env, true, "", human)
    }

    /// [`Output::emit`]; `truncation_line` false when `human` says itself what was cut,
    /// and `shown` the text `human` prints when it holds notes of its own (a note it holds
    /// is not said again on stderr).
    fn emit_with<T: Serialize>(
        &self,
        env: &Envelope<T>,
        truncation_line: bool,
        shown: &str,
        human: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        if self.json {
            return self.hold(env);
        }
        // Stdout is line-buffered: a wide answer (800 lines) was 800 `write` calls.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        human(&mut out)?;
        text::footer(&mut out, env, truncation_line)?;
        if let Some(note) = env.team.as_ref().and_then(text::team_note) {
            eprintln!("note: {note}");
        }
        // A note is about the answer, not part of it: stderr, so stdout stays parseable.
        for note in &env.capability.notes {
            if ([
                "no scan yet",
                "partial map",
                "open file",
                "open folder",
                "the query ",
            ]
            .iter()
            .any(|p| note.starts_with(p))
                || note.contains("changed on disk since the last scan")
                || note.contains("(`loci stats` lists")
                || note.contains(" behind the code — "))
                && !shown.contains(note.as_str())
            {
                eprintln!("note: {note}");
            }
        }
        out.flush()?;
        Ok(())
    }

    /// A lookup that found nothing (exit 1): with `--json`, the envelope with a null
    /// result and `error: { kind: "not_found", message }` (the shape MCP tools answer
    /// with); in human mode nothing on stdout (the caller says it on stderr).
    pub fn not_found(&self, env: &Envelope<()>, message: &str) -> anyhow::Result<()> {
        self.failed(env, "not_found", message)
    }

    /// With `--json`, the envelope of a failed command with `error: {kind, message}` on
    /// stdout (`kind` as [`loci_engine::EngineError::kind`] names it); nothing otherwise
    /// (the message goes to stderr either way, from the caller).
    pub fn failed(&self, env: &Envelope<()>, kind: &str, message: &str) -> anyhow::Result<()> {
        if self.json {
            self.hold(env)?;
            self.finish(Some((kind, message)))?;
        }
        Ok(())
    }

    pub fn init<T: Serialize>(&self, root: &Path, env: &Envelope<T>) -> Found {
        self.emit(env, |o| {
            writeln!(
                o,
                "initialized {}",
                root.join(loci_engine::LOCI_DIR).display()
            )
        })?;
        Ok(true)
    }

    pub fn scan(&self, env: &Envelope<ScanReport>) -> Found {
        self.emit(env, |o| text::scan(o, &env.result))?;
        Ok(true)
    }

    /// `loci scan --scip FILE`: the scan, then the import (`--json`: one envelope whose
    /// result is `{scan, scip}`).
    pub fn scan_scip(
        &self,
        scan: &Envelope<ScanReport>,
        imported: &Envelope<loci_engine::map::ScipImport>,
    ) -> Found {
        #[derive(Serialize)]
        struct Both<'a> {
            scan: &'a ScanReport,
            scip: &'a loci_engine::map::ScipImport,
        }
        let env = imported.clone().map(|_| Both {
            scan: &scan.result,
            scip: &imported.result,
        });
        self.emit(&env, |o| {
            text::scan(o, &scan.result)?;
            text::scip_import(o, &imported.result)
        })?;
        Ok(true)
    }

    pub fn symbols(&self, env: &Envelope<Vec<SymbolHit>>) -> Found {
        self.emit(env, |o| {
            env.result.iter().try_for_each(|s| text::symbol_hit(o, s))
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn refs(&self, env: &Envelope<Vec<RefHit>>) -> Found {
        self.emit(env, |o| {
            env.result.iter().try_for_each(|r| text::ref_hit(o, r))
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn callers(&self, env: &Envelope<Callers>) -> Found {
        self.emit(env, |o| text::callers(o, &env.result))?;
        Ok(!env.result.calls.is_empty())
    }

    pub fn callees(&self, env: &Envelope<loci_engine::map::Callees>) -> Found {
        self.emit(env, |o| text::callees(o, &env.result))?;
        Ok(!env.result.calls.is_empty())
    }

    pub fn outline(&self, env: &Envelope<loci_engine::map::Outline>) -> Found {
        self.emit(env, |o| text::outline(o, &env.result))?;
        Ok(!env.result.symbols.is_empty())
    }

    pub fn source(&self, env: &Envelope<loci_engine::map::Source>) -> Found {
        self.emit(env, |o| text::source(o, &env.result))?;
        Ok(true)
    }

    pub fn deps(&self, env: &Envelope<Deps>) -> Found {
        self.emit(env, |o| text::deps(o, &env.result))?;
        Ok(!env.result.edges.is_empty())
    }

    pub fn impact(&self, env: &Envelope<Impact>) -> Found {
        self.emit_with(env, false, "", |o| text::impact(o, env))?;
        Ok(env.result.dependents > 0)
    }

    pub fn embed(&self, env: &Envelope<loci_engine::context::EmbedReport>) -> Found {
        let r = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "embedded {} chunks in {:.2}s with {}: {} of {} chunks have vectors",
                r.embedded,
                r.duration_ms as f64 / 1000.0,
                r.model,
                r.with_vectors,
                r.chunks
            )
        })?;
        Ok(true)
    }

    pub fn stats(&self, env: &Envelope<Stats>) -> Found {
        self.emit(env, |o| text::stats(o, env))?;
        Ok(true)
    }
}

impl Output {
    pub fn team_init(&self, env: &Envelope<loci_engine::memory::team::InitReport>) -> Found {
        self.emit(env, |o| text::team_init(o, &env.result))?;
        Ok(true)
    }

    pub fn team_status(&self, env: &Envelope<loci_engine::memory::team::TeamStatus>) -> Found {
        self.emit(env, |o| text::team_status(o, &env.result))?;
        Ok(true)
    }

    pub fn team_sync(&self, env: &Envelope<loci_engine::memory::team::SyncReport>) -> Found {
        self.emit(env, |o| text::team_sync(o, &env.result))?;
        Ok(true)
    }

    pub fn team_join(&self, env: &Envelope<loci_engine::memory::team::JoinReport>) -> Found {
        self.emit(env, |o| text::team_join(o, &env.result))?;
        Ok(true)
    }

    pub fn written(&self, env: &Envelope<Written>) -> Found {
        // A claim the write found false is listed with its finding: its warning in the
        // footer would say it twice (`--json` keeps every warning).
        let w = &env.result;
        let listed: Vec<String> = w
            .claims
            .iter()
            .filter(|c| c.finding.is_some())
            .map(|c| {
                format!(
                    "memory `{}` v{} claim `{}` is false: ",
                    w.revision.subject, w.revision.version, c.text
                )
            })
            .collect();
        if self.json || listed.is_empty() {
            self.emit(env, |o| text::written(o, &env.result))?;
        } else {
            let mut quiet = env.clone();
            quiet
                .stale_warnings
                .retain(|sw| !listed.iter().any(|l| sw.reason.starts_with(l.as_str())));
            self.emit(&quiet, |o| text::written(o, &quiet.result))?;
        }
        Ok(true)
    }

    pub fn shown(&self, env: &Envelope<Shown>) -> Found {
        self.emit(env, |o| text::shown(o, &env.result))?;
        Ok(true)
    }

    pub fn confirmed(&self, env: &Envelope<Shown>) -> Found {
        self.emit(env, |o| text::confirmed(o, &env.result))?;
        Ok(true)
    }

    pub fn history(&self, env: &Envelope<History>) -> Found {
        self.emit(env, |o| text::history(o, &env.result))?;
        Ok(!env.result.revisions.is_empty())
    }

    pub fn page(&self, env: &Envelope<Page>) -> Found {
        self.emit(env, |o| text::page(o, &env.result))?;
        Ok(true)
    }

    pub fn asof(&self, env: &Envelope<AsOf>) -> Found {
        let a = &env.result;
        self.emit(env, |o| text::asof(o, a))?;
        Ok(a.shown.is_some() || !a.pages.is_empty())
    }

    pub fn why(&self, env: &Envelope<Why>) -> Found {
        self.emit(env, |o| text::why(o, &env.result))?;
        Ok(true)
    }

    pub fn members(&self, env: &Envelope<Vec<String>>) -> Found {
        self.emit(env, |o| {
            for m in &env.result {
                writeln!(o, "{m}")?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    pub fn topics(&self, env: &Envelope<Vec<loci_engine::memory::Topic>>) -> Found {
        self.emit(env, |o| {
            env.result.iter().try_for_each(|t| text::topic(o, t))
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn page_entries(&self, env: &Envelope<Vec<loci_engine::memory::PageEntry>>) -> Found {
        self.emit(env, |o| {
            env.result.iter().try_for_each(|p| text::page_entry(o, p))
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn facts(&self, env: &Envelope<Vec<Fact>>) -> Found {
        self.emit(env, |o| {
            env.result.iter().try_for_each(|f| text::fact(o, f))
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn fact_runs(&self, env: &Envelope<Vec<FactRun>>) -> Found {
        self.emit(env, |o| {
            for r in &env.result {
                writeln!(
                    o,
                    "fact {} {}: {} (exit {}, {} ms)",
                    r.fact_id,
                    r.status,
                    r.claim,
                    r.exit_code
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "-".into()),
                    r.duration_ms
                )?;
            }
            Ok(())
        })?;
        let failed: Vec<String> = env
            .result
            .iter()
            .filter(|r| r.status != "pass")
            .map(|r| format!("fact {} ({})", r.fact_id, r.status))
            .collect();
        if failed.is_empty() {
            return Ok(true);
        }
        self.miss(
            "fact_failed",
            format!(
                "{} of {} did not pass: {}",
                failed.len(),
                count(env.result.len() as u64, "fact"),
                failed.join(", ")
            ),
        );
        Ok(false)
    }

    pub fn vault(&self, env: &Envelope<loci_engine::memory::VaultReport>) -> Found {
        self.emit(env, |o| text::vault(o, &env.result))?;
        Ok(true)
    }

    pub fn synthesis_plan(&self, env: &Envelope<loci_engine::memory::synthesis::Plan>) -> Found {
        self.emit(env, |o| text::synthesis_plan(o, &env.result))?;
        Ok(true)
    }

    pub fn synthesis_prompts(
        &self,
        env: &Envelope<loci_engine::memory::synthesis::DryRun>,
    ) -> Found {
        self.emit(env, |o| text::synthesis_prompts(o, &env.result))?;
        Ok(true)
    }

    /// A run in which a page was not written exits 1, naming them.
    pub fn synthesis_report(
        &self,
        env: &Envelope<loci_engine::memory::synthesis::SynthesisReport>,
    ) -> Found {
        self.emit(env, |o| text::synthesis_report(o, &env.result))?;
        let failed: Vec<String> = env
            .result
            .runs
            .iter()
            .filter(|r| r.status != "written")
            .map(|r| format!("{} ({})", r.subject, r.status))
            .collect();
        if failed.is_empty() {
            return Ok(true);
        }
        self.miss(
            "synthesis_failed",
            format!(
                "{} of {} not written: {}",
                failed.len(),
                count(env.result.runs.len() as u64, "page"),
                failed.join(", ")
            ),
        );
        Ok(false)
    }

    pub fn session(&self, env: &Envelope<Session>) -> Found {
        let s = &env.result;
        // Stdout is only the shell line, so `eval "$(loci session begin)"` sets it; the
        // words go to stderr.
        self.emit(env, |o| {
            eprint!("{}", text::to_string(|o| text::session_begun(o, s)));
            writeln!(o, "export LOCI_SESSION={}", s.session_id)
        })?;
        Ok(true)
    }

    pub fn sessions(&self, env: &Envelope<Vec<SessionView>>) -> Found {
        self.emit(env, |o| {
            env.result.iter().try_for_each(|v| text::session_view(o, v))
        })?;
        Ok(!env.result.is_empty())
    }
}

impl Output {
    pub fn lint(&self, env: &Envelope<LintReport>) -> Found {
        let r = &env.result;
        self.emit_quiet(env, |o| text::lint(o, r, usize::MAX))?;
        if r.contradictions.is_empty() && r.stale.is_empty() {
            return Ok(true);
        }
        self.miss(
            "findings",
            format!(
                "lint found {} and {}",
                count(r.contradictions.len() as u64, "open contradiction"),
                count(r.stale.len() as u64, "stale mark")
            ),
        );
        Ok(false)
    }

    pub fn check(&self, env: &Envelope<CheckReport>) -> Found {
        let r = &env.result;
        self.emit_quiet(env, |o| text::check(o, r, usize::MAX))?;
        self.check_verdict(r);
        Ok(r.passed)
    }

    /// Records why a check that did not pass exits 1 (also for `--sarif`).
    pub fn check_verdict(&self, r: &CheckReport) {
        if !r.passed {
            self.miss(
                "check_failed",
                format!(
                    "check failed: {} (max {}), {} (max {})",
                    count(r.lint.contradictions.len() as u64, "open contradiction"),
                    r.max_contradictions,
                    count(r.lint.stale_pages.len() as u64, "stale page"),
                    r.max_stale_pages
                ),
            );
        }
    }

    pub fn sarif(&self, value: &serde_json::Value) -> anyhow::Result<()> {
        // Stdout is line-buffered: a wide answer (800 lines) was 800 `write` calls.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut out, value)?;
        writeln!(out)?;
        out.flush()?;
        Ok(())
    }

    pub fn resolved(&self, env: &Envelope<Contradiction>) -> Found {
        self.emit(env, |o| text::resolved(o, &env.result))?;
        Ok(true)
    }

    pub fn drift(&self, env: &Envelope<DriftReport>) -> Found {
        let d = &env.result;
        self.emit(env, |o| text::drift(o, d))?;
        if d.files.is_empty() && d.knowledge.is_empty() {
            self.miss(
                "not_found",
                format!("no drift after scan {}: no file changed since", d.since),
            );
            return Ok(false);
        }
        Ok(true)
    }

    pub fn sync(&self, env: &Envelope<SyncReport>) -> Found {
        self.emit(env, |o| text::sync(o, &env.result))?;
        Ok(true)
    }

    /// Like `emit`, without repeating the stale warnings the body already lists.
    fn emit_quiet<T: Serialize>(
        &self,
        env: &Envelope<T>,
        human: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        if self.json {
            return self.hold(env);
        }
        // Stdout is line-buffered: a wide answer (800 lines) was 800 `write` calls.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        human(&mut out)?;
        out.flush()?;
        Ok(())
    }
}

impl Output {
    pub fn search(&self, env: &Envelope<Vec<SearchHit>>) -> Found {
        self.emit(env, |o| {
            env.result.iter().try_for_each(|h| text::search_hit(o, h))
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn context(&self, env: &Envelope<ContextAnswer>) -> Found {
        let a = &env.result;
        // The answer's own last line says what it used and left out.
        // The markdown holds the notes on open files and folders.
        self.emit_with(env, false, &a.markdown, |o| text::context(o, a))?;
        Ok(!a.abstained)
    }

    pub fn eval(&self, env: &Envelope<EvalReport>) -> Found {
        let r = &env.result;
        self.emit(env, |o| write!(o, "{}", r.table()))?;
        Ok(true)
    }

    pub fn calibration(&self, env: &Envelope<Calibration>) -> Found {
        let c = &env.result;
        self.emit(env, |o| {
            writeln!(o, "floor {:.1}: separates {} in-scope from {} out-of-scope cases with balanced accuracy {:.2}", c.floor, c.in_scope, c.out_of_scope, c.balanced_accuracy)?;
            writeln!(o, "set it in .loci/config.toml:\n[context]\nfloor = {:.1}", c.floor)
        })?;
        Ok(true)
    }
}

/// A progress bar on stderr, hidden when stderr is not a terminal or with `--json`.
pub struct ScanBar {
    bar: ProgressBar,
}

impl ScanBar {
    pub fn new(json: bool) -> ScanBar {
        let bar = if json {
            ProgressBar::hidden()
        } else {
            ProgressBar::new_spinner()
        };
        bar.set_draw_target(if json {
            indicatif::ProgressDrawTarget::hidden()
        } else {
            indicatif::ProgressDrawTarget::stderr()
        });
        ScanBar { bar }
    }

    pub fn update(&self, p: ScanProgress) {
        match p {
            ScanProgress::Walking => self.bar.set_message("walking"),
            ScanProgress::Parsing { done, total } => {
                if self.bar.length() != Some(total) {
                    self.bar.set_length(total);
                    self.bar.set_style(
                        ProgressStyle::with_template("{bar:30} {pos}/{len} files {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                }
                self.bar.set_position(done);
                self.bar.set_message("parsing");
            }
            ScanProgress::Resolving => self.bar.set_message("resolving imports and references"),
            ScanProgress::Done => {}
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The progress of `loci synthesize` on stderr (hidden with --json): a bar on a terminal,
/// else a line per page, since each page's command may run for minutes and a log
/// without them looks hung.
pub struct SynthesisBar {
    bar: Option<ProgressBar>,
    lines: bool,
}

impl SynthesisBar {
    pub fn new(json: bool) -> SynthesisBar {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        let bar = (!json && terminal).then(|| {
            let bar = ProgressBar::new(0);
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} pages {msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        SynthesisBar {
            bar,
            lines: !json && !terminal,
        }
    }

    pub fn update(&self, p: loci_engine::memory::synthesis::SynthesisProgress) {
        if let Some(bar) = &self.bar {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
            bar.set_message(loci_engine::text::escaped(p.subject).into_owned());
        } else if self.lines {
            eprintln!(
                "synthesize: page {} of {}: {}",
                p.done + 1,
                p.total,
                loci_engine::text::escaped(p.subject)
            );
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The progress bar of `loci embed` (on stderr; hidden with --json).
pub struct EmbedBar {
    bar: ProgressBar,
}

impl EmbedBar {
    pub fn new(json: bool) -> EmbedBar {
        let bar = if json {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::new(0);
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} chunks embedded {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        };
        EmbedBar { bar }
    }

    pub fn update(&self, p: loci_engine::context::EmbedProgress) {
        self.bar.set_length(p.total);
        self.bar.set_position(p.done);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

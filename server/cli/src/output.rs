//! Rendering engine answers: human-readable text, or the JSON envelope with `--json`.
//! Human output uses one-based lines (`path:line`), as editors and compilers print them.

mod portability;

use std::io::Write;
use std::path::Path;

/// Skipped files the human scan summary names (the JSON report names more).
const SKIPS_NAMED: usize = 10;

/// Commits a `loci sync` lists, the newest (a first sync records up to `[sync]
/// max_commits`, 200 by default, which printed 200 lines).
const SYNC_COMMIT_LINES: usize = 10;

use indicatif::{ProgressBar, ProgressStyle};
use loci_engine::Envelope;
use loci_engine::context::{ContextAnswer, SearchHit};
use loci_engine::eval::{Calibration, EvalReport};
use loci_engine::facts::FactRun;
use loci_engine::lint::{CheckReport, DriftReport, LintReport};
use loci_engine::memory::{AsOf, History, Shown, Written};
use loci_engine::query::{Callers, Deps, Direction, Impact, Stats};
use loci_engine::scan::SKIPPED_EXAMPLES;
use loci_engine::scan::{ScanProgress, ScanReport};
use loci_engine::session::SessionView;
use loci_engine::store_types::Contradiction;
use loci_engine::store_types::{Fact, Page, Session};
use loci_engine::store_types::{RefHit, SymbolHit};
use loci_engine::sync::SyncReport;
use loci_engine::walk::SkipReason;
use loci_engine::why::Why;
use serde::Serialize;

pub use loci_engine::words::count;

/// Where answers go. With `--json` the envelope is held until the command's verdict is
/// known ([`Output::finish`]): an answer that exits non-zero carries `error: {kind,
/// message}` beside the envelope's fields, whatever the command (`loci symbol nosuch
/// --json` had printed an envelope that did not say why it exited 1).
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
        for w in &env.stale_warnings {
            writeln!(out, "warning: {}: {}", w.path, w.reason)?;
        }
        if truncation_line && env.limits.omitted > 0 {
            writeln!(
                out,
                "... and {} more, not listed; `--limit 0` lists all",
                env.limits.omitted
            )?;
        } else if truncation_line && env.limits.truncated {
            writeln!(out, "(truncated: more results than shown)")?;
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
                || note.contains("changed on disk since the last scan"))
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
        let r = &env.result;
        self.emit(env, |o| {
            let t = &r.totals;
            writeln!(
                o,
                "scanned in {:.2}s: {} added, {} modified, {} deleted, {} renamed, {} unchanged{}{}",
                r.duration_ms as f64 / 1000.0,
                r.added.len(),
                r.modified.len(),
                r.deleted.len(),
                r.renamed.len(),
                r.unchanged,
                if r.resumed > 0 {
                    format!(", {} finished for an interrupted scan", r.resumed)
                } else if r.reanalysed > 0 {
                    format!(", {} analysed again for this version of loci", r.reanalysed)
                } else {
                    String::new()
                },
                if r.retried > 0 {
                    format!(", {} analysed again after the parse limit stopped them", r.retried)
                } else {
                    String::new()
                }
            )?;
            for m in &r.pages_moved {
                writeln!(o, "memory followed a rename: {} -> {}", m.from, m.to)?;
            }
            writeln!(o, "map: {}", totals_line(t, true))?;
            write_languages(o, &r.languages)?;
            if !r.skipped.is_empty() {
                let parts: Vec<String> =
                    r.skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
                writeln!(o, "skipped: {}", parts.join(", "))?;
                // Name the files a user may want back (too large, unreadable, secret, …);
                // binary files are many and expected.
                let named: Vec<_> = r
                    .skipped_examples
                    .iter()
                    .filter(|s| s.reason != SkipReason::Binary)
                    .collect();
                for s in named.iter().take(SKIPS_NAMED) {
                    match &s.detail {
                        Some(d) => writeln!(o, "  {}: {} ({d})", s.path, s.reason.as_str())?,
                        None => writeln!(o, "  {}: {}", s.path, s.reason.as_str())?,
                    }
                }
                if named.len() > SKIPS_NAMED {
                    writeln!(
                        o,
                        "  … and more: `loci scan --json` names up to {SKIPPED_EXAMPLES}"
                    )?;
                }
            }
            for d in &r.degraded {
                writeln!(o, "degraded: {}: {}", d.path, d.reason)?;
            }
            // Named, as the skips are: "in 1 file" left the reader to find which.
            if !r.lossy_utf8.is_empty() {
                writeln!(
                    o,
                    "invalid UTF-8 replaced (U+FFFD) in {}:",
                    count(r.lossy_utf8.len() as u64, "file")
                )?;
                for path in r.lossy_utf8.iter().take(SKIPS_NAMED) {
                    writeln!(o, "  {path}")?;
                }
                if r.lossy_utf8.len() > SKIPS_NAMED {
                    writeln!(
                        o,
                        "  … and {} more: `loci scan --json` names them all",
                        r.lossy_utf8.len() - SKIPS_NAMED
                    )?;
                }
            }
            Ok(())
        })?;
        Ok(true)
    }

    pub fn symbols(&self, env: &Envelope<Vec<SymbolHit>>) -> Found {
        self.emit(env, |o| {
            for s in &env.result {
                writeln!(
                    o,
                    "{}:{}: {} {}  [{}]",
                    s.path,
                    s.line + 1,
                    s.kind,
                    s.qualified_name,
                    s.key
                )?;
                writeln!(o, "    {}", s.signature)?;
            }
            Ok(())
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn refs(&self, env: &Envelope<Vec<RefHit>>) -> Found {
        self.emit(env, |o| {
            for r in &env.result {
                write_ref(o, r)?;
            }
            Ok(())
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn callers(&self, env: &Envelope<Callers>) -> Found {
        self.emit(env, |o| {
            let c = &env.result;
            for t in &c.targets {
                writeln!(o, "definition {} ({}:{})", t.key, t.path, t.line + 1)?;
            }
            if c.targets_total > c.targets.len() as u64 {
                writeln!(
                    o,
                    "definition … and {} more, not listed (their calls are counted)",
                    c.targets_total - c.targets.len() as u64
                )?;
            }
            for r in &env.result.calls {
                write_ref(o, r)?;
            }
            Ok(())
        })?;
        Ok(!env.result.calls.is_empty())
    }

    pub fn deps(&self, env: &Envelope<Deps>) -> Found {
        let d = &env.result;
        self.emit(env, |o| {
            for e in &d.edges {
                match d.direction {
                    Direction::Imports => match &e.to {
                        Some(to) => {
                            writeln!(o, "{}:{}: {} -> {}", e.from, e.line + 1, e.module, to)?
                        }
                        None => {
                            writeln!(o, "{}:{}: {} (unresolved)", e.from, e.line + 1, e.module)?
                        }
                    },
                    Direction::ImportedBy => {
                        writeln!(o, "{}:{}: imports {}", e.from, e.line + 1, e.module)?
                    }
                }
            }
            Ok(())
        })?;
        Ok(!d.edges.is_empty())
    }

    pub fn impact(&self, env: &Envelope<Impact>) -> Found {
        let i = &env.result;
        self.emit_with(env, false, "", |o| {
            // A file's dependents are files; a symbol's are definitions (or files, for a
            // reference outside any definition), in the files that hold them: the
            // target's own files count only when a dependent is in one.
            let n = i.dependents;
            let reach = if i.mode == "file" {
                count(n, "dependent file")
            } else if n == 0 {
                "0 dependents".to_string()
            } else {
                format!(
                    "{} in {}",
                    count(n, "dependent"),
                    count(i.dependent_files, "file")
                )
            };
            writeln!(
                o,
                "impact of {} (depth {}{}): {reach}",
                i.target.join(", "),
                i.depth,
                if i.hard { ", stated edges only" } else { "" },
            )?;
            for n in &i.nodes {
                writeln!(
                    o,
                    "{:indent$}{}  <- {} at {} ({}, {:.2})",
                    "",
                    n.id,
                    n.via.kind,
                    n.via.at,
                    n.via.provenance,
                    n.via.confidence,
                    indent = (n.depth as usize) * 2
                )?;
            }
            if env.limits.omitted > 0 {
                let levels: Vec<String> = i
                    .by_depth
                    .iter()
                    .enumerate()
                    .map(|(d, n)| format!("{n} at depth {}", d + 1))
                    .collect();
                writeln!(
                    o,
                    "... and {} more, not listed ({} in all: {}); `--limit 0` lists all",
                    env.limits.omitted,
                    i.dependents,
                    levels.join(", "),
                )?;
            }
            Ok(())
        })?;
        Ok(i.dependents > 0)
    }

    pub fn embed(&self, env: &Envelope<loci_engine::embed::EmbedReport>) -> Found {
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
        let s = &env.result;
        self.emit(env, |o| {
            let t = &s.totals;
            writeln!(
                o,
                "revision {} (scanned {})",
                env.index.revision,
                env.index
                    .scanned_at
                    .as_deref()
                    .unwrap_or("never: the map is partial or empty")
            )?;
            writeln!(o, "{}", totals_line(t, false))?;
            write_languages(o, &s.languages)?;
            Ok(())
        })?;
        Ok(true)
    }
}

impl Output {
    pub fn written(&self, env: &Envelope<Written>) -> Found {
        let w = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "{} {} v{} by {}{}",
                if w.replayed {
                    "already written:"
                } else {
                    "wrote"
                },
                w.page.subject,
                w.revision.version,
                w.revision.author,
                w.revision
                    .session_id
                    .map(|s| format!(" in session {s}"))
                    .unwrap_or_default()
            )?;
            for c in &w.claims {
                let status = match (&c.resolved, c.untracked_or_set()) {
                    _ if let Some(f) = &c.finding => format!("({})", f.describe()),
                    (Some(r), None) => format!("-> {r}"),
                    (None, _) if c.kind == "version" => "(version, checked by lint)".into(),
                    // Several definitions (`RegexBuilder::new` in two modules) are tracked
                    // as a set; a missing one is not snapshotted, so it never goes stale.
                    (_, why) => format!("({})", why.unwrap_or_default()),
                };
                writeln!(o, "  {} `{}` {}", c.kind, c.text, status)?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    pub fn shown(&self, env: &Envelope<Shown>) -> Found {
        let s = &env.result;
        self.emit(env, |o| {
            let r = &s.revision;
            writeln!(
                o,
                "# {} — v{}{} by {} at {}{}",
                s.page.subject,
                r.version,
                if s.current { "" } else { " (not current)" },
                r.author,
                r.created_at,
                if s.page.pinned { " [pinned]" } else { "" }
            )?;
            if let Some(summary) = &r.summary {
                writeln!(o, "summary: {summary}")?;
            }
            writeln!(o)?;
            writeln!(o, "{}", r.body.trim_end())?;
            if !s.members.is_empty() {
                writeln!(o, "\nmembers: {}", s.members.join(", "))?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    pub fn history(&self, env: &Envelope<History>) -> Found {
        let h = &env.result;
        self.emit(env, |o| {
            writeln!(o, "{} ({})", h.page.subject, h.page.kind)?;
            for e in &h.revisions {
                if let Some(entry) = &e.entry {
                    write!(o, "  {entry:<12}")?;
                }
                writeln!(
                    o,
                    "  v{:<3} {} {:<24} {:<9} {}{}",
                    e.version,
                    e.created_at,
                    e.author,
                    e.event.as_deref().unwrap_or("-"),
                    e.summary.as_deref().unwrap_or(""),
                    e.session_id
                        .map(|s| format!(" (session {s})"))
                        .unwrap_or_default()
                )?;
            }
            Ok(())
        })?;
        Ok(!h.revisions.is_empty())
    }

    pub fn page(&self, env: &Envelope<Page>) -> Found {
        let p = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "{} {}",
                p.subject,
                if p.pinned { "pinned" } else { "unpinned" }
            )
        })?;
        Ok(true)
    }

    pub fn asof(&self, env: &Envelope<AsOf>) -> Found {
        let a = &env.result;
        self.emit(env, |o| {
            match &a.shown {
                Some(r) => {
                    writeln!(
                        o,
                        "# {} — v{} by {} at {} (current at {})",
                        r.subject, r.version, r.author, r.created_at, a.at
                    )?;
                    writeln!(o, "\n{}", r.body.trim_end())?;
                }
                None => {
                    writeln!(o, "memory at {}:", a.at)?;
                    for p in &a.pages {
                        writeln!(
                            o,
                            "  {} v{} by {} at {}",
                            p.subject, p.version, p.author, p.created_at
                        )?;
                    }
                }
            }
            Ok(())
        })?;
        Ok(a.shown.is_some() || !a.pages.is_empty())
    }

    pub fn why(&self, env: &Envelope<Why>) -> Found {
        let w = &env.result;
        self.emit(env, |o| {
            let r = &w.revision;
            writeln!(
                o,
                "{} v{} (matched by {})",
                w.subject, r.version, w.matched_by
            )?;
            writeln!(o, "  written by {} at {}", r.author, r.created_at)?;
            match (&w.entry, &r.summary) {
                (Some(entry), _) => writeln!(o, "  entry: {}", entry.replace('\n', "\n  "))?,
                (None, Some(summary)) => writeln!(o, "  summary: {summary}")?,
                (None, None) => {}
            }
            if let Some(s) = &w.session {
                writeln!(
                    o,
                    "  session {}: {} ({})",
                    s.session_id,
                    s.task.as_deref().unwrap_or("no task"),
                    s.author
                )?;
            }
            for c in &w.claims {
                writeln!(
                    o,
                    "  claim `{}` -> {}",
                    c.text,
                    c.resolved
                        .clone()
                        .or_else(|| (!c.definitions.is_empty()).then(|| c.definitions.join(", ")))
                        .as_deref()
                        .unwrap_or("unresolved")
                )?;
            }
            for e in &w.events {
                writeln!(
                    o,
                    "  event #{} {} {} at {}",
                    e.event_id, e.kind, e.source_ref, e.created_at
                )?;
            }
            if let Some(note) = &w.commit_note {
                writeln!(o, "  commit: {note}")?;
            }
            if let Some(c) = &w.commit {
                writeln!(
                    o,
                    "  commit {} {} ({})",
                    &c.hash[..c.hash.len().min(12)],
                    c.message.lines().next().unwrap_or(""),
                    c.author
                )?;
                writeln!(o, "    files: {}", commit_files(&c.files, &w.subject))?;
            }
            if !w.others.is_empty() {
                let others: Vec<String> =
                    w.others.iter().map(|(s, v)| format!("{s} v{v}")).collect();
                writeln!(o, "  also: {}", others.join(", "))?;
            }
            Ok(())
        })?;
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
            for (t, members) in &env.result {
                writeln!(o, "{t}: {}", members.join(", "))?;
            }
            Ok(())
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn facts(&self, env: &Envelope<Vec<Fact>>) -> Found {
        self.emit(env, |o| {
            for f in &env.result {
                writeln!(
                    o,
                    "fact {}: {} — `{}`{}{} [{}]",
                    f.fact_id,
                    f.claim,
                    f.command,
                    f.expect_output
                        .as_ref()
                        .map(|e| format!(" expects {e:?}"))
                        .unwrap_or_default(),
                    f.expect_exit
                        .map(|e| format!(" exit {e}"))
                        .unwrap_or_default(),
                    f.last_status.as_deref().unwrap_or("never run")
                )?;
            }
            Ok(())
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

    pub fn session(&self, env: &Envelope<Session>) -> Found {
        let s = &env.result;
        // Stdout is only the shell line, so `eval "$(loci session begin)"` sets it; the
        // words go to stderr.
        self.emit(env, |o| {
            eprintln!(
                "session {} begun{}",
                s.session_id,
                s.task
                    .as_ref()
                    .map(|t| format!(": {t}"))
                    .unwrap_or_default()
            );
            writeln!(o, "export LOCI_SESSION={}", s.session_id)
        })?;
        Ok(true)
    }

    pub fn sessions(&self, env: &Envelope<Vec<SessionView>>) -> Found {
        self.emit(env, |o| {
            for v in &env.result {
                let s = &v.session;
                writeln!(
                    o,
                    "session {} ({}) {} → {}: {}",
                    s.session_id,
                    s.author,
                    s.started_at,
                    s.ended_at.as_deref().unwrap_or("open"),
                    s.task.as_deref().unwrap_or("no task")
                )?;
                if let Some(summary) = &s.summary {
                    writeln!(o, "  summary: {summary}")?;
                }
                for p in &v.digest.pages {
                    writeln!(
                        o,
                        "  {} v{}: {}",
                        p.subject,
                        p.version,
                        p.summary.as_deref().unwrap_or("")
                    )?;
                }
                for (h, m) in &v.digest.commits {
                    writeln!(o, "  commit {h} {m}")?;
                }
            }
            Ok(())
        })?;
        Ok(!env.result.is_empty())
    }
}

impl Output {
    pub fn lint(&self, env: &Envelope<LintReport>) -> Found {
        let r = &env.result;
        self.emit_quiet(env, |o| write_lint(o, r))?;
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
        self.emit_quiet(env, |o| {
            write_lint(o, &r.lint)?;
            writeln!(
                o,
                "check {}: {} (max {}), {} (max {})",
                if r.passed { "passed" } else { "FAILED" },
                count(r.lint.contradictions.len() as u64, "open contradiction"),
                r.max_contradictions,
                count(r.lint.stale_pages.len() as u64, "stale page"),
                r.max_stale_pages
            )
        })?;
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
        let c = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "dismissed #{} {} `{}` in {}",
                c.contradiction_id, c.kind, c.claim, c.subject
            )
        })?;
        Ok(true)
    }

    pub fn drift(&self, env: &Envelope<DriftReport>) -> Found {
        let d = &env.result;
        self.emit(env, |o| {
            writeln!(o, "drift after scan {}:", d.since)?;
            for f in &d.files {
                let detail = f
                    .detail
                    .as_deref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default();
                writeln!(
                    o,
                    "  scan {} {:<16} {}{}",
                    f.scan_id, f.kind, f.path, detail
                )?;
            }
            if !d.knowledge.is_empty() {
                writeln!(o, "knowledge:")?;
                for k in &d.knowledge {
                    writeln!(
                        o,
                        "  scan {} {:<16} {}: {}",
                        k.scan_id, k.change, k.subject, k.detail
                    )?;
                }
            }
            Ok(())
        })?;
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
        let s = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "sync ({}): {}; {}, {}",
                s.mode,
                s.state,
                count(s.commits.len() as u64, "commit"),
                count(s.events_added, "new event")
            )?;
            // Oldest first, as recorded: a first sync reads up to 200, so only the newest
            // few are listed (`--json` has them all).
            let older = s.commits.len().saturating_sub(SYNC_COMMIT_LINES);
            if older > 0 {
                writeln!(
                    o,
                    "  … {} (`--json` lists them all)",
                    count(older as u64, "older commit")
                )?;
            }
            for (h, m) in &s.commits[older..] {
                writeln!(o, "  {h} {m}")?;
            }
            for (from, to) in &s.pages_moved {
                writeln!(o, "  page moved: {from} -> {to}")?;
            }
            for n in &s.notes {
                writeln!(o, "note: {n}")?;
            }
            Ok(())
        })?;
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
            for h in &env.result {
                writeln!(
                    o,
                    "{:?} {} — {} [{}] {:.1}",
                    h.kind,
                    h.title,
                    h.snippet.replace('\n', " "),
                    h.provenance,
                    h.bm25
                )?;
            }
            Ok(())
        })?;
        Ok(!env.result.is_empty())
    }

    pub fn context(&self, env: &Envelope<ContextAnswer>) -> Found {
        let a = &env.result;
        // The answer's own last line says what it used and left out.
        // The markdown holds the notes on open files and folders.
        self.emit_with(env, false, &a.markdown, |o| write!(o, "{}", a.markdown))?;
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

/// Findings grouped by file, `path:line:col` for docs (one-based), then stale memory.
fn write_lint(o: &mut dyn Write, r: &LintReport) -> std::io::Result<()> {
    let mut current = "";
    for c in &r.contradictions {
        if c.subject != current {
            current = &c.subject;
            writeln!(
                o,
                "{}{}",
                if c.origin == "page" { "memory " } else { "" },
                c.subject
            )?;
        }
        let at = if c.origin == "doc" {
            format!("{}:{}:{}", c.subject, c.line + 1, c.column + 1)
        } else {
            format!("line {} of the page", c.line + 1)
        };
        write!(
            o,
            "  {at}: {} [{}] #{} `{}`",
            c.kind, c.severity, c.contradiction_id, c.claim
        )?;
        if let Some(t) = &c.truth {
            write!(o, ": {t}")?;
        }
        if let Some(s) = &c.suggestion {
            write!(o, " (did you mean `{s}`?)")?;
        }
        writeln!(o)?;
    }
    for s in &r.stale {
        writeln!(o, "stale: {}", s.describe())?;
    }
    writeln!(
        o,
        "{} checked in memory and {}: {} ({} new, {} recurred, {} resolved), {} on {}",
        count(r.claims_checked, "claim"),
        count(r.docs_checked.len() as u64, "doc"),
        count(r.contradictions.len() as u64, "open contradiction"),
        r.opened,
        r.recurred,
        r.resolved,
        count(r.stale.len() as u64, "stale mark"),
        count(r.stale_pages.len() as u64, "page")
    )
}

/// The map's totals on one line: files, lines, symbols, refs (resolved), deps and
/// unresolved imports; those last in parentheses when `imports_in_parens` (the scan
/// summary) or as one more item (`stats`).
fn totals_line(t: &loci_engine::store_types::MapCounts, imports_in_parens: bool) -> String {
    let imports = count(t.deps_unresolved, "unresolved import");
    format!(
        "{}, {}, {}, {} ({} resolved), {}{}",
        count(t.files, "file"),
        count(t.lines, "line"),
        count(t.symbols, "symbol"),
        count(t.refs, "ref"),
        t.refs_resolved,
        count(t.deps, "dep"),
        if imports_in_parens {
            format!(" ({imports})")
        } else {
            format!(", {imports}")
        }
    )
}

/// Files a commit `why` shows touched, at most [`COMMIT_FILES_SHOWN`]: the page's subject
/// (or the files under it) first, then the others in order, then how many more (a first
/// commit had listed all 40 files of the repository).
fn commit_files(files: &[String], subject: &str) -> String {
    let mine = |f: &String| f == subject || f.starts_with(&format!("{subject}/"));
    let (own, others): (Vec<&String>, Vec<&String>) = files.iter().partition(|f| mine(f));
    let shown: Vec<&str> = own
        .into_iter()
        .chain(others)
        .take(COMMIT_FILES_SHOWN)
        .map(String::as_str)
        .collect();
    let more = files.len() - shown.len();
    if more == 0 {
        shown.join(", ")
    } else {
        format!(
            "{} and {}",
            shown.join(", "),
            count(more as u64, "more file")
        )
    }
}

/// How many of a commit's files `why` names.
const COMMIT_FILES_SHOWN: usize = 5;

/// The per-language table of a scan summary and of `stats`: files and lines a language,
/// the nouns padded so the columns stay aligned when one is singular.
fn write_languages(
    o: &mut dyn Write,
    languages: &std::collections::BTreeMap<String, loci_engine::scan::LanguageCount>,
) -> std::io::Result<()> {
    for (lang, c) in languages {
        let files = if c.files == 1 { "file " } else { "files" };
        let lines = if c.lines == 1 { "line" } else { "lines" };
        writeln!(
            o,
            "  {lang:<12} {:>7} {files} {:>9} {lines}",
            c.files, c.lines
        )?;
    }
    Ok(())
}

fn write_ref(o: &mut dyn Write, r: &RefHit) -> std::io::Result<()> {
    let target = r.target_key.as_deref().unwrap_or("unresolved");
    let within = r.enclosing_key.as_deref().unwrap_or("(top level)");
    writeln!(
        o,
        "{}:{}:{}: {} {} in {} -> {} ({}, {:.2})",
        r.path,
        r.line + 1,
        r.column + 1,
        r.kind,
        r.name,
        within,
        target,
        r.provenance,
        r.confidence
    )
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

    pub fn update(&self, p: loci_engine::embed::EmbedProgress) {
        self.bar.set_length(p.total);
        self.bar.set_position(p.done);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::commit_files;

    /// Fault found by a fresh-user trial: `why` after `loci sync` listed every file of the
    /// repository's first commit (40 of them) under it. At most 5 now, the page's own
    /// subject first, then how many more.
    #[test]
    fn fault_why_listed_every_file_of_a_commit() {
        let files: Vec<String> = (0..40).map(|i| format!("email/f{i:02}.py")).collect();
        assert_eq!(
            commit_files(&files, "email/f17.py"),
            "email/f17.py, email/f00.py, email/f01.py, email/f02.py, email/f03.py and 35 more files"
        );
        assert_eq!(
            commit_files(&files[..2], "email"),
            "email/f00.py, email/f01.py"
        );
        assert_eq!(
            commit_files(&files[..6], "other.py"),
            "email/f00.py, email/f01.py, email/f02.py, email/f03.py, email/f04.py and 1 more file"
        );
    }
}

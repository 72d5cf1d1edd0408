//! Rendering `export`, `import`, `backup` and `restore`.

use std::io::Write;
use std::path::Path;

use loci_engine::Envelope;
use loci_engine::memory::{ImportReport, MemoryExport};
use loci_engine::store_types::{BackupStats, RestoreStats};
use serde::Serialize;

use super::{Found, Output, count};

/// What `export --output FILE` reports instead of the document.
#[derive(Serialize)]
struct ExportSummary<'a> {
    /// The file written.
    path: &'a Path,
    pages: usize,
    revisions: usize,
    facts: usize,
    sessions: usize,
    dismissals: usize,
}

impl Output {
    /// The document to stdout (the envelope with `--json`), or to `file` with a summary.
    pub fn exported(&self, env: Envelope<MemoryExport>, file: Option<&Path>) -> Found {
        let doc = &env.result;
        let Some(file) = file else {
            if self.json {
                self.emit(&env, |_| Ok(()))?;
            } else {
                let stdout = std::io::stdout();
                let mut o = stdout.lock();
                serde_json::to_writer_pretty(&mut o, doc)?;
                writeln!(o)?;
            }
            return Ok(true);
        };
        let mut text = serde_json::to_string_pretty(doc)?;
        text.push('\n');
        // Written beside the target and renamed, so a failed export never leaves half a file.
        let partial = file.with_extension("partial");
        std::fs::write(&partial, text)
            .and_then(|()| std::fs::rename(&partial, file))
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        let summary = ExportSummary {
            path: file,
            pages: doc.pages.len(),
            revisions: doc.pages.iter().map(|p| p.revisions.len()).sum(),
            facts: doc.facts.len(),
            sessions: doc.sessions.len(),
            dismissals: doc.dismissals.len(),
        };
        let env = env.map(|_| summary);
        self.emit(&env, |o| {
            let s = &env.result;
            writeln!(
                o,
                "exported {}, {}, {}, {} and {} to {}",
                count(s.pages as u64, "page"),
                count(s.revisions as u64, "revision"),
                count(s.facts as u64, "fact"),
                count(s.sessions as u64, "session"),
                count(s.dismissals as u64, "dismissal"),
                s.path.display()
            )
        })?;
        Ok(true)
    }

    pub fn imported(&self, env: &Envelope<ImportReport>) -> Found {
        let r = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "imported {}: {} created, {} added, {} already here; {} added, {} already here; {} added",
                r.source,
                count(r.pages_created.len() as u64, "page"),
                count(r.revisions_added, "revision"),
                r.revisions_skipped,
                count(r.facts_added, "fact"),
                r.facts_skipped,
                count(r.members_added, "topic member")
            )?;
            if r.sessions_added + r.sessions_skipped + r.dismissals_added + r.dismissals_skipped > 0 {
                writeln!(
                    o,
                    "  {} added, {} already here; {} added, {} already here",
                    count(r.sessions_added, "session"),
                    r.sessions_skipped,
                    count(r.dismissals_added, "dismissal"),
                    r.dismissals_skipped
                )?;
            }
            for (subject, from, to) in &r.renumbered {
                writeln!(o, "  {subject}: exported v{from} is v{to} here (this page has its own revisions)")?;
            }
            for (from, to) in &r.pages_moved {
                writeln!(o, "  page moved: {from} -> {to}")?;
            }
            for note in &r.notes {
                writeln!(o, "  note: {note}")?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    pub fn backed_up(&self, env: &Envelope<BackupStats>) -> Found {
        let s = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "backed up to {} ({}: {} of SQLite, copied in {} with {} for concurrent writes); integrity check ok",
                s.path.display(),
                count(s.bytes, "byte"),
                count(s.pages, "database page"),
                count(s.steps, "step"),
                count(s.restarts, "restart")
            )
        })?;
        Ok(true)
    }

    pub fn restored(&self, env: &Envelope<RestoreStats>) -> Found {
        let s = &env.result;
        self.emit(env, |o| {
            writeln!(
                o,
                "restored {} ({}, {}, schema version {}); the replaced database is saved as {}",
                s.restored_from.display(),
                count(s.pages, "memory page"),
                count(s.revisions, "revision"),
                s.schema_version,
                s.replaced_saved_to.display()
            )
        })?;
        Ok(true)
    }
}

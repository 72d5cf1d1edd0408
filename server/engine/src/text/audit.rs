//! The text of the audit's answers: `lint`, `check`, `resolve` and `drift`.

use std::io;

use crate::audit::lint::{CheckReport, DriftReport, LintReport};
use crate::store_types::Contradiction;
use crate::words::count;

use super::{Out, escaped};

/// Lint's findings grouped by file (`path:line:col` for docs, one-based), then stale
/// memory, then the counts. At most `listed` contradictions and `listed` stale marks are
/// written, then how many more there are (`usize::MAX`: all); the counts are always whole.
pub fn lint(o: Out, r: &LintReport, listed: usize) -> io::Result<()> {
    let mut current = "";
    for c in r.contradictions.iter().take(listed) {
        if c.subject != current {
            current = &c.subject;
            writeln!(
                o,
                "{}{}",
                if c.origin == "page" { "memory " } else { "" },
                escaped(&c.subject)
            )?;
        }
        let at = if c.origin == "doc" {
            format!("{}:{}:{}", escaped(&c.subject), c.line + 1, c.column + 1)
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
    if r.contradictions.len() > listed {
        writeln!(
            o,
            "… and {}, not listed",
            count(
                (r.contradictions.len() - listed) as u64,
                "more contradiction"
            )
        )?;
    }
    for s in r.stale.iter().take(listed) {
        writeln!(o, "stale: {}", s.describe())?;
    }
    if r.stale.len() > listed {
        writeln!(
            o,
            "stale: … and {}, not listed",
            count((r.stale.len() - listed) as u64, "more mark")
        )?;
    }
    writeln!(
        o,
        "checked {} and {}: {}, {} ({} new, {} recurred, {} resolved), {} on {}",
        match r.memory_checked {
            "all" => "memory",
            _ => "memory (what changed since the last lint)",
        },
        count(r.docs_checked.len() as u64, "doc"),
        count(r.claims_checked, "claim"),
        count(r.contradictions.len() as u64, "open contradiction"),
        r.opened,
        r.recurred,
        r.resolved,
        count(r.stale.len() as u64, "stale mark"),
        count(r.stale_pages.len() as u64, "page")
    )
}

/// [`lint`], then whether the `[check]` thresholds held.
pub fn check(o: Out, r: &CheckReport, listed: usize) -> io::Result<()> {
    lint(o, &r.lint, listed)?;
    writeln!(
        o,
        "check {}: {} (max {}), {} (max {})",
        if r.passed { "passed" } else { "FAILED" },
        count(r.lint.contradictions.len() as u64, "open contradiction"),
        r.max_contradictions,
        count(r.lint.stale_pages.len() as u64, "stale page"),
        r.max_stale_pages
    )
}

/// A dismissed contradiction.
pub fn resolved(o: Out, c: &Contradiction) -> io::Result<()> {
    writeln!(
        o,
        "dismissed #{} {} `{}` in {}",
        c.contradiction_id,
        c.kind,
        c.claim,
        escaped(&c.subject)
    )
}

/// File changes after a scan revision, then what they did to memory.
pub fn drift(o: Out, d: &DriftReport) -> io::Result<()> {
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
            f.scan_id,
            f.kind,
            escaped(&f.path),
            detail
        )?;
    }
    if !d.knowledge.is_empty() {
        writeln!(o, "knowledge:")?;
        for k in &d.knowledge {
            writeln!(
                o,
                "  scan {} {:<16} {}: {}",
                k.scan_id,
                k.change,
                escaped(&k.subject),
                k.detail
            )?;
        }
    }
    Ok(())
}

//! The human text of an answer: what `loci` prints without `--json` and what every MCP
//! tool returns as its text content, one renderer per result type so that the two doors
//! never say different things. Lines are one-based (`path:line`), as editors and
//! compilers print them; the structured envelope keeps zero-based lines.
//!
//! A renderer writes the answer's body only. What surrounds it is each door's: the CLI
//! prints notes on stderr and holds the envelope for `--json`; MCP appends the notes and
//! pages long text. [`footer`] is the part both print after the body.

use std::io::{self, Write};

use crate::Envelope;
use crate::audit::lint::{CheckReport, DriftReport, LintReport};
use crate::context::context::{ContextAnswer, SearchHit};
use crate::context::why::Why;
use crate::map::code::{Callees, Outline, Source};
use crate::map::query::{Callers, Deps, Direction, Impact, Stats};
use crate::map::scan::{LanguageCount, SKIPPED_EXAMPLES, ScanReport};
use crate::map::sync::SyncReport;
use crate::map::walk::SkipReason;
use crate::memory::session::SessionView;
use crate::memory::{AsOf, History, PageEntry, Shown, Topic, Written};
use crate::store_types::{Contradiction, Fact, MapCounts, Page, RefHit, Session, SymbolHit};
use crate::words::count;

/// Where a renderer writes.
pub type Out<'a> = &'a mut dyn Write;

/// A path (or a key, a subject: text holding a path) as one line of human output: each
/// control character written as its Rust escape (`new\nline.py`, `\u{1b}`), so a
/// file named with a newline cannot split a `path:line:` line in two or a terminal
/// escape act on the reader's terminal. JSON escapes them itself.
pub fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Skipped files a scan summary names (the JSON report names up to [`SKIPPED_EXAMPLES`]).
pub const SKIPS_NAMED: usize = 10;

/// How many of a commit's files `why` names.
pub const COMMIT_FILES_SHOWN: usize = 5;

/// `render` into a string (renderers write UTF-8 only).
pub fn to_string(render: impl FnOnce(Out) -> io::Result<()>) -> String {
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail; a renderer returns no error of its own.
    let _ = render(&mut buf);
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// What follows every answer's body: its stale warnings, then, when `truncation_line`
/// (the body does not say itself what was cut), how many items were not listed.
pub fn footer<T>(o: Out, env: &Envelope<T>, truncation_line: bool) -> io::Result<()> {
    for w in &env.stale_warnings {
        writeln!(o, "warning: {}: {}", escaped(&w.path), w.reason)?;
    }
    if truncation_line && env.limits.omitted > 0 {
        writeln!(
            o,
            "... and {} more, not listed; `--limit 0` lists all",
            env.limits.omitted
        )?;
    } else if truncation_line && env.limits.truncated {
        writeln!(o, "(truncated: more results than shown)")?;
    }
    Ok(())
}

/// A scan's summary: what changed, the map's totals and languages, what was skipped.
pub fn scan(o: Out, r: &ScanReport) -> io::Result<()> {
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
            format!(
                ", {} analysed again after the parse limit stopped them",
                r.retried
            )
        } else {
            String::new()
        }
    )?;
    for m in &r.pages_moved {
        writeln!(
            o,
            "memory followed a rename: {} -> {}",
            escaped(&m.from),
            escaped(&m.to)
        )?;
    }
    writeln!(o, "map: {}", totals_line(t, true))?;
    if let Some(c) = &r.scip {
        scip_coverage(o, c)?;
    }
    languages(o, &r.languages)?;
    if !r.skipped.is_empty() {
        let parts: Vec<String> = r.skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
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
                Some(d) => writeln!(o, "  {}: {} ({d})", escaped(&s.path), s.reason.as_str())?,
                None => writeln!(o, "  {}: {}", escaped(&s.path), s.reason.as_str())?,
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
        writeln!(o, "degraded: {}: {}", escaped(&d.path), d.reason)?;
    }
    // Named, as the skips are: "in 1 file" left the reader to find which.
    if !r.lossy_utf8.is_empty() {
        writeln!(
            o,
            "invalid UTF-8 replaced (U+FFFD) in {}:",
            count(r.lossy_utf8.len() as u64, "file")
        )?;
        for path in r.lossy_utf8.iter().take(SKIPS_NAMED) {
            writeln!(o, "  {}", escaped(path))?;
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
}

/// One definition: `path:line: kind qualified.name  [key]`, then its signature indented.
pub fn symbol_hit(o: Out, s: &SymbolHit) -> io::Result<()> {
    writeln!(
        o,
        "{}:{}: {} {}  [{}]",
        escaped(&s.path),
        s.line + 1,
        s.kind,
        s.qualified_name,
        escaped(&s.key)
    )?;
    writeln!(o, "    {}", s.signature)
}

/// One reference: `path:line:col: kind name in ENCLOSING -> TARGET (provenance, confidence)`.
pub fn ref_hit(o: Out, r: &RefHit) -> io::Result<()> {
    let target = r.target_key.as_deref().unwrap_or("unresolved");
    let within = r.enclosing_key.as_deref().unwrap_or("(top level)");
    writeln!(
        o,
        "{}:{}:{}: {} {} in {} -> {} ({}, {:.2})",
        escaped(&r.path),
        r.line + 1,
        r.column + 1,
        r.kind,
        r.name,
        escaped(within),
        escaped(target),
        provenance(&r.provenance, r.source.as_deref()),
        r.confidence
    )
}

/// An edge's provenance as listings write it: `stated`, `derived`, or `stated: scip` for
/// an edge a SCIP index states (`loci scan --scip`).
pub fn provenance(provenance: &str, source: Option<&str>) -> String {
    match source {
        Some(source) => format!("{provenance}: {source}"),
        None => provenance.to_string(),
    }
}

/// The definitions a `callers` question matched, then each call.
pub fn callers(o: Out, c: &Callers) -> io::Result<()> {
    for t in &c.targets {
        writeln!(
            o,
            "definition {} ({}:{})",
            escaped(&t.key),
            escaped(&t.path),
            t.line + 1
        )?;
    }
    if c.targets_total > c.targets.len() as u64 {
        writeln!(
            o,
            "definition … and {} more, not listed (their calls are counted)",
            c.targets_total - c.targets.len() as u64
        )?;
    }
    for r in &c.calls {
        ref_hit(o, r)?;
    }
    if c.weaker > 0 {
        writeln!(
            o,
            "… and {}, not listed: resolved below confidence {:.2} (a name matched, the \
             receiver's type unknown); `--min-confidence 0` lists them",
            count(c.weaker, "weaker call"),
            c.min_confidence
        )?;
    }
    if c.untyped > 0
        && let Some(t) = c.targets.first()
    {
        writeln!(
            o,
            "… and {} of `.{}(` on values of unknown type, not listed: no type the code makes \
             evident tied them to a definition",
            count(c.untyped, "call"),
            escaped(&t.name)
        )?;
    }
    Ok(())
}

/// The definitions a `callees` question matched, then each call written in them:
/// `path:line:col: NAME -> TARGET (provenance, confidence)`, unresolved ones said so.
pub fn callees(o: Out, c: &Callees) -> io::Result<()> {
    for s in &c.sources {
        writeln!(
            o,
            "definition {} ({}:{})",
            escaped(&s.key),
            escaped(&s.path),
            s.line + 1
        )?;
    }
    if c.sources_total > c.sources.len() as u64 {
        writeln!(
            o,
            "definition … and {} more, not listed",
            c.sources_total - c.sources.len() as u64
        )?;
    }
    for r in &c.calls {
        let target = r.target_key.as_deref().unwrap_or("unresolved");
        writeln!(
            o,
            "{}:{}:{}: {} -> {} ({}, {:.2})",
            escaped(&r.path),
            r.line + 1,
            r.column + 1,
            r.name,
            escaped(target),
            r.provenance,
            r.confidence
        )?;
    }
    Ok(())
}

/// A file's definitions, indented by depth: `line: kind qualified.name — signature`.
pub fn outline(o: Out, f: &Outline) -> io::Result<()> {
    writeln!(
        o,
        "{} ({}, {})",
        escaped(&f.path),
        f.language.as_deref().unwrap_or("unknown language"),
        count(f.total, "definition")
    )?;
    for e in &f.symbols {
        let s = &e.symbol;
        writeln!(
            o,
            "{:indent$}{}: {} {}  {}",
            "",
            s.line + 1,
            s.kind,
            s.name,
            s.signature.trim(),
            indent = 2 + 2 * e.depth as usize
        )?;
    }
    Ok(())
}

/// A definition's source: where it is, its text numbered by line, then the memory about it.
pub fn source(o: Out, s: &Source) -> io::Result<()> {
    let d = &s.symbol;
    writeln!(
        o,
        "{}:{}-{}: {} {}  [{}]",
        escaped(&d.path),
        d.line + 1,
        d.end_line + 1,
        d.kind,
        d.qualified_name,
        escaped(&d.key)
    )?;
    for (i, line) in s.text.lines().enumerate() {
        writeln!(o, "{:>5}  {line}", d.line as usize + i + 1)?;
    }
    if s.lines_omitted > 0 {
        writeln!(
            o,
            "      … {} more, not shown",
            count(u64::from(s.lines_omitted), "line")
        )?;
    }
    if s.others_total > 0 {
        let more = s.others_total - s.others.len() as u64;
        writeln!(
            o,
            "other definitions: {}{}",
            s.others
                .iter()
                .map(|k| escaped(k).into_owned())
                .collect::<Vec<_>>()
                .join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )?;
    }
    if s.memory.is_empty() {
        writeln!(o, "memory: none")?;
    }
    for m in &s.memory {
        writeln!(
            o,
            "\nmemory {} v{} by {} at {}{}:",
            escaped(&m.subject),
            m.version,
            m.author,
            m.created_at,
            if m.cut {
                " (cut; `show` has it whole)"
            } else {
                ""
            }
        )?;
        writeln!(o, "{}", m.body.trim_end())?;
    }
    Ok(())
}

/// One page of a memory listing: `subject (kind vN by AUTHOR): first line`, and `STALE:`
/// with the reason when it is.
pub fn page_entry(o: Out, p: &PageEntry) -> io::Result<()> {
    let by = p
        .author
        .as_deref()
        .map(|a| format!(" by {a}"))
        .unwrap_or_default();
    let members = if p.kind == "topic" {
        format!(", {}", count(p.members, "member"))
    } else {
        String::new()
    };
    writeln!(
        o,
        "{} ({} v{}{by}{members}{}): {}",
        escaped(&p.subject),
        p.kind,
        p.version,
        if p.pinned { ", pinned" } else { "" },
        p.first_line
    )?;
    if let Some(why) = &p.stale {
        writeln!(o, "    STALE: {}", escaped(why))?;
    }
    Ok(())
}

/// One topic and its members.
pub fn topic(o: Out, t: &Topic) -> io::Result<()> {
    let (name, members) = t;
    writeln!(
        o,
        "{}: {}",
        escaped(name),
        if members.is_empty() {
            "(no members)".to_string()
        } else {
            members
                .iter()
                .map(|m| escaped(m).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        }
    )
}

/// Commits a `sync` answer lists, the newest (a first sync records up to `[sync]
/// max_commits`, 200 by default, which printed 200 lines).
pub const SYNC_COMMIT_LINES: usize = 10;

/// What a `sync` recorded: the repository's state, the commits (the newest
/// [`SYNC_COMMIT_LINES`]), the pages moved by renames, and its notes.
pub fn sync(o: Out, s: &SyncReport) -> io::Result<()> {
    writeln!(
        o,
        "sync ({}): {}; {}, {}",
        s.mode,
        s.state,
        count(s.commits.len() as u64, "commit"),
        count(s.events_added, "new event")
    )?;
    // Oldest first, as recorded: only the newest few are listed (`--json` has them all).
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
        writeln!(o, "  page moved: {} -> {}", escaped(from), escaped(to))?;
    }
    if !s.pages_behind.is_empty() {
        writeln!(
            o,
            "{} behind the code (`loci synthesize --plan` lists them, `--pending` writes them):",
            count(s.pages_behind.len() as u64, "page")
        )?;
        for item in s.pages_behind.iter().take(SYNC_COMMIT_LINES) {
            let what = if item.changed.is_empty() {
                String::new()
            } else {
                format!(": {}", item.changed.join(", "))
            };
            writeln!(
                o,
                "  {:<6} {}{}",
                item.reason.word(),
                escaped(&item.subject),
                escaped(&what)
            )?;
        }
        if s.pages_behind.len() > SYNC_COMMIT_LINES {
            writeln!(
                o,
                "  … and {} more",
                s.pages_behind.len() - SYNC_COMMIT_LINES
            )?;
        }
    }
    for n in &s.notes {
        writeln!(o, "note: {n}")?;
    }
    Ok(())
}

/// A file's imports (`from:line: module -> file`), or the files importing it.
pub fn deps(o: Out, d: &Deps) -> io::Result<()> {
    for e in &d.edges {
        match d.direction {
            Direction::Imports => match &e.to {
                Some(to) => writeln!(
                    o,
                    "{}:{}: {} -> {}",
                    escaped(&e.from),
                    e.line + 1,
                    e.module,
                    escaped(to)
                )?,
                None => writeln!(
                    o,
                    "{}:{}: {} (unresolved)",
                    escaped(&e.from),
                    e.line + 1,
                    e.module
                )?,
            },
            Direction::ImportedBy => writeln!(
                o,
                "{}:{}: imports {}",
                escaped(&e.from),
                e.line + 1,
                e.module
            )?,
        }
    }
    Ok(())
}

/// The dependents of a file or symbol, indented by depth, each with the edge that reached
/// it; says itself how many were not listed (`env.limits.omitted`).
pub fn impact(o: Out, env: &Envelope<Impact>) -> io::Result<()> {
    let i = &env.result;
    // A file's dependents are files; a symbol's are definitions (or files, for a
    // reference outside any definition), in the files that hold them: the target's own
    // files count only when a dependent is in one.
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
        "impact of {} (depth {}, {}): {reach}",
        escaped(&i.target.join(", ")),
        i.depth,
        edges_followed(i.hard, i.min_confidence),
    )?;
    for n in &i.nodes {
        writeln!(
            o,
            "{:indent$}{}  <- {} at {} ({}, {:.2})",
            "",
            escaped(&n.id),
            n.via.kind,
            escaped(&n.via.at),
            provenance(&n.via.provenance, n.via.source.as_deref()),
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
    if i.weaker > 0 {
        let noun = if i.mode == "file" {
            "dependent file"
        } else {
            "dependent"
        };
        // "1 more dependent file", "3 more dependents".
        let counted = count(i.weaker, noun);
        let (n, noun) = counted.split_once(' ').unwrap_or((&counted, ""));
        writeln!(
            o,
            "{n} more {noun} only through weaker edges (below confidence {:.2}), not \
             counted: `--min-confidence 0` follows them",
            i.min_confidence
        )?;
    }
    Ok(())
}

/// Which edges an `impact` answer followed: `stated edges only` (`--hard`), or `edges at
/// confidence 0.50 or more` (`every resolved edge` at 0).
pub fn edges_followed(hard: bool, min_confidence: f64) -> String {
    if hard {
        "stated edges only".to_string()
    } else if min_confidence > 0.0 {
        format!("edges at confidence {min_confidence:.2} or more")
    } else {
        "every resolved edge".to_string()
    }
}

/// The map's revision, totals and languages, then the files it leaves out: skipped (by
/// reason, then named with why) and degraded.
pub fn stats(o: Out, env: &Envelope<Stats>) -> io::Result<()> {
    let s = &env.result;
    writeln!(
        o,
        "revision {} (scanned {})",
        env.index.revision,
        env.index
            .scanned_at
            .as_deref()
            .unwrap_or("never: the map is partial or empty")
    )?;
    writeln!(o, "{}", totals_line(&s.totals, false))?;
    languages(o, &s.languages)?;
    // The files the map leaves out, named with why (issue 32: a file skipped as a
    // secret had been visible only in the scan's own summary).
    let skipped: u64 = s.skipped.values().sum();
    if skipped > 0 {
        let parts: Vec<String> = s.skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
        writeln!(o, "skipped: {}", parts.join(", "))?;
        for f in &s.skipped_files {
            match &f.detail {
                Some(d) => writeln!(o, "  {}: {} ({d})", escaped(&f.path), f.reason)?,
                None => writeln!(o, "  {}: {}", escaped(&f.path), f.reason)?,
            }
        }
        if skipped > s.skipped_files.len() as u64 {
            writeln!(o, "  … and {} more", skipped - s.skipped_files.len() as u64)?;
        }
    }
    if s.degraded > 0 {
        writeln!(o, "degraded: {}", count(s.degraded, "file"))?;
        for f in &s.degraded_files {
            writeln!(o, "  {}: {}", escaped(&f.path), f.reason)?;
        }
        if s.degraded > s.degraded_files.len() as u64 {
            writeln!(
                o,
                "  … and {} more",
                s.degraded - s.degraded_files.len() as u64
            )?;
        }
    }
    Ok(())
}

/// A memory write: the revision written, then each claim found in it and what it is
/// checked against (or why it is not, or what lint will report about it).
pub fn written(o: Out, w: &Written) -> io::Result<()> {
    if let Some(op) = &w.queued {
        return writeln!(
            o,
            "queued {} v{} by {}: the team server is unreachable; it is pushed when the \
             server returns (operation {op}; `loci team status` shows what waits)",
            w.page.subject, w.revision.version, w.revision.author
        );
    }
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
            // Several definitions (`RegexBuilder::new` in two modules) are tracked as a
            // set; a missing one is not snapshotted, so it never goes stale.
            (_, why) => format!("({})", why.unwrap_or_default()),
        };
        writeln!(o, "  {} `{}` {}", c.kind, c.text, status)?;
    }
    Ok(())
}

/// A memory page at one revision: a heading line, its summary, its body, its members.
pub fn shown(o: Out, s: &Shown) -> io::Result<()> {
    let r = &s.revision;
    // A log (`decisions`, `lessons`) is a view of its entries, not a page with versions:
    // its heading counts the entries ("v6" read as the log's sixth revision).
    if r.revision_id == 0 && crate::memory::logs::log_named(&s.page.subject).is_some() {
        writeln!(
            o,
            "# {} — {}, the latest by {} at {}",
            s.page.subject,
            crate::words::count(r.version.max(0) as u64, "entry"),
            r.author,
            r.created_at
        )?;
        writeln!(o)?;
        return writeln!(o, "{}", r.body.trim_end());
    }
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
}

/// A page just confirmed: what was confirmed, then the page.
pub fn confirmed(o: Out, s: &Shown) -> io::Result<()> {
    writeln!(
        o,
        "confirmed {} v{}: {} checked against the code as it is now",
        s.page.subject,
        s.revision.version,
        crate::words::count(s.claims.len() as u64, "claim")
    )?;
    shown(o, s)
}

/// A page's revisions, oldest first, one a line.
pub fn history(o: Out, h: &History) -> io::Result<()> {
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
}

/// A page after pinning or unpinning: `subject pinned|unpinned`.
pub fn page(o: Out, p: &Page) -> io::Result<()> {
    writeln!(
        o,
        "{} {}",
        p.subject,
        if p.pinned { "pinned" } else { "unpinned" }
    )
}

/// Memory at a moment: one page's revision then, or every page's version then.
pub fn asof(o: Out, a: &AsOf) -> io::Result<()> {
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
}

/// The memory that explains a target and its provenance chain: revision, author, entry,
/// session, claims, events, commit.
pub fn why(o: Out, w: &Why) -> io::Result<()> {
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
        // A write's event is recorded as `KIND:PAGE_ID:vN`; a decision or lesson is known
        // by its entry (`decision:3`), not by the id of the page holding it.
        let entry_ref = loci_store::logs::log_of_entry(&w.revision.subject).and_then(|_| {
            let rest = e
                .source_ref
                .strip_prefix(&format!("{}:{}:", e.kind, w.revision.page_id))?;
            Some(format!("{} {rest}", w.revision.subject))
        });
        writeln!(
            o,
            "  event #{} {} {} at {}",
            e.event_id,
            e.kind,
            entry_ref.as_deref().unwrap_or(&e.source_ref),
            e.created_at
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
        let others: Vec<String> = w.others.iter().map(|(s, v)| format!("{s} v{v}")).collect();
        writeln!(o, "  also: {}", others.join(", "))?;
    }
    Ok(())
}

/// One fact: `fact ID: claim — `command` expects … [last status]`.
pub fn fact(o: Out, f: &Fact) -> io::Result<()> {
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
    )
}

/// A session just begun: `session ID begun: task`.
pub fn session_begun(o: Out, s: &Session) -> io::Result<()> {
    writeln!(
        o,
        "session {} begun{}",
        s.session_id,
        s.task
            .as_ref()
            .map(|t| format!(": {t}"))
            .unwrap_or_default()
    )
}

/// One session and its digest: pages written, commits.
pub fn session_view(o: Out, v: &SessionView) -> io::Result<()> {
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
    Ok(())
}

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
        "{} checked in {} and {}: {} ({} new, {} recurred, {} resolved), {} on {}",
        count(r.claims_checked, "claim"),
        match r.memory_checked {
            "all" => "memory",
            _ => "memory (what changed since the last lint)",
        },
        count(r.docs_checked.len() as u64, "doc"),
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

/// One search hit: `Kind title — snippet [provenance] bm25`.
pub fn search_hit(o: Out, h: &SearchHit) -> io::Result<()> {
    writeln!(
        o,
        "{:?} {} — {} [{}] {:.1}",
        h.kind,
        h.title,
        h.snippet.replace('\n', " "),
        h.provenance,
        h.bm25
    )
}

/// A `context` answer: its markdown, which says itself what the budget used and left out
/// and holds the notes on open files and folders.
pub fn context(o: Out, a: &ContextAnswer) -> io::Result<()> {
    write!(o, "{}", a.markdown)
}

/// The map's totals on one line: files, lines, symbols, refs (resolved), deps and
/// unresolved imports; those last in parentheses when `imports_in_parens` (the scan
/// summary) or as one more item (`stats`).
fn totals_line(t: &MapCounts, imports_in_parens: bool) -> String {
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

/// The per-language table of a scan summary and of `stats`: files and lines a language,
/// the nouns padded so the columns stay aligned when one is singular.
fn languages(
    o: Out,
    languages: &std::collections::BTreeMap<String, LanguageCount>,
) -> io::Result<()> {
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

/// The line a team-backed answer adds on stderr when its replica may be behind: writes
/// pending, events not pulled yet, or a failed contact. `None` when all is current.
pub fn team_note(t: &crate::TeamState) -> Option<String> {
    let mut parts = Vec::new();
    if t.pending_writes > 0 {
        parts.push(format!("{} writes pending", t.pending_writes));
    }
    if t.failed_writes > 0 {
        parts.push(format!(
            "{} queued writes refused by the server (`loci team status`)",
            t.failed_writes
        ));
    }
    if let Some(b) = t.behind.filter(|b| *b > 0) {
        parts.push(format!("{b} events behind"));
    }
    if let Some(e) = &t.last_error {
        parts.push(format!("last contact failed: {e}"));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "team memory ({}, replica at event {}): {}",
            t.server,
            t.high_water_mark,
            parts.join("; ")
        )
    })
}

/// `loci team init`.
pub fn team_init(o: Out, r: &crate::memory::team::InitReport) -> io::Result<()> {
    if r.from == r.to {
        writeln!(
            o,
            "{}: loci schema is at version {} already",
            r.server, r.to
        )
    } else {
        writeln!(
            o,
            "{}: loci schema migrated from version {} to {}",
            r.server, r.from, r.to
        )
    }
}

/// `loci team status`.
pub fn team_status(o: Out, s: &crate::memory::team::TeamStatus) -> io::Result<()> {
    writeln!(o, "server: {}", s.server)?;
    match (s.reachable, s.schema, s.server_head) {
        (true, Some(schema), Some(head)) => {
            writeln!(o, "reachable: yes (schema version {schema})")?;
            if s.writable == Some(false) {
                writeln!(
                    o,
                    "role: may only read (its writes are refused; docs/team.md, Roles)"
                )?;
            }
            writeln!(o, "server head: event {head}")?;
            writeln!(
                o,
                "high-water mark: event {} ({} behind)",
                s.high_water_mark,
                (head - s.high_water_mark).max(0)
            )?;
        }
        _ => {
            writeln!(o, "reachable: no")?;
            writeln!(o, "high-water mark: event {}", s.high_water_mark)?;
        }
    }
    writeln!(o, "pending writes: {}", s.pending_writes)?;
    for f in &s.failed {
        writeln!(o, "refused: {} ({}): {}", f.subject, f.op_id, f.reason)?;
    }
    writeln!(
        o,
        "last error: {}",
        s.last_error.as_deref().unwrap_or("none")
    )
}

/// `loci team sync`.
pub fn team_sync(o: Out, r: &crate::memory::team::SyncReport) -> io::Result<()> {
    writeln!(
        o,
        "pushed {}, refused {}, pulled {}; replica at event {}",
        r.pushed, r.refused, r.pulled, r.high_water_mark
    )
}

/// `loci team join`.
pub fn team_join(o: Out, r: &crate::memory::team::JoinReport) -> io::Result<()> {
    writeln!(
        o,
        "joined: {} pages, {} revisions uploaded, {} already on the server, {} pins, {} conflicts; pulled {}",
        r.pages,
        r.revisions,
        r.already,
        r.pins,
        r.conflicts.len(),
        r.pulled
    )?;
    for r in &r.renumbered {
        writeln!(
            o,
            "renumbered: {} is now {} here and in the team (the team's {} is another entry)",
            r.from, r.to, r.from
        )?;
    }
    for why in &r.refused {
        writeln!(o, "refused: {why}; not uploaded")?;
    }
    for d in &r.diverged {
        let kept = if d.current > d.team[1] {
            format!("the team's text stays current as v{}", d.current)
        } else {
            format!("its text is the team's (v{})", d.current)
        };
        writeln!(
            o,
            "diverged: {}: the team had another history of it; this checkout's {} revisions \
             (v{}–v{} here) are v{}–v{} of the team's, {kept}; {}",
            d.subject, d.uploaded, d.here[0], d.here[1], d.team[0], d.team[1], d.settle
        )?;
    }
    for c in &r.conflicts {
        writeln!(
            o,
            "conflict: {c}: the team wrote this page during the join; kept here, not uploaded: \
             run `loci team join` again"
        )?;
    }
    Ok(())
}

/// `loci synthesize --plan`: one line per page, then how many one run writes.
pub fn synthesis_plan(o: Out, p: &crate::memory::synthesis::Plan) -> io::Result<()> {
    use crate::memory::synthesis::Reason;
    if p.items.is_empty() {
        return writeln!(
            o,
            "nothing to write: every file with symbols has a page, none is stale"
        );
    }
    for i in &p.items {
        let detail = match i.reason {
            Reason::Missing => format!("fan-in {}", i.fan_in),
            Reason::Stale if i.changed.is_empty() => format!("v{}: the file changed", i.version),
            Reason::Stale => format!("v{}: changed {}", i.version, ticks(&i.changed)),
            Reason::Rollup => format!("v{}: file pages {}", i.version, ticks(&i.changed)),
            Reason::Requested => format!("v{}", i.version),
        };
        writeln!(
            o,
            "{:<9} {}{}  {detail}",
            i.reason.word(),
            escaped(&i.subject),
            if i.kind == "folder" { "/" } else { "" }
        )?;
    }
    writeln!(
        o,
        "{}; one run writes at most {} ([synthesis] max_pages): `loci synthesize --pending`",
        count(p.items.len() as u64, "page"),
        p.max_pages
    )
}

fn ticks(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{}`", escaped(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `loci synthesize --dry-run`: each prompt exactly as the command would receive it,
/// between marker lines, then the totals.
pub fn synthesis_prompts(o: Out, d: &crate::memory::synthesis::DryRun) -> io::Result<()> {
    for p in &d.prompts {
        writeln!(
            o,
            "===== prompt for {} ({}, ≈{} tokens{}{}) =====",
            escaped(&p.subject),
            p.reason.word(),
            p.tokens,
            if p.cut.is_empty() {
                String::new()
            } else {
                format!("; cut: {}", p.cut.join(", "))
            },
            if p.withheld.is_empty() {
                String::new()
            } else {
                format!("; withheld (secrets): {}", p.withheld.join(", "))
            }
        )?;
        o.write_all(p.text.as_bytes())?;
    }
    writeln!(
        o,
        "===== {}, ≈{} tokens{} =====",
        count(d.prompts.len() as u64, "prompt"),
        d.total_tokens,
        if d.left > 0 {
            format!("; {} more beyond [synthesis] max_pages", d.left)
        } else {
            String::new()
        }
    )
}

/// `loci synthesize`: one line per page run, with what its claim check found.
pub fn synthesis_report(o: Out, r: &crate::memory::synthesis::SynthesisReport) -> io::Result<()> {
    for run in &r.runs {
        match run.status.as_str() {
            "written" => writeln!(
                o,
                "wrote {} v{} by llm:{} ({} ms, ≈{} prompt / {} answer tokens)",
                escaped(&run.subject),
                run.version.unwrap_or(0),
                r.model,
                run.wall_ms,
                run.prompt_tokens,
                run.answer_tokens
            )?,
            status => writeln!(
                o,
                "{status} {}: {}; nothing written",
                escaped(&run.subject),
                run.message.as_deref().unwrap_or("no answer")
            )?,
        }
        for f in &run.findings {
            writeln!(o, "  {f}")?;
        }
    }
    let written = r.runs.iter().filter(|x| x.status == "written").count();
    writeln!(
        o,
        "{} of {} written by `{}`{}",
        count(written as u64, "page"),
        r.runs.len(),
        escaped(&r.command),
        if r.left > 0 {
            format!("; {} more beyond [synthesis] max_pages", r.left)
        } else {
            String::new()
        }
    )
}

/// `loci export --obsidian DIR`: what changed in the vault.
pub fn vault(o: Out, r: &crate::memory::obsidian::VaultReport) -> io::Result<()> {
    for n in &r.written {
        writeln!(o, "wrote   {}", escaped(n))?;
    }
    for n in &r.removed {
        writeln!(o, "removed {}", escaped(n))?;
    }
    writeln!(
        o,
        "vault {}: {} written, {} unchanged, {} removed",
        escaped(&r.dir),
        r.written.len(),
        r.unchanged.len(),
        r.removed.len()
    )
}

/// The map's SCIP edges after a scan: how many files they cover, and the files that
/// changed since the import (their references are name-based again).
fn scip_coverage(o: Out, c: &crate::map::scip::ScipCoverage) -> io::Result<()> {
    writeln!(
        o,
        "scip: the references of {} come from a SCIP index ({} stated edges{})",
        count(c.files, "file"),
        c.edges,
        if c.restored > 0 {
            format!(", {} written again after name resolution", c.restored)
        } else {
            String::new()
        }
    )?;
    if !c.dropped.is_empty() {
        writeln!(
            o,
            "scip: {} changed since the import, name-based again (index again and import \
             with `loci scan --scip FILE`): {}",
            count(c.dropped.len() as u64, "file"),
            c.dropped
                .iter()
                .take(10)
                .map(|p| escaped(p).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    Ok(())
}

/// What `loci scan --scip FILE` imported.
pub fn scip_import(o: Out, r: &crate::map::scip::ScipImport) -> io::Result<()> {
    writeln!(
        o,
        "scip: imported {} of {} documents of {} ({}, project root {}) in {:.2}s",
        r.covered,
        r.documents,
        escaped(&r.index),
        if r.tool.is_empty() {
            "unknown indexer"
        } else {
            &r.tool
        },
        escaped(&r.project_root),
        r.duration_ms as f64 / 1000.0
    )?;
    writeln!(
        o,
        "scip: {} definitions mapped to symbols ({} without one), {} references stated: \
         {} confirmed, {} corrected, {} newly resolved, {} added, {} cleared (outside the map, \
         loci had guessed), {} outside the map; {} references to locals left out, {} into \
         documents not imported left to loci",
        r.definitions,
        r.definitions_unmapped,
        r.references,
        r.confirmed,
        r.corrected,
        r.resolved,
        r.added,
        r.cleared,
        r.external,
        r.locals,
        r.unchecked
    )?;
    if r.not_in_map > 0 {
        writeln!(
            o,
            "scip: {} not in the map (not scanned, ignored, or another language): {}",
            count(r.not_in_map, "document"),
            r.not_in_map_examples
                .iter()
                .map(|p| escaped(p).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    for s in &r.stale {
        writeln!(o, "scip: not imported {}: {}", escaped(&s.path), s.reason)?;
    }
    Ok(())
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

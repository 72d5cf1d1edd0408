//! The human text of an answer: what `loci` prints without `--json` and what every MCP
//! tool returns as its text content, one renderer per result type so that the two doors
//! never say different things. Lines are one-based (`path:line`), as editors and
//! compilers print them; the structured envelope keeps zero-based lines.
//!
//! A renderer writes the answer's body only. What surrounds it is each door's: the CLI
//! prints notes on stderr and holds the envelope for `--json`; MCP appends the notes and
//! pages long text. [`footer`] is the part both print after the body.

mod audit;
pub mod markdown;
mod memory;

use std::io::{self, Write};

use crate::Envelope;
use crate::context::context::{ContextAnswer, SearchHit};
use crate::context::why::Why;
use crate::map::code::{Callees, Outline, Source};
use crate::map::query::{Callers, Deps, Direction, Impact, Stats};
use crate::map::scan::{LanguageCount, SKIPPED_EXAMPLES, ScanReport};
use crate::map::sync::SyncReport;
use crate::map::walk::SkipReason;
use crate::store_types::{MapCounts, RefHit, SymbolHit};
use crate::words::count;

pub use self::audit::{check, drift, lint, resolved};
pub use self::memory::{
    asof, confirmed, fact, history, page, page_entry, session_begun, session_view, shown,
    synthesis_plan, synthesis_prompts, synthesis_report, team_init, team_join, team_note,
    team_status, team_sync, topic, vault, written,
};

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
    if c.secondary_left_out > 0 {
        writeln!(
            o,
            "… and {} in tests, examples or vendored code (at any confidence), left out (`--no-tests`)",
            count(c.secondary_left_out, "call")
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
        match r.target_key.as_deref() {
            Some(target) => writeln!(
                o,
                "{}:{}:{}: {} -> {} ({}, {:.2})",
                escaped(&r.path),
                r.line + 1,
                r.column + 1,
                r.name,
                escaped(target),
                r.provenance,
                r.confidence
            )?,
            None => writeln!(
                o,
                "{}:{}:{}: {} -> unresolved",
                escaped(&r.path),
                r.line + 1,
                r.column + 1,
                r.name,
            )?,
        }
    }
    if c.guesses > 0 {
        writeln!(
            o,
            "{} shown unresolved: only a name matched, below confidence {:.2}; \
             `--min-confidence 0` shows the guesses",
            count(c.guesses, "call"),
            c.min_confidence
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
    // A member listed under its owner is named by its name; one whose owner is not the
    // entry above it (a Rust `impl` block's methods, which follow whatever item came
    // before) by its qualified name: `Inner.new`, not `new` under `fn channel`.
    let mut open: Vec<&str> = Vec::new();
    for e in &f.symbols {
        let s = &e.symbol;
        let depth = e.depth as usize;
        open.truncate(depth);
        let owner = s.qualified_name.rsplit_once('.').map(|(owner, _)| owner);
        let under_owner = owner.is_some_and(|o| open.len() == depth && open.last() == Some(&o));
        let name = if depth == 0 || under_owner {
            &s.name
        } else {
            &s.qualified_name
        };
        writeln!(
            o,
            "{:indent$}{}: {} {}  {}",
            "",
            s.line + 1,
            s.kind,
            name,
            s.signature.trim(),
            indent = 2 + 2 * depth
        )?;
        if open.len() == depth {
            open.push(&s.qualified_name);
        }
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

/// Commits a `sync` answer lists, the newest (a first sync records up to `[sync]
/// max_commits`, 200 by default, too many lines to print).
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

/// How many of a deep impact's dependents are direct, when they are under half of them:
/// most of such an answer is the last hops, and a reader is told how to list the direct
/// ones alone.
pub(crate) fn direct_ones(i: &Impact) -> Option<u64> {
    let direct = i.by_depth.first().copied().unwrap_or(0);
    (i.depth > 1 && direct * 2 < i.dependents).then_some(direct)
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
        let nearer = direct_ones(i)
            .map(|direct| format!(", `--depth 1` the {}", count(direct, "direct one")))
            .unwrap_or_default();
        writeln!(
            o,
            "... and {} more, not listed ({} in all: {}); `--limit 0` lists all{nearer}",
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
    if i.secondary_left_out > 0 {
        writeln!(
            o,
            "{} in tests, examples or vendored code left out (`--no-tests`), not walked through",
            count(i.secondary_left_out, "dependent")
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
    // The files the map leaves out, named with why: a file skipped as a secret is
    // otherwise visible only in the scan's own summary.
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
/// commit may touch every file of the repository).
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

    /// `why` after `loci sync` lists at most 5 files of a commit under it, the page's own
    /// subject first, then how many more, not every file of the repository's first commit
    /// (40 of them).
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

//! The text of memory's answers: writes, pages, history, `asof`, facts, sessions, team
//! memory, page synthesis and the Obsidian vault.

use std::io;

use crate::memory::session::SessionView;
use crate::memory::{AsOf, History, PageEntry, Shown, Topic, Written};
use crate::store_types::{Fact, Page, Session};
use crate::words::count;

use super::{Out, escaped};

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

/// Names as a list of code spans: `` `a`, `b` ``.
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

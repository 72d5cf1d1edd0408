//! A page's synthesis prompt: the sections it is built from (the page, the code it is
//! about and what changed there since, its folder's pages), packed into the token budget.

use loci_store::map::{self, SymbolHit};
use loci_store::memory::{self as mem, Revision};
use loci_store::synthesis as syn;

use crate::context::context::estimate_tokens;
use crate::{Result, Workspace};

use super::{PlanItem, Prompt, Reason};

impl Workspace {
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
    pub(super) fn code_since(&self, path: &str, rev: &Revision) -> Result<Option<Since>> {
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
pub(super) struct Since {
    pub(super) commit: String,
    pub(super) diff: String,
    pub(super) changed: Vec<SymbolHit>,
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
pub(super) fn last_line(text: &str) -> Option<&str> {
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    Some(match line.char_indices().nth(200) {
        Some((i, _)) => &line[..i],
        None => line,
    })
}

//! The decision and lesson logs as views. Each decision and lesson is a page of its own
//! (`decision:7`, `lesson:3`; [`loci_store::logs`]); `loci show decisions` reads as one
//! markdown log, built here from the entries' revisions: one `- ` item per entry, in the
//! order they were added, with its author, and each entry's claims at their line in the
//! log. An entry whose text is empty (withdrawn in a rewrite of an old whole-log page) is
//! left out.

use loci_store::logs;
use loci_store::memory::{self as mem, Page, Revision};

use super::claims::ClaimView;
use super::reads::Shown;
use crate::{EngineError, Envelope, Result, Workspace};

/// The log named by `subject` (`decisions`, `lessons`), if it names one.
pub(crate) fn log_named(subject: &str) -> Option<&'static str> {
    logs::LOGS
        .iter()
        .map(|(log, _)| *log)
        .find(|log| *log == subject.trim())
}

/// The error for an operation on one page that was given a whole log.
pub(crate) fn not_a_page(log: &str) -> EngineError {
    let prefix = logs::entry_prefix(log).unwrap_or("decision:");
    EngineError::InvalidArgument {
        name: "subject".into(),
        message: format!(
            "`{log}` is a view of its entries, each a page of its own; name one \
             (`{prefix}1`, as `loci show {log}` lists them)"
        ),
    }
}

/// The page a log is shown as: no row of its own (id 0), created with its first entry and
/// updated with its last revision among `revisions`.
pub(crate) fn log_page(log: &str, revisions: &[Revision]) -> Page {
    Page {
        page_id: 0,
        subject: log.to_string(),
        kind: log.to_string(),
        pinned: false,
        current_revision_id: None,
        created_at: revisions
            .iter()
            .map(|r| r.created_at.as_str())
            .min()
            .unwrap_or_default()
            .to_string(),
        updated_at: revisions.iter().map(|r| r.created_at.clone()).max(),
    }
}

impl Workspace {
    /// The log `log` as one page: the current revision of each entry (or, with `at`, the
    /// revisions current then), rendered as the log's markdown.
    pub(crate) fn show_log(&self, log: &str, current: &[Revision]) -> Result<Envelope<Shown>> {
        let conn = self.store.conn();
        let mut current = current.to_vec();
        current.sort_by_key(|r| logs::entry_number(&r.subject));
        if current.iter().all(|r| r.body.trim().is_empty()) {
            return Err(EngineError::NotFound(format!(
                "no {log} yet (`loci {}` adds one)",
                if log == "lessons" { "learn" } else { "decide" }
            )));
        }
        let mut body = format!("# {}\n", logs::heading(log));
        let mut lines = 1;
        let mut claims = Vec::new();
        let mut ids = Vec::new();
        for r in current.iter().filter(|r| !r.body.trim().is_empty()) {
            let item = format!(
                "- {} — {}\n",
                r.body.trim_end().replace('\n', "\n  "),
                r.author
            );
            body.push('\n');
            let first_line = lines + 1;
            lines += 1 + item.lines().count() as u32;
            body.push_str(&item);
            for c in mem::claims_of(conn, r.revision_id)? {
                let mut view = ClaimView::from(&c);
                view.line += first_line;
                claims.push(view);
            }
            ids.push(r.revision_id);
        }
        let last = current
            .iter()
            .max_by_key(|r| (&r.created_at, r.revision_id));
        let page = log_page(log, &current);
        let revision = Revision {
            revision_id: 0,
            page_id: 0,
            subject: log.to_string(),
            version: current.len() as i64,
            body,
            summary: last.and_then(|r| r.summary.clone()),
            author: last.map(|r| r.author.clone()).unwrap_or_default(),
            session_id: None,
            event_id: None,
            created_at: last.map(|r| r.created_at.clone()).unwrap_or_default(),
        };
        self.memory_envelope(
            Shown {
                page,
                revision,
                claims,
                current: true,
                members: Vec::new(),
            },
            &ids,
            Vec::new(),
        )
    }

    /// The current revision of each entry of `log`, in the log's order.
    pub(crate) fn log_revisions(&self, log: &str) -> Result<Vec<Revision>> {
        Ok(logs::current_revisions(self.store.conn(), log)?)
    }
}

//! `team join`: a standalone store's memory brought into a team — pages the team lacks
//! uploaded, pages both have renumbered or reported as diverged, what the team has pulled.

use loci_store::memory::{self as mem};
use loci_store::team as replica;
use loci_store::{StoreError, logs};
use loci_team::{NewEvent, WriteOutcome};
use serde::Serialize;

use crate::memory::portability::{ExportedDismissal, ExportedFact, ExportedSession, fact_hash};
use crate::{Envelope, Result, Workspace};

use super::apply::TopicChange;
use super::host;

/// What `loci team join` uploaded.
#[derive(Clone, Debug, Default, Serialize)]
pub struct JoinReport {
    /// Pages whose revisions are all on the server now.
    pub pages: u64,
    /// Revisions uploaded now.
    pub revisions: u64,
    /// Revisions that were on the server already (an earlier join): not uploaded again.
    pub already: u64,
    /// Pins uploaded now.
    pub pins: u64,
    /// Topic members, fact definitions, sessions and dismissals uploaded now (each under
    /// an operation id made of its key, so a second join replays them and counts none).
    pub shared: u64,
    /// Decisions and lessons of this store whose number the team's log holds for another
    /// entry: renumbered here before the upload, past the highest number either knows
    /// (their order kept), so both entries live on under numbers every checkout shares.
    pub renumbered: Vec<Renumbered>,
    /// Pages the server holds another history of: this store's revisions of each were
    /// appended to the page's history on the server, the team's text kept current.
    pub diverged: Vec<Diverged>,
    /// Pages that could not be uploaded (by subject): the team wrote the page during
    /// each of three attempts, or an operation id was used for another request.
    pub conflicts: Vec<String>,
    /// Pages with a revision the secret checks refuse (a credential in its text, written
    /// before a rule caught it): not uploaded from that revision on, as `subject: why`.
    pub refused: Vec<String>,
    /// Events of other checkouts applied here afterwards.
    pub pulled: u64,
}

/// A page the team and this store each had a history of before the join.
#[derive(Clone, Debug, Serialize)]
pub struct Diverged {
    /// The page.
    pub subject: String,
    /// This store's revisions appended to the team's history of it.
    pub uploaded: u64,
    /// Their first and last version here.
    pub here: [i64; 2],
    /// Their first and last version in the team's history.
    pub team: [i64; 2],
    /// The page's version now, here and in the team: its text is the team's from
    /// before the join (a revision of the join's, after this store's), unless this
    /// store's last text was the team's already.
    pub current: i64,
    /// How to settle it, in commands.
    pub settle: String,
}

/// A log entry a join renumbered.
#[derive(Clone, Debug, Serialize)]
pub struct Renumbered {
    /// Its subject before (`decision:1`).
    pub from: String,
    /// Its subject now, here and on the server (`decision:3`).
    pub to: String,
}

/// What the team's log holds besides revisions ([`Workspace::team_has`]).
#[derive(Debug, Default)]
struct TeamHas {
    /// Pages the team pinned or unpinned: its latest word on them stands (a replica
    /// behind an unpin does not pin the page again).
    pins: std::collections::HashSet<String>,
    /// `(topic, member)` pairs the team added or removed, likewise.
    members: std::collections::HashSet<(String, String)>,
    /// Fact definitions, by [`fact_hash`].
    facts: std::collections::HashSet<String>,
    /// Sessions by key, and whether the team has them ended.
    sessions: std::collections::HashMap<String, bool>,
    /// Dismissed findings, by key.
    dismissals: std::collections::HashSet<String>,
}

/// The operation id a join uploads version `version` of the page with uid `uid` under.
fn join_op(uid: &str, version: i64) -> String {
    format!("join:{uid}:v{version}")
}

impl Workspace {
    /// `loci team join`: uploads what this store holds and the team's log does not —
    /// every revision of every page, in version order, each under an operation id made of
    /// its page's uid and version, the pins and topic members the team lacks, and every
    /// topic member, fact definition, session and dismissal the team lacks under an
    /// operation id made of its key — so a second join finds it all on the server and
    /// adds nothing. A page the server holds another history of (another checkout wrote
    /// it first) keeps the team's text current: this store's revisions are appended to
    /// the page's history on the server, and the team's text after them, in one server
    /// transaction ([`JoinReport::diverged`] says where each went and how to settle).
    /// Then pulls what the others wrote (this store's own uploads come back as nothing
    /// new).
    pub fn team_join(&mut self) -> Result<Envelope<JoinReport>> {
        let mut report = JoinReport::default();
        self.join_renumber(&mut report)?;
        // Revisions the team's log holds already: pulled from it, or uploaded by an
        // earlier join whose pull recorded them.
        let on_server: std::collections::HashSet<i64> =
            replica::applied_revisions(self.store.conn())?
                .into_iter()
                .map(|(revision, _)| revision)
                .collect();
        let has = self.team_has()?;
        let checkout = Some(format!("{}:{}", host(), self.root.display()));
        let pages = mem::pages(self.store.conn())?;
        for page in pages {
            let conn = self.store.conn();
            let uid = mem::page_uid(conn, page.page_id)?;
            let revisions = mem::revisions_of(conn, page.page_id)?;
            // This store's own revisions the team's log lacks, in order.
            let mut own = Vec::new();
            let mut refused = None;
            for r in revisions {
                // The secret checks of a write, before anything is sent.
                if let Err(e) = self
                    .accept_text("body", &r.body)
                    .and_then(|()| match &r.summary {
                        Some(s) => self.accept_text("summary", s),
                        None => Ok(()),
                    })
                {
                    refused = Some(format!("{}: v{}: {e}", page.subject, r.version));
                    break;
                }
                let conn = self.store.conn();
                if on_server.contains(&r.revision_id)
                    || replica::applied(conn, &join_op(&uid, r.version))?.is_some()
                {
                    report.already += 1;
                    continue;
                }
                // The kind of write it was here (an export names it), else an import.
                let event_kind = match r.event_id {
                    Some(id) => mem::event_by_id(conn, id)?.map(|e| e.kind),
                    None => None,
                }
                .filter(|k| {
                    [
                        "remember", "decision", "lesson", "rollback", "import", "confirm",
                    ]
                    .contains(&k.as_str())
                })
                .unwrap_or_else(|| "import".into());
                own.push(NewEvent {
                    op_id: join_op(&uid, r.version),
                    request_hash: loci_core::fingerprint::content_hash(r.body.as_bytes()),
                    kind: "revision".into(),
                    event_kind,
                    subject: page.subject.clone(),
                    page_kind: page.kind.clone(),
                    expect_version: Some(r.version - 1),
                    body: Some(r.body.clone()),
                    summary: r.summary.clone(),
                    author: r.author.clone(),
                    checkout: checkout.clone(),
                    commit: None,
                    written_at: r.created_at.clone(),
                    payload: None,
                });
            }
            // This store has the uploaded revisions already: the pull at the end finds each
            // by its operation id (`join:UID:vN`) and records it as applied without
            // applying it again. Recording it here, under its server sequence number, would
            // move the high-water mark past other checkouts' events not pulled yet.
            let mut clean = true;
            let mut rest = own.as_slice();
            while let Some(event) = rest.first() {
                match self.link()?.call(|t| t.write(event))? {
                    WriteOutcome::Written { .. } => report.revisions += 1,
                    WriteOutcome::Replayed { .. } => report.already += 1,
                    WriteOutcome::Conflict { .. } => {
                        clean = self.join_diverged(&mut report, &uid, rest)?;
                        break;
                    }
                    WriteOutcome::OpReused => {
                        clean = false;
                        break;
                    }
                }
                rest = &rest[1..];
            }
            if let Some(why) = refused {
                report.refused.push(why);
                continue;
            }
            if !clean {
                report.conflicts.push(page.subject.clone());
                continue;
            }
            // A pin or a member the team has decided on (this page came from the
            // server, or a checkout pinned, unpinned, added or removed it) is not
            // uploaded: the team's latest word stands.
            if page.pinned && !has.pins.contains(&page.subject) {
                let op_id = format!("join:{uid}:pin");
                if replica::applied(self.store.conn(), &op_id)?.is_none() {
                    let event = NewEvent {
                        op_id: op_id.clone(),
                        request_hash: "pin".into(),
                        kind: "pin".into(),
                        event_kind: "pin".into(),
                        subject: page.subject.clone(),
                        page_kind: page.kind.clone(),
                        expect_version: None,
                        body: None,
                        summary: None,
                        author: crate::memory::memory::default_author(),
                        checkout: checkout.clone(),
                        commit: None,
                        written_at: crate::envelope::now_rfc3339(),
                        payload: None,
                    };
                    if let WriteOutcome::Written { .. } = self.link()?.call(|t| t.write(&event))? {
                        report.pins += 1;
                    }
                }
            }
            if page.kind == "topic" {
                for member in mem::topic_members(self.store.conn(), page.page_id)? {
                    if has
                        .members
                        .contains(&(page.subject.clone(), member.clone()))
                    {
                        continue;
                    }
                    let change = TopicChange {
                        member: member.clone(),
                        added: true,
                    };
                    let op = format!(
                        "join:{uid}:member:{}",
                        loci_core::fingerprint::content_hash(member.as_bytes())
                    );
                    let author = crate::memory::memory::default_author();
                    self.join_shared(&mut report, op, "topic", &page.subject, &author, &change)?;
                }
            }
            report.pages += 1;
        }
        self.join_unpaged(&mut report, &has)?;
        report.pulled = self.team_pull(None)?;
        self.envelope(report, Vec::new())
    }

    /// A page the server holds another history of: `own` are this store's revisions the
    /// team lacks (in order). They are appended to the page's history on the server,
    /// with their authors, times and this checkout, and then the team's text again —
    /// so no revision of either side is lost and the team's current text stays current
    /// until someone chooses otherwise — in one server transaction, retried when the
    /// team wrote the page meanwhile. Recorded in [`JoinReport::diverged`]; false when
    /// it could not be done (the page is then a conflict).
    fn join_diverged(
        &mut self,
        report: &mut JoinReport,
        uid: &str,
        own: &[NewEvent],
    ) -> Result<bool> {
        let Some(last) = own.last() else {
            return Ok(true);
        };
        let subject = last.subject.clone();
        let here_first = own[0].expect_version.unwrap_or_default() + 1;
        let here_last = last.expect_version.unwrap_or_default() + 1;
        // Three attempts: each reads the team's head and appends after it, or, when the
        // team wrote the page in between, appends nothing.
        for _ in 0..3 {
            let Some((team_head, team_body)) = self.link()?.call(|t| t.head(&subject))? else {
                return Ok(false);
            };
            let mut batch: Vec<NewEvent> = own
                .iter()
                .enumerate()
                .map(|(i, e)| NewEvent {
                    expect_version: Some(team_head + i as i64),
                    payload: Some(
                        serde_json::json!({"joined": {"version": e.expect_version.unwrap_or_default() + 1}})
                            .to_string(),
                    ),
                    ..e.clone()
                })
                .collect();
            let same = last.body.as_deref() == Some(team_body.as_str());
            let uploaded_to = team_head + own.len() as i64;
            if !same {
                let summary = format!(
                    "the team's text, kept current after a join: v{}–v{uploaded_to} are the \
                     history of this page that checkout {} had",
                    team_head + 1,
                    last.checkout.as_deref().unwrap_or("unknown")
                );
                batch.push(NewEvent {
                    op_id: format!("join-keep:{uid}:v{here_last}"),
                    request_hash: loci_core::fingerprint::content_hash(team_body.as_bytes()),
                    kind: "revision".into(),
                    event_kind: "join".into(),
                    subject: subject.clone(),
                    page_kind: last.page_kind.clone(),
                    expect_version: Some(uploaded_to),
                    body: Some(team_body.clone()),
                    summary: Some(summary),
                    author: crate::memory::memory::default_author(),
                    checkout: last.checkout.clone(),
                    commit: None,
                    written_at: crate::envelope::now_rfc3339(),
                    payload: None,
                });
            }
            let outcomes = self.link()?.call(|t| t.write_all(&batch))?;
            match outcomes.last() {
                Some(WriteOutcome::OpReused) => return Ok(false),
                // The team wrote the page meanwhile: read its head again.
                Some(WriteOutcome::Conflict { .. }) => continue,
                _ => {}
            }
            let written = outcomes
                .iter()
                .take(own.len())
                .filter(|o| matches!(o, WriteOutcome::Written { .. }))
                .count() as u64;
            report.revisions += written;
            report.already += own.len() as u64 - written;
            let current = if same { uploaded_to } else { uploaded_to + 1 };
            // Here, the team's revisions this store lacks come after its own (the pull),
            // so its last text stays at `here_last` and the page reaches `current`, the
            // server's version: a guard written here holds there.
            let settle = if same {
                "nothing to settle: the team's text is this checkout's".to_string()
            } else {
                format!(
                    "to make this checkout's text current: `loci rollback {subject} \
                     {here_last} --expect-version {current}`; or write the text both \
                     should have: `loci remember {subject} --expect-version {current} …`"
                )
            };
            report.diverged.push(Diverged {
                subject: subject.clone(),
                uploaded: own.len() as u64,
                here: [here_first, here_last],
                team: [team_head + 1, uploaded_to],
                current,
                settle,
            });
            return Ok(true);
        }
        Ok(false)
    }

    /// The first step of [`Workspace::team_join`]: decisions and lessons are numbered per
    /// checkout until they are shared, so two stores that each wrote `decision:1` before
    /// joining hold two different entries under one number. An entry is the team's entry
    /// of its number when it came from the server (a revision of it was applied here) or
    /// when the server's entry of that number is this entry's own earlier upload (its
    /// first revision's operation id names this entry's uid, as a join makes it) — the uid
    /// is an entry's identity, as `loci import` has it. Any other entry whose number the
    /// server holds is renumbered here, past the highest number the server or this store
    /// knows, and so is every entry of its log after it (this store's entries keep their
    /// order); the page moves with its revisions, claims and findings (a `rename` event
    /// records it). Then the upload finds each number free, and every checkout names the
    /// entry alike.
    fn join_renumber(&mut self, report: &mut JoinReport) -> Result<()> {
        let from_server: std::collections::HashSet<i64> =
            replica::applied_revisions(self.store.conn())?
                .into_iter()
                .map(|(_, page)| page)
                .collect();
        for (log, prefix) in logs::LOGS {
            let on_server: std::collections::BTreeMap<i64, String> = self
                .link()?
                .call(|t| t.first_ops(prefix))?
                .into_iter()
                .filter_map(|(subject, op)| Some((logs::entry_number(&subject)?, op)))
                .collect();
            let mut here: Vec<(i64, mem::Page)> = mem::pages(self.store.conn())?
                .into_iter()
                .filter(|p| p.kind == log)
                .filter_map(|p| Some((logs::entry_number(&p.subject)?, p)))
                .collect();
            here.sort_by_key(|(n, _)| *n);
            let highest = |m: Option<&i64>| m.copied().unwrap_or(0);
            let mut next =
                highest(on_server.keys().next_back()).max(highest(here.last().map(|(n, _)| n))) + 1;
            let mut shifting = false;
            for (number, page) in here {
                if from_server.contains(&page.page_id) {
                    continue;
                }
                let uid = mem::page_uid(self.store.conn(), page.page_id)?;
                match on_server.get(&number) {
                    Some(op) if *op == format!("join:{uid}:v1") => continue,
                    None if !shifting => continue,
                    _ => shifting = true,
                }
                let to = format!("{prefix}{next}");
                next += 1;
                let source_ref = format!("team:join:{uid}");
                self.store
                    .write(|tx| crate::map::sync::move_page(tx, &page.subject, &to, &source_ref))?;
                report.renumbered.push(Renumbered {
                    from: page.subject,
                    to,
                });
            }
        }
        Ok(())
    }

    /// What the team's log holds of what a join would upload besides revisions: the
    /// pages it pinned or unpinned, the members it added to or removed from topics, and
    /// the keys of its facts, sessions and dismissals — whichever checkout wrote them,
    /// under whichever operation id.
    fn team_has(&mut self) -> Result<TeamHas> {
        let events = self.link()?.call(|t| {
            t.shared_events(&["pin", "unpin", "topic", "fact", "session", "dismissal"])
        })?;
        let mut has = TeamHas::default();
        for (kind, subject, payload) in events {
            let payload = payload.unwrap_or_default();
            match kind.as_str() {
                "pin" | "unpin" => {
                    has.pins.insert(subject);
                }
                "topic" => {
                    if let Ok(t) = serde_json::from_str::<TopicChange>(&payload) {
                        has.members.insert((subject, t.member));
                    }
                }
                "fact" => {
                    if let Ok(f) = serde_json::from_str::<ExportedFact>(&payload) {
                        has.facts.insert(fact_hash(&f));
                    }
                }
                "session" => {
                    if let Ok(s) = serde_json::from_str::<ExportedSession>(&payload) {
                        let ended = s.ended_at.is_some();
                        let known = has.sessions.entry(s.key).or_default();
                        *known |= ended;
                    }
                }
                "dismissal" => {
                    if let Ok(d) = serde_json::from_str::<ExportedDismissal>(&payload) {
                        has.dismissals.insert(d.finding_key);
                    }
                }
                _ => {}
            }
        }
        Ok(has)
    }

    /// The part of [`Workspace::team_join`] that belongs to no page: every fact definition,
    /// session and dismissal, each passing the secret checks of a write first (a refusal is
    /// named in [`JoinReport::refused`]).
    fn join_unpaged(&mut self, report: &mut JoinReport, has: &TeamHas) -> Result<()> {
        let conn = self.store.conn();
        let facts: Vec<ExportedFact> = mem::facts(conn)?.iter().map(ExportedFact::from).collect();
        let mut sessions = Vec::new();
        for s in mem::sessions(conn)? {
            let digest = match &s.digest {
                Some(json) => serde_json::from_str(json).unwrap_or_default(),
                None => self.digest(&s, None)?,
            };
            sessions.push(ExportedSession::of(s, digest));
        }
        let dismissals: Vec<ExportedDismissal> =
            loci_store::audit::contradictions(conn, Some("dismissed"))?
                .into_iter()
                .map(ExportedDismissal::from)
                .collect();
        for f in facts {
            if has.facts.contains(&fact_hash(&f)) {
                continue;
            }
            let texts = [Some(&f.claim), Some(&f.command), f.expect_output.as_ref()];
            if let Some(e) = texts
                .into_iter()
                .flatten()
                .find_map(|t| self.accept_text("fact", t).err())
            {
                report.refused.push(format!("fact `{}`: {e}", f.claim));
                continue;
            }
            let op = format!("join:fact:{}", fact_hash(&f));
            let author = f.author.clone();
            self.join_shared(report, op, "fact", "", &author, &f)?;
        }
        for s in sessions {
            // The team has it in this state, or ended.
            if has
                .sessions
                .get(&s.key)
                .is_some_and(|ended| *ended || s.ended_at.is_none())
            {
                continue;
            }
            let texts = [s.task.as_ref(), s.summary.as_ref()];
            if let Some(e) = texts
                .into_iter()
                .flatten()
                .find_map(|t| self.accept_text("session", t).err())
            {
                report
                    .refused
                    .push(format!("session {}: {e}", s.started_at));
                continue;
            }
            // Begun and ended are two states of a session: one joined open and ended since
            // is shared again, as ended.
            let state = if s.ended_at.is_some() {
                "ended"
            } else {
                "begun"
            };
            let op = format!("join:session:{}:{state}", s.key);
            let author = s.author.clone();
            self.join_shared(report, op, "session", "", &author, &s)?;
        }
        for d in dismissals {
            if has.dismissals.contains(&d.finding_key) {
                continue;
            }
            if let Some(e) = d
                .notes
                .as_ref()
                .and_then(|n| self.accept_text("notes", n).err())
            {
                report
                    .refused
                    .push(format!("dismissal of `{}` in {}: {e}", d.claim, d.subject));
                continue;
            }
            let op = format!("join:dismissal:{}", d.finding_key);
            let author = crate::memory::memory::default_author_in(Some(self.root.as_path()));
            let subject = d.subject.clone();
            self.join_shared(report, op, "dismissal", &subject, &author, &d)?;
        }
        Ok(())
    }

    /// Uploads one joined item that is not a revision under `op_id`; counts it in
    /// [`JoinReport::shared`] when the server stored it now (a replay adds nothing).
    fn join_shared(
        &mut self,
        report: &mut JoinReport,
        op_id: String,
        kind: &str,
        subject: &str,
        author: &str,
        payload: &impl Serialize,
    ) -> Result<()> {
        let payload =
            serde_json::to_string(payload).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let event = NewEvent {
            request_hash: loci_core::fingerprint::content_hash(payload.as_bytes()),
            op_id,
            kind: kind.into(),
            event_kind: "join".into(),
            subject: subject.into(),
            page_kind: if kind == "topic" { "topic" } else { "" }.into(),
            expect_version: None,
            body: None,
            summary: None,
            author: author.into(),
            checkout: Some(format!("{}:{}", host(), self.root.display())),
            commit: None,
            written_at: crate::envelope::now_rfc3339(),
            payload: Some(payload),
        };
        if let WriteOutcome::Written { .. } = self.link()?.call(|t| t.write(&event))? {
            report.shared += 1;
        }
        Ok(())
    }
}

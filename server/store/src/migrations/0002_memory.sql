-- 0002: authored memory (pages, append-only revisions, claims, facts, sessions, topics)
-- and the audit's event log. Authored rows are never updated in place where history
-- matters: a correction or rollback is a new revision; the database refuses UPDATE and
-- DELETE on revisions.

-- The conversation diary. start_/end_ columns are ID high-water marks (not timestamps),
-- so two sessions begun in the same second never claim each other's rows.
CREATE TABLE sessions (
    session_id         INTEGER PRIMARY KEY,
    task               TEXT,
    author             TEXT NOT NULL,
    started_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    ended_at           TEXT,
    summary            TEXT,
    start_event_id     INTEGER NOT NULL,
    start_revision_id  INTEGER NOT NULL,
    end_event_id       INTEGER,
    end_revision_id    INTEGER,
    branch             TEXT,
    head               TEXT,
    digest             TEXT                     -- JSON, written at session end
) STRICT;

-- The audit log. Idempotent on (source_ref, subject): a commit seen twice is one event.
CREATE TABLE events (
    event_id    INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,                  -- commit, snapshot, remember, decision, lesson,
                                                -- rollback, rename, confirm, pin, unpin, resolve,
                                                -- topic, fact, import, session_begin, session_end
    source_ref  TEXT NOT NULL,                  -- commit hash, snapshot ref, operation ref
    subject     TEXT NOT NULL DEFAULT '',
    payload     TEXT,                           -- JSON
    session_id  INTEGER REFERENCES sessions(session_id),
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (source_ref, subject)
) STRICT;
CREATE INDEX events_by_subject ON events(subject, event_id);

-- Commits seen by `loci sync`.
CREATE TABLE commits (
    hash          TEXT PRIMARY KEY,
    message       TEXT NOT NULL,
    author        TEXT NOT NULL,
    committed_at  TEXT NOT NULL,                -- RFC 3339
    files         TEXT NOT NULL                 -- JSON array of touched paths
) STRICT;

-- One page per subject: a file path, a folder, '.', 'topic:NAME', 'decisions', 'lessons'.
-- The subject moves when git reports a rename; page_id is the identity.
CREATE TABLE pages (
    page_id              INTEGER PRIMARY KEY,
    subject              TEXT NOT NULL UNIQUE,
    kind                 TEXT NOT NULL CHECK (kind IN ('file', 'folder', 'root', 'topic', 'decisions', 'lessons')),
    pinned               INTEGER NOT NULL DEFAULT 0,
    current_revision_id  INTEGER,
    created_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at           TEXT
) STRICT;

CREATE TABLE revisions (
    revision_id   INTEGER PRIMARY KEY,
    page_id       INTEGER NOT NULL REFERENCES pages(page_id),
    version       INTEGER NOT NULL,
    body          TEXT NOT NULL,                -- markdown
    summary       TEXT,
    author        TEXT NOT NULL,
    session_id    INTEGER REFERENCES sessions(session_id),
    event_id      INTEGER REFERENCES events(event_id),
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (page_id, version)
) STRICT;
CREATE INDEX revisions_by_session ON revisions(session_id);

-- Inserting is publishing: the page's current revision advances in the database.
CREATE TRIGGER revisions_publish AFTER INSERT ON revisions BEGIN
    UPDATE pages SET current_revision_id = new.revision_id, updated_at = new.created_at
     WHERE page_id = new.page_id;
END;
CREATE TRIGGER revisions_append_only_update BEFORE UPDATE ON revisions BEGIN
    SELECT RAISE(ABORT, 'revisions are append-only: write a new revision instead of updating one');
END;
CREATE TRIGGER revisions_append_only_delete BEFORE DELETE ON revisions BEGIN
    SELECT RAISE(ABORT, 'revisions are append-only: a revision cannot be deleted');
END;

-- Full-text index over revision bodies (external content, kept in sync by trigger; no
-- update/delete triggers are needed because revisions cannot change).
CREATE VIRTUAL TABLE revisions_fts USING fts5(
    body, summary, content = 'revisions', content_rowid = 'revision_id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER revisions_fts_insert AFTER INSERT ON revisions BEGIN
    INSERT INTO revisions_fts(rowid, body, summary) VALUES (new.revision_id, new.body, new.summary);
END;

-- Claims extracted from a revision body: what the prose says about the code, with a
-- snapshot of the target's fingerprint when written (the basis of staleness).
CREATE TABLE claims (
    claim_id            INTEGER PRIMARY KEY,
    revision_id         INTEGER NOT NULL REFERENCES revisions(revision_id),
    kind                TEXT NOT NULL CHECK (kind IN ('path', 'symbol', 'version')),
    text                TEXT NOT NULL,          -- as written, without backticks
    target              TEXT NOT NULL,          -- path, symbol name, or package name
    version             TEXT,                   -- for version claims
    start_byte          INTEGER NOT NULL,       -- span in the revision body
    end_byte            INTEGER NOT NULL,
    line                INTEGER NOT NULL,       -- zero-based line in the body
    resolved            TEXT,                   -- path or symbol key it resolved to
    snapshot            TEXT,                   -- file semantic / symbol body fingerprint
    signature_snapshot  TEXT,                   -- symbol signature fingerprint
    snapshot_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE INDEX claims_by_revision ON claims(revision_id);
CREATE INDEX claims_by_resolved ON claims(resolved);

-- A page's own subject snapshot per revision (file fingerprint when the page is a file).
CREATE TABLE page_snapshots (
    revision_id   INTEGER PRIMARY KEY REFERENCES revisions(revision_id),
    fingerprint   TEXT,
    snapshot_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

CREATE TABLE topic_members (
    topic_page_id  INTEGER NOT NULL REFERENCES pages(page_id),
    subject        TEXT NOT NULL,
    added_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (topic_page_id, subject)
) STRICT;

-- Executable memory. Never run unless [facts] run = true.
CREATE TABLE facts (
    fact_id        INTEGER PRIMARY KEY,
    claim          TEXT NOT NULL,
    command        TEXT NOT NULL,
    expect_output  TEXT,
    expect_exit    INTEGER,
    author         TEXT NOT NULL,
    session_id     INTEGER REFERENCES sessions(session_id),
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

CREATE TABLE fact_runs (
    run_id       INTEGER PRIMARY KEY,
    fact_id      INTEGER NOT NULL REFERENCES facts(fact_id),
    status       TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'error', 'timeout')),
    exit_code    INTEGER,
    output       TEXT NOT NULL,                 -- stdout+stderr, capped
    duration_ms  INTEGER NOT NULL,
    ran_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

-- Receipts for idempotent retries: an operation id maps to the request it carried and the
-- result it produced.
CREATE TABLE operations (
    operation_id  TEXT PRIMARY KEY,
    request_hash  TEXT NOT NULL,
    result        TEXT NOT NULL,                -- JSON
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

-- 0003: the audit (append-only where it is history): contradictions found by lint, the
-- drift ledger of observed file changes, the current stale marks, and per-scan changes
-- in the knowledge ("what became stale or false in scan N").

-- A claim (in memory or in the repository's docs) that the code contradicts.
-- finding_key identifies "the same finding" across lint runs: origin, subject, kind and
-- the claim's target (never a line number, so harmless line shifts keep the identity).
CREATE TABLE contradictions (
    contradiction_id  INTEGER PRIMARY KEY,
    finding_key       TEXT NOT NULL UNIQUE,
    origin            TEXT NOT NULL CHECK (origin IN ('page', 'doc')),
    subject           TEXT NOT NULL,            -- page subject, or doc path
    revision_id       INTEGER,                  -- for page claims: the revision checked
    kind              TEXT NOT NULL CHECK (kind IN ('missing_path', 'missing_symbol', 'version_mismatch')),
    severity          TEXT NOT NULL CHECK (severity IN ('high', 'medium', 'low')),
    claim             TEXT NOT NULL,            -- as written
    target            TEXT NOT NULL,
    truth             TEXT,                     -- what the code says instead
    suggestion        TEXT,                     -- e.g. the path it was renamed to
    line              INTEGER NOT NULL,         -- zero-based (doc line, or line in the body)
    column            INTEGER NOT NULL,         -- zero-based byte column
    end_column        INTEGER NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('open', 'resolved', 'dismissed')),
    resolution_kind   TEXT CHECK (resolution_kind IN ('auto', 'human')),
    notes             TEXT,
    detected_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    resolved_at       TEXT,
    reopened          INTEGER NOT NULL DEFAULT 0,   -- times it recurred after an auto-resolve
    scan_id           INTEGER                       -- scan revision of the last state change
) STRICT;
CREATE INDEX contradictions_by_status ON contradictions(status, subject);

-- One entry per observed change of a file, deduplicated on (path, old, new, kind).
CREATE TABLE drift (
    drift_id   INTEGER PRIMARY KEY,
    scan_id    INTEGER NOT NULL,
    path       TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('add', 'modify', 'delete', 'rename', 'signature_change')),
    old_hash   TEXT,
    new_hash   TEXT,
    detail     TEXT,                             -- renamed-from path, or the symbol key
    source     TEXT NOT NULL DEFAULT 'scan' CHECK (source IN ('scan', 'overlay')),
    at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE UNIQUE INDEX drift_dedup ON drift(path, ifnull(old_hash, ''), ifnull(new_hash, ''), kind, ifnull(detail, ''));
CREATE INDEX drift_by_scan ON drift(scan_id);
CREATE TRIGGER drift_append_only_update BEFORE UPDATE ON drift BEGIN
    SELECT RAISE(ABORT, 'the drift ledger is append-only');
END;
CREATE TRIGGER drift_append_only_delete BEFORE DELETE ON drift BEGIN
    SELECT RAISE(ABORT, 'the drift ledger is append-only');
END;

-- The stale marks as of the last audit (rewritten by each audit; the live answer is
-- always recomputed). mark_key = revision id + claim id (or 'page').
CREATE TABLE stale_marks (
    mark_key     TEXT PRIMARY KEY,
    subject      TEXT NOT NULL,
    revision_id  INTEGER NOT NULL,
    claim_id     INTEGER,
    reason       TEXT NOT NULL,                  -- JSON StaleReason
    since_scan   INTEGER
) STRICT;

-- What changed in the knowledge at each scan revision.
CREATE TABLE knowledge_changes (
    change_id    INTEGER PRIMARY KEY,
    scan_id      INTEGER NOT NULL,
    change       TEXT NOT NULL CHECK (change IN ('became_stale', 'no_longer_stale', 'became_false', 'no_longer_false', 'recurred')),
    subject      TEXT NOT NULL,
    detail       TEXT NOT NULL,                  -- the reason or the finding, in words
    at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE INDEX knowledge_changes_by_scan ON knowledge_changes(scan_id);

-- Claims in the repository's docs that once resolved: a doc claim that resolved at some
-- lint and no longer does is a contradiction however it is written (docs have no
-- fingerprint snapshots; this is their memory of having been true).
CREATE TABLE doc_claims (
    doc_path         TEXT NOT NULL,
    kind             TEXT NOT NULL,
    target           TEXT NOT NULL,
    resolved         TEXT NOT NULL,
    first_seen_scan  INTEGER NOT NULL,
    PRIMARY KEY (doc_path, kind, target)
) STRICT;

-- 0025: the checkout's side of team memory (issue 34; the server's side is
-- `server/team/src/migrations/`). Both tables stay empty in a store without `[team]`.
--
-- `team_applied`: each server event this replica has applied, by operation id (unique
-- across machines), with the server's sequence number and the local revision it became.
-- The replica's high-water mark is the highest `seq`; an event whose operation id is
-- here is never applied twice.
CREATE TABLE team_applied (
    op_id        TEXT PRIMARY KEY,
    seq          INTEGER NOT NULL UNIQUE,
    revision_id  INTEGER REFERENCES revisions(revision_id),
    applied_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

-- `team_outbox`: writes made while the server was unreachable, in the order they were
-- made, each under its operation id, pushed when it returns (exactly once: the server
-- refuses a second event with the same operation id). A pushed write leaves the outbox in
-- the transaction that applies it; one the server refused (a version conflict) stays with
-- `failed` set and its reason, for `loci team status` to show.
CREATE TABLE team_outbox (
    outbox_id   INTEGER PRIMARY KEY,
    op_id       TEXT NOT NULL UNIQUE,
    write       TEXT NOT NULL,
    queued_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    failed      TEXT
) STRICT;

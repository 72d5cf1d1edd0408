-- 0001: team memory's system of record (issue 34). Everything lives in the schema `loci`.
--
-- `events` is the append-only log every checkout replicates: one row per authored write
-- (a revision of a page, a pin), numbered by `seq` (a bigserial; writers take one
-- advisory lock, so sequence numbers commit in order and a replica's high-water mark
-- never skips a row committed later). `op_id` is the write's operation id, unique across
-- machines: a retry, or a write queued offline and pushed twice, is stored once.
-- `pages` holds each page's head version, the revision guard's only state.
CREATE TABLE loci.pages (
    subject    text PRIMARY KEY,
    kind       text NOT NULL,
    version    integer NOT NULL CHECK (version >= 0),
    head_seq   bigint NOT NULL
);

CREATE TABLE loci.events (
    seq           bigserial PRIMARY KEY,
    op_id         text NOT NULL UNIQUE,
    request_hash  text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('revision', 'pin', 'unpin')),
    event_kind    text NOT NULL,
    subject       text NOT NULL,
    page_kind     text NOT NULL,
    version       integer NOT NULL,
    body          text,
    summary       text,
    author        text NOT NULL,
    checkout      text,
    commit_hash   text,
    written_at    text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (kind <> 'revision' OR body IS NOT NULL)
);

CREATE INDEX events_by_subject ON loci.events(subject, seq);

-- Revisions are append-only on the server too: no client can rewrite or delete one,
-- whatever its privileges on the table.
CREATE FUNCTION loci.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'loci: % on loci.% is refused: team memory is append-only', TG_OP, TG_TABLE_NAME;
END
$$;

CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON loci.events
    FOR EACH ROW EXECUTE FUNCTION loci.refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON loci.events
    FOR EACH STATEMENT EXECUTE FUNCTION loci.refuse_change();

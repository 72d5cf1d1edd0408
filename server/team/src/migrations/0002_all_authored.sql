-- 0002: everything authored replicates, not only pages (issue 34): topic members, fact
-- definitions, sessions and dismissals of findings become events of the same log.
--
-- `payload` carries such an event's content as JSON (a topic member and whether it was
-- added; a fact definition; a session; a dismissed finding), and for a revision the key
-- of the session it was written in. Adding a column rewrites no row, so the append-only
-- trigger is not involved; older rows keep NULL.
ALTER TABLE loci.events ADD COLUMN payload text;

ALTER TABLE loci.events DROP CONSTRAINT events_kind_check;
ALTER TABLE loci.events ADD CONSTRAINT events_kind_check
    CHECK (kind IN ('revision', 'pin', 'unpin', 'topic', 'fact', 'session', 'dismissal'));
-- An event that is not about a page carries its content.
ALTER TABLE loci.events ADD CONSTRAINT events_payload_check
    CHECK (kind NOT IN ('topic', 'fact', 'session', 'dismissal') OR payload IS NOT NULL);

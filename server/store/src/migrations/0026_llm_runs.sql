-- 0026: one row per model run whose answer became a revision (issue 35, item 4): page
-- synthesis hands a prompt loci built to a command the user configured (`[synthesis]
-- command`) and stores the markdown it answered as a revision authored `llm:MODEL`. The
-- row is its provenance: which program answered (the command's first word, never its
-- arguments, which may hold a key), the model label, token estimates of the prompt and the
-- answer (characters / 4), wall time and exit status. A failed, timed-out, empty or refused
-- run writes no revision and no row.
-- (Migration 25 is another branch's until they merge.)

CREATE TABLE llm_runs (
    run_id         INTEGER PRIMARY KEY,
    revision_id    INTEGER NOT NULL UNIQUE REFERENCES revisions(revision_id),
    event_id       INTEGER NOT NULL REFERENCES events(event_id),
    command        TEXT NOT NULL,                 -- the program's name, without arguments
    model          TEXT NOT NULL,                 -- the `[synthesis] model` label
    prompt_tokens  INTEGER NOT NULL,              -- estimate: characters / 4
    answer_tokens  INTEGER NOT NULL,              -- estimate: characters / 4
    wall_ms        INTEGER NOT NULL,
    exit_status    INTEGER NOT NULL,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

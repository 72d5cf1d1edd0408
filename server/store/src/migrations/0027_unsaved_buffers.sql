-- 0027: unsaved editor buffers a running language server shares with the other processes
-- of this store (issue 33, item 8): an agent's answer (`loci context`, `why`, MCP) about a
-- file open with unsaved edits judges memory against the text the engineer is typing, not
-- the saved file. One row per open document whose text differs from the disk, written
-- after each analysis of it; dropped when the editor saves or closes it and when its
-- server shuts down. A row of a server no longer running (killed) is ignored by readers
-- and removed by the next write of any server. Never exported or replicated: it is
-- derived from an editor's state, not authored memory.

CREATE TABLE unsaved_buffers (
    path        TEXT PRIMARY KEY,           -- repo-relative, as in `files.path`
    version     INTEGER NOT NULL,           -- the LSP document version
    text        TEXT NOT NULL,              -- at most 1 MiB (larger buffers are not shared)
    server_pid  INTEGER NOT NULL,           -- the language server's process id
    updated_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

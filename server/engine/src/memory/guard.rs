//! The guards of every memory write: the limits on its text and author, optimistic
//! concurrency (`expect_version`) and idempotent retries (operation receipts).

use loci_store::StoreError;
use loci_store::memory::{self as mem, Page};
use loci_store::rusqlite::{Connection, Transaction};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{EngineError, Result, Workspace};

use super::memory::{WriteOptions, Written};

/// Runs `f` in one write transaction guarded by an operation receipt: an identical retry
/// returns the stored result (with `replayed` set), a different request under the same id
/// is a conflict.
pub(crate) fn with_receipt<T: Serialize + DeserializeOwned + Replay>(
    store: &mut loci_store::Store,
    operation_id: Option<&str>,
    request: &serde_json::Value,
    mut f: impl FnMut(&Transaction<'_>) -> loci_store::Result<T>,
) -> Result<T> {
    let hash = loci_core::fingerprint::content_hash(request.to_string().as_bytes());
    let value = store.write(|tx| {
        if let Some(op) = operation_id
            && let Some((stored_hash, result)) = mem::receipt(tx, op)?
        {
            if stored_hash != hash {
                return Err(StoreError::Conflict(format!(
                    "operation id `{op}` was already used for a different request; use a new id"
                )));
            }
            let mut value: T = serde_json::from_str(&result)
                .map_err(|e| StoreError::Corrupt(format!("receipt {op}: {e}")))?;
            value.mark_replayed();
            return Ok(value);
        }
        let value = f(tx)?;
        if let Some(op) = operation_id {
            let json =
                serde_json::to_string(&value).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            mem::put_receipt(tx, op, &hash, &json)?;
        }
        Ok(value)
    })?;
    Ok(value)
}

/// Results that can say they were replayed from a receipt.
pub(crate) trait Replay {
    /// Flags the value as replayed, for results that carry a `replayed` field.
    fn mark_replayed(&mut self) {}
}

impl Replay for Page {}

/// An id (event, fact) written by the operation.
impl Replay for i64 {}

/// Fails with a conflict naming the current version unless `expected` is absent or equal
/// to `current` (0: the page has no revisions yet).
pub(crate) fn check_version(
    subject: &str,
    current: i64,
    expected: Option<i64>,
) -> loci_store::Result<()> {
    match expected {
        Some(expected) if expected != current => Err(StoreError::Conflict(format!(
            "version conflict on `{subject}`: it is at version {current}, \
             the write expected {expected}; read it again and retry"
        ))),
        _ => Ok(()),
    }
}

/// The version of a page's current revision (0 when it has none).
pub(super) fn page_version(conn: &Connection, page_id: i64) -> loci_store::Result<i64> {
    Ok(mem::page_by_id(conn, page_id)?
        .and_then(|p| p.current_revision_id)
        .map(|id| mem::revision_by_id(conn, id))
        .transpose()?
        .flatten()
        .map_or(0, |r| r.version))
}

impl Replay for Written {
    fn mark_replayed(&mut self) {
        self.replayed = true;
    }
}

/// The largest memory text one write accepts (a `remember` body, a decision or lesson, a
/// summary), in bytes: 1 MiB, about 262,000 tokens at four bytes a token, more than any
/// context window a page is written for. Larger text is refused, not truncated.
pub const MAX_MEMORY_TEXT_BYTES: usize = 1 << 20;

impl Workspace {
    /// The one check of memory text (bodies, decisions and lessons, summaries, session
    /// tasks, fact claims and commands, resolution notes) before it is written: refused
    /// over [`MAX_MEMORY_TEXT_BYTES`], or holding a credential (see
    /// [`crate::secrets::SecretRules::refuse`]), with an invalid-argument error naming
    /// `name`.
    pub(crate) fn accept_text(&self, name: &str, text: &str) -> Result<()> {
        refuse_oversized(name, text)?;
        self.secrets.refuse(name, text)
    }

    /// The check of a write's options: its summary as memory text ([`Self::accept_text`])
    /// and its author ([`Self::accept_author`]).
    pub(crate) fn accept_options(&self, opts: &WriteOptions) -> Result<()> {
        if let Some(summary) = &opts.summary {
            self.accept_text("summary", summary)?;
        }
        if let Some(author) = &opts.author {
            self.accept_author(author)?;
        }
        Ok(())
    }

    /// An author is a name (`agent:NAME`, `human:NAME`, a model name) shown in every
    /// revision header: at most [`MAX_AUTHOR_BYTES`], and never a credential.
    pub(crate) fn accept_author(&self, author: &str) -> Result<()> {
        if author.len() > MAX_AUTHOR_BYTES {
            return Err(EngineError::InvalidArgument {
                name: "author".into(),
                message: format!(
                    "the author is {} bytes; an author is a name such as `agent:NAME` of at \
                     most {MAX_AUTHOR_BYTES} bytes",
                    author.len()
                ),
            });
        }
        self.secrets.refuse("author", author)
    }
}

/// The longest author name a write accepts, in bytes.
pub const MAX_AUTHOR_BYTES: usize = 256;

/// Refuses `text` longer than [`MAX_MEMORY_TEXT_BYTES`], naming the argument and both
/// sizes.
fn refuse_oversized(name: &str, text: &str) -> Result<()> {
    if text.len() <= MAX_MEMORY_TEXT_BYTES {
        return Ok(());
    }
    Err(EngineError::InvalidArgument {
        name: name.into(),
        message: format!(
            "the text is {} bytes; memory takes at most {MAX_MEMORY_TEXT_BYTES} bytes \
             (1 MiB) per write: keep the page to what an agent should read, and link the rest",
            text.len()
        ),
    })
}

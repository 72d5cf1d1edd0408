//! What editor adapters (the language server) need beyond the facade's operations: a
//! file's symbols with byte ranges, and a walk cap set by the editor.

use loci_store::StoreError;
use serde::Serialize;

use crate::{Envelope, Result, Workspace};

/// A symbol of one file with the byte ranges an adapter converts to positions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileSymbol {
    /// Stable key.
    pub key: String,
    /// Bare name.
    pub name: String,
    /// Qualified name.
    pub qualified_name: String,
    /// Kind (`function`, `class`, ...).
    pub kind: String,
    /// Definition's first byte.
    pub start_byte: u32,
    /// One past the definition's last byte.
    pub end_byte: u32,
    /// Name's first byte.
    pub name_start_byte: u32,
    /// One past the name's last byte.
    pub name_end_byte: u32,
    /// First line of the definition.
    pub signature: String,
    /// Doc comment, if any.
    pub doc: Option<String>,
    /// Key of the enclosing definition.
    pub parent_key: Option<String>,
}

impl Workspace {
    /// Every symbol the map holds for `path` (repo-relative), in document order; empty
    /// when the map does not have the file. The envelope's `stale_warnings` say when the
    /// file changed on disk since it was scanned (the byte ranges are then out of date).
    pub fn file_symbols(&self, path: &str) -> Result<Envelope<Vec<FileSymbol>>> {
        let mut stmt = self
            .store
            .conn()
            .prepare_cached(
                "SELECT s.key, s.name, s.qualified_name, s.kind, s.start_byte, s.end_byte,
                    s.name_start_byte, s.name_end_byte, s.signature, s.doc, s.parent_key
                 FROM symbols s JOIN files f USING (file_id)
                 WHERE f.path = ?1 ORDER BY s.start_byte, s.key",
            )
            .map_err(|e| StoreError::sqlite("reading file symbols", e))?;
        let rows = stmt
            .query_map([path], |r| {
                Ok(FileSymbol {
                    key: r.get(0)?,
                    name: r.get(1)?,
                    qualified_name: r.get(2)?,
                    kind: r.get(3)?,
                    start_byte: r.get(4)?,
                    end_byte: r.get(5)?,
                    name_start_byte: r.get(6)?,
                    name_end_byte: r.get(7)?,
                    signature: r.get(8)?,
                    doc: r.get(9)?,
                    parent_key: r.get(10)?,
                })
            })
            .and_then(|rows| rows.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite(format!("reading symbols of {path}"), e))?;
        self.envelope(rows, vec![path.to_string()])
    }

    /// Caps the walk of later scans at `max_files` files (the rest is skipped with reason
    /// `file_limit`); the language server uses it for home directories.
    pub fn set_max_files(&mut self, max_files: u64) {
        self.config.scan.max_files = max_files;
    }
}

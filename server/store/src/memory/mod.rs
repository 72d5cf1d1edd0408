//! Typed queries over authored memory: pages, revisions, claims, events, sessions,
//! topics, facts and operation receipts.
//!
//! Revisions are append-only (the database refuses UPDATE and DELETE); inserting one
//! publishes it (a trigger advances the page's current revision). Versions are gapless
//! per page because they are computed inside the same `BEGIN IMMEDIATE` transaction
//! that inserts the row.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use serde::{Deserialize, Serialize};

use crate::{Context, Result, StoreError, search};

mod claims;
mod events;
mod marks;
mod pages;
mod records;
mod revisions;
mod sessions;
mod snapshots;

pub use claims::*;
pub use events::*;
pub use marks::*;
pub use pages::*;
pub use records::*;
pub use revisions::*;
pub use sessions::*;
pub use snapshots::*;

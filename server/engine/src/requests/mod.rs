//! One request type per operation: the arguments every door takes for it, with their
//! documentation and defaults, defined once. The MCP server takes them as its tools'
//! parameters (their `JsonSchema`, doc comments included, is each tool's `inputSchema`),
//! the language server deserializes a command's argument object into them (its argument
//! checks are read from the same schema), and the CLI maps its flags onto them.
//!
//! Each type deserializes with unknown arguments refused (a misspelled argument is named
//! in the error), and each default is the `#[serde(default = ..)]` of its field, so a
//! schema declares it as the field's `"default"` and every door that leaves the argument
//! out gets the same value. Each request's `run` calls its one [`Workspace`] operation.
//!
//! The types are grouped as the layers are: [`map`] (structural questions, `sync`),
//! [`memory`] (reads and writes of pages, sessions, facts, synthesis) and [`answers`]
//! (`context`, `search`, `why` and the audit).
//!
//! Paging (`cursor`) is not an argument of an operation: a door that pages an answer
//! (MCP) adds it.

pub mod answers;
pub mod keys;
pub mod map;
pub mod memory;

pub use self::answers::*;
pub use self::keys::{Key, KeyType, keys};
pub use self::map::*;
pub use self::memory::*;

#[cfg(doc)]
use crate::Workspace;

/// Declares a request struct: `Deserialize` (unknown arguments refused), `Serialize`,
/// `JsonSchema`. With `+ write`, the options every memory write accepts are appended, and
/// `write_options` turns them into the engine's [`crate::memory::WriteOptions`].
macro_rules! request {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }
    };
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? } + write
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// `session_id` from `session_begin`.
            #[serde(default)]
            pub session: Option<i64>,
            /// Who writes (unset: `$LOCI_AUTHOR`, else `agent:<client name>`).
            #[serde(default)]
            pub author: Option<String>,
            /// A one-line change summary.
            #[serde(default)]
            pub summary: Option<String>,
            /// Fail unless the page is at this version (0: must not exist yet).
            #[serde(default)]
            pub expect_version: Option<i64>,
            /// Idempotency key: a retry with it returns the first result.
            #[serde(default)]
            pub operation_id: Option<String>,
        }

        impl $name {
            /// The request with these arguments and write options (a door that reads the
            /// options on their own, as the CLI's flags are).
            pub fn new($($field: $ty,)* options: crate::memory::WriteOptions) -> Self {
                let crate::memory::WriteOptions {
                    author,
                    session,
                    summary,
                    expect_version,
                    operation_id,
                } = options;
                $name {
                    $($field,)*
                    session,
                    author,
                    summary,
                    expect_version,
                    operation_id,
                }
            }

            /// The write's options; the author, when the request names none, is
            /// `default_author` (a door's: MCP's `agent:<client name>`), else the engine's.
            pub fn write_options(&self, default_author: Option<&str>) -> crate::memory::WriteOptions {
                crate::memory::WriteOptions {
                    author: self.author.clone().or_else(|| default_author.map(str::to_string)),
                    session: self.session,
                    summary: self.summary.clone(),
                    expect_version: self.expect_version,
                    operation_id: self.operation_id.clone(),
                }
            }
        }
    };
}
pub(crate) use request;

/// The defaults of the requests' arguments: each constant is the value, each function the
/// `#[serde(default = ..)]` of a field holding it (so the schema declares it). The CLI's
/// flags take the same constants.
pub mod defaults {
    /// Hops `impact` follows.
    pub const DEPTH: u32 = 3;
    /// Sessions `recap` lists, newest first.
    pub const RECAP: u32 = 3;
    /// Hits per kind `search` returns.
    pub const SEARCH_LIMIT: u32 = 10;
    /// Dependents an `impact` request lists: 30, so that the answer fits one page of an MCP
    /// call (24 KiB; the CLI's 100, [`crate::map::IMPACT_LIMIT`], made 39 KB for a widely
    /// imported stdlib file, and the page held a preview of 17).
    pub const IMPACT_LIMIT: u32 = 30;
    /// Pages a `memory_list` request lists.
    pub const MEMORY_LIMIT: u32 = 100;

    pub(crate) fn list_limit() -> u32 {
        crate::map::LIST_LIMIT
    }
    pub(crate) fn impact_limit() -> u32 {
        IMPACT_LIMIT
    }
    pub(crate) fn min_confidence() -> f64 {
        crate::map::MIN_CONFIDENCE
    }
    pub(crate) fn search_limit() -> u32 {
        SEARCH_LIMIT
    }
    pub(crate) fn depth() -> u32 {
        DEPTH
    }
    pub(crate) fn recap() -> u32 {
        RECAP
    }
    pub(crate) fn memory_limit() -> u32 {
        MEMORY_LIMIT
    }
    pub(crate) fn yes() -> bool {
        true
    }
}

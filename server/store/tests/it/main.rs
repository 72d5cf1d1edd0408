//! Integration tests of loci-store: schema, migrations, backups, locking.
//!
//! One integration-test binary for the crate: each file here is a module of it, so the
//! tests link once against the crate instead of once per file. Run one file's tests with a
//! filter on its module, e.g. `cargo test --workspace --test it store::`.

mod store;

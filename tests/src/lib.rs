//! End-to-end tests for loci live in `tests/*.rs`; this library is empty.

//! Links `loci` as a position-dependent executable.
//!
//! A position-independent `loci` spends 0.75 ms of every process start in the dynamic
//! loader applying its 45,000 relative relocations (tree-sitter's symbol-name tables,
//! SQLite's and Rust's vtables): a fifth of a `loci symbol` or `loci deps` answer, whose
//! targets are 5 ms as whole processes (docs/benchmarks.md). Without PIE the linker
//! resolves them once. The shared libraries, heap and stack are still placed at random.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

//! The false-positive audit of the built-in secret rules: walk a tree the way `loci scan`
//! does (same walk, same 2 MiB size limit, same NUL-byte binary test), apply the default
//! [`loci_engine::SecretRules`] to every file and print each file they would skip,
//! with the glob, or the rule and line and column — never the matched text.
//! docs/reliability.md §5 reports its results on the Python standard library and on the
//! crate sources Cargo downloaded to `~/.cargo`.
//!
//! Usage: `secret_audit DIR [EXCLUDED_DIR_NAME ...]`. Prints one `path<TAB>reason` line per
//! secret file, then `files=N secret=S ms=T` (T: milliseconds spent in the token rules).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use loci_engine::SecretRules;
use loci_engine::map::SkipReason;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: secret_audit DIR [EXCLUDED_DIR_NAME ...]");
        std::process::exit(2);
    };
    let excluded: Vec<String> = args.collect();
    let rules = SecretRules::default();
    let root = std::path::Path::new(&dir);
    let walked = loci_engine::map::walk(root, 2 << 20, u64::MAX, 0, &rules);
    let leaves_out = |path: &str| path.split('/').any(|s| excluded.iter().any(|e| e == s));
    let mut out = std::io::stdout().lock();
    let mut secret = 0;
    for s in &walked.skips {
        if s.reason == SkipReason::Secret && !leaves_out(&s.path) {
            secret += 1;
            let reason = s.detail.as_deref().unwrap_or("path rule");
            let _ = writeln!(out, "{}\t{reason}", s.path);
        }
    }
    let mut files = 0;
    let mut spent = Duration::ZERO;
    for f in walked.files.iter().filter(|f| !leaves_out(&f.path)) {
        let mut bytes = Vec::new();
        let Ok(file) = std::fs::File::open(&f.abs) else {
            continue;
        };
        if file.take(2 << 20).read_to_end(&mut bytes).is_err()
            || bytes[..bytes.len().min(8_000)].contains(&0)
        {
            continue;
        }
        files += 1;
        let text = String::from_utf8_lossy(&bytes);
        let started = Instant::now();
        let found = rules.find_token(&text);
        spent += started.elapsed();
        if let Some(m) = found {
            secret += 1;
            let _ = writeln!(out, "{}\tcontains {m}", f.path);
        }
    }
    let _ = writeln!(
        out,
        "files={files} secret={secret} ms={}",
        spent.as_millis()
    );
}

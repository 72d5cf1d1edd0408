//! What "pages behind the code" costs: the language server's check of `HEAD` after each
//! burst of edits ([`HeadWatch::head`]), the note a `context` answer carries
//! ([`Workspace::pages_behind_note`]: one `meta` row), and the count each lint stores
//! ([`Workspace::count_pages_behind`]), next to a whole `context` answer.
//!
//! Usage: `cargo run -p loci-engine --example behind_cost -- ROOT` on a scanned, synced git
//! repository (docs/synthesis.md gives the corpus and the figures).

#![allow(clippy::print_stdout)] // a measurement tool: its report is its output

use std::time::{Duration, Instant};

use loci_engine::Workspace;
use loci_engine::context::ContextRequest;
use loci_engine::map::git::HeadWatch;

/// Times `n` calls of `f`: (median, 99th percentile, mean).
fn time(n: usize, mut f: impl FnMut()) -> (Duration, Duration, Duration) {
    let mut all: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    all.sort();
    let mean = all.iter().sum::<Duration>() / n as u32;
    (all[n / 2], all[n * 99 / 100], mean)
}

fn show(what: &str, n: usize, (p50, p99, mean): (Duration, Duration, Duration)) {
    println!(
        "{what}: {n} calls, median {:.1} µs, p99 {:.1} µs, mean {:.1} µs",
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        mean.as_secs_f64() * 1e6
    );
}

fn main() {
    let root = std::env::args().nth(1).expect("usage: behind_cost ROOT");
    let root = std::path::Path::new(&root);
    let t = Instant::now();
    let watch = HeadWatch::open(root).expect("a git repository");
    println!("HeadWatch::open: {:.1} µs", t.elapsed().as_secs_f64() * 1e6);
    println!("HEAD: {:?}", watch.head());
    show(
        "HEAD check (HeadWatch::head)",
        10_000,
        time(10_000, || {
            std::hint::black_box(watch.head());
        }),
    );
    let ws = Workspace::open(root, None).expect("the store");
    println!("note: {:?}", ws.pages_behind_note().unwrap());
    show(
        "context note (pages_behind_note)",
        10_000,
        time(10_000, || {
            std::hint::black_box(ws.pages_behind_note().unwrap());
        }),
    );
    show(
        "count per lint (count_pages_behind)",
        20,
        time(20, || {
            std::hint::black_box(ws.count_pages_behind().unwrap());
        }),
    );
    let req = ContextRequest {
        query: "how does json decode a string".into(),
        open_files: Vec::new(),
        budget: None,
        floor: None,
    };
    show(
        "whole context answer",
        10,
        time(10, || {
            std::hint::black_box(ws.context(&req).unwrap());
        }),
    );
}

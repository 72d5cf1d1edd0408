//! A real corpus: the CPython standard library on this machine, scanned by loci and by
//! universal-ctags; symbol counts per kind agree within a stated tolerance. No timing here
//! (benchmarks live in bench/ and docs/benchmarks.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Largest relative difference allowed between loci's and ctags' counts of one kind.
/// Measured: about 1.4% (loci also sees classes and functions defined inside functions
/// and in some constructs ctags' regex parser skips).
const TOLERANCE: f64 = 0.03;

fn stdlib() -> std::path::PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3 runs");
    std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Copies every `.py` file outside `site-packages`, keeping the tree.
fn copy_py(from: &Path, to: &Path, rel: &Path, n: &mut usize) {
    for entry in std::fs::read_dir(from.join(rel)).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let child = rel.join(&name);
        let ty = entry.file_type().unwrap();
        if ty.is_dir() && name != "site-packages" && name != "__pycache__" {
            copy_py(from, to, &child, n);
        } else if ty.is_file() && child.extension().is_some_and(|e| e == "py") {
            std::fs::create_dir_all(to.join(rel)).unwrap();
            std::fs::copy(from.join(&child), to.join(&child)).unwrap();
            *n += 1;
        }
    }
}

#[test]
fn stdlib_symbol_counts_agree_with_ctags() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("stdlib");
    let mut files = 0;
    copy_py(&stdlib(), &corpus, Path::new(""), &mut files);
    assert!(files > 1_000, "the stdlib copy has {files} .py files");

    let mut ws = loci_engine::Workspace::open(&corpus, Some(&dir.path().join("loci.db"))).unwrap();
    let report = ws.scan(&|_| {}).unwrap().result;
    assert_eq!(report.totals.files as usize, files);
    assert!(report.degraded.is_empty(), "{:?}", report.degraded);
    // A first scan is a bulk load (indexes and full-text tables built at the end): the
    // full-text index must hold every symbol afterwards.
    let options = loci_engine::context::SearchOptions {
        kinds: vec![loci_engine::context::HitKind::Symbol],
        path_prefix: Some("urllib/".into()),
        limit: Some(5),
    };
    let hits = ws.search("urlopen", &options).unwrap().result;
    assert_eq!(
        hits.first().map(|h| h.id.as_str()),
        Some("urllib/request.py#urlopen@function")
    );
    let mut loci: BTreeMap<String, f64> = BTreeMap::new();
    let conn = ws.store().conn();
    let mut stmt = conn
        .prepare("SELECT kind, count(*) FROM symbols GROUP BY kind")
        .unwrap();
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)))
        .unwrap()
    {
        let (kind, n) = row.unwrap();
        loci.insert(kind, n);
    }

    let tags = Command::new("ctags")
        .args(["-R", "--languages=Python", "--fields=+K", "-f", "-", "."])
        .current_dir(&corpus)
        .output()
        .expect("universal-ctags is installed");
    let mut ctags: BTreeMap<String, f64> = BTreeMap::new();
    for line in String::from_utf8_lossy(&tags.stdout).lines() {
        if let Some(kind) = line.split('\t').nth(3) {
            *ctags.entry(kind.to_string()).or_default() += 1.0;
        }
    }
    for (ours, theirs) in [
        ("class", "class"),
        ("function", "function"),
        ("method", "member"),
    ] {
        let (a, b) = (
            loci.get(ours).copied().unwrap_or(0.0),
            ctags.get(theirs).copied().unwrap_or(0.0),
        );
        let diff = (a - b).abs() / b.max(1.0);
        assert!(
            diff <= TOLERANCE,
            "{ours}: loci {a} vs ctags {theirs} {b} ({:.1}% apart)",
            diff * 100.0
        );
    }
}

//! Fixture files for the tests: [`write`] one file, or [`files`] a whole tree from one
//! string in rust-analyzer's `//- path` format.

use std::path::Path;

/// Writes `text` to `root/rel`, creating the directories above it. Panics on any I/O error
/// (a test fixture that cannot be written is a broken test).
pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create dir");
    }
    std::fs::write(path, text).expect("write file");
}

/// Writes every file of a multi-file fixture under `root`: each file starts with a line
/// `//- rel/path` and runs to the next such line or the end. Text before the first marker
/// must be blank. Each file's text is kept as written, newlines included, so
///
/// ```text
/// //- src/a.py
/// import b
/// //- src/b.py
/// X = 1
/// ```
///
/// writes `src/a.py` = `"import b\n"` and `src/b.py` = `"X = 1\n"`.
pub fn files(root: &Path, fixture: &str) {
    let mut current: Option<(&str, String)> = None;
    for line in fixture.split_inclusive('\n') {
        if let Some(rel) = line.strip_prefix("//- ") {
            if let Some((rel, text)) = current.take() {
                write(root, rel, &text);
            }
            current = Some((rel.trim(), String::new()));
        } else if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
        } else {
            assert!(
                line.trim().is_empty(),
                "text before the first `//- path`: {line:?}"
            );
        }
    }
    if let Some((rel, text)) = current {
        write(root, rel, &text);
    }
}

/// A fresh folder holding the multi-file `fixture` ([`files`]), opened and scanned.
pub fn scanned(fixture: &str) -> (tempfile::TempDir, loci_engine::Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(root, fixture);
    let mut ws = loci_engine::Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

#[test]
fn files_splits_a_fixture_at_each_path_line() {
    let dir = tempfile::tempdir().unwrap();
    files(
        dir.path(),
        "\n//- src/a.py\nimport b\n\n//- src/pkg/b.py\nX = 1\n",
    );
    let read = |rel: &str| std::fs::read_to_string(dir.path().join(rel)).unwrap();
    assert_eq!(read("src/a.py"), "import b\n\n");
    assert_eq!(read("src/pkg/b.py"), "X = 1\n");
}

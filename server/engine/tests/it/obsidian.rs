//! `loci export --obsidian DIR`: the vault's files, front matter and wikilinks exactly, and
//! a re-export that updates it in place.

use std::path::Path;

use expect_test::expect;
use loci_engine::Workspace;
use loci_engine::memory::WriteOptions;

use crate::fixture::write;

fn by(author: &str) -> WriteOptions {
    WriteOptions {
        author: Some(author.into()),
        ..Default::default()
    }
}

/// Every file under `dir`, vault-relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// A note with its `date:` line made stable.
fn note(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel))
        .unwrap()
        .lines()
        .map(|l| {
            if l.starts_with("date: ") {
                "date: DATE".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn the_vault_has_a_note_per_page_with_front_matter_and_wikilinks_and_updates_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "app/main.py",
        "from app import store\n\n\ndef main():\n    return store.get()\n",
    );
    write(root, "app/store.py", "def get():\n    return 1\n");
    write(root, "app/__init__.py", "");
    let mut ws = Workspace::open(root, None).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "app/main.py",
        "`main()` reads through `get()`.",
        &by("human:ann"),
    )
    .unwrap();
    ws.remember("app/store.py", "The store: `get()`.", &by("llm:stub"))
        .unwrap();
    ws.remember("app", "The application.", &by("human:ann"))
        .unwrap();
    for member in ["app/main.py", "app/store.py"] {
        ws.topic_set("reads", member, true, &by("human:ann"))
            .unwrap();
    }
    ws.remember("topic:reads", "How reads flow.", &by("human:ann"))
        .unwrap();
    ws.decide("Reads never write", Some("app/store.py"), &by("human:ann"))
        .unwrap();
    let vault = root.join("vault");
    write(&vault, "mine.md", "my own note\n");
    let r = ws.export_obsidian(&vault).unwrap().result;
    assert_eq!(
        r.written,
        [
            "decisions/decision 1.md",
            "folders/app.md",
            "pages/app/main.py.md",
            "pages/app/store.py.md",
            "topics/reads.md",
        ]
    );
    assert_eq!(
        files(&vault),
        [
            ".loci-vault.json",
            "decisions/decision 1.md",
            "folders/app.md",
            "mine.md",
            "pages/app/main.py.md",
            "pages/app/store.py.md",
            "topics/reads.md",
        ]
    );
    expect![[r#"
        ---
        subject: "app/main.py"
        kind: file
        version: 1
        author: "human:ann"
        date: DATE
        commit: null
        stale: false
        ---

        `main()` reads through `get()`.

        ## Imports

        - [[pages/app/store.py|app/store.py]]
    "#]]
    .assert_eq(&note(&vault, "pages/app/main.py.md"));
    expect![[r#"
        ---
        subject: "topic:reads"
        kind: topic
        version: 1
        author: "human:ann"
        date: DATE
        commit: null
        stale: false
        ---

        How reads flow.

        ## Members

        - [[pages/app/main.py|app/main.py]]
        - [[pages/app/store.py|app/store.py]]
    "#]]
    .assert_eq(&note(&vault, "topics/reads.md"));
    expect![[r#"
        ---
        subject: "decision:1"
        kind: decisions
        version: 1
        author: "human:ann"
        date: DATE
        commit: null
        stale: false
        ---

        Reads never write (about `app/store.py`)

        ## About

        - [[pages/app/store.py|app/store.py]]
    "#]]
    .assert_eq(&note(&vault, "decisions/decision 1.md"));

    // Again: nothing changes.
    let again = ws.export_obsidian(&vault).unwrap().result;
    assert!(again.written.is_empty() && again.removed.is_empty());
    assert_eq!(again.unchanged.len(), 5);

    // A new revision rewrites its note; a renamed file's note moves; the user's note stays.
    ws.remember("app/main.py", "`main()` calls `get()`.", &by("human:ann"))
        .unwrap();
    std::fs::rename(root.join("app/store.py"), root.join("app/storage.py")).unwrap();
    ws.scan(&|_| {}).unwrap();
    let moved = ws.export_obsidian(&vault).unwrap().result;
    assert_eq!(
        (moved.written.clone(), moved.removed.clone()),
        (
            vec![
                "decisions/decision 1.md".to_string(),
                "pages/app/main.py.md".to_string(),
                "pages/app/storage.py.md".to_string(),
                "topics/reads.md".to_string(),
            ],
            vec!["pages/app/store.py.md".to_string()]
        )
    );
    assert!(vault.join("mine.md").exists());
    assert!(note(&vault, "pages/app/main.py.md").contains("version: 2\n"));
}

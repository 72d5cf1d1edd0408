//! The map's questions on small trees, with exact answers: `impact` over the reverse import
//! graph.

use std::path::Path;

use loci_engine::Workspace;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// `a` ← `b`, `c` ← `d` (a diamond) ← `e` ← `f`, and `g` ↔ `a` (a cycle through the target).
fn diamond() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "import g\n\ndef base():\n    return 1\n");
    write(root, "b.py", "import a\n");
    write(root, "c.py", "\n\nimport a\n");
    write(root, "d.py", "import c\nimport b\n");
    write(root, "e.py", "import d\n");
    write(root, "f.py", "import e\n");
    write(root, "g.py", "import a\n");
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

#[test]
fn file_impact_walks_each_importer_once_at_its_nearest_depth() {
    let (_dir, ws) = diamond();
    let impact = ws.impact("a.py", 3, false).unwrap().result;
    let nodes: Vec<(String, u32, String, String)> = impact
        .nodes
        .iter()
        .map(|n| (n.id.clone(), n.depth, n.via.to.clone(), n.via.at.clone()))
        .collect();
    let row = |id: &str, d: u32, to: &str, at: &str| (id.into(), d, to.into(), at.into());
    assert_eq!(
        nodes,
        vec![
            row("b.py", 1, "a.py", "b.py:1"),
            row("c.py", 1, "a.py", "c.py:3"),
            row("g.py", 1, "a.py", "g.py:1"),
            // d imports both b and c: the edge to the smaller path is the one shown.
            row("d.py", 2, "b.py", "d.py:2"),
            row("e.py", 3, "d.py", "e.py:1"),
        ]
    );
    assert_eq!(
        impact.files,
        ["a.py", "b.py", "c.py", "d.py", "e.py", "g.py"]
    );
    assert!(impact.nodes.iter().all(|n| n.via.provenance == "stated"));
}

#[test]
fn file_impact_stops_at_the_depth_asked_and_where_nothing_imports() {
    let (_dir, ws) = diamond();
    let one: Vec<String> = ws
        .impact("a.py", 1, false)
        .unwrap()
        .result
        .nodes
        .into_iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(one, ["b.py", "c.py", "g.py"]);
    let leaf = ws.impact("f.py", 3, false).unwrap().result;
    assert!(leaf.nodes.is_empty());
    assert_eq!(leaf.files, ["f.py"]);
    // The whole chain at a depth past its end.
    assert_eq!(ws.impact("a.py", 10, false).unwrap().result.nodes.len(), 6);
}

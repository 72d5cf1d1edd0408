//! The map's questions on small trees, with exact answers: `impact` over the reverse import
//! graph.

use loci_engine::Workspace;
use loci_engine::map::{Edges, LIST_LIMIT};

use crate::fixture::{files, scanned, write};

/// `a` ← `b`, `c` ← `d` (a diamond) ← `e` ← `f`, and `g` ↔ `a` (a cycle through the target).
/// `path:line (confidence)` of every call of `symbol` at `min_confidence` or more,
/// one-based lines, in the answer's order.
fn calls(ws: &Workspace, symbol: &str, min_confidence: f64) -> Vec<String> {
    let answer = ws
        .callers_with(symbol, 0, min_confidence, true)
        .unwrap()
        .result;
    answer
        .calls
        .iter()
        .map(|c| format!("{}:{} ({:.2})", c.path, c.line + 1, c.confidence))
        .collect()
}

/// The direct dependents of `target` as `path (provenance)`, the provenance of the edge
/// that reached each, in the answer's order.
fn direct_dependents(ws: &Workspace, target: &str) -> Vec<String> {
    let impact = ws.impact(target, 1, false).unwrap().result;
    impact
        .nodes
        .iter()
        .map(|n| format!("{} ({})", n.id, n.via.provenance))
        .collect()
}

fn diamond() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- a.py
import g

def base():
    return 1
//- b.py
import a
//- c.py


import a
//- d.py
import c
import b
//- e.py
import d
//- f.py
import e
//- g.py
import a
"#,
    );
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

/// The limit lists the nearest dependents (by depth, then path) and counts the rest:
/// `dependents`, `by_depth` and `files_affected` are those of the whole walk, `limits`
/// says what was left out, and only the listed files are checked against the disk.
#[test]
fn file_impact_lists_the_nearest_dependents_up_to_the_limit_and_counts_the_rest() {
    let (dir, ws) = diamond();
    // A file that is not listed changes on disk: the listed ones are the answer's files.
    std::fs::write(dir.path().join("e.py"), "import d\nimport b\n").unwrap();
    let env = ws.impact_limited("a.py", 3, false, 2).unwrap();
    let i = &env.result;
    let ids: Vec<(&str, u32)> = i.nodes.iter().map(|n| (n.id.as_str(), n.depth)).collect();
    assert_eq!(ids, [("b.py", 1), ("c.py", 1)]);
    assert_eq!(i.dependents, 5);
    assert_eq!(i.by_depth, [3, 1, 1]);
    assert_eq!(i.files_affected, 6);
    assert_eq!(i.files, ["a.py", "b.py", "c.py"]);
    assert_eq!(
        (
            env.limits.budget,
            env.limits.used,
            env.limits.truncated,
            env.limits.omitted
        ),
        (Some(2), 2, true, 3)
    );
    assert_eq!(env.freshness.changed_since_scan, Some(0));
    assert!(env.stale_warnings.is_empty());

    // A limit past the end, and 0, list everything and omit nothing.
    for limit in [0, 5, 100] {
        let env = ws.impact_limited("a.py", 3, false, limit).unwrap();
        let ids: Vec<&str> = env.result.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(
            ids,
            ["b.py", "c.py", "g.py", "d.py", "e.py"],
            "limit {limit}"
        );
        assert_eq!(
            (env.limits.truncated, env.limits.omitted, env.limits.used),
            (false, 0, 5),
            "limit {limit}"
        );
        assert_eq!(env.limits.budget, (limit > 0).then_some(u64::from(limit)));
        // Every file is listed now, the changed one too.
        assert_eq!(env.freshness.changed_since_scan, Some(1), "limit {limit}");
        assert_eq!(env.stale_warnings[0].path, "e.py");
    }
    // `impact` lists all.
    assert_eq!(ws.impact("a.py", 3, false).unwrap().result.nodes.len(), 5);

    let leaf = ws.impact_limited("f.py", 3, false, 2).unwrap();
    assert_eq!(
        (
            leaf.result.dependents,
            leaf.result.by_depth.len(),
            leaf.result.files_affected,
            leaf.limits.omitted
        ),
        (0, 0, 1, 0)
    );
}

/// A symbol's impact under a limit: the nearest definitions listed, every one counted.
#[test]
fn symbol_impact_lists_the_nearest_dependents_up_to_the_limit_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "m.py",
        "def base():\n    return 1\n\ndef one():\n    return base()\n\ndef two():\n    return base()\n\ndef three():\n    return one()\n",
    );
    write(
        root,
        "n.py",
        "from m import two\n\ndef four():\n    return two()\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let all = ws.impact_limited("base", 3, false, 0).unwrap();
    let ids: Vec<(&str, u32)> = all
        .result
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.depth))
        .collect();
    assert_eq!(
        ids,
        [
            ("m.py#one@function", 1),
            ("m.py#two@function", 1),
            // Each hop the surest first: the import of `two` at the top of n.py (which
            // makes the file itself a dependent) and the call it binds (1.0) before the
            // same-file call in `three` (0.9).
            ("n.py", 2),
            ("n.py#four@function", 2),
            ("m.py#three@function", 2),
        ]
    );
    assert_eq!(all.result.files, ["m.py", "n.py"]);
    let two = ws.impact_limited("base", 3, false, 2).unwrap();
    let ids: Vec<&str> = two.result.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["m.py#one@function", "m.py#two@function"]);
    assert_eq!(
        (
            two.result.dependents,
            two.result.by_depth.clone(),
            two.result.files_affected,
            two.result.files.clone()
        ),
        (5, vec![2, 3], 2, vec!["m.py".to_string()])
    );
    assert_eq!((two.limits.truncated, two.limits.omitted), (true, 3));
}

/// A walk that needs the paths of more files than one lookup each is worth reads them in
/// one pass (`PATH_SCAN_MIN` in loci-store): the same answer as the small walks above,
/// nearest first, each listed dependent with the edge into the smallest path of the level
/// before.
#[test]
fn a_wide_file_impact_lists_the_same_nearest_dependents_as_a_narrow_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "hub.py", "X = 1\n");
    for n in 0..300 {
        write(root, &format!("d1/m{n:03}.py"), "import hub\n");
    }
    // Imports two files of depth 1: the edge shown is the one into the smaller path.
    write(root, "d2/top.py", "import d1.m200\n\nimport d1.m007\n");
    write(root, "d1/__init__.py", "");
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let all = ws.impact_limited("hub.py", 3, false, 0).unwrap();
    let i = &all.result;
    assert_eq!((i.dependents, i.by_depth.clone()), (301, vec![300, 1]));
    assert_eq!(i.nodes.len(), 301);
    assert_eq!(
        (i.nodes[0].id.as_str(), i.nodes[299].id.as_str()),
        ("d1/m000.py", "d1/m299.py")
    );
    let top = &i.nodes[300];
    assert_eq!(
        (
            top.id.as_str(),
            top.depth,
            top.via.to.as_str(),
            top.via.at.as_str()
        ),
        ("d2/top.py", 2, "d1/m007.py", "d2/top.py:3")
    );
    let few = ws.impact_limited("hub.py", 3, false, 2).unwrap();
    let ids: Vec<&str> = few.result.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["d1/m000.py", "d1/m001.py"]);
    assert_eq!(few.result.by_depth, [300, 1]);
    assert_eq!(few.limits.omitted, 299);
}

/// Fault (fresh-user trial): `loci symbol Regex::new` found nothing although
/// `loci symbol Regex.new` found the method: the map writes qualified names with `.`, and
/// lookups took `::` (and `->`) literally.
#[test]
fn fault_a_qualified_name_written_with_double_colons_found_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "re.rs",
        "pub struct Regex;\nimpl Regex {\n    pub fn new() -> Regex {\n        Regex\n    }\n}\n\nfn main() {\n    let _r = Regex::new();\n}\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    for name in ["Regex.new", "Regex::new", "Regex->new"] {
        let keys: Vec<String> = ws
            .symbol(name, LIST_LIMIT)
            .unwrap()
            .result
            .into_iter()
            .map(|h| h.key)
            .collect();
        assert_eq!(keys, ["re.rs#Regex.new@method"], "{name}");
        let callers = ws.callers(name, LIST_LIMIT).unwrap().result;
        let calls: Vec<(String, u32)> = callers
            .calls
            .iter()
            .map(|c| (c.path.clone(), c.line))
            .collect();
        assert_eq!(calls, [("re.rs".to_string(), 8)], "{name}");
        let refs: Vec<(String, u32)> = ws
            .refs(name, LIST_LIMIT)
            .unwrap()
            .result
            .iter()
            .map(|r| (r.name.clone(), r.line))
            .collect();
        assert_eq!(refs, [("new".to_string(), 8)], "{name}");
        let impact = ws.impact(name, 1, false).unwrap().result;
        let ids: Vec<&str> = impact.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["re.rs#main@function"], "{name}");
    }
}

/// Fault found by a fresh-user trial: `refs Regex::new` listed every reference to any
/// `new` (77 rows in the regex crate; 6 were `Regex.new`'s). A qualified name now lists
/// the references resolved to what it names and the unresolved ones written on a
/// receiver of that name; a module path that names no symbol still means its last part.
#[test]
fn fault_refs_of_a_qualified_name_listed_every_reference_to_its_last_part() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/regex.rs",
        "pub struct Regex;\n\nimpl Regex {\n    pub fn new() -> Regex {\n        Regex\n    }\n}\n",
    );
    write(
        root,
        "src/builder.rs",
        "pub struct Builder;\n\nimpl Builder {\n    pub fn new() -> Builder {\n        Builder\n    }\n}\n",
    );
    write(
        root,
        "src/main.rs",
        "fn main() {\n    let a = Regex::new();\n    let b = Builder::new();\n    let c = Other::new();\n    let d = meta::Regex::new();\n}\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let lines = |name: &str| -> Vec<(String, u32, Option<String>)> {
        ws.refs(name, LIST_LIMIT)
            .unwrap()
            .result
            .into_iter()
            .map(|r| (r.path, r.line, r.target_key))
            .collect()
    };
    // `meta::Regex` is no `Regex` of this tree (no `meta` in its path): unresolved, and
    // listed as written on a `Regex`.
    assert_eq!(
        lines("Regex::new"),
        [
            (
                "src/main.rs".to_string(),
                1,
                Some("src/regex.rs#Regex.new@method".to_string())
            ),
            ("src/main.rs".to_string(), 4, None)
        ]
    );
    assert_eq!(lines("new").len(), 4);
    // A qualifier naming no symbol and written on no call: nothing (not all four `new`,
    // as if the qualifier were not there).
    assert_eq!(lines("nothing::new").len(), 0);
}

/// Fault found by a fresh-user trial on tokio: `loci symbol TcpListener` (and `TcpStream`,
/// `Sleep`, `spawn_blocking`, 42 of tokio's 163 `pub struct` names) found nothing, because
/// they are defined inside macro invocations (`cfg_net! { pub struct TcpListener { .. } }`)
/// whose bodies tree-sitter leaves unparsed; the `mod` declared in one had no dependency
/// edge. After a scan they are symbols like any other, with their references and edges.
#[test]
fn fault_items_inside_macro_invocations_were_invisible() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "macro_rules! cfg_net { ($($i:item)*) => { $($i)* } }\n\
         cfg_net! {\n    pub mod net;\n}\n\
         mod task;\n",
    );
    write(
        root,
        "src/net.rs",
        "cfg_net! {\n    /// A TCP socket server.\n    pub struct TcpListener {\n        fd: u32,\n    }\n\n    \
         impl TcpListener {\n        pub async fn bind() -> TcpListener {\n            TcpListener::from_fd(0)\n        }\n\n        \
         fn from_fd(fd: u32) -> TcpListener {\n            TcpListener { fd }\n        }\n    }\n}\n",
    );
    write(
        root,
        "src/task.rs",
        "cfg_rt! {\n    pub fn spawn_blocking() {}\n}\n",
    );
    write(
        root,
        "src/main.rs",
        "use crate::task::spawn_blocking;\n\nfn main() {\n    let _l = TcpListener::bind();\n    spawn_blocking();\n}\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let symbols = |name: &str| -> Vec<(String, u32, String, Option<String>)> {
        ws.symbol(name, LIST_LIMIT)
            .unwrap()
            .result
            .into_iter()
            .map(|h| (h.key, h.line, h.signature, h.doc))
            .collect()
    };
    assert_eq!(
        symbols("TcpListener"),
        [(
            "src/net.rs#TcpListener@struct".to_string(),
            2,
            "pub struct TcpListener {".to_string(),
            Some("A TCP socket server.".to_string())
        )]
    );
    assert_eq!(
        symbols("TcpListener::bind"),
        [(
            "src/net.rs#TcpListener.bind@method".to_string(),
            7,
            "pub async fn bind() -> TcpListener {".to_string(),
            None
        )]
    );
    assert_eq!(
        symbols("spawn_blocking"),
        [(
            "src/task.rs#spawn_blocking@function".to_string(),
            1,
            "pub fn spawn_blocking() {}".to_string(),
            None
        )]
    );
    let refs = |name: &str| -> Vec<(String, u32, Option<String>, Option<String>)> {
        ws.refs(name, LIST_LIMIT)
            .unwrap()
            .result
            .into_iter()
            .map(|r| (r.path, r.line, r.enclosing_key, r.target_key))
            .collect()
    };
    assert_eq!(
        refs("TcpListener::from_fd"),
        [(
            "src/net.rs".to_string(),
            8,
            Some("src/net.rs#TcpListener.bind@method".to_string()),
            Some("src/net.rs#TcpListener.from_fd@method".to_string())
        )]
    );
    assert_eq!(
        refs("spawn_blocking"),
        [
            (
                "src/main.rs".to_string(),
                0,
                None,
                Some("src/task.rs#spawn_blocking@function".to_string())
            ),
            (
                "src/main.rs".to_string(),
                4,
                Some("src/main.rs#main@function".to_string()),
                Some("src/task.rs#spawn_blocking@function".to_string())
            )
        ]
    );
    // `pub mod net;` inside `cfg_net!` is the stated edge to src/net.rs.
    let deps: Vec<(String, Option<String>, u32)> = ws
        .deps("src/lib.rs", false)
        .unwrap()
        .result
        .edges
        .into_iter()
        .map(|e| (e.module, e.to, e.line))
        .collect();
    assert_eq!(
        deps,
        [
            ("self::net".to_string(), Some("src/net.rs".to_string()), 2),
            ("self::task".to_string(), Some("src/task.rs".to_string()), 4)
        ]
    );
}

/// Six definitions of `step` in `m.py` and `n.py`, a class `Walker` with a method `step`
/// called four times, and `m.py`'s `step` imported and called bare five times: ten
/// references written `step` in all. The four are on a value of unknown type (`w`, not
/// annotated: an annotation would type it).
fn many_steps() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let defs: String = (0..4)
        .map(|i| format!("class C{i}:\n    def step(self):\n        pass\n"))
        .collect();
    write(root, "m.py", &format!("{defs}\ndef step():\n    pass\n"));
    write(
        root,
        "n.py",
        "from m import step\n\nclass Walker:\n    def step(self):\n        pass\n\n\
         def go(w):\n    w.step()\n    w.step()\n    w.step()\n    w.step()\n\
         \ndef run():\n    step()\n    step()\n    step()\n    step()\n    step()\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

#[test]
fn fault_a_listing_cut_at_its_limit_said_nothing_was_omitted() {
    let (_dir, ws) = many_steps();
    // Symbols: all six at 0, three listed and three counted at 3.
    let all = ws.symbol("step", 0).unwrap();
    assert_eq!(all.result.len(), 6);
    assert_eq!(
        (all.limits.used, all.limits.omitted, all.limits.truncated),
        (6, 0, false)
    );
    assert_eq!(all.limits.budget, None);
    let three = ws.symbol("step", 3).unwrap();
    let paths: Vec<(&str, u32)> = three
        .result
        .iter()
        .map(|s| (s.path.as_str(), s.line))
        .collect();
    assert_eq!(paths, [("m.py", 1), ("m.py", 4), ("m.py", 7)]);
    assert_eq!(
        (
            three.limits.used,
            three.limits.omitted,
            three.limits.truncated
        ),
        (3, 3, true)
    );
    assert_eq!(three.limits.budget, Some(3));
    // A limit the listing fits in cuts nothing.
    let six = ws.symbol("step", 6).unwrap();
    assert_eq!(
        (six.limits.used, six.limits.omitted, six.limits.truncated),
        (6, 0, false)
    );
    // References written `step` (the import, four method calls, five bare calls).
    let refs = ws.refs("step", 2).unwrap();
    assert_eq!(ws.refs("step", 0).unwrap().result.len(), 10);
    assert_eq!(
        (refs.result.len(), refs.limits.used, refs.limits.omitted),
        (2, 2, 8)
    );
    // A key: the references resolved to it.
    let key = "n.py#Walker.step@method";
    let to_key = ws.refs(key, 0).unwrap();
    assert_eq!(to_key.result.len(), 4, "{:?}", to_key.result);
    // As a shell completes it.
    assert_eq!(ws.refs(&format!("./{key}"), 0).unwrap().result.len(), 4);
    assert_eq!(ws.symbol(&format!("./{key}"), 0).unwrap().result.len(), 1);
    let cut = ws.refs(key, 1).unwrap();
    assert_eq!((cut.limits.used, cut.limits.omitted), (1, 3));
    assert_eq!(cut.result[0].line, 7);
    // A qualified name: its symbols' references.
    let qualified = ws.refs("Walker.step", 3).unwrap();
    assert_eq!((qualified.limits.used, qualified.limits.omitted), (3, 1));
    // Callers: the calls resolved to every symbol named, counted past the limit (at any
    // confidence: `w.step()` is a name matched on a value, 0.3).
    let callers = ws.callers_with(key, 2, 0.0, true).unwrap();
    let lines: Vec<u32> = callers.result.calls.iter().map(|c| c.line).collect();
    assert_eq!(lines, [7, 8]);
    assert_eq!(
        (
            callers.limits.used,
            callers.limits.omitted,
            callers.limits.truncated
        ),
        (2, 2, true)
    );
    // The definitions a name matched are cut at the limit too, and counted.
    let by_name = ws.callers("step", 2).unwrap();
    let keys: Vec<&str> = by_name
        .result
        .targets
        .iter()
        .map(|t| t.key.as_str())
        .collect();
    assert_eq!(keys, ["m.py#C0.step@method", "m.py#C1.step@method"]);
    assert_eq!(by_name.result.targets_total, 6);
    // At the default confidence the five bare calls are counted in `limits`, the four
    // `w.step()` apart.
    assert_eq!((by_name.limits.used, by_name.limits.omitted), (2, 3));
    assert_eq!(by_name.result.weaker, 4);
    // A qualifier that names no symbol: the uses written on it (`w.step()`), and none
    // for one nothing is written on (not every `step`).
    let on_w = ws.refs("w.step", 0).unwrap();
    assert_eq!(
        on_w.result.iter().map(|r| r.line).collect::<Vec<_>>(),
        [7, 8, 9, 10]
    );
    assert!(ws.refs("Nope.step", 0).unwrap().result.is_empty());
    assert!(ws.refs("Nope::step", 0).unwrap().result.is_empty());
    let bare = ws.callers("m.py#step@function", 0).unwrap();
    assert_eq!(bare.result.calls.len(), 5, "{:?}", bare.result.calls);
    assert_eq!(bare.limits.omitted, 0);
}

/// Fault found by a trial on regex-syntax: `loci impact 'src/ast/parse.rs#Parser@struct'`
/// counted only the `use` lines and `impl` blocks naming `Parser`, not the calls of its
/// methods (`Parser::new()`, `p.parse()`): a type's uses are its members' uses too.
#[test]
fn fault_impact_of_a_type_left_out_the_uses_of_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/parse.rs",
        "pub struct Parser;\n\nimpl Parser {\n    pub fn new() -> Parser {\n        Parser\n    }\n\n    pub fn parse(&self) -> u32 {\n        1\n    }\n}\n",
    );
    write(
        root,
        "src/main.rs",
        "mod parse;\n\nfn build() -> u32 {\n    let p = parse::Parser::new();\n    p.parse()\n}\n\nfn main() {\n    build();\n}\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let impact = ws
        .impact("src/parse.rs#Parser@struct", 3, false)
        .unwrap()
        .result;
    let nodes: Vec<(String, u32, String)> = impact
        .nodes
        .iter()
        .map(|n| (n.id.clone(), n.depth, n.via.to.clone()))
        .collect();
    assert_eq!(
        nodes,
        [
            (
                "src/main.rs#build@function".to_string(),
                1,
                // `parse::Parser::new()` names the type, as well as calling its member.
                "src/parse.rs#Parser@struct".to_string()
            ),
            // `impl Parser`, outside any definition: its file.
            (
                "src/parse.rs".to_string(),
                1,
                "src/parse.rs#Parser@struct".to_string()
            ),
            (
                "src/main.rs#main@function".to_string(),
                2,
                "src/main.rs#build@function".to_string()
            )
        ]
    );
}

/// Fault found by a trial on regex-syntax: `ParserI::new(self, pattern).parse()` inside
/// `Parser.parse` resolved to `Parser.parse` itself (confidence 0.30), a false
/// self-recursion; Python's `Reader().read()` alike. A method called on a value just
/// constructed (`Type::new(..)`, `Type::default()`, a capitalised Python call) is a
/// member of that type.
#[test]
fn fault_a_method_called_on_a_constructed_value_went_to_the_enclosing_method() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub struct Parser;\npub struct ParserI;\n\nimpl ParserI {\n    pub fn new(p: u32) -> ParserI {\n        ParserI\n    }\n    pub fn parse(&self) -> u32 {\n        1\n    }\n}\n\nimpl Parser {\n    pub fn parse(&self) -> u32 {\n        ParserI::new(1).parse()\n    }\n}\n",
    );
    write(
        root,
        "m.py",
        "class Reader:\n    def read(self):\n        return 1\n\nclass Writer:\n    def read(self):\n        return Reader().read()\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let calls = |name: &str| -> Vec<(String, u32, Option<String>)> {
        ws.refs(name, 0)
            .unwrap()
            .result
            .into_iter()
            .filter(|r| r.kind == "call")
            .map(|r| (r.path, r.line, r.target_key))
            .collect()
    };
    assert_eq!(
        calls("parse"),
        [(
            "src/lib.rs".to_string(),
            14,
            Some("src/lib.rs#ParserI.parse@method".to_string())
        )]
    );
    assert_eq!(
        calls("read"),
        [(
            "m.py".to_string(),
            6,
            Some("m.py#Reader.read@method".to_string())
        )]
    );
}

/// Found by a fresh-user trial on regex-syntax: a Rust type named in a signature, a field,
/// a type argument or a struct literal (`-> Parser`, `Parser { .. }`) was no reference,
/// so `loci refs Parser` and `loci impact` left out every function that only takes,
/// returns or builds one; Python annotations alike (`def f(p: Parser) -> Parser`).
#[test]
fn fault_a_type_named_in_a_signature_or_struct_literal_was_no_reference() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/parse.rs",
        "pub struct Parser {\n    pub depth: u32,\n}\n",
    );
    write(
        root,
        "src/main.rs",
        "mod parse;\nuse parse::Parser;\n\nfn build() -> Parser {\n    Parser { depth: 0 }\n}\n\nfn deeper(p: &Parser) -> Option<Parser> {\n    None\n}\n\nstruct Holder {\n    inner: Parser,\n}\n\nenum Kind {\n    Path,\n}\n\nfn open(p: &std::path::Path, q: &Path) -> Kind {\n    Kind::Path\n}\n",
    );
    write(
        root,
        "app/parse.py",
        "class Parser:\n    pass\n\ndef reparse(p: Parser) -> list[Parser]:\n    return [p]\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let types = |name: &str| -> Vec<(String, u32, Option<String>, Option<String>)> {
        ws.refs(name, 0)
            .unwrap()
            .result
            .into_iter()
            .filter(|r| r.kind == "type")
            .map(|r| (r.path, r.line, r.enclosing_key, r.target_key))
            .collect()
    };
    let rust = |line, enclosing: &str| {
        (
            "src/main.rs".to_string(),
            line,
            Some(format!("src/main.rs#{enclosing}")),
            Some("src/parse.rs#Parser@struct".to_string()),
        )
    };
    let python = |enclosing: &str| {
        (
            "app/parse.py".to_string(),
            3,
            Some(format!("app/parse.py#{enclosing}")),
            Some("app/parse.py#Parser@class".to_string()),
        )
    };
    assert_eq!(
        types("Parser"),
        [
            python("reparse@function"),
            python("reparse@function"),
            rust(3, "build@function"),
            rust(7, "deeper@function"),
            rust(7, "deeper@function"),
            rust(12, "Holder@struct"),
        ]
    );
    // The struct literal constructs one: a call, as `Parser::new()` is.
    let literal: Vec<(String, u32, String)> = ws
        .refs("Parser", 0)
        .unwrap()
        .result
        .into_iter()
        .filter(|r| r.kind == "call")
        .map(|r| (r.path, r.line, r.target_key.unwrap_or_default()))
        .collect();
    assert_eq!(
        literal,
        [(
            "src/main.rs".to_string(),
            4,
            "src/parse.rs#Parser@struct".to_string()
        )]
    );
    // `Path` as a type is not the variant `Kind::Path` of the same name.
    assert_eq!(
        ws.refs("Path", 0)
            .unwrap()
            .result
            .iter()
            .filter(|r| r.kind == "type")
            .map(|r| r.target_key.clone())
            .collect::<Vec<_>>(),
        // `std::path::Path` too: a path to no module of the map.
        [None, None]
    );
    let impact = ws
        .impact("src/parse.rs#Parser@struct", 1, false)
        .unwrap()
        .result;
    let ids: Vec<&str> = impact.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "src/main.rs",
            "src/main.rs#Holder@struct",
            "src/main.rs#build@function",
            "src/main.rs#deeper@function"
        ]
    );
}

/// Fault found by a fresh-user trial: a qualified name had to be written from the module
/// down (`string.RegexBuilder.new` in the regex crate, `geo.Circle.area` in C++,
/// `Value.deserialize.ValueVisitor.visit_map` in serde_json): `RegexBuilder::new`,
/// `Circle.area` and `ValueVisitor.visit_map` found nothing. A qualified name now matches
/// every symbol whose qualified name ends with it at a segment boundary, exact matches
/// first, in `symbol`, `refs`, `callers` and `impact`.
#[test]
fn fault_a_qualified_name_needed_its_whole_module_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "geo.cpp",
        "namespace geo {\nclass Circle {\npublic:\n    double area() { return 1.0; }\n};\n}\n\ndouble total(geo::Circle c) {\n    return c.area();\n}\n",
    );
    write(
        root,
        "value.rs",
        "pub struct Value;\nimpl Value {\n    pub fn deserialize() {\n        struct ValueVisitor;\n        impl ValueVisitor {\n            fn visit_map() {}\n        }\n        ValueVisitor::visit_map();\n    }\n}\n",
    );
    // `Circle.area` exactly, in a file of its own: listed before the longer match.
    write(
        root,
        "z.py",
        "class Circle:\n    def area(self):\n        return 2\n\nclass NotCircle:\n    def area(self):\n        return 3\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let keys = |name: &str| -> Vec<String> {
        ws.symbol(name, LIST_LIMIT)
            .unwrap()
            .result
            .into_iter()
            .map(|h| h.key)
            .collect()
    };
    assert_eq!(
        keys("Circle.area"),
        ["z.py#Circle.area@method", "geo.cpp#geo.Circle.area@method"]
    );
    assert_eq!(keys("Circle::area"), keys("Circle.area"));
    assert_eq!(keys("geo.Circle.area"), ["geo.cpp#geo.Circle.area@method"]);
    // At a segment boundary only: `NotCircle.area` is no `Circle.area`, nor `ircle.area`.
    assert!(keys("ircle.area").is_empty());
    let visit = "value.rs#Value.deserialize.ValueVisitor.visit_map@method";
    assert_eq!(keys("ValueVisitor.visit_map"), [visit]);
    assert_eq!(keys("ValueVisitor::visit_map"), [visit]);
    assert_eq!(keys("deserialize.ValueVisitor.visit_map"), [visit]);
    let env = ws.symbol("Circle.area", 1).unwrap();
    assert_eq!(env.limits.omitted, 1);
    let callers: Vec<(String, u32)> = ws
        .callers("ValueVisitor::visit_map", LIST_LIMIT)
        .unwrap()
        .result
        .calls
        .into_iter()
        .map(|c| (c.path, c.line))
        .collect();
    assert_eq!(callers, [("value.rs".to_string(), 7)]);
    let refs: Vec<(String, u32, Option<String>)> = ws
        .refs("ValueVisitor.visit_map", LIST_LIMIT)
        .unwrap()
        .result
        .into_iter()
        .map(|r| (r.path, r.line, r.target_key))
        .collect();
    assert_eq!(refs, [("value.rs".to_string(), 7, Some(visit.to_string()))]);
    let impact = ws
        .impact("ValueVisitor.visit_map", 1, false)
        .unwrap()
        .result;
    assert_eq!(impact.target, [visit]);
    let ids: Vec<&str> = impact.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["value.rs#Value.deserialize@method"]);
}

/// `(id, depth, kind, to, at, provenance, confidence)` of each listed dependent.
fn impact_rows(ws: &Workspace, target: &str, depth: u32, hard: bool) -> Vec<String> {
    ws.impact(target, depth, hard)
        .unwrap()
        .result
        .nodes
        .into_iter()
        .map(|n| {
            format!(
                "{} {} {} -> {} at {} {} {:.1}",
                n.id, n.depth, n.via.kind, n.via.to, n.via.at, n.via.provenance, n.via.confidence
            )
        })
        .collect()
}

/// Fault found by a fresh-user trial: file-level `impact` followed import edges only, so
/// it said nothing depends on a Java class its package calls without an import, on a Go
/// file its package calls, or (serde_json's `src/de.rs`) on a Rust file that
/// `src/raw.rs` calls 35 times through `crate::Deserializer::from_str` without a `use`.
/// Resolved calls, types and bases into the file are edges of the blast radius too, with
/// their kind, provenance and confidence, de-duplicated with the import edges; `--hard`
/// keeps the stated ones.
#[test]
fn fault_file_impact_followed_only_import_edges() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let java = "java/src/main/java/com/acme/app";
    write(
        root,
        &format!("{java}/Helper.java"),
        "package com.acme.app;\n\npublic class Helper {\n    public static int help() { return 1; }\n}\n",
    );
    write(
        root,
        &format!("{java}/Main.java"),
        "package com.acme.app;\n\npublic class Main {\n    public static void main(String[] args) {\n        Helper.help();\n    }\n}\n",
    );
    write(root, "go.mod", "module github.com/acme/svc\n\ngo 1.21\n");
    write(
        root,
        "pkg/util/a.go",
        "package util\n\nfunc A() int { return 1 }\n",
    );
    write(
        root,
        "pkg/util/b.go",
        "package util\n\nfunc B() int { return A() }\n",
    );
    write(
        root,
        "src/de.rs",
        "pub struct Deserializer;\n\nimpl Deserializer {\n    pub fn from_str() -> Deserializer {\n        Deserializer\n    }\n}\n",
    );
    write(root, "src/lib.rs", "mod de;\nmod raw;\n");
    write(
        root,
        "src/raw.rs",
        "pub fn parse() {\n    crate::Deserializer::from_str();\n    crate::Deserializer::from_str();\n}\n",
    );
    write(
        root,
        "src/user.rs",
        "use crate::raw;\n\npub fn run() {\n    raw::parse();\n}\n",
    );
    write(root, "src/main.rs", "mod user;\n");
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        impact_rows(&ws, &format!("{java}/Helper.java"), 3, false),
        [format!(
            "{java}/Main.java 1 call -> {java}/Helper.java at {java}/Main.java:5 derived 0.7"
        )]
    );
    assert_eq!(
        impact_rows(&ws, "pkg/util/a.go", 3, false),
        ["pkg/util/b.go 1 call -> pkg/util/a.go at pkg/util/b.go:3 derived 0.9"]
    );
    // `src/lib.rs` declares `mod de;` (an import edge); `src/raw.rs` only calls into it,
    // `src/user.rs` reaches it through `raw` at depth 2 (import then call), and
    // `src/main.rs` (`mod user;`) at depth 3.
    assert_eq!(
        impact_rows(&ws, "src/de.rs", 3, false),
        [
            "src/lib.rs 1 import -> src/de.rs at src/lib.rs:1 stated 1.0",
            "src/raw.rs 1 type -> src/de.rs at src/raw.rs:2 derived 0.7",
            "src/user.rs 2 import -> src/raw.rs at src/user.rs:1 stated 1.0",
            "src/main.rs 3 import -> src/user.rs at src/main.rs:1 stated 1.0",
        ]
    );
    // Stated edges only: the derived calls are not followed.
    assert_eq!(
        impact_rows(&ws, "src/de.rs", 3, true),
        ["src/lib.rs 1 import -> src/de.rs at src/lib.rs:1 stated 1.0"]
    );
    let env = ws.impact("src/de.rs", 3, false).unwrap();
    assert_eq!(env.result.dependents, 4);
    assert_eq!(env.result.by_depth, [2, 1, 1]);
}

/// Fault from two fresh-user trials: `impact keepalive.rs` reached 46 files of
/// tokio-postgres and `impact unfold_state.rs` 85 of futures-util, where 2 use them: the
/// crate root's `mod keepalive;` made `lib.rs` a dependent, and every file using anything
/// of the crate root a dependent of that. A file that only declares a module is listed,
/// and the walk goes no further through it.
#[test]
fn fault_impact_went_through_the_mod_line_of_the_crate_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- src/lib.rs
mod client;
mod keepalive;
mod other;
pub struct Thing;
//- src/keepalive.rs
pub struct KeepaliveConfig;
//- src/client.rs
use crate::keepalive::KeepaliveConfig;
pub fn connect(_: KeepaliveConfig) {}
//- src/other.rs
use crate::Thing;
pub fn other(_: Thing) {}
"#,
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        impact_rows(&ws, "src/keepalive.rs", 3, false),
        [
            "src/client.rs 1 import -> src/keepalive.rs at src/client.rs:1 stated 1.0",
            "src/lib.rs 1 import -> src/keepalive.rs at src/lib.rs:2 stated 1.0",
        ]
    );
    // The crate root itself is used: its dependents are those using it.
    assert_eq!(
        impact_rows(&ws, "src/lib.rs", 3, false),
        ["src/other.rs 1 import -> src/lib.rs at src/other.rs:1 stated 1.0"]
    );
}

/// Fault from two fresh-user trials: `impact common/rewind.rs` and `impact
/// value/normalize.rs` answered "no file or symbol named" where one mapped file ends in
/// each. A path ending exactly one mapped path is that one; one ending several is refused
/// with them.
#[test]
fn fault_a_path_written_from_a_folder_inside_the_repository_was_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- hyper-util/src/common/rewind.rs
pub struct Rewind;
//- hyper-util/src/common/mod.rs
mod rewind;
//- a/util.rs
pub fn a() {}
//- b/util.rs
pub fn b() {}
"#,
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(
        ws.map_path("common/rewind.rs").unwrap(),
        "hyper-util/src/common/rewind.rs"
    );
    assert_eq!(
        ws.impact("common/rewind.rs", 1, false)
            .unwrap()
            .result
            .target,
        ["hyper-util/src/common/rewind.rs"]
    );
    let several = ws.map_path("util.rs").unwrap_err().to_string();
    assert!(
        several.contains("`util.rs` is not a path of the map, and several end in it: ")
            && several.contains("a/util.rs")
            && several.contains("b/util.rs"),
        "{several}"
    );
    // `impact` says so too, not "no file or symbol named `util.rs`" (a fresh-user trial's
    // `impact lib.rs`).
    assert_eq!(
        ws.impact("util.rs", 1, false).unwrap_err().to_string(),
        several
    );
    assert!(
        ws.map_path("mon/rewind.rs")
            .unwrap_err()
            .to_string()
            .contains("is not in the map"),
        "a path's segments are whole"
    );
}

/// Fault (fresh-user trial): after `def extra()` was appended to a mapped file without a
/// rescan, `symbol extra` answered "no symbol" with `freshness.changed_since_scan: 0` and
/// no note, as if the map were current: an agent that had just written the function was
/// told it does not exist. An answer that finds nothing counts the mapped files changed
/// on disk since the scan and says the answer may be out of date.
#[test]
fn fault_a_not_found_answer_from_a_stale_map_gave_no_hint() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "pkg/utils.py", "def helper():\n    return 1\n");
    write(root, "pkg/other.py", "def other():\n    return helper()\n");
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let fresh = ws.symbol("extra", 0).unwrap();
    assert_eq!(fresh.freshness.changed_since_scan, Some(0));
    let scan_notes = |notes: &[String]| -> Vec<String> {
        notes
            .iter()
            .filter(|n| n.contains("since the last scan"))
            .cloned()
            .collect()
    };
    assert!(scan_notes(&fresh.capability.notes).is_empty());

    write(
        root,
        "pkg/utils.py",
        "def helper():\n    return 1\n\ndef extra():\n    return 2\n",
    );
    for (what, env_notes, changed) in [
        (
            "symbol",
            ws.symbol("extra", 0)
                .map(|e| (e.capability.notes, e.freshness.changed_since_scan)),
            1,
        ),
        (
            "refs",
            ws.refs("extra", 0)
                .map(|e| (e.capability.notes, e.freshness.changed_since_scan)),
            1,
        ),
        (
            "callers",
            ws.callers("extra", 0)
                .map(|e| (e.capability.notes, e.freshness.changed_since_scan)),
            1,
        ),
    ] {
        let (notes, counted) = env_notes.unwrap();
        assert_eq!(counted, Some(changed), "{what}");
        assert_eq!(
            scan_notes(&notes),
            [
                "1 mapped file changed on disk since the last scan: this answer may miss what it defines now (`loci scan` maps it)"
            ],
            "{what}"
        );
    }
    // An answer that found something is checked against its own files only, as before.
    let found = ws.symbol("other", 0).unwrap();
    assert_eq!(found.freshness.changed_since_scan, Some(0));
}

/// Fault found by a trial on a repository with Rust and Python: 49 Rust calls were linked
/// by name to Python definitions (`compiled.get()` in `dir.rs` → `email/message.py#Message.get`
/// at 0.2, a bare call to a name only Python defines at 0.5), and `impact` followed them.
/// A reference resolves only within its language's link group (`Language::link_group`:
/// TypeScript with JavaScript, C with C++); Rust, Python and TypeScript each defining a
/// `parse` keep their calls apart, and a name only another language defines stays
/// unresolved.
#[test]
fn fault_a_call_resolved_by_name_to_a_definition_in_another_language() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "pub struct Compiled;\n\npub fn parse(s: &str) -> u32 {\n    s.len() as u32\n}\n\npub fn run(compiled: &Compiled) -> u32 {\n    compiled.get();\n    load();\n    parse(\"x\")\n}\n",
    );
    write(
        root,
        "app/msg.py",
        "class Message:\n    def get(self):\n        return 1\n\n\ndef load():\n    return Message().get()\n\n\ndef parse(s):\n    return load()\n",
    );
    write(
        root,
        "web/util.ts",
        "export function parse(s: string): number {\n  return s.length;\n}\n\nexport function render(): string {\n  return String(parse(\"x\")) + load();\n}\n",
    );
    write(
        root,
        "web/main.js",
        "import { render } from './util';\n\nexport function main() {\n  return render() + format();\n}\n",
    );
    write(
        root,
        "web/fmt.ts",
        "export function format(): string {\n  return \"\";\n}\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    // Every call written `name`: where, and what it resolved to.
    let calls = |name: &str| -> Vec<String> {
        ws.refs(name, 0)
            .unwrap()
            .result
            .into_iter()
            .filter(|r| r.kind == "call")
            .map(|r| {
                format!(
                    "{}:{} -> {} {} {:.1}",
                    r.path,
                    r.line + 1,
                    r.target_key.as_deref().unwrap_or("unresolved"),
                    r.provenance,
                    r.confidence
                )
            })
            .collect()
    };
    assert_eq!(
        calls("get"),
        [
            "app/msg.py:7 -> app/msg.py#Message.get@method derived 0.9",
            "src/lib.rs:8 -> unresolved derived 0.0",
        ]
    );
    assert_eq!(
        calls("load"),
        [
            "app/msg.py:11 -> app/msg.py#load@function derived 0.9",
            "src/lib.rs:9 -> unresolved derived 0.0",
            "web/util.ts:6 -> unresolved derived 0.0",
        ]
    );
    assert_eq!(
        calls("parse"),
        [
            "src/lib.rs:10 -> src/lib.rs#parse@function derived 0.9",
            "web/util.ts:6 -> web/util.ts#parse@function derived 0.9",
        ]
    );
    // JavaScript reaches TypeScript: one module system.
    assert_eq!(
        calls("format"),
        ["web/main.js:4 -> web/fmt.ts#format@function derived 0.5"]
    );
    let callers = |name: &str| -> Vec<String> {
        ws.callers(name, 0)
            .unwrap()
            .result
            .calls
            .into_iter()
            .map(|c| format!("{}:{}", c.path, c.line + 1))
            .collect()
    };
    assert_eq!(callers("app/msg.py#load@function"), ["app/msg.py:11"]);
    assert_eq!(callers("Message.get"), ["app/msg.py:7"]);
    assert_eq!(callers("src/lib.rs#parse@function"), ["src/lib.rs:10"]);
    assert_eq!(callers("web/util.ts#parse@function"), ["web/util.ts:6"]);
    // No resolved reference of any kind crosses from one link group to another.
    let conn = loci_store::rusqlite::Connection::open(root.join(".loci/test.db")).unwrap();
    let mut pairs: Vec<(String, String)> = conn
        .prepare(
            "SELECT DISTINCT f.language, g.language FROM refs r
             JOIN files f ON f.file_id = r.file_id
             JOIN symbols s ON s.symbol_id = r.target_id
             JOIN files g ON g.file_id = s.file_id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    pairs.sort();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        pairs,
        [
            pair("javascript", "typescript"),
            pair("python", "python"),
            pair("rust", "rust"),
            pair("typescript", "typescript"),
        ]
    );
}

/// Every reference to `name`: `path:line kind -> target key` (or `unresolved`).
fn refs_as_resolved(ws: &Workspace, name: &str) -> Vec<String> {
    ws.refs(name, 0)
        .unwrap()
        .result
        .into_iter()
        .map(|r| {
            format!(
                "{}:{} {} -> {}",
                r.path,
                r.line + 1,
                r.kind,
                r.target_key.as_deref().unwrap_or("unresolved"),
            )
        })
        .collect()
}

/// Two crates of one repository, neither importing from the other: `errs` defines the
/// map's only `Result`, `Ok` and `HashMap`; `tool` returns std's `Result` and calls std's
/// `Ok(..)`; a test module in `errs` names the `HashMap` it imports from `std`. Only
/// `errs`'s own bare uses resolve to its definitions (`check.rs` sees them through `use
/// super::*;`).
#[test]
fn fault_a_bare_name_resolved_to_the_only_definition_in_another_crate() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- errs/Cargo.toml
[package]
name = "errs"
//- errs/src/lib.rs
mod check;
pub struct Error;
pub type Result<T> = std::result::Result<T, Error>;
#[allow(non_snake_case)]
pub fn Ok<T>(t: T) -> Result<T> {
    std::result::Result::Ok(t)
}
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V>;
//- errs/src/check.rs
use super::*;
pub fn checked() -> Result<u8> {
    Ok(1)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    fn table() -> HashMap<String, u32> {
        HashMap::new()
    }
}
//- tool/Cargo.toml
[package]
name = "tool"
//- tool/src/lib.rs
pub fn run() -> Result<(), String> {
    Ok(())
}
"#,
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let refs = |name: &str| refs_as_resolved(&ws, name);
    assert_eq!(
        refs("Ok"),
        [
            "errs/src/check.rs:3 call -> errs/src/lib.rs#Ok@function",
            "errs/src/lib.rs:6 call -> unresolved",
            "tool/src/lib.rs:2 call -> unresolved",
        ]
    );
    assert_eq!(
        refs("Result"),
        [
            "errs/src/check.rs:2 type -> errs/src/lib.rs#Result@type",
            "errs/src/lib.rs:3 type -> unresolved",
            "errs/src/lib.rs:5 type -> errs/src/lib.rs#Result@type",
            "errs/src/lib.rs:6 type -> unresolved",
            "tool/src/lib.rs:1 type -> unresolved",
        ]
    );
    assert_eq!(
        refs("HashMap"),
        [
            "errs/src/check.rs:8 import -> unresolved",
            "errs/src/check.rs:10 type -> unresolved",
            "errs/src/check.rs:11 type -> unresolved",
            "errs/src/lib.rs:8 type -> unresolved",
        ]
    );
    let impact = ws.impact("errs/src/lib.rs", 1, false).unwrap().result;
    assert_eq!(impact.files, ["errs/src/check.rs", "errs/src/lib.rs"]);
}

/// `from math import factorial` binds the standard library's `factorial`, which the map
/// does not hold: a test profile's own `factorial` is no target of it. A definition in
/// the same file still wins over such an import (`from _json import scan` beside a
/// pure-Python `def scan`, the accelerator pattern), and a relative import that did not
/// resolve is the repository's own code, not outside the map.
#[test]
fn fault_a_name_imported_from_a_module_outside_the_map_resolved_to_a_namesake() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- profilee.py
def factorial(n):
    return 1 if n < 2 else n * factorial(n - 1)
//- test_random.py
from math import factorial

def check():
    return factorial(5)
//- scanner.py
def scan(s):
    return s.split()

try:
    from _json import scan
except ImportError:
    pass

def words(s):
    return scan(s)
//- pkg/__init__.py
//- pkg/tools.py
def helper():
    return 1
//- pkg/cli.py
from .gone import helper

def main():
    return helper()
"#,
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let refs = |name: &str| refs_as_resolved(&ws, name);
    assert_eq!(
        refs("factorial"),
        [
            "profilee.py:2 call -> profilee.py#factorial@function",
            "test_random.py:1 import -> unresolved",
            "test_random.py:4 call -> unresolved",
        ]
    );
    assert_eq!(
        refs("scan"),
        [
            "scanner.py:5 import -> scanner.py#scan@function",
            "scanner.py:10 call -> scanner.py#scan@function",
        ]
    );
    // A relative import names the repository's own code, resolved or not.
    assert_eq!(
        refs("helper"),
        [
            "pkg/cli.py:1 import -> pkg/tools.py#helper@function",
            "pkg/cli.py:4 call -> pkg/tools.py#helper@function",
        ]
    );
}

/// Fault from a fresh-user trial: `callers`, `refs` and `impact` found nothing for
/// rayon's `AbortIfPanic`, a unit struct used six times as `unwind::AbortIfPanic`: a
/// capitalised item named by a path as a value (a unit struct, a variant, a constant) was
/// no reference. A path's leading segments and a `use` stay what they were.
#[test]
fn fault_a_unit_struct_named_by_a_path_had_no_references() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- Cargo.toml
[package]
name = "pool"
//- src/lib.rs
mod registry;
mod unwind;
//- src/unwind.rs
pub(super) struct AbortIfPanic;

impl AbortIfPanic {
    pub(super) fn armed() -> AbortIfPanic {
        AbortIfPanic
    }
}

pub(super) const MAX_DEPTH: usize = 8;
//- src/registry.rs
use crate::unwind;
use crate::unwind::AbortIfPanic as Guard;

pub fn run() -> usize {
    let guard = unwind::AbortIfPanic;
    let armed = unwind::AbortIfPanic::armed();
    std::mem::forget((guard, armed));
    unwind::MAX_DEPTH
}
"#,
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let refs = |name: &str| refs_as_resolved(&ws, name);
    assert_eq!(
        refs("AbortIfPanic"),
        [
            "src/registry.rs:2 import -> src/unwind.rs#AbortIfPanic@struct",
            "src/registry.rs:5 call -> src/unwind.rs#AbortIfPanic@struct",
            "src/registry.rs:6 type -> src/unwind.rs#AbortIfPanic@struct",
            "src/unwind.rs:3 inherit -> src/unwind.rs#AbortIfPanic@struct",
            "src/unwind.rs:4 type -> src/unwind.rs#AbortIfPanic@struct",
        ]
    );
    assert_eq!(
        refs("MAX_DEPTH"),
        ["src/registry.rs:8 other -> src/unwind.rs#MAX_DEPTH@constant"]
    );
    let callers: Vec<String> = ws
        .callers("AbortIfPanic", 0)
        .unwrap()
        .result
        .calls
        .into_iter()
        .map(|c| format!("{}:{}", c.path, c.line + 1))
        .collect();
    assert_eq!(callers, ["src/registry.rs:5"]);
}

/// Fault from a fresh-user trial: `callers DecompressReader` listed bz2's and lzma's
/// constructions of it but not gzip's `_GzipReader`, whose `super().__init__(..)`
/// constructs it as a base: a Python class's callers are its `__init__`'s too.
#[test]
fn fault_callers_of_a_class_missed_a_subclass_constructing_it_through_super() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- base.py
class Reader:
    def __init__(self, fp):
        self.fp = fp
//- gz.py
from base import Reader

class GzReader(Reader):
    def __init__(self, fp):
        super().__init__(fp)
//- use.py
from base import Reader

def open_reader(fp):
    return Reader(fp)
"#,
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let callers: Vec<String> = ws
        .callers("Reader", 0)
        .unwrap()
        .result
        .calls
        .into_iter()
        .map(|c| format!("{}:{}", c.path, c.line + 1))
        .collect();
    // The surest first: an imported name (stated), then `super()` through a base (derived).
    assert_eq!(callers, ["use.py:4", "gz.py:5"]);
}

/// `pkg/store.py` defines `Store`; `pkg/b_import.py` imports it and calls `Store.open()`
/// and `Store().get()`; `pkg/a_value.py` calls `x.get()` on a value of unknown type (a
/// name match, 0.2).
fn confidences() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "pkg/__init__.py", "");
    write(
        root,
        "pkg/store.py",
        "class Store:\n    def get(self):\n        return 1\n\n    def close(self):\n        return self.get()\n\n    @classmethod\n    def open(cls):\n        return cls()\n",
    );
    write(
        root,
        "pkg/a_value.py",
        "def fetch(x):\n    return x.get()\n",
    );
    write(
        root,
        "pkg/b_import.py",
        "from pkg.store import Store\n\n\ndef make():\n    return Store.open()\n\n\ndef read():\n    return Store().get()\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

/// Fault found by a trial on CPython's stdlib: `impact urllib/parse.py --depth 3` listed
/// 0.20 name matches (`base64.py:237`, which is `acc.to_bytes(5)`) alphabetically among
/// real imports, and reached 1,150 files through them. `callers` and `impact` follow
/// edges at `MIN_CONFIDENCE` (0.5) or more by default, count the weaker ones apart, and
/// list each hop by confidence, then path; `min_confidence` 0 includes every edge.
#[test]
fn fault_weak_name_matches_were_listed_among_real_edges() {
    use loci_engine::map::MIN_CONFIDENCE;
    let (_dir, ws) = confidences();
    assert_eq!(MIN_CONFIDENCE, 0.5);
    let callers = |min: f64| {
        let c = ws.callers_with("Store.get", 0, min, true).unwrap().result;
        let text = loci_engine::text::to_string(|o| loci_engine::text::callers(o, &c));
        (text, c.weaker)
    };
    let (text, weaker) = callers(MIN_CONFIDENCE);
    assert_eq!(
        text,
        "definition pkg/store.py#Store.get@method (pkg/store.py:2)\n\
         pkg/b_import.py:9:20: call get in pkg/b_import.py#read@function -> pkg/store.py#Store.get@method (stated, 1.00)\n\
         pkg/store.py:6:21: call get in pkg/store.py#Store.close@method -> pkg/store.py#Store.get@method (derived, 0.90)\n\
         … and 1 weaker call, not listed: resolved below confidence 0.50 (a name matched, the receiver's type unknown); `--min-confidence 0` lists them\n"
    );
    assert_eq!(weaker, 1);
    // `callers` without a confidence is the default's.
    assert_eq!(
        ws.callers("Store.get", 0).unwrap().result.calls.len(),
        ws.callers_with("Store.get", 0, MIN_CONFIDENCE, true)
            .unwrap()
            .result
            .calls
            .len()
    );
    let (text, weaker) = callers(0.0);
    assert_eq!(
        text,
        "definition pkg/store.py#Store.get@method (pkg/store.py:2)\n\
         pkg/b_import.py:9:20: call get in pkg/b_import.py#read@function -> pkg/store.py#Store.get@method (stated, 1.00)\n\
         pkg/store.py:6:21: call get in pkg/store.py#Store.close@method -> pkg/store.py#Store.get@method (derived, 0.90)\n\
         pkg/a_value.py:2:14: call get in pkg/a_value.py#fetch@function -> pkg/store.py#Store.get@method (derived, 0.20)\n"
    );
    assert_eq!(weaker, 0);

    let impact = |edges: Edges| {
        let env = ws.impact_with("pkg/store.py", 3, edges, 0).unwrap();
        let weaker = env.result.weaker;
        (
            loci_engine::text::to_string(|o| loci_engine::text::impact(o, &env)),
            weaker,
        )
    };
    assert_eq!(
        impact(Edges::default()),
        (
            "impact of pkg/store.py (depth 3, edges at confidence 0.50 or more): 1 dependent file\n  \
             pkg/b_import.py  <- import at pkg/b_import.py:1 (stated, 1.00)\n\
             1 more dependent file only through weaker edges (below confidence 0.50), not counted: `--min-confidence 0` follows them\n"
                .to_string(),
            1
        )
    );
    // Every edge: the import (1.00) before the name match (0.20), though `a_value.py`
    // sorts first by path.
    assert_eq!(
        impact(Edges::all()),
        (
            "impact of pkg/store.py (depth 3, every resolved edge): 2 dependent files\n  \
             pkg/b_import.py  <- import at pkg/b_import.py:1 (stated, 1.00)\n  \
             pkg/a_value.py  <- call at pkg/a_value.py:2 (derived, 0.20)\n"
                .to_string(),
            0
        )
    );
    let symbol = |edges: Edges| -> Vec<String> {
        let env = ws.impact_with("Store.get", 1, edges, 0).unwrap();
        env.result
            .nodes
            .iter()
            .map(|n| format!("{} {:.1}", n.id, n.via.confidence))
            .chain([format!("weaker {}", env.result.weaker)])
            .collect()
    };
    assert_eq!(
        symbol(Edges::default()),
        [
            "pkg/b_import.py#read@function 1.0",
            "pkg/store.py#Store.close@method 0.9",
            "weaker 1"
        ]
    );
    assert_eq!(
        symbol(Edges::all()),
        [
            "pkg/b_import.py#read@function 1.0",
            "pkg/store.py#Store.close@method 0.9",
            "pkg/a_value.py#fetch@function 0.2",
            "weaker 0"
        ]
    );
    // A confidence outside [0, 1] is refused, naming the argument.
    let bad = Edges {
        min_confidence: 1.5,
        ..Edges::default()
    };
    assert!(matches!(
        ws.impact_with("pkg/store.py", 1, bad, 0),
        Err(loci_engine::EngineError::InvalidArgument { name, .. }) if name == "min_confidence"
    ));
    assert!(matches!(
        ws.callers_with("Store.get", 0, -0.1, true),
        Err(loci_engine::EngineError::InvalidArgument { name, .. }) if name == "min_confidence"
    ));
}

/// Fault found by a trial on tokio: `impact Builder::new_multi_thread --hard` said nothing
/// depends on it while `callers` found 93 sites: a member written on a type's name was
/// never stated, even where an import of the file binds that name to the file defining
/// the type. Such a member (`Store.open()` after `from pkg.store import Store`, Rust
/// `Builder::new_multi_thread()` after `use crate::rt::builder::Builder;` or written
/// `crate::rt::builder::Builder::new_multi_thread()`) is stated, 1.0, and `--hard`
/// follows it; through a re-export (`use crate::rt::Builder;`) it stays derived.
#[test]
fn fault_hard_impact_left_out_calls_on_a_type_an_import_binds() {
    let (dir, _) = confidences();
    let root = dir.path();
    write(
        root,
        "src/lib.rs",
        "mod rt;\nmod app;\nmod other;\nmod reexp;\n",
    );
    write(
        root,
        "src/rt/mod.rs",
        "mod builder;\npub use builder::Builder;\n",
    );
    write(
        root,
        "src/rt/builder.rs",
        "pub struct Builder;\n\nimpl Builder {\n    pub fn new_multi_thread() -> Builder {\n        Builder\n    }\n}\n",
    );
    write(
        root,
        "src/app.rs",
        "use crate::rt::builder::Builder;\n\npub fn main() {\n    Builder::new_multi_thread();\n}\n",
    );
    write(
        root,
        "src/other.rs",
        "pub fn other() {\n    crate::rt::builder::Builder::new_multi_thread();\n}\n",
    );
    write(
        root,
        "src/reexp.rs",
        "use crate::rt::Builder;\n\npub fn reexp() {\n    Builder::new_multi_thread();\n}\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let calls = |name: &str| -> Vec<String> {
        ws.callers_with(name, 0, 0.0, true)
            .unwrap()
            .result
            .calls
            .into_iter()
            .map(|c| {
                format!(
                    "{}:{} {} {:.1}",
                    c.path,
                    c.line + 1,
                    c.provenance,
                    c.confidence
                )
            })
            .collect()
    };
    assert_eq!(
        calls("Builder::new_multi_thread"),
        [
            "src/app.rs:4 stated 1.0",
            "src/other.rs:2 stated 1.0",
            "src/reexp.rs:4 derived 0.7",
        ]
    );
    assert_eq!(calls("Store.open"), ["pkg/b_import.py:5 stated 1.0"]);
    assert_eq!(
        impact_rows(&ws, "Builder::new_multi_thread", 1, true),
        [
            "src/app.rs#main@function 1 call -> src/rt/builder.rs#Builder.new_multi_thread@method at src/app.rs:4 stated 1.0",
            "src/other.rs#other@function 1 call -> src/rt/builder.rs#Builder.new_multi_thread@method at src/other.rs:2 stated 1.0",
        ]
    );
    assert_eq!(
        impact_rows(&ws, "Store.open", 1, true),
        [
            "pkg/b_import.py#make@function 1 call -> pkg/store.py#Store.open@method at pkg/b_import.py:5 stated 1.0"
        ]
    );
}

/// Fault from two fresh-user trials: `impact reprlib` said "no file or symbol named
/// reprlib", `impact json.decoder` too, and `impact bisect` answered for the alias
/// `bisect = bisect_right` instead of the module its importers use; `symbol
/// nix::unistd::fork` found nothing, and the error named `nix.unistd.fork`, a spelling the
/// user never wrote; `impact subprocess` and `impact copy` (a second `subprocess.py` in
/// `asyncio/`, a `copy.decTest` data file) answered for methods of that name. A module
/// named as code imports it is its source file at that path from the root (a Rust crate's
/// modules under its `src/`), else the only one, before a definition of that name;
/// generic arguments name nothing.
#[test]
fn fault_a_module_named_as_code_imports_it_was_no_target() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- reprlib.py
class Repr:
    pass
//- pydoc.py
import reprlib
import bisect
from json import decoder
//- bisect.py
def bisect_right(a, x):
    return 0

bisect = bisect_right
//- heapq.py
from bisect import bisect
//- subprocess.py
def run():
    pass
//- asyncio/__init__.py
//- asyncio/subprocess.py
import subprocess
//- asyncio/events.py
from . import subprocess
//- copy.py
def deepcopy(x):
    return x
//- data/copy.decTest
copy0 copy 0 -> 0
//- shutil.py
import copy
//- json/__init__.py
from .decoder import JSONDecoder
//- json/decoder.py
class JSONDecoder:
    pass
//- nix/src/lib.rs
pub mod unistd;
//- nix/src/unistd.rs
pub fn fork() -> i32 {
    0
}
//- slab/src/lib.rs
pub struct Slab<T>(Vec<T>);
impl<T> Slab<T> {
    pub fn insert(&mut self, v: T) {
        self.0.push(v)
    }
}
"#,
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let dependents = |target: &str| -> Vec<String> {
        let impact = ws.impact(target, 1, false).unwrap().result;
        impact.nodes.iter().map(|n| n.id.clone()).collect()
    };
    assert_eq!(dependents("reprlib"), ["pydoc.py"]);
    assert_eq!(dependents("bisect"), ["heapq.py", "pydoc.py"]);
    assert_eq!(dependents("json.decoder"), ["json/__init__.py", "pydoc.py"]);
    assert_eq!(dependents("nix::unistd"), ["nix/src/lib.rs"]);
    // The module at that very path before one deeper of the same name, and only a source
    // file: `copy.decTest` is no module.
    assert_eq!(dependents("subprocess"), ["asyncio/subprocess.py"]);
    assert_eq!(dependents("copy"), ["shutil.py"]);
    let keys = |name: &str| -> Vec<String> {
        let hits = ws.symbol(name, LIST_LIMIT).unwrap().result;
        hits.iter().map(|h| h.key.clone()).collect()
    };
    assert_eq!(
        keys("nix::unistd::fork"),
        ["nix/src/unistd.rs#fork@function"]
    );
    assert_eq!(
        keys("Slab<T>::insert"),
        ["slab/src/lib.rs#Slab.insert@method"]
    );
    let missing = ws.symbol("nix::unistd::spawn", LIST_LIMIT).unwrap();
    assert!(
        missing
            .capability
            .notes
            .iter()
            .any(|n| n.starts_with("no symbol named `nix::unistd::spawn` in the map")),
        "{:?}",
        missing.capability.notes
    );
}

/// Fault from a fresh-user trial: `impact prodash/src/throughput.rs` listed `lib.rs` alone,
/// while five files use its `Throughput` through lib.rs's `pub use
/// crate::throughput::Throughput;` (and `Throughput` had a namesake elsewhere, so no
/// guess settled it): a name a file imports from a module that itself imports it is the
/// re-exported definition, stated, as for a package's `__init__.py`.
#[test]
fn fault_a_name_imported_through_a_re_export_was_unresolved() {
    let (_dir, ws) = scanned(
        r#"
//- prodash/src/lib.rs
mod throughput;
pub mod render;
pub mod unit;
pub use crate::throughput::Throughput;
//- prodash/src/throughput.rs
pub struct Throughput;
//- prodash/src/unit.rs
pub struct Throughput;
//- prodash/src/render.rs
use crate::Throughput;

pub fn draw(t: &Throughput) {}
//- pkg/__init__.py
from .decoder import JSONDecoder
//- pkg/decoder.py
class JSONDecoder:
    pass
//- other/decoder.py
class JSONDecoder:
    pass
//- app.py
from pkg import JSONDecoder

def load():
    return JSONDecoder()
"#,
    );
    assert_eq!(
        direct_dependents(&ws, "prodash/src/throughput.rs"),
        [
            "prodash/src/lib.rs (stated)",
            "prodash/src/render.rs (stated)"
        ]
    );
    assert_eq!(
        direct_dependents(&ws, "pkg/decoder.py"),
        ["app.py (stated)", "pkg/__init__.py (stated)"]
    );
}

/// Fault from a break-test: `callers unittest.TestCase`, `unittest.main` and `asyncio.run`
/// missed every `unittest.TestCase` written after `import unittest`: the package's
/// `__init__.py` defines none of them, it re-exports them (`from .case import TestCase`,
/// `from .runners import *`), and a namesake elsewhere kept the one-definition guess
/// from settling it. A name on an imported package is what that package re-exports, in
/// the map and as a symbol named the way code writes it.
#[test]
fn fault_a_name_on_a_package_that_re_exports_it_was_unresolved() {
    let (_dir, ws) = scanned(
        r#"
//- unittest/__init__.py
from .case import TestCase
from .main import main
//- unittest/case.py
class TestCase:
    pass
//- unittest/main.py
def main():
    pass
//- asyncio/__init__.py
from .runners import *
//- asyncio/runners.py
def run(main):
    pass
//- other/case.py
class TestCase:
    pass
def main():
    pass
def run(x):
    pass
//- test_app.py
import asyncio
import unittest

class T(unittest.TestCase):
    def test_it(self):
        asyncio.run(None)

if __name__ == "__main__":
    unittest.main()
//- tk/Cargo.toml
[package]
name = "tk"
version = "0.1.0"
//- tk/src/lib.rs
pub mod task;
pub use task::spawn;
//- tk/src/task/mod.rs
mod spawn;
pub use spawn::spawn;
mod yield_now;
pub use yield_now::yield_now;
//- tk/src/task/spawn.rs
pub fn spawn() {}
//- tk/src/task/yield_now.rs
pub async fn yield_now() {}
"#,
    );
    let callers = |symbol: &str| calls(&ws, symbol, loci_engine::map::MIN_CONFIDENCE);
    assert_eq!(callers("unittest.main"), ["test_app.py:9 (0.70)"]);
    assert_eq!(callers("asyncio.run"), ["test_app.py:6 (0.70)"]);
    let keys = |name: &str| -> Vec<String> {
        let hits = ws.symbol(name, 0).unwrap().result;
        hits.into_iter().map(|h| h.key).collect()
    };
    assert_eq!(
        keys("unittest.TestCase"),
        ["unittest/case.py#TestCase@class"]
    );
    assert_eq!(keys("tk::spawn"), ["tk/src/task/spawn.rs#spawn@function"]);
    // The module `task/mod.rs` declares, and the function it re-exports.
    assert_eq!(
        keys("tk::task::yield_now"),
        [
            "tk/src/task/mod.rs#yield_now@module",
            "tk/src/task/yield_now.rs#yield_now@function"
        ]
    );
    assert_eq!(
        direct_dependents(&ws, "unittest/case.py"),
        ["unittest/__init__.py (stated)", "test_app.py (derived)"]
    );
}

/// Fault from a break-test: `impact protobuf/src/message.rs` missed every file writing
/// `impl crate::Message for T` or `&dyn crate::Message`: a type written as a path was read
/// as a bare name, which a Rust file must import, and a trait object was no reference at
/// all. The path is the reference's receiver, followed through the crate's module tree.
#[test]
fn fault_a_rust_type_written_as_a_crate_path_was_no_reference() {
    let (_dir, ws) = scanned(
        r#"
//- pb/Cargo.toml
[package]
name = "pb"
version = "0.1.0"
//- pb/src/lib.rs
mod impls;
mod message;
mod view;
pub use crate::message::Message;
//- pb/src/message.rs
pub trait Message {
    fn size(&self) -> usize;
}
//- pb/src/impls.rs
pub struct A;
impl crate::Message for A {
    fn size(&self) -> usize { 0 }
}
//- pb/src/view.rs
pub fn total(items: Vec<Box<dyn crate::Message>>, one: &crate::message::Message) -> usize {
    items.len()
}
//- other/src/message.rs
pub trait Message {}
"#,
    );
    assert_eq!(
        direct_dependents(&ws, "pb/src/message.rs"),
        [
            "pb/src/lib.rs (stated)",
            "pb/src/view.rs (stated)",
            "pb/src/impls.rs (derived)",
        ]
    );
    let refs: Vec<String> = ws
        .refs("pb/src/message.rs#Message@trait", 0)
        .unwrap()
        .result
        .iter()
        .map(|r| format!("{}:{} {}", r.path, r.line + 1, r.kind))
        .collect();
    assert_eq!(
        refs,
        [
            "pb/src/impls.rs:2 inherit",
            "pb/src/lib.rs:4 import",
            "pb/src/view.rs:1 type",
            "pb/src/view.rs:1 type",
        ]
    );
}

/// Fault from a break-test: `import queue as pyqueue` (or `from test.test_asyncio import
/// utils as test_utils`) then `pyqueue.Queue()` was a call on a value of unknown type, a guess by name below the default confidence, so `callers
/// queue.Queue` missed it: a module imported under an alias is that module.
#[test]
fn fault_a_call_on_a_module_imported_under_an_alias_was_a_guess() {
    let (_dir, ws) = scanned(
        r#"
//- pkg/__init__.py
//- pkg/jobs.py
class Queue:
    pass

def make():
    pass
//- other/jobs.py
class Queue:
    pass

def make():
    pass

def deque():
    pass
//- main.py
import collections as co
import pkg.jobs as pj
from pkg import jobs as pkg_jobs

def run():
    q = pj.Queue()
    co.deque()
    pkg_jobs.make()
    return pj.make()
"#,
    );
    let callers = |symbol: &str| calls(&ws, symbol, loci_engine::map::MIN_CONFIDENCE);
    // `from pkg import jobs as pkg_jobs` too.
    assert_eq!(
        callers("pkg.jobs.make"),
        ["main.py:8 (0.70)", "main.py:9 (0.70)"]
    );
    assert_eq!(callers("pkg.jobs.Queue"), ["main.py:6 (0.70)"]);
    // `co` is the standard library's `collections`, outside the map.
    assert_eq!(callers("other.jobs.deque"), Vec::<String>::new());
    assert_eq!(callers("other.jobs.make"), Vec::<String>::new());
}

/// Fault from a fresh-user trial: `callers bz2.open` listed 88 calls, nearly all the
/// builtin `open(..)` in files that `import bz2` (`fileinput.py`, `shutil.py`): a bare name
/// was taken for a definition in any imported file. In Python and Rust an import binds
/// what it names: a bare name is another file's only through that import or a glob.
#[test]
fn fault_a_bare_builtin_call_was_an_imported_modules_function() {
    let (_dir, ws) = scanned(
        r#"
//- bz2.py
def open(filename, mode="rb"):
    pass
//- helpers.py
def helper():
    pass
//- fileinput.py
import bz2
from helpers import *

def hook(filename, mode):
    helper()
    if filename.endswith(".bz2"):
        return bz2.open(filename, mode)
    return open(filename, mode)
//- app/src/lib.rs
mod util;
mod glob;
use crate::util::Thing;
use crate::glob::*;
fn f(t: Thing) {
    helper();
    shared();
}
//- app/src/util.rs
pub struct Thing;
pub fn helper() {}
//- app/src/glob.rs
pub fn shared() {}
"#,
    );
    let callers = |symbol: &str| calls(&ws, symbol, 0.0);
    assert_eq!(callers("bz2.open"), ["fileinput.py:7 (0.70)"]);
    assert_eq!(callers("helpers.helper"), ["fileinput.py:5 (0.70)"]);
    assert_eq!(
        callers("app/src/util.rs#helper@function"),
        Vec::<String>::new()
    );
    assert_eq!(callers("shared"), ["app/src/lib.rs:7 (0.70)"]);
}

/// Fault from a fresh-user trial: `outline oneshot.rs` listed `Inner`'s methods under
/// `function channel` and `Receiver`'s under `struct Canceled`: an `impl` block's methods
/// have no parent symbol, so they followed whatever item came before. A member whose
/// owner is not the entry above it is named by its qualified name.
#[test]
fn fault_an_outline_listed_impl_methods_under_the_item_before() {
    let (_dir, ws) = scanned(
        r#"
//- src/lib.rs
struct Inner;
pub fn channel() {}
impl Inner {
    fn new() -> Self { Inner }
}
//- app.py
class Store:
    def get(self):
        pass
"#,
    );
    let shown = |path: &str| {
        let outline = ws.outline(path, 0).unwrap().result;
        loci_engine::text::to_string(|o| loci_engine::text::outline(o, &outline))
    };
    assert_eq!(
        shown("src/lib.rs"),
        "src/lib.rs (rust, 3 definitions)\n  \
         1: struct Inner  struct Inner;\n  \
         2: function channel  pub fn channel() {}\n    \
         4: method Inner.new  fn new() -> Self { Inner }\n"
    );
    assert_eq!(
        shown("app.py"),
        "app.py (python, 2 definitions)\n  \
         1: class Store  class Store:\n    \
         2: method get  def get(self):\n"
    );
}

/// Fault from a fresh-user trial: `refs tty` said only "no references", though `pty.py`
/// imports `tty`: a module's uses are its imports, which the map keeps as dependencies.
/// The answer says so and how to list them.
#[test]
fn fault_refs_of_a_module_said_only_no_references() {
    let (_dir, ws) = scanned(
        r#"
//- tty.py
def setraw(fd):
    pass
//- pty.py
import tty
"#,
    );
    let answer = ws.refs("tty", 0).unwrap();
    assert!(answer.result.is_empty());
    assert!(
        answer.capability.notes.contains(
            &"no references to `tty`: it is the module `tty.py`, whose importers are dependencies (`loci impact tty --depth 1` lists them)".to_string()
        ),
        "{:?}",
        answer.capability.notes
    );
}

/// Faults from break-tests: `crossbeam_channel::Sender` and `same_file::Handle` (a crate
/// named as Rust code names it, its package folder spelled with `-`),
/// `crate::byte_str::ByteStr`, `crate::Row`, `select!`, `rmcp::object!` (a
/// `#[macro_export]` macro outside `lib.rs`; `object!` named the function `object` too),
/// `<HeaderMap as Clone>::clone`
/// (every `clone` of the map) named nothing or too much; `impact is_same_file` took the example program of that name for the function;
/// `deps json.decoder` and `outline json.decoder` refused the module `impact` took, and
/// `outline json` called the package a folder.
#[test]
fn fault_names_written_as_rust_and_python_code_spells_them_named_nothing_or_too_much() {
    let (_dir, ws) = scanned(
        r#"
//- same-file/Cargo.toml
[package]
name = "same-file"
version = "0.1.0"
//- same-file/src/lib.rs
mod unix;
pub use crate::unix::Handle;
pub fn is_same_file() -> bool { Handle::from_path() == Handle::from_path() }
#[macro_export]
macro_rules! select { () => {} }
pub struct HeaderMap;
impl Clone for HeaderMap { fn clone(&self) -> Self { HeaderMap } }
pub struct Other;
impl Clone for Other { fn clone(&self) -> Self { Other } }
pub fn object() {}
//- same-file/src/unix.rs
#[macro_export]
macro_rules! object { () => {} }
#[derive(PartialEq)]
pub struct Handle;
impl Handle { pub fn from_path() -> Handle { Handle } }
//- same-file/examples/is_same_file.rs
fn main() { same_file::is_same_file(); }
//- json/__init__.py
from .decoder import JSONDecoder
//- json/decoder.py
class JSONDecoder: pass
"#,
    );
    let keys = |name: &str| -> Vec<String> {
        let hits = ws.symbol(name, 0).unwrap().result;
        hits.into_iter().map(|h| h.key).collect()
    };
    assert_eq!(
        keys("same_file::Handle"),
        ["same-file/src/unix.rs#Handle@struct"]
    );
    assert_eq!(
        keys("same-file::Handle"),
        ["same-file/src/unix.rs#Handle@struct"]
    );
    assert_eq!(
        keys("crate::unix::Handle::from_path"),
        ["same-file/src/unix.rs#Handle.from_path@method"]
    );
    assert_eq!(keys("select!"), ["same-file/src/lib.rs#select@macro"]);
    // Invoked as a macro, a name is only the macro; a `#[macro_export]` one is at the
    // crate's root wherever its file is.
    assert_eq!(keys("object!"), ["same-file/src/unix.rs#object@macro"]);
    assert_eq!(
        keys("same_file::object!"),
        ["same-file/src/unix.rs#object@macro"]
    );
    assert_eq!(
        keys("crate::Handle"),
        ["same-file/src/unix.rs#Handle@struct"]
    );
    assert_eq!(
        keys("<HeaderMap as Clone>::clone"),
        ["same-file/src/lib.rs#HeaderMap.clone@method"]
    );
    let impact = ws.impact("is_same_file", 1, false).unwrap().result;
    assert_eq!(
        impact.target,
        ["same-file/src/lib.rs#is_same_file@function"]
    );
    // A name of several definitions says their dependents are merged.
    let merged = ws.impact("clone", 1, false).unwrap();
    assert_eq!(
        merged.capability.notes.last().map(String::as_str),
        Some(
            "`clone` names 2 definitions, whose dependents are listed together: name one by \
             its key (`same-file/src/lib.rs#HeaderMap.clone@method`) for its own"
        )
    );
    let deps = ws.deps("json.decoder", true).unwrap().result;
    assert_eq!(deps.path, "json/decoder.py");
    assert_eq!(
        deps.edges
            .iter()
            .map(|e| e.from.as_str())
            .collect::<Vec<_>>(),
        ["json/__init__.py"]
    );
    assert_eq!(
        ws.outline("json.decoder", 0).unwrap().result.path,
        "json/decoder.py"
    );
    // A package is its own file.
    assert_eq!(
        ws.outline("json", 0).unwrap().result.path,
        "json/__init__.py"
    );
}

/// A macro invocation (`select!()`, `crate::select!()`) was a call, resolved to the
/// function of its name: tokio's 311 `assert_pending!()` (a macro of the `tokio-test`
/// crate) all went to a test's `fn assert_pending`, and `tokio::select!` was a 0.5
/// guess between the two `#[cfg]` variants of the one macro. A macro invocation names a macro,
/// a call a function (`tracing::trace()` no macro); a macro imported by name (`use
/// tracing::trace;`, also under an alias) or by a glob is the one its crate exports, not
/// another crate's namesake.
#[test]
fn fault_a_macro_invocation_went_to_the_function_of_its_name() {
    let (_dir, ws) = scanned(
        r#"
//- app/Cargo.toml
[package]
name = "app"
//- app/src/lib.rs
mod flavors;
mod macros;
mod user;
//- app/src/flavors.rs
pub fn select() {}
pub fn assert_pending() {}
//- app/src/macros.rs
#[cfg(doc)]
#[macro_export]
macro_rules! select { () => {} }
#[cfg(not(doc))]
#[macro_export]
macro_rules! select { ($x:expr) => {} }
macro_rules! trace { () => {} }
//- app/src/user.rs
use tracing::trace;
fn run() {
    select!();
    crate::flavors::select();
    crate::select!();
    assert_pending!();
    trace!();
    tracing::trace();
    span.trace();
}
pub fn trace() {}
//- app/src/glob.rs
use tracing::*;
fn g() { trace!(); }
//- app/src/renamed.rs
use tracing::trace as ttrace;
fn r() { ttrace!(); }
//- tracing/Cargo.toml
[package]
name = "tracing"
//- tracing/src/lib.rs
#[macro_use]
mod macros;
//- tracing/src/macros.rs
#[macro_export]
macro_rules! trace { () => {} }
"#,
    );
    assert_eq!(
        calls(&ws, "select!", 0.0),
        ["app/src/user.rs:3 (0.70)", "app/src/user.rs:5 (0.70)"]
    );
    assert_eq!(
        calls(&ws, "flavors::select", 0.0),
        ["app/src/user.rs:4 (1.00)"]
    );
    assert!(calls(&ws, "assert_pending", 0.0).is_empty());
    // `tracing::trace()` calls no macro; `app::trace!` is no macro of `tracing`.
    assert_eq!(
        calls(&ws, "tracing::trace!", 0.0),
        [
            "app/src/glob.rs:2 (0.70)",
            "app/src/renamed.rs:2 (0.70)",
            "app/src/user.rs:7 (0.70)"
        ]
    );
    assert!(calls(&ws, "nothing::trace!", 0.0).is_empty());
    // Nor are `span.trace()` calls counted as calls of it on values of unknown type.
    let callers = ws.callers("tracing::trace!", 0).unwrap().result;
    assert_eq!(callers.untyped, 0);
    let refs = ws.refs("tracing::trace!", 0).unwrap();
    assert!(
        refs.capability
            .notes
            .iter()
            .all(|n| !n.contains("unknown type")),
        "{:?}",
        refs.capability.notes
    );
    // `callees` of a name invoked as a macro reads the macro, not the function.
    let sources: Vec<String> = (ws.callees("trace!", 0, 0.0).unwrap().result.sources)
        .into_iter()
        .map(|s| s.key)
        .collect();
    assert_eq!(
        sources,
        [
            "app/src/macros.rs#trace@macro",
            "tracing/src/macros.rs#trace@macro"
        ]
    );
    assert_eq!(
        direct_dependents(&ws, "app/src/macros.rs"),
        ["app/src/lib.rs (stated)", "app/src/user.rs (derived)"]
    );
}

/// `outline util` where two crates have a `util.rs` said "`util` is not in the map".
#[test]
fn fault_a_module_name_two_files_share_was_not_in_the_map() {
    let (_dir, ws) = scanned(
        r#"
//- app/src/util.rs
pub fn a() {}
//- tracing/src/util.rs
pub fn b() {}
//- json/decoder.py
class JSONDecoder: pass
"#,
    );
    assert_eq!(
        ws.outline("util", 0).unwrap_err().to_string(),
        "`util` names several modules: app/src/util.rs, tracing/src/util.rs; give the path of one"
    );
    assert_eq!(
        ws.outline("decoder", 0).unwrap().result.path,
        "json/decoder.py"
    );
    assert_eq!(
        ws.outline("nothing", 0).unwrap_err().to_string(),
        "`nothing` is not in the map (not scanned, ignored, or skipped)"
    );
}

/// Fault from a break-test: `refs ByteStr` on the `http` crate listed 8 of its 36 uses:
/// a type qualifying a path (`ByteStr::from_static(..)`, `crate::byte_str::ByteStr::new`)
/// and a tuple struct's field (`struct Custom(ByteStr)`) were no references to it.
#[test]
fn fault_a_type_qualifying_a_path_or_a_tuple_field_was_no_reference() {
    let (_dir, ws) = scanned(
        r#"
//- src/lib.rs
mod byte_str;
mod name;
//- src/byte_str.rs
pub struct ByteStr;
impl ByteStr {
    pub fn from_static(_: &'static str) -> ByteStr { ByteStr }
    pub fn new() -> ByteStr { ByteStr }
}
//- src/name.rs
use crate::byte_str::ByteStr;
struct Custom(ByteStr);
fn f() {
    let _ = ByteStr::from_static("a");
    let _ = crate::byte_str::ByteStr::new();
    let _ = Self::new();
}
"#,
    );
    let refs: Vec<String> = ws
        .refs("src/byte_str.rs#ByteStr@struct", LIST_LIMIT)
        .unwrap()
        .result
        .iter()
        .map(|r| format!("{}:{} {}", r.path, r.line + 1, r.kind))
        .collect();
    assert_eq!(
        refs,
        [
            "src/byte_str.rs:2 inherit",
            "src/byte_str.rs:3 type",
            "src/byte_str.rs:4 type",
            "src/name.rs:1 import",
            "src/name.rs:2 type",
            "src/name.rs:4 type",
            "src/name.rs:5 type"
        ]
    );
}

/// Fault from a break-test: `callers Method::is_idempotent` on the `http` crate found none
/// of its 10 calls, all written on a constant of the type (`Method::OPTIONS
/// .is_idempotent()`): a constant or variant named on its type is a value of that type.
#[test]
fn fault_a_call_on_a_constant_named_on_its_type_had_no_type() {
    let (_dir, ws) = scanned(
        r#"
//- src/lib.rs
pub struct Method;
impl Method {
    pub const GET: Method = Method;
    pub fn is_idempotent(&self) -> bool { true }
}
pub struct Verb;
impl Verb {
    pub fn is_idempotent(&self) -> bool { false }
}
pub enum Kind { Io }
impl Kind {
    pub fn name(&self) -> &str { "" }
}
pub fn retry() -> bool {
    Method::GET.is_idempotent() && Kind::Io.name().is_empty() && u32::MAX.is_power_of_two()
}
"#,
    );
    assert_eq!(
        calls(&ws, "Method::is_idempotent", 0.5),
        ["src/lib.rs:15 (0.90)"]
    );
    assert_eq!(calls(&ws, "Verb::is_idempotent", 0.0), Vec::<String>::new());
    assert_eq!(calls(&ws, "Kind::name", 0.5), ["src/lib.rs:15 (0.90)"]);
}

/// Fault from a break-test: `impact same-file/src/lib.rs` listed the two examples, not
/// `unix.rs`, which writes `impl AsRawFd for crate::Handle`: the type a trait is
/// implemented for was no reference, only the trait.
#[test]
fn fault_the_type_a_trait_is_implemented_for_was_no_reference() {
    let (_dir, ws) = scanned(
        r#"
//- src/lib.rs
mod unix;
pub struct Handle;
//- src/unix.rs
pub trait AsRawFd {}
impl AsRawFd for crate::Handle {}
"#,
    );
    assert_eq!(
        direct_dependents(&ws, "src/lib.rs"),
        ["src/unix.rs (stated)"]
    );
}

#[test]
fn fault_an_import_inside_a_definition_bound_its_name_in_the_whole_file() {
    let (_dir, ws) = scanned(
        r#"
//- app/Cargo.toml
[package]
name = "app"
//- app/src/lib.rs
mod a;
mod b;
mod user;
//- app/src/a.rs
pub fn info() {}
//- app/src/b.rs
pub fn info() {}
//- app/src/user.rs
fn one() {
    use crate::a::info;
    info();
}
fn two() {
    use crate::b::info;
    info();
}
mod tests {
    use crate::b::info;
    fn t() {
        info();
    }
}
//- pkg/__init__.py
//- pkg/a.py
def loads(): pass
//- pkg/b.py
def loads(): pass
//- pkg/user.py
def one():
    from .a import loads
    return loads()
def two():
    from .b import loads
    return loads()
"#,
    );
    // Each `info()` is the one its own scope's `use` names; before, every one was the
    // first import of the file that bound `info`.
    assert_eq!(
        calls(&ws, "app/src/a.rs#info@function", 0.0),
        ["app/src/user.rs:3 (1.00)"]
    );
    assert_eq!(
        calls(&ws, "app/src/b.rs#info@function", 0.0),
        ["app/src/user.rs:7 (1.00)", "app/src/user.rs:12 (1.00)"]
    );
    assert_eq!(
        calls(&ws, "pkg/a.py#loads@function", 0.0),
        ["pkg/user.py:3 (1.00)"]
    );
    assert_eq!(
        calls(&ws, "pkg/b.py#loads@function", 0.0),
        ["pkg/user.py:6 (1.00)"]
    );
}

#[test]
fn fault_another_crates_macro_made_a_crates_own_macro_ambiguous() {
    let (_dir, ws) = scanned(
        r#"
//- clap/Cargo.toml
[package]
name = "clap"
//- clap/src/lib.rs
#[macro_use]
mod macros;
mod help;
//- clap/src/macros.rs
macro_rules! debug { () => {} }
//- clap/src/help.rs
fn write() { debug!(); trace!(); }
//- clap/src/quiet.rs
fn q() {
    macro_rules! trace { () => {} }
    trace!();
}
//- tracing/Cargo.toml
[package]
name = "tracing"
//- tracing/src/lib.rs
#[macro_export]
macro_rules! debug { () => {} }
//- mail/charset.py
class Charset:
    def get_body_encoding(self): pass
//- mail/test.py
from mail.charset import Charset
def a():
    from mail import charset as module
def b():
    charset = Charset()
    return charset.get_body_encoding()
"#,
    );
    // `debug!` in clap is clap's own `macro_rules!` (in scope by its text), whatever
    // another crate of the map exports under that name.
    assert_eq!(
        calls(&ws, "clap/src/macros.rs#debug@macro", 0.0),
        ["clap/src/help.rs:1 (0.70)"]
    );
    assert!(calls(&ws, "tracing/src/lib.rs#debug@macro", 0.0).is_empty());
    // A `macro_rules!` written in a function is that function's only.
    assert_eq!(
        calls(&ws, "clap/src/quiet.rs#q.trace@macro", 0.0),
        ["clap/src/quiet.rs:3 (0.90)"]
    );
    // `charset` in `b` is a local value: `a`'s import of a module of that name binds
    // nothing there.
    assert_eq!(
        calls(&ws, "mail/charset.py#Charset.get_body_encoding@method", 0.0),
        ["mail/test.py:6 (0.30)"]
    );
}

#[test]
fn an_import_in_a_function_still_reexports_and_types_the_values_made_there() {
    let (_dir, ws) = scanned(
        r#"
//- lazy/__init__.py
def __getattr__(name):
    from .pool import Pool
    return Pool
//- lazy/pool.py
class Base:
    def close(self): pass
class Pool(Base):
    def submit(self): pass
//- user.py
from lazy import Pool
def run():
    return Pool()
//- app.py
import unittest
class T(unittest.TestCase):
    def setUp(self):
        from lazy.pool import Pool
        self.pool = Pool()
    def test_submit(self):
        self.pool.submit()
        self.pool.close()
"#,
    );
    // `lazy`'s `__getattr__` re-exports `Pool` through an import in a function.
    assert_eq!(
        calls(&ws, "lazy/pool.py#Pool@class", 0.0),
        ["app.py:5 (1.00)", "user.py:3 (1.00)"]
    );
    // `self.pool` is made in `setUp`, whose import binds `Pool`: its type is that `Pool`.
    assert_eq!(
        calls(&ws, "lazy/pool.py#Pool.submit@method", 0.0),
        ["app.py:7 (0.80)"]
    );
    assert_eq!(
        calls(&ws, "lazy/pool.py#Base.close@method", 0.0),
        ["app.py:8 (0.90)"]
    );
}

/// `callers --no-tests`: the calls written in test, example and vendored code (a Rust
/// `mod tests` in a file of code too) are counted in `secondary_left_out`, neither listed
/// nor counted in the limits, the weaker calls or the calls on values of unknown type (`textwrap.dedent` on the stdlib: 7 of its 575
/// calls are outside tests).
#[test]
fn callers_without_tests_count_the_calls_left_out() {
    let (_dir, ws) = scanned(
        r#"
//- src/core.rs
pub struct Parser;
impl Parser {
    pub fn parse(&self) {}
}
//- src/other.rs
pub struct Other;
impl Other {
    pub fn parse(&self) {}
}
//- src/app.rs
use crate::core::Parser;
pub fn run() {
    make().parse();
    Parser.parse();
}
#[cfg(test)]
mod tests {
    use crate::core::Parser;
    fn parses() {
        Parser.parse();
    }
}
//- tests/core.rs
use app::core::Parser;
fn parses() {
    make().parse();
    Parser.parse();
    Parser.parse();
}
"#,
    );
    let callers = |tests: bool| {
        let c = ws.callers_with("Parser.parse", 0, 0.5, tests).unwrap();
        let listed: Vec<(String, u32)> = c
            .result
            .calls
            .iter()
            .map(|r| (r.path.clone(), r.line + 1))
            .collect();
        (
            listed,
            c.limits.omitted,
            c.result.weaker,
            c.result.untyped,
            c.result.secondary_left_out,
        )
    };
    assert_eq!(
        callers(true),
        (
            vec![
                ("src/app.rs".to_string(), 4),
                ("src/app.rs".into(), 10),
                ("tests/core.rs".into(), 4),
                ("tests/core.rs".into(), 5)
            ],
            0,
            1,
            1,
            0
        )
    );
    assert_eq!(
        callers(false),
        (vec![("src/app.rs".to_string(), 4)], 0, 1, 0, 3)
    );
    let one = ws.callers_with("Parser.parse", 1, 0.5, false).unwrap();
    assert_eq!(
        (one.result.calls.len(), one.limits.omitted),
        (1, 0),
        "the limit counts the calls outside tests only"
    );
}

/// `impact` without tests: the test suite's helpers import the code, every test imports
/// them, and a walk through them listed the whole suite (865 of the stdlib's files for
/// `urllib/parse.py`, 104 without). Such files are counted, neither listed nor walked
/// through, for a file and for a symbol.
#[test]
fn impact_without_tests_neither_lists_nor_walks_through_test_code() {
    let (_dir, ws) = scanned(
        r#"
//- pkg/core.py
def parse(x):
    return x
//- pkg/app.py
from pkg.core import parse

def run():
    return parse(1)
//- pkg/cli.py
from pkg.app import run

def main():
    return run()
//- tests/helpers.py
from pkg.core import parse

def check():
    return parse(2)
//- tests/test_app.py
from tests.helpers import check

def test_run():
    check()
"#,
    );
    let impact = |target: &str, tests: bool| {
        let edges = Edges {
            tests,
            ..Edges::default()
        };
        let env = ws.impact_with(target, 3, edges, 0).unwrap();
        let listed: Vec<String> = env.result.nodes.iter().map(|n| n.id.clone()).collect();
        (listed, env.result.dependents, env.result.secondary_left_out)
    };
    assert_eq!(
        impact("pkg/core.py", true),
        (
            vec![
                "pkg/app.py".to_string(),
                "tests/helpers.py".into(),
                "pkg/cli.py".into(),
                "tests/test_app.py".into()
            ],
            4,
            0
        )
    );
    assert_eq!(
        impact("pkg/core.py", false),
        (vec!["pkg/app.py".to_string(), "pkg/cli.py".into()], 2, 1)
    );
    let env = ws
        .impact_with(
            "pkg/core.py",
            3,
            Edges {
                tests: false,
                ..Edges::default()
            },
            0,
        )
        .unwrap();
    assert_eq!(
        loci_engine::text::to_string(|o| loci_engine::text::impact(o, &env)),
        "impact of pkg/core.py (depth 3, edges at confidence 0.50 or more): 2 dependent files\n  \
         pkg/app.py  <- import at pkg/app.py:1 (stated, 1.00)\n    \
         pkg/cli.py  <- import at pkg/cli.py:1 (stated, 1.00)\n\
         1 dependent in tests, examples or vendored code left out (`--no-tests`), not walked through\n"
    );
    // A symbol: `parse`'s callers and what reaches them, without the test helper (its
    // import and `check`) and the test calling it.
    assert_eq!(
        impact("parse", false),
        (
            vec![
                "pkg/app.py".to_string(),
                "pkg/app.py#run@function".into(),
                "pkg/cli.py".into(),
                "pkg/cli.py#main@function".into()
            ],
            4,
            2
        )
    );
    assert_eq!(
        impact("parse", true),
        (
            vec![
                "pkg/app.py".to_string(),
                "pkg/app.py#run@function".into(),
                "tests/helpers.py".into(),
                "tests/helpers.py#check@function".into(),
                "pkg/cli.py".into(),
                "pkg/cli.py#main@function".into(),
                "tests/test_app.py".into(),
                "tests/test_app.py#test_run@function".into()
            ],
            8,
            0
        )
    );
}

/// `impact --no-tests` of a Rust function: the calls and `use` lines in a `mod tests` of a
/// file of code are test code as a file of tests is (the walk had listed `tests.parses`
/// and walked on from it, and listed the module for its `use`).
#[test]
fn fault_impact_without_tests_walked_a_rust_test_module_in_a_file_of_code() {
    let (_dir, ws) = scanned(
        r#"
//- src/core.rs
pub fn parse() {}
//- src/app.rs
use crate::core::parse;
pub fn run() {
    parse();
}
#[cfg(test)]
mod tests {
    use crate::core::parse;
    fn parses() {
        parse();
    }
    fn runs() {
        parses();
    }
}
"#,
    );
    let impact = |tests: bool| {
        let edges = Edges {
            tests,
            ..Edges::default()
        };
        let env = ws.impact_with("parse", 3, edges, 0).unwrap();
        let listed: Vec<String> = env.result.nodes.iter().map(|n| n.id.clone()).collect();
        (listed, env.result.secondary_left_out)
    };
    assert_eq!(
        impact(true),
        (
            vec![
                "src/app.rs".to_string(),
                "src/app.rs#run@function".into(),
                "src/app.rs#tests.parses@function".into(),
                "src/app.rs#tests@module".into(),
                "src/app.rs#tests.runs@function".into()
            ],
            0
        )
    );
    assert_eq!(
        impact(false),
        (
            vec!["src/app.rs".to_string(), "src/app.rs#run@function".into()],
            2
        )
    );
}

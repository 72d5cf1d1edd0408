//! Long reads stop when their [`CancelFlag`] is raised (the MCP server cancels a
//! call when its client cancels it or goes away) and run again once another is set.

use loci_engine::context::{ContextRequest, SearchOptions};
use loci_engine::{CancelFlag, EngineError, Workspace};

use crate::fixture::write;

#[test]
fn search_context_and_impact_stop_once_the_flag_is_raised() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a.py", "def parse_line(text):\n    return text\n");
    write(
        root,
        "b.py",
        "from a import parse_line\n\ndef run():\n    return parse_line('x')\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let question = ContextRequest {
        query: "how is a line parsed".into(),
        open_files: Vec::new(),
        budget: None,
        floor: None,
    };
    let outcomes = |ws: &Workspace| {
        [
            ws.search("parse line", &SearchOptions::default())
                .map(|e| e.result.len()),
            ws.context(&question).map(|e| e.result.items.len()),
            ws.impact_limited("parse_line", 3, false, 0)
                .map(|e| e.result.nodes.len()),
        ]
    };
    let flag = CancelFlag::new();
    ws.set_cancel(flag.clone());
    let before = outcomes(&ws);
    assert!(before.iter().all(Result::is_ok), "{before:?}");
    flag.cancel();
    for outcome in outcomes(&ws) {
        assert!(
            matches!(outcome, Err(EngineError::Cancelled)),
            "{outcome:?}"
        );
    }
    ws.set_cancel(CancelFlag::new());
    let after = outcomes(&ws);
    assert_eq!(
        after
            .iter()
            .map(|r| *r.as_ref().unwrap())
            .collect::<Vec<_>>(),
        before
            .iter()
            .map(|r| *r.as_ref().unwrap())
            .collect::<Vec<_>>()
    );
    assert_eq!(EngineError::Cancelled.kind(), "cancelled");
}

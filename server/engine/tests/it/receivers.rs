//! Method calls on values whose type the code makes evident: each project of
//! `fixtures/receivers/` scanned on its own, with the exact callers of its methods, their
//! confidence, and what stayed on values of unknown type.

use std::path::Path;

use loci_engine::Workspace;

/// Copies `fixtures/receivers/<name>` into a fresh folder and scans it.
fn scanned(name: &str) -> (tempfile::TempDir, Workspace) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/receivers")
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    copy(&source, dir.path());
    let root = dir.path();
    let mut ws = Workspace::open(root, Some(&root.join(".loci/test.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

fn copy(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `path:line (confidence)` of every call of `symbol` at the default confidence, one-based
/// lines, in the answer's order; and how many calls of its name stayed on values of
/// unknown type.
fn callers(ws: &Workspace, symbol: &str) -> (Vec<String>, u64) {
    let answer = ws.callers(symbol, 0).unwrap().result;
    let calls = answer
        .calls
        .iter()
        .map(|c| format!("{}:{} ({:.2})", c.path, c.line + 1, c.confidence))
        .collect();
    (calls, answer.untyped)
}

/// Fault: `loci callers Runtime::block_on` on tokio found 0 of its ~440 `.block_on(` sites:
/// a method called on a value was matched by name only. A value bound to a constructor, to
/// a builder chain whose last call declares `io::Result<Runtime>`, to a helper returning
/// `Runtime`, a typed `let`, a typed parameter, a typed struct field and an aliased `use`
/// all make the type evident.
#[test]
fn fault_a_method_called_on_a_rust_value_of_an_evident_type_was_matched_by_name_only() {
    let (_dir, ws) = scanned("rust");
    assert_eq!(
        callers(&ws, "Runtime::block_on"),
        (
            vec![
                // The type's name is bound by the file's `use`: as sure as that binding.
                "src/app.rs:10 (0.80)".to_string(),
                "src/app.rs:20 (0.80)".to_string(),
                "src/app.rs:25 (0.80)".to_string(),
                "src/app.rs:30 (0.80)".to_string(),
                "src/app.rs:30 (0.80)".to_string(),
                "src/app.rs:35 (0.80)".to_string(),
                // Through the alias: the one `Runtime` of the map.
                "src/app.rs:44 (0.70)".to_string(),
            ],
            1
        )
    );
    assert_eq!(
        callers(&ws, "Handle::block_on"),
        (
            vec![
                "src/app.rs:35 (0.80)".to_string(),
                "src/app.rs:39 (0.80)".to_string(),
            ],
            0
        )
    );
    // `Rt::new()` after `use crate::runtime::Runtime as Rt;` is `Runtime::new()`.
    assert_eq!(
        callers(&ws, "Runtime::new"),
        (
            vec![
                "src/app.rs:19 (1.00)".to_string(),
                "src/app.rs:43 (1.00)".to_string()
            ],
            0
        )
    );
    // `rt.block_on(x)` on a value of unknown type: a name match, to `Handle`'s.
    assert_eq!(ws.callers("Handle::block_on", 0).unwrap().result.weaker, 1);
    // `refs` says so too.
    let notes = ws.refs("Runtime::block_on", 0).unwrap().capability.notes;
    assert!(
        notes.contains(
            &"1 call of `.block_on(` on values of unknown type is not listed: no type the \
              code makes evident tied it to a definition"
                .to_string()
        ),
        "{notes:?}"
    );
    // The one call on a value of unknown type is said so, not listed.
    let answer = ws.callers("Runtime::block_on", 0).unwrap().result;
    let text = loci_engine::text::to_string(|o| loci_engine::text::callers(o, &answer));
    assert!(
        text.ends_with(
            "… and 1 call of `.block_on(` on values of unknown type, not listed: no type the \
             code makes evident tied them to a definition\n"
        ),
        "{text}"
    );
}

/// Python: `x = Foo()`, `self.store = Store()` in `__init__`, annotated parameters,
/// `with Store() as store`, an
/// aliased import (`from .models import User as U`) and `super()` through the class's
/// first base.
#[test]
fn fault_a_method_called_on_a_python_value_of_an_evident_type_was_matched_by_name_only() {
    let (_dir, ws) = scanned("python");
    assert_eq!(
        callers(&ws, "Store.get"),
        (
            vec![
                "app/service.py:10 (0.80)".to_string(),
                "app/service.py:20 (0.80)".to_string(),
                "app/service.py:30 (0.80)".to_string(),
            ],
            0
        )
    );
    // `thing.get(1)` is the one name match, below the default confidence.
    assert_eq!(ws.callers("Store.get", 0).unwrap().result.weaker, 1);
    assert_eq!(
        callers(&ws, "User.rename"),
        (
            vec![
                "app/service.py:15 (0.80)".to_string(),
                "app/service.py:20 (0.80)".to_string(),
            ],
            0
        )
    );
    assert_eq!(
        callers(&ws, "User.save"),
        (
            vec![
                "app/service.py:16 (0.80)".to_string(),
                // Through the alias: the one `User` of the map.
                "app/service.py:25 (0.70)".to_string(),
            ],
            0
        )
    );
    assert_eq!(
        callers(&ws, "Model.save"),
        (vec!["app/models.py:8 (0.70)".to_string()], 0)
    );
}

/// Fault: `self.assertEqual(..)` in a `unittest.TestCase` subclass that does not define it
/// went to the one class of its file that did (`PerfPatma.assertEqual`, 586 calls of
/// `test_patma.py`), and `callers TestCase.assertEqual` found 206 of the stdlib's 43,800:
/// a member a class inherits is its bases', followed through their files (Python, Java,
/// TypeScript), before any same-named member of another class.
#[test]
fn fault_self_calls_of_an_inherited_method_went_to_another_class_of_the_file() {
    let (dir, mut ws) = scanned("bases");
    let helper = vec![
        "app/base.py:11 (0.90)".to_string(),
        "app/leaf.py:11 (0.90)".to_string(),
        "app/leaf.py:14 (0.90)".to_string(),
        "app/leaf.py:19 (0.90)".to_string(),
    ];
    assert_eq!(
        callers(&ws, "app/base.py#Base.helper@method"),
        (helper.clone(), 0)
    );
    assert_eq!(callers(&ws, "leaf.Unrelated.helper"), (vec![], 0));
    // `import app.base` binds the package `app`, whose `Root` is a base.
    assert_eq!(
        callers(&ws, "app/__init__.py#Root.root_helper@method"),
        (vec!["app/tested.py:6 (0.70)".to_string()], 0)
    );
    // A class with no bases calling what only other classes define (a base calling its
    // subclasses' override, a mixin): a same-file namesake, as before.
    assert_eq!(
        callers(&ws, "Middle.handle"),
        (vec!["app/base.py:6 (0.90)".to_string()], 0)
    );
    // Java (`this.helper()`, and a bare `helper()` in a method) and TypeScript.
    assert_eq!(
        callers(&ws, "com/acme/Base.java#Base.helper@method"),
        (
            vec![
                "com/acme/Leaf.java:8 (0.90)".to_string(),
                "com/acme/Leaf.java:9 (0.90)".to_string(),
            ],
            0
        )
    );
    assert_eq!(
        callers(&ws, "src/base.ts#Base.helper@method"),
        (vec!["src/leaf.ts:11 (0.90)".to_string()], 0)
    );
    // A rescan of one file resolves from the store, loading the classes and bases its
    // calls go through: the same answer.
    let leaf = dir.path().join("app/leaf.py");
    let text = std::fs::read_to_string(&leaf).unwrap();
    std::fs::write(&leaf, format!("\n{text}")).unwrap();
    ws.scan(&|_| {}).unwrap();
    let moved: Vec<String> = helper
        .iter()
        .map(|c| match c.strip_prefix("app/leaf.py:") {
            Some(rest) => {
                let (line, confidence) = rest.split_once(' ').unwrap();
                format!(
                    "app/leaf.py:{} {confidence}",
                    line.parse::<u32>().unwrap() + 1
                )
            }
            None => c.clone(),
        })
        .collect();
    assert_eq!(callers(&ws, "app/base.py#Base.helper@method"), (moved, 0));
}

/// Go: a method's receiver is the method's own value (`s.flush()` as `self.flush()`),
/// `NewServer()` declares `*Server`, `&Conn{}` is a `Conn`, `s.conn` a typed field.
#[test]
fn fault_a_go_method_receiver_was_a_value_of_unknown_type() {
    let (_dir, ws) = scanned("go");
    assert_eq!(
        callers(&ws, "Server.flush"),
        (vec!["server/server.go:22 (0.90)".to_string()], 0)
    );
    assert_eq!(
        callers(&ws, "Conn.Close"),
        (
            vec![
                "server/server.go:23 (0.70)".to_string(),
                "server/server.go:29 (0.70)".to_string(),
            ],
            0
        )
    );
    assert_eq!(
        callers(&ws, "Server.Close"),
        (vec!["server/server.go:30 (0.70)".to_string()], 0)
    );
}

/// Java and C#: typed locals and parameters, `var x = new T()`, typed fields.
#[test]
fn fault_a_method_called_on_a_java_or_csharp_typed_local_was_matched_by_name_only() {
    let (_dir, ws) = scanned("java");
    assert_eq!(
        callers(&ws, "Repo.find"),
        (
            vec![
                "com/acme/Service.java:7 (0.70)".to_string(),
                "com/acme/Service.java:13 (0.70)".to_string(),
                "com/acme/Service.java:14 (0.70)".to_string(),
                "com/acme/Service.java:18 (0.70)".to_string(),
            ],
            0
        )
    );
    let (_dir, ws) = scanned("csharp");
    assert_eq!(
        callers(&ws, "Cart.Total"),
        (
            vec![
                "Cart.cs:18 (0.70)".to_string(),
                "Cart.cs:18 (0.70)".to_string(),
                "Cart.cs:18 (0.70)".to_string(),
            ],
            0
        )
    );
}

/// TypeScript: `new Db()`, typed parameters, fields set in the constructor or declared
/// as parameter properties, a function's declared return type.
#[test]
fn fault_a_method_called_on_a_typescript_typed_value_was_matched_by_name_only() {
    let (_dir, ws) = scanned("typescript");
    assert_eq!(
        callers(&ws, "Db.query"),
        (
            vec![
                "src/repo.ts:11 (0.80)".to_string(),
                "src/repo.ts:12 (0.80)".to_string(),
                "src/repo.ts:19 (0.80)".to_string(),
                "src/repo.ts:20 (0.80)".to_string(),
                "src/repo.ts:21 (0.80)".to_string(),
            ],
            0
        )
    );
}

/// `super.m()` in Java, TypeScript and JavaScript (C#'s `base.M()`) is the `m` of the
/// class's base (through the base's own base where it does not define `m`): it had been a
/// value of unknown type (Java: unresolved; the others: a name matched at 0.3). A Java
/// class's base is the one of its package (its folder) unless an import names another,
/// and a namesake class elsewhere defining the member is not it (a fresh-user trial).
#[test]
fn fault_super_in_java_and_typescript_was_a_value_of_unknown_type() {
    let (_dir, ws) = scanned("super");
    assert_eq!(
        callers(&ws, "Base.draw"),
        (vec!["java/Child.java:5 (0.90)".to_string()], 0)
    );
    assert_eq!(
        callers(&ws, "Widget.render"),
        (vec!["ts/button.ts:5 (0.80)".to_string()], 0)
    );
    assert_eq!(
        callers(&ws, "Shape.area"),
        (vec!["js/square.js:5 (0.80)".to_string()], 0)
    );
    // `Pick extends Base` in package `shapes` is `shapes.Base`, which lacks `extra`: not
    // the `other.Base` that defines it (a name match at 0.2, not listed).
    let extra = ws
        .callers_with("java/other/Base.java#Base.extra@method", 0, 0.0, true)
        .unwrap();
    let found: Vec<(u32, f64)> = extra
        .result
        .calls
        .iter()
        .map(|c| (c.line + 1, c.confidence))
        .collect();
    assert_eq!(found, [(5, 0.2)]);
    // C#'s `base.M()`, on the class's first base.
    assert_eq!(
        callers(&ws, "Shape.Area"),
        (vec!["csharp/Shapes.cs:10 (0.70)".to_string()], 0)
    );
}

/// A rescan resolves the calls of a changed file from the store (only the definitions its
/// references name are loaded): the calls a type expression goes through (`rt`,
/// `new_multi_thread`, `enable_all`, `build`) are loaded with them, so the answer is a
/// fresh scan's.
#[test]
fn a_rescan_of_one_file_resolves_its_typed_receivers_as_a_fresh_scan_does() {
    let (dir, mut ws) = scanned("rust");
    let fresh = callers(&ws, "Runtime::block_on");
    let app = dir.path().join("src/app.rs");
    let text = std::fs::read_to_string(&app).unwrap();
    std::fs::write(&app, text.replace("block_on(2)", "block_on(20)")).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(callers(&ws, "Runtime::block_on"), fresh);
    // The file defining the types changes: the calls into it are resolved again.
    let runtime = dir.path().join("src/runtime.rs");
    let text = std::fs::read_to_string(&runtime).unwrap();
    std::fs::write(&runtime, format!("\n{text}")).unwrap();
    ws.scan(&|_| {}).unwrap();
    assert_eq!(callers(&ws, "Runtime::block_on"), fresh);
    assert_eq!(fresh.0.len(), 7);
}

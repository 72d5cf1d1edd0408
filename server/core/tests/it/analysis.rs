//! Behaviour of `analyze`, `parse` and `extract` on small inline inputs: bad input never
//! crashes (deep nesting, pathological input, syntax errors, empty files), fingerprints
//! ignore comments and layout but not tokens, keys are deterministic, positions are byte
//! columns.

use loci_core::analyze::{extract, parse};
use loci_core::{AnalyzeOptions, Degraded, FileAnalysis, Language, SymbolKind, analyze};

fn run(language: Language, text: &str) -> FileAnalysis {
    analyze("test", language, text, &AnalyzeOptions::default())
}

/// Runs `f` on a thread with a 2 MiB stack, the size of a tokio worker's.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .expect("thread starts")
        .join()
        .expect("analysis on a 2 MiB stack did not panic or overflow")
}

fn symbol<'a>(analysis: &'a FileAnalysis, qualified: &str) -> &'a loci_core::Symbol {
    analysis
        .symbols
        .iter()
        .find(|s| s.qualified_name == qualified)
        .unwrap_or_else(|| panic!("no symbol {qualified} in {:#?}", analysis.symbols))
}

#[test]
fn deep_nesting_javascript_b16a_does_not_overflow_a_2mib_stack() {
    let analysis = on_small_stack(|| {
        let depth = 100_000;
        let text = format!(
            "x = {}1{};\nfunction after() {{}}\n",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let analysis = run(Language::JavaScript, &text);
        // dropping the tree and every value happened on the small stack too
        analysis
    });
    assert_eq!(analysis.degraded, Some(Degraded::TooDeep { limit: 2_000 }));
    // what sits above the depth limit is still extracted
    assert_eq!(
        analysis
            .symbols
            .iter()
            .map(|s| s.key.as_str())
            .collect::<Vec<_>>(),
        ["test#after@function"]
    );
    assert_eq!(analysis.fingerprint.len(), 16);
}

#[test]
fn deep_nesting_within_the_limit_is_not_degraded() {
    let text = format!("x = {}1{};\n", "(".repeat(500), ")".repeat(500));
    let analysis = on_small_stack(move || run(Language::JavaScript, &text));
    assert_eq!(analysis.degraded, None);
    assert_eq!(analysis.error_nodes, 0);
}

#[test]
fn unclosed_parens_rust_b16b_parse_is_bounded_and_reparse_after_an_edit_works() {
    let (first, second) = on_small_stack(|| {
        let mut text = format!("fn main() {{ let x = {}", "(".repeat(50_000));
        let options = AnalyzeOptions {
            timeout_ms: 2_000,
            ..AnalyzeOptions::default()
        };
        let started = std::time::Instant::now();
        let (tree, degraded) = parse(Language::Rust, &text, None, &options);
        let first = (
            started.elapsed(),
            degraded.clone(),
            tree.as_ref().map(|t| t.root_node().has_error()),
        );
        // One edit (a didChange): append a character, reparse incrementally.
        let second = match tree {
            Some(mut tree) => {
                let at = text.len();
                text.push(')');
                tree.edit(&tree_sitter_edit(at, 1, text.matches('\n').count()));
                let started = std::time::Instant::now();
                let (tree, degraded) = parse(Language::Rust, &text, Some(&tree), &options);
                let analysis = tree
                    .as_ref()
                    .map(|t| extract("open.rs", Language::Rust, &text, t, &options));
                (
                    started.elapsed(),
                    degraded,
                    analysis.map(|a| a.error_nodes > 0),
                )
            }
            None => (std::time::Duration::ZERO, degraded, None),
        };
        (first, second)
    });
    // Bounded: the parse finished or gave up at the limit (plus slack for a loaded machine).
    assert!(
        first.0 < std::time::Duration::from_secs(10),
        "first parse took {:?}",
        first.0
    );
    assert!(
        second.0 < std::time::Duration::from_secs(10),
        "reparse took {:?}",
        second.0
    );
    match (&first.1, first.2) {
        (Some(Degraded::ParseTimeout { limit_ms: 2_000 }), None) | (None, Some(true)) => {}
        other => panic!("unexpected first parse outcome {other:?}"),
    }
}

fn tree_sitter_edit(at: usize, inserted: usize, row: usize) -> loci_core::tree_sitter::InputEdit {
    use loci_core::tree_sitter::{InputEdit, Point};
    // Single-line input: the column is the byte offset.
    InputEdit {
        start_byte: at,
        old_end_byte: at,
        new_end_byte: at + inserted,
        start_position: Point { row, column: at },
        old_end_position: Point { row, column: at },
        new_end_position: Point {
            row,
            column: at + inserted,
        },
    }
}

#[test]
fn parse_timeout_degrades_with_a_raw_text_fingerprint() {
    let text = "def f(x):\n    return [x for x in range(10)]\n".repeat(20_000);
    let options = AnalyzeOptions {
        timeout_ms: 0,
        ..AnalyzeOptions::default()
    };
    let analysis = analyze("big.py", Language::Python, &text, &options);
    assert_eq!(
        analysis.degraded,
        Some(Degraded::ParseTimeout { limit_ms: 0 })
    );
    assert!(analysis.symbols.is_empty() && analysis.refs.is_empty() && analysis.imports.is_empty());
    assert_eq!(
        analysis.fingerprint,
        loci_core::fingerprint::raw_text_fingerprint(&text)
    );
    // the thread's parser is usable again afterwards
    let after = run(Language::Python, "def g():\n    pass\n");
    assert_eq!(after.degraded, None);
    assert_eq!(after.symbols.len(), 1);
}

#[test]
fn empty_files_work() {
    for language in Language::ALL {
        let analysis = run(language, "");
        assert!(analysis.symbols.is_empty(), "{language:?}");
        assert_eq!(analysis.error_nodes, 0, "{language:?}");
        assert_eq!(analysis.degraded, None, "{language:?}");
        assert_eq!(analysis.fingerprint.len(), 16);
    }
}

#[test]
fn syntax_errors_keep_the_good_symbols() {
    let text = "def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    def ok(self):\n        return 2\n";
    let analysis = run(Language::Python, text);
    assert!(analysis.error_nodes > 0);
    let keys: Vec<&str> = analysis.symbols.iter().map(|s| s.key.as_str()).collect();
    assert!(keys.contains(&"test#good@function"), "{keys:?}");
    assert!(keys.contains(&"test#Fine@class"), "{keys:?}");
    assert!(keys.contains(&"test#Fine.ok@method"), "{keys:?}");

    let rust = run(Language::Rust, "fn a() {}\nfn b( {\nstruct S;\nfn c() {}\n");
    assert!(rust.error_nodes > 0);
    assert!(
        rust.symbols.iter().any(|s| s.key == "test#a@function"),
        "{:#?}",
        rust.symbols
    );
}

const RUST_BASE: &str = "\
/// Adds.
pub fn add(a: i32, b: i32) -> i32 {
    // sum them
    a + b
}

struct S;

impl S {
    fn method(&self) -> i32 {
        add(1, 2)
    }
}
";

#[test]
fn comment_only_edits_keep_fingerprints() {
    let base = run(Language::Rust, RUST_BASE);
    let edited = run(
        Language::Rust,
        &RUST_BASE
            .replace("// sum them", "// add the two numbers\n    /* block */")
            .replace("/// Adds.", "/// Adds two numbers."),
    );
    assert_eq!(base.fingerprint, edited.fingerprint);
    for qualified in ["add", "S.method"] {
        let (a, b) = (symbol(&base, qualified), symbol(&edited, qualified));
        assert_eq!(a.body_fingerprint, b.body_fingerprint, "{qualified}");
        assert_eq!(
            a.signature_fingerprint, b.signature_fingerprint,
            "{qualified}"
        );
    }
    assert_eq!(
        symbol(&edited, "add").doc.as_deref(),
        Some("Adds two numbers.")
    );
}

#[test]
fn token_edits_change_fingerprints() {
    let base = run(Language::Rust, RUST_BASE);
    let body_edit = run(Language::Rust, &RUST_BASE.replace("a + b", "a - b"));
    assert_ne!(base.fingerprint, body_edit.fingerprint);
    let (a, b) = (symbol(&base, "add"), symbol(&body_edit, "add"));
    assert_ne!(a.body_fingerprint, b.body_fingerprint);
    assert_eq!(
        a.signature_fingerprint, b.signature_fingerprint,
        "a body edit is not a signature change"
    );
    // the untouched method keeps its fingerprint
    assert_eq!(
        symbol(&base, "S.method").body_fingerprint,
        symbol(&body_edit, "S.method").body_fingerprint
    );

    let signature_edit = run(
        Language::Rust,
        &RUST_BASE.replace("b: i32) -> i32", "b: i64) -> i32"),
    );
    let c = symbol(&signature_edit, "add");
    assert_ne!(a.signature_fingerprint, c.signature_fingerprint);
    assert_ne!(a.body_fingerprint, c.body_fingerprint);

    // a string's contents are tokens too
    let js = run(Language::JavaScript, "const s = 'a b';\n");
    let js2 = run(Language::JavaScript, "const s = 'a  b';\n");
    assert_ne!(js.fingerprint, js2.fingerprint);
}

#[test]
fn whitespace_and_reindent_only_edits_keep_fingerprints() {
    let base = run(Language::Rust, RUST_BASE);
    let reflowed = "/// Adds.\npub fn add(\n        a: i32,\n        b: i32\n) -> i32 {\n  a+b\n}\nstruct S;\nimpl S {\n\tfn method( &self ) -> i32 { add( 1,2 ) }\n}\n";
    let edited = run(Language::Rust, reflowed);
    assert_eq!(base.fingerprint, edited.fingerprint);
    assert_eq!(
        symbol(&base, "add").body_fingerprint,
        symbol(&edited, "add").body_fingerprint
    );
    assert_eq!(
        symbol(&base, "add").signature_fingerprint,
        symbol(&edited, "add").signature_fingerprint
    );

    let js = "function f(a, b) {\n  if (a) {\n    return b;\n  }\n}\n";
    let js_reindented = "function f(a,b){\n        if (a) { return b; }\n}\n";
    assert_eq!(
        run(Language::JavaScript, js).fingerprint,
        run(Language::JavaScript, js_reindented).fingerprint
    );
}

#[test]
fn python_docstring_edits_are_doc_changes_not_code_changes() {
    let base = "def f(x):\n    \"\"\"Old doc.\"\"\"\n    return x\n";
    let edited = "def f(x):\n    \"\"\"New, longer doc.\"\"\"\n    return x\n";
    let (a, b) = (run(Language::Python, base), run(Language::Python, edited));
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_eq!(a.symbols[0].body_fingerprint, b.symbols[0].body_fingerprint);
    assert_eq!(b.symbols[0].doc.as_deref(), Some("New, longer doc."));
    // a string that is not the first statement is code
    let c = run(
        Language::Python,
        "def f(x):\n    y = 1\n    \"\"\"not a docstring\"\"\"\n    return x\n",
    );
    let d = run(
        Language::Python,
        "def f(x):\n    y = 1\n    \"\"\"changed\"\"\"\n    return x\n",
    );
    assert_ne!(c.symbols[0].body_fingerprint, d.symbols[0].body_fingerprint);
}

#[test]
fn keys_are_deterministic_with_ordinals_in_document_order() {
    let text = "\
class A:
    @property
    def name(self):
        return 1

    @name.setter
    def name(self, value):
        pass

    def name(self):
        pass

def name():
    pass
";
    let first = run(Language::Python, text);
    let second = run(Language::Python, text);
    assert_eq!(first, second);
    let keys: Vec<&str> = first.symbols.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "test#A@class",
            "test#A.name@method",
            "test#A.name@method[2]",
            "test#A.name@method[3]",
            "test#name@function"
        ]
    );
    assert_eq!(first.symbols[1].parent, Some(0));
    assert_eq!(first.symbols[4].parent, None);
}

#[test]
fn a_method_key_survives_lines_added_above_it() {
    let text = "class Service:\n    def login(self, user):\n        return user\n";
    let shifted = format!("import os\n\n\n# a comment\nX = 1\n\n{text}");
    let (a, b) = (run(Language::Python, text), run(Language::Python, &shifted));
    let (ma, mb) = (symbol(&a, "Service.login"), symbol(&b, "Service.login"));
    assert_eq!(ma.key, "test#Service.login@method");
    assert_eq!(ma.key, mb.key);
    assert_eq!(ma.body_fingerprint, mb.body_fingerprint);
    assert_eq!(mb.span.line, ma.span.line + 6);
}

#[test]
fn byte_columns_after_non_ascii_text() {
    // "é" and "→" are 2 and 3 bytes in UTF-8; "名前" is 6.
    let text = "s = \"é→\"; const 名前 = 1; function f() {}\nconst t = '🦀'; class Ü { m() {} }\n";
    let analysis = run(Language::JavaScript, text);
    let f = symbol(&analysis, "f");
    assert_eq!(f.name_span.line, 0);
    assert_eq!(f.name_span.column as usize, text.find("f()").unwrap());
    assert_eq!(
        &text[f.name_span.start as usize..f.name_span.end as usize],
        "f"
    );
    let class = symbol(&analysis, "Ü");
    let line_start = text.find('\n').unwrap() + 1;
    assert_eq!(class.name_span.line, 1);
    assert_eq!(
        class.name_span.column as usize,
        text[line_start..].find('Ü').unwrap()
    );
    assert_eq!(
        class.name_span.column, 24,
        "byte column, not chars (21) nor UTF-16 units (22)"
    );
    let method = symbol(&analysis, "Ü.m");
    assert_eq!(method.kind, SymbolKind::Method);
    assert_eq!(
        &text[method.name_span.start as usize..method.name_span.end as usize],
        "m"
    );
}

#[test]
fn parse_then_extract_equals_analyze_and_incremental_reparse_matches_fresh() {
    let options = AnalyzeOptions::default();
    let text = "def a():\n    return b()\n\ndef b():\n    return 1\n";
    let (tree, degraded) = parse(Language::Python, text, None, &options);
    assert_eq!(degraded, None);
    let mut tree = tree.expect("parsed");
    assert_eq!(
        extract("m.py", Language::Python, text, &tree, &options),
        analyze("m.py", Language::Python, text, &options)
    );

    // Insert a function at the top, reparse with the edited old tree.
    let inserted = "def z():\n    pass\n\n";
    let new_text = format!("{inserted}{text}");
    tree.edit(&loci_core::tree_sitter::InputEdit {
        start_byte: 0,
        old_end_byte: 0,
        new_end_byte: inserted.len(),
        start_position: loci_core::tree_sitter::Point { row: 0, column: 0 },
        old_end_position: loci_core::tree_sitter::Point { row: 0, column: 0 },
        new_end_position: loci_core::tree_sitter::Point { row: 3, column: 0 },
    });
    let (new_tree, _) = parse(Language::Python, &new_text, Some(&tree), &options);
    let incremental = extract(
        "m.py",
        Language::Python,
        &new_text,
        &new_tree.expect("reparsed"),
        &options,
    );
    assert_eq!(
        incremental,
        analyze("m.py", Language::Python, &new_text, &options)
    );
    assert_eq!(incremental.symbols.len(), 3);
}

#[test]
fn a_tree_of_another_language_yields_an_empty_analysis() {
    let options = AnalyzeOptions::default();
    let (tree, _) = parse(Language::Python, "def f():\n    pass\n", None, &options);
    let analysis = extract(
        "x.rs",
        Language::Rust,
        "def f():\n    pass\n",
        &tree.expect("parsed"),
        &options,
    );
    assert!(analysis.symbols.is_empty());
    assert_eq!(analysis.fingerprint.len(), 16);
}

#[test]
fn garbage_input_with_wide_error_nodes_is_analyzed_in_linear_time() {
    for (language, unit) in [
        (Language::Python, ") "),
        (Language::JavaScript, "} "),
        (Language::C, "] "),
    ] {
        let text = unit.repeat(100_000);
        let started = std::time::Instant::now();
        let analysis = on_small_stack(move || run(language, &text));
        assert!(
            analysis.error_nodes > 0 || analysis.degraded.is_some(),
            "{language:?}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{language:?} took {:?}",
            started.elapsed()
        );
    }
}

/// A minified file is one long line holding every definition. Each symbol's signature is
/// its own text, not the line's first 200 bytes (which all of them would share), and not
/// found by scanning the whole line once per definition (a 2 MB bundle would take 39 s).
#[test]
fn fault_minified_line_signatures_are_each_definitions_own_text() {
    let count = 2_000;
    let text: String = (0..count)
        .map(|i| format!("function f{i}(a){{return g(a,{i})}};"))
        .collect();
    let analysis = run(Language::JavaScript, &text);
    assert_eq!(analysis.symbols.len(), count);
    assert_eq!(symbol(&analysis, "f0").signature, &text[..200]);
    let at = text.find("function f1500(").expect("f1500 is in the text");
    assert_eq!(symbol(&analysis, "f1500").signature, &text[at..at + 200]);
    assert!(
        symbol(&analysis, "f1500")
            .signature
            .starts_with("function f1500(a){return g(a,1500)};")
    );
    // A definition on an ordinary line keeps the whole line, indentation trimmed.
    let analysis = run(
        Language::JavaScript,
        "/* a */\n  export function kept(x) { return x }\n",
    );
    assert_eq!(
        symbol(&analysis, "kept").signature,
        "export function kept(x) { return x }"
    );
}

/// Fault (fresh-user trial): a license comment above a minified line became the doc
/// comment of every definition on it (20,000 copies in the map and its full-text index).
/// A comment documents the first definition of its line only (nothing ends with `;`, `{`
/// or `}` before it), so JSDoc on an exported function still counts.
#[test]
fn fault_a_comment_above_a_minified_line_documented_every_definition_on_it() {
    let text = format!(
        "/* Copyright Example Ltd. All rights reserved. */\n{}\n",
        (0..50)
            .map(|i| format!("var v{i}=function(a){{return a+{i}}};"))
            .collect::<String>()
    );
    let analysis = run(Language::JavaScript, &text);
    let documented: Vec<&str> = analysis
        .symbols
        .iter()
        .filter(|s| s.doc.is_some())
        .map(|s| s.name.as_str())
        .collect();
    assert!(documented.len() <= 1, "{documented:?}");
    let analysis = run(
        Language::JavaScript,
        "/** Adds one. */\nexport function inc(x) { return x + 1 }\n",
    );
    assert_eq!(symbol(&analysis, "inc").doc.as_deref(), Some("Adds one."));
}

/// Every reference as `name:receiver` (`-` for a bare name), in document order.
fn receivers(analysis: &FileAnalysis) -> Vec<String> {
    analysis
        .refs
        .iter()
        .map(|r| format!("{}:{}", r.name, r.receiver.as_str().unwrap_or("-")))
        .collect()
}

#[test]
fn fault_a_method_call_on_another_receiver_was_recorded_as_a_bare_name() {
    let rust = run(
        Language::Rust,
        "impl M {\n    fn f(&self, x: &str) -> bool {\n        self.meta.is_match(x) && self.is_match(x)\n            && Self::g() && Regex::new(x) && self::h() && crate::k() && is_match(x)\n    }\n}\n",
    );
    assert_eq!(
        receivers(&rust),
        [
            "M:-",
            "is_match:other",
            "is_match:own",
            "g:own",
            "Regex:-",
            "new:path",
            "h:path",
            "k:path",
            "is_match:-"
        ]
    );
    let python = run(
        Language::Python,
        "class A:\n    def f(self, obj):\n        obj.parse()\n        self.parse()\n        cls.parse()\n        super().parse()\n        parse()\n",
    );
    assert_eq!(
        receivers(&python),
        [
            "parse:other",
            "parse:own",
            "parse:own",
            "super:-",
            "parse:other",
            "parse:-"
        ]
    );
    let js = run(
        Language::JavaScript,
        "class A { f(obj) { obj.parse(); this.parse(); parse(); } }\n",
    );
    assert_eq!(receivers(&js), ["parse:other", "parse:own", "parse:-"]);
    let go = run(
        Language::Go,
        "package p\nfunc (s *S) f() { s.parse(); fmt.Println(); parse() }\n",
    );
    // A Go method's receiver is its own value, as `self` is.
    assert_eq!(
        receivers(&go),
        ["S:-", "parse:own", "Println:other", "parse:-"]
    );
    let java = run(
        Language::Java,
        "class A { void f(B b) { b.parse(); this.parse(); parse(); } }\n",
    );
    // `B b` types the value.
    assert_eq!(receivers(&java), ["parse:typed", "parse:own", "parse:-"]);
    let ruby = run(
        Language::Ruby,
        "class A\n  def f(obj)\n    obj.parse\n    self.parse\n    parse\n  end\nend\n",
    );
    assert_eq!(receivers(&ruby), ["parse:other", "parse:own", "parse:-"]);
    let php = run(
        Language::Php,
        "<?php\nclass A { function f($o) { $o->parse(); $this->parse(); self::parse(); static::parse(); parent::parse(); parse(); } }\n",
    );
    assert_eq!(
        receivers(&php),
        [
            "parse:other",
            "parse:own",
            "parse:own",
            "parse:own",
            "parse:other",
            "parse:-"
        ]
    );
    let cpp = run(
        Language::Cpp,
        "void A::f(B* b) { b->parse(); this->parse(); B::parse(); parse(); }\n",
    );
    assert_eq!(
        receivers(&cpp),
        ["parse:other", "parse:own", "parse:other", "parse:-"]
    );
    let csharp = run(
        Language::CSharp,
        "class A { void F(B b) { b.Parse(); this.Parse(); Parse(); } }\n",
    );
    assert_eq!(receivers(&csharp), ["Parse:typed", "Parse:own", "Parse:-"]);
}

/// tokio defines most of its public types inside macro invocations (`cfg_net! { pub struct
/// TcpStream { .. } }`, `cfg_rt! { pub fn spawn .. }`, `pin_project! { pub struct Sleep
/// { .. } }`), whose bodies tree-sitter leaves as token trees: `loci symbol TcpStream` found
/// nothing, nor the `mod` and `use` declarations inside (docs/architecture.md listed the
/// `mod` case as a known gap). A `{ .. }` body where items go is now parsed again as items,
/// with the file's positions, nested bodies too; a body that is not items (`vec![..]`,
/// `println!(..)`, `json!({..})`, `select! { .. }`, a `quote! { .. }` template) adds
/// nothing.
#[test]
fn fault_items_inside_macro_invocations_were_invisible() {
    let text = "\
macro_rules! cfg_net { ($($i:item)*) => { $($i)* } }
cfg_net! {
    use crate::io::Ready;
    pub mod tcp;

    /// A TCP stream.
    #[cfg(unix)]
    pub struct TcpStream {
        io: Ready,
    }

    impl TcpStream {
        /// Opens a connection.
        pub fn connect() -> TcpStream { open() }
    }

    cfg_unix! {
        pub struct UnixStream;
    }
}
#[cfg(windows)]
cfg_net! {
    pub struct TcpStream { handle: u64 }
}
pin_project! {
    pub struct Sleep {
        #[pin]
        entry: Entry,
    }
}
impl Runtime {
    cfg_rt! { pub fn spawn() {} }
}
pub trait Read {
    cfg_io! { fn read(&mut self); }
}
mod inner {
    cfg_rt! { mod nested; use super::Sleep; }
}
fn main() {
    cfg_x! { /* café */ fn local() {} }
    let v = vec![1, 2];
    println!(\"{v:?}\");
    json!({ \"a\": 1 });
    select! { x = rx => { go() } }
    quote! { fn template() {} }
}
";
    let analysis = run(Language::Rust, text);
    let symbols: Vec<String> = analysis
        .symbols
        .iter()
        .map(|s| {
            format!(
                "{} {}:{}-{} {}..{} {:?} {:?}",
                s.key,
                s.span.line,
                s.span.column,
                s.span.end_line,
                s.name_span.start,
                s.name_span.end,
                s.signature,
                s.doc.as_deref().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        symbols,
        [
            r##"test#cfg_net@macro 0:0-0 13..20 "macro_rules! cfg_net { ($($i:item)*) => { $($i)* } }" """##,
            r##"test#tcp@module 3:4-3 102..105 "pub mod tcp;" """##,
            r##"test#TcpStream@struct 7:4-9 162..171 "pub struct TcpStream {" "A TCP stream.""##,
            r##"test#TcpStream.connect@method 13:8-13 268..275 "pub fn connect() -> TcpStream { open() }" "Opens a connection.""##,
            r##"test#UnixStream@struct 17:8-17 344..354 "pub struct UnixStream;" """##,
            r##"test#TcpStream@struct[2] 22:4-22 406..415 "pub struct TcpStream { handle: u64 }" """##,
            r##"test#Sleep@struct 25:4-28 464..469 "pub struct Sleep {" """##,
            r##"test#Runtime.spawn@method 31:14-31 553..558 "cfg_rt! { pub fn spawn() {} }" """##,
            r##"test#Read@trait 33:0-35 578..582 "pub trait Read {" """##,
            r##"test#Read.read@method 34:14-34 602..606 "cfg_io! { fn read(&mut self); }" """##,
            r##"test#inner@module 36:0-38 627..632 "mod inner {" """##,
            r##"test#inner.nested@module 37:14-37 653..659 "cfg_rt! { mod nested; use super::Sleep; }" """##,
            r##"test#main@function 39:0-46 686..690 "fn main() {" """##,
            // byte column 25 (the UTF-16 column is 24: `é` is two bytes, one unit)
            r##"test#main.local@function 40:25-40 723..728 "cfg_x! { /* café */ fn local() {} }" """##,
        ]
    );
    // `use` and `mod` inside bodies are imports, qualified by the inline modules around
    // the invocation (`mod inner { cfg_rt! { mod nested; } }` declares `inner/nested.rs`).
    let imports: Vec<(&str, Vec<&str>, u32)> = analysis
        .imports
        .iter()
        .map(|i| {
            (
                i.module.as_str(),
                i.names.iter().map(String::as_str).collect(),
                i.span.line,
            )
        })
        .collect();
    assert_eq!(
        imports,
        [
            ("crate::io", vec!["Ready"], 2),
            ("self::tcp", vec![], 3),
            ("self::inner::nested", vec![], 37),
            ("self", vec!["Sleep"], 37),
        ]
    );
    // References inside bodies, with their enclosing symbols; the macros themselves are
    // calls; nothing comes from `select!` (its body is no items) or `quote!` (a template),
    // nor from the arguments here, which hold no calls.
    let refs: Vec<String> = analysis
        .refs
        .iter()
        .map(|r| {
            format!(
                "{} {} {}:{} in {}",
                r.name,
                r.kind.as_str(),
                r.span.line,
                r.span.column,
                r.enclosing.map_or("-", |e| analysis.symbols[e as usize]
                    .qualified_name
                    .as_str()),
            )
        })
        .collect();
    assert_eq!(
        refs,
        [
            "cfg_net macro 1:0 in -",
            "Ready import 2:19 in -",
            "Ready type 8:12 in TcpStream",
            "TcpStream inherit 11:9 in -",
            "TcpStream type 13:28 in TcpStream.connect",
            "open call 13:40 in TcpStream.connect",
            "cfg_unix macro 16:4 in -",
            "cfg_net macro 21:0 in -",
            "pin_project macro 24:0 in -",
            "Entry type 27:15 in Sleep",
            "Runtime inherit 30:5 in -",
            "cfg_rt macro 31:4 in -",
            "cfg_io macro 34:4 in Read",
            "cfg_rt macro 37:4 in inner",
            "Sleep import 37:37 in inner",
            "cfg_x macro 40:4 in main",
            "vec macro 41:12 in main",
            "println macro 42:4 in main",
            "json macro 43:4 in main",
            "select macro 44:4 in main",
            "quote macro 45:4 in main",
        ]
    );
    // A definition keeps its body fingerprint when it moves into a macro body, and the
    // file's own fingerprint and error count are the file tree's.
    let outside = run(
        Language::Rust,
        "pub struct Sleep {\n    #[pin]\n    entry: Entry,\n}\n",
    );
    assert_eq!(
        symbol(&analysis, "Sleep").body_fingerprint,
        outside.symbols[0].body_fingerprint
    );
    assert_eq!(analysis.error_nodes, 0);
    assert_eq!(analysis.degraded, None);
}

/// Calls written in a macro's arguments (`assert_eq!(parse(s), ..)` in every Rust test)
/// were no references: tree-sitter leaves them a token tree, so `loci callers parse` missed
/// the tests. A `( .. )` or `[ .. ]` body is parsed again on its own, as `{ .. }` item bodies
/// are, and only its references count; nested macros' arguments too, not a `quote!`
/// template's nor items in parentheses (`thread_local!(static ..)`, `m!(struct ..)`), and
/// their syntax errors are not the file's.
#[test]
fn fault_calls_in_macro_arguments_were_no_references() {
    let text = "\
fn parses() {
    assert_eq!(parse(\"a\"), Some(Token::new(1)), \"{}\", format!(\"{}\", shown(x)));
    let w = vec![width(); 2];
    quote!(template_call());
    m!(struct Helper { x: u8 });
    thread_local!(static CACHE: Cell<u8> = Cell::new(0));
}
";
    let analysis = run(Language::Rust, text);
    let refs: Vec<String> = analysis
        .refs
        .iter()
        .map(|r| {
            let receiver = r.receiver_name.as_deref().unwrap_or("-");
            format!(
                "{} {} {receiver} {}:{}",
                r.name,
                r.kind.as_str(),
                r.span.line,
                r.span.column
            )
        })
        .collect();
    assert_eq!(
        refs,
        [
            "assert_eq macro - 1:4",
            "parse call - 1:15",
            "Some call - 1:27",
            "Token type - 1:32",
            "new call Token 1:39",
            "format macro - 1:54",
            "shown call - 1:68",
            "vec macro - 2:12",
            "width call - 2:17",
            "quote macro - 3:4",
            "m macro - 4:4",
            "thread_local macro - 5:4",
        ]
    );
    let symbols: Vec<&str> = analysis.symbols.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(symbols, ["test#parses@function"]);
    assert_eq!(analysis.error_nodes, 0);
}

#[test]
fn fault_a_call_on_an_imported_module_was_a_call_on_an_unknown_receiver() {
    let python = run(
        Language::Python,
        "import os.path\nfrom . import util\n\ndef f(obj):\n    os.getcwd()\n    util.fmt()\n    obj.fmt()\n",
    );
    assert_eq!(
        receivers(&python),
        ["util:-", "getcwd:imported", "fmt:imported", "fmt:other"]
    );
    let go = run(
        Language::Go,
        "package p\nimport \"example.com/x/store\"\nfunc f(s S) { store.Open(); s.Open() }\n",
    );
    // `s S` types the value: `Open` of `S`.
    assert_eq!(receivers(&go), ["S:-", "Open:imported", "Open:typed"]);
    let rust = run(
        Language::Rust,
        "mod store;\nuse regex::Regex;\nfn f() { store::open(); Regex::new(); Other::new(); }\n",
    );
    assert_eq!(
        receivers(&rust),
        [
            "Regex:-",
            "open:path",
            "Regex:-",
            "new:path",
            "Other:-",
            "new:path"
        ]
    );
    // A Rust path starts from what the file's `use` and `mod` items bound its first name
    // to, as rustc reads it: `store::open()` is `self::store`'s, `Regex::new()`
    // `regex::Regex`'s.
    let names: Vec<Option<&str>> = rust
        .refs
        .iter()
        .map(|r| r.receiver_name.as_deref())
        .collect();
    assert_eq!(
        names,
        [
            None,
            Some("self.store"),
            None,
            Some("regex.Regex"),
            None,
            Some("Other")
        ]
    );
    // `require` binds no name: a local named like the required file is another receiver.
    let ruby = run(
        Language::Ruby,
        "require_relative 'shop/cart'\ndef f(cart)\n  cart.total\nend\n",
    );
    assert_eq!(receivers(&ruby), ["require_relative:-", "total:other"]);
}

/// Fault (trial): Rust enum variants were not in the map, so a README naming
/// `Value::Null` of the repository's own enum was a "missing symbol" and `loci check`
/// failed on it. Variants are constants qualified by their enum.
#[test]
fn fault_rust_enum_variants_were_not_in_the_map() {
    let a = run(
        Language::Rust,
        "pub enum Value {\n    Null,\n    Bool(bool),\n    Number { n: u8 },\n}\n",
    );
    let variants: Vec<(&str, &str)> = a
        .symbols
        .iter()
        .filter(|s| s.kind == loci_core::SymbolKind::Constant)
        .map(|s| (s.qualified_name.as_str(), s.signature.as_str()))
        .collect();
    assert_eq!(
        variants,
        [
            ("Value.Null", "Null,"),
            ("Value.Bool", "Bool(bool),"),
            ("Value.Number", "Number { n: u8 },")
        ]
    );
}

/// The Rust tags query calls structs, enums, unions and type aliases `@definition.class`
/// and traits `@definition.interface`: `loci symbol` showed a Rust `struct` as a class.
/// Each is now the kind a Rust user names it by; methods in an `impl` or a `trait` stay
/// methods.
#[test]
fn fault_rust_structs_enums_and_traits_were_classes() {
    let text = "pub struct Point { x: i32 }\n\
                pub enum Shape { Dot, Line }\n\
                pub union Bits { i: u32, f: f32 }\n\
                pub type Id = u64;\n\
                pub trait Draw { fn draw(&self); fn name(&self) -> &str { \"\" } }\n\
                impl Point { pub fn new() -> Point { Point { x: 0 } } }\n\
                impl Draw for Shape { fn draw(&self) {} }\n";
    let analysis = run(Language::Rust, text);
    let kinds: Vec<(&str, &str)> = analysis
        .symbols
        .iter()
        .map(|s| (s.key.as_str(), s.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("test#Point@struct", "struct"),
            ("test#Shape@enum", "enum"),
            ("test#Shape.Dot@constant", "constant"),
            ("test#Shape.Line@constant", "constant"),
            ("test#Bits@union", "union"),
            ("test#Id@type", "type"),
            ("test#Draw@trait", "trait"),
            ("test#Draw.draw@method", "method"),
            ("test#Draw.name@method", "method"),
            ("test#Point.new@method", "method"),
            ("test#Shape.draw@method", "method"),
        ]
    );
    for kind in [
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::Union,
        SymbolKind::Trait,
    ] {
        assert_eq!(SymbolKind::parse(kind.as_str()), kind);
    }
    // Other languages keep their kinds: a Go struct type and a C struct are classes.
    let go = run(Language::Go, "package p\ntype T struct{}\n");
    assert_eq!(go.symbols[0].key, "test#T@class");
    let c = run(Language::C, "struct s { int a; };\n");
    assert_eq!(c.symbols[0].key, "test#s@class");
}

/// `#[path = "x.rs"] mod y;` was recorded as `self::y` and left unresolved (or resolved to
/// `y.rs` when one existed): the Rust Reference's rule for the path attribute is followed
/// now, relative to the declaring file's directory, or inside inline modules to the
/// file's module directory joined with the inline modules' names.
#[test]
fn fault_rust_path_attribute_mod_was_not_followed() {
    use loci_core::PathIndex;
    use loci_core::imports::resolve;
    let index = PathIndex::with_paths(
        [
            "src/lib.rs",
            "src/a/b.rs",
            "src/a/mod.rs",
            "src/a/y.rs",
            "src/a/impls/fast.rs",
            "src/a/b/inline/other.rs",
            "src/a/inline/other.rs",
            "src/shared/common.rs",
            "src/inner/deep.rs",
        ]
        .map(String::from),
    );
    let text = "// the fast one\n\
                #[cfg(unix)]\n\
                #[path = \"impls/fast.rs\"]\n\
                mod y;\n\
                #[path = \"../shared/common.rs\"] pub mod common;\n\
                mod inline {\n    #[path = \"other.rs\"]\n    mod inner;\n}\n\
                #[path = \"missing.rs\"] mod gone;\n\
                mod plain;\n";
    let resolved = |from: &str| -> Vec<(String, Vec<String>)> {
        let analysis = analyze(from, Language::Rust, text, &AnalyzeOptions::default());
        analysis
            .imports
            .iter()
            .map(|i| {
                let to = resolve(Language::Rust, from, i, &index);
                (i.module.clone(), to)
            })
            .collect()
    };
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // A non-mod-rs file: the inline case starts at `src/a/b/`.
    assert_eq!(
        resolved("src/a/b.rs"),
        [
            (
                "#[path = \"impls/fast.rs\"] self::y".to_string(),
                strings(&["src/a/impls/fast.rs"])
            ),
            (
                "#[path = \"../shared/common.rs\"] self::common".to_string(),
                strings(&["src/shared/common.rs"])
            ),
            (
                "#[path = \"other.rs\"] self::inline::inner".to_string(),
                strings(&["src/a/b/inline/other.rs"])
            ),
            ("#[path = \"missing.rs\"] self::gone".to_string(), vec![]),
            ("self::plain".to_string(), vec![]),
        ]
    );
    // A mod-rs file: the inline case starts at its own directory.
    let from_mod_rs = resolved("src/a/mod.rs");
    assert_eq!(
        from_mod_rs[2],
        (
            "#[path = \"other.rs\"] self::inline::inner".to_string(),
            strings(&["src/a/inline/other.rs"])
        )
    );
    // Outside inline modules the directory is the file's, whatever kind of file it is
    // (`y.rs` next to the file is not what `#[path]` names).
    assert_eq!(from_mod_rs[0].1, strings(&["src/a/impls/fast.rs"]));
    // The declaration binds its module's name, as `mod y;` does: `y::f()` is on an import.
    let analysis = analyze(
        "src/a/b.rs",
        Language::Rust,
        "#[path = \"impls/fast.rs\"]\nmod y;\nfn g() { y::f(); }\n",
        &AnalyzeOptions::default(),
    );
    let call = analysis
        .refs
        .iter()
        .find(|r| r.name == "f")
        .expect("a call");
    assert_eq!(call.receiver, loci_core::Receiver::Imported);
}

/// `Foo::new()` in a file that defines `impl Foo { fn new() }` was a receiver call on
/// "some other value" (a 0.3 guess, and with `Bar::new` in the file it could pick that).
/// A member written on the bare name of a type the file defines is that type's member.
#[test]
fn fault_a_member_on_a_same_file_type_name_was_a_guess() {
    let targets = |language: Language, text: &str| -> Vec<(String, &'static str, String)> {
        let analysis = run(language, text);
        analysis
            .refs
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.receiver.as_str().unwrap_or("-"),
                    r.target
                        .map(|i| analysis.symbols[i as usize].key.clone())
                        .unwrap_or_default(),
                )
            })
            .collect()
    };
    let t = |n: &str, on: &'static str, to: &str| (n.to_string(), on, to.to_string());
    assert_eq!(
        targets(
            Language::Rust,
            "use other::Gone;\n\
             struct Foo;\nstruct Bar;\n\
             impl Bar { fn new() -> Bar { Bar } }\n\
             impl Foo { fn new() -> Foo { Foo } }\n\
             mod util { pub fn f() {} }\n\
             fn main() { Foo::new(); Bar::new(); util::f(); Gone::new(); x.new(); Vec::new(); }\n"
        ),
        [
            t("Gone", "-", ""),
            t("Bar", "-", ""),
            t("Bar", "-", ""),
            t("Foo", "-", ""),
            t("Foo", "-", ""),
            t("Foo", "-", ""),
            t("new", "own", "test#Foo.new@method"),
            t("Bar", "-", ""),
            t("new", "own", "test#Bar.new@method"),
            t("f", "own", "test#util.f@function"),
            t("Gone", "-", ""),
            t("new", "path", ""),
            t("new", "other", ""),
            t("Vec", "-", ""),
            t("new", "path", ""),
        ]
    );
    assert_eq!(
        targets(
            Language::Python,
            "class Foo:\n    @classmethod\n    def create(cls): return cls()\n\
             \n    def twice(self): pass\n    def twice(self): pass\n\
             \ndef outer():\n    def inner(): pass\n\
             \nFoo.create()\nfoo = Foo.create()\nfoo.create()\nFoo.twice(foo)\nouter.inner()\n"
        ),
        [
            // `cls()`: a call of the parameter, no definition's
            t("create", "own", "test#Foo.create@method"),
            t("create", "own", "test#Foo.create@method"),
            // `foo = Foo.create()`: a value of the type `Foo.create()` returns.
            t("create", "typed", ""),
            // two definitions of `Foo.twice`: ambiguous, left to the engine
            t("twice", "other", ""),
            // the module's `foo`, read as a value
            t("foo", "-", ""),
            // a function's nested function is no member
            t("inner", "other", ""),
        ]
    );
    assert_eq!(
        targets(
            Language::JavaScript,
            "class Foo { static make() { return new Foo(); } }\nFoo.make();\n"
        ),
        [t("Foo", "-", ""), t("make", "own", "test#Foo.make@method"),]
    );
}

/// Nested macro bodies are parsed again down to `MAX_MACRO_DEPTH` levels; deeper ones stay
/// token trees (each level parses its body once more, so the bound keeps the cost linear).
#[test]
fn macro_bodies_nested_past_the_depth_bound_stay_token_trees() {
    let nested = |depth: usize| {
        format!(
            "{}pub struct Deep;{}\n",
            "m! { ".repeat(depth),
            " }".repeat(depth)
        )
    };
    let keys = |depth: usize| -> Vec<String> {
        run(Language::Rust, &nested(depth))
            .symbols
            .into_iter()
            .map(|s| s.key)
            .collect()
    };
    assert_eq!(loci_core::analyze::MAX_MACRO_DEPTH, 8);
    assert_eq!(keys(8), ["test#Deep@struct"]);
    assert!(keys(9).is_empty());
}

/// `cfg_if! { if #[cfg(unix)] { .. } else { .. } }` (the `cfg-if` crate, used by `libc`,
/// `parking_lot` and many more) is no list of items, but each branch is: the branches'
/// items are mapped, the same name in two branches with the `[n]` ordinal.
#[test]
fn cfg_if_branches_are_parsed_as_items() {
    let text = "cfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        pub fn page_size() -> usize { 4096 }\n    } else if #[cfg(windows)] {\n        pub fn page_size() -> usize { 65536 }\n        use std::os::windows;\n    } else {\n        compile_error!(\"unsupported\");\n    }\n}\n";
    let analysis = run(Language::Rust, text);
    let keys: Vec<(&str, u32)> = analysis
        .symbols
        .iter()
        .map(|s| (s.key.as_str(), s.span.line))
        .collect();
    assert_eq!(
        keys,
        [
            ("test#page_size@function", 2),
            ("test#page_size@function[2]", 4)
        ]
    );
    let modules: Vec<&str> = analysis.imports.iter().map(|i| i.module.as_str()).collect();
    assert_eq!(modules, ["std::os"]);
    let calls: Vec<&str> = analysis.refs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(calls, ["cfg_if", "windows", "compile_error"]);
}

/// Each reference of `analysis` as `name kind receiver line`.
fn refs_shown(analysis: &FileAnalysis) -> Vec<String> {
    analysis
        .refs
        .iter()
        .map(|r| {
            let on = r.receiver.as_str().unwrap_or("-");
            format!("{} {} {on} {}", r.name, r.kind.as_str(), r.span.line)
        })
        .collect()
}

/// Fault from a fresh-user trial: `callers dyld_find` missed `ctypes/util.py`, which calls it
/// as `_dyld_find(name)` after `from ctypes.macholib.dyld import dyld_find as _dyld_find`:
/// the call was a reference to `_dyld_find`, a name nothing defines. A bare use of an alias
/// is a use of the name imported, on the import (JavaScript's `import { .. as .. }` and
/// Rust's `use .. as ..` too); a method or attribute of that name on a value and a Rust
/// path through an alias (`Rt::new()`) are not. A name on a module imported under an
/// alias (`np.array`) is on that module, an import.
#[test]
fn fault_a_call_through_an_imported_alias_named_the_alias() {
    let python = run(
        Language::Python,
        "import numpy as np\nfrom ctypes.macholib.dyld import dyld_find as _dyld_find, framework_find\n\ndef find(name):\n    np.array(name)\n    obj._dyld_find(name)\n    return _dyld_find(name) or framework_find(name)\n",
    );
    assert_eq!(
        refs_shown(&python),
        [
            "dyld_find import - 1",
            "framework_find import - 1",
            "array call imported 4",
            "_dyld_find call other 5",
            "dyld_find call imported 6",
            "framework_find call - 6",
        ]
    );
    let javascript = run(
        Language::JavaScript,
        "import { parse as parseUrl } from './url.js';\nparseUrl(x);\n",
    );
    assert_eq!(
        refs_shown(&javascript),
        ["parse import - 0", "parse call imported 1"]
    );
    let rust = run(
        Language::Rust,
        "use crate::read::{resolve as resolve_path, open};\nuse crate::rt::Runtime as Rt;\nuse std::io::Write as _;\n\nfn f() {\n    resolve_path(\"a\");\n    open();\n    Rt::new();\n}\n",
    );
    assert_eq!(
        refs_shown(&rust),
        [
            "resolve import - 0",
            "open import - 0",
            "Runtime import - 1",
            "Write import - 2",
            "resolve call imported 5",
            "open call - 6",
            "Runtime type imported 7",
            "new call path 7"
        ]
    );
    let on: Vec<Option<&str>> = rust
        .refs
        .iter()
        .map(|r| r.receiver_name.as_deref())
        .collect();
    assert_eq!(
        on,
        [
            None,
            None,
            None,
            None,
            Some("resolve"),
            None,
            Some("Runtime"),
            Some("crate.rt.Runtime")
        ]
    );
}

/// Fault from two fresh-user trials: `loci refs _MAXLINE` said "no references" where
/// `http/client.py` reads it 26 times, and `refs DEFAULT_MAX_LINE_LENGTH` listed only the
/// `use` lines: a constant read by its name was no reference. An upper-case name read
/// (bare, on a module, in a macro's arguments, in a pattern) is one; its definition, a
/// parameter, a keyword argument's name and the names an import lists are not.
#[test]
fn fault_a_constant_read_by_its_name_was_no_reference() {
    let python = run(
        Language::Python,
        "import socket\nfrom os import O_RDONLY, SEEK_END as END\n_MAXLINE = 65536\n\ndef f(line, FLAG=1, *, MODE: int = 0):\n    if len(line) > _MAXLINE:\n        raise ValueError(KEY=1)\n    socket.socket(socket.AF_INET)\n    return O_RDONLY + END\n",
    );
    assert_eq!(
        refs_shown(&python),
        [
            "O_RDONLY import - 1",
            "SEEK_END import - 1",
            "int type - 4",
            "len call - 5",
            "_MAXLINE other - 5",
            "ValueError call - 6",
            "socket call imported 7",
            "AF_INET other imported 7",
            "O_RDONLY other - 8",
            "SEEK_END other imported 8",
        ]
    );
    let rust = run(
        Language::Rust,
        "use crate::consts::{MAX_BURST, OTHER};\nconst LIMIT: usize = 8;\n\nfn f(n: usize) -> bool {\n    assert!(n < MAX_BURST);\n    match n {\n        LIMIT => true,\n        _ => n > crate::consts::OTHER,\n    }\n}\n",
    );
    assert_eq!(
        refs_shown(&rust),
        [
            "MAX_BURST import - 0",
            "OTHER import - 0",
            "assert macro - 4",
            "MAX_BURST other - 4",
            "LIMIT other - 6",
            "OTHER other path 7",
        ]
    );
}

/// Fault from a session's own use: `loci refs _make_key` said "no references" where
/// `functools.py` reads it (`make_key = _make_key`), and `refs all_errors` missed
/// `except ftplib.all_errors`: a function, class or module-level value read by its name
/// was no reference. A name read as a value is one where the file binds it (defines it at
/// the top level or imports it) and no enclosing function binds it, or where it is read
/// from an imported module; the object of a member read (`os` and `os.path` in
/// `os.path.join`) is not. A bare name a function binds is its local, called or read
/// (`wraps(inner)` with a parameter `wraps`), but not in a parameter's default value
/// (`timer=default_timer`, read where the `def` is); a nested `def` is a definition; an
/// assignment's target is written, not read (`_make_key = inner`).
#[test]
fn fault_a_function_read_as_a_value_was_no_reference() {
    let python = run(
        Language::Python,
        "import ftplib, os\nfrom functools import wraps\n\ndef _make_key(args):\n    return args\n\ndefault_timer = _make_key\n\ndef cached(f, timer=default_timer):\n    make_key = _make_key\n    try:\n        os.path.join(f, timer)\n    except ftplib.all_errors:\n        pass\n    return wraps(f)\n\ndef shadowed(default_timer, wraps, timer=default_timer):\n    def inner():\n        return default_timer\n    global _make_key\n    _make_key = inner\n    wraps(inner)\n    return [default_timer, _make_key, inner()]\n",
    );
    assert_eq!(
        refs_shown(&python),
        [
            "wraps import - 1",
            "_make_key other - 6",
            "default_timer other - 8",
            "_make_key other - 9",
            "join call imported 11",
            "all_errors other imported 12",
            "wraps call - 14",
            "default_timer other - 16",
            "_make_key other - 22",
            "inner call - 22",
        ]
    );
}

/// Fault from a break-test: nix's `OFlag`, declared in `libc_bitflags! { pub struct OFlag:
/// c_int { .. } }`, was no symbol, and the body parsed as items made a struct `c_int` of
/// the flags' type: `symbol OFlag` found nothing. A `bitflags!`-style body is no Rust; its
/// `struct` names a struct.
#[test]
fn fault_a_struct_declared_in_a_bitflags_macro_was_no_symbol() {
    let text = "libc_bitflags! {\n    pub struct OFlag: c_int {\n        O_RDONLY;\n    }\n}\n\nbitflags::bitflags! {\n    #[derive(Default)]\n    pub struct Mode: u32 {\n        const READ = 1;\n    }\n    struct Bits: u8 {}\n}\n";
    let analysis = run(Language::Rust, text);
    let keys: Vec<(&str, u32)> = analysis
        .symbols
        .iter()
        .map(|s| (s.key.as_str(), s.span.line))
        .collect();
    assert_eq!(
        keys,
        [
            ("test#OFlag@struct", 1),
            ("test#Mode@struct", 8),
            ("test#Bits@struct", 11)
        ]
    );
    assert_eq!(analysis.symbols[0].signature, "pub struct OFlag: c_int {");
}

#[test]
fn an_import_is_scoped_to_the_definition_it_is_written_in() {
    let scopes = |analysis: &FileAnalysis| -> Vec<String> {
        analysis
            .imports
            .iter()
            .map(|i| {
                let scope = i.enclosing.map_or("-", |k| {
                    analysis.symbols[k as usize].qualified_name.as_str()
                });
                format!("{} {scope}", i.module)
            })
            .collect()
    };
    let rust = run(
        Language::Rust,
        "use crate::a::info;\nmod helpers;\nfn one() {\n    use crate::b::info;\n    info();\n}\nmod tests {\n    use super::*;\n    fn t() {\n        use crate::c::info;\n    }\n}\n",
    );
    assert_eq!(
        scopes(&rust),
        [
            "crate::a -",
            "self::helpers -",
            "crate::b one",
            // `super` in an inline module is the file's own module.
            "self tests",
            "crate::c tests.t",
        ]
    );
    let python = run(
        Language::Python,
        "import os\n\ndef one():\n    from .a import loads\n    return loads()\n\nclass C:\n    def m(self):\n        import json\n",
    );
    assert_eq!(scopes(&python), ["os -", ".a one", "json C.m"]);
}

#[test]
fn fault_an_alias_imported_in_one_function_renamed_calls_in_another() {
    let python = run(
        Language::Python,
        "def bar():\n    return 0\n\ndef f1():\n    from pkg.gamma import shared as bar\n    return bar()\n\ndef f2():\n    return bar()\n\ndef f3():\n    from pkg.delta import other as bar\n    return bar()\n",
    );
    assert_eq!(
        refs_shown(&python),
        [
            "shared import - 4",
            "shared call imported 5",
            "bar call - 8",
            "other import - 11",
            "other call imported 12",
        ]
    );
    // `as _` binds no name: an inferred type `_` is no use of `Write`.
    let rust = run(
        Language::Rust,
        "use std::fmt::Write as _;\n\nfn f(x: &[u8]) -> usize {\n    let v: Vec<_> = x.iter().collect();\n    v.len()\n}\n",
    );
    assert_eq!(
        refs_shown(&rust),
        [
            "Write import - 0",
            "Vec type - 3",
            "_ type - 3",
            "iter call other 3",
            "collect call other 3",
            "len call typed 4",
        ]
    );
}

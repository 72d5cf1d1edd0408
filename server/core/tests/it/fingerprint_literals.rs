//! Fingerprints see every edit to the text of a literal (strings with escapes, raw,
//! interpolated, byte and multiline strings, heredocs, regular expressions) in every
//! language, at symbol and at file level, and still ignore layout outside literals: a
//! Python string holding an escape must not hide edits to its text.

use loci_core::{AnalyzeOptions, FileAnalysis, Language, analyze};

use Language::{C, CSharp, Cpp, Go, Java, JavaScript, Php, Python, Ruby, Rust, Tsx, TypeScript};

fn run(language: Language, text: &str) -> FileAnalysis {
    analyze("test", language, text, &AnalyzeOptions::default())
}

/// The definition each row's code goes in, at `@`, and its qualified name. Each `¦` marks
/// where layout goes: nothing in the base text, a newline and indentation in the layout edit.
fn template(language: Language) -> (&'static str, &'static str) {
    match language {
        Python => ("def f(¦x¦):\n    y = 1\n    @\n", "f"),
        JavaScript | TypeScript | Tsx => ("function f(¦x¦) {\n  @\n}\n", "f"),
        Rust => ("fn f(¦x: u8¦) {\n    @\n}\n", "f"),
        Go => ("package p\n\nfunc f(¦x int¦) {\n\t@\n}\n", "f"),
        Java | CSharp => ("class A {\n  void f(¦int x¦) {\n    @\n  }\n}\n", "A.f"),
        C | Cpp => ("void f(¦int x¦) {\n  @\n}\n", "f"),
        Ruby => ("def f(¦x¦)\n  @\nend\n", "f"),
        Php => ("<?php\nfunction f(¦$x¦) {\n  @\n}\n", "f"),
        // The languages added since have no literal rows yet.
        other => panic!("no template for {}", other.name()),
    }
}

/// One language × literal kind: the code holding the literal, and an edit inside the
/// literal that replaces `from` (found exactly once) by `to`.
type Row = (
    Language,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const ROWS: &[Row] = &[
    (
        Python,
        "string with an escape",
        r#"return "a\nb""#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (
        Python,
        "spaces by an escape",
        r#"return " \nb""#,
        r#"" \n"#,
        r#""  \n"#,
    ),
    (
        Python,
        "raw string",
        r#"return r"a\nb""#,
        r#"r"a"#,
        r#"r"QQ"#,
    ),
    (
        Python,
        "f-string",
        r#"return f"a{x}\nb""#,
        r#"\nb"#,
        r#"\nQQ"#,
    ),
    (
        Python,
        "f-string format spec",
        r#"return f"{x:>8}""#,
        ">8",
        "<8",
    ),
    (
        Python,
        "byte string",
        r#"return b"a\nb""#,
        r#"b"a"#,
        r#"b"QQ"#,
    ),
    (
        Python,
        "raw byte string",
        r#"return rb"a\nb""#,
        r#"\nb"#,
        r#"\nQQ"#,
    ),
    (
        Python,
        "triple-quoted",
        "return \"\"\"one\n    two\\tthree\"\"\"",
        "two",
        "TWO",
    ),
    (
        Python,
        "triple-quoted, indent",
        "return \"\"\"one\n    two\\t\"\"\"",
        "\n    two",
        "\n  two",
    ),
    (
        JavaScript,
        "string with an escape",
        r#"return "a\nb";"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (
        JavaScript,
        "String.raw template",
        r#"return String.raw`a\nb`;"#,
        "`a",
        "`QQ",
    ),
    (
        JavaScript,
        "template string",
        r#"return `a${x}\nb`;"#,
        r#"\nb"#,
        r#"\nQQ"#,
    ),
    (
        JavaScript,
        "multiline template",
        "return `one\n  two`;",
        "\n  two",
        "\n    two",
    ),
    (
        JavaScript,
        "regular expression",
        r#"return /a\n b/i;"#,
        "/i",
        "/m",
    ),
    (
        TypeScript,
        "string with an escape",
        r#"return 'a\nb';"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (
        TypeScript,
        "template string",
        r#"return `a${x}\nb`;"#,
        r#"\nb"#,
        r#"\nQQ"#,
    ),
    (
        Tsx,
        "string with an escape",
        r#"return "a\nb";"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (
        Tsx,
        "template string",
        r#"return `a${x}\nb`;"#,
        r#"\nb"#,
        r#"\nQQ"#,
    ),
    (
        Tsx,
        "JSX attribute string",
        r#"return <a title="a b" />;"#,
        "a b",
        "a  b",
    ),
    (
        Rust,
        "string with an escape",
        r#"g("a\nb");"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (Rust, "raw string", r##"g(r#"a\n"b"#);"##, r#""b"#, r#""QQ"#),
    (
        Rust,
        "raw string, hashes",
        r#"g(r"a");"#,
        r#"r"a""#,
        r##"r#"a"#"##,
    ),
    (
        Rust,
        "raw to raw byte string",
        r#"g(r"a\nb");"#,
        r#"r""#,
        r#"br""#,
    ),
    (Rust, "byte string", r#"g(b"a\nb");"#, r#"a\n"#, r#"QQ\n"#),
    (
        Rust,
        "string to byte string",
        r#"g("a\nb");"#,
        r#""a"#,
        r#"b"a"#,
    ),
    (
        Rust,
        "string to C string",
        r#"g("a\nb");"#,
        r#""a"#,
        r#"c"a"#,
    ),
    (
        Rust,
        "format string",
        r#"g(format!("a {x}\n"));"#,
        "{x}",
        "{x:?}",
    ),
    (
        Rust,
        "multiline string",
        "g(\"one\n    two\");",
        "\n    two",
        "\n  two",
    ),
    (Rust, "character", r"g('\n');", r"\n", r"\t"),
    (
        Go,
        "string with an escape",
        r#"g("a\nb")"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (Go, "raw string", r#"g(`a\nb`)"#, r#"a\n"#, r#"QQ\n"#),
    (
        Go,
        "multiline raw string",
        "g(`one\n  two`)",
        "\n  two",
        "\n    two",
    ),
    (Go, "rune", r"g('\n')", r"\n", r"\t"),
    (
        Java,
        "string with an escape",
        r#"g("a\nb");"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (
        Java,
        "text block",
        "g(\"\"\"\n      one\\t\n        two\"\"\");",
        "two",
        "TWO",
    ),
    (
        Java,
        "text block, indent",
        "g(\"\"\"\n      one\\t\n        two\"\"\");",
        "\n        two",
        "\n  two",
    ),
    (Java, "character", r"g('\n');", r"\n", r"\t"),
    (
        C,
        "string with an escape",
        r#"g("a\nb");"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (C, "wide string", r#"g(L"a\nb");"#, r#"a\n"#, r#"QQ\n"#),
    (
        C,
        "concatenated strings",
        r#"g("a\n" "b");"#,
        r#""b""#,
        r#""QQ""#,
    ),
    (C, "string in a macro", "#define M \"a b\"", "a b", "a  b"),
    (C, "character", r"g('\n');", r"\n", r"\t"),
    (
        Cpp,
        "string with an escape",
        r#"g("a\nb");"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (Cpp, "raw string", r#"g(R"x(a\n b)x");"#, " b", "  b"),
    (
        Cpp,
        "raw string, delimiter",
        r#"g(R"x(a)x");"#,
        r#"R"x(a)x""#,
        r#"R"y(a)y""#,
    ),
    (Cpp, "UTF-8 raw string", r#"g(u8R"(a b)");"#, "a b", "a  b"),
    (Cpp, "user-defined literal", r#"g("a\nb"_s);"#, "_s", "_t"),
    (Cpp, "string in a macro", "#define M \"a b\"", "a b", "a  b"),
    (
        CSharp,
        "string with an escape",
        r#"g("a\nb");"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (
        CSharp,
        "verbatim string",
        r#"g(@"a\n ""b""");"#,
        r#" ""b"#,
        r#"  ""b"#,
    ),
    (
        CSharp,
        "interpolated string",
        r#"g($"a{x}\nb");"#,
        r#"\nb"#,
        r#"\nQQ"#,
    ),
    (
        CSharp,
        "interpolation format",
        r#"g($"{x:F2}");"#,
        "F2",
        "F3",
    ),
    (
        CSharp,
        "verbatim interpolated",
        r#"g($@"a{x} \n b");"#,
        " b",
        "  b",
    ),
    (
        CSharp,
        "raw string",
        "g(\"\"\"\n  raw \"b\" c\n  \"\"\");",
        "\" c",
        "\"  c",
    ),
    (
        CSharp,
        "interpolated raw string",
        r#"g($$"""a{{x}} {b}""");"#,
        "{b}",
        "{c}",
    ),
    (CSharp, "UTF-8 string", r#"g("a b"u8);"#, "a b", "a  b"),
    (
        Ruby,
        "string with an escape",
        r#"g("a\nb #{x}")"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (Ruby, "single-quoted string", r"g('a\'b')", r"\'b", r"\'QQ"),
    (Ruby, "single- to double-quoted", "g('a')", "'a'", "\"a\""),
    (Ruby, "percent string", "g(%q(a b))", "%q(", "%Q("),
    (
        Ruby,
        "heredoc",
        "y = <<~EOS\n    a #{x} \\n b\n    c\n  EOS",
        " b\n",
        " QQ\n",
    ),
    (
        Ruby,
        "heredoc, blank line",
        "y = <<~EOS\n    a #{x} \\n b\n    c\n  EOS",
        "\n    c",
        "\n\n    c",
    ),
    (Ruby, "regular expression flags", r"g(/a\n b/i)", "/i", "/m"),
    (Ruby, "symbol", r#"g(:"a b")"#, "a b", "a  b"),
    (
        Php,
        "string with an escape",
        r#"return "a\n{$x} b";"#,
        r#"a\n"#,
        r#"QQ\n"#,
    ),
    (
        Php,
        "single-quoted string",
        r"return 'a\'b';",
        r"\'b",
        r"\'QQ",
    ),
    (
        Php,
        "heredoc",
        "return <<<EOT\n    a {$x} \\n b\n    c\n    EOT;",
        " b\n",
        " QQ\n",
    ),
    (
        Php,
        "heredoc, blank line",
        "return <<<EOT\n    a {$x} \\n b\n    c\n    EOT;",
        "\n    c",
        "\n\n    c",
    ),
    (
        Php,
        "heredoc, closing indent",
        "return <<<EOT\n    a {$x} \\n b\n    c\n    EOT;",
        "    EOT",
        "  EOT",
    ),
    (
        Php,
        "nowdoc",
        "return <<<'EOT'\n    raw \\n b\n    c\n    EOT;",
        " b\n",
        " QQ\n",
    ),
    (
        Php,
        "nowdoc, blank line",
        "return <<<'EOT'\n    raw \\n b\n    c\n    EOT;",
        "\n    c",
        "\n\n    c",
    ),
];

/// The file fingerprint and `symbol`'s body fingerprint of `text`.
fn fingerprints(language: Language, text: &str, symbol: &str) -> (String, String) {
    let analysis = run(language, text);
    let body = analysis
        .symbols
        .iter()
        .find(|s| s.qualified_name == symbol)
        .map_or_else(
            || format!("no symbol {symbol}"),
            |s| s.body_fingerprint.clone(),
        );
    (analysis.fingerprint, body)
}

/// Every row: an edit inside the literal changes the file's and the symbol's fingerprint;
/// layout outside it (the `¦` marks) changes neither.
#[test]
fn every_edit_to_a_literals_text_changes_fingerprints_and_layout_does_not() {
    let mut faults = Vec::new();
    for &(language, kind, code, from, to) in ROWS {
        let name = format!("{} {kind}", language.name());
        let (src, symbol) = template(language);
        let src = src.replace('@', code);
        let base = src.replace('¦', "");
        let layout = src.replace('¦', "\n\t    ");
        assert_eq!(
            base.matches(from).count(),
            1,
            "{name}: `from` once in {base}"
        );
        let edited = base.replacen(from, to, 1);
        assert_eq!(
            run(language, &base).error_nodes,
            0,
            "{name}: the base parses"
        );
        assert_eq!(
            run(language, &edited).error_nodes,
            0,
            "{name}: the edit parses"
        );
        let (file, body) = fingerprints(language, &base, symbol);
        assert!(!body.starts_with("no symbol"), "{name}: {body}");
        let (edited_file, edited_body) = fingerprints(language, &edited, symbol);
        let (layout_file, layout_body) = fingerprints(language, &layout, symbol);
        if file == edited_file {
            faults.push(format!("{name}: file fingerprint kept"));
        }
        if body == edited_body {
            faults.push(format!("{name}: symbol fingerprint kept"));
        }
        if file != layout_file {
            faults.push(format!("{name}: layout changed the file fingerprint"));
        }
        if body != layout_body {
            faults.push(format!("{name}: layout changed the symbol fingerprint"));
        }
    }
    assert_eq!(faults, Vec::<String>::new());
}

/// `"a\nb"` → `"QQ\nb"` in Python changed neither fingerprint (text of a `string_content`
/// holding an `escape_sequence` lies between its children).
#[test]
fn fault_python_string_with_an_escape_hid_edits_to_its_text() {
    let before = run(Python, "def f():\n    return \"a\\nb\"\n");
    let after = run(Python, "def f():\n    return \"QQ\\nb\"\n");
    assert_ne!(before.fingerprint, after.fingerprint);
    assert_ne!(
        before.symbols[0].body_fingerprint,
        after.symbols[0].body_fingerprint
    );
    assert_eq!(
        before.symbols[0].signature_fingerprint,
        after.symbols[0].signature_fingerprint
    );
}

/// Outside literals, a hidden token's text counts and its layout does not: a
/// `macro_rules!` repetition's separator lies between the tree's nodes, and so do C's line
/// continuations; C's `#  define` is its kind, `#define`, with layout.
#[test]
fn hidden_tokens_outside_literals_are_text_and_their_layout_is_not() {
    let file = |language, text: &str| run(language, text).fingerprint;
    let rust = "macro_rules! m { ($($x:expr),*) => { $($x);* }; }\n";
    assert_ne!(file(Rust, rust), file(Rust, &rust.replace("),*)", ");*)")));
    assert_eq!(
        file(Rust, rust),
        file(Rust, &rust.replace("),*)", ") ,\n    *)"))
    );
    let c = "int x = 1 + 2;\n#define M 1\n";
    assert_eq!(file(C, c), file(C, &c.replace("1 + 2", "1 \\\n  + 2")));
    assert_eq!(file(C, c), file(C, &c.replace("#define", "#  define")));
}

//! Secondary code: test, example and vendored code, which uses or copies the code a
//! repository is about. Retrieval ranks it after the rest unless a question asks for it,
//! the code-text indexes keep it apart, and embeddings leave it out.

/// Code that is not the code under test: it uses or copies that code, so a question's
/// words match it as often, and in short names more densely, than the code it is about
/// (`UrlParseTestCase.test_parse_fragments` would outrank `urllib.parse.urlparse` for
/// "parse a URL": every method of the test class carries the class's words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secondary {
    /// Test code ([`is_test_path`]).
    Test,
    /// Examples and demos: an `examples`, `example`, `demo` or `demos` folder (Cargo's
    /// example targets; GitHub Linguist's `documentation.yml` counts such folders as docs).
    Example,
    /// Vendored code: a `vendor`, `vendored`, `_vendor`, `third_party`, `third-party` or
    /// `node_modules` folder (GitHub Linguist's `vendor.yml`; pip's `_vendor`).
    Vendored,
}

impl Secondary {
    /// The signal a demoted item carries.
    pub fn signal(self) -> &'static str {
        match self {
            Secondary::Test => "test code, and the question is not about tests",
            Secondary::Example => "example code, and the question is not about examples",
            Secondary::Vendored => "vendored code, and the question is not about vendored code",
        }
    }
}

/// The kind of secondary code a repo-relative path holds, by its folders and file name
/// ([`Secondary`]; vendored first: a vendored package's tests are vendored code).
pub fn secondary_code(path: &str) -> Option<Secondary> {
    let folders: Vec<&str> = path.split('/').collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    if folders.iter().any(|f| {
        matches!(
            *f,
            "vendor" | "vendored" | "_vendor" | "third_party" | "third-party" | "node_modules"
        )
    }) {
        return Some(Secondary::Vendored);
    }
    if is_test_path(path) {
        return Some(Secondary::Test);
    }
    if folders
        .iter()
        .any(|f| matches!(*f, "examples" | "example" | "demo" | "demos"))
    {
        return Some(Secondary::Example);
    }
    None
}

/// Whether a repo-relative path is test code by the common layouts: a `test`, `tests`,
/// `testing`, `__tests__`, `spec` or `specs` folder, or one named `*_test` / `*_tests`
/// (CPython's `idlelib/idle_test`); or a file named `test.*` or `tests.*` (a Rust test
/// module beside its code: `mod tests;` in `src/pool/tests.rs`), `test_*` or `*_test.*`
/// (pytest's default discovery; Go's `*_test.go`), `*.test.*` / `*.spec.*` (Jest's default
/// `testMatch`), `*_spec.*` (RSpec), `*Test.*` / `*Tests.*` (Maven Surefire's default
/// includes, JUnit and NUnit naming).
pub fn is_test_path(path: &str) -> bool {
    let mut parts = path.split('/').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            let stem = part.split('.').next().unwrap_or(part);
            return stem == "test"
                || stem == "tests"
                || stem.starts_with("test_")
                || stem.ends_with("_test")
                || stem.ends_with("_spec")
                || stem.ends_with("Test")
                || stem.ends_with("Tests")
                || part.contains(".test.")
                || part.contains(".spec.");
        }
        if matches!(
            part,
            "test" | "tests" | "testing" | "__tests__" | "spec" | "specs"
        ) || part.ends_with("_test")
            || part.ends_with("_tests")
        {
            return true;
        }
    }
    false
}

/// The name of the code a test file tests, by the common layouts' file names (the tests of
/// `zero.rs` are `tests/zero.rs`, `test_zero.py`, `zero_test.go`, `zero.test.ts`,
/// `zero_spec.rb`, `ZeroTest.java`; a `tests.rs` or `test.rs` beside code tests its
/// folder's module; a test package's own file is named as its folder, `test_json/__init__.py`
/// tests `json`), to compare with [`subject_name`] by [`same_name`]; `None` for a path that
/// is not a test file, or a test file named after nothing (`tests/__init__.py`).
pub fn tested_name(path: &str) -> Option<&str> {
    if !is_test_path(path) {
        return None;
    }
    let (folder, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.split('.').next().unwrap_or(file);
    let folder = folder.rsplit('/').next().unwrap_or(folder);
    let named = match stem {
        "test" | "tests" => folder,
        _ => {
            let stem = if matches!(stem, "__init__" | "mod" | "index") {
                folder
            } else {
                stem
            };
            ["test_", "tests_"]
                .iter()
                .find_map(|p| stem.strip_prefix(p))
                .or_else(|| {
                    ["_test", "_tests", "_spec", "Test", "Tests"]
                        .iter()
                        .find_map(|s| stem.strip_suffix(s))
                })
                .unwrap_or(stem)
        }
    };
    let named = named.trim_matches('_');
    (!named.is_empty()
        && !matches!(
            named,
            "test" | "tests" | "init" | "main" | "mod" | "lib" | "conftest"
        ))
    .then_some(named)
}

/// The name a file's code goes by: its file name without extension, or its folder's for a
/// package's or module's own file (`__init__.py`, `mod.rs`, `index.js`).
pub fn subject_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    if matches!(stem, "__init__" | "mod" | "index") {
        parts.next().unwrap_or(stem)
    } else {
        stem
    }
}

/// Whether two names of code are the same name in different conventions: equal but for
/// case, `_` and `-` (`header_value_parser`, `HeaderValueParser`).
pub fn same_name(a: &str, b: &str) -> bool {
    let plain = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    plain(a) == plain(b)
}

/// Whether the symbol `key` (`path#qualified@kind`) is inside a module named `tests` or
/// `test` (Rust's `#[cfg(test)] mod tests`): test code in a file of code.
pub fn in_test_module(key: &str) -> bool {
    let (segments, _) = scopes(key);
    segments[..segments.len() - 1]
        .iter()
        .any(|s| test_module_name(s))
}

/// Whether code whose enclosing definition is `key` is test code in a file of code: inside
/// a test module ([`in_test_module`]) or written directly in one (its `use` lines).
pub fn written_in_test_module(key: &str) -> bool {
    let (segments, kind) = scopes(key);
    in_test_module(key)
        || (kind == "module" && segments.last().is_some_and(|s| test_module_name(s)))
}

/// The qualified name's segments of a symbol key (`path#a.b@kind`), and its kind.
fn scopes(key: &str) -> (Vec<&str>, &str) {
    let qualified = key.split_once('#').map_or(key, |(_, q)| q);
    let (qualified, kind) = qualified.rsplit_once('@').unwrap_or((qualified, ""));
    (qualified.split('.').collect(), kind)
}

/// Rust's names for a module of tests.
fn test_module_name(name: &str) -> bool {
    matches!(name, "tests" | "test")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_an_import_in_a_test_module_was_no_test_code() {
        assert!(written_in_test_module("src/app.rs#tests@module"));
        assert!(written_in_test_module("src/app.rs#outer.test@module"));
        assert!(written_in_test_module("src/app.rs#tests.helper@function"));
        assert!(!written_in_test_module("src/app.rs#testing@module"));
        assert!(!written_in_test_module("src/app.rs#run@function"));
    }

    #[test]
    fn a_definition_in_a_tests_module_is_test_code() {
        assert!(in_test_module(
            "rand/src/rng.rs#tests.test_random_range_panic_int@function"
        ));
        assert!(in_test_module("a.rs#outer.test.helper@function"));
        assert!(!in_test_module("rand/src/rng.rs#Rng.random_bool@method"));
        assert!(!in_test_module("a.rs#tests@module"));
        assert!(!in_test_module("tests/it.rs#Tests.run@method"));
    }

    #[test]
    fn test_paths_by_the_common_layouts() {
        for p in [
            "test/test_urllib.py",
            "server/engine/tests/context.rs",
            "src/__tests__/app.js",
            "pkg/parse_test.go",
            "web/app.test.ts",
            "spec/models/user_spec.rb",
            "src/test/java/FooTest.java",
            "lib/test_utils.py",
            "rayon-core/src/thread_pool/test.rs",
            "src/pool/tests.rs",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "urllib/request.py",
            "src/testament.rs",
            "contest/main.go",
            "attest.py",
            "src/latest.rs",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn tested_names_by_the_common_layouts() {
        for (test, code) in [
            (
                "crossbeam-channel/tests/zero.rs",
                "crossbeam-channel/src/flavors/zero.rs",
            ),
            ("test/test_shlex.py", "shlex.py"),
            ("pkg/parse_test.go", "pkg/parse.go"),
            ("web/app.test.ts", "web/app.ts"),
            ("spec/models/user_spec.rb", "app/models/user.rb"),
            ("src/test/java/FooTest.java", "src/main/java/Foo.java"),
            (
                "chrono/src/naive/datetime/tests.rs",
                "chrono/src/naive/datetime/mod.rs",
            ),
            (
                "test/test_email/test__header_value_parser.py",
                "email/_header_value_parser.py",
            ),
            ("test/test_json/__init__.py", "json/__init__.py"),
        ] {
            let tested = tested_name(test).unwrap_or_else(|| panic!("{test}"));
            assert!(same_name(tested, subject_name(code)), "{test} {code}");
        }
        assert_eq!(tested_name("tests/__init__.py"), None);
        assert_eq!(tested_name("tests/conftest.py"), None);
        assert_eq!(tested_name("shlex.py"), None);
        assert!(!same_name(
            tested_name("test/test_shlex.py").unwrap(),
            "shutil"
        ));
    }
}

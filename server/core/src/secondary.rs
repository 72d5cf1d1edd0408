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

#[cfg(test)]
mod tests {
    use super::*;

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
}

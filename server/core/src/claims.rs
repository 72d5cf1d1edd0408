//! Claims: what a piece of markdown says about the code, extracted deterministically.
//!
//! Rules (design.md "Memory: claims"):
//! - Inline code spans (single or multiple backticks) outside fenced code blocks:
//!   - a **path** when the token has a `/` or ends in a file extension
//!     (`src/auth/login.py`, `server/core/`, `Cargo.toml`), with an optional `:LINE`;
//!     URLs, options (`--flag`), globs (`*`) and anything with spaces are not paths;
//!   - a **symbol** when it is an identifier call `name()`, a path `Type::method`
//!     (optionally with `()`), or a dotted name `module.func` whose last segment is not
//!     a file extension (`os.path.join`, `Store.open()`);
//!   - a **version** when it is `name@1.2.3`.
//! - In prose (outside code): `name@1.2.3` and "name version 1.2.3" are **version** claims.
//!
//! Spans are byte offsets into the markdown text; lines are zero-based.

use serde::{Deserialize, Serialize};

/// What a claim is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// A file or folder path.
    Path,
    /// A symbol (function, method, type).
    Symbol,
    /// A dependency at a version.
    Version,
}

impl ClaimKind {
    /// `path`, `symbol` or `version`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimKind::Path => "path",
            ClaimKind::Symbol => "symbol",
            ClaimKind::Version => "version",
        }
    }

    /// Parses [`ClaimKind::as_str`] output.
    pub fn parse(s: &str) -> Option<ClaimKind> {
        match s {
            "path" => Some(ClaimKind::Path),
            "symbol" => Some(ClaimKind::Symbol),
            "version" => Some(ClaimKind::Version),
            _ => None,
        }
    }
}

/// One claim found in markdown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// What it is about.
    pub kind: ClaimKind,
    /// The text as written, without backticks (`src/a.py:12`, `Store::open()`).
    pub text: String,
    /// The normalized target: a path without `./`, `:LINE` or a trailing `/`; a symbol
    /// with `::` written as `.` and without `()` (`Store.open`); a package name.
    pub target: String,
    /// The version, for version claims (`1.2.3`).
    pub version: Option<String>,
    /// The line, for `path:LINE` claims (one-based, as written).
    pub line_hint: Option<u32>,
    /// Byte offset of the claim's first byte (inside the backticks).
    pub start: u32,
    /// Byte offset one past its last byte.
    pub end: u32,
    /// Zero-based line of `start`.
    pub line: u32,
    /// Zero-based byte column of `start`.
    pub column: u32,
}

/// File extensions that make a backticked token a path even without a `/`.
const PATH_EXTENSIONS: &[&str] = &[
    "rs", "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "go", "java", "c",
    "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "cs", "rb", "php", "md", "markdown", "toml",
    "json", "yaml", "yml", "lock", "txt", "cfg", "ini", "sh", "sql", "html", "css", "scss", "xml",
    "mod", "sum", "gradle", "kt", "swift", "lua", "vim", "el", "scm", "proto", "graphql", "env",
];

/// Extracts every claim from `markdown`, in document order.
pub fn extract_claims(markdown: &str) -> Vec<Claim> {
    let mut claims = Vec::new();
    let bytes = markdown.as_bytes();
    let mut in_fence: Option<(u8, usize)> = None;
    let mut offset = 0usize;
    for (line_no, raw_line) in (0u32..).zip(markdown.split_inclusive('\n')) {
        let line = raw_line.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start();
        let fence = fence_marker(trimmed);
        match (in_fence, fence) {
            (None, Some(f)) => in_fence = Some(f),
            (Some((c, n)), Some((c2, n2)))
                if c == c2 && n2 >= n && trimmed.trim_end().bytes().all(|b| b == c) =>
            {
                in_fence = None
            }
            (Some(_), _) => {}
            (None, None) => scan_line(markdown, offset, line.len(), line_no, &mut claims),
        }
        offset += raw_line.len();
    }
    debug_assert!(offset == bytes.len());
    claims
}

/// ```` ``` ```` or `~~~` (three or more) at the start of a trimmed line.
fn fence_marker(trimmed: &str) -> Option<(u8, usize)> {
    let first = *trimmed.as_bytes().first()?;
    if first != b'`' && first != b'~' {
        return None;
    }
    let n = trimmed.bytes().take_while(|&b| b == first).count();
    (n >= 3).then_some((first, n))
}

fn scan_line(md: &str, line_start: usize, line_len: usize, line_no: u32, out: &mut Vec<Claim>) {
    let line = &md[line_start..line_start + line_len];
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut prose_start = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let ticks = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let open_end = i + ticks;
        // Find the matching closing run of exactly `ticks` backticks.
        let mut j = open_end;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let run = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                if run == ticks {
                    close = Some(j);
                    break;
                }
                j += run;
            } else {
                j += 1;
            }
        }
        let Some(close) = close else {
            i = open_end;
            continue;
        };
        scan_prose(line, prose_start, i, line_start, line_no, out);
        let inner = &line[open_end..close];
        let lead = inner.len() - inner.trim_start().len();
        let token = inner.trim();
        if !token.is_empty() {
            let start = line_start + open_end + lead;
            if let Some(mut claim) = classify_code(token) {
                claim.start = start as u32;
                claim.end = (start + token.len()) as u32;
                claim.line = line_no;
                claim.column = (open_end + lead) as u32;
                out.push(claim);
            }
        }
        i = close + ticks;
        prose_start = i;
    }
    scan_prose(line, prose_start, bytes.len(), line_start, line_no, out);
}

/// Version claims in prose: `name@1.2.3` and `name version 1.2.3`.
fn scan_prose(
    line: &str,
    from: usize,
    to: usize,
    line_start: usize,
    line_no: u32,
    out: &mut Vec<Claim>,
) {
    let text = &line[from..to];
    let words: Vec<(usize, &str)> = word_spans(text);
    for (k, &(pos, word)) in words.iter().enumerate() {
        let w = word.trim_end_matches(['.', ',', ';', ':', ')', '!', '?']);
        if let Some((name, version)) = split_at_version(w) {
            push_version(
                out,
                w,
                name,
                version,
                line_start + from + pos,
                from + pos,
                line_no,
            );
            continue;
        }
        if word == "version" && k >= 1 && k + 1 < words.len() {
            let (npos, name) = words[k - 1];
            let (vpos, v) = words[k + 1];
            let v = v.trim_end_matches(['.', ',', ';', ':', ')', '!', '?']);
            let v = v.strip_prefix('v').unwrap_or(v);
            if is_package_name(name) && is_version(v) {
                let end = vpos + words[k + 1].1.len() - (words[k + 1].1.len() - v.len());
                let whole = &text[npos..end.max(npos)];
                out.push(Claim {
                    kind: ClaimKind::Version,
                    text: whole.to_string(),
                    target: name.to_string(),
                    version: Some(v.to_string()),
                    line_hint: None,
                    start: (line_start + from + npos) as u32,
                    end: (line_start + from + end) as u32,
                    line: line_no,
                    column: (from + npos) as u32,
                });
            }
        }
    }
}

fn word_spans(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, &text[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out
}

fn push_version(
    out: &mut Vec<Claim>,
    text: &str,
    name: &str,
    version: &str,
    abs: usize,
    col: usize,
    line: u32,
) {
    out.push(Claim {
        kind: ClaimKind::Version,
        text: text.to_string(),
        target: name.to_string(),
        version: Some(version.to_string()),
        line_hint: None,
        start: abs as u32,
        end: (abs + text.len()) as u32,
        line,
        column: col as u32,
    });
}

/// `serde@1.0.200` → (`serde`, `1.0.200`); scoped npm names (`@types/node@20.1.0`) too.
fn split_at_version(token: &str) -> Option<(&str, &str)> {
    let at = token.rfind('@')?;
    if at == 0 {
        return None;
    }
    let (name, version) = (&token[..at], &token[at + 1..]);
    let version = version.strip_prefix('v').unwrap_or(version);
    (is_package_name(name) && is_version(version)).then_some((name, version))
}

fn is_package_name(s: &str) -> bool {
    let body = s.strip_prefix('@').unwrap_or(s);
    !body.is_empty()
        && body
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !body.contains("//")
}

/// `1.2`, `1.2.3`, `1.2.3-rc.1`: at least major.minor, digits first.
fn is_version(s: &str) -> bool {
    let core = s.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() >= 2
        && parts.len() <= 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// Classifies the content of one code span (positions filled in by the caller).
fn classify_code(token: &str) -> Option<Claim> {
    let claim = |kind, target: String, version: Option<String>, line_hint| Claim {
        kind,
        text: token.to_string(),
        target,
        version,
        line_hint,
        start: 0,
        end: 0,
        line: 0,
        column: 0,
    };
    if token.contains(char::is_whitespace) || token.starts_with('-') {
        return None;
    }
    if let Some((name, version)) = split_at_version(token) {
        return Some(claim(
            ClaimKind::Version,
            name.into(),
            Some(version.into()),
            None,
        ));
    }
    // Symbols: name(), Type::method(), module.func(), with optional arguments in parens.
    let (base, called) = match token.find('(') {
        // Arguments that are literals make it a code snippet (`require('./x')`), not a
        // claim about a symbol.
        Some(p) if token.ends_with(')') && token[p..].contains(['\'', '"', '`']) => return None,
        Some(p) if token.ends_with(')') => (&token[..p], true),
        Some(_) => return None,
        None => (token, false),
    };
    if base.contains("::") {
        let segs: Vec<&str> = base.trim_start_matches("::").split("::").collect();
        if segs.iter().all(|s| is_ident(s)) && segs.len() >= 2 {
            let segs: Vec<&str> = segs
                .into_iter()
                .filter(|s| *s != "crate" && *s != "self" && *s != "super")
                .collect();
            return Some(claim(ClaimKind::Symbol, segs.join("."), None, None));
        }
        return None;
    }
    if called {
        let segs: Vec<&str> = base.split('.').collect();
        if segs.iter().all(|s| is_ident(s)) {
            return Some(claim(ClaimKind::Symbol, segs.join("."), None, None));
        }
        return None;
    }
    if is_path_like(token) {
        let (path, line_hint) = split_line_suffix(token);
        let path = path.trim_start_matches("./");
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        if path.is_empty() {
            return None;
        }
        return Some(claim(ClaimKind::Path, path.to_string(), None, line_hint));
    }
    let segs: Vec<&str> = token.split('.').collect();
    if segs.len() >= 2 && segs.iter().all(|s| is_ident(s)) {
        return Some(claim(ClaimKind::Symbol, token.to_string(), None, None));
    }
    None
}

fn split_line_suffix(token: &str) -> (&str, Option<u32>) {
    if let Some((p, l)) = token.rsplit_once(':')
        && let Ok(n) = l.parse::<u32>()
    {
        return (p, Some(n));
    }
    (token, None)
}

fn is_path_like(token: &str) -> bool {
    if token.contains("://")
        || token.contains(['*', '?', '<', '>', '|', '"', '\'', '{', '}', '$', '='])
    {
        return false;
    }
    let (path, _) = split_line_suffix(token);
    if path.starts_with('/') || path.starts_with('~') {
        return false; // absolute paths name the author's machine, not the repository
    }
    if path.contains('/') {
        return path.split('/').all(|seg| {
            seg.is_empty()
                || seg
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '@' | '+'))
        });
    }
    match path.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && PATH_EXTENSIONS.contains(&ext)
                && stem
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(md: &str) -> Vec<String> {
        extract_claims(md)
            .into_iter()
            .map(|c| {
                assert_eq!(
                    &md[c.start as usize..c.end as usize],
                    c.text,
                    "span matches text"
                );
                format!(
                    "{}:{} {} {:?} -> {}{}{}",
                    c.line,
                    c.column,
                    c.kind.as_str(),
                    c.text,
                    c.target,
                    c.version.map(|v| format!(" @ {v}")).unwrap_or_default(),
                    c.line_hint
                        .map(|l| format!(" line {l}"))
                        .unwrap_or_default()
                )
            })
            .collect()
    }

    #[test]
    fn paths_symbols_and_versions_in_code_spans() {
        let md = "Login lives in `src/auth/login.py` and `./src/auth/` (see `Cargo.toml`).\n\
                  Call `login()` or `AuthService::login` or `os.path.join`, then `Store.open()`.\n\
                  Pinned to `serde@1.0.200`; the error at `src/a.rs:42`.\n";
        assert_eq!(
            render(md),
            [
                "0:16 path \"src/auth/login.py\" -> src/auth/login.py",
                "0:40 path \"./src/auth/\" -> src/auth",
                "0:59 path \"Cargo.toml\" -> Cargo.toml",
                "1:6 symbol \"login()\" -> login",
                "1:19 symbol \"AuthService::login\" -> AuthService.login",
                "1:43 symbol \"os.path.join\" -> os.path.join",
                "1:64 symbol \"Store.open()\" -> Store.open",
                "2:11 version \"serde@1.0.200\" -> serde @ 1.0.200",
                "2:41 path \"src/a.rs:42\" -> src/a.rs line 42",
            ]
        );
    }

    #[test]
    fn versions_in_prose() {
        let md = "We use tokio@1.38.0 and requests version 2.31.0, not react v18.2.0.\n";
        assert_eq!(
            render(md),
            [
                "0:7 version \"tokio@1.38.0\" -> tokio @ 1.38.0",
                "0:24 version \"requests version 2.31.0\" -> requests @ 2.31.0",
            ]
        );
    }

    #[test]
    fn not_claims_urls_flags_globs_prose_code_and_fenced_blocks() {
        let md = "Run `cargo test --workspace` with `--json`; see `https://x.y/z.md`, `*.rs`, `a b`, `require('./x')`.\n\
                  ```rust\nlet x = `src/not_a_claim.rs`;\n```\n\
                  `x` and `1.5` and `/etc/passwd` and `e.g.` are not claims.\n";
        assert_eq!(render(md), Vec::<String>::new());
    }

    #[test]
    fn non_ascii_before_a_claim_gives_byte_offsets() {
        let md = "café 😀 — `src/é.py` and `naïve()`\n";
        let claims = extract_claims(md);
        assert_eq!(claims.len(), 2);
        assert_eq!(
            &md[claims[0].start as usize..claims[0].end as usize],
            "src/é.py"
        );
        assert_eq!(claims[0].column, 16);
        assert_eq!(claims[1].target, "naïve");
    }

    #[test]
    fn double_backtick_spans_and_crlf() {
        let md = "a ``src/x.rs`` b\r\nc `y.py`\r\n";
        assert_eq!(
            render(md),
            [
                "0:4 path \"src/x.rs\" -> src/x.rs",
                "1:3 path \"y.py\" -> y.py"
            ]
        );
    }
}

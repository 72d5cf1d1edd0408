//! Secrets: the files and text loci never indexes, searches, serves or stores.
//!
//! Two kinds of rule, both extended by `[secrets]` in `.loci/config.toml`:
//! - **Path globs** (gitignore syntax, against repo-relative paths, in any letter case):
//!   [`DEFAULT_PATHS`]. The walk skips a matching file without opening it (skip reason
//!   `secret`).
//! - **Token patterns**: regular expressions for credentials, [`DEFAULT_TOKENS`]. A
//!   pattern of a known shape (`AKIA…`, `ghp_…`) counts when its match's Shannon entropy
//!   reaches `secrets.min_entropy` bits per character and it does not say `EXAMPLE`, so
//!   placeholders such as `AKIAXXXXXXXXXXXXXXXX` do not; one with a `random` group
//!   (`glpat-…`, JWTs, Slack webhooks) judges that part so. A pattern with a `secret` (or
//!   `bare`, unquoted) capture group — the built-in assignments (`password=…`,
//!   `api_key: …`, `aws_secret_access_key = …`) and URL credentials
//!   (`scheme://user:password@host`) — counts when that value looks like a credential
//!   rather than code or a placeholder ([`plausible_secret`]). A scanned file holding one
//!   is skipped (reason `secret`); memory text holding one is refused, naming the rule and
//!   the position, and never stored (refusing rather than redacting: nothing of the
//!   secret reaches the database, not even a redacted neighbourhood, and the writer
//!   learns at once).
//!
//! Messages name the rule and the position, never the matched text.

use std::collections::BTreeMap;

use aho_corasick::AhoCorasick;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use loci_core::position::{Encoding, line_col_one_based};
use regex::Regex;

use crate::config::SecretsConfig;
use crate::{EngineError, Result};

/// Globs of files that hold secrets by their name: dotenv files, keys and certificates'
/// private halves, SSH identities, credential stores. Matched in any letter case (`.ENV`,
/// `Id_RSA`, `SERVER.PEM`), as are configured globs.
pub const DEFAULT_PATHS: &[&str] = &[
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.ppk",
    ".netrc",
    ".pgpass",
];

/// Credential rules by name. Shapes, from the issuers' documented formats (AWS access key
/// IDs, GitHub token prefixes, Slack token prefixes, PEM armour of RFC 7468, OpenAI- and
/// Anthropic-style `sk-` keys, Stripe live keys, Google API keys, npm tokens, PuTTY key
/// files, Slack webhooks, JWTs, GitLab and SendGrid tokens, whose `random` group is the
/// generated part judged by entropy); then Azure storage keys, `.npmrc` tokens, Docker
/// and HTTP `Authorization` credentials, assignments and URL passwords, whose `secret`
/// (quoted) or `bare` (unquoted) group is the value judged by [`plausible_secret`] and
/// whose `basic` group is base64 of `user:password`, the password judged so; `key` is the
/// key name and `host` a URL's host (see [`SecretRules::find_token`]).
pub const DEFAULT_TOKENS: &[(&str, &str)] = &[
    ("aws_access_key_id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("github_token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    ("github_pat", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    ("slack_token", r"\bxox[abposr]-[0-9]{8,}-[0-9A-Za-z-]{8,}"),
    // The PEM armour of RFC 7468 counts only with a key body after it: past what
    // separates lines in a file or in a string literal (white space, `\n` and `\r`
    // escapes, quotes, `+`, `,`, a `\` line continuation) and any RFC 1421 header
    // lines (`Proc-Type: 4,ENCRYPTED`, `DEK-Info: …`, PGP's `Version: …`), a run of 40
    // or more base64 characters (a body line is 64, RFC 7468 section 2; the smallest
    // key, Ed25519 in PKCS #8, is one such line), or two runs of 16 or more with a line's
    // separators between them (a body wrapped short, as in an AWS CLI example that
    // breaks a JSON string across lines). A header alone is a name for the
    // format: in a regex (`-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+`), a parser's
    // constant or prose, as in proptest's `crates_regex.rs`. GitHub's custom patterns
    // and Nosey Parker's `np.pem.1` also want a body, gitleaks 64 characters and an END
    // line; an END line is not required here, since a truncated key still gives its
    // material away.
    (
        "private_key",
        r#"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\\[rn]|[\s"'`+,\\])*(?:[A-Z][A-Za-z-]*:[^\r\n"'\\]*(?:\\[rn]|[\s"'`+,\\])+)*(?:[A-Za-z0-9+/]{40}|[A-Za-z0-9+/]{16,}(?:\\[rn]|[\s"'`+,\\])+[A-Za-z0-9+/]{16})"#,
    ),
    (
        "sk_api_key",
        r"\bsk-(?:(?:proj|svcacct|admin|ant-(?:api|admin)[0-9]{2})-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,}\b)",
    ),
    ("stripe_live_key", r"\b[rs]k_live_[0-9A-Za-z]{20,}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    // PuTTY's private-key file format: the version header, the key type, then the
    // `Encryption:` line (prose naming the format has no such second line). No `(?m)^`:
    // a line anchor in the set cost it its fast search (600 ms on the standard library).
    (
        "putty_private_key",
        r"PuTTY-User-Key-File-[23]: [A-Za-z0-9@.-]+\r?\nEncryption: ",
    ),
    // The rules below judge a `random` group (the part an issuer generates) by entropy
    // or a `secret`/`bare`/`basic` group by `plausible_secret`, so each runs as its own
    // regular expression (see `Compiled`).
    (
        "slack_webhook",
        r"https://hooks\.slack\.com/services/(?P<random>T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24})\b",
    ),
    (
        "jwt",
        r"\b(?P<random>eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,})",
    ),
    ("gitlab_token", r"\b(?P<random>glpat-[0-9A-Za-z_-]{20,})\b"),
    (
        "sendgrid_key",
        r"\b(?P<random>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})\b",
    ),
    // Azure storage account keys are 64 random bytes: 88 base64 characters.
    (
        "azure_storage_key",
        r"\b(?P<key>AccountKey)=(?P<secret>[A-Za-z0-9+/]{86}==)",
    ),
    // `.npmrc`: `//registry.example/:_authToken=…`, `:_auth=` (base64) and `:_password=`.
    (
        "npmrc_auth",
        r#"//[^\s:]+/:_(?:authToken|auth|password)[ \t]*=[ \t]*["']?(?P<secret>[A-Za-z0-9_+/=.-]{12,})"#,
    ),
    // Docker's `config.json`: `"auth": "<base64 of user:password>"`.
    (
        "docker_auth",
        r#""auth"[ \t]*:[ \t]*"(?P<basic>[A-Za-z0-9+/]{8,}={0,2})""#,
    ),
    (
        "authorization_bearer",
        r#"(?:[Aa]uthorization|AUTHORIZATION)["']?\]?[ \t]*[:=][ \t]*["']?(?:Bearer|bearer|BEARER)[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{12,}=*)"#,
    ),
    (
        "authorization_basic",
        r#"(?:[Aa]uthorization|AUTHORIZATION)["']?\]?[ \t]*[:=][ \t]*["']?(?:Basic|basic|BASIC)[ \t]+(?P<basic>[A-Za-z0-9+/]{8,}={0,2})"#,
    ),
    // Each word of the key names below is spelled in lowercase, UPPERCASE and Capitalized
    // (so `API_Key`, `apiKEY`, `PassWord`, `dbPassword` match) rather than matched with
    // `(?i)`: the literal prefilter gives up on that many case variants, and the search
    // then ran 10 to 20 times slower.
    (
        "aws_secret_access_key",
        r#"(?P<key>aws_?secret_?(?:access_?)?key|AWS_?SECRET_?(?:ACCESS_?)?KEY|[Aa]ws[Ss]ecret(?:[Aa]ccess)?[Kk]ey)["']?[ \t]*(?:=>|:=|=|:)[ \t]*[bruBRU]{0,2}["']?(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
    ),
    // A password is chosen by a person: six characters can be one (`hunter2`). `*_PASS`
    // and `*_PWD` (`MYSQL_PWD`, `DATABASE_PASS`) need the underscore: a bare `pwd` is the
    // working directory.
    (
        "password_assignment",
        r#"(?P<key>(?:[Pp]ass|PASS)(?:[Ww]ord|WORD|[Ww]d|WD|[Pp]hrase|PHRASE)|_(?:[Pp]ass|PASS|[Pp]wd|PWD))["']?[ \t]*(?:=>|:=|=|:)[ \t]*(?:[bruBRU]{0,2}(?P<secret>"[^"\r\n]*"|'[^'\r\n]*')|(?P<bare>[^\s"'`,;&\\]+))"#,
    ),
    // A token, key or client secret is generated: the rule wants 12 characters or more.
    (
        "secret_assignment",
        r#"(?P<key>(?:[Ss]ecret|SECRET)(?:[_-]?(?:[Kk]ey|KEY)(?:[_-]?(?:[Bb]ase|BASE))?)?|[Tt]oken|TOKEN|(?:[Aa]pi|API)[_-]?(?:[Kk]ey|KEY)|(?:[Aa]ccess|ACCESS)[_-]?(?:[Kk]ey|KEY)|(?:[Pp]rivate|PRIVATE)[_-]?(?:[Kk]ey|KEY)|[Cc]redentials?|CREDENTIALS?)["']?[ \t]*(?:=>|:=|=|:)[ \t]*(?:[bruBRU]{0,2}(?P<secret>"[^"\r\n]{12,}"|'[^'\r\n]{12,}')|(?P<bare>[^\s"'`,;&\\]{12,}))"#,
    ),
    (
        "url_credentials",
        r#"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>\[\]]*:(?P<secret>[^\s:/?#@"'<>\[\]]+)@(?P<host>[A-Za-z0-9._-]+)"#,
    ),
];

/// Words that stand in for a credential rather than being one, compared lowercased with
/// the value's letters (digits and punctuation removed): a value whose letters are
/// mostly (at least [`PLACEHOLDER_SHARE`]) these words is a placeholder. Documentation
/// and tests write `password = "changeme"`, `token: your_token_here`, `test1234`,
/// `xxxxxxxx`; `realpass9` and `S3cr3tPass` are mostly other letters, so they count.
pub const PLACEHOLDERS: &[&str] = &[
    "pass",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "key",
    "api",
    "auth",
    "access",
    "private",
    "credential",
    "sample",
    "changeme",
    "change",
    "changeit",
    "your",
    "my",
    "here",
    "value",
    "insert",
    "dummy",
    "fake",
    "mock",
    "test",
    "demo",
    "foo",
    "bar",
    "xxx",
    "abcd",
    "abc",
    "qwerty",
];

/// The share of a value's letters that [`PLACEHOLDERS`] must cover for it to be a
/// placeholder (`realpass9`: `pass` covers 4 of its 8 letters, so it is not one).
pub const PLACEHOLDER_SHARE: f64 = 0.6;

/// Character sequences that make any value containing them a placeholder (compared
/// lowercased with the whole value): `1234`, `a1b2c3`, `sk-xxxx...`, and the markers
/// documentation puts inside realistic values (AWS's `…EXAMPLEKEY`, `eyJra456defEXAMPLE`).
pub const PLACEHOLDER_SEQUENCES: &[&str] = &[
    "...",
    "1234",
    "a1b2c3",
    "1a2b3c",
    "example",
    "placeholder",
    "redacted",
    // An AWS Signature V4 credential scope (a key ID, a date, a region, a service, then
    // `aws4_request`) names a key; it is not one.
    "aws4_request",
];

/// Words that, right before `token` in a key's name, make the token an identifier rather
/// than a credential: pagination cursors (`NextToken`, `nextPageToken`,
/// `ContinuationToken`), optimistic locks and idempotency keys (`LockToken`,
/// `ClientToken`, `IdempotencyToken`, `ChangeToken`), and paginator fields
/// (`input_token`, `output_token`).
pub const IDENTIFIER_TOKENS: &[&str] = &[
    "next",
    "page",
    "continuation",
    "pagination",
    "forward",
    "backward",
    "prev",
    "previous",
    "start",
    "resume",
    "sync",
    "lock",
    "change",
    "update",
    "idempotency",
    "client",
    "request",
    "input",
    "output",
    "cancel",
    "cancellation",
    "action",
    "verification",
    "creation",
    "progress",
    "done",
    "result",
    "marker",
    "cursor",
];

/// Host names reserved for documentation and testing (RFC 2606, RFC 6761): credentials in
/// a URL to one of them are an example, not a secret.
const RESERVED_HOSTS: &[&str] = &["example", "example.com", "example.net", "example.org"];

/// Top-level domains reserved for documentation and testing (RFC 2606).
const RESERVED_TLDS: &[&str] = &[".example", ".test", ".invalid", ".localhost"];

/// Changes whenever what the rules accept changes without their text changing (the
/// value checks, case-insensitive globs), so the scan fingerprint changes with it.
const RULES_VERSION: &[u8] = b"4: placeholder share; random and basic groups; byte escapes";

/// A credential-shaped token found in some text. Holds where, never what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenMatch {
    /// The rule's name (`aws_access_key_id`, ...).
    pub rule: String,
    /// Byte offset of the match.
    pub offset: usize,
    /// One-based line (`\n`, `\r\n` and lone `\r` end lines).
    pub line: usize,
    /// One-based column, in characters.
    pub column: usize,
}

impl std::fmt::Display for TokenMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a secret ({}) at line {}, column {}",
            self.rule, self.line, self.column
        )
    }
}

/// The compiled rules of one workspace.
#[derive(Clone, Debug)]
pub struct SecretRules {
    fingerprint: String,
    /// The path globs, defaults first; checked when the rules are built, matched through
    /// `paths`, which is built on first use (0.46 ms of every process that opens a
    /// workspace, most of which never match a path: `symbol`, `impact`, `refs`).
    path_globs: Vec<String>,
    paths: std::sync::Arc<std::sync::OnceLock<Gitignore>>,
    names: Vec<String>,
    /// The token patterns, by name order; compiled on first use (every command opens a
    /// workspace, and compiling them took about a millisecond of each `loci symbol`).
    patterns: Vec<String>,
    compiled: std::sync::Arc<std::sync::OnceLock<Compiled>>,
    min_entropy: f64,
}

/// The token patterns prepared for search: one Aho-Corasick automaton over every rule's
/// literal prefixes (as `regex-syntax`'s extractor finds them: `AKIA`/`ASIA`, `ghp_`,
/// `Pass`/`pass`/`PASS`, ...), and each rule's regex, compiled the first time its prefix
/// occurs in a text. A rule whose matches start with no finite set of literals (a class
/// too wide to spell out, as a URL scheme's) runs on every text.
///
/// Compiling all the rules up front took 3.3 ms, a fifth of a `loci context` process on
/// the standard library, for texts in which most rules cannot match; the automaton
/// builds in about 0.3 ms.
#[derive(Debug)]
struct Compiled {
    prefixes: AhoCorasick,
    /// For each pattern of `prefixes`, the rules (indices into `tokens`) it can start.
    prefix_rules: Vec<Vec<usize>>,
    /// Rules without a finite set of prefixes, in order.
    unprefixed: Vec<usize>,
    /// Each rule's regex, by name order, compiled on first need.
    tokens: Vec<std::sync::OnceLock<Regex>>,
}

/// The bytes of a literal prefix the automaton looks for: longer prefixes are cut to
/// this many (a match still starts with the cut prefix), which merges the letter-case
/// spellings of the key-name rules (`Authorization…` alone spells 144) and keeps the
/// automaton a small DFA, about 2 ms per MiB of text.
const PREFIX_BYTES: usize = 4;

impl Compiled {
    fn new(patterns: &[String]) -> Compiled {
        let mut starts: BTreeMap<Vec<u8>, Vec<usize>> = BTreeMap::new();
        let mut unprefixed = Vec::new();
        for (rule, pattern) in patterns.iter().enumerate() {
            match literal_prefixes(pattern) {
                Some(prefixes) => {
                    for mut prefix in prefixes {
                        prefix.truncate(PREFIX_BYTES);
                        let rules = starts.entry(prefix).or_default();
                        if !rules.contains(&rule) {
                            rules.push(rule);
                        }
                    }
                }
                None => unprefixed.push(rule),
            }
        }
        let prefixes = AhoCorasick::new(starts.keys())
            .expect("a few dozen short literals fit the automaton's limits");
        Compiled {
            prefixes,
            prefix_rules: starts.into_values().collect(),
            unprefixed,
            tokens: patterns.iter().map(|_| Default::default()).collect(),
        }
    }

    /// The rules that can match in `text`, in order, each once.
    fn candidates(&self, text: &str) -> Vec<usize> {
        let mut seen = vec![false; self.tokens.len()];
        for &rule in &self.unprefixed {
            seen[rule] = true;
        }
        let mut left = seen.iter().filter(|s| !**s).count();
        for m in self.prefixes.find_overlapping_iter(text) {
            for &rule in &self.prefix_rules[m.pattern().as_usize()] {
                if !seen[rule] {
                    seen[rule] = true;
                    left -= 1;
                }
            }
            if left == 0 {
                break;
            }
        }
        (0..seen.len()).filter(|&r| seen[r]).collect()
    }

    /// Rule `rule`'s regex, compiled now if this is its first use.
    fn token(&self, rule: usize, patterns: &[String]) -> &Regex {
        self.tokens[rule].get_or_init(|| {
            Regex::new(&patterns[rule]).expect("validated when the rules were built")
        })
    }
}

/// The literals every match of `pattern` starts with (some may be only a prefix of the
/// match's start), or `None` when there is no finite, non-empty set of them.
fn literal_prefixes(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::parse(pattern).ok()?;
    let seq = regex_syntax::hir::literal::Extractor::new().extract(&hir);
    let literals = seq.literals()?;
    if literals.is_empty() || literals.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(literals.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// The matcher of the secret path `globs`, not yet built (building it compiles a set of
/// regular expressions), matching in any letter case: `.ENV`, `Id_RSA` and `SERVER.PEM`
/// are as secret as their lowercase spellings (case-insensitive file systems serve them
/// under either). Errors: the first glob that does not parse, named.
fn path_matcher(globs: &[String]) -> std::result::Result<GitignoreBuilder, String> {
    let mut builder = GitignoreBuilder::new(".");
    builder
        .case_insensitive(true)
        .map_err(|e| format!("secrets.paths: {e}"))?;
    for glob in globs {
        builder
            .add_line(None, glob)
            .map_err(|e| format!("secrets.paths: `{glob}`: {e}"))?;
    }
    Ok(builder)
}

/// Whether `token` judges a captured part (a `secret`, `bare`, `basic` or `random`
/// group) rather than its whole match.
fn is_valued(token: &Regex) -> bool {
    token
        .capture_names()
        .flatten()
        .any(|n| matches!(n, "secret" | "bare" | "basic" | "random"))
}

impl Default for SecretRules {
    fn default() -> Self {
        SecretRules::new(&SecretsConfig::default()).expect("the built-in secret rules compile")
    }
}

impl SecretRules {
    /// Compiles the defaults extended by `config`. An invalid glob or regular expression
    /// is a [`EngineError::Config`] error naming it.
    pub fn new(config: &SecretsConfig) -> Result<SecretRules> {
        let invalid = |message: String| EngineError::Config {
            path: std::path::PathBuf::from(".loci/config.toml"),
            message,
        };
        let path_globs: Vec<String> = DEFAULT_PATHS
            .iter()
            .copied()
            .chain(config.paths.iter().map(String::as_str))
            .map(String::from)
            .collect();
        // The built-in globs parse (a unit test holds them to it): only configured ones
        // are checked here, so a bad one is an error when the workspace opens.
        path_matcher(&config.paths).map_err(invalid)?;
        let mut merged: BTreeMap<String, String> = DEFAULT_TOKENS
            .iter()
            .map(|(n, p)| (n.to_string(), p.to_string()))
            .collect();
        for (name, pattern) in &config.tokens {
            merged.insert(name.clone(), pattern.clone());
        }
        merged.retain(|_, p| !p.is_empty());
        // The built-in patterns compile (a unit test holds them to it); a configured one is
        // compiled here, so a bad one is an error when the workspace opens.
        for (name, pattern) in &config.tokens {
            if !pattern.is_empty() {
                Regex::new(pattern).map_err(|e| invalid(format!("secrets.tokens.{name}: {e}")))?;
            }
        }
        let (names, patterns): (Vec<String>, Vec<String>) = merged.into_iter().unzip();
        let mut hasher = blake3::Hasher::new();
        hasher.update(RULES_VERSION);
        for glob in DEFAULT_PATHS
            .iter()
            .copied()
            .chain(config.paths.iter().map(String::as_str))
        {
            hasher.update(b"p\0").update(glob.as_bytes());
        }
        for (name, pattern) in names.iter().zip(&patterns) {
            hasher
                .update(b"t\0")
                .update(name.as_bytes())
                .update(b"\0")
                .update(pattern.as_bytes());
        }
        hasher.update(&config.min_entropy.to_le_bytes());
        Ok(SecretRules {
            fingerprint: hasher.finalize().to_hex()[..16].to_string(),
            path_globs,
            paths: Default::default(),
            names,
            patterns,
            compiled: Default::default(),
            min_entropy: config.min_entropy,
        })
    }

    /// A short hash of the rules: a scan rereads every file when it differs from the one
    /// the map was built with, so a new rule applies to files that did not change.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The glob that makes `path` (repo-relative, `/`-separated) a secret file, if one
    /// does; a `!glob` that re-includes it wins.
    pub fn path_rule(&self, path: &str) -> Option<String> {
        let path = path.trim_start_matches('/');
        if path.is_empty() {
            return None;
        }
        let paths = self.paths.get_or_init(|| {
            path_matcher(&self.path_globs)
                .and_then(|b| b.build().map_err(|e| e.to_string()))
                .unwrap_or_else(|e| {
                    // Checked when the rules were built; should building still fail,
                    // every path is a secret rather than none.
                    tracing::error!("secrets.paths: {e}; every path counts as a secret");
                    let mut all = GitignoreBuilder::new(".");
                    let _ = all.add_line(None, "*");
                    all.build().unwrap_or_else(|_| Gitignore::empty())
                })
        });
        match paths.matched_path_or_any_parents(path, false) {
            ignore::Match::Ignore(glob) => Some(glob.original().to_string()),
            _ => None,
        }
    }

    /// The first credential-shaped token in `text` (by position), if any.
    ///
    /// A rule without a value group counts a match whose Shannon entropy reaches
    /// `min_entropy` and that does not say `example`; one with a `random` group judges
    /// that group so (and not mostly [`PLACEHOLDERS`]), at the match's position. A rule
    /// with a `secret` group (or with `bare`, an unquoted value) judges only the captured
    /// value, by [`plausible_secret`]; one with a `basic` group decodes it from base64
    /// and judges the password of its `user:password`. A `host` group that names a
    /// documentation host (`example.com`, `*.test`, ...) makes the match an example.
    /// Except for `random` rules the position is the value's.
    pub fn find_token(&self, text: &str) -> Option<TokenMatch> {
        let compiled = self.compiled.get_or_init(|| Compiled::new(&self.patterns));
        let (rule, offset) = compiled
            .candidates(text)
            .into_iter()
            .filter_map(|i| {
                self.first_hit(compiled.token(i, &self.patterns), text)
                    .map(|offset| (i, offset))
            })
            .min_by_key(|&(i, offset)| (offset, i))?;
        // One-based line (`\n`, `\r\n` and a lone `\r` end one) and character column.
        let (line, column) = line_col_one_based(text, offset, Encoding::Utf32);
        Some(TokenMatch {
            rule: self.names[rule].clone(),
            offset,
            line,
            column,
        })
    }

    /// The byte offset of the first match of `token` in `text` that counts (see
    /// [`SecretRules::find_token`]).
    fn first_hit(&self, token: &Regex, text: &str) -> Option<usize> {
        if !is_valued(token) {
            return token
                .find_iter(text)
                .find(|m| {
                    entropy(m.as_str()) >= self.min_entropy
                        && !m.as_str().to_ascii_lowercase().contains("example")
                })
                .map(|m| m.start());
        }
        token.captures_iter(text).find_map(|caps| {
            if let Some(random) = caps.name("random") {
                let part = random.as_str();
                let lower = part.to_ascii_lowercase();
                let counts = entropy(part) >= self.min_entropy
                    && !lower.contains("example")
                    && !mostly_placeholder(&lower, &[]);
                return counts.then(|| caps.get(0).map_or(random.start(), |m| m.start()));
            }
            if let Some(basic) = caps.name("basic") {
                let counts = decode_base64(basic.as_str())
                    .and_then(|d| String::from_utf8(d).ok())
                    .and_then(|d| {
                        let (user, password) = d.split_once(':')?;
                        let printable = d.bytes().all(|b| (0x20..0x7f).contains(&b));
                        (printable && !user.is_empty())
                            .then(|| plausible_secret(password, self.min_entropy))
                    })
                    .unwrap_or(false);
                return counts.then_some(basic.start());
            }
            if caps.name("host").is_some_and(|h| reserved_host(h.as_str())) {
                return None;
            }
            let key = caps.name("key").map(|k| key_name(text, k.start(), k.end()));
            if key
                .as_ref()
                .is_some_and(|k| k.path_segment || k.identifier_token)
            {
                return None;
            }
            let (value, offset, bare) = match (caps.name("secret"), caps.name("bare")) {
                (Some(v), _) => {
                    let (value, offset) = unquote(v.as_str(), v.start());
                    (value, offset, false)
                }
                (None, Some(v)) => (v.as_str(), v.start(), true),
                (None, None) => return None,
            };
            // `private_key: Ed25519PrivateKey`, `token: TokenKind`: a value that repeats
            // its key's last word names a type or a field.
            // `"CopyProductToken": "copyproduct-abc5defgjkdji"`: a value spelled mostly from
            // its key's words (and placeholder words) is an identifier or an example.
            let names_itself = key.is_some_and(|k| {
                let lower = value.to_lowercase();
                lower.contains(&k.last_word) || mostly_placeholder(&lower, &k.words)
            });
            let counts = plausible_secret(value, self.min_entropy)
                && !names_itself
                && !(bare && looks_like_code(value));
            counts.then_some(offset)
        })
    }

    /// Why the file at `path` with `text` is a secret, in words, if it is: the glob, or
    /// the token rule and its position.
    pub fn file_reason(&self, path: &str, text: Option<&str>) -> Option<String> {
        if let Some(glob) = self.path_rule(path) {
            return Some(format!("matches the secret pattern `{glob}`"));
        }
        text.and_then(|t| self.find_token(t))
            .map(|m| format!("contains {m}"))
    }

    /// Refuses memory text holding a token: `Err(InvalidArgument)` naming `argument`, the
    /// rule and the position.
    pub fn refuse(&self, argument: &str, text: &str) -> Result<()> {
        match self.find_token(text) {
            None => Ok(()),
            Some(m) => Err(EngineError::InvalidArgument {
                name: argument.into(),
                message: format!(
                    "contains {m}; loci does not store credentials in memory. Remove it \
                     (or put a placeholder such as <TOKEN> in its place) and write again"
                ),
            }),
        }
    }
}

/// Shannon entropy of `s` in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts: BTreeMap<char, u32> = BTreeMap::new();
    let mut n = 0u32;
    for c in s.chars() {
        *counts.entry(c).or_insert(0) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = f64::from(n);
    counts
        .values()
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether `value`, the value of a credential-shaped assignment or URL, looks like a
/// real credential rather than a stand-in for one. It must be 6 to 512 characters without
/// white space; hold a letter and a digit or a symbol other than `_`, `-` and `.`;
/// not be mostly [`PLACEHOLDERS`] words nor hold a [`PLACEHOLDER_SEQUENCES`] one; not be a template or a reference to one (`${X}`,
/// `$X`, `{0}`, `<token>`, `%s`, `%(x)s`, `%X%`, `*`); not be a path (`/x`, `./x`,
/// `~/x`), a URL (`scheme://`) or an AWS resource name (`arn:`); not be spelled only in
/// `\xNN` escapes ([`only_byte_escapes`]); and have a Shannon entropy of at least
/// `min_entropy` bits per character, or 0.8 of the most its length allows when that is
/// less (a 7-character `hunter2` has at most log2(7) = 2.8).
pub fn plausible_secret(value: &str, min_entropy: f64) -> bool {
    let length = value.chars().count();
    if !(6..=512).contains(&length)
        || value.chars().any(char::is_whitespace)
        || only_byte_escapes(value)
    {
        return false;
    }
    let letter = value.chars().any(|c| c.is_alphabetic());
    let digit = value.chars().any(|c| c.is_ascii_digit());
    let symbol = value
        .chars()
        .any(|c| !c.is_alphanumeric() && !matches!(c, '_' | '-' | '.'));
    if !letter || !(digit || symbol) {
        return false;
    }
    let lower = value.to_lowercase();
    if PLACEHOLDER_SEQUENCES.iter().any(|p| lower.contains(p))
        || has_alphabet_run(&lower)
        || mostly_placeholder(&lower, &[])
        || is_template(value)
    {
        return false;
    }
    if value.starts_with(['/', '~'])
        || value.starts_with("./")
        || value.starts_with("arn:")
        || value.contains("://")
    {
        return false;
    }
    entropy(value) >= min_entropy.min(0.8 * (length as f64).log2())
}

/// Whether `value` is spelled only in `\xNN` escapes (`\x9b\xbe\x43…`): bytes written
/// out in code, not a credential someone typed or was issued.
///
/// The rule, on evidence: issued credentials (API keys, tokens, passwords) are printable
/// text, since they travel in headers, environment variables and configuration; raw key
/// bytes spelled escape by escape are what known-answer tests copy from an RFC's hex
/// dump (rustls' `let secret = b"\x9b\xbe…"` in `crypto/tls12.rs`, the TLS 1.2 PRF
/// vectors). A random key pasted from a program's output still counts: Python's `repr`
/// of random bytes shows the printable ones as characters (the key of Flask's
/// quickstart, `_5#y2L"F4Q8z\n\xec]/`, mixes both), and all 16 bytes of a random
/// 16-byte key are unprintable about once in 1,700 keys (161 of 256 byte values, to
/// the 16th power). So does a hexadecimal string (`SECRET_KEY_BASE=c3fc…`). gitleaks'
/// generic rule, whose value allows no `\`, does not see escaped bytes at all.
fn only_byte_escapes(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len().is_multiple_of(4)
        && bytes.chunks(4).all(|c| {
            c[0] == b'\\' && c[1] == b'x' && c[2].is_ascii_hexdigit() && c[3].is_ascii_hexdigit()
        })
}

/// Whether [`PLACEHOLDERS`] and `extra` (lowercase words, such as the key's) cover at
/// least [`PLACEHOLDER_SHARE`] of the ASCII letters of `lower` (a lowercased value),
/// digits and punctuation removed: `your_password_here`, `changeme123`, `test1234`,
/// `xxxxxxxx`, but not `realpass9` or `s3cr3tpass`.
fn mostly_placeholder(lower: &str, extra: &[String]) -> bool {
    let letters: Vec<u8> = lower.bytes().filter(u8::is_ascii_lowercase).collect();
    if letters.is_empty() {
        return false;
    }
    let mut covered = vec![false; letters.len()];
    for word in PLACEHOLDERS
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
        .filter(|w| !w.is_empty())
    {
        let word = word.as_bytes();
        for start in 0..letters.len().saturating_sub(word.len() - 1) {
            if letters[start..].starts_with(word) {
                covered[start..start + word.len()].fill(true);
            }
        }
    }
    covered.iter().filter(|&&c| c).count() as f64 >= PLACEHOLDER_SHARE * letters.len() as f64
}

/// Whether `lower` holds six or more consecutive letters or digits in alphabetical order
/// (`defghi`, `012345`): documentation's made-up values (`AB1C2defGHijkLMNo…`,
/// `0123456789abcdef`); a random value has one about once in 36^5 positions.
fn has_alphabet_run(lower: &str) -> bool {
    let mut run = 1;
    for w in lower.as_bytes().windows(2) {
        if w[0].is_ascii_alphanumeric() && w[1] == w[0] + 1 && w[1].is_ascii_alphanumeric() {
            run += 1;
            if run >= 6 {
                return true;
            }
        } else {
            run = 1;
        }
    }
    false
}

/// Whether `value` is a template or a reference rather than a literal: `${X}`, `$X`,
/// `$(cmd)`, `{0}`, `{{x}}`, `<x>`, `%s`, `%(name)s`, `%d`, `%X%` (but not a
/// percent-encoded byte such as `%40`), or a pattern or mask with `*` (`*.pem`,
/// `1*DIGIT`, `****`).
fn is_template(value: &str) -> bool {
    static TEMPLATE: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"[<>{}*]|\$[A-Za-z_({]|%[sr({]|%d(?:[^0-9A-Fa-f]|$)|%[A-Za-z_][A-Za-z0-9_]*%")
            .expect("the template pattern compiles")
    });
    TEMPLATE.is_match(value)
}

/// Whether an unquoted value is code rather than a literal: an identifier path
/// (`self.password`, `conf.SECRET_KEY`, `Config::TOKEN`), a call or an index
/// (`getpass()`, `tokens[0]`), or a value that does not start with a letter or digit
/// (`:Token`, `!vault`, `*anchor`, `==`).
fn looks_like_code(value: &str) -> bool {
    if !value.starts_with(|c: char| c.is_alphanumeric()) || value.contains(['(', ')', '[', ']']) {
        return true;
    }
    // `self.password`, `conf.SECRET_KEY`, `Config::TOKEN`.
    let parts: Vec<&str> = value.split(['.', ':']).filter(|p| !p.is_empty()).collect();
    let path = parts.len() > 1 && parts.iter().all(|p| loci_core::terms::is_identifier(p));
    // `DB_PASSWORD_V2`: a constant's name.
    let constant = loci_core::terms::is_identifier(value)
        && value.contains('_')
        && !value.chars().any(char::is_lowercase);
    path || constant
}

/// The most characters [`key_name`] walks back from a keyword for the rest of its name.
const MAX_KEY_NAME: usize = 128;

/// What [`key_name`] learns of the key an assignment rule matched.
struct KeyName {
    /// The key's last word, lowercased (`key` of `AppServerPrivateKey`, `token`,
    /// `password`), without a plural `s`.
    last_word: String,
    /// All the key's words of three letters or more, lowercased (`copy`, `product`,
    /// `token` of `CopyProductToken`).
    words: Vec<String>,
    /// The word before a last word `token` is one of [`IDENTIFIER_TOKENS`].
    identifier_token: bool,
    /// The whole name follows a `:` or `/`: a segment of an ARN or a path
    /// (`arn:aws:secretsmanager:…:secret:name`), not a key.
    path_segment: bool,
}

/// The whole name around the key match `start..end` of `text` (the match begins at the
/// keyword, so `DB_PASSWORD` and `nextPageToken` are found by walking back over
/// identifier characters), split into words at `_`, `-`, `.` and lower-to-upper case
/// changes.
fn key_name(text: &str, start: usize, end: usize) -> KeyName {
    let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let begin = text[..start]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| name_char(c))
        // A key name is short; the bound keeps a pathological line linear.
        .take(MAX_KEY_NAME)
        .last()
        .map_or(start, |(i, _)| i);
    let path_segment = text[..begin].ends_with([':', '/']);
    let mut words: Vec<String> = Vec::new();
    let mut previous: Option<char> = None;
    for c in text[begin..end].chars() {
        if matches!(c, '_' | '-' | '.') {
            words.push(String::new());
        } else {
            let camel = c.is_ascii_uppercase() && previous.is_some_and(|p| p.is_ascii_lowercase());
            if camel || words.is_empty() {
                words.push(String::new());
            }
            if let Some(w) = words.last_mut() {
                w.push(c.to_ascii_lowercase());
            }
        }
        previous = Some(c);
    }
    words.retain(|w| !w.is_empty());
    let last_word = words
        .last()
        .map(|w| {
            w.strip_suffix('s')
                .filter(|_| w != "pass")
                .unwrap_or(w)
                .to_string()
        })
        .unwrap_or_default();
    let identifier_token = last_word == "token"
        && words.len() >= 2
        && IDENTIFIER_TOKENS.contains(&words[words.len() - 2].as_str());
    KeyName {
        last_word,
        words: words.into_iter().filter(|w| w.len() >= 3).collect(),
        identifier_token,
        path_segment,
    }
}

/// `value` without the quotes around it, and its byte offset, given the offset of the
/// text with them.
fn unquote(value: &str, offset: usize) -> (&str, usize) {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return (inner, offset + 1);
        }
    }
    (value, offset)
}

/// Whether `host` is reserved for documentation and testing ([`RESERVED_HOSTS`],
/// [`RESERVED_TLDS`]).
fn reserved_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    RESERVED_HOSTS
        .iter()
        .any(|r| host == *r || host.ends_with(&format!(".{r}")))
        || RESERVED_TLDS.iter().any(|t| host.ends_with(t))
}

/// The bytes of standard base64 `text` (`A-Z a-z 0-9 + /`, optional `=` padding), or
/// `None` when it is not base64.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens are built from pieces so this file is not itself a secret to scanners.
    fn aws() -> String {
        ["AKIA", "Q7WJ2M5XRT3K9HBN"].concat()
    }

    /// The built-in token patterns compile: `find_token` compiles them on first need
    /// without checking again.
    #[test]
    fn the_built_in_token_patterns_compile() {
        let rules = SecretRules::new(&SecretsConfig::default()).unwrap();
        for p in &rules.patterns {
            Regex::new(p).unwrap();
        }
        assert!(rules.compiled.get().is_none(), "compiled before first use");
        let _ = rules.find_token("nothing secret here");
        assert!(rules.compiled.get().is_some());
    }

    /// The built-in path globs parse: opening a workspace checks only configured ones,
    /// and the matcher is built on first need.
    #[test]
    fn the_built_in_path_globs_parse() {
        let globs: Vec<String> = DEFAULT_PATHS.iter().map(|g| g.to_string()).collect();
        assert!(path_matcher(&globs).unwrap().build().is_ok());
        let rules = SecretRules::new(&SecretsConfig::default()).unwrap();
        assert!(rules.paths.get().is_none(), "built before first use");
        assert_eq!(rules.path_rule(".env").as_deref(), Some(".env*"));
    }

    /// Only the rules whose literal prefixes occur in a text are compiled for it, and
    /// the rules without such prefixes (a URL's scheme is a class, not a literal) run on
    /// every text; the answers are those of running every rule.
    #[test]
    fn a_token_rule_is_compiled_only_when_its_prefix_occurs() {
        let rules = SecretRules::default();
        let compiled_rules = |rules: &SecretRules| -> Vec<String> {
            let c = rules.compiled.get().unwrap();
            (0..c.tokens.len())
                .filter(|&i| c.tokens[i].get().is_some())
                .map(|i| rules.names[i].clone())
                .collect()
        };
        assert_eq!(
            rules.find_token("def parse(text): return text.split()"),
            None
        );
        assert_eq!(compiled_rules(&rules), ["url_credentials"]);
        let text = format!("x = 1\nkey = \"{}\"\n", aws());
        let hit = rules.find_token(&text).unwrap();
        assert_eq!(
            (hit.rule.as_str(), hit.line, hit.column),
            ("aws_access_key_id", 2, 8)
        );
        assert_eq!(
            compiled_rules(&rules),
            ["aws_access_key_id", "url_credentials"]
        );
        // Every rule, run on its own, finds what the prefiltered search finds. (The
        // credentials are built from pieces, so this file is no secret to a scan.)
        let password = ["db_pass", "word = 'Zq8#rT2!xv'"].concat();
        let url = ["https://admin:", "S3cr3tPassw0rd", "@db.internal.io/x"].concat();
        for (text, rule) in [
            (text.as_str(), Some("aws_access_key_id")),
            (password.as_str(), Some("password_assignment")),
            (url.as_str(), Some("url_credentials")),
            ("nothing to see", None),
        ] {
            let everything = rules
                .patterns
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    rules
                        .first_hit(&Regex::new(p).unwrap(), text)
                        .map(|offset| (offset, i))
                })
                .min()
                .map(|(offset, i)| (rules.names[i].clone(), offset));
            let found = rules.find_token(text).map(|t| (t.rule, t.offset));
            assert_eq!(found, everything, "{text}");
            assert_eq!(found.map(|f| f.0).as_deref(), rule, "{text}");
        }
    }

    /// Path globs are parsed when the rules are built (a bad one is a config error naming
    /// it) and compiled into a matcher on the first path asked about.
    #[test]
    fn path_globs_are_checked_up_front_and_compiled_on_first_use() {
        let bad = SecretsConfig {
            paths: vec!["vault/{a,b".into()],
            ..SecretsConfig::default()
        };
        let err = SecretRules::new(&bad).unwrap_err().to_string();
        assert!(err.contains("secrets.paths: `vault/{a,b`"), "{err}");
        let rules = SecretRules::default();
        assert!(rules.paths.get().is_none(), "built before first use");
        assert_eq!(rules.path_rule("deploy/.ENV").as_deref(), Some(".env*"));
        assert!(rules.paths.get().is_some());
        assert_eq!(rules.path_rule("src/env.py"), None);
    }

    /// A configured rule whose matches start with no literal (`.` is any character)
    /// still runs.
    #[test]
    fn a_configured_rule_without_a_literal_prefix_still_runs() {
        let config = SecretsConfig {
            tokens: [(
                "internal".to_string(),
                r"[a-z]{3}-INTERNAL-[0-9]{6}".to_string(),
            )]
            .into_iter()
            .collect(),
            ..SecretsConfig::default()
        };
        let rules = SecretRules::new(&config).unwrap();
        let hit = rules.find_token("id: abc-INTERNAL-123456").unwrap();
        assert_eq!((hit.rule.as_str(), hit.offset), ("internal", 4));
    }

    #[test]
    fn default_path_rules_match_dotenv_keys_and_identities_at_any_depth() {
        let rules = SecretRules::default();
        for path in [
            ".env",
            ".env.local",
            "deploy/.env.production",
            "certs/server.pem",
            "tls.key",
            "home/.ssh/id_rsa",
            "id_ed25519.pub",
        ] {
            assert!(rules.path_rule(path).is_some(), "{path}");
        }
        for path in [
            "src/env.rs",
            "keyboard.rs",
            "docs/keys.md",
            "environment.py",
        ] {
            assert_eq!(rules.path_rule(path), None, "{path}");
        }
    }

    #[test]
    fn secret_path_rules_match_in_any_letter_case() {
        let rules = SecretRules::default();
        for (path, glob) in [
            (".ENV", ".env*"),
            ("deploy/.Env.Production", ".env*"),
            ("home/.ssh/Id_RSA", "id_rsa*"),
            ("certs/SERVER.PEM", "*.pem"),
            ("TLS.Key", "*.key"),
            (".NETRC", ".netrc"),
        ] {
            assert_eq!(rules.path_rule(path).as_deref(), Some(glob), "{path}");
        }
        let config = SecretsConfig {
            paths: vec!["Vault/".into(), "!.env.EXAMPLE".into()],
            ..Default::default()
        };
        let rules = SecretRules::new(&config).unwrap();
        assert_eq!(rules.path_rule("vault/a.toml").as_deref(), Some("Vault/"));
        assert_eq!(rules.path_rule(".ENV.example"), None);
    }

    #[test]
    fn configured_paths_extend_and_negations_reinclude() {
        let config = SecretsConfig {
            paths: vec!["!.env.example".into(), "secrets/".into()],
            ..Default::default()
        };
        let rules = SecretRules::new(&config).unwrap();
        assert_eq!(rules.path_rule(".env.example"), None);
        assert_eq!(rules.path_rule(".env").as_deref(), Some(".env*"));
        assert_eq!(
            rules.path_rule("secrets/prod.toml").as_deref(),
            Some("secrets/")
        );
    }

    #[test]
    fn tokens_are_found_with_their_rule_and_one_based_position() {
        let rules = SecretRules::default();
        let text = format!("first line\r\n  é key = \"{}\"\n", aws());
        let m = rules.find_token(&text).unwrap();
        assert_eq!(
            (m.rule.as_str(), m.line, m.column),
            ("aws_access_key_id", 2, 12)
        );
        assert_eq!(&text[m.offset..m.offset + 4], "AKIA");
        let shapes = [
            (
                "github_token",
                ["ghp_", "J4p3cUZJG46YHahcneutq5AoJPOneuszrczF"].concat(),
            ),
            (
                "github_pat",
                ["github_pat_", "11ABCDEFG0123456789_abcdefghijKLMNOP"].concat(),
            ),
            (
                "slack_token",
                [
                    "xoxb-",
                    "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                ]
                .concat(),
            ),
            (
                "private_key",
                ["-----BEGIN RSA ", "PRIVATE KEY-----\n", &pem_body()].concat(),
            ),
            (
                "private_key",
                ["-----BEGIN OPENSSH ", "PRIVATE KEY-----\n", &pem_body()].concat(),
            ),
            (
                "sk_api_key",
                ["sk-", "T4ezgS29klFukZDI2zxAiESKwSG2fdizZdRu1dAMbnEmMOPP"].concat(),
            ),
            (
                "sk_api_key",
                ["sk-proj-", "Ab3dEf6hIj9kLm2nOp5qRs8tUv"].concat(),
            ),
            (
                "stripe_live_key",
                ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].concat(),
            ),
            (
                "google_api_key",
                ["AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"].concat(),
            ),
            (
                "npm_token",
                ["npm_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat(),
            ),
        ];
        for (rule, token) in shapes {
            let m = rules
                .find_token(&format!("x = {token}"))
                .unwrap_or_else(|| panic!("{rule}"));
            assert_eq!((m.rule.as_str(), m.column), (rule, 5), "{token}");
        }
    }

    #[test]
    fn placeholders_and_prose_are_not_secrets() {
        let rules = SecretRules::default();
        for text in [
            "AKIAXXXXXXXXXXXXXXXX",
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "use sk-learn-style-pipelines-for-the-feature-extraction step",
            "set SLACK_TOKEN=xoxb-your-token-here",
            "the risk-management-framework-of-the-project",
            "-----BEGIN PUBLIC KEY-----",
        ] {
            assert_eq!(rules.find_token(text), None, "{text}");
        }
    }

    /// Two lines of a PEM body: 64 base64 characters each (random, not a key).
    fn pem_body() -> String {
        [
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDk3Rq9Vx7TzW2m",
            "\nL8pY4cN1fH6sJ0bQ5gK2vX9eR3tU7iO1aD4lM8nB2wC6yZ0hF5jP3kS9qE7rT1uA\n",
        ]
        .concat()
    }

    /// A header counts only with a key body after it: proptest's
    /// `src/regex-contrib/crates_regex.rs` is not a secret for these two lines, a regex
    /// test naming the PEM header of a private key, with no key after it.
    #[test]
    fn fault_a_regex_of_a_pem_header_dropped_a_source_file_as_a_secret() {
        let rules = SecretRules::default();
        let header = ["-----BEGIN PRIVATE ", "KEY-----"].concat();
        let crates_regex =
            format!("// click-0.3.2: r\"{header}\"\nconsistent!(click_1, r\"{header}\");\n");
        assert_eq!(rules.find_token(&crates_regex), None);
        let file = SecretRules::default()
            .file_reason("src/regex-contrib/crates_regex.rs", Some(&crates_regex));
        assert_eq!(file, None);
        // A pattern for the whole armour, and prose or a parser's constant naming it.
        for text in [
            format!("let pem = Regex::new(r\"{header}\\n[A-Za-z0-9+/=\\n]+\");"),
            format!("PEM_HEADER = b\"{header}\"\n\ndef load(data):\n"),
            format!("A key file starts with {header} and ends with the END line.\n"),
            format!("{header}\n...\n-----END PRIVATE KEY-----\n"),
            format!("{header}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC...\n"),
            // An AWS CLI example and a Python test certificate: no body.
            format!("\"PrivateKey\": \"{header}\\nkey omitted for security reasons\\n\""),
            format!("{header}\nBad Key, though the cert should be OK\n"),
        ] {
            assert_eq!(rules.find_token(&text), None, "{text}");
        }
    }

    /// A key with its body stays a secret however it is written down: a key file, a
    /// string with `\n` escapes (a service account's JSON), string literals joined
    /// across lines (Python, JavaScript, Rust), an encrypted PKCS #1 key with its RFC
    /// 1421 headers, a PGP key block with its armour headers.
    #[test]
    fn a_pem_private_key_with_a_body_is_a_secret_however_it_is_written() {
        let rules = SecretRules::default();
        let begin = |kind: &str| format!("-----BEGIN {kind}PRIVATE {}-----", "KEY");
        let (line1, line2) = pem_body()
            .split_once('\n')
            .map(|(a, b)| (a.to_string(), b.trim_end().to_string()))
            .unwrap();
        let cases = [
            (format!("{}\n{}", begin("RSA "), pem_body()), 1, 1),
            (
                format!(
                    "{{\"private_key\": \"{}\\n{line1}\\n{line2}\\n\"}}",
                    begin("")
                ),
                1,
                18,
            ),
            (
                format!(
                    "KEY = (\n    \"{}\\n\"\n    \"{line1}\\n\"\n)",
                    begin("EC ")
                ),
                2,
                6,
            ),
            // A JSON string broken across lines of a document, short of a full line.
            (
                format!(
                    "\"PrivateKey\": \"{}\\n{}\n    {}\\n",
                    begin("RSA "),
                    &line1[..32],
                    &line1[32..]
                ),
                1,
                16,
            ),
            (
                format!("const k = '{}\\n' +\n  '{line1}\\n';", begin("")),
                1,
                12,
            ),
            (
                format!("const KEY: &str = \"{}\\n\\\n{line1}\\n\";", begin("")),
                1,
                20,
            ),
            (
                format!(
                    "{}\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n{}",
                    begin("RSA "),
                    pem_body()
                ),
                1,
                1,
            ),
            (
                format!(
                    "{}\nVersion: GnuPG v2\n\n{}",
                    ["-----BEGIN PGP PRIVATE ", "KEY BLOCK-----"].concat(),
                    pem_body()
                ),
                1,
                1,
            ),
        ];
        for (text, line, column) in cases {
            let m = rules.find_token(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (m.rule.as_str(), m.line, m.column),
                ("private_key", line, column),
                "{text}"
            );
        }
    }

    /// rustls' `src/crypto/tls12.rs` is not a secret for the TLS 1.2 PRF test vectors in
    /// its tests module, byte strings spelled in `\xNN` escapes (these are its lines 97,
    /// 115 and 133).
    #[test]
    fn fault_a_byte_string_test_vector_dropped_a_source_file_as_a_secret() {
        let rules = SecretRules::default();
        let tls12 = [
            r#"        let secret = b"\x9b\xbe\x43\x6b\xa9\x40\xf0\x17\xb1\x76\x52\x84\x9a\x71\xdb\x35";"#,
            r#"        let secret = b"\xb0\x32\x35\x23\xc1\x85\x35\x99\x58\x4d\x88\x56\x8b\xbb\x05\xeb";"#,
            r#"        let secret = b"\xb8\x0b\x73\x3d\x6c\xee\xfc\xdc\x71\x56\x6e\xa4\x8e\x55\x67\xdf";"#,
        ]
        .join("\n");
        assert_eq!(rules.find_token(&tls12), None);
        assert_eq!(rules.file_reason("src/crypto/tls12.rs", Some(&tls12)), None);
        // Printable characters among the escapes (a key pasted from Python's `repr` of
        // random bytes), or the same bytes in hexadecimal, still count.
        for (text, column) in [
            // Built from pieces, as every credential-shaped test string here: this file
            // would be a secret file itself.
            (["SECRET", r#"_KEY = b'_5#y2L"F4Q8z\n\xec]/'"#].concat(), 16),
            (
                ["let secret = \"", "9bbe436ba940f017b17652849a71db35\";"].concat(),
                15,
            ),
        ] {
            let m = rules.find_token(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (m.rule.as_str(), m.column),
                ("secret_assignment", column),
                "{text}"
            );
        }
    }

    /// A 40-character AWS secret access key (not AWS's documented example).
    fn aws_secret() -> String {
        ["q7WJ2m5X/rT3k9HBn", "4Lp8Vd1Zs6Yc0Fg+uE2hRj7"].concat()
    }

    /// A person's password (the classic), and one with digits for letters.
    fn password() -> String {
        ["hun", "ter2"].concat()
    }

    fn db_password() -> String {
        ["s3cr3t", "Pa55"].concat()
    }

    /// A generated API key.
    fn api_key() -> String {
        ["f3Kq9Zt2", "Wm7Yx4Vb8Ns1"].concat()
    }

    #[test]
    fn credential_assignments_outside_the_token_shapes_are_secrets() {
        let rules = SecretRules::default();
        let cases = [
            (
                format!("aws_secret_access_key = {}", aws_secret()),
                "aws_secret_access_key",
                25,
            ),
            (
                format!("AWS_SECRET_ACCESS_KEY={}", aws_secret()),
                "aws_secret_access_key",
                23,
            ),
            (
                format!("  \"awsSecretAccessKey\": \"{}\"", aws_secret()),
                "aws_secret_access_key",
                26,
            ),
            (
                format!("password={}", password()),
                "password_assignment",
                10,
            ),
            (
                format!("DB_PASSWORD={}", db_password()),
                "password_assignment",
                13,
            ),
            (
                format!("export PGPASSWORD='{}'", db_password()),
                "password_assignment",
                20,
            ),
            (
                format!("  password: {}", password()),
                "password_assignment",
                13,
            ),
            (
                format!("{{\"password\": \"{}\"}}", db_password()),
                "password_assignment",
                15,
            ),
            (
                format!("connect(user=\"app\", password=\"{}\")", db_password()),
                "password_assignment",
                31,
            ),
            (
                format!("$db = ['password' => '{}'];", db_password()),
                "password_assignment",
                23,
            ),
            (
                format!("api_key = \"{}\"", api_key()),
                "secret_assignment",
                12,
            ),
            (
                format!("STRIPE_API_KEY={}", api_key()),
                "secret_assignment",
                16,
            ),
            (
                format!("SECRET_KEY = '{}'", api_key()),
                "secret_assignment",
                15,
            ),
            (
                format!("client_secret: {}", api_key()),
                "secret_assignment",
                16,
            ),
            (
                format!("\"accessToken\": \"{}\"", api_key()),
                "secret_assignment",
                17,
            ),
            (
                format!("token := \"{}\"", api_key()),
                "secret_assignment",
                11,
            ),
            (
                format!("GET /v1/items?access_token={}&page=2", api_key()),
                "secret_assignment",
                28,
            ),
        ];
        for (text, rule, column) in cases {
            let m = rules.find_token(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (m.rule.as_str(), m.line, m.column),
                (rule, 1, column),
                "{text}"
            );
        }
    }

    /// Each credential shape the fresh-user trial found indexed and accepted as memory,
    /// as it appears in its file, with the rule and the one-based column it is reported
    /// at.
    fn trial_shapes() -> Vec<(String, &'static str, usize, usize)> {
        vec![
            (
                [
                    "notify: https://hooks.slack.com/services/",
                    "T4K9Q2M7Z/B07RX5N3WQ/p8Xq2LrT5vWn9Kd3Hs6Jf1Ya",
                ]
                .concat(),
                "slack_webhook",
                1,
                9,
            ),
            (
                [
                    "Cookie: session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.",
                    "eyJzdWIiOiJ1LTcyOTEiLCJpYXQiOjE3MzMwMDAwMDB9.",
                    "kX3vP9qLm2Tz7Rw4Yb8Nc1Hd6Fs0Jg5Ue_Ai-Vo",
                ]
                .concat(),
                "jwt",
                1,
                17,
            ),
            (
                [
                    "//registry.npmjs.org/:_authToken=",
                    "3f9c2a71-8d4e-4b6a-9e15-c07d2b8f6a43",
                ]
                .concat(),
                "npmrc_auth",
                1,
                34,
            ),
            (
                [
                    "{\"auths\": {\"ghcr.io\": {\"auth\": \"",
                    "ZGVwbG95OlhrOSN2UTJtTHA3",
                    "\"}}}",
                ]
                .concat(),
                "docker_auth",
                1,
                33,
            ),
            (
                [
                    "PuTTY-User-Key-File-3: ssh-ed25519\n",
                    "Encryption: none\nComment: deploy\n",
                ]
                .concat(),
                "putty_private_key",
                1,
                1,
            ),
            (
                ["GITLAB=glpat-", "xR7kP2mQ9vT4nW8zL3bY"].concat(),
                "gitlab_token",
                1,
                8,
            ),
            (
                [
                    "SENDGRID=SG.",
                    "q7Xk2Lm9Pz4Rt8Vw1Nb5Yc.",
                    "-HbkQfyy-KV5zjR3j1twdTKWTddB_XhkAS1voQG6yyz",
                ]
                .concat(),
                "sendgrid_key",
                1,
                10,
            ),
            (
                [
                    "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=",
                    "pTyGJMuHbEL31IeL2HPcHyGcFRl1SPnXNYvMIHa/2o76umfXfKm/",
                    "r5kJP1VrT+1FJors/6ILi8IHn5kxsC7tVO==;",
                ]
                .concat(),
                "azure_storage_key",
                1,
                60,
            ),
            (
                ["Authorization: Bearer ", "8fK2qLx9Vm4Tz7Rw1Yb3Nc6H"].concat(),
                "authorization_bearer",
                1,
                23,
            ),
            (
                [
                    "headers = {\"Authorization\": \"Basic ",
                    "c3ZjLWNpOlpxOCNtVDR2THgy",
                    "\"}",
                ]
                .concat(),
                "authorization_basic",
                1,
                36,
            ),
            (
                [
                    "SECRET_KEY_BASE=",
                    "c3fc1626e53a13043b026c48bbf33feff9243a8f506b40928b5b7a767c7",
                    "6fb008f86bebb2737f6a6f0fb23c6f5da2cec255404e4fb440034d6608697a8d41bed",
                ]
                .concat(),
                "secret_assignment",
                1,
                17,
            ),
            (
                format!("MYSQL_PWD={}", db_password()),
                "password_assignment",
                1,
                11,
            ),
            (
                format!("DATABASE_PASS='{}'", db_password()),
                "password_assignment",
                1,
                16,
            ),
            (
                format!("smtp_pass: {}", password()),
                "password_assignment",
                1,
                12,
            ),
            (
                format!("API_Key = \"{}\"", api_key()),
                "secret_assignment",
                1,
                12,
            ),
            (format!("apiKEY: {}", api_key()), "secret_assignment", 1, 9),
            (
                format!("PassWord={}", db_password()),
                "password_assignment",
                1,
                10,
            ),
        ]
    }

    #[test]
    fn credential_shapes_of_the_fresh_user_trial_are_secrets() {
        let rules = SecretRules::default();
        for (text, rule, line, column) in trial_shapes() {
            let m = rules.find_token(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (m.rule.as_str(), m.line, m.column),
                (rule, line, column),
                "{text}"
            );
        }
        assert_eq!(rules.path_rule("keys/deploy.PPK").as_deref(), Some("*.ppk"));
    }

    /// The documentation's spelling of each of those shapes: placeholders, templates,
    /// all-zero or all-`x` values, `user:password`.
    #[test]
    fn placeholders_of_the_fresh_user_trial_shapes_are_not_secrets() {
        let rules = SecretRules::default();
        let xs = |n: usize| "x".repeat(n);
        let texts = [
            format!(
                "https://hooks.slack.com/services/T00000000/B00000000/{}",
                "X".repeat(24)
            ),
            format!("eyJ{0}.eyJ{0}.{1}", xs(12), xs(24)),
            "//registry.npmjs.org/:_authToken=${NPM_TOKEN}".to_string(),
            "//registry.npmjs.org/:_authToken=00000000-0000-0000-0000-000000000000".to_string(),
            format!("//registry.npmjs.org/:_authToken=npm_{}", xs(36)),
            // base64 of `user:password`.
            "{\"auth\": \"dXNlcjpwYXNzd29yZA==\"}".to_string(),
            "\"auth\": \"required\"".to_string(),
            "the PuTTY-User-Key-File-3: header starts a .ppk file".to_string(),
            format!("glpat-{}", xs(20)),
            format!("SG.{}.{}", xs(22), xs(43)),
            format!("AccountKey={}==", xs(86)),
            "AccountKey=<your-key>".to_string(),
            "Authorization: Bearer {token}".to_string(),
            "Authorization: Bearer ${TOKEN}".to_string(),
            "Authorization: Bearer <token>".to_string(),
            "Authorization: Bearer YOUR_ACCESS_TOKEN".to_string(),
            "\"Authorization\": \"Bearer \" + token".to_string(),
            "Authorization: Basic dXNlcjpwYXNzd29yZA==".to_string(),
            "Authorization: Basic <base64>".to_string(),
            "SECRET_KEY_BASE=<%= ENV[\"SECRET_KEY_BASE\"] %>".to_string(),
            format!("SECRET_KEY_BASE={}", "0".repeat(128)),
            "MYSQL_PWD=$MYSQL_ROOT_PASSWORD".to_string(),
            "OLD_PWD=/home/app".to_string(),
            "DATABASE_PASS=changeme".to_string(),
            "API_Key = \"YOUR_API_KEY_HERE\"".to_string(),
        ];
        for text in texts {
            assert_eq!(rules.find_token(&text), None, "{text}");
        }
    }

    /// A placeholder word disqualifies a value only when the value is mostly placeholder
    /// words: `pass` and `secret` inside `realpass9` and `S3cr3tPass` do not make them
    /// placeholders.
    #[test]
    fn a_placeholder_word_inside_a_real_password_does_not_hide_it() {
        let rules = SecretRules::default();
        for value in ["realpass9", "S3cr3tPass"] {
            let m = rules
                .find_token(&format!("password = \"{value}\""))
                .unwrap_or_else(|| panic!("{value}"));
            assert_eq!((m.rule.as_str(), m.column), ("password_assignment", 13));
        }
        for value in [
            "password",
            "password1",
            "changeme",
            "changeme123",
            "your_password_here",
            "xxx",
            "xxxxxxxx",
            "<password>",
            "mysecretpassword",
            "Secret123!",
        ] {
            assert_eq!(
                rules.find_token(&format!("password = \"{value}\"")),
                None,
                "{value}"
            );
        }
    }

    #[test]
    fn credentials_in_urls_are_secrets() {
        let rules = SecretRules::default();
        let cases = [
            (
                format!(
                    "DATABASE_URL=postgres://app:{}@db.internal:5432/x",
                    db_password()
                ),
                29,
            ),
            (format!("redis://:{}@cache:6379/0", db_password()), 10),
            (
                format!("see https://deploy:{}@git.corp.net/repo.git", password()),
                20,
            ),
            // Percent-encoded bytes are part of a password, not a template.
            (format!("amqp://svc:{}%40x@mq/", db_password()), 12),
        ];
        for (text, column) in cases {
            let m = rules.find_token(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (m.rule.as_str(), m.column),
                ("url_credentials", column),
                "{text}"
            );
        }
    }

    /// The false positives the audit of the Python standard library, the crates under
    /// in `~/.cargo` and botocore's examples found or that code is full of:
    /// reads of a password, references, types, templates, placeholders, documentation
    /// hosts, pagination tokens, grammar, ARNs.
    #[test]
    fn code_placeholders_and_examples_are_not_credential_assignments() {
        let rules = SecretRules::default();
        let texts = [
            "password = input()",
            "password=None",
            "password = getpass.getpass(prompt)",
            "password = self.password",
            "password = conf.DB_PASSWORD",
            "password: str",
            "password: Optional[str] = None",
            "password=DB_PASSWORD_V2",
            "if password == \"\":",
            "password: ${DB_PASSWORD}",
            "password=$PGPASS",
            "password=%(password)s",
            "password = \"<your password>\"",
            "password = \"changeme\"",
            "password = 'test1234'",
            "password: !vault |",
            "password=**********",
            "password = \"a1b2c3d4\"",
            "password = 'spam'",
            "http://user:password@example.com/",
            "http://user:pass@host/",
            "ftp://joe:s3cr3tPa55@ftp.example.org/pub",
            "postgres://app:s3cr3tPa55@db.test/x",
            "\"%s://%s:%s@%s\" % (scheme, user, password, host)",
            "f\"{scheme}://{user}:{password}@{host}\"",
            "token = tokens[0]",
            "token: Token,",
            "colon2_token: Colon2,",
            "    token          = 1*tchar",
            "\"access_token\": \"access-1\"",
            "private_key: Ed25519PrivateKey | Ed448PrivateKey",
            "api_key = \"YOUR_API_KEY\"",
            "SECRET_KEY = os.environ[\"SECRET_KEY\"]",
            "token = \"0123456789abcdef\"",
            "\"NextToken\": \"eyJOZXh0VG9rZW4iOiBudWxsLCAiYm90b190cnVuY2F0ZV9hbW91bnQiOiAyfQ==\"",
            "\"nextPageToken\": \"AAAAKgAAAAEAAAAAAAAAA1Gp1BelJq+PmHvAnDxJYbup8+0R4LV\"",
            "\"ClientToken\": \"4752b573-40a6-4eac-a8a4-a72058761219\"",
            "\"output_token\": \"StreamDescription.Shards[-1].ShardId\"",
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod-db-3QNDmM",
            "\"RootUserCredentials\": \"arn:aws:iam::aws:policy/root-task/IAMAuditRootUserCredentials\"",
            "Credentials: None\\r\\nAccess-Control-Allow-Origin: None",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
            "token_type = \"bearer-2x\"",
            "\"progressToken\":\"progress-test-1\"",
            "\"passphrase\": \"AB1C2defGHijkLMNo3PqQRstUvwxyzaBCDEfghh4ijklMN5opq\"",
            "Authorization: AWS4-HMAC-SHA256 Credential=mock_access_key/20220524/us-east-1/s3/aws4_request,",
            "\"CopyProductToken\": \"copyproduct-abc5defgjkdji\"",
            "\"CreationToken\": \"console-d7f56c5f-e433-41ca-8307\"",
            "\"SessionToken\": \"AQoEXAMPLEH4aoAH0gNCAPyJxz4BlCFFxWNE1OPTgk5TthT\"",
            "secret: 42",
        ];
        for text in texts {
            assert_eq!(rules.find_token(text), None, "{text}");
        }
    }

    #[test]
    fn refusal_of_an_assignment_or_url_credential_names_the_rule_and_position_but_not_the_value() {
        let rules = SecretRules::default();
        let text = format!(
            "staging:\n  url: mysql://app:{}@db.internal/app\n  password: {}\n",
            db_password(),
            password()
        );
        let err = rules.refuse("text", &text).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "invalid argument `text`: contains a secret (url_credentials) at line 2, column 20;"
            ),
            "{err}"
        );
        assert!(
            !err.contains(&db_password()) && !err.contains(&password()),
            "{err}"
        );
        let err = rules
            .refuse("body", &format!("aws_secret_access_key: {}", aws_secret()))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "invalid argument `body`: contains a secret (aws_secret_access_key) at line 1, column 24;"
            ),
            "{err}"
        );
        assert!(!err.contains(&aws_secret()), "{err}");
    }

    /// A configured rule with a `secret` group judges only that value, with the same
    /// checks as the built-in assignments.
    #[test]
    fn a_configured_rule_with_a_secret_group_judges_the_value() {
        let mut config = SecretsConfig::default();
        config
            .tokens
            .insert("vault".into(), r"vault_pw\s*=\s*(?P<secret>\S+)".into());
        let rules = SecretRules::new(&config).unwrap();
        let m = rules
            .find_token(&format!("vault_pw = {}", db_password()))
            .unwrap();
        assert_eq!((m.rule.as_str(), m.column), ("vault", 12));
        assert_eq!(rules.find_token("vault_pw = changeme"), None);
    }

    #[test]
    fn configured_tokens_add_replace_and_disable_rules() {
        let mut config = SecretsConfig::default();
        config
            .tokens
            .insert("internal".into(), r"\bINT-[0-9a-f]{16}\b".into());
        config
            .tokens
            .insert("aws_access_key_id".into(), String::new());
        let rules = SecretRules::new(&config).unwrap();
        assert_eq!(rules.find_token(&aws()), None);
        let m = rules.find_token("t INT-9f8e7d6c5b4a3921").unwrap();
        assert_eq!(m.rule, "internal");
        config.tokens.insert("broken".into(), "(".into());
        let err = SecretRules::new(&config).unwrap_err().to_string();
        assert!(err.contains("secrets.tokens.broken"), "{err}");
    }

    #[test]
    fn refusal_names_the_argument_rule_and_position_but_not_the_token() {
        let rules = SecretRules::default();
        let err = rules
            .refuse("body", &format!("keys:\n{}", aws()))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "invalid argument `body`: contains a secret (aws_access_key_id) at line 2, column 1;"
            ),
            "{err}"
        );
        assert!(!err.contains(&aws()), "{err}");
    }
}

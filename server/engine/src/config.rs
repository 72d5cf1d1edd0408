//! `.loci/config.toml`: the one struct that documents every setting.
//!
//! Every field has a default, so a missing file or a missing section means "defaults".
//! Unknown keys are rejected with the file and key named, so a typo is not silently ignored.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{EngineError, Result};

/// All of loci's settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// How the working tree is walked and parsed.
    pub scan: ScanConfig,
    /// Executable facts.
    pub facts: FactsConfig,
    /// What `loci lint` checks.
    pub lint: LintConfig,
    /// When `loci check` fails.
    pub check: CheckConfig,
    /// How `context` answers.
    pub context: ContextConfig,
    /// How `loci sync` reads git history.
    pub sync: SyncConfig,
    /// Files and text loci never indexes, searches, serves or stores.
    pub secrets: SecretsConfig,
    /// Optional dense retrieval.
    pub embeddings: EmbeddingsConfig,
    /// Optional team memory on PostgreSQL.
    pub team: TeamConfig,
    /// Page synthesis by a model command the user names.
    pub synthesis: SynthesisConfig,
}

/// `[team]`: team memory on a PostgreSQL server (docs/team.md). Off unless a server is
/// named: without it, memory lives in this checkout's store alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TeamConfig {
    /// The server, as a PostgreSQL URL without a password (`postgres://USER@HOST:PORT/DB`,
    /// `?sslmode=require` for TLS). The password comes from `PGPASSWORD` or `~/.pgpass`
    /// (`PGPASSFILE`), never from this file: a URL here holding one is refused. The
    /// environment variable `LOCI_TEAM_URL` overrides it. Default none: solo memory.
    pub url: Option<String>,
}

/// `[synthesis]`: first drafts of pages written by a model the user chooses. loci never
/// calls a model on its own and ships no model client: without `command`, every synthesis
/// command says how to configure it and does nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynthesisConfig {
    /// The command that answers a prompt (`claude -p`, `llm -m MODEL`, `./draft.sh`):
    /// split into words by POSIX shell rules (`shell-words`, never run by a shell), run
    /// from the workspace root with the prompt on its stdin; its stdout is the page's
    /// markdown. Default none: synthesis is off.
    pub command: Option<String>,
    /// Time limit per page, in milliseconds: the command and every process it started
    /// are killed when it passes. Default 120,000.
    pub timeout_ms: u64,
    /// Most tokens of one prompt (tokens ≈ characters / 4, an estimate), at least 500.
    /// Default 6,000.
    pub max_tokens: u64,
    /// Most pages one run writes (`loci synthesize --pending`). Default 20.
    pub max_pages: usize,
    /// The model's name for provenance: revisions are authored `llm:MODEL`. Default: the
    /// command's program name (`claude` for `claude -p`).
    pub model: Option<String>,
}

impl Default for SynthesisConfig {
    fn default() -> Self {
        SynthesisConfig {
            command: None,
            timeout_ms: 120_000,
            max_tokens: 6_000,
            max_pages: 20,
            model: None,
        }
    }
}

/// `[embeddings]`: optional dense retrieval for `context`. Off unless a model is named.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingsConfig {
    /// A local sentence-embedding model directory in the Hugging Face layout
    /// (`config.json`, `tokenizer.json`, `model.safetensors`; a BERT model such as
    /// all-MiniLM-L6-v2), absolute or relative to the workspace root. Nothing is ever
    /// downloaded. The environment variable `LOCI_EMBEDDINGS_MODEL` overrides it. Default
    /// none: no embeddings.
    pub model: Option<String>,
    /// Word pieces of each chunk that are embedded (its first ones), 8 to 512. Default 128.
    pub max_tokens: usize,
    /// Threads the model runs on while `loci embed` fills the vectors. Default 2.
    pub threads: usize,
}

impl Default for EmbeddingsConfig {
    fn default() -> Self {
        EmbeddingsConfig {
            model: None,
            max_tokens: 128,
            threads: 2,
        }
    }
}

/// `[sync]`: reading git history into the event log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncConfig {
    /// Commits the first `loci sync` reads (the newest ones), and the most any one sync
    /// reads; `loci sync --limit N` overrides it. Default 200.
    pub max_commits: usize,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig { max_commits: 200 }
    }
}

/// `[secrets]`: what counts as a secret. A file whose repo-relative path matches a path
/// glob, or whose text holds a credential-shaped token, is never indexed, searched or
/// served (scan skip reason `secret`); memory text holding a token is refused. The
/// built-in rules are [`crate::secrets::DEFAULT_PATHS`] and
/// [`crate::secrets::DEFAULT_TOKENS`]; these settings extend them, so adding a rule never
/// drops a default by accident.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecretsConfig {
    /// More gitignore-style globs of secret files, matched against repo-relative paths
    /// in any letter case after the defaults (`.env*`, `*.pem`, `*.key`, `id_rsa*`, ...);
    /// a later `!glob` re-includes what an earlier one matched (`!.env.example`). Default
    /// empty.
    pub paths: Vec<String>,
    /// More credential patterns by name (regular expressions in the `regex` crate's
    /// syntax), merged over the defaults: a default's name replaces that default, an empty
    /// pattern turns it off. A pattern with a `secret` capture group is judged on that
    /// group's text by [`crate::secrets::plausible_secret`]. Default empty.
    pub tokens: std::collections::BTreeMap<String, String>,
    /// Least Shannon entropy, in bits per character, of a match (or of its `secret`
    /// value, which may have less when it is short: see
    /// [`crate::secrets::plausible_secret`]) for it to count, so placeholders
    /// (`AKIAXXXXXXXXXXXXXXXX`, `sk-xxxx…`) are not secrets. Default 3.0.
    pub min_entropy: f64,
}

impl Default for SecretsConfig {
    fn default() -> Self {
        SecretsConfig {
            paths: Vec::new(),
            tokens: Default::default(),
            min_entropy: 3.0,
        }
    }
}

/// `[context]`: retrieval defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Token budget when a request gives none (tokens ≈ characters / 4). Default 2,000.
    pub budget: u64,
    /// Relevance floor below which `context` abstains (pick it with `loci calibrate`).
    /// Relevance is 30 × the IDF-weighted share of the question's words that the best code
    /// files (or memory, docs) hold, decayed by rank: 10.5 asks for about a third of the
    /// question. Default 10.5, calibrated on one development set and reported on the
    /// other (docs/benchmarks.md, "Context"): the highest floor that abstains on at most
    /// 5% of the in-scope questions of `crates-dev` (10.56: 1 of 34), which on
    /// `stdlib-dev` abstains on 1 of 51 in-scope and, with the names nothing holds
    /// ([`crate::context::context::ContextAnswer::unknown_names`]), 7 of 9 out-of-scope questions.
    pub floor: f64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            budget: 2_000,
            floor: 10.5,
        }
    }
}

/// `[lint]`: which repository documents are checked besides memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LintConfig {
    /// Globs (gitignore-style, matched against repo-relative paths) of documentation
    /// whose claims are checked. Default: `README*`, `AGENTS.md`, `CLAUDE.md`,
    /// `CONTRIBUTING*`, `docs/**/*.md` (at any depth for the first four).
    pub docs: Vec<String>,
}

impl Default for LintConfig {
    fn default() -> Self {
        LintConfig {
            docs: [
                "**/README*",
                "**/AGENTS.md",
                "**/CLAUDE.md",
                "**/CONTRIBUTING*",
                "docs/**/*.md",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// `[check]`: the CI gate's thresholds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckConfig {
    /// Open contradictions allowed before `loci check` fails. Default 0.
    pub max_contradictions: u64,
    /// Stale memory pages allowed before `loci check` fails. Default 0.
    pub max_stale_pages: u64,
}

/// `[facts]`: executable memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FactsConfig {
    /// Allow `loci fact run` to execute stored commands. Default false: facts are commands
    /// in a database that travels with the repository, so nothing runs them unless asked.
    pub run: bool,
    /// Time limit per fact, in milliseconds. Default 30,000.
    pub timeout_ms: u64,
}

impl Default for FactsConfig {
    fn default() -> Self {
        FactsConfig {
            run: false,
            timeout_ms: 30_000,
        }
    }
}

/// `[scan]`: walking and parsing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScanConfig {
    /// Files larger than this many bytes are skipped (reason `too_large`). Default 2 MiB.
    pub max_file_size: u64,
    /// Parse limit per file, in milliseconds of parse work, not of wall time: the parse
    /// stops after [`loci_core::analyze::PARSE_STEPS_PER_MS`] tree-sitter progress
    /// callbacks (each 100 parser operations) per millisecond, so load does not change
    /// which files it stops; a wall-clock guard at
    /// [`loci_core::analyze::WALL_GUARD_FACTOR`] times the limit is a safety net. A file
    /// that hits it is recorded as degraded (`parse_timeout`) and analysed again when the
    /// limit is raised; one the wall-clock guard stopped, by every later scan until it
    /// parses. The limit bounds a parse's memory too (4–7 KB per callback: about 100 MB
    /// at the default). Default 500 ms.
    pub parse_timeout_ms: u64,
    /// Deepest syntax-tree nesting extraction visits, in nodes. Default 2,000.
    pub max_depth: u32,
    /// Stop walking after this many files (a guard for home directories and huge
    /// trees; the rest is reported as skipped with reason `file_limit`). Default 200,000.
    pub max_files: u64,
    /// Parser threads; 0 means one per core. Default 0.
    pub threads: usize,
}

impl Default for ScanConfig {
    fn default() -> Self {
        ScanConfig {
            max_file_size: 2 * 1024 * 1024,
            parse_timeout_ms: loci_core::AnalyzeOptions::default().timeout_ms,
            max_depth: 2_000,
            max_files: 200_000,
            threads: 0,
        }
    }
}

impl ScanConfig {
    /// The limits each file's analysis runs with.
    pub fn analyze_options(&self) -> loci_core::AnalyzeOptions {
        loci_core::AnalyzeOptions {
            timeout_ms: self.parse_timeout_ms,
            max_depth: self.max_depth,
        }
    }
}

impl Config {
    /// Reads `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => {
                return Err(EngineError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        toml::from_str(&text).map_err(|e| EngineError::Config {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

//! Structural questions over the map: `symbol`, `refs`, `callers`, `deps`, `impact`, `stats`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use loci_core::secondary::secondary_code;
use loci_store::map::{self, DepEdge, RefHit, SymbolHit};
use serde::Serialize;

use super::names::{last_segment, qualified_form};
use crate::{EngineError, Envelope, Result, Workspace};

/// Row cap for listings (`limits.truncated` says when it was hit).
pub const LIST_LIMIT: u32 = 1_000;

/// The rows to fetch for a listing of at most `limit` (0: all): one more than it, to tell
/// whether there are more.
fn fetch(limit: u32) -> u32 {
    if limit == 0 {
        u32::MAX
    } else {
        limit.saturating_add(1)
    }
}

/// Cuts `rows` (fetched with [`fetch`]) to `limit` and gives how many there are in all:
/// the rows themselves when they all fit, else `count()`.
fn listed<T>(
    rows: &mut Vec<T>,
    limit: u32,
    count: impl FnOnce() -> loci_store::Result<u64>,
) -> Result<u64> {
    if limit == 0 || rows.len() <= limit as usize {
        return Ok(rows.len() as u64);
    }
    rows.truncate(limit as usize);
    Ok(count()?)
}

/// The `limits` of a listing of `listed` rows of `total`, at most `limit` asked (0: all).
fn list_limits(limit: u32, listed: u64, total: u64) -> crate::envelope::Limits {
    crate::envelope::Limits {
        budget: (limit > 0).then_some(u64::from(limit)),
        used: listed,
        truncated: total > listed,
        omitted: total - listed,
    }
}

/// Whether a reference is written in test, example or vendored code: in such a file
/// ([`secondary_code`]) or in a test module of a file of code (Rust's `mod tests`, its
/// `use` lines too).
fn written_in_secondary_code(r: &RefHit) -> bool {
    secondary_code(&r.path).is_some()
        || r.enclosing_key
            .as_deref()
            .is_some_and(loci_core::secondary::written_in_test_module)
}

/// The calls of `targets`' name on values whose type the map does not know, which may be
/// to them (unresolved, or tied below `min_confidence` to another definition): none for a
/// macro, invoked by its name alone, never on a value; those in test, example and vendored
/// code only with `tests`.
fn untyped_calls(
    conn: &loci_store::rusqlite::Connection,
    targets: &[SymbolHit],
    keys: &[&str],
    min_confidence: f64,
    tests: bool,
) -> Result<u64> {
    Ok(match targets.first() {
        Some(t) if t.kind != "macro" => {
            map::untyped_calls_by_file(conn, &t.name, keys, min_confidence)?
                .into_iter()
                .filter(|(path, _)| tests || secondary_code(path).is_none())
                .map(|(_, n)| n)
                .sum()
        }
        _ => 0,
    })
}

/// Dependents an `impact` answer lists by default, nearest first; the rest are counted
/// (`Impact::dependents`, `Impact::by_depth`, `limits.omitted`) but not listed. A widely
/// imported module reaches hundreds of files (CPython's `urllib/parse.py`: 824 at depth
/// 3), which no one reads line by line; 0 lists them all.
pub const IMPACT_LIMIT: u32 = 100;

/// The least confidence of an edge (a resolved call, type or base; an import is 1.0) that
/// `callers` and `impact` follow and list unless asked otherwise, in every door (the CLI's
/// `--min-confidence`, the MCP tools' and the LSP command's `min_confidence`). Weaker
/// edges are counted apart ([`Callers::weaker`], [`Impact::weaker`]), not listed.
///
/// The scan's resolver gives (see `Resolver::resolve` in `scan.rs`): 1.0 stated (a name a
/// resolved import binds, a module path); 0.9 a definition in the same file; 0.7 the one
/// candidate in an imported file, or the one member of a named type; 0.5 one of several
/// such, or the only definition of the name anywhere; 0.3 and 0.2 a method name on a value
/// whose type the map does not know (`obj.get()`), matched by name alone. Sampled on
/// CPython's stdlib (15 random calls per level, docs/benchmarks.md, "Edges you can filter
/// on"), 15 were right at 0.7, 14 at 0.5 and 7 at 0.3: 0.5 keeps every edge with evidence
/// beyond the name and drops the guesses.
pub const MIN_CONFIDENCE: f64 = 0.5;

/// Which edges a `callers` or `impact` answer follows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edges {
    /// Only stated edges (proven by a parser: imports, names resolved imports bind,
    /// module paths), as `--hard` asks.
    pub hard: bool,
    /// Only edges at this confidence or more, in [0, 1] ([`MIN_CONFIDENCE`] by default;
    /// 0 follows every resolved edge).
    pub min_confidence: f64,
    /// Edges from test, example and vendored code ([`loci_core::secondary`]) too (the
    /// default). Without them, `impact` neither lists nor walks through such files, and
    /// counts them in [`Impact::secondary_left_out`].
    pub tests: bool,
}

impl Default for Edges {
    fn default() -> Edges {
        Edges {
            hard: false,
            min_confidence: MIN_CONFIDENCE,
            tests: true,
        }
    }
}

impl Edges {
    /// The default edges, stated ones only when `hard`.
    pub fn hard(hard: bool) -> Edges {
        Edges {
            hard,
            ..Edges::default()
        }
    }

    /// Every resolved edge, however weak.
    pub fn all() -> Edges {
        Edges {
            min_confidence: 0.0,
            ..Edges::default()
        }
    }

    /// `self`, or [`EngineError::InvalidArgument`] naming `min_confidence` when it is not
    /// in [0, 1].
    pub(crate) fn checked(self) -> Result<Edges> {
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err(EngineError::InvalidArgument {
                name: "min_confidence".into(),
                message: format!(
                    "{} is no confidence: give a number from 0 (every edge) to 1 (stated \
                     only)",
                    self.min_confidence
                ),
            });
        }
        Ok(self)
    }
}

/// The callers of a symbol.
#[derive(Clone, Debug, Serialize)]
pub struct Callers {
    /// The symbols the name matched, by path and line, at most the listing's limit (the
    /// calls are those of all of them).
    pub targets: Vec<SymbolHit>,
    /// How many symbols the name matched (more than `targets` lists when cut).
    pub targets_total: u64,
    /// Call sites resolved to those symbols at `min_confidence` or more: the surest
    /// first, then by path, line and column.
    pub calls: Vec<RefHit>,
    /// The least confidence of a call listed.
    pub min_confidence: f64,
    /// Calls resolved to those symbols below `min_confidence`: counted, not listed, nor
    /// counted in `limits`.
    pub weaker: u64,
    /// Calls of the same name on values whose type the map does not know (neither
    /// written nor evident: `loci_core::Receiver::Typed`), that no type tied to those
    /// symbols nor to any other ([`map::untyped_calls_by_file`]): `N calls of .block_on(
    /// on values of unknown type`. Counted, not listed: some may be calls of them.
    pub untyped: u64,
    /// Calls written in test, example and vendored code (files of it, and Rust's `mod
    /// tests` in files of code), at any confidence, left out when asked without them: not
    /// listed, nor counted in `limits`, `weaker` or `untyped` (whose calls are counted by
    /// file: those in a file of code's test module stay).
    pub secondary_left_out: u64,
}

/// Where a dependency listing points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// What the file imports.
    Imports,
    /// What imports the file.
    ImportedBy,
}

/// A file's dependency edges.
#[derive(Clone, Debug, Serialize)]
pub struct Deps {
    /// The file asked about.
    pub path: String,
    /// Which way the edges point.
    pub direction: Direction,
    /// The edges.
    pub edges: Vec<DepEdge>,
}

/// One edge of an impact walk: `from` depends on `to`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImpactEdge {
    /// The dependent (a file path or a symbol key).
    pub from: String,
    /// What it depends on (a file path or a symbol key).
    pub to: String,
    /// `import` for an import edge, otherwise the reference kind (`call`, `type`,
    /// `inherit`, ...): a file edge is an import, or the strongest reference of the file
    /// into the other when it does not import it.
    pub kind: String,
    /// Where the edge is written: `path:line` (one-based line).
    pub at: String,
    /// `stated` (proven by a parser) or `derived` (a heuristic).
    pub provenance: String,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// `scip` when a SCIP index states the edge (`loci scan --scip`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One node reached by an impact walk.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImpactNode {
    /// A file path or a symbol key.
    pub id: String,
    /// The file it is in.
    pub path: String,
    /// Hops from the target (1 = direct dependent).
    pub depth: u32,
    /// The edge that reached it first.
    pub via: ImpactEdge,
}

/// The reverse-dependency blast radius of a file or symbol.
///
/// The counts (`dependents`, `by_depth`, `files_affected`) are always those of the whole
/// walk; `nodes` and `files` hold only the dependents listed (the nearest `limit`, see
/// [`Workspace::impact_limited`]), and the envelope's `limits.omitted` says how many
/// were left out.
#[derive(Clone, Debug, Serialize)]
pub struct Impact {
    /// What was asked about: a path, or the keys of the matched symbols.
    pub target: Vec<String>,
    /// `file` or `symbol`.
    pub mode: &'static str,
    /// Maximum depth walked.
    pub depth: u32,
    /// Whether only stated edges were followed.
    pub hard: bool,
    /// The least confidence of an edge followed ([`Edges::min_confidence`]).
    pub min_confidence: f64,
    /// Every dependent the walk reached, listed or not.
    pub dependents: u64,
    /// Dependents the walk reaches within `depth` only through edges below
    /// `min_confidence`: counted here, not in `dependents`, nor listed.
    pub weaker: u64,
    /// Dependents in test, example and vendored code, left out when asked without them
    /// ([`Edges::tests`]): not in `dependents`, not listed, not walked through. A file's
    /// walk counts files of such code; a symbol's, the definitions (and files, for a
    /// reference outside any) in such files and in Rust's `mod tests` in files of code.
    pub secondary_left_out: u64,
    /// Dependents reached at each depth: `by_depth[0]` at depth 1 (direct dependents),
    /// `by_depth[1]` at depth 2, ...; up to the deepest level reached (empty when nothing
    /// depends on the target). Sums to `dependents`.
    pub by_depth: Vec<u64>,
    /// Distinct files affected, listed or not (the target's own file included).
    pub files_affected: u64,
    /// Distinct files holding a dependent, listed or not: the target's own file only when
    /// a dependent is in it (for a file target, `dependents`).
    pub dependent_files: u64,
    /// The dependents listed, nearest first: by depth, then the confidence of the edge
    /// that reached them (the surest first), then id.
    pub nodes: Vec<ImpactNode>,
    /// The distinct files of the target and of the listed dependents, sorted: the files
    /// this answer shows, and those whose freshness it checks.
    pub files: Vec<String>,
}

/// What [`Workspace::walk_symbols`] reached.
struct SymbolWalk {
    /// The dependents, by depth, then the confidence of the edge that reached them (the
    /// surest first), then id.
    nodes: Vec<ImpactNode>,
    /// The files affected: the targets' and the dependents'.
    files: BTreeSet<String>,
    /// How many files hold a dependent.
    dependent_files: u64,
    /// The files of test, example and vendored code whose references were left out.
    secondary_left_out: BTreeSet<String>,
}

/// What the map holds, and what it leaves out.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    /// Row totals.
    pub totals: map::MapCounts,
    /// Files and lines by language.
    pub languages: BTreeMap<String, super::scan::LanguageCount>,
    /// Files the last scan skipped, by reason (`secret`, `too_large`, `binary`, …): the
    /// map holds nothing of them.
    pub skipped: BTreeMap<String, u64>,
    /// Up to [`FILES_LISTED`] of the skipped files with why, binary ones last, else by
    /// reason and path.
    pub skipped_files: Vec<LeftOut>,
    /// Mapped files whose analysis is incomplete (a parse limit stopped it): the map
    /// may lack some of what they define.
    pub degraded: u64,
    /// Up to [`FILES_LISTED`] of the degraded files with why, by path.
    pub degraded_files: Vec<LeftOut>,
}

/// A file the map leaves out, or holds only in part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// Repo-relative path.
    pub path: String,
    /// A skip reason (`secret`, `too_large`, …) or why analysis is incomplete
    /// (`parse_timeout: …`).
    pub reason: String,
    /// More about the reason, when there is more: the secret's rule and position (never
    /// its text), a glob, an OS error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// At most this many skipped files, and this many degraded ones, are listed by `stats`.
pub const FILES_LISTED: u32 = 20;

impl Workspace {
    /// Symbols whose name, qualified name or key is `name`; `Regex::new` and `Regex->new`
    /// name the qualified name `Regex.new` (see [`qualified_form`]). At most `limit`
    /// listed, by path and line (0: all); `limits` says how many there are in all
    /// (`budget` the limit, `used` the listed, `omitted` the rest).
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty name.
    pub fn symbol(&self, name: &str, limit: u32) -> Result<Envelope<Vec<SymbolHit>>> {
        self.store.read(|| {
            let written = non_empty("name", name)?;
            let (mut hits, total) = self.lookup_as_written(written, fetch(limit))?;
            let total = listed(&mut hits, limit, || Ok(total))?;
            // The place of a symbol is no secret; its first line and doc comment may be,
            // under a rule configured since the scan.
            let checked = self.map_checked_by_these_rules();
            for h in &mut hits {
                if !self.symbol_text_served(checked, h) {
                    h.signature = String::new();
                    h.doc = None;
                }
            }
            let paths = hits.iter().map(|h| h.path.clone()).collect();
            let listed = hits.len() as u64;
            let mut env = self.envelope(hits, paths)?;
            env.limits = list_limits(limit, listed, total);
            if total == 0 {
                self.note_unknown_symbol(&mut env, written)?;
            }
            Ok(env)
        })
    }

    /// References to `name`: to that symbol key if `name` is a key, else every use of the
    /// bare name (the last segment of `a.b.foo`, `A::foo`, `a->foo`). At most `limit`
    /// listed, by path, line and column (0: all); `limits` as [`Workspace::symbol`].
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty name.
    pub fn refs(&self, name: &str, limit: u32) -> Result<Envelope<Vec<RefHit>>> {
        self.store.read(|| {
            let written = non_empty("name", name)?;
            let name = qualified_form(written);
            let conn = self.store.conn();
            // `Regex.new` (`Regex::new`): the references resolved to the symbols it names,
            // and the unresolved ones written on a `Regex`; not every `new`. A qualified
            // name that names no symbol (`os.path.join`: a module path) means the uses
            // written on it (`Nope::new` lists the `new` written on `Nope`, not every
            // `new`).
            let qualified = name
                .rsplit_once('.')
                .filter(|_| !name.contains('#'))
                .map(|(q, last)| (q.rsplit('.').next().unwrap_or(q), last));
            let targets = match qualified {
                Some(_) => self.lookup_as_written(written, u32::MAX)?.0,
                None => Vec::new(),
            };
            let keys: Vec<&str> = targets.iter().map(|t| t.key.as_str()).collect();
            let (hits, total) = if name.contains('#') {
                let mut hits = map::refs_to_any(conn, &[&name], None, fetch(limit))?;
                let total = listed(&mut hits, limit, || {
                    map::count_refs_to_any(conn, &[&name], None)
                })?;
                (hits, total)
            } else if let Some((owner, last)) = qualified {
                let mut hits = map::refs_on(conn, last, &keys, owner, fetch(limit))?;
                let total = listed(&mut hits, limit, || {
                    map::count_refs_on(conn, last, &keys, owner)
                })?;
                (hits, total)
            } else {
                let bare = last_segment(&name);
                let mut hits = map::refs_by_name(conn, bare, fetch(limit))?;
                let total = listed(&mut hits, limit, || map::count_refs_by_name(conn, bare))?;
                (hits, total)
            };
            // Calls of the name on values whose type the map does not know are none of
            // these, nor known to be others': said so (as `callers` counts them).
            let untyped = match qualified {
                Some(_) => untyped_calls(conn, &targets, &keys, MIN_CONFIDENCE, true)?,
                None => 0,
            };
            let paths = hits.iter().map(|h| h.path.clone()).collect();
            let listed = hits.len() as u64;
            let mut env = self.envelope(hits, paths)?;
            env.limits = list_limits(limit, listed, total);
            if untyped > 0
                && let Some((_, last)) = qualified
            {
                env.capability.notes.push(format!(
                    "{untyped} call{s} of `.{last}(` on values of unknown type {are} not listed: \
                     no type the code makes evident tied {them} to a definition",
                    s = if untyped == 1 { "" } else { "s" },
                    are = if untyped == 1 { "is" } else { "are" },
                    them = if untyped == 1 { "it" } else { "them" },
                ));
            }
            if total == 0 {
                // A module's uses are its imports, which the map keeps as dependencies.
                if let Some(module) = self.module_named(written)? {
                    env.capability.notes.push(format!(
                        "no references to `{written}`: it is the module `{module}`, whose importers are dependencies (`loci impact {written} --depth 1` lists them)"
                    ));
                } else if targets.is_empty() && qualified.is_some() {
                    self.note_unknown_symbol(&mut env, written)?;
                } else {
                    self.note_changes_behind_nothing(&mut env)?;
                }
            }
            Ok(env)
        })
    }

    /// [`Workspace::callers_with`] at the default confidence ([`MIN_CONFIDENCE`]), tests
    /// included.
    pub fn callers(&self, symbol: &str, limit: u32) -> Result<Envelope<Callers>> {
        self.callers_with(symbol, limit, MIN_CONFIDENCE, true)
    }

    /// Call sites resolved to the symbols named `symbol` (every symbol that
    /// [`Workspace::symbol`] finds; for a Python class, its `__init__` too: a subclass's
    /// `super().__init__(..)` constructs it) at `min_confidence` or more, at most `limit` listed,
    /// the surest first, then by path, line and column (0: all); `limits` counts them as
    /// [`Workspace::symbol`] counts symbols, and [`Callers::weaker`] the calls below
    /// `min_confidence`. Without `tests`, calls written in test, example and vendored code
    /// ([`loci_core::secondary`]) are counted in [`Callers::secondary_left_out`], not listed
    /// nor counted elsewhere.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty name or a confidence outside
    /// [0, 1].
    pub fn callers_with(
        &self,
        symbol: &str,
        limit: u32,
        min_confidence: f64,
        tests: bool,
    ) -> Result<Envelope<Callers>> {
        self.store.read(|| {
            let written = non_empty("symbol", symbol)?;
            let Edges { min_confidence, .. } = Edges {
                min_confidence,
                ..Edges::default()
            }
            .checked()?;
            let conn = self.store.conn();
            let mut targets = self.lookup_as_written(written, u32::MAX)?.0;
            let constructors: Vec<String> = targets
                .iter()
                .filter(|t| {
                    t.kind == "class"
                        && loci_core::Language::from_path(&t.path)
                            == Some(loci_core::Language::Python)
                })
                .map(|t| format!("{}#{}.__init__@method", t.path, t.qualified_name))
                .collect();
            let keys: Vec<&str> = targets
                .iter()
                .map(|t| t.key.as_str())
                .chain(constructors.iter().map(String::as_str))
                .collect();
            let (calls, total, weaker, secondary_left_out) = if tests {
                let mut calls = map::calls_to(conn, &keys, min_confidence, fetch(limit))?;
                let total = listed(&mut calls, limit, || {
                    map::count_calls_to(conn, &keys, min_confidence)
                })?;
                let weaker = if min_confidence > 0.0 {
                    map::count_calls_to(conn, &keys, 0.0)? - total
                } else {
                    0
                };
                (calls, total, weaker, 0)
            } else {
                // Which code is a test's is a rule on paths, not a column: every call is
                // read, the surest first, and sorted out here.
                let all = map::calls_to(conn, &keys, 0.0, u32::MAX)?;
                let read = all.len();
                let (mut calls, weaker): (Vec<_>, Vec<_>) = all
                    .into_iter()
                    .filter(|c| !written_in_secondary_code(c))
                    .partition(|c| c.confidence >= min_confidence);
                let left_out = (read - calls.len() - weaker.len()) as u64;
                let total = calls.len() as u64;
                calls.truncate(listed_count(calls.len(), limit));
                (calls, total, weaker.len() as u64, left_out)
            };
            let untyped = untyped_calls(conn, &targets, &keys, min_confidence, tests)?;
            // 1,201 definitions of `foo` were all listed before one call at `--limit 1`.
            let targets_total = targets.len() as u64;
            if limit > 0 {
                targets.truncate(limit as usize);
            }
            let paths = targets
                .iter()
                .map(|t| t.path.clone())
                .chain(calls.iter().map(|c| c.path.clone()))
                .collect();
            let listed = calls.len() as u64;
            let mut env = self.envelope(
                Callers {
                    targets,
                    targets_total,
                    calls,
                    min_confidence,
                    weaker,
                    untyped,
                    secondary_left_out,
                },
                paths,
            )?;
            env.limits = list_limits(limit, listed, total);
            if targets_total == 0 {
                self.note_unknown_symbol(&mut env, written)?;
            } else if total == 0 && weaker == 0 {
                self.note_changes_behind_nothing(&mut env)?;
            }
            Ok(env)
        })
    }

    /// What `path` (a file, or a module as code imports it: `json.decoder`) imports, or with
    /// `reverse`, what imports it.
    pub fn deps(&self, path: &str, reverse: bool) -> Result<Envelope<Deps>> {
        self.store.read(|| {
            // A module named as code imports it (`json.decoder`) is its file, as for `impact`.
            let path = self.file_or_module(path)?;
            let conn = self.store.conn();
            let (direction, edges) = if reverse {
                (Direction::ImportedBy, map::deps_to(conn, &path)?)
            } else {
                (Direction::Imports, map::deps_from(conn, &path)?)
            };
            let relies = std::iter::once(path.clone())
                .chain(edges.iter().map(|e| e.from.clone()))
                .collect();
            self.envelope(
                Deps {
                    path,
                    direction,
                    edges,
                },
                relies,
            )
        })
    }

    /// The reverse-dependency blast radius of a file (files that import it or whose calls,
    /// types and bases resolved into it, transitively)
    /// or a symbol (definitions that reference it, transitively), to `depth` hops, over
    /// the default edges ([`Edges::hard`]: at [`MIN_CONFIDENCE`] or more; with `hard`,
    /// stated ones only). Lists every dependent: see [`Workspace::impact_with`].
    ///
    /// Errors: as [`Workspace::impact_with`].
    pub fn impact(&self, target: &str, depth: u32, hard: bool) -> Result<Envelope<Impact>> {
        self.impact_with(target, depth, Edges::hard(hard), 0)
    }

    /// [`Workspace::impact`] listing at most `limit` dependents (0: all).
    ///
    /// Errors: as [`Workspace::impact_with`].
    pub fn impact_limited(
        &self,
        target: &str,
        depth: u32,
        hard: bool,
        limit: u32,
    ) -> Result<Envelope<Impact>> {
        self.impact_with(target, depth, Edges::hard(hard), limit)
    }

    /// The blast radius of `target` to `depth` hops over the `edges` asked, listing at
    /// most `limit` dependents (0: all), the nearest first (by depth, then the confidence
    /// of the edge that reached them, then id). The counts stay those of the whole walk;
    /// what was left out is in `limits` (`truncated`, `omitted`; `budget` is `limit`,
    /// `used` the dependents listed), and what only weaker edges reach in
    /// [`Impact::weaker`]. Only the target's file and the listed dependents' files are
    /// compared with the disk (`stale_warnings`, `freshness`): those are the files the
    /// answer shows.
    ///
    /// Errors: [`EngineError::InvalidArgument`] for an empty target, a depth of 0, a
    /// confidence outside [0, 1] or a path outside the workspace;
    /// [`EngineError::NotFound`] when no file or symbol has that name.
    pub fn impact_with(
        &self,
        target: &str,
        depth: u32,
        edges: Edges,
        limit: u32,
    ) -> Result<Envelope<Impact>> {
        self.store.read(|| {
            let target = non_empty("target", target)?;
            let edges = edges.checked()?;
            // Every door refuses 0 alike: the CLI, MCP and LSP (none walks 1 instead).
            if depth == 0 {
                return Err(EngineError::InvalidArgument {
                    name: "depth".into(),
                    message: "the depth is at least 1 (direct dependents)".into(),
                });
            }
            let (as_path, not_a_path) = match self.map_path(target) {
                Ok(path) => (Some(path), None),
                // A path that leaves the workspace is refused, not searched as a name.
                Err(EngineError::InvalidArgument { message, .. }) => {
                    return Err(EngineError::InvalidArgument {
                        name: "target".into(),
                        message,
                    });
                }
                Err(e) => (None, Some(e)),
            };
            // A module named as code imports it (`reprlib`, `json.decoder`, `nix::unistd`)
            // is its file, before a definition of that name (`bisect = bisect_right`).
            let as_path = match as_path {
                Some(path) => Some(path),
                None => match self.module_named(target)? {
                    // A test or an example named as a module is a program nothing imports:
                    // a definition of that name is meant (`is_same_file`).
                    Some(path)
                        if loci_core::secondary::secondary_code(&path).is_some()
                            && !self.lookup_as_written(target, 1)?.0.is_empty() =>
                    {
                        None
                    }
                    named => named,
                },
            };
            let impact = if let Some(path) = as_path {
                self.impact_file(path, depth, edges, limit)?
            } else {
                let symbols = self.lookup_as_written(target, LIST_LIMIT)?.0;
                if symbols.is_empty() {
                    // A folder of the map is neither: it is named a folder, not "no file or
                    // symbol".
                    if let Ok(folder) = self.contain("target", target)
                        && let Some(file) = self.file_in_folder(&folder)?
                    {
                        return Err(EngineError::NotFound(format!(
                            "`{folder}` is a folder: impact takes a file or a symbol (such as `{file}`)"
                        )));
                    }
                    // A file's name or path says why the map has no such file (`lib.rs`:
                    // several end in it; skipped; not scanned).
                    let path_shaped = target.contains('/')
                        || loci_core::lang::file_language_name(target).is_some();
                    if let Some(e) = not_a_path.filter(|_| path_shaped) {
                        return Err(e);
                    }
                    return Err(EngineError::NotFound(format!(
                        "no file or symbol named `{target}` in the map"
                    )));
                }
                self.impact_symbol(&symbols, depth, edges, limit)?
            };
            let omitted = impact.dependents - impact.nodes.len() as u64;
            let relies = impact.files.clone();
            let used = impact.nodes.len() as u64;
            let merged = (impact.mode == "symbol" && impact.target.len() > 1).then(|| {
                format!(
                    "`{target}` names {} definitions, whose dependents are listed together: \
                     name one by its key (`{}`) for its own",
                    impact.target.len(),
                    impact.target[0]
                )
            });
            let mut env = self.envelope(impact, relies)?;
            env.capability.notes.extend(merged);
            env.limits.budget = (limit > 0).then_some(u64::from(limit));
            env.limits.used = used;
            env.limits.truncated = omitted > 0;
            env.limits.omitted = omitted;
            Ok(env)
        })
    }

    /// The file walk, listing the first `limit` importers (0: all).
    fn impact_file(&self, path: String, depth: u32, edges: Edges, limit: u32) -> Result<Impact> {
        let Edges {
            hard,
            min_confidence,
            tests,
        } = edges;
        let conn = self.store.conn();
        // Resolved imports are stated by the parser, so `hard` keeps every import edge;
        // of the reference edges, the stated ones.
        let walk = map::importers_within(conn, &path, depth, hard, min_confidence, tests, limit)?;
        let dependents: u64 = walk.by_depth.iter().sum();
        // What the weaker edges would add: a walk over all of them, counted (one listed,
        // so that no level's paths are read).
        let weaker = if min_confidence > 0.0 {
            let all = map::importers_within(conn, &path, depth, hard, 0.0, tests, 1)?;
            all.by_depth.iter().sum::<u64>() - dependents
        } else {
            0
        };
        let mut files: Vec<String> = walk.listed.iter().map(|i| i.path.clone()).collect();
        files.push(path.clone());
        files.sort();
        let nodes: Vec<ImpactNode> = walk
            .listed
            .into_iter()
            .map(|i| ImpactNode {
                id: i.path.clone(),
                depth: i.depth,
                via: ImpactEdge {
                    at: format!("{}:{}", i.path, i.line + 1),
                    from: i.path.clone(),
                    to: i.imports,
                    kind: i.kind,
                    provenance: i.provenance,
                    confidence: i.confidence,
                    source: None,
                },
                path: i.path,
            })
            .collect();
        Ok(Impact {
            target: vec![path],
            mode: "file",
            depth,
            hard,
            min_confidence,
            dependents,
            weaker,
            secondary_left_out: walk.secondary_left_out,
            by_depth: walk.by_depth,
            // Every importer is a file of its own, and none is the target.
            files_affected: dependents + 1,
            dependent_files: dependents,
            nodes,
            files,
        })
    }

    /// The symbol walk, listing the first `limit` dependents (0: all).
    fn impact_symbol(
        &self,
        symbols: &[SymbolHit],
        depth: u32,
        edges: Edges,
        limit: u32,
    ) -> Result<Impact> {
        let walk = self.walk_symbols(symbols, depth, edges)?;
        let mut nodes = walk.nodes;
        let weaker = if edges.min_confidence > 0.0 {
            let all = Edges {
                min_confidence: 0.0,
                ..edges
            };
            self.walk_symbols(symbols, depth, all)?.nodes.len() - nodes.len()
        } else {
            0
        };
        let own: BTreeSet<String> = symbols.iter().map(|s| s.path.clone()).collect();
        let dependents = nodes.len() as u64;
        let by_depth = count_by_depth(nodes.iter().map(|n| n.depth));
        let files_affected = walk.files.len() as u64;
        nodes.truncate(listed_count(nodes.len(), limit));
        let files = own
            .into_iter()
            .chain(nodes.iter().map(|n| n.path.clone()))
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        Ok(Impact {
            target: symbols.iter().map(|s| s.key.clone()).collect(),
            mode: "symbol",
            depth,
            hard: edges.hard,
            min_confidence: edges.min_confidence,
            dependents,
            weaker: weaker as u64,
            secondary_left_out: walk.secondary_left_out.len() as u64,
            by_depth,
            files_affected,
            dependent_files: walk.dependent_files,
            nodes,
            files,
        })
    }

    /// The dependents of `symbols` over `edges` to `depth` hops (see [`SymbolWalk`]).
    fn walk_symbols(&self, symbols: &[SymbolHit], depth: u32, edges: Edges) -> Result<SymbolWalk> {
        let conn = self.store.conn();
        // A type's uses are its members' uses too (`Parser::new()`, `p.parse()`): the
        // members defined with it, in its file, walk from depth 0 as it does, so the impact
        // of a Rust struct is more than its imports and `impl` lines.
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut queue: VecDeque<(String, u32)> = VecDeque::new();
        for s in symbols {
            for key in std::iter::once(s.key.clone()).chain(map::member_keys(
                conn,
                &s.path,
                &s.qualified_name,
            )?) {
                if seen.insert(key.clone()) {
                    queue.push_back((key, 0));
                }
            }
        }
        let mut files: BTreeSet<String> = symbols.iter().map(|s| s.path.clone()).collect();
        let mut dependent_files: BTreeSet<String> = BTreeSet::new();
        let mut secondary_left_out: BTreeSet<String> = BTreeSet::new();
        let mut nodes = Vec::new();
        while let Some((key, d)) = queue.pop_front() {
            if d >= depth {
                continue;
            }
            self.check_cancelled()?;
            // The surest reference first: a dependent is reached through its surest edge.
            let mut refs = map::refs_to(conn, &key, u32::MAX)?;
            refs.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
            for r in refs {
                if (edges.hard && r.provenance != "stated") || r.confidence < edges.min_confidence {
                    continue;
                }
                // A reference outside any definition makes its file the dependent.
                let from = r.enclosing_key.clone().unwrap_or_else(|| r.path.clone());
                if !edges.tests && written_in_secondary_code(&r) {
                    secondary_left_out.insert(from);
                    continue;
                }
                if seen.insert(from.clone()) {
                    files.insert(r.path.clone());
                    dependent_files.insert(r.path.clone());
                    if r.enclosing_key.is_some() {
                        queue.push_back((from.clone(), d + 1));
                    }
                    nodes.push(ImpactNode {
                        id: from.clone(),
                        path: r.path.clone(),
                        depth: d + 1,
                        via: ImpactEdge {
                            from,
                            to: key.clone(),
                            kind: r.kind.clone(),
                            at: format!("{}:{}", r.path, r.line + 1),
                            provenance: r.provenance.clone(),
                            confidence: r.confidence,
                            source: r.source.clone(),
                        },
                    });
                }
            }
        }
        nodes.sort_by(|a, b| {
            a.depth
                .cmp(&b.depth)
                .then_with(|| b.via.confidence.total_cmp(&a.via.confidence))
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(SymbolWalk {
            nodes,
            files,
            dependent_files: dependent_files.len() as u64,
            secondary_left_out,
        })
    }

    /// Row totals, files by language, and the files the map leaves out: skipped (by
    /// reason, up to [`FILES_LISTED`] named) and degraded (up to as many named).
    pub fn stats(&self) -> Result<Envelope<Stats>> {
        self.store.read(|| {
            let conn = self.store.conn();
            let kept = map::kept_totals(conn)?;
            let map::MapTotals {
                counts: totals,
                languages: by_language,
            } = match kept {
                Some(totals) => totals,
                None => map::count_totals(conn, None)?,
            };
            let mut languages = BTreeMap::new();
            for (language, files, lines) in by_language {
                languages.insert(
                    language.unwrap_or_else(|| "unknown".into()),
                    super::scan::LanguageCount { files, lines },
                );
            }
            let skipped: BTreeMap<String, u64> = map::skip_counts(conn)?.into_iter().collect();
            let skipped_files = map::skipped_listed(conn, FILES_LISTED)?
                .into_iter()
                .map(|s| LeftOut {
                    path: s.path,
                    reason: s.reason,
                    detail: s.detail,
                })
                .collect();
            let (degraded, degraded_files) = map::degraded_files(conn, FILES_LISTED)?;
            let degraded_files = degraded_files
                .into_iter()
                .map(|(path, reason)| LeftOut {
                    path,
                    reason,
                    detail: None,
                })
                .collect();
            self.envelope(
                Stats {
                    totals,
                    languages,
                    skipped,
                    skipped_files,
                    degraded,
                    degraded_files,
                },
                Vec::new(),
            )
        })
    }

    /// Normalizes a user-given path (absolute, `./`-prefixed or repo-relative) to the
    /// map's form and checks that the map has it; a path the map lacks that ends exactly
    /// one mapped path (`common/rewind.rs`) is that one.
    pub fn map_path(&self, path: &str) -> Result<String> {
        let path = non_empty("path", path)?;
        let rel = self.contain("path", path)?;
        let exists = loci_store::map::file_exists(self.store.conn(), &rel)?;
        if exists {
            Ok(rel)
        } else if let Some(file) = self.file_in_folder(&rel)? {
            // A folder the map holds is named a folder (`loci deps mime`), not "not in the
            // map".
            Err(EngineError::NotFound(format!(
                "`{rel}` is a folder: the map records imports per file (such as `{file}`)"
            )))
        } else if let Some(skip) = map::skipped_file(self.store.conn(), &rel)? {
            // Which skip, and why: "not scanned, ignored, or skipped" of a file skipped as
            // a secret would leave the user to guess.
            Err(EngineError::NotFound(format!(
                "`{rel}` is not in the map: the last scan skipped it ({}{})",
                skip.reason,
                skip.detail.map(|d| format!(": {d}")).unwrap_or_default()
            )))
        } else {
            // A path written from a folder inside the repository (`common/rewind.rs` for
            // `hyper-util/src/common/rewind.rs`) is the one mapped file ending in it.
            match loci_store::map::files_named(self.store.conn(), std::slice::from_ref(&rel), 6)?
                .as_slice()
            {
                [only] => Ok(only.clone()),
                [] => Err(EngineError::NotFound(format!(
                    "`{rel}` is not in the map (not scanned, ignored, or skipped)"
                ))),
                several => Err(EngineError::NotFound(format!(
                    "`{rel}` is not a path of the map, and several end in it: {}{}",
                    several[..several.len().min(5)].join(", "),
                    if several.len() > 5 { ", …" } else { "" }
                ))),
            }
        }
    }

    /// Whether the repo-relative `rel` (no trailing `/`) is a mapped file, a folder holding
    /// one, or the subject of a memory page or a folder holding one (memory about a
    /// deleted file still has its place).
    pub(crate) fn path_known(&self, rel: &str) -> Result<bool> {
        let conn = self.store.conn();
        if crate::memory::claims::resolve_path(conn, rel)?.is_some() {
            return Ok(true);
        }
        Ok(loci_store::memory::pages_at_or_under(conn, rel)?)
    }

    /// The largest mapped file under the folder `rel` (repo-relative, no trailing `/`),
    /// or `None` when the map holds no file under it.
    fn file_in_folder(&self, rel: &str) -> Result<Option<String>> {
        if rel.is_empty() || rel == "." {
            return Ok(None);
        }
        Ok(loci_store::map::largest_file_under(self.store.conn(), rel)?)
    }
}

/// How many of `total` items a listing of at most `limit` (0: no limit) shows.
fn listed_count(total: usize, limit: u32) -> usize {
    if limit == 0 {
        total
    } else {
        total.min(limit as usize)
    }
}

/// How many of `depths` are at each depth (index 0 = depth 1), up to the deepest one.
fn count_by_depth(depths: impl Iterator<Item = u32>) -> Vec<u64> {
    let mut counts = Vec::new();
    for d in depths {
        let i = d.saturating_sub(1) as usize;
        if counts.len() <= i {
            counts.resize(i + 1, 0);
        }
        counts[i] += 1;
    }
    counts
}

/// `value` trimmed, or [`EngineError::InvalidArgument`] naming the argument `name` when
/// nothing is left.
pub(crate) fn non_empty<'a>(name: &str, value: &'a str) -> Result<&'a str> {
    let v = value.trim();
    if v.is_empty() {
        return Err(EngineError::InvalidArgument {
            name: name.into(),
            message: "must not be empty".into(),
        });
    }
    Ok(v)
}

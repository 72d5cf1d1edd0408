//! The static checks of one claim (`missing_path`, `missing_symbol`, `version_mismatch`)
//! and the suggestions and evidence each finding carries.

use std::collections::{BTreeSet, HashMap};

use loci_core::claims::ClaimKind;
use loci_store::audit::NewFinding;
use loci_store::memory as mem;

use crate::Result;
use crate::audit::renamed::{Snapshot, renamed_definition};
use crate::map::manifests;
use crate::memory::claims::{SymbolResolution, resolve_path, resolve_symbol};

use super::language::{LANGUAGE_FUNCTIONS, negated_clause, provided_by_the_language};
use super::names::{
    member_similarity, module_qualifier, name_candidates, names_a_type, one_word_apart,
    scanned_folder_rename, scanned_rename,
};
use super::{Ctx, page_scope};

pub(super) struct Check<'a> {
    pub(super) origin: &'static str,
    pub(super) subject: &'a str,
    pub(super) doc_dir: Option<&'a str>,
    pub(super) kind: Option<ClaimKind>,
    pub(super) text: &'a str,
    pub(super) target: &'a str,
    pub(super) version: Option<&'a str>,
    pub(super) was_resolved: bool,
    pub(super) line: u32,
    pub(super) column: u32,
    pub(super) end_column: u32,
    pub(super) revision_id: Option<i64>,
    /// What a memory claim named when it was written (its definitions' keys and
    /// fingerprints): a renamed definition is found by these first ([`crate::audit::renamed`]).
    pub(super) snapshots: Vec<Snapshot<'a>>,
    /// When they were taken (RFC 3339).
    pub(super) snapshot_at: Option<&'a str>,
    /// The claims of a memory claim's revision, whose paths say what code an entry is
    /// about ([`page_scope`]; empty for a doc).
    pub(super) page_claims: &'a [mem::ClaimRow],
    /// The claim's byte range in its revision's body (memory only).
    pub(super) span: (u32, u32),
}

impl<'a> Check<'a> {
    /// The check of the claim `c` of the doc at `path` (in the folder `doc_dir`), which
    /// resolved when lint last checked it if `was_resolved`.
    pub(super) fn of_doc(
        path: &'a str,
        doc_dir: &'a str,
        c: &'a loci_core::claims::Claim,
        was_resolved: bool,
    ) -> Check<'a> {
        Check {
            origin: "doc",
            subject: path,
            doc_dir: Some(doc_dir),
            kind: Some(c.kind),
            text: &c.text,
            target: &c.target,
            version: c.version.as_deref(),
            was_resolved,
            line: c.line,
            column: c.column,
            end_column: c.column + (c.end - c.start),
            revision_id: None,
            snapshots: Vec::new(),
            snapshot_at: None,
            page_claims: &[],
            span: (0, 0),
        }
    }
}

impl Ctx<'_> {
    /// The finding for a claim, if it fails, and what it resolves to now, if anything.
    pub(super) fn check(&mut self, c: &Check<'_>) -> Result<(Option<NewFinding>, Option<String>)> {
        match c.kind {
            Some(ClaimKind::Path) => self.check_path(c),
            Some(ClaimKind::Symbol) => self.check_symbol(c),
            Some(ClaimKind::Version) => self.check_version(c),
            None => Ok((None, None)),
        }
    }

    /// `missing_path`: a path claim that names nothing in the map or on disk, when it is
    /// evidently a path here, with where it went as the suggestion.
    fn check_path(&mut self, c: &Check<'_>) -> Result<(Option<NewFinding>, Option<String>)> {
        let conn = self.ws.store.conn();
        // Paths inside directories the walk never maps (`.git`, `.loci`, ...)
        // cannot be checked against the map: not a finding either way.
        let first = c.target.split('/').next().unwrap_or("");
        if crate::map::walk::ALWAYS_SKIPPED_DIRS.contains(&first) {
            return Ok((None, None));
        }
        if resolve_path(conn, c.target)?.is_some() || self.ws.root.join(c.target).exists() {
            return Ok((None, Some(c.target.to_string())));
        }
        // Relative to the doc's folder or a folder above it: a README inside a package
        // names the package's files from the package's root (`tests/visualizer.rs` in
        // `tinyvec/debug_metadata/README.md` is `tinyvec/tests/visualizer.rs`).
        let mut dir = c.doc_dir.filter(|d| !d.is_empty());
        while let Some(d) = dir {
            let relative = format!("{d}/{}", c.target);
            if self.ws.root.join(&relative).exists() {
                return Ok((None, Some(relative)));
            }
            dir = d.rsplit_once('/').map(|(parent, _)| parent);
        }
        // Without a file extension or a first segment that exists here, a
        // slash-separated token is not evidently a path of this repository
        // (`workspace/executeCommand`, `owner/repo`): no finding.
        let first = c.target.split('/').next().unwrap_or("");
        let has_extension = c.target.rsplit('/').next().is_some_and(|name| {
            name.rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty())
        });
        if !c.was_resolved && !has_extension && !self.ws.root.join(first).exists() {
            return Ok((None, None));
        }
        // A bare file name (`go.mod`) names "that file" wherever it is: fine if
        // one exists anywhere; one the repository never had (`sqlite3.h`, a system
        // header a README tells the reader to point at) is not evidently its own.
        if !c.target.contains('/') {
            self.load_file_names()?;
            if self
                .file_names
                .as_ref()
                .is_some_and(|m| m.contains_key(c.target))
            {
                return Ok((None, Some(c.target.to_string())));
            }
            if !c.was_resolved {
                return Ok((None, None));
            }
        }
        let suggestion = self.path_suggestion(c.target)?;
        Ok((
            Some(new_finding(
                c,
                "missing_path",
                "high",
                Some(format!("`{}` does not exist", c.target)),
                suggestion,
            )),
            None,
        ))
    }

    /// `missing_symbol`: a symbol claim that names no definition of the map; resolved
    /// claims (one definition, or several) return what they resolved to.
    fn check_symbol(&mut self, c: &Check<'_>) -> Result<(Option<NewFinding>, Option<String>)> {
        let conn = self.ws.store.conn();
        match resolve_symbol(conn, c.target, (c.origin == "page").then_some(c.subject))? {
            SymbolResolution::Unique(s) => Ok((None, Some(s.key))),
            SymbolResolution::Ambiguous(_) => Ok((None, Some(c.target.to_string()))),
            SymbolResolution::Missing => {
                let last = c.target.rsplit('.').next().unwrap_or(c.target);
                let qualifier = c
                    .target
                    .contains('.')
                    .then(|| &c.target[..c.target.len() - last.len() - 1]);
                // A renamed definition, found by what it kept (its body, its
                // signature) before any name is compared.
                let sep = if c.text.contains("::") { "::" } else { "." };
                if let Some(r) = renamed_definition(
                    conn,
                    &self.ws.root,
                    &self.ws.config.scan.analyze_options(),
                    &c.snapshots,
                    c.snapshot_at,
                )? {
                    let suggestion = match qualifier {
                        // A top-level definition is qualified by its module: the one
                        // it is in now (`email.addr.formataddr` once `email/utils.py`
                        // became `email/addr.py`, not the claim's own name again).
                        Some(q) if !r.qualified_name.contains('.') => {
                            let q = module_qualifier(q, &r.path);
                            format!("{}{sep}{}", q.replace('.', sep), r.name)
                        }
                        Some(_) => r.qualified_name.replace('.', sep),
                        None => r.name.clone(),
                    };
                    return Ok((
                        Some(new_finding(
                            c,
                            "missing_symbol",
                            "medium",
                            Some(format!(
                                "no symbol `{}` in the map; `{}` in {} has {}",
                                c.target,
                                r.qualified_name,
                                r.path,
                                r.evidence.words()
                            )),
                            Some(suggestion),
                        )),
                        None,
                    ));
                }
                let near = match qualifier {
                    // `Type.member` / `module.func`: a near miss among the members
                    // of what the qualifier names (a settings key such as
                    // `scan.max_files` has none, and is no claim about code).
                    Some(q) => self.closest_member(conn, q, last, sep == "::")?,
                    None => self.closest_name(last)?,
                };
                // A name that never resolved and that the page's own code refers to
                // (`len()` on a page about a file calling it, beside `le`;
                // `os.rename()` beside `os.renames`; `TCPServer.serve_forever()`,
                // inherited) is that code's use of something outside the map or
                // beyond the map's reach, not a near miss nor a missing member.
                let used_here = !c.was_resolved && self.used_in_scope(c, last)?;
                // A member every type may have (`Value::to_string()`, from `Display`) is no
                // near miss of a real one (`Value::String`).
                let provided = qualifier.is_some() && provided_by_the_language(last);
                let near_miss = near.as_ref().is_some_and(|(_, score)| *score >= 0.88)
                    && !used_here
                    && !provided;
                // `User.delete()` — a call on a type the map has — is a claim
                // about that type's members even when no member is close.
                let member_call = match qualifier {
                    Some(q)
                        if c.text.ends_with(')')
                            && !provided_by_the_language(last)
                            && !used_here =>
                    {
                        names_a_type(conn, q)?
                    }
                    _ => false,
                };
                // `_checknetloc()` on a page about urllib/parse.py, once it became
                // `_validate_netloc`: a call the page's code neither defines nor
                // makes, and the map defines nowhere ([`Ctx::unknown_call`]).
                let unknown_call = !(c.was_resolved || near_miss || member_call)
                    && qualifier.is_none()
                    && self.unknown_call(c, last)?;
                if !(c.was_resolved || near_miss || member_call || unknown_call) {
                    return Ok((None, None));
                }
                // In the claim's own form: `Header.encode` for `Header.encod()`,
                // `Span::new` for `Span::nwe()`, never the bare member.
                // A name that is not near any (an unknown call) suggests nothing.
                // The claim itself (`leaf.helper` where only another type has a `helper`)
                // is no suggestion.
                let suggestion = near
                    .filter(|_| !unknown_call)
                    .map(|(n, _)| match qualifier {
                        Some(q) => format!("{}{sep}{n}", q.replace('.', sep)),
                        None => n,
                    })
                    .filter(|s| *s != c.target);
                let truth = match &suggestion {
                    Some(s) => {
                        format!(
                            "no symbol `{}` in the map; `{s}` has a similar name",
                            c.target
                        )
                    }
                    None if unknown_call => format!(
                        "no symbol `{}` in the map, and {} neither defines nor calls it",
                        c.target,
                        self.scope(c)?.join(", ")
                    ),
                    None => format!("no symbol `{}` in the map", c.target),
                };
                Ok((
                    Some(new_finding(
                        c,
                        "missing_symbol",
                        "medium",
                        Some(truth),
                        suggestion,
                    )),
                    None,
                ))
            }
        }
    }

    /// `version_mismatch`: `name@1.2.3` where every manifest declaring `name` disagrees.
    fn check_version(&mut self, c: &Check<'_>) -> Result<(Option<NewFinding>, Option<String>)> {
        let Some(version) = c.version else {
            return Ok((None, None));
        };
        let name = manifests::normalize_name(c.target);
        let declared: Vec<&manifests::Declared> = self
            .declared()?
            .iter()
            .filter(|d| manifests::normalize_name(&d.name) == name)
            .collect();
        if declared.is_empty() || declared.iter().any(|d| manifests::agrees(version, &d.spec)) {
            return Ok((None, None));
        }
        let truth = declared
            .iter()
            .map(|d| format!("{} {} in {}", d.name, d.spec, d.manifest))
            .collect::<Vec<_>>()
            .join("; ");
        Ok((
            Some(new_finding(
                c,
                "version_mismatch",
                "medium",
                Some(format!("declared: {truth}")),
                None,
            )),
            None,
        ))
    }

    /// Whether the memory claim `c`, a call of `name` in the form `name()` that resolves
    /// nowhere in the map, names code the page's own code lacks: its page is about paths
    /// of the map ([`page_scope`]), no file there refers to `name` (a builtin such as
    /// `len()`, a function imported from a dependency: the code there calls them), it is
    /// not a member every type has nor a function of a language ([`LANGUAGE_FUNCTIONS`]:
    /// `print()` names the builtin, called or not), and the clause around it does not say it is absent
    /// (`` `encode_fast()` never existed here ``, "was removed", "is not here":
    /// [`negated_clause`]). Such a claim was silent (docs/audit.md, "A call that never
    /// resolved", has the measurement behind the rule).
    fn unknown_call(&mut self, c: &Check<'_>, name: &str) -> Result<bool> {
        let Some(revision_id) = c.revision_id else {
            return Ok(false);
        };
        if c.origin != "page"
            || !c.text.ends_with(')')
            || provided_by_the_language(name)
            || LANGUAGE_FUNCTIONS.contains(&name)
        {
            return Ok(false);
        }
        if self.scope(c)?.is_empty() || self.used_in_scope(c, name)? {
            return Ok(false);
        }
        let conn = self.ws.store.conn();
        let body = match self.bodies.entry(revision_id) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                mem::revision_by_id(conn, revision_id)?
                    .map(|r| r.body)
                    .unwrap_or_default(),
            ),
        };
        Ok(!negated_clause(body, c.span.0 as usize, c.span.1 as usize))
    }

    /// Whether a file of the code a memory claim's page is about ([`page_scope`]) refers
    /// to `name` (a call, a use, an import).
    fn used_in_scope(&mut self, c: &Check<'_>, name: &str) -> Result<bool> {
        if c.origin != "page" {
            return Ok(false);
        }
        for path in self.scope(c)? {
            if loci_store::map::referenced_in(self.ws.store.conn(), name, &path)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// [`page_scope`] of a memory claim's page, made once per revision in a run (only a
    /// name that resolves nowhere asks for it).
    fn scope(&mut self, c: &Check<'_>) -> Result<Vec<String>> {
        let Some(revision_id) = c.revision_id else {
            return Ok(Vec::new());
        };
        if let Some(scope) = self.scopes.get(&revision_id) {
            return Ok(scope.clone());
        }
        let scope = page_scope(self.ws.store.conn(), c.subject, c.page_claims)?;
        self.scopes.insert(revision_id, scope.clone());
        Ok(scope)
    }

    /// Where a missing path went: the renames the scans saw (the drift ledger, followed
    /// to a path in the map; for a folder, where its files went), else git's rename
    /// history, else the only file of that name.
    pub(super) fn path_suggestion(&mut self, target: &str) -> Result<Option<String>> {
        if let Some(to) = scanned_rename(self.ws.store.conn(), target)? {
            return Ok(Some(to));
        }
        if let Some(to) = scanned_folder_rename(self.ws.store.conn(), target)? {
            return Ok(Some(to));
        }
        if let Some(to) = crate::memory::memory::renamed_to(&self.ws.root, target) {
            return Ok(Some(to));
        }
        self.load_file_names()?;
        let name = target
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(target);
        let Some(names) = self.file_names.as_ref() else {
            return Ok(None);
        };
        if let Some(v) = names.get(name) {
            return Ok((v.len() == 1).then(|| v[0].clone()));
        }
        // A typo of a file beside it (`app/modles.py` for `app/models.py`): the one mapped
        // file in the same folder nearest within two edits (Damerau–Levenshtein: a swap of
        // two letters is one) and a third of the name.
        let dir = target
            .trim_end_matches('/')
            .rsplit_once('/')
            .map_or("", |(d, _)| d);
        let most = (name.chars().count() / 3).min(2);
        // The folder first, then the distance: the distance to every file name of a
        // 50,000-file map, for each missing path, costs a fifth of a lint.
        let mut near: Vec<(usize, &String)> = names
            .iter()
            .flat_map(|(n, paths)| {
                paths
                    .iter()
                    .filter(|p| p.rsplit_once('/').map_or("", |(pd, _)| pd) == dir)
                    .map(move |p| (n, p))
            })
            .filter_map(|(n, p)| {
                let d = strsim::damerau_levenshtein(name, n);
                (d <= most).then_some((d, p))
            })
            .collect();
        near.sort();
        Ok(match near.as_slice() {
            [(d, p), rest @ ..] if rest.first().is_none_or(|(e, _)| e > d) => Some((*p).clone()),
            _ => None,
        })
    }

    /// The member of `qualifier` (a type or module: its last segment names a symbol or a
    /// source file's stem) most similar to `name`, with its score.
    fn closest_member(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        qualifier: &str,
        name: &str,
        rust: bool,
    ) -> Result<Option<(String, f64)>> {
        // `std::error::Error` is no near miss of winnow's `error::ContextError`: a path
        // whose first segment the map does not have is outside it.
        if (rust || qualifier.contains('.')) && !self.head_mapped(conn, qualifier, rust)? {
            return Ok(None);
        }
        let scope = qualifier.rsplit('.').next().unwrap_or(qualifier);
        if !self.members.contains_key(scope) {
            let members = self.members_of(conn, scope)?;
            self.members.insert(scope.to_string(), members);
        }
        let members = self
            .members
            .get(scope)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut best: Option<(String, f64)> = None;
        for n in members {
            let score = member_similarity(name, n);
            if best
                .as_ref()
                .is_none_or(|(b, s)| score > *s || (score == *s && n < b))
            {
                best = Some((n.clone(), score));
            }
        }
        Ok(best.filter(|(_, s)| *s >= 0.7))
    }

    /// Whether the first segment of the dotted `qualifier` (`std` of `std.error`) names
    /// something of the map: a definition, a source file's stem or a folder; or is a Rust
    /// path keyword (`crate`, `self`, `super`). A Rust path (`rust`) starts with a crate
    /// (a folder holding `src/`, `-` read as `_`), a keyword, a type, or a module at a
    /// crate's root (`src/util.rs`, `src/runtime/`): a module deeper down
    /// (`src/features/rkyv.rs`) is reached through its parents, so `rkyv::Archive` names
    /// the crate `rkyv`, outside the map.
    fn head_mapped(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        qualifier: &str,
        rust: bool,
    ) -> Result<bool> {
        let head = qualifier.split('.').next().unwrap_or(qualifier);
        let key = format!("{head}{}", if rust { "::" } else { "" });
        if let Some(&known) = self.heads.get(&key) {
            return Ok(known);
        }
        self.load_file_names()?;
        let defined = loci_store::map::find_symbols(conn, head, 50)?
            .iter()
            .any(|s| !rust || loci_core::SymbolKind::parse(&s.kind).is_type());
        let head_file = format!("{head}.rs");
        let rust_root = |path: &str| {
            let mut parts = path.split('/').peekable();
            while let Some(part) = parts.next() {
                let next = parts.peek().copied();
                if (next == Some("src") && part.replace('-', "_") == head)
                    || (part == "src" && next.is_some_and(|n| n == head || n == head_file))
                {
                    return true;
                }
            }
            false
        };
        let mapped = matches!(head, "crate" | "self" | "super")
            || defined
            || self.file_names.iter().flatten().any(|(name, paths)| {
                if rust {
                    paths.iter().any(|p| rust_root(p))
                } else {
                    name.split('.').next() == Some(head)
                        || paths.iter().any(|p| {
                            p.rsplit_once('/')
                                .is_some_and(|(dir, _)| dir.split('/').any(|d| d == head))
                        })
                }
            });
        self.heads.insert(key, mapped);
        Ok(mapped)
    }

    /// The distinct names of the members of `scope`: of each symbol named `scope` (the
    /// first 50), the symbols its qualified name qualifies, and every symbol of the source
    /// files whose stem is `scope`. Names only, read once per scope in a lint
    /// ([`Ctx::members`]): whole rows for every file of a common stem (`lib`, `utils`),
    /// again for each claim, cost most of a lint of a 50,000-file map.
    fn members_of(
        &mut self,
        conn: &loci_store::rusqlite::Connection,
        scope: &str,
    ) -> Result<Vec<String>> {
        let mut members: BTreeSet<String> = BTreeSet::new();
        for s in loci_store::map::find_symbols(conn, scope, 50)? {
            members.extend(loci_store::map::symbol_names_in_file(
                conn,
                &s.path,
                &format!("{}.", s.qualified_name),
            )?);
        }
        self.load_file_names()?;
        let files: Vec<String> = self
            .file_names
            .iter()
            .flatten()
            .filter(|(n, _)| {
                n.split('.').next() == Some(scope) && loci_core::Language::from_path(n).is_some()
            })
            .flat_map(|(_, paths)| paths.clone())
            .collect();
        for f in files {
            members.extend(loci_store::map::symbol_names_in_file(conn, &f, "")?);
        }
        Ok(members.into_iter().collect())
    }

    /// What the manifests declare, read on first use.
    fn declared(&mut self) -> Result<&[manifests::Declared]> {
        if self.declared.is_none() {
            let paths = loci_store::map::all_paths(self.ws.store.conn())?;
            self.declared = Some(manifests::load(&self.ws.root, &paths));
        }
        Ok(self.declared.as_deref().unwrap_or_default())
    }

    fn load_file_names(&mut self) -> Result<()> {
        if self.file_names.is_some() {
            return Ok(());
        }
        let conn = self.ws.store.conn();
        let paths = loci_store::map::all_paths(conn)?;
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        for p in paths {
            let name = p.rsplit('/').next().unwrap_or(&p).to_string();
            by_name.entry(name).or_default().push(p);
        }
        self.file_names = Some(by_name);
        Ok(())
    }

    /// The symbol name most similar to `name` (Jaro-Winkler, or 0.9 for one word
    /// apart), with its score, among the candidates [`name_candidates`] reads through
    /// indexes; remembered for the run (a name is often claimed on many pages).
    pub(super) fn closest_name(&mut self, name: &str) -> Result<Option<(String, f64)>> {
        if let Some(known) = self.closest.get(name) {
            return Ok(known.clone());
        }
        let mut best: Option<(String, f64)> = None;
        for n in name_candidates(self.ws.store.conn(), name)? {
            // One extra word around the same words (`legacy_total` / `total`) is as good
            // as a near miss; one edit is not, among every name of the map (`get()` for
            // a `set`).
            let contained = one_word_apart(name, &n);
            let score = strsim::jaro_winkler(name, &n).max(if contained { 0.9 } else { 0.0 });
            if best
                .as_ref()
                .is_none_or(|(b, s)| score > *s || (score == *s && n < *b))
            {
                best = Some((n, score));
            }
        }
        let best = best.filter(|(_, s)| *s >= 0.7);
        self.closest.insert(name.to_string(), best.clone());
        Ok(best)
    }
}

/// The finding of check `c`: its identity (origin, subject, kind, target and version),
/// its place, and what the code says instead.
fn new_finding(
    c: &Check<'_>,
    kind: &'static str,
    severity: &'static str,
    truth: Option<String>,
    suggestion: Option<String>,
) -> NewFinding {
    NewFinding {
        finding_key: format!(
            "{}:{}:{}:{}{}",
            c.origin,
            c.subject,
            kind,
            c.target,
            c.version.map(|v| format!("@{v}")).unwrap_or_default()
        ),
        origin: c.origin,
        subject: c.subject.to_string(),
        revision_id: c.revision_id,
        kind,
        severity,
        claim: c.text.to_string(),
        target: c.target.to_string(),
        truth,
        suggestion,
        line: c.line,
        column: c.column,
        end_column: c.end_column,
    }
}

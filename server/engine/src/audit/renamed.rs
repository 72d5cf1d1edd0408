//! The definition a symbol claim named, found again under another name: lint's "did you
//! mean" for a claim whose symbol is missing rests on what the definition kept, not on
//! how its new name is spelt (`_checknetloc` renamed `_validate_netloc` with the same
//! body is found renamed, not "did you mean `_check_close`?").
//!
//! A memory claim keeps a snapshot of what it named when it was written: each
//! definition's key (`path#qualified.name@kind`), body fingerprint and signature
//! fingerprint. Both fingerprints hash the definition's tokens, its own name among them
//! ([`loci_core::fingerprint`]), so a renamed definition never has the snapshot's
//! fingerprints as they are stored. Each candidate is analysed again as if it still had
//! the old name: in its file's text, every whole-identifier occurrence of its name inside
//! its own span (the name, and recursive calls) is replaced by the old name, the text is
//! parsed and extracted as a scan does, and the fingerprints of the definition at the
//! mapped name position are compared with the snapshot. Definitions nested in one another
//! are renamed in separate passes (one per nesting depth), so one's renaming never enters
//! another's fingerprint.
//!
//! The rule, in order (lint's `missing_symbol`):
//! 1. **same body**: a definition whose body fingerprint under the old name is the
//!    snapshot's: in the file the claim named first, then in the files of the same
//!    language that scans saw added, modified or renamed since the snapshot
//!    ([`MAX_OTHER_FILES`] at most: those in the same folder first, then in path order;
//!    each is parsed once per nesting depth, and lint searches again at every run while
//!    the finding is open); among several, one of the same kind first, then by key;
//! 2. **same signature**: in the file the claim named, the one definition of the same
//!    kind whose signature fingerprint under the old name is the snapshot's, while the old
//!    name names no definition left in the map (`(self)` matches most methods: without
//!    that, a deleted method would be "renamed" to any other);
//! 3. otherwise lint falls back to name similarity.
//!
//! A file whose text on disk is not the text the map holds (edited since the last scan)
//! is not searched: the map's spans would not fit it. Claims without a snapshot (docs,
//! claims that never resolved) have no such evidence.

use std::collections::{BTreeSet, HashMap};

use loci_core::{AnalyzeOptions, Language};
use loci_store::rusqlite::Connection;

use crate::Result;

/// Files besides the claim's own that are searched for a body, at most.
pub(crate) const MAX_OTHER_FILES: usize = 8;

/// A definition as a claim's snapshot recorded it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot<'a> {
    /// Its key, `path#qualified.name@kind` (with `[n]` for the n-th repeat).
    pub key: &'a str,
    /// Its body fingerprint.
    pub body: &'a str,
    /// Its signature fingerprint, when recorded.
    pub signature: Option<&'a str>,
}

/// What a found definition rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// Its body fingerprint under the old name is the snapshot's.
    SameBody,
    /// Same file and kind, and its signature fingerprint under the old name is the
    /// snapshot's.
    SameSignature,
}

impl Evidence {
    /// The words for it, after "has": `the same body`.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Evidence::SameBody => "the same body",
            Evidence::SameSignature => "the same signature",
        }
    }
}

/// A definition of the map that a claim's snapshot describes under another name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Renamed {
    /// Its key now.
    pub key: String,
    /// Its name.
    pub name: String,
    /// Its qualified name.
    pub qualified_name: String,
    /// Its file.
    pub path: String,
    /// What shows it is the claimed definition.
    pub evidence: Evidence,
}

/// A snapshot's key in parts.
struct OldDefinition<'a> {
    path: &'a str,
    name: &'a str,
    kind: &'a str,
    body: &'a str,
    signature: Option<&'a str>,
}

impl<'a> OldDefinition<'a> {
    fn parse(s: &Snapshot<'a>) -> Option<OldDefinition<'a>> {
        let (path, rest) = s.key.split_once('#')?;
        let (qualified, kind) = rest.rsplit_once('@')?;
        let kind = kind.split_once('[').map_or(kind, |(k, _)| k);
        let name = qualified.rsplit('.').next().unwrap_or(qualified);
        (!path.is_empty() && !name.is_empty()).then_some(OldDefinition {
            path,
            name,
            kind,
            body: s.body,
            signature: s.signature,
        })
    }
}

/// A mapped definition, with the byte positions its renaming needs.
struct Mapped {
    key: String,
    name: String,
    qualified_name: String,
    kind: String,
    start: usize,
    end: usize,
    name_start: usize,
    depth: usize,
}

/// A candidate that matched, with what orders it among others.
struct Match {
    same_file: bool,
    same_kind: bool,
    found: Renamed,
}

/// The definition `snapshots` describe under another name, by the rule of the module
/// docs; `None` when no body or signature shows one. `snapshot_at` (RFC 3339) bounds the
/// files searched besides the snapshot's own. Reads files from `root`; a file that cannot
/// be read, or whose text is not the map's, is passed over.
pub(crate) fn renamed_definition(
    conn: &Connection,
    root: &std::path::Path,
    options: &AnalyzeOptions,
    snapshots: &[Snapshot<'_>],
    snapshot_at: Option<&str>,
) -> Result<Option<Renamed>> {
    let olds: Vec<OldDefinition<'_>> = snapshots.iter().filter_map(OldDefinition::parse).collect();
    if olds.is_empty() {
        return Ok(None);
    }
    let own: BTreeSet<&str> = olds.iter().map(|o| o.path).collect();
    let mut bodies: Vec<Match> = Vec::new();
    let mut signatures: Vec<Match> = Vec::new();
    for path in &own {
        search_file(
            conn,
            root,
            options,
            path,
            &olds,
            &mut bodies,
            &mut signatures,
        )?;
    }
    if bodies.is_empty() {
        let languages: BTreeSet<Option<Language>> =
            own.iter().map(|p| Language::from_path(p)).collect();
        let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let folders: BTreeSet<String> = own.iter().map(|p| folder(p)).collect();
        let mut others: Vec<String> = changed_since(conn, snapshot_at.unwrap_or(""))?
            .into_iter()
            .filter(|p| !own.contains(p.as_str()))
            .filter(|p| {
                let language = Language::from_path(p);
                language.is_some() && languages.contains(&language)
            })
            .collect();
        // Stable: path order within each group.
        others.sort_by_key(|p| !folders.contains(&folder(p)));
        others.truncate(MAX_OTHER_FILES);
        for path in &others {
            search_file(
                conn,
                root,
                options,
                path,
                &olds,
                &mut bodies,
                &mut Vec::new(),
            )?;
        }
    }
    let best = |mut matches: Vec<Match>| {
        matches.sort_by(|a, b| {
            (!a.same_file, !a.same_kind, &a.found.key).cmp(&(
                !b.same_file,
                !b.same_kind,
                &b.found.key,
            ))
        });
        matches.into_iter().next().map(|m| m.found)
    };
    // A signature says little on its own (`(self)` is most methods'): it is evidence only
    // when one definition of the file has it and the old name names no definition left
    // (a same-named one elsewhere is what a deleted method's memory more likely meant).
    let signature = if signatures.len() == 1 && !any_defined(conn, &olds)? {
        best(signatures)
    } else {
        None
    };
    Ok(best(bodies).or(signature))
}

/// Whether a definition of any of `olds`' names is still in the map.
fn any_defined(conn: &Connection, olds: &[OldDefinition<'_>]) -> Result<bool> {
    for old in olds {
        if loci_store::map::name_defined(conn, old.name)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Paths of the map that scans saw added, modified or renamed to after `since` (RFC 3339;
/// the drift ledger), in path order.
fn changed_since(conn: &Connection, since: &str) -> Result<Vec<String>> {
    Ok(loci_store::audit::mapped_paths_changed_since(conn, since)?)
}

/// Searches the mapped file `path` for every definition in `olds`: body matches into
/// `bodies`; in the old definition's own file, same-kind signature matches into
/// `signatures`.
fn search_file(
    conn: &Connection,
    root: &std::path::Path,
    options: &AnalyzeOptions,
    path: &str,
    olds: &[OldDefinition<'_>],
    bodies: &mut Vec<Match>,
    signatures: &mut Vec<Match>,
) -> Result<()> {
    let Some(language) = Language::from_path(path) else {
        return Ok(());
    };
    let Some(text) = mapped_text(conn, root, path)? else {
        return Ok(());
    };
    let mapped = mapped_definitions(conn, path)?;
    search_text(
        path, language, &text, &mapped, options, olds, bodies, signatures,
    );
    Ok(())
}

/// The definition `snapshot` describes under another name among `symbols`, the
/// definitions of an editor's unsaved `text` of the file `path` (their spans are bytes
/// into `text`): same body, then same kind and signature, by the rule of the module docs
/// restricted to this one text. Nothing when `path` is no language loci parses.
pub(crate) fn renamed_in_text(
    path: &str,
    text: &str,
    symbols: &[loci_core::Symbol],
    options: &AnalyzeOptions,
    snapshot: &Snapshot<'_>,
) -> Option<Renamed> {
    let language = Language::from_path(path)?;
    let old = OldDefinition::parse(snapshot)?;
    // Depth by parent index: a parent precedes its children.
    let mut depths: Vec<usize> = Vec::with_capacity(symbols.len());
    for s in symbols {
        let depth = s
            .parent
            .and_then(|p| depths.get(p as usize).map(|d| d + 1))
            .unwrap_or(0);
        depths.push(depth);
    }
    let mapped: Vec<Mapped> = symbols
        .iter()
        .zip(depths)
        .map(|(s, depth)| Mapped {
            key: s.key.clone(),
            name: s.name.clone(),
            qualified_name: s.qualified_name.clone(),
            kind: s.kind.as_str().to_string(),
            start: s.span.start as usize,
            end: s.span.end as usize,
            name_start: s.name_span.start as usize,
            depth,
        })
        .collect();
    let (mut bodies, mut signatures) = (Vec::new(), Vec::new());
    search_text(
        path,
        language,
        text,
        &mapped,
        options,
        std::slice::from_ref(&old),
        &mut bodies,
        &mut signatures,
    );
    let best = |matches: Vec<Match>| {
        matches
            .into_iter()
            .min_by(|a, b| (!a.same_kind, &a.found.key).cmp(&(!b.same_kind, &b.found.key)))
            .map(|m| m.found)
    };
    best(bodies).or_else(|| best(signatures))
}

/// Searches `text` (the file `path`, whose definitions are `mapped`) for every definition
/// in `olds`, as [`search_file`] says.
#[allow(clippy::too_many_arguments)]
fn search_text(
    path: &str,
    language: Language,
    text: &str,
    mapped: &[Mapped],
    options: &AnalyzeOptions,
    olds: &[OldDefinition<'_>],
    bodies: &mut Vec<Match>,
    signatures: &mut Vec<Match>,
) {
    let depth = mapped.iter().map(|m| m.depth).max().unwrap_or(0);
    for old in olds {
        if Language::from_path(old.path) != Some(language) {
            continue;
        }
        let same_file = old.path == path;
        for level in 0..=depth {
            let group: Vec<&Mapped> = mapped.iter().filter(|m| m.depth == level).collect();
            if group.is_empty() {
                continue;
            }
            let (renamed, name_starts) = rename_in(text, &group, old.name);
            let analysis = loci_core::analyze(path, language, &renamed, options);
            let at: HashMap<u32, &loci_core::Symbol> = analysis
                .symbols
                .iter()
                .map(|s| (s.name_span.start, s))
                .collect();
            for (m, start) in group.iter().zip(name_starts) {
                let Some(s) = u32::try_from(start).ok().and_then(|p| at.get(&p)) else {
                    continue;
                };
                let found = || Match {
                    same_file,
                    same_kind: m.kind == old.kind,
                    found: Renamed {
                        key: m.key.clone(),
                        name: m.name.clone(),
                        qualified_name: m.qualified_name.clone(),
                        path: path.to_string(),
                        evidence: Evidence::SameBody,
                    },
                };
                if s.body_fingerprint == old.body {
                    bodies.push(found());
                } else if same_file
                    && m.kind == old.kind
                    && old.signature == Some(s.signature_fingerprint.as_str())
                {
                    let mut f = found();
                    f.found.evidence = Evidence::SameSignature;
                    signatures.push(f);
                }
            }
        }
    }
}

/// The text of the mapped file `path` as the scan analysed it (byte-order mark removed,
/// invalid UTF-8 replaced), or `None` when the file on disk is not the content the map
/// holds (or is gone).
fn mapped_text(conn: &Connection, root: &std::path::Path, path: &str) -> Result<Option<String>> {
    let hash = loci_store::map::content_hash(conn, path).ok().flatten();
    let (Some(hash), Ok(bytes)) = (hash, std::fs::read(root.join(path))) else {
        return Ok(None);
    };
    if loci_core::fingerprint::content_hash(&bytes) != hash {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(Some(
        text.strip_prefix('\u{feff}').unwrap_or(&text).to_string(),
    ))
}

/// The definitions the map holds for `path`, in source order, with their nesting depth.
fn mapped_definitions(conn: &Connection, path: &str) -> Result<Vec<Mapped>> {
    let rows: Vec<(Mapped, Option<String>)> = loci_store::map::symbol_spans(conn, path)?
        .into_iter()
        .map(|s| {
            (
                Mapped {
                    key: s.key,
                    name: s.name,
                    qualified_name: s.qualified_name,
                    kind: s.kind,
                    start: s.start_byte as usize,
                    end: s.end_byte as usize,
                    name_start: s.name_start_byte as usize,
                    depth: 0,
                },
                s.parent_key,
            )
        })
        .collect();
    // A parent starts before its children: its depth is known when they are reached.
    let mut depth_of: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for (mut m, parent) in rows {
        m.depth = parent
            .and_then(|p| depth_of.get(&p).map(|d| d + 1))
            .unwrap_or(0);
        depth_of.insert(m.key.clone(), m.depth);
        out.push(m);
    }
    Ok(out)
}

/// `text` with, inside each definition of `group` (spans that do not overlap), every
/// whole-identifier occurrence of its name replaced by `old`; and where each one's name
/// starts in the new text.
fn rename_in(text: &str, group: &[&Mapped], old: &str) -> (String, Vec<usize>) {
    let bytes = text.as_bytes();
    let ident = |b: u8| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80;
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut starts = Vec::with_capacity(group.len());
    for m in group {
        let (start, end) = (m.start.max(copied), m.end.min(text.len()));
        let name = m.name.as_bytes();
        let mut name_start = None;
        let mut i = start;
        while !name.is_empty() && i + name.len() <= end {
            let whole = bytes[i..].starts_with(name)
                && (i == 0 || !ident(bytes[i - 1]))
                && bytes.get(i + name.len()).is_none_or(|&b| !ident(b));
            if whole && text.is_char_boundary(i) && text.is_char_boundary(i + name.len()) {
                out.push_str(&text[copied..i]);
                if i == m.name_start {
                    name_start = Some(out.len());
                }
                out.push_str(old);
                copied = i + name.len();
                i = copied;
            } else {
                i += 1;
            }
        }
        starts.push(name_start.unwrap_or(usize::MAX));
    }
    out.push_str(&text[copied.min(text.len())..]);
    (out, starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(name: &str, start: usize, end: usize, name_start: usize) -> Mapped {
        Mapped {
            key: String::new(),
            name: name.into(),
            qualified_name: name.into(),
            kind: "function".into(),
            start,
            end,
            name_start,
            depth: 0,
        }
    }

    #[test]
    fn renaming_replaces_whole_identifiers_inside_each_span_only() {
        let text = "def ab(x):\n    return ab(x) + abc\n\ndef cd():\n    ab()\n";
        let second_at = text.find("def cd").unwrap();
        let first = mapped("ab", 0, second_at - 1, 4);
        let second = mapped("cd", second_at, text.len(), second_at + 4);
        let (renamed, starts) = rename_in(text, &[&first, &second], "old");
        let expected = "def old(x):\n    return old(x) + abc\n\ndef old():\n    ab()\n";
        assert_eq!(renamed, expected);
        assert_eq!(starts, [4, expected.find("def old()").unwrap() + 4]);
    }
}

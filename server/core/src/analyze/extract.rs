//! From a parsed tree to a [`FileAnalysis`], in phases: walk the tree (and Rust macro
//! bodies), nest and qualify definitions, make symbols, keep and type references, and
//! read imports.

use super::*;

/// Extracts what the file's `tree` holds: its symbols (nested and qualified, with keys,
/// signatures, docs and fingerprints), references (kept, deduplicated and typed) and
/// imports, and the token stream of its walk (`stream` is reused as its buffer).
pub(super) fn extract_with(
    path: &str,
    language: Language,
    text: &str,
    tree: &Tree,
    options: &AnalyzeOptions,
    stream: Vec<u8>,
) -> (FileAnalysis, Vec<u8>) {
    let bytes = text.as_bytes();
    let lines = RowIndex::new(bytes);

    // Rust macro bodies parsed as items, one round per nesting level: a round's trees are
    // set once and then only borrowed, so the nodes found in them live as long as the
    // file's own.
    let rounds: [OnceCell<Vec<MacroTree>>; MAX_MACRO_DEPTH] = Default::default();
    let rounds = &rounds;
    let (found, mut walks, env) = walk_file(language, text, tree, options, stream, rounds);
    let Collected {
        defs,
        scopes,
        raw_refs,
        raw_imports,
        ignored,
        bodies: _,
    } = found;

    // ---- definitions: dedupe per name node (first pattern wins), widen, qualify
    let mut kept = first_pattern_per_name(defs, |d| (d.name, d.pattern));
    let extraction = &language.spec().extraction;
    let mut own_qualifier: Vec<Option<String>> = Vec::with_capacity(kept.len());
    for def in &mut kept {
        let (node, qualifier) = (extraction.qualify_definition)(def.node, bytes);
        def.node = node;
        own_qualifier.push(qualifier);
    }
    let entries = nest(language, &kept, &own_qualifier, &scopes, bytes);
    let dropped = defined_prototypes(&entries, extraction.declarator_definitions);

    // Symbol order = entry order minus scopes and dropped prototypes.
    let mut symbol_of_entry: Vec<Option<u32>> = vec![None; entries.len()];
    let mut order: Vec<usize> = Vec::new();
    for (e, entry) in entries.iter().enumerate() {
        if entry.def.is_some() && !dropped[e] {
            symbol_of_entry[e] = Some(order.len() as u32);
            order.push(e);
        }
    }
    let symbols = make_symbols(
        Defined {
            path,
            language,
            text,
            lines: &lines,
            entries: &entries,
            kept: &kept,
            symbol_of_entry: &symbol_of_entry,
            walks: &walks,
        },
        &order,
    );

    // ---- imports (and the names they import, as references)
    let (mut imports, import_refs) = imports::collect(language, &raw_imports, bytes);
    let aliases = imported_aliases(&import_refs, bytes);
    let mut module_aliases = module_aliases(&raw_imports, bytes);
    // A Python module imported by name under an alias (`from test.test_asyncio import
    // utils as test_utils`) is named through it as through its name (`test_utils.TestCase`
    // is `utils.TestCase`, on that import): a lower-case name, as a module's is.
    if language == Language::Python {
        module_aliases.extend(
            aliases
                .iter()
                .filter(|(_, name)| name.starts_with(|c: char| c.is_lowercase()))
                .map(|(alias, name)| (alias.clone(), name.clone())),
        );
    }
    let alias_paths = if language == Language::Rust {
        use_alias_paths(&import_refs, bytes)
    } else {
        FastMap::default()
    };
    // The names a name read as a value may be ([`Role::Value`]): the file's top-level
    // definitions and the names its imports bind.
    let bound: FastSet<&str> = symbols
        .iter()
        .filter(|s| s.qualified_name == s.name)
        .map(|s| s.name.as_str())
        .chain(import_refs.iter().map(|(n, _)| n.as_str()))
        .chain(aliases.keys().map(String::as_str))
        .collect();

    // ---- references
    let def_names: FastSet<(usize, usize)> = kept
        .iter()
        .map(|d| (d.name.start_byte(), d.name.end_byte()))
        .collect();
    let locals = match extraction.locals {
        Some(collect) if raw_refs.iter().any(|r| r.not_local) => {
            Some(collect(tree, bytes, options.max_depth))
        }
        _ => None,
    };
    let raw_refs = raw_refs.into_iter().filter(|r| {
        let key = (r.name.start_byte(), r.name.end_byte());
        if def_names.contains(&key) || ignored.contains(&r.name.id()) {
            return false;
        }
        // Most names read as values are locals the file binds nowhere else: dropped
        // here, before their receivers are read ([`references`] decides the rest). A
        // member read's reference node is the member expression.
        if r.value && r.node == r.name && !bound.contains(node_text(r.name, bytes)) {
            return false;
        }
        !(r.not_local
            && locals
                .as_ref()
                .is_some_and(|l| l.is_local(node_text(r.name, bytes), r.name.start_byte())))
    });
    let refs_kept = first_pattern_per_name(raw_refs, |r| (r.name, r.pattern));
    let file = FileNames {
        imports: &imports,
        alias_paths: &alias_paths,
        module_aliases: &module_aliases,
        symbols: &symbols,
        bound: &bound,
    };
    let mut refs = references(language, bytes, &refs_kept, file, env);
    apply_aliases(&mut refs, &import_refs, &aliases, &symbols, bytes);
    refs.extend(import_refs.into_iter().map(|(name, node)| Reference {
        name,
        kind: RefKind::Import,
        receiver: Receiver::None,
        receiver_name: None,
        span: span_of(node),
        enclosing: None,
        target: None,
    }));
    refs.sort_by_key(|r| (r.span.start, r.span.end));
    assign_enclosing(&symbols, &mut refs);
    assign_import_scopes(&symbols, &mut imports);

    let too_deep = walks.iter().any(|w| w.too_deep);
    let degraded = too_deep.then_some(Degraded::TooDeep {
        limit: options.max_depth,
    });
    // The file's own walk: macro bodies are in its token stream already (as token trees),
    // and their syntax errors are not the file's.
    let main = walks.swap_remove(0);
    let analysis = FileAnalysis {
        symbols,
        refs,
        imports,
        fingerprint: fingerprint::short_hash(&main.stream),
        error_nodes: main.error_nodes,
        degraded,
    };
    (analysis, main.stream)
}

/// One walk of the tree: fingerprints, comments, errors; the query runs at each node
/// where one of its patterns can start (`set_max_start_depth(0)`: only matches rooted at
/// that node). That finds what one run over the whole tree finds (every pattern is rooted
/// at a node the walk visits) without a second full traversal; the one difference,
/// `(comment)* @doc . (definition)` patterns matching without their leading comments,
/// does not matter because docs come from `doc_above`. Running a query over a whole tree
/// costs about 0.4x its parse; this costs about 0.1x.
///
/// Then, for Rust, the walks of macro bodies, one round per nesting level, their trees
/// set in `rounds`. Returns what the walks collected and the walks (the file's first).
fn walk_file<'t>(
    language: Language,
    text: &'t str,
    tree: &'t Tree,
    options: &AnalyzeOptions,
    stream: Vec<u8>,
    rounds: &'t [OnceCell<Vec<MacroTree>>; MAX_MACRO_DEPTH],
) -> (
    Collected<'t>,
    Vec<fingerprint::Walk>,
    Option<types::TypeEnv<'t>>,
) {
    let tables = lang_query(language);
    let bytes = text.as_bytes();
    let mut found: Collected<'t> = Collected::default();
    let mut walks: Vec<fingerprint::Walk> = Vec::new();
    // Receiver types (`crate::types`): every binding of the file's tree and its macro
    // bodies, in document order and tree by tree, recorded as the walks enter each node
    // (a second traversal of every tree cost 10% of a Python file's analysis).
    let typing = language.spec().extraction.typing;
    let mut env = typing.map(|_| types::TypeEnv::default());
    let mut bind = |node: Node<'t>, ancestors: &[Node<'t>]| {
        if let (Some(typing), Some(env)) = (typing, env.as_mut()) {
            (typing.bind)(node, ancestors, bytes, env);
        }
    };
    QUERY_CURSOR.with(|cell| {
        let mut local = None;
        let mut guard = cell.try_borrow_mut().ok();
        let cursor: &mut QueryCursor = match guard.as_deref_mut() {
            Some(cursor) => cursor,
            None => local.insert(QueryCursor::new()),
        };
        cursor.set_max_start_depth(Some(0));
        walks.push(fingerprint::walk(
            tree,
            text,
            tables,
            options.max_depth,
            stream,
            |node, parent, expected| {
                found.visit(cursor, tables, bytes, node, parent, expected, 0, &[], false)
            },
            typing
                .is_some()
                .then_some(&mut bind as fingerprint::OnNode<'_, 't>),
        ));
        // Rust: items inside macro bodies (`cfg_net! { pub struct TcpStream { .. } }`),
        // which the file's tree holds as token trees: each body is parsed again on its
        // own and walked like the file, its nested bodies in the next round.
        let budget = Budget::new(options.timeout_ms);
        let mut modules_of_walk: Vec<Vec<String>> = vec![Vec::new()];
        for round in rounds {
            if found.bodies.is_empty() {
                break;
            }
            let parsed: Vec<MacroTree> = std::mem::take(&mut found.bodies)
                .into_iter()
                .filter_map(|body| {
                    let tree = parse_macro_body(text, body.range, body.arguments, &budget)?;
                    let mut modules = modules_of_walk.get(body.walk).cloned().unwrap_or_default();
                    modules.extend(crate::lang::rust::rust_inline_modules(body.host, bytes));
                    Some(MacroTree {
                        tree,
                        modules,
                        arguments: body.arguments,
                    })
                })
                .collect();
            for macro_tree in round.get_or_init(|| parsed) {
                let index = walks.len();
                let modules = macro_tree.modules.as_slice();
                let arguments = macro_tree.arguments;
                walks.push(fingerprint::walk(
                    &macro_tree.tree,
                    text,
                    tables,
                    options.max_depth,
                    Vec::new(),
                    |node, parent, expected| {
                        found.visit(
                            cursor, tables, bytes, node, parent, expected, index, modules,
                            arguments,
                        )
                    },
                    typing
                        .is_some()
                        .then_some(&mut bind as fingerprint::OnNode<'_, 't>),
                ));
                modules_of_walk.push(macro_tree.modules.clone());
            }
        }
    });
    (found, walks, env)
}

/// Rewrites a file's `refs` for its aliased imports ([`imported_aliases`] of its
/// `import_refs`; `symbols` are its definitions, `bytes` its text), by the two rules below.
fn apply_aliases(
    refs: &mut [Reference],
    import_refs: &[(String, Node<'_>)],
    aliases: &FastMap<String, String>,
    symbols: &[Symbol],
    bytes: &[u8],
) {
    // A name imported under another (`from m import f as g`): a bare use of the alias is a
    // use of the name imported, on the import that binds it ([`Receiver::Imported`]): it
    // resolves in the files the import binds only, never to a namesake the file defines
    // (the reason for the alias: `use std::result::Result as StdResult;` beside the
    // file's own `type Result`). An alias bound inside a definition is that definition's
    // (the innermost that sees the use wins); one at module level is the whole file's.
    if aliases.is_empty() {
        return;
    }
    let mut bound: Vec<(u32, &str, &str)> = import_refs
        .iter()
        .filter_map(|(name, node)| {
            let (_, alias) = alias_clause(*node, bytes)?;
            Some((
                node.start_byte() as u32,
                node_text(alias, bytes),
                name.as_str(),
            ))
        })
        .collect();
    bound.sort_by_key(|&(at, ..)| at);
    let starts: Vec<u32> = bound.iter().map(|&(at, ..)| at).collect();
    let mut scoped: FastMap<&str, Vec<(&str, Option<&Span>)>> = FastMap::default();
    for ((_, alias, name), scope) in bound.into_iter().zip(innermost_before(symbols, &starts)) {
        let scope = scope.map(|k| &symbols[k as usize].span);
        scoped.entry(alias).or_default().push((name, scope));
    }
    for r in refs.iter_mut().filter(|r| r.receiver == Receiver::None) {
        let at = r.span.start;
        let seen = scoped.get(r.name.as_str()).and_then(|bound| {
            // Of two in one scope (`#[cfg]` twins), the later, as a map of the file's
            // aliases keeps it.
            bound
                .iter()
                .rev()
                .filter(|(_, scope)| scope.is_none_or(|s| s.start <= at && at < s.end))
                .min_by_key(|(_, scope)| scope.map_or(u32::MAX, |s| s.end - s.start))
        });
        if let Some((name, _)) = seen {
            r.name = name.to_string();
            r.receiver = Receiver::Imported;
            r.receiver_name = Some(name.to_string());
        }
    }
    // The name an alias hides (`resolve` after `use crate::read::resolve as
    // resolve_path;` beside the file's own `fn resolve`): a bare use is the file's own
    // module-level definition, when it has exactly one and no import binds the name
    // unaliased.
    let only_aliased = |name: &str| {
        import_refs.iter().filter(|(n, _)| n == name).count()
            == aliases.values().filter(|v| *v == name).count()
    };
    for r in refs.iter_mut().filter(|r| {
        r.receiver == Receiver::None && r.target.is_none() && aliases.values().any(|v| *v == r.name)
    }) {
        let mut own = symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name == r.name && s.qualified_name == s.name);
        if let (Some((i, _)), None) = (own.next(), own.next())
            && only_aliased(&r.name)
        {
            r.target = u32::try_from(i).ok();
        }
    }
}

/// The names imported under an alias, by alias, from the name nodes of a file's imports:
/// Python's `from m import f as g` (`aliased_import`), JavaScript's `import { f as g }
/// from 'm'` (`import_specifier`) and Rust's `use a::f as g;` (`use_as_clause`, whose
/// path is the name or a path ending in it) bind `g` to `f`. A module imported under an
/// alias (`import numpy as np`, [`module_aliases`]) names no definition and is not here,
/// nor is Rust's `use a::Trait as _;`.
fn imported_aliases(imported: &[(String, Node<'_>)], bytes: &[u8]) -> FastMap<String, String> {
    imported
        .iter()
        .filter_map(|(name, node)| {
            let (_, alias) = alias_clause(*node, bytes)?;
            Some((node_text(alias, bytes).to_string(), name.clone()))
        })
        .collect()
}

/// Rust: the path each alias a `use` binds stands for (`Rt` in `use crate::rt::Runtime as
/// Rt;` and in `use crate::{rt::Runtime as Rt};`: `crate::rt::Runtime`).
fn use_alias_paths(imported: &[(String, Node<'_>)], bytes: &[u8]) -> FastMap<String, String> {
    imported
        .iter()
        .filter_map(|(_, node)| {
            let (clause, alias) = alias_clause(*node, bytes)?;
            let mut path = node_text(clause.child_by_field_name("path")?, bytes).to_string();
            let mut at = clause;
            while let Some(parent) = at.parent() {
                if parent.kind() == "scoped_use_list"
                    && let Some(prefix) = parent.child_by_field_name("path")
                {
                    path = format!("{}::{path}", node_text(prefix, bytes));
                }
                at = parent;
            }
            Some((node_text(alias, bytes).to_string(), path))
        })
        .collect()
}

/// The import clause that aliases the imported name node `node`, and its alias: none for
/// a name imported as itself, or by Rust's `use a::Trait as _;`, which binds no name
/// (Python's `from gettext import gettext as _` binds `_`).
fn alias_clause<'t>(node: Node<'t>, bytes: &[u8]) -> Option<(Node<'t>, Node<'t>)> {
    let clause = node.parent().and_then(|p| match p.kind() {
        "aliased_import" | "import_specifier" | "use_as_clause" => Some(p),
        "scoped_identifier" => p.parent().filter(|c| {
            c.kind() == "use_as_clause"
                && c.child_by_field_name("path")
                    .is_some_and(|x| x.id() == p.id())
        }),
        _ => None,
    })?;
    let alias = clause.child_by_field_name("alias").filter(|a| {
        a.kind() == "identifier"
            && a.id() != node.id()
            && !(clause.kind() == "use_as_clause" && node_text(*a, bytes) == "_")
    })?;
    Some((clause, alias))
}

/// The modules imported under an alias, by alias: Python's `import numpy as np` binds
/// `np` to `numpy`, `import xml.etree.ElementTree as ET` binds `ET` to that module path.
fn module_aliases(raw_imports: &[RawImport<'_>], bytes: &[u8]) -> FastMap<String, String> {
    raw_imports
        .iter()
        .filter_map(|r| {
            let module = r.module?;
            let clause = module.parent().filter(|p| p.kind() == "aliased_import")?;
            let alias = clause.child_by_field_name("alias")?;
            (clause.child_by_field_name("name") == Some(module)).then(|| {
                (
                    node_text(alias, bytes).to_string(),
                    node_text(module, bytes).to_string(),
                )
            })
        })
        .collect()
}

/// One capture per name node: of several captures of the same name (byte range), the one
/// of the first pattern; in the order the names were first captured. `name_and_pattern`
/// reads a capture's name node and pattern index.
fn first_pattern_per_name<'t, T>(
    captures: impl IntoIterator<Item = T>,
    name_and_pattern: impl Fn(&T) -> (Node<'t>, usize),
) -> Vec<T> {
    let mut by_name: FastMap<(usize, usize), usize> = FastMap::default();
    let mut kept: Vec<T> = Vec::new();
    for capture in captures {
        let (name, pattern) = name_and_pattern(&capture);
        let key = (name.start_byte(), name.end_byte());
        match by_name.get(&key) {
            Some(&i) => {
                if pattern < name_and_pattern(&kept[i]).1 {
                    kept[i] = capture;
                }
            }
            None => {
                by_name.insert(key, kept.len());
                kept.push(capture);
            }
        }
    }
    kept
}

/// Definitions and scopes as entries, outer before inner, each with its parent entry,
/// its qualified name (its parent's, then its own qualifier, then its name) and its
/// kind (a function inside a type is a method).
fn nest<'t>(
    language: Language,
    kept: &[RawDef<'t>],
    own_qualifier: &[Option<String>],
    scopes: &[(Node<'t>, String)],
    bytes: &[u8],
) -> Vec<Entry<'t>> {
    let extraction = &language.spec().extraction;
    // Entries: definitions and scopes, outer before inner.
    let mut entries: Vec<Entry<'_>> = Vec::with_capacity(kept.len() + scopes.len());
    for (i, def) in kept.iter().enumerate() {
        entries.push(Entry {
            node: def.node,
            def: Some(i),
            qualified: String::new(),
            kind: def.kind,
            parent_entry: None,
        });
    }
    for (node, _) in scopes {
        entries.push(Entry {
            node: *node,
            def: None,
            qualified: String::new(),
            kind: SymbolKind::Other,
            parent_entry: None,
        });
    }
    let scope_names: Vec<String> = scopes.iter().map(|(_, n)| n.clone()).collect();
    entries.sort_by(|a, b| {
        (
            a.node.start_byte(),
            std::cmp::Reverse(a.node.end_byte()),
            a.def.is_some(),
        )
            .cmp(&(
                b.node.start_byte(),
                std::cmp::Reverse(b.node.end_byte()),
                b.def.is_some(),
            ))
    });
    // Scopes were collected in query order; map each scope entry back to its name.
    let scope_ids: FastMap<usize, usize> = scopes
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.id(), i))
        .collect();
    let scope_index_of_entry: Vec<Option<usize>> = entries
        .iter()
        .map(|e| {
            if e.def.is_none() {
                scope_ids.get(&e.node.id()).copied()
            } else {
                None
            }
        })
        .collect();
    let mut stack: Vec<usize> = Vec::new();
    for e in 0..entries.len() {
        let (start, end) = (entries[e].node.start_byte(), entries[e].node.end_byte());
        while let Some(&top) = stack.last() {
            let t = &entries[top].node;
            if t.start_byte() <= start && end <= t.end_byte() {
                break;
            }
            stack.pop();
        }
        let parent = stack.last().copied();
        let (own_name, qualifier, captured) = match entries[e].def {
            Some(d) => (
                node_text(kept[d].name, bytes).to_string(),
                own_qualifier[d].clone(),
                kept[d].kind,
            ),
            None => (
                scope_index_of_entry[e]
                    .map(|s| scope_names[s].clone())
                    .unwrap_or_default(),
                None,
                SymbolKind::Other,
            ),
        };
        let mut qualified = parent
            .map(|p| entries[p].qualified.clone())
            .unwrap_or_default();
        for part in qualifier
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(own_name.as_str()))
        {
            if part.is_empty() {
                continue;
            }
            if !qualified.is_empty() {
                qualified.push('.');
            }
            qualified.push_str(part);
        }
        let kind = if matches!(captured, SymbolKind::Function | SymbolKind::Method)
            && entries[e].def.is_some()
        {
            let container = parent.map(|p| (entries[p].def.is_none(), entries[p].kind));
            let in_type = match container {
                Some((true, _)) => true, // Rust impl
                // (Rust structs, enums and unions hold no functions; a Zig or Swift
                // one's are its methods.)
                Some((
                    false,
                    SymbolKind::Class
                    | SymbolKind::Interface
                    | SymbolKind::Trait
                    | SymbolKind::Type
                    | SymbolKind::Struct
                    | SymbolKind::Enum
                    | SymbolKind::Union,
                )) => true,
                Some((false, SymbolKind::Module)) => extraction.module_functions_are_methods,
                _ => false,
            };
            if in_type || qualifier.is_some() {
                SymbolKind::Method
            } else {
                // Not in a type: a Rust `fn` inside `mod m { .. }` (the tags query calls
                // every `fn` in a declaration list a method), a top-level Ruby `def`, an
                // object-literal method.
                SymbolKind::Function
            }
        } else {
            captured
        };
        entries[e].qualified = qualified;
        entries[e].kind = kind;
        entries[e].parent_entry = parent;
        stack.push(e);
    }
    entries
}

/// C/C++ (`declarator_definitions`): which entries are prototypes of functions the file
/// defines, to be dropped. All `false` for other languages.
fn defined_prototypes(entries: &[Entry<'_>], declarator_definitions: bool) -> Vec<bool> {
    let mut dropped = vec![false; entries.len()];
    if declarator_definitions {
        let defined: std::collections::HashSet<(&str, SymbolKind)> = entries
            .iter()
            .filter(|e| e.def.is_some() && e.node.kind() == "function_definition")
            .map(|e| (e.qualified.as_str(), e.kind))
            .collect();
        for (e, entry) in entries.iter().enumerate() {
            if entry.def.is_some()
                && matches!(entry.kind, SymbolKind::Function | SymbolKind::Method)
                && entry.node.kind() != "function_definition"
                && defined.contains(&(entry.qualified.as_str(), entry.kind))
            {
                dropped[e] = true;
            }
        }
    }
    dropped
}

/// What making the file's symbols reads: the file, its nested entries and definitions,
/// which entry is which symbol, and the walks that hold their token streams.
struct Defined<'a, 't> {
    path: &'a str,
    language: Language,
    text: &'a str,
    lines: &'a RowIndex,
    entries: &'a [Entry<'t>],
    kept: &'a [RawDef<'t>],
    symbol_of_entry: &'a [Option<u32>],
    walks: &'a [fingerprint::Walk],
}

/// The symbols of the entries in `order`: keys (`path#qualified@kind`, `[n]` from the
/// second of a name and kind), parents, signatures, docs and fingerprints.
fn make_symbols(d: Defined<'_, '_>, order: &[usize]) -> Vec<Symbol> {
    let Defined {
        path,
        language,
        text,
        lines,
        entries,
        kept,
        symbol_of_entry,
        walks,
    } = d;
    let bytes = text.as_bytes();
    let extraction = &language.spec().extraction;
    let mut ordinals: HashMap<(&str, SymbolKind), u32> = HashMap::new();
    let mut symbols: Vec<Symbol> = Vec::with_capacity(order.len());
    for &e in order {
        let entry = &entries[e];
        let def = &kept[entry.def.unwrap_or_default()];
        let n = ordinals
            .entry((entry.qualified.as_str(), entry.kind))
            .or_insert(0);
        *n += 1;
        let mut key = format!("{path}#{}@{}", entry.qualified, entry.kind.as_str());
        if *n >= 2 {
            key.push_str(&format!("[{n}]"));
        }
        let mut parent = entry.parent_entry;
        while let Some(p) = parent {
            if symbol_of_entry[p].is_some() {
                break;
            }
            parent = entries[p].parent_entry;
        }
        let walk = &walks[def.walk];
        let marks = walk
            .marks
            .get(&entry.node.id())
            .copied()
            .unwrap_or_default();
        let body = walk
            .stream
            .get(marks.entry..marks.exit.max(marks.entry))
            .unwrap_or_default();
        let sig = walk
            .stream
            .get(marks.entry..marks.signature_end.max(marks.entry))
            .unwrap_or_default();
        let doc = (extraction.docstring)(entry.node, bytes)
            .or_else(|| doc_above(language, text, lines, entry.node, &walks[0].comments));
        symbols.push(Symbol {
            key,
            name: node_text(def.name, bytes).to_string(),
            qualified_name: entry.qualified.clone(),
            kind: entry.kind,
            span: span_of(entry.node),
            name_span: span_of(def.name),
            signature: signature_line(
                language,
                text,
                lines,
                entry.node.start_byte(),
                def.name.start_byte(),
            ),
            doc,
            body_fingerprint: fingerprint::short_hash(body),
            signature_fingerprint: fingerprint::short_hash(sig),
            parent: parent.and_then(|p| symbol_of_entry[p]),
        });
    }
    symbols
}

/// What a file defines and imports, as [`references`] reads it.
#[derive(Clone, Copy)]
struct FileNames<'a> {
    imports: &'a [Import],
    /// Rust: the path each alias a `use` binds stands for ([`use_alias_paths`]).
    alias_paths: &'a FastMap<String, String>,
    /// The modules imported under an alias, by alias ([`module_aliases`]).
    module_aliases: &'a FastMap<String, String>,
    symbols: &'a [Symbol],
    /// The names a name read as a value may be ([`Role::Value`]).
    bound: &'a FastSet<&'a str>,
}

/// The kept references as [`Reference`]s: name, receiver (own, imported, a path, a typed
/// value) and receiver name, and the target when it is a member the file defines.
fn references<'t>(
    language: Language,
    bytes: &[u8],
    refs_kept: &[RawRef<'t>],
    file: FileNames<'_>,
    env: Option<types::TypeEnv<'t>>,
) -> Vec<Reference> {
    let FileNames {
        imports,
        alias_paths,
        module_aliases,
        symbols,
        bound,
    } = file;
    let mut bindings = import_bindings(language, imports);
    bindings.extend(module_aliases.keys().cloned());
    let mut rust_paths = if language == Language::Rust {
        rust_bound_paths(imports)
    } else {
        FastMap::default()
    };
    // `Rt::new()` after `use tokio::runtime::Runtime as Rt;` is on that path, as
    // `Runtime::new()` after the plain `use` is.
    rust_paths.extend(
        alias_paths
            .iter()
            .map(|(alias, path)| (alias.as_str(), path.clone())),
    );
    let mut members: Option<FastMap<(&str, &str), Option<u32>>> = None;
    // Receiver types (`crate::types`): the file's bindings, which its walks collected.
    let typing = language.spec().extraction.typing;
    refs_kept
        .iter()
        .filter_map(|r| {
            let name = reference_name(node_text(r.name, bytes));
            if name.is_empty() {
                return None;
            }
            let (mut receiver, object, last, object_node) =
                receiver_of(language, r.node, r.name, bytes, &bindings);
            // A module declared with `#[path]` is not where its path says: a name on it
            // stays on an import, which the module's resolved file answers.
            if receiver == Receiver::Path
                && last.is_some_and(|l| bindings.contains(l) && !rust_paths.contains_key(l))
            {
                receiver = Receiver::Imported;
            }
            // A bare name a function around it binds (a parameter, a local: `error()` after
            // `error = self._raise_error`) is that local, no definition's.
            if receiver == Receiver::None
                && matches!(r.kind, RefKind::Call | RefKind::Other)
                && env
                    .as_ref()
                    .is_some_and(|e| e.is_function_local(name, r.name.start_byte()))
            {
                return None;
            }
            // A name read as a value ([`Role::Value`]) is a reference where the file binds
            // it (`key=_make_key`), or on an imported module (`ftplib.all_errors`).
            if r.value
                && !match receiver {
                    Receiver::Imported => true,
                    Receiver::None => bound.contains(name),
                    _ => false,
                }
            {
                return None;
            }
            // `Foo::new()`, `Foo.create()`: a member of a type this file defines.
            let mut target = None;
            if let Some(object) = object
                && matches!(
                    receiver,
                    Receiver::Other | Receiver::Path | Receiver::Imported
                )
                && let Some(Some(i)) = members
                    .get_or_insert_with(|| local_members(symbols))
                    .get(&(object, name))
            {
                receiver = Receiver::Own;
                target = Some(*i);
            }
            // A value whose type the file makes evident: `rt.block_on(..)` after `let rt =
            // Runtime::new().unwrap()` is on a `Runtime`.
            let mut typed = None;
            if receiver == Receiver::Other
                && let (Some(typing), Some(object), Some(env)) = (typing, object_node, &env)
            {
                let cx = types::Cx::new(env, typing, bytes);
                if cx.is_own(node_text(object, bytes), object.start_byte()) {
                    // Go `func (s *Server) f() { s.g() }`: `s` is the method's own receiver.
                    receiver = Receiver::Own;
                } else if constructed_type(language, object, bytes).is_none()
                    && (!env.is_empty() || matches!(object.kind(), "call_expression" | "call"))
                {
                    // (`Type::new(..).m()`, Python `Type(..).m()`: the type as written, above.)
                    typed = cx
                        .expr(object)
                        // `U.find()` after `from .models import User as U`.
                        .or_else(|| {
                            cx.alias(node_text(object, bytes))
                                .filter(|path| {
                                    path.rsplit('.')
                                        .next()
                                        .is_some_and(|t| t.starts_with(|c: char| c.is_uppercase()))
                                })
                                .map(str::to_string)
                        })
                        .map(|ty| cx.unalias(ty));
                }
                if typed.is_some() {
                    receiver = Receiver::Typed;
                }
            }
            let receiver_name = typed.or_else(|| {
                last.filter(|_| {
                    matches!(
                        receiver,
                        Receiver::Other | Receiver::Path | Receiver::Imported
                    )
                })
                .map(|path| receiver_path(path, receiver, &rust_paths, module_aliases))
            });
            Some(Reference {
                name: name.to_string(),
                kind: r.kind,
                receiver,
                receiver_name,
                span: span_of(r.name),
                enclosing: None,
                target,
            })
        })
        .collect()
}

/// A receiver written as a path (`io::util`, `pq`), as the map records it: its segments
/// joined by `.`, a Rust path from what the file's `use` bound its first name to
/// (`io::util::copy()` after `use tokio::io;` is `tokio.io.util`'s), a module imported under
/// an alias by its path (`pq.Queue()` after `import queue as pq` is `queue`'s).
fn receiver_path(
    path: &str,
    receiver: Receiver,
    rust_paths: &FastMap<&str, String>,
    module_aliases: &FastMap<String, String>,
) -> String {
    let mut segments: Vec<&str> = path
        .split(['.', ':'])
        .filter(|seg| !seg.is_empty())
        .collect();
    if receiver == Receiver::Path
        && let Some(bound) = segments.first().and_then(|s| rust_paths.get(s))
    {
        segments.splice(..1, bound.split("::"));
    }
    if receiver == Receiver::Imported
        && let Some(module) = segments.first().and_then(|s| module_aliases.get(*s))
    {
        segments.splice(..1, module.split('.'));
    }
    segments.join(".")
}

/// Sets each reference's `enclosing` to the innermost symbol whose span contains the
/// start of its name. `symbols` are in document order (outer before inner), `refs` sorted
/// by start.
pub(super) fn assign_enclosing(symbols: &[Symbol], refs: &mut [Reference]) {
    let starts: Vec<u32> = refs.iter().map(|r| r.span.start).collect();
    let innermost = open_stacks(symbols, &starts, |stack, _| stack.last().map(|&t| t as u32));
    for (r, enclosing) in refs.iter_mut().zip(innermost) {
        r.enclosing = enclosing;
    }
}

/// Sets each import's `enclosing` to the innermost symbol whose span contains its
/// statement and starts before it: a statement that is itself a definition (Rust's `mod
/// foo;`) is not inside it.
fn assign_import_scopes(symbols: &[Symbol], imports: &mut [Import]) {
    let mut order: Vec<usize> = (0..imports.len()).collect();
    order.sort_by_key(|&i| imports[i].span.start);
    let starts: Vec<u32> = order.iter().map(|&i| imports[i].span.start).collect();
    for (i, enclosing) in order.into_iter().zip(innermost_before(symbols, &starts)) {
        imports[i].enclosing = enclosing;
    }
}

/// For each of `starts` (ascending byte offsets), the innermost symbol whose span contains
/// it and starts before it, as an index into `symbols`: where an import statement (or the
/// name it binds) is written.
fn innermost_before(symbols: &[Symbol], starts: &[u32]) -> Vec<Option<u32>> {
    open_stacks(symbols, starts, |stack, at| {
        stack
            .iter()
            .rev()
            .find(|&&t| symbols[t].span.start < at)
            .map(|&t| t as u32)
    })
}

/// `pick(stack, at)` for each of `starts` (ascending), where `stack` holds the symbols
/// whose spans contain `at`, outermost first.
fn open_stacks(
    symbols: &[Symbol],
    starts: &[u32],
    pick: impl Fn(&[usize], u32) -> Option<u32>,
) -> Vec<Option<u32>> {
    let mut next = 0usize;
    let mut stack: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(starts.len());
    for &at in starts {
        while next < symbols.len() && symbols[next].span.start <= at {
            let s = &symbols[next].span;
            while stack.last().is_some_and(|&t| {
                !(symbols[t].span.start <= s.start && s.end <= symbols[t].span.end)
            }) {
                stack.pop();
            }
            stack.push(next);
            next += 1;
        }
        while stack.last().is_some_and(|&t| symbols[t].span.end <= at) {
            stack.pop();
        }
        // Symbols on the stack that ended before `at` but sit below a still-open one cannot
        // exist: the stack is nested, so the top is the innermost open symbol.
        out.push(pick(&stack, at));
    }
    out
}

/// The text of `node`, or `""` if its range is not valid UTF-8 on char boundaries.
pub(crate) fn node_text<'a>(node: Node<'_>, bytes: &'a [u8]) -> &'a str {
    bytes
        .get(node.start_byte()..node.end_byte())
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("")
}

/// The [`Span`] of a node.
pub(crate) fn span_of(node: Node<'_>) -> Span {
    let start = node.start_position();
    Span {
        start: to_u32(node.start_byte()),
        end: to_u32(node.end_byte()),
        line: to_u32(start.row),
        column: to_u32(start.column),
        end_line: to_u32(node.end_position().row),
    }
}

pub(super) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

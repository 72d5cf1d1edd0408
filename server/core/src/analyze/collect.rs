//! What one walk of a file's tree collects: definition, scope, reference and import
//! captures of the language's query, and Rust macro bodies that may hold items or
//! expressions, parsed again on their own.

use super::*;

/// One definition capture, before nesting.
pub(super) struct RawDef<'t> {
    pub(super) node: Node<'t>,
    pub(super) name: Node<'t>,
    pub(super) kind: SymbolKind,
    pub(super) pattern: usize,
    /// The walk it was found in (index into the walks: 0 is the file's tree, then the
    /// macro bodies parsed again), whose token stream holds its body.
    pub(super) walk: usize,
}

/// One reference capture.
pub(super) struct RawRef<'t> {
    /// The `@reference.*` node: the name's parent is found below it.
    pub(super) node: Node<'t>,
    pub(super) name: Node<'t>,
    pub(super) kind: RefKind,
    pub(super) pattern: usize,
    pub(super) not_local: bool,
    /// `@reference.value`: kept only where the file binds the name ([`Role::Value`]).
    pub(super) value: bool,
}

/// A definition or a scope, in the nesting pass.
pub(super) struct Entry<'t> {
    pub(super) node: Node<'t>,
    /// `None` for a scope.
    pub(super) def: Option<usize>,
    /// Qualified name of this entry (scopes too).
    pub(super) qualified: String,
    pub(super) kind: SymbolKind,
    pub(super) parent_entry: Option<usize>,
}

/// Rust: how many macro bodies deep items are looked for (`cfg_net! { cfg_unix! { .. } }`
/// is two); bodies nested deeper stay token trees.
pub const MAX_MACRO_DEPTH: usize = 8;

/// Rust macros whose `{ .. }` body is a code template (it is quoted, not compiled where it
/// is written): its items are not the file's.
pub(super) const CODE_TEMPLATE_MACROS: [&str; 4] = [
    "quote",
    "quote_spanned",
    "parse_quote",
    "parse_quote_spanned",
];

/// Rust: a macro invocation's body to be parsed again: a `{ .. }` body at a place where
/// items go, or the arguments of a `( .. )`/`[ .. ]` body.
pub(super) struct MacroBody<'t> {
    /// The invocation: the inline modules around it qualify the imports in the body.
    pub(super) host: Node<'t>,
    /// The walk that found it.
    pub(super) walk: usize,
    /// The bytes between the delimiters, with their points.
    pub(super) range: tree_sitter::Range,
    /// Arguments (`assert_eq!(parse(s), ..)`), whose calls are references; else items.
    pub(super) arguments: bool,
}

/// A macro body parsed on its own as Rust items, or as arguments.
pub(super) struct MacroTree {
    pub(super) tree: Tree,
    /// The inline modules around the invocation, outermost first (see [`RawImport`]).
    pub(super) modules: Vec<String>,
    /// Parsed as arguments: only its references count.
    pub(super) arguments: bool,
}

/// What the query matches of a file's walks found.
#[derive(Default)]
pub(super) struct Collected<'t> {
    pub(super) defs: Vec<RawDef<'t>>,
    pub(super) scopes: Vec<(Node<'t>, String)>,
    pub(super) raw_refs: Vec<RawRef<'t>>,
    pub(super) raw_imports: Vec<RawImport<'t>>,
    /// Name nodes an `@ignore` capture names: never a reference (the tags convention:
    /// Elixir's query ignores the `def` of `def f(..)`, which a call pattern also takes).
    pub(super) ignored: FastSet<usize>,
    /// Rust macro bodies found since the last round of parsing them.
    pub(super) bodies: Vec<MacroBody<'t>>,
}

impl<'t> Collected<'t> {
    /// Runs the query at `node` (whose parent has kind id `parent`), found by walk number
    /// `walk`, whose tree lies inside the inline modules `modules` (Rust macro bodies),
    /// and records a Rust macro body that may hold items or arguments. A walk of
    /// `arguments` keeps references only: macro arguments define nothing.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn visit(
        &mut self,
        cursor: &mut QueryCursor,
        tables: &LangQuery,
        bytes: &[u8],
        node: Node<'t>,
        parent: u16,
        expected: &mut Expected,
        walk: usize,
        modules: &[String],
        arguments: bool,
    ) {
        if node.kind_id() == tables.rust.macro_invocation {
            let mut ranges = Vec::new();
            if !arguments && tables.rust.holds_items(parent) {
                macro_item_bodies(node, &tables.rust, bytes, &mut ranges);
            }
            let items = ranges.len();
            ranges.extend(macro_arguments(node, &tables.rust, bytes));
            self.bodies
                .extend(ranges.into_iter().enumerate().map(|(i, range)| MacroBody {
                    host: node,
                    walk,
                    range,
                    arguments: i >= items,
                }));
        }
        let Ok(compiled) = &tables.compiled else {
            return;
        };
        let mut matches = cursor.matches(&compiled.query, node, bytes);
        while let Some(m) = matches.next() {
            let mut name = None;
            let mut def = None;
            let mut reference = None;
            let mut value = false;
            let mut scope = None;
            let mut import = RawImport::default();
            let mut is_import = false;
            for capture in m.captures() {
                let node = capture.node;
                let role = compiled
                    .roles
                    .get(capture.index as usize)
                    .copied()
                    .unwrap_or(Role::Ignore);
                match role {
                    Role::Name => name = Some(node),
                    Role::Def(kind) => def = Some((node, kind)),
                    // The grammars capture a macro invocation as a call.
                    Role::Ref(_) if node.kind_id() == tables.rust.macro_invocation => {
                        reference = Some((node, RefKind::Macro))
                    }
                    Role::Ref(kind) => reference = Some((node, kind)),
                    Role::Value => {
                        reference = Some((node, RefKind::Other));
                        value = true;
                    }
                    Role::Scope => scope = Some(node),
                    Role::Import | Role::ImportUse => {
                        is_import = true;
                        import.statement = Some(node);
                        import.php_use |= role == Role::ImportUse;
                    }
                    Role::ImportModule => import.module = Some(node),
                    Role::ImportName => import.names.push(node),
                    Role::ImportTree => import.tree = Some(node),
                    Role::ImportKind => import.kind = Some(node),
                    Role::ImportArg => import.arg = Some(node),
                    Role::IgnoreNode => {
                        self.ignored.insert(node.id());
                    }
                    Role::Doc | Role::Ignore => {}
                }
            }
            if arguments && (is_import || def.is_some() || scope.is_some()) {
                continue;
            }
            if is_import {
                import.outer_modules = modules.to_vec();
                self.raw_imports.push(import);
                continue;
            }
            let Some(name) = name else { continue };
            if let Some((node, kind)) = def {
                expected.insert(node.id());
                self.defs.push(RawDef {
                    node,
                    name,
                    kind,
                    pattern: m.pattern_index,
                    walk,
                });
            } else if let Some((node, kind)) = reference {
                let not_local = compiled
                    .not_local
                    .get(m.pattern_index)
                    .copied()
                    .unwrap_or(false);
                self.raw_refs.push(RawRef {
                    node,
                    name,
                    kind,
                    pattern: m.pattern_index,
                    not_local,
                    value,
                });
            } else if let Some(node) = scope {
                self.scopes
                    .push((node, base_type_name(node_text(name, bytes)).to_string()));
            }
        }
    }
}

/// Rust: the byte ranges between the braces of the macro invocation `node`'s `{ .. }` body,
/// appended to `out`: the body itself, or for `cfg_if!` (`cfg_if! { if #[cfg(unix)] { .. }
/// else { .. } }`) each branch's `{ .. }`. Nothing for an empty body, a code template
/// ([`CODE_TEMPLATE_MACROS`]), a `bitflags!` body, or a `( .. )`/`[ .. ]` body
/// (`vec![..]`, `println!(..)`, `json!({..})`).
pub(super) fn macro_item_bodies(
    node: Node<'_>,
    kinds: &RustKinds,
    bytes: &[u8],
    out: &mut Vec<tree_sitter::Range>,
) {
    let Some(body) = node
        .child_count()
        .checked_sub(1)
        .and_then(|last| node.child(last))
    else {
        return;
    };
    if body.kind_id() != kinds.token_tree || bytes.get(body.start_byte()) != Some(&b'{') {
        return;
    }
    let Some(name) = node.child_by_field_name("macro") else {
        return;
    };
    let name = node_text(name, bytes);
    let last = name.rsplit("::").next().unwrap_or(name).trim();
    // A `bitflags!`-style body (`pub struct OFlag: c_int { .. }`) is no Rust: parsed, its
    // error recovery made a struct of the flags' type (`c_int`). The tags query reads it.
    if CODE_TEMPLATE_MACROS.contains(&last) || last.ends_with("bitflags") {
        return;
    }
    if last == "cfg_if" {
        let mut cursor = body.walk();
        for branch in body.named_children(&mut cursor) {
            if branch.kind_id() == kinds.token_tree
                && let Some(range) = brace_inner(branch, kinds, bytes)
            {
                out.push(range);
            }
        }
    } else if let Some(range) = brace_inner(body, kinds, bytes) {
        out.push(range);
    }
}

/// Rust: the byte range of the macro invocation `node`'s `( .. )` or `[ .. ]` body with
/// its delimiters (`assert_eq!(parse(s), ..)`, `vec![f(x); n]`), whose calls are the
/// file's: it parses as a tuple or an array, where the arguments alone would be an error
/// at each comma (error recovery made the scan of Rust code 1.25x slower). Not for an
/// empty body or a code template ([`CODE_TEMPLATE_MACROS`]).
pub(super) fn macro_arguments(
    node: Node<'_>,
    kinds: &RustKinds,
    bytes: &[u8],
) -> Option<tree_sitter::Range> {
    let body = node.child(node.child_count().checked_sub(1)?)?;
    if body.kind_id() != kinds.token_tree {
        return None;
    }
    let name = node_text(node.child_by_field_name("macro")?, bytes);
    let last = name.rsplit("::").next().unwrap_or(name).trim();
    if CODE_TEMPLATE_MACROS.contains(&last) {
        return None;
    }
    let inner = match bytes.get(body.start_byte()) {
        Some(b'(') => delimited_inner(body, b'(', b')', bytes),
        Some(b'[') => delimited_inner(body, b'[', b']', bytes),
        _ => None,
    }?;
    let inner = bytes.get(inner.start_byte..inner.end_byte)?;
    (refers(inner) && !starts_an_item(inner)).then(|| body.range())
}

/// Whether Rust code `text` may hold a reference: a call (`f(`, `f::<T>(`), a path
/// (`Ordering::SeqCst`), a struct literal (`Point {`) or a constant's upper-case name
/// (`MAX_BURST`, as the `constants.scm` query reads one). Most macro arguments hold none
/// (`assert!(done)`, `println!("{x}")`, `vec![1, 2]`) and are not parsed again.
fn refers(text: &[u8]) -> bool {
    let call_or_path = text.windows(2).any(|pair| match pair {
        [b':', b':'] => true,
        [before, b'(' | b'{'] => {
            before.is_ascii_alphanumeric() || matches!(before, b'_' | b'>' | b' ')
        }
        _ => false,
    });
    call_or_path || holds_constant(text)
}

/// Whether Rust code `text` holds a constant's upper-case name (`MAX_BURST`) outside its
/// string literals (`panic!("NUL byte")` holds none).
fn holds_constant(text: &[u8]) -> bool {
    let constant = |word: &[u8]| {
        let name = &word[word.iter().take_while(|b| **b == b'_').count()..];
        name.len() > 1
            && name[0].is_ascii_uppercase()
            && name.last().is_some_and(|b| *b != b'_')
            && name
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
    };
    let (mut in_string, mut escaped, mut start) = (false, false, 0);
    for (i, &b) in text.iter().enumerate() {
        if in_string {
            (in_string, escaped) = match (escaped, b) {
                (false, b'\\') => (true, true),
                (false, b'"') => (false, false),
                _ => (true, false),
            };
            start = i + 1;
        } else if !(b.is_ascii_alphanumeric() || b == b'_') {
            if constant(&text[start..i]) {
                return true;
            }
            in_string = b == b'"';
            start = i + 1;
        }
    }
    !in_string && constant(&text[start..])
}

/// Whether Rust code `text` starts with an attribute or an item keyword: a macro taking
/// items in parentheses (`thread_local!(static X: ..)`, `m!(fn f() {})`), whose names
/// are definitions, not expressions.
fn starts_an_item(text: &[u8]) -> bool {
    const ITEM_KEYWORDS: [&[u8]; 12] = [
        b"fn", b"pub", b"struct", b"enum", b"union", b"impl", b"trait", b"mod", b"use", b"static",
        b"type", b"extern",
    ];
    let text = text.trim_ascii_start();
    let word = text
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(text, |end| &text[..end]);
    text.starts_with(b"#") || ITEM_KEYWORDS.contains(&word)
}

/// The range between the braces of the token tree `tree` when it is a `{ .. }` with
/// something but whitespace inside and its closing brace is not MISSING.
pub(super) fn brace_inner(
    tree: Node<'_>,
    kinds: &RustKinds,
    bytes: &[u8],
) -> Option<tree_sitter::Range> {
    let open = tree.child(0)?;
    if open.kind_id() != kinds.open_brace {
        return None;
    }
    delimited_inner(tree, b'{', b'}', bytes)
}

/// The range between the delimiters `open` and `close` of the token tree `tree`, when
/// there is something but whitespace inside and its closing delimiter is not MISSING.
fn delimited_inner(
    tree: Node<'_>,
    open: u8,
    close: u8,
    bytes: &[u8],
) -> Option<tree_sitter::Range> {
    if bytes.get(tree.start_byte()) != Some(&open)
        || tree.end_byte() < tree.start_byte() + 2
        || bytes.get(tree.end_byte() - 1) != Some(&close)
    {
        return None;
    }
    let open = tree.child(0)?;
    let close = tree.child(tree.child_count().checked_sub(1)?)?;
    if close.is_missing() {
        return None;
    }
    let (start, end) = (open.end_byte(), close.start_byte());
    if bytes.get(start..end)?.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(tree_sitter::Range {
        start_byte: start,
        end_byte: end,
        start_point: open.end_position(),
        end_point: close.start_position(),
    })
}

/// Rust: parses the bytes of `range` in `text` on their own (tree-sitter included ranges,
/// so every position in the tree is the file's). Macro `arguments` are returned as parsed
/// (`a, f(b)` is two statements and an ERROR; its call is there). Items are returned when
/// the top level is items only: no ERROR or MISSING node, expression (but a macro call)
/// or `let` statement among the root's children (a `select! { .. }` or other macro syntax
/// parses with errors at the top and adds nothing). `None` when the parse runs out of
/// `budget`.
pub(super) fn parse_macro_body(
    text: &str,
    range: tree_sitter::Range,
    arguments: bool,
    budget: &Budget,
) -> Option<Tree> {
    // Arguments (a tuple or an array) parse as one statement when a `;` follows them: the
    // file's next `;` is included after them (without it, error recovery at the end of
    // every body made the analysis of Rust code 10% slower). Its point is not read.
    let semicolon = arguments
        .then(|| {
            let after = text.as_bytes().get(range.end_byte..)?;
            let at = range.end_byte + after.iter().position(|&b| b == b';')?;
            Some(tree_sitter::Range {
                start_byte: at,
                end_byte: at + 1,
                start_point: range.end_point,
                end_point: range.end_point,
            })
        })
        .flatten();
    let ranges: Vec<tree_sitter::Range> = std::iter::once(range).chain(semicolon).collect();
    let run = |parser: &mut Parser| -> Option<Tree> {
        parser.set_included_ranges(&ranges).ok()?;
        parse_within(parser, text, None, budget)
    };
    let fresh = || {
        let mut parser = Parser::new();
        parser
            .set_language(&Language::Rust.grammar())
            .ok()
            .map(|()| parser)
    };
    let tree = MACRO_PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = fresh();
            }
            slot.as_mut().and_then(run)
        }
        Err(_) => fresh().as_mut().and_then(run),
    })?;
    let root = tree.root_node();
    if root.is_error() || root.kind() != "source_file" {
        return None;
    }
    if arguments {
        return Some(tree);
    }
    let mut cursor = root.walk();
    let mut children = root.children(&mut cursor);
    let items = children.all(|child| {
        // A macro call written at item level (`compile_error!("..");`) parses as an
        // expression statement.
        let item_macro = || {
            child.kind() == "expression_statement"
                && child.named_child_count() == 1
                && child
                    .named_child(0)
                    .is_some_and(|c| c.kind() == "macro_invocation")
        };
        !child.is_error()
            && !child.is_missing()
            && (item_macro()
                || matches!(
                    child.kind(),
                    "line_comment"
                        | "block_comment"
                        | "attribute_item"
                        | "inner_attribute_item"
                        | "const_item"
                        | "static_item"
                        | "macro_invocation"
                        | "macro_definition"
                        | "empty_statement"
                        | "mod_item"
                        | "foreign_mod_item"
                        | "struct_item"
                        | "union_item"
                        | "enum_item"
                        | "type_item"
                        | "function_item"
                        | "function_signature_item"
                        | "impl_item"
                        | "trait_item"
                        | "associated_type"
                        | "use_declaration"
                        | "extern_crate_declaration"
                ))
    });
    drop(children);
    drop(cursor);
    items.then_some(tree)
}

#[cfg(test)]
mod tests {
    use super::holds_constant;

    #[test]
    fn a_constant_counts_outside_string_literals_only() {
        assert!(holds_constant(b"n < MAX_BURST"));
        assert!(holds_constant(b"\"x\", _LIMIT2"));
        assert!(!holds_constant(b"\"NUL byte \\\" ERROR\", n"));
        assert!(!holds_constant(b"done, X, _X_"));
    }
}

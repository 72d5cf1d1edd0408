//! The words a check must not take for claims of the map: members and functions every
//! language provides, and the negations that say a call is absent.

/// Whether the clause of `body` around the bytes `start..end` (from the last sentence or
/// clause break before them — a line break, `. `, `; `, `! `, `? ` — to the first after)
/// says that what it names is absent: a word of [`NEGATIONS`] or one ending in `n't`,
/// outside backticks (`` `not_found()` `` negates nothing).
pub(super) fn negated_clause(body: &str, start: usize, end: usize) -> bool {
    let start = start.min(body.len());
    let end = end.clamp(start, body.len());
    let (Some(before), Some(after)) = (body.get(..start), body.get(end..)) else {
        return false;
    };
    const BREAKS: &[&str] = &["\n", ". ", "; ", "! ", "? "];
    let from = BREAKS
        .iter()
        .filter_map(|b| before.rfind(b).map(|i| i + b.len()))
        .max()
        .unwrap_or(0);
    let to = BREAKS
        .iter()
        .filter_map(|b| after.find(b))
        .min()
        .unwrap_or(after.len());
    let clause = format!("{} {}", &before[from..], &after[..to]);
    // Backticked spans are names, not words of the sentence.
    let words: String = clause
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join(" ");
    words
        .to_lowercase()
        .split(|ch: char| !(ch.is_alphanumeric() || ch == '\''))
        .any(|w| NEGATIONS.contains(&w) || w.ends_with("n't"))
}

/// Words that say what a clause names is absent or was: "never existed", "was removed",
/// "is not here", "renamed to", "instead of".
const NEGATIONS: &[&str] = &[
    "never",
    "not",
    "no",
    "nor",
    "without",
    "removed",
    "deleted",
    "renamed",
    "gone",
    "instead",
    "rather",
    "deprecated",
    "obsolete",
    "formerly",
    "nonexistent",
];

/// Members every type may have without the map seeing a definition: the methods of
/// Rust's derivable and prelude traits (`#[derive(Default)]` gives `Config::default()`;
/// std `core::{default, clone, cmp, hash, fmt, convert, iter, ops}`), and those every
/// Python `object` and JavaScript `Object.prototype` provide. A call to one of these on
/// a type the map has is no evidence of a missing symbol.
const LANGUAGE_PROVIDED_MEMBERS: &[&str] = &[
    // Rust: derivable traits and the prelude's conversions.
    "default",
    "clone",
    "clone_from",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "max",
    "min",
    "clamp",
    "hash",
    "fmt",
    "from",
    "into",
    "try_from",
    "try_into",
    "to_string",
    "to_owned",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    "deref",
    "deref_mut",
    "drop",
    "into_iter",
    "from_iter",
    "extend",
    "from_str",
    "parse",
    // Python: object.
    "__init__",
    "__new__",
    "__repr__",
    "__str__",
    "__eq__",
    "__hash__",
    "__init_subclass__",
    // JavaScript: Object.prototype.
    "toString",
    "valueOf",
    "hasOwnProperty",
    "toLocaleString",
    "constructor",
];

/// Functions the languages provide without a definition in the map, which a page may name
/// whether or not its code calls them (`print()` on a page about a file that does not):
/// Python's builtins, JavaScript's global functions, Go's builtins, Ruby's global
/// functions and the most named of C's library. A call [`Ctx::unknown_call`] never
/// reports.
pub(super) const LANGUAGE_FUNCTIONS: &[&str] = &[
    // Python: builtins.
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "__import__",
    // JavaScript: global functions and constructors.
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "encodeURIComponent",
    "decodeURIComponent",
    "encodeURI",
    "decodeURI",
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "setImmediate",
    "queueMicrotask",
    "structuredClone",
    "fetch",
    "require",
    "alert",
    "Symbol",
    "Number",
    "String",
    "Boolean",
    "Array",
    "Object",
    "Promise",
    "Date",
    "Error",
    "RegExp",
    "Map",
    "Set",
    "BigInt",
    // Go: builtins.
    "append",
    "cap",
    "clear",
    "close",
    "copy",
    "delete",
    "imag",
    "make",
    "new",
    "panic",
    "println",
    "real",
    "recover",
    // Ruby's global functions.
    "puts",
    "p",
    "require_relative",
    "raise",
    "loop",
    "lambda",
    "proc",
    // C: the library functions most named.
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "memcpy",
    "memmove",
    "memset",
    "strlen",
    "strcmp",
    "strcpy",
    "strncpy",
    "exit",
    "abort",
    "assert",
    "sizeof",
];

/// Whether `member` is one of [`LANGUAGE_PROVIDED_MEMBERS`].
pub(super) fn provided_by_the_language(member: &str) -> bool {
    LANGUAGE_PROVIDED_MEMBERS.contains(&member)
}

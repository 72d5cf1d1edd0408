//! Safe full-text queries: any user text becomes a valid FTS5 query.
//!
//! Each whitespace-separated token becomes a quoted phrase with inner `"` doubled, so
//! `-`, `:`, `.`, `*`, `(`, `NEAR` and friends are literal; tokens are ANDed implicitly.
//! Identifiers are expanded so `parseConfig`, `parse_config` and `ParseConfig` find each
//! other: a token with inner case changes or underscores matches either its joined form
//! (`parseconfig`) or its parts as a phrase (`"parse config"`).
//!
//! `search` ANDs the tokens (every word must be there). `context` answers questions in
//! prose, so it uses [`content_terms`] instead: the same tokens without English function
//! words, matched with OR and weighed by how rare each one is.

use std::collections::HashSet;

pub use loci_core::terms::identifier_words;

/// English function words and question words dropped from questions by [`content_terms`]:
/// they carry no topic, and ORed into a BM25 query they only cost time.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "being", "but", "by", "can", "could", "did", "didn", "do", "does", "doesn",
    "don", "each", "for", "from", "had", "has", "have", "he", "her", "here", "his", "how", "i",
    "if", "in", "into", "is", "isn", "it", "its", "just", "me", "might", "my", "no", "nor", "not",
    "of", "on", "one", "only", "or", "our", "she", "should", "so", "some", "such", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "us",
    "was", "wasn", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "won", "would", "you", "your",
];

/// Whether `word` (lower-case) is one of [`STOPWORDS`].
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// One content term of a question: the identifier words of one whitespace token
/// (`parse_config` → `parse`, `config`), lower-case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The words, in order (at least one).
    pub words: Vec<String>,
}

/// Harman's S-stemmer (1991): English plurals to singular (`queries` → `query`,
/// `indexes` → `indexe`, `files` → `file`; `status`, `class` and words of three letters
/// or fewer are kept). Applied alike to questions and to the text they are matched in.
pub fn s_stem(word: &str) -> String {
    if word.len() <= 3 || !word.is_ascii() {
        return word.to_string();
    }
    if let Some(base) = word.strip_suffix("ies")
        && !base.ends_with(['e', 'a'])
    {
        return format!("{base}y");
    }
    if let Some(base) = word.strip_suffix("es")
        && !base.ends_with(['a', 'e', 'o'])
    {
        return format!("{base}e");
    }
    if let Some(base) = word.strip_suffix('s')
        && !base.ends_with(['u', 's'])
    {
        return base.to_string();
    }
    word.to_string()
}

/// The other forms a question's word may be written in, in code: the base forms an
/// English past tense or gerund may have (`rendered` → `render`, `cached` → `cache`,
/// `formatted` → `format`, `parsing` → `parse`, `mapping` → `map`), as code names things
/// by the base form (`fn render`, `CachedDate`) and questions ask in inflections
/// ("re-rendered", "cached"); and the other English spelling of the word, its singular
/// and those base forms ([`other_spelling`]: "colour" asks for `color`). Candidates, not
/// a dictionary: a form the text does not hold matches nothing. Inflections of five
/// letters or fewer, or whose stem would be shorter than four (`string`, `during`,
/// `speed`), have no base form.
pub fn base_forms(word: &str) -> Vec<String> {
    let mut out = inflection_bases(word);
    let spelled: Vec<String> = [word.to_string(), s_stem(word)]
        .into_iter()
        .chain(out.iter().cloned())
        .filter_map(|w| other_spelling(&w))
        .collect();
    for w in spelled {
        if w != word && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// British and American endings (`colour`/`color`, `initialise`/`initialize`,
/// `analyse`/`analyze`, `catalogue`/`catalog`), longest first.
const SPELLINGS: &[(&str, &str)] = &[
    ("isations", "izations"),
    ("isation", "ization"),
    ("ising", "izing"),
    ("isers", "izers"),
    ("ogue", "og"),
    ("ised", "ized"),
    ("ises", "izes"),
    ("iser", "izer"),
    ("ours", "ors"),
    ("ise", "ize"),
    ("yse", "yze"),
    ("our", "or"),
];

/// `word` spelled the other English way (`colour` → `color`, `behavior` → `behaviour`,
/// `serialise` → `serialize`): code and its comments are mostly written in one, questions
/// in either. `None` for a word with neither ending, or of fewer than three letters
/// before it (`size`, `hour`, `door` have no other spelling).
pub fn other_spelling(word: &str) -> Option<String> {
    if !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    SPELLINGS.iter().find_map(|&(british, american)| {
        let swap = |from: &str, to: &str| {
            word.strip_suffix(from)
                .filter(|stem| stem.len() >= 3)
                .map(|stem| format!("{stem}{to}"))
        };
        swap(british, american).or_else(|| swap(american, british))
    })
}

/// The base forms an English past tense or gerund may have ([`base_forms`]).
fn inflection_bases(word: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if word.len() <= 5 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return out;
    }
    let stem = word
        .strip_suffix("ed")
        .or_else(|| word.strip_suffix("ing"))
        .filter(|s| s.len() >= 4);
    let Some(stem) = stem else {
        return out;
    };
    let b = stem.as_bytes();
    let (last, before) = (b[b.len() - 1], b[b.len() - 2]);
    let vowel = |c: u8| b"aeiou".contains(&c);
    if last == before && !vowel(last) && !b"lsz".contains(&last) {
        // A doubled final consonant: `formatted`, `mapping`.
        out.push(stem[..stem.len() - 1].to_string());
    } else {
        out.push(stem.to_string());
        if !vowel(last) && last != b'e' {
            // A dropped final `e`: `cached`, `parsing`, `encoded`.
            out.push(format!("{stem}e"));
        }
    }
    out
}

/// The English plural of a singular `word`, when [`s_stem`] folds it back to `word`
/// (`query` → `queries`, `file` → `files`), or `None` (a plural already, or one the
/// stemmer does not fold back: `index` → `indexes` stems to `indexe`). Questions are asked
/// for it besides the word, so a singular question finds the plural in the text, as a
/// plural one finds the singular; only plurals that fold back are asked for, so what is
/// retrieved is what coverage credits. Measured with `context_bench` (2026-12-02, recall@5
/// / MRR / abstention precision): stdlib set 0.457 / 0.358 / 0.667 without, 0.476 / 0.398
/// / 0.857 with; loci's set 0.393 / 0.455 / 0.846 without, 0.380 / 0.446 / 0.917 with.
pub fn plural(word: &str) -> Option<String> {
    if s_stem(word) != word {
        return None;
    }
    let p = match word.strip_suffix('y') {
        Some(base) if !base.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{base}ies"),
        _ if word.ends_with(['s', 'x', 'z']) || word.ends_with("ch") || word.ends_with("sh") => {
            format!("{word}es")
        }
        _ => format!("{word}s"),
    };
    (s_stem(&p) == word).then_some(p)
}

impl Term {
    /// The joined form (`parseconfig`), which is how the token itself is indexed.
    pub fn joined(&self) -> String {
        self.words.concat()
    }

    /// The forms the index is asked for: the joined form, its singular when it differs
    /// and its [`base_forms`] (one-word terms), and for several words the words as a
    /// phrase.
    pub fn forms(&self) -> Vec<String> {
        let joined = self.joined();
        let mut forms = vec![joined.clone()];
        if self.words.len() == 1 {
            let stem = s_stem(&joined);
            if stem != joined {
                forms.push(stem);
            }
            for base in base_forms(&joined) {
                if !forms.contains(&base) {
                    forms.push(base);
                }
            }
        } else {
            forms.push(self.words.join(" "));
        }
        forms
    }

    /// The FTS5 expression matching this term: `"word"`, `("queries" OR "query")`, or
    /// `("joined" OR "w1 w2")`.
    pub fn expr(&self) -> String {
        let mut forms = self.forms();
        if self.words.len() == 1
            && let Some(p) = plural(&forms[0])
        {
            forms.push(p);
        }
        let forms: Vec<String> = forms.iter().map(|f| quote(f)).collect();
        if forms.len() == 1 {
            forms[0].clone()
        } else {
            format!("({})", forms.join(" OR "))
        }
    }

    /// Whether a text whose words (see [`words_in`]) are `words` holds this term: its
    /// joined form or that form's singular, or every one of its words.
    pub fn found_in(&self, words: &HashSet<String>) -> bool {
        let joined = self.joined();
        words.contains(&joined)
            || words.contains(&s_stem(&joined))
            || (self.words.len() == 1 && base_forms(&joined).iter().any(|b| words.contains(b)))
            || (self.words.len() > 1 && self.words.iter().all(|w| words.contains(w)))
    }
}

/// The content terms of a question, in order, without repeats: each whitespace token's
/// identifier words, without one-character words and [`STOPWORDS`], a dropped word
/// splitting the token into several terms (`RotatingFileHandler.doRollover` →
/// `rotating file handler`, `rollover`); a token left with no word is dropped. `"Where are write transactions begun?"` → `write`, `transactions`,
/// `begun`.
pub fn content_terms(text: &str) -> Vec<Term> {
    let mut terms = all_content_terms(text);
    terms.truncate(MAX_QUERY_TERMS);
    terms
}

/// The most bytes of a query that `search` and `context` read ([`bounded`]).
pub const MAX_QUERY_BYTES: usize = 16 * 1024;

/// The most distinct terms a query uses, the first ones in order: longer text is a
/// document, not a question, and each term costs a posting list to read and a node of
/// the FTS5 expression.
pub const MAX_QUERY_TERMS: usize = 64;

/// `text` as `search` and `context` read it — its first [`MAX_QUERY_BYTES`], cut at a
/// character boundary — and the notes an answer gives when that, or
/// [`MAX_QUERY_TERMS`], left part of it unused. Every cost of an answer is then bounded
/// whatever the input.
pub fn bounded(text: &str) -> (&str, Vec<String>) {
    let mut notes = Vec::new();
    let mut end = text.len().min(MAX_QUERY_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let kept = &text[..end];
    if end < text.len() {
        notes.push(format!(
            "the query is {} bytes: its first {MAX_QUERY_BYTES} were read",
            text.len()
        ));
    }
    let terms = all_content_terms(kept).len();
    if terms > MAX_QUERY_TERMS {
        notes.push(format!(
            "the query has {terms} distinct terms: its first {MAX_QUERY_TERMS} were used"
        ));
    }
    (kept, notes)
}

/// [`content_terms`] without the cap.
fn all_content_terms(text: &str) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    // Linear in the question's length: each term is looked up, not compared with the others.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for token in text
        .split_whitespace()
        .flat_map(|t| t.split(is_call_punctuation))
    {
        // A dropped word splits the token: the words on either side are not adjacent in
        // the text, so one phrase of them would match nothing (`RotatingFileHandler.
        // doRollover` is `rotating file handler` and `rollover`, each found in the
        // identifier-aware terms of memory and docs; as `"rotating file handler rollover"`
        // it finds no note quoting it).
        let mut segments: Vec<Vec<String>> = vec![Vec::new()];
        for w in identifier_words(token) {
            if w.chars().count() > 1 && !is_stopword(&w) {
                segments.last_mut().expect("one segment at least").push(w);
            } else if !segments.last().is_some_and(Vec::is_empty) {
                segments.push(Vec::new());
            }
        }
        for words in segments.into_iter().filter(|s| !s.is_empty()) {
            let term = Term { words };
            if seen.insert(term.joined()) {
                out.push(term);
            }
        }
    }
    out
}

/// Whether `c` separates a call from its arguments or one argument from the next
/// (`json.dumps(obj)`, `field(default_factory=list)`, `Vec<u8>`): the words on either side
/// are separate terms, as the words of separate tokens are.
fn is_call_punctuation(c: char) -> bool {
    matches!(
        c,
        '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | '=' | ',' | ';'
    )
}

/// An FTS5 expression matching rows that hold every one of `terms`, or `None` when there
/// are none.
pub fn all_of<'a>(terms: impl IntoIterator<Item = &'a Term>) -> Option<String> {
    let parts: Vec<String> = terms.into_iter().map(Term::expr).collect();
    (!parts.is_empty()).then(|| parts.join(" AND "))
}

/// An FTS5 expression matching any of `terms`, or `None` when there are none.
pub fn any_of<'a>(terms: impl IntoIterator<Item = &'a Term>) -> Option<String> {
    let parts: Vec<String> = terms.into_iter().map(Term::expr).collect();
    (!parts.is_empty()).then(|| parts.join(" OR "))
}

/// Tokens of text that may stand between two consecutive terms of a [`near_phrase`]: the
/// question's function words and a little rewording ("parse a URL" in "Parse a URL into 6
/// components", "write transactions" in "write transactions are begun").
pub const PHRASE_GAP: usize = 3;

/// The most content terms a [`near_phrase`] holds: a longer question is not quoted from
/// one doc comment, and each phrase of a NEAR group costs a position-list walk.
pub const PHRASE_TERMS: usize = 8;

/// An FTS5 expression matching rows whose `columns` (FTS5 column names) hold the
/// question's content terms close together: one NEAR group of each term as a phrase of its
/// words (`parse_config` is `"parse config"`, as a doc comment's text is tokenized), at
/// most [`PHRASE_GAP`] tokens between consecutive terms. A question quoted nearly verbatim
/// in a doc comment or a signature matches; the same words scattered over a long text do
/// not. Every term is quoted (inner `"` doubled), so any question is a valid expression.
/// `None` for fewer than two terms (one term is its own phrase) or more than
/// [`PHRASE_TERMS`].
pub fn near_phrase(terms: &[Term], columns: &[&str]) -> Option<String> {
    if terms.len() < 2 || terms.len() > PHRASE_TERMS {
        return None;
    }
    let phrases: Vec<String> = terms.iter().map(|t| quote(&t.words.join(" "))).collect();
    // NEAR's distance counts every token between the group's first and last phrase,
    // the inner phrases' own tokens included.
    let inner: usize = terms[1..terms.len() - 1]
        .iter()
        .map(|t| t.words.len())
        .sum();
    let distance = PHRASE_GAP * (terms.len() - 1) + inner;
    let filter = if columns.is_empty() {
        String::new()
    } else {
        format!("{{{}}} : ", columns.join(" "))
    };
    Some(format!("{filter}NEAR({}, {distance})", phrases.join(" ")))
}

/// Whether `text` holds `terms` in their order, each term's words consecutive and at most
/// [`PHRASE_GAP`] tokens between consecutive terms: the ordered check of a
/// [`near_phrase`] match (FTS5's NEAR is unordered, and `socket_open` is not "open a
/// socket"). Tokens are maximal runs of letters and digits, lower-case, as FTS5's
/// `unicode61` tokenizer makes them; a token and a word are equal when their singulars
/// ([`s_stem`]) are.
pub fn holds_in_order(text: &str, terms: &[Term]) -> bool {
    let tokens: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| s_stem(&t.to_lowercase()))
        .collect();
    let terms: Vec<Vec<String>> = terms
        .iter()
        .map(|t| t.words.iter().map(|w| s_stem(w)).collect())
        .collect();
    if terms.is_empty() {
        return false;
    }
    // Whether terms[k..] match with terms[k] starting in `from..=to`.
    fn from(tokens: &[String], terms: &[Vec<String>], k: usize, lo: usize, hi: usize) -> bool {
        let Some(words) = terms.get(k) else {
            return true;
        };
        (lo..=hi.min(tokens.len().saturating_sub(words.len()))).any(|i| {
            tokens.len() >= i + words.len()
                && tokens[i..i + words.len()] == words[..]
                && from(
                    tokens,
                    terms,
                    k + 1,
                    i + words.len(),
                    i + words.len() + PHRASE_GAP,
                )
        })
    }
    from(&tokens, &terms, 0, 0, tokens.len())
}

/// The words of a text as the index sees them: every maximal run of letters and digits,
/// lower-case, its identifier words (`parseConfig` → `parseconfig`, `parse`, `config`),
/// and the singular ([`s_stem`]) of each.
pub fn words_in(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        let lower = run.to_lowercase();
        let parts = identifier_words(run);
        if parts.len() > 1 {
            for p in parts {
                out.insert(s_stem(&p));
                out.insert(p);
            }
        }
        out.insert(s_stem(&lower));
        out.insert(lower);
    }
    out
}

#[cfg(test)]
mod quoted_tests {
    use super::*;

    fn shown(text: &str) -> Vec<String> {
        names_in(text).into_iter().map(|(n, _)| n).collect()
    }

    /// Fault from a fresh-user trial: "GraphemeCursor is_boundary" was one name, held
    /// nowhere, so a question whose best answer was `GraphemeCursor.is_boundary` abstained.
    #[test]
    fn fault_a_type_and_its_method_side_by_side_were_one_unknown_name() {
        assert_eq!(
            shown("why does GraphemeCursor is_boundary return a PreContext error"),
            vec!["GraphemeCursor", "is_boundary", "PreContext"]
        );
        assert_eq!(
            shown("parse() of non-utf8 OsString args, or a ToSql FromSql impl"),
            vec!["utf8", "OsString", "ToSql", "FromSql"]
        );
    }

    /// Fault from a fresh-user trial: a byte value and percent-encoded text were names held
    /// nowhere ("Duplicated byte: 0x2b", `filename*=utf-8''na%C3%AFve.txt` named `AFve`),
    /// so questions whose answers ranked first abstained.
    #[test]
    fn fault_a_number_and_a_percent_escape_were_unknown_names() {
        assert_eq!(
            shown("custom alphabet errors with Duplicated byte: 0x2b after 10ms"),
            vec!["Duplicated"]
        );
        assert_eq!(
            shown("decode filename*=utf-8''na%C3%AFve.txt RFC2231 params, strftime %Y"),
            vec!["RFC2231"]
        );
    }

    /// Fault from a fresh-user trial: an error message pasted with its value ("failed to
    /// find time zone `America/New_Yrok` since ..", a typo of the user's) abstained on the
    /// unknown name `New_Yrok`, though the message's file was the best candidate.
    #[test]
    fn fault_a_segment_of_a_path_was_an_unknown_name() {
        assert_eq!(
            shown("failed to find time zone `America/New_Yrok` since there is no TimeZoneDatabase"),
            vec!["America", "TimeZoneDatabase"]
        );
        assert_eq!(shown("does src/NewThing.rs speak HTTP/2"), vec!["HTTP/2"]);
    }

    /// Fault from a fresh-user trial: "how does running tests with -k some_pattern work"
    /// abstained on the unknown name `some_pattern`, the user's own value for the option,
    /// with unittest's `main.py` its best candidate at 27.
    #[test]
    fn fault_an_options_value_was_an_unknown_name() {
        assert_eq!(
            shown("running tests with -k some_pattern or --filter=My_Test, not Run_Me"),
            vec!["Run_Me"]
        );
        assert_eq!(shown("a dash-separated io_uring name"), vec!["io_uring"]);
    }

    #[test]
    fn names_are_shaped_tokens_and_their_runs() {
        assert_eq!(
            shown("Where do we configure the Kubernetes liveness probes for the worker pods?"),
            vec!["Kubernetes"]
        );
        assert_eq!(
            shown(
                "How does the json module validate a document against a JSON Schema? Does asyncio use io_uring or OAuth2 on Linux"
            ),
            vec![
                "JSON",
                "Schema",
                "JSON Schema",
                "io_uring",
                "OAuth2",
                "Linux"
            ]
        );
        // Sentence starts, one letter and slashes are no names; an inner capital is.
        assert_eq!(
            shown("Where is I/O done? Which F/E letters; the gRPC policy"),
            vec!["gRPC"]
        );
        // Acronyms side by side are a protocol and its commands, each a name; a run longer
        // than a name is names side by side.
        assert_eq!(
            shown("where is SMTP AUTH LOGIN done, and the TLS SNI of Basic Multilingual Plane"),
            vec![
                "SMTP",
                "AUTH",
                "LOGIN",
                "TLS",
                "SNI",
                "Basic",
                "Multilingual",
                "Plane",
                "Basic Multilingual Plane"
            ]
        );
        assert_eq!(
            shown(
                "Why BasicInterpolation BasicInterpolation BasicInterpolation BasicInterpolation BasicInterpolation"
            ),
            vec!["BasicInterpolation"]
        );
        // A version after a slash belongs to the name; a path's next part does not.
        assert_eq!(
            shown("how do I enable HTTP/2 server push, or HTTP/1.1. pipelining in TLS/x?"),
            vec!["HTTP/2", "HTTP/1.1", "TLS"]
        );
        assert_eq!(
            names_in("the HTTP/2 client")[0].1,
            vec![Term {
                words: vec!["http".into(), "2".into()]
            }]
        );
    }

    #[test]
    fn proper_nouns_are_capitalized_words_inside_a_sentence() {
        assert_eq!(
            proper_nouns("Where is the Teddy SIMD prefilter? Which Rust types use \"Foo\" or Bar."),
            vec!["Teddy", "Rust", "Bar"]
        );
        assert!(proper_nouns("How does it work").is_empty());
    }

    #[test]
    fn asking_for_tests_is_tests_as_a_noun() {
        for q in [
            "where are the tests for the zero-capacity rendezvous channel",
            "Where are the tests for shlex.split in POSIX mode?",
            "is there a test that covers urljoin with an empty base?",
            "Which tests exercise the retry loop?",
        ] {
            assert!(asks_for_tests(q), "{q}");
        }
        for q in [
            "where does the test framework check __unittest to hide its frames",
            "How does a test run's outcome get recorded and then reported?",
            "Which non-test modules import dis?",
            "what is the contest module",
        ] {
            assert!(!asks_for_tests(q), "{q}");
        }
    }

    #[test]
    fn quoted_spans_take_paths_written_out() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            quoted_spans("where does chrono find the local timezone on Linux (/etc/localtime)?"),
            vec![w(&["etc", "localtime"])]
        );
        assert_eq!(
            quoted_spans("who reads ~/.config/git/ignore?"),
            vec![w(&["config", "git", "ignore"])]
        );
        // A name with a slash is no path, nor is a path of one word.
        assert!(quoted_spans("how does HTTP/2 push work, and I/O in /tmp or ~/.netrc").is_empty());
    }

    /// Fault from a fresh-user trial: "loom model checking tests, e.g. a treiber stack" and
    /// "sax expat reader: what happens when namespace processing is turned on" were
    /// searched as pasted messages (the dot of "e.g.", a topic before a colon), bringing
    /// unrelated files holding a few of their words verbatim.
    #[test]
    fn fault_an_abbreviation_or_a_topic_before_a_question_made_pasted_text() {
        assert!(pasted_spans("loom model checking tests, e.g. a treiber stack").is_empty());
        assert!(
            pasted_spans("sax expat reader: what happens when namespace processing is turned on")
                .is_empty()
        );
        assert!(
            !pasted_spans("thread 'main' panicked at src/main.rs: index out of bounds").is_empty()
        );
    }

    #[test]
    fn pasted_spans_take_the_sentences_of_text_that_asks_nothing() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            pasted_spans(
                "A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on the runtime builder to enable timers."
            ),
            vec![
                w(&[
                    "a", "tokio", "1", "x", "context", "was", "found", "but", "timers", "are",
                    "disabled"
                ]),
                w(&[
                    "call", "enable", "time", "on", "the", "runtime", "builder", "to", "enable",
                    "timers"
                ]),
            ]
        );
        assert_eq!(
            pasted_spans("TOML parse error at line 3, column 1: duplicate key `name`"),
            vec![
                w(&[
                    "toml",
                    "parse",
                    "error",
                    "at",
                    "line",
                    "3",
                    "column",
                    "1",
                    "duplicate",
                    "key",
                    "name"
                ]),
                w(&["toml", "parse", "error", "at", "line", "3", "column", "1"]),
                w(&["duplicate", "key", "name"]),
            ]
        );
        // A question, however it is written, a name alone, and text quoting a message
        // (its quoted spans stand for it) are not pasted text.
        for q in [
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
            "How does the bounded channel make senders wait",
            "Where are the tests for shlex.split in POSIX mode",
            "the bounded channel: senders wait when full?",
            "SSLKEYLOGFILE",
            "shlex.quote usage in the pipes module",
            "ByteSlice::to_str_lossy",
            "NaiveDate::checked_add_months.",
        ] {
            assert_eq!(pasted_spans(q), Vec::<Vec<String>>::new(), "{q}");
        }
    }

    #[test]
    fn quoted_messages_are_blanked_and_quoted_names_kept() {
        assert_eq!(
            without_quoted_messages(
                r#"Custom { kind: AlreadyExists, error: "I/O source already registered with a `Registry`" }"#
            ),
            format!(
                "Custom {{ kind: AlreadyExists, error: \"{}\" }}",
                " ".repeat(47)
            )
        );
        assert_eq!(
            without_quoted_messages("what does 'Foo.bar' do, it's odd"),
            "what does 'Foo.bar' do, it's odd"
        );
    }

    #[test]
    fn quoted_spans_take_quotes_and_exception_messages() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // A pasted traceback line: the part after the message's own colon is filled in at
        // run time, so the part before it is a span of its own.
        assert_eq!(
            quoted_spans("json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 10"),
            vec![
                w(&["expecting", "delimiter", "line", "1", "column", "10"]),
                w(&["expecting", "delimiter"]),
                w(&["line", "1", "column", "10"]),
            ]
        );
        assert_eq!(
            quoted_spans(
                "splitting blows up with ValueError: No closing quotation - where is that raised?"
            ),
            vec![w(&["no", "closing", "quotation"])]
        );
        assert_eq!(
            quoted_spans(
                "I'm getting \"Sample larger than population or is negative\". Which function?"
            ),
            vec![w(&[
                "sample",
                "larger",
                "than",
                "population",
                "or",
                "is",
                "negative"
            ])]
        );
        assert_eq!(
            quoted_spans(
                "fails with 'no CSV file specified'. What argument is it expecting? It's odd"
            ),
            vec![w(&["no", "csv", "file", "specified"])]
        );
        assert_eq!(
            quoted_spans("A debug build panics with: Command app: Option names must differ. Why?"),
            vec![
                w(&["command", "app", "option", "names", "must", "differ"]),
                w(&["command", "app"]),
                w(&["option", "names", "must", "differ"]),
            ]
        );
        // A colon after other words introduces prose, not a message.
        assert_eq!(
            quoted_spans("How is a worker created: who talks to the server process?"),
            Vec::<Vec<String>>::new()
        );
        assert_eq!(
            quoted_spans("serde_json's map, the crate's 'x' flag"),
            Vec::<Vec<String>>::new()
        );
        assert_eq!(
            quoted_expression(&quoted_spans("raises KeyError: missing key name.")),
            Some("\"missing key name\"".into())
        );
        assert_eq!(
            quoted_expression(&[w(&["a", "b", "c", "d"]), w(&["x", "y"])]),
            Some("\"a b c\" OR \"b c d\" OR \"x y\"".into())
        );
    }
}

/// The tokens of a question shaped like identifiers — `snake_case`, `camelCase`,
/// `PascalCase` and `ACRONYMCase` (`URLError`), a digit between letters (`list2cmdline`),
/// `Type::method`, `module.func`, `name()`, or the whole question when it is one word —
/// without surrounding backticks, quotes and punctuation. `context` looks them up as
/// symbol names.
pub fn identifier_tokens(text: &str) -> Vec<String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        // A Rust macro is named as it is invoked (`vec![..]`, `format!`, "the smallvec!
        // macro"), not a word ending a sentence ("it broke!").
        let invoked = |rest: &str| {
            rest.starts_with(['(', '[', '{'])
                || (rest.trim_end_matches('`').is_empty()
                    && (token.starts_with('`')
                        || tokens.get(i + 1).is_some_and(|w| w.starts_with("macro"))))
        };
        let mac = token
            .trim_start_matches('`')
            .split_once('!')
            .filter(|(mac, rest)| {
                !mac.is_empty()
                    && mac.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && invoked(rest)
            });
        // A call names its callee (`json.dumps(obj)` → `json.dumps`); its arguments are
        // values, not names. A subscript names its container (`os.environ['HOME']` →
        // `os.environ`).
        let (callee, called) = match (mac, token.split_once('(')) {
            (Some((mac, _)), _) => (mac, true),
            (None, Some((callee, _))) if callee.chars().any(char::is_alphanumeric) => {
                (callee, true)
            }
            _ => (*token, false),
        };
        let callee = match callee.split_once('[') {
            Some((container, _)) if container.chars().any(char::is_alphanumeric) => container,
            _ => callee,
        };
        let t = callee.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        // A name's possessive is the name: `util::simplify_range's`, `resolve_enclosed's`.
        let t = t
            .strip_suffix("'s")
            .or_else(|| t.strip_suffix("’s"))
            .unwrap_or(t)
            .to_string();
        if t.is_empty() || !t.chars().all(|c| c.is_alphanumeric() || "_.:".contains(c)) {
            continue;
        }
        let chars: Vec<char> = t.chars().collect();
        let shaped = tokens.len() == 1
            || t.contains('_')
            || t.contains("::")
            // `module.func`, not `i.e` or `e.g`.
            || (t.contains('.') && t.split('.').all(|s| s.chars().count() > 1))
            || called
            || token.starts_with('`')
            || chars
                .windows(2)
                .any(|w| w[0].is_lowercase() && w[1].is_uppercase())
            // A digit between letters: `list2cmdline`, `b64encode` (not `sha256`, `ipv6`).
            || digits_between_letters(&chars)
            // An acronym, then a capitalized word: `URLError`, `HTTPConnection`,
            // `JSONDecoder` (no lower-case letter before an upper-case one; `URLs` and
            // `APIs` are plurals, not names).
            || chars.windows(4).any(|w| {
                w[0].is_uppercase()
                    && w[1].is_uppercase()
                    && w[2].is_lowercase()
                    && w[3].is_lowercase()
            });
        if shaped && !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// Whether a name is written as code is, not as prose names things: with an inner
/// underscore (`sre_compile`), a digit between letters (`list2cmdline`), a capital after a
/// lower-case letter (`getLogger`), or in capitals of at least [`CODE_CAPITALS`] letters
/// (`PYTHONASYNCIODEBUG`, `MANPAGER`) — not an acronym (`PRNG`, `JSON`, `QUIC`) or a
/// capitalized word (`Kubernetes`), which name a thing in the user's words, and the code
/// may use other words for it.
pub fn written_as_code(name: &str) -> bool {
    let chars: Vec<char> = name.chars().collect();
    let letters = chars.iter().filter(|c| c.is_alphabetic()).count();
    name.trim_matches('_').contains('_')
        || digits_between_letters(&chars)
        || chars
            .windows(2)
            .any(|w| w[0].is_lowercase() && w[1].is_uppercase())
        || (letters >= CODE_CAPITALS && chars.iter().all(|c| !c.is_lowercase()))
}

/// The fewest capitals a name written in capitals alone has to be code, not an acronym
/// ([`written_as_code`]): acronyms run to five (`HTTPS`, `PMULL`, `ASCII`).
const CODE_CAPITALS: usize = 6;

/// Whether a run of digits stands between two letters in `chars` (`list2cmdline`).
fn digits_between_letters(chars: &[char]) -> bool {
    chars
        .split(|c| !c.is_ascii_digit())
        .scan(0usize, |at, run| {
            let start = *at;
            *at += run.len() + 1;
            Some((start, run.len()))
        })
        .any(|(start, len)| {
            len > 0
                && start > 0
                && chars[start - 1].is_alphabetic()
                && chars.get(start + len).is_some_and(|c| c.is_alphabetic())
        })
}

/// The capitalized words of a question away from a sentence's start (`Teddy` in "where is
/// the Teddy SIMD prefilter implemented"): the one-token [`names_in`] of an initial capital
/// then lower-case letters. Proper nouns, which may name a type of the code.
pub fn proper_nouns(text: &str) -> Vec<String> {
    names_in(text)
        .into_iter()
        .filter(|(name, terms)| {
            let mut chars = name.chars();
            terms.len() == 1
                && name.chars().count() > 2
                && chars.next().is_some_and(char::is_uppercase)
                && chars.all(char::is_lowercase)
        })
        .map(|(name, _)| name)
        .collect()
}

/// The spans of a question that quote text from the code: its [`message_spans`], and each
/// path it writes out (`/etc/localtime`, `~/.netrc`, `./setup.cfg`), text the code holds
/// verbatim as it holds a message.
pub fn quoted_spans(text: &str) -> Vec<Vec<String>> {
    let mut spans = message_spans(text);
    for word in text.split_whitespace() {
        let w = word.trim_matches(|c: char| {
            matches!(
                c,
                '(' | ')' | ',' | ';' | '`' | '?' | '!' | '.' | '"' | '\''
            )
        });
        if w.starts_with('/') || w.starts_with("~/") || w.starts_with("./") {
            spans.push(tokens(w));
        }
    }
    spans.retain(|s| s.len() >= 2);
    spans.dedup();
    spans
}

/// The byte ranges of what stands between quotes in `text` (`"…"`, `'…'`, `“…”`; an
/// apostrophe inside a word, `it's`, opens nothing), the quotes left out.
pub(crate) fn quoted_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let close = match c {
            '"' => Some('"'),
            '“' => Some('”'),
            '\'' if i == 0 || !chars[i - 1].1.is_alphanumeric() => Some('\''),
            _ => None,
        };
        if let Some(close) = close
            && let Some(j) = (i + 1..chars.len()).find(|&j| {
                chars[j].1 == close
                    && (close != '\'' || chars.get(j + 1).is_none_or(|n| !n.1.is_alphanumeric()))
            })
        {
            ranges.push((at + c.len_utf8(), chars[j].0));
            i = j + 1;
            continue;
        }
        i += 1;
    }
    ranges
}

/// `text` with each quoted message blanked out (what stands between quotes when it holds
/// a space: `"I/O source already registered with a `Registry`"`): the names in a message
/// are its words, not what the question asks about; a quoted name (`'Foo.bar'`) stays.
pub fn without_quoted_messages(text: &str) -> String {
    let mut out = text.to_string();
    for (from, to) in quoted_ranges(text) {
        if text[from..to].contains(char::is_whitespace) {
            out.replace_range(from..to, &" ".repeat(to - from));
        }
    }
    out
}

/// What a question quotes: what stands between quotes (`"…"`, `'…'`, `“…”`) and what
/// follows an exception's name and a colon (`ValueError: No closing quotation`) or `with`
/// and a colon (`panics with: Short option names must be unique`) up to the end of the
/// sentence or a dash, and each of that message's colon-separated parts. Each span as its
/// tokens (runs of letters and digits, lower-case, as the `unicode61` tokenizer makes
/// them); spans of fewer than two tokens are left out (one word is no quotation).
pub fn message_spans(text: &str) -> Vec<Vec<String>> {
    let mut spans: Vec<Vec<String>> = quoted_ranges(text)
        .into_iter()
        .map(|(from, to)| tokens(&text[from..to]))
        .collect();
    for (from, to) in introduced_messages(text) {
        let message = &text[from..to];
        spans.push(tokens(message));
        // A message's parts apart too: what follows a colon in it is often filled in at
        // run time (`Expecting ',' delimiter: line 1 column 10`), so the source holds only
        // the part before it.
        if message.contains(": ") {
            spans.extend(message.split(": ").map(tokens));
        }
    }
    spans.retain(|s| s.len() >= 2);
    spans.dedup();
    spans
}

/// The byte ranges of the messages `text` introduces by an exception's name and a colon
/// (`ValueError: No closing quotation`) or `with` and a colon (`panics with: …`), each up
/// to the end of its sentence or a dash ([`message_spans`]).
fn introduced_messages(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    for (at, _) in text.match_indices(": ") {
        let before = text[..at]
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .next()
            .unwrap_or("");
        let name = before.rsplit('.').next().unwrap_or("");
        let introduces_message = name.ends_with("Error")
            || name.ends_with("Exception")
            || name.ends_with("Warning")
            || name.eq_ignore_ascii_case("with");
        if !introduces_message {
            continue;
        }
        let from = at + 2;
        let rest = &text[from..];
        let end = [". ", "? ", "! ", " - ", " -- ", " — "]
            .iter()
            .filter_map(|p| rest.find(p))
            .min()
            .unwrap_or(rest.len());
        let message = rest[..end].trim_end_matches(['.', '?', '!']);
        ranges.push((from, from + message.len()));
    }
    ranges
}

/// `text` with every message it quotes or introduces blanked out ([`message_spans`]):
/// what the question asks, apart from the words of what it shows.
pub fn without_messages(text: &str) -> String {
    let mut out = without_quoted_messages(text);
    for (from, to) in introduced_messages(text) {
        out.replace_range(from..to, &" ".repeat(to - from));
    }
    out
}

/// The spans of text that asks nothing and quotes nothing (`asks_nothing`: no question
/// mark, no question word first; no [`message_spans`]), pasted whole from somewhere, an
/// error or a log line: each of its sentences and their colon-separated parts, as
/// [`quoted_spans`] makes them; none for a question. Unlike quoted text, such text is not
/// known to come from the code.
pub fn pasted_spans(text: &str) -> Vec<Vec<String>> {
    if !asks_nothing(text) || !message_spans(text).is_empty() {
        return Vec::new();
    }
    let mut spans: Vec<Vec<String>> = Vec::new();
    for sentence in text.split(". ") {
        spans.push(tokens(sentence));
        if sentence.contains(": ") {
            spans.extend(sentence.split(": ").map(tokens));
        }
    }
    spans.retain(|s| s.len() >= 2);
    spans.dedup();
    spans
}

/// The tokens of `s` as the `unicode61` tokenizer makes them: runs of letters and digits,
/// lower-case.
pub(crate) fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Words a question starts with: interrogatives, auxiliaries and requests.
const QUESTION_WORDS: &[&str] = &[
    "are", "can", "could", "describe", "did", "do", "does", "explain", "find", "give", "has",
    "have", "how", "i", "is", "list", "should", "show", "tell", "was", "were", "what", "when",
    "where", "which", "who", "why", "will", "would",
];

/// Whether `text` asks nothing and reads as a message: at least four words (between
/// spaces: `ByteSlice::to_str_lossy` is one), no question
/// mark, no [`QUESTION_WORDS`] word first or right after a `: ` ("sax expat reader: what
/// happens when …" asks), and a sentence's end (`. `, a final `.` or `!`; not the dot of
/// `e.g.`, `i.e.`, `etc.`) or a message's separator (`: `) in it. Words without such
/// punctuation (`parse_config error handling retries`) are a search, not pasted text.
fn asks_nothing(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let asks_at = |i: usize| {
        words
            .get(i)
            .is_some_and(|w| QUESTION_WORDS.contains(&bare(w).as_str()))
    };
    let asked_after_colon = words
        .iter()
        .enumerate()
        .any(|(i, w)| w.ends_with(':') && asks_at(i + 1));
    let abbreviation = |w: &str| {
        matches!(
            w.to_lowercase().as_str(),
            "e.g." | "i.e." | "etc." | "vs." | "cf."
        )
    };
    let sentence_end = words
        .iter()
        .enumerate()
        .any(|(i, w)| w.ends_with('.') && i + 1 < words.len() && !abbreviation(w));
    let trimmed = text.trim_end();
    let message = sentence_end
        || text.contains(": ")
        || (trimmed.ends_with('.') && !words.last().is_some_and(|w| abbreviation(w)))
        || trimmed.ends_with('!');
    words.len() >= 4 && message && !text.contains('?') && !asks_at(0) && !asked_after_colon
}

/// The names a question uses, each as the [`Term`]s of its tokens: a token shaped like a
/// name — with a digit and a letter (`OAuth2`), an inner underscore (`io_uring`), an inner
/// capital (`OpenTelemetry`, `gRPC`), two or more capitals and nothing else (`CUDA`), or a
/// capital first letter away from the start of a sentence (`Kubernetes`) — and every run
/// of two to [`NAME_TOKENS`] such tokens without an underscore separated by single spaces
/// (`JSON Schema`) as one name, unless each is an acronym or shaped like code (`SMTP AUTH
/// LOGIN`, `FTP PASV` are a protocol and its commands; `utf8 OsString`, two types: each a
/// name, not one). A name is what the corpus must hold for the question to be about it.
/// Tokens are maximal runs of
/// letters, digits and underscores, with a version written after a slash (`HTTP/2`,
/// `HTTP/1.1`: a protocol's version names another thing than the protocol); one letter is
/// no name, nor a token that starts with a digit (`0x2b`, `10ms`) or follows a `%`
/// (`%C3%AFve`, `%Y`).
pub fn names_in(text: &str) -> Vec<(String, Vec<Term>)> {
    let mut names: Vec<(String, Vec<Term>)> = Vec::new();
    let mut run: Vec<Term> = Vec::new();
    // Whether every token of the run is an acronym or shaped like code (a digit, an inner
    // capital): such a run is names side by side, not one name.
    let mut run_apart = true;
    let mut run_start = 0usize;
    let mut last_end = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = text[i..].chars().next().unwrap_or(' ');
        if !(c.is_alphanumeric() || c == '_') {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        while i < bytes.len() {
            let d = text[i..].chars().next().unwrap_or(' ');
            if !(d.is_alphanumeric() || d == '_') {
                break;
            }
            i += d.len_utf8();
        }
        // A version after a slash is part of the name: `HTTP/2` is not `HTTP`.
        i += version_suffix(&text[i..]);
        let token = &text[start..i];
        let before = text[..start].trim_end();
        let sentence_start = before
            .chars()
            .last()
            .is_none_or(|p| matches!(p, '.' | '?' | '!' | ':' | '"' | '\'' | '(' | '“'));
        let chars: Vec<char> = token.chars().collect();
        let letters = chars.iter().filter(|c| c.is_alphabetic()).count();
        let acronym = letters > 1 && chars.iter().all(|c| !c.is_lowercase());
        // No identifier starts with a digit (`0x2b`, `10ms`, `3D` are values), a token
        // right after `%` is an escape or a format (`na%C3%AFve`, `%Y`), and one right
        // after a slash is a later segment of a path or a value (`America/New_York`,
        // `src/NewThing.rs`), and one after a command-line option is its value
        // (`-k some_pattern`, `--filter=my_test`).
        let literal = chars[0].is_ascii_digit()
            || text[..start].ends_with(['%', '/'])
            || follows_an_option(&text[..start]);
        let shaped = !literal
            && chars.len() > 1
            && letters > 0
            && (chars.iter().any(|c| c.is_ascii_digit())
                || token.trim_matches('_').contains('_')
                || chars
                    .windows(2)
                    .any(|w| w[0].is_lowercase() && w[1].is_uppercase())
                || acronym
                || (chars[0].is_uppercase() && !sentence_start));
        // A token with an inner underscore is code (`is_boundary`), never a word of a longer
        // name: "GraphemeCursor is_boundary" is a type and a method, two names.
        let joins = shaped && !token.trim_matches('_').contains('_');
        let adjacent = !run.is_empty() && &text[last_end..start] == " ";
        if !adjacent || !joins {
            push_run(&mut names, &text[run_start..last_end], &mut run, run_apart);
            run_apart = true;
        }
        if shaped {
            let words: Vec<String> = identifier_words(token);
            if !words.is_empty() {
                let term = Term { words };
                names.push((token.to_string(), vec![term.clone()]));
                if joins {
                    if run.is_empty() {
                        run_start = start;
                    }
                    run.push(term);
                    let code = chars.iter().any(char::is_ascii_digit)
                        || chars
                            .windows(2)
                            .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
                    run_apart &= acronym || code;
                }
            }
        }
        last_end = i;
    }
    push_run(&mut names, &text[run_start..last_end], &mut run, run_apart);
    let mut seen = HashSet::new();
    names.retain(|(n, _)| seen.insert(n.to_lowercase()));
    names
}

/// Whether the text before a token ends in a command-line option, `-k ` or `--filter=`:
/// the token is the option's value, written by the user, not a name of the code.
fn follows_an_option(before: &str) -> bool {
    let option = match before.strip_suffix('=') {
        Some(flag) => flag.rsplit(char::is_whitespace).next().unwrap_or(""),
        None if before.ends_with(' ') => before.split_whitespace().last().unwrap_or(""),
        None => return false,
    };
    let name = option
        .strip_prefix("--")
        .or_else(|| option.strip_prefix('-'))
        .unwrap_or("");
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Whether a question asks for the tests of something: `tests` as a noun, or `test` before
/// what it is of (`for`, `of`, `covering`, `that`, `which`) — "where are the tests for
/// graphlib", "a test that covers it". A test word naming the machinery ("the test
/// framework", "a test run's outcome") asks about that code, not for tests.
pub fn asks_for_tests(query: &str) -> bool {
    let words = tokens(query);
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map(String::as_str);
        w == "tests"
            || (w == "test" && matches!(next, Some("for" | "of" | "covering" | "that" | "which")))
    })
}

/// The most tokens a run of name-shaped tokens has to be one name: a product's or a
/// standard's name is short (`Basic Multilingual Plane`); a longer run is a list of names
/// or a name repeated.
pub const NAME_TOKENS: usize = 4;

/// Adds the run of name-shaped tokens `run` (its text `text`) to `names` when it is one
/// name ([`names_in`]), and empties it.
fn push_run(names: &mut Vec<(String, Vec<Term>)>, text: &str, run: &mut Vec<Term>, apart: bool) {
    if (2..=NAME_TOKENS).contains(&run.len()) && !apart {
        names.push((text.to_string(), std::mem::take(run)));
    }
    run.clear();
}

/// The length in bytes of the version that `rest` (the text after a token) starts with: a
/// slash and digits, dot-separated (`/2`, `/1.1`), or 0.
fn version_suffix(rest: &str) -> usize {
    let Some(after) = rest.strip_prefix('/') else {
        return 0;
    };
    let mut end = 0;
    for part in after.split('.') {
        let digits = part.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        end += usize::from(end > 0) + digits;
        if digits < part.len() {
            break;
        }
    }
    if end == 0 { 0 } else { 1 + end }
}

/// The FTS5 expression matching text that holds `name`, a name of [`names_in`] and its
/// tokens: an identifier of several words (`NoSuchClass`) as their joined form, which every
/// identifier of the index has (`NoSuchClass`, `no_such_class`; prose's "no such class
/// is" is no mention of it), or of [`PREFIX_BYTES`] or more as the start of one (a name
/// cut short in a question: "an acronym like XMLHttp" of `XMLHttpRequest`); another
/// single token (`HTTP/1.1`) as any of its forms ([`Term::expr`]); several tokens as the
/// phrase of their words.
pub fn name_expression(name: &str, tokens: &[Term]) -> String {
    let identifier = name.chars().all(|c| c.is_alphanumeric() || c == '_');
    match tokens {
        [one] if one.words.len() > 1 && identifier && one.joined().len() >= PREFIX_BYTES => {
            format!("{} *", quote(&one.joined()))
        }
        [one] if one.words.len() > 1 && identifier => quote(&one.joined()),
        [one] => one.expr(),
        several => quote(
            &several
                .iter()
                .flat_map(|t| t.words.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

/// The least bytes of an identifier's joined form that [`name_expression`] matches as
/// the start of a longer one: shorter starts (`nosuch`) begin too many words.
const PREFIX_BYTES: usize = 7;

/// An FTS5 expression matching text that holds a piece of one of `spans` (see
/// [`quoted_spans`]): each run of three consecutive tokens as a phrase (the whole span
/// when it has two), ORed. `None` without spans.
pub fn quoted_expression(spans: &[Vec<String>]) -> Option<String> {
    let mut phrases: Vec<String> = Vec::new();
    for span in spans {
        for w in span.windows(span.len().min(3)) {
            let p = quote(&w.join(" "));
            if !phrases.contains(&p) {
                phrases.push(p);
            }
        }
    }
    (!phrases.is_empty()).then(|| phrases.join(" OR "))
}

pub(crate) fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Builds an FTS5 MATCH expression from arbitrary text, or `None` when the text has no
/// searchable characters (the caller answers empty).
pub fn fts_query(text: &str) -> Option<String> {
    query_parts(text).map(|parts| parts.join(" AND "))
}

/// Like [`fts_query`], but a row need hold only one of the tokens (`OR`), and tokens that
/// are only [`STOPWORDS`] or one-character words are left out (ORed, they match nearly
/// every row). `None` when the text has fewer than two tokens (the `AND` query already
/// asked the same) or no token with content.
pub fn fts_query_any(text: &str) -> Option<String> {
    if text.split_whitespace().count() < 2 {
        return None;
    }
    let content: Vec<&str> = text
        .split_whitespace()
        .filter(|t| {
            identifier_words(t)
                .iter()
                .any(|w| w.chars().count() > 1 && !is_stopword(w))
        })
        .collect();
    query_parts(&content.join(" ")).map(|parts| parts.join(" OR "))
}

/// One quoted FTS5 expression per distinct searchable token of `text` (a token repeated
/// is asked once: FTS5's cost grew with the square of the repeats, and `regex ` × 400 took
/// 10 s). A path token (`regex::escape`, `Foo->bar`) may also match its last segment: the
/// map holds a crate-level function as `escape`, not under its crate's name.
fn query_parts(text: &str) -> Option<Vec<String>> {
    let mut parts: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for token in text.split_whitespace() {
        let words = identifier_words(token);
        if words.is_empty() {
            continue;
        }
        let mut forms = if words.len() == 1 {
            vec![quote(&words[0])]
        } else {
            vec![quote(&words.concat()), quote(&words.join(" "))]
        };
        if let Some(last) = token
            .rsplit([':', '>'])
            .next()
            .filter(|_| token.contains("::") || token.contains("->"))
        {
            let last = identifier_words(last);
            if !last.is_empty() && last.len() < words.len() {
                forms.push(quote(&last.join(" ")));
            }
        }
        let part = if forms.len() == 1 {
            forms.remove(0)
        } else {
            format!("({})", forms.join(" OR "))
        };
        if seen.insert(part.to_lowercase()) {
            parts.push(part);
            if parts.len() == MAX_QUERY_TERMS {
                break;
            }
        }
    }
    (!parts.is_empty()).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_written_as_code_are_not_acronyms_or_capitalized_words() {
        let names = [
            ("PYTHONASYNCIODEBUG", true),
            ("MANPAGER", true),
            ("sre_compile", true),
            ("SA_RESTART", true),
            ("list2cmdline", true),
            ("TlsByteVecU16", true),
            ("getLogger", true),
            ("PRNG", false),
            ("HTTPS", false),
            ("JSON", false),
            ("Kubernetes", false),
            ("sha256", false),
            ("_private", false),
        ];
        for (name, code) in names {
            assert_eq!(written_as_code(name), code, "{name}");
        }
    }

    #[test]
    fn a_long_query_is_read_up_to_its_bounds_and_the_answer_says_so() {
        let words: Vec<String> = (0..200).map(|i| format!("term{i}")).collect();
        let text = words.join(" ");
        let (kept, notes) = bounded(&text);
        assert_eq!(kept, text);
        assert_eq!(
            notes,
            ["the query has 200 distinct terms: its first 64 were used"]
        );
        let terms = content_terms(&text);
        assert_eq!(terms.len(), MAX_QUERY_TERMS);
        assert_eq!(terms[63].joined(), "term63");
        let any = fts_query_any(&text).unwrap();
        assert_eq!(any.matches(" OR ").count(), MAX_QUERY_TERMS - 1);
        // Cut at a character boundary: `é` is two bytes and straddles the limit.
        let long = format!("{}é tail", "a".repeat(MAX_QUERY_BYTES - 1));
        let (kept, notes) = bounded(&long);
        assert_eq!(kept.len(), MAX_QUERY_BYTES - 1);
        assert_eq!(
            notes,
            [format!(
                "the query is {} bytes: its first {MAX_QUERY_BYTES} were read",
                long.len()
            )]
        );
        assert_eq!(bounded("short question"), ("short question", Vec::new()));
    }

    #[test]
    fn fts_query_any_ors_the_content_tokens_only() {
        assert_eq!(
            fts_query_any("how does get_matches parse arguments").as_deref(),
            Some(r#"("getmatches" OR "get matches") OR "parse" OR "arguments""#)
        );
        assert_eq!(fts_query_any("a AND"), None);
        assert_eq!(fts_query_any("refund"), None);
    }

    #[test]
    fn b18_queries_are_always_valid_fts5() {
        assert_eq!(
            fts_query("multi-agent").as_deref(),
            Some(r#"("multiagent" OR "multi agent")"#)
        );
        assert_eq!(
            fts_query("38.101").as_deref(),
            Some(r#"("38101" OR "38 101")"#)
        );
        assert_eq!(
            fts_query("say \"hi\"").as_deref(),
            Some(r#""say" AND "hi""#)
        );
        assert_eq!(fts_query("  ").as_deref(), None);
        assert_eq!(fts_query("*").as_deref(), None);
    }

    /// Fault (trial): a word repeated N times was N ANDed phrases, and FTS5's cost grew with
    /// the square of N (`regex ` × 400: 10 s; × 5,000 ran for minutes, and over MCP it held
    /// up every other call). A token is asked once, whatever its letter case.
    #[test]
    fn fault_a_repeated_word_made_a_search_take_quadratic_time() {
        let repeated = "regex ".repeat(5000);
        assert_eq!(fts_query(&repeated).as_deref(), Some(r#""regex""#));
        assert_eq!(
            fts_query("Regex regex REGEX size").as_deref(),
            Some(r#""regex" AND "size""#)
        );
        assert_eq!(fts_query_any(&repeated).as_deref(), Some(r#""regex""#));
    }

    /// Fault (trial): `regex::escape` found nothing: the map holds the crate-level function
    /// as `escape`, and the query asked for the phrase "regex escape" only.
    #[test]
    fn fault_a_rust_path_found_nothing_for_a_crate_level_item() {
        assert_eq!(
            fts_query("regex::escape").as_deref(),
            Some(r#"("regexescape" OR "regex escape" OR "escape")"#)
        );
        assert_eq!(
            fts_query("Foo->bar_baz").as_deref(),
            Some(r#"("foobarbaz" OR "foo bar baz" OR "bar baz")"#)
        );
    }

    #[test]
    fn near_phrase_quotes_every_term_and_scales_its_distance() {
        assert_eq!(
            near_phrase(&content_terms("parse a URL"), &["signature", "doc"]).as_deref(),
            Some(r#"{signature doc} : NEAR("parse" "url", 3)"#)
        );
        assert_eq!(
            near_phrase(
                &content_terms("where is parse_config's \"NEAR\" (x) used?"),
                &[]
            )
            .as_deref(),
            Some(r#"NEAR("parse config" "near" "used", 7)"#)
        );
        assert_eq!(near_phrase(&content_terms("parse"), &["doc"]), None);
        assert_eq!(
            near_phrase(
                &content_terms("alpha beta gamma delta epsilon zeta eta theta iota"),
                &[]
            ),
            None
        );
    }

    #[test]
    fn holds_in_order_wants_the_question_s_order_and_small_gaps() {
        let terms = content_terms("open a socket");
        assert!(holds_in_order("Open a socket to the host.", &terms));
        assert!(holds_in_order("opens the new sockets", &terms));
        assert!(!holds_in_order("def socket_open_3():", &terms));
        assert!(!holds_in_order("open the file, then a new socket", &terms));
        assert!(holds_in_order(
            "Reads parse_config, then the URL",
            &content_terms("parse_config URL")
        ));
        assert!(!holds_in_order("anything", &[]));
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn content_terms_drop_function_words_and_keep_identifiers() {
        let terms: Vec<String> =
            content_terms("Where are write transactions begun? parse_config's -band \"x\"")
                .iter()
                .map(Term::expr)
                .collect();
        assert_eq!(
            terms,
            [
                r#"("write" OR "writes")"#,
                r#"("transactions" OR "transaction")"#,
                r#"("begun" OR "beguns")"#,
                r#"("parseconfig" OR "parse config")"#,
                r#"("band" OR "bands")"#
            ]
        );
        assert_eq!(content_terms("what is this? a"), Vec::<Term>::new());
        assert_eq!(
            any_of(&content_terms("RotatingFileHandler.doRollover foo_x_bar")).as_deref(),
            Some(
                r#"("rotatingfilehandler" OR "rotating file handler") OR ("rollover" OR "rollovers") OR ("foo" OR "foos") OR ("bar" OR "bars")"#
            )
        );
        assert_eq!(any_of(&content_terms("how")), None);
        assert_eq!(
            any_of(&content_terms("multi-agent 38.101")).as_deref(),
            Some(r#"("multiagent" OR "multi agent") OR ("38101" OR "38 101")"#)
        );
    }

    #[test]
    fn s_stemmer_makes_plurals_singular() {
        let stems: Vec<String> = [
            "queries",
            "series",
            "files",
            "indexes",
            "status",
            "class",
            "bus",
            "transactions",
            "goes",
        ]
        .iter()
        .map(|w| s_stem(w))
        .collect();
        assert_eq!(
            stems,
            [
                "query",
                "sery",
                "file",
                "indexe",
                "status",
                "class",
                "bus",
                "transaction",
                "goe"
            ]
        );
        assert_eq!(
            content_terms("queries")[0].expr(),
            r#"("queries" OR "query")"#
        );
    }

    #[test]
    fn british_and_american_spellings_ask_for_each_other() {
        let spelled: Vec<(&str, Option<String>)> = [
            "colour",
            "colours",
            "behavior",
            "serialise",
            "initialization",
            "analyse",
            "catalogue",
            "size",
            "hour",
            "parse",
        ]
        .iter()
        .map(|w| (*w, other_spelling(w)))
        .collect();
        let want: Vec<(&str, Option<&str>)> = vec![
            ("colour", Some("color")),
            ("colours", Some("colors")),
            ("behavior", Some("behaviour")),
            ("serialise", Some("serialize")),
            ("initialization", Some("initialisation")),
            ("analyse", Some("analyze")),
            ("catalogue", Some("catalog")),
            ("size", None),
            ("hour", None),
            ("parse", None),
        ];
        assert_eq!(
            spelled,
            want.into_iter()
                .map(|(w, s)| (w, s.map(String::from)))
                .collect::<Vec<_>>()
        );
        // Through the singular and the base forms too: "coloured" asks for `color`.
        assert_eq!(base_forms("coloured"), ["colour", "coloure", "color"]);
        assert_eq!(
            content_terms("colours")[0].expr(),
            r#"("colours" OR "colour" OR "colors" OR "color")"#
        );
    }

    #[test]
    fn inflections_are_asked_in_their_base_forms_too() {
        let bases: Vec<(&str, Vec<String>)> = [
            "rendered",
            "cached",
            "formatted",
            "parsing",
            "mapping",
            "called",
            "passed",
            "embedded",
            "string",
            "during",
            "speed",
            "based",
            "Parsed",
        ]
        .iter()
        .map(|w| (*w, base_forms(w)))
        .collect();
        let want: Vec<(&str, Vec<&str>)> = vec![
            ("rendered", vec!["render", "rendere"]),
            ("cached", vec!["cach", "cache"]),
            ("formatted", vec!["format"]),
            ("parsing", vec!["pars", "parse"]),
            ("mapping", vec!["map"]),
            ("called", vec!["call", "calle"]),
            ("passed", vec!["pass", "passe"]),
            ("embedded", vec!["embed"]),
            ("string", vec![]),
            ("during", vec![]),
            ("speed", vec![]),
            ("based", vec![]),
            ("Parsed", vec![]),
        ];
        assert_eq!(
            bases,
            want.into_iter()
                .map(|(w, b)| (w, b.into_iter().map(String::from).collect()))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            content_terms("rendered")[0].expr(),
            r#"("rendered" OR "render" OR "rendere" OR "rendereds")"#
        );
        let words = words_in("fn render(&mut self)");
        assert!(content_terms("rendered")[0].found_in(&words));
        assert!(!content_terms("renders")[0].found_in(&words_in("fn rend()")));
    }

    /// Fault found by a fresh-user trial: plurals were folded one way only, so a question
    /// in the singular ("transaction") never retrieved a text that has only the plural.
    #[test]
    fn fault_a_singular_question_word_never_retrieved_its_plural() {
        let plurals: Vec<Option<String>> = ["transaction", "query", "day", "index", "files"]
            .iter()
            .map(|w| plural(w))
            .collect();
        assert_eq!(
            plurals,
            [
                Some("transactions".to_string()),
                Some("queries".to_string()),
                Some("days".to_string()),
                None,
                None
            ]
        );
        assert_eq!(
            content_terms("transaction")[0].expr(),
            r#"("transaction" OR "transactions")"#
        );
    }

    /// Fault from a fresh-user trial: "where is the smallvec! macro defined" named nothing
    /// (a lower-case word is a name only when written as code), so memchr's macros came
    /// first.
    #[test]
    fn fault_a_macro_named_as_invoked_was_no_name() {
        assert_eq!(
            identifier_tokens("where is the smallvec! macro defined, and vec![1] or `format!`"),
            ["smallvec", "vec", "format"]
        );
        assert_eq!(
            identifier_tokens("the build broke! why does the parser fail"),
            Vec::<String>::new()
        );
    }

    /// Fault from a fresh-user trial: "os.environ['X']" named nothing, so the question
    /// about setting an environment variable missed `os.py`.
    #[test]
    fn fault_a_subscript_hid_the_name_it_subscripts() {
        assert_eq!(
            identifier_tokens("why does os.environ['X'] = '1' not reach the child"),
            ["os.environ"]
        );
    }

    #[test]
    fn identifier_tokens_are_the_code_shaped_ones() {
        assert_eq!(
            identifier_tokens(
                "why does `Store::write` call try_write() and parseConfig in store.rs, not store."
            ),
            ["Store::write", "try_write", "parseConfig", "store.rs"]
        );
        assert_eq!(identifier_tokens("namedtuple"), ["namedtuple"]);
        // A call names its callee, whatever its arguments.
        assert_eq!(
            identifier_tokens(
                "does dataclasses.field(default_factory=...) or json.dumps(obj) (`Store::write`)"
            ),
            ["dataclasses.field", "json.dumps", "Store::write"]
        );
        assert_eq!(
            identifier_tokens("a module, i.e. one file (e.g. os.path)"),
            ["os.path"]
        );
        assert_eq!(
            identifier_tokens("where is the cache"),
            Vec::<String>::new()
        );
        assert_eq!(
            identifier_tokens("if I change util::simplify_range's panic, who calls it"),
            ["util::simplify_range"]
        );
        // A bare word's possessive is the word: a crate (`serde_json`, whose `mod
        // serde_json;` declarations a bare name does not name) or a definition.
        assert_eq!(
            identifier_tokens("what does serde_json's preserve_order feature change"),
            ["serde_json", "preserve_order"]
        );
        assert_eq!(
            identifier_tokens("if I change resolve_enclosed's parameters"),
            ["resolve_enclosed"]
        );
    }

    /// Fault from a fresh-user trial: "list2cmdline backslash and double quote escaping
    /// rules" served `ast.py` first and `subprocess.list2cmdline` tenth: a name with a digit
    /// between letters was a word, not a name to look up.
    #[test]
    fn fault_a_digit_between_letters_was_no_identifier() {
        assert_eq!(
            identifier_tokens("list2cmdline escaping, b64encode of sha256 over ipv6 and HTTP2"),
            ["list2cmdline", "b64encode"]
        );
    }

    #[test]
    fn terms_are_found_by_joined_form_or_all_words() {
        let words = words_in("Opens `parseConfig` and the HTTP server.");
        assert!(
            ["parseconfig", "parse", "config", "http", "opens"]
                .iter()
                .all(|w| words.contains(*w))
        );
        // A call's arguments are terms of their own: `json dumps obj` is no phrase.
        let joined =
            |text: &str| -> Vec<String> { content_terms(text).iter().map(Term::joined).collect() };
        assert_eq!(
            joined("json.dumps(obj) field(default_factory=list)"),
            ["jsondumps", "obj", "field", "defaultfactory", "list"]
        );
        let t = &content_terms("parse_config")[0];
        assert!(t.found_in(&words));
        assert!(t.found_in(&words_in("config, then parse")));
        assert!(!t.found_in(&words_in("parse only")));
    }
}

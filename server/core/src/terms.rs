//! Identifier-aware search terms: `parseConfig`, `parse_config` and `ParseConfig` all
//! become the words `parse config` (plus the joined form `parseconfig`), so full-text
//! search finds one spelling from another.

/// Whether `text` is one identifier as most languages spell one: a letter or `_`, then
/// letters, digits and `_` (`headerregistry`, `_MAXLINE`; not `utf-8`, `1.2` or empty).
pub fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Splits an identifier (or any token) into lower-case words at non-alphanumerics and
/// case changes: `parseHTTPConfig` → `parse`, `http`, `config`; `grammar::fa` →
/// `grammar`, `fa`.
pub fn identifier_words(token: &str) -> Vec<String> {
    if token.is_ascii() {
        return ascii_identifier_words(token.as_bytes());
    }
    char_identifier_words(token)
}

/// [`identifier_words`] of any token, char by char.
fn char_identifier_words(token: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = token.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// [`identifier_words`] of an ASCII token, byte by byte (the same rules without decoding
/// chars or case-mapping tables: most of what context's coverage and the scan's symbol
/// terms split is ASCII).
fn ascii_identifier_words(bytes: &[u8]) -> Vec<String> {
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    let word = |from: usize, to: usize| -> String {
        bytes[from..to]
            .iter()
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect()
    };
    for (i, &c) in bytes.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if let Some(from) = start.take() {
                words.push(word(from, i));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| bytes[j]);
        let next = bytes.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        match start {
            Some(from) if boundary => {
                words.push(word(from, i));
                start = Some(i);
            }
            None => start = Some(i),
            Some(_) => {}
        }
    }
    if let Some(from) = start {
        words.push(word(from, bytes.len()));
    }
    words
}

/// The indexed terms of a symbol: the words of its qualified name, then the joined
/// lower-case form of each identifier (`Store.open_db` → `store open db store opendb`).
pub fn symbol_terms(qualified_name: &str) -> String {
    let mut out: Vec<String> = identifier_words(qualified_name);
    for part in qualified_name.split(['.', ':']) {
        let words = identifier_words(part);
        if words.len() > 1 {
            out.push(words.concat());
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identifier_starts_with_a_letter_or_underscore() {
        assert!(is_identifier("headerregistry"));
        assert!(is_identifier("_MAXLINE2"));
        assert!(is_identifier("naïve"));
        assert!(!is_identifier("utf-8"));
        assert!(!is_identifier("2to3"));
        assert!(!is_identifier(""));
    }

    #[test]
    fn identifier_words_split_at_case_and_separators() {
        assert_eq!(identifier_words("parseConfig"), ["parse", "config"]);
        assert_eq!(identifier_words("parse_config"), ["parse", "config"]);
        assert_eq!(identifier_words("ParseConfig"), ["parse", "config"]);
        assert_eq!(
            identifier_words("parseHTTPConfig"),
            ["parse", "http", "config"]
        );
        assert_eq!(identifier_words("grammar::fa"), ["grammar", "fa"]);
        assert_eq!(identifier_words("-band"), ["band"]);
        assert_eq!(identifier_words("--"), Vec::<String>::new());
    }

    /// The ASCII path splits as the char path does: every token of three characters
    /// drawn from letters of both cases, digits and separators, and real identifiers.
    #[test]
    fn the_ascii_path_splits_as_the_char_path() {
        let alphabet = ['a', 'B', 'c', 'D', '1', '_', ':', '.', ' ', 'x', 'Y'];
        let mut tokens: Vec<String> = Vec::new();
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    tokens.push([a, b, c].iter().collect());
                }
            }
        }
        tokens.extend(
            [
                "parseHTTPConfig",
                "XMLHttpRequest2Go",
                "__init__",
                "HTTP2Server",
                "a1B2c3",
                "ABCdef",
                "_PyUnicode_AsUTF8String",
            ]
            .map(String::from),
        );
        for t in &tokens {
            assert_eq!(
                ascii_identifier_words(t.as_bytes()),
                char_identifier_words(t),
                "{t:?}"
            );
        }
    }

    #[test]
    fn symbol_terms_hold_words_and_joined_forms() {
        assert_eq!(symbol_terms("Store.open_db"), "store open db opendb");
        assert_eq!(
            symbol_terms("BaseEventLoop.run_until_complete"),
            "base event loop run until complete baseeventloop rununtilcomplete"
        );
    }
}

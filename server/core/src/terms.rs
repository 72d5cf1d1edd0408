//! Identifier-aware search terms: `parseConfig`, `parse_config` and `ParseConfig` all
//! become the words `parse config` (plus the joined form `parseconfig`), so full-text
//! search finds one spelling from another.

/// Splits an identifier (or any token) into lower-case words at non-alphanumerics and
/// case changes: `parseHTTPConfig` → `parse`, `http`, `config`; `grammar::fa` →
/// `grammar`, `fa`.
pub fn identifier_words(token: &str) -> Vec<String> {
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

    #[test]
    fn symbol_terms_hold_words_and_joined_forms() {
        assert_eq!(symbol_terms("Store.open_db"), "store open db opendb");
        assert_eq!(
            symbol_terms("BaseEventLoop.run_until_complete"),
            "base event loop run until complete baseeventloop rununtilcomplete"
        );
    }
}

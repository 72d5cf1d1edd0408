//! Safe full-text queries: any user text becomes a valid FTS5 query (case B18).
//!
//! Each whitespace-separated token becomes a quoted phrase with inner `"` doubled, so
//! `-`, `:`, `.`, `*`, `(`, `NEAR` and friends are literal; tokens are ANDed implicitly.
//! Identifiers are expanded so `parseConfig`, `parse_config` and `ParseConfig` find each
//! other: a token with inner case changes or underscores matches either its joined form
//! (`parseconfig`) or its parts as a phrase (`"parse config"`).

pub use loci_core::terms::identifier_words;

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Builds an FTS5 MATCH expression from arbitrary text, or `None` when the text has no
/// searchable characters (the caller answers empty).
pub fn fts_query(text: &str) -> Option<String> {
    let mut parts = Vec::new();
    for token in text.split_whitespace() {
        let words = identifier_words(token);
        if words.is_empty() {
            continue;
        }
        if words.len() == 1 {
            parts.push(quote(&words[0]));
        } else {
            let joined: String = words.concat();
            parts.push(format!(
                "({} OR {})",
                quote(&joined),
                quote(&words.join(" "))
            ));
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join(" AND "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

//! Values a question lists as examples — "spellings such as y/yes/on/1", "type names like
//! 'rust' or 'py'", "the ncalls/tottime/cumtime report" — which the code holds together,
//! in one table, match or format string. The chunks holding every value of a list are a
//! ranked list of their own in fusion (`retrieve`): the words alone are common, together
//! they are the table.

use super::search::{message_spans, pasted_spans, quote, quoted_ranges, tokens};

/// The lists of values in `query`, each as its distinct tokens (lowercase, as the code-text
/// indexes hold them):
/// - a word of three or more parts joined by `/`, at least two of them words (a letter and
///   at least two characters: `HTTP/2`, `I/O` and `10/8` list nothing), none holding a dot
///   (`util/rng.rs` is a path) and the word not starting with `/`, `~` or `.`
///   (`/etc/hosts`); two parts are prose's alternatives, `reader/writer`, `key/value`,
///   which code need not hold together (they lowered five trial sets' recall or MRR);
/// - the words quoted one by one, when at least two of them are words and the question
///   quotes or pastes no message: a message's quoted values are filled in at run time,
///   and one letter, `'m'` or `'c'`, is in every chunk.
pub(crate) fn listed_values(query: &str) -> Vec<Vec<String>> {
    let is_word = |p: &str| p.chars().count() >= 2 && p.chars().any(char::is_alphabetic);
    let mut lists: Vec<Vec<String>> = Vec::new();
    let push = |list: Vec<String>, lists: &mut Vec<Vec<String>>| {
        let mut distinct: Vec<String> = Vec::new();
        for t in list {
            if !distinct.contains(&t) {
                distinct.push(t);
            }
        }
        if distinct.len() >= 2 && !lists.contains(&distinct) {
            lists.push(distinct);
        }
    };
    for word in query.split_whitespace() {
        if word
            .trim_start_matches(['(', '[', '"', '\'', '`'])
            .starts_with(['/', '~', '.'])
        {
            continue;
        }
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        let parts: Vec<&str> = word.split('/').collect();
        if parts.len() >= 3
            && parts.iter().all(|p| !p.is_empty() && !p.contains('.'))
            && parts.iter().filter(|p| is_word(p)).count() >= 2
        {
            push(tokens(word), &mut lists);
        }
    }
    let quotes_a_message =
        message_spans(query).iter().any(|s| s.len() >= 2) || !pasted_spans(query).is_empty();
    if !quotes_a_message {
        let quoted: Vec<String> = quoted_ranges(query)
            .into_iter()
            .map(|(from, to)| tokens(&query[from..to]))
            .filter(|t| t.len() == 1)
            .flatten()
            .collect();
        if quoted.iter().filter(|t| is_word(t)).count() >= 2 {
            push(quoted, &mut lists);
        }
    }
    lists
}

/// The FTS5 expression matching a row that holds every value of one of `lists`; `None`
/// when there is no list.
pub(crate) fn listed_expression(lists: &[Vec<String>]) -> Option<String> {
    let groups: Vec<String> = lists
        .iter()
        .map(|list| {
            let all: Vec<String> = list.iter().map(|t| quote(t)).collect();
            format!("({})", all.join(" AND "))
        })
        .collect();
    (!groups.is_empty()).then(|| groups.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(lists: &[&[&str]]) -> Vec<Vec<String>> {
        lists
            .iter()
            .map(|l| l.iter().map(|t| t.to_string()).collect())
            .collect()
    }

    #[test]
    fn slash_joined_words_are_a_list_and_versions_paths_and_numbers_are_not() {
        assert_eq!(
            listed_values("the spellings for boolean values (y/yes/on/1 and friends)"),
            owned(&[&["y", "yes", "on", "1"]])
        );
        assert_eq!(
            listed_values("the sorted ncalls/tottime/cumtime report, hue/saturation/value"),
            owned(&[
                &["ncalls", "tottime", "cumtime"],
                &["hue", "saturation", "value"]
            ])
        );
        assert_eq!(
            listed_values(
                "HTTP/2 over I/O, 10/8 and 172.16/12, jiff/src/tz/ambiguous.rs, (/etc/hosts/x), key/value"
            ),
            owned(&[])
        );
    }

    #[test]
    fn words_quoted_one_by_one_are_a_list_unless_a_message_is_quoted() {
        assert_eq!(
            listed_values("maps file type names like 'rust' or 'py' to globs"),
            owned(&[&["rust", "py"]])
        );
        assert_eq!(listed_values("what does 'rust' mean here"), owned(&[]));
        assert_eq!(listed_values("a short name like 'm' or 'c'"), owned(&[]));
        assert_eq!(
            listed_values(
                "panics with: Short option names must be unique, but '-v' is in use by both 'verbose' and 'version'."
            ),
            owned(&[])
        );
    }

    #[test]
    fn a_row_must_hold_every_value_of_one_list() {
        assert_eq!(
            listed_expression(&[
                vec!["y".into(), "yes".into()],
                vec!["rust".into(), "py".into()]
            ]),
            Some(r#"("y" AND "yes") OR ("rust" AND "py")"#.to_string())
        );
        assert_eq!(listed_expression(&[]), None);
    }
}

//! Words of messages: counted nouns in the singular or the plural, for every door.

/// `n` and `noun`, the noun's last word in the plural unless `n` is 1: `count(1, "commit")`
/// is `1 commit`, `count(2, "open contradiction")` is `2 open contradictions` (`-ies` after
/// a consonant and `y`, `-es` after `s`, `x`, `z`, `ch`, `sh`, else `-s`: the nouns loci's
/// messages count are regular). Every count-noun message goes through it, so none
/// prints `1 commits`.
pub fn count(n: impl Into<i128>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    let plural = match noun.strip_suffix('y') {
        Some(base) if !base.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{base}ies"),
        _ if noun.ends_with(['s', 'x', 'z']) || noun.ends_with("ch") || noun.ends_with("sh") => {
            format!("{noun}es")
        }
        _ => format!("{noun}s"),
    };
    format!("{n} {plural}")
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn fault_a_count_of_one_was_in_the_plural() {
        assert_eq!(
            [
                count(1u64, "commit"),
                count(0u64, "commit"),
                count(2u64, "open contradiction"),
                count(3u64, "entry"),
                count(2u64, "day"),
                count(2u64, "match"),
                count(-1i64, "line"),
            ],
            [
                "1 commit",
                "0 commits",
                "2 open contradictions",
                "3 entries",
                "2 days",
                "2 matches",
                "-1 lines"
            ]
        );
    }
}

//! Reference numbers: the numbers that name a document rather than say something in it,
//! such as a ruling's docket number (`（2016）津02行初431号`, `第77号`) or a case's
//! `No. 12-345`. Two openings of one legal formula that differ only in such a number are
//! different documents, though their texts are near duplicates; two copies of one ruling
//! keep its number. So each reference number weighs as a quarter of the document's
//! features ([`add_features`]): copies that share it grow more alike, and texts that differ
//! in it fall below any usual threshold, and are not contained in one another. Dates,
//! counts and amounts are not reference numbers: changing them is an edit.

use neardup_core::hash::{hash_bytes, hash_u64s};

use crate::features::Features;

/// A reference number weighs as this fraction (one in four) of the document's other
/// features: texts that differ only in it then have a Jaccard similarity of at most
/// `1 / (1 + 2/4)`, 0.67, and a containment of at most 0.8.
const REFERENCE_SHARE: usize = 4;

/// Calls `f` with each reference number of `normalized` (normalised text: half-width
/// digits, lower case), as its digits without leading zeros: a run of digits right before
/// `号` (not after `月`, where `号` is a day of the month), or after `no` or `no.` (a
/// word of its own).
pub(crate) fn for_each_reference<'a>(normalized: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = normalized.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        let (before, after) = (&normalized[..start], &normalized[at..]);
        let digits = normalized[start..at].trim_start_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        let chinese = after.starts_with('号') && !before.ends_with('月');
        if chinese || after_number_word(before) {
            f(digits);
        }
    }
}

/// Whether `before` (the text before a number) ends with the word `no` or `no.`, and at
/// most one space.
fn after_number_word(before: &str) -> bool {
    let before = before.strip_suffix(' ').unwrap_or(before);
    let before = before.strip_suffix('.').unwrap_or(before);
    let Some(word) = before.strip_suffix("no") else { return false };
    !word.chars().next_back().is_some_and(char::is_alphanumeric)
}

/// Adds the features of `normalized`'s reference numbers to `features`, under `seed`: a
/// quarter as many as it has (at least one each), shared out among its distinct
/// reference numbers. A document without features gets none.
pub(crate) fn add_features(normalized: &str, seed: u64, features: &mut Features) {
    for_each_feature(normalized, seed, features.len(), |hash, _, _| features.push_distinct(hash));
}

/// Calls `f` with each reference feature of `normalized` for a document of `features`
/// features: its hash, the reference number and its place among that number's features.
pub(crate) fn for_each_feature(
    normalized: &str,
    seed: u64,
    features: usize,
    mut f: impl FnMut(u64, &str, usize),
) {
    if features == 0 {
        return;
    }
    let mut numbers: Vec<&str> = Vec::new();
    for_each_reference(normalized, |n| numbers.push(n));
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.is_empty() {
        return;
    }
    let each = (features / REFERENCE_SHARE / numbers.len()).max(1);
    for number in numbers {
        let key = hash_bytes(number.as_bytes(), seed ^ 0x7265_6665_7265_6e63);
        for i in 0..each {
            f(hash_u64s(&[key, i as u64], seed), number, i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn references(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_reference(text, |n| out.push(n.to_string()));
        out
    }

    #[test]
    fn docket_and_case_numbers_are_references_dates_and_counts_are_not() {
        assert_eq!(references("不服天津市第一中级人民法院(2016)津02行初431号行政裁定"), ["431"]);
        assert_eq!(references("津东政补决字[2016]第066号《房屋征收补偿决定》"), ["66"]);
        assert_eq!(references("case no. 12 and no 7; piano 3, nothing 4"), ["12", "7"]);
        assert!(references("于2017年2月3日向本院申请，5月1号开庭，共计2000元。").is_empty());
        assert!(references("no digits here, no.").is_empty());
    }

    #[test]
    fn a_reference_weighs_a_quarter_of_the_features() {
        let mut seen = Vec::new();
        for_each_feature("第77号与第8号", 7, 80, |h, n, i| seen.push((h, n.to_string(), i)));
        assert_eq!(seen.len(), 20);
        assert_eq!(seen.iter().filter(|s| s.1 == "77").count(), 10);
        let mut other = Vec::new();
        for_each_feature("第83号与第8号", 7, 80, |h, _, _| other.push(h));
        let shared = seen.iter().filter(|s| other.contains(&s.0)).count();
        assert_eq!(shared, 10, "the number both have gives the same features");
        let mut none = 0;
        for_each_feature("第77号", 7, 0, |_, _, _| none += 1);
        assert_eq!(none, 0);
    }
}

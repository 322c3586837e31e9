//! References: what names a document rather than says something in it. A ruling's docket
//! number (`（2016）津02行初431号`, `第77号`) or a case's `No. 12-345`, and the parties a
//! ruling names after their role (`原告张永敬`, `被上诉人天津市河北区人民政府`). Two openings
//! of one legal formula that differ only in such a number or in a party are different
//! documents, though their texts are near duplicates; two copies of one ruling keep its
//! number and its parties. So each distinct reference weighs as a quarter of the
//! document's features ([`add_features`]): copies that share it grow more alike, and texts
//! that differ in one fall below any usual threshold, and are not contained in one another.
//! Dates, counts and amounts are not references: changing them is an edit.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use neardup_core::hash::{hash_bytes, hash_u64s};

use crate::features::Features;

/// A reference weighs as this fraction (one in four) of the document's other features:
/// texts that differ only in it then have a Jaccard similarity of at most `1 / (1 + 2/4)`,
/// 0.67, and a containment of at most 0.8.
const REFERENCE_SHARE: usize = 4;

/// At most this many distinct references of a document weigh (the first in text order):
/// a list of rulings is not made of their numbers alone.
const MAX_REFERENCES: usize = 8;

/// The roles a ruling names its parties by, longest first where one ends another.
const ROLES: &[&str] = &[
    "再审申请人",
    "被再审申请人",
    "复议申请人",
    "申请执行人",
    "被申请执行人",
    "赔偿请求人",
    "原审原告",
    "原审被告",
    "原审第三人",
    "被上诉人",
    "上诉人",
    "被申请人",
    "申请人",
    "被执行人",
    "第三人",
    "起诉人",
    "原告",
    "被告",
];

/// The bytes of the longest role.
const MAX_ROLE_BYTES: usize = 18;

/// Where the next `人` or `告` of a text ends (every role ends with one of them), each
/// looked for again only once passed, so a text is read once for each.
#[derive(Default)]
struct RoleEnds {
    /// The end of the next of each at or after where it was last looked for from, with
    /// that place; `None` once there is none.
    next: [Option<(usize, Option<usize>)>; 2],
}

impl RoleEnds {
    /// The end (after its last byte) of the first `人` or `告` that starts at `at` or after.
    fn next(&mut self, bytes: &[u8], at: usize) -> Option<usize> {
        // Built once: a finder's set-up costs as much as a short text's search.
        static LAST: LazyLock<[Finder<'static>; 2]> =
            LazyLock::new(|| ["人", "告"].map(|last| Finder::new(last.as_bytes())));
        let mut first: Option<usize> = None;
        for (slot, last) in self.next.iter_mut().zip(LAST.iter()) {
            let found = match *slot {
                Some((from, found)) if from <= at && found.is_none_or(|f| f >= at) => found,
                _ => {
                    let found = last.find(&bytes[at..]).map(|i| at + i);
                    *slot = Some((at, found));
                    found
                }
            };
            if let Some(f) = found {
                first = Some(first.map_or(f, |g| g.min(f)));
            }
        }
        first.map(|f| f + 3)
    }
}

/// The high bit of each byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// From `at`, passes the 8-byte words of `bytes` that hold no ASCII digit (a
/// word-at-a-time test, so that a long text without digits is read quickly), and returns
/// where the next byte-by-byte look starts.
fn skip_digitless(bytes: &[u8], mut at: usize) -> usize {
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        if has_digit(word) {
            break;
        }
        at += 8;
    }
    at
}

/// Whether some byte of `word` is an ASCII digit.
fn has_digit(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Per byte b with its high bit cleared: b + (0x80 - 0x30) has its high bit set when
    // b >= 0x30, and b + (0x80 - 0x3A) when b >= 0x3A; no carry crosses bytes as every sum
    // is below 0x100. Bytes whose high bit was set are no digits.
    let low = word & !HIGH_BITS;
    let at_least_0 = low.wrapping_add(ONES * (0x80 - 0x30));
    let above_9 = low.wrapping_add(ONES * (0x80 - 0x3A));
    at_least_0 & !above_9 & !word & HIGH_BITS != 0
}

/// Characters that end a party's name: punctuation, and the words that follow a name in a
/// ruling's sentence (`因`, `诉`, `与`, `不服`, `及其`, `的`, `向`, `对`, ...).
fn ends_name(c: char) -> bool {
    const ENDS: &str = "，,、。；;：:（(）)《\"“因诉与于不及的向对在提申称等一为作所就到已履以";
    ENDS.contains(c)
}

/// The longest name a party may have, in characters (an authority's full name).
const MAX_NAME_CHARS: usize = 24;

/// Calls `f` with each party `normalized` names after a role at the start of a clause (the
/// text's start, after punctuation, or after `诉`, `与`, `及`, `审理`, `受理` or `收到`): the characters up
/// to the word or mark that ends the name, two at least, spaces left out (they carry
/// nothing between Chinese characters).
fn for_each_party(normalized: &str, mut f: impl FnMut(&str)) {
    let bytes = normalized.as_bytes();
    let mut ends = RoleEnds::default();
    let mut name = String::new();
    let mut at = 0;
    while at < bytes.len() {
        // A role ends at the next `人` or `告`, so none starts before the bytes of the
        // longest role before it: the text up to there is passed at once.
        let Some(end) = ends.next(bytes, at) else { break };
        let mut from = end.saturating_sub(MAX_ROLE_BYTES).max(at);
        while !normalized.is_char_boundary(from) {
            from += 1;
        }
        at = from;
        let rest = &normalized[at..];
        let Some(role) = ROLES.iter().find(|r| rest.starts_with(**r)) else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let before = normalized[..at].trim_end();
        let starts_clause = before.chars().next_back().is_none_or(|c| {
            matches!(c, '，' | ',' | '。' | '；' | '、' | '：' | '诉' | '与' | '及')
                || ["审理", "受理", "收到"].iter().any(|w| before.ends_with(w))
        });
        at += role.len();
        if !starts_clause {
            continue;
        }
        name.clear();
        let mut chars = 0;
        for (i, c) in normalized[at..].char_indices() {
            if c.is_whitespace() {
                continue;
            }
            // A name's first character is its own (`于` is a surname too).
            if (chars == 0 && ends_name(c) && c != '于') || (chars >= 2 && ends_name(c)) {
                at += i;
                break;
            }
            name.push(c);
            chars += 1;
            if chars > MAX_NAME_CHARS {
                break;
            }
        }
        if (2..=MAX_NAME_CHARS).contains(&chars) {
            f(&name);
        }
    }
}

/// Calls `f` with each reference number of `normalized` (normalised text: half-width
/// digits, lower case), as its digits without leading zeros: a run of digits right before
/// `号` (not after `月`, where `号` is a day of the month), or after `no` or `no.` (a
/// word of its own).
pub(crate) fn for_each_reference<'a>(normalized: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = normalized.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at = skip_digitless(bytes, at + 1);
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

/// The most Han characters a code after `编号` starts with (a place: `东大营`, `新生街`).
const MAX_CODE_PREFIX_CHARS: usize = 4;

/// Calls `f` with each code `normalized` gives after `编号` (serial number), after an
/// optional `:` or `为`: up to [`MAX_CODE_PREFIX_CHARS`] Han characters, then letters and
/// digits, groups joined by dashes (`东大营237`, `2017-074`, `新生街019—057`,
/// `s11201012`), when it holds a digit.
pub(crate) fn for_each_code<'a>(normalized: &'a str, mut f: impl FnMut(&'a str)) {
    static SERIAL: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("编号".as_bytes()));
    let mut from = 0;
    while let Some(i) = SERIAL.find(&normalized.as_bytes()[from..]) {
        from += i + "编号".len();
        let rest = &normalized[from..];
        let rest = rest.strip_prefix([':', '为']).unwrap_or(rest).trim_start();
        let start = normalized.len() - rest.len();
        let mut end = start;
        let (mut han, mut digit, mut alnum) = (0, false, false);
        for (j, c) in rest.char_indices() {
            if crate::segment::is_han(c) && !alnum && han < MAX_CODE_PREFIX_CHARS {
                han += 1;
            } else if c.is_ascii_alphanumeric() {
                alnum = true;
                digit |= c.is_ascii_digit();
            } else if alnum && matches!(c, '-' | '—' | '–') {
                // A dash joins two groups only when the next is a letter or digit.
                if !rest[j + c.len_utf8()..].starts_with(|n: char| n.is_ascii_alphanumeric()) {
                    break;
                }
            } else {
                break;
            }
            end = start + j + c.len_utf8();
        }
        if digit {
            f(&normalized[start..end]);
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

/// Adds the features of `normalized`'s references to `features`, under `seed`: for each
/// distinct reference ([`MAX_REFERENCES`] at most), a quarter as many as it has (at least
/// one). A document without features gets none.
pub(crate) fn add_features(normalized: &str, seed: u64, features: &mut Features) {
    for_each_feature(normalized, seed, features.len(), |hash, _, _| features.push_distinct(hash));
}

/// Calls `f` with each reference feature of `normalized` for a document of `features`
/// features: its hash, the reference (a number's digits, or a party's name) and its place
/// among that reference's features.
pub(crate) fn for_each_feature(
    normalized: &str,
    seed: u64,
    features: usize,
    mut f: impl FnMut(u64, &str, usize),
) {
    if features == 0 {
        return;
    }
    let mut numbers: Vec<String> = Vec::new();
    for_each_reference(normalized, |n| numbers.push(n.to_string()));
    for_each_code(normalized, |n| numbers.push(n.to_string()));
    for_each_party(normalized, |n| numbers.push(n.to_string()));
    let mut seen = std::collections::HashSet::new();
    numbers.retain(|n| seen.insert(n.clone()));
    numbers.truncate(MAX_REFERENCES);
    let each = (features / REFERENCE_SHARE).max(1);
    for number in &numbers {
        let key = hash_bytes(number.as_bytes(), seed ^ 0x7265_6665_7265_6e63);
        for i in 0..each {
            f(hash_u64s(&[key, i as u64], seed), number, i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `scan` finds in `text`, in order.
    fn found(text: &str, scan: impl Fn(&str, &mut dyn FnMut(&str))) -> Vec<String> {
        let mut out = Vec::new();
        scan(text, &mut |n| out.push(n.to_string()));
        out
    }

    fn references(text: &str) -> Vec<String> {
        found(text, |t, f| for_each_reference(t, f))
    }

    #[test]
    fn docket_and_case_numbers_are_references_dates_and_counts_are_not() {
        assert_eq!(references("不服天津市第一中级人民法院(2016)津02行初431号行政裁定"), ["431"]);
        assert_eq!(references("津东政补决字[2016]第066号《房屋征收补偿决定》"), ["66"]);
        assert_eq!(references("case no. 12 and no 7; piano 3, nothing 4"), ["12", "7"]);
        assert!(references("于2017年2月3日向本院申请，5月1号开庭，共计2000元。").is_empty());
        assert!(references("no digits here, no.").is_empty());
    }

    fn codes(text: &str) -> Vec<String> {
        found(text, |t, f| for_each_code(t, f))
    }

    #[test]
    fn serial_numbers_after_bianhao_are_references() {
        let text =
            "申请强制执行编号东大营237宁河区棚户区，编号:2017-074《决定》，编号为s11201012。";
        assert_eq!(codes(text), ["东大营237", "2017-074", "s11201012"]);
        assert_eq!(codes("编号新生街019—057宁河区"), ["新生街019—057"]);
        assert_eq!(codes("编号260宁河区"), ["260"]);
        // No digit, or a dash that joins nothing: no code, or the code before it.
        assert!(codes("编号东大营宁河区，编号：无").is_empty());
        assert_eq!(codes("编号12-，"), ["12"]);
    }

    fn parties(text: &str) -> Vec<String> {
        found(text, |t, f| for_each_party(t, f))
    }

    #[test]
    fn the_parties_of_a_ruling_are_references() {
        assert_eq!(
            parties("上诉人于金旺因诉被上诉人天津市河北区人民政府房屋征收补偿决定一案，不服"),
            ["于金旺", "天津市河北区人民政府房屋征收补偿决定"]
        );
        assert_eq!(
            parties("本院在审理原告牛福宽诉被告天津市红桥区人民政府的决定"),
            ["牛福宽", "天津市红桥区人民政府"]
        );
        assert_eq!(
            parties("上诉人王芝芸及其委托代理人黄艳，被上诉人天津市西青区城管局（以下简称）"),
            ["王芝芸", "天津市西青区城管局"]
        );
        assert_eq!(
            parties("本院在受理原告张永军诉被告天津市人民政府"),
            ["张永军", "天津市人民政府"]
        );
        assert_eq!(parties("本院收到起诉人李淑苓以房屋被征收为由的起诉状"), ["李淑苓"]);
        // A role inside a sentence names no party, nor does a role with no name after it.
        assert!(parties("本院向被告送达了起诉状副本。原告诉被告履行职责").is_empty());
    }

    #[test]
    fn the_word_test_finds_every_digit() {
        for b in 0..=255u8 {
            for place in 0..8 {
                let mut word = [b'a'; 8];
                word[place] = b;
                let found = has_digit(u64::from_le_bytes(word));
                assert_eq!(found, b.is_ascii_digit(), "byte {b:#x} at {place}");
            }
        }
        let long = format!("{}第12号{}", "x".repeat(21), "y".repeat(13));
        assert_eq!(references(&long), ["12"]);
    }

    #[test]
    fn every_role_ends_where_the_scan_looks() {
        for role in ROLES {
            assert!(role.ends_with('人') || role.ends_with('告'), "{role}");
            assert!(role.len() <= MAX_ROLE_BYTES, "{role}");
        }
        let long = format!("{}，原告张三，{}，被告李四。", "文".repeat(40), "x".repeat(30));
        assert_eq!(parties(&long), ["张三", "李四"]);
        assert_eq!(parties("甲乙原告张三，被告李四。"), ["李四"]);
        assert_eq!(parties("abc，原告张三，被告李四。"), ["张三", "李四"]);
    }

    #[test]
    fn a_reference_weighs_a_quarter_of_the_features() {
        let mut seen = Vec::new();
        for_each_feature("第77号与第8号", 7, 80, |h, n, i| seen.push((h, n.to_string(), i)));
        assert_eq!(seen.len(), 40);
        assert_eq!(seen.iter().filter(|s| s.1 == "77").count(), 20);
        let mut other = Vec::new();
        for_each_feature("第83号与第8号", 7, 80, |h, _, _| other.push(h));
        let shared = seen.iter().filter(|s| other.contains(&s.0)).count();
        assert_eq!(shared, 20, "the number both have gives the same features");
        let mut none = 0;
        for_each_feature("第77号", 7, 0, |_, _, _| none += 1);
        assert_eq!(none, 0);
    }
}

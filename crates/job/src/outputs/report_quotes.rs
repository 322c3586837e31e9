//! The documents `report.html` quotes in its largest clusters: each one's text as the run
//! analysed it (a web page without its template lines and the lines outside its main
//! text, which are listed: a sample of what the run learned as template, on the pages a
//! reader judges), read again from the inputs, and how a removed member compares with its
//! cluster's kept document: the Jaccard similarity of their features and the passage where
//! their texts part.

use std::collections::{BTreeMap, BTreeSet};

use neardup_core::{DocId, jaccard_sorted};
use neardup_text::{AnalyzeScratch, Boilerplate, LineScratch};

use crate::input::sign::{Signer, lines_left_out, page_text};
use crate::settings::config::JobConfig;
use crate::settings::spec::JobSpec;

/// Characters of each excerpt.
const EXCERPT_CHARS: usize = 240;

/// Characters of each side of a differing passage.
const PASSAGE_CHARS: usize = 90;

/// A quoted document as the run analysed it.
pub(crate) struct Quoted {
    /// Its analysed text, runs of whitespace as one space.
    text: String,
    /// Its analysed text as it is, where paragraph offsets point.
    analysed: String,
    /// Its distinct features, ascending.
    features: Vec<u64>,
    /// The lines of a web page left out of it (template lines, and lines outside its main
    /// text), in page order.
    left_out: Vec<String>,
}

/// Lines left out of a page that the report lists under it.
const LEFT_OUT_LINES: usize = 6;

impl Quoted {
    /// The start of the analysed text.
    pub(crate) fn excerpt(&self) -> String {
        cut(&self.text, EXCERPT_CHARS)
    }

    /// The start of the passage of `len` bytes at `offset` of the analysed text (a
    /// paragraph of `paragraphs/`), runs of whitespace as one space.
    pub(crate) fn passage(&self, offset: u64, len: u64) -> String {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(len).unwrap_or(0));
        let passage = self.analysed.get(start..end.min(self.analysed.len())).unwrap_or_default();
        cut(&passage.split_whitespace().collect::<Vec<_>>().join(" "), EXCERPT_CHARS)
    }

    /// The lines left out of a web page, as a line of text (the first few), or `None`.
    pub(crate) fn left_out(&self) -> Option<String> {
        if self.left_out.is_empty() {
            return None;
        }
        let shown: Vec<String> = self
            .left_out
            .iter()
            .take(LEFT_OUT_LINES)
            .map(|line| format!("«{}»", cut(line.trim(), PASSAGE_CHARS)))
            .collect();
        let more = self.left_out.len().saturating_sub(LEFT_OUT_LINES);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        Some(format!("left out ({} lines): {}{more}", self.left_out.len(), shown.join(" ")))
    }
}

/// The documents `wanted`, read again from the inputs as the run read them (`spec`, the
/// settings it used), each file up to its last wanted record, decoding only the wanted
/// ones; `boilerplate` is what the run learned of web pages.
pub(crate) fn quoted(
    config: &JobConfig,
    spec: &JobSpec,
    wanted: &BTreeSet<DocId>,
    boilerplate: Option<&Boilerplate>,
) -> BTreeMap<DocId, Quoted> {
    let fields = spec.input.read_options();
    let analyzer = Signer::spec_analyzer(spec);
    let (mut lines, mut content, mut scratch) =
        (LineScratch::default(), String::new(), AnalyzeScratch::default());
    let mut by_file: BTreeMap<u32, BTreeSet<u64>> = BTreeMap::new();
    for doc in wanted {
        by_file.entry(doc.file_index()).or_default().insert(doc.record());
    }
    let mut found = BTreeMap::new();
    for (file_index, records) in by_file {
        let Some(file) = config.inputs.get(file_index as usize) else { continue };
        for d in neardup_io::wanted_documents(file, &fields, &records) {
            let (analysed, stripped) = page_text(boilerplate, &d, &mut lines, &mut content);
            let features = analyzer.analyze(analysed, &mut scratch).features.sorted_hashes();
            let left_out = match stripped {
                Some(s) if s.lines > 0 => lines_left_out(&d.text, analysed),
                _ => Vec::new(),
            };
            let text = analysed.split_whitespace().collect::<Vec<_>>().join(" ");
            let analysed = analysed.to_string();
            found.insert(d.doc, Quoted { text, analysed, features, left_out });
        }
    }
    found
}

/// How `member` compares with `kept` (a cluster's kept document, or the first of a pair,
/// which `kept_is` names), as a line of text: the Jaccard similarity of their features,
/// and where their texts part (the first character that differs, and what each has there
/// up to where their ends agree again).
pub(crate) fn comparison(member: &Quoted, kept: &Quoted, kept_is: &str) -> String {
    let jaccard = jaccard(&member.features, &kept.features);
    let (a, b): (Vec<char>, Vec<char>) =
        (member.text.chars().collect(), kept.text.chars().collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix =
        a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (here, there): (String, String) = (
        a[prefix..a.len() - suffix].iter().collect(),
        b[prefix..b.len() - suffix].iter().collect(),
    );
    let similarity = format!("feature Jaccard with {kept_is} {jaccard:.3}");
    match (here.is_empty(), there.is_empty()) {
        (true, true) => format!("{similarity}; the same analysed text"),
        _ => format!(
            "{similarity}; the texts part at character {}: this one has «{}», {kept_is} «{}»",
            prefix + 1,
            cut(here.trim(), PASSAGE_CHARS),
            cut(there.trim(), PASSAGE_CHARS)
        ),
    }
}

/// The Jaccard similarity of two ascending sets of hashes, 1 for two empty ones (two pages
/// with nothing left to compare read alike here; matching never joins them).
fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() { 1.0 } else { jaccard_sorted(a, b) }
}

/// The first `chars` characters of `text`, with `…` when it goes on.
fn cut(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().nth(chars).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str, features: &[u64]) -> Quoted {
        Quoted {
            text: text.into(),
            analysed: text.into(),
            features: features.to_vec(),
            left_out: Vec::new(),
        }
    }

    #[test]
    fn a_paragraph_is_quoted_from_its_offset() {
        let q = quoted("Title\n\nThe  first\nparagraph.\n\nEnd", &[]);
        assert_eq!(q.passage(7, 21), "The first paragraph.");
        assert_eq!(q.passage(7, 1000), "The first paragraph. End", "cut at the end");
        assert_eq!(q.passage(1000, 5), "");
    }

    #[test]
    fn a_member_is_compared_by_its_features_and_the_passage_where_it_parts() {
        let kept = quoted("The market rose today. Viewed 120 times", &[1, 2, 3, 4]);
        let member = quoted("The market rose today. Viewed 98 times", &[1, 2, 3, 5]);
        assert_eq!(
            comparison(&member, &kept, "the kept document"),
            "feature Jaccard with the kept document 0.600; the texts part at character 31: \
             this one has «98», the kept document «120»"
        );
        let same = quoted("The market rose today. Viewed 120 times", &[1, 2, 3, 4]);
        assert!(
            comparison(&same, &kept, "the kept document")
                .ends_with("1.000; the same analysed text")
        );
        // A member cut short has nothing of its own where they part.
        let cut_short = quoted("The market rose today.", &[1, 2]);
        assert!(
            comparison(&cut_short, &kept, "the kept document")
                .ends_with("this one has «», the kept document «Viewed 120 times»")
        );
        assert_eq!(jaccard(&[], &[]), 1.0);
    }

    #[test]
    fn a_pages_left_out_lines_are_listed_in_order() {
        let text = "Home | News\nTitle\nBody one\nHome | News\n\nBody two\nFooter";
        let left = lines_left_out(text, "Body one\nHome | News\nBody two\n");
        assert_eq!(left, ["Home | News", "Title", "Footer"]);
        let page = Quoted { left_out: left, ..quoted("Body one Home | News Body two", &[1]) };
        assert_eq!(page.left_out().unwrap(), "left out (3 lines): «Home | News» «Title» «Footer»");
        assert_eq!(quoted("text", &[1]).left_out(), None);
    }

    #[test]
    fn long_passages_are_cut() {
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("abc", 3), "abc");
    }
}

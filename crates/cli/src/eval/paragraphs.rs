//! Scores paragraph-level dedup (`dedup --paragraphs`): the paragraphs a run left out
//! against those the truth says repeat an earlier document's.
//!
//! The truth is JSON Lines, one line per document: `id` and `repeated` (the numbers of its
//! blocks that repeat a paragraph of a document before it, blocks counted from 0 as the run
//! counts them), with any other field to group the scores by (`--by`). Only documents of
//! the truth are scored, and only those the run keeps (a removed document loses no
//! paragraphs).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use anyhow::Context;
use neardup_io::{Decision, DocumentRow, ParagraphRow};
use serde::Serialize;

/// Scores of the paragraphs left out, over all documents of the truth and per group.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ParagraphScore {
    /// The group (`all` for every document).
    pub group: String,
    /// Kept documents of the truth scored.
    pub documents: u64,
    /// Paragraphs the truth says repeat an earlier document's.
    pub labelled: u64,
    /// Paragraphs the run left out.
    pub left_out: u64,
    /// Paragraphs in both.
    pub correct: u64,
    /// `correct / left_out`, when something was left out.
    pub precision: Option<f64>,
    /// `correct / labelled`, when the truth labels something.
    pub recall: Option<f64>,
}

/// One document of the truth: its repeated paragraphs and its group.
struct Labelled {
    repeated: HashSet<u32>,
    group: Option<String>,
}

/// Reads the truth at `path`, grouping by the field `by` when given.
fn read_truth(path: &Path, by: Option<&str>) -> anyhow::Result<HashMap<String, Labelled>> {
    let file = std::fs::File::open(path).with_context(|| format!("\"{}\"", path.display()))?;
    let mut truth = HashMap::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("\"{}\"", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("\"{}\" line {}", path.display(), n + 1);
        let value: serde_json::Value = serde_json::from_str(&line).with_context(at)?;
        let id = value["id"].as_str().with_context(|| format!("{}: no string `id`", at()))?;
        let repeated = value["repeated"]
            .as_array()
            .with_context(|| format!("{}: no `repeated` list", at()))?
            .iter()
            .map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()))
            .collect::<Option<HashSet<u32>>>()
            .with_context(|| format!("{}: `repeated` holds a value that is no number", at()))?;
        let group = by.map(|field| match &value[field] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        });
        truth.insert(id.to_string(), Labelled { repeated, group });
    }
    Ok(truth)
}

/// Scores the run's `paragraphs` (of its `docs`) against the truth at `path`.
///
/// # Errors
/// When the truth cannot be read or a line of it is not a document's labels.
pub fn score(
    path: &Path,
    by: Option<&str>,
    docs: &[DocumentRow],
    paragraphs: &[ParagraphRow],
) -> anyhow::Result<Vec<ParagraphScore>> {
    let truth = read_truth(path, by)?;
    let mut left_out: HashMap<&str, HashSet<u32>> = HashMap::new();
    for p in paragraphs {
        left_out.entry(p.id.as_str()).or_default().insert(p.paragraph);
    }
    let mut scores: BTreeMap<String, ParagraphScore> = BTreeMap::new();
    for doc in docs.iter().filter(|d| d.decision == Decision::Keep) {
        let Some(labelled) = doc.id.as_deref().and_then(|id| truth.get(id)) else { continue };
        let run = doc.id.as_deref().and_then(|id| left_out.get(id));
        let empty = HashSet::new();
        let run = run.unwrap_or(&empty);
        let correct = run.intersection(&labelled.repeated).count() as u64;
        let groups = std::iter::once("all").chain(labelled.group.as_deref());
        for group in groups {
            let s = scores.entry(group.to_string()).or_default();
            s.documents += 1;
            s.labelled += labelled.repeated.len() as u64;
            s.left_out += run.len() as u64;
            s.correct += correct;
        }
    }
    let mut out: Vec<ParagraphScore> = scores
        .into_iter()
        .map(|(group, mut s)| {
            s.precision = (s.left_out > 0).then(|| s.correct as f64 / s.left_out as f64);
            s.recall = (s.labelled > 0).then(|| s.correct as f64 / s.labelled as f64);
            s.group = group;
            s
        })
        .collect();
    // `all` first, then the groups in order.
    out.sort_by_key(|s| (s.group != "all", s.group.clone()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use neardup_core::DocId;

    use super::*;

    fn doc(record: u64, decision: Decision) -> DocumentRow {
        let id = format!("d{record}");
        DocumentRow { doc: DocId::new(0, record), decision, ..crate::eval::tests::doc(&id, &id) }
    }

    fn left_out(record: u64, paragraph: u32) -> ParagraphRow {
        ParagraphRow {
            doc: DocId::new(0, record),
            id: format!("d{record}"),
            paragraph,
            offset: 0,
            len: 0,
            chars: 100,
            key: 1,
            first_doc: DocId::new(0, 0),
            first_id: "d0".into(),
            first_run: None,
        }
    }

    #[test]
    fn paragraphs_are_scored_per_group_over_kept_documents() {
        let dir = tempfile::tempdir().unwrap();
        let truth = dir.path().join("truth.jsonl");
        std::fs::write(
            &truth,
            "{\"id\": \"d1\", \"lang\": \"en\", \"repeated\": [1, 2]}\n\
             {\"id\": \"d2\", \"lang\": \"zh\", \"repeated\": []}\n\
             {\"id\": \"d3\", \"lang\": \"zh\", \"repeated\": [4]}\n",
        )
        .unwrap();
        let docs = [doc(1, Decision::Keep), doc(2, Decision::Keep), doc(3, Decision::Remove)];
        let run = [left_out(1, 1), left_out(2, 3)];
        let scores = score(&truth, Some("lang"), &docs, &run).unwrap();
        let figures: Vec<_> =
            scores.iter().map(|s| (s.group.as_str(), s.labelled, s.left_out, s.correct)).collect();
        // d3 is removed: neither labelled nor left out counts.
        assert_eq!(figures, [("all", 2, 2, 1), ("en", 2, 1, 1), ("zh", 0, 1, 0)]);
        assert_eq!((scores[0].precision, scores[0].recall), (Some(0.5), Some(0.5)));
        assert_eq!((scores[2].precision, scores[2].recall), (Some(0.0), None));
        std::fs::write(&truth, "{\"id\": \"d1\"}\n").unwrap();
        let error = score(&truth, None, &docs, &run).unwrap_err();
        assert!(format!("{error:#}").contains("line 1: no `repeated` list"), "{error:#}");
    }
}

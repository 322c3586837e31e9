//! `neardup eval`: how a run's clusters compare with labelled truth.
//!
//! Truth is either a cluster label per document (documents with equal labels are
//! duplicates of each other), read with the same readers as the job's input (JSONL, plain
//! or compressed, or Parquet), or labelled pairs (`id_a`, `id_b`, `duplicate`) as JSON
//! Lines. The run is read from its `documents/` and `pairs/` parts.
//!
//! Pair scores count pairs of documents that share a cluster. They and the adjusted Rand
//! index come from the contingency table of predicted and true clusters, so they cost
//! linear time however large the clusters are. Recall by similarity band needs the texts
//! of the true pairs: they are read again from the run's inputs and compared by the
//! Jaccard similarity of their features under the run's settings.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use neardup_io::{Decision, DocumentRow, OnReadError, Record, RecordReader};
use neardup_job::{JobSpec, lines_left_out, page_text};
use neardup_text::{Analysis, AnalyzeScratch, Analyzer};
use neardup_text::{Boilerplate, LineScratch};
use serde::Serialize;

pub(crate) mod command;
pub(crate) mod paragraphs;

pub use command::{EvalArgs, print, run};

/// True pairs compared by similarity at most (the rest are left out of the bands).
const MAX_BAND_PAIRS: usize = 200_000;
/// Lower edges of the similarity bands.
const BANDS: [f64; 7] = [0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// Scores of a run against truth.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    /// Documents in both the truth and the run.
    pub documents: u64,
    /// Documents of the truth that the run does not list (labelled pairs: pairs with a
    /// document the run does not list).
    pub missing_from_run: u64,
    /// Pairs the truth calls duplicates (among evaluated documents).
    pub true_pairs: u64,
    /// Pairs the run puts in one cluster.
    pub predicted_pairs: u64,
    /// Pairs in both.
    pub true_positives: u64,
    /// `true_positives / predicted_pairs`; none (null in JSON) when the run predicts no
    /// pair.
    pub precision: Option<f64>,
    /// `true_positives / true_pairs`; none when the truth has no pair.
    pub recall: Option<f64>,
    /// F1 (see [`pair_scores`]); none when the truth has no pair.
    pub f1: Option<f64>,
    /// Adjusted Rand index of the clusters (cluster truth only).
    pub adjusted_rand_index: Option<f64>,
    /// Recall of true pairs by the Jaccard similarity of their features.
    pub recall_by_similarity: Vec<Band>,
    /// Verified pairs of `pairs/` that the truth says are not duplicates, most similar first.
    pub false_positive_pairs: Vec<FalsePositive>,
    /// Predicted pairs that are false, counting those joined only through a cluster.
    pub false_positive_count: u64,
    /// Labelled documents removed as duplicates (cluster truth only)...
    pub removed: u64,
    /// ...of which the truth says they differ from the document kept for them.
    pub removed_wrongly: u64,
    /// Scores of the pairs that involve each group's documents (`--by`).
    pub by_group: Vec<GroupScore>,
    /// With `--paragraph-truth`: the paragraphs left out, over every document and per
    /// group.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paragraphs: Vec<paragraphs::ParagraphScore>,
}

/// Scores of the pairs with at least one document of a group, and its removed documents.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GroupScore {
    /// The group's value.
    pub group: String,
    /// Its documents in both the truth and the run.
    pub documents: u64,
    /// True pairs with at least one of its documents.
    pub true_pairs: u64,
    /// Predicted pairs with at least one of its documents.
    pub predicted_pairs: u64,
    /// Pairs in both.
    pub true_positives: u64,
    /// `true_positives / predicted_pairs`, when something was predicted.
    pub precision: Option<f64>,
    /// `true_positives / true_pairs`, when the truth has pairs.
    pub recall: Option<f64>,
    /// F1, when the truth has pairs (see [`pair_scores`]).
    pub f1: Option<f64>,
    /// Its documents removed as duplicates.
    pub removed: u64,
    /// Of those, removed for a document the truth says differs.
    pub removed_wrongly: u64,
}

/// Recall within one similarity band.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Band {
    /// Lowest similarity of the band.
    pub from: f64,
    /// Highest similarity (exclusive, except for the last band, which is exactly 1).
    pub to: f64,
    /// True pairs in the band.
    pub pairs: u64,
    /// Of those, found by the run.
    pub found: u64,
}

/// A wrong pair of `pairs/`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FalsePositive {
    /// One document.
    pub id_a: String,
    /// The other.
    pub id_b: String,
    /// The similarity the run computed.
    pub similarity: f64,
    /// `exact` or `near`.
    pub kind: &'static str,
}

/// What the truth says.
pub enum Truth {
    /// A cluster label per document id.
    Clusters(HashMap<String, String>),
    /// Labelled pairs: `(id_a, id_b) -> duplicate`, ids ordered.
    Pairs(HashMap<(String, String), bool>),
}

fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b { (a.to_string(), b.to_string()) } else { (b.to_string(), a.to_string()) }
}

fn choose2(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

impl Truth {
    /// Reads a cluster label per document from `path` (any input format of the job) with
    /// the given fields.
    ///
    /// # Errors
    /// When the file cannot be read, or a record lacks its id or label.
    pub fn read_clusters(path: &Path, id_field: &str, label_field: &str) -> anyhow::Result<Self> {
        read_labels(path, id_field, label_field).map(Truth::Clusters)
    }

    /// Reads labelled pairs: JSON Lines with `id_a`, `id_b` and an optional boolean
    /// `duplicate` (true when absent).
    ///
    /// # Errors
    /// When the file cannot be read or a line is not such a pair.
    pub fn read_pairs(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot open the truth \"{}\"", path.display()))?;
        let mut pairs = HashMap::new();
        for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.with_context(|| format!("cannot read \"{}\"", path.display()))?;
            if line.trim().is_empty() {
                continue;
            }
            let at = || format!("truth \"{}\" line {}", path.display(), n + 1);
            let value: serde_json::Value =
                serde_json::from_str(&line).with_context(|| format!("{}: not JSON", at()))?;
            let field = |k: &str| value.get(k).and_then(serde_json::Value::as_str);
            let (Some(a), Some(b)) = (field("id_a"), field("id_b")) else {
                bail!("{}: needs string fields `id_a` and `id_b`", at());
            };
            let duplicate = match value.get("duplicate") {
                None => true,
                Some(serde_json::Value::Bool(d)) => *d,
                Some(_) => bail!("{}: `duplicate` must be true or false", at()),
            };
            pairs.insert(ordered(a, b), duplicate);
        }
        Ok(Truth::Pairs(pairs))
    }
}

/// A label per document id: `field` of every record of `path` (any input format of the
/// job), keyed by `id_field`; of records that repeat an id, the first one's, as a run takes
/// the first record of an id for the document (truth given as the run's input, as `tune`
/// reads it, may repeat ids).
///
/// # Errors
/// When the file cannot be read, or a record lacks its id or label.
pub fn read_labels(
    path: &Path,
    id_field: &str,
    label_field: &str,
) -> anyhow::Result<HashMap<String, String>> {
    let files = neardup_io::discover(&[path.to_path_buf()], &[])
        .with_context(|| format!("cannot list the truth \"{}\"", path.display()))?;
    let fields = neardup_io::ReadOptions {
        id: Some(id_field.to_string()),
        text: label_field.to_string(),
        url: None,
        ..neardup_io::ReadOptions::default()
    };
    let mut labels = HashMap::new();
    for file in &files {
        let reader = RecordReader::open(file, &fields, OnReadError::Fail)
            .with_context(|| format!("cannot read the truth \"{}\"", file.path.display()))?;
        for record in reader {
            match record? {
                // As in a run, the first record of an id owns it.
                Record::Doc(d) => {
                    labels.entry(d.id).or_insert(d.text);
                }
                // The label is read as the job reads a text, so the reject's reason would
                // name the text: its detail names the field.
                Record::Reject(r) => bail!(
                    "truth \"{}\" record {}: {}; every record needs `{id_field}` and a string `{label_field}`",
                    file.path.display(),
                    r.doc.record(),
                    r.detail
                ),
            }
        }
    }
    Ok(labels)
}

/// The row of the record that owns each id: the first record with that id (smallest
/// `DocId`), as the run decides. A later record with the id is rejected as `duplicate_id`
/// and says nothing about the document the id names, so it never stands for the id,
/// whatever order the rows of `documents/` were read in; scores, texts and explanations
/// keyed by id all go through this. Such a reject counts in no score: the truth names
/// documents by id, and the id names the record that owns it.
pub fn id_owners(docs: &[DocumentRow]) -> HashMap<&str, &DocumentRow> {
    let mut owners: HashMap<&str, &DocumentRow> = HashMap::new();
    for d in docs {
        let Some(id) = d.id.as_deref() else { continue };
        let owner = owners.entry(id).or_insert(d);
        if d.doc < owner.doc {
            *owner = d;
        }
    }
    owners
}

/// The predicted cluster of each listed document, as the decisions have it: its `cluster`
/// column, or its own id for a rejected record or a member kept unverified (alone).
fn predicted(docs: &[DocumentRow]) -> HashMap<&str, String> {
    id_owners(docs)
        .into_iter()
        .map(|(id, d)| {
            let alone = d.decision == Decision::Reject
                || d.reason == Some(neardup_io::Reason::UnverifiedInCluster);
            let cluster = match (alone, &d.cluster) {
                (true, _) | (_, None) => format!("\u{0}{id}"),
                (_, Some(c)) => c.clone(),
            };
            (id, cluster)
        })
        .collect()
}

/// Pairs of `n` documents with at least one of `k` given ones.
fn pairs_touching(n: u64, k: u64) -> u64 {
    choose2(n) - choose2(n - k)
}

/// Pair precision, recall and F1 from the counts, each only where it is defined:
/// precision over predicted pairs, recall over true pairs, and F1 wherever recall is, as
/// `2 tp / (true + predicted)`: the harmonic mean of precision and recall when both are
/// defined, and 0 when the run predicts no pair. Without true pairs, recall and F1 say
/// nothing; what is left to measure is precision, the share of joined pairs that are not
/// false positives.
pub fn pair_scores(
    true_positives: u64,
    true_pairs: u64,
    predicted_pairs: u64,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let ratio = |x: u64, y: u64| (y > 0).then(|| x as f64 / y as f64);
    let f1 = (true_pairs > 0)
        .then(|| 2.0 * true_positives as f64 / (true_pairs as f64 + predicted_pairs as f64));
    (ratio(true_positives, predicted_pairs), ratio(true_positives, true_pairs), f1)
}

/// Per-group scores: pairs counted from the contingency table of (predicted cluster, true
/// label), keeping per cell how many documents belong to the group.
fn group_scores(
    labels: &HashMap<String, String>,
    predicted: &HashMap<&str, String>,
    docs: &[DocumentRow],
    groups: &HashMap<String, String>,
) -> Vec<GroupScore> {
    let mut names: Vec<&str> = groups.values().map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|group| {
            let mut score = GroupScore { group: group.to_string(), ..GroupScore::default() };
            // (total, in group) per cell, predicted cluster and true label.
            let mut cells: HashMap<(&str, &str), (u64, u64)> = HashMap::new();
            let mut by_predicted: HashMap<&str, (u64, u64)> = HashMap::new();
            let mut by_true: HashMap<&str, (u64, u64)> = HashMap::new();
            for (id, label) in labels {
                let Some(cluster) = predicted.get(id.as_str()) else { continue };
                let member = u64::from(groups.get(id).is_some_and(|g| g == group));
                score.documents += member;
                for counts in [
                    cells.entry((cluster.as_str(), label.as_str())).or_default(),
                    by_predicted.entry(cluster.as_str()).or_default(),
                    by_true.entry(label.as_str()).or_default(),
                ] {
                    counts.0 += 1;
                    counts.1 += member;
                }
            }
            let touching = |counts: &mut dyn Iterator<Item = &(u64, u64)>| -> u64 {
                counts.map(|&(n, k)| pairs_touching(n, k)).sum()
            };
            score.true_positives = touching(&mut cells.values());
            score.predicted_pairs = touching(&mut by_predicted.values());
            score.true_pairs = touching(&mut by_true.values());
            (score.precision, score.recall, score.f1) =
                pair_scores(score.true_positives, score.true_pairs, score.predicted_pairs);
            // Only the labelled documents: the run may hold many the truth says nothing about.
            let labelled =
                |d: &&DocumentRow| d.id.as_deref().is_some_and(|id| labels.contains_key(id));
            let kept = kept_labels(labels, docs);
            for d in docs.iter().filter(|d| d.decision == Decision::Remove).filter(labelled) {
                let Some(id) = d.id.as_deref() else { continue };
                if groups.get(id).is_some_and(|g| g == group) {
                    score.removed += 1;
                    score.removed_wrongly += u64::from(removed_wrongly(labels, &kept, d));
                }
            }
            score
        })
        .collect()
}

/// Whether a removed document was removed wrongly: its truth label differs from its kept
/// document's or, removed with no kept document (`mostly_repeated`), no kept document of
/// the run has its label (`kept_labels`), so its text is kept nowhere.
fn removed_wrongly(
    labels: &HashMap<String, String>,
    kept_labels: &HashSet<&str>,
    d: &DocumentRow,
) -> bool {
    let label = |id: Option<&str>| id.and_then(|id| labels.get(id));
    match (label(d.id.as_deref()), d.duplicate_of.as_deref()) {
        (Some(a), Some(kept)) => label(Some(kept)).is_some_and(|b| a != b),
        (Some(a), None) => !kept_labels.contains(a.as_str()),
        (None, _) => false,
    }
}

/// The truth labels of the documents the run keeps.
fn kept_labels<'l>(labels: &'l HashMap<String, String>, docs: &[DocumentRow]) -> HashSet<&'l str> {
    let kept = docs.iter().filter(|d| d.decision == Decision::Keep);
    kept.filter_map(|d| d.id.as_deref().and_then(|id| labels.get(id))).map(String::as_str).collect()
}

/// Scores `docs` (and the verified `pairs`) against `truth`. `texts` gives the texts and
/// analyser for the similarity bands, when they could be read; `groups` a group per
/// document for per-group scores (cluster truth only).
pub fn evaluate(
    truth: &Truth,
    docs: &[DocumentRow],
    pairs: &[neardup_io::PairRow],
    texts: Option<(&HashMap<String, String>, &Analyzer)>,
    groups: Option<&HashMap<String, String>>,
    show: usize,
) -> Report {
    let predicted = predicted(docs);
    let mut report = Report::default();
    if let Truth::Clusters(labels) = truth {
        // Only the labelled documents: the run may hold many the truth says nothing about.
        let labelled = |d: &&DocumentRow| d.id.as_deref().is_some_and(|id| labels.contains_key(id));
        let kept = kept_labels(labels, docs);
        for d in docs.iter().filter(|d| d.decision == Decision::Remove).filter(labelled) {
            report.removed += 1;
            report.removed_wrongly += u64::from(removed_wrongly(labels, &kept, d));
        }
        if let Some(groups) = groups {
            report.by_group = group_scores(labels, &predicted, docs, groups);
        }
    }
    let mut true_pair_list: Vec<(String, String)> = Vec::new();
    let is_false = |a: &str, b: &str| -> Option<bool> {
        match truth {
            Truth::Clusters(labels) => Some(labels.get(a)? != labels.get(b)?),
            Truth::Pairs(labelled) => labelled.get(&ordered(a, b)).map(|dup| !dup),
        }
    };
    match truth {
        Truth::Clusters(labels) => {
            let mut cells: HashMap<(&str, &str), u64> = HashMap::new();
            let mut by_predicted: HashMap<&str, u64> = HashMap::new();
            let mut by_true: HashMap<&str, Vec<&str>> = HashMap::new();
            for (id, label) in labels {
                let Some(cluster) = predicted.get(id.as_str()) else {
                    report.missing_from_run += 1;
                    continue;
                };
                report.documents += 1;
                *cells.entry((cluster.as_str(), label.as_str())).or_default() += 1;
                *by_predicted.entry(cluster.as_str()).or_default() += 1;
                by_true.entry(label.as_str()).or_default().push(id.as_str());
            }
            let index: u64 = cells.values().map(|&n| choose2(n)).sum();
            let pred: u64 = by_predicted.values().map(|&n| choose2(n)).sum();
            let truth_pairs: u64 = by_true.values().map(|m| choose2(m.len() as u64)).sum();
            report.true_positives = index;
            report.predicted_pairs = pred;
            report.true_pairs = truth_pairs;
            report.false_positive_count = pred - index;
            let all = choose2(report.documents) as f64;
            let expected = if all > 0.0 { pred as f64 * truth_pairs as f64 / all } else { 0.0 };
            let max = (pred + truth_pairs) as f64 / 2.0;
            report.adjusted_rand_index = Some(if (max - expected).abs() < f64::EPSILON {
                1.0
            } else {
                (index as f64 - expected) / (max - expected)
            });
            let mut groups: Vec<Vec<&str>> =
                by_true.into_values().filter(|m| m.len() > 1).collect();
            groups.iter_mut().for_each(|m| m.sort_unstable());
            groups.sort_unstable();
            'groups: for members in groups {
                for (i, a) in members.iter().enumerate() {
                    for b in &members[i + 1..] {
                        if true_pair_list.len() == MAX_BAND_PAIRS {
                            break 'groups;
                        }
                        true_pair_list.push(((*a).to_string(), (*b).to_string()));
                    }
                }
            }
        }
        Truth::Pairs(labelled) => {
            score_labelled_pairs(labelled, &predicted, &mut report, &mut true_pair_list);
        }
    }
    (report.precision, report.recall, report.f1) =
        pair_scores(report.true_positives, report.true_pairs, report.predicted_pairs);
    if let Some((texts, analyzer)) = texts {
        report.recall_by_similarity = bands(&true_pair_list, &predicted, texts, analyzer);
    }
    let mut wrong: Vec<FalsePositive> = pairs
        .iter()
        .filter(|p| is_false(&p.id_a, &p.id_b) == Some(true))
        .map(|p| FalsePositive {
            id_a: p.id_a.clone(),
            id_b: p.id_b.clone(),
            similarity: p.similarity,
            kind: p.kind.as_str(),
        })
        .collect();
    wrong.sort_by(|x, y| {
        y.similarity
            .total_cmp(&x.similarity)
            .then_with(|| (&x.id_a, &x.id_b).cmp(&(&y.id_a, &y.id_b)))
    });
    wrong.truncate(show);
    report.false_positive_pairs = wrong;
    report
}

/// Scores labelled pairs (`true` for duplicates) against the run's clusters into
/// `report`, and lists the duplicate pairs (up to [`MAX_BAND_PAIRS`]) in `true_pairs`.
fn score_labelled_pairs(
    labelled: &HashMap<(String, String), bool>,
    predicted: &HashMap<&str, String>,
    report: &mut Report,
    true_pairs: &mut Vec<(String, String)>,
) {
    let mut sorted: Vec<(&(String, String), &bool)> = labelled.iter().collect();
    sorted.sort_unstable();
    let mut seen: HashSet<&str> = HashSet::new();
    for ((a, b), duplicate) in sorted {
        let (Some(ca), Some(cb)) = (predicted.get(a.as_str()), predicted.get(b.as_str())) else {
            report.missing_from_run += 1;
            continue;
        };
        for id in [a, b] {
            report.documents += u64::from(seen.insert(id.as_str()));
        }
        let same = ca == cb;
        report.true_pairs += u64::from(*duplicate);
        report.predicted_pairs += u64::from(same);
        report.true_positives += u64::from(same && *duplicate);
        report.false_positive_count += u64::from(same && !*duplicate);
        if *duplicate && true_pairs.len() < MAX_BAND_PAIRS {
            true_pairs.push((a.clone(), b.clone()));
        }
    }
}

/// Recall of `true_pairs` by the Jaccard similarity of their features.
fn bands(
    true_pairs: &[(String, String)],
    predicted: &HashMap<&str, String>,
    texts: &HashMap<String, String>,
    analyzer: &Analyzer,
) -> Vec<Band> {
    let mut features: HashMap<String, Vec<u64>> = HashMap::new();
    let (mut scratch, mut analysis) = (AnalyzeScratch::default(), Analysis::default());
    let mut feature_set = |id: &str, features: &mut HashMap<String, Vec<u64>>| {
        if !features.contains_key(id) {
            let Some(text) = texts.get(id) else { return };
            analyzer.analyze_into(text, &mut scratch, &mut analysis);
            let mut set = analysis.features.hashes().to_vec();
            set.sort_unstable();
            set.dedup();
            features.insert(id.to_string(), set);
        }
    };
    let mut out: Vec<Band> = BANDS
        .iter()
        .enumerate()
        .map(|(i, &from)| Band {
            from,
            to: BANDS.get(i + 1).copied().unwrap_or(1.0),
            pairs: 0,
            found: 0,
        })
        .collect();
    for (a, b) in true_pairs {
        feature_set(a, &mut features);
        feature_set(b, &mut features);
        let (Some(x), Some(y)) = (features.get(a.as_str()), features.get(b.as_str())) else {
            continue;
        };
        let similarity = neardup_core::jaccard_sorted(x, y);
        let band = BANDS.iter().rposition(|&from| similarity >= from).unwrap_or(0);
        out[band].pairs += 1;
        out[band].found += u64::from(predicted.get(a.as_str()) == predicted.get(b.as_str()));
    }
    out
}

/// Reads the texts of `ids` from the run's inputs, with the run's fields.
///
/// # Errors
/// When an input cannot be read.
pub fn read_texts(
    docs: &[DocumentRow],
    spec: &JobSpec,
    ids: &HashSet<&str>,
    boilerplate: Option<&Boilerplate>,
    working_dir: Option<&Path>,
) -> anyhow::Result<HashMap<String, String>> {
    let pages = read_pages(docs, spec, ids, boilerplate, working_dir)?;
    Ok(pages.into_iter().map(|(id, page)| (id, page.text)).collect())
}

/// Where the input a run names `source` is from here: as given when it is there (an
/// absolute path, an address, or a path relative to this folder), else relative to the
/// folder the run was started in, `working_dir`.
fn input_path(source: &str, working_dir: Option<&Path>) -> PathBuf {
    let given = PathBuf::from(source);
    if given.is_absolute() || neardup_io::remote::is_remote(&given) || given.exists() {
        return given;
    }
    match working_dir.map(|dir| dir.join(&given)) {
        Some(there) if there.exists() => there,
        _ => given,
    }
}

/// A document's text as the run analysed it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageText {
    /// The text, boilerplate left out.
    pub text: String,
    /// The lines left out as boilerplate (learned lines, and those outside the main text),
    /// in page order.
    pub left_out: Vec<String>,
}

/// Reads the texts of `ids` from the run's inputs, with the run's fields, and says which
/// lines the run's boilerplate left out of each. Each text is that of the record that owns
/// the id ([`id_owners`]), found by its record number in its file: an id whose record the
/// run rejected before reading a text has none, even when a later record repeats the id.
///
/// # Errors
/// When an input cannot be read.
pub fn read_pages(
    docs: &[DocumentRow],
    spec: &JobSpec,
    ids: &HashSet<&str>,
    boilerplate: Option<&Boilerplate>,
    working_dir: Option<&Path>,
) -> anyhow::Result<HashMap<String, PageText>> {
    let (mut lines, mut content) = (LineScratch::default(), String::new());
    // The wanted record numbers of each input file, with their ids.
    let mut wanted: BTreeMap<&str, HashMap<u64, &str>> = BTreeMap::new();
    for (id, d) in id_owners(docs) {
        if ids.contains(id) {
            wanted.entry(&*d.source).or_default().insert(d.doc.record(), id);
        }
    }
    let fields = spec.input.read_options();
    let mut pages = HashMap::new();
    for (source, records) in &wanted {
        let path = input_path(source, working_dir);
        let files = neardup_io::discover(std::slice::from_ref(&path), &[])
            .with_context(|| format!("cannot find the input \"{source}\" again"))?;
        for file in &files {
            for record in RecordReader::open(file, &fields, OnReadError::Fail)? {
                if let Record::Doc(d) = record?
                    && records.get(&d.doc.record()) == Some(&d.id.as_str())
                    && !pages.contains_key(&d.id)
                {
                    let (text, stripped) = page_text(boilerplate, &d, &mut lines, &mut content);
                    let left_out = match stripped {
                        Some(s) if s.lines > 0 => lines_left_out(&d.text, text),
                        _ => Vec::new(),
                    };
                    pages.insert(d.id.clone(), PageText { text: text.to_string(), left_out });
                }
            }
        }
    }
    Ok(pages)
}

#[cfg(test)]
pub(crate) mod tests {
    use neardup_core::DocId;

    use super::*;

    #[test]
    fn left_out_lines_are_those_not_kept_in_order() {
        let text = "Home\nTitle\nBody one\nHome\nBody two\nFooter";
        let left = lines_left_out(text, "Body one\nHome\nBody two\n");
        assert_eq!(left, ["Home", "Title", "Footer"]);
        assert!(lines_left_out(text, text).is_empty());
    }

    fn labels(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    /// A row of `documents/` for document `id` in the cluster `cluster` (kept when it names
    /// it).
    pub(crate) fn doc(id: &str, cluster: &str) -> DocumentRow {
        DocumentRow {
            doc: neardup_core::DocId::new(0, 1),
            id: Some(id.into()),
            source: "x".into(),
            decision: if id == cluster { Decision::Keep } else { Decision::Remove },
            cluster: Some(cluster.into()),
            cluster_size: None,
            duplicate_of: None,
            duplicate_of_run: None,
            reason: None,
            detail: None,
            verified_with_kept: None,
            features: None,
            chars: None,
            web: None,
            repeated: None,
        }
    }

    #[test]
    fn perfect_clusters_score_one() {
        let truth = Truth::Clusters(labels(&[("a", "1"), ("b", "1"), ("c", "2"), ("d", "3")]));
        let docs = [doc("a", "a"), doc("b", "a"), doc("c", "c"), doc("d", "d")];
        let r = evaluate(&truth, &docs, &[], None, None, 10);
        assert_eq!((r.true_pairs, r.predicted_pairs, r.true_positives), (1, 1, 1));
        assert_eq!((r.precision, r.recall, r.f1), (Some(1.0), Some(1.0), Some(1.0)));
        assert_eq!(r.adjusted_rand_index, Some(1.0));
    }

    #[test]
    fn scores_follow_the_contingency_table() {
        // Truth {a,b,c} {d,e}; predicted {a,b} {c,d,e}.
        let truth =
            Truth::Clusters(labels(&[("a", "1"), ("b", "1"), ("c", "1"), ("d", "2"), ("e", "2")]));
        let docs = [doc("a", "a"), doc("b", "a"), doc("c", "c"), doc("d", "c"), doc("e", "c")];
        let r = evaluate(&truth, &docs, &[], None, None, 10);
        // True pairs: ab ac bc de = 4; predicted: ab cd ce de = 4; both: ab de = 2.
        assert_eq!((r.true_pairs, r.predicted_pairs, r.true_positives), (4, 4, 2));
        assert_eq!(r.false_positive_count, 2);
        assert!((r.f1.unwrap() - 0.5).abs() < 1e-12);
        // ARI: index 2, expected 4 * 4 / 10 = 1.6, max 4: (2 - 1.6) / (4 - 1.6).
        let ari = r.adjusted_rand_index.unwrap();
        assert!((ari - 0.4 / 2.4).abs() < 1e-12, "{ari}");
    }

    #[test]
    fn group_scores_count_the_pairs_touching_the_group() {
        // Truth {a,b,c} {d,e}; predicted {a,b} {c,d,e}; group x = {c, d}, y = the rest.
        let truth =
            Truth::Clusters(labels(&[("a", "1"), ("b", "1"), ("c", "1"), ("d", "2"), ("e", "2")]));
        let mut docs = [doc("a", "a"), doc("b", "a"), doc("c", "c"), doc("d", "c"), doc("e", "c")];
        for d in &mut docs {
            if d.decision == Decision::Remove {
                d.duplicate_of = d.cluster.clone();
            }
        }
        let groups = labels(&[("a", "y"), ("b", "y"), ("c", "x"), ("d", "x"), ("e", "y")]);
        let r = evaluate(&truth, &docs, &[], None, Some(&groups), 10);
        let x = &r.by_group[0];
        assert_eq!(x.group, "x");
        // True pairs with c or d: ac bc de = 3; predicted: cd ce de = 3; both: de = 1.
        assert_eq!((x.documents, x.true_pairs, x.predicted_pairs, x.true_positives), (2, 3, 3, 1));
        assert_eq!((x.precision, x.recall), (Some(1.0 / 3.0), Some(1.0 / 3.0)));
        // d and e are removed for c, which the truth puts elsewhere; b rightly for a.
        assert_eq!((x.removed, x.removed_wrongly), (1, 1));
        let y = &r.by_group[1];
        assert_eq!((y.removed, y.removed_wrongly), (2, 1));
        assert_eq!((r.removed, r.removed_wrongly), (3, 2));
    }

    #[test]
    fn removed_counts_only_labelled_documents() {
        // Truth labels a and b only; the run also removed u and v, which it does not label.
        let truth = Truth::Clusters(labels(&[("a", "1"), ("b", "1")]));
        let mut docs = [doc("a", "a"), doc("b", "a"), doc("u", "a"), doc("v", "a")];
        for d in &mut docs {
            if d.decision == Decision::Remove {
                d.duplicate_of = d.cluster.clone();
            }
        }
        let r = evaluate(&truth, &docs, &[], None, None, 10);
        assert_eq!((r.removed, r.removed_wrongly), (1, 0));
    }

    #[test]
    fn labelled_pairs_count_only_what_is_labelled() {
        let mut labelled = HashMap::new();
        labelled.insert(ordered("a", "b"), true);
        labelled.insert(ordered("c", "d"), false);
        labelled.insert(ordered("a", "c"), true);
        let docs = [doc("a", "a"), doc("b", "a"), doc("c", "c"), doc("d", "c")];
        let r = evaluate(&Truth::Pairs(labelled), &docs, &[], None, None, 10);
        assert_eq!((r.true_pairs, r.predicted_pairs, r.true_positives), (2, 2, 1));
        assert_eq!(r.false_positive_count, 1);
        assert_eq!(r.adjusted_rand_index, None);
    }

    #[test]
    fn a_repeated_id_never_stands_for_the_id_whatever_the_row_order() {
        let truth = Truth::Clusters(labels(&[("a", "1"), ("b", "1"), ("c", "2")]));
        let mut repeat = doc("a", "a");
        (repeat.doc, repeat.decision, repeat.cluster) = (DocId::new(0, 9), Decision::Reject, None);
        repeat.reason = Some(neardup_io::Reason::DuplicateId);
        let owner = DocumentRow { doc: DocId::new(0, 1), ..doc("a", "a") };
        let rows = [doc("b", "a"), doc("c", "c")];
        let clean = evaluate(
            &truth,
            &[owner.clone(), rows[0].clone(), rows[1].clone()],
            &[],
            None,
            None,
            0,
        );
        assert_eq!((clean.predicted_pairs, clean.true_positives), (1, 1));
        for docs in [
            [owner.clone(), repeat.clone(), rows[0].clone(), rows[1].clone()],
            [repeat.clone(), rows[0].clone(), owner.clone(), rows[1].clone()],
        ] {
            assert_eq!(id_owners(&docs)["a"].doc, DocId::new(0, 1));
            assert_eq!(evaluate(&truth, &docs, &[], None, None, 0), clean);
        }
    }

    #[test]
    fn scores_without_pairs_to_count_are_undefined() {
        // Nothing true, nothing predicted; false positives only; nothing predicted.
        assert_eq!(pair_scores(0, 0, 0), (None, None, None));
        assert_eq!(pair_scores(0, 0, 3), (Some(0.0), None, None));
        assert_eq!(pair_scores(0, 4, 0), (None, Some(0.0), Some(0.0)));
        // With both, F1 is the harmonic mean: precision 2/3, recall 1/2.
        let (p, r, f1) = pair_scores(2, 4, 3);
        let (p, r, f1) = (p.unwrap(), r.unwrap(), f1.unwrap());
        assert!((f1 - 2.0 * p * r / (p + r)).abs() < 1e-12, "{p} {r} {f1}");
        let negatives = Truth::Pairs([(ordered("a", "b"), false)].into_iter().collect());
        let docs = [doc("a", "a"), doc("b", "a")];
        let r = evaluate(&negatives, &docs, &[], None, None, 10);
        assert_eq!(
            (r.precision, r.recall, r.f1, r.false_positive_count),
            (Some(0.0), None, None, 1)
        );
    }
}

//! `neardup explain`: why two documents were, or were not, matched.
//!
//! Both documents go through the run's normalisation, features and signature; the
//! explanation gives their similarity, the bands (MinHash) or tables (SimHash) they share,
//! whether that makes them candidates and whether verification passes, samples of the
//! features they share and do not share, and the differing passages side by side.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use neardup_job::{IdfWeights, JobSpec, Method};
use serde::Serialize;

use crate::error::UsageError;
use crate::eval::command::read_summary;
use crate::eval::{id_owners, read_pages};
use crate::settings::{MethodArg, Overrides, job_spec};

mod decisions;
mod method;

/// Features listed per sample.
const SAMPLE: usize = 12;
/// Text units compared at most per document by the side-by-side diff.
const MAX_DIFF_UNITS: usize = 4000;
/// Width of each column of the side-by-side diff.
const COLUMN: usize = 56;

/// A document to explain.
#[derive(Clone, Debug)]
pub struct Doc {
    /// Its id (or file name).
    pub id: String,
    /// Its text, as the run analysed it (boilerplate left out).
    pub text: String,
    /// The lines the run's boilerplate left out of it, in page order.
    pub left_out: Vec<String>,
}

/// Why two documents were or were not matched.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The two ids.
    pub ids: [String; 2],
    /// Characters after normalisation.
    pub normalized_chars: [usize; 2],
    /// Equal after normalisation (exact duplicates).
    pub identical_normalized: bool,
    /// What the features are (`5-grams (Han 2-grams)`: see
    /// [`neardup_text::FeatureConfig::describe`]).
    pub feature_kind: String,
    /// Distinct features.
    pub features: [usize; 2],
    /// Features both have.
    pub shared_features: usize,
    /// Jaccard similarity of the feature sets.
    pub jaccard: f64,
    /// Whether each has enough features to be matched at all.
    pub matchable: [bool; 2],
    /// Samples of shared features, and of those only in the first and only in the second.
    pub samples: [Vec<String>; 3],
    /// The method's view.
    pub method: MethodView,
    /// Differing passages: `(first's, second's)`.
    pub differences: Vec<(Vec<String>, Vec<String>)>,
    /// The lines of each page that the run's boilerplate left out (web pages of a run only):
    /// learned template lines, and the lines outside the page's main text.
    pub left_out: [Vec<String>; 2],
    /// The paragraphs of each that the run left out as repeated (`dedup --paragraphs`).
    pub repeated_paragraphs: [Vec<RepeatedParagraph>; 2],
}

/// A paragraph a run left out of a kept document: a document kept before it holds it.
#[derive(Clone, Debug, Serialize)]
pub struct RepeatedParagraph {
    /// Its block number, from 0.
    pub paragraph: u32,
    /// Its characters, as compared.
    pub chars: u32,
    /// The document that holds it first (and keeps it).
    pub first_id: String,
    /// With `--index`: the earlier run of that document (`None`: this run).
    pub first_run: Option<String>,
    /// Its start, as the document has it.
    pub excerpt: String,
}

/// The paragraphs of `doc` (the document with `doc_id` in the run) in `left_out`.
fn repeated_of(
    doc: &Doc,
    doc_id: Option<neardup_core::DocId>,
    left_out: &[neardup_io::ParagraphRow],
) -> Vec<RepeatedParagraph> {
    left_out
        .iter()
        .filter(|p| Some(p.doc) == doc_id)
        .map(|p| {
            let (start, end) = (p.offset as usize, (p.offset + p.len) as usize);
            let text = doc.text.get(start..end.min(doc.text.len())).unwrap_or_default();
            RepeatedParagraph {
                paragraph: p.paragraph,
                chars: p.chars,
                first_id: p.first_id.clone(),
                first_run: p.first_run.clone(),
                excerpt: text.chars().take(60).collect(),
            }
        })
        .collect()
}

/// What the LSH method makes of the pair.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum MethodView {
    /// MinHash with bands.
    Minhash {
        /// Bands.
        bands: u32,
        /// Rows per band.
        rows: u32,
        /// Permutations of the signature (bands use `bands x rows` of them).
        permutations: usize,
        /// Signature estimate of Jaccard.
        estimate: f64,
        /// Bands (numbered from 0) on which the signatures agree.
        agreeing_bands: Vec<u32>,
        /// Threshold of verification.
        threshold: f64,
        /// Whether verification uses the exact Jaccard.
        exact: bool,
        /// Containment of the smaller feature set in the larger (estimated from the
        /// estimate and the feature counts, or exact), when `minhash.containment` is on.
        containment: Option<f64>,
        /// The containment rule, when on.
        containment_rule: Option<neardup_core::Containment>,
        /// The measure that verifies the pair (or would, for one that fails).
        measure: neardup_core::Measure,
        /// Candidates: sharing at least one band.
        candidate: bool,
        /// Passes verification.
        verified: bool,
    },
    /// SimHash with block tables.
    Simhash {
        /// Blocks.
        blocks: u32,
        /// Tables.
        tables: usize,
        /// The fingerprints, in hex.
        fingerprints: [String; 2],
        /// Hamming distance.
        hamming: u32,
        /// Tables on which the keys agree.
        shared_tables: usize,
        /// Maximum distance of verification.
        max_distance: u32,
        /// Candidates: sharing at least one table.
        candidate: bool,
        /// Passes verification.
        verified: bool,
        /// A note on the weights, when they differ from the run's.
        note: Option<String>,
    },
}

/// Explains `a` and `b` under `spec`; `bands_rows` or `blocks` are the run's resolved
/// parameters when known.
pub fn explain(
    spec: &JobSpec,
    bands_rows: Option<(u32, u32)>,
    blocks: Option<u32>,
    weights: Option<&IdfWeights>,
    a: &Doc,
    b: &Doc,
) -> anyhow::Result<Explanation> {
    let analyzer = neardup_job::Signer::spec_analyzer(spec);
    let (norm_a, _) = analyzer.texts(&a.text);
    let (norm_b, _) = analyzer.texts(&b.text);
    let la = analyzer.labelled(&a.text);
    let lb = analyzer.labelled(&b.text);
    // Hashes with their capped counts (SimHash weights), as signing takes them.
    let mut scratch = neardup_text::AnalyzeScratch::default();
    let fa = analyzer.analyze(&a.text, &mut scratch).features;
    let fb = analyzer.analyze(&b.text, &mut scratch).features;
    let (shared, only_a, only_b) = split_features(&la, &lb);
    let shared_features = shared.len();
    let union = la.len() + lb.len() - shared_features;
    let jaccard = if union == 0 { 1.0 } else { shared_features as f64 / union as f64 };
    let sample = |mut v: Vec<String>| {
        v.sort_unstable();
        v.truncate(SAMPLE);
        v
    };
    let min_features = spec.features.min_features.max(1);
    let method = match spec.method {
        Method::Minhash => method::minhash_view(spec, bands_rows, &fa, &fb)?,
        Method::Simhash => method::simhash_view(spec, blocks, weights, &fa, &fb)?,
    };
    Ok(Explanation {
        ids: [a.id.clone(), b.id.clone()],
        normalized_chars: [norm_a.chars().count(), norm_b.chars().count()],
        identical_normalized: norm_a == norm_b,
        feature_kind: analyzer.extractor().config().describe(),
        features: [la.len(), lb.len()],
        shared_features,
        jaccard,
        matchable: [la.len() >= min_features, lb.len() >= min_features],
        samples: [sample(shared), sample(only_a), sample(only_b)],
        method,
        differences: differences(&a.text, &b.text),
        left_out: [a.left_out.clone(), b.left_out.clone()],
        repeated_paragraphs: [Vec::new(), Vec::new()],
    })
}

/// The labels of the features both lists (sorted by hash) hold, and of those only the
/// first or only the second holds.
fn split_features(
    la: &[(u64, String)],
    lb: &[(u64, String)],
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut shared, mut only_a, mut only_b) = (Vec::new(), Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < la.len() || j < lb.len() {
        match (la.get(i), lb.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                shared.push(x.1.clone());
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                only_a.push(x.1.clone());
                i += 1;
            }
            (Some(_), Some(y)) | (None, Some(y)) => {
                only_b.push(y.1.clone());
                j += 1;
            }
            (Some(x), None) => {
                only_a.push(x.1.clone());
                i += 1;
            }
            (None, None) => unreachable!("the loop condition"),
        }
    }
    (shared, only_a, only_b)
}

/// Splits text into lines, or sentences when it is one long line.
fn units(text: &str) -> Vec<String> {
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() > 3 {
        return lines;
    }
    let mut out = Vec::new();
    for line in lines {
        let mut current = String::new();
        for c in line.chars() {
            current.push(c);
            if matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '；') {
                out.push(std::mem::take(&mut current).trim().to_string());
            }
        }
        if !current.trim().is_empty() {
            out.push(current.trim().to_string());
        }
    }
    out.retain(|u| !u.is_empty());
    out
}

/// The passages that differ, by a longest-common-subsequence alignment of text units.
fn differences(a: &str, b: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let (x, y) = (units(a), units(b));
    if x.len() > MAX_DIFF_UNITS || y.len() > MAX_DIFF_UNITS {
        return vec![(vec!["(too long to align)".into()], vec!["(too long to align)".into()])];
    }
    let (n, m) = (x.len(), y.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] =
                if x[i] == y[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut hunks = Vec::new();
    let mut hunk: (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    while i < n || j < m {
        if i < n && j < m && x[i] == y[j] {
            if !hunk.0.is_empty() || !hunk.1.is_empty() {
                hunks.push(std::mem::take(&mut hunk));
            }
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            hunk.1.push(y[j].clone());
            j += 1;
        } else {
            hunk.0.push(x[i].clone());
            i += 1;
        }
    }
    if !hunk.0.is_empty() || !hunk.1.is_empty() {
        hunks.push(hunk);
    }
    hunks
}

/// Display width: East Asian wide characters take two columns.
fn width(c: char) -> usize {
    if matches!(c as u32, 0x1100..=0x115F | 0x2E80..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x3FFFD)
    {
        2
    } else {
        1
    }
}

/// Wraps text into lines of at most `COLUMN` display columns.
fn wrap(text: &str) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        if used + width(c) > COLUMN {
            lines.push(String::new());
            used = 0;
        }
        lines.last_mut().expect("one line at least").push(c);
        used += width(c);
    }
    lines
}

fn pad(line: &str) -> String {
    let used: usize = line.chars().map(width).sum();
    format!("{line}{}", " ".repeat(COLUMN.saturating_sub(used)))
}

/// Lines left out shown per document (`--json` has them all).
const LEFT_OUT_SHOWN: usize = 12;

/// Prints an explanation for people.
///
/// # Errors
/// When `out` fails.
pub fn print(out: &mut dyn Write, e: &Explanation) -> std::io::Result<()> {
    writeln!(out, "A  {}\nB  {}", e.ids[0], e.ids[1])?;
    writeln!(
        out,
        "normalised       {} and {} characters{}",
        e.normalized_chars[0],
        e.normalized_chars[1],
        if e.identical_normalized { ", identical: exact duplicates" } else { "" }
    )?;
    writeln!(
        out,
        "features         {} and {} {}, {} shared: Jaccard {:.4}",
        e.features[0], e.features[1], e.feature_kind, e.shared_features, e.jaccard
    )?;
    for (i, ok) in e.matchable.iter().enumerate() {
        if !ok {
            writeln!(
                out,
                "                 {} has too few features to be matched (only exact duplicates)",
                ["A", "B"][i]
            )?;
        }
    }
    method::print_method(out, &e.method)?;
    for (title, sample) in ["shared features", "only in A", "only in B"].iter().zip(&e.samples) {
        let shown: Vec<String> = sample.iter().map(|f| format!("{f:?}")).collect();
        let shown = if shown.is_empty() { "none".to_string() } else { shown.join(" ") };
        writeln!(out, "{title:<16} {shown}")?;
    }
    if e.left_out.iter().any(|l| !l.is_empty()) {
        writeln!(
            out,
            "\nleft out as boilerplate (template lines and lines outside the main text): {} and {} lines",
            e.left_out[0].len(),
            e.left_out[1].len()
        )?;
        for (name, lines) in ["A", "B"].iter().zip(&e.left_out) {
            for line in lines.iter().take(LEFT_OUT_SHOWN) {
                let shown = wrap(line).into_iter().next().unwrap_or_default();
                let more = if shown.len() < line.len() { " ..." } else { "" };
                writeln!(out, "  {name}  {shown}{more}")?;
            }
            if lines.len() > LEFT_OUT_SHOWN {
                writeln!(
                    out,
                    "  {name}  ... and {} more (--json lists all)",
                    lines.len() - LEFT_OUT_SHOWN
                )?;
            }
        }
    }
    if e.repeated_paragraphs.iter().any(|p| !p.is_empty()) {
        let [a, b] = &e.repeated_paragraphs;
        writeln!(
            out,
            "\nparagraphs left out as repeated (a document kept before holds them): {} and {}",
            a.len(),
            b.len()
        )?;
        for (name, paragraphs) in ["A", "B"].iter().zip(&e.repeated_paragraphs) {
            for p in paragraphs {
                let run = p.first_run.as_ref().map(|r| format!(" of run {r}")).unwrap_or_default();
                writeln!(
                    out,
                    "  {name}  paragraph {} ({} characters, first in {}{run}): {} ...",
                    p.paragraph, p.chars, p.first_id, p.excerpt
                )?;
            }
        }
    }
    if e.differences.is_empty() {
        writeln!(out, "\nno differing passages")?;
    } else {
        writeln!(out, "\ndiffering passages ({}):", e.differences.len())?;
        writeln!(out, "{} | B", pad("A"))?;
        for (left, right) in &e.differences {
            writeln!(out, "{}-+-{}", "-".repeat(COLUMN), "-".repeat(COLUMN))?;
            let l: Vec<String> = left.iter().flat_map(|u| wrap(u)).collect();
            let r: Vec<String> = right.iter().flat_map(|u| wrap(u)).collect();
            for k in 0..l.len().max(r.len()) {
                let a = l.get(k).map_or("", String::as_str);
                let b = r.get(k).map_or("", String::as_str);
                writeln!(out, "{} | {b}", pad(a))?;
            }
        }
    }
    Ok(())
}

/// Arguments of `neardup explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A run's output folder: A and B are document ids of that run, explained under its
    /// settings. Without it, A and B are text files, explained under --job or the defaults.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// The first document.
    pub a: String,
    /// The second document.
    pub b: String,
    /// Job file (without --run).
    #[arg(long, conflicts_with = "run")]
    pub job: Option<PathBuf>,
    /// Method (without --run).
    #[arg(long, value_enum, conflicts_with = "run")]
    pub method: Option<MethodArg>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `neardup explain`: explains the pair and prints the explanation.
///
/// # Errors
/// [`UsageError`] for documents that are not in the run or files that cannot be read;
/// the errors of reading the run.
pub fn run(args: &ExplainArgs) -> anyhow::Result<Explanation> {
    let mut out = crate::stdout::stdout();
    let explanation = match &args.run {
        Some(run) => {
            let summary = read_summary(run)?;
            let spec = &summary.config;
            let resolved = &summary.resolved;
            let docs = neardup_io::read_documents(&run.join("documents"))?;
            let ids: std::collections::HashSet<&str> = [args.a.as_str(), args.b.as_str()].into();
            let owners = id_owners(&docs);
            let learned = summary.boilerplate.is_some();
            let boilerplate = neardup_job::read_boilerplate(run, spec, learned)?;
            let working_dir = summary.working_dir.as_deref().map(std::path::Path::new);
            let mut pages = read_pages(&docs, spec, &ids, boilerplate.as_ref(), working_dir)?;
            let mut take = |id: &str| -> anyhow::Result<Doc> {
                let page = pages.remove(id).ok_or_else(|| {
                    // A record the run rejected has no text to compare: say why it has none.
                    let owner = owners.get(id);
                    let rejected = owner.filter(|r| r.decision == neardup_io::Decision::Reject);
                    UsageError::new(match rejected {
                        Some(r) => format!(
                            "the run rejected the record with id \"{id}\" ({}: {}): it has no text to compare",
                            r.reason.map_or("", |reason| reason.as_str()),
                            r.detail.as_deref().unwrap_or("")
                        ),
                        None => format!("no document with id \"{id}\" in the run's inputs"),
                    })
                })?;
                Ok(Doc { id: id.to_string(), text: page.text, left_out: page.left_out })
            };
            let (a, b) = (take(&args.a)?, take(&args.b)?);
            let weights = neardup_job::read_weights(Some(run), spec)?;
            let (bands_rows, blocks) = (resolved.bands.zip(resolved.rows), resolved.blocks);
            let mut e = explain(spec, bands_rows, blocks, weights.as_ref(), &a, &b)?;
            let left_out = neardup_io::read_paragraphs(&run.join("paragraphs"))?;
            let doc_id = |id: &str| owners.get(id).map(|row| row.doc);
            e.repeated_paragraphs = [
                repeated_of(&a, doc_id(&args.a), &left_out),
                repeated_of(&b, doc_id(&args.b), &left_out),
            ];
            if !args.json {
                let pairs = neardup_io::read_pairs(&run.join("pairs"))?;
                decisions::print(&mut out, &docs, &owners, &pairs, (&args.a, &args.b))?;
            }
            e
        }
        None => {
            let overrides = Overrides { method: args.method, ..Overrides::default() };
            let spec = job_spec(args.job.as_deref(), &overrides)?;
            let read = |name: &str| -> anyhow::Result<Doc> {
                let text = std::fs::read_to_string(name).map_err(|e| {
                    UsageError::new(format!(
                        "cannot read \"{name}\": {e} (without --run, give two text files)"
                    ))
                })?;
                Ok(Doc { id: name.to_string(), text, left_out: Vec::new() })
            };
            // Without a run, jieba's table is the one IDF source there is to read.
            let weights = neardup_job::read_weights(None, &spec)?;
            explain(&spec, None, None, weights.as_ref(), &read(&args.a)?, &read(&args.b)?)?
        }
    };
    if args.json {
        serde_json::to_writer_pretty(&mut out, &explanation)?;
        writeln!(out)?;
    } else {
        print(&mut out, &explanation)?;
    }
    Ok(explanation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_align_units() {
        let a = "One. Two. Three. Four.";
        let b = "One. Two changed. Three. Four. Five.";
        let d = differences(a, b);
        assert_eq!(
            d,
            vec![
                (vec!["Two.".to_string()], vec!["Two changed.".to_string()]),
                (vec![], vec!["Five.".to_string()])
            ]
        );
        assert!(differences(a, a).is_empty());
    }

    #[test]
    fn wide_characters_wrap_at_the_column() {
        let lines = wrap(&"字".repeat(40));
        assert_eq!(lines[0].chars().count(), COLUMN / 2);
    }

    #[test]
    fn an_edited_copy_is_explained_as_a_near_duplicate() {
        let base = "The quick brown fox jumps over the lazy dog near the river bank every morning at dawn.";
        let doc = |id: &str, text: String| Doc { id: id.into(), text, left_out: Vec::new() };
        let a = doc("a", format!("{base} It was a sunny day."));
        let b = doc("b", format!("{base} It was a rainy day."));
        let spec = JobSpec::default();
        let e = explain(&spec, None, None, None, &a, &b).unwrap();
        assert!(!e.identical_normalized);
        assert!(e.jaccard > 0.7 && e.jaccard < 1.0, "{}", e.jaccard);
        assert!(e.samples[1].iter().any(|f| f.contains("sunn")), "{:?}", e.samples[1]);
        assert!(matches!(e.method, MethodView::Minhash { bands: 16, rows: 8, .. }));
        assert_eq!(e.differences.len(), 1);
        let same = explain(&spec, None, None, None, &a, &a).unwrap();
        assert!(same.identical_normalized && same.jaccard == 1.0);
        assert!(matches!(same.method, MethodView::Minhash { candidate: true, verified: true, .. }));
    }
}

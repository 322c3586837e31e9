//! `neardup tune`: what LSH parameters do, and which ones suit labelled data.
//!
//! Without labels it shows, for MinHash bands and rows (given, or chosen from a
//! threshold), the probability of becoming a candidate as a function of Jaccard
//! similarity, the expected false-positive and false-negative rates around the threshold,
//! and the cost in bucket records per document; for SimHash blocks and distance, the
//! probability by Hamming distance and the tables per document. With labels it runs the job
//! over a grid of thresholds (or distances) and reports precision, recall and F1 of each,
//! marking the best.

use std::io::Write;
use std::path::PathBuf;

use neardup_core::{BlockLayout, Containment, LshParams};
use serde::Serialize;

use anyhow::Context;
use clap::Args;
use neardup_job::{JobConfig, Method, MinHashSpec, Topology};

use crate::error::UsageError;
use crate::eval::{Truth, evaluate};
use crate::settings::{MethodArg, Overrides, job_spec};

/// One point of a candidate-probability curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CurvePoint {
    /// Jaccard similarity (MinHash) or Hamming distance (SimHash).
    pub x: f64,
    /// Probability of becoming a candidate.
    pub probability: f64,
}

/// What a MinHash setting does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MinHashCurve {
    /// What the features are (`5-grams (Han 2-grams)`: see
    /// [`neardup_text::FeatureConfig::describe`]).
    pub features: String,
    /// Bands.
    pub bands: u32,
    /// Rows per band.
    pub rows: u32,
    /// The verification threshold.
    pub threshold: f64,
    /// The containment rule, when pairs below the threshold may also pass by it.
    pub containment: Option<Containment>,
    /// The Jaccard bands are chosen for ([`MinHashSpec::bands_jaccard`]): the threshold,
    /// or the containment rule's floor but not below 0.6. The rates below are taken at it.
    pub bands_jaccard: f64,
    /// Where the curve is steepest.
    pub knee: f64,
    /// Mean candidate probability of pairs below `bands_jaccard` (uniform similarity).
    pub false_positive_rate: f64,
    /// Mean miss probability of pairs at or above `bands_jaccard` (uniform similarity).
    pub false_negative_rate: f64,
    /// Bucket records per document.
    pub records_per_document: u32,
    /// The curve.
    pub curve: Vec<CurvePoint>,
}

impl MinHashCurve {
    /// The curve of `lsh` verified as `m` says (its threshold, and its containment rule),
    /// over the features `features` describes.
    pub fn of(lsh: LshParams, m: &MinHashSpec, features: String) -> Self {
        let curve = (0..=20)
            .map(|i| f64::from(i) / 20.0)
            .map(|s| CurvePoint { x: s, probability: lsh.candidate_probability(s) })
            .collect();
        let target = m.bands_jaccard();
        MinHashCurve {
            features,
            bands: lsh.bands(),
            rows: lsh.rows(),
            threshold: m.threshold(),
            containment: m.containment_rule(),
            bands_jaccard: target,
            knee: lsh.knee(),
            false_positive_rate: lsh.false_positive_area(target) / target,
            false_negative_rate: lsh.false_negative_area(target) / (1.0 - target),
            records_per_document: lsh.bands(),
            curve,
        }
    }
}

/// What a SimHash setting does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimHashCurve {
    /// What the features are (`4-grams (Han 2-grams)`: see
    /// [`neardup_text::FeatureConfig::describe`]).
    pub features: String,
    /// Blocks of the fingerprint.
    pub blocks: u32,
    /// The Hamming distance found exhaustively.
    pub max_distance: u32,
    /// Tables, which is bucket records per document.
    pub records_per_document: usize,
    /// Expected chance candidates per document in a corpus of `documents`.
    pub random_candidates_per_document: f64,
    /// The corpus size assumed.
    pub documents: u64,
    /// The curve by Hamming distance.
    pub curve: Vec<CurvePoint>,
}

impl SimHashCurve {
    /// The curve of `layout` for a corpus of `documents`, over the features `features`
    /// describes.
    pub fn of(layout: &BlockLayout, documents: u64, features: String) -> Self {
        let curve = (0..=2 * layout.max_distance() + 6)
            .map(|d| CurvePoint { x: f64::from(d), probability: layout.candidate_probability(d) })
            .collect();
        SimHashCurve {
            features,
            blocks: layout.blocks(),
            max_distance: layout.max_distance(),
            records_per_document: layout.tables(),
            random_candidates_per_document: layout.random_candidates_per_doc(documents),
            documents,
            curve,
        }
    }
}

fn bar(p: f64) -> String {
    let width = (p * 40.0).round() as usize;
    "#".repeat(width)
}

/// Prints a MinHash curve.
///
/// # Errors
/// When `out` fails.
pub fn print_minhash(out: &mut dyn Write, c: &MinHashCurve) -> std::io::Result<()> {
    writeln!(
        out,
        "MinHash of {}: {} bands x {} rows ({} permutations used), verified at Jaccard {}",
        c.features,
        c.bands,
        c.rows,
        c.bands * c.rows,
        c.threshold
    )?;
    let below = match c.containment {
        Some(rule) => {
            writeln!(
                out,
                "containment      pairs below it also pass with containment >= {} and Jaccard >= {}, \
                 when candidates: the rates are taken at {}, which the bands are chosen for",
                rule.min_containment, rule.min_jaccard, c.bands_jaccard
            )?;
            format!("Jaccard {}", c.bands_jaccard)
        }
        None => "the threshold".to_string(),
    };
    writeln!(out, "cost             {} bucket records per document", c.records_per_document)?;
    writeln!(out, "knee             {:.3} (candidate probability 1/2 near here)", c.knee)?;
    writeln!(
        out,
        "false positives  {:.2}% of pairs below {below} become candidates (then fail verification)",
        100.0 * c.false_positive_rate
    )?;
    writeln!(
        out,
        "false negatives  {:.2}% of pairs at or above {below} are missed",
        100.0 * c.false_negative_rate
    )?;
    writeln!(out, "\n Jaccard  P(candidate)")?;
    for p in &c.curve {
        let mark = if (p.x - c.threshold).abs() < 0.025 {
            "<- threshold"
        } else if c.containment.is_some_and(|r| (p.x - r.min_jaccard).abs() < 0.025) {
            "<- containment floor"
        } else if c.containment.is_some() && (p.x - c.bands_jaccard).abs() < 0.025 {
            "<- bands chosen for"
        } else {
            ""
        };
        writeln!(out, "  {:5.2}   {:8.4}  {:<40} {mark}", p.x, p.probability, bar(p.probability))?;
    }
    Ok(())
}

/// Prints a SimHash curve.
///
/// # Errors
/// When `out` fails.
pub fn print_simhash(out: &mut dyn Write, c: &SimHashCurve) -> std::io::Result<()> {
    writeln!(
        out,
        "SimHash of {}: 64 bits in {} blocks, pairs within Hamming distance {} are all found",
        c.features, c.blocks, c.max_distance
    )?;
    writeln!(
        out,
        "cost             {} tables = bucket records per document",
        c.records_per_document
    )?;
    writeln!(
        out,
        "chance          {:.2} unrelated candidates per document in {} documents",
        c.random_candidates_per_document, c.documents
    )?;
    writeln!(out, "\n distance  P(candidate)")?;
    for p in &c.curve {
        let mark = if p.x <= f64::from(c.max_distance) { "verified" } else { "fails verification" };
        writeln!(out, "  {:5}    {:8.4}  {:<40} {mark}", p.x, p.probability, bar(p.probability))?;
    }
    Ok(())
}

/// One setting tried on labelled data.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trial {
    /// The threshold (MinHash) or distance (SimHash).
    pub setting: f64,
    /// Bands x rows or blocks, as resolved.
    pub resolved: String,
    /// Pair precision, when the trial predicts a pair.
    pub precision: Option<f64>,
    /// Pair recall, when the truth has a pair.
    pub recall: Option<f64>,
    /// F1, when the truth has a pair.
    pub f1: Option<f64>,
    /// Verified and exact pairs found.
    pub pairs: u64,
    /// Unique candidates per document.
    pub candidates_per_document: f64,
}

/// A scratch folder for the trial runs, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new folder under the system temporary folder.
    ///
    /// # Errors
    /// When it cannot be created.
    pub fn new() -> std::io::Result<Self> {
        let dir = std::env::temp_dir().join(format!("neardup-tune-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }

    /// The folder for trial `i`.
    pub fn trial(&self, i: usize) -> PathBuf {
        self.0.join(format!("trial-{i}"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Without --input, the truth file is read as the documents: it must hold their text.
///
/// # Errors
/// [`UsageError`] when it holds labels only, saying to give the documents.
fn ensure_documents(
    args: &TuneArgs,
    truth_path: &std::path::Path,
    spec: &neardup_job::JobSpec,
) -> anyhow::Result<()> {
    if !args.input.is_empty() || holds_text(truth_path, spec)? {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "the truth \"{}\" holds labels but no \"{}\" field to read documents from: give the \
         documents with --input (or the field that holds their text with --text-field)",
        truth_path.display(),
        spec.input.text_field
    ))
    .into())
}

/// Whether the first record of the input at `path` has text in the job's text field (a
/// truth file given without --input is read as the documents too).
fn holds_text(path: &std::path::Path, spec: &neardup_job::JobSpec) -> anyhow::Result<bool> {
    let fields = spec.input.read_options();
    let files = neardup_io::discover(std::slice::from_ref(&path.to_path_buf()), &[])?;
    let Some(file) = files.first() else { return Ok(true) };
    let mut records = neardup_io::RecordReader::open(file, &fields, neardup_io::OnReadError::Fail)?;
    Ok(match records.next() {
        Some(Ok(neardup_io::Record::Reject(r))) => r.reason != neardup_io::Reason::MissingText,
        _ => true,
    })
}

/// Prints trials, marking the best F1 (ties: the earlier, that is the stricter setting).
///
/// # Errors
/// When `out` fails.
pub fn print_trials(out: &mut dyn Write, label: &str, trials: &[Trial]) -> std::io::Result<()> {
    let best = best(trials);
    writeln!(
        out,
        "{label:>9}  {:<10} {:>9} {:>7} {:>7} {:>9} {:>15}",
        "resolved", "precision", "recall", "F1", "pairs", "candidates/doc"
    )?;
    let cell = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.4}"));
    for (i, t) in trials.iter().enumerate() {
        writeln!(
            out,
            "{:>9}  {:<10} {:>9} {:>7} {:>7} {:>9} {:>15.2}{}",
            t.setting,
            t.resolved,
            cell(t.precision),
            cell(t.recall),
            cell(t.f1),
            t.pairs,
            t.candidates_per_document,
            if Some(i) == best { "  <- best F1" } else { "" }
        )?;
    }
    if trials.iter().any(|t| t.recall.is_none()) {
        writeln!(out, "recall and F1 are n/a: the truth labels no two documents alike")?;
    }
    // Every trial at the best F1 says nothing of settings beyond the grid.
    let all_tie = best.is_some_and(|b| trials.iter().all(|t| t.f1 == trials[b].f1));
    if all_tie && trials.len() > 1 {
        writeln!(out, "every setting of the grid gives the same F1")?;
    } else if trials.len() > 1 && (best == Some(0) || best == Some(trials.len() - 1)) {
        writeln!(out, "the best F1 is at the edge of the grid: try settings beyond it (--grid)")?;
    }
    Ok(())
}

/// The index of the trial with the best F1, when a trial has one.
pub fn best(trials: &[Trial]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, t) in trials.iter().enumerate() {
        let Some(f1) = t.f1 else { continue };
        if best.is_none_or(|(_, b)| f1 > b) {
            best = Some((i, f1));
        }
    }
    best.map(|(i, _)| i)
}

/// The settings tried by default: thresholds 0.5 to 0.95 (MinHash), distances 1 to 8
/// (SimHash).
pub fn default_grid(minhash: bool) -> Vec<f64> {
    if minhash {
        (10..=19).map(|i| f64::from(i) / 20.0).collect()
    } else {
        (1..=8).map(f64::from).collect()
    }
}

/// Arguments of `neardup tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Method to tune [default: the job file's, else minhash].
    #[arg(long, value_enum)]
    pub method: Option<MethodArg>,
    /// Job file to start from.
    #[arg(long)]
    pub job: Option<PathBuf>,
    /// Sets one job-file key over the job file (`--set features.ngram_chars=3`), as
    /// `neardup dedup --set` does. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// MinHash Jaccard threshold (bands and rows are chosen from it unless given).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// MinHash bands (with --rows).
    #[arg(long, requires = "rows")]
    pub bands: Option<u32>,
    /// MinHash rows per band (with --bands).
    #[arg(long, requires = "bands")]
    pub rows: Option<u32>,
    /// MinHash containment rule, as `minhash.containment` (0 is off; web pages get 0.85
    /// unless set): bands are chosen for its Jaccard floor, but not below 0.6.
    #[arg(long)]
    pub containment: Option<f64>,
    /// SimHash maximum Hamming distance.
    #[arg(long)]
    pub max_distance: Option<u32>,
    /// SimHash blocks [default: chosen from --documents].
    #[arg(long)]
    pub blocks: Option<u32>,
    /// Corpus size, for SimHash block choice and chance candidates.
    #[arg(long, default_value_t = 1_000_000)]
    pub documents: u64,
    /// Labelled documents (a cluster label per document): try a grid of settings on them.
    #[arg(long)]
    pub truth: Option<PathBuf>,
    /// The documents to run on, with text [default: the --truth file].
    #[arg(long, short = 'i')]
    pub input: Vec<PathBuf>,
    /// Settings to try: thresholds (MinHash) or distances (SimHash), comma-separated
    /// [default: 0.5 to 0.95 by 0.05, or 1 to 8].
    #[arg(long, value_delimiter = ',')]
    pub grid: Vec<f64>,
    /// Id field of the documents and the truth.
    #[arg(long, default_value = "id")]
    pub id_field: String,
    /// Text field of the documents.
    #[arg(long, default_value = "text")]
    pub text_field: String,
    /// Cluster label field of the truth.
    #[arg(long, default_value = "truth")]
    pub label_field: String,
    /// Worker threads for the trial runs [default: the number of CPUs].
    #[arg(long, short = 'w', value_parser = crate::settings::at_least_one)]
    pub workers: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `neardup tune`: shows what LSH parameters do, or with truth tries a grid of
/// settings and prints the trials (none without truth).
///
/// # Errors
/// [`UsageError`] for impossible parameters; the errors of the trial runs.
pub fn run(args: &TuneArgs) -> anyhow::Result<Vec<Trial>> {
    let overrides = Overrides {
        method: args.method,
        id_field: Some(args.id_field.clone()),
        text_field: Some(args.text_field.clone()),
        set: args.set.clone(),
        ..Overrides::default()
    };
    let mut spec = job_spec(args.job.as_deref(), &overrides)?;
    let minhash = spec.method == Method::Minhash;
    if let Some(c) = args.containment {
        if !minhash {
            return Err(UsageError::new("--containment is a MinHash setting").into());
        }
        if !(0.0..=1.0).contains(&c) {
            return Err(UsageError::new(format!("containment must be 0..=1, got {c}")).into());
        }
        spec.minhash.containment = Some(c);
    }
    let mut out = crate::stdout::stdout();
    let features = spec.feature_config().describe();
    let advice = han_advice(&spec);
    let Some(truth_path) = &args.truth else {
        print_curve(args, &spec, features, &mut out)?;
        if let Some(advice) = advice.filter(|_| !args.json) {
            writeln!(out, "\n{advice}")?;
        }
        return Ok(Vec::new());
    };
    let truth = Truth::read_clusters(truth_path, &args.id_field, &args.label_field)?;
    ensure_documents(args, truth_path, &spec)?;
    let inputs = if args.input.is_empty() { vec![truth_path.clone()] } else { args.input.clone() };
    let grid = if args.grid.is_empty() { default_grid(minhash) } else { args.grid.clone() };
    let workers =
        args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let topology = Topology::local(workers);
    neardup_job::check_workers(&topology).map_err(UsageError::new)?;
    let scratch = Scratch::new().context("cannot create a folder for the trial runs")?;
    let mut trials = Vec::new();
    for (i, &setting) in grid.iter().enumerate() {
        let mut trial_spec = spec.clone();
        if minhash {
            trial_spec.minhash.threshold = Some(setting);
            trial_spec.minhash.bands = None;
            trial_spec.minhash.rows = None;
        } else {
            if setting.fract() != 0.0 || setting < 0.0 {
                return Err(UsageError::new(format!(
                    "SimHash distances are whole numbers, got {setting}"
                ))
                .into());
            }
            trial_spec.simhash.max_distance = Some(setting as u32);
        }
        let config = JobConfig::new(trial_spec, &inputs, scratch.trial(i))
            .map_err(|e| UsageError::new(e.to_string()))?;
        let summary = neardup_job::run(&config, &topology)
            .map_err(|e| anyhow::Error::new(e).context(format!("the trial at {setting} failed")))?;
        let docs = neardup_io::read_documents(&config.output.join("documents"))?;
        let report = evaluate(&truth, &docs, &[], None, None, 0);
        let r = &summary.resolved;
        let resolved = match (r.bands, r.rows, r.blocks) {
            (Some(b), Some(rows), _) => format!("{b} x {rows}"),
            (_, _, Some(blocks)) => format!("{blocks} blocks"),
            _ => String::new(),
        };
        trials.push(Trial {
            setting,
            resolved,
            precision: report.precision,
            recall: report.recall,
            f1: report.f1,
            pairs: summary.counts.pairs,
            candidates_per_document: summary.lsh.candidates_per_document,
        });
    }
    if args.json {
        serde_json::to_writer_pretty(&mut out, &trials)?;
        writeln!(out)?;
    } else {
        let (label, method) =
            if minhash { ("threshold", "MinHash") } else { ("distance", "SimHash") };
        writeln!(out, "{method} of {features}")?;
        print_trials(&mut out, label, &trials)?;
        if let Some(advice) = advice {
            writeln!(out, "\n{advice}")?;
        }
    }
    Ok(trials)
}

/// Prints (or writes as JSON) what the settings of `spec`, with the flags over them, do:
/// MinHash's candidate probability by Jaccard similarity, or SimHash's by distance.
fn print_curve(
    args: &TuneArgs,
    spec: &neardup_job::JobSpec,
    features: String,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let minhash = spec.method == Method::Minhash;
    if minhash {
        let mut m = spec.minhash.clone();
        m.threshold = args.threshold.or(m.threshold);
        let lsh = match (args.bands, args.rows) {
            (Some(b), Some(r)) => neardup_core::LshParams::try_new(b, r),
            // As a run chooses them.
            _ => neardup_core::LshParams::choose(
                m.bands_jaccard(),
                m.num_perm,
                m.false_positive_weight,
                m.false_negative_weight,
            ),
        }
        .map_err(|e| UsageError::new(e.to_string()))?;
        let curve = MinHashCurve::of(lsh, &m, features);
        if args.json {
            serde_json::to_writer_pretty(&mut *out, &curve)?;
            writeln!(out)?;
        } else {
            print_minhash(out, &curve)?;
        }
    } else {
        let k = args.max_distance.unwrap_or(spec.simhash.distance());
        let layout = match args.blocks.or(spec.simhash.blocks) {
            Some(blocks) => neardup_core::BlockLayout::try_new(blocks, k),
            None => neardup_core::BlockLayout::choose(k, args.documents),
        }
        .map_err(|e| UsageError::new(e.to_string()))?;
        let curve = SimHashCurve::of(&layout, args.documents, features);
        if args.json {
            serde_json::to_writer_pretty(&mut *out, &curve)?;
            writeln!(out)?;
        } else {
            print_simhash(out, &curve)?;
        }
    }
    Ok(())
}

/// What the length of Han n-grams does, and how to compare lengths on labels, when the
/// features are character n-grams (where `features.han_ngram_chars` applies).
fn han_advice(spec: &neardup_job::JobSpec) -> Option<String> {
    let features = spec.feature_config();
    if features.kind != neardup_text::FeatureKind::CharNgrams {
        return None;
    }
    let han = features.han_ngram_chars?; // the spec's feature settings always give one
    Some(format!(
        "Han text (and Hiragana, Katakana) takes {han}-grams (features.han_ngram_chars).\n\
         Shorter ones find more edited Chinese copies, longer ones join fewer texts of one\n\
         formula: on the design sets of docs/quality.md, mean MinHash recall 0.939 at 2,\n\
         0.931 at 3, 0.924 at 4, 0.915 at 5. Compare lengths on your labels:\n\
         --truth FILE --set features.han_ngram_chars=3"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn han_n_gram_advice_names_the_key_and_how_to_compare_lengths() {
        let mut spec = neardup_job::JobSpec::default();
        let advice = han_advice(&spec).unwrap();
        assert!(advice.starts_with("Han text (and Hiragana, Katakana) takes 2-grams"), "{advice}");
        assert!(advice.contains("--set features.han_ngram_chars=3"), "{advice}");
        spec.features.han_ngram_chars = Some(4);
        assert!(han_advice(&spec).unwrap().contains("takes 4-grams"));
        spec.features.kind = neardup_text::FeatureKind::Words;
        assert_eq!(han_advice(&spec), None, "word features have no Han n-grams");
    }

    fn trial(setting: f64, f1: f64) -> Trial {
        Trial {
            setting,
            resolved: String::new(),
            precision: Some(1.0),
            recall: Some(f1),
            f1: Some(f1),
            pairs: 1,
            candidates_per_document: 0.0,
        }
    }

    fn printed(trials: &[Trial]) -> String {
        let mut out = Vec::new();
        print_trials(&mut out, "threshold", trials).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_grid_of_equal_f1_is_not_called_at_its_edge() {
        let tied = printed(&[trial(0.5, 0.9), trial(0.6, 0.9), trial(0.7, 0.9)]);
        assert!(tied.contains("every setting of the grid gives the same F1"), "{tied}");
        assert!(!tied.contains("edge of the grid"), "{tied}");
        let edge = printed(&[trial(0.5, 0.95), trial(0.6, 0.9), trial(0.7, 0.8)]);
        assert!(edge.contains("edge of the grid"), "{edge}");
        let inside = printed(&[trial(0.5, 0.8), trial(0.6, 0.9), trial(0.7, 0.8)]);
        assert!(!inside.contains("edge") && !inside.contains("same F1"), "{inside}");
    }

    #[test]
    fn minhash_curve_rates_match_the_areas() {
        let lsh = LshParams::try_new(9, 13).unwrap();
        let m = MinHashSpec { threshold: Some(0.8), ..MinHashSpec::default() };
        let c = MinHashCurve::of(lsh, &m, "5-grams".into());
        assert_eq!(c.records_per_document, 9);
        assert_eq!(c.bands_jaccard, 0.8);
        assert!(c.false_positive_rate > 0.0 && c.false_positive_rate < 0.1);
        assert!(c.false_negative_rate > 0.0 && c.false_negative_rate < 0.2);
        assert_eq!(c.curve.first().unwrap().probability, 0.0);
        assert_eq!(c.curve.last().unwrap().probability, 1.0);
        assert!(c.curve.windows(2).all(|w| w[0].probability <= w[1].probability));
    }

    #[test]
    fn with_containment_the_rates_are_taken_where_the_bands_are_chosen() {
        let lsh = LshParams::try_new(24, 4).unwrap();
        let plain =
            MinHashSpec { threshold: Some(0.8), containment: Some(0.0), ..MinHashSpec::default() };
        // The default floor, 0.4, is verified; the bands are chosen for 0.6.
        let rule = MinHashSpec { containment: Some(0.9), ..plain.clone() };
        let c = MinHashCurve::of(lsh, &rule, "5-grams (Han 2-grams)".into());
        assert_eq!(c.bands_jaccard, 0.6);
        let plain = MinHashCurve::of(lsh, &plain, "5-grams".into());
        // The same bands miss more pairs above 0.6 than above 0.8.
        assert!(c.false_negative_rate > plain.false_negative_rate);
        let mut text = Vec::new();
        print_minhash(&mut text, &c).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.starts_with("MinHash of 5-grams (Han 2-grams): 24 bands x 4 rows"), "{text}");
        assert!(text.contains("containment >= 0.9 and Jaccard >= 0.4"), "{text}");
        assert!(text.contains("rates are taken at 0.6"), "{text}");
        for (x, mark) in
            [("0.40", "containment floor"), ("0.60", "bands chosen for"), ("0.80", "threshold")]
        {
            let marked = |l: &&str| l.trim_start().starts_with(x) && l.ends_with(mark);
            assert!(text.lines().any(|l| marked(&l)), "{x} {mark}: {text}");
        }
    }

    #[test]
    fn simhash_curve_is_one_within_the_distance_and_falls_after() {
        let layout = BlockLayout::try_new(6, 3).unwrap();
        let c = SimHashCurve::of(&layout, 1_000_000, "4-grams (Han 2-grams)".into());
        assert_eq!(c.records_per_document, 20);
        let mut text = Vec::new();
        print_simhash(&mut text, &c).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.starts_with("SimHash of 4-grams (Han 2-grams): 64 bits in 6 blocks"),
            "{text}"
        );
        assert!(c.curve.iter().take(4).all(|p| p.probability == 1.0));
        assert!(c.curve[4].probability < 1.0);
        assert!(c.curve.windows(2).all(|w| w[0].probability >= w[1].probability));
    }

    #[test]
    fn the_best_trial_is_the_first_with_the_highest_f1() {
        let t = |f1: Option<f64>| Trial {
            setting: 0.0,
            resolved: String::new(),
            precision: None,
            recall: f1,
            f1,
            pairs: 0,
            candidates_per_document: 0.0,
        };
        assert_eq!(best(&[t(Some(0.2)), t(Some(0.5)), t(Some(0.5)), t(Some(0.1))]), Some(1));
        assert_eq!(best(&[t(None), t(Some(0.0)), t(Some(0.1))]), Some(2));
        // Without true pairs no trial has an F1 to be best at.
        assert_eq!(best(&[t(None), t(None)]), None);
        assert_eq!(best(&[]), None);
    }
}

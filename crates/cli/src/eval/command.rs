//! The `neardup eval` command: its flags, the run it reads and the report it prints.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use neardup_job::Summary;

use super::{Report, Truth, evaluate, read_labels, read_texts};
use crate::error::UsageError;

/// Arguments of `neardup eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Truth as a cluster label per document, in any input format (JSONL, Parquet; plain
    /// or compressed); documents with equal labels are duplicates.
    #[arg(long, required_unless_present = "truth_pairs", conflicts_with = "truth_pairs")]
    pub truth: Option<PathBuf>,
    /// Truth as labelled pairs: JSON Lines with `id_a`, `id_b` and `duplicate` (true or
    /// false; true when absent).
    #[arg(long)]
    pub truth_pairs: Option<PathBuf>,
    /// The output folder of the run to score.
    #[arg(long)]
    pub run: PathBuf,
    /// The truth's id field.
    #[arg(long, default_value = "id")]
    pub id_field: String,
    /// The truth's cluster label field.
    #[arg(long, default_value = "truth")]
    pub label_field: String,
    /// A field of the truth that groups documents (such as the transformation that made
    /// them): scores are also given per group, over the pairs with a document of the
    /// group (--truth only).
    #[arg(long, conflicts_with = "truth_pairs")]
    pub by: Option<String>,
    /// Truth of paragraph-level dedup (`dedup --paragraphs`): JSON Lines of `id` and
    /// `repeated` (the numbers of the document's blocks that repeat an earlier document's
    /// paragraph, from 0); scores the paragraphs the run left out, per `--by` group too.
    #[arg(long)]
    pub paragraph_truth: Option<PathBuf>,
    /// False-positive pairs to list.
    #[arg(long, default_value_t = 20)]
    pub show: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `neardup eval`: scores the run and prints the report.
///
/// # Errors
/// [`UsageError`] without truth; the errors of reading the run, its inputs or the truth.
pub fn run(args: &EvalArgs) -> anyhow::Result<Report> {
    // A path that is not there is a mistake on the command line (exit 2), as for dedup.
    let paths = [
        ("--run", Some(&args.run)),
        ("--truth", args.truth.as_ref()),
        ("--truth-pairs", args.truth_pairs.as_ref()),
        ("--paragraph-truth", args.paragraph_truth.as_ref()),
    ];
    for (flag, path) in paths {
        if let Some(path) = path
            && !neardup_io::remote::is_remote(path)
            && !path.exists()
        {
            return Err(
                UsageError::new(format!("{flag} \"{}\" does not exist", path.display())).into()
            );
        }
    }
    let summary = read_summary(&args.run)?;
    let spec = &summary.config;
    let docs = neardup_io::read_documents(&args.run.join("documents"))?;
    let pairs = neardup_io::read_pairs(&args.run.join("pairs"))?;
    let truth = match (&args.truth, &args.truth_pairs) {
        (Some(path), _) => Truth::read_clusters(path, &args.id_field, &args.label_field)?,
        (None, Some(path)) => Truth::read_pairs(path)?,
        (None, None) => return Err(UsageError::new("give --truth or --truth-pairs").into()),
    };
    let ids: std::collections::HashSet<&str> = match &truth {
        Truth::Clusters(labels) => labels.keys().map(String::as_str).collect(),
        Truth::Pairs(labelled) => labelled
            .iter()
            .filter(|(_, dup)| **dup)
            .flat_map(|((a, b), _)| [a.as_str(), b.as_str()])
            .collect(),
    };
    // The similarity bands need the texts; without them the other scores still stand.
    let learned = summary.boilerplate.is_some();
    let boilerplate = neardup_job::read_boilerplate(&args.run, spec, learned)?;
    let working_dir = summary.working_dir.as_deref().map(std::path::Path::new);
    let texts = match read_texts(&docs, spec, &ids, boilerplate.as_ref(), working_dir) {
        Ok(texts) => Some(texts),
        Err(e) => {
            eprintln!("note: no recall by similarity, the inputs cannot be read again: {e:#}");
            None
        }
    };
    let groups = match (&args.by, &args.truth) {
        (Some(field), Some(path)) => Some(read_labels(path, &args.id_field, field)?),
        _ => None,
    };
    let analyzer = neardup_job::Signer::spec_analyzer(spec);
    let texts = texts.as_ref().map(|t| (t, &analyzer));
    let mut report = evaluate(&truth, &docs, &pairs, texts, groups.as_ref(), args.show);
    if let Some(path) = &args.paragraph_truth {
        let left_out = neardup_io::read_paragraphs(&args.run.join("paragraphs"))?;
        report.paragraphs = super::paragraphs::score(path, args.by.as_deref(), &docs, &left_out)?;
    }
    if report.documents == 0 {
        // An empty table scores 1.0 everywhere; no score is the truth here.
        let truth_path = args.truth.as_ref().or(args.truth_pairs.as_ref()).expect("given");
        let named = match &truth {
            Truth::Clusters(labels) => labels.len(),
            Truth::Pairs(labelled) => {
                let ids = labelled.keys().flat_map(|(a, b)| [a.as_str(), b.as_str()]);
                ids.collect::<std::collections::HashSet<_>>().len()
            }
        };
        anyhow::bail!(
            "none of the {named} documents of the truth in \"{}\" are in the run \"{}\" (ids \
             are matched with the run's `id` column): is it the truth about this run's inputs?",
            truth_path.display(),
            args.run.display()
        );
    }
    let mut out = crate::stdout::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print(&mut out, &report)?;
    }
    Ok(report)
}

/// The summary of the run in `run`, for the settings it ran with.
///
/// # Errors
/// When `run` holds no summary this version reads, or its run signed documents under
/// another signature version: this version would analyse its texts differently (another
/// normalisation or feature rule) than the run did.
pub(crate) fn read_summary(run: &Path) -> anyhow::Result<Summary> {
    let summary = Summary::read(run).with_context(|| {
        format!("cannot use \"{}\" as a run: is it a neardup output folder?", run.display())
    })?;
    if summary.status != neardup_job::RunStatus::Success {
        anyhow::bail!(
            "the run in \"{}\" did not finish (its summary.json says \"{}\"): its documents/ and \
             pairs/ may be incomplete; run the job again to evaluate or explain it",
            run.display(),
            summary.status.as_str()
        );
    }
    if summary.signature_version != neardup_core::SIGNATURE_VERSION {
        anyhow::bail!(
            "the run in \"{}\" was made under signature version {}, and this neardup analyses \
             texts as version {} does (see CHANGELOG.md): run the job again to evaluate or \
             explain it",
            run.display(),
            summary.signature_version,
            neardup_core::SIGNATURE_VERSION
        );
    }
    Ok(summary)
}

/// The human form of an evaluation report.
pub fn print(out: &mut dyn Write, r: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "documents  {:>10}  ({} of the truth not in the run)",
        r.documents, r.missing_from_run
    )?;
    writeln!(
        out,
        "pairs      {:>10} true, {} predicted, {} both",
        r.true_pairs, r.predicted_pairs, r.true_positives
    )?;
    // A score without pairs to count is undefined: say so and why, rather than print 1.
    let scores = [
        ("precision", r.precision, "the run joins none of the pairs evaluated"),
        ("recall", r.recall, "the truth calls none of the pairs evaluated duplicates"),
        ("F1", r.f1, "it needs recall"),
    ];
    for (name, score, undefined) in scores {
        match score {
            Some(score) => writeln!(out, "{name:<10} {score:>10.4}")?,
            None => writeln!(out, "{name:<10} {:>10}  ({undefined})", "n/a")?,
        }
    }
    if let Some(ari) = r.adjusted_rand_index {
        writeln!(out, "ARI        {ari:>10.4}")?;
    }
    if r.recall_by_similarity.iter().any(|b| b.pairs > 0) {
        writeln!(out, "\nrecall by feature Jaccard of the true pairs")?;
        for b in r.recall_by_similarity.iter().filter(|b| b.pairs > 0) {
            let range = if b.from >= 1.0 {
                "1.0 (same features)".to_string()
            } else {
                format!("{:.1} - {:.1}", b.from, b.to)
            };
            writeln!(
                out,
                "  {range:<20} {:>8} pairs  {:>6.1}% found",
                b.pairs,
                100.0 * b.found as f64 / b.pairs as f64
            )?;
        }
    }
    if r.removed > 0 {
        writeln!(
            out,
            "removed    {:>10}  labelled documents ({} for a document the truth says differs)",
            r.removed, r.removed_wrongly
        )?;
    }
    if !r.by_group.is_empty() {
        let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
        writeln!(
            out,
            "\n{:<16} {:>6} {:>8} {:>9} {:>6} {:>6} {:>6} {:>8} {:>7}",
            "group", "docs", "true", "predicted", "P", "R", "F1", "removed", "wrongly"
        )?;
        for g in &r.by_group {
            writeln!(
                out,
                "{:<16} {:>6} {:>8} {:>9} {:>6} {:>6} {:>6} {:>8} {:>7}",
                g.group,
                g.documents,
                g.true_pairs,
                g.predicted_pairs,
                cell(g.precision),
                cell(g.recall),
                cell(g.f1),
                g.removed,
                g.removed_wrongly
            )?;
        }
    }
    if !r.paragraphs.is_empty() {
        let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
        writeln!(out, "\nparagraphs left out of kept documents (--paragraph-truth)")?;
        writeln!(
            out,
            "{:<16} {:>6} {:>9} {:>9} {:>8} {:>7} {:>7}",
            "group", "docs", "labelled", "left out", "correct", "P", "R"
        )?;
        for s in &r.paragraphs {
            writeln!(
                out,
                "{:<16} {:>6} {:>9} {:>9} {:>8} {:>7} {:>7}",
                s.group,
                s.documents,
                s.labelled,
                s.left_out,
                s.correct,
                cell(s.precision),
                cell(s.recall)
            )?;
        }
    }
    writeln!(out, "\nfalse positives: {} predicted pairs", r.false_positive_count)?;
    if !r.false_positive_pairs.is_empty() {
        writeln!(out, "  verified pairs the truth rejects, most similar first:")?;
        for p in &r.false_positive_pairs {
            writeln!(out, "  {:.3} {:<5} {}  {}", p.similarity, p.kind, p.id_a, p.id_b)?;
        }
    }
    Ok(())
}

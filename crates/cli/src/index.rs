//! `neardup index`: show an index of earlier runs, forget documents, compact it.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;
use neardup_io::index::{Manifest, compact, forget};

use crate::error::UsageError;

/// `neardup index` subcommands.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Print the index's settings and generations.
    Show {
        /// The index folder.
        #[arg(long)]
        index: PathBuf,
    },
    /// Take documents out of the index (taken-down pages, say), so they no longer match
    /// new copies. A listed document that was kept takes its cluster's removed members
    /// with it.
    Forget {
        /// The index folder.
        #[arg(long)]
        index: PathBuf,
        /// A text file of document ids, one per line.
        #[arg(long)]
        ids: PathBuf,
    },
    /// Merge the index's generations into one segment, so a lookup opens one part per key
    /// partition instead of one per run; drops the key rows of forgotten documents and
    /// the folders of failed runs. Decisions do not change.
    Compact {
        /// The index folder.
        #[arg(long)]
        index: PathBuf,
    },
}

/// An index command's error: a folder without an index is a usage error (exit 2).
fn usage_if_no_index(e: neardup_io::Error) -> anyhow::Error {
    match e {
        neardup_io::Error::NoIndex { .. } => UsageError::new(e.to_string()).into(),
        e => e.into(),
    }
}

/// Runs `neardup index ...`.
///
/// # Errors
/// [`UsageError`] when there is no index or the id list cannot be read; the index's
/// errors otherwise.
pub fn run(command: &IndexCommand) -> anyhow::Result<()> {
    let mut out = crate::stdout::stdout();
    match command {
        IndexCommand::Show { index } => {
            let Some(m) = Manifest::load(index)? else {
                return Err(usage_if_no_index(neardup_io::Error::NoIndex { path: index.clone() }));
            };
            writeln!(
                out,
                "index {} (format {}, neardup {})",
                index.display(),
                m.format,
                m.neardup_version
            )?;
            writeln!(
                out,
                "{} generation(s) in {} segment(s), {} key partitions",
                m.generations.len(),
                m.segments().len(),
                m.partitions
            )?;
            writeln!(
                out,
                "{:>10}  {:<24} {:>12} {:>12} {:>12}  folder",
                "generation", "run", "documents", "keys", "paragraphs"
            )?;
            for g in &m.generations {
                // "-": a run without --paragraphs, whose paragraphs later runs cannot leave out.
                let held = g.paragraphs.map_or_else(|| "-".to_string(), |n| n.to_string());
                writeln!(
                    out,
                    "{:>10}  {:<24} {:>12} {:>12} {:>12}  {}",
                    g.number, g.run, g.documents, g.keys, held, g.folder
                )?;
            }
            writeln!(out, "settings:")?;
            for (k, v) in &m.settings {
                writeln!(out, "  {k} = {v}")?;
            }
        }
        IndexCommand::Forget { index, ids } => {
            let text = std::fs::read_to_string(ids).map_err(|e| {
                UsageError::new(format!("cannot read the id list \"{}\": {e}", ids.display()))
            })?;
            let ids: std::collections::BTreeSet<String> =
                text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
            let report = forget(index, &ids).map_err(usage_if_no_index)?;
            if let Some(taken) = &report.lock_taken_over {
                eprintln!("warning: {taken}");
            }
            writeln!(
                out,
                "forgot {} listed document(s) and {} member(s) of their clusters; {} id(s) not in the index",
                report.listed, report.with_their_kept, report.unknown_ids
            )?;
        }
        IndexCommand::Compact { index } => {
            let started = std::time::Instant::now();
            let report = compact(index).map_err(usage_if_no_index)?;
            if let Some(taken) = &report.lock_taken_over {
                eprintln!("warning: {taken}");
            }
            let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
            match &report.folder {
                Some(folder) => writeln!(
                    out,
                    "merged {} segment(s) of {} generation(s) into {folder}: {} documents, {} -> {} key rows, {:.1} -> {:.1} MiB in {:.1} s",
                    report.segments_before,
                    report.generations,
                    report.documents,
                    report.keys_before,
                    report.keys_after,
                    mib(report.bytes_before),
                    mib(report.bytes_after),
                    started.elapsed().as_secs_f64()
                )?,
                None => writeln!(
                    out,
                    "nothing to merge: {} segment(s), no forgotten documents",
                    report.segments_before
                )?,
            }
            if !report.orphans_removed.is_empty() {
                writeln!(
                    out,
                    "removed {} folder(s) of failed runs: {}",
                    report.orphans_removed.len(),
                    report.orphans_removed.join(", ")
                )?;
            }
        }
    }
    Ok(())
}

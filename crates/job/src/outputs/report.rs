//! `report.html`: a self-contained page about a run, written next to `summary.json`.
//!
//! The page has no external resources: its styles and script (`crates/job/assets/`) are
//! included at build time and written inline, and the plots are inline SVG drawn here. It shows the counts, the similarity distribution of verified near pairs,
//! the cluster sizes, the candidate probability of the parameters used, the reject
//! reasons, and the largest clusters with excerpts of their documents as the run analysed
//! them, read again from the inputs (a few dozen records), each removed member compared
//! with its kept document (`crate::outputs::report_quotes`). A small inline script marks the page once the browser has
//! laid out every plot, so a headless browser can check that it renders.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use neardup_core::{BlockLayout, DocId, LshParams};
use neardup_io::Reason;
use neardup_text::Boilerplate;

use crate::outputs::report_quotes::{Quoted, comparison, quoted};
use crate::reporting::stats::{ClusterKept, RepeatedKey, SIMILARITY_BINS, WorkerStats};
use crate::reporting::summary::Summary;
use crate::settings::config::JobConfig;
use crate::settings::spec::Method;

/// Name of the report file.
pub const REPORT_FILE: &str = "report.html";

/// The page's styles.
const STYLE: &str = include_str!("../../assets/report.css");

/// The page's script: it marks the page once the browser has laid out every plot.
const SCRIPT: &str = include_str!("../../assets/report.js");

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 36.0;
const TOP: f64 = 12.0;

/// The frame of a plot: axes, the y maximum and a note when there is nothing to show.
fn frame(svg: &mut String, y_max: f64, y_label: &str, empty: Option<&str>) {
    let (x0, y0, y1) = (LEFT, HEIGHT - BOTTOM, TOP);
    let _ = write!(
        svg,
        r##"<line x1="{x0}" y1="{y0}" x2="{}" y2="{y0}" stroke="#444"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#444"/>"##,
        WIDTH - 8.0
    );
    let _ = write!(
        svg,
        r##"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text><text x="{}" y="{y0}" font-size="11" text-anchor="end">0</text>"##,
        x0 - 4.0,
        y1 + 10.0,
        esc(&short_number(y_max)),
        x0 - 4.0
    );
    let _ = write!(
        svg,
        r##"<text x="12" y="{}" font-size="11" transform="rotate(-90 12 {})" text-anchor="middle">{}</text>"##,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        esc(y_label)
    );
    if let Some(note) = empty {
        let _ = write!(
            svg,
            r##"<text x="{}" y="{}" font-size="14" fill="#777" text-anchor="middle">{}</text>"##,
            (LEFT + WIDTH) / 2.0,
            (y0 + y1) / 2.0,
            esc(note)
        );
    }
}

fn short_number(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// A bar chart of `values`, labelled below every `label_every` bars.
fn bars(
    title: &str,
    y_label: &str,
    labels: &[String],
    values: &[f64],
    label_every: usize,
) -> String {
    let mut svg = format!(
        r#"<figure><figcaption>{}</figcaption><svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{}">"#,
        esc(title),
        esc(title)
    );
    let y_max = values.iter().copied().fold(0.0, f64::max);
    frame(&mut svg, y_max, y_label, (y_max == 0.0).then_some("nothing to show"));
    let n = values.len().max(1) as f64;
    let slot = (WIDTH - 8.0 - LEFT) / n;
    let plot_height = HEIGHT - BOTTOM - TOP;
    for (i, v) in values.iter().enumerate() {
        let x = LEFT + slot * i as f64;
        if *v > 0.0 {
            let h = (v / y_max * plot_height).max(1.0);
            let _ = write!(
                svg,
                r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#3b6ea8"><title>{}: {}</title></rect>"##,
                x + slot * 0.1,
                HEIGHT - BOTTOM - h,
                slot * 0.8,
                esc(&labels[i]),
                short_number(*v)
            );
        }
        if label_every > 0 && i % label_every == 0 {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
                x + slot / 2.0,
                HEIGHT - BOTTOM + 14.0,
                esc(&labels[i])
            );
        }
    }
    svg.push_str("</svg></figure>\n");
    svg
}

/// A line through `(x, y)` points with `x` in `[x_min, x_max]` and `y` in `[0, 1]`, with a
/// vertical marker at `mark`.
fn curve(title: &str, x_label: &str, points: &[(f64, f64)], x_max: f64, mark: f64) -> String {
    let mut svg = format!(
        r#"<figure><figcaption>{}</figcaption><svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{}">"#,
        esc(title),
        esc(title)
    );
    frame(&mut svg, 1.0, "P(candidate)", None);
    let plot_width = WIDTH - 8.0 - LEFT;
    let plot_height = HEIGHT - BOTTOM - TOP;
    let px = |x: f64| LEFT + x / x_max * plot_width;
    let py = |y: f64| HEIGHT - BOTTOM - y * plot_height;
    let path: Vec<String> =
        points.iter().map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y))).collect();
    let _ = write!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#3b6ea8" stroke-width="2"/>"##,
        path.join(" ")
    );
    let _ = write!(
        svg,
        r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#c0392b" stroke-dasharray="4 3"/><text x="{0:.1}" y="{3}" font-size="11" fill="#c0392b" text-anchor="middle">{4}</text>"##,
        px(mark),
        HEIGHT - BOTTOM,
        TOP,
        TOP + 10.0,
        esc(&short_number(mark))
    );
    for i in 0..=4 {
        let x = x_max * f64::from(i) / 4.0;
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
            px(x),
            HEIGHT - BOTTOM + 14.0,
            esc(&short_number(x))
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
        LEFT + plot_width / 2.0,
        HEIGHT - 4.0,
        esc(x_label)
    );
    svg.push_str("</svg></figure>\n");
    svg
}

/// Cluster-size classes for the histogram.
const SIZE_CLASSES: [(u64, u64, &str); 9] = [
    (2, 2, "2"),
    (3, 3, "3"),
    (4, 4, "4"),
    (5, 5, "5"),
    (6, 10, "6-10"),
    (11, 20, "11-20"),
    (21, 50, "21-50"),
    (51, 100, "51-100"),
    (101, u64::MAX, ">100"),
];

/// Writes one quoted document into `html`: its label, the start of its analysed text, the
/// lines left out of it, and (given `against`, another quoted document and what to call
/// it) how it compares with that one.
fn write_quote(
    html: &mut String,
    label: &str,
    this: Option<&Quoted>,
    against: Option<(&Quoted, &str)>,
) {
    let text = this.map(Quoted::excerpt).unwrap_or_default();
    let _ = write!(html, "<div><code>{}</code><div class=ex>{}</div>", esc(label), esc(&text));
    if let Some(left_out) = this.and_then(Quoted::left_out) {
        let _ = write!(html, "<div class=lo>{}</div>", esc(&left_out));
    }
    if let (Some(this), Some((other, called))) = (this, against) {
        let _ = write!(html, "<div class=vs>{}</div>", esc(&comparison(this, other, called)));
    }
    html.push_str("</div>");
}

/// The page for a finished run.
pub fn render(
    config: &JobConfig,
    summary: &Summary,
    stats: &WorkerStats,
    boilerplate: Option<&Boilerplate>,
) -> String {
    let mut html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>neardup report</title>\n<style>\n{STYLE}</style>\n<script>\n{SCRIPT}</script></head><body>\n"
    );
    write_counts(&mut html, config, summary);
    write_plots(&mut html, summary, stats);
    write_radii(&mut html, stats);
    write_documents(&mut html, config, summary, stats, boilerplate);
    let _ = writeln!(
        html,
        "<details open><summary>Settings</summary><pre>{}</pre></details></body></html>",
        esc(&serde_json::to_string_pretty(&summary.config).unwrap_or_default())
    );
    html
}

/// The page's heading, the documents by decision and reason, the pairs and clusters, and
/// what boilerplate learning left out.
fn write_counts(html: &mut String, config: &JobConfig, summary: &Summary) {
    let c = &summary.counts;
    let method = config.spec.method.as_str();
    let _ = write!(
        html,
        "<h1>neardup report</h1><p>{} on {} input file(s), {} records, {:.1} s, neardup {}</p>",
        esc(method),
        summary.input_files,
        c.records,
        summary.seconds.total,
        esc(&summary.neardup_version)
    );
    html.push_str("<table><tr><th>documents</th><th class=n>count</th><th class=n>share</th></tr>");
    let pct = |n: u64| if c.records == 0 { 0.0 } else { 100.0 * n as f64 / c.records as f64 };
    let mut row = |label: String, n: u64| {
        let _ = write!(
            html,
            "<tr><td>{}</td><td class=n>{n}</td><td class=n>{:.1}%</td></tr>",
            esc(&label),
            pct(n)
        );
    };
    row("kept".into(), c.kept);
    for (reason, n) in &c.removed_by_reason {
        row(format!("removed: {}", reason.as_str()), *n);
    }
    for (reason, n) in &c.rejected_by_reason {
        row(format!("rejected: {}", reason.as_str()), *n);
    }
    let _ = write!(
        html,
        "</table><p>{} pairs ({} exact, {} near), {} clusters, largest {} documents; {:.2} candidates per signed document.</p>",
        c.pairs,
        c.exact_pairs,
        c.near_pairs,
        c.clusters,
        c.largest_cluster,
        summary.lsh.candidates_per_document
    );
    if let Some(b) = &summary.boilerplate {
        let _ = write!(
            html,
            "<p>Boilerplate: {} lines learned from {} web pages (repeated on a host's pages, or short and on many hosts); {} lines ({} characters) left out of {} pages before analysis, {} pages all boilerplate and analysed whole.</p>",
            b.learned_lines,
            b.learned_from_pages,
            b.lines_removed,
            b.chars_removed,
            b.pages_stripped,
            b.pages_all_boilerplate
        );
    }
    if let Some(p) = &summary.paragraphs {
        let removed = summary.counts.removed_by_reason.get(&Reason::MostlyRepeated);
        let _ = write!(
            html,
            "<p>Paragraphs: {} paragraphs ({} characters) left out of {} documents, each held by a document kept before it or earlier in the same document (listed in paragraphs/); {} of those documents were then removed as mostly repeated.</p>",
            p.paragraphs_left_out,
            p.chars_left_out,
            p.documents,
            removed.copied().unwrap_or(0)
        );
    }
}

/// The plots: similarity of verified near pairs, cluster sizes, the candidate probability
/// of the parameters used, and the rejects by reason (when there are any).
fn write_plots(html: &mut String, summary: &Summary, stats: &WorkerStats) {
    let c = &summary.counts;
    html.push_str("<div class=grid>");
    let bins = if stats.matching.similarity_bins.is_empty() {
        vec![0; SIMILARITY_BINS]
    } else {
        stats.matching.similarity_bins.clone()
    };
    let labels: Vec<String> =
        (0..bins.len()).map(|i| format!("{:.1}", i as f64 / bins.len() as f64)).collect();
    let values: Vec<f64> = bins.iter().map(|&n| n as f64).collect();
    html.push_str(&bars(
        "Similarity of verified near pairs",
        "pairs",
        &labels,
        &values,
        bins.len() / 5,
    ));

    let sizes: Vec<f64> = SIZE_CLASSES
        .iter()
        .map(|(lo, hi, _)| {
            stats.decisions.cluster_sizes.range(lo..=hi).map(|(_, n)| *n as f64).sum()
        })
        .collect();
    let labels: Vec<String> = SIZE_CLASSES.iter().map(|(_, _, l)| (*l).to_string()).collect();
    html.push_str(&bars("Cluster sizes (documents per cluster)", "clusters", &labels, &sizes, 1));

    let r = &summary.resolved;
    match (summary.config.method, r.bands, r.rows, r.blocks) {
        (Method::Minhash, Some(b), Some(rows), _) => {
            if let Ok(lsh) = LshParams::try_new(b, rows) {
                let points: Vec<(f64, f64)> = (0..=100)
                    .map(|i| f64::from(i) / 100.0)
                    .map(|s| (s, lsh.candidate_probability(s)))
                    .collect();
                let m = &summary.config.minhash;
                let marked = match m.containment_rule() {
                    Some(c) => format!(
                        "{} marked; threshold {}, containment {} with Jaccard at least {}",
                        m.bands_jaccard(),
                        m.threshold(),
                        c.min_containment,
                        c.min_jaccard
                    ),
                    None => "threshold marked".to_string(),
                };
                let title = format!("Candidate probability, {b} bands x {rows} rows ({marked})");
                html.push_str(&curve(
                    &title,
                    "Jaccard similarity",
                    &points,
                    1.0,
                    m.bands_jaccard(),
                ));
            }
        }
        (Method::Simhash, _, _, Some(blocks)) => {
            let k = summary.config.simhash.distance();
            if let Ok(layout) = BlockLayout::try_new(blocks, k) {
                let x_max = f64::from(2 * k + 6);
                let points: Vec<(f64, f64)> = (0..=2 * k + 6)
                    .map(|d| (f64::from(d), layout.candidate_probability(d)))
                    .collect();
                let title =
                    format!("Candidate probability, {blocks} blocks, distance {k} (marked)");
                html.push_str(&curve(&title, "Hamming distance", &points, x_max, f64::from(k)));
            }
        }
        _ => {}
    }

    // A run that rejected nothing shows no empty panel (its counts table says 0).
    if !c.rejected_by_reason.is_empty() {
        let (labels, values): (Vec<String>, Vec<f64>) =
            c.rejected_by_reason.iter().map(|(r, n)| (r.as_str().to_string(), *n as f64)).unzip();
        html.push_str(&bars("Rejected records by reason", "records", &labels, &values, 1));
    }
    html.push_str("</div>");
}

/// Clusters by radius, when the run decided any.
fn write_radii(html: &mut String, stats: &WorkerStats) {
    if !stats.decisions.cluster_radii.is_empty() {
        html.push_str(
            "<h2>Clusters by radius</h2><p class=ex>Radius: the most pair hops from a cluster's kept document to a member. Radius 1: every member was compared with the kept document and passed (or has its text); a larger radius means members joined through others, and the cluster may chain documents that differ more than the threshold allows (decision.removal = \"verified\" removes only the directly verified ones).</p><table><tr><th class=n>radius</th><th class=n>clusters</th></tr>",
        );
        for (radius, n) in &stats.decisions.cluster_radii {
            let _ = write!(html, "<tr><td class=n>{radius}</td><td class=n>{n}</td></tr>");
        }
        html.push_str("</table>");
    }
}

/// The paragraphs left out most often (paragraph-level dedup), each quoted from the first
/// document of the run that has it.
fn write_most_repeated(html: &mut String, most: &[RepeatedKey], quoted: &BTreeMap<DocId, Quoted>) {
    html.push_str("<h2>Most repeated paragraphs</h2>");
    if most.is_empty() {
        html.push_str("<p>No paragraph was left out.</p>");
        return;
    }
    html.push_str("<p class=ex>The paragraphs left out of kept documents most often, as the run compared them, with the document that keeps each.</p><table><tr><th class=n>left out</th><th>paragraph</th></tr>");
    for p in most {
        let run = p.first_run.as_ref().map(|r| format!(" of run {r}")).unwrap_or_default();
        let excerpt = quoted
            .get(&DocId::from_raw(p.quote_doc_id))
            .map(|q| q.passage(p.offset, p.len))
            .unwrap_or_default();
        let _ = write!(
            html,
            "<tr><td class=n>{}</td><td><div><code>kept by {}{} ({} characters)</code><div class=ex>{}</div></div></td></tr>",
            p.left_out,
            esc(&p.first_id),
            esc(&run),
            p.chars,
            esc(&excerpt)
        );
    }
    html.push_str("</table>");
}

/// The largest clusters and the least similar pairs, each document quoted as the run
/// compared it.
fn write_documents(
    html: &mut String,
    config: &JobConfig,
    summary: &Summary,
    stats: &WorkerStats,
    boilerplate: Option<&Boilerplate>,
) {
    // A cluster an earlier run kept (`--index`) has no kept document in these inputs.
    let this_run = |kept: ClusterKept| match kept {
        ClusterKept::ThisRun(doc) => Some(doc),
        ClusterKept::Earlier(_) => None,
    };
    let least_similar = &stats.matching.least_similar;
    let wanted: BTreeSet<DocId> = stats
        .decisions
        .top_clusters
        .iter()
        .flat_map(|t| this_run(t.kept).into_iter().chain(t.members.iter().map(|(d, _)| *d)))
        .chain(least_similar.iter().flat_map(|p| [p.a.0, p.b.0]))
        .chain(stats.paragraphs.most_repeated.iter().map(|p| DocId::from_raw(p.quote_doc_id)))
        .collect();
    let quoted = quoted(config, &summary.config, &wanted, boilerplate);
    html.push_str("<h2>Largest clusters</h2>");
    if stats.decisions.top_clusters.is_empty() {
        html.push_str("<p>No clusters.</p>");
    } else {
        html.push_str(
            "<p class=ex>Each document as the run compared it: a web page without its template lines and the lines outside its main text, which are listed under it (in brown). Under each removed member: the Jaccard similarity of its features with the kept document's, and where their texts part (in green).</p><table><tr><th class=n>size</th><th>kept document and first removed members</th></tr>",
        );
        for t in &stats.decisions.top_clusters {
            let _ = write!(html, "<tr><td class=n>{}</td><td>", t.size);
            let kept = this_run(t.kept).and_then(|d| quoted.get(&d));
            for (i, (doc, id)) in std::iter::once((this_run(t.kept), t.kept_id.clone()))
                .chain(t.members.iter().map(|(d, id)| (Some(*d), id.clone())))
                .enumerate()
            {
                let role = match (i, doc) {
                    (0, Some(_)) => "kept",
                    (0, None) => "kept by an earlier run",
                    _ => "removed",
                };
                let this = doc.and_then(|d| quoted.get(&d));
                let against = kept.filter(|_| i > 0).map(|k| (k, "the kept document"));
                write_quote(html, &format!("{role}: {id}"), this, against);
            }
            html.push_str("</td></tr>");
        }
        html.push_str("</table>");
    }
    if !least_similar.is_empty() {
        html.push_str("<h2>Least similar pairs</h2><p class=ex>The verified near pairs least alike, those nearest the threshold: where a wrong join would show first. Each document as the run compared it.</p><table><tr><th class=n>similarity</th><th>documents</th></tr>");
        for pair in least_similar {
            let _ = write!(
                html,
                "<tr><td class=n>{:.3}<br>{}</td><td>",
                pair.similarity,
                esc(&pair.measure)
            );
            let (a, b) = (quoted.get(&pair.a.0), quoted.get(&pair.b.0));
            write_quote(html, &pair.a.1, a, None);
            write_quote(html, &pair.b.1, b, a.map(|a| (a, "the first document")));
            html.push_str("</td></tr>");
        }
        html.push_str("</table>");
    }
    if summary.paragraphs.is_some() {
        write_most_repeated(html, &stats.paragraphs.most_repeated, &quoted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup() {
        assert_eq!(esc(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn bars_scale_to_the_largest_value() {
        let svg = bars("t", "n", &["a".into(), "b".into()], &[1.0, 4.0], 1);
        assert_eq!(svg.matches("<rect").count(), 2);
        assert!(svg.contains(&format!("height=\"{:.1}\"", HEIGHT - BOTTOM - TOP)));
        let empty = bars("t", "n", &["a".into()], &[0.0], 1);
        assert!(empty.contains("nothing to show") && !empty.contains("<rect"));
    }
}

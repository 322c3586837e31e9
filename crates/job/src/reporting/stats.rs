//! Per-worker counters, summed into the run summary.

use std::collections::BTreeMap;

use neardup_core::{DocId, Measure};
use neardup_io::index::IndexRef;
use neardup_io::{Decision, DocumentRow, PairRow, Reason};
use serde::{Deserialize, Serialize};

/// What one worker counted, by the part of the run that counts it. Every field is a sum
/// (or a maximum) over workers; each group merges its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerStats {
    /// Reading the input (`source.rs`, the readers).
    pub reading: ReadingStats,
    /// Signing, bucketing and verifying (`sign_docs`, `doc_store`, `reduce_buckets`,
    /// `verify_candidates`, `write_parts`).
    pub matching: MatchingStats,
    /// Decisions and clusters (`name_clusters`, `write_documents`, `write_kept`).
    pub decisions: DecisionStats,
    /// What the run cost the machine: spill files, retried requests, memory.
    pub resources: ResourceStats,
    /// Index of earlier runs (`--index`): what this run read and added.
    pub index: IndexStats,
    /// Boilerplate learned and left out.
    pub boilerplate: BoilerplateStats,
    /// The work area: units of input kept for a rerun, and units replayed from it.
    pub work: WorkStats,
    /// Paragraph-level dedup (`write_documents`).
    pub paragraphs: ParagraphStats,
}

/// What paragraph-level dedup left out of kept documents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParagraphStats {
    /// Documents with a paragraph left out (kept, or removed as mostly repeated).
    pub documents: u64,
    /// Paragraphs left out.
    pub paragraphs_left_out: u64,
    /// Their characters, as compared.
    pub chars_left_out: u64,
    /// The paragraphs left out most often, most first (ties by key), at most
    /// [`MOST_REPEATED`]. (Never skipped when empty: the statistics cross processes as
    /// bincode, which has no field names.)
    #[serde(default)]
    pub most_repeated: Vec<RepeatedKey>,
}

/// Paragraphs the summary and the report list as the most repeated.
pub const MOST_REPEATED: usize = 10;

/// A paragraph among those left out most often.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatedKey {
    /// Its key (`key` in `paragraphs/`, where it is stored as signed bits).
    pub key: u64,
    /// Times the run left it out.
    pub left_out: u64,
    /// Its characters, as compared.
    pub chars: u32,
    /// The document that keeps it.
    pub first_id: String,
    /// With `--index`: the earlier run of that document.
    #[serde(default)]
    pub first_run: Option<String>,
    /// The first document of this run that has it (kept, or left out of), by id, and by
    /// `doc_id`, with the paragraph's byte offset and length in its compared text: what
    /// the report quotes.
    pub quote_id: String,
    /// That document's `doc_id`.
    pub quote_doc_id: u64,
    /// The paragraph's byte offset in its compared text.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

impl RepeatedKey {
    /// The order of the list: left out most often first, then by key.
    fn rank(&self) -> (std::cmp::Reverse<u64>, u64) {
        (std::cmp::Reverse(self.left_out), self.key)
    }
}

/// Keeps the [`MOST_REPEATED`] of `keys` that rank first, in their order.
pub fn keep_most_repeated(keys: &mut Vec<RepeatedKey>) {
    keys.sort_by_key(RepeatedKey::rank);
    keys.truncate(MOST_REPEATED);
}

impl ParagraphStats {
    /// Counts one paragraph of `chars` characters left out, the first of its document
    /// when `first`.
    pub fn note(&mut self, chars: u64, first: bool) {
        self.documents += u64::from(first);
        self.paragraphs_left_out += 1;
        self.chars_left_out += chars;
    }

    fn merge(&mut self, other: &ParagraphStats) {
        self.documents += other.documents;
        self.paragraphs_left_out += other.paragraphs_left_out;
        self.chars_left_out += other.chars_left_out;
        self.most_repeated.extend(other.most_repeated.iter().cloned());
        keep_most_repeated(&mut self.most_repeated);
    }
}

/// The work area (`crate::input::work_area`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkStats {
    /// Units of input read and signed, and kept in the work area.
    pub units_written: u64,
    /// Bytes of the units kept.
    pub bytes_written: u64,
    /// Units an earlier run kept, replayed instead of read and signed.
    pub units_reused: u64,
    /// Units read and signed (kept or not).
    pub units_read: u64,
    /// 1 when what the corpus passes learn (templates, document frequencies) was replayed
    /// from the work area instead of learned again, 0 otherwise.
    pub corpus_statistics_reused: u64,
    /// `neardup sign` tasks whose report was in the work area.
    pub signed_tasks: u64,
}

impl WorkStats {
    fn merge(&mut self, other: &WorkStats) {
        self.units_written += other.units_written;
        self.bytes_written += other.bytes_written;
        self.units_reused += other.units_reused;
        self.units_read += other.units_read;
        self.corpus_statistics_reused += other.corpus_statistics_reused;
        self.signed_tasks += other.signed_tasks;
    }
}

/// Reading the input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadingStats {
    /// Records read from input files.
    pub records_read: u64,
    /// Bytes of input files read.
    pub input_bytes: u64,
    /// Web-archive records that are not documents, by kind.
    pub skipped_records: BTreeMap<String, u64>,
    /// Zero bytes ignored after the last gzip member of input files.
    pub trailing_zero_bytes: u64,
    /// Rounds the input was read in (merged: the most of any worker).
    pub input_rounds: u64,
}

impl ReadingStats {
    fn merge(&mut self, other: &ReadingStats) {
        self.records_read += other.records_read;
        self.input_bytes += other.input_bytes;
        for (k, v) in &other.skipped_records {
            *self.skipped_records.entry(k.clone()).or_default() += v;
        }
        self.trailing_zero_bytes += other.trailing_zero_bytes;
        self.input_rounds = self.input_rounds.max(other.input_rounds);
    }
}

/// Signing, bucketing and verifying.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchingStats {
    /// Documents analysed and signed.
    pub documents_signed: u64,
    /// Representatives with a signature, indexed for LSH.
    pub signed_representatives: u64,
    /// Bucket records emitted (one per band or table per representative).
    pub bucket_records: u64,
    /// Bucket statistics.
    pub buckets: BucketStats,
    /// Candidate pairs after removing those found in several buckets.
    pub unique_candidates: u64,
    /// Candidate pairs compared.
    pub compared_pairs: u64,
    /// Candidate pairs that passed verification.
    pub verified_pairs: u64,
    /// Exact pairs written.
    pub exact_pairs: u64,
    /// Near pairs written.
    pub near_pairs: u64,
    /// Near pairs by similarity, in `SIMILARITY_BINS` (50) equal bins over `[0, 1]`.
    pub similarity_bins: Vec<u64>,
    /// The least similar near pairs, those nearest the threshold (`LEAST_SIMILAR_PAIRS`, 6,
    /// at most, less similar first, ties by position): the same whatever the workers,
    /// since each keeps its own least similar ones and merging keeps the least of those.
    pub least_similar: Vec<EdgePair>,
}

/// A verified near pair among the least similar of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EdgePair {
    /// Its similarity as `pairs/` has it.
    pub similarity: f64,
    /// What verified it, as `pairs/`'s `measure`.
    pub measure: String,
    /// Its documents: positions and ids, as `pairs/` orders them.
    pub a: (DocId, String),
    pub b: (DocId, String),
}

impl EdgePair {
    /// Less similar first; ties by the documents' positions.
    fn rank(&self) -> (u64, DocId, DocId) {
        rank(self.similarity, self.a.0, self.b.0)
    }
}

/// The order of near pairs by similarity, then position: a similarity is never negative,
/// and the bits of non-negative floats order as their values do.
fn rank(similarity: f64, a: DocId, b: DocId) -> (u64, DocId, DocId) {
    (similarity.to_bits(), a, b)
}

impl MatchingStats {
    fn merge(&mut self, other: &MatchingStats) {
        self.documents_signed += other.documents_signed;
        self.signed_representatives += other.signed_representatives;
        self.bucket_records += other.bucket_records;
        self.buckets.merge(&other.buckets);
        self.unique_candidates += other.unique_candidates;
        self.compared_pairs += other.compared_pairs;
        self.verified_pairs += other.verified_pairs;
        self.exact_pairs += other.exact_pairs;
        self.near_pairs += other.near_pairs;
        if self.similarity_bins.len() < other.similarity_bins.len() {
            self.similarity_bins.resize(other.similarity_bins.len(), 0);
        }
        for (mine, theirs) in self.similarity_bins.iter_mut().zip(&other.similarity_bins) {
            *mine += theirs;
        }
        for pair in &other.least_similar {
            self.keep_least_similar(pair.rank(), || pair.clone());
        }
    }

    /// Keeps the near pair of `row` if it is among the `LEAST_SIMILAR_PAIRS` least
    /// similar so far (its ids are copied only then).
    pub fn note_least_similar(&mut self, row: &PairRow) {
        let rank = rank(row.similarity, row.doc_a, row.doc_b);
        self.keep_least_similar(rank, || EdgePair {
            similarity: row.similarity,
            measure: row.measure.map_or("", Measure::as_str).to_string(),
            a: (row.doc_a, row.id_a.clone()),
            b: (row.doc_b, row.id_b.clone()),
        });
    }

    fn keep_least_similar(&mut self, rank: (u64, DocId, DocId), pair: impl FnOnce() -> EdgePair) {
        let kept = &mut self.least_similar;
        if kept.len() == LEAST_SIMILAR_PAIRS && kept.last().is_some_and(|last| last.rank() <= rank)
        {
            return;
        }
        let at = kept.partition_point(|p| p.rank() < rank);
        kept.insert(at, pair());
        kept.truncate(LEAST_SIMILAR_PAIRS);
    }

    /// Counts a near pair's similarity.
    pub fn count_similarity(&mut self, similarity: f64) {
        if self.similarity_bins.is_empty() {
            self.similarity_bins = vec![0; SIMILARITY_BINS];
        }
        let bin = ((similarity.clamp(0.0, 1.0) * SIMILARITY_BINS as f64) as usize)
            .min(SIMILARITY_BINS - 1);
        self.similarity_bins[bin] += 1;
    }
}

/// Decisions and clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionStats {
    /// Documents by decision.
    pub by_decision: BTreeMap<Decision, u64>,
    /// Documents by decision and reason.
    pub reasons: BTreeMap<(Decision, Reason), u64>,
    /// Clusters of two or more documents: those this run keeps, and (with an index) the
    /// clusters of earlier runs that this run's documents join, each counted once.
    pub clusters: u64,
    /// Removed documents never compared directly with their kept document.
    pub removed_not_verified_with_kept: u64,
    /// Clusters (of two or more documents) by size, the `cluster_size` of their rows.
    pub cluster_sizes: BTreeMap<u64, u64>,
    /// Clusters this run keeps, by radius: the most pair hops from the kept document to a
    /// member (unknown for an earlier cluster joined, which is left out).
    pub cluster_radii: BTreeMap<u32, u64>,
    /// The largest clusters (at most `TOP_CLUSTERS`, 10), with their first members.
    pub top_clusters: Vec<TopCluster>,
    /// Records written to the deduplicated dataset (`--write-kept`).
    pub kept_written: u64,
}

/// What the run cost the machine.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceStats {
    /// Bytes written to spill files (sorted runs and stage files).
    pub spilled_bytes: u64,
    /// Requests to object storage or HTTP retried after a transient failure, counted per
    /// process and reported by its first worker ([`neardup_io::remote::retries`]).
    pub remote_retries: u64,
    /// Peak resident memory of the process, when the worker reported (merged: the largest
    /// process).
    pub peak_memory_bytes: u64,
}

impl ResourceStats {
    fn merge(&mut self, other: &ResourceStats) {
        self.spilled_bytes += other.spilled_bytes;
        self.remote_retries += other.remote_retries;
        self.peak_memory_bytes = self.peak_memory_bytes.max(other.peak_memory_bytes);
    }
}

/// Boilerplate learned from web pages and left out of their features.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoilerplateStats {
    /// Pages (documents with a URL) the boilerplate was learned from.
    pub learned_from_pages: u64,
    /// (host, line) and corpus-wide entries learned.
    pub learned_lines: u64,
    /// Pages with some lines left out.
    pub pages_stripped: u64,
    /// Lines left out, over all pages.
    pub lines_removed: u64,
    /// Characters left out, over all pages.
    pub chars_removed: u64,
    /// Pages whose every line was boilerplate, analysed whole.
    pub pages_all_boilerplate: u64,
    /// Bytes the learning pass spilled (also counted in the run's `spilled_bytes`).
    pub spilled_bytes: u64,
}

impl BoilerplateStats {
    /// Counts what was left out of one page.
    pub fn count(&mut self, stripped: &neardup_text::Stripped) {
        self.pages_stripped += u64::from(stripped.lines > 0);
        self.lines_removed += u64::from(stripped.lines);
        self.chars_removed += stripped.chars;
        self.pages_all_boilerplate += u64::from(stripped.template_only);
    }

    /// Adds another worker's counts.
    pub fn merge(&mut self, other: &BoilerplateStats) {
        self.learned_from_pages += other.learned_from_pages;
        self.learned_lines += other.learned_lines;
        self.pages_stripped += other.pages_stripped;
        self.lines_removed += other.lines_removed;
        self.chars_removed += other.chars_removed;
        self.pages_all_boilerplate += other.pages_all_boilerplate;
        self.spilled_bytes += other.spilled_bytes;
    }
}

/// Bins of the similarity histogram.
pub const SIMILARITY_BINS: usize = 50;
/// Clusters listed in the report.
pub const TOP_CLUSTERS: usize = 10;
/// Near pairs the report quotes as the least similar of the run.
pub const LEAST_SIMILAR_PAIRS: usize = 6;
/// Members listed per cluster, besides the kept document.
pub const TOP_CLUSTER_MEMBERS: usize = 3;

/// The kept document of a cluster: this run's, or (with an index) one an earlier run kept.
/// Ordered earlier runs first, then by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ClusterKept {
    /// Kept by an earlier run: its generation and position there.
    Earlier(IndexRef),
    /// A document of this run.
    ThisRun(DocId),
}

/// One of the largest clusters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopCluster {
    /// Documents in it: its rows' `cluster_size`.
    pub size: u64,
    /// Its kept document.
    pub kept: ClusterKept,
    /// The kept document's id.
    pub kept_id: String,
    /// Its earliest removed members (position, id), at most `TOP_CLUSTER_MEMBERS`.
    pub members: Vec<(DocId, String)>,
}

impl TopCluster {
    /// Larger first; ties by the earlier kept document.
    fn rank(&self) -> (std::cmp::Reverse<u64>, ClusterKept) {
        (std::cmp::Reverse(self.size), self.kept)
    }
}

impl WorkerStats {
    /// Adds another worker's counts.
    pub fn merge(&mut self, other: &WorkerStats) {
        self.reading.merge(&other.reading);
        self.matching.merge(&other.matching);
        self.decisions.merge(&other.decisions);
        self.resources.merge(&other.resources);
        self.index.merge(&other.index);
        self.boilerplate.merge(&other.boilerplate);
        self.work.merge(&other.work);
        self.paragraphs.merge(&other.paragraphs);
    }
}

impl DecisionStats {
    /// Counts the decisions and reasons of `documents/` rows.
    pub fn count_documents(&mut self, rows: &[DocumentRow]) {
        for r in rows {
            *self.by_decision.entry(r.decision).or_default() += 1;
            if let Some(reason) = r.reason {
                *self.reasons.entry((r.decision, reason)).or_default() += 1;
            }
        }
    }

    fn merge(&mut self, other: &DecisionStats) {
        for (k, v) in &other.by_decision {
            *self.by_decision.entry(*k).or_default() += v;
        }
        for (k, v) in &other.reasons {
            *self.reasons.entry(*k).or_default() += v;
        }
        self.clusters += other.clusters;
        self.removed_not_verified_with_kept += other.removed_not_verified_with_kept;
        self.kept_written += other.kept_written;
        for (size, n) in &other.cluster_sizes {
            *self.cluster_sizes.entry(*size).or_default() += n;
        }
        for (radius, n) in &other.cluster_radii {
            *self.cluster_radii.entry(*radius).or_default() += n;
        }
        for c in &other.top_clusters {
            self.note_cluster(c.size, c.kept, &c.kept_id);
            for (doc, id) in &c.members {
                self.note_member(c.size, c.kept, &c.kept_id, *doc, id);
            }
        }
    }

    /// Notes a cluster among the largest, if it is; returns its slot.
    fn note_cluster(&mut self, size: u64, kept: ClusterKept, kept_id: &str) -> Option<usize> {
        let candidate =
            TopCluster { size, kept, kept_id: kept_id.to_string(), members: Vec::new() };
        if let Some(i) = self.top_clusters.iter().position(|c| c.kept == kept) {
            return Some(i);
        }
        if self.top_clusters.len() == TOP_CLUSTERS
            && self.top_clusters.last().is_some_and(|last| last.rank() <= candidate.rank())
        {
            return None;
        }
        let at = self.top_clusters.partition_point(|c| c.rank() < candidate.rank());
        self.top_clusters.insert(at, candidate);
        self.top_clusters.truncate(TOP_CLUSTERS);
        self.top_clusters.iter().position(|c| c.kept == kept)
    }

    /// Notes a removed member of a cluster among the largest (the earliest are listed).
    pub fn note_member(
        &mut self,
        size: u64,
        kept: ClusterKept,
        kept_id: &str,
        doc: DocId,
        id: &str,
    ) {
        let Some(i) = self.note_cluster(size, kept, kept_id) else { return };
        let members = &mut self.top_clusters[i].members;
        if members.iter().any(|(d, _)| *d == doc) {
            return;
        }
        let at = members.partition_point(|(d, _)| *d < doc);
        if at < TOP_CLUSTER_MEMBERS {
            members.insert(at, (doc, id.to_string()));
            members.truncate(TOP_CLUSTER_MEMBERS);
        }
    }

    /// Counts a cluster of `size` documents kept as `kept` and notes it among the largest.
    pub fn record_cluster(&mut self, size: u64, kept: ClusterKept, kept_id: &str) {
        self.clusters += 1;
        *self.cluster_sizes.entry(size).or_default() += 1;
        self.note_cluster(size, kept, kept_id);
    }

    /// The largest cluster (ties: the earliest kept document), the same however work was
    /// split.
    pub fn largest_cluster(&self) -> Option<&TopCluster> {
        self.top_clusters.first()
    }

    /// Documents with `decision`.
    pub fn decided(&self, decision: Decision) -> u64 {
        self.by_decision.get(&decision).copied().unwrap_or(0)
    }
}

/// What a run did with its index (`--index`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// Index parts opened (their footers read): key parts and, with paragraph-level dedup,
    /// paragraph parts, as the counts below.
    pub parts_opened: u64,
    /// Key row groups whose bloom filter was read.
    pub bloom_filters_read: u64,
    /// Row groups read (keys and documents).
    pub row_groups_read: u64,
    /// Index rows decoded.
    pub rows_read: u64,
    /// Candidate pairs of a new and an indexed document (distinct).
    pub candidates: u64,
    /// New documents verified as duplicates of indexed ones (pairs).
    pub matches: u64,
    /// New documents removed as duplicates of documents kept by earlier runs.
    pub removed: u64,
    /// New clusters joined to more than one earlier cluster: earlier decisions stand, so
    /// those clusters stay apart in the index.
    pub bridged_clusters: u64,
    /// Key rows written to the new generation.
    pub keys_written: u64,
    /// Documents written to the new generation.
    pub documents_written: u64,
    /// Paragraphs whose first occurrence this run's kept documents hold, written to the new
    /// generation (paragraph-level dedup).
    pub paragraphs_written: u64,
}

impl IndexStats {
    fn merge(&mut self, o: &IndexStats) {
        self.parts_opened += o.parts_opened;
        self.bloom_filters_read += o.bloom_filters_read;
        self.row_groups_read += o.row_groups_read;
        self.rows_read += o.rows_read;
        self.candidates += o.candidates;
        self.matches += o.matches;
        self.removed += o.removed;
        self.bridged_clusters += o.bridged_clusters;
        self.keys_written += o.keys_written;
        self.documents_written += o.documents_written;
        self.paragraphs_written += o.paragraphs_written;
    }

    /// Adds what one index lookup read.
    pub fn add_probe(&mut self, p: neardup_io::index::ProbeStats) {
        self.parts_opened += p.parts;
        self.bloom_filters_read += p.bloom_filters;
        self.row_groups_read += p.row_groups_read;
        self.rows_read += p.rows_read;
    }
}

/// Bucket statistics, summed over workers into the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BucketStats {
    /// Buckets with at least two members.
    pub shared_buckets: u64,
    /// Buckets above `max_bucket_size`, compared only against their anchors.
    pub cut_buckets: u64,
    /// Members of the largest bucket.
    pub largest_bucket: u64,
    /// Candidate pairs emitted (before removing pairs found in several buckets).
    pub candidates: u64,
}

impl BucketStats {
    /// Adds another worker's statistics.
    pub fn merge(&mut self, other: &BucketStats) {
        self.shared_buckets += other.shared_buckets;
        self.cut_buckets += other.cut_buckets;
        self.largest_bucket = self.largest_bucket.max(other.largest_bucket);
        self.candidates += other.candidates;
    }
}

#[cfg(test)]
mod tests {
    use neardup_io::PairKind;

    use super::*;

    /// Statistics cross processes as bincode, which has no field names: a field skipped
    /// when empty would shift every field after it (two-process runs failed with
    /// "UnexpectedEof").
    #[test]
    fn statistics_round_trip_through_bincode_full_or_empty() {
        let mut stats = WorkerStats::default();
        stats.paragraphs.note(120, true);
        stats.paragraphs.most_repeated.push(RepeatedKey {
            key: 7,
            left_out: 3,
            chars: 120,
            first_id: "a".into(),
            first_run: None,
            quote_id: "a".into(),
            quote_doc_id: 1,
            offset: 0,
            len: 130,
        });
        for stats in [WorkerStats::default(), stats] {
            let bytes = bincode::serialize(&stats).unwrap();
            assert_eq!(bincode::deserialize::<WorkerStats>(&bytes).unwrap(), stats);
        }
    }

    fn row(similarity: f64, a: u64, b: u64) -> PairRow {
        PairRow {
            id_a: format!("d{a}"),
            id_b: format!("d{b}"),
            doc_a: DocId::new(0, a),
            doc_b: DocId::new(0, b),
            similarity,
            kind: PairKind::Near,
            measure: Some(Measure::Jaccard),
            containment: None,
            hamming: None,
            matching_bands: None,
        }
    }

    /// However the pairs are spread over workers and merged, the least similar are kept,
    /// ties by position.
    #[test]
    fn the_least_similar_pairs_do_not_depend_on_the_workers() {
        let rows: Vec<PairRow> =
            (0..40).map(|i| row(0.8 + (i % 7) as f64 / 100.0, i, i + 1)).collect();
        let mut one = MatchingStats::default();
        rows.iter().for_each(|r| one.note_least_similar(r));
        let mut merged = MatchingStats::default();
        for worker in 0..3 {
            let mut mine = MatchingStats::default();
            rows.iter().skip(worker).step_by(3).for_each(|r| mine.note_least_similar(r));
            merged.merge(&mine);
        }
        assert_eq!(one.least_similar, merged.least_similar);
        let kept: Vec<(f64, u64)> =
            one.least_similar.iter().map(|p| (p.similarity, p.a.0.record())).collect();
        assert_eq!(kept, [(0.8, 0), (0.8, 7), (0.8, 14), (0.8, 21), (0.8, 28), (0.8, 35)]);
        assert_eq!(one.least_similar[0].measure, "jaccard");
    }
}

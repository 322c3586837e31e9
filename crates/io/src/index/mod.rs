//! The index of earlier runs (`--index DIR`): what a later batch is deduplicated against
//! without re-signing or rewriting the old corpus.
//!
//! ```text
//! DIR/index.json                    the manifest: settings, partitions, generations
//! DIR/<segment>/keys/part-NNNNN.parquet   (key, generation, doc_id) of one key partition
//! DIR/<segment>/docs/part-NNNNN.parquet   one row per indexed document, by (generation, doc_id)
//! DIR/<segment>/frequencies.bin           document frequencies of its runs' batches (SimHash TF-IDF)
//! DIR/<segment>/templates/part-NNNNN.parquet   a sample of its web pages' lines, by host (template learning)
//! DIR/<segment>/paragraphs/part-NNNNN.parquet  (key, generation, doc_id, paragraph, id): first occurrences kept (--paragraphs)
//! ```
//!
//! Every run adds a **generation**, written as a **segment**: a folder of Parquet parts,
//! named with a token unique to the run. The manifest, rewritten atomically once all parts
//! of a run are in place, is the only commit point: a folder it does not list (a run that
//! failed) is ignored, and compaction removes it. Compaction ([`compact`]) merges the
//! segments of many generations into one, so that a lookup opens one part per partition
//! instead of one per run; every row carries its generation, so a merged segment still
//! says which run each document came from.
//!
//! `keys/` holds one row per bucket key of every indexed document (its bands or block
//! tables, and its content key for exact copies), partitioned by the key's top bits
//! ([`partition_of`]) and sorted by key in row groups of [`KEY_ROW_GROUP_ROWS`] rows, each
//! with a bloom filter on the key, in pages of 256 rows. A lookup ([`probe_keys`]) reads
//! the footer and page index, then for each row group whose key range holds a probed key
//! only its bloom filter, and of the keys the bloom filter lets through only the pages
//! whose range holds them: reading grows with the probes and their matches (a page per
//! match), and with the history only by the footers, page indexes and bloom filters (about
//! a byte and a half per key row).
//!
//! `docs/` holds, per document, what verification and the decision need: the id, the
//! content hash, the signature, and the cluster's kept document. Documents are split into
//! parts by [`doc_part_of`] and sorted by generation and `doc_id` in small pages, so
//! [`fetch_docs`] reads the `generation` and `doc_id` columns of the row groups that can
//! hold a wanted document, then only the pages holding wanted rows.
//!
//! `paragraphs/` ([`HeldParagraph`]), for runs with paragraph-level dedup, holds the first
//! occurrence of every paragraph a kept document holds, in key partitions as `keys/`; a
//! later run probes it ([`probe_table`]) to leave out the paragraphs an earlier run holds.
//!
//! Integers are signed (`Int64`, `Int32`) so Spark reads the parts; keys are the bits of the
//! unsigned key.

mod compact;
mod forget;
mod frequencies;
mod held_paragraphs;
mod lookup;
pub(crate) mod manifest;
mod parts;
mod templates;

pub use compact::{Compacted, compact};
pub use forget::{Forgotten, forget};
pub use frequencies::{FREQUENCIES_FILE, Frequencies, read_frequencies, write_frequencies};
pub use held_paragraphs::HeldParagraph;
pub use lookup::{ProbeStats, fetch_docs, probe_keys, probe_table};
pub use manifest::{
    DEFAULT_PARTITIONS, FORMAT, Generation, IndexLock, MANIFEST, MIGRATED_FORMAT, Manifest,
    READ_FORMATS, Segment, TEMPLATE_SAMPLE_NOTE, generation_folder, remove_all_but_templates,
    remove_orphans,
};
pub use parts::{
    DocPartWriter, IndexRef, IndexedDoc, KEY_ROW_GROUP_ROWS, KeyPartWriter, KeyRow, KeyTable,
    doc_part_of, doc_part_path, for_each_docs_batch, key_part_path, partition_of, table_part_path,
};
pub use templates::{
    HostSample, TEMPLATE_PAGES_PER_HOST, TemplatePage, TemplatePartWriter, TemplateRows,
    template_part_path,
};

#[cfg(test)]
mod tests;

//! Deduplicating against the index of earlier runs (`--index`), and adding this run to it.
//!
//! Three stages, after the document store:
//!
//! 1. [`ProbeIndex`]: the keys of this run's representatives (bands or block tables, and
//!    a content key for exact copies), exchanged by key partition. For each partition, in
//!    key order, the worker writes the new generation's key part and probes the same
//!    partition of every segment of the index ([`neardup_io::index::probe_keys`]); an
//!    indexed document sharing a key with a new one makes a candidate. Holds: its spill
//!    limit of keys, and one partition's keys at a time (a sixty-fourth of the run's keys).
//! 2. [`FetchIndexed`]: candidates exchanged by the indexed document's segment and docs
//!    part; for each part, the indexed documents wanted are read at once
//!    ([`neardup_io::index::fetch_docs`]) and sent to the new document's home worker.
//!    Holds: its spill limit of candidates, and one part's wanted documents.
//! 3. [`VerifyIndexed`]: at the new document's home worker, a merge join with the
//!    signature file of the store; equal content hashes make an exact match, otherwise the
//!    signatures are compared as for pairs within the run. Holds: its spill limit.
//!
//! Matches then reach the clusters in [`LinkClusters`]: each match is tied to the new
//! document's cluster (or the document alone), keyed by the cluster's kept document, so
//! that naming the cluster can hand every member the earlier kept document instead.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use neardup_core::{ContentHash, DocId, MinHashSignature, Signature, SimHash};
use neardup_io::index::{
    IndexRef, IndexedDoc, KeyPartWriter, KeyRow, ProbeStats, Segment, doc_part_of, fetch_docs,
    partition_of, probe_keys,
};
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::core::Concat;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::config::IndexPlan;
use crate::operators::PartSink;
use crate::operators::collect::{Drain, Keyed, Spill, collect_sorted};
use crate::operators::doc_store::DocStore;
use crate::operators::verify_candidates::Cursor;
use crate::records::{DocMeta, Membership};
use crate::routing::route_doc;
use crate::spill::{MemSize, SpillError};

/// Mixed into a content hash to make a representative's content key, so content keys and
/// band keys never meet by design.
const CONTENT_KEY_SEED: u64 = 0x636f_6e74_656e_7431;

/// The content key of a text: its index key for exact copies.
pub fn content_key(content: ContentHash) -> u64 {
    let h = content.get();
    neardup_core::hash::route((h as u64) ^ ((h >> 64) as u64) ^ CONTENT_KEY_SEED)
}

/// A key of a new representative, for the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexKey {
    /// A band or table key, or the content key.
    pub key: u64,
    /// The representative.
    pub doc: DocId,
}

impl MemSize for IndexKey {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// A new representative and an indexed document that share a key, ordered for fetching:
/// by the indexed document's segment, docs part, generation and `doc_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexCandidate {
    /// The indexed document's segment: its first generation.
    pub segment: u32,
    /// Its docs part.
    pub part: u32,
    /// The indexed document.
    pub old: IndexRef,
    /// The new document.
    pub new: DocId,
}

impl MemSize for IndexCandidate {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// An indexed document on its way to a new document it may match.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexedSide(pub IndexedDoc);

impl MemSize for IndexedSide {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.0.id.capacity()
            + self.0.source.capacity()
            + self.0.kept_id.capacity()
            + self.0.signature.capacity()
    }
}

/// A new document verified as a duplicate of an indexed one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexMatch {
    /// The new document.
    pub new: DocId,
    /// The indexed document it matches.
    pub old: IndexRef,
    /// The kept document of the indexed one's cluster.
    pub kept: IndexRef,
    /// Its id.
    pub kept_id: String,
    /// Its content hash.
    pub kept_content: u128,
    /// Jaccard estimate or `1 - hamming/64`; 1 for equal texts.
    pub similarity: f64,
}

impl MemSize for IndexMatch {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>() + self.kept_id.capacity()
    }
}

/// An earlier cluster that a new cluster joins, on its way to the new cluster's kept
/// document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OldLink {
    /// The earlier cluster's kept document.
    pub kept: IndexRef,
    /// Its id.
    pub kept_id: String,
    /// Its content hash.
    pub kept_content: u128,
    /// The new document whose match made the link, when it matched the kept document
    /// itself (so it is verified with it).
    pub direct: Option<DocId>,
}

impl MemSize for OldLink {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>() + self.kept_id.capacity()
    }
}

// ---------------------------------------------------------------------------------------
// 1. Probing the index by key partition, and writing the new key parts.

struct ProbeDrain {
    plan: Arc<IndexPlan>,
    /// The index's segments, as the run read them.
    segments: Vec<Segment>,
    max_bucket_size: usize,
    bucket_anchors: usize,
    partition: Option<u32>,
    rows: Vec<IndexKey>,
    sink: PartSink,
}

impl ProbeDrain {
    /// Writes the key part of the partition at hand and probes the index's segments.
    fn flush(&mut self, emit: &mut dyn FnMut(IndexCandidate)) {
        let Some(partition) = self.partition else { return };
        let rows = std::mem::take(&mut self.rows);
        if rows.is_empty() || self.sink.stopped() {
            return;
        }
        let written =
            KeyPartWriter::create(&self.plan.new_generation_dir(), partition).and_then(|mut w| {
                let generation = self.plan.generation;
                let keys: Vec<KeyRow> = rows
                    .iter()
                    .map(|r| KeyRow { key: r.key, generation, doc: r.doc.get() })
                    .collect();
                w.write(&keys)?;
                w.finish()
            });
        match written {
            Ok(n) => self.sink.stats.borrow_mut().index.keys_written += n,
            Err(e) => return self.sink.fail(e),
        }
        let mut keys: Vec<u64> = rows.iter().map(|r| r.key).collect();
        keys.dedup();
        for segment in &self.segments {
            let dir = self.plan.dir.join(&segment.folder);
            let mut probe = ProbeStats::default();
            let found = match probe_keys(&dir, partition, &keys, &mut probe) {
                Ok(found) => found,
                Err(e) => return self.sink.fail(e),
            };
            self.sink.stats.borrow_mut().index.add_probe(probe);
            // Both sides are in key order: a merge join, bucket by bucket.
            let (mut i, mut j) = (0, 0);
            while i < rows.len() && j < found.len() {
                let key = rows[i].key.min(found[j].key);
                let new_end = i + rows[i..].iter().take_while(|r| r.key == key).count();
                let old_end = j + found[j..].iter().take_while(|r| r.key == key).count();
                if rows[i].key == key && found[j].key == key {
                    // An oversized bucket of the index: only its earliest documents, as a
                    // cut bucket within a run is compared with its anchors.
                    let olds = &found[j..old_end];
                    let olds = if olds.len() > self.max_bucket_size {
                        &olds[..self.bucket_anchors]
                    } else {
                        olds
                    };
                    for new in &rows[i..new_end] {
                        for old in olds {
                            emit(IndexCandidate {
                                segment: segment.first(),
                                part: doc_part_of(old.doc, segment.doc_parts),
                                old: old.at(),
                                new: new.doc,
                            });
                        }
                    }
                }
                i = new_end;
                j = old_end;
            }
        }
    }
}

impl Drain<IndexKey, IndexCandidate> for ProbeDrain {
    fn item(
        &mut self,
        item: IndexKey,
        emit: &mut dyn FnMut(IndexCandidate),
    ) -> Result<(), SpillError> {
        let partition = partition_of(item.key, self.plan.manifest.partitions);
        if self.partition != Some(partition) {
            self.flush(emit);
            self.partition = Some(partition);
        }
        self.rows.push(item);
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(IndexCandidate)) -> Result<(), SpillError> {
        self.flush(emit);
        Ok(())
    }
}

/// Probes the index with this run's keys and writes them as the new generation's keys.
pub trait ProbeIndex<'s, T: Timestamp> {
    /// The candidates of new representatives against indexed documents.
    fn probe_index(
        self,
        plan: Arc<IndexPlan>,
        buckets: crate::config::BucketSpec,
        sink: PartSink,
        spill: Spill,
    ) -> StreamVec<'s, T, IndexCandidate>;
}

impl<'s, T: Timestamp> ProbeIndex<'s, T> for StreamVec<'s, T, IndexKey> {
    fn probe_index(
        self,
        plan: Arc<IndexPlan>,
        buckets: crate::config::BucketSpec,
        sink: PartSink,
        spill: Spill,
    ) -> StreamVec<'s, T, IndexCandidate> {
        let partitions = plan.manifest.partitions;
        let by_partition =
            Exchange::new(move |k: &IndexKey| u64::from(partition_of(k.key, partitions)));
        collect_sorted(self, by_partition, "ProbeIndex", spill, move || {
            Ok(ProbeDrain {
                plan: plan.clone(),
                segments: plan.manifest.segments(),
                max_bucket_size: buckets.max_bucket_size,
                bucket_anchors: buckets.bucket_anchors,
                partition: None,
                rows: Vec::new(),
                sink: sink.clone(),
            })
        })
    }
}

// ---------------------------------------------------------------------------------------
// 2. Fetching the indexed documents of the candidates, a docs part at a time.

struct FetchDrain {
    plan: Arc<IndexPlan>,
    group: Option<(u32, u32)>,
    candidates: Vec<IndexCandidate>,
    sink: PartSink,
}

impl FetchDrain {
    fn flush(&mut self, emit: &mut dyn FnMut(Keyed<(DocId, IndexRef), IndexedSide>)) {
        let Some((segment, part)) = self.group else { return };
        let candidates = std::mem::take(&mut self.candidates);
        if candidates.is_empty() || self.sink.stopped() {
            return;
        }
        let mut wanted: Vec<IndexRef> = candidates.iter().map(|c| c.old).collect();
        wanted.dedup();
        let Some(dir) = self.plan.segment_dir(segment) else {
            unreachable!("candidates come from committed segments")
        };
        let mut probe = ProbeStats::default();
        let docs = match fetch_docs(&dir, part, &wanted, &mut probe) {
            Ok(docs) => docs,
            Err(e) => return self.sink.fail(e),
        };
        let mut stats = self.sink.stats.borrow_mut();
        stats.index.add_probe(probe);
        stats.index.candidates += candidates.len() as u64;
        drop(stats);
        for c in candidates {
            // A document missing from its part was taken out of the index: no candidate.
            if let Ok(i) = docs.binary_search_by_key(&c.old, IndexedDoc::at) {
                emit(Keyed { key: (c.new, c.old), value: IndexedSide(docs[i].clone()) });
            }
        }
    }
}

impl Drain<IndexCandidate, Keyed<(DocId, IndexRef), IndexedSide>> for FetchDrain {
    fn item(
        &mut self,
        c: IndexCandidate,
        emit: &mut dyn FnMut(Keyed<(DocId, IndexRef), IndexedSide>),
    ) -> Result<(), SpillError> {
        if self.candidates.last() == Some(&c) {
            return Ok(()); // found through several keys
        }
        if self.group != Some((c.segment, c.part)) {
            self.flush(emit);
            self.group = Some((c.segment, c.part));
        }
        self.candidates.push(c);
        Ok(())
    }

    fn end(
        &mut self,
        emit: &mut dyn FnMut(Keyed<(DocId, IndexRef), IndexedSide>),
    ) -> Result<(), SpillError> {
        self.flush(emit);
        Ok(())
    }
}

/// Reads the indexed side of every candidate.
pub trait FetchIndexed<'s, T: Timestamp> {
    /// The indexed documents of the candidates, keyed by the new document.
    fn fetch_indexed(
        self,
        plan: Arc<IndexPlan>,
        sink: PartSink,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<(DocId, IndexRef), IndexedSide>>;
}

impl<'s, T: Timestamp> FetchIndexed<'s, T> for StreamVec<'s, T, IndexCandidate> {
    fn fetch_indexed(
        self,
        plan: Arc<IndexPlan>,
        sink: PartSink,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<(DocId, IndexRef), IndexedSide>> {
        let by_part = Exchange::new(|c: &IndexCandidate| {
            neardup_core::hash::route((u64::from(c.segment) << 32) | u64::from(c.part))
        });
        collect_sorted(self, by_part, "FetchIndexed", spill, move || {
            Ok(FetchDrain {
                plan: plan.clone(),
                group: None,
                candidates: Vec::new(),
                sink: sink.clone(),
            })
        })
    }
}

// ---------------------------------------------------------------------------------------
// 3. Verifying at the new document's home worker.

/// The signature an index row holds, in the run's method.
fn decode_signature(bytes: &[u8], like: &Signature) -> Option<Signature> {
    match like {
        Signature::MinHash(_) => {
            if !bytes.len().is_multiple_of(4) {
                return None;
            }
            let values = bytes
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect();
            Some(Signature::MinHash(MinHashSignature::from_values(values)))
        }
        Signature::SimHash(_) => {
            let bits: [u8; 8] = bytes.try_into().ok()?;
            Some(Signature::SimHash(SimHash::from_bits(u64::from_le_bytes(bits))))
        }
    }
}

/// A signature as an index row holds it: little-endian values.
pub fn encode_signature(signature: &Signature) -> Vec<u8> {
    match signature {
        Signature::MinHash(m) => m.values().iter().flat_map(|v| v.to_le_bytes()).collect(),
        Signature::SimHash(s) => s.bits().to_le_bytes().to_vec(),
    }
}

struct VerifyDrain {
    store: Rc<RefCell<DocStore>>,
    signatures: Cursor,
    /// For the content hash of new documents without a signature.
    meta: Cursor<DocMeta>,
    stats: Rc<RefCell<crate::stats::WorkerStats>>,
}

impl Drain<Keyed<(DocId, IndexRef), IndexedSide>, IndexMatch> for VerifyDrain {
    fn item(
        &mut self,
        item: Keyed<(DocId, IndexRef), IndexedSide>,
        emit: &mut dyn FnMut(IndexMatch),
    ) -> Result<(), SpillError> {
        let (new, old) = item.key;
        let side = item.value.0;
        let verifier = self.store.borrow().verifier.clone().expect("set by the store");
        // Equal texts match; otherwise both need signatures (a document with too few
        // features to sign has none, and matches equal texts only).
        let similarity = match self.signatures.get(new)? {
            Some(entry) if entry.node.content.get() == side.content => Some(1.0),
            Some(_) if side.signature.is_empty() => None,
            Some(entry) => decode_signature(&side.signature, &entry.signature).and_then(|theirs| {
                let verdict = verifier.verify(&entry.signature, &theirs, &[], &[]);
                verdict.is_duplicate.then_some(verdict.similarity)
            }),
            None => (self.meta.find(new)?.content.get() == side.content).then_some(1.0),
        };
        if let Some(similarity) = similarity {
            self.stats.borrow_mut().index.matches += 1;
            emit(IndexMatch {
                new,
                old,
                kept: side.kept,
                kept_id: side.kept_id,
                kept_content: side.kept_content,
                similarity,
            });
        }
        Ok(())
    }
}

/// Verifies new documents against the indexed documents they met.
pub trait VerifyIndexed<'s, T: Timestamp> {
    /// The verified matches.
    fn verify_indexed(
        self,
        store: Rc<RefCell<DocStore>>,
        stats: Rc<RefCell<crate::stats::WorkerStats>>,
        spill: Spill,
    ) -> StreamVec<'s, T, IndexMatch>;
}

impl<'s, T: Timestamp> VerifyIndexed<'s, T>
    for StreamVec<'s, T, Keyed<(DocId, IndexRef), IndexedSide>>
{
    fn verify_indexed(
        self,
        store: Rc<RefCell<DocStore>>,
        stats: Rc<RefCell<crate::stats::WorkerStats>>,
        spill: Spill,
    ) -> StreamVec<'s, T, IndexMatch> {
        let by_new = Exchange::new(|k: &Keyed<(DocId, IndexRef), IndexedSide>| route_doc(k.key.0));
        collect_sorted(self, by_new, "VerifyIndexed", spill, move || {
            let meta = Cursor::over(
                store.borrow().meta.as_ref().expect("the store finished before any candidate"),
            )?;
            Ok(VerifyDrain {
                store: store.clone(),
                signatures: Cursor::open(&store)?,
                meta,
                stats: stats.clone(),
            })
        })
    }
}

// ---------------------------------------------------------------------------------------
// 4. Tying matches to the new clusters.

/// A membership or a match of one new document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum LinkIn {
    /// The document's cluster (sorted before its matches).
    Member(DocId),
    /// A match of the document.
    Match(IndexMatch),
}

impl MemSize for LinkIn {
    fn mem_size(&self) -> usize {
        match self {
            LinkIn::Member(_) => std::mem::size_of::<Self>(),
            LinkIn::Match(m) => m.mem_size(),
        }
    }
}

struct LinkDrain {
    /// The document at hand and its cluster's kept document.
    cluster: Option<(DocId, DocId)>,
}

impl Drain<Keyed<(DocId, u8, IndexRef), LinkIn>, Keyed<DocId, OldLink>> for LinkDrain {
    fn item(
        &mut self,
        item: Keyed<(DocId, u8, IndexRef), LinkIn>,
        emit: &mut dyn FnMut(Keyed<DocId, OldLink>),
    ) -> Result<(), SpillError> {
        let doc = item.key.0;
        match item.value {
            LinkIn::Member(kept) => self.cluster = Some((doc, kept)),
            LinkIn::Match(m) => {
                let kept = match self.cluster {
                    Some((d, kept)) if d == doc => kept,
                    _ => doc, // in no pair of this run: alone
                };
                emit(Keyed {
                    key: kept,
                    value: OldLink {
                        kept: m.kept,
                        kept_id: m.kept_id,
                        kept_content: m.kept_content,
                        direct: (m.old == m.kept).then_some(doc),
                    },
                });
            }
        }
        Ok(())
    }
}

/// Ties matches against the index to the clusters of this run.
pub trait LinkClusters<'s, T: Timestamp> {
    /// For every match, the earlier cluster it joins, keyed by the kept document of the
    /// new document's cluster (the document itself when it is in no pair).
    fn link_clusters(
        self,
        memberships: StreamVec<'s, T, (DocId, Membership)>,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<DocId, OldLink>>;
}

impl<'s, T: Timestamp> LinkClusters<'s, T> for StreamVec<'s, T, IndexMatch> {
    fn link_clusters(
        self,
        memberships: StreamVec<'s, T, (DocId, Membership)>,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<DocId, OldLink>> {
        let lowest = IndexRef { generation: 0, doc: 0 };
        let members = memberships
            .map(move |(doc, m)| Keyed { key: (doc, 0u8, lowest), value: LinkIn::Member(m.kept) });
        let matches = self.map(|m| Keyed { key: (m.new, 1u8, m.old), value: LinkIn::Match(m) });
        let by_doc = Exchange::new(|k: &Keyed<(DocId, u8, IndexRef), LinkIn>| route_doc(k.key.0));
        collect_sorted(members.concat(matches), by_doc, "LinkClusters", spill, || {
            Ok(LinkDrain { cluster: None })
        })
    }
}

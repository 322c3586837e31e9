//! Every document's home worker: keeps its metadata for the `documents/` row, and for a
//! representative with a signature emits one bucket record per band or table and keeps the
//! signature for verification.
//!
//! Partitioning: documents and representative markers arrive exchanged on `DocId` (their
//! home worker); the per-worker representative counts arrive broadcast, so SimHash can
//! pick its block layout from the corpus size before emitting keys. Emits: once all three
//! are complete, a batch per activation. Holds: at most its spill limit of documents; then
//! two sorted files (metadata, signatures) shared with the verification and document
//! stages, each held within the spill limit in memory and the rest on disk.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use neardup_core::{BlockLayout, BucketKey, DocId, LshParams, Signature, Verifier};
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::progress::Timestamp;

use crate::config::{JobConfig, MethodParams};
use crate::operators::collect::{Drain, Keyed, Spill, collect_sorted};
use crate::records::{BucketRecord, DocMeta, NodeInfo, SigEntry, SignedDoc, content_key};
use crate::spill::{MemSize, SortedFile, SortedIter, SortedRuns, SpillError};

/// What the document store leaves for later stages of the same worker.
#[derive(Default)]
pub struct DocStore {
    /// Verifies candidate pairs; set before any bucket record is emitted.
    pub verifier: Option<Verifier>,
    /// The SimHash block count chosen.
    pub blocks: Option<u32>,
    /// Signatures of this worker's representatives, by `DocId`.
    pub signatures: Option<SortedFile<Keyed<DocId, SigEntry>>>,
    /// Whether stages after verification read the signatures (a run with an index
    /// matches against it and writes them to it).
    pub signatures_read_later: bool,
    /// Metadata of every accepted document of this worker, by `DocId`.
    pub meta: Option<SortedFile<Keyed<DocId, DocMeta>>>,
}

/// What the store emits for a representative: its bucket records, and with an index its
/// content key as well.
#[derive(Clone, Copy, Debug)]
pub enum Stored {
    /// A band or block-table key, for the buckets (and the index).
    Bucket(BucketRecord),
    /// The content key, for the index only.
    Content(BucketRecord),
}

impl Stored {
    /// The record, whichever it is.
    pub fn record(self) -> BucketRecord {
        match self {
            Stored::Bucket(r) | Stored::Content(r) => r,
        }
    }
}

/// One input of the store, keyed so counts sort first and a document's marker comes just
/// before the document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum StoreIn {
    /// A worker's number of representatives.
    Count(u64),
    /// The next document is a representative.
    Representative,
    /// A signed document.
    Doc(SignedDoc),
}

impl MemSize for StoreIn {
    fn mem_size(&self) -> usize {
        match self {
            StoreIn::Doc(d) => d.mem_size(),
            _ => std::mem::size_of::<StoreIn>(),
        }
    }
}

/// The store's sort key: (`DocId` raw, kind, sender) with counts at `DocId` 0, which no
/// record has (record numbers start at 1).
pub type StoreKey = Keyed<(u64, u8, u64), StoreIn>;

/// A count from worker `sender`.
pub fn count_in(sender: usize, n: u64) -> StoreKey {
    Keyed { key: (0, 0, sender as u64), value: StoreIn::Count(n) }
}

/// The marker for representative `doc`.
pub fn representative_in(doc: DocId) -> StoreKey {
    Keyed { key: (doc.get(), 1, 0), value: StoreIn::Representative }
}

/// A document on its home worker.
pub fn doc_in(doc: SignedDoc) -> StoreKey {
    Keyed { key: (doc.doc.get(), 2, 0), value: StoreIn::Doc(doc) }
}

enum Keyer {
    MinHash(LshParams),
    SimHash(BlockLayout),
}

struct StoreDrain {
    job: Arc<JobConfig>,
    shared: Rc<RefCell<DocStore>>,
    spill: Spill,
    total: u64,
    representative: Option<DocId>,
    keyer: Option<Keyer>,
    meta: SortedRuns<Keyed<DocId, DocMeta>>,
    signatures: SortedRuns<Keyed<DocId, SigEntry>>,
    signed: u64,
}

impl StoreDrain {
    /// Chooses the keys (and verifier) once every count is in: counts sort first.
    fn keyer(&mut self) -> &Keyer {
        if self.keyer.is_none() {
            let spec = &self.job.spec;
            let (keyer, verifier) = match &self.job.params {
                MethodParams::Minhash { lsh, .. } => (
                    Keyer::MinHash(*lsh),
                    Verifier::MinHash {
                        threshold: spec.minhash.threshold,
                        lsh: *lsh,
                        mode: spec.minhash.verify,
                    },
                ),
                MethodParams::Simhash { layout } => {
                    let layout = layout.clone().unwrap_or_else(|| {
                        BlockLayout::choose(spec.simhash.max_distance, self.total)
                            .expect("checked by JobConfig")
                    });
                    (Keyer::SimHash(layout.clone()), Verifier::SimHash { layout })
                }
            };
            let mut shared = self.shared.borrow_mut();
            shared.blocks = match &keyer {
                Keyer::SimHash(l) => Some(l.blocks()),
                Keyer::MinHash(_) => None,
            };
            shared.verifier = Some(verifier);
            self.keyer = Some(keyer);
        }
        self.keyer.as_ref().expect("set above")
    }
}

impl Drain<StoreKey, Stored> for StoreDrain {
    fn item(&mut self, item: StoreKey, emit: &mut dyn FnMut(Stored)) -> Result<(), SpillError> {
        match item.value {
            StoreIn::Count(n) => self.total += n,
            StoreIn::Representative => self.representative = Some(DocId::from_raw(item.key.0)),
            StoreIn::Doc(d) => {
                let is_rep = self.representative == Some(d.doc);
                let seed = self.job.spec.seed;
                if let (true, Some(signature)) = (is_rep, &d.signature) {
                    match (self.keyer(), signature) {
                        (Keyer::MinHash(lsh), Signature::MinHash(s)) => {
                            lsh.band_keys(s, seed).for_each(|key| {
                                emit(Stored::Bucket(BucketRecord { key, doc: d.doc }));
                            });
                        }
                        (Keyer::SimHash(layout), Signature::SimHash(f)) => {
                            layout.keys(*f, seed).for_each(|key| {
                                emit(Stored::Bucket(BucketRecord { key, doc: d.doc }));
                            });
                        }
                        _ => unreachable!("signatures match the job's method"),
                    }
                }
                // With an index, every representative is looked up and indexed by its
                // content too: those with too few features to sign by content alone.
                if is_rep && self.job.index.is_some() {
                    let key = BucketKey::new(content_key(d.content));
                    emit(Stored::Content(BucketRecord { key, doc: d.doc }));
                }
                let node =
                    NodeInfo { doc: d.doc, id: d.id.clone(), chars: d.chars, content: d.content };
                self.meta.push(Keyed {
                    key: d.doc,
                    value: DocMeta {
                        id: d.id,
                        chars: d.chars,
                        features: d.features,
                        content: d.content,
                        matched: d.signature.is_some(),
                        representative: is_rep,
                        web: d.web,
                    },
                })?;
                if let (true, Some(signature)) = (is_rep, d.signature) {
                    self.signed += 1;
                    self.signatures.push(Keyed {
                        key: d.doc,
                        value: SigEntry { node, signature, feature_set: d.feature_set },
                    })?;
                }
            }
        }
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(Stored)) -> Result<(), SpillError> {
        self.keyer();
        let spilled = self.meta.spilled_bytes() + self.signatures.spilled_bytes();
        let meta = std::mem::replace(&mut self.meta, self.spill.runs()).into_file()?;
        let signatures = std::mem::replace(&mut self.signatures, self.spill.runs()).into_file()?;
        self.spill.stats.borrow_mut().spilled_bytes += spilled;
        self.spill.stats.borrow_mut().signed_representatives += self.signed;
        let mut shared = self.shared.borrow_mut();
        shared.meta = Some(meta);
        shared.signatures = Some(signatures);
        shared.signatures_read_later = self.job.index.is_some();
        Ok(())
    }
}

/// Runs the document store.
pub trait StoreDocs<'s, T: Timestamp> {
    /// Stores documents and emits the bucket records of representatives (and their
    /// content keys, with an index); the input holds documents and markers already on
    /// their home worker and every worker's count.
    fn store_docs(
        self,
        job: Arc<JobConfig>,
        shared: Rc<RefCell<DocStore>>,
        spill: Spill,
    ) -> StreamVec<'s, T, Stored>;
}

impl<'s, T: Timestamp> StoreDocs<'s, T> for StreamVec<'s, T, StoreKey> {
    fn store_docs(
        self,
        job: Arc<JobConfig>,
        shared: Rc<RefCell<DocStore>>,
        spill: Spill,
    ) -> StreamVec<'s, T, Stored> {
        let drain_spill = spill.clone();
        collect_sorted(self, Pipeline, "StoreDocs", spill, move || {
            Ok(StoreDrain {
                job: job.clone(),
                shared: shared.clone(),
                spill: drain_spill.clone(),
                total: 0,
                representative: None,
                keyer: None,
                meta: drain_spill.runs(),
                signatures: drain_spill.runs(),
                signed: 0,
            })
        })
    }
}

/// Walks a sorted file of the store (signatures by default, or metadata) alongside
/// records sorted by `DocId`.
pub(crate) struct Cursor<V = SigEntry> {
    rows: SortedIter<Keyed<DocId, V>>,
    current: Option<Keyed<DocId, V>>,
}

impl Cursor<SigEntry> {
    /// A cursor over the store's signature file.
    pub(crate) fn open(store: &Rc<RefCell<DocStore>>) -> Result<Self, SpillError> {
        let store = store.borrow();
        let file =
            store.signatures.as_ref().expect("the store finished before any candidate arrived");
        Self::over(file)
    }
}

impl<V: serde::de::DeserializeOwned + Clone + 'static> Cursor<V> {
    /// A cursor over `file` (it keeps the file while open).
    pub(crate) fn over(file: &SortedFile<Keyed<DocId, V>>) -> Result<Self, SpillError> {
        Ok(Cursor { rows: file.iter()?, current: None })
    }

    /// The row of `doc`, or `None` when it has none (for signatures: not a signed
    /// representative). Calls must come in `DocId` order.
    pub(crate) fn get(&mut self, doc: DocId) -> Result<Option<&V>, SpillError> {
        while self.current.as_ref().is_none_or(|c| c.key < doc) {
            match self.rows.next() {
                Some(row) => self.current = Some(row?),
                None => return Ok(None),
            }
        }
        Ok(self.current.as_ref().filter(|c| c.key == doc).map(|c| &c.value))
    }

    /// The row of `doc`.
    ///
    /// # Panics
    /// If `doc` is not stored here: candidates go to their documents' home workers, so a
    /// miss is a routing bug.
    pub(crate) fn find(&mut self, doc: DocId) -> Result<&V, SpillError> {
        let found = self.get(doc)?;
        Ok(found
            .unwrap_or_else(|| unreachable!("document {doc:?} is not stored on its home worker")))
    }
}

//! Every document's home worker: keeps its metadata for the `documents/` row, and for a
//! representative with a signature emits one bucket record per band or table and keeps the
//! signature for verification.
//!
//! Partitioning: documents and representative markers arrive exchanged on `DocId` (their
//! home worker); the per-worker representative counts arrive broadcast, so SimHash can
//! pick its block layout from the corpus size before emitting keys. Emits: once all three
//! are complete, a batch per activation. Holds: a signed document's signature goes to the
//! signature log as it arrives (`sig_log.rs`: in memory up to half the spill limit, past
//! it all in one file, with 8 bytes a signature held in memory before the file was made),
//! and the rest of every document with the log position of its signature to sorted runs
//! (the other half). Then it leaves for the verification and document stages the log
//! (every signed document's signature, copies included) and two sorted files, each held
//! within the spill limit in memory and the rest on disk: the metadata, and the log
//! positions of the representatives' signatures.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use neardup_core::{BlockLayout, BucketKey, DocId, LshParams, Signature, Verifier};
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::progress::Timestamp;

use crate::operators::collect::collect_sorted_taking;
use crate::operators::collect::{Drain, Keyed, Spill};
use crate::operators::env::OperatorEnv;
use crate::operators::store::{DocStore, Signatures};
use crate::settings::config::{JobConfig, MethodParams};
use crate::storage::records::{BucketRecord, DocMeta, NodeInfo, SigEntry, SignedDoc, content_key};
use crate::storage::sig_log::{LogAt, LogReader, SigLog, SigLogFile};
use crate::storage::spill::{MemSize, SortedWriter, SpillError};

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
    /// A document as it was sent: signed or not.
    Doc(SignedDoc),
    /// A signed document whose signature and feature set are in the signature log at the
    /// position given.
    Signed(SignedDoc, LogAt),
}

impl MemSize for StoreIn {
    fn mem_size(&self) -> usize {
        match self {
            StoreIn::Doc(d) | StoreIn::Signed(d, _) => d.mem_size() + size_of::<LogAt>(),
            _ => std::mem::size_of::<StoreIn>(),
        }
    }
}

/// Moves a signed document's signature and feature set to `log` as it arrives, so the
/// sorted runs carry the rest of it and where they went.
///
/// # Errors
/// When the log cannot be written.
pub(crate) fn log_signature(log: &mut SigLog, item: StoreKey) -> Result<StoreKey, SpillError> {
    let Keyed { key, value: StoreIn::Doc(mut d) } = item else { return Ok(item) };
    let Some(signature) = d.signature.take() else {
        return Ok(Keyed { key, value: StoreIn::Doc(d) });
    };
    let at = log.push(SigEntry {
        node: NodeInfo { doc: d.doc, id: d.id.clone(), chars: d.chars, content: d.content },
        signature,
        features: d.features,
        feature_set: std::mem::take(&mut d.feature_set),
    })?;
    Ok(Keyed { key, value: StoreIn::Signed(d, at) })
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
    /// Both arrive in `DocId` order (the store drains its input sorted).
    meta: SortedWriter<Keyed<DocId, DocMeta>>,
    /// Where each signed representative's signature is in the log.
    index: SortedWriter<Keyed<DocId, LogAt>>,
    reader: LogReader,
    signed: u64,
}

impl StoreDrain {
    /// Chooses the keys (and verifier) once every count is in: counts sort first.
    fn keyer(&mut self) -> &Keyer {
        if self.keyer.is_none() {
            let (keyer, verifier) = match &self.job.params {
                MethodParams::Minhash { lsh, .. } => {
                    (Keyer::MinHash(*lsh), self.job.minhash_spec().verifier(*lsh))
                }
                MethodParams::Simhash { layout, max_distance, .. } => {
                    let layout = layout.clone().unwrap_or_else(|| {
                        BlockLayout::choose(*max_distance, self.total)
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

    /// A drain of documents whose signatures are in `log`.
    fn new(
        job: Arc<JobConfig>,
        shared: Rc<RefCell<DocStore>>,
        spill: Spill,
        log: SigLogFile,
    ) -> Self {
        StoreDrain {
            job,
            shared,
            total: 0,
            representative: None,
            keyer: None,
            meta: spill.writer(),
            index: spill.writer(),
            reader: log.reader(),
            signed: 0,
            spill,
        }
    }

    /// Stores document `d`, whose signature is at `at` in the log when it has one.
    fn doc(
        &mut self,
        d: SignedDoc,
        at: Option<LogAt>,
        emit: &mut dyn FnMut(Stored),
    ) -> Result<(), SpillError> {
        assert!(d.signature.is_none(), "signatures are logged as documents arrive");
        let is_rep = self.representative == Some(d.doc);
        if let (true, Some(at)) = (is_rep, at) {
            let seed = self.job.spec.seed;
            self.keyer();
            let keyer = self.keyer.as_ref().expect("chosen above");
            match (keyer, &self.reader.get(at)?.signature) {
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
            self.signed += 1;
            self.index.push(Keyed { key: d.doc, value: at })?;
        }
        // With an index, every representative is looked up and indexed by its content
        // too: those with too few features to sign by content alone.
        if is_rep && self.job.index.is_some() {
            let key = BucketKey::new(content_key(d.content));
            emit(Stored::Content(BucketRecord { key, doc: d.doc }));
        }
        self.meta.push(Keyed {
            key: d.doc,
            value: DocMeta {
                id: d.id,
                chars: d.chars,
                features: d.features,
                content: d.content,
                matched: at.is_some(),
                representative: is_rep,
                web: d.web,
                paragraphs: d.paragraphs,
                paragraph_chars: d.paragraph_chars,
            },
        })
    }
}

impl Drain<StoreKey, Stored> for StoreDrain {
    fn item(&mut self, item: StoreKey, emit: &mut dyn FnMut(Stored)) -> Result<(), SpillError> {
        match item.value {
            StoreIn::Count(n) => self.total += n,
            StoreIn::Representative => self.representative = Some(DocId::from_raw(item.key.0)),
            StoreIn::Doc(d) => self.doc(d, None, emit)?,
            StoreIn::Signed(d, at) => self.doc(d, Some(at), emit)?,
        }
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(Stored)) -> Result<(), SpillError> {
        self.keyer();
        let (meta, meta_bytes) =
            std::mem::replace(&mut self.meta, self.spill.writer()).into_file()?;
        let (index, index_bytes) =
            std::mem::replace(&mut self.index, self.spill.writer()).into_file()?;
        self.spill.stats.borrow_mut().resources.spilled_bytes += meta_bytes + index_bytes;
        self.spill.stats.borrow_mut().matching.signed_representatives += self.signed;
        let mut shared = self.shared.borrow_mut();
        shared.meta = Some(meta);
        shared.signatures = Some(Signatures { index, log: self.reader.log().clone() });
        shared.signatures_read_later = self.job.index.is_some();
        Ok(())
    }
}

/// Runs the document store.
pub trait StoreDocs<'s, T: Timestamp> {
    /// Stores documents and emits the bucket records of representatives (and their
    /// content keys, with an index); the input holds documents and markers already on
    /// their home worker and every worker's count.
    fn store_docs(self, job: Arc<JobConfig>, env: &OperatorEnv) -> StreamVec<'s, T, Stored>;
}

impl<'s, T: Timestamp> StoreDocs<'s, T> for StreamVec<'s, T, StoreKey> {
    fn store_docs(self, job: Arc<JobConfig>, env: &OperatorEnv) -> StreamVec<'s, T, Stored> {
        let (shared, spill) = (env.store.clone(), env.spill.clone());
        // Half the limit for the log, half for the sorted runs of the rest.
        let half = spill.share(2);
        let log = Rc::new(RefCell::new(Some(SigLog::new(half.dir.clone(), half.limit_bytes))));
        let take_log = log.clone();
        let take = move |item: StoreKey| {
            let mut log = take_log.borrow_mut();
            let log = log.as_mut().expect("documents arrive before the store drains");
            log_signature(log, item).map(Some)
        };
        collect_sorted_taking(self, Pipeline, "StoreDocs", half, take, move || {
            let log = log.borrow_mut().take().expect("the store drains once");
            let (log, bytes) = log.finish()?;
            spill.stats.borrow_mut().resources.spilled_bytes += bytes;
            Ok(StoreDrain::new(job.clone(), shared.clone(), spill.clone(), log))
        })
    }
}

/// Runs the store's stages by hand over `input` under `spill`'s limit, as the dataflow
/// does: logs signatures as the records arrive, then drains them sorted. What it emitted,
/// and the store.
#[cfg(test)]
pub(crate) fn store_by_hand(
    job: JobConfig,
    spill: &Spill,
    input: Vec<StoreKey>,
) -> (Vec<Stored>, Rc<RefCell<DocStore>>) {
    let mut log = SigLog::new(spill.dir.clone(), spill.share(2).limit_bytes);
    let input = input.into_iter().map(|item| log_signature(&mut log, item).unwrap()).collect();
    let (log, bytes) = log.finish().unwrap();
    spill.stats.borrow_mut().resources.spilled_bytes += bytes;
    let shared = Rc::new(RefCell::new(DocStore::default()));
    let mut stage = StoreDrain::new(Arc::new(job), shared.clone(), spill.clone(), log);
    (crate::operators::testing::drain(&mut stage, input), shared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::store::Cursor;
    use crate::operators::testing::{self, signed};
    use crate::settings::spec::{JobSpec, Method};
    use crate::storage::spill::SortedFile;

    const LONG: &str = "the quick brown fox jumps over the lazy dog near the river bank today";

    /// Documents 1 (a representative), 2 (a copy of another text) and 3 (a representative
    /// too short to sign), and counts of 1 and 2 representatives from two workers.
    fn input(job: &JobConfig) -> Vec<StoreKey> {
        let short = signed(job, 3, "tiny");
        assert!(short.signature.is_none());
        vec![
            doc_in(signed(job, 1, LONG)),
            doc_in(signed(job, 2, &format!("{LONG} again"))),
            doc_in(short),
            representative_in(DocId::new(0, 3)),
            representative_in(DocId::new(0, 1)),
            count_in(1, 2),
            count_in(0, 1),
        ]
    }

    fn rows<V: serde::de::DeserializeOwned + Clone + 'static>(
        file: &SortedFile<Keyed<DocId, V>>,
    ) -> Vec<(u64, V)> {
        file.iter().unwrap().map(|r| r.unwrap()).map(|r| (r.key.record(), r.value)).collect()
    }

    #[test]
    fn representatives_get_their_band_keys_and_every_document_its_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let MethodParams::Minhash { lsh, .. } = job.params else { unreachable!() };
        let spill = testing::spill(dir.path(), 0);
        let (out, shared) = store_by_hand(job.clone(), &spill, input(&job));
        // One key per band, for the signed representative only; no content keys.
        assert_eq!(out.len() as u32, lsh.bands());
        assert!(out.iter().all(|s| matches!(s, Stored::Bucket(r) if r.doc == DocId::new(0, 1))));

        let shared = shared.borrow();
        assert!(matches!(shared.verifier, Some(Verifier::MinHash { .. })));
        assert_eq!(shared.blocks, None);
        assert!(!shared.signatures_read_later);
        let meta = rows(shared.meta.as_ref().unwrap());
        let flags: Vec<(u64, bool, bool)> =
            meta.iter().map(|(r, m)| (*r, m.representative, m.matched)).collect();
        assert_eq!(flags, [(1, true, true), (2, false, true), (3, true, false)]);
        let mut signatures = shared.signatures.as_ref().unwrap().cursor().unwrap();
        let d1 = signatures.find(DocId::new(0, 1)).unwrap().clone();
        assert_eq!(
            (d1.node.id.as_str(), Some(d1.signature)),
            ("d1", signed(&job, 1, LONG).signature)
        );
        // A copy of another text and a text too short to sign have none.
        assert_eq!(signatures.get(DocId::new(0, 2)).unwrap(), None);
        assert_eq!(signatures.get(DocId::new(0, 3)).unwrap(), None);
        assert_eq!(spill.stats.borrow().matching.signed_representatives, 1);
    }

    /// The store under a limit that sends its signature log to a file (with the first
    /// signatures moved there from memory) gives what it gives in memory: documents arrive
    /// from three senders, each in `DocId` order, interleaved, and every other one is a
    /// representative.
    #[test]
    fn a_store_that_spills_emits_and_keeps_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let docs: Vec<SignedDoc> = (1..=120)
            .map(|r| signed(&job, r, &LONG.replace("fox", &format!("fox{}", r / 2))))
            .collect();
        let mut input: Vec<StoreKey> = Vec::new();
        for turn in 0..40 {
            for sender in 0..3 {
                input.push(doc_in(docs[sender * 40 + turn].clone()));
            }
        }
        input.extend((1..=120).step_by(2).map(|r| representative_in(DocId::new(0, r))));
        input.push(count_in(0, 60));
        let run = |limit: usize| {
            let spill = testing::spill(&dir.path().join(format!("spill-{limit}")), limit);
            let (out, shared) = store_by_hand(job.clone(), &spill, input.clone());
            let keys: Vec<(u64, u64)> =
                out.iter().map(|s| (s.record().key.get(), s.record().doc.get())).collect();
            let shared = shared.borrow();
            let meta = rows(shared.meta.as_ref().unwrap());
            let meta: Vec<_> =
                meta.into_iter().map(|(r, m)| (r, m.id, m.matched, m.representative)).collect();
            let mut cursor = shared.signatures.as_ref().unwrap().cursor().unwrap();
            let signatures: Vec<Option<SigEntry>> =
                (1..=120).map(|r| cursor.get(DocId::new(0, r)).unwrap().cloned()).collect();
            let spilled = spill.stats.borrow().resources.spilled_bytes;
            (keys, meta, signatures, spilled)
        };
        let (keys, meta, signatures, spilled) = run(1 << 30);
        assert_eq!(spilled, 0);
        assert_eq!(signatures.iter().filter(|s| s.is_some()).count(), 60);
        assert_eq!(signatures[0].as_ref().unwrap().node.id, "d1");
        assert!(signatures[1].is_none());
        // 120 signatures of over 500 bytes against 8 KiB: the log goes to a file.
        let small = run(16 << 10);
        assert!(small.3 > 60 * 500, "{} bytes spilled", small.3);
        assert_eq!((small.0, small.1, small.2), (keys, meta, signatures));
    }

    #[test]
    fn simhash_chooses_its_blocks_from_every_workers_count() {
        let dir = tempfile::tempdir().unwrap();
        let job =
            testing::job(dir.path(), JobSpec { method: Method::Simhash, ..JobSpec::default() });
        let spill = testing::spill(dir.path(), 0);
        let (out, shared) = store_by_hand(job.clone(), &spill, input(&job));
        // Three representatives in all (two with counts from the other worker).
        let layout = BlockLayout::choose(job.spec.simhash.distance(), 3).unwrap();
        assert_eq!(shared.borrow().blocks, Some(layout.blocks()));
        let Some(Signature::SimHash(f)) = signed(&job, 1, LONG).signature else { unreachable!() };
        let expected: Vec<u64> = layout.keys(f, job.spec.seed).map(BucketKey::get).collect();
        let keys: Vec<u64> = out.iter().map(|s| s.record().key.get()).collect();
        assert_eq!(keys, expected);
        assert!(matches!(shared.borrow().verifier, Some(Verifier::SimHash { .. })));
    }

    #[test]
    fn with_an_index_every_representative_gets_a_content_key() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default())
            .with_index(dir.path().join("index"), "run".into())
            .unwrap();
        let spill = testing::spill(dir.path(), 0);
        let (out, shared) = store_by_hand(job.clone(), &spill, input(&job));
        let content: Vec<BucketRecord> = out
            .iter()
            .filter_map(|s| match s {
                Stored::Content(r) => Some(*r),
                Stored::Bucket(_) => None,
            })
            .collect();
        let short = signed(&job, 3, "tiny");
        let long = signed(&job, 1, LONG);
        assert_eq!(content.len(), 2);
        assert_eq!(content[0].key.get(), content_key(long.content));
        assert_eq!(content[1].key.get(), content_key(short.content));
        assert!(shared.borrow().signatures_read_later);
    }

    #[test]
    fn a_cursor_finds_rows_in_doc_order_and_says_which_are_missing() {
        // Three short rows stay in memory; with long rows between them the writer goes to
        // a file, which the cursor passes over by the rows' keys.
        for filler in [0usize, 100] {
            let dir = tempfile::tempdir().unwrap();
            let mut writer = SortedWriter::new(dir.path(), 0);
            let row = |record: u64| format!("row {record}");
            for record in [2000, 5000, 9000] {
                writer.push(Keyed { key: DocId::new(0, record), value: row(record) }).unwrap();
                for extra in 1..=filler as u64 {
                    let key = DocId::new(0, record + extra);
                    let value = "x".repeat(1000);
                    writer.push(Keyed { key, value }).unwrap();
                }
            }
            let (file, bytes) = writer.into_file().unwrap();
            assert_eq!(bytes > 0, filler > 0);
            let mut cursor = Cursor::over(&file).unwrap();
            assert_eq!(cursor.get(DocId::new(0, 1000)).unwrap(), None);
            assert_eq!(cursor.find(DocId::new(0, 2000)).unwrap(), "row 2000");
            let again = cursor.get(DocId::new(0, 2000)).unwrap();
            assert_eq!(again.map(String::as_str), Some("row 2000"));
            assert_eq!(cursor.get(DocId::new(0, 4999)).unwrap(), None);
            assert_eq!(cursor.find(DocId::new(0, 9000)).unwrap(), "row 9000");
            assert_eq!(cursor.get(DocId::new(0, 9500)).unwrap(), None);
        }
    }

    /// The cursor reads a row's key from the first eight bytes of its encoding.
    #[test]
    fn a_keyed_row_is_encoded_key_first_as_a_little_endian_u64() {
        let doc = DocId::new(3, 123_456);
        let bytes = bincode::serialize(&Keyed { key: doc, value: String::from("v") }).unwrap();
        assert_eq!(bytes[..8], doc.get().to_le_bytes());
    }
}

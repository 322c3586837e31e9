//! Verifies candidate pairs by two merge joins with the signatures of the document
//! store: at the home worker of a pair's first document, repeated pairs are dropped and the
//! first document's signature is sent once to each worker that holds a second document of
//! it; at the home worker of the second, the pair is compared with the signature it was
//! sent.
//!
//! Partitioning: candidates exchanged on the first `DocId`, signatures to the worker they
//! name and pairs on the second `DocId`. Emits: once each input is complete, in order, a
//! batch per activation. Holds: at most its spill limit of candidates (16 bytes), or a
//! quarter of it of received pairs and half of it of the signatures it was sent (about
//! 600 bytes each with a MinHash-128 signature), kept as they arrive, never sorted with
//! the pairs; past that all of them go to a file read by offset, and memory keeps 40
//! bytes a signature beside it (its `DocId`, where it arrived, its offset, features and
//! the lowest bit of each MinHash value: a fifteenth of the bytes, not bounded by the
//! limit). Reads the store's signatures in `DocId` order.

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::rc::Rc;

use neardup_core::{DocId, Signature, Verification, Verifier, agreements_at_most};
use neardup_io::{PairKind, PairRow};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Spill, collect_sorted, collect_sorted_taking};
use crate::operators::env::OperatorEnv;
use crate::operators::store::{DocStore, SigCursor};
use crate::storage::records::{Candidate, Edge, HalfPair, SigEntry};
use crate::storage::routing::route_doc;
use crate::storage::spill::{MemSize, RemoveOnDrop, SpillError, create_run};

/// A verified near-duplicate pair.
#[derive(Clone, Debug)]
pub enum Near {
    /// The `pairs/` row.
    Pair(PairRow),
    /// The pair for clustering.
    Edge(Edge),
}

/// The index of the worker an exchange on `key` sends to among `workers` (as timely's
/// exchange picks it: the key modulo the number of workers).
fn worker_of(key: u64, workers: u64) -> u64 {
    key % workers
}

/// Where a half pair goes: a signature to the worker it names, a pair to its second
/// document's home.
fn destination(half: &HalfPair) -> u64 {
    match half {
        HalfPair::First { worker, .. } => *worker,
        HalfPair::Pair(c) => route_doc(c.b),
    }
}

struct AttachFirst {
    cursor: SigCursor,
    last: Option<Candidate>,
    /// Workers sent the signature of the current first document.
    sent_to: Vec<u64>,
    /// Workers in all processes.
    workers: u64,
    unique: u64,
    spill: Spill,
}

impl Drain<Candidate, HalfPair> for AttachFirst {
    fn item(&mut self, c: Candidate, emit: &mut dyn FnMut(HalfPair)) -> Result<(), SpillError> {
        if self.last == Some(c) {
            return Ok(()); // found in several buckets: verified once
        }
        if self.last.is_none_or(|last| last.a != c.a) {
            self.sent_to.clear();
        }
        self.last = Some(c);
        self.unique += 1;
        let worker = worker_of(route_doc(c.b), self.workers);
        if !self.sent_to.contains(&worker) {
            self.sent_to.push(worker);
            let entry = Box::new(self.cursor.find(c.a)?.clone());
            emit(HalfPair::First { worker, entry });
        }
        emit(HalfPair::Pair(c));
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(HalfPair)) -> Result<(), SpillError> {
        self.spill.stats.borrow_mut().matching.unique_candidates += self.unique;
        Ok(())
    }
}

/// Documents a block of [`Firsts`]'s sparse index covers.
const SPARSE: usize = 16;

/// The first documents' signatures a worker was sent, kept as they arrive (from every
/// worker, in no particular order) for looking up in any order: in memory up to
/// `limit_bytes`, then all in a file read by offset. In the file, read at random, a lookup
/// costs a system call and a cache miss or more; so beside it, for MinHash estimates, each
/// signature's lowest bits and features stay in memory (20 bytes with 128 permutations),
/// which reject most pairs without it.
struct Firsts {
    dir: PathBuf,
    limit_bytes: usize,
    /// The documents in the order their signatures arrived.
    docs: Vec<DocId>,
    /// `docs` sorted, and where each arrived, made at the first lookup (which drops `docs`).
    sorted: Vec<DocId>,
    arrived: Vec<u32>,
    /// Every [`SPARSE`]th of `sorted`: a search through it stays in the processor's caches,
    /// and then touches one block of `sorted`, where a search of millions of documents
    /// would miss the caches at nearly every step.
    sparse: Vec<DocId>,
    memory: Vec<SigEntry>,
    memory_bytes: usize,
    file: Option<FirstsFile>,
    /// Whether to keep [`LowBits`] beside the file.
    bound: bool,
}

struct FirstsFile {
    path: PathBuf,
    _remove: RemoveOnDrop,
    /// Open while signatures arrive.
    writer: Option<BufWriter<File>>,
    /// Open once the first pair is verified.
    reader: Option<File>,
    /// Where each signature starts, then where the last one ends.
    offsets: Vec<u64>,
    buffer: Vec<u8>,
    /// The signature read last.
    read: Option<SigEntry>,
    low: Option<LowBits>,
}

/// The lowest bit of each MinHash value of the signatures in the file, and their
/// features: the bits bound how many values two signatures share, and so their estimate
/// (`neardup_core::agreements_at_most`).
struct LowBits {
    /// Values a signature has.
    len: usize,
    bits: Vec<u64>,
    features: Vec<u32>,
    /// The second document whose bits are in `second`.
    second_doc: Option<DocId>,
    second: Vec<u64>,
    /// Pairs rejected by their bits.
    ruled_out: u64,
}

impl LowBits {
    fn push(&mut self, entry: &SigEntry) {
        let Signature::MinHash(m) = &entry.signature else {
            unreachable!("bounds are kept for MinHash signatures")
        };
        m.low_bits_into(&mut self.bits);
        self.features.push(entry.features);
    }

    /// Whether the pair of the signature at `at` and `second` cannot pass `verifier`.
    fn rule_out(&mut self, at: usize, second: &SigEntry, verifier: &Verifier) -> bool {
        if self.second_doc != Some(second.node.doc) {
            let Signature::MinHash(m) = &second.signature else {
                unreachable!("bounds are kept for MinHash signatures")
            };
            self.second.clear();
            m.low_bits_into(&mut self.second);
            self.second_doc = Some(second.node.doc);
        }
        let words = self.second.len();
        let first = &self.bits[at * words..(at + 1) * words];
        let at_most = agreements_at_most(first, &self.second, self.len);
        let upper = at_most as f64 / self.len as f64;
        let out = !verifier.may_pass(upper, self.features[at], second.features);
        self.ruled_out += u64::from(out);
        out
    }
}

impl Firsts {
    /// Held in `spill`'s limit, with [`LowBits`] beside the file when `verifier` can
    /// reject by a bound on the estimate.
    fn new(spill: &Spill, verifier: &Verifier) -> Self {
        Firsts {
            dir: spill.dir.clone(),
            limit_bytes: spill.limit_bytes,
            docs: Vec::new(),
            sorted: Vec::new(),
            arrived: Vec::new(),
            sparse: Vec::new(),
            memory: Vec::new(),
            memory_bytes: 0,
            file: None,
            bound: verifier.bounds_by_estimate(),
        }
    }

    /// Bytes the lookup index takes per signature (`docs`, then `sorted` and `arrived`).
    const INDEX_BYTES: usize = std::mem::size_of::<DocId>() + std::mem::size_of::<u32>();

    /// Adds the next signature (of a document not added before).
    fn push(&mut self, entry: SigEntry) -> Result<(), SpillError> {
        debug_assert!(self.sorted.is_empty(), "signatures arrive before pairs");
        self.docs.push(entry.node.doc);
        if let Some(file) = &mut self.file {
            return file.append(&entry);
        }
        self.memory_bytes += entry.mem_size();
        self.memory.push(entry);
        if self.memory_bytes + self.docs.capacity() * Self::INDEX_BYTES > self.limit_bytes {
            let (path, out) = create_run(&self.dir)?;
            let low = self.bound.then(|| {
                let len = match &self.memory[0].signature {
                    Signature::MinHash(m) => m.len(),
                    Signature::SimHash(_) => unreachable!("bounds are kept for MinHash"),
                };
                LowBits {
                    len,
                    bits: Vec::new(),
                    features: Vec::new(),
                    second_doc: None,
                    second: Vec::new(),
                    ruled_out: 0,
                }
            });
            let mut file = FirstsFile {
                _remove: RemoveOnDrop(path.clone()),
                path,
                writer: Some(out),
                reader: None,
                offsets: vec![0],
                buffer: Vec::new(),
                read: None,
                low,
            };
            for entry in self.memory.drain(..) {
                file.append(&entry)?;
            }
            self.memory = Vec::new();
            self.memory_bytes = 0;
            self.file = Some(file);
        }
        Ok(())
    }

    /// Where `doc`'s signature is.
    ///
    /// # Panics
    /// If `doc`'s signature was not sent here: the first document's worker sends it to
    /// every worker it sends pairs to, so a miss is a routing bug.
    fn index(&mut self, doc: DocId) -> usize {
        if self.sorted.is_empty() {
            let docs = std::mem::take(&mut self.docs);
            let count = u32::try_from(docs.len()).expect("fewer than 2^32 signatures a worker");
            self.arrived = (0..count).collect();
            self.arrived.sort_unstable_by_key(|&at| docs[at as usize]);
            self.sorted = self.arrived.iter().map(|&at| docs[at as usize]).collect();
            debug_assert!(self.sorted.windows(2).all(|w| w[0] < w[1]), "each sent once");
            self.sparse = self.sorted.iter().step_by(SPARSE).copied().collect();
        }
        let block = self.sparse.partition_point(|&d| d <= doc).saturating_sub(1) * SPARSE;
        let in_block = &self.sorted[block..(block + SPARSE).min(self.sorted.len())];
        match in_block.binary_search(&doc) {
            Ok(i) => self.arrived[block + i] as usize,
            Err(_) => unreachable!("the signature of {doc:?} was not sent with its pairs"),
        }
    }

    /// Whether the pair of the signature at `at` and `second` cannot pass `verifier`, as
    /// far as the low bits kept beside the file tell (never in memory, where the whole
    /// signature is at hand).
    fn rule_out(&mut self, at: usize, second: &SigEntry, verifier: &Verifier) -> bool {
        let low = self.file.as_mut().and_then(|f| f.low.as_mut());
        low.is_some_and(|low| low.rule_out(at, second, verifier))
    }

    /// The signature at `at` (of `doc`).
    fn get(&mut self, at: usize, doc: DocId) -> Result<&SigEntry, SpillError> {
        match &mut self.file {
            None => Ok(&self.memory[at]),
            Some(file) => file.read(at, doc),
        }
    }

    /// Bytes written to the file.
    fn spilled_bytes(&self) -> u64 {
        self.file.as_ref().map_or(0, |f| f.offsets.last().copied().unwrap_or(0))
    }
}

impl FirstsFile {
    fn append(&mut self, entry: &SigEntry) -> Result<(), SpillError> {
        let writer = self.writer.as_mut().expect("signatures arrive before pairs");
        self.buffer.clear();
        bincode::serialize_into(&mut self.buffer, entry)
            .map_err(|e| SpillError::at(&self.path, std::io::Error::other(e)))?;
        writer.write_all(&self.buffer).map_err(|e| SpillError::at(&self.path, e))?;
        let end = self.offsets.last().copied().unwrap_or(0) + self.buffer.len() as u64;
        self.offsets.push(end);
        if let Some(low) = &mut self.low {
            low.push(entry);
        }
        Ok(())
    }

    fn read(&mut self, at: usize, doc: DocId) -> Result<&SigEntry, SpillError> {
        if self.read.as_ref().is_some_and(|r| r.node.doc == doc) {
            return Ok(self.read.as_ref().expect("just checked"));
        }
        if let Some(mut writer) = self.writer.take() {
            writer.flush().map_err(|e| SpillError::at(&self.path, e))?;
            self.reader = Some(File::open(&self.path).map_err(|e| SpillError::at(&self.path, e))?);
        }
        let reader = self.reader.as_ref().expect("opened above");
        let (start, end) = (self.offsets[at], self.offsets[at + 1]);
        self.buffer.resize(usize::try_from(end - start).expect("a signature fits in memory"), 0);
        read_at(reader, &mut self.buffer, start).map_err(|e| SpillError::at(&self.path, e))?;
        let entry: SigEntry = bincode::deserialize(&self.buffer)
            .map_err(|e| SpillError::at(&self.path, std::io::Error::other(e)))?;
        Ok(self.read.insert(entry))
    }
}

/// Fills `buffer` from `file` at `offset`.
#[cfg(unix)]
fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

/// Fills `buffer` from `file` at `offset`.
#[cfg(not(unix))]
fn read_at(mut file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buffer)
}

struct VerifySecond {
    cursor: SigCursor,
    firsts: Firsts,
    verifier: Verifier,
    store: Rc<RefCell<DocStore>>,
    spill: Spill,
    compared: u64,
    verified: u64,
}

impl Drain<HalfPair, Near> for VerifySecond {
    fn item(&mut self, half: HalfPair, emit: &mut dyn FnMut(Near)) -> Result<(), SpillError> {
        let c = match half {
            HalfPair::First { entry, .. } => return self.firsts.push(*entry),
            HalfPair::Pair(c) => c,
        };
        let at = self.firsts.index(c.a);
        let second = self.cursor.find(c.b)?;
        self.compared += 1;
        if self.firsts.rule_out(at, second, &self.verifier) {
            return Ok(());
        }
        let first = self.firsts.get(at, c.a)?;
        if let Some(verdict) = self.verifier.duplicate(first.side(), second.side()) {
            self.verified += 1;
            let (a, b) = (first.node.clone(), second.node.clone());
            emit(Near::Pair(near_row(&a, &b, &verdict)));
            emit(Near::Edge(Edge { a, b }));
        }
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(Near)) -> Result<(), SpillError> {
        let mut stats = self.spill.stats.borrow_mut();
        stats.matching.compared_pairs += self.compared;
        stats.matching.verified_pairs += self.verified;
        stats.resources.spilled_bytes += self.firsts.spilled_bytes();
        // Unless later stages read them, nothing reads the signatures any more (open
        // readers keep their file).
        let mut store = self.store.borrow_mut();
        if !store.signatures_read_later {
            store.signatures = None;
        }
        Ok(())
    }
}

/// Verifies candidates against the document store.
pub trait VerifyCandidates<'s, T: Timestamp> {
    /// Emits the verified pairs among the candidates, each pair once.
    fn verify_candidates(self, env: &OperatorEnv) -> StreamVec<'s, T, Near>;
}

impl<'s, T: Timestamp> VerifyCandidates<'s, T> for StreamVec<'s, T, Candidate> {
    fn verify_candidates(self, env: &OperatorEnv) -> StreamVec<'s, T, Near> {
        let (store, spill) = (env.store.clone(), env.spill.clone());
        let workers = self.scope().peers() as u64;
        let by_first = Exchange::new(|c: &Candidate| route_doc(c.a));
        let (first_store, first_spill) = (store.clone(), spill.clone());
        let halves = collect_sorted(self, by_first, "AttachFirst", spill.clone(), move || {
            Ok(AttachFirst {
                cursor: SigCursor::open(&first_store)?,
                last: None,
                sent_to: Vec::new(),
                workers,
                unique: 0,
                spill: first_spill.clone(),
            })
        });
        let to_second = Exchange::new(destination);
        // The pairs received and the signatures kept are held at once, while the stage
        // before still drains and while pairs are verified (the collection's last run
        // stays in memory): the signatures get half the limit, the pairs (16 bytes each)
        // a quarter.
        let (second_spill, pairs_spill) = (spill.share(2), spill.share(4));
        // Signatures go to `Firsts` as they arrive, never sorted or spilled with the pairs.
        let firsts: Rc<RefCell<Option<Firsts>>> = Rc::default();
        let (take_firsts, take_store, take_spill) =
            (firsts.clone(), store.clone(), second_spill.clone());
        let verifier = move |store: &Rc<RefCell<DocStore>>| {
            store.borrow().verifier.clone().expect("set before any bucket record")
        };
        let take = move |half: HalfPair| match half {
            HalfPair::First { entry, .. } => {
                let mut firsts = take_firsts.borrow_mut();
                let firsts =
                    firsts.get_or_insert_with(|| Firsts::new(&take_spill, &verifier(&take_store)));
                firsts.push(*entry).map(|()| None)
            }
            pair @ HalfPair::Pair(_) => Ok(Some(pair)),
        };
        collect_sorted_taking(halves, to_second, "VerifyPairs", pairs_spill, take, move || {
            let verifier = verifier(&store);
            Ok(VerifySecond {
                cursor: SigCursor::open(&store)?,
                firsts: firsts
                    .borrow_mut()
                    .take()
                    .unwrap_or_else(|| Firsts::new(&second_spill, &verifier)),
                verifier,
                store: store.clone(),
                spill: second_spill.clone(),
                compared: 0,
                verified: 0,
            })
        })
    }
}

/// The `pairs/` row of a verified pair, ordered by id.
fn near_row(
    a: &crate::storage::records::NodeInfo,
    b: &crate::storage::records::NodeInfo,
    verdict: &Verification,
) -> PairRow {
    let (x, y) = if a.id <= b.id { (a, b) } else { (b, a) };
    PairRow {
        id_a: x.id.clone(),
        id_b: y.id.clone(),
        doc_a: x.doc,
        doc_b: y.doc,
        similarity: verdict.similarity,
        kind: PairKind::Near,
        measure: Some(verdict.measure),
        containment: verdict.containment,
        hamming: verdict.hamming,
        matching_bands: verdict.matching_bands,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{self, drain, signed, store};
    use crate::settings::spec::JobSpec;
    use neardup_core::Measure;

    const TEXT: &str = "a river runs through the old town and past the mill where the baker \
                        sells bread every morning before the market opens on the square";

    fn candidate(a: u64, b: u64) -> Candidate {
        Candidate { a: DocId::new(0, a), b: DocId::new(0, b) }
    }

    fn attach(store: &Rc<RefCell<DocStore>>, workers: u64, spill: Spill) -> AttachFirst {
        AttachFirst {
            cursor: SigCursor::open(store).unwrap(),
            last: None,
            sent_to: Vec::new(),
            workers,
            unique: 0,
            spill,
        }
    }

    /// Record numbers: `(a, b)` of a pair, `(document, worker)` of a signature sent.
    type Records = Vec<(u64, u64)>;

    /// The pairs among `halves`, and the signatures sent.
    fn split(halves: &[HalfPair]) -> (Records, Records) {
        let (mut pairs, mut firsts) = (Vec::new(), Vec::new());
        for half in halves {
            match half {
                HalfPair::First { worker, entry } => {
                    firsts.push((entry.node.doc.record(), *worker))
                }
                HalfPair::Pair(c) => pairs.push((c.a.record(), c.b.record())),
            }
        }
        (pairs, firsts)
    }

    #[test]
    fn candidates_found_in_several_buckets_are_verified_once() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let docs = [signed(&job, 1, TEXT), signed(&job, 2, TEXT), signed(&job, 3, TEXT)];
        let store = store(dir.path(), &job, &docs);
        let mut attach = attach(&store, 1, testing::spill(dir.path(), 0));
        let halves = drain(
            &mut attach,
            vec![candidate(1, 2), candidate(1, 3), candidate(1, 2), candidate(2, 3)],
        );
        let (pairs, firsts) = split(&halves);
        assert_eq!(pairs, [(1, 2), (1, 3), (2, 3)]);
        // One worker: each first document's signature is sent once.
        assert_eq!(firsts, [(1, 0), (2, 0)]);
        let HalfPair::First { entry, .. } = &halves[0] else { panic!("{:?}", halves[0]) };
        assert_eq!(entry.node.id, "d1");
        assert_eq!(attach.spill.stats.borrow().matching.unique_candidates, 3);
    }

    #[test]
    fn a_signature_goes_once_to_each_worker_that_holds_seconds_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let docs: Vec<_> = (1..=40).map(|r| signed(&job, r, TEXT)).collect();
        let store = store(dir.path(), &job, &docs);
        let workers = 3;
        let mut attach = attach(&store, workers, testing::spill(dir.path(), 0));
        let candidates: Vec<_> =
            (1..=3).flat_map(|a| (a + 1..=40).map(move |b| candidate(a, b))).collect();
        let halves = drain(&mut attach, candidates.clone());
        let (pairs, firsts) = split(&halves);
        assert_eq!(pairs.len(), candidates.len());
        let mut expected: Vec<(u64, u64)> =
            candidates.iter().map(|c| (c.a.record(), worker_of(route_doc(c.b), workers))).collect();
        expected.sort_unstable();
        expected.dedup();
        let mut got = firsts.clone();
        got.sort_unstable();
        assert_eq!(got, expected);
        assert_eq!(firsts.len(), 3 * 3, "37 seconds or more of each reach all three workers");
        // Each half goes where it is verified: a pair to its second's home, a signature
        // to the worker it names.
        for half in &halves {
            let to = worker_of(destination(half), workers);
            match half {
                HalfPair::First { worker, .. } => assert_eq!(to, *worker),
                HalfPair::Pair(c) => assert_eq!(to, worker_of(route_doc(c.b), workers)),
            }
        }
    }

    fn verify_second(store: &Rc<RefCell<DocStore>>, spill: &Spill) -> VerifySecond {
        VerifySecond {
            cursor: SigCursor::open(store).unwrap(),
            firsts: Firsts::new(spill, store.borrow().verifier.as_ref().unwrap()),
            verifier: store.borrow().verifier.clone().unwrap(),
            store: store.clone(),
            spill: spill.clone(),
            compared: 0,
            verified: 0,
        }
    }

    #[test]
    fn similar_pairs_become_pair_rows_and_edges_and_the_rest_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let edited = TEXT.replace("bread", "cakes");
        let other = "nothing in this sentence is shared with the other documents at all, \
                     whatever the seed and whatever the shingles";
        let docs = [signed(&job, 1, TEXT), signed(&job, 2, &edited), signed(&job, 3, other)];
        let store = store(dir.path(), &job, &docs);
        let spill = testing::spill(dir.path(), 0);
        let mut attach = attach(&store, 1, spill.clone());
        let halves = drain(&mut attach, vec![candidate(1, 2), candidate(1, 3)]);
        let mut verify = verify_second(&store, &spill);
        // `drain` sorts: the signature comes before the pairs.
        let near = drain(&mut verify, halves);
        assert_eq!(near.len(), 2);
        let Near::Pair(row) = &near[0] else { panic!("a pair row first: {near:?}") };
        assert_eq!((row.id_a.as_str(), row.id_b.as_str(), row.kind), ("d1", "d2", PairKind::Near));
        assert!(
            row.similarity >= job.minhash_spec().threshold() && row.similarity < 1.0,
            "{row:?}"
        );
        assert!(row.matching_bands.is_some() && row.hamming.is_none());
        assert_eq!((row.measure, row.containment), (Some(Measure::Jaccard), None));
        assert!(matches!(&near[1], Near::Edge(e) if e.a.id == "d1" && e.b.id == "d2"));
        let stats = spill.stats.borrow();
        assert_eq!((stats.matching.compared_pairs, stats.matching.verified_pairs), (2, 1));
        // Nothing reads the signatures after verification in a run without an index.
        assert!(store.borrow().signatures.is_none());
    }

    /// Every pair among documents 1..=n, verified with the received signatures held in
    /// `limit_bytes`: the pairs found, the bytes spilled and the pairs their low bits
    /// ruled out.
    fn verify_all(n: u64, limit_bytes: usize) -> (Vec<(u64, u64, u64)>, u64, u64) {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        // Documents that differ in one word from their neighbours, and every fourth one
        // about something else: some pairs verify, many are far apart.
        let other = "a short note on the weather in the hills, where it rained all week and \
                     the roads were closed until the snow ploughs came through on friday";
        let docs: Vec<_> = (1..=n)
            .map(|r| {
                let text = if r % 4 == 0 { other } else { TEXT };
                signed(&job, r, &text.replace("the", &format!("the {}", r / 3)))
            })
            .collect();
        let store = store(dir.path(), &job, &docs);
        let spill = testing::spill(&dir.path().join("spill"), limit_bytes);
        let mut attach = attach(&store, 1, spill.clone());
        let candidates = (1..=n).flat_map(|a| (a + 1..=n).map(move |b| candidate(a, b))).collect();
        let halves = drain(&mut attach, candidates);
        let mut verify = verify_second(&store, &spill);
        let near = drain(&mut verify, halves);
        let pairs = near
            .iter()
            .filter_map(|n| match n {
                Near::Pair(row) => {
                    Some((row.doc_a.record(), row.doc_b.record(), (row.similarity * 1e6) as u64))
                }
                Near::Edge(_) => None,
            })
            .collect();
        let spilled = spill.stats.borrow().resources.spilled_bytes;
        let ruled_out =
            verify.firsts.file.as_ref().and_then(|f| f.low.as_ref()).map_or(0, |l| l.ruled_out);
        assert_eq!(spill.stats.borrow().matching.compared_pairs, n * (n - 1) / 2);
        (pairs, spilled, ruled_out)
    }

    #[test]
    fn signatures_over_the_limit_are_read_back_from_their_file_alike() {
        let (in_memory, none, _) = verify_all(30, 1 << 30);
        assert_eq!(none, 0);
        assert!(in_memory.len() > 10, "{in_memory:?}");
        // 29 signatures of over 500 bytes against a 4 KiB limit.
        let (spilled, bytes, ruled_out) = verify_all(30, 4 << 10);
        assert!(bytes > 29 * 500, "{bytes} bytes spilled");
        assert_eq!(spilled, in_memory);
        // Pairs of a note and an article are rejected by their bits alone.
        assert!(ruled_out >= 7 * 22, "{ruled_out} of 435 ruled out");
    }

    /// Signatures arrive from every worker in no particular order; each is found where it
    /// arrived, in memory and in the file.
    #[test]
    fn signatures_are_found_whatever_order_they_arrived_in() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let docs: Vec<_> =
            (1..=30).map(|r| signed(&job, r, &TEXT.replace("river", &format!("r{r}")))).collect();
        let store = store(dir.path(), &job, &docs);
        let verifier = store.borrow().verifier.clone().unwrap();
        // Two senders' runs, interleaved: odd records ascending, even ones descending.
        let mut order: Vec<u64> = (1..=30).filter(|r| r % 2 == 1).collect();
        order.extend((1..=30).rev().filter(|r| r % 2 == 0));
        for limit in [1 << 30, 4 << 10] {
            let spill = testing::spill(&dir.path().join(format!("spill-{limit}")), limit);
            let mut firsts = Firsts::new(&spill, &verifier);
            let mut cursor = SigCursor::open(&store).unwrap();
            let mut entries = std::collections::BTreeMap::new();
            for r in 1..=30 {
                entries.insert(r, cursor.find(DocId::new(0, r)).unwrap().clone());
            }
            for r in &order {
                firsts.push(entries[r].clone()).unwrap();
            }
            assert_eq!(firsts.file.is_some(), limit < 1 << 30);
            for r in [30, 1, 17, 2, 29, 16] {
                let at = firsts.index(DocId::new(0, r));
                assert_eq!(order[at], r);
                let got = firsts.get(at, DocId::new(0, r)).unwrap();
                assert_eq!(got.node, entries[&r].node);
                assert_eq!(got.signature, entries[&r].signature);
            }
        }
    }

    #[test]
    fn an_unusable_spill_folder_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let docs = [signed(&job, 1, TEXT), signed(&job, 2, TEXT)];
        let store = store(dir.path(), &job, &docs);
        std::fs::write(dir.path().join("file"), "").unwrap();
        let spill = testing::spill(&dir.path().join("file").join("spill"), 16);
        let mut firsts = Firsts::new(&spill, store.borrow().verifier.as_ref().unwrap());
        let entry = SigCursor::open(&store).unwrap().find(DocId::new(0, 1)).unwrap().clone();
        let error = firsts.push(entry).unwrap_err();
        assert!(error.path.starts_with(dir.path().join("file")), "{error}");
    }
}

//! Helpers for the operators' unit tests: a stage's drain fed by hand with a plain `emit`,
//! a dataflow on one worker for the operators that are not drains, and the spill, sink,
//! job and documents a stage needs.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use neardup_core::{ContentHash, DocId};
use neardup_io::InputDoc;
use neardup_io::index::{
    DocPartWriter, Generation, IndexedDoc, KeyPartWriter, KeyRow, Manifest, partition_of,
};
use timely::WorkerConfig;
use timely::communication::Allocator;
use timely::communication::allocator::thread::Thread;
use timely::dataflow::StreamVec;
use timely::dataflow::operators::Inspect;
use timely::dataflow::operators::vec::ToStream;
use timely::worker::Worker;

use crate::input::sign::{SignScratch, Signer};
use crate::operators::collect::{Drain, Spill};
use crate::operators::doc_store;
use crate::operators::env::OperatorEnv;
use crate::operators::sink::PartSink;
use crate::operators::store::DocStore;
use crate::reporting::stats::WorkerStats;
use crate::settings::config::JobConfig;
use crate::settings::spec::JobSpec;
use crate::storage::records::{NodeInfo, SignedDoc};

/// Feeds `items` to `stage` in sorted order, as `collect_sorted` does once its input is
/// complete, then ends it; returns what it emitted, in order.
pub(crate) fn drain<D: Ord, O>(stage: &mut impl Drain<D, O>, mut items: Vec<D>) -> Vec<O> {
    items.sort();
    let mut out = Vec::new();
    for item in items {
        stage.item(item, &mut |o| out.push(o)).expect("no spill error");
    }
    stage.end(&mut |o| out.push(o)).expect("no spill error");
    out
}

/// A spill under `dir` that holds `limit_bytes` in memory, with fresh statistics.
pub(crate) fn spill(dir: &Path, limit_bytes: usize) -> Spill {
    Spill {
        dir: dir.to_path_buf(),
        limit_bytes,
        stats: Rc::default(),
        error: Rc::default(),
        abort: Arc::default(),
    }
}

/// A sink writing part 0 below `dir`, counting into `stats`.
pub(crate) fn sink(dir: &Path, stats: Rc<RefCell<WorkerStats>>) -> PartSink {
    PartSink {
        output: dir.to_path_buf(),
        part: 0,
        metadata: Rc::new(Vec::new),
        stats,
        error: Rc::default(),
        abort: Arc::default(),
    }
}

/// What every operator of a worker is given, spilling under `dir/spill` (holding
/// `limit_bytes` in memory) and writing part 0 below `dir`, with fresh statistics and an
/// empty store; spill and sink share one failure.
pub(crate) fn env(dir: &Path, limit_bytes: usize) -> OperatorEnv {
    let spill = spill(&dir.join("spill"), limit_bytes);
    let mut sink = sink(dir, spill.stats.clone());
    sink.error = spill.error.clone();
    OperatorEnv { stats: spill.stats.clone(), spill, sink, store: Rc::default() }
}

/// A checked job with `spec` over one JSONL file `a.jsonl` in `dir` (written when missing),
/// writing to `dir/out`.
pub(crate) fn job(dir: &Path, spec: JobSpec) -> JobConfig {
    let input = dir.join("a.jsonl");
    if !input.exists() {
        std::fs::write(&input, "{\"id\":\"1\",\"text\":\"x\"}\n").unwrap();
    }
    JobConfig::new(spec, &[input], dir.join("out")).unwrap()
}

/// `text` analysed and signed as `job` does, as record `record` of file 0 with id
/// `d<record>`.
pub(crate) fn signed(job: &JobConfig, record: u64, text: &str) -> SignedDoc {
    let signer = Signer::new(job, None, None);
    let doc = InputDoc {
        doc: DocId::new(0, record),
        id: format!("d{record}"),
        text: text.into(),
        meta: None,
    };
    signer.sign(doc, &mut SignScratch::default()).expect("a text with words")
}

/// The node of record `record` of file 0 with id `d<record>` and text `text`.
pub(crate) fn node(record: u64, text: &str) -> NodeInfo {
    NodeInfo {
        doc: DocId::new(0, record),
        id: format!("d{record}"),
        chars: text.chars().count() as u64,
        content: ContentHash::of_text(text, 42),
    }
}

/// A finished document store below `dir` holding `docs`, all of them representatives:
/// the metadata of each, and the signatures of those signed.
pub(crate) fn store(dir: &Path, job: &JobConfig, docs: &[SignedDoc]) -> Rc<RefCell<DocStore>> {
    let mut input: Vec<_> = docs.iter().cloned().map(doc_store::doc_in).collect();
    input.extend(docs.iter().map(|d| doc_store::representative_in(d.doc)));
    input.push(doc_store::count_in(0, docs.len() as u64));
    doc_store::store_by_hand(job.clone(), &spill(dir, 1 << 20), input).1
}

/// A job as [`job`] makes, with the index `dir/index` holding one committed generation
/// (folder `g1`, run `first`) of `docs` (one docs part) and `keys`; the job adds
/// generation 2.
pub(crate) fn job_with_index(dir: &Path, docs: &[IndexedDoc], keys: &[KeyRow]) -> JobConfig {
    let job = job(dir, JobSpec::default());
    let index = dir.join("index");
    let segment = index.join("g1");
    let mut docs = docs.to_vec();
    docs.sort_unstable();
    let mut w = DocPartWriter::create(&segment, 0).unwrap();
    w.write(&docs).unwrap();
    w.finish().unwrap();
    let mut keys = keys.to_vec();
    keys.sort_unstable();
    let mut manifest = Manifest::new(job.index_settings());
    for partition in 0..manifest.partitions {
        let mine: Vec<KeyRow> = keys
            .iter()
            .filter(|k| partition_of(k.key, manifest.partitions) == partition)
            .copied()
            .collect();
        if !mine.is_empty() {
            let mut w = KeyPartWriter::create(&segment, partition).unwrap();
            w.write(&mine).unwrap();
            w.finish().unwrap();
        }
    }
    manifest.generations.push(Generation {
        number: 1,
        folder: "g1".into(),
        run: "first".into(),
        output: String::new(),
        created_unix: 0,
        documents: docs.len() as u64,
        keys: keys.len() as u64,
        doc_parts: 1,
        template_parts: 0,
        paragraphs: None,
        paragraph_min_chars: None,
        forgotten: Vec::new(),
    });
    manifest.save(&index).unwrap();
    job.with_index(index, "second".into()).unwrap()
}

/// Builds a dataflow on one worker (this thread) with `build` and runs it to completion;
/// returns what `build` returned.
pub(crate) fn one_worker<R>(build: impl FnOnce(&mut Worker) -> R) -> R {
    let allocator = Allocator::Thread(Thread::default());
    let mut worker = Worker::new(WorkerConfig::default(), allocator, None);
    let result = build(&mut worker);
    while worker.has_dataflows() {
        worker.step_or_park(None);
    }
    result
}

/// Runs `operator` on one worker over `input`, all at the first time; returns its output
/// in the order emitted.
pub(crate) fn run_operator<I, O, F>(input: Vec<I>, operator: F) -> Vec<O>
where
    I: Clone + 'static,
    O: Clone + 'static,
    F: for<'s> FnOnce(StreamVec<'s, u64, I>) -> StreamVec<'s, u64, O>,
{
    let out = Rc::new(RefCell::new(Vec::new()));
    let sink = out.clone();
    one_worker(move |worker| {
        worker.dataflow::<u64, _, _>(move |scope| {
            operator(input.to_stream(scope)).inspect(move |o| sink.borrow_mut().push(o.clone()));
        });
    });
    out.take()
}

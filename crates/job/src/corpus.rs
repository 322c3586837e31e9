//! The corpus pass: statistics over every document, gathered before signing.
//!
//! Today it counts document frequencies of features for SimHash `tf_idf` weights. Each
//! worker counts its share of the input into a count-min sketch; the sketches are
//! broadcast in pieces and summed, so every worker ends with the same corpus sketch
//! whatever the number of workers. Holds: two sketches per worker (16 MiB each).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use neardup_core::CountMinSketch;
use neardup_io::Record;
use neardup_text::{Analysis, AnalyzeScratch, Analyzer};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::core::Input;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Broadcast;

use crate::config::JobConfig;
use crate::sign::IdfWeights;
use crate::source::read_share;
use crate::{JobError, Topology};

/// Rows of the document-frequency sketch.
const SKETCH_DEPTH: usize = 4;
/// Counters per row: 2^20.
const SKETCH_WIDTH_BITS: u32 = 20;
/// Counters per exchanged piece.
const PIECE: usize = 1 << 16;

/// Counts, for every feature, the documents that contain it.
///
/// # Errors
/// [`JobError::Input`] when a file cannot be read, [`JobError::Start`] or
/// [`JobError::WorkerFailed`] when timely fails.
pub(crate) fn document_frequencies(
    job: &Arc<JobConfig>,
    topology: &Topology,
    analyzer: &Analyzer,
) -> Result<IdfWeights, JobError> {
    let job = job.clone();
    let analyzer = analyzer.clone();
    let abort = Arc::new(AtomicBool::new(false));
    let guards = timely::execute(topology.timely_config(), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let total = Rc::new(RefCell::new(CountMinSketch::new(SKETCH_DEPTH, SKETCH_WIDTH_BITS)));
        let documents = Rc::new(Cell::new(0u64));
        let mut input = worker.dataflow::<u64, _, _>(|scope| {
            let (input, pieces) = scope.new_input::<Vec<(usize, u64, Vec<u32>)>>();
            let (total, documents) = (total.clone(), documents.clone());
            pieces.broadcast().sink(Pipeline, "MergeSketches", move |(input, _frontier)| {
                input.for_each(|_cap, batch| {
                    for (offset, docs, counts) in batch.drain(..) {
                        total.borrow_mut().merge_counts(offset, &counts);
                        documents.set(documents.get() + docs);
                    }
                });
            });
            input
        });
        let mut local = CountMinSketch::new(SKETCH_DEPTH, SKETCH_WIDTH_BITS);
        let mut local_documents = 0u64;
        let mut scratch = AnalyzeScratch::default();
        let mut analysis = Analysis::default();
        let (_totals, error) = read_share(
            &job,
            index,
            peers,
            &abort,
            |record| {
                if let Record::Doc(doc) = record {
                    analyzer.analyze_into(&doc.text, &mut scratch, &mut analysis);
                    if !analysis.features.is_empty() {
                        local_documents += 1;
                        analysis.features.hashes().iter().for_each(|h| local.add(*h));
                    }
                }
            },
            || {},
        );
        if error.is_some() {
            abort.store(true, Ordering::Relaxed);
        }
        // Every worker sends its pieces, even after an error, so no peer waits forever.
        for (i, piece) in local.counts().chunks(PIECE).enumerate() {
            if piece.iter().any(|c| *c != 0) || i == 0 {
                input.send((i * PIECE, if i == 0 { local_documents } else { 0 }, piece.to_vec()));
            }
        }
        drop(local);
        drop(input);
        while worker.step_or_park(Some(std::time::Duration::from_millis(1))) {}
        match error {
            Some(e) => Err(JobError::Input(e)),
            None => Ok((total.replace(CountMinSketch::new(1, 4)), documents.get())),
        }
    })
    .map_err(JobError::Start)?;
    let mut result = None;
    for (worker, outcome) in guards.join().into_iter().enumerate() {
        match outcome {
            Ok(Ok(counted)) => {
                result.get_or_insert(counted);
            }
            Ok(Err(e)) => return Err(e),
            Err(message) => return Err(JobError::WorkerFailed { worker, message }),
        }
    }
    let (sketch, documents) = result.expect("at least one worker");
    Ok(IdfWeights::Corpus { sketch, documents })
}

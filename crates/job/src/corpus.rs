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
use timely::dataflow::operators::core::Input;
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Inspect, Probe};

use crate::cluster::run_workers;
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
    fingerprint: u64,
    analyzer: &Analyzer,
) -> Result<IdfWeights, JobError> {
    let job = job.clone();
    let analyzer = analyzer.clone();
    let abort = Arc::new(AtomicBool::new(false));
    let results = run_workers(topology, fingerprint, move |worker, heartbeat| {
        let (index, peers) = (worker.index(), worker.peers());
        let total = Rc::new(RefCell::new(CountMinSketch::new(SKETCH_DEPTH, SKETCH_WIDTH_BITS)));
        let documents = Rc::new(Cell::new(0u64));
        let failure: Rc<RefCell<Option<(usize, String)>>> = Rc::new(RefCell::new(None));
        let merged = ProbeHandle::<u64>::new();
        let mut input = worker.dataflow::<u64, _, _>(|scope| {
            let (input, pieces) = scope.new_input::<Vec<Piece>>();
            let (total, documents, failure) = (total.clone(), documents.clone(), failure.clone());
            pieces
                .broadcast()
                .inspect(move |piece| match piece {
                    Piece::Counts { offset, documents: docs, counts } => {
                        total.borrow_mut().merge_counts(*offset, counts);
                        documents.set(documents.get() + docs);
                    }
                    Piece::Failed { worker, message } => {
                        failure.borrow_mut().get_or_insert((*worker, message.clone()));
                    }
                })
                .probe_with(&merged);
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
            None,
            |record| {
                if let Record::Doc(doc) = record {
                    analyzer.analyze_into(&doc.text, &mut scratch, &mut analysis);
                    if !analysis.features.is_empty() {
                        local_documents += 1;
                        analysis.features.hashes().iter().for_each(|h| local.add(*h));
                    }
                }
                false
            },
            || heartbeat.beat(),
        );
        // Every worker sends its pieces (and its failure), so no peer waits forever.
        if let Some(e) = error {
            abort.store(true, Ordering::Relaxed);
            input.send(Piece::Failed { worker: index, message: crate::error_chain(&e) });
        }
        for (i, piece) in local.counts().chunks(PIECE).enumerate() {
            if piece.iter().any(|c| *c != 0) || i == 0 {
                let docs = if i == 0 { local_documents } else { 0 };
                input.send(Piece::Counts {
                    offset: i * PIECE,
                    documents: docs,
                    counts: piece.to_vec(),
                });
            }
        }
        drop(local);
        drop(input);
        while !merged.done() {
            worker.step_or_park(Some(std::time::Duration::from_millis(1)));
            heartbeat.beat();
        }
        match failure.borrow_mut().take() {
            Some((worker, message)) => Err(JobError::Input { worker, message }),
            None => Ok((total.replace(CountMinSketch::new(1, 4)), documents.get())),
        }
    })?;
    let (sketch, documents) = results.into_iter().next().expect("at least one worker");
    Ok(IdfWeights::Corpus { sketch, documents })
}

/// What workers exchange in the corpus pass.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Piece {
    /// Counters of one worker's sketch from `offset` on, and (in the first piece) how many
    /// documents it counted.
    Counts { offset: usize, documents: u64, counts: Vec<u32> },
    /// A worker could not read its input.
    Failed { worker: usize, message: String },
}

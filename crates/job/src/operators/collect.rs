//! Collecting a stream's records in sorted, spillable runs until the input is complete.
//!
//! The job's source sends input in rounds (timely times) to bound what is in flight; a
//! group (an id, a content hash, a bucket) may get records in several rounds, so every
//! grouping operator collects across all rounds and reduces once its input frontier is
//! empty, holding at most its spill limit in memory.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::ParallelizationContract;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::operators::failure::{StageFailure, StageFailures};
use crate::reporting::stats::WorkerStats;
use crate::storage::spill::{MemSize, Merged, SortedRuns, SortedWriter, SpillError};

/// Where and how much one worker's stages may spill.
#[derive(Clone)]
pub struct Spill {
    /// This worker's spill folder.
    pub dir: PathBuf,
    /// Bytes each collecting stage may hold in memory before spilling.
    pub limit_bytes: usize,
    /// Counts bytes spilled.
    pub stats: Rc<RefCell<WorkerStats>>,
    /// The worker's first stage failure (shared with its sink).
    pub error: StageFailures,
    /// Set on a spill error, so this process stops reading and writing.
    pub abort: Arc<AtomicBool>,
}

impl Spill {
    /// The same spill with `1 / parts` of its limit: for a stage that holds `parts`
    /// collections at once.
    pub fn share(&self, parts: usize) -> Spill {
        Spill { limit_bytes: self.limit_bytes / parts, ..self.clone() }
    }

    /// An empty collection under this worker's limit.
    pub fn runs<T: Ord + Serialize + DeserializeOwned + MemSize>(&self) -> SortedRuns<T> {
        SortedRuns::new(&self.dir, self.limit_bytes)
    }

    /// An empty writer of records that arrive in order, under this worker's limit.
    pub fn writer<T: Ord + Serialize + DeserializeOwned + MemSize + Clone>(
        &self,
    ) -> SortedWriter<T> {
        SortedWriter::new(&self.dir, self.limit_bytes)
    }

    /// Records a spill error (the first one wins) and counts what was spilled.
    pub fn settle<T>(&self, spilled_bytes: u64, result: Result<T, SpillError>) -> Option<T> {
        self.stats.borrow_mut().resources.spilled_bytes += spilled_bytes;
        match result {
            Ok(value) => Some(value),
            Err(e) => {
                let failure = || StageFailure::Spill(crate::error::error_chain(&e));
                self.error.borrow_mut().get_or_insert_with(failure);
                self.abort.store(true, AtomicOrdering::Relaxed);
                None
            }
        }
    }

    /// Whether a stage of this worker has failed: later stages then emit nothing, as the
    /// state they would read may be missing.
    pub fn failed(&self) -> bool {
        self.error.borrow().is_some()
    }
}

/// A record ordered by a key alone. Keys are unique in every use, so sorting is
/// deterministic.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Keyed<K, V> {
    /// The sort key.
    pub key: K,
    /// The record.
    pub value: V,
}

impl<K: Ord, V> PartialEq for Keyed<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<K: Ord, V> Eq for Keyed<K, V> {}
impl<K: Ord, V> PartialOrd for Keyed<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: Ord, V> Ord for Keyed<K, V> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}
impl<K, V: MemSize> MemSize for Keyed<K, V> {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<K>() + self.value.mem_size()
    }
}

/// Records handed over per activation when a stage drains its runs, so what it emits is
/// in flight a batch at a time rather than all at once.
const DRAIN_BATCH: usize = 16_384;

/// What a collecting stage does with its records, in order, once its input is complete.
pub(crate) trait Drain<D, O> {
    /// Handles the next record.
    ///
    /// # Errors
    /// Spill errors of files the stage reads alongside.
    fn item(&mut self, item: D, emit: &mut dyn FnMut(O)) -> Result<(), SpillError>;

    /// Called once after the last record.
    ///
    /// # Errors
    /// As [`Drain::item`].
    fn end(&mut self, _emit: &mut dyn FnMut(O)) -> Result<(), SpillError> {
        Ok(())
    }
}

enum Phase<D, S> {
    Collecting(SortedRuns<D>),
    Draining(Merged<D>, S),
    Done,
}

/// Collects every record of `stream` (all rounds) in sorted runs and, once the input is
/// complete, creates its drain with `begin` and feeds it the records in order, a batch per
/// activation. Output is emitted at the stream's first time. A spill error is recorded and
/// the stage emits nothing more.
pub(crate) fn collect_sorted<'s, T, D, O, P, S, B>(
    stream: StreamVec<'s, T, D>,
    pact: P,
    name: &str,
    spill: Spill,
    begin: B,
) -> StreamVec<'s, T, O>
where
    T: Timestamp,
    D: Ord + Serialize + DeserializeOwned + MemSize + 'static,
    O: 'static,
    P: ParallelizationContract<T, Vec<D>>,
    S: Drain<D, O> + 'static,
    B: FnMut() -> Result<S, SpillError> + 'static,
{
    collect_sorted_taking(stream, pact, name, spill, |item| Ok(Some(item)), begin)
}

/// [`collect_sorted`], where `take` sees each record as it arrives and keeps what it
/// returns `None` for (state that `begin` then hands to the drain), so those records are
/// neither sorted nor spilled with the rest; what it returns `Some` of (the record, or
/// what is left of it) is collected.
pub(crate) fn collect_sorted_taking<'s, T, D, O, P, S, K, B>(
    stream: StreamVec<'s, T, D>,
    pact: P,
    name: &str,
    spill: Spill,
    mut take: K,
    mut begin: B,
) -> StreamVec<'s, T, O>
where
    T: Timestamp,
    D: Ord + Serialize + DeserializeOwned + MemSize + 'static,
    O: 'static,
    P: ParallelizationContract<T, Vec<D>>,
    S: Drain<D, O> + 'static,
    K: FnMut(D) -> Result<Option<D>, SpillError> + 'static,
    B: FnMut() -> Result<S, SpillError> + 'static,
{
    let scope = stream.scope();
    stream
        .unary_frontier(pact, name, move |capability, info| {
            let activator = scope.activator_for(info.address);
            let mut capability = Some(capability);
            let mut phase: Phase<D, S> = Phase::Collecting(spill.runs());
            let mut failed = false;
            move |(input, frontier), output| {
                input.for_each(|_cap, batch| {
                    let Phase::Collecting(runs) = &mut phase else {
                        unreachable!("records arrive only before the input is complete")
                    };
                    for item in batch.drain(..) {
                        if failed {
                            continue;
                        }
                        let kept = take(item).and_then(|rest| match rest {
                            Some(item) => runs.push(item),
                            None => Ok(()),
                        });
                        if let Err(e) = kept {
                            spill.settle::<()>(0, Err(e));
                            failed = true;
                        }
                    }
                });
                if !frontier.is_empty() || capability.is_none() {
                    return;
                }
                if failed || (matches!(phase, Phase::Collecting(_)) && spill.failed()) {
                    capability = None;
                    phase = Phase::Done;
                    return;
                }
                if let Phase::Collecting(_) = phase {
                    let Phase::Collecting(runs) = std::mem::replace(&mut phase, Phase::Done) else {
                        unreachable!()
                    };
                    let spilled = runs.spilled_bytes();
                    let started = runs.into_sorted().and_then(|merged| Ok((merged, begin()?)));
                    match spill.settle(spilled, started) {
                        Some((merged, drain)) => phase = Phase::Draining(merged, drain),
                        None => {
                            capability = None;
                            return;
                        }
                    }
                }
                let Phase::Draining(merged, drain) = &mut phase else { return };
                let cap = capability.as_ref().expect("held while draining");
                let mut session = output.session(cap);
                let mut emit = |o| session.give(o);
                let (mut outcome, mut finished) = (Ok(()), false);
                for _ in 0..DRAIN_BATCH {
                    match merged.next() {
                        Some(Ok(item)) => {
                            if let Err(e) = drain.item(item, &mut emit) {
                                (outcome, finished) = (Err(e), true);
                                break;
                            }
                        }
                        Some(Err(e)) => {
                            (outcome, finished) = (Err(e), true);
                            break;
                        }
                        None => {
                            finished = true;
                            break;
                        }
                    }
                }
                if !finished {
                    activator.activate();
                    return;
                }
                if outcome.is_ok() {
                    outcome = drain.end(&mut emit);
                }
                drop(session);
                spill.settle(0, outcome);
                capability = None;
                phase = Phase::Done;
            }
        })
        .container::<Vec<O>>()
}

#[cfg(test)]
mod tests {
    use timely::dataflow::channels::pact::Pipeline;
    use timely::dataflow::operators::Inspect;
    use timely::dataflow::operators::core::Input;

    use super::*;
    use crate::operators::testing::{one_worker, spill};

    type Item = (u64, u64, u64);

    /// Emits each record's first field, then how many records it saw.
    struct Echo {
        seen: u64,
    }

    impl Drain<Item, u64> for Echo {
        fn item(&mut self, item: Item, emit: &mut dyn FnMut(u64)) -> Result<(), SpillError> {
            self.seen += 1;
            emit(item.0);
            Ok(())
        }

        fn end(&mut self, emit: &mut dyn FnMut(u64)) -> Result<(), SpillError> {
            emit(self.seen);
            Ok(())
        }
    }

    /// Sends `rounds` rounds of records (a permutation of `0..n`) through `collect_sorted`
    /// with `spill`; returns what it emitted.
    fn collect(spill: Spill, n: u64, rounds: u64) -> Vec<u64> {
        let out = Rc::new(RefCell::new(Vec::new()));
        let sink = out.clone();
        one_worker(move |worker| {
            let mut input = worker.dataflow::<u64, _, _>(move |scope| {
                let (input, stream) = scope.new_input::<Vec<Item>>();
                collect_sorted(stream, Pipeline, "Echo", spill, || Ok(Echo { seen: 0 }))
                    .inspect(move |x| sink.borrow_mut().push(*x));
                input
            });
            for round in 0..rounds {
                for i in (0..n).filter(|i| i % rounds == round) {
                    // A scrambled order within each round.
                    input.send(((i * 7919) % n, round, i));
                }
                input.advance_to(round + 1);
                worker.step();
            }
        });
        out.take()
    }

    #[test]
    fn records_of_every_round_are_drained_once_in_order_after_spilling() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path(), 0);
        let stats = spill.stats.clone();
        let n = 20_000; // 480 KB of records against the 64 KiB floor: several runs
        let out = collect(spill.clone(), n, 3);
        assert_eq!(out.len() as u64, n + 1);
        assert_eq!(out[..n as usize], (0..n).collect::<Vec<_>>());
        assert_eq!(out[n as usize], n);
        assert!(
            stats.borrow().resources.spilled_bytes > 0,
            "{:?}",
            stats.borrow().resources.spilled_bytes
        );
        assert!(!spill.failed());
    }

    #[test]
    fn a_spill_error_is_recorded_and_the_stage_emits_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A spill folder below a regular file cannot be made.
        std::fs::write(dir.path().join("file"), "").unwrap();
        let spill = spill(&dir.path().join("file").join("spill"), 0);
        let out = collect(spill.clone(), 20_000, 2);
        assert!(out.is_empty(), "{} records emitted", out.len());
        assert!(spill.failed());
        let error = spill.error.borrow().clone().unwrap().message().to_string();
        assert!(error.contains("file/spill"), "{error}");
        assert!(spill.abort.load(AtomicOrdering::Relaxed));
    }
}

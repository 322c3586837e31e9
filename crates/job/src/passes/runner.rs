//! The pass runner: every pass of the workers over the input (the corpus passes of
//! [`crate::passes::corpus`] and the main pass of [`crate::passes::worker`]) is a
//! [`WorkerPass`] value given to [`PassRunner::run`], which does for each what every pass
//! needs:
//!
//! 1. it starts the pass on every worker of every process and gives each worker its place
//!    ([`PassWorker`]): the read plan agreed with the other workers, or the one a pass
//!    before it kept;
//! 2. it builds, on each worker and before the pass's own dataflow, the pass's failure
//!    broadcast: a worker that cannot read, spill, write or read the index tells every
//!    other ([`PassAt::fail`]), and its process stops reading (the others go on, and
//!    keep their units in the work area for a rerun); every worker keeps the failure that
//!    explains the others ([`PassFailure::rank`]), so that every process fails with the
//!    same error whichever failure it hears first;
//! 3. it steps the worker until the pass's probes say it is done ([`PassAt::step_until`])
//!    and paces a source's rounds ([`Rounds`]), giving up when the run is stopped from
//!    outside;
//! 4. once the pass's work is done, it waits for every worker's failures and returns the
//!    one kept, or what each worker gave.
//!
//! A new pass is one type with its `work` (its dataflow, and what it reads into it), and
//! one call of [`PassRunner::run`] in the driver.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use timely::dataflow::InputHandleVec;
use timely::dataflow::operators::core::Input;
use timely::dataflow::operators::probe::Handle as ProbeHandle;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Inspect, Probe};
use timely::worker::Worker;

use crate::distributed::mesh::Control;
use crate::distributed::processes::{Heartbeat, Pass, run_workers};
use crate::distributed::traffic::Traffic;
use crate::error::{JobError, ReadFailure, error_chain};
use crate::input::pass_worker::PassWorker;
use crate::input::source::{KeptShares, ShareError};
use crate::settings::plan::RunPlan;

/// Why a worker failed, as it tells the others.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum PassFailure {
    /// It could not read its input.
    Read {
        /// The worker.
        worker: usize,
        /// What failed.
        failure: ReadFailure,
    },
    /// It could not read the index.
    Index {
        /// The worker.
        worker: usize,
        /// The error and its causes.
        message: String,
    },
    /// It could not write its outputs.
    Output {
        /// The worker.
        worker: usize,
        /// The error and its causes.
        message: String,
    },
    /// It could not spill, or keep what it read for the next pass.
    Spill {
        /// The worker.
        worker: usize,
        /// The error and its causes, with the pass named where it is not the main one.
        message: String,
    },
}

impl PassFailure {
    /// The failure of a worker that could not read its share in the pass named `pass`
    /// (`None`: the main pass, whose messages name no pass).
    pub(crate) fn of_share(worker: usize, error: &ShareError, pass: Option<&str>) -> PassFailure {
        match error {
            ShareError::Input(e) => PassFailure::Read { worker, failure: ReadFailure::of(e) },
            ShareError::Keep(e) => {
                let named = pass.map(|p| format!("{p} pass: ")).unwrap_or_default();
                PassFailure::Spill { worker, message: format!("{named}{}", error_chain(e)) }
            }
        }
    }

    /// Which of two failures a run reports: the one of least rank. What a worker could not
    /// read comes first (reading stops everywhere when one fails, which can make other
    /// workers' writes and spills fail in turn), then the index, the outputs and the spill
    /// folder; among failures of one kind, the least worker's.
    pub(crate) fn rank(&self) -> (u8, usize) {
        match self {
            PassFailure::Read { worker, .. } => (0, *worker),
            PassFailure::Index { worker, .. } => (1, *worker),
            PassFailure::Output { worker, .. } => (2, *worker),
            PassFailure::Spill { worker, .. } => (3, *worker),
        }
    }

    /// The job's error.
    pub(crate) fn into_error(self) -> JobError {
        match self {
            PassFailure::Read { worker, failure } => failure.into_error(worker),
            PassFailure::Index { worker, message } => JobError::IndexRead { worker, message },
            PassFailure::Output { worker, message } => JobError::Output { worker, message },
            PassFailure::Spill { worker, message } => JobError::Spill { worker, message },
        }
    }
}

/// The failure a worker keeps of those it heard: the one of least [`PassFailure::rank`].
/// Cheap to clone: clones share the cell.
#[derive(Clone, Default)]
struct FailureCell(Rc<RefCell<Option<PassFailure>>>);

impl FailureCell {
    /// Keeps `failure` when it ranks before the one kept.
    fn hear(&self, failure: &PassFailure) {
        let mut kept = self.0.borrow_mut();
        if kept.as_ref().is_none_or(|k| failure.rank() < k.rank()) {
            *kept = Some(failure.clone());
        }
    }

    /// The failure kept, if any.
    fn take(&self) -> Option<PassFailure> {
        self.0.borrow_mut().take()
    }
}

/// A pass's work ended early because the run was stopped from outside (a signal, another
/// process's end, a silent peer): the one way a pass's `work` may end early.
#[derive(Debug)]
pub(crate) struct Stopped;

/// One pass of the workers, as the runner runs it.
pub(crate) trait WorkerPass: Send + Sync + 'static {
    /// What each worker gives back.
    type Output: Send + 'static;

    /// Whether the workers read whole files rather than byte ranges of them (units signed
    /// by `neardup sign` tasks are whole files).
    fn whole_files(&self) -> bool {
        false
    }

    /// One worker's part: builds its dataflow, reads its share into it and steps until its
    /// probes are done ([`PassAt::step_until`]). A failure it meets it tells every worker
    /// ([`PassAt::fail`]) and goes on to the end, so that no worker waits for it; the
    /// runner then fails the pass. It returns early only when the run is stopped from
    /// outside, which is all [`Stopped`] can say.
    ///
    /// # Errors
    /// [`Stopped`] when the run is stopped from outside.
    fn work(&self, worker: &mut Worker, at: &mut PassAt<'_>) -> Result<Self::Output, Stopped>;
}

/// A worker's place in a running pass, and what the runner gives its work.
pub(crate) struct PassAt<'a> {
    /// The worker's index, peers and share.
    pub(crate) me: PassWorker,
    /// Beats while the worker steps; says when the run is stopped from outside.
    pub(crate) heartbeat: &'a mut Heartbeat,
    /// Set when a worker of this process fails ([`PassAt::fail`], a spill, a write) or the
    /// driver gives up the run, so this process's workers stop reading and writing.
    pub(crate) abort: Arc<AtomicBool>,
    /// Where this worker tells the others it failed (closed once its work is done).
    failures: Option<InputHandleVec<u64, PassFailure>>,
    /// Whether it has.
    told: bool,
}

impl PassAt<'_> {
    /// Tells every worker of the pass that this one failed, once (the first failure a
    /// worker meets is the one it tells: what came after is its consequence), and stops
    /// this process's reading.
    pub(crate) fn fail(&mut self, failure: PassFailure) {
        self.abort.store(true, Ordering::Relaxed);
        if !self.told
            && let Some(failures) = &mut self.failures
        {
            self.told = true;
            failures.send(failure);
        }
    }

    /// Steps the worker until `done` says so, keeping its heartbeat.
    ///
    /// # Errors
    /// [`Stopped`] when the run is stopped from outside (see [`Heartbeat::aborted`]).
    pub(crate) fn step_until(
        &mut self,
        worker: &mut Worker,
        mut done: impl FnMut() -> bool,
    ) -> Result<(), Stopped> {
        while !done() {
            worker.step_or_park(Some(Duration::from_millis(1)));
            self.heartbeat.beat();
            if self.heartbeat.aborted() {
                return Err(Stopped);
            }
        }
        Ok(())
    }
}

/// A source's rounds: the text fed since the last round began, and the round. A source
/// starts a new round once a round's worth of text is in, and before reading on waits
/// until every round but the last is through the stages that `paced` probes, so that at
/// most two rounds are in flight and what a worker holds stays bounded.
pub(crate) struct Rounds<'p> {
    /// Bytes of text per round.
    round_bytes: u64,
    /// Text fed in this round.
    text: Cell<u64>,
    /// The round being fed.
    round: Cell<u64>,
    /// The frontier of what the rounds feed.
    paced: &'p ProbeHandle<u64>,
}

impl<'p> Rounds<'p> {
    /// Rounds of `round_bytes` of text, paced by `paced`.
    pub(crate) fn new(round_bytes: u64, paced: &'p ProbeHandle<u64>) -> Rounds<'p> {
        Rounds { round_bytes, text: Cell::new(0), round: Cell::new(0), paced }
    }

    /// Counts `text` bytes fed; whether the round is full.
    pub(crate) fn fed(&self, text: u64) -> bool {
        self.text.set(self.text.get() + text);
        self.text.get() >= self.round_bytes
    }

    /// The round being fed.
    pub(crate) fn round(&self) -> u64 {
        self.round.get()
    }

    /// Between batches of records: steps the worker, and when the round is full starts the
    /// next one (`advance_to` moves the source's inputs to it) and waits for the rounds
    /// before the last one to pass.
    pub(crate) fn between_batches(
        &self,
        worker: &mut Worker,
        heartbeat: &mut Heartbeat,
        advance_to: impl FnOnce(u64),
    ) {
        worker.step();
        heartbeat.beat();
        if self.text.get() < self.round_bytes {
            return;
        }
        self.text.set(0);
        let round = self.round.get() + 1;
        self.round.set(round);
        advance_to(round);
        while self.paced.less_than(&(round - 1)) && !heartbeat.aborted() {
            worker.step_or_park(Some(Duration::from_millis(1)));
            heartbeat.beat();
        }
    }
}

/// Runs passes on the workers of a run.
pub(crate) struct PassRunner {
    /// The run.
    pub(crate) run: RunPlan,
    /// What stops a pass from outside: a signal, another process's end.
    pub(crate) control: Control,
    /// The inputs' fingerprint, which the processes of a run compare as they connect.
    pub(crate) fingerprint: u64,
    /// The records the first corpus pass kept, by worker slot, for the passes after it.
    pub(crate) kept: KeptShares,
}

impl PassRunner {
    /// Runs `pass` on every worker of this process (see the module documentation);
    /// `traffic` counts the bytes it exchanges with the other processes. Returns what each
    /// worker gave, in worker order.
    ///
    /// # Errors
    /// The failure of least rank a worker told ([`PassFailure::rank`]), the same in every
    /// process; [`JobError::Stopped`], [`JobError::Start`] or [`JobError::WorkerFailed`]
    /// when the run is stopped or timely fails.
    pub(crate) fn run<P: WorkerPass>(
        &self,
        pass: P,
        traffic: Option<Arc<Traffic>>,
    ) -> Result<Vec<P::Output>, JobError> {
        let abort = Arc::new(AtomicBool::new(false));
        let control = Pass { control: self.control.clone(), traffic, abort: abort.clone() };
        let (run, kept) = (self.run.clone(), self.kept.clone());
        let topology = run.topology.clone();
        run_workers(&topology, control, self.fingerprint, move |worker, heartbeat| {
            let me = PassWorker::start(worker, heartbeat, &run, &kept, pass.whole_files())?;
            // Built first on every worker, so that its place among the worker's dataflows
            // is the same everywhere.
            let heard = FailureCell::default();
            let told = ProbeHandle::new();
            let failures = worker.dataflow::<u64, _, _>(|scope| {
                let (input, failures) = scope.new_input::<Vec<PassFailure>>();
                // Another process's failure does not stop this one's workers: they go on
                // reading and committing units to the work area, which a rerun replays.
                let heard = heard.clone();
                failures.broadcast().inspect(move |failure| heard.hear(failure)).probe_with(&told);
                input
            });
            let failures = Some(failures);
            let mut at = PassAt { me, heartbeat, abort: abort.clone(), failures, told: false };
            let output = pass.work(worker, &mut at).map_err(|Stopped| JobError::Stopped)?;
            // Every worker's failures are in once every worker has closed its input.
            at.failures = None;
            at.step_until(worker, || told.done()).map_err(|Stopped| JobError::Stopped)?;
            match heard.take() {
                Some(failure) => Err(failure.into_error()),
                None => Ok(output),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::interrupt::Interrupt;
    use crate::distributed::processes::Topology;
    use crate::settings::spec::JobSpec;

    /// A pass whose workers fail as `fails` says (by worker), after building a dataflow
    /// that every worker steps to its end; each worker gives its index.
    struct Failing {
        fails: Vec<Option<PassFailure>>,
    }

    impl WorkerPass for Failing {
        type Output = usize;

        fn work(&self, worker: &mut Worker, at: &mut PassAt<'_>) -> Result<usize, Stopped> {
            let done = ProbeHandle::new();
            let mut input = worker.dataflow::<u64, _, _>(|scope| {
                let (input, stream) = scope.new_input::<Vec<u64>>();
                stream.broadcast().probe_with(&done);
                input
            });
            if let Some(failure) = self.fails.get(at.me.index).cloned().flatten() {
                at.fail(failure);
            }
            input.send(at.me.index as u64);
            drop(input);
            at.step_until(worker, || done.done())?;
            Ok(at.me.index)
        }
    }

    fn run(fails: Vec<Option<PassFailure>>) -> Result<Vec<usize>, JobError> {
        let dir = tempfile::tempdir().unwrap();
        let job = crate::operators::testing::job(dir.path(), JobSpec::default());
        let mut topology = Topology::local(3);
        topology.spill_dir = dir.path().to_path_buf();
        let control = Control { mesh: None, interrupt: Interrupt::default() };
        let runner = PassRunner {
            run: RunPlan::new(&job, &topology),
            control,
            fingerprint: 0,
            kept: KeptShares::default(),
        };
        runner.run(Failing { fails }, None)
    }

    #[test]
    fn every_worker_gives_its_output_when_none_fails() {
        assert_eq!(run(vec![None, None, None]).unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn the_failure_every_worker_keeps_is_the_read_failure_of_the_least_worker() {
        let read =
            |worker| PassFailure::Read { worker, failure: ReadFailure::message("bad".into()) };
        let spill = PassFailure::Spill { worker: 0, message: "disk full".into() };
        match run(vec![Some(spill), Some(read(1)), Some(read(2))]) {
            Err(JobError::Input { worker: 1, message, .. }) => assert_eq!(message, "bad"),
            other => panic!("expected worker 1's read failure, got {other:?}"),
        }
        let output = PassFailure::Output { worker: 2, message: "read-only".into() };
        match run(vec![None, None, Some(output)]) {
            Err(JobError::Output { worker: 2, message }) => assert_eq!(message, "read-only"),
            other => panic!("expected worker 2's output failure, got {other:?}"),
        }
    }

    #[test]
    fn a_read_failure_ranks_before_the_writes_and_spills_it_causes_then_the_least_worker() {
        let read = |worker| PassFailure::Read { worker, failure: ReadFailure::message("x".into()) };
        let spill = |worker| PassFailure::Spill { worker, message: "full".into() };
        let output = |worker| PassFailure::Output { worker, message: "read-only".into() };
        let cell = FailureCell::default();
        for failure in [spill(0), output(0), read(3), read(1), spill(2)] {
            cell.hear(&failure);
        }
        match cell.take().map(PassFailure::into_error) {
            Some(JobError::Input { worker: 1, message, .. }) => assert_eq!(message, "x"),
            other => panic!("expected worker 1's read failure, got {other:?}"),
        }
        let cell = FailureCell::default();
        cell.hear(&spill(1));
        cell.hear(&output(4));
        assert!(matches!(
            cell.take().map(PassFailure::into_error),
            Some(JobError::Output { worker: 4, .. })
        ));
        assert!(cell.take().is_none());
    }
}

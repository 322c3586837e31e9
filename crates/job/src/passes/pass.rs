//! The skeleton every pass of the workers follows (the corpus passes of [`crate::passes::corpus`]
//! and the main pass of [`crate::passes::worker`]):
//!
//! 1. each worker takes its share of the input: [`PassWorker::start`](crate::input::pass_worker::PassWorker::start) agrees on the read
//!    plan with the other workers, or takes the one a pass before it kept;
//! 2. it builds its dataflow and reads its share into it;
//! 3. a worker that cannot read, spill or read the index tells every other with a
//!    [`PassFailure`] broadcast in the dataflow, so that every process fails with the same
//!    error; each worker keeps the first it hears of in a [`FailureCell`];
//! 4. it steps the dataflow until its probes say it is done ([`step_until`]), and gives up
//!    when the run is stopped from outside.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use timely::worker::Worker;

use crate::distributed::processes::Heartbeat;
use crate::error::{JobError, ReadFailure, error_chain};
use crate::input::source::ShareError;

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
    /// It could not spill, or keep what it read for the next pass.
    Spill {
        /// The worker.
        worker: usize,
        /// The error and its causes, with the pass named.
        message: String,
    },
    /// It could not read the index.
    Index {
        /// The worker.
        worker: usize,
        /// The error and its causes.
        message: String,
    },
}

impl PassFailure {
    /// The failure of a worker that could not read its share in the pass named `pass`.
    pub(crate) fn of_share(worker: usize, error: &ShareError, pass: &str) -> PassFailure {
        match error {
            ShareError::Input(e) => PassFailure::Read { worker, failure: ReadFailure::of(e) },
            ShareError::Keep(e) => {
                PassFailure::Spill { worker, message: format!("{pass} pass: {}", error_chain(e)) }
            }
        }
    }

    /// The job's error.
    pub(crate) fn into_error(self) -> JobError {
        match self {
            PassFailure::Read { worker, failure } => failure.into_error(worker),
            PassFailure::Spill { worker, message } => JobError::Spill { worker, message },
            PassFailure::Index { worker, message } => JobError::IndexRead { worker, message },
        }
    }
}

/// The first failure a worker heard of in a pass. Cheap to clone: clones share the cell.
#[derive(Clone, Default)]
pub(crate) struct FailureCell(Rc<RefCell<Option<JobError>>>);

impl FailureCell {
    /// Keeps `failure` unless one was heard of before.
    pub(crate) fn hear(&self, failure: &PassFailure) {
        self.0.borrow_mut().get_or_insert_with(|| failure.clone().into_error());
    }

    /// The failure heard of, if any.
    pub(crate) fn take(&self) -> Option<JobError> {
        self.0.borrow_mut().take()
    }
}

/// Steps `worker` until `done` says so, keeping its heartbeat.
///
/// # Errors
/// [`JobError::Stopped`] when the run is stopped from outside (see [`Heartbeat::aborted`]).
pub(crate) fn step_until(
    worker: &mut Worker,
    heartbeat: &mut Heartbeat,
    mut done: impl FnMut() -> bool,
) -> Result<(), JobError> {
    while !done() {
        worker.step_or_park(Some(Duration::from_millis(1)));
        heartbeat.beat();
        if heartbeat.aborted() {
            return Err(JobError::Stopped);
        }
    }
    Ok(())
}

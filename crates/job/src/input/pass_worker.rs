//! One worker's place in a pass: its index among the run's workers and its share of the
//! input ([`ReadPlan`]), agreed with the other workers or kept from a pass before.

use timely::worker::Worker;

use crate::distributed::processes::Heartbeat;
use crate::error::JobError;
use crate::input::source::{KeptShares, ReadPlan};
use crate::settings::plan::RunPlan;

/// One worker's place in a pass.
#[derive(Clone)]
pub(crate) struct PassWorker {
    /// The worker's index among all workers of the run.
    pub(crate) index: usize,
    /// Workers of the run, all processes.
    pub(crate) peers: usize,
    /// The worker's slot among the workers of its process: where its kept records are.
    pub(crate) slot: usize,
    /// Whether it is its process's first worker (which counts what the process shares).
    pub(crate) first_of_process: bool,
    /// What it reads.
    pub(crate) plan: ReadPlan,
}

impl PassWorker {
    /// The worker's place: its read plan is the one an earlier pass kept in `kept`, or is
    /// agreed with the other workers now (whole files only with `whole_files`).
    ///
    /// # Errors
    /// When the workers cannot agree on the plan (see [`ReadPlan::agree`]).
    pub(crate) fn start(
        worker: &mut Worker,
        heartbeat: &mut Heartbeat,
        run: &RunPlan,
        kept: &KeptShares,
        whole_files: bool,
    ) -> Result<PassWorker, JobError> {
        let index = worker.index();
        let local_workers = run.topology.workers;
        let slot = index % local_workers.max(1);
        let options = run.job.read_options(run.max_record_bytes);
        // Either every worker of the job kept its share or none did, so all take the same
        // branch.
        let plan = match kept.plan(slot) {
            Some(plan) => plan,
            None if whole_files => ReadPlan::whole_files(index, worker.peers(), options),
            None => ReadPlan::agree(worker, heartbeat, &run.job, options)?,
        };
        Ok(PassWorker {
            index,
            peers: worker.peers(),
            slot,
            first_of_process: index.is_multiple_of(local_workers.max(1)),
            plan,
        })
    }
}

//! What each worker reports at the end of a run, gathered by every worker and merged.

use crate::error::{JobError, ReadFailure};
use crate::reporting::stats::WorkerStats;
use crate::reporting::summary::StageSeconds;

/// Why a worker failed, carried to every other worker.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum Failure {
    Input(ReadFailure),
    Output(String),
    Spill(String),
}

/// What one worker did, sent to every worker at the end; merged, what all of them did.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct WorkerReport {
    pub(crate) worker: usize,
    pub(crate) stats: WorkerStats,
    pub(crate) seconds: StageSeconds,
    pub(crate) blocks: Option<u32>,
    pub(crate) failure: Option<(usize, Failure)>,
    /// This process's bytes exchanged with the others, by stage: filled in after the
    /// workers end, not gathered.
    #[serde(skip)]
    pub(crate) exchanged:
        std::collections::BTreeMap<String, crate::distributed::traffic::Exchanged>,
}

impl WorkerReport {
    /// The sum of all workers' reports (the first failure, by worker, wins).
    pub(crate) fn merge(mut reports: Vec<WorkerReport>) -> WorkerReport {
        reports.sort_by_key(|r| r.worker);
        let mut total = WorkerReport::default();
        for r in &reports {
            total.stats.merge(&r.stats);
            total.seconds.max(&r.seconds);
            total.blocks = total.blocks.or(r.blocks);
            if total.failure.is_none() {
                total.failure.clone_from(&r.failure);
            }
        }
        total
    }

    pub(crate) fn into_result(self) -> Result<WorkerReport, JobError> {
        match self.failure.clone() {
            None => Ok(self),
            Some((worker, Failure::Input(failure))) => Err(failure.into_error(worker)),
            Some((worker, Failure::Output(message))) => Err(JobError::Output { worker, message }),
            Some((worker, Failure::Spill(message))) => Err(JobError::Spill { worker, message }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(worker: usize, records: u64, failure: Option<Failure>) -> WorkerReport {
        let mut r = WorkerReport { worker, ..WorkerReport::default() };
        r.stats.reading.records_read = records;
        r.seconds.total = worker as f64;
        r.failure = failure.map(|f| (worker, f));
        r
    }

    #[test]
    fn merging_sums_counts_takes_the_latest_times_and_the_first_failure_by_worker() {
        let merged = WorkerReport::merge(vec![
            report(2, 5, Some(Failure::Spill("disk full".into()))),
            report(0, 3, None),
            report(1, 4, Some(Failure::Output("read-only".into()))),
        ]);
        assert_eq!(merged.stats.reading.records_read, 12);
        assert_eq!(merged.seconds.total, 2.0);
        match merged.into_result() {
            Err(JobError::Output { worker: 1, message }) => assert_eq!(message, "read-only"),
            other => panic!("expected worker 1's output error, got {other:?}"),
        }
    }

    #[test]
    fn a_report_without_failure_is_a_success() {
        let merged = WorkerReport::merge(vec![report(0, 1, None), report(1, 1, None)]);
        assert_eq!(merged.into_result().expect("no failure").stats.reading.records_read, 2);
    }
}

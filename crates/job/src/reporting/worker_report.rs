//! What each worker reports at the end of a run, gathered by every worker and merged
//! (its failures go through the pass runner: `crate::passes::runner`).

use crate::reporting::stats::WorkerStats;
use crate::reporting::summary::StageSeconds;

/// What one worker did, sent to every worker at the end; merged, what all of them did.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct WorkerReport {
    pub(crate) worker: usize,
    pub(crate) stats: WorkerStats,
    pub(crate) seconds: StageSeconds,
    pub(crate) blocks: Option<u32>,
    /// This process's bytes exchanged with the others, by stage: filled in after the
    /// workers end, not gathered.
    #[serde(skip)]
    pub(crate) exchanged:
        std::collections::BTreeMap<String, crate::distributed::traffic::Exchanged>,
}

impl WorkerReport {
    /// The sum of all workers' reports.
    pub(crate) fn merge(mut reports: Vec<WorkerReport>) -> WorkerReport {
        reports.sort_by_key(|r| r.worker);
        let mut total = WorkerReport::default();
        for r in &reports {
            total.stats.merge(&r.stats);
            total.seconds.max(&r.seconds);
            total.blocks = total.blocks.or(r.blocks);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(worker: usize, records: u64) -> WorkerReport {
        let mut r = WorkerReport { worker, ..WorkerReport::default() };
        r.stats.reading.records_read = records;
        r.seconds.total = worker as f64;
        r
    }

    #[test]
    fn merging_sums_counts_and_takes_the_latest_times() {
        let merged = WorkerReport::merge(vec![report(2, 5), report(0, 3), report(1, 4)]);
        assert_eq!(merged.stats.reading.records_read, 12);
        assert_eq!(merged.seconds.total, 2.0);
    }
}

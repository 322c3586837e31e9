//! The run as resolved once, before any folder is changed: the checked job, where it
//! runs, the record size limit its memory budget gives, and how each worker spends its
//! share of the budget. Every stage of a run reads this one value; none works a setting
//! out again or writes one back.

use std::path::PathBuf;
use std::sync::Arc;

use crate::distributed::processes::Topology;
use crate::settings::config::JobConfig;
use crate::settings::memory::MemoryPlan;
use crate::settings::spec::JobSpec;

/// One run of a job, resolved.
#[derive(Clone)]
pub(crate) struct RunPlan {
    /// The checked job.
    pub(crate) job: Arc<JobConfig>,
    /// Where it runs: its processes and workers, the memory budget and the spill folder.
    pub(crate) topology: Topology,
    /// The largest record read: the job file's `input.max_record_bytes`, or the share of
    /// the memory budget that [`crate::settings::memory::default_max_record_bytes`] gives.
    pub(crate) max_record_bytes: u64,
    /// How each worker spends its share of the budget.
    pub(crate) memory: MemoryPlan,
    /// The settings the run uses, as a job file would give them, with its record size
    /// limit ([`JobConfig::effective_spec`]): what `summary.json`, the Parquet metadata
    /// and an index record, and what the processes of a distributed run compare.
    pub(crate) effective: JobSpec,
}

impl RunPlan {
    /// Resolves a run of `job` on `topology`.
    pub(crate) fn new(job: &JobConfig, topology: &Topology) -> RunPlan {
        let max_record_bytes = job.max_record_bytes(topology.memory_budget);
        RunPlan {
            job: Arc::new(job.clone()),
            topology: topology.clone(),
            max_record_bytes,
            memory: MemoryPlan::of(topology),
            effective: job.effective_spec(Some(max_record_bytes)),
        }
    }

    /// The plan once the run holds `dir` as its own spill folder (below the topology's).
    pub(crate) fn spilling_in(mut self, dir: PathBuf) -> RunPlan {
        self.topology.spill_dir.clone_from(&dir);
        self.memory.dir = dir;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::memory::default_max_record_bytes;

    #[test]
    fn the_record_limit_and_memory_plan_are_resolved_once_from_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let job = crate::operators::testing::job(dir.path(), JobSpec::default());
        let mut topology = Topology::local(2);
        topology.memory_budget = 64 << 20;
        let plan = RunPlan::new(&job, &topology);
        assert_eq!(plan.max_record_bytes, default_max_record_bytes(64 << 20));
        assert_eq!(plan.memory.round_bytes, MemoryPlan::of(&topology).round_bytes);
        assert_eq!(plan.effective.input.max_record_bytes, Some(plan.max_record_bytes));
        let moved = plan.spilling_in("spill/own".into());
        assert_eq!(moved.topology.spill_dir, PathBuf::from("spill/own"));
        assert_eq!(moved.memory.dir, PathBuf::from("spill/own"));
    }
}

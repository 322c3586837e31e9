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
    /// The corpus passes the workers make over the input before signing, in order (the
    /// first reads the files, the others replay what it read): empty when signing needs
    /// nothing of the whole corpus.
    pub(crate) corpus_passes: Vec<CorpusPass>,
}

/// A pass over the whole corpus before signing, learning what signing needs of it. Each
/// is a value given to the pass runner (`passes::corpus`); a new one is a file there, a
/// variant here and its line in [`RunPlan::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CorpusPass {
    /// Learns the web pages' templates (`[boilerplate]`).
    Templates,
    /// Counts document frequencies for SimHash's TF-IDF weights, in what is analysed
    /// (pages without their templates).
    DocumentFrequencies,
}

impl RunPlan {
    /// Resolves a run of `job` on `topology`.
    pub(crate) fn new(job: &JobConfig, topology: &Topology) -> RunPlan {
        let max_record_bytes = job.max_record_bytes(topology.memory_budget);
        let mut corpus_passes = Vec::new();
        if job.needs_boilerplate() {
            corpus_passes.push(CorpusPass::Templates);
        }
        if job.needs_corpus_idf() {
            corpus_passes.push(CorpusPass::DocumentFrequencies);
        }
        RunPlan {
            job: Arc::new(job.clone()),
            topology: topology.clone(),
            max_record_bytes,
            memory: MemoryPlan::of(topology),
            effective: job.effective_spec(Some(max_record_bytes)),
            corpus_passes,
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
        assert_eq!(plan.corpus_passes, [], "JSON Lines of plain text need no corpus pass");
        let moved = plan.spilling_in("spill/own".into());
        assert_eq!(moved.topology.spill_dir, PathBuf::from("spill/own"));
        assert_eq!(moved.memory.dir, PathBuf::from("spill/own"));
    }

    #[test]
    fn web_pages_weighed_by_their_corpus_list_both_corpus_passes_templates_first() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("a.jsonl");
        std::fs::write(&input, "{\"id\":\"1\",\"url\":\"http://a.example/\",\"text\":\"x\"}\n")
            .unwrap();
        let plan = |method: &str| {
            let spec: JobSpec = toml::from_str(&format!(
                "method = \"{method}\"\n[simhash]\nweighting = \"tf_idf\"\nidf = \"corpus\"\n"
            ))
            .unwrap();
            let job = JobConfig::new(spec, std::slice::from_ref(&input), dir.path().join("out"));
            RunPlan::new(&job.unwrap(), &Topology::local(1)).corpus_passes
        };
        assert_eq!(plan("simhash"), [CorpusPass::Templates, CorpusPass::DocumentFrequencies]);
        assert_eq!(plan("minhash"), [CorpusPass::Templates]);
    }
}

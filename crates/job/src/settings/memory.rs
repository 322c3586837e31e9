//! The memory budget's plan (`--memory-budget`, per process): every share of it is named
//! here once.
//!
//! The budget is split evenly among the process's workers. Of a worker's share, each
//! collecting stage (sorted runs, the document store, a pass's occurrences) holds at most
//! [`SPILL_SHARE`] before it spills, since a few stages collect at once and rounds of
//! input are in flight alongside; a stage that holds several collections at once splits
//! its limit among them ([`crate::operators::collect::Spill::share`]). A round of input text is
//! [`ROUND_SHARE`] of it. Of the process's budget, the largest record read is
//! [`RECORD_SHARE`] unless the job file sets one (signing a record takes some 25 times its
//! size). No share is below [`MIN_SHARE_BYTES`].

use std::path::PathBuf;

use crate::distributed::processes::{MEMORY_BUDGET_FLOOR, Topology};

/// A collecting stage holds at most one eighth of its worker's share.
pub(crate) const SPILL_SHARE: u64 = 8;

/// A round of input text is one sixteenth of a worker's share.
pub(crate) const ROUND_SHARE: u64 = 16;

/// The default record size limit is one sixty-fourth of the process's budget (at most
/// `neardup_io::DEFAULT_MAX_RECORD_BYTES`).
pub(crate) const RECORD_SHARE: u64 = 64;

/// The least bytes any share is given, whatever the budget.
pub(crate) const MIN_SHARE_BYTES: u64 = 1 << 16;

/// How a worker spends its share of the memory budget.
#[derive(Clone, Debug)]
pub(crate) struct MemoryPlan {
    /// The folder below which each worker spills.
    pub(crate) dir: PathBuf,
    /// Bytes each collecting stage holds before spilling.
    pub(crate) limit_bytes: usize,
    /// Bytes of text read per round.
    pub(crate) round_bytes: u64,
}

impl MemoryPlan {
    /// The plan of each worker of `topology`.
    pub(crate) fn of(topology: &Topology) -> MemoryPlan {
        let worker = topology.memory_budget / topology.workers.max(1) as u64;
        let limit_bytes = (worker / SPILL_SHARE).max(MIN_SHARE_BYTES);
        MemoryPlan {
            dir: topology.spill_dir.clone(),
            limit_bytes: usize::try_from(limit_bytes).unwrap_or(usize::MAX),
            round_bytes: (worker / ROUND_SHARE).max(MIN_SHARE_BYTES),
        }
    }
}

/// What a worker holds whatever its data: its thread, the least share of each of its
/// stages and its buffers. Measured with `--memory-budget 1G` on 2,000 documents: peaks of
/// 45, 103, 202, 481 and 1,171 MB with 8, 32, 64, 128 and 256 workers, about 3.4 MB a worker
/// and 5.4 KB a pair of workers; these constants round both up.
pub const WORKER_FIXED_BYTES: u64 = 4 << 20;

/// What each pair of workers holds whatever the data: the buffers of the exchange channels
/// between them (see [`WORKER_FIXED_BYTES`]). A process's workers pair with every worker of
/// every process, so this part grows with the square of the workers.
pub const WORKER_PAIR_BYTES: u64 = 8 << 10;

/// The bytes one process of `topology` holds for its workers before any data: a worker's
/// fixed part for each of its workers, and a pair's for each of its workers with each worker
/// of the run.
pub fn workers_fixed_bytes(topology: &Topology) -> u64 {
    let workers = topology.workers as u64;
    let total = topology.total_workers() as u64;
    workers
        .saturating_mul(WORKER_FIXED_BYTES)
        .saturating_add(workers.saturating_mul(total).saturating_mul(WORKER_PAIR_BYTES))
}

/// Whether the workers of `topology` fit its memory budget: what they hold before any data
/// ([`workers_fixed_bytes`]) may take at most half of the budget (of
/// [`MEMORY_BUDGET_FLOOR`] when the budget is below it), leaving the rest to the
/// data, which spills. One worker a process always fits. The error says what the workers
/// cost and what would fit.
///
/// # Errors
/// A message naming the worker count, its cost, the budget and the most workers that fit.
pub fn check_workers(topology: &Topology) -> Result<(), String> {
    let room = topology.memory_budget.max(MEMORY_BUDGET_FLOOR) / 2;
    if topology.workers <= 1 || workers_fixed_bytes(topology) <= room {
        return Ok(());
    }
    let fits = |workers: usize| {
        let mut t = topology.clone();
        t.workers = workers;
        workers_fixed_bytes(&t) <= room
    };
    let (mut low, mut high) = (1, topology.workers);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fits(middle) { low = middle } else { high = middle }
    }
    let mib = |bytes: u64| bytes.div_ceil(1 << 20);
    let processes = if topology.processes > 1 {
        format!(" in each of {} processes", topology.processes)
    } else {
        String::new()
    };
    Err(format!(
        "--workers {}{processes} needs about {} MiB before any data ({} MiB a worker and {} KiB \
         for each pair of workers, {} workers in all), more than half of the memory budget \
         ({} MiB); use at most {low} workers, or a larger --memory-budget",
        topology.workers,
        mib(workers_fixed_bytes(topology)),
        WORKER_FIXED_BYTES >> 20,
        WORKER_PAIR_BYTES >> 10,
        topology.total_workers(),
        mib(topology.memory_budget.max(MEMORY_BUDGET_FLOOR)),
    ))
}

/// The smallest memory budget whose default record size limit is the largest,
/// [`neardup_io::DEFAULT_MAX_RECORD_BYTES`]: every budget from it on signs alike.
pub const FULL_RECORD_LIMIT_BUDGET: u64 = neardup_io::DEFAULT_MAX_RECORD_BYTES * RECORD_SHARE;

/// The record size limit of a run whose job file sets none: 16 MiB, or a sixty-fourth of
/// the memory budget when that is less, so that one record never takes more than the
/// budget. Worker and process counts play no part, and budgets of 1 GiB and more all give
/// 16 MiB.
pub fn default_max_record_bytes(memory_budget_bytes: u64) -> u64 {
    neardup_io::DEFAULT_MAX_RECORD_BYTES
        .min(memory_budget_bytes / RECORD_SHARE)
        .max(MIN_SHARE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_from_the_full_limit_budget_on_give_the_default_limit() {
        let full = FULL_RECORD_LIMIT_BUDGET;
        assert_eq!(default_max_record_bytes(full), neardup_io::DEFAULT_MAX_RECORD_BYTES);
        assert_eq!(default_max_record_bytes(full * 8), neardup_io::DEFAULT_MAX_RECORD_BYTES);
        assert!(default_max_record_bytes(full - (1 << 20)) < neardup_io::DEFAULT_MAX_RECORD_BYTES);
    }

    #[test]
    fn workers_that_do_not_fit_half_the_budget_are_refused_naming_what_fits() {
        let mut topology = Topology::local(64);
        topology.memory_budget = 1 << 30;
        assert_eq!(workers_fixed_bytes(&topology), 64 * (4 << 20) + 64 * 64 * (8 << 10));
        assert!(check_workers(&topology).is_ok());
        topology.workers = 256;
        let error = check_workers(&topology).unwrap_err();
        assert!(error.contains("--workers 256 needs about 1536 MiB"), "{error}");
        assert!(error.contains("use at most 106 workers"), "{error}");
        topology.workers = 106;
        assert!(check_workers(&topology).is_ok());
        // A count far past any machine is refused under a budget far past any machine.
        topology.workers = 100_000;
        topology.memory_budget = 1 << 40;
        assert!(check_workers(&topology).is_err());
        topology.workers = usize::MAX;
        topology.memory_budget = u64::MAX;
        assert!(check_workers(&topology).is_err(), "no overflow");
        // One worker always fits, and a small budget counts as the floor.
        topology.workers = 1;
        topology.memory_budget = 1;
        assert!(check_workers(&topology).is_ok());
        topology.workers = 4;
        assert!(check_workers(&topology).is_ok());
        // Other processes' workers pair with this one's.
        let mut distributed = Topology::local(24);
        distributed.memory_budget = 256 << 20;
        assert!(check_workers(&distributed).is_ok());
        distributed.processes = 8;
        let error = check_workers(&distributed).unwrap_err();
        assert!(error.contains("in each of 8 processes"), "{error}");
    }

    #[test]
    fn shares_of_the_budget() {
        let mut topology = Topology::local(4);
        topology.memory_budget = 8 << 30;
        let plan = MemoryPlan::of(&topology);
        assert_eq!(plan.limit_bytes, 256 << 20);
        assert_eq!(plan.round_bytes, 128 << 20);
        topology.memory_budget = 1 << 20;
        let plan = MemoryPlan::of(&topology);
        assert_eq!((plan.limit_bytes, plan.round_bytes), (1 << 16, 1 << 16));
        assert_eq!(default_max_record_bytes(1 << 20), 1 << 16);
        assert_eq!(default_max_record_bytes(8 << 30), neardup_io::DEFAULT_MAX_RECORD_BYTES);
        assert_eq!(default_max_record_bytes(64 << 20), 1 << 20);
    }
}

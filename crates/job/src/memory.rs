//! The memory budget's plan (`--memory-budget`, per process): every share of it is named
//! here once.
//!
//! The budget is split evenly among the process's workers. Of a worker's share, each
//! collecting stage (sorted runs, the document store, a pass's occurrences) holds at most
//! [`SPILL_SHARE`] before it spills, since a few stages collect at once and rounds of
//! input are in flight alongside; a stage that holds several collections at once splits
//! its limit among them ([`crate::operators::Spill::share`]). A round of input text is
//! [`ROUND_SHARE`] of it. Of the process's budget, the largest record read is
//! [`RECORD_SHARE`] unless the job file sets one (signing a record takes some 25 times its
//! size). No share is below [`MIN_SHARE_BYTES`].

use std::path::PathBuf;

use crate::processes::Topology;

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
pub(crate) struct MemoryPlan {
    /// The folder below which each worker spills.
    pub(crate) dir: PathBuf,
    /// Bytes each collecting stage holds before spilling.
    pub(crate) limit_bytes: usize,
    /// Bytes of text read per round.
    pub(crate) round_bytes: u64,
    /// The largest record read (`crate::JobConfig::max_record_bytes`).
    pub(crate) max_record_bytes: u64,
}

impl MemoryPlan {
    /// The plan of each worker of `topology`, reading records of at most
    /// `max_record_bytes`.
    pub(crate) fn of(topology: &Topology, max_record_bytes: u64) -> MemoryPlan {
        let worker = topology.memory_budget / topology.workers.max(1) as u64;
        let limit_bytes = (worker / SPILL_SHARE).max(MIN_SHARE_BYTES);
        MemoryPlan {
            dir: topology.spill_dir.clone(),
            limit_bytes: usize::try_from(limit_bytes).unwrap_or(usize::MAX),
            round_bytes: (worker / ROUND_SHARE).max(MIN_SHARE_BYTES),
            max_record_bytes,
        }
    }
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
    fn shares_of_the_budget() {
        let mut topology = Topology::local(4);
        topology.memory_budget = 8 << 30;
        let plan = MemoryPlan::of(&topology, 1 << 20);
        assert_eq!(plan.limit_bytes, 256 << 20);
        assert_eq!(plan.round_bytes, 128 << 20);
        topology.memory_budget = 1 << 20;
        let plan = MemoryPlan::of(&topology, default_max_record_bytes(topology.memory_budget));
        assert_eq!((plan.limit_bytes, plan.round_bytes), (1 << 16, 1 << 16));
        assert_eq!(plan.max_record_bytes, 1 << 16);
        assert_eq!(default_max_record_bytes(8 << 30), neardup_io::DEFAULT_MAX_RECORD_BYTES);
        assert_eq!(default_max_record_bytes(64 << 20), 1 << 20);
    }
}

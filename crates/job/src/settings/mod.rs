//! The job's settings: the job file as given (`spec`), checked into a `JobConfig` that
//! chooses what it leaves unset (`config`), the memory plan that divides the budget among
//! workers and stages (`memory`), and the run resolved once as it starts (`plan`:
//! `RunPlan`), which every stage reads and none changes.
//!
//! May use: `error`, `distributed`.

pub(crate) mod config;
pub(crate) mod memory;
pub(crate) mod plan;
pub(crate) mod spec;

//! The job's settings: the job file as given (`spec`), the memory plan that divides the
//! budget among workers and stages (`memory`), and the run as checked and resolved once
//! (`config`), which every stage reads and none changes.
//!
//! May use: `error`, `distributed`.

pub(crate) mod config;
pub(crate) mod memory;
pub(crate) mod plan;
pub(crate) mod spec;

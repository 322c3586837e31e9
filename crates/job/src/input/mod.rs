//! Documents coming in: each worker's share of the input files and its place in a pass
//! (`source`, `pass_worker`), signing a document (`sign`), sign tasks that sign shares
//! apart from the run (`sign_task`), and the work area that keeps what signing gave each
//! unit of input, for a rerun to replay (`work_area`).
//!
//! May use: `error`, `distributed`, `settings`, `storage`, `reporting`.

pub(crate) mod pass_worker;
pub(crate) mod sign;
pub(crate) mod sign_task;
pub(crate) mod source;
pub(crate) mod work_area;

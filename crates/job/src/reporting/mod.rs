//! What a run counts and says about itself: the stages by name, progress lines, each
//! worker's statistics and its report to the driver, and the run's summary.
//!
//! May use: `error`, `distributed`, `settings`, `storage`.

pub(crate) mod progress;
pub(crate) mod stage;
pub(crate) mod stats;
pub(crate) mod summary;
pub(crate) mod worker_report;

//! What a run leaves behind: the commit of its outputs in a fixed order (`commit`), and
//! `report.html` with its quoted excerpts (`report`, `report_quotes`).
//!
//! May use: `error`, `distributed`, `settings`, `storage`, `reporting`, `input`.

pub(crate) mod commit;
pub(crate) mod report;
pub(crate) mod report_quotes;

//! The one failure type of the operators: what a stage of a worker could not do
//! ([`StageFailure`]), kept in one cell per worker ([`StageFailures`]) that its spill and
//! its sink share.

use std::cell::RefCell;
use std::rc::Rc;

/// Why a stage of a worker failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StageFailure {
    /// It could not spill, or read back what it spilled.
    Spill(String),
    /// It could not write a part of the outputs.
    Output(String),
}

impl StageFailure {
    /// What failed, and why.
    pub(crate) fn message(&self) -> &str {
        match self {
            StageFailure::Spill(message) | StageFailure::Output(message) => message,
        }
    }
}

/// A worker's first stage failure, shared by its operators (through its [`Spill`](crate::operators::collect::Spill) and its
/// [`PartSink`](crate::operators::sink::PartSink)): the first one recorded stays, since what fails after it is its
/// consequence (a stage after a failed one emits nothing).
pub(crate) type StageFailures = Rc<RefCell<Option<StageFailure>>>;

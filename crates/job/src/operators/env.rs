//! What the operators of one worker share, given to each as one [`OperatorEnv`]: where
//! they spill, where they write parts, the document store, the worker's statistics, and
//! the one place their failures go ([`crate::operators::failure::StageFailures`]).

use std::cell::RefCell;
use std::rc::Rc;

use crate::operators::collect::Spill;
use crate::operators::failure::StageFailure;
use crate::operators::sink::PartSink;
use crate::operators::store::DocStore;
use crate::reporting::stats::WorkerStats;

/// What every operator of one worker is given.
#[derive(Clone)]
pub(crate) struct OperatorEnv {
    /// Where collecting stages spill, and how much they hold before they do.
    pub(crate) spill: Spill,
    /// Where stages write their parts.
    pub(crate) sink: PartSink,
    /// The documents and signatures of the worker's home documents.
    pub(crate) store: Rc<RefCell<DocStore>>,
    /// The worker's statistics (the ones `spill` and `sink` count into).
    pub(crate) stats: Rc<RefCell<WorkerStats>>,
}

impl OperatorEnv {
    /// The worker's first stage failure, if any.
    pub(crate) fn failure(&self) -> Option<StageFailure> {
        self.spill.error.borrow().clone()
    }
}

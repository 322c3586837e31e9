//! Every worker's report, delivered to every worker once all parts are written.
//!
//! Partitioning: each worker emits one report, broadcast to all workers. Emits: once this
//! worker's part writers are done (their markers' frontier is complete). Holds: one report
//! per worker.

use std::cell::RefCell;
use std::rc::Rc;

use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::Inspect;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Broadcast;
use timely::progress::Timestamp;

use crate::reporting::worker_report::WorkerReport;

/// Exchanges the workers' reports.
pub trait GatherReports<'s, T: Timestamp> {
    /// Once this worker's writers are done, takes its report from `report` and sends it to
    /// every worker; every report received is pushed to `all`.
    fn gather_reports(
        self,
        report: impl FnMut() -> WorkerReport + 'static,
        all: Rc<RefCell<Vec<WorkerReport>>>,
    ) -> StreamVec<'s, T, WorkerReport>;
}

impl<'s, T: Timestamp> GatherReports<'s, T> for StreamVec<'s, T, ()> {
    fn gather_reports(
        self,
        mut report: impl FnMut() -> WorkerReport + 'static,
        all: Rc<RefCell<Vec<WorkerReport>>>,
    ) -> StreamVec<'s, T, WorkerReport> {
        self.unary_frontier(Pipeline, "GatherReports", move |capability, _info| {
            let mut capability = Some(capability);
            move |(input, frontier), output| {
                input.for_each(|_cap, batch| batch.clear());
                if frontier.is_empty()
                    && let Some(cap) = capability.take()
                {
                    output.session(&cap).give(report());
                }
            }
        })
        .container::<Vec<_>>()
        .broadcast()
        .inspect(move |report| all.borrow_mut().push(report.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::run_operator;

    #[test]
    fn the_report_is_sent_once_the_writers_are_done() {
        let all = Rc::new(RefCell::new(Vec::new()));
        let received = all.clone();
        let mut taken = 0;
        let out = run_operator(vec![(), ()], move |markers| {
            markers.gather_reports(
                move || {
                    taken += 1;
                    assert_eq!(taken, 1, "the report is taken once");
                    WorkerReport { worker: 3, ..WorkerReport::default() }
                },
                received,
            )
        });
        assert_eq!(out.iter().map(|r| r.worker).collect::<Vec<_>>(), [3]);
        assert_eq!(all.borrow().iter().map(|r| r.worker).collect::<Vec<_>>(), [3]);
    }
}

//! Builds one `documents/` row per accepted document from its info and cluster assignment.
//!
//! Partitioning: both inputs exchanged on `DocId`. Emits: once both inputs are complete.
//! Holds: the info of this worker's documents and the assignments of those in clusters.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use neardup_core::DocId;
use neardup_io::{Decision, DocumentRow, Reason, RejectedRecord};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::records::{Assignment, DocInfo};
use crate::routing::route_doc;
use crate::stats::WorkerStats;

/// Decides keep or remove for every accepted document.
pub trait AssembleDocuments<'s, T: Timestamp> {
    /// Joins document info with cluster assignments (differential updates, consolidated
    /// here) into rows; documents in no cluster are kept alone.
    fn assemble_documents(
        self,
        assignments: StreamVec<'s, T, ((DocId, Assignment), T, isize)>,
        sources: Arc<[Arc<str>]>,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, DocumentRow>;
}

impl<'s, T: Timestamp> AssembleDocuments<'s, T> for StreamVec<'s, T, (DocId, DocInfo)> {
    fn assemble_documents(
        self,
        assignments: StreamVec<'s, T, ((DocId, Assignment), T, isize)>,
        sources: Arc<[Arc<str>]>,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, DocumentRow> {
        let info_pact = Exchange::new(|(doc, _): &(DocId, DocInfo)| route_doc(*doc));
        let assign_pact =
            Exchange::new(|((doc, _), _, _): &((DocId, Assignment), T, isize)| route_doc(*doc));
        self.binary_frontier(
            assignments,
            info_pact,
            assign_pact,
            "AssembleDocuments",
            move |capability, _info| {
                let mut capability = Some(capability);
                let mut infos: Vec<(DocId, DocInfo)> = Vec::new();
                let mut updates: Vec<((DocId, Assignment), isize)> = Vec::new();
                move |(info_in, info_frontier), (assign_in, assign_frontier), output| {
                    info_in.for_each(|_cap, batch| infos.append(batch));
                    assign_in.for_each(|_cap, batch| {
                        updates.extend(batch.drain(..).map(|(d, _t, r)| (d, r)))
                    });
                    if !(info_frontier.is_empty() && assign_frontier.is_empty()) {
                        return;
                    }
                    let Some(cap) = capability.take() else { return };
                    let assigned = consolidate(std::mem::take(&mut updates));
                    infos.sort_unstable_by_key(|(doc, _)| *doc);
                    let mut stats = stats.borrow_mut();
                    let mut session = output.session(&cap);
                    let mut assigned = assigned.into_iter().peekable();
                    for (doc, info) in infos.drain(..) {
                        let assignment = assigned.next_if(|(d, _)| *d == doc).map(|(_, a)| a);
                        session.give(row(doc, info, assignment, &sources, &mut stats));
                    }
                    assert!(assigned.next().is_none(), "every assigned document has info");
                }
            },
        )
        .container::<Vec<_>>()
    }
}

/// Net assignments from differential updates, sorted by document; each document has at
/// most one once consolidated.
fn consolidate(mut updates: Vec<((DocId, Assignment), isize)>) -> Vec<(DocId, Assignment)> {
    updates.sort_unstable_by(|x, y| x.0.cmp(&y.0));
    let mut net: Vec<(DocId, Assignment)> = Vec::new();
    for group in updates.chunk_by(|x, y| x.0 == y.0) {
        let total: isize = group.iter().map(|(_, r)| r).sum();
        assert!((0..=1).contains(&total), "a cluster assignment has multiplicity {total}");
        if total == 1 {
            net.push(group[0].0.clone());
        }
    }
    assert!(net.windows(2).all(|w| w[0].0 != w[1].0), "a document has two cluster assignments");
    net
}

fn row(
    doc: DocId,
    mut info: DocInfo,
    assignment: Option<Assignment>,
    sources: &[Arc<str>],
    stats: &mut WorkerStats,
) -> DocumentRow {
    let unmatched = (!info.matched).then_some(Reason::TooFewFeatures);
    let mut row = DocumentRow {
        doc,
        id: Some(info.id.clone()),
        source: sources[doc.file_index() as usize].clone(),
        decision: Decision::Keep,
        cluster: Some(info.id.clone()),
        cluster_size: Some(1),
        duplicate_of: None,
        reason: unmatched,
        detail: None,
        verified_with_kept: None,
        features: Some(info.features),
        chars: Some(info.chars),
        web: info.web.take(),
    };
    if let Some(a) = assignment {
        row.cluster_size = Some(a.cluster_size);
        if a.kept == doc {
            stats.clusters += 1;
            stats.record_cluster(a.cluster_size, doc, &info.id);
        } else {
            row.decision = Decision::Remove;
            row.cluster = Some(a.kept_id.clone());
            row.duplicate_of = Some(a.kept_id);
            row.reason = Some(if info.content == a.kept_content {
                Reason::ExactDuplicate
            } else {
                Reason::NearDuplicate
            });
            row.verified_with_kept = Some(a.verified_with_kept);
            if !a.verified_with_kept {
                stats.removed_not_verified_with_kept += 1;
            }
        }
    }
    row
}

/// The `documents/` row of a rejected record.
pub fn reject_row(r: RejectedRecord, sources: &[Arc<str>]) -> DocumentRow {
    DocumentRow {
        doc: r.doc,
        id: r.id,
        source: sources[r.doc.file_index() as usize].clone(),
        decision: Decision::Reject,
        cluster: None,
        cluster_size: None,
        duplicate_of: None,
        reason: Some(r.reason),
        detail: Some(r.detail),
        verified_with_kept: None,
        features: None,
        chars: None,
        web: None,
    }
}

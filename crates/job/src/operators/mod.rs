//! The dataflow's operators, one per file, each an extension trait over a timely stream.
//!
//! Every grouping operator here holds its records until the input frontier passes their
//! time and then reduces them at once: the job feeds all input at one time, so a group
//! (an id, a content hash, a bucket) is complete exactly when the frontier passes.

mod assemble_documents;
mod assign_clusters;
mod dedup_ids;
mod exact_groups;
mod gather_reports;
mod index_signatures;
mod reduce_buckets;
mod sign_docs;
mod verify_candidates;
mod write_kept;
mod write_parts;

use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::ParallelizationContract;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::generic::Operator;
use timely::order::TotalOrder;
use timely::progress::Timestamp;

pub use assemble_documents::{AssembleDocuments, reject_row};
pub use assign_clusters::assign_clusters;
pub use dedup_ids::DedupIds;
pub use exact_groups::{ExactGroups, Grouped};
pub use gather_reports::GatherReports;
pub use index_signatures::{IndexSignatures, SignatureStore};
pub use reduce_buckets::ReduceBuckets;
pub use sign_docs::SignDocs;
pub use verify_candidates::VerifyCandidates;
pub use write_kept::WriteKept;
pub use write_parts::{PartSink, WriteDocuments, WritePairs};

/// Collects a stream's records per time and, once the input frontier has passed the time,
/// hands all of them to `finish` with a function that emits output records.
pub(crate) fn gather<'s, T, D, O, P, F>(
    stream: StreamVec<'s, T, D>,
    pact: P,
    name: &str,
    mut finish: F,
) -> StreamVec<'s, T, O>
where
    T: Timestamp + TotalOrder,
    D: 'static,
    O: 'static,
    P: ParallelizationContract<T, Vec<D>>,
    F: FnMut(Vec<D>, &mut dyn FnMut(O)) + 'static,
{
    stream
        .unary_frontier(pact, name, move |_capability, _info| {
            let mut pending: Vec<(Capability<T>, Vec<D>)> = Vec::new();
            move |(input, frontier), output| {
                input.for_each_stamp(|cap, batches| {
                    let Some(cap) = cap.retain_least(output.output_index()) else {
                        unreachable!("every message of this dataflow is sent at a time");
                    };
                    let slot = match pending.iter().position(|(c, _)| c.time() == cap.time()) {
                        Some(slot) => slot,
                        None => {
                            pending.push((cap, Vec::new()));
                            pending.len() - 1
                        }
                    };
                    for batch in batches {
                        pending[slot].1.append(batch);
                    }
                });
                pending.retain_mut(|(cap, data)| {
                    if frontier.less_equal(cap.time()) {
                        return true; // records for this time may still arrive
                    }
                    let mut session = output.session(cap);
                    finish(std::mem::take(data), &mut |o| session.give(o));
                    false
                });
            }
        })
        .container::<Vec<O>>()
}

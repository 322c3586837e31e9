//! Analyses and signs documents as they arrive.
//!
//! Partitioning: whatever the input has (the job spreads records over workers first).
//! Emits: at once, per record. Holds: nothing between records.

use std::cell::RefCell;
use std::rc::Rc;

use neardup_io::{Record, RejectedRecord};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::records::SignedDoc;
use crate::sign::{SignScratch, Signer};
use crate::stats::WorkerStats;

/// Signs documents; passes readers' rejects through.
pub trait SignDocs<'s, T: Timestamp> {
    /// Signs every document; returns signed documents and rejects (readers' rejects and
    /// documents with nothing left after normalisation).
    fn sign_docs(
        self,
        signer: Signer,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, Result<SignedDoc, RejectedRecord>>;
}

impl<'s, T: Timestamp> SignDocs<'s, T> for StreamVec<'s, T, Record> {
    fn sign_docs(
        self,
        signer: Signer,
        stats: Rc<RefCell<WorkerStats>>,
    ) -> StreamVec<'s, T, Result<SignedDoc, RejectedRecord>> {
        self.unary(Pipeline, "SignDocs", move |_cap, _info| {
            let mut scratch = SignScratch::default();
            move |input, output| {
                input.for_each_stamp(|cap, batches| {
                    let mut session = output.session(&cap);
                    let mut signed = 0u64;
                    for batch in batches {
                        for record in batch.drain(..) {
                            match record {
                                Record::Doc(doc) => {
                                    signed += 1;
                                    session.give(signer.sign(doc, &mut scratch));
                                }
                                Record::Reject(reject) => session.give(Err(reject)),
                            }
                        }
                    }
                    let mut stats = stats.borrow_mut();
                    stats.documents_signed += signed;
                    stats.boilerplate.merge(&scratch.take_boilerplate());
                });
            }
        })
        .container::<Vec<_>>()
    }
}

//! Analyses and signs documents as they arrive.
//!
//! Partitioning: whatever the input has (the job spreads records over workers first).
//! Emits: at once, per record. Holds: nothing between records.

use neardup_io::{Record, RejectedRecord};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::input::sign::{SignScratch, Signer};
use crate::operators::env::OperatorEnv;
use crate::storage::records::SignedDoc;

/// Signs documents; passes readers' rejects through.
pub trait SignDocs<'s, T: Timestamp> {
    /// Signs every document; returns signed documents and rejects (readers' rejects and
    /// documents with nothing left after normalisation).
    fn sign_docs(
        self,
        signer: Signer,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Result<SignedDoc, RejectedRecord>>;
}

impl<'s, T: Timestamp> SignDocs<'s, T> for StreamVec<'s, T, Record> {
    fn sign_docs(
        self,
        signer: Signer,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Result<SignedDoc, RejectedRecord>> {
        let stats = env.stats.clone();
        self.unary(Pipeline, "SignDocs", move |_cap, _info| {
            let mut scratch = SignScratch::default();
            move |input, output| {
                input.for_each_stamp(|cap, batches| {
                    let mut session = output.session(&cap);
                    let mut signed = 0u64;
                    for batch in batches {
                        for record in batch.drain(..) {
                            signed += u64::from(matches!(record, Record::Doc(_)));
                            session.give(signer.sign_record(record, &mut scratch));
                        }
                    }
                    let mut stats = stats.borrow_mut();
                    stats.matching.documents_signed += signed;
                });
            }
        })
        .container::<Vec<_>>()
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::DocId;
    use neardup_io::{InputDoc, Reason};

    use super::*;
    use crate::operators::testing::{self, run_operator};
    use crate::settings::spec::JobSpec;

    fn doc(record: u64, text: &str) -> Record {
        let id = format!("d{record}");
        Record::Doc(InputDoc { doc: DocId::new(0, record), id, text: text.into(), meta: None })
    }

    #[test]
    fn documents_are_signed_and_rejects_pass_through() {
        let dir = tempfile::tempdir().unwrap();
        let job = testing::job(dir.path(), JobSpec::default());
        let env = testing::env(dir.path(), 0);
        let stats = env.stats.clone();
        let reject = RejectedRecord {
            doc: DocId::new(0, 2),
            id: None,
            reason: Reason::MissingId,
            detail: "no id".into(),
        };
        let signer = Signer::new(&job, None, None);
        let out = run_operator(
            vec![
                doc(1, "a document long enough to have a signature of its own"),
                Record::Reject(reject),
                doc(3, "<p> </p>"),
            ],
            move |records| records.sign_docs(signer, &env),
        );
        assert_eq!(out.len(), 3);
        assert!(matches!(&out[0], Ok(d) if d.id == "d1" && d.signature.is_some()));
        assert!(matches!(&out[1], Err(r) if r.reason == Reason::MissingId));
        assert!(matches!(&out[2], Err(r) if r.reason == Reason::EmptyText));
        assert_eq!(stats.borrow().matching.documents_signed, 2);
    }
}

//! Finds repeated ids: the first record of an id (smallest `DocId`) owns it, even when that
//! record is itself rejected; later documents with that id are duplicates.
//!
//! Partitioning: claims arrive already exchanged on the id's hash ([`route_id`]), so the
//! job can watch that exchange to pace its source. Emits: once the input is complete, in order,
//! a batch per activation. Holds: at most its spill limit of claims (about 100 bytes each).

use neardup_core::DocId;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::storage::records::{ContentKey, IdClaim};
#[cfg(doc)]
use crate::storage::routing::route_id;
use crate::storage::spill::SpillError;

/// What a claim turns out to be.
#[derive(Clone, Debug)]
pub enum IdOutcome {
    /// The first accepted document of its id, on to grouping by text.
    Accepted(ContentKey),
    /// A later document with an id an earlier record owns.
    Duplicate {
        /// The document.
        doc: DocId,
        /// The record that owns the id.
        first: DocId,
    },
}

/// Finds repeated ids.
pub trait DedupIds<'s, T: Timestamp> {
    /// Resolves every claim; the input must be exchanged by [`route_id`] of its hash.
    fn dedup_ids(self, env: &OperatorEnv) -> StreamVec<'s, T, IdOutcome>;
}

type Claim = Keyed<(u128, DocId), Option<ContentKey>>;

struct FirstOfId {
    current: Option<(u128, DocId)>,
}

impl Drain<Claim, IdOutcome> for FirstOfId {
    fn item(&mut self, claim: Claim, emit: &mut dyn FnMut(IdOutcome)) -> Result<(), SpillError> {
        let (hash, doc) = claim.key;
        match self.current {
            Some((owner, first)) if owner == hash => {
                if claim.value.is_some() {
                    emit(IdOutcome::Duplicate { doc, first });
                }
            }
            _ => {
                self.current = Some((hash, doc));
                if let Some(key) = claim.value {
                    emit(IdOutcome::Accepted(key));
                }
            }
        }
        Ok(())
    }
}

impl<'s, T: Timestamp> DedupIds<'s, T> for StreamVec<'s, T, IdClaim> {
    fn dedup_ids(self, env: &OperatorEnv) -> StreamVec<'s, T, IdOutcome> {
        let spill = env.spill.clone();
        let claims = self.map(|c| Keyed { key: (c.id_hash, c.doc), value: c.accepted });
        collect_sorted(claims, Pipeline, "DedupIds", spill, || Ok(FirstOfId { current: None }))
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::ContentHash;

    use super::*;
    use crate::operators::testing::{drain, node};

    fn claim(id: &str, record: u64, accepted: bool) -> Claim {
        let hash = ContentHash::of_text(id, 0).get();
        let doc = DocId::new(0, record);
        let value = accepted.then(|| ContentKey { node: node(record, "text"), matched: true });
        Keyed { key: (hash, doc), value }
    }

    fn outcomes(claims: Vec<Claim>) -> Vec<String> {
        drain(&mut FirstOfId { current: None }, claims)
            .into_iter()
            .map(|o| match o {
                IdOutcome::Accepted(k) => format!("accepted {}", k.node.doc.record()),
                IdOutcome::Duplicate { doc, first } => {
                    format!("{} duplicates {}", doc.record(), first.record())
                }
            })
            .collect()
    }

    #[test]
    fn the_first_record_of_an_id_owns_it_and_later_documents_are_duplicates() {
        let mut out = outcomes(vec![
            claim("a", 5, true),
            claim("a", 2, true),
            claim("b", 3, true),
            claim("a", 9, true),
        ]);
        out.sort();
        assert_eq!(out, ["5 duplicates 2", "9 duplicates 2", "accepted 2", "accepted 3"]);
    }

    #[test]
    fn a_rejected_first_record_still_owns_its_id_and_later_rejects_say_nothing() {
        let out = outcomes(vec![claim("a", 1, false), claim("a", 2, true), claim("a", 3, false)]);
        assert_eq!(out, ["2 duplicates 1"]);
    }
}

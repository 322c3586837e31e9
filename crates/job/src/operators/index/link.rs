//! Tying matches to the new clusters ([`LinkClusters`]).

use neardup_core::DocId;
use neardup_io::index::IndexRef;
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::core::Concat;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::storage::records::Membership;
use crate::storage::routing::route_doc;
use crate::storage::spill::{MemSize, SpillError};

use super::records::{IndexMatch, OldLink};

/// A membership or a match of one new document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum LinkIn {
    /// The document's cluster (sorted before its matches).
    Member(DocId),
    /// A match of the document.
    Match(IndexMatch),
}

impl MemSize for LinkIn {
    fn mem_size(&self) -> usize {
        match self {
            LinkIn::Member(_) => std::mem::size_of::<Self>(),
            LinkIn::Match(m) => m.mem_size(),
        }
    }
}

struct LinkDrain {
    /// The document at hand and its cluster's kept document.
    cluster: Option<(DocId, DocId)>,
}

impl Drain<Keyed<(DocId, u8, IndexRef), LinkIn>, Keyed<DocId, OldLink>> for LinkDrain {
    fn item(
        &mut self,
        item: Keyed<(DocId, u8, IndexRef), LinkIn>,
        emit: &mut dyn FnMut(Keyed<DocId, OldLink>),
    ) -> Result<(), SpillError> {
        let doc = item.key.0;
        match item.value {
            LinkIn::Member(kept) => self.cluster = Some((doc, kept)),
            LinkIn::Match(m) => {
                let kept = match self.cluster {
                    Some((d, kept)) if d == doc => kept,
                    _ => doc, // in no pair of this run: alone
                };
                emit(Keyed {
                    key: kept,
                    value: OldLink {
                        kept: m.kept,
                        kept_id: m.kept_id,
                        kept_content: m.kept_content,
                        direct: (m.old == m.kept).then_some(doc),
                    },
                });
            }
        }
        Ok(())
    }
}

/// Ties matches against the index to the clusters of this run.
pub trait LinkClusters<'s, T: Timestamp> {
    /// For every match, the earlier cluster it joins, keyed by the kept document of the
    /// new document's cluster (the document itself when it is in no pair).
    fn link_clusters(
        self,
        memberships: StreamVec<'s, T, (DocId, Membership)>,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Keyed<DocId, OldLink>>;
}

impl<'s, T: Timestamp> LinkClusters<'s, T> for StreamVec<'s, T, IndexMatch> {
    fn link_clusters(
        self,
        memberships: StreamVec<'s, T, (DocId, Membership)>,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Keyed<DocId, OldLink>> {
        let spill = env.spill.clone();
        let lowest = IndexRef { generation: 0, doc: 0 };
        let members = memberships
            .map(move |(doc, m)| Keyed { key: (doc, 0u8, lowest), value: LinkIn::Member(m.kept) });
        let matches = self.map(|m| Keyed { key: (m.new, 1u8, m.old), value: LinkIn::Match(m) });
        let by_doc = Exchange::new(|k: &Keyed<(DocId, u8, IndexRef), LinkIn>| route_doc(k.key.0));
        collect_sorted(members.concat(matches), by_doc, "LinkClusters", spill, || {
            Ok(LinkDrain { cluster: None })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::drain;

    fn doc(record: u64) -> DocId {
        DocId::new(0, record)
    }

    fn at(doc: u64) -> IndexRef {
        IndexRef { generation: 1, doc }
    }

    fn matched(new: u64, old: u64, kept: u64) -> Keyed<(DocId, u8, IndexRef), LinkIn> {
        let m = IndexMatch {
            new: doc(new),
            old: at(old),
            kept: at(kept),
            kept_id: format!("old{kept}"),
            kept_content: 0,
            similarity: 0.9,
        };
        Keyed { key: (doc(new), 1, at(old)), value: LinkIn::Match(m) }
    }

    fn member(record: u64, kept: u64) -> Keyed<(DocId, u8, IndexRef), LinkIn> {
        Keyed { key: (doc(record), 0, at(0)), value: LinkIn::Member(doc(kept)) }
    }

    #[test]
    fn matches_are_keyed_by_the_kept_document_of_their_cluster_or_their_own() {
        let out = drain(
            &mut LinkDrain { cluster: None },
            vec![
                matched(2, 30, 30), // document 2 is in document 1's cluster
                member(2, 1),
                member(3, 1),       // a member without matches says nothing
                matched(5, 41, 40), // document 5 is in no pair of this run
            ],
        );
        let got: Vec<(u64, u64, Option<u64>)> = out
            .iter()
            .map(|l| (l.key.record(), l.value.kept.doc, l.value.direct.map(DocId::record)))
            .collect();
        // A match with the earlier kept document itself is direct.
        assert_eq!(got, [(1, 30, Some(2)), (5, 40, None)]);
    }
}

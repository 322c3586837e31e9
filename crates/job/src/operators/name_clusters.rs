//! Attaches the kept document's id to every cluster membership, making the verdicts that
//! `documents/` rows need.
//!
//! Partitioning: memberships and the ids of clustered documents exchanged on the kept
//! document (a document's id is sent to its own worker, where it may be a kept document).
//! Emits: once the input is complete, in order, a batch per activation. Holds: at most its
//! spill limit of records and one id.

use neardup_core::DocId;
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::core::Concat;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, Spill, collect_sorted};
use crate::records::{Assignment, Membership, NodeInfo, Verdict};
use crate::routing::route_doc;
use crate::spill::{MemSize, SpillError};

/// An id, or a member of the cluster kept as the key's document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum NameIn {
    /// The id of the key's document (sorted before its members).
    Name(String),
    /// A member of the key's document's cluster.
    Member(Membership),
}

impl MemSize for NameIn {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<NameIn>()
            + match self {
                NameIn::Name(id) => id.capacity(),
                NameIn::Member(_) => 0,
            }
    }
}

type NameKey = Keyed<(DocId, u8, DocId), NameIn>;

/// Names clusters.
pub trait NameClusters<'s, T: Timestamp> {
    /// Joins each `(doc, membership)` with the id of its kept document, found among
    /// `names` (the clustered documents, possibly repeated).
    fn name_clusters(
        self,
        names: StreamVec<'s, T, NodeInfo>,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<DocId, Verdict>>;
}

struct Naming {
    /// The kept document whose id is at hand, and that id.
    current: Option<(DocId, String)>,
}

impl Drain<NameKey, Keyed<DocId, Verdict>> for Naming {
    fn item(
        &mut self,
        item: NameKey,
        emit: &mut dyn FnMut(Keyed<DocId, Verdict>),
    ) -> Result<(), SpillError> {
        let (kept, _, doc) = item.key;
        match item.value {
            NameIn::Name(id) => {
                if self.current.as_ref().is_none_or(|(d, _)| *d != kept) {
                    self.current = Some((kept, id));
                }
            }
            NameIn::Member(m) => {
                let Some((named, kept_id)) = &self.current else {
                    unreachable!("kept document {kept:?} has no id: it is in no pair")
                };
                assert_eq!(*named, kept, "kept document {kept:?} has no id: it is in no pair");
                let assignment = Assignment {
                    kept: m.kept,
                    kept_id: kept_id.clone(),
                    kept_content: m.kept_content,
                    cluster_size: m.cluster_size,
                    radius: m.radius,
                    verified_with_kept: m.verified_with_kept,
                };
                emit(Keyed { key: doc, value: Verdict::Assigned(assignment) });
            }
        }
        Ok(())
    }
}

impl<'s, T: Timestamp> NameClusters<'s, T> for StreamVec<'s, T, (DocId, Membership)> {
    fn name_clusters(
        self,
        names: StreamVec<'s, T, NodeInfo>,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<DocId, Verdict>> {
        let members =
            self.map(|(doc, m)| Keyed { key: (m.kept, 1, doc), value: NameIn::Member(m) });
        let names = names.map(|n| Keyed { key: (n.doc, 0, n.doc), value: NameIn::Name(n.id) });
        let by_kept = Exchange::new(|k: &NameKey| route_doc(k.key.0));
        collect_sorted(names.concat(members), by_kept, "NameClusters", spill, || {
            Ok(Naming { current: None })
        })
    }
}

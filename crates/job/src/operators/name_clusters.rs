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

use std::cell::RefCell;
use std::rc::Rc;

use crate::operators::collect::{Drain, Keyed, Spill, collect_sorted};
use crate::operators::index::OldLink;
use crate::records::{Assignment, IndexedKept, Membership, NodeInfo, Verdict};
use crate::routing::route_doc;
use crate::spill::{MemSize, SpillError};
use crate::stats::WorkerStats;

/// An id, or a member of the cluster kept as the key's document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum NameIn {
    /// The id of the key's document (sorted before its members).
    Name(String),
    /// An earlier cluster (of the index) that the key's document's cluster joins (sorted
    /// after the id, before the members).
    Old(OldLink),
    /// A member of the key's document's cluster.
    Member(Membership),
}

impl MemSize for NameIn {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<NameIn>()
            + match self {
                NameIn::Name(id) => id.capacity(),
                NameIn::Old(link) => link.mem_size(),
                NameIn::Member(_) => 0,
            }
    }
}

type NameKey = Keyed<(DocId, u8, DocId), NameIn>;

/// Names clusters.
pub trait NameClusters<'s, T: Timestamp> {
    /// Joins each `(doc, membership)` with the id of its kept document, found among
    /// `names` (the clustered documents, possibly repeated). With `links` (a run with an
    /// index), a cluster that joins earlier clusters keeps the earliest of their kept
    /// documents instead, for every member; a document in no pair of this run that
    /// matches an earlier one gets a verdict too.
    fn name_clusters(
        self,
        names: StreamVec<'s, T, NodeInfo>,
        links: Option<StreamVec<'s, T, Keyed<DocId, OldLink>>>,
        stats: Rc<RefCell<WorkerStats>>,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<DocId, Verdict>>;
}

/// The earlier clusters a new cluster joins.
struct Joined {
    /// The new cluster's kept document.
    cluster: DocId,
    /// The earliest earlier kept document, its id and content hash.
    kept: OldLink,
    /// The distinct earlier kept documents.
    distinct: Vec<neardup_io::index::IndexRef>,
    /// New documents that matched the earlier kept document itself.
    direct: Vec<DocId>,
    /// Whether a member of the new cluster was named.
    named_members: bool,
}

struct Naming {
    /// The kept document whose id is at hand, and that id.
    current: Option<(DocId, String)>,
    /// The earlier clusters joined by the cluster at hand.
    joined: Option<Joined>,
    stats: Rc<RefCell<WorkerStats>>,
}

impl Naming {
    /// Ends the cluster at hand: a document alone in this run but matching an earlier one
    /// gets its verdict here.
    fn finish_joined(&mut self, emit: &mut dyn FnMut(Keyed<DocId, Verdict>)) {
        let Some(j) = self.joined.take() else { return };
        if j.distinct.len() > 1 {
            self.stats.borrow_mut().index.bridged_clusters += 1;
        }
        if !j.named_members {
            let doc = j.cluster;
            let assignment = Assignment {
                kept: doc,
                kept_id: String::new(),
                kept_content: neardup_core::ContentHash::default(),
                cluster_size: 1,
                radius: 0,
                verified_with_kept: j.direct.contains(&doc),
                indexed: Some(indexed_kept(&j)),
            };
            emit(Keyed { key: doc, value: Verdict::Assigned(assignment) });
        }
    }
}

fn indexed_kept(j: &Joined) -> Box<IndexedKept> {
    Box::new(IndexedKept {
        kept: j.kept.kept,
        kept_id: j.kept.kept_id.clone(),
        kept_content: j.kept.kept_content,
    })
}

impl Drain<NameKey, Keyed<DocId, Verdict>> for Naming {
    fn item(
        &mut self,
        item: NameKey,
        emit: &mut dyn FnMut(Keyed<DocId, Verdict>),
    ) -> Result<(), SpillError> {
        let (kept, _, doc) = item.key;
        if self.joined.as_ref().is_some_and(|j| j.cluster != kept) {
            self.finish_joined(emit);
        }
        match item.value {
            NameIn::Name(id) => {
                if self.current.as_ref().is_none_or(|(d, _)| *d != kept) {
                    self.current = Some((kept, id));
                }
            }
            NameIn::Old(link) => {
                let j = self.joined.get_or_insert_with(|| Joined {
                    cluster: kept,
                    kept: link.clone(),
                    distinct: Vec::new(),
                    direct: Vec::new(),
                    named_members: false,
                });
                if link.kept < j.kept.kept {
                    j.kept = link.clone();
                }
                if !j.distinct.contains(&link.kept) {
                    j.distinct.push(link.kept);
                }
                j.direct.extend(link.direct);
            }
            NameIn::Member(m) => {
                let Some((named, kept_id)) = &self.current else {
                    unreachable!("kept document {kept:?} has no id: it is in no pair")
                };
                assert_eq!(*named, kept, "kept document {kept:?} has no id: it is in no pair");
                let (indexed, verified_with_kept) = match self.joined.as_mut() {
                    Some(j) => {
                        j.named_members = true;
                        // Verified with the earlier kept document only by a direct match.
                        (Some(indexed_kept(j)), j.direct.contains(&doc))
                    }
                    None => (None, m.verified_with_kept),
                };
                let assignment = Assignment {
                    kept: m.kept,
                    kept_id: kept_id.clone(),
                    kept_content: m.kept_content,
                    cluster_size: m.cluster_size,
                    radius: m.radius,
                    verified_with_kept,
                    indexed,
                };
                emit(Keyed { key: doc, value: Verdict::Assigned(assignment) });
            }
        }
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Keyed<DocId, Verdict>)) -> Result<(), SpillError> {
        self.finish_joined(emit);
        Ok(())
    }
}

impl<'s, T: Timestamp> NameClusters<'s, T> for StreamVec<'s, T, (DocId, Membership)> {
    fn name_clusters(
        self,
        names: StreamVec<'s, T, NodeInfo>,
        links: Option<StreamVec<'s, T, Keyed<DocId, OldLink>>>,
        stats: Rc<RefCell<WorkerStats>>,
        spill: Spill,
    ) -> StreamVec<'s, T, Keyed<DocId, Verdict>> {
        let members =
            self.map(|(doc, m)| Keyed { key: (m.kept, 2, doc), value: NameIn::Member(m) });
        let names = names.map(|n| Keyed { key: (n.doc, 0, n.doc), value: NameIn::Name(n.id) });
        let mut input = names.concat(members);
        if let Some(links) = links {
            // Equal keys (two links from one document) are merged whatever their order.
            let links = links.map(|l| {
                let from = l.value.direct.unwrap_or(l.key);
                Keyed { key: (l.key, 1, from), value: NameIn::Old(l.value) }
            });
            input = input.concat(links);
        }
        let by_kept = Exchange::new(|k: &NameKey| route_doc(k.key.0));
        collect_sorted(input, by_kept, "NameClusters", spill, move || {
            Ok(Naming { current: None, joined: None, stats: stats.clone() })
        })
    }
}

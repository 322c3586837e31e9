//! Attaches the kept document's id to every cluster membership, making the verdicts that
//! `documents/` rows need.
//!
//! Partitioning: memberships and the ids of clustered documents exchanged on the kept
//! document (a document's id is sent to its own worker, where it may be a kept document).
//! Emits: once the input is complete, in order, a batch per activation: verdicts, and
//! with an index, for a cluster that joins an earlier one, its members and their number
//! instead, for [`super::index::size::SizeJoined`] to give them the earlier cluster's size.
//! Holds: at most its spill limit of records and one id.

use neardup_core::DocId;
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::core::{Concat, OkErr};
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use std::cell::RefCell;
use std::rc::Rc;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::index::records::{JoinedIn, JoinedKey, OldLink};
use crate::reporting::stats::WorkerStats;
use crate::storage::records::{Assignment, IndexedKept, Membership, NodeInfo, Verdict};
use crate::storage::routing::route_doc;
use crate::storage::spill::{MemSize, SpillError};

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

/// What naming emits: a verdict, or a part of an earlier cluster that a cluster joins.
type Named = Result<Keyed<DocId, Verdict>, JoinedKey>;

/// Names clusters.
pub trait NameClusters<'s, T: Timestamp> {
    /// Joins each `(doc, membership)` with the id of its kept document, found among
    /// `names` (the clustered documents, possibly repeated). With `links` (a run with an
    /// index), a cluster that joins earlier clusters keeps the earliest of their kept
    /// documents instead, for every member; a document in no pair of this run that
    /// matches an earlier one is such a cluster too. Returns the verdicts, and the members
    /// of those clusters with their number, keyed by the earlier kept document (empty
    /// without `links`).
    fn name_clusters(
        self,
        names: StreamVec<'s, T, NodeInfo>,
        links: Option<StreamVec<'s, T, Keyed<DocId, OldLink>>>,
        env: &OperatorEnv,
    ) -> (StreamVec<'s, T, Keyed<DocId, Verdict>>, StreamVec<'s, T, JoinedKey>);
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
    /// Members of the new cluster named so far.
    members: u64,
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
    /// is its only member; the earlier cluster's worker learns how many members it has.
    fn finish_joined(&mut self, emit: &mut dyn FnMut(Named)) {
        let Some(mut j) = self.joined.take() else { return };
        if j.distinct.len() > 1 {
            self.stats.borrow_mut().index.bridged_clusters += 1;
        }
        if j.members == 0 {
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
            emit(joined_member(&mut j, doc, assignment));
        }
        let key = (j.kept.kept, 0, j.cluster);
        emit(Err(Keyed { key, value: JoinedIn::Count(j.members) }));
    }
}

/// A member of the cluster `j`, sent to the earlier cluster it joins, which gives it its
/// size.
fn joined_member(j: &mut Joined, doc: DocId, assignment: Assignment) -> Named {
    j.members += 1;
    Err(Keyed { key: (j.kept.kept, 1, doc), value: JoinedIn::Member(assignment) })
}

fn indexed_kept(j: &Joined) -> Box<IndexedKept> {
    Box::new(IndexedKept {
        kept: j.kept.kept,
        kept_id: j.kept.kept_id.clone(),
        kept_content: j.kept.kept_content,
    })
}

impl Drain<NameKey, Named> for Naming {
    fn item(&mut self, item: NameKey, emit: &mut dyn FnMut(Named)) -> Result<(), SpillError> {
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
                    members: 0,
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
                let mut assignment = Assignment {
                    kept: m.kept,
                    kept_id: kept_id.clone(),
                    kept_content: m.kept_content,
                    cluster_size: m.cluster_size,
                    radius: m.radius,
                    verified_with_kept: m.verified_with_kept,
                    indexed: None,
                };
                match self.joined.as_mut() {
                    Some(j) => {
                        assignment.indexed = Some(indexed_kept(j));
                        // Verified with the earlier kept document only by a direct match.
                        assignment.verified_with_kept = j.direct.contains(&doc);
                        emit(joined_member(j, doc, assignment));
                    }
                    None => emit(Ok(Keyed { key: doc, value: Verdict::Assigned(assignment) })),
                }
            }
        }
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Named)) -> Result<(), SpillError> {
        self.finish_joined(emit);
        Ok(())
    }
}

impl<'s, T: Timestamp> NameClusters<'s, T> for StreamVec<'s, T, (DocId, Membership)> {
    fn name_clusters(
        self,
        names: StreamVec<'s, T, NodeInfo>,
        links: Option<StreamVec<'s, T, Keyed<DocId, OldLink>>>,
        env: &OperatorEnv,
    ) -> (StreamVec<'s, T, Keyed<DocId, Verdict>>, StreamVec<'s, T, JoinedKey>) {
        let spill = env.spill.clone();
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
        let stats = spill.stats.clone();
        collect_sorted(input, by_kept, "NameClusters", spill, move || {
            Ok(Naming { current: None, joined: None, stats: stats.clone() })
        })
        .ok_err(|named| named)
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::ContentHash;
    use neardup_io::index::IndexRef;

    use super::*;
    use crate::operators::testing::drain;

    fn doc(record: u64) -> DocId {
        DocId::new(0, record)
    }

    fn name(record: u64) -> NameKey {
        Keyed { key: (doc(record), 0, doc(record)), value: NameIn::Name(format!("d{record}")) }
    }

    fn member(kept: u64, record: u64, verified: bool) -> NameKey {
        let m = Membership {
            kept: doc(kept),
            kept_content: ContentHash::of_text("kept", 0),
            cluster_size: 3,
            radius: 1,
            verified_with_kept: verified,
        };
        Keyed { key: (doc(kept), 2, doc(record)), value: NameIn::Member(m) }
    }

    fn old(cluster: u64, from: u64, earlier: u64, direct: bool) -> NameKey {
        let link = OldLink {
            kept: IndexRef { generation: 1, doc: earlier },
            kept_id: format!("old{earlier}"),
            kept_content: u128::from(earlier),
            direct: direct.then_some(doc(from)),
        };
        Keyed { key: (doc(cluster), 1, doc(from)), value: NameIn::Old(link) }
    }

    /// What naming `input` emits: the verdicts (document, assignment), and the parts of
    /// earlier clusters ((earlier kept document, tag, document), value).
    type Out = (Vec<(u64, Assignment)>, Vec<((u64, u8, u64), JoinedIn)>);

    fn named(stats: &Rc<RefCell<WorkerStats>>, input: Vec<NameKey>) -> Out {
        let mut naming = Naming { current: None, joined: None, stats: stats.clone() };
        let (mut verdicts, mut joined) = (Vec::new(), Vec::new());
        for out in drain(&mut naming, input) {
            match out {
                Ok(v) => match v.value {
                    Verdict::Assigned(a) => verdicts.push((v.key.record(), a)),
                    other => panic!("only assignments: {other:?}"),
                },
                Err(j) => {
                    let (earlier, tag, doc) = j.key;
                    joined.push(((earlier.doc, tag, doc.record()), j.value));
                }
            }
        }
        (verdicts, joined)
    }

    /// The members of earlier clusters in `joined`: (earlier kept document, document,
    /// assignment).
    fn joined_members(joined: &[((u64, u8, u64), JoinedIn)]) -> Vec<(u64, u64, &Assignment)> {
        joined
            .iter()
            .filter_map(|((earlier, _, doc), v)| match v {
                JoinedIn::Member(a) => Some((*earlier, *doc, a)),
                JoinedIn::Count(_) => None,
            })
            .collect()
    }

    /// The counts in `joined`: (earlier kept document, new cluster, members).
    fn joined_counts(joined: &[((u64, u8, u64), JoinedIn)]) -> Vec<(u64, u64, u64)> {
        joined
            .iter()
            .filter_map(|((earlier, _, cluster), v)| match v {
                JoinedIn::Count(n) => Some((*earlier, *cluster, *n)),
                JoinedIn::Member(_) => None,
            })
            .collect()
    }

    #[test]
    fn every_member_gets_its_kept_documents_id_whatever_the_repeats() {
        let stats = Rc::default();
        let (out, joined) = named(
            &stats,
            vec![
                member(1, 1, true),
                member(1, 2, true),
                member(1, 3, false),
                name(2),
                name(1),
                name(1), // ids may arrive more than once
                member(4, 4, true),
                member(4, 5, true),
                name(4),
            ],
        );
        let got: Vec<(u64, &str, bool)> =
            out.iter().map(|(d, a)| (*d, a.kept_id.as_str(), a.verified_with_kept)).collect();
        assert_eq!(
            got,
            [(1, "d1", true), (2, "d1", true), (3, "d1", false), (4, "d4", true), (5, "d4", true)]
        );
        assert!(out.iter().all(|(_, a)| a.indexed.is_none() && a.cluster_size == 3));
        assert!(joined.is_empty());
    }

    #[test]
    fn a_cluster_joining_earlier_ones_takes_the_earliest_kept_document() {
        let stats = Rc::default();
        let (out, joined) = named(
            &stats,
            vec![
                name(1),
                member(1, 1, true),
                member(1, 2, true),
                // Document 2 matched the earlier kept document 30 itself, document 1 a
                // member of the earlier cluster kept as 20.
                old(1, 2, 30, true),
                old(1, 1, 20, false),
            ],
        );
        // Its members go to the earlier cluster's worker, with their number.
        assert!(out.is_empty());
        let members = joined_members(&joined);
        assert_eq!(members.len(), 2);
        for (earlier, _, a) in &members {
            let indexed = a.indexed.as_ref().expect("joins the index's cluster");
            assert_eq!((*earlier, indexed.kept.doc, indexed.kept_id.as_str()), (20, 20, "old20"));
        }
        // Only a direct match counts as verified with the earlier kept document.
        let verified: Vec<(u64, bool)> =
            members.iter().map(|(_, d, a)| (*d, a.verified_with_kept)).collect();
        assert_eq!(verified, [(1, false), (2, true)]);
        assert_eq!(joined_counts(&joined), [(20, 1, 2)]);
        assert_eq!(stats.borrow().index.bridged_clusters, 1);
    }

    #[test]
    fn a_document_alone_in_this_run_that_matches_an_earlier_one_is_its_only_member() {
        let stats = Rc::default();
        let (out, joined) = named(&stats, vec![old(7, 7, 40, true), old(8, 8, 50, false)]);
        assert!(out.is_empty());
        let got: Vec<(u64, u64, u64, bool)> = joined_members(&joined)
            .into_iter()
            .map(|(earlier, d, a)| {
                (earlier, d, a.indexed.as_ref().unwrap().kept.doc, a.verified_with_kept)
            })
            .collect();
        assert_eq!(got, [(40, 7, 40, true), (50, 8, 50, false)]);
        assert_eq!(joined_counts(&joined), [(40, 7, 1), (50, 8, 1)]);
        assert_eq!(stats.borrow().index.bridged_clusters, 0);
    }
}

//! Gives every member of an earlier cluster that this run's clusters join one size
//! ([`SizeJoined`]).
//!
//! Several clusters of this run, on different workers, may join one earlier cluster, and
//! all their members name it. Partitioning: exchanged on the earlier kept document. Emits:
//! once the input is complete, in order, a batch per activation, each member's verdict with
//! the earlier cluster's size: the earlier kept document and this run's members of it.
//! Holds: at most its spill limit of records, and one cluster's count.

use std::cell::RefCell;
use std::rc::Rc;

use neardup_core::DocId;
use neardup_core::hash::{route, splitmix64};
use neardup_io::index::IndexRef;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::reporting::stats::{ClusterKept, WorkerStats};
use crate::storage::records::Verdict;
use crate::storage::spill::SpillError;

use super::records::{JoinedIn, JoinedKey};

/// Sizes the earlier clusters that this run's clusters join.
pub trait SizeJoined<'s, T: Timestamp> {
    /// Sums, for each earlier cluster, the members of this run's clusters that join it,
    /// and emits every member's verdict with that sum plus the earlier kept document as
    /// its cluster's size; counts each earlier cluster once in the statistics.
    fn size_joined(self, env: &OperatorEnv) -> StreamVec<'s, T, Keyed<DocId, Verdict>>;
}

/// The earlier cluster at hand.
struct Sizing {
    /// Its kept document, this run's members of it so far, and whether it was counted in
    /// the statistics.
    current: Option<(IndexRef, u64, bool)>,
    stats: Rc<RefCell<WorkerStats>>,
}

impl Drain<JoinedKey, Keyed<DocId, Verdict>> for Sizing {
    fn item(
        &mut self,
        item: JoinedKey,
        emit: &mut dyn FnMut(Keyed<DocId, Verdict>),
    ) -> Result<(), SpillError> {
        let (earlier, _, doc) = item.key;
        if self.current.is_none_or(|(at, _, _)| at != earlier) {
            self.current = Some((earlier, 0, false));
        }
        let (_, members, counted) = self.current.as_mut().expect("set above");
        match item.value {
            JoinedIn::Count(n) => {
                assert!(!*counted, "the counts of {earlier:?} come before its members");
                *members += n;
            }
            JoinedIn::Member(mut a) => {
                a.cluster_size = *members + 1;
                if !*counted {
                    *counted = true;
                    let kept_id = a.indexed.as_ref().map_or("", |ik| ik.kept_id.as_str());
                    let kept = ClusterKept::Earlier(earlier);
                    self.stats.borrow_mut().decisions.record_cluster(a.cluster_size, kept, kept_id);
                }
                emit(Keyed { key: doc, value: Verdict::Assigned(a) });
            }
        }
        Ok(())
    }
}

impl<'s, T: Timestamp> SizeJoined<'s, T> for StreamVec<'s, T, JoinedKey> {
    fn size_joined(self, env: &OperatorEnv) -> StreamVec<'s, T, Keyed<DocId, Verdict>> {
        let spill = env.spill.clone();
        let by_earlier = Exchange::new(|k: &JoinedKey| {
            let earlier = k.key.0;
            route(splitmix64(u64::from(earlier.generation)) ^ earlier.doc)
        });
        let stats = spill.stats.clone();
        collect_sorted(self, by_earlier, "SizeJoined", spill, move || {
            Ok(Sizing { current: None, stats: stats.clone() })
        })
    }
}

#[cfg(test)]
mod tests {
    use neardup_core::ContentHash;

    use super::*;
    use crate::operators::testing::drain;
    use crate::storage::records::{Assignment, IndexedKept};

    fn doc(record: u64) -> DocId {
        DocId::new(0, record)
    }

    fn earlier(doc: u64) -> IndexRef {
        IndexRef { generation: 1, doc }
    }

    fn count(at: u64, cluster: u64, n: u64) -> JoinedKey {
        Keyed { key: (earlier(at), 0, doc(cluster)), value: JoinedIn::Count(n) }
    }

    /// Document `record` of the cluster of this run kept as `kept`, of `size` documents,
    /// joining the earlier cluster kept as `at`.
    fn member(at: u64, kept: u64, size: u64, record: u64) -> JoinedKey {
        let a = Assignment {
            kept: doc(kept),
            kept_id: format!("d{kept}"),
            kept_content: ContentHash::of_text("new", 0),
            cluster_size: size,
            radius: 1,
            verified_with_kept: false,
            indexed: Some(Box::new(IndexedKept {
                kept: earlier(at),
                kept_id: format!("old{at}"),
                kept_content: 0,
            })),
        };
        Keyed { key: (earlier(at), 1, doc(record)), value: JoinedIn::Member(a) }
    }

    #[test]
    fn members_of_several_clusters_joining_one_earlier_cluster_get_one_size() {
        let stats = Rc::default();
        let mut sizing = Sizing { current: None, stats: Rc::clone(&stats) };
        let out = drain(
            &mut sizing,
            vec![
                // Clusters 1 (documents 1 and 4) and 2 (alone) join earlier cluster 30;
                // cluster 5 (documents 5, 6, 7) joins earlier cluster 20.
                member(30, 1, 2, 4),
                member(30, 2, 1, 2),
                member(20, 5, 3, 7),
                count(30, 2, 1),
                member(30, 1, 2, 1),
                count(20, 5, 3),
                member(20, 5, 3, 5),
                count(30, 1, 2),
                member(20, 5, 3, 6),
            ],
        );
        let got: Vec<(u64, u64, &str)> = out
            .iter()
            .map(|v| match &v.value {
                Verdict::Assigned(a) => {
                    (v.key.record(), a.cluster_size, a.indexed.as_ref().unwrap().kept_id.as_str())
                }
                other => panic!("only assignments: {other:?}"),
            })
            .collect();
        // The earlier kept document and this run's members of its cluster.
        assert_eq!(
            got,
            [
                (5, 4, "old20"),
                (6, 4, "old20"),
                (7, 4, "old20"),
                (1, 4, "old30"),
                (2, 4, "old30"),
                (4, 4, "old30")
            ]
        );
        let stats = stats.borrow();
        assert_eq!(
            (stats.decisions.clusters, stats.decisions.cluster_sizes.get(&4)),
            (2, Some(&2))
        );
        let largest = stats.decisions.largest_cluster().unwrap();
        assert_eq!(
            (largest.size, largest.kept, largest.kept_id.as_str()),
            (4, ClusterKept::Earlier(earlier(20)), "old20")
        );
    }
}

//! Clusters from verified and exact pairs: connected components, the kept document of each,
//! its distance in pair hops from every member, and whether each member was compared with
//! it directly.
//!
//! Stages, each spilling past its limit like every grouping stage:
//! 1. `Components` ([`propagate`]): collects both directions of every pair as links (by
//!    source) and labels every document of a pair with the least `DocId` of its component,
//!    carrying its length, content hash and representative. It shares its links with
//!    the stages below on the same worker.
//! 2. `KeepDocuments` (by component): the kept document and the size of each cluster.
//! 3. `Hops` ([`propagate`] over the shared links, from each kept document): pair hops to
//!    every member.
//! 4. `ClusterMembers` (by component): the cluster, then its members' hops, then its
//!    members, so the radius is known before the first member's membership is made.
//! 5. `VerifiedWithKept` (by the member's representative): a member whose text differs
//!    from the kept document's is verified with it when their representatives are linked,
//!    merged against the shared links.
//!
//! Holds: in each stage at most its spill limit of fixed-size records (`DocId`s, lengths,
//! content hashes; no strings), so memory stays within the budget whatever share of the
//! documents is in some pair; while pairs still arrive only `Components` collects, within
//! one limit. Documents in no pair never enter these stages; ids are attached afterwards
//! by a spilling stage ([`super::name_clusters`]).

use neardup_core::{ContentHash, DocId};
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::core::{Concat, OkErr};
use timely::dataflow::operators::vec::Map;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::propagate::{Link, Links, Node, SharedLinks, propagate};
use crate::settings::spec::KeepRule;
use crate::storage::records::{Edge, Membership, NodeInfo};
use crate::storage::routing::route_doc;
use crate::storage::spill::{MemSize, SortedIter, SpillError};

/// What clustering keeps of a document in some pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Facts {
    /// Characters after normalisation (for the `longest` rule).
    chars: u64,
    content: ContentHash,
    /// The representative of its text: itself, or the earliest document with that text.
    rep: DocId,
}

impl Default for Facts {
    fn default() -> Self {
        Facts { chars: 0, content: ContentHash::default(), rep: DocId::from_raw(0) }
    }
}

impl MemSize for Facts {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// A cluster, labelled by its least `DocId`, and its kept document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Cluster {
    label: DocId,
    kept: DocId,
    kept_chars: u64,
    kept_content: ContentHash,
    kept_rep: DocId,
    size: u64,
}

/// What `KeepDocuments` emits.
#[derive(Clone, Debug)]
enum Kept {
    Cluster(Cluster),
    Member { label: DocId, node: DocId, rep: DocId },
}

/// What `ClusterMembers` gathers per cluster, in this order.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum MemberIn {
    Cluster(Cluster),
    Hops(u32),
    /// A member and its representative.
    Member(DocId),
}

impl MemSize for MemberIn {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

type MemberKey = Keyed<(DocId, u8, DocId), MemberIn>;
/// A member whose representative is not the kept document's, keyed by the two
/// representatives (its own first) and the member.
type PairKey = Keyed<((DocId, DocId), DocId), Membership>;

/// The cluster of every document in some pair. `exact` holds exact pairs
/// `(representative, copy)`, `near` verified pairs `(a, b)` with `a < b` (between
/// representatives), each pair once.
///
/// A component is labelled by its smallest `DocId`. The kept document follows `keep`, ties
/// going to the smaller `DocId`. The radius is the most pair hops from the kept document to
/// a member. A member counts as verified with the kept document when their texts are
/// identical or the representatives of their texts form a verified pair. Emits one
/// membership per clustered document, at the first time.
pub fn assign_clusters<'s>(
    exact: StreamVec<'s, u64, Edge>,
    near: StreamVec<'s, u64, Edge>,
    keep: KeepRule,
    env: &OperatorEnv,
) -> StreamVec<'s, u64, (DocId, Membership)> {
    let spill = env.spill.clone();
    let seed = |n: &NodeInfo, rep: DocId| Node {
        node: n.doc,
        value: n.doc,
        payload: Facts { chars: n.chars, content: n.content, rep },
    };
    // Each pair once as two fixed-size seeds (the ids stay behind); a document repeats
    // once per pair, and `propagate` keeps one seed of each.
    let pairs = exact
        .map(move |e: Edge| [seed(&e.a, e.a.doc), seed(&e.b, e.a.doc)])
        .concat(near.map(move |e: Edge| [seed(&e.a, e.a.doc), seed(&e.b, e.b.doc)]));
    let seeds = pairs.clone().flat_map(|pair| pair);
    let links = pairs
        .flat_map(|[a, b]| [Link { src: a.node, dst: b.node }, Link { src: b.node, dst: a.node }]);
    let shared = SharedLinks::default();
    // A label is offered only to documents above it, whose own label could be larger.
    let labelled = propagate(
        Links::Collect(links, shared.clone()),
        seeds,
        |dst, label: &DocId| (*label < dst).then_some(*label),
        "Components",
        spill.clone(),
    );

    let by_label = Exchange::new(|k: &Keyed<(DocId, DocId), Facts>| route_doc(k.key.0));
    let (clusters, members): (StreamVec<_, _>, StreamVec<_, _>) = collect_sorted(
        labelled.map(|n| Keyed { key: (n.value, n.node), value: n.payload }),
        by_label,
        "KeepDocuments",
        spill.clone(),
        move || Ok(Keeping { keep, cluster: None }),
    )
    .ok_err(|k| match k {
        Kept::Cluster(c) => Ok(c),
        Kept::Member { label, node, rep } => {
            Err(Keyed { key: (label, 2, node), value: MemberIn::Member(rep) })
        }
    });

    let hops = propagate(
        Links::Shared(shared.clone()),
        clusters.clone().map(|c: Cluster| Node {
            node: c.kept,
            value: (0u32, c.label),
            payload: (),
        }),
        |_, (hops, label): &(u32, DocId)| Some((hops + 1, *label)),
        "Hops",
        spill.clone(),
    );
    let gathered = clusters
        .map(|c| Keyed { key: (c.label, 0, c.label), value: MemberIn::Cluster(c) })
        .concat(
            hops.map(|n| Keyed { key: (n.value.1, 1, n.node), value: MemberIn::Hops(n.value.0) }),
        )
        .concat(members);
    let by_cluster = Exchange::new(|k: &MemberKey| route_doc(k.key.0));
    let (settled, unsettled): (StreamVec<_, _>, StreamVec<_, _>) =
        collect_sorted(gathered, by_cluster, "ClusterMembers", spill.clone(), || {
            Ok(Members { cluster: None, radius: 0 })
        })
        .ok_err(|m| m);

    // Two representatives form a verified pair when one links to the other (exact pairs
    // link a representative to its copies only): looked up in the shared links, with the
    // member's representative as the source.
    let by_source = Exchange::new(|k: &PairKey| route_doc(k.key.0.0));
    let checked = collect_sorted(unsettled, by_source, "VerifiedWithKept", spill, move || {
        let links = shared.borrow_mut().take();
        let links = match links {
            Some(links) => links.iter()?,
            None => Box::new(std::iter::empty()),
        };
        Ok(Checking { links, current: None })
    });
    settled.concat(checked)
}

/// Finds each cluster's kept document and size, and passes its members on.
struct Keeping {
    keep: KeepRule,
    cluster: Option<Cluster>,
}

impl Drain<Keyed<(DocId, DocId), Facts>, Kept> for Keeping {
    fn item(
        &mut self,
        item: Keyed<(DocId, DocId), Facts>,
        emit: &mut dyn FnMut(Kept),
    ) -> Result<(), SpillError> {
        let ((label, node), facts) = (item.key, item.value);
        match &mut self.cluster {
            Some(c) if c.label == label => {
                c.size += 1;
                // Members come in `DocId` order, so a tie keeps the earlier one.
                if self.keep == KeepRule::Longest && facts.chars > c.kept_chars {
                    (c.kept, c.kept_chars, c.kept_content, c.kept_rep) =
                        (node, facts.chars, facts.content, facts.rep);
                }
            }
            _ => {
                self.end(emit)?;
                // The label is the least member, so the first.
                debug_assert_eq!(label, node, "a component is labelled by its least member");
                self.cluster = Some(Cluster {
                    label,
                    kept: node,
                    kept_chars: facts.chars,
                    kept_content: facts.content,
                    kept_rep: facts.rep,
                    size: 1,
                });
            }
        }
        emit(Kept::Member { label, node, rep: facts.rep });
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Kept)) -> Result<(), SpillError> {
        if let Some(c) = self.cluster.take() {
            emit(Kept::Cluster(c));
        }
        Ok(())
    }
}

/// Makes each member's membership: settled when its text is the kept document's, else
/// sent on to learn whether their representatives form a verified pair.
struct Members {
    cluster: Option<Cluster>,
    radius: u32,
}

impl Drain<MemberKey, Result<(DocId, Membership), PairKey>> for Members {
    fn item(
        &mut self,
        item: MemberKey,
        emit: &mut dyn FnMut(Result<(DocId, Membership), PairKey>),
    ) -> Result<(), SpillError> {
        let (_, _, node) = item.key;
        match item.value {
            MemberIn::Cluster(c) => (self.cluster, self.radius) = (Some(c), 0),
            MemberIn::Hops(hops) => self.radius = self.radius.max(hops),
            MemberIn::Member(rep) => {
                let c = self.cluster.as_ref().expect("a cluster comes before its members");
                let membership = Membership {
                    kept: c.kept,
                    kept_content: c.kept_content,
                    cluster_size: c.size,
                    radius: self.radius,
                    verified_with_kept: rep == c.kept_rep,
                };
                emit(if membership.verified_with_kept {
                    Ok((node, membership))
                } else {
                    Err(Keyed { key: ((rep, c.kept_rep), node), value: membership })
                });
            }
        }
        Ok(())
    }
}

/// Marks members whose representatives form a verified pair with the kept document's.
struct Checking {
    /// This worker's links, from `current` on.
    links: SortedIter<Link>,
    current: Option<Link>,
}

impl Drain<PairKey, (DocId, Membership)> for Checking {
    fn item(
        &mut self,
        item: PairKey,
        emit: &mut dyn FnMut((DocId, Membership)),
    ) -> Result<(), SpillError> {
        let ((rep, kept_rep), node) = item.key;
        let wanted = Link { src: rep, dst: kept_rep };
        while self.current.is_none_or(|link| link < wanted) {
            match self.links.next() {
                Some(link) => self.current = Some(link?),
                None => break,
            }
        }
        let mut membership = item.value;
        membership.verified_with_kept = self.current == Some(wanted);
        emit((node, membership));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::sync::{Arc, Mutex};

    use differential_dataflow::AsCollection;
    use proptest::prelude::*;
    use timely::dataflow::operators::Inspect;
    use timely::dataflow::operators::vec::ToStream;

    use super::*;
    use crate::operators::cluster_reference;
    use crate::operators::testing::{self, one_worker};

    /// A document: its record number, length and text (copies share their text).
    type Doc = (u64, u64, u64);

    fn info(d: Doc) -> NodeInfo {
        NodeInfo {
            doc: DocId::new(0, d.0),
            id: format!("d{}", d.0),
            chars: d.1,
            content: ContentHash::of_text(&d.2.to_string(), 0),
        }
    }

    fn edges(pairs: &[(Doc, Doc)]) -> Vec<Edge> {
        pairs.iter().map(|&(a, b)| Edge { a: info(a), b: info(b) }).collect()
    }

    /// (doc, kept, size, radius, verified with kept), by doc.
    type Row = (u64, u64, u64, u32, bool);

    fn row(doc: DocId, m: &Membership) -> Row {
        (doc.record(), m.kept.record(), m.cluster_size, m.radius, m.verified_with_kept)
    }

    /// Clusters on `workers` workers (each sends every `workers`th edge) with a spill limit
    /// of `limit` bytes.
    fn clusters(
        exact: &[Edge],
        near: &[Edge],
        keep: KeepRule,
        workers: usize,
        limit: usize,
    ) -> Vec<Row> {
        spilled_clusters(exact, near, keep, workers, limit).0
    }

    /// The same, and the bytes spilled.
    fn spilled_clusters(
        exact: &[Edge],
        near: &[Edge],
        keep: KeepRule,
        workers: usize,
        limit: usize,
    ) -> (Vec<Row>, u64) {
        let (exact, near) = (exact.to_vec(), near.to_vec());
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = out.clone();
        let spilled = Arc::new(Mutex::new(0));
        let spilled_sink = spilled.clone();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        timely::execute(timely::Config::process(workers), move |worker| {
            let (index, peers) = (worker.index(), worker.peers());
            let mine = |edges: &[Edge]| {
                edges.iter().skip(index).step_by(peers).cloned().collect::<Vec<_>>()
            };
            let (exact, near) = (mine(&exact), mine(&near));
            let env = testing::env(&root.join(index.to_string()), limit);
            let stats = env.stats.clone();
            let sink = sink.clone();
            worker.dataflow::<u64, _, _>(move |scope| {
                assign_clusters(exact.to_stream(scope), near.to_stream(scope), keep, &env)
                    .inspect(move |(d, m)| sink.lock().unwrap().push(row(*d, m)));
            });
            while worker.has_dataflows() {
                worker.step_or_park(None);
            }
            *spilled_sink.lock().unwrap() += stats.borrow().resources.spilled_bytes;
        })
        .unwrap();
        let mut out = std::mem::take(&mut *out.lock().unwrap());
        out.sort_unstable();
        let spilled = *spilled.lock().unwrap();
        (out, spilled)
    }

    /// The same with the differential-dataflow clustering this stage replaced.
    fn reference(exact: &[Edge], near: &[Edge], keep: KeepRule) -> Vec<Row> {
        let (exact, near) = (exact.to_vec(), near.to_vec());
        let out = Rc::new(RefCell::new(Vec::new()));
        let sink = out.clone();
        one_worker(move |worker| {
            worker.dataflow::<u64, _, _>(move |scope| {
                let pairs = |edges: &[Edge]| {
                    edges
                        .iter()
                        .map(|e| ((e.a.doc, e.b.doc), 0u64, 1isize))
                        .collect::<Vec<_>>()
                        .to_stream(scope)
                        .as_collection()
                };
                let info = exact
                    .iter()
                    .chain(&near)
                    .flat_map(|e| [&e.a, &e.b])
                    .map(|n| ((n.doc, (n.chars, n.content)), 0u64, 1isize))
                    .collect::<Vec<_>>();
                cluster_reference::assign_clusters(
                    pairs(&exact),
                    pairs(&near),
                    info.to_stream(scope).as_collection(),
                    keep,
                )
                .consolidate()
                .inner
                .inspect(move |((d, m), _t, diff)| {
                    assert_eq!(*diff, 1);
                    sink.borrow_mut().push(row(*d, m));
                });
            });
        });
        let mut out = out.take();
        out.sort_unstable();
        out
    }

    /// Exact pair (1, 2), near pairs (1, 3), (3, 4) and (5, 6); documents 1 and 2 have one
    /// text, document 4 is the longest of its cluster and 6 of the other.
    fn example() -> (Vec<Edge>, Vec<Edge>) {
        let d = |n: u64, chars: u64| (n, chars, n);
        let one = |n: u64| (n, 10, 1);
        (
            edges(&[(one(1), one(2))]),
            edges(&[(one(1), d(3, 12)), (d(3, 12), d(4, 40)), (d(5, 5), d(6, 50))]),
        )
    }

    #[test]
    fn components_keep_their_first_document_and_know_who_was_compared_with_it() {
        let (exact, near) = example();
        let expected = [
            (1, 1, 4, 2, true),
            (2, 1, 4, 2, true),  // the same text
            (3, 1, 4, 2, true),  // a verified pair with it
            (4, 1, 4, 2, false), // two hops away
            (5, 5, 2, 1, true),
            (6, 5, 2, 1, true),
        ];
        assert_eq!(clusters(&exact, &near, KeepRule::First, 1, 0), expected);
        assert_eq!(reference(&exact, &near, KeepRule::First), expected);
    }

    #[test]
    fn the_longest_rule_keeps_the_longest_member() {
        let (exact, near) = example();
        let expected = [
            (1, 4, 4, 3, false),
            (2, 4, 4, 3, false),
            (3, 4, 4, 3, true),
            (4, 4, 4, 3, true),
            (5, 6, 2, 1, true),
            (6, 6, 2, 1, true),
        ];
        assert_eq!(clusters(&exact, &near, KeepRule::Longest, 2, 0), expected);
        assert_eq!(reference(&exact, &near, KeepRule::Longest), expected);
    }

    /// A random pair graph: documents `1..=n`, each a representative or a copy of an
    /// earlier representative (an exact pair), and verified pairs between representatives.
    fn graph(
        n: u64,
        copy_of: &[Option<u64>],
        chars: &[u64],
        near: &[(u64, u64)],
    ) -> (Vec<Edge>, Vec<Edge>) {
        let rep = |d: u64| copy_of[d as usize].filter(|r| *r < d).map_or(d, |r| rep_of(copy_of, r));
        fn rep_of(copy_of: &[Option<u64>], d: u64) -> u64 {
            copy_of[d as usize].filter(|r| *r < d).map_or(d, |r| rep_of(copy_of, r))
        }
        let doc = |d: u64| (d, chars[rep(d) as usize], rep(d));
        let exact: Vec<_> =
            (1..=n).filter(|&d| rep(d) != d).map(|d| (doc(rep(d)), doc(d))).collect();
        let mut pairs: Vec<_> = near
            .iter()
            .map(|&(a, b)| (rep(a.min(b)), rep(a.max(b))))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let near: Vec<_> = pairs.into_iter().map(|(a, b)| (doc(a), doc(b))).collect();
        (edges(&exact), edges(&near))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn clusters_match_the_differential_reference_on_any_workers(
            copy_of in proptest::collection::vec(proptest::option::weighted(0.3, 1u64..40), 41),
            chars in proptest::collection::vec(1u64..5, 41),
            near in proptest::collection::vec((1u64..=40, 1u64..=40), 0..60),
            workers in 1usize..4,
            longest in any::<bool>(),
        ) {
            let keep = if longest { KeepRule::Longest } else { KeepRule::First };
            let (exact, near) = graph(40, &copy_of, &chars, &near);
            prop_assert_eq!(clusters(&exact, &near, keep, workers, 0), reference(&exact, &near, keep));
        }
    }

    #[test]
    fn long_chains_and_spilled_rounds_give_the_reference() {
        // Chains of 300 documents (hops up to 299) and a star of 10,000: the stages hold
        // more than the 64 KiB floor, so they spill.
        let chars: Vec<u64> = (0..16_000).map(|d| 1 + (d * 7919) % 13).collect();
        let mut near: Vec<(u64, u64)> =
            (1..1_200).filter(|d| d % 300 != 0).map(|d| (d, d + 1)).collect();
        near.extend((3_001..13_000).map(|d| (3_000, d)));
        let copy_of: Vec<Option<u64>> =
            (0..16_000).map(|d| (d > 15_000 && d < 15_999).then(|| d - 14_000)).collect();
        let (exact, near) = graph(15_999, &copy_of, &chars, &near);
        for keep in [KeepRule::First, KeepRule::Longest] {
            let expected = reference(&exact, &near, keep);
            // The chains, the star, the copies and the copied documents outside the chains.
            assert_eq!(expected.len(), 1_200 + 10_000 + 998 + 798);
            let (rows, spilled) = spilled_clusters(&exact, &near, keep, 3, 0);
            assert_eq!(rows, expected);
            assert!(spilled > 0);
        }
    }
}

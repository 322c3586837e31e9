//! The tests' reference for clustering: the differential-dataflow computation that
//! `assign_clusters` replaced, kept to check it against (its expected tables are asserted
//! on both in `assign_clusters`'s tests). Clusters from verified and exact pairs: connected
//! components, the kept document of each, and whether each member was compared with it
//! directly.
//!
//! Built from differential-dataflow collections, which exchange by key themselves.
//! Holds: one arrangement of the edges (both directions), shared by the labelling and the
//! hops, one of the verified pairs, and, for every document in some pair (and only those),
//! fixed-size records (its label, length, content hash and membership, no strings): memory
//! grows with the duplicates found, not with the corpus, and is outside the memory budget.
//! `bench/cluster_memory.sh` measured, before it was replaced: about 215 bytes of peak memory per verified pair
//! (970 per paired document at 4.5 pairs each). Documents in no pair never enter this
//! stage; ids are attached afterwards by a spilling stage ([`super::name_clusters`]).

use differential_dataflow::VecCollection;
use differential_dataflow::algorithms::graphs::bfs::bfs_arranged;
use differential_dataflow::algorithms::graphs::propagate::propagate_core;
use neardup_core::DocId;

use crate::settings::spec::KeepRule;
use crate::storage::records::{ClusterInfo, Membership};

/// The cluster of every document that is in some pair. `exact` holds exact pairs
/// `(representative, copy)`, `near` verified pairs `(a, b)` with `a < b` (between
/// representatives), each pair once; `info` holds the normalised length and content hash
/// of every document in some pair (it may repeat; it is made distinct here).
///
/// Components come from label propagation that introduces small labels first
/// (`propagate_core`), so a component is labelled by its smallest `DocId`. The kept document
/// follows `keep`, ties going to the smaller `DocId`. A member counts as verified with the
/// kept document when their texts are identical or the representatives of their texts
/// form a verified pair.
pub fn assign_clusters<'s>(
    exact: VecCollection<'s, u64, (DocId, DocId)>,
    near: VecCollection<'s, u64, (DocId, DocId)>,
    info: VecCollection<'s, u64, (DocId, ClusterInfo)>,
    keep: KeepRule,
) -> VecCollection<'s, u64, (DocId, Membership)> {
    // Each pair arrives once: exact pairs are one per copy, and verification drops repeated
    // candidates (`verify_candidates`), so the pairs are not made distinct again here; the
    // antijoin below relies on it. Documents repeat in `info`, once per pair.
    let info = info.distinct();
    let edges = exact.clone().concat(near.clone());
    let symmetric = edges.clone().concat(edges.map(|(a, b)| (b, a)));
    let nodes = symmetric.clone().map(|(a, _)| a).distinct().map(|n| (n, n));
    // One arrangement of the edges, for the labels and for the hops from the kept document.
    let symmetric = symmetric.arrange_by_key();
    // The introduction order only speeds convergence; the record number spreads labels
    // over fewer rounds than the raw DocId, whose file bits are high.
    let labels = propagate_core(symmetric.clone(), nodes, |label: &DocId| label.record());

    let members =
        labels.clone().join_map(info.clone(), |doc, root, (chars, _)| (*root, (*doc, *chars)));
    let kept = match keep {
        KeepRule::First => members.clone().map(|(root, _)| (root, root)).distinct(),
        KeepRule::Longest => members.clone().reduce(|_root, input, output| {
            let longest = input
                .iter()
                .map(|(member, _)| **member)
                .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
                .expect("a component has members");
            output.push((longest.0, 1isize));
        }),
    };
    let sizes = members.map(|(root, _)| root).count();
    // The radius: the most pair hops from the kept document to a member (the diameter
    // of the cluster's pair graph is at most twice that).
    let hops = bfs_arranged(symmetric, kept.clone().map(|(_root, kept)| kept));
    let radius = labels.clone().join_map(hops, |_doc, root, hops| (*root, *hops)).reduce(
        |_root, input, output| {
            let most = input.iter().map(|(hops, _)| **hops).max().expect("a cluster has members");
            output.push((most, 1isize));
        },
    );
    let clusters = kept
        .map(|(root, kept)| (kept, root))
        .join_map(info.map(|(doc, (_, content))| (doc, content)), |kept, root, content| {
            (*root, (*kept, *content))
        })
        .join_map(sizes, |root, (kept, content), size| {
            (*root, (*kept, *content, u64::try_from(*size).expect("positive count")))
        })
        .join_map(radius, |root, (kept, content, size), radius| {
            (*root, (*kept, *content, *size, *radius))
        });
    let assigned = labels.map(|(doc, root)| (root, doc)).join_map(
        clusters,
        |_root, doc, (kept, kept_content, cluster_size, radius)| {
            let membership = Membership {
                kept: *kept,
                kept_content: *kept_content,
                cluster_size: *cluster_size,
                radius: *radius,
                verified_with_kept: false,
            };
            (*doc, membership)
        },
    );

    // The representative of each clustered document's text: copies map to theirs, every
    // other document to itself.
    let rep_of_copy = exact.map(|(rep, copy)| (copy, rep));
    let clustered = assigned.clone().map(|(doc, _)| (doc, ()));
    let node_rep = clustered
        .clone()
        .join_map(rep_of_copy.clone(), |doc, (), rep| (*doc, *rep))
        .concat(clustered.antijoin(rep_of_copy.map(|(copy, _)| copy)).map(|(doc, ())| (doc, doc)));
    let both_reps = assigned
        .join_map(node_rep.clone(), |doc, a, rep_doc| (a.kept, (*doc, *a, *rep_doc)))
        .join_map(node_rep, |_kept, (doc, a, rep_doc), rep_kept| (*doc, *a, *rep_doc, *rep_kept));
    let same_text = both_reps.clone().filter(|(_, _, rep_doc, rep_kept)| rep_doc == rep_kept);
    let by_rep_pair = both_reps
        .filter(|(_, _, rep_doc, rep_kept)| rep_doc != rep_kept)
        .map(|(doc, a, x, y)| ((x.min(y), x.max(y)), (doc, a)));
    // Members whose representatives form a verified pair, and the rest (an antijoin, over
    // the one arrangement of each side).
    let by_rep_pair = by_rep_pair.arrange_by_key();
    let near = near.arrange_by_self();
    let with_pair = by_rep_pair.clone().join_core(near, |_, doc_a, ()| Some(*doc_a));
    let without_pair =
        by_rep_pair.as_collection(|_, doc_a| *doc_a).concat(with_pair.clone().negate());
    let verified =
        same_text.map(|(doc, a, _, _)| (doc, a)).concat(with_pair).map(|(doc, mut a)| {
            a.verified_with_kept = true;
            (doc, a)
        });
    verified.concat(without_pair)
}

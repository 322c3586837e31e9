//! Clusters from verified and exact pairs: connected components, the kept document of each,
//! and whether each member was compared with it directly.
//!
//! Built from differential-dataflow collections, which exchange by key themselves.
//! Holds: arrangements of the edges, the labels of documents in some pair, and their info.

use differential_dataflow::VecCollection;
use differential_dataflow::algorithms::graphs::propagate::propagate_at;
use neardup_core::DocId;

use crate::config::KeepRule;
use crate::records::{Assignment, DocInfo};

/// The cluster of every document that is in some pair: `edges` are pairs `(a, b)` with
/// `a < b`; `info` describes every accepted document.
///
/// Components come from label propagation that introduces small labels first
/// (`propagate_at`), so a component is labelled by its smallest `DocId`. The kept document
/// follows `keep`, ties going to the smaller `DocId`.
pub fn assign_clusters<'s>(
    edges: VecCollection<'s, u64, (DocId, DocId)>,
    info: VecCollection<'s, u64, (DocId, DocInfo)>,
    keep: KeepRule,
) -> VecCollection<'s, u64, (DocId, Assignment)> {
    let edges = edges.distinct();
    let symmetric = edges.clone().concat(edges.clone().map(|(a, b)| (b, a)));
    let nodes = symmetric.clone().map(|(a, _)| a).distinct().map(|n| (n, n));
    // The introduction order only speeds convergence; the record number spreads labels
    // over fewer rounds than the raw DocId, whose file bits are high.
    let labels = propagate_at(symmetric, nodes, |label: &DocId| label.record());

    let members = labels
        .clone()
        .join_map(info.clone(), |doc, root, inf| (*root, (*doc, inf.chars)));
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
    let clusters = kept
        .map(|(root, kept)| (kept, root))
        .join_map(
            info.map(|(doc, inf)| (doc, (inf.id, inf.content))),
            |kept, root, (id, content)| (*root, (*kept, id.clone(), *content)),
        )
        .join_map(sizes, |root, (kept, id, content), size| {
            (
                *root,
                (
                    *kept,
                    id.clone(),
                    *content,
                    u64::try_from(*size).expect("positive count"),
                ),
            )
        });
    let assigned = labels.map(|(doc, root)| (root, doc)).join_map(
        clusters,
        |_root, doc, (kept, kept_id, kept_content, cluster_size)| {
            (
                *doc,
                Assignment {
                    kept: *kept,
                    kept_id: kept_id.clone(),
                    kept_content: *kept_content,
                    cluster_size: *cluster_size,
                    verified_with_kept: false,
                },
            )
        },
    );
    let direct = assigned
        .clone()
        .map(|(doc, a)| ((doc.min(a.kept), doc.max(a.kept)), doc))
        .semijoin(edges)
        .map(|(_, doc)| doc);
    let verified = assigned
        .clone()
        .semijoin(direct.clone())
        .map(|(doc, mut a)| {
            a.verified_with_kept = true;
            (doc, a)
        });
    verified.concat(assigned.antijoin(direct))
}

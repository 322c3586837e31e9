//! What a run decided about the two documents `explain` is given: their rows of
//! `documents/`, and whether `pairs/` or a cluster joins them.

use std::collections::HashMap;
use std::io::Write;

use neardup_io::{Decision, DocumentRow, PairRow};

/// Prints a `run:` line for each row of `documents/` with id `a` or `b` (the record that
/// owns the id, and any later record rejected for repeating it), then one saying whether
/// `pairs/` holds the two documents and, when it does not, whether a cluster joins them.
/// `owners` are the rows that own the ids ([`crate::eval::id_owners`]).
///
/// # Errors
/// When `out` fails.
pub(super) fn print(
    out: &mut dyn Write,
    docs: &[DocumentRow],
    owners: &HashMap<&str, &DocumentRow>,
    pairs: &[PairRow],
    (a, b): (&str, &str),
) -> std::io::Result<()> {
    for row in docs.iter().filter(|d| d.id.as_deref().is_some_and(|id| id == a || id == b)) {
        writeln!(out, "{}", row_line(row))?;
    }
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    let pair = pairs.iter().find(|p| p.id_a == x && p.id_b == y);
    let owner = |id: &str| owners.get(id).copied();
    writeln!(out, "{}\n", pair_line(pair, owner(a), owner(b)))
}

/// The `run:` line of a row: its decision, with the reason of a reject, the document it
/// duplicates and its cluster.
fn row_line(row: &DocumentRow) -> String {
    let id = row.id.as_deref().unwrap_or_default();
    let reason = match (row.decision, row.reason) {
        (Decision::Reject, Some(reason)) => format!(" ({})", reason.as_str()),
        _ => String::new(),
    };
    let duplicate_of =
        row.duplicate_of.as_ref().map(|d| format!(" as a duplicate of {d}")).unwrap_or_default();
    let cluster = row
        .cluster
        .as_ref()
        .map(|c| format!(", cluster {c} of {}", row.cluster_size.unwrap_or(1)))
        .unwrap_or_default();
    format!("run: {id}: {}{reason}{duplicate_of}{cluster}", row.decision.as_str())
}

/// The `run:` line about the pair: its row of `pairs/`, or else whether the owners' rows
/// `a` and `b` share a cluster, which then joins them through other documents (a cluster
/// is connected by pairs).
fn pair_line(pair: Option<&PairRow>, a: Option<&DocumentRow>, b: Option<&DocumentRow>) -> String {
    if let Some(p) = pair {
        return format!(
            "run: a {} pair, similarity {:.4}{}",
            p.kind.as_str(),
            p.similarity,
            p.hamming.map(|h| format!(", Hamming distance {h}")).unwrap_or_default()
        );
    }
    match (a.and_then(|r| r.cluster.as_deref()), b.and_then(|r| r.cluster.as_deref())) {
        (Some(x), Some(y)) if x == y => {
            format!("run: not a pair in pairs/; cluster {x} joins them through other documents")
        }
        _ => "run: not a pair in pairs/, and not in one cluster".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, doc: u64, decision: Decision, cluster: Option<&str>) -> DocumentRow {
        DocumentRow {
            doc: neardup_core::DocId::new(0, doc),
            id: Some(id.into()),
            source: "in.jsonl".into(),
            decision,
            cluster: cluster.map(Into::into),
            cluster_size: cluster.map(|_| 2),
            duplicate_of: None,
            duplicate_of_run: None,
            reason: (decision == Decision::Reject).then_some(neardup_io::Reason::DuplicateId),
            detail: None,
            verified_with_kept: None,
            features: None,
            chars: None,
            web: None,
            repeated: None,
        }
    }

    #[test]
    fn documents_apart_are_not_said_to_share_a_cluster() {
        let (a, b) =
            (row("a", 1, Decision::Keep, Some("a")), row("b", 2, Decision::Keep, Some("b")));
        let line = pair_line(None, Some(&a), Some(&b));
        assert_eq!(line, "run: not a pair in pairs/, and not in one cluster");
        let c = row("c", 3, Decision::Remove, Some("a"));
        let line = pair_line(None, Some(&a), Some(&c));
        assert_eq!(line, "run: not a pair in pairs/; cluster a joins them through other documents");
        let rejected = row("r", 4, Decision::Reject, None);
        let line = pair_line(None, Some(&a), Some(&rejected));
        assert_eq!(line, "run: not a pair in pairs/, and not in one cluster");
    }

    #[test]
    fn the_owners_rows_decide_whatever_the_order_of_the_rows() {
        // b repeats a's id: its reject row comes first here, as it may from another part.
        let docs = [
            row("a", 9, Decision::Reject, None),
            row("a", 1, Decision::Keep, Some("a")),
            row("c", 3, Decision::Remove, Some("a")),
        ];
        let owners = crate::eval::id_owners(&docs);
        let mut text = Vec::new();
        print(&mut text, &docs, &owners, &[], ("c", "a")).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "run: a: reject (duplicate_id)",
                "run: a: keep, cluster a of 2",
                "run: c: remove, cluster a of 2",
                "run: not a pair in pairs/; cluster a joins them through other documents",
                ""
            ]
        );
    }
}

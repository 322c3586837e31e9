//! Groups accepted documents by normalised text: the earliest of each group represents it
//! in LSH, the others become exact pairs with it.
//!
//! Partitioning: exchanged on the content hash. Emits: once the input is complete, in order,
//! a batch per activation. Holds: at most its spill limit of keys (about 100 bytes each).

use neardup_core::{ContentHash, DocId};
use neardup_io::{PairKind, PairRow};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::storage::records::{ContentKey, Edge, NodeInfo};
use crate::storage::spill::SpillError;

/// What grouping by text produces.
#[derive(Clone, Debug)]
pub enum Grouped {
    /// An exact pair (representative, copy) for `pairs/`.
    Pair(PairRow),
    /// The same pair, for clustering.
    Edge(Edge),
    /// The first document of a text with a signature (sent to its home worker), matched
    /// by LSH; with an index, also of a text without one, and every one is indexed.
    Representative(DocId),
    /// How many representatives with signatures this worker found, once at the end.
    RepresentativeCount(u64),
}

/// Finds exact duplicates.
pub trait ExactGroups<'s, T: Timestamp> {
    /// Groups documents by content hash.
    /// With `index`, texts too short to sign get a representative too.
    fn exact_groups(self, index: bool, env: &OperatorEnv) -> StreamVec<'s, T, Grouped>;
}

type Key = Keyed<(ContentHash, DocId), ContentKey>;

struct Groups {
    representative: Option<ContentKey>,
    count: u64,
    /// Whether the run has an index, which holds texts too short to sign as well.
    index: bool,
}

impl Drain<Key, Grouped> for Groups {
    fn item(&mut self, item: Key, emit: &mut dyn FnMut(Grouped)) -> Result<(), SpillError> {
        let key = item.value;
        match &self.representative {
            Some(rep) if rep.node.content == key.node.content => {
                emit(Grouped::Pair(exact_pair(&rep.node, &key.node)));
                emit(Grouped::Edge(Edge { a: rep.node.clone(), b: key.node }));
            }
            _ => {
                // A text's representative is signed and matched; with an index, a text
                // too short to sign has one too, indexed by its content. The count is of
                // those signed.
                if key.matched {
                    self.count += 1;
                }
                if key.matched || self.index {
                    emit(Grouped::Representative(key.node.doc));
                }
                self.representative = Some(key);
            }
        }
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Grouped)) -> Result<(), SpillError> {
        emit(Grouped::RepresentativeCount(self.count));
        Ok(())
    }
}

impl<'s, T: Timestamp> ExactGroups<'s, T> for StreamVec<'s, T, ContentKey> {
    fn exact_groups(self, index: bool, env: &OperatorEnv) -> StreamVec<'s, T, Grouped> {
        let spill = env.spill.clone();
        let by_content = Exchange::new(|k: &Key| k.key.0.route());
        let keys = self.map(|k| Keyed { key: (k.node.content, k.node.doc), value: k });
        collect_sorted(keys, by_content, "ExactGroups", spill, move || {
            Ok(Groups { representative: None, count: 0, index })
        })
    }
}

/// The exact pair of two documents, ordered by id as `pairs/` requires.
pub fn exact_pair(x: &NodeInfo, y: &NodeInfo) -> PairRow {
    let (a, b) = if x.id <= y.id { (x, y) } else { (y, x) };
    PairRow {
        id_a: a.id.clone(),
        id_b: b.id.clone(),
        doc_a: a.doc,
        doc_b: b.doc,
        similarity: 1.0,
        kind: PairKind::Exact,
        measure: None,
        containment: None,
        hamming: None,
        matching_bands: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{self, node};

    fn key(record: u64, text: &str, matched: bool) -> Key {
        let node = node(record, text);
        Keyed { key: (node.content, node.doc), value: ContentKey { node, matched } }
    }

    fn drain(index: bool, keys: Vec<Key>) -> Vec<Grouped> {
        testing::drain(&mut Groups { representative: None, count: 0, index }, keys)
    }

    #[test]
    fn the_earliest_of_equal_texts_represents_them_and_the_rest_are_exact_pairs() {
        let out =
            drain(false, vec![key(3, "same", true), key(1, "same", true), key(2, "other", true)]);
        let representatives: Vec<DocId> = out
            .iter()
            .filter_map(|g| match g {
                Grouped::Representative(d) => Some(*d),
                _ => None,
            })
            .collect();
        assert_eq!(representatives.len(), 2);
        assert!(
            representatives.contains(&DocId::new(0, 1))
                && representatives.contains(&DocId::new(0, 2))
        );
        let pairs: Vec<&PairRow> = out
            .iter()
            .filter_map(|g| match g {
                Grouped::Pair(p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(pairs.len(), 1);
        assert_eq!((pairs[0].id_a.as_str(), pairs[0].id_b.as_str()), ("d1", "d3"));
        assert_eq!(pairs[0].kind, PairKind::Exact);
        assert!(out.iter().any(|g| matches!(g, Grouped::Edge(e) if e.a.doc == DocId::new(0, 1) && e.b.doc == DocId::new(0, 3))));
        assert!(matches!(out.last(), Some(Grouped::RepresentativeCount(2))));
    }

    #[test]
    fn texts_too_short_to_sign_are_represented_only_with_an_index() {
        let without = drain(false, vec![key(1, "x", false)]);
        assert!(!without.iter().any(|g| matches!(g, Grouped::Representative(_))));
        let with = drain(true, vec![key(1, "x", false)]);
        assert!(
            with.iter().any(|g| matches!(g, Grouped::Representative(d) if *d == DocId::new(0, 1)))
        );
        // Only signed representatives are counted.
        assert!(matches!(with.last(), Some(Grouped::RepresentativeCount(0))));
    }
}

//! Finds each paragraph key's first occurrence among the kept documents, and sends every
//! later one back to its document's home worker to be left out (paragraph-level dedup,
//! `--paragraphs`).
//!
//! Partitioning: kept documents' paragraphs exchanged on the paragraph's key. A key's
//! paragraphs arrive sorted by document (keep order: input order) and number, so the
//! first is its first occurrence, which stays. Emits: every later one, keyed by its
//! document and number plus one (see `DocItem`), with the first occurrence's document.
//! Holds: at most its spill limit of paragraphs, and one key's first occurrence.

use neardup_core::DocId;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::storage::records::{
    DocItem, DocItemKey, ParagraphKey, ParagraphSeen, RepeatedParagraph,
};
use crate::storage::spill::SpillError;

/// Reduces kept documents' paragraphs to their keys' first occurrences.
pub trait FirstOccurrences<'s, T: Timestamp> {
    /// The paragraphs that repeat a first occurrence, keyed for their documents' rows.
    fn first_occurrences(self, env: &OperatorEnv) -> StreamVec<'s, T, Keyed<DocItemKey, DocItem>>;
}

#[derive(Default)]
struct Firsts {
    /// The current key and its first occurrence's document and id.
    first: Option<(u64, DocId, String)>,
}

impl Drain<Keyed<ParagraphKey, ParagraphSeen>, Keyed<DocItemKey, DocItem>> for Firsts {
    fn item(
        &mut self,
        p: Keyed<ParagraphKey, ParagraphSeen>,
        emit: &mut dyn FnMut(Keyed<DocItemKey, DocItem>),
    ) -> Result<(), SpillError> {
        let (key, doc, number) = p.key;
        match &self.first {
            Some((k, first, first_id)) if *k == key => {
                let repeated = RepeatedParagraph {
                    seen: p.value,
                    key,
                    first: *first,
                    first_id: first_id.clone(),
                };
                emit(Keyed {
                    key: (doc, number.saturating_add(1)),
                    value: DocItem::Repeated(repeated),
                });
            }
            _ => self.first = Some((key, doc, p.value.id)),
        }
        Ok(())
    }
}

impl<'s, T: Timestamp> FirstOccurrences<'s, T>
    for StreamVec<'s, T, Keyed<ParagraphKey, ParagraphSeen>>
{
    fn first_occurrences(self, env: &OperatorEnv) -> StreamVec<'s, T, Keyed<DocItemKey, DocItem>> {
        let by_key = Exchange::new(|p: &Keyed<ParagraphKey, ParagraphSeen>| {
            neardup_core::hash::route(p.key.0)
        });
        collect_sorted(
            self,
            by_key,
            "FirstOccurrences",
            env.spill.clone(),
            || Ok(Firsts::default()),
        )
    }
}

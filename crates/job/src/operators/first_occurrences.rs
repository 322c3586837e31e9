//! Finds each paragraph key's first occurrence among the kept documents, and sends every
//! later one back to its document's home worker to be left out (paragraph-level dedup,
//! `--paragraphs`).
//!
//! Partitioning: kept documents' paragraphs exchanged on the paragraph's key (with an
//! index, on the key's partition, so a worker probes whole partitions of the index). A
//! key's paragraphs arrive sorted by document (keep order: input order) and number, so the
//! first is its first occurrence, which stays, unless a run of the index holds the key:
//! then that run's document holds it, and every occurrence of this run is left out.
//! Emits: every occurrence left out, keyed by its document and number plus one (see
//! `DocItem`), with the document that holds the first occurrence; and, for a first
//! occurrence of this run that a later one repeats, `DocItem::HeldLater` to its document. Holds: at most its spill
//! limit of paragraphs, one key's first occurrence and, with an index, a chunk of
//! [`PROBE_CHUNK`] paragraphs and the index rows of their keys.

use std::collections::HashSet;
use std::sync::Arc;

use neardup_core::DocId;
use neardup_io::index::{HeldParagraph, IndexRef, KeyTable, ProbeStats, partition_of, probe_table};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::sink::PartSink;
use crate::reporting::stats::{MOST_REPEATED, RepeatedKey, keep_most_repeated};
use crate::settings::config::IndexPlan;
use crate::storage::records::{
    DocItem, DocItemKey, ParagraphKey, ParagraphSeen, RepeatedParagraph,
};
use crate::storage::spill::SpillError;

/// Paragraphs probed in the index at once (one partition's, at most).
const PROBE_CHUNK: usize = 16_384;

/// Reduces kept documents' paragraphs to their keys' first occurrences.
pub trait FirstOccurrences<'s, T: Timestamp> {
    /// The paragraphs that repeat a first occurrence (of this run, or with `index` of an
    /// earlier run), keyed for their documents' rows.
    fn first_occurrences(
        self,
        index: Option<Arc<IndexPlan>>,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Keyed<DocItemKey, DocItem>>;
}

/// Who holds a key's first occurrence: its document, its id and, when an earlier run
/// holds it, that run's generation.
type Holder = (DocId, String, Option<u32>);

struct Firsts {
    /// The current key and its first occurrence.
    first: Option<(u64, Holder)>,
    /// While the current key's first occurrence is this run's and no later one has come
    /// yet: its document and number, told once a later one comes.
    untold: Option<(DocId, u32)>,
    /// The current key's count, and the keys left out most often so far (at most twice
    /// [`MOST_REPEATED`] between trims).
    tally: Option<RepeatedKey>,
    most_repeated: Vec<RepeatedKey>,
    /// With an index, the runs that hold keys.
    index: Option<Arc<IndexPlan>>,
    sink: PartSink,
}

impl Firsts {
    fn new(index: Option<Arc<IndexPlan>>, sink: PartSink) -> Self {
        Firsts { first: None, untold: None, tally: None, most_repeated: Vec::new(), index, sink }
    }

    /// Counts the current key among the most repeated, when the run left it out.
    fn close_key(&mut self) {
        if let Some(tally) = self.tally.take().filter(|t| t.left_out > 0) {
            self.most_repeated.push(tally);
            if self.most_repeated.len() >= 2 * MOST_REPEATED {
                keep_most_repeated(&mut self.most_repeated);
            }
        }
    }

    /// Hands the most repeated keys to the worker's statistics.
    fn finish(&mut self) {
        self.close_key();
        let mut stats = self.sink.stats.borrow_mut();
        let listed = &mut stats.paragraphs.most_repeated;
        listed.append(&mut self.most_repeated);
        keep_most_repeated(listed);
    }

    /// Starts counting `key`, whose first occurrence in this run is `p` and whose holder is
    /// `holder`.
    fn open_key(&mut self, key: u64, doc: DocId, p: &ParagraphSeen, holder: &Holder) {
        self.close_key();
        let run = |g: u32| self.index.as_ref().map(|plan| plan.run_of(g).to_string());
        self.tally = Some(RepeatedKey {
            key,
            left_out: 0,
            chars: p.chars,
            first_id: holder.1.clone(),
            first_run: holder.2.and_then(run),
            quote_id: p.id.clone(),
            quote_doc_id: doc.get(),
            offset: p.offset,
            len: p.len,
        });
    }

    /// Places one paragraph: the first of its key stays (unless `earlier`, a run of the
    /// index, holds the key), every other is left out.
    fn place(
        &mut self,
        p: Keyed<ParagraphKey, ParagraphSeen>,
        earlier: Option<&HeldParagraph>,
        emit: &mut dyn FnMut(Keyed<DocItemKey, DocItem>),
    ) {
        let (key, doc, number) = p.key;
        if self.first.as_ref().is_none_or(|(k, _)| *k != key) {
            self.untold = None;
            let holder = match earlier {
                Some(h) => (DocId::from_raw(h.doc), h.id.clone(), Some(h.generation)),
                None => (doc, p.value.id.clone(), None),
            };
            self.open_key(key, doc, &p.value, &holder);
            self.first = Some((key, holder));
            if earlier.is_none() {
                self.untold = Some((doc, number));
                return;
            }
        }
        if let Some(tally) = self.tally.as_mut() {
            tally.left_out += 1;
        }
        if let Some((first, first_number)) = self.untold.take() {
            // Its document holds what this one leaves out, so it must stay.
            emit(Keyed { key: (first, first_number.saturating_add(1)), value: DocItem::HeldLater });
        }
        let (_, (first, first_id, first_generation)) = self.first.as_ref().expect("set above");
        let repeated = RepeatedParagraph {
            seen: p.value,
            key,
            first: *first,
            first_id: first_id.clone(),
            first_generation: *first_generation,
        };
        emit(Keyed { key: (doc, number.saturating_add(1)), value: DocItem::Repeated(repeated) });
    }
}

impl Drain<Keyed<ParagraphKey, ParagraphSeen>, Keyed<DocItemKey, DocItem>> for Firsts {
    fn item(
        &mut self,
        p: Keyed<ParagraphKey, ParagraphSeen>,
        emit: &mut dyn FnMut(Keyed<DocItemKey, DocItem>),
    ) -> Result<(), SpillError> {
        self.place(p, None, emit);
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(Keyed<DocItemKey, DocItem>)) -> Result<(), SpillError> {
        self.finish();
        Ok(())
    }
}

/// [`Firsts`] against the index: paragraphs gathered by key partition and probed in the
/// `paragraphs/` tables of the index's segments a chunk at a time.
struct IndexedFirsts {
    plan: Arc<IndexPlan>,
    /// The folders of the segments that hold paragraphs.
    segments: Vec<std::path::PathBuf>,
    /// Documents taken out of the index: they hold nothing any more.
    forgotten: HashSet<IndexRef>,
    partition: Option<u32>,
    chunk: Vec<Keyed<ParagraphKey, ParagraphSeen>>,
    firsts: Firsts,
    sink: PartSink,
}

impl IndexedFirsts {
    fn new(plan: Arc<IndexPlan>, sink: PartSink) -> Self {
        let manifest = &plan.manifest;
        let holds = |g: &u32| manifest.generation(*g).is_some_and(|g| g.paragraphs.is_some());
        let segments = manifest
            .segments()
            .into_iter()
            .filter(|s| s.generations.iter().any(holds))
            .map(|s| plan.dir.join(&s.folder))
            .collect();
        let forgotten = manifest
            .generations
            .iter()
            .flat_map(|g| g.forgotten.iter().map(|&doc| IndexRef { generation: g.number, doc }))
            .collect();
        let firsts = Firsts::new(Some(Arc::clone(&plan)), sink.clone());
        IndexedFirsts {
            plan,
            segments,
            forgotten,
            partition: None,
            chunk: Vec::new(),
            firsts,
            sink,
        }
    }

    /// The earliest holder in the index of each key of the chunk (but the key whose first
    /// occurrence is known already), in key order.
    fn earlier_holders(&self, partition: u32) -> Result<Vec<HeldParagraph>, neardup_io::Error> {
        let known = self.firsts.first.as_ref().map(|(k, _)| *k);
        let mut keys: Vec<u64> =
            self.chunk.iter().map(|p| p.key.0).filter(|&k| Some(k) != known).collect();
        keys.dedup();
        let mut held = Vec::new();
        for dir in &self.segments {
            let mut probe = ProbeStats::default();
            let found: Vec<HeldParagraph> = probe_table(dir, partition, &keys, &mut probe)?;
            self.sink.stats.borrow_mut().index.add_probe(probe);
            held.extend(found.into_iter().filter(|h| !self.forgotten.contains(&h.at())));
        }
        // Rows order by key, then generation, document and number: the first of each key
        // is its earliest holder.
        held.sort_unstable();
        held.dedup_by_key(|h| h.key);
        Ok(held)
    }

    fn flush(&mut self, emit: &mut dyn FnMut(Keyed<DocItemKey, DocItem>)) {
        let Some(partition) = self.partition else { return };
        if self.chunk.is_empty() || self.sink.stopped() {
            self.chunk.clear();
            return;
        }
        let held = match self.earlier_holders(partition) {
            Ok(held) => held,
            Err(e) => {
                self.chunk.clear();
                return self.sink.fail(e);
            }
        };
        let mut at = 0;
        for p in std::mem::take(&mut self.chunk) {
            at += held[at..].iter().take_while(|h| h.key < p.key.0).count();
            let earlier = held.get(at).filter(|h| h.key == p.key.0);
            self.firsts.place(p, earlier, emit);
        }
    }
}

impl Drain<Keyed<ParagraphKey, ParagraphSeen>, Keyed<DocItemKey, DocItem>> for IndexedFirsts {
    fn item(
        &mut self,
        p: Keyed<ParagraphKey, ParagraphSeen>,
        emit: &mut dyn FnMut(Keyed<DocItemKey, DocItem>),
    ) -> Result<(), SpillError> {
        let partition = partition_of(p.key.0, self.plan.manifest.partitions);
        if self.partition != Some(partition) || self.chunk.len() >= PROBE_CHUNK {
            self.flush(emit);
            self.partition = Some(partition);
        }
        self.chunk.push(p);
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(Keyed<DocItemKey, DocItem>)) -> Result<(), SpillError> {
        self.flush(emit);
        self.firsts.finish();
        Ok(())
    }
}

impl<'s, T: Timestamp> FirstOccurrences<'s, T>
    for StreamVec<'s, T, Keyed<ParagraphKey, ParagraphSeen>>
{
    fn first_occurrences(
        self,
        index: Option<Arc<IndexPlan>>,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Keyed<DocItemKey, DocItem>> {
        let spill = env.spill.clone();
        let Some(plan) = index else {
            let by_key = Exchange::new(|p: &Keyed<ParagraphKey, ParagraphSeen>| {
                neardup_core::hash::route(p.key.0)
            });
            let sink = env.sink.clone();
            return collect_sorted(self, by_key, "FirstOccurrences", spill, move || {
                Ok(Firsts::new(None, sink.clone()))
            });
        };
        let partitions = plan.manifest.partitions;
        let by_partition = Exchange::new(move |p: &Keyed<ParagraphKey, ParagraphSeen>| {
            u64::from(partition_of(p.key.0, partitions))
        });
        let sink = env.sink.clone();
        collect_sorted(self, by_partition, "FirstOccurrences", spill, move || {
            Ok(IndexedFirsts::new(plan.clone(), sink.clone()))
        })
    }
}

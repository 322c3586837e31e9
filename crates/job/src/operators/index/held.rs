//! Writes the new generation's `paragraphs/`: the first occurrences this run's kept
//! documents hold (paragraph-level dedup with an index, [`WriteHeld`]).
//!
//! Partitioning: held paragraphs exchanged by their key's partition, as `ProbeIndex`
//! exchanges keys, so each partition's part is written by one worker, in key order. Emits:
//! nothing. Holds: at most its spill limit of paragraphs, and one batch of rows
//! ([`Batched`]).

use std::sync::Arc;

use neardup_io::index::{HeldParagraph, KeyPartWriter, partition_of};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::sink::{Batched, PartSink};
use crate::settings::config::IndexPlan;
use crate::storage::records::ParagraphKey;
use crate::storage::spill::SpillError;

/// Writes the first occurrences kept documents hold to the new generation.
pub trait WriteHeld<'s, T: Timestamp> {
    /// Writes every held paragraph into its key partition's part of `paragraphs/`.
    fn write_held(self, plan: Arc<IndexPlan>, env: &OperatorEnv) -> StreamVec<'s, T, ()>;
}

struct Held {
    plan: Arc<IndexPlan>,
    /// The partition at hand and its part.
    part: Option<(u32, Batched<KeyPartWriter<HeldParagraph>>)>,
    sink: PartSink,
}

impl Held {
    /// Completes the part of the partition at hand (made only when it has rows).
    fn finish(&mut self) {
        if let Some((_, mut part)) = self.part.take() {
            let written = part.finish(&self.sink, false);
            self.sink.stats.borrow_mut().index.paragraphs_written += written;
        }
    }
}

impl Drain<Keyed<ParagraphKey, String>, ()> for Held {
    fn item(
        &mut self,
        p: Keyed<ParagraphKey, String>,
        _emit: &mut dyn FnMut(()),
    ) -> Result<(), SpillError> {
        let (key, doc, paragraph) = p.key;
        let partition = partition_of(key, self.plan.manifest.partitions);
        if self.part.as_ref().is_none_or(|(at, _)| *at != partition) {
            self.finish();
            let dir = self.plan.new_generation_dir();
            let create = Box::new(move |_: &PartSink| KeyPartWriter::create(&dir, partition));
            self.part = Some((partition, Batched::new(create)));
        }
        let generation = self.plan.generation;
        let row = HeldParagraph { key, generation, doc: doc.get(), paragraph, id: p.value };
        self.part.as_mut().expect("made above").1.add(row, &self.sink);
        Ok(())
    }

    fn end(&mut self, _emit: &mut dyn FnMut(())) -> Result<(), SpillError> {
        self.finish();
        Ok(())
    }
}

impl<'s, T: Timestamp> WriteHeld<'s, T> for StreamVec<'s, T, Keyed<ParagraphKey, String>> {
    fn write_held(self, plan: Arc<IndexPlan>, env: &OperatorEnv) -> StreamVec<'s, T, ()> {
        let partitions = plan.manifest.partitions;
        let by_partition = Exchange::new(move |p: &Keyed<ParagraphKey, String>| {
            u64::from(partition_of(p.key.0, partitions))
        });
        let sink = env.sink.clone();
        collect_sorted(self, by_partition, "WriteHeld", env.spill.clone(), move || {
            Ok(Held { plan: plan.clone(), part: None, sink: sink.clone() })
        })
    }
}

//! Writes the new generation's `paragraphs/`: the first occurrences this run's kept
//! documents hold (paragraph-level dedup with an index, [`WriteHeld`]).
//!
//! Partitioning: held paragraphs exchanged by their key's partition, as `ProbeIndex`
//! exchanges keys, so each partition's part is written by one worker, in key order. Emits:
//! nothing. Holds: at most its spill limit of paragraphs, and one batch of rows.

use std::sync::Arc;

use neardup_io::index::{HeldParagraph, KEY_ROW_GROUP_ROWS, KeyPartWriter, partition_of};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, Keyed, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::sink::PartSink;
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
    partition: Option<u32>,
    rows: Vec<HeldParagraph>,
    writer: Option<KeyPartWriter<HeldParagraph>>,
    sink: PartSink,
}

impl Held {
    fn write(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        let Some(partition) = self.partition else { return };
        if rows.is_empty() || self.sink.stopped() {
            return;
        }
        if self.writer.is_none() {
            let dir = self.plan.new_generation_dir();
            match KeyPartWriter::create(&dir, partition) {
                Ok(w) => self.writer = Some(w),
                Err(e) => return self.sink.fail(e),
            }
        }
        if let Err(e) = self.writer.as_mut().expect("created above").write(&rows) {
            self.sink.fail(e);
        }
    }

    /// Completes the part of the partition at hand.
    fn finish(&mut self) {
        self.write();
        if let Some(w) = self.writer.take()
            && !self.sink.stopped()
        {
            match w.finish() {
                Ok(n) => self.sink.stats.borrow_mut().index.paragraphs_written += n,
                Err(e) => self.sink.fail(e),
            }
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
        if self.partition != Some(partition) {
            self.finish();
            self.partition = Some(partition);
        }
        let generation = self.plan.generation;
        self.rows.push(HeldParagraph { key, generation, doc: doc.get(), paragraph, id: p.value });
        if self.rows.len() >= KEY_ROW_GROUP_ROWS {
            self.write();
        }
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
            Ok(Held {
                plan: plan.clone(),
                partition: None,
                rows: Vec::new(),
                writer: None,
                sink: sink.clone(),
            })
        })
    }
}

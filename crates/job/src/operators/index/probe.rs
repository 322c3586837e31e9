//! Probing the index by key partition, and writing the new key parts ([`ProbeIndex`]).

use std::sync::Arc;

use neardup_io::index::{
    KeyPartWriter, KeyRow, ProbeStats, Segment, doc_part_of, partition_of, probe_keys,
};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::progress::Timestamp;

use crate::operators::collect::{Drain, collect_sorted};
use crate::operators::env::OperatorEnv;
use crate::operators::sink::PartSink;
use crate::settings::config::IndexPlan;
use crate::storage::spill::SpillError;

use super::records::{IndexCandidate, IndexKey};

struct ProbeDrain {
    plan: Arc<IndexPlan>,
    /// The index's segments, as the run read them.
    segments: Vec<Segment>,
    max_bucket_size: usize,
    bucket_anchors: usize,
    partition: Option<u32>,
    rows: Vec<IndexKey>,
    sink: PartSink,
}

impl ProbeDrain {
    /// Writes the key part of the partition at hand and probes the index's segments.
    fn flush(&mut self, emit: &mut dyn FnMut(IndexCandidate)) {
        let Some(partition) = self.partition else { return };
        let rows = std::mem::take(&mut self.rows);
        if rows.is_empty() || self.sink.stopped() {
            return;
        }
        let written =
            KeyPartWriter::create(&self.plan.new_generation_dir(), partition).and_then(|mut w| {
                let generation = self.plan.generation;
                let keys: Vec<KeyRow> = rows
                    .iter()
                    .map(|r| KeyRow { key: r.key, generation, doc: r.doc.get() })
                    .collect();
                w.write(&keys)?;
                w.finish()
            });
        match written {
            Ok(n) => self.sink.stats.borrow_mut().index.keys_written += n,
            Err(e) => return self.sink.fail(e),
        }
        let mut keys: Vec<u64> = rows.iter().map(|r| r.key).collect();
        keys.dedup();
        for segment in &self.segments {
            let dir = self.plan.dir.join(&segment.folder);
            let mut probe = ProbeStats::default();
            let found = match probe_keys(&dir, partition, &keys, &mut probe) {
                Ok(found) => found,
                Err(e) => return self.sink.fail(e),
            };
            self.sink.stats.borrow_mut().index.add_probe(probe);
            // Both sides are in key order: a merge join, bucket by bucket.
            let (mut i, mut j) = (0, 0);
            while i < rows.len() && j < found.len() {
                let key = rows[i].key.min(found[j].key);
                let new_end = i + rows[i..].iter().take_while(|r| r.key == key).count();
                let old_end = j + found[j..].iter().take_while(|r| r.key == key).count();
                if rows[i].key == key && found[j].key == key {
                    // An oversized bucket of the index: only its earliest documents, as a
                    // cut bucket within a run is compared with its anchors.
                    let olds = &found[j..old_end];
                    let olds = if olds.len() > self.max_bucket_size {
                        &olds[..self.bucket_anchors]
                    } else {
                        olds
                    };
                    for new in &rows[i..new_end] {
                        for old in olds {
                            emit(IndexCandidate {
                                segment: segment.first(),
                                part: doc_part_of(old.doc, segment.doc_parts),
                                old: old.at(),
                                new: new.doc,
                            });
                        }
                    }
                }
                i = new_end;
                j = old_end;
            }
        }
    }
}

impl Drain<IndexKey, IndexCandidate> for ProbeDrain {
    fn item(
        &mut self,
        item: IndexKey,
        emit: &mut dyn FnMut(IndexCandidate),
    ) -> Result<(), SpillError> {
        let partition = partition_of(item.key, self.plan.manifest.partitions);
        if self.partition != Some(partition) {
            self.flush(emit);
            self.partition = Some(partition);
        }
        self.rows.push(item);
        Ok(())
    }

    fn end(&mut self, emit: &mut dyn FnMut(IndexCandidate)) -> Result<(), SpillError> {
        self.flush(emit);
        Ok(())
    }
}

/// Probes the index with this run's keys and writes them as the new generation's keys.
pub trait ProbeIndex<'s, T: Timestamp> {
    /// The candidates of new representatives against indexed documents.
    fn probe_index(
        self,
        plan: Arc<IndexPlan>,
        buckets: crate::settings::spec::BucketSpec,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, IndexCandidate>;
}

impl<'s, T: Timestamp> ProbeIndex<'s, T> for StreamVec<'s, T, IndexKey> {
    fn probe_index(
        self,
        plan: Arc<IndexPlan>,
        buckets: crate::settings::spec::BucketSpec,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, IndexCandidate> {
        let (sink, spill) = (env.sink.clone(), env.spill.clone());
        let partitions = plan.manifest.partitions;
        let by_partition =
            Exchange::new(move |k: &IndexKey| u64::from(partition_of(k.key, partitions)));
        collect_sorted(self, by_partition, "ProbeIndex", spill, move || {
            Ok(ProbeDrain {
                plan: plan.clone(),
                segments: plan.manifest.segments(),
                max_bucket_size: buckets.max_bucket_size,
                bucket_anchors: buckets.bucket_anchors,
                partition: None,
                rows: Vec::new(),
                sink: sink.clone(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use neardup_core::DocId;
    use neardup_io::index::{IndexRef, key_part_path};

    use super::*;
    use crate::operators::testing::{self, drain};

    /// Keys 5 and 7 fall in partition 0, the other two in partition 4.
    const SHARED: u64 = 5;
    const CROWDED: u64 = 7;
    const NEW_ONLY: u64 = 1 << 60;
    const OLD_ONLY: u64 = (1 << 60) + 5;

    fn key_row(key: u64, doc: u64) -> KeyRow {
        KeyRow { key, generation: 1, doc }
    }

    fn new_key(key: u64, record: u64) -> IndexKey {
        IndexKey { key, doc: DocId::new(0, record) }
    }

    #[test]
    fn keys_are_written_and_shared_buckets_of_the_index_make_candidates() {
        let dir = tempfile::tempdir().unwrap();
        let mut keys = vec![key_row(SHARED, 10), key_row(SHARED, 11), key_row(OLD_ONLY, 16)];
        // Four indexed documents in one bucket, over the limit of three.
        keys.extend((12..16).map(|d| key_row(CROWDED, d)));
        let job = testing::job_with_index(dir.path(), &[], &keys);
        let plan = job.index.clone().unwrap();
        let sink = testing::sink(dir.path(), Rc::default());
        let mut probe = ProbeDrain {
            plan: plan.clone(),
            segments: plan.manifest.segments(),
            max_bucket_size: 3,
            bucket_anchors: 1,
            partition: None,
            rows: Vec::new(),
            sink: sink.clone(),
        };
        let candidates = drain(
            &mut probe,
            vec![new_key(SHARED, 1), new_key(CROWDED, 2), new_key(NEW_ONLY, 3), new_key(SHARED, 4)],
        );
        let got: Vec<(u64, u64)> = candidates.iter().map(|c| (c.old.doc, c.new.record())).collect();
        // The crowded bucket gives its anchor only.
        assert_eq!(got, [(10, 1), (11, 1), (10, 4), (11, 4), (12, 2)]);
        assert!(candidates.iter().all(|c| c.segment == 1 && c.part == 0));
        assert!(candidates.iter().all(|c| c.old.generation == 1));
        assert_eq!(candidates[0].old, IndexRef { generation: 1, doc: 10 });

        // The new generation's keys, a part per partition.
        let generation = plan.new_generation_dir();
        assert!(key_part_path(&generation, 0).exists() && key_part_path(&generation, 4).exists());
        let stats = sink.stats.borrow();
        assert_eq!(stats.index.keys_written, 4);
        assert!(sink.error.borrow().is_none());
    }
}

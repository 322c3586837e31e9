//! Keeps what signing gave each unit of input in the work area (`crate::input::work_area`), so that
//! a rerun replays it instead of reading and signing again.
//!
//! Partitioning: signed records and unit ends go to the worker that read their file (by
//! file index when records were spread over workers to be signed; where they are
//! otherwise). Emits: every record, as it came, once it is written (the stages after it
//! exchange records by id and by document, so where a record goes on from does not matter;
//! nothing is copied for the unit writer). Writes: one unit file per unit, committed once
//! its end and every record it counts have arrived. Holds: a write buffer (64 KiB) per unit
//! being written, and for an output in object storage the upload's part buffer
//! (`NEARDUP_UPLOAD_PART_SIZE`, 8 MiB by default) as well; a worker writes as many units at
//! once as it has files in flight (usually one or two, as a unit is committed once its last
//! record is signed).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use neardup_io::RejectedRecord;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::{Exchange, ParallelizationContract, Pipeline};
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

use crate::input::work_area::{UnitEnd, UnitWriter, WorkArea};
use crate::operators::env::OperatorEnv;
use crate::reporting::stats::WorkerStats;
use crate::storage::records::SignedDoc;

type Signed = Result<SignedDoc, RejectedRecord>;

/// Where a signed record's unit is: its file.
fn file_of(signed: &Signed) -> u32 {
    match signed {
        Ok(doc) => doc.doc.file_index(),
        Err(reject) => reject.doc.file_index(),
    }
}

/// Writes the units of the worker that read them.
pub trait KeepUnits<'s, T: Timestamp> {
    /// Writes each unit's signed records into `area`, committing a unit once `ends` says it
    /// is whole and all its records are in, and hands every record on; `spread` when
    /// records were spread over workers to be signed (they go back to their file's reader
    /// first). The output's frontier passes once every unit this worker wrote is committed
    /// or left out. Counts into `stats`; nothing is committed once `abort` is set.
    fn keep_units(
        self,
        ends: StreamVec<'s, T, UnitEnd>,
        area: Rc<WorkArea>,
        spread: bool,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Signed>;
}

impl<'s, T: Timestamp> KeepUnits<'s, T> for StreamVec<'s, T, Signed> {
    fn keep_units(
        self,
        ends: StreamVec<'s, T, UnitEnd>,
        area: Rc<WorkArea>,
        spread: bool,
        env: &OperatorEnv,
    ) -> StreamVec<'s, T, Signed> {
        let (stats, abort) = (env.stats.clone(), env.spill.abort.clone());
        let units = Units { area, open: BTreeMap::new(), failed: false, stats, abort };
        if spread {
            let peers = self.scope().peers() as u64;
            let signed = Exchange::new(move |s: &Signed| u64::from(file_of(s)) % peers);
            let ends_by = Exchange::new(move |e: &UnitEnd| u64::from(e.file) % peers);
            keep(self, ends, signed, ends_by, units)
        } else {
            keep(self, ends, Pipeline, Pipeline, units)
        }
    }
}

fn keep<'s, T: Timestamp>(
    signed: StreamVec<'s, T, Signed>,
    ends: StreamVec<'s, T, UnitEnd>,
    signed_by: impl ParallelizationContract<T, Vec<Signed>>,
    ends_by: impl ParallelizationContract<T, Vec<UnitEnd>>,
    mut units: Units,
) -> StreamVec<'s, T, Signed> {
    type Builder = CapacityContainerBuilder<Vec<Signed>>;
    signed.binary::<_, Builder, _, _, _, _>(
        ends,
        signed_by,
        ends_by,
        "KeepUnits",
        move |_cap, _info| {
            move |signed, ends, output| {
                signed.for_each(|cap, batch| {
                    batch.iter().for_each(|record| units.record(record));
                    output.session(&cap).give_container(batch);
                });
                ends.for_each(|_cap, batch| batch.drain(..).for_each(|end| units.end(end)));
            }
        },
    )
}

/// A unit being written, and its end once the reader sent it.
struct Open {
    writer: Option<UnitWriter>,
    end: Option<UnitEnd>,
}

/// The units a worker writes.
struct Units {
    area: Rc<WorkArea>,
    open: BTreeMap<u32, Open>,
    /// Set by a write error: no further unit is written in this run.
    failed: bool,
    stats: Rc<RefCell<WorkerStats>>,
    abort: Arc<AtomicBool>,
}

impl Units {
    fn record(&mut self, signed: &Signed) {
        let file = file_of(signed);
        let Some(open) = self.open_unit(file) else { return };
        let written = match &mut open.writer {
            Some(writer) => writer.write(signed),
            None => return,
        };
        if let Err(e) = written {
            self.fail(file, &e);
            return;
        }
        self.commit_if_whole(file);
    }

    fn end(&mut self, end: UnitEnd) {
        let file = end.file;
        let Some(open) = self.open_unit(file) else { return };
        open.end = Some(end);
        self.commit_if_whole(file);
    }

    /// The unit of `file`, started when new; `None` when units are not written.
    fn open_unit(&mut self, file: u32) -> Option<&mut Open> {
        if self.failed || self.abort.load(Ordering::Relaxed) {
            return None;
        }
        if !self.open.contains_key(&file) {
            // Once per unit: a record of an open unit only finds it.
            let path = self.area.path(file)?;
            let writer = match UnitWriter::create(path) {
                Ok(writer) => Some(writer),
                Err(e) => {
                    self.fail(file, &e);
                    return None;
                }
            };
            self.open.insert(file, Open { writer, end: None });
        }
        self.open.get_mut(&file)
    }

    fn commit_if_whole(&mut self, file: u32) {
        let Some(open) = self.open.get(&file) else { return };
        let (Some(end), Some(writer)) = (&open.end, &open.writer) else { return };
        if writer.records < end.records || self.abort.load(Ordering::Relaxed) {
            return;
        }
        let mut open = self.open.remove(&file).expect("just seen");
        let (writer, end) =
            (open.writer.take().expect("just seen"), open.end.take().expect("just seen"));
        match writer.commit(&end) {
            Ok(bytes) => {
                let mut stats = self.stats.borrow_mut();
                stats.work.units_written += 1;
                stats.work.bytes_written += bytes;
            }
            Err(e) => self.fail(file, &e),
        }
    }

    /// Leaves out every unit of this worker from now on (the run goes on without them).
    fn fail(&mut self, file: u32, error: &std::io::Error) {
        let path = self.area.path(file).unwrap_or_default();
        tracing::warn!(unit = %path.display(), %error, "cannot keep a unit in the work area: a rerun will read its input again");
        self.failed = true;
        self.open.clear();
    }
}

//! Bounded-memory sorting: records are kept in memory up to a byte limit, then written to
//! disk as sorted runs, and read back merged in order.
//!
//! Every grouping stage of the dataflow collects its records in a [`SortedRuns`], so a
//! stage holds at most its limit in memory whatever the corpus size; what does not fit
//! goes to files under the job's spill folder, removed when read. A spill file is a
//! sequence of frames, one per record (`frames.rs`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use crate::storage::frames::SpillError;
pub(crate) use crate::storage::frames::{FrameReader, FrameWriter, create_run};

/// Approximate memory a record holds, heap included, for the spill limit.
pub trait MemSize {
    /// Bytes held by this value.
    fn mem_size(&self) -> usize;
}

impl MemSize for String {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<String>() + self.capacity()
    }
}

impl<T: Copy> MemSize for Vec<T> {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Vec<T>>() + self.capacity() * std::mem::size_of::<T>()
    }
}

impl MemSize for u64 {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

impl MemSize for (u64, u64, u64) {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// A spill folder of its own for one worker of one pass: `root/neardup-STAGE-PID-N-WORKER`,
/// where `N` counts the folders this process has named, so jobs that run side by side in
/// one process (a library caller, the tests) never share one.
pub(crate) fn worker_folder(root: &Path, stage: &str, worker: usize) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
    root.join(format!("neardup-{stage}-{}-{n}-{worker}", std::process::id()))
}

/// Records sorted by `Ord`, held in memory up to `limit_bytes` and spilled beyond.
pub struct SortedRuns<T> {
    memory: Vec<T>,
    /// What the records in memory hold beyond their place in `memory` (strings, vectors).
    heap_bytes: usize,
    limit_bytes: usize,
    dir: PathBuf,
    runs: Vec<PathBuf>,
    spilled_bytes: u64,
}

impl<T: Ord + Serialize + DeserializeOwned + MemSize> SortedRuns<T> {
    /// An empty collection that spills to `dir` above `limit_bytes` held in memory.
    pub fn new(dir: &Path, limit_bytes: usize) -> Self {
        SortedRuns {
            memory: Vec::new(),
            heap_bytes: 0,
            limit_bytes: limit_bytes.max(1 << 16),
            dir: dir.to_path_buf(),
            runs: Vec::new(),
            spilled_bytes: 0,
        }
    }

    /// Adds a record, spilling a sorted run when memory is over the limit. Memory counts
    /// the buffer's whole capacity, which grows by doubling but never past the limit, and
    /// what the records hold on the heap.
    ///
    /// # Errors
    /// When the run cannot be written.
    pub fn push(&mut self, item: T) -> Result<(), SpillError> {
        let size = std::mem::size_of::<T>().max(1);
        if self.memory.len() == self.memory.capacity() {
            // The records the limit leaves room for.
            let limit = self.limit_bytes;
            let room = |heap: usize| (limit.saturating_sub(heap) / size).max(1);
            if !self.memory.is_empty() && self.memory.capacity() >= room(self.heap_bytes) {
                self.spill()?;
            }
            if self.memory.len() == self.memory.capacity() {
                let capacity = self.memory.capacity();
                let more = room(self.heap_bytes).saturating_sub(capacity);
                // Doubling, so the slack stays below the records held.
                self.memory.reserve_exact(capacity.clamp(1, more.max(1)));
            }
        }
        self.heap_bytes += item.mem_size().saturating_sub(size);
        self.memory.push(item);
        if self.heap_bytes + self.memory.capacity() * size > self.limit_bytes {
            self.spill()?;
        }
        Ok(())
    }

    /// Whether no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.memory.is_empty() && self.runs.is_empty()
    }

    /// Bytes written to spill files so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    fn spill(&mut self) -> Result<(), SpillError> {
        self.memory.sort_unstable();
        let mut out = FrameWriter::create(&self.dir)?;
        // Named before the first write, so a failed run is removed too.
        self.runs.push(out.path().to_path_buf());
        for item in self.memory.drain(..) {
            out.write(&item)?;
        }
        let (_, bytes) = out.finish()?;
        self.spilled_bytes += bytes;
        // The buffer stays for the next run.
        self.heap_bytes = 0;
        Ok(())
    }

    /// All records in order: the in-memory ones merged with every spilled run. Run files
    /// are removed once opened (they stay readable until the iterator is dropped).
    ///
    /// # Errors
    /// When a run cannot be opened; errors while reading are yielded by the iterator.
    pub fn into_sorted(mut self) -> Result<Merged<T>, SpillError> {
        self.memory.sort_unstable();
        let mut sources: Vec<Source<T>> = Vec::with_capacity(self.runs.len() + 1);
        let runs = std::mem::take(&mut self.runs);
        for (i, path) in runs.iter().enumerate() {
            let reader = FrameReader::open(path);
            let _ = std::fs::remove_file(path);
            if reader.is_err() {
                // The runs not opened yet are removed too.
                runs[i + 1..].iter().for_each(|p| drop(std::fs::remove_file(p)));
            }
            sources.push(Source::Run(reader?));
        }
        sources.push(Source::Memory(std::mem::take(&mut self.memory).into_iter()));
        let mut merged = Merged { sources, heap: BinaryHeap::new() };
        for i in 0..merged.sources.len() {
            merged.refill(i)?;
        }
        Ok(merged)
    }
}

impl<T> Drop for SortedRuns<T> {
    fn drop(&mut self) {
        for path in &self.runs {
            let _ = std::fs::remove_file(path);
        }
    }
}

enum Source<T> {
    Memory(std::vec::IntoIter<T>),
    Run(FrameReader),
}

impl<T: DeserializeOwned> Source<T> {
    fn next_item(&mut self) -> Result<Option<T>, SpillError> {
        match self {
            Source::Memory(items) => Ok(items.next()),
            Source::Run(reader) => reader.next().transpose(),
        }
    }
}

/// The next record of one source, ordered for a min-heap (ties: lower source first, so the
/// merge is stable and deterministic).
struct Head<T> {
    item: T,
    source: usize,
}

impl<T: Ord> PartialEq for Head<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T: Ord> Eq for Head<T> {}
impl<T: Ord> PartialOrd for Head<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T: Ord> Ord for Head<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.item.cmp(&self.item).then(other.source.cmp(&self.source))
    }
}

/// A k-way merge of sorted sources.
pub struct Merged<T> {
    sources: Vec<Source<T>>,
    heap: BinaryHeap<Head<T>>,
}

impl<T: Ord + DeserializeOwned> Merged<T> {
    fn refill(&mut self, source: usize) -> Result<(), SpillError> {
        if let Some(item) = self.sources[source].next_item()? {
            self.heap.push(Head { item, source });
        }
        Ok(())
    }
}

impl<T: Ord + DeserializeOwned> Iterator for Merged<T> {
    type Item = Result<T, SpillError>;

    fn next(&mut self) -> Option<Self::Item> {
        // The least head is replaced by its source's next record in place (one sift down),
        // rather than popped and the next one pushed: the same order, as heads are ordered
        // by (record, source), which no two share.
        let mut top = self.heap.peek_mut()?;
        Some(match self.sources[top.source].next_item() {
            Ok(Some(item)) => Ok(std::mem::replace(&mut top.item, item)),
            Ok(None) => Ok(PeekMut::pop(top).item),
            Err(e) => {
                PeekMut::pop(top);
                Err(e)
            }
        })
    }
}

/// Sorted records that can be read more than once: kept in memory when they fit, else in
/// one merged file, removed when the last reader is done.
pub struct SortedFile<T> {
    memory: Arc<Vec<T>>,
    file: Option<Arc<RemoveOnDrop>>,
}

impl<T> Clone for SortedFile<T> {
    fn clone(&self) -> Self {
        SortedFile { memory: self.memory.clone(), file: self.file.clone() }
    }
}

/// A file removed when dropped.
pub(crate) struct RemoveOnDrop(pub(crate) PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl<T: Ord + Serialize + DeserializeOwned + MemSize + Clone> SortedRuns<T> {
    /// Finishes collecting into a [`SortedFile`].
    ///
    /// # Errors
    /// When the runs cannot be merged into one file.
    pub fn into_file(mut self) -> Result<SortedFile<T>, SpillError> {
        if self.runs.is_empty() {
            self.memory.sort_unstable();
            return Ok(SortedFile {
                memory: Arc::new(std::mem::take(&mut self.memory)),
                file: None,
            });
        }
        let mut out = FrameWriter::create(&self.dir)?;
        let guard = Arc::new(RemoveOnDrop(out.path().to_path_buf()));
        for item in self.into_sorted()? {
            out.write(&item?)?;
        }
        out.finish()?;
        Ok(SortedFile { memory: Arc::new(Vec::new()), file: Some(guard) })
    }
}

/// Makes room in the full buffer `memory` for more records, doubling it but never past
/// `room_bytes` more, so a buffer never holds twice its limit while it moves; false when
/// there is no room for one more record.
pub(crate) fn grow_within<T>(memory: &mut Vec<T>, room_bytes: usize) -> bool {
    let more = memory.capacity().max(4).min(room_bytes / std::mem::size_of::<T>().max(1));
    memory.reserve_exact(more);
    more > 0
}

/// Records that arrive already in order, for a [`SortedFile`]: held in memory up to
/// `limit_bytes`, then all of them written to one file in the order they came and the
/// rest appended to it, so that nothing is sorted, spilled in runs or merged again.
pub struct SortedWriter<T> {
    memory: Vec<T>,
    /// What the records in memory hold, heap included.
    bytes: usize,
    limit_bytes: usize,
    dir: PathBuf,
    file: Option<(Arc<RemoveOnDrop>, FrameWriter)>,
    /// The last record pushed, to check the order (debug builds).
    #[cfg(debug_assertions)]
    last: Option<T>,
}

impl<T: Ord + Serialize + DeserializeOwned + MemSize + Clone> SortedWriter<T> {
    /// An empty writer that goes to a file in `dir` above `limit_bytes` held in memory.
    pub fn new(dir: &Path, limit_bytes: usize) -> Self {
        SortedWriter {
            memory: Vec::new(),
            bytes: 0,
            limit_bytes: limit_bytes.max(1 << 16),
            dir: dir.to_path_buf(),
            file: None,
            #[cfg(debug_assertions)]
            last: None,
        }
    }

    /// Adds a record, which must not sort before the one pushed last.
    ///
    /// # Errors
    /// When the file cannot be made or written.
    pub fn push(&mut self, item: T) -> Result<(), SpillError> {
        #[cfg(debug_assertions)]
        {
            assert!(self.last.as_ref().is_none_or(|l| *l <= item), "records pushed out of order");
            self.last = Some(item.clone());
        }
        if self.file.is_none()
            && self.memory.len() == self.memory.capacity()
            && !grow_within(&mut self.memory, self.limit_bytes.saturating_sub(self.bytes))
        {
            self.start_file()?;
        }
        if let Some((_, out)) = &mut self.file {
            return out.write(&item);
        }
        self.bytes += item.mem_size();
        self.memory.push(item);
        let slack = (self.memory.capacity() - self.memory.len()) * std::mem::size_of::<T>();
        if self.bytes + slack > self.limit_bytes {
            self.start_file()?;
        }
        Ok(())
    }

    /// Writes the records held to a new file, where later ones go too.
    fn start_file(&mut self) -> Result<(), SpillError> {
        let mut out = FrameWriter::create(&self.dir)?;
        let guard = Arc::new(RemoveOnDrop(out.path().to_path_buf()));
        for item in std::mem::take(&mut self.memory) {
            out.write(&item)?;
        }
        self.bytes = 0;
        self.file = Some((guard, out));
        Ok(())
    }

    /// Finishes into a [`SortedFile`], and the bytes written to its file (0 when it stayed
    /// in memory).
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn into_file(self) -> Result<(SortedFile<T>, u64), SpillError> {
        let Some((guard, out)) = self.file else {
            return Ok((SortedFile { memory: Arc::new(self.memory), file: None }, 0));
        };
        let (_, bytes) = out.finish()?;
        Ok((SortedFile { memory: Arc::new(Vec::new()), file: Some(guard) }, bytes))
    }
}

/// An owning iterator over a [`SortedFile`].
pub type SortedIter<T> = Box<dyn Iterator<Item = Result<T, SpillError>>>;

/// A [`SortedFile`]'s records as they are held, for readers that pass over records
/// without copying or decoding them.
pub(crate) enum Held<T> {
    /// In memory.
    Memory(Arc<Vec<T>>),
    /// In a file: its reader, which keeps the file.
    File {
        /// Reads the file.
        reader: FrameReader,
        /// Keeps the file while it reads.
        _keep: Arc<RemoveOnDrop>,
    },
}

impl<T> SortedFile<T> {
    /// The records as they are held.
    ///
    /// # Errors
    /// When the file cannot be opened.
    pub(crate) fn held(&self) -> Result<Held<T>, SpillError> {
        match &self.file {
            None => Ok(Held::Memory(self.memory.clone())),
            Some(guard) => {
                Ok(Held::File { reader: FrameReader::open(&guard.0)?, _keep: guard.clone() })
            }
        }
    }
}

impl<T: DeserializeOwned + Clone + 'static> SortedFile<T> {
    /// The records in order; the iterator keeps the file alive.
    ///
    /// # Errors
    /// When the file cannot be opened; read errors are yielded by the iterator.
    pub fn iter(&self) -> Result<SortedIter<T>, SpillError> {
        let Some(guard) = self.file.clone() else {
            let memory = self.memory.clone();
            return Ok(Box::new((0..memory.len()).map(move |i| Ok(memory[i].clone()))));
        };
        let mut reader = FrameReader::open(&guard.0)?;
        Ok(Box::new(std::iter::from_fn(move || {
            let _keep = &guard;
            reader.next()
        })))
    }
}

/// A folder removed (with what is in it) when dropped: a worker's spill folder.
pub(crate) struct RemoveDir(pub(crate) PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        use std::io::ErrorKind;
        match std::fs::remove_dir_all(&self.0) {
            Ok(()) => {}
            // Never created (nothing spilled, or the spill folder is unusable).
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
            Err(e) => {
                tracing::warn!(path = %self.0.display(), error = %e, "cannot remove the spill folder")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::operators::collect::Keyed;

    #[derive(
        Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
    )]
    struct Item(u64, String);

    impl MemSize for Item {
        fn mem_size(&self) -> usize {
            std::mem::size_of::<Item>() + self.1.capacity()
        }
    }

    #[test]
    fn a_minhash_signature_is_stored_as_one_byte_string() {
        use neardup_core::{MinHashSignature, Signature};
        let values: Vec<u32> = (0..128u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let signature = Signature::MinHash(MinHashSignature::from_values(values.clone()));
        let bytes = bincode::serialize(&signature).unwrap();
        // The variant, the length and the values: as many bytes as a plain Vec<u32>.
        assert_eq!(bytes.len(), 4 + 8 + 4 * 128);
        assert_eq!(&bytes[16..20], &values[1].to_le_bytes());
        let back: Signature = bincode::deserialize_from(&bytes[..]).unwrap();
        assert_eq!(back, signature);
        // Through a reader, as spill files are read.
        let mut reader = std::io::BufReader::new(&bytes[..]);
        assert_eq!(bincode::deserialize_from::<_, Signature>(&mut reader).unwrap(), signature);
        // JSON has no byte strings: a sequence of numbers reads back the same.
        let json = serde_json::to_string(&signature).unwrap();
        assert_eq!(serde_json::from_str::<Signature>(&json).unwrap(), signature);
    }

    /// Records that arrive in order stay in memory within the limit, the buffer's spare
    /// capacity included, then all go to one file, read back in order.
    #[test]
    fn a_sorted_writer_holds_at_most_its_limit_and_reads_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = SortedWriter::new(dir.path(), 0);
        let limit = writer.limit_bytes;
        let size = std::mem::size_of::<Item>();
        let items: Vec<Item> = (0..10_000u64).map(|n| Item(n, String::new())).collect();
        for item in &items {
            writer.push(item.clone()).unwrap();
            if writer.file.is_none() {
                assert!(
                    writer.bytes + (writer.memory.capacity() - writer.memory.len()) * size <= limit
                );
                assert!(writer.memory.capacity() * size <= limit, "{}", writer.memory.capacity());
            }
        }
        assert!(writer.file.is_some(), "10,000 records of {size} bytes pass {limit}");
        let (file, bytes) = writer.into_file().unwrap();
        assert!(bytes > 0);
        let back: Vec<Item> = file.iter().unwrap().map(Result::unwrap).collect();
        assert_eq!(back, items);
    }

    /// The merge reports a damaged run rather than dropping what follows the damage.
    #[test]
    fn merging_a_damaged_run_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = SortedRuns::new(dir.path(), 0);
        runs.limit_bytes = 256;
        for n in 0..200u64 {
            runs.push(Item(n * 7 % 200, "abcdef".into())).unwrap();
        }
        assert!(runs.runs.len() > 2);
        let run = runs.runs[1].clone();
        let bytes = std::fs::read(&run).unwrap();
        std::fs::write(&run, &bytes[..bytes.len() - 3]).unwrap();
        let results: Vec<_> = runs.into_sorted().unwrap().collect();
        let error = results.iter().find_map(|r| r.as_ref().err()).expect("an error");
        assert_eq!(error.path, run);
    }

    proptest! {
        /// Records with equal keys (`Keyed` orders by key alone; the value is the push
        /// position) come out of the merge run by run (the runs in the order
        /// they were spilled, the records still in memory last), whatever the heap does.
        #[test]
        fn equal_keys_merge_in_the_order_of_their_runs(
            keys in proptest::collection::vec(0u64..6, 0..300),
            limit in 64usize..1024,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut runs = SortedRuns::new(dir.path(), 0);
            runs.limit_bytes = limit;
            // Which run each record went to: a push may spill before it adds its record
            // (the buffer is full), after (over the limit), or both.
            let (mut run_of, mut pending) = (Vec::new(), 0);
            for (i, &key) in keys.iter().enumerate() {
                let before = runs.runs.len();
                runs.push(Keyed { key, value: vec![i] }).unwrap();
                let added = runs.runs.len() - before;
                if added == 0 {
                    pending += 1;
                    continue;
                }
                run_of.extend(std::iter::repeat_n(before, pending));
                if added == 1 && !runs.memory.is_empty() {
                    pending = 1; // spilled before this record, which waits in memory
                } else {
                    run_of.push(before + added - 1);
                    pending = 0;
                }
            }
            run_of.extend(std::iter::repeat_n(runs.runs.len(), pending));
            let merged: Vec<Keyed<u64, Vec<usize>>> =
                runs.into_sorted().unwrap().map(Result::unwrap).collect();
            prop_assert_eq!(merged.len(), keys.len());
            for w in merged.windows(2) {
                prop_assert!(w[0].key <= w[1].key);
                if w[0].key == w[1].key {
                    let (x, y) = (w[0].value[0], w[1].value[0]);
                    prop_assert!(run_of[x] <= run_of[y], "{x} before {y} (key {})", w[0].key);
                }
            }
        }

        #[test]
        fn merged_runs_equal_a_plain_sort(
            items in proptest::collection::vec((0u64..50, "[a-c]{0,3}"), 0..400),
            limit in 64usize..4096,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut runs = SortedRuns::new(dir.path(), 0);
            runs.limit_bytes = limit; // below the floor, to force many runs
            let mut expected: Vec<Item> = items.iter().map(|(n, s)| Item(*n, s.clone())).collect();
            let total: usize = expected.iter().map(MemSize::mem_size).sum();
            for item in expected.clone() {
                runs.push(item).unwrap();
            }
            let spilled = runs.spilled_bytes();
            let merged: Vec<Item> = runs.into_sorted().unwrap().map(Result::unwrap).collect();
            expected.sort();
            prop_assert_eq!(merged, expected.clone());
            // The buffer counts whole: at most twice the records' own bytes.
            prop_assert!(total <= limit || spilled > 0, "spills when over the limit");
            prop_assert!(2 * total > limit || spilled == 0, "keeps in memory what fits");
            prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "run files are removed");
        }

        #[test]
        fn a_sorted_file_reads_the_same_twice(items in proptest::collection::vec(0u64..1000, 0..300), limit in 64usize..2048) {
            let dir = tempfile::tempdir().unwrap();
            let mut runs = SortedRuns::new(dir.path(), 0);
            runs.limit_bytes = limit;
            for n in &items {
                runs.push(Item(*n, String::new())).unwrap();
            }
            let file = runs.into_file().unwrap();
            let first: Vec<Item> = file.iter().unwrap().map(Result::unwrap).collect();
            let second: Vec<Item> = file.iter().unwrap().map(Result::unwrap).collect();
            let mut expected: Vec<u64> = items.clone();
            expected.sort();
            prop_assert_eq!(first.iter().map(|i| i.0).collect::<Vec<_>>(), expected);
            prop_assert_eq!(first, second);
            drop(file);
            prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the file is removed");
        }
    }
}

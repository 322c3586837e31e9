//! The work area (`OUTPUT/_work/`): what a run finished reading and signing, kept so that a
//! rerun into the same output after a failure reads and signs only the rest.
//!
//! A *unit* is one worker's share of one input file: the whole file, or the worker's byte
//! range of it. As a run signs a unit's records, the signed documents and rejects go, in
//! order, to `_work/units/NAME.unit`, which appears only once complete (a local file is
//! written under a hidden name of its writer's own, synced and renamed, so two writers of
//! one unit never mix their bytes; an object appears when its upload completes). A unit is complete when every record the reader gave for it has arrived and
//! the file was read whole and unchanged; its last frame holds what reading counted.
//!
//! `NAME` is a digest of everything a unit's records depend on: the file's identity
//! (path, as resolved and as given, size, and its modification time or ETag), the
//! worker's byte range, the settings (those an index compares, and the input's), the
//! version, and what the corpus passes learned (templates and document frequencies). A
//! rerun with the same inputs and settings
//! finds the committed units of its plan, replays them in place of reading and signing, and
//! reads the rest; anything that differs gives another name, which is read. A file with no
//! version (a stream) is never kept. What the corpus passes learned is kept beside the
//! units ([`LearnedState`]), so that a rerun skips them, with an index too. The work area is
//! removed once `_SUCCESS` is written.
//!
//! Keeping units is best effort: a unit that cannot be written is left out with a warning,
//! and the run goes on; a committed unit that cannot be read fails the run, naming it, and
//! is removed, so that the next rerun reads its file.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use neardup_io::destination::OutFile;
use neardup_io::index::Frequencies;
use neardup_io::{InputFile, RejectedRecord};
use neardup_text::Boilerplate;
use serde::{Deserialize, Serialize};

use neardup_core::hash::{
    CHECKSUM_BYTES, ChecksumWriter, append_checksum, check_stream, checked_body,
};

use crate::input::sign::IdfWeights;
use crate::input::source::{ReadPlan, ReadTotals};
use crate::reporting::stats::BoilerplateStats;
use crate::settings::config::{IndexPlan, JobConfig};
use crate::storage::frames::{FrameReader, write_frame};
use crate::storage::records::SignedDoc;

/// The work area's folder in the output.
pub const WORK_FOLDER: &str = "_work";

/// The units' folder in the work area.
const UNITS: &str = "units";

/// The tasks' reports in the work area (`neardup sign`).
pub(crate) const TASKS: &str = "tasks";

/// The unit files' format: part of every unit's name, so a changed format is never read
/// (4: signed documents carry their paragraphs; 5: and the characters they are a share of).
const UNIT_FORMAT: u32 = 5;

/// What one signed record of a unit, or its end, is in a unit file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum UnitFrame {
    /// A record as signing gave it: a signed document or a reject.
    Signed(Result<SignedDoc, RejectedRecord>),
    /// The unit's end: what reading counted for it.
    End(UnitEnd),
}

/// The end of a unit as its reader saw it: how many records it gave and what it counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct UnitEnd {
    /// The file's index in the input list.
    pub(crate) file: u32,
    /// Records read (every one is signed or rejected once).
    pub(crate) records: u64,
    /// What reading counted: bytes, records, skipped web-archive records, zero padding.
    pub(crate) totals: ReadTotals,
    /// Boilerplate left out of the unit's pages.
    pub(crate) boilerplate: BoilerplateStats,
}

impl UnitEnd {
    /// The end of the unit of `file`, read whole: reading counted `read` for it, and left
    /// `boilerplate` out of its pages.
    pub(crate) fn read(file: u32, read: &ReadTotals, boilerplate: BoilerplateStats) -> UnitEnd {
        UnitEnd { file, records: read.records, totals: read.clone(), boilerplate }
    }
}

/// The units of one worker: their names, and which of them an earlier run committed.
#[derive(Clone, Debug, Default)]
pub(crate) struct WorkArea {
    /// `OUTPUT/_work/units`.
    dir: PathBuf,
    /// Each file's unit name, for the files this worker reads that can be kept.
    names: BTreeMap<u32, String>,
    /// The names of this worker's units that are committed.
    committed: BTreeSet<String>,
}

impl WorkArea {
    /// The units of the worker reading by `plan`, after the corpus passes learned what
    /// `learned` digests (see [`learned_digest`]). A work area that cannot be listed is
    /// taken as empty (with a warning): its units are read again.
    pub(crate) fn open(job: &JobConfig, plan: &ReadPlan, learned: u64) -> WorkArea {
        let dir = units_dir(&job.output);
        let settings = settings_digest(job, plan.options.max_record_bytes, learned);
        let names: BTreeMap<u32, String> = plan
            .files(job)
            .filter_map(|(f, file, range)| unit_name(settings, file, range).map(|n| (f, n)))
            .collect();
        let listed = match neardup_io::destination::names_in(&dir) {
            Ok(listed) => listed,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot list the work area: its units are read again");
                Vec::new()
            }
        };
        let wanted: BTreeSet<&String> = names.values().collect();
        // A unit whose checksum fails is never replayed: it is removed, and its file read.
        let committed = listed
            .into_iter()
            .filter(|n| wanted.contains(n))
            .filter(|name| {
                let path = dir.join(name);
                let Err(why) = verify(&path) else { return true };
                let _ = neardup_io::destination::remove_file(&path);
                tracing::warn!(unit = %path.display(), "a unit of the work area is damaged ({why}): it was removed, and its input is read again");
                false
            })
            .collect();
        WorkArea { dir, names, committed }
    }

    /// The committed unit of file `file`, if any: its path.
    pub(crate) fn committed(&self, file: u32) -> Option<PathBuf> {
        let name = self.names.get(&file)?;
        self.committed.contains(name).then(|| self.dir.join(name))
    }

    /// Where file `file`'s unit is written, when it can be kept.
    pub(crate) fn path(&self, file: u32) -> Option<PathBuf> {
        self.names.get(&file).map(|name| self.dir.join(name))
    }
}

/// `OUTPUT/_work/units`.
pub(crate) fn units_dir(output: &Path) -> PathBuf {
    output.join(WORK_FOLDER).join(UNITS)
}

/// A digest of what the corpus passes learned, which signatures depend on: the template
/// lines left out and the document frequencies' counts.
pub(crate) fn learned_digest(
    boilerplate: Option<&[u64]>,
    frequencies: Option<(&[u32], u64)>,
) -> u64 {
    let mut bytes = Vec::new();
    if let Some(entries) = boilerplate {
        bytes.extend_from_slice(b"boilerplate");
        bytes.extend(entries.iter().flat_map(|e| e.to_le_bytes()));
    }
    if let Some((counts, documents)) = frequencies {
        bytes.extend_from_slice(b"frequencies");
        bytes.extend(counts.iter().flat_map(|c| c.to_le_bytes()));
        bytes.extend(documents.to_le_bytes());
    }
    neardup_core::hash::hash_bytes(&bytes, 0)
}

/// A digest of the settings and the learned state every unit of a run reading records of
/// at most `max_record_bytes` shares.
pub(crate) fn settings_digest(job: &JobConfig, max_record_bytes: u64, learned: u64) -> u64 {
    let text = settings_text(job, max_record_bytes);
    neardup_core::hash::hash_bytes(format!("{text}\nlearned {learned:016x}").as_bytes(), 0)
}

/// What the records read, and their signatures, depend on besides the inputs: the unit
/// format, the version, the settings an index compares, the input's, and the record limit.
fn settings_text(job: &JobConfig, max_record_bytes: u64) -> String {
    let mut text = format!(
        "format {UNIT_FORMAT}\nneardup {}\nrecord limit {max_record_bytes}\n",
        env!("CARGO_PKG_VERSION")
    );
    for (key, value) in job.index_settings() {
        text.push_str(&format!("{key} = {value}\n"));
    }
    // Paragraphs are signed only with paragraph-level dedup on, and cut by their minimum
    // length (the share above which a document is removed is decided later).
    let paragraphs = &job.spec.paragraphs;
    text.push_str(&format!("paragraphs {} {}\n", paragraphs.enabled, paragraphs.min_chars));
    text + &serde_json::to_string(&job.spec.input).expect("the input settings serialise")
}

/// The name of the unit of `file` (of `range`, when the worker reads a byte range of it),
/// `None` for a file with no version to tell a changed file by.
fn unit_name(settings: u64, file: &InputFile, range: Option<(u64, u64, u64)>) -> Option<String> {
    let version = file.version.as_deref()?;
    let path = neardup_io::resolved_path(&file.path);
    let (start, end, lines_before) = range.unwrap_or((0, file.bytes, 0));
    // The path as given too: generated ids (`path:record`) and reject details spell it so.
    let identity = format!(
        "{settings:016x}\n{}\n{}\n{}\n{version}\n{}\n{start} {end} {lines_before}",
        path.display(),
        file.path.display(),
        file.bytes,
        file.index
    );
    let digest = neardup_core::hash::hash_bytes(identity.as_bytes(), 0);
    Some(format!("{digest:016x}.unit"))
}

/// Removes the symbolic links of the work area of `output`: the folder itself, its
/// `units` and `tasks` folders, and their files and learned state. The work area is the
/// run's own: through a link, units would be written into (and replayed from) a folder
/// elsewhere and left there. A link is removed, never what it points to, with a warning;
/// the run then reads what the link held again.
pub(crate) fn unlink_symlinks(output: &Path) {
    let work = output.join(WORK_FOLDER);
    let unlink = |path: &Path| {
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            return false;
        }
        let target =
            std::fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string());
        match std::fs::remove_file(path) {
            Ok(()) => tracing::warn!(
                link = %path.display(),
                target = %target,
                "the work area held a symbolic link: removed the link (what it points to is untouched); what it held is read again"
            ),
            Err(e) => {
                tracing::warn!(link = %path.display(), error = %e, "cannot remove a symbolic link in the work area")
            }
        }
        true
    };
    if unlink(&work) {
        return;
    }
    for folder in [work.clone(), work.join(UNITS), work.join(TASKS)] {
        if folder != work && unlink(&folder) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            unlink(&entry.path());
        }
    }
}

/// Units committed by this process, for the failpoints that stop a run after the n-th.
static COMMITTED: AtomicU64 = AtomicU64::new(0);

/// Units written whole by this process, committed or about to be: each has its own number
/// for the failpoints that stop a run before the n-th is in place.
static FINISHED: AtomicU64 = AtomicU64::new(0);

/// A unit being written.
pub(crate) struct UnitWriter {
    path: PathBuf,
    out: ChecksumWriter<BufWriter<OutFile>>,
    scratch: Vec<u8>,
    /// Records written.
    pub(crate) records: u64,
    /// Bytes written.
    pub(crate) bytes: u64,
}

impl UnitWriter {
    /// Starts the unit at `path`.
    ///
    /// # Errors
    /// When the file or object cannot be made.
    pub(crate) fn create(path: PathBuf) -> std::io::Result<UnitWriter> {
        let out = BufWriter::with_capacity(1 << 16, OutFile::create_private(&path)?);
        let out = ChecksumWriter::new(out);
        Ok(UnitWriter { path, out, scratch: Vec::new(), records: 0, bytes: 0 })
    }

    /// Where the unit goes.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one signed record.
    ///
    /// # Errors
    /// When it cannot be written.
    pub(crate) fn write(
        &mut self,
        signed: &Result<SignedDoc, RejectedRecord>,
    ) -> std::io::Result<()> {
        // Framed by reference: the record is not cloned to be written.
        let frame = FrameRef::Signed(signed);
        self.bytes += write_frame(&mut self.out, &mut self.scratch, &frame)?;
        self.records += 1;
        Ok(())
    }

    /// Writes the end and makes the unit appear; returns the bytes written.
    ///
    /// # Errors
    /// When it cannot be written or committed.
    pub(crate) fn commit(mut self, end: &UnitEnd) -> std::io::Result<u64> {
        self.bytes += write_frame(&mut self.out, &mut self.scratch, &FrameRef::End(end))?;
        // The checksum of every byte before it ends the file (see `verify`).
        let out = self.out.finish()?;
        self.bytes += CHECKSUM_BYTES as u64;
        let out = out.into_inner().map_err(|e| e.into_error())?;
        // Written whole, not yet in place: a process stopped here leaves it half written.
        let n = FINISHED.fetch_add(1, Ordering::Relaxed) + 1;
        neardup_io::failpoint::crash(&format!("work.unit_unfinished.{n}"));
        out.commit_unsynced()?;
        let n = COMMITTED.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::debug!(unit = %self.path.display(), records = end.records, "unit kept");
        neardup_io::failpoint::crash(&format!("work.unit_committed.{n}"));
        Ok(self.bytes)
    }
}

/// [`UnitFrame`] by reference, serialised as it is.
#[derive(Serialize)]
enum FrameRef<'a> {
    Signed(&'a Result<SignedDoc, RejectedRecord>),
    End(&'a UnitEnd),
}

/// Reads a committed unit: every signed record in order, then its end. A unit in object
/// storage is streamed, with the store's retries, and never held whole.
///
/// # Errors
/// [`neardup_io::Error::Damaged`] naming the unit when it cannot be read whole; the unit
/// is removed then, so that a rerun reads its file.
pub(crate) fn replay(
    path: &Path,
    mut on_signed: impl FnMut(Result<SignedDoc, RejectedRecord>),
) -> Result<UnitEnd, neardup_io::Error> {
    let damaged = |detail: String| {
        let _ = neardup_io::destination::remove_file(path);
        let detail = format!(
            "a unit of the work area: {detail}; it was removed, so the next run reads its input again"
        );
        neardup_io::Error::Damaged { path: path.to_path_buf(), detail }
    };
    let mut reader = if neardup_io::remote::is_remote(path) {
        let stream = neardup_io::remote::RemoteReader::open(path)
            .map_err(|e| damaged(format!("cannot be read: {e}")))?;
        FrameReader::over(path, stream)
    } else {
        FrameReader::open(path).map_err(|e| damaged(e.source.to_string()))?
    };
    let mut end = None;
    let mut records = 0u64;
    while let Some(frame) = reader.next::<UnitFrame>() {
        match frame.map_err(|e| damaged(e.source.to_string()))? {
            UnitFrame::Signed(_) if end.is_some() => {
                return Err(damaged("records after its end".into()));
            }
            UnitFrame::Signed(signed) => {
                records += 1;
                on_signed(signed);
            }
            UnitFrame::End(e) => {
                // What follows is the checksum, which `verify` read.
                end = Some(e);
                break;
            }
        }
    }
    // A count that disagrees with the end (a unit a lost machine left torn) fails the run
    // as any damage does: what was replayed of it is never committed.
    if let Some(e) = end.as_ref().filter(|e| e.records != records) {
        return Err(damaged(format!("{records} records where its end counts {}", e.records)));
    }
    end.ok_or_else(|| damaged("ends before its last frame".into()))
}

/// Whether the unit at `path` is whole: the checksum that ends it is that of every byte
/// before it. The unit is read through once (streamed from a store), before any of it is
/// replayed, so that a damaged unit is read again from its input rather than replayed.
///
/// # Errors
/// Why it is not whole: it cannot be read, is shorter than a checksum, or its bytes do not
/// match it.
fn verify(path: &Path) -> Result<(), String> {
    let source: Box<dyn std::io::Read> = if neardup_io::remote::is_remote(path) {
        Box::new(neardup_io::remote::RemoteReader::open(path).map_err(|e| e.to_string())?)
    } else {
        Box::new(std::fs::File::open(path).map_err(|e| e.to_string())?)
    };
    check_stream(source)
}

/// Removes the work area of `output` (after `_SUCCESS`).
///
/// # Errors
/// What the system or the store reports.
pub(crate) fn remove(output: &Path) -> std::io::Result<()> {
    neardup_io::destination::remove_all(&output.join(WORK_FOLDER))
}

/// Removes the units a killed run left half written (local folders only: an upload that
/// never completed leaves no object), and any symbolic link in the work area (see
/// [`unlink_symlinks`]). Called before the workers start, by the process holding the
/// output's lock.
pub(crate) fn remove_unfinished(output: &Path) {
    let dir = units_dir(output);
    if neardup_io::remote::is_remote(&dir) {
        return;
    }
    unlink_symlinks(output);
    let Ok(names) = neardup_io::destination::names_in(&dir) else { return };
    for name in names.iter().filter(|n| n.starts_with('.') && n.ends_with(".inprogress")) {
        let _ = std::fs::remove_file(dir.join(name));
    }
}

/// What the corpus passes learned (templates and document frequencies), kept in the work
/// area so that a rerun skips the passes: `_work/learned-NAME.bin`, `NAME` a digest of the
/// settings, of every input's identity and, with an index, of the index as the run read
/// it and of its new generation's folder.
///
/// A run with an index also keeps what the passes add to its generation: the batch's own
/// document frequencies, and the count of the template sample's parts, which the passes
/// wrote into the generation's folder. A rerun replays the state only when those parts
/// are all there; the index lock then keeps them (the folder's other files go, as a failed
/// run's do) and the rerun commits them as its own.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct LearnedState {
    /// The boilerplate entries, when the job learns templates.
    boilerplate: Option<Vec<u64>>,
    /// Pages the templates were learned from.
    pages: u64,
    /// The document frequencies, when signing weighs by them (with an index, the batch's
    /// and the index's).
    frequencies: Option<Frequencies>,
    /// What a run with an index adds to its generation.
    generation: Option<KeptGeneration>,
}

/// What the corpus passes of a run with an index add to its generation.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct KeptGeneration {
    /// Parts of the template sample the passes wrote into the generation's folder (0 for
    /// a job that learns no templates).
    pub(crate) template_parts: u32,
    /// The batch's own document frequencies, committed with the generation.
    pub(crate) batch_frequencies: Option<Frequencies>,
}

impl LearnedState {
    /// What the passes learned, to keep.
    pub(crate) fn of(
        boilerplate: Option<&Boilerplate>,
        pages: u64,
        idf: Option<&IdfWeights>,
        generation: Option<KeptGeneration>,
    ) -> Self {
        let frequencies = idf.and_then(IdfWeights::frequencies);
        let boilerplate = boilerplate.map(|b| b.entries().to_vec());
        LearnedState { boilerplate, pages, frequencies, generation }
    }

    /// What an earlier run of `job` reading records of at most `max_record_bytes` kept, if
    /// it kept it, it reads whole and (with an index) the template sample it wrote into
    /// the generation's folder is all there.
    pub(crate) fn load(job: &JobConfig, max_record_bytes: u64) -> Option<LearnedState> {
        let (path, _) = learned_key(job, max_record_bytes)?;
        match neardup_io::destination::read_optional(&path) {
            Ok(Some(bytes)) if checked_body(&bytes).is_none() => {
                tracing::warn!(path = %path.display(), "the kept corpus statistics are damaged (their bytes do not match their checksum): the passes run again");
                None
            }
            Ok(Some(bytes)) => {
                match bincode::deserialize::<LearnedState>(&bytes[..bytes.len() - CHECKSUM_BYTES]) {
                    Ok(state) => match (&job.index, &state.generation) {
                        (None, None) => Some(state),
                        (Some(_), Some(g))
                            if sample_in_place(job, max_record_bytes, g.template_parts) =>
                        {
                            Some(state)
                        }
                        _ => {
                            tracing::info!(path = %path.display(), "the template sample of the index's new generation is not all there: the corpus passes run again");
                            None
                        }
                    },
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "the kept corpus statistics are damaged: the passes run again");
                        None
                    }
                }
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the kept corpus statistics: the passes run again");
                None
            }
        }
    }

    /// Keeps this state for a rerun of `job` reading records of at most `max_record_bytes`
    /// (best effort: a failure is a warning); with an index, first notes in the new
    /// generation's folder that its template sample is this state's. Whether it was kept.
    pub(crate) fn keep(&self, job: &JobConfig, max_record_bytes: u64) -> bool {
        let Some((path, digest)) = learned_key(job, max_record_bytes) else { return false };
        let note = match (&job.index, &self.generation) {
            (Some(plan), Some(g)) if g.template_parts > 0 => Some(sample_note(plan)),
            _ => None,
        };
        let mut bytes = bincode::serialize(self).expect("the learned state serialises");
        append_checksum(&mut bytes);
        let kept = note
            .iter()
            .try_for_each(|note| {
                neardup_io::write_atomically(note, format!("{digest:016x}").as_bytes())
            })
            .and_then(|()| neardup_io::write_atomically(&path, &bytes));
        if let Err(e) = &kept {
            tracing::warn!(path = %path.display(), error = %e, "cannot keep the corpus statistics in the work area");
        }
        kept.is_ok()
    }

    /// What a run with an index adds to its generation, when this state is of one.
    pub(crate) fn generation(&self) -> Option<&KeptGeneration> {
        self.generation.as_ref()
    }

    /// The boilerplate, the pages it was learned from, the document frequencies, and what
    /// a run with an index adds to its generation, as the passes gave them.
    pub(crate) fn restore(self, job: &JobConfig) -> Restored {
        let rule = &job.spec.boilerplate;
        let boilerplate = self.boilerplate.map(|e| Boilerplate::new(e, rule, job.spec.seed));
        let idf = self.frequencies.as_ref().map(IdfWeights::from_frequencies);
        Restored { boilerplate, pages: self.pages, idf, generation: self.generation }
    }
}

/// A [`LearnedState`] restored.
pub(crate) struct Restored {
    /// The boilerplate, when the job learns templates.
    pub(crate) boilerplate: Option<Boilerplate>,
    /// Pages the templates were learned from.
    pub(crate) pages: u64,
    /// The document frequencies, when signing weighs by them.
    pub(crate) idf: Option<IdfWeights>,
    /// What a run with an index adds to its generation.
    pub(crate) generation: Option<KeptGeneration>,
}

/// Where the corpus passes' state of `job` is kept, and the digest that names it: `None`
/// for a job without corpus passes or with an input of no version.
fn learned_key(job: &JobConfig, max_record_bytes: u64) -> Option<(PathBuf, u64)> {
    let passes = job.needs_boilerplate() || job.needs_corpus_idf();
    if !passes {
        return None;
    }
    let mut text = settings_text(job, max_record_bytes);
    for file in &job.inputs {
        let version = file.version.as_deref()?;
        let path = neardup_io::resolved_path(&file.path);
        text.push_str(&format!("\n{} {} {version}", path.display(), file.bytes));
    }
    // With an index, what the passes learn depends on the index as read (its samples and
    // frequencies), and its sample goes to the new generation's folder.
    if let Some(plan) = &job.index {
        let read = serde_json::to_string(&plan.read).expect("generations serialise");
        let dir = neardup_io::resolved_path(&plan.dir);
        text.push_str(&format!("\nindex {} {} {read}", dir.display(), plan.folder));
    }
    let digest = neardup_core::hash::hash_bytes(text.as_bytes(), 0);
    let path = job.output.join(WORK_FOLDER).join(format!("learned-{digest:016x}.bin"));
    Some((path, digest))
}

/// Whether `job` keeps what its corpus passes learn, reading records of at most
/// `max_record_bytes` (it has passes, and every input a version).
pub(crate) fn keeps_learned(job: &JobConfig, max_record_bytes: u64) -> bool {
    learned_key(job, max_record_bytes).is_some()
}

/// Where the note of the run whose sample is in `plan`'s new generation's folder is.
fn sample_note(plan: &IndexPlan) -> PathBuf {
    plan.new_generation_dir().join(neardup_io::index::TEMPLATE_SAMPLE_NOTE)
}

/// Whether the template sample that the kept state of `job`'s corpus passes counts
/// (`parts` parts) is in the index's new generation's folder, all of it and written with
/// that state (its note names the state's digest).
pub(crate) fn sample_in_place(job: &JobConfig, max_record_bytes: u64, parts: u32) -> bool {
    let (Some(plan), Some((_, digest))) = (&job.index, learned_key(job, max_record_bytes)) else {
        return false;
    };
    if parts == 0 {
        return true;
    }
    let note = neardup_io::destination::read_optional(&sample_note(plan));
    if !matches!(note, Ok(Some(text)) if text == format!("{digest:016x}").as_bytes()) {
        return false;
    }
    let dir = plan.new_generation_dir().join("templates");
    let Ok(names) = neardup_io::destination::names_in(&dir) else { return false };
    let names: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    (0..parts).all(|part| {
        let path = neardup_io::index::template_part_path(&plan.new_generation_dir(), part);
        path.file_name().and_then(|n| n.to_str()).is_some_and(|n| names.contains(n))
    })
}

/// Removes the note of the run whose sample is in `plan`'s new generation's folder (at
/// the commit: a committed generation has none). Best effort.
pub(crate) fn remove_sample_note(plan: &IndexPlan) {
    let _ = neardup_io::destination::remove_file(&sample_note(plan));
}

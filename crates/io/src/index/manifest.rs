//! The manifest (`index.json`): the index's settings and committed generations, the
//! index lock, and the segment folders the manifest does not list.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, FolderLock, Result, TakenOver};

use super::parts::damaged;

/// Version of the index layout; an index of another version is refused.
pub const FORMAT: u32 = 3;
/// The manifest's file name.
pub const MANIFEST: &str = "index.json";
/// Key partitions of a new index.
pub const DEFAULT_PARTITIONS: u32 = 64;

/// One run's contribution to the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    /// 1, 2, ...: the order of runs; earlier generations' documents are "earlier".
    pub number: u32,
    /// Its folder in the index.
    pub folder: String,
    /// The run's name (the job's output folder unless given).
    pub run: String,
    /// The run's output folder, as an absolute path: a rerun of the same run (same name,
    /// same output) replaces the generation.
    #[serde(default)]
    pub output: String,
    /// When the run finished, seconds since the Unix epoch.
    pub created_unix: u64,
    /// Documents indexed (representatives of their texts).
    pub documents: u64,
    /// Key rows written.
    pub keys: u64,
    /// Parts of `docs/` of its segment: a document's part is [`doc_part_of`](super::doc_part_of) its `doc_id`.
    pub doc_parts: u32,
    /// `doc_id`s taken out by [`forget`](fn@super::forget) whose key rows are still in its segment (they
    /// match nothing; compaction drops them), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forgotten: Vec<u64>,
}

/// A folder of the index and the generations whose rows it holds: one generation as a run
/// wrote it, or several merged by [`compact`](fn@super::compact).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Its folder in the index.
    pub folder: String,
    /// Its generations, oldest first; the first names the segment.
    pub generations: Vec<u32>,
    /// Parts of its `docs/`.
    pub doc_parts: u32,
}

impl Segment {
    /// The number of its first generation, which names it among the segments.
    pub fn first(&self) -> u32 {
        self.generations[0]
    }
}

/// The manifest: what the index was built with, and its generations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`] of the writer.
    pub format: u32,
    /// The neardup version that last wrote it.
    pub neardup_version: String,
    /// Every setting signatures and bucket keys depend on, by name; a run must have the
    /// same values to use the index.
    pub settings: BTreeMap<String, String>,
    /// Key partitions.
    pub partitions: u32,
    /// Committed generations, oldest first.
    pub generations: Vec<Generation>,
}

impl Manifest {
    /// A manifest for a new, empty index.
    pub fn new(settings: BTreeMap<String, String>) -> Self {
        Manifest {
            format: FORMAT,
            neardup_version: env!("CARGO_PKG_VERSION").to_string(),
            settings,
            partitions: DEFAULT_PARTITIONS,
            generations: Vec::new(),
        }
    }

    /// The manifest of the index in `dir`, or `None` when `dir` does not exist or holds no
    /// manifest (an index yet to be made).
    ///
    /// # Errors
    /// [`Error::ReadFile`] when it cannot be read, [`Error::Damaged`] when it does not
    /// parse or has another format.
    pub fn load(dir: &Path) -> Result<Option<Manifest>> {
        let path = dir.join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(Error::ReadFile { path, source }),
        };
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Damaged { path: path.clone(), detail: e.to_string() })?;
        if manifest.format != FORMAT {
            return Err(Error::Damaged {
                path,
                detail: format!(
                    "index format {} (this neardup reads format {FORMAT})",
                    manifest.format
                ),
            });
        }
        if manifest.partitions == 0 {
            return Err(Error::Damaged { path, detail: "0 key partitions".into() });
        }
        Ok(Some(manifest))
    }

    /// Writes the manifest atomically and durably: a hidden file, synced, renamed over the
    /// old one.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let mut json = serde_json::to_vec_pretty(self).expect("a manifest serialises");
        json.push(b'\n');
        crate::write_atomically(&dir.join(MANIFEST), &json)
    }

    /// Checks that a run with `settings` may use this index: every setting must be equal.
    ///
    /// # Errors
    /// [`Error::IncompatibleIndex`] naming the settings that differ.
    pub fn check(&self, dir: &Path, settings: &BTreeMap<String, String>) -> Result<()> {
        let names: std::collections::BTreeSet<&String> =
            self.settings.keys().chain(settings.keys()).collect();
        let show = |v: Option<&String>| v.map_or("(not set)".to_string(), Clone::clone);
        let differences: Vec<[String; 3]> = names
            .into_iter()
            .filter(|n| self.settings.get(*n) != settings.get(*n))
            .map(|n| [n.clone(), show(self.settings.get(n)), show(settings.get(n))])
            .collect();
        if !differences.is_empty() {
            return Err(Error::IncompatibleIndex { path: dir.to_path_buf(), differences });
        }
        Ok(())
    }

    /// The number the next generation gets.
    pub fn next_generation(&self) -> u32 {
        self.generations.last().map_or(1, |g| g.number + 1)
    }

    /// The generation numbered `number`.
    pub fn generation(&self, number: u32) -> Option<&Generation> {
        self.generations.iter().find(|g| g.number == number)
    }

    /// The segments, in the order of their generations: consecutive generations that share
    /// a folder form one segment.
    pub fn segments(&self) -> Vec<Segment> {
        let mut segments: Vec<Segment> = Vec::new();
        for g in &self.generations {
            match segments.last_mut() {
                Some(s) if s.folder == g.folder => s.generations.push(g.number),
                _ => segments.push(Segment {
                    folder: g.folder.clone(),
                    generations: vec![g.number],
                    doc_parts: g.doc_parts,
                }),
            }
        }
        segments
    }
}

/// The lock of an index that a run or index command changes (`DIR/.lock`, see
/// [`FolderLock`]): one at a time.
#[derive(Debug)]
pub struct IndexLock {
    _lock: FolderLock,
    taken_over: Option<TakenOver>,
}

impl IndexLock {
    /// Takes the lock of the index in `dir` (making `dir`), and checks that the index still
    /// has the generations `read` (of the manifest the run was configured with).
    ///
    /// # Errors
    /// [`Error::Busy`] when another run holds it, [`Error::IndexChanged`] when a run
    /// added to the index since `read`, [`Error::Write`] when the file cannot be made.
    pub fn acquire(dir: &Path, read: &[Generation]) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let (lock, taken_over) = FolderLock::acquire(&dir.join(".lock"))?;
        let lock = IndexLock { _lock: lock, taken_over };
        let now = Manifest::load(dir)?.map(|m| m.generations).unwrap_or_default();
        if now != read {
            return Err(Error::IndexChanged { path: dir.to_path_buf() });
        }
        Ok(lock)
    }

    /// The lock of a run that had stopped, if this one took it over.
    pub fn taken_over(&self) -> Option<&TakenOver> {
        self.taken_over.as_ref()
    }
}

/// The folder name of generation `number` written by the run with `token`.
pub fn generation_folder(number: u32, token: &str) -> String {
    format!("gen-{number:06}-{token}")
}

/// The manifest of the index in `dir`, and its lock, for a command that changes it.
pub(super) fn open_to_change(dir: &Path) -> Result<(Manifest, IndexLock)> {
    let Some(manifest) = Manifest::load(dir)? else {
        return Err(damaged(&dir.join(MANIFEST), "no index here"));
    };
    let lock = IndexLock::acquire(dir, &manifest.generations)?;
    Ok((manifest, lock))
}

/// Removes the folders of `dir` named like segments that none of `segments` is.
/// Removes the segment folders (`gen-*`) of `dir` that `segments` do not list: what runs
/// that failed before their commit, or a compaction or replaced run killed after its
/// commit, left. Only for a holder of the index lock. Returns the folders removed.
///
/// # Errors
/// [`Error::ReadFile`] or [`Error::Write`] naming the folder.
pub fn remove_orphans(dir: &Path, segments: &[Segment]) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|source| Error::ReadFile { path: dir.to_path_buf(), source })?;
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::ReadFile { path: dir.to_path_buf(), source })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && name.starts_with("gen-") && !segments.iter().any(|s| s.folder == name) {
            let path = entry.path();
            std::fs::remove_dir_all(&path).map_err(|source| Error::Write { path, source })?;
            removed.push(name);
        }
    }
    removed.sort();
    Ok(removed)
}

/// Bytes of the files under `path`.
pub(super) fn folder_bytes(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

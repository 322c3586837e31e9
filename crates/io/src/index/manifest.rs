//! The manifest (`index.json`): the index's settings and committed generations, the
//! index lock, and the segment folders the manifest does not list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::lock::{FolderLock, TakenOver};

/// Version of the index layout; an index of another version is refused, but for those of
/// [`READ_FORMATS`].
pub const FORMAT: u32 = 5;
/// The oldest version read as [`FORMAT`]: generations of format 3 kept no template
/// statistics (`templates/`) and no document frequencies, so runs learn from the pages of
/// the generations written since; generations before format 5 kept no paragraphs, so runs
/// leave out only the paragraphs of generations written since. The next commit writes the
/// manifest as [`FORMAT`].
pub const MIGRATED_FORMAT: u32 = 3;
/// The formats read as [`FORMAT`] (with what their generations lack left empty).
pub const READ_FORMATS: std::ops::RangeInclusive<u32> = MIGRATED_FORMAT..=FORMAT;
/// The manifest's file name.
pub const MANIFEST: &str = "index.json";
/// A file beside `templates/` in a generation's folder, until the generation is committed:
/// which kept state of a run's corpus passes the sample belongs to (a digest), so that a
/// rerun replays that state only with the sample written with it.
pub const TEMPLATE_SAMPLE_NOTE: &str = "templates.learned";
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
    /// Parts of `templates/` of its segment (0: it kept no pages for template learning; an
    /// index of format 3 kept none).
    #[serde(default)]
    pub template_parts: u32,
    /// With paragraph-level dedup (`--paragraphs`): the first occurrences of paragraphs
    /// its run kept, rows of `paragraphs/` of its segment. `None`: the run was made without
    /// it (as every run before format 5), so later runs cannot leave out its paragraphs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paragraphs: Option<u64>,
    /// With paragraph-level dedup: the least length of the paragraphs it kept
    /// (`paragraphs.min_chars`). A later run with a lower one cannot leave out the shorter
    /// paragraphs of this run. `None` as well for runs before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paragraph_min_chars: Option<u32>,
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
        Ok(Self::load_versioned(dir)?.map(|(manifest, _)| manifest))
    }

    /// As [`Manifest::load`], with the version read, which a conditional commit
    /// ([`IndexLock::commit`]) expects to find.
    ///
    /// # Errors
    /// As [`Manifest::load`].
    pub fn load_versioned(dir: &Path) -> Result<Option<(Manifest, Version)>> {
        let path = dir.join(MANIFEST);
        let (bytes, version) = match read_versioned(&path) {
            Ok(Some(read)) => read,
            Ok(None) => return Ok(None),
            Err(source) => return Err(Error::ReadFile { path, source }),
        };
        let mut manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Damaged { path: path.clone(), detail: e.to_string() })?;
        if READ_FORMATS.contains(&manifest.format) {
            manifest.format = FORMAT;
        }
        if manifest.format != FORMAT {
            return Err(Error::Damaged {
                path,
                detail: format!(
                    "index format {} (this neardup reads formats {MIGRATED_FORMAT} to {FORMAT}; \
                     an index made by a later neardup needs that version)",
                    manifest.format
                ),
            });
        }
        if manifest.partitions == 0 {
            return Err(Error::Damaged { path, detail: "0 key partitions".into() });
        }
        Ok(Some((manifest, version)))
    }

    /// Writes the manifest atomically and durably: a hidden file, synced, renamed over the
    /// old one.
    ///
    /// # Errors
    /// [`Error::Write`].
    pub fn save(&self, dir: &Path) -> Result<()> {
        crate::destination::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        crate::destination::write_atomically(&dir.join(MANIFEST), &self.to_json())
    }

    fn to_json(&self) -> Vec<u8> {
        let mut json = serde_json::to_vec_pretty(self).expect("a manifest serialises");
        json.push(b'\n');
        json
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

/// What a manifest was when read: its ETag in object storage, a hash of its bytes on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version(String);

/// The manifest's bytes at `path` and their version, or `None` when there is none.
fn read_versioned(path: &Path) -> std::io::Result<Option<(Vec<u8>, Version)>> {
    if crate::remote::is_remote(path) {
        return Ok(crate::remote::write::get(path)?.map(|(bytes, e_tag)| {
            // A store without ETags is versioned by content, as a disk is.
            let version = e_tag.unwrap_or_else(|| content_version(&bytes));
            (bytes.to_vec(), Version(version))
        }));
    }
    Ok(crate::destination::read_optional(path)?.map(|bytes| {
        let version = Version(content_version(&bytes));
        (bytes, version)
    }))
}

fn content_version(bytes: &[u8]) -> String {
    format!("{:016x}", neardup_core::hash::hash_bytes(bytes, 0))
}

/// The lock of an index that a run or index command changes (`DIR/.lock`, see
/// [`FolderLock`]): one at a time. Its holder commits a new manifest with
/// [`IndexLock::commit`], which succeeds only if the manifest is still the one read when the
/// lock was taken (or last committed): in object storage a conditional write (create if
/// absent, or replace if its ETag matches), so even a holder whose lock was wrongly taken
/// over cannot commit over another run's generation.
#[derive(Debug)]
pub struct IndexLock {
    _lock: FolderLock,
    taken_over: Option<TakenOver>,
    dir: std::path::PathBuf,
    /// The manifest's version when read, `None` for an index yet to be made.
    version: Option<Version>,
}

impl IndexLock {
    /// Takes the lock of the index in `dir` (making `dir`), and checks that the index still
    /// has the generations `read` (of the manifest the run was configured with).
    ///
    /// # Errors
    /// [`Error::Busy`] when another run holds it, [`Error::IndexChanged`] when a run
    /// added to the index since `read`, [`Error::Write`] when the file cannot be made.
    pub fn acquire(dir: &Path, read: &[Generation]) -> Result<Self> {
        crate::destination::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let (lock, taken_over) = FolderLock::acquire(&dir.join(".lock"))?;
        let (now, version) = match Manifest::load_versioned(dir)? {
            Some((m, version)) => (m.generations, Some(version)),
            None => (Vec::new(), None),
        };
        if now != read {
            return Err(Error::IndexChanged { path: dir.to_path_buf() });
        }
        Ok(IndexLock { _lock: lock, taken_over, dir: dir.to_path_buf(), version })
    }

    /// Writes `manifest` as the index's new manifest, if the one there is still the one
    /// this lock read (see [`IndexLock`]).
    ///
    /// # Errors
    /// [`Error::LockLost`] when another run took the lock over, [`Error::IndexChanged`]
    /// when another run wrote the manifest meanwhile; [`Error::Write`] when it cannot be
    /// written.
    pub fn commit(&mut self, manifest: &Manifest) -> Result<()> {
        self._lock.ensure_held()?;
        let path = self.dir.join(MANIFEST);
        let json = manifest.to_json();
        let changed = || Error::IndexChanged { path: self.dir.clone() };
        if crate::remote::is_remote(&path) {
            use crate::remote::write::{Condition, put_if};
            let condition = match &self.version {
                None => Condition::Absent,
                Some(Version(e_tag)) => Condition::Unchanged(e_tag.clone()),
            };
            let e_tag = match put_if(&path, json.clone(), &condition) {
                Ok(e_tag) => e_tag,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(changed()),
                Err(source) => return Err(Error::Write { path, source }),
            };
            self.version = Some(Version(e_tag.unwrap_or_else(|| content_version(&json))));
            return Ok(());
        }
        // On disk the lock file guards the manifest; the check catches a holder whose lock
        // was taken over.
        let now = read_versioned(&path)
            .map_err(|source| Error::ReadFile { path: path.clone(), source })?;
        if now.map(|(_, v)| v) != self.version {
            return Err(changed());
        }
        manifest.save(&self.dir)?;
        self.version = Some(Version(content_version(&json)));
        Ok(())
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
        return Err(Error::NoIndex { path: dir.to_path_buf() });
    };
    let lock = IndexLock::acquire(dir, &manifest.generations)?;
    Ok((manifest, lock))
}

/// Removes the segment folders (`gen-*`) of `dir` that `segments` do not list: what runs
/// that failed before their commit, or a compaction or replaced run killed after its
/// commit, left. Only for a holder of the index lock. Returns the folders removed.
///
/// Of the folder `keep_templates_of` (a failed run's, whose rerun replays what its corpus
/// passes learned), only the complete parts of `templates/` stay: the rerun commits them
/// as its own.
///
/// # Errors
/// [`Error::ReadFile`] or [`Error::Write`] naming the folder.
pub fn remove_orphans(
    dir: &Path,
    segments: &[Segment],
    keep_templates_of: Option<&str>,
) -> Result<Vec<String>> {
    let names = crate::destination::names_in(dir)
        .map_err(|source| Error::ReadFile { path: dir.to_path_buf(), source })?;
    let folders: std::collections::BTreeSet<String> = names
        .iter()
        .filter_map(|name| {
            // A local folder's entry, or the first segment of an object's relative key.
            let (folder, below) =
                name.split_once('/').map_or((name.as_str(), None), |(f, r)| (f, Some(r)));
            let is_dir = below.is_some() || dir.join(folder).is_dir();
            (is_dir && folder.starts_with("gen-")).then(|| folder.to_string())
        })
        .collect();
    let mut removed = Vec::new();
    for name in folders {
        if keep_templates_of == Some(name.as_str()) {
            remove_all_but_templates(&dir.join(&name))?;
        } else if !segments.iter().any(|s| s.folder == name) {
            let path = dir.join(&name);
            crate::destination::remove_all(&path)
                .map_err(|source| Error::Write { path, source })?;
            removed.push(name);
        }
    }
    Ok(removed)
}

/// Removes everything in the segment folder `folder` but the complete parts of its
/// `templates/` and the note of the run that wrote them ([`TEMPLATE_SAMPLE_NOTE`]): a
/// local folder's hidden files (parts half written) go too.
///
/// # Errors
/// [`Error::ReadFile`] or [`Error::Write`] naming the folder or file.
pub fn remove_all_but_templates(folder: &Path) -> Result<()> {
    let write = |path: PathBuf| move |source| Error::Write { path, source };
    let names = crate::destination::names_in(folder)
        .map_err(|source| Error::ReadFile { path: folder.to_path_buf(), source })?;
    let kept = |name: &str| name == TEMPLATE_SAMPLE_NOTE || name == "templates";
    if crate::remote::is_remote(folder) {
        // Object keys below the folder: every one outside `templates/` goes.
        for name in names.iter().filter(|n| !kept(n.split_once('/').map_or(n.as_str(), |(t, _)| t)))
        {
            let path = folder.join(name);
            crate::destination::remove_file(&path).map_err(write(path.clone()))?;
        }
        return Ok(());
    }
    for name in names.iter().filter(|n| !kept(n)) {
        let path = folder.join(name);
        let removed = match path.is_dir() {
            true => crate::destination::remove_all(&path),
            false => crate::destination::remove_file(&path),
        };
        removed.map_err(write(path.clone()))?;
    }
    let templates = folder.join("templates");
    let names = crate::destination::names_in(&templates)
        .map_err(|source| Error::ReadFile { path: templates.clone(), source })?;
    for hidden in names.iter().filter(|n| n.starts_with('.')) {
        let path = templates.join(hidden);
        crate::destination::remove_file(&path).map_err(write(path.clone()))?;
    }
    Ok(())
}

/// Bytes of the files (or objects) under `path`.
pub(super) fn folder_bytes(path: &Path) -> u64 {
    if crate::remote::is_remote(path) {
        return crate::remote::list(path).map_or(0, |objects| objects.iter().map(|o| o.size).sum());
    }
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

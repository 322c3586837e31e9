//! Input discovery: paths and folders become a sorted list of input files, whose positions
//! are the file part of every [`DocId`](neardup_core::DocId).

use std::path::{Path, PathBuf};

use neardup_core::DocId;
use serde::{Deserialize, Serialize};

use crate::decompress::{Compression, decompressed};
use crate::error::{Error, Result};

/// The format of an input file, from its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// One JSON object per line.
    Jsonl(Compression),
    /// Apache Parquet.
    Parquet,
    /// WARC or WET web archive.
    Warc(Compression),
}

impl Format {
    /// The format a file name implies, or `None` for unsupported names. `.json` counts as
    /// JSON Lines here, for a file named directly.
    pub fn of(path: &Path) -> Option<Self> {
        Self::of_name(path, &["jsonl", "ndjson", "json"])
    }

    /// The format of a file found inside a folder: as [`Format::of`], except that `.json`
    /// files (often manifests or configuration, not JSON Lines) are not taken.
    pub fn of_listed(path: &Path) -> Option<Self> {
        Self::of_name(path, &["jsonl", "ndjson"])
    }

    fn of_name(path: &Path, json_extensions: &[&str]) -> Option<Self> {
        // Names need not be UTF-8 (Linux allows any bytes): the extension decides.
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let jsonl =
            |rest: &str| json_extensions.iter().any(|ext| rest.ends_with(&format!(".{ext}")));
        let warc = |rest: &str| rest.ends_with(".warc") || rest.ends_with(".wet");
        if name.ends_with(".parquet") {
            Some(Format::Parquet)
        } else if warc(&name) {
            Some(Format::Warc(Compression::None))
        } else if name.strip_suffix(".gz").is_some_and(warc) {
            Some(Format::Warc(Compression::Gzip))
        } else if name.strip_suffix(".zst").is_some_and(warc) {
            Some(Format::Warc(Compression::Zstd))
        } else if let Some(rest) = name.strip_suffix(".gz") {
            jsonl(rest).then_some(Format::Jsonl(Compression::Gzip))
        } else if let Some(rest) = name.strip_suffix(".zst") {
            jsonl(rest).then_some(Format::Jsonl(Compression::Zstd))
        } else {
            jsonl(&name).then_some(Format::Jsonl(Compression::None))
        }
    }
}

/// One input file and its position in the sorted input list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFile {
    /// Position in the sorted input list: the file part of its documents' `DocId`s.
    pub index: u32,
    /// The path as discovered.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// Size in bytes when listed.
    pub bytes: u64,
    /// Which version of it was listed: a local file's modification time (nanoseconds since
    /// the Unix epoch), an object's ETag; `None` where there is none. With `bytes`, what
    /// [`check_unchanged`] compares.
    #[serde(default)]
    pub version: Option<String>,
}

impl InputFile {
    /// The ETag an object was listed with, which every read of it must match (a weak one,
    /// `W/"..."`, never matches a condition, and pins nothing).
    pub(crate) fn remote_version(&self) -> Option<&str> {
        let version = self.version.as_deref().filter(|v| !v.starts_with("W/"));
        version.filter(|_| crate::remote::is_remote(&self.path))
    }
}

/// The modification time of a local file, in nanoseconds since the Unix epoch.
fn modified_ns(meta: &std::fs::Metadata) -> Option<String> {
    let since = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(since.as_nanos().to_string())
}

/// Checks that a local input still has the size and modification time it was listed
/// with: a file written, truncated or replaced while a run reads it was read in part, or
/// mixed, and the run must not go on as if it had read it whole. Objects pass without a
/// request: every read of one is pinned to the ETag it was listed with, and fails when the
/// object changed. Pipes pass: they have no size, and are written as they are read.
///
/// # Errors
/// [`Error::InputChanged`] naming the file and what changed; [`Error::Open`] when it is gone.
pub fn check_unchanged(file: &InputFile) -> Result<()> {
    if crate::remote::is_remote(&file.path) {
        return Ok(());
    }
    let meta = std::fs::metadata(&file.path)
        .map_err(|source| Error::Open { path: file.path.clone(), source })?;
    if !meta.is_file() {
        return Ok(());
    }
    let (bytes, version) = (meta.len(), modified_ns(&meta));
    let rewritten = file.version.is_some() && version != file.version;
    if bytes == file.bytes && !rewritten {
        return Ok(());
    }
    Err(Error::InputChanged {
        path: file.path.clone(),
        listed_bytes: file.bytes,
        bytes_now: bytes,
        rewritten,
    })
}

/// Expands `paths` (files or folders, searched recursively) into the sorted list of input
/// files. Inside folders, hidden files (`.` or `_` first), `.json` files, files of
/// unsupported formats and the folders in `exclude` (such as the job's own output folder)
/// are skipped; a file named directly must have a supported format.
///
/// # Errors
/// [`Error::Open`] for a path that does not exist or cannot be listed,
/// [`Error::UnsupportedFormat`] for a named file of unknown format, and [`Error::NoInput`]
/// when nothing is left.
pub fn discover(paths: &[PathBuf], exclude: &[PathBuf]) -> Result<Vec<InputFile>> {
    let exclude: Vec<PathBuf> =
        exclude.iter().filter_map(|p| std::fs::canonicalize(p).ok()).collect();
    let mut found: Vec<Listed> = Vec::new();
    let mut skipped: Vec<(PathBuf, String)> = Vec::new();
    for path in paths {
        if crate::remote::is_remote(path) {
            discover_remote(path, &mut found)?;
            continue;
        }
        let meta =
            std::fs::metadata(path).map_err(|source| Error::Open { path: path.clone(), source })?;
        if meta.is_dir() {
            walk(path, &exclude, &mut found, &mut skipped)?;
        } else {
            let format =
                Format::of(path).ok_or_else(|| Error::UnsupportedFormat { path: path.clone() })?;
            found.push((path.clone(), format, meta.len(), modified_ns(&meta)));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.dedup_by(|a, b| a.0 == b.0);
    if found.is_empty() {
        return Err(Error::NoInput { paths: paths.to_vec(), skipped });
    }
    if found.len() > DocId::MAX_FILES as usize + 1 {
        return Err(Error::TooManyFiles { files: found.len(), max: DocId::MAX_FILES as usize + 1 });
    }
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(index, (path, format, bytes, version))| InputFile {
            index: index as u32,
            path,
            format,
            bytes,
            version,
        })
        .collect())
}

/// A file found: its path, format, size and version.
type Listed = (PathBuf, Format, u64, Option<String>);

/// A remote address: an object of a supported format named directly, or else (object
/// storage only) a prefix listed like a folder, under the same skipping rules as [`walk`].
fn discover_remote(path: &Path, found: &mut Vec<Listed>) -> Result<()> {
    let open_err = |source| Error::Open { path: path.to_path_buf(), source };
    let named = Format::of(path).map(|format| (format, crate::remote::head(path)));
    match named {
        Some((format, Ok((size, e_tag)))) => {
            found.push((path.to_path_buf(), format, size, e_tag));
            return Ok(());
        }
        Some((_, Err(e))) if !crate::remote::is_listable(path) => return Err(open_err(e)),
        None if !crate::remote::is_listable(path) => {
            return Err(Error::UnsupportedFormat { path: path.to_path_buf() });
        }
        _ => {}
    }
    let before = found.len();
    let listed = crate::remote::list(path).map_err(open_err)?;
    if listed.is_empty() && named.is_none() {
        // As a missing folder: a mistyped prefix must not pass for an empty one.
        let missing =
            std::io::Error::new(std::io::ErrorKind::NotFound, "no objects under this prefix");
        return Err(open_err(missing));
    }
    // Prefixes neardup wrote (an earlier run's outputs or kept dataset, an index) are left
    // out, as folders are: they are told by the file list or manifest below them.
    let mut own: Vec<String> = Vec::new();
    for object in &listed {
        let folder = object.relative.rsplit_once('/').map(|(folder, _)| folder);
        let name = object.relative.rsplit('/').next().unwrap_or_default();
        let marker = name == crate::files::FILE_LIST || name == crate::index::manifest::MANIFEST;
        if let Some(folder) = folder.filter(|_| marker) {
            let base = path.display().to_string();
            let prefix = PathBuf::from(format!("{}/{folder}", base.trim_end_matches('/')));
            if let Some(role) = own_folder(&prefix) {
                skip_own_folder(&prefix, role);
                own.push(format!("{folder}/"));
            }
        }
    }
    for object in listed {
        let hidden = object.relative.split('/').any(|part| part.starts_with(['.', '_']));
        let in_own = own.iter().any(|folder| object.relative.starts_with(folder.as_str()));
        if !hidden
            && !in_own
            && let Some(format) = Format::of_listed(&object.address)
        {
            found.push((object.address, format, object.size, object.e_tag));
        }
    }
    if found.len() == before && named.is_some() {
        // Neither an object nor a prefix with inputs: say what reading it said.
        crate::remote::size(path).map_err(open_err)?;
    }
    Ok(())
}

/// Lists the inputs below `dir` into `found`, and what it passes over, with why, into
/// `skipped`.
fn walk(
    dir: &Path,
    exclude: &[PathBuf],
    found: &mut Vec<Listed>,
    skipped: &mut Vec<(PathBuf, String)>,
) -> Result<()> {
    if std::fs::canonicalize(dir).is_ok_and(|c| exclude.contains(&c)) {
        skipped.push((dir.to_path_buf(), "the run's own output folder".into()));
        return Ok(());
    }
    let entries =
        std::fs::read_dir(dir).map_err(|source| Error::Open { path: dir.to_path_buf(), source })?;
    for entry in entries {
        let entry = entry.map_err(|source| Error::Open { path: dir.to_path_buf(), source })?;
        let path = entry.path();
        let hidden =
            entry.file_name().as_encoded_bytes().first().is_some_and(|b| b"._".contains(b));
        if hidden {
            skipped.push((path, "hidden: its name starts with . or _".into()));
            continue;
        }
        let meta = std::fs::metadata(&path)
            .map_err(|source| Error::Open { path: path.clone(), source })?;
        if meta.is_dir() {
            if let Some(role) = own_folder(&path) {
                skip_own_folder(&path, role);
                skipped.push((path, "a folder neardup wrote".into()));
                continue;
            }
            walk(&path, exclude, found, skipped)?;
        } else if let Some(format) = Format::of_listed(&path) {
            found.push((path, format, meta.len(), modified_ns(&meta)));
        } else if Format::of(&path).is_some() {
            let why = "a .json file in a folder is not taken (often a manifest); name it on the \
                       command line, or .jsonl, to read it as JSON Lines";
            skipped.push((path, why.into()));
        } else {
            skipped.push((path, "not JSON Lines, a web archive or Parquet by its name".into()));
        }
    }
    Ok(())
}

/// What a folder found below an input folder holds when neardup wrote it: an earlier
/// run's outputs or kept dataset, or an index. A damaged list or manifest counts as none.
fn own_folder(dir: &Path) -> Option<crate::role::Role> {
    crate::files::folder_role(dir).ok().flatten()
}

fn skip_own_folder(dir: &Path, role: crate::role::Role) {
    tracing::warn!(
        "left out \"{}\", found inside an input folder: it holds {} (name it as an input to read it)",
        dir.display(),
        role.holds()
    );
}

/// The inputs a list names: one path or address per line (blank lines and lines starting
/// with `#` are ignored), read from a local file or a remote address and gunzipped when
/// its name ends in `.gz` (as Common Crawl publishes `wet.paths.gz`; zero bytes after its
/// last gzip member are ignored with a warning). With `base`, a line that is neither an
/// address nor an absolute path is taken relative to it.
///
/// # Errors
/// When the list cannot be read or decompressed.
pub fn input_list(list: &Path, base: Option<&str>) -> std::io::Result<Vec<PathBuf>> {
    use std::io::BufRead;
    let raw = std::io::BufReader::new(CountingFile::open(list, None)?);
    let gz = list.to_str().is_some_and(|n| n.to_ascii_lowercase().ends_with(".gz"));
    let compression = if gz { Compression::Gzip } else { Compression::None };
    let zeros = std::sync::Arc::default();
    let reader = std::io::BufReader::new(decompressed(raw, compression, &zeros)?);
    let mut paths = Vec::new();
    for line in reader.lines() {
        let line = line?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let relative = !line.contains("://") && !line.starts_with('/');
        paths.push(match base {
            Some(base) if relative && base.contains("://") => {
                PathBuf::from(format!("{}/{line}", base.trim_end_matches('/')))
            }
            Some(base) if relative => Path::new(base).join(line),
            _ => PathBuf::from(line),
        });
    }
    let zeros = zeros.load(std::sync::atomic::Ordering::Relaxed);
    if zeros > 0 {
        tracing::warn!(
            list = %list.display(),
            bytes = zeros,
            "zero bytes after the last gzip member ignored"
        );
    }
    Ok(paths)
}

/// Whether `path` can be read at an offset and has a size: a regular file or a remote
/// object (not a pipe, whose bytes are gone once read and which has no size to split).
pub fn is_regular(path: &Path) -> bool {
    crate::remote::is_remote(path) || std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// What a [`CountingFile`] reads: a local file or a remote object.
trait Source: std::io::Read + std::io::Seek + Send {}
impl<T: std::io::Read + std::io::Seek + Send> Source for T {}

/// An input file, local or remote ([`crate::remote`]), that adds the bytes read from it to
/// a shared counter (for progress displays).
pub(crate) struct CountingFile {
    file: Box<dyn Source>,
    counter: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

impl CountingFile {
    /// Opens `path`, counting into `counter` when given.
    pub(crate) fn open(
        path: &Path,
        counter: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> std::io::Result<Self> {
        Self::open_version(path, None, counter)
    }

    /// Opens an input file, an object's reads pinned to the version it was listed as.
    pub(crate) fn open_input(
        file: &InputFile,
        counter: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> std::io::Result<Self> {
        Self::open_version(&file.path, file.remote_version(), counter)
    }

    fn open_version(
        path: &Path,
        version: Option<&str>,
        counter: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    ) -> std::io::Result<Self> {
        let file: Box<dyn Source> = if crate::remote::is_remote(path) {
            Box::new(crate::remote::read::RemoteReader::open_version(path, version)?)
        } else {
            Box::new(std::fs::File::open(path)?)
        };
        Ok(CountingFile { file, counter })
    }
}

impl std::io::Seek for CountingFile {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

impl std::io::Read for CountingFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        if let Some(c) = &self.counter {
            c.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_lists_may_be_gzipped_and_relative_to_a_base() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let text = "# header\ncrawl/a.wet.gz\n\n/abs/b.jsonl\ns3://bucket/c.jsonl\n  d.parquet  \n";
        let plain = dir.path().join("list.txt");
        std::fs::write(&plain, text).unwrap();
        let gz = dir.path().join("paths.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        let names = |v: Vec<PathBuf>| v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
        let as_listed = ["crawl/a.wet.gz", "/abs/b.jsonl", "s3://bucket/c.jsonl", "d.parquet"];
        assert_eq!(names(input_list(&plain, None).unwrap()), as_listed);
        assert_eq!(names(input_list(&gz, None).unwrap()), as_listed);
        // Zero bytes after the last gzip member are ignored, as `gzip -d` does.
        let padded = dir.path().join("padded.gz");
        std::fs::write(&padded, [std::fs::read(&gz).unwrap(), vec![0; 512]].concat()).unwrap();
        assert_eq!(names(input_list(&padded, None).unwrap()), as_listed);
        assert_eq!(
            names(input_list(&gz, Some("https://data.commoncrawl.org/")).unwrap()),
            [
                "https://data.commoncrawl.org/crawl/a.wet.gz",
                "/abs/b.jsonl",
                "s3://bucket/c.jsonl",
                "https://data.commoncrawl.org/d.parquet"
            ]
        );
        assert_eq!(
            names(input_list(&plain, Some("/data")).unwrap()),
            ["/data/crawl/a.wet.gz", "/abs/b.jsonl", "s3://bucket/c.jsonl", "/data/d.parquet"]
        );
        assert!(input_list(&dir.path().join("missing.txt"), None).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_read() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9-latin1.jsonl");
        std::fs::write(dir.path().join(name), b"{}\n").unwrap();
        std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(b".h\xe9.jsonl")), b"").unwrap();
        let files = discover(&[dir.path().to_path_buf()], &[]).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path.file_name(), Some(name));
        assert_eq!(files[0].format, Format::Jsonl(Compression::None));
    }

    #[test]
    fn a_file_written_after_it_was_listed_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, b"{}\n{}\n").unwrap();
        let listed = discover(std::slice::from_ref(&path), &[]).unwrap().remove(0);
        assert!(listed.version.is_some());
        check_unchanged(&listed).unwrap();
        let changed = |what: &str| {
            let err = check_unchanged(&listed).unwrap_err();
            assert!(matches!(err, Error::InputChanged { .. }), "{what}: {err}");
            assert!(err.to_string().contains("a.jsonl"), "{err}");
            err.to_string()
        };
        std::fs::write(&path, b"{}\n").unwrap();
        assert!(changed("truncated").contains("6 bytes when listed, 3 bytes now"));
        // Rewritten to the same size: the modification time tells.
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_len(6).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        file.set_modified(later).unwrap();
        assert!(changed("rewritten").contains("modified since it was listed"));
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(check_unchanged(&listed), Err(Error::Open { .. })));
    }

    #[test]
    fn formats_from_names() {
        assert_eq!(Format::of(Path::new("a/b.jsonl")), Some(Format::Jsonl(Compression::None)));
        assert_eq!(Format::of(Path::new("b.JSONL.GZ")), Some(Format::Jsonl(Compression::Gzip)));
        assert_eq!(Format::of(Path::new("b.ndjson.zst")), Some(Format::Jsonl(Compression::Zstd)));
        assert_eq!(Format::of(Path::new("b.parquet")), Some(Format::Parquet));
        assert_eq!(Format::of(Path::new("c.warc.gz")), Some(Format::Warc(Compression::Gzip)));
        assert_eq!(Format::of(Path::new("c.warc.wet.gz")), Some(Format::Warc(Compression::Gzip)));
        assert_eq!(Format::of(Path::new("c.warc")), Some(Format::Warc(Compression::None)));
        assert_eq!(Format::of(Path::new("c.wet.zst")), Some(Format::Warc(Compression::Zstd)));
        assert_eq!(Format::of(Path::new("b.tar.gz")), None);
        assert_eq!(Format::of(Path::new("README.md")), None);
    }

    #[test]
    fn discovery_sorts_recurses_and_skips() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join("out/documents")).unwrap();
        for name in [
            "b.jsonl",
            "a.jsonl.gz",
            "sub/c.parquet",
            "notes.txt",
            ".hidden.jsonl",
            "_SUCCESS",
            "manifest.json",
            "out/documents/part-00000.parquet",
        ] {
            std::fs::write(root.join(name), b"").unwrap();
        }
        let out = [root.join("out")];
        let files = discover(&[root.to_path_buf(), root.join("b.jsonl")], &out).unwrap();
        let names: Vec<_> =
            files.iter().map(|f| f.path.strip_prefix(root).unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["a.jsonl.gz", "b.jsonl", "sub/c.parquet"]);
        assert_eq!(files.iter().map(|f| f.index).collect::<Vec<_>>(), [0, 1, 2]);
        // Files named in any order are read in path order.
        let named = |paths: &[&str]| {
            let paths: Vec<PathBuf> = paths.iter().map(|p| root.join(p)).collect();
            discover(&paths, &[]).unwrap().into_iter().map(|f| f.path).collect::<Vec<_>>()
        };
        assert_eq!(named(&["b.jsonl", "a.jsonl.gz"]), named(&["a.jsonl.gz", "b.jsonl"]));

        assert_eq!(
            discover(&[root.join("manifest.json")], &[]).unwrap().len(),
            1,
            "named directly"
        );
        let unsupported = discover(&[root.join("notes.txt")], &[]);
        assert!(matches!(unsupported, Err(Error::UnsupportedFormat { .. })));
        assert!(matches!(discover(&[root.join("missing")], &[]), Err(Error::Open { .. })));
        std::fs::create_dir(root.join("empty")).unwrap();
        assert!(matches!(discover(&[root.join("empty")], &[]), Err(Error::NoInput { .. })));
        // What was passed over is said, with why.
        let only = root.join("only-skipped");
        std::fs::create_dir_all(&only).unwrap();
        for name in ["records.json", "notes.txt", ".hidden.jsonl"] {
            std::fs::write(only.join(name), "{}\n").unwrap();
        }
        let said = discover(&[only], &[]).unwrap_err().to_string();
        assert!(said.contains("passed over 3:"), "{said}");
        assert!(said.contains("records.json\" (a .json file in a folder is not taken"), "{said}");
        assert!(said.contains("notes.txt\" (not JSON Lines"), "{said}");
        assert!(said.contains(".hidden.jsonl\" (hidden"), "{said}");
    }
}

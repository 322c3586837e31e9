//! Where outputs go: a local folder or an object-storage prefix (`s3://bucket/prefix`),
//! written through the same calls.
//!
//! A local file is written under its hidden temporary name (`.NAME.inprogress`), synced and
//! renamed when complete. An object is uploaded under its final name and appears only when
//! the upload completes (see [`crate::remote::Upload`]): there is no rename in object
//! storage, and no temporary object is ever left. Either way a reader never sees a part
//! half written.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::remote::write::Upload;
use crate::remote::{self, is_remote};

/// A file or object being written; it appears under its name on [`OutFile::commit`] and
/// not at all when dropped first.
pub enum OutFile {
    /// A local file, written under `tmp` and renamed to `path`.
    Local {
        /// The temporary file.
        file: File,
        /// Its hidden name.
        tmp: PathBuf,
        /// Its final name.
        path: PathBuf,
        /// Whether it was renamed into place.
        committed: bool,
        /// Whether `tmp` is this writer's own (see [`OutFile::create_private`]).
        private: bool,
    },
    /// An object being uploaded.
    Remote(Option<Upload>),
}

impl OutFile {
    /// Starts writing `path` (a local path or an object address). A local folder is made
    /// when missing.
    ///
    /// # Errors
    /// When the folder or file cannot be made, or the address is not writable.
    pub fn create(path: &Path) -> io::Result<Self> {
        if is_remote(path) {
            return Upload::create(path).map(|u| OutFile::Remote(Some(u)));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = temporary_name(path);
        let file = File::create(&tmp)?;
        Ok(OutFile::Local { file, tmp, path: path.to_path_buf(), committed: false, private: false })
    }

    /// As [`OutFile::create`], a local file written under a hidden name of this writer's
    /// own (`.NAME.PROCESS-N.inprogress`), for a file that two processes may write at once
    /// (with the same bytes): neither truncates the other's, and the last rename wins. A
    /// process killed meanwhile leaves its hidden file behind: [`remove_private_leftovers`]
    /// clears them once the file is in place. A writer whose hidden file was cleared so
    /// commits when the file is already in place (another wrote the same bytes).
    ///
    /// # Errors
    /// As [`OutFile::create`].
    pub fn create_private(path: &Path) -> io::Result<Self> {
        if is_remote(path) {
            return Self::create(path);
        }
        static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let own = path.with_file_name(format!("{name}.{}-{n}", std::process::id()));
        let mut file = Self::create(&own)?;
        if let OutFile::Local { path: target, private, .. } = &mut file {
            *target = path.to_path_buf();
            *private = true;
        }
        Ok(file)
    }

    /// Makes the file appear under its name: a local one is synced and renamed (durably), an
    /// upload is completed.
    ///
    /// # Errors
    /// What the system or the store reports.
    pub fn commit(self) -> io::Result<()> {
        self.commit_as(true)
    }

    /// As [`OutFile::commit`], but a local file is renamed without being synced first: for
    /// a file whose reader verifies it whole (a checksum at its end) and reads its source
    /// again when it is not, such as a unit of the work area. A process killed after the
    /// rename leaves it whole (the system holds what was written); only a crash of the
    /// system itself may leave it short or zeroed, which its reader then finds.
    ///
    /// # Errors
    /// What the system or the store reports.
    pub fn commit_unsynced(self) -> io::Result<()> {
        self.commit_as(false)
    }

    fn commit_as(mut self, sync: bool) -> io::Result<()> {
        match &mut self {
            OutFile::Local { file, tmp, path, committed, private } => {
                let renamed = if sync {
                    file.sync_all()?;
                    rename_durably(tmp, path)
                } else {
                    std::fs::rename(&*tmp, &*path)
                };
                match renamed {
                    // Another writer of the same bytes committed and cleared this one's file.
                    Err(e) if *private && e.kind() == io::ErrorKind::NotFound && path.exists() => {}
                    done => done?,
                }
                *committed = true;
                Ok(())
            }
            OutFile::Remote(upload) => upload.take().expect("committed once").finish().map(|_| ()),
        }
    }
}

impl Write for OutFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            OutFile::Local { file, .. } => file.write(data),
            OutFile::Remote(upload) => upload.as_mut().expect("not committed").write(data),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutFile::Local { file, .. } => file.flush(),
            OutFile::Remote(_) => Ok(()),
        }
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if let OutFile::Local { tmp, committed: false, .. } = self {
            // Not committed: leave no partial file behind (an upload aborts itself).
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Removes the hidden files that writers of `path` by [`OutFile::create_private`] left
/// behind (a process killed while writing it), once `path` is in place; nothing for an
/// address (an upload that never completed leaves no object). A writer still writing
/// commits all the same (see [`OutFile::create_private`]).
pub fn remove_private_leftovers(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return };
    if is_remote(path) || !path.exists() {
        return;
    }
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(names) = names_in(dir) else { return };
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    for leftover in names.iter().filter(|n| {
        // `.NAME.PROCESS-N.inprogress`
        n.strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".inprogress"))
            .and_then(|writer| writer.split_once('-'))
            .is_some_and(|(process, n)| number(process) && number(n))
    }) {
        let _ = std::fs::remove_file(dir.join(leftover));
    }
}

/// Makes the folder `dir`; object storage has no folders, so an address needs nothing.
///
/// # Errors
/// What the system reports.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if is_remote(dir) { Ok(()) } else { std::fs::create_dir_all(dir) }
}

/// The contents of `path`, or `None` when there is no such file or object.
///
/// # Errors
/// When it exists but cannot be read.
pub fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    if is_remote(path) {
        return Ok(remote::get(path)?.map(|(bytes, _)| bytes.to_vec()));
    }
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes the file or object at `path`; one that is not there is no error.
///
/// # Errors
/// What the system or the store reports.
pub fn remove_file(path: &Path) -> io::Result<()> {
    if is_remote(path) {
        return remote::delete(path);
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes the folder `dir` if it is empty (object storage has no folders: nothing to do).
pub fn remove_empty_dir(dir: &Path) {
    if !is_remote(dir) {
        // `remove_dir` never takes what is inside.
        let _ = std::fs::remove_dir(dir);
    }
}

/// The names in `dir` (files and folders directly in a local folder; for a prefix, the
/// object keys below it, relative to it), unsorted; nothing when it does not exist.
///
/// # Errors
/// When it exists but cannot be listed.
pub fn names_in(dir: &Path) -> io::Result<Vec<String>> {
    if is_remote(dir) {
        return Ok(remote::list(dir)?.into_iter().map(|o| o.relative).collect());
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    entries.map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned())).collect()
}

/// Removes the folder `dir` and everything in it (for a prefix: every object below it);
/// one that is not there is no error.
///
/// # Errors
/// What the system or the store reports.
pub fn remove_all(dir: &Path) -> io::Result<()> {
    if is_remote(dir) {
        for object in remote::list(dir)? {
            remote::delete(&object.address)?;
        }
        return Ok(());
    }
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The hidden name a file is written under until it is complete: `.NAME.inprogress`.
pub fn temporary_name(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    path.with_file_name(format!(".{name}.inprogress"))
}

/// Writes `bytes` to the temporary name of `path`, syncs it, renames it to `path` and syncs
/// the folder, so the file is durable under its name when this returns. An object (an
/// `s3://` address) is written in one PUT, which makes it appear whole.
///
/// # Errors
/// [`Error::Write`] naming the file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let write = || -> std::io::Result<()> {
        let mut file = OutFile::create(path)?;
        file.write_all(bytes)?;
        file.commit()
    };
    write().map_err(|source| Error::Write { path: path.to_path_buf(), source })
}

/// Renames a synced file `from` to `to` and syncs the folder of `to`, so that the rename
/// survives a power loss as well as a crash.
///
/// # Errors
/// What the system reports.
pub fn rename_durably(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::rename(from, to)?;
    match to.parent() {
        // A folder opened for reading can be synced on Unix; elsewhere this is best effort.
        Some(folder) if cfg!(unix) => {
            let folder = if folder.as_os_str().is_empty() { Path::new(".") } else { folder };
            std::fs::File::open(folder)?.sync_all()
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names = names_in(dir).unwrap();
        names.sort();
        names
    }

    #[test]
    fn an_unsynced_commit_puts_the_file_in_place_as_a_synced_one_does() {
        let dir = tempfile::tempdir().unwrap();
        for (name, synced) in [("synced.unit", true), ("unsynced.unit", false)] {
            let path = dir.path().join(name);
            let mut out = OutFile::create_private(&path).unwrap();
            out.write_all(b"whole").unwrap();
            if synced { out.commit() } else { out.commit_unsynced() }.unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        }
        assert_eq!(names(dir.path()), ["synced.unit", "unsynced.unit"], "no hidden file left");
    }

    #[test]
    fn a_killed_writers_file_is_cleared_once_the_file_is_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.unit");
        // What a process killed while writing left, and files that are not its leftovers.
        let others = [".a.unit.inprogress", ".a.unit.x-1.inprogress", ".ab.unit.7-0.inprogress"];
        for name in [".a.unit.4242-0.inprogress"].iter().chain(&others) {
            std::fs::write(dir.path().join(name), b"torn").unwrap();
        }
        remove_private_leftovers(&path);
        assert_eq!(names(dir.path()).len(), 4, "nothing goes before the file is in place");
        let mut out = OutFile::create_private(&path).unwrap();
        out.write_all(b"whole").unwrap();
        out.commit().unwrap();
        remove_private_leftovers(&path);
        let mut left: Vec<String> = others.iter().map(ToString::to_string).collect();
        left.push("a.unit".into());
        left.sort();
        assert_eq!(names(dir.path()), left);
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
    }

    #[test]
    fn a_writer_whose_file_was_cleared_commits_when_another_put_the_file_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.unit");
        let (mut first, mut second) =
            (OutFile::create_private(&path).unwrap(), OutFile::create_private(&path).unwrap());
        first.write_all(b"same").unwrap();
        second.write_all(b"sa").unwrap();
        first.commit().unwrap();
        remove_private_leftovers(&path);
        second.write_all(b"me").unwrap();
        second.commit().unwrap();
        assert_eq!(names(dir.path()), ["a.unit"]);
        assert_eq!(std::fs::read(&path).unwrap(), b"same");
        // A plain writer whose file went is an error, as before.
        let plain = OutFile::create(&path).unwrap();
        std::fs::remove_file(temporary_name(&path)).unwrap();
        assert!(plain.commit().is_err());
    }
}

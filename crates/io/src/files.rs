//! What a run writes into a folder, listed before it writes it, so that a later run removes
//! exactly that and nothing else.
//!
//! A run writes `_FILES.json` into its output folder (and into the `--write-kept` folder)
//! before anything else: the relative paths of every file it may write there. The next run
//! into the folder removes the files the earlier list names (and their hidden temporary
//! names, `.NAME.inprogress`), never other files, and refuses to start when a file it would
//! write, or a file in a folder it owns (`documents/`, `pairs/`), is not on the list: a
//! file neardup did not write, which the run would otherwise overwrite or mix into its
//! outputs.
//!
//! The list also says which [`Role`] the folder plays (a run's outputs, or a kept dataset),
//! and a run refuses a folder that holds another role's files, or an index: a run writing
//! its outputs into an earlier run's kept folder would otherwise remove the kept dataset as
//! "the earlier run's files", and the other way round.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::destination::{temporary_name, write_atomically};
use crate::error::{Error, Result};
use crate::role::Role;

/// The list's file name.
pub const FILE_LIST: &str = "_FILES.json";
/// The marker a run writes last into a folder, when everything in it is complete.
const SUCCESS_MARKER: &str = "_SUCCESS";

/// The files a run writes into one folder, relative to it (`/`-separated).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileList {
    /// The neardup version that wrote the list.
    pub neardup_version: String,
    /// The folder's role; lists of earlier versions have none (see [`FileList::role`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Relative paths, sorted.
    pub files: Vec<String>,
}

impl FileList {
    /// A list of `files` for a folder of `role`.
    pub fn new(role: Role, mut files: Vec<String>) -> Self {
        files.sort();
        files.dedup();
        FileList { neardup_version: env!("CARGO_PKG_VERSION").to_string(), role: Some(role), files }
    }

    /// The role of the folder this list is of: as the list says, or for a list of an
    /// earlier version, [`Role::Output`] when it names a `summary.json` and [`Role::Kept`]
    /// when it names other files; `None` for an empty list.
    pub fn role(&self) -> Option<Role> {
        self.role.or_else(|| match self.files.is_empty() {
            true => None,
            false if self.lists("summary.json") => Some(Role::Output),
            false => Some(Role::Kept),
        })
    }

    /// The list in `dir`, or `None` when there is none.
    ///
    /// # Errors
    /// [`Error::ReadFile`], or [`Error::Damaged`] when it does not parse or names a path
    /// outside `dir`.
    pub fn load(dir: &Path) -> Result<Option<FileList>> {
        let path = dir.join(FILE_LIST);
        let bytes = match crate::destination::read_optional(&path) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(source) => return Err(Error::ReadFile { path, source }),
        };
        let list: FileList = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Damaged { path: path.clone(), detail: e.to_string() })?;
        if let Some(bad) = list.files.iter().find(|f| !is_plain_relative(f)) {
            let detail = format!("lists \"{bad}\", which is not a file below the folder");
            return Err(Error::Damaged { path, detail });
        }
        Ok(Some(list))
    }

    /// Makes `dir` ready for a run that writes the files of `self`: checks that nothing in
    /// the way was written by someone else, removes what the earlier run's list names (and
    /// its folders among `owned`, once empty), and writes this list. `owned` are subfolders
    /// that only neardup writes (`documents`, `pairs`).
    ///
    /// # Errors
    /// [`Error::NotOurs`] naming a file the run would overwrite, or a file in an owned
    /// folder, that no earlier list names; [`Error::Write`] when a file cannot be removed
    /// or the list written.
    pub fn prepare(&self, dir: &Path, owned: &[&str]) -> Result<()> {
        let old = self.check(dir, owned)?;
        self.replace(dir, owned, &old)
    }

    /// The changes of [`FileList::prepare`] once [`FileList::check`] has passed and given
    /// `old`: removes what it lists (and the folders among `owned`, once empty), and writes
    /// this list.
    ///
    /// # Errors
    /// [`Error::Write`] when a file cannot be removed or the list written.
    pub fn replace(&self, dir: &Path, owned: &[&str], old: &FileList) -> Result<()> {
        old.remove(dir, &[])?;
        for sub in owned {
            crate::destination::remove_empty_dir(&dir.join(sub));
        }
        self.save(dir)
    }

    /// The checks of [`FileList::prepare`], changing nothing but creating `dir`: so that a
    /// run writing several folders can refuse before it changes any. Returns the earlier
    /// run's list (empty when there is none).
    ///
    /// # Errors
    /// As [`FileList::prepare`], and [`Error::OtherRole`] when `dir` holds another role's
    /// files (its list says so) or an index.
    pub fn check(&self, dir: &Path, owned: &[&str]) -> Result<FileList> {
        crate::destination::create_dir_all(dir)
            .map_err(|source| Error::Write { path: dir.to_path_buf(), source })?;
        let old = FileList::load(dir)?.unwrap_or_default();
        let wanted = self.role();
        let holds = match old.role() {
            Some(role) => Some(role),
            None => folder_role(dir)?,
        };
        if let (Some(holds), Some(wanted)) = (holds, wanted)
            && holds != wanted
        {
            return Err(Error::OtherRole { folder: dir.to_path_buf(), holds, wanted });
        }
        let listed = |rel: &str| old.lists(rel);
        // A prefix is listed once rather than asked about file by file.
        let objects = objects_in(dir)?;
        for rel in &self.files {
            let path = dir.join(rel);
            let there = match &objects {
                Some(objects) => objects.contains(rel.as_str()),
                None => path.symlink_metadata().is_ok(),
            };
            if there && !listed(rel) {
                return Err(Error::NotOurs { path, folder: dir.to_path_buf() });
            }
        }
        for sub in owned {
            let folder = dir.join(sub);
            let names = match &objects {
                Some(objects) => objects
                    .iter()
                    .filter_map(|o| o.strip_prefix(&format!("{sub}/")).map(String::from))
                    .collect(),
                None => crate::destination::names_in(&folder)
                    .map_err(|source| Error::ReadFile { path: folder.clone(), source })?,
            };
            for name in names {
                let rel = format!("{sub}/{name}");
                if !listed(&rel) {
                    return Err(Error::NotOurs {
                        path: folder.join(name),
                        folder: dir.to_path_buf(),
                    });
                }
            }
        }
        Ok(old)
    }

    /// Removes the listed files of `dir` and their temporary names, except `keep`: a
    /// `_SUCCESS` marker first, so that no reader sees it beside a file already removed.
    ///
    /// # Errors
    /// [`Error::Write`] naming a file that cannot be removed.
    pub fn remove(&self, dir: &Path, keep: &[&str]) -> Result<()> {
        // Objects are never written under a temporary name, and only those there are
        // removed (one listing instead of a request per listed name).
        let objects = objects_in(dir)?;
        let remote = objects.is_some();
        let there = |rel: &str| objects.as_ref().is_none_or(|o| o.contains(rel));
        // The success marker goes first: a reader never sees it beside missing files.
        let (markers, rest): (Vec<&String>, Vec<&String>) =
            self.files.iter().partition(|f| f.rsplit('/').next() == Some(SUCCESS_MARKER));
        let chosen = markers.into_iter().chain(rest).filter(|f| !keep.contains(&f.as_str()));
        for rel in chosen.filter(|f| there(f)) {
            let path = dir.join(rel);
            let temporary = (!remote).then(|| temporary_name(&path));
            for path in temporary.into_iter().chain([path]) {
                crate::destination::remove_file(&path)
                    .map_err(|source| Error::Write { path, source })?;
            }
        }
        Ok(())
    }

    /// Whether `rel`, or the file whose temporary name it is, is on the list.
    fn lists(&self, rel: &str) -> bool {
        let (folder, name) = rel.rsplit_once('/').map_or(("", rel), |(f, n)| (f, n));
        let of_temporary = name.strip_prefix('.').and_then(|n| n.strip_suffix(".inprogress"));
        let contains = |r: &str| self.files.binary_search_by(|f| f.as_str().cmp(r)).is_ok();
        contains(rel)
            || of_temporary.is_some_and(|n| {
                contains(&if folder.is_empty() { n.to_string() } else { format!("{folder}/{n}") })
            })
    }

    fn save(&self, dir: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(self).expect("a file list serialises");
        write_atomically(&dir.join(FILE_LIST), &json)
    }
}

/// The role of what `dir` holds: as its file list says, [`Role::Index`] when it holds an
/// index manifest (`index.json` with an index's `format` and `generations`, of any
/// format version), or `None` when it holds neither (a new or foreign folder).
///
/// # Errors
/// [`Error::ReadFile`] or [`Error::Damaged`] when the list or the manifest cannot be read.
pub fn folder_role(dir: &Path) -> Result<Option<Role>> {
    if let Some(role) = FileList::load(dir)?.and_then(|list| list.role()) {
        return Ok(Some(role));
    }
    let manifest = dir.join(crate::index::manifest::MANIFEST);
    match crate::destination::read_optional(&manifest) {
        Ok(Some(bytes)) => {
            let json: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
            let index =
                json.is_some_and(|j| j.get("format").is_some() && j.get("generations").is_some());
            Ok(index.then_some(Role::Index))
        }
        Ok(None) => Ok(None),
        Err(source) => Err(Error::ReadFile { path: manifest, source }),
    }
}

/// The objects below the prefix `dir`, relative to it; `None` for a local folder.
fn objects_in(dir: &Path) -> Result<Option<std::collections::HashSet<String>>> {
    if !crate::remote::is_remote(dir) {
        return Ok(None);
    }
    let names = crate::destination::names_in(dir)
        .map_err(|source| Error::ReadFile { path: dir.to_path_buf(), source })?;
    Ok(Some(names.into_iter().collect()))
}

fn is_plain_relative(rel: &str) -> bool {
    !rel.is_empty() && Path::new(rel).components().all(|c| matches!(c, Component::Normal(_)))
}

/// `path` made absolute with every symbolic link of its existing part resolved, so two
/// spellings of one place compare equal whether or not it exists yet. An address is kept,
/// `s3a://` spelled `s3://`.
pub fn resolved_path(path: &Path) -> PathBuf {
    if crate::remote::is_remote(path) {
        // An address names one place however it is spelled but for `s3a://` and slashes.
        let address = path.to_string_lossy();
        let address = address
            .strip_prefix("s3a://")
            .map_or(address.to_string(), |rest| format!("s3://{rest}"));
        return PathBuf::from(address.trim_end_matches('/'));
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    names.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
                }
            }
        }
        names.sort();
        names
    }

    #[test]
    fn a_run_removes_what_the_earlier_run_listed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let first = FileList::new(
            Role::Output,
            vec!["documents/part-00000.parquet".into(), "summary.json".into()],
        );
        first.prepare(out, &["documents"]).unwrap();
        std::fs::create_dir(out.join("documents")).unwrap();
        std::fs::write(out.join("documents/part-00000.parquet"), b"x").unwrap();
        std::fs::write(out.join("documents/.part-00000.parquet.inprogress"), b"x").unwrap();
        std::fs::write(out.join("summary.json"), b"{}").unwrap();
        std::fs::write(out.join("notes.txt"), b"mine").unwrap();
        let second = FileList::new(Role::Output, vec!["documents/part-00001.parquet".into()]);
        second.prepare(out, &["documents"]).unwrap();
        assert_eq!(names(out), [FILE_LIST, "notes.txt"]);
        assert_eq!(FileList::load(out).unwrap().unwrap(), second);
    }

    #[test]
    fn files_neardup_did_not_write_stop_the_run_and_stay() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        std::fs::create_dir(out.join("documents")).unwrap();
        std::fs::write(out.join("documents/user.parquet"), b"data").unwrap();
        let list = FileList::new(Role::Output, vec!["documents/part-00000.parquet".into()]);
        let err = list.prepare(out, &["documents"]).unwrap_err();
        assert!(matches!(err, Error::NotOurs { .. }), "{err}");
        assert!(err.to_string().contains("user.parquet"), "{err}");
        assert!(out.join("documents/user.parquet").exists());
        // A file the run would overwrite, outside the owned folders.
        let kept = dir.path().join("kept");
        std::fs::create_dir(&kept).unwrap();
        std::fs::write(kept.join("00000-a.jsonl"), b"{}").unwrap();
        let err = FileList::new(Role::Kept, vec!["00000-a.jsonl".into()])
            .prepare(&kept, &[])
            .unwrap_err();
        assert!(err.to_string().contains("00000-a.jsonl"), "{err}");
        assert_eq!(std::fs::read(kept.join("00000-a.jsonl")).unwrap(), b"{}");
    }

    #[test]
    fn a_folder_of_another_role_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let (out, kept) = (dir.path().join("out"), dir.path().join("kept"));
        let outputs = || FileList::new(Role::Output, vec!["summary.json".into()]);
        let kept_list = || FileList::new(Role::Kept, vec!["00000-a.jsonl".into()]);
        outputs().prepare(&out, &[]).unwrap();
        std::fs::write(out.join("summary.json"), b"{}").unwrap();
        kept_list().prepare(&kept, &[]).unwrap();
        std::fs::write(kept.join("00000-a.jsonl"), b"{}").unwrap();
        let before = (names(&out), names(&kept));
        let err = kept_list().prepare(&out, &[]).unwrap_err();
        assert!(
            matches!(err, Error::OtherRole { holds: Role::Output, wanted: Role::Kept, .. }),
            "{err}"
        );
        let message = err.to_string();
        assert!(message.contains("the outputs of a run") && message.contains("--write-kept"));
        let err = outputs().prepare(&kept, &[]).unwrap_err();
        assert!(
            matches!(err, Error::OtherRole { holds: Role::Kept, wanted: Role::Output, .. }),
            "{err}"
        );
        assert_eq!((names(&out), names(&kept)), before);
        // A list of an earlier version, without a role, is judged by what it names.
        let old = r#"{"neardup_version":"0.1.0","files":["00000-a.jsonl","_SUCCESS"]}"#;
        std::fs::write(kept.join(FILE_LIST), old).unwrap();
        assert!(matches!(outputs().prepare(&kept, &[]), Err(Error::OtherRole { .. })));
        // An index.
        let index = dir.path().join("index");
        std::fs::create_dir(&index).unwrap();
        std::fs::write(
            index.join(crate::index::manifest::MANIFEST),
            br#"{"format":3,"generations":[]}"#,
        )
        .unwrap();
        let err = outputs().prepare(&index, &[]).unwrap_err();
        assert!(matches!(err, Error::OtherRole { holds: Role::Index, .. }), "{err}");
        assert_eq!(folder_role(&out).unwrap(), Some(Role::Output));
        assert_eq!(folder_role(dir.path()).unwrap(), None);
    }

    #[test]
    fn a_list_naming_paths_outside_its_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_LIST), br#"{"neardup_version":"0","files":["../x"]}"#)
            .unwrap();
        assert!(matches!(FileList::load(dir.path()), Err(Error::Damaged { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn paths_resolve_through_links_whether_or_not_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let real = std::fs::canonicalize(&real).unwrap();
        assert_eq!(resolved_path(&link.join("out/documents")), real.join("out/documents"));
        assert!(resolved_path(&link.join("a/b")).starts_with(resolved_path(&real.join("a"))));
        assert!(!resolved_path(&real.join("ab")).starts_with(resolved_path(&real.join("a"))));
    }
}

//! Locks of the folders a run changes (its output folder, an index): one run at a time.
//!
//! A lock is a file made with `create_new` that says who holds it: process id, host, the
//! process's start time and a heartbeat that a thread rewrites every [`HEARTBEAT`]. A second
//! run is refused at once, naming the file and its holder, unless the holder is gone: on
//! this host, its process no longer exists (or its id now belongs to a process that started
//! later); on another host, whose processes cannot be checked, its heartbeat is older than
//! [`STALE_AFTER`]. A lock left by a run that was killed is then taken over, and the caller
//! is told so. The file is removed when the lock is dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How often a held lock's heartbeat is rewritten.
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// A lock of another host whose heartbeat is older than this is taken over: its holder has
/// stopped (a lost node), as no live holder misses eighteen heartbeats.
pub const STALE_AFTER: Duration = Duration::from_secs(180);

/// Who holds a lock, as its file says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    /// The holder's process id on its host.
    pub pid: u32,
    /// The host it runs on.
    pub host: String,
    /// When the process started, in clock ticks since the host booted (Linux), which tells
    /// the holder from a later process that got the same id.
    #[serde(default)]
    pub process_start: Option<u64>,
    /// When the lock was taken, seconds since the Unix epoch.
    pub started_unix: u64,
    /// When the holder last said it is alive, seconds since the Unix epoch.
    pub heartbeat_unix: u64,
    /// Unique to this holding of the lock.
    pub token: String,
    /// The kernel boot and process namespace the holder's id belongs to: two hosts (or two
    /// pods) of one name are told apart by it, so a process is judged gone from its
    /// process table only where that table is the holder's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

impl LockHolder {
    fn this_process() -> Self {
        let now = unix_now();
        let pid = std::process::id();
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        LockHolder {
            pid,
            host: host_name(),
            process_start: process_start(pid),
            started_unix: now,
            heartbeat_unix: now,
            token: format!("{pid:x}-{nanos:x}"),
            machine: this_machine(),
        }
    }

    /// A holder known only by a process id and a time: a lock that does not parse (an
    /// older neardup's, or damaged), judged by its age as if held from an unknown host.
    fn unknown(pid: u32, since_unix: u64) -> Self {
        LockHolder {
            pid,
            host: "an unknown host".into(),
            process_start: None,
            started_unix: since_unix,
            heartbeat_unix: since_unix,
            token: String::new(),
            machine: None,
        }
    }

    /// Says who holds the lock, for an error message.
    pub fn describe(&self) -> String {
        let now = unix_now();
        let ago = |unix: u64| match unix {
            0 => "at an unknown time".to_string(),
            _ if unix > now => {
                format!("{} s ahead of this host's clock (the holder's clock is ahead)", unix - now)
            }
            _ => format!("{} s ago", now - unix),
        };
        if self.pid == 0 && self.token.is_empty() {
            // A file that names nobody (empty or damaged): there is no process to name.
            return format!(
                "a lock file that names no holder, last changed {}",
                ago(self.heartbeat_unix)
            );
        }
        format!(
            "process {} on {}, which took it {}, last heartbeat {}",
            self.pid,
            self.host,
            ago(self.started_unix),
            ago(self.heartbeat_unix)
        )
    }

    /// [`LockHolder::describe`], saying for a heartbeat ahead of this host's clock when the
    /// lock last changed (`modified_unix`), by which it is judged.
    fn describe_at(&self, modified_unix: Option<u64>) -> String {
        let described = self.describe();
        match modified_unix {
            Some(m) if self.heartbeat_unix > unix_now() => format!(
                "{described}; last changed {} s ago, which judges it (taken over after {} s)",
                unix_now().saturating_sub(m),
                STALE_AFTER.as_secs()
            ),
            _ => described,
        }
    }

    /// Seconds since the holder last said it is alive, by this host's clock. A heartbeat
    /// ahead of this clock (the holder's clock is ahead) says nothing of that: then the lock
    /// file's modification time, which changes each time the holder rewrites it, does
    /// (`modified_unix`, when known; 0 s otherwise).
    fn silent_for(&self, modified_unix: Option<u64>) -> u64 {
        let now = unix_now();
        if self.heartbeat_unix <= now {
            return now - self.heartbeat_unix;
        }
        modified_unix.map_or(0, |m| now.saturating_sub(m))
    }

    /// Whether the holder has stopped: its process is gone from this host, or, on another
    /// host, it has been silent ([`LockHolder::silent_for`], knowing when the lock file or
    /// object last changed) for longer than [`STALE_AFTER`]. Returns why.
    fn gone_by(&self, modified_unix: Option<u64>) -> Option<String> {
        let same_machine = self.machine.is_none() || self.machine == this_machine();
        if self.host == host_name() && procfs() && same_machine {
            return match process_start(self.pid) {
                None => Some(format!("process {} is gone", self.pid)),
                Some(start) if self.process_start.is_some_and(|s| s != start) => {
                    Some(format!("process {} is gone (its id is reused)", self.pid))
                }
                Some(_) => None,
            };
        }
        let age = self.silent_for(modified_unix);
        let ahead = self.heartbeat_unix > unix_now();
        (age > STALE_AFTER.as_secs()).then(|| {
            if self.pid == 0 && self.token.is_empty() {
                format!("it has not changed for {age} s")
            } else if ahead {
                format!(
                    "no heartbeat from {} for {age} s by the lock's modification time (its \
                     clock is ahead of this host's)",
                    self.host
                )
            } else {
                format!("no heartbeat from {} for {age} s", self.host)
            }
        })
    }
}

/// A lock taken from a run that had stopped.
#[derive(Clone, Debug)]
pub struct TakenOver {
    /// The lock file.
    pub lock: PathBuf,
    /// Who held it.
    pub holder: LockHolder,
    /// Why it was judged stopped.
    pub reason: String,
}

impl std::fmt::Display for TakenOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "took over the lock \"{}\" of a run that stopped ({}: {})",
            self.lock.display(),
            self.holder.describe(),
            self.reason
        )
    }
}

/// A held lock; dropping it stops the heartbeat and removes the file.
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
    token: String,
    /// Set by the heartbeat when another run holds the lock now.
    lost: Arc<AtomicBool>,
    stop: Option<mpsc::Sender<()>>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
}

impl FolderLock {
    /// Takes the lock file `path` (its folder must exist), taking over a lock whose holder
    /// has stopped (see the module documentation); the lock taken over is returned too.
    ///
    /// # Errors
    /// [`Error::Busy`] when a live run holds it, [`Error::Write`] when the file cannot be
    /// made.
    pub fn acquire(path: &Path) -> Result<(Self, Option<TakenOver>)> {
        if crate::remote::is_remote(path) {
            return acquire_object(path);
        }
        let me = LockHolder::this_process();
        let mut taken_over = None;
        // A few attempts: between reading a stale lock and taking it, another run may take it.
        for _ in 0..4 {
            match create_new(path, &me) {
                Ok(()) => {
                    let lock = FolderLock::start(path.to_path_buf(), me, None);
                    return Ok((lock, taken_over));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(source) => return Err(Error::Write { path: path.to_path_buf(), source }),
            }
            let Some((holder, bytes)) = read_holder(path)? else {
                continue; // removed meanwhile
            };
            let modified = modified_unix(path);
            let Some(reason) = holder.gone_by(modified) else {
                if holder.pid == 0 && holder.token.is_empty() {
                    // Neither a lock of ours nor of an older neardup ("pid N"): nobody to name.
                    let age_seconds = unix_now().saturating_sub(holder.heartbeat_unix);
                    let (lock, bytes) = (path.to_path_buf(), bytes.len());
                    let stale_after_seconds = STALE_AFTER.as_secs();
                    return Err(Error::UnreadableLock {
                        lock,
                        bytes,
                        age_seconds,
                        stale_after_seconds,
                    });
                }
                let holder = holder.describe_at(modified);
                return Err(Error::Busy { lock: path.to_path_buf(), holder });
            };
            if take_stale(path, &bytes, &me.token)? {
                taken_over = Some(TakenOver { lock: path.to_path_buf(), holder, reason });
            }
        }
        Err(Error::Busy { lock: path.to_path_buf(), holder: "runs that keep taking it".into() })
    }

    fn start(path: PathBuf, me: LockHolder, e_tag: Option<String>) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let token = me.token.clone();
        let lost = Arc::new(AtomicBool::new(false));
        let heartbeat = {
            let (path, lost) = (path.clone(), lost.clone());
            std::thread::Builder::new()
                .name("neardup-lock".into())
                .spawn(move || {
                    let held = match e_tag {
                        Some(e_tag) => beat_object(&path, me, e_tag, &stopped),
                        None => beat(&path, me, &stopped),
                    };
                    if !held {
                        lost.store(true, Ordering::SeqCst);
                    }
                })
                .ok()
        };
        FolderLock { path, token, lost, stop: Some(stop), heartbeat }
    }

    /// Checks that no other run took the lock over (having judged this run stopped).
    ///
    /// # Errors
    /// [`Error::LockLost`] when one did: the run must not commit.
    pub fn ensure_held(&self) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(Error::LockLost { lock: self.path.clone() });
        }
        Ok(())
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.heartbeat.take() {
            let _ = thread.join();
        }
        if crate::remote::is_remote(&self.path) {
            release_object(&self.path, &self.token);
            return;
        }
        // Only our own lock: a run that judged us stopped may hold the file now.
        if std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice::<LockHolder>(&b).ok())
            .is_some_and(|h| h.token == self.token)
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Rewrites the heartbeat of `me`'s lock until told to stop; returns false when the lock
/// is no longer ours.
fn beat(path: &Path, mut me: LockHolder, stopped: &mpsc::Receiver<()>) -> bool {
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(HEARTBEAT) {
        let ours = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<LockHolder>(&b).ok())
            .is_some_and(|h| h.token == me.token);
        if !ours {
            return false;
        }
        me.heartbeat_unix = unix_now();
        let tmp = path.with_file_name(format!(
            ".{}.{}",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("lock"),
            me.token
        ));
        let json = serde_json::to_vec(&me).expect("a lock holder serialises");
        if std::fs::write(&tmp, json).is_ok() && std::fs::rename(&tmp, path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    true
}

fn create_new(path: &Path, me: &LockHolder) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    let json = serde_json::to_vec(me).expect("a lock holder serialises");
    let written = file.write_all(&json).and_then(|()| file.sync_all());
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// When the file at `path` last changed, in seconds since the Unix epoch.
fn modified_unix(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
}

/// The holder of the lock at `path` and the file's bytes, or `None` when there is no file.
/// A file that does not parse (a run killed while writing it, or an older neardup's) is
/// judged by its modification time, as if held from an unknown host.
fn read_holder(path: &Path) -> Result<Option<(LockHolder, Vec<u8>)>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::ReadFile { path: path.to_path_buf(), source }),
    };
    if let Ok(holder) = serde_json::from_slice::<LockHolder>(&bytes) {
        return Ok(Some((holder, bytes)));
    }
    let modified =
        modified_unix(path).unwrap_or_else(|| unix_now().saturating_sub(STALE_AFTER.as_secs() + 1));
    let text = String::from_utf8_lossy(&bytes);
    let pid = text.trim().strip_prefix("pid ").and_then(|p| p.trim().parse().ok()).unwrap_or(0);
    let holder = LockHolder::unknown(pid, modified);
    Ok(Some((holder, bytes)))
}

/// Moves a stale lock aside and removes it, unless the file changed since it was judged
/// (another run took it over first): then it is put back. Returns whether it was taken.
fn take_stale(path: &Path, judged: &[u8], token: &str) -> Result<bool> {
    let aside = path.with_file_name(format!(
        ".{}.stale-{token}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("lock")
    ));
    match std::fs::rename(path, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => return Err(Error::Write { path: path.to_path_buf(), source }),
    }
    let moved = std::fs::read(&aside).unwrap_or_default();
    if moved == judged {
        let _ = std::fs::remove_file(&aside);
        Ok(true)
    } else {
        // Someone else's fresh lock: give it back (a hard link fails if a third run made one).
        let _ = std::fs::hard_link(&aside, path);
        let _ = std::fs::remove_file(&aside);
        Ok(false)
    }
}

/// Takes the lock object `path` with conditional writes: created only if absent, taken over
/// only if unchanged since it was judged stopped, so of two runs exactly one gets it.
fn acquire_object(path: &Path) -> Result<(FolderLock, Option<TakenOver>)> {
    use crate::remote::write::{Condition, get_dated, put_if};
    let me = LockHolder::this_process();
    let json = serde_json::to_vec(&me).expect("a lock holder serialises");
    let write_err = |source| Error::Write { path: path.to_path_buf(), source };
    let mut taken_over = None;
    for _ in 0..4 {
        match put_if(path, json.clone(), &Condition::Absent) {
            Ok(e_tag) => return Ok((started(path, me, e_tag)?, taken_over)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(write_err(source)),
        }
        let got = get_dated(path)
            .map_err(|source| Error::ReadFile { path: path.to_path_buf(), source })?;
        let Some((bytes, e_tag, modified)) = got else { continue }; // removed meanwhile
        // Only whole objects are ever written: one that does not parse is not a live run's.
        // (Our own creation whose answer was lost is recognised by `put_if`.)
        let holder = serde_json::from_slice::<LockHolder>(&bytes)
            .unwrap_or_else(|_| LockHolder::unknown(0, 0));
        // Each heartbeat rewrites the object, so the store's time of its last change
        // judges a holder whose clock is ahead, as a lock file's modification time does.
        let Some(reason) = holder.gone_by(Some(modified)) else {
            let holder = holder.describe_at(Some(modified));
            return Err(Error::Busy { lock: path.to_path_buf(), holder });
        };
        let Some(judged) = e_tag else {
            return Err(write_err(std::io::Error::other(
                "the store gives no ETag to take it over",
            )));
        };
        match put_if(path, json.clone(), &Condition::Unchanged(judged)) {
            Ok(e_tag) => {
                taken_over = Some(TakenOver { lock: path.to_path_buf(), holder, reason });
                return Ok((started(path, me, e_tag)?, taken_over));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(write_err(source)),
        }
    }
    Err(Error::Busy { lock: path.to_path_buf(), holder: "runs that keep taking it".into() })
}

fn started(path: &Path, me: LockHolder, e_tag: Option<String>) -> Result<FolderLock> {
    let e_tag = e_tag.ok_or_else(|| Error::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other("the store gives no ETag for a heartbeat"),
    })?;
    Ok(FolderLock::start(path.to_path_buf(), me, Some(e_tag)))
}

/// Rewrites the heartbeat of the lock object while it is unchanged since our last write,
/// until told to stop; returns false when another run took it over.
fn beat_object(
    path: &Path,
    mut me: LockHolder,
    mut e_tag: String,
    stopped: &mpsc::Receiver<()>,
) -> bool {
    use crate::remote::write::{Condition, get, put_if};
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(HEARTBEAT) {
        me.heartbeat_unix = unix_now();
        let json = serde_json::to_vec(&me).expect("a lock holder serialises");
        match put_if(path, json, &Condition::Unchanged(e_tag.clone())) {
            Ok(Some(next)) => e_tag = next,
            Ok(None) => return true, // a store without ETags: heartbeats cannot go on
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Ours still, if an earlier beat that failed for good was stored after all.
                let now = get(path).ok().flatten();
                let holder =
                    now.as_ref().and_then(|(b, _)| serde_json::from_slice::<LockHolder>(b).ok());
                match (holder, now.and_then(|(_, e_tag)| e_tag)) {
                    (Some(h), Some(next)) if h.token == me.token => e_tag = next,
                    _ => {
                        tracing::error!(lock = %path.display(), "another run took over this run's lock");
                        return false;
                    }
                }
            }
            // A failed beat is tried again at the next one; a lock is stale only after many.
            Err(e) => tracing::warn!(lock = %path.display(), error = %e, "cannot renew the lock"),
        }
    }
    true
}

/// Removes the lock object if it is still ours. (Between the check and the removal another
/// run could take over a lock it judged stale; it judges so only after [`STALE_AFTER`]
/// without heartbeats, and ours beat until just now.)
fn release_object(path: &Path, token: &str) {
    let ours = crate::remote::write::get(path).ok().flatten().is_some_and(|(bytes, _)| {
        serde_json::from_slice::<LockHolder>(&bytes).is_ok_and(|h| h.token == token)
    });
    if ours && let Err(e) = crate::remote::write::delete(path) {
        tracing::warn!(lock = %path.display(), error = %e, "cannot remove the lock");
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// This host's name (the kernel's, or `$HOSTNAME`).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// This kernel's boot id and this process's pid namespace, which together name the process
/// table that pids refer to.
fn this_machine() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(format!("{}/{}", boot.trim(), namespace.display()))
}

/// Whether processes can be checked here (`/proc`).
fn procfs() -> bool {
    Path::new("/proc/self/stat").exists()
}

/// When process `pid` of this host started (clock ticks since boot), or `None` when there is
/// no such live process (a zombie counts as gone).
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: fields follow its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // starttime is field 22 of the line; `rest` starts at field 3.
    fields.nth(18)?.parse().ok()
}

/// Whether the process described by `pid`, `host` and `start` (as [`LockHolder`] records
/// them) is gone: only decidable on its own host.
pub fn process_gone(pid: u32, host: &str, start: Option<u64>) -> bool {
    if host != host_name() || !procfs() {
        return false;
    }
    match process_start(pid) {
        None => true,
        Some(s) => start.is_some_and(|st| st != s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_holder(path: &Path, holder: &LockHolder) {
        std::fs::write(path, serde_json::to_vec(holder).unwrap()).unwrap();
    }

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let (lock, taken) = FolderLock::acquire(&path).unwrap();
        assert!(taken.is_none());
        let held: LockHolder = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!((held.pid, held.host.clone()), (std::process::id(), host_name()));
        let err = FolderLock::acquire(&path).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Busy { .. }), "{text}");
        assert!(text.contains(".lock") && text.contains(&std::process::id().to_string()), "{text}");
        drop(lock);
        assert!(!path.exists());
        FolderLock::acquire(&path).unwrap();
    }

    #[test]
    fn a_lock_of_a_process_that_is_gone_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let mut dead = LockHolder::this_process();
        dead.pid = pid;
        dead.process_start = Some(1);
        write_holder(&path, &dead);
        let (_lock, taken) = FolderLock::acquire(&path).unwrap();
        let taken = taken.expect("taken over");
        assert_eq!(taken.holder.pid, pid);
        assert!(taken.to_string().contains("took over"), "{taken}");
    }

    #[test]
    fn a_reused_process_id_does_not_hold_a_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let mut other = LockHolder::this_process();
        other.process_start = other.process_start.map(|s| s + 1);
        write_holder(&path, &other);
        assert!(FolderLock::acquire(&path).unwrap().1.is_some());
    }

    #[test]
    fn a_holder_of_the_same_name_in_another_process_table_is_judged_by_its_heartbeat() {
        // Two pods of one name (pid 1 in each) on separate process tables: this one's
        // table says nothing about the other's process.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let mut twin = LockHolder::this_process();
        twin.process_start = twin.process_start.map(|s| s + 1);
        twin.machine = Some("another-boot/pid:[1]".into());
        write_holder(&path, &twin);
        let err = FolderLock::acquire(&path).unwrap_err();
        assert!(matches!(err, Error::Busy { .. }), "{err}");
        twin.heartbeat_unix -= STALE_AFTER.as_secs() + 5;
        write_holder(&path, &twin);
        let (_lock, taken) = FolderLock::acquire(&path).unwrap();
        assert!(taken.unwrap().reason.contains("no heartbeat"));
    }

    /// A live holder on another host, process 1 there.
    fn holder_on(host: &str) -> LockHolder {
        LockHolder { host: host.into(), pid: 1, ..LockHolder::this_process() }
    }

    #[test]
    fn another_hosts_lock_is_taken_over_only_when_its_heartbeat_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let mut remote = holder_on("node-elsewhere");
        write_holder(&path, &remote);
        let err = FolderLock::acquire(&path).unwrap_err();
        assert!(err.to_string().contains("node-elsewhere"), "{err}");
        remote.heartbeat_unix -= STALE_AFTER.as_secs() + 5;
        write_holder(&path, &remote);
        let (_lock, taken) = FolderLock::acquire(&path).unwrap();
        assert!(taken.unwrap().reason.contains("no heartbeat"));
    }

    /// A holder whose clock is an hour ahead wrote a heartbeat an hour in the future: it is
    /// named as ahead (not "0 s ago"), and once its file has not changed for longer than
    /// [`STALE_AFTER`] it is taken over, rather than an hour and three minutes later.
    #[test]
    fn a_heartbeat_ahead_of_this_clock_is_said_and_the_wait_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let mut remote = holder_on("node-ahead");
        remote.heartbeat_unix += 3600;
        remote.started_unix += 3600;
        write_holder(&path, &remote);
        let err = FolderLock::acquire(&path).unwrap_err().to_string();
        assert!(err.contains("last heartbeat 3600 s ahead of this host's clock"), "{err}");
        assert!(err.contains("last changed 0 s ago, which judges it"), "{err}");
        assert!(!err.contains("last heartbeat 0 s ago"), "{err}");
        let old = SystemTime::now() - STALE_AFTER - Duration::from_secs(10);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        let (_lock, taken) = FolderLock::acquire(&path).unwrap();
        let reason = taken.unwrap().reason;
        assert!(reason.contains("modification time") && reason.contains("ahead"), "{reason}");
    }

    #[test]
    fn an_old_empty_lock_taken_over_names_no_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        std::fs::write(&path, "").unwrap();
        let old = SystemTime::now() - STALE_AFTER - Duration::from_secs(10);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        let (_lock, taken) = FolderLock::acquire(&path).unwrap();
        let said = taken.unwrap().to_string();
        assert!(said.contains("a lock file that names no holder"), "{said}");
        assert!(!said.contains("process 0") && !said.contains("unknown host"), "{said}");
    }

    #[test]
    fn an_unreadable_lock_is_judged_by_its_age() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        std::fs::write(&path, "pid 12").unwrap();
        assert!(FolderLock::acquire(&path).is_err(), "a fresh file may be a run starting");
        let old = SystemTime::now() - STALE_AFTER - Duration::from_secs(10);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        assert!(FolderLock::acquire(&path).unwrap().1.is_some());
    }

    #[test]
    fn an_empty_or_garbage_lock_is_called_unreadable_not_a_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        for (content, bytes) in [(&b""[..], 0), (&b"\x00garbage{"[..], 9)] {
            std::fs::write(&path, content).unwrap();
            let err = FolderLock::acquire(&path).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, Error::UnreadableLock { .. }), "{text}");
            assert!(text.contains("is unreadable") && !text.contains("process 0"), "{text}");
            assert!(text.contains(&format!("({bytes} bytes")), "{text}");
        }
    }

    #[test]
    fn a_lock_taken_over_is_not_removed_by_its_old_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let (lock, _) = FolderLock::acquire(&path).unwrap();
        let mut other = LockHolder::this_process();
        other.token = "someone-else".into();
        write_holder(&path, &other);
        drop(lock);
        assert!(path.exists(), "the lock now belongs to someone else");
    }

    #[test]
    fn the_start_time_of_this_process_is_known() {
        if procfs() {
            assert!(process_start(std::process::id()).is_some());
            assert!(!process_gone(
                std::process::id(),
                &host_name(),
                process_start(std::process::id())
            ));
        }
    }
}

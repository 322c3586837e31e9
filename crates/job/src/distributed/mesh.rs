//! The connections between the processes of a distributed run, and what they say about the
//! other processes.
//!
//! At start every process connects to every other ([`Mesh::join`]) and they compare their
//! settings, so processes that would compute different results refuse to run before any
//! folder is changed. These control connections stay open for the whole run: a process
//! that ends says how ([`Mesh::end`]), and one that vanishes closes them, so every other
//! process learns of it at any moment, between dataflow passes too. Each pass then
//! connects afresh for timely ([`Mesh::pass_sockets`]) through [`PeerStream`]s, which
//! record a lost peer instead of failing timely's network threads: those panic on a
//! broken connection, which poisons the queues the workers share with them, and a worker
//! then panics again in a `Drop` while unwinding, which aborts the process.
//!
//! Every connection starts with a hello: 8 bytes of magic, the sender's process number
//! and the pass it is for (0 for the control connection), big-endian `u64`s, which the
//! accepting process answers with one byte once it has reached that pass itself. One
//! listener per process serves the whole run; a connection for a later pass that arrives
//! early waits for it, and so does its process: no process starts a pass before every
//! other has reached it (process 0 prepares the folders first, removing what killed runs
//! left half written, and a process that ran ahead had its units removed meanwhile).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::stream::Stream;

use crate::distributed::interrupt::Interrupt;
use crate::error::JobError;

/// The start of every connection between neardup processes.
const MAGIC: &[u8; 8] = b"neardup\x01";
/// The pass number of the control connections.
const CONTROL_PASS: u64 = 0;
/// How long an end is left to settle before it is reported: a process that ends closes
/// its dataflow connections and says why on its control connection at about the same
/// moment, and the reason is worth waiting for.
const SETTLE: Duration = Duration::from_millis(200);
/// The control message of a process that ended its run cleanly.
const ENDED: u8 = 1;
/// The control message of a process that failed, followed by its error (a big-endian
/// `u32` length and UTF-8).
const FAILED: u8 = 2;
/// What a process answers a connection's hello with once it has reached that connection's
/// pass itself: the connecting process starts the pass only then.
const READY: u8 = 3;

/// How another process ended, as far as this one knows.
#[derive(Clone, Debug, PartialEq, Eq)]
enum PeerEnd {
    /// It finished its run.
    Ended,
    /// It stopped with this error, and said so.
    Failed(String),
    /// Its connection broke without a word (killed, or the network failed).
    Lost(String),
}

/// The ends of other processes seen so far, with when each was first seen.
#[derive(Debug, Default)]
pub(crate) struct PeerEnds(Mutex<BTreeMap<usize, (Instant, PeerEnd)>>);

impl PeerEnds {
    /// Records how `process` ended: what it said (ended, failed) outweighs a broken
    /// connection, which follows when it exits.
    fn record(&self, process: usize, end: PeerEnd) {
        let mut ends = self.0.lock().expect("peer ends lock");
        match ends.get_mut(&process) {
            None => {
                ends.insert(process, (Instant::now(), end));
            }
            Some((_, known @ PeerEnd::Lost(_))) if !matches!(end, PeerEnd::Lost(_)) => {
                *known = end;
            }
            Some(_) => {}
        }
    }

    /// The error of another process's end, once `settle` has passed since the first one
    /// was seen: a process lost without a word first (it is the cause when the others
    /// then fail too), else the first that failed.
    fn failure(&self, settle: Duration) -> Option<JobError> {
        let ends = self.0.lock().expect("peer ends lock");
        let failing = || ends.iter().filter(|(_, (_, end))| *end != PeerEnd::Ended);
        let first = failing().map(|(_, (at, _))| *at).min()?;
        if first.elapsed() < settle {
            return None;
        }
        let earliest = |lost: bool| {
            failing()
                .filter(|(_, (_, end))| matches!(end, PeerEnd::Lost(_)) == lost)
                .min_by_key(|(_, (at, _))| *at)
        };
        let (process, (_, end)) = earliest(true).or_else(|| earliest(false))?;
        let process = *process;
        Some(match end {
            PeerEnd::Lost(message) => JobError::PeerLost { process, message: message.clone() },
            PeerEnd::Failed(message) => JobError::PeerFailed { process, message: message.clone() },
            PeerEnd::Ended => unreachable!("ended processes are not failing"),
        })
    }

    /// Whether some connection broke without a word (its network threads may be stuck).
    pub(crate) fn any_lost(&self) -> bool {
        self.0.lock().expect("peer ends lock").values().any(|(_, e)| matches!(e, PeerEnd::Lost(_)))
    }
}

/// This process's connections to the other processes of its distributed run.
pub(crate) struct Mesh {
    me: usize,
    addresses: Vec<String>,
    /// Accepts the connections of the later processes (none for the last process).
    listener: Option<TcpListener>,
    /// Connections for a later pass that arrived while an earlier one was connecting.
    early: Mutex<Vec<(u64, usize, TcpStream)>>,
    /// The control connections, by process (this process's own is `None`).
    control: Vec<Option<TcpStream>>,
    /// The number of the next dataflow pass.
    next_pass: AtomicU64,
    /// How long connecting may take.
    timeout: Duration,
    /// How the other processes ended.
    pub(crate) ends: Arc<PeerEnds>,
}

/// What can stop a run from outside its workers: a signal to this process, or the end of
/// another process of its distributed run.
#[derive(Clone, Default)]
pub(crate) struct Control {
    /// The run's connections to the other processes (`None` for one process).
    pub(crate) mesh: Option<Arc<Mesh>>,
    /// Set by a signal.
    pub(crate) interrupt: Interrupt,
}

impl Control {
    /// Why the run must stop now, if it must.
    pub(crate) fn stop(&self) -> Option<JobError> {
        self.interrupt.error().or_else(|| self.peer_failure(SETTLE))
    }

    /// The end of another process, once it has settled for `settle`.
    pub(crate) fn peer_failure(&self, settle: Duration) -> Option<JobError> {
        self.mesh.as_ref()?.ends.failure(settle)
    }
}

impl Mesh {
    /// Connects process `me` to every other process of `addresses` and compares their
    /// `settings`; starts watching the control connections.
    ///
    /// # Errors
    /// [`JobError::SettingsDiffer`] naming the first setting another process has
    /// otherwise; [`JobError::Connect`] when the processes do not all connect within
    /// `timeout`; [`JobError::Interrupted`] on a signal; [`JobError::Start`] when this
    /// process cannot listen or a connection breaks while the settings are exchanged.
    pub(crate) fn join(
        addresses: &[String],
        me: usize,
        settings: &BTreeMap<String, String>,
        timeout: Duration,
        interrupt: &Interrupt,
    ) -> Result<Mesh, JobError> {
        let deadline = Instant::now() + timeout;
        let stop = || interrupt.error();
        let listener = match me + 1 < addresses.len() {
            true => Some(listen(&addresses[me], deadline, addresses.len(), timeout, &stop)?),
            false => None,
        };
        let mut mesh = Mesh {
            me,
            addresses: addresses.to_vec(),
            listener,
            early: Mutex::new(Vec::new()),
            control: Vec::new(),
            next_pass: AtomicU64::new(CONTROL_PASS + 1),
            timeout,
            ends: Arc::new(PeerEnds::default()),
        };
        let mut control = mesh.connect(CONTROL_PASS, &stop)?;
        let ours = serde_json::to_vec(settings).expect("settings serialise");
        let broken = |process: usize, e: std::io::Error| {
            JobError::Start(format!("the connection to process {process} broke at start: {e}"))
        };
        for (process, stream) in control.iter_mut().enumerate() {
            let Some(stream) = stream else { continue };
            let remaining = deadline.saturating_duration_since(Instant::now());
            stream.set_read_timeout(Some(remaining.max(Duration::from_millis(1)))).ok();
            let sent = (ours.len() as u64).to_be_bytes().into_iter().chain(ours.iter().copied());
            stream.write_all(&sent.collect::<Vec<u8>>()).map_err(|e| broken(process, e))?;
        }
        for (process, stream) in control.iter_mut().enumerate() {
            let Some(stream) = stream else { continue };
            let theirs = read_settings(stream).map_err(|e| broken(process, e))?;
            let differences = differences(settings, &theirs);
            if !differences.is_empty() {
                return Err(JobError::SettingsDiffer { process, this: me, differences });
            }
            stream.set_read_timeout(None).ok();
        }
        for (process, stream) in control.iter().enumerate() {
            let Some(stream) = stream else { continue };
            let reader = stream.try_clone().map_err(|e| broken(process, e))?;
            let ends = mesh.ends.clone();
            std::thread::Builder::new()
                .name(format!("neardup:peer-{process}"))
                .spawn(move || watch(reader, process, &ends))
                .map_err(|e| JobError::Start(e.to_string()))?;
        }
        mesh.control = control;
        Ok(mesh)
    }

    /// Connects for the next dataflow pass: a [`PeerStream`] to every other process.
    ///
    /// # Errors
    /// What `stop` returns while connecting; [`JobError::Connect`] past the timeout.
    pub(crate) fn pass_sockets(
        &self,
        stop: &dyn Fn() -> Option<JobError>,
    ) -> Result<Vec<Option<PeerStream>>, JobError> {
        let pass = self.next_pass.fetch_add(1, Ordering::SeqCst);
        let sockets = self.connect(pass, stop)?;
        Ok(sockets
            .into_iter()
            .enumerate()
            .map(|(process, s)| s.map(|stream| PeerStream::new(stream, process, &self.ends)))
            .collect())
    }

    /// Tells the other processes that this one ended its run: cleanly, or with `error`.
    pub(crate) fn end(&self, error: Option<&str>) {
        let message = match error {
            None => vec![ENDED],
            Some(text) => {
                let text = &text.as_bytes()[..text.len().min(1 << 16)];
                let length = u32::try_from(text.len()).expect("at most 64 KiB").to_be_bytes();
                [&[FAILED][..], &length, text].concat()
            }
        };
        for mut stream in self.control.iter().flatten() {
            // A process that is gone needs no word.
            let _ = stream.write_all(&message);
        }
    }

    /// One connection to every other process for `pass`: to each earlier one by
    /// connecting, retried every 10 ms until it listens, and from each later one by
    /// accepting. Timely's own connector retries and polls once a second, which added
    /// about a second to every pass.
    fn connect(
        &self,
        pass: u64,
        stop: &dyn Fn() -> Option<JobError>,
    ) -> Result<Vec<Option<TcpStream>>, JobError> {
        let deadline = Instant::now() + self.timeout;
        let processes = self.addresses.len();
        let check = || {
            if let Some(e) = stop() {
                return Err(e);
            }
            match Instant::now() > deadline {
                true => Err(JobError::Connect { processes, seconds: self.timeout.as_secs() }),
                false => Ok(()),
            }
        };
        let start_error = |e: std::io::Error| JobError::Start(format!("cannot connect: {e}"));
        let mut sockets: Vec<Option<TcpStream>> = (0..processes).map(|_| None).collect();
        let hello = [&MAGIC[..], &(self.me as u64).to_be_bytes(), &pass.to_be_bytes()].concat();
        for (peer, address) in self.addresses.iter().enumerate().take(self.me) {
            let mut waited = Instant::now();
            let mut stream = loop {
                check()?;
                match TcpStream::connect(address) {
                    Ok(stream) => break stream,
                    Err(e) => {
                        if waited.elapsed() >= Duration::from_secs(10) {
                            tracing::info!(peer, address, error = %e, "waiting for a process to listen");
                            waited = Instant::now();
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            };
            stream.set_nodelay(true).map_err(start_error)?;
            stream.write_all(&hello).map_err(start_error)?;
            wait_until_ready(&mut stream, peer, &check)?;
            sockets[peer] = Some(stream);
        }
        let Some(listener) = &self.listener else { return Ok(sockets) };
        while sockets[self.me + 1..].iter().any(Option::is_none) {
            check()?;
            let mut early = self.early.lock().expect("early lock");
            let waiting = early.iter().position(|(p, _, _)| *p == pass);
            let (process, stream) = match waiting {
                Some(i) => {
                    let (_, process, stream) = early.swap_remove(i);
                    (process, stream)
                }
                None => match listener.accept() {
                    Ok((stream, _)) => match read_hello(&stream) {
                        Ok((p, process)) if p == pass => (process, stream),
                        Ok((p, process)) if p > pass => {
                            early.push((p, process, stream));
                            continue;
                        }
                        Ok((p, process)) => {
                            tracing::warn!(
                                process,
                                pass = p,
                                "dropped a connection of an earlier pass"
                            );
                            continue;
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "dropped a connection that is not a neardup process's");
                            continue;
                        }
                    },
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        drop(early);
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    Err(e) => return Err(start_error(e)),
                },
            };
            if process <= self.me || process >= processes || sockets[process].is_some() {
                let message = format!(
                    "cannot connect: a connection announced itself as process {process}, which is not a later process or connected already"
                );
                return Err(JobError::Start(message));
            }
            // This process has reached the pass: the other may start it.
            (&stream).write_all(&[READY]).map_err(start_error)?;
            sockets[process] = Some(stream);
        }
        Ok(sockets)
    }
}

/// Waits for `peer`, to which `stream` connected for a pass, to answer that it has reached
/// the pass, checking `check` (a stop, or the deadline) every 50 ms.
fn wait_until_ready(
    stream: &mut TcpStream,
    peer: usize,
    check: &dyn Fn() -> Result<(), JobError>,
) -> Result<(), JobError> {
    // A peer that ended closes the connection as it says why on its control connection:
    // what it says, once settled, names the failure better than the closed connection.
    let broken = |e: String| {
        let settled = Instant::now() + 2 * SETTLE;
        while Instant::now() < settled {
            check()?;
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(JobError::Start(format!("the connection to process {peer} broke before the pass: {e}")))
    };
    if let Err(e) = stream.set_read_timeout(Some(Duration::from_millis(50))) {
        return broken(e.to_string());
    }
    let mut answer = [0u8; 1];
    loop {
        check()?;
        match stream.read(&mut answer) {
            Ok(1) if answer[0] == READY => break,
            Ok(0) => return broken("closed".into()),
            Ok(_) => return broken(format!("answered {}", answer[0])),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return broken(e.to_string()),
        }
    }
    match stream.set_read_timeout(None) {
        Ok(()) => Ok(()),
        Err(e) => broken(e.to_string()),
    }
}

/// Reads the hello of an accepted connection: its pass and process.
fn read_hello(stream: &TcpStream) -> std::io::Result<(u64, usize)> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut hello = [0u8; 24];
    (&*stream).read_exact(&mut hello)?;
    stream.set_read_timeout(None)?;
    if &hello[..8] != MAGIC {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "no neardup hello"));
    }
    let number = |at: usize| u64::from_be_bytes(hello[at..at + 8].try_into().expect("8 bytes"));
    Ok((number(16), usize::try_from(number(8)).unwrap_or(usize::MAX)))
}

/// Reads another process's settings (a big-endian `u64` length and JSON).
fn read_settings(stream: &mut TcpStream) -> std::io::Result<BTreeMap<String, String>> {
    let mut length = [0u8; 8];
    stream.read_exact(&mut length)?;
    let length = u64::from_be_bytes(length);
    if length > 64 << 20 {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "settings too long"));
    }
    let mut bytes = vec![0u8; usize::try_from(length).expect("checked")];
    stream.read_exact(&mut bytes)?;
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
}

/// The settings (in key order) with another value in `theirs`: each key, this process's
/// value and the other's (`unset` for a missing one).
fn differences(
    ours: &BTreeMap<String, String>,
    theirs: &BTreeMap<String, String>,
) -> Vec<(String, String, String)> {
    let value = |m: &BTreeMap<String, String>, key: &str| {
        m.get(key).cloned().unwrap_or_else(|| "unset".to_string())
    };
    let keys: std::collections::BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    keys.into_iter()
        .filter(|key| ours.get(*key) != theirs.get(*key))
        .map(|key| (key.clone(), value(ours, key), value(theirs, key)))
        .collect()
}

/// Watches the control connection of `process` until it says how the process ended, or
/// breaks.
fn watch(mut stream: TcpStream, process: usize, ends: &PeerEnds) {
    let mut tag = [0u8; 1];
    let end = match stream.read_exact(&mut tag) {
        Ok(()) if tag[0] == ENDED => PeerEnd::Ended,
        Ok(()) if tag[0] == FAILED => {
            let mut length = [0u8; 4];
            let mut text = Vec::new();
            let read = stream.read_exact(&mut length).and_then(|()| {
                text.resize(u32::from_be_bytes(length) as usize, 0);
                stream.read_exact(&mut text)
            });
            match read {
                Ok(()) => PeerEnd::Failed(String::from_utf8_lossy(&text).into_owned()),
                Err(e) => PeerEnd::Lost(e.to_string()),
            }
        }
        Ok(()) => PeerEnd::Lost(format!("it sent {:#04x} on its control connection", tag[0])),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            PeerEnd::Lost("it closed the connection before its run ended".into())
        }
        Err(e) => PeerEnd::Lost(e.to_string()),
    };
    ends.record(process, end);
}

/// Listens on `address`, retrying every 50 ms while its name does not resolve or its port
/// is in use (a line at the first failure, a warning every 10 s) until `deadline`; a pod's
/// own DNS name may resolve only after it starts, and a port may still be held by a
/// process that is ending. Any other error (an address of another machine, a port it may
/// not use) is returned at once.
fn listen(
    address: &str,
    deadline: Instant,
    processes: usize,
    timeout: Duration,
    stop: &dyn Fn() -> Option<JobError>,
) -> Result<TcpListener, JobError> {
    let mut waited: Option<Instant> = None;
    let cannot = |e: std::io::Error| JobError::Start(format!("cannot listen on {address}: {e}"));
    loop {
        let error = match address.to_socket_addrs() {
            Err(e) => e,
            Ok(resolved) => match TcpListener::bind(&resolved.collect::<Vec<_>>()[..]) {
                Ok(listener) => {
                    listener.set_nonblocking(true).map_err(cannot)?;
                    return Ok(listener);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => e,
                Err(e) => return Err(cannot(e)),
            },
        };
        if let Some(e) = stop() {
            return Err(e);
        }
        if Instant::now() > deadline {
            return Err(JobError::Connect { processes, seconds: timeout.as_secs() });
        }
        match waited {
            None => {
                tracing::info!(address, error = %error, "cannot listen yet on this process's address; retrying");
                waited = Some(Instant::now());
            }
            Some(since) if since.elapsed() >= Duration::from_secs(10) => {
                tracing::warn!(address, error = %error, "cannot listen yet on this process's address");
                waited = Some(Instant::now());
            }
            Some(_) => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A dataflow connection to another process, as timely's network threads use it, that
/// records a broken connection in [`PeerEnds`] instead of returning the error: a write
/// then succeeds without sending, and a read waits forever, so the threads never panic.
/// Reads follow timely's message headers, to tell the end of the stream timely writes
/// last from a connection closed early.
pub(crate) struct PeerStream {
    stream: TcpStream,
    process: usize,
    ends: Arc<PeerEnds>,
    frames: Frames,
    broken: bool,
}

impl PeerStream {
    fn new(stream: TcpStream, process: usize, ends: &Arc<PeerEnds>) -> Self {
        PeerStream { stream, process, ends: ends.clone(), frames: Frames::default(), broken: false }
    }

    /// Records the loss of the peer and parks this thread for good: the run fails, and a
    /// timely network thread must not.
    fn lost(&self, message: String) -> ! {
        self.ends.record(self.process, PeerEnd::Lost(message));
        loop {
            std::thread::park();
        }
    }
}

impl Read for PeerStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.stream.read(buf) {
                Ok(n) if n > 0 => {
                    self.frames.feed(&buf[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                _ if self.frames.ended => return Ok(0),
                Ok(_) => self.lost("it closed the connection before its run ended".into()),
                Err(e) => self.lost(e.to_string()),
            }
        }
    }
}

impl Write for PeerStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.broken {
            return Ok(buf.len());
        }
        match self.stream.write(buf) {
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => {
                self.ends.record(self.process, PeerEnd::Lost(e.to_string()));
                self.broken = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Stream for PeerStream {
    fn try_clone(&self) -> std::io::Result<Self> {
        Ok(PeerStream::new(self.stream.try_clone()?, self.process, &self.ends))
    }

    fn set_nonblocking(&self, nonblocking: bool) -> std::io::Result<()> {
        self.stream.set_nonblocking(nonblocking)
    }

    fn shutdown(&self, how: Shutdown) -> std::io::Result<()> {
        // The peer may be gone; timely's send thread must end all the same.
        let _ = self.stream.shutdown(how);
        Ok(())
    }
}

/// Follows timely's messages (a header, then `length` bytes) through the bytes read, to
/// see the zero-length header that ends the stream.
#[derive(Debug, Default)]
struct Frames {
    header: Vec<u8>,
    skip: usize,
    ended: bool,
}

/// The size of timely's message header: six big-endian `u64`s (channel, source, lowest
/// and highest target, length, sequence number), as `MessageHeader::write_to` writes it.
const HEADER_BYTES: usize = 48;
/// Where the header's length field is.
const LENGTH_AT: usize = 32;

impl Frames {
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.ended {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (HEADER_BYTES - self.header.len()).min(bytes.len());
            self.header.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.header.len() == HEADER_BYTES {
                let length = &self.header[LENGTH_AT..LENGTH_AT + 8];
                let length = u64::from_be_bytes(length.try_into().expect("8 bytes"));
                self.header.clear();
                self.ended = length == 0;
                self.skip = usize::try_from(length).unwrap_or(usize::MAX);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use timely::communication::networking::MessageHeader;

    use super::*;

    fn header(length: usize, seqno: usize) -> Vec<u8> {
        let header = MessageHeader {
            channel: 3,
            source: 1,
            target_lower: 0,
            target_upper: 2,
            length,
            seqno,
        };
        let mut bytes = Vec::new();
        header.write_to(&mut bytes).expect("writes to a vector");
        assert_eq!(bytes.len(), header.header_bytes());
        bytes
    }

    #[test]
    fn frames_see_the_end_of_timely_s_stream_however_it_is_cut() {
        let mut stream = Vec::new();
        for (i, length) in [5usize, 0x0102_0304, 1].into_iter().enumerate() {
            stream.extend(header(length, i));
            stream.extend(std::iter::repeat_n(0u8, length));
        }
        let end = stream.len();
        stream.extend(header(0, 9));
        for piece in [1, 7, 48, 1000, stream.len()] {
            let mut frames = Frames::default();
            for (at, chunk) in stream.chunks(piece).enumerate() {
                assert!(!frames.ended, "piece {piece}: ended early");
                frames.feed(chunk);
                if (at + 1) * piece < end {
                    assert!(!frames.ended, "piece {piece}: ended inside the messages");
                }
            }
            assert!(frames.ended, "piece {piece}: the zero-length header ends the stream");
        }
    }

    #[test]
    fn ends_name_the_lost_process_before_those_that_failed_after_it() {
        let ends = PeerEnds::default();
        ends.record(2, PeerEnd::Failed("lost the connection to process 1".into()));
        ends.record(3, PeerEnd::Ended);
        ends.record(1, PeerEnd::Lost("connection reset".into()));
        // What a process said outweighs its connection breaking as it exits.
        ends.record(2, PeerEnd::Lost("closed".into()));
        assert!(ends.failure(Duration::from_secs(60)).is_none(), "not settled yet");
        let error = ends.failure(Duration::ZERO).expect("a failure").to_string();
        assert!(
            error.starts_with("lost the connection to process 1 (connection reset)"),
            "{error}"
        );
        let failed = PeerEnds::default();
        failed.record(0, PeerEnd::Lost("closed".into()));
        failed.record(0, PeerEnd::Failed("the run did not start".into()));
        let error = failed.failure(Duration::ZERO).expect("a failure").to_string();
        assert!(error.starts_with("process 0 stopped: the run did not start"), "{error}");
        let ended = PeerEnds::default();
        ended.record(1, PeerEnd::Ended);
        ended.record(1, PeerEnd::Lost("closed".into()));
        assert!(ended.failure(Duration::ZERO).is_none());
    }

    #[test]
    fn processes_with_other_settings_both_refuse_naming_every_difference() {
        let listeners: Vec<_> = (0..2).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
        let addresses: Vec<String> =
            listeners.iter().map(|l| l.local_addr().unwrap().to_string()).collect();
        drop(listeners);
        let settings = |threshold: &str| {
            let mut s = BTreeMap::new();
            s.insert("minhash.threshold".to_string(), threshold.to_string());
            s.insert("seed".to_string(), "42".to_string());
            s
        };
        let joins: Vec<_> = [("0.8", 0), ("0.5", 1)]
            .into_iter()
            .map(|(threshold, me)| {
                let (addresses, settings) = (addresses.clone(), settings(threshold));
                std::thread::spawn(move || {
                    let timeout = Duration::from_secs(30);
                    Mesh::join(&addresses, me, &settings, timeout, &Interrupt::default())
                })
            })
            .collect();
        for (me, join) in joins.into_iter().enumerate() {
            match join.join().unwrap() {
                Err(JobError::SettingsDiffer { process, this, differences }) => {
                    assert_eq!((process, this), (1 - me, me));
                    let (ours, theirs) = if me == 0 { ("0.8", "0.5") } else { ("0.5", "0.8") };
                    let difference = ("minhash.threshold".into(), ours.into(), theirs.into());
                    assert_eq!(differences, vec![difference]);
                }
                Err(other) => panic!("process {me}: {other}"),
                Ok(_) => panic!("process {me} accepted other settings"),
            }
        }
    }
}

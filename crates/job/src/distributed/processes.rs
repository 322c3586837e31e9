//! Running worker bodies on one process or on the several timely processes of a
//! distributed run, with the failure handling timely itself does not give.
//!
//! Timely's multi-process mode (`Config::Cluster`) connects the processes at start and
//! never re-admits one that leaves. A peer that dies breaks timely's connections to it; a
//! peer that stalls makes everyone wait forever. So:
//!
//! - the processes connect through `mesh`, which compares their settings first, tells
//!   each process when another ends (cleanly, with an error, or lost), and hands timely
//!   connections whose breaking is recorded there instead of panicking timely's threads;
//! - every worker sends a heartbeat once a second to all workers (a small broadcast
//!   dataflow) carrying a fingerprint of the input list, and the driver fails the job when a
//!   process has been silent longer than the watchdog, or lists different input files;
//! - the driver gives up on a signal or another process's end: it tells the workers to
//!   stop, gives them a moment to leave, and returns without them;
//! - worker results come back through shared slots, and on failure the driver does not
//!   join timely's network threads (joining would block on a stalled peer).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use timely::container::CapacityContainerBuilder;
use timely::dataflow::InputHandle;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::core::Input;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Broadcast;
use timely::worker::Worker;
use timely::{CommunicationConfig, WorkerConfig};

use crate::distributed::mesh::{Control, PeerStream};
use crate::distributed::traffic::Traffic;
use crate::error::JobError;

/// How the job is spread over threads and processes. Never changes results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Worker threads per process.
    pub workers: usize,
    /// Processes in the run (1 for a single machine).
    pub processes: usize,
    /// This process's index, `0..processes`.
    pub process: usize,
    /// `host:port` of every process, in process order (empty for one process).
    pub addresses: Vec<String>,
    /// A process silent for this long fails the job.
    pub watchdog: Duration,
    /// How long to wait for all processes to connect.
    pub connect_timeout: Duration,
    /// Bytes this process aims to stay within; grouping stages spill to disk past it.
    pub memory_budget: u64,
    /// Where this process's spill files go (a folder per worker below it).
    pub spill_dir: PathBuf,
}

impl Topology {
    /// `workers` threads in this one process.
    pub fn local(workers: usize) -> Self {
        Topology {
            workers: workers.max(1),
            processes: 1,
            process: 0,
            addresses: Vec::new(),
            watchdog: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(300),
            memory_budget: default_memory_budget(),
            spill_dir: std::env::temp_dir(),
        }
    }

    /// Workers in all processes.
    pub fn total_workers(&self) -> usize {
        self.workers * self.processes
    }

    /// The configuration of a one-process run (a distributed run connects in
    /// [`execute_distributed`]).
    fn timely_config(&self) -> timely::Config {
        let communication = if self.workers > 1 {
            CommunicationConfig::Process(self.workers)
        } else {
            CommunicationConfig::Thread
        };
        timely::Config { communication, worker: WorkerConfig::default() }
    }
}

/// Starts the `threads` workers of process `process` of a distributed run on `sockets` (one
/// to every other process, from [`crate::distributed::mesh::Mesh::pass_sockets`]), as
/// timely's own multi-process configuration would after connecting.
fn execute_distributed<T, F>(
    sockets: Vec<Option<PeerStream>>,
    process: usize,
    threads: usize,
    traffic: Option<Arc<Traffic>>,
    run: F,
) -> Result<timely::communication::WorkerGuards<T>, String>
where
    T: Send + 'static,
    F: Fn(&mut Worker) -> T + Send + Sync + 'static,
{
    use timely::communication::allocator::ProcessBuilder;
    use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
    use timely::communication::{AllocatorBuilder, Hooks};

    let mut hooks = Hooks::default();
    if let Some(traffic) = &traffic {
        hooks.log_fn = traffic.log_fn();
    }
    let locals =
        ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(locals, sockets, process, threads, hooks)
            .map_err(|e| format!("failed to initialize networking: {e}"))?;
    let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
    timely::execute::execute_from(builders, Box::new(guard), WorkerConfig::default(), run)
}

/// When each process was last heard from, when each local worker was last alive, and
/// whether a process lists other input files.
///
/// A worker that is blocked (in I/O, say) receives no heartbeats either, so the driver
/// first checks its own workers and blames a peer only when they are alive.
pub(crate) struct PeerClock {
    start: Mutex<Instant>,
    last_heard: Mutex<Vec<Option<Instant>>>,
    local_alive: Mutex<Vec<Option<Instant>>>,
    mismatch: Mutex<Option<usize>>,
}

impl PeerClock {
    fn new(processes: usize, local_workers: usize) -> Self {
        PeerClock {
            start: Mutex::new(Instant::now()),
            last_heard: Mutex::new(vec![None; processes]),
            local_alive: Mutex::new(vec![None; local_workers]),
            mismatch: Mutex::new(None),
        }
    }

    fn alive(&self, local_worker: usize) {
        if let Some(slot) = self.local_alive.lock().expect("clock lock").get_mut(local_worker) {
            *slot = Some(Instant::now());
        }
    }

    /// The local worker stuck the longest, if longer than `limit`.
    fn stuck(&self, limit: Duration) -> Option<(usize, Duration)> {
        Self::longest(
            &self.local_alive.lock().expect("clock lock"),
            *self.start.lock().expect("clock lock"),
            limit,
        )
    }

    fn longest(
        times: &[Option<Instant>],
        start: Instant,
        limit: Duration,
    ) -> Option<(usize, Duration)> {
        let now = Instant::now();
        times
            .iter()
            .enumerate()
            .map(|(i, t)| (i, now - t.unwrap_or(start)))
            .filter(|(_, quiet)| *quiet > limit)
            .max_by_key(|(_, quiet)| *quiet)
    }

    fn heard(&self, process: usize) {
        if let Some(slot) = self.last_heard.lock().expect("clock lock").get_mut(process) {
            *slot = Some(Instant::now());
        }
    }

    /// The process silent the longest, if longer than `limit` (never heard counts from start).
    fn silent(&self, limit: Duration) -> Option<(usize, Duration)> {
        Self::longest(
            &self.last_heard.lock().expect("clock lock"),
            *self.start.lock().expect("clock lock"),
            limit,
        )
    }
}

/// The input of the heartbeat dataflow: (process, input fingerprint).
type BeatInput = InputHandle<u64, CapacityContainerBuilder<Vec<(usize, u64)>>>;

/// What each local worker delivers: nothing yet, or its result.
type Slots<T> = Arc<Mutex<Vec<Option<Result<T, JobError>>>>>;

/// A worker's side of the heartbeat: call [`Heartbeat::beat`] often (it sends at most once
/// a second) and [`Heartbeat::close`] when the worker's real work is done.
pub(crate) struct Heartbeat {
    input: Option<BeatInput>,
    clock: Arc<PeerClock>,
    local_worker: usize,
    process: usize,
    fingerprint: u64,
    last: Option<Instant>,
    abort: Arc<AtomicBool>,
}

impl Heartbeat {
    fn install(
        worker: &mut Worker,
        local_worker: usize,
        process: usize,
        fingerprint: u64,
        clock: Arc<PeerClock>,
        abort: Arc<AtomicBool>,
    ) -> Self {
        let sink_clock = clock.clone();
        let input = worker.dataflow::<u64, _, _>(|scope| {
            let (input, beats) = scope.new_input::<Vec<(usize, u64)>>();
            beats.broadcast().sink(Pipeline, "Heartbeat", move |(input, _frontier)| {
                input.for_each(|_cap, batch| {
                    for (from, theirs) in batch.drain(..) {
                        sink_clock.heard(from);
                        if theirs != fingerprint {
                            sink_clock.mismatch.lock().expect("clock lock").get_or_insert(from);
                        }
                    }
                });
            });
            input
        });
        let mut beat = Heartbeat {
            input: Some(input),
            clock,
            local_worker,
            process,
            fingerprint,
            last: None,
            abort,
        };
        beat.beat();
        beat
    }

    /// Notes that this worker is alive, and sends a heartbeat if a second has passed since
    /// the last one.
    pub(crate) fn beat(&mut self) {
        self.clock.alive(self.local_worker);
        let due = self.last.is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if let (true, Some(input)) = (due, self.input.as_mut()) {
            input.send((self.process, self.fingerprint));
            let next = *input.time() + 1;
            input.advance_to(next);
            self.last = Some(Instant::now());
        }
    }

    /// Stops sending; the heartbeat dataflow ends once every worker has closed its own.
    pub(crate) fn close(&mut self) {
        self.input = None;
    }

    /// Whether the driver has given up on the job (a silent peer): stop working.
    pub(crate) fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }
}

/// Losses of peer connections seen by timely's network threads, by process.
static PEER_FAILURES: OnceLock<Mutex<Vec<(usize, String)>>> = OnceLock::new();

/// Installs a panic hook that records which peer a failing `timely:recv-N` or
/// `timely:send-N` thread talked to, so a lost connection is reported with the process
/// number, in one clear error. Those panics, and the panics of this process's workers that
/// follow from them, are not printed; any other panic goes to the previous hook. Call
/// once, early, in a binary.
pub fn capture_peer_failures() {
    let failures = PEER_FAILURES.get_or_init(|| Mutex::new(Vec::new()));
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("");
        let peer = ["timely:recv-", "timely:send-"]
            .iter()
            .find_map(|prefix| name.strip_prefix(prefix))
            .and_then(|p| p.parse().ok());
        let peer_lost = failures.lock().is_ok_and(|f| !f.is_empty());
        if name.starts_with("timely:work-") && peer_lost {
            return; // a worker whose channels to the lost peer broke
        }
        if let Some(process) = peer {
            let message = neardup_io::panic_message(info.payload()).unwrap_or_default();
            if let Ok(mut f) = failures.lock() {
                f.push((process, message));
            }
            return;
        }
        previous(info);
    }));
}

fn peer_failure() -> Option<(usize, String)> {
    PEER_FAILURES.get()?.lock().ok()?.first().cloned()
}

/// How long workers are given to leave once the driver gives up, before it goes on
/// without them (cleaning up the run's outputs, and exiting).
const LEAVE: Duration = Duration::from_secs(1);

/// What a pass of the workers shares with the driver besides their results.
pub(crate) struct Pass {
    /// What stops the pass from outside.
    pub(crate) control: Control,
    /// Counts the bytes the pass exchanges with the other processes.
    pub(crate) traffic: Option<Arc<Traffic>>,
    /// Set when the driver gives up (a signal, another process's end, a silent peer), so
    /// the workers stop reading and writing; [`Heartbeat::aborted`] says so too, so they
    /// stop waiting.
    pub(crate) abort: Arc<AtomicBool>,
}

/// Runs `body` on every worker of this process and returns their results in worker order.
///
/// `fingerprint` identifies the input list; processes that disagree fail the job.
///
/// # Errors
/// The first worker error; [`JobError::Connect`] when the processes do not connect in
/// time; [`JobError::Interrupted`] on a signal; [`JobError::PeerSilent`],
/// [`JobError::PeerLost`], [`JobError::PeerFailed`] or [`JobError::InputMismatch`] for
/// the failures of other processes; [`JobError::WorkerFailed`] when a worker panics.
pub(crate) fn run_workers<T, F>(
    topology: &Topology,
    pass: Pass,
    fingerprint: u64,
    body: F,
) -> Result<Vec<T>, JobError>
where
    T: Send + 'static,
    F: Fn(&mut Worker, &mut Heartbeat) -> Result<T, JobError> + Send + Sync + 'static,
{
    let Pass { control, traffic, abort } = pass;
    let control = &control;
    let local = topology.workers;
    let slots: Slots<T> = Arc::new(Mutex::new((0..local).map(|_| None).collect()));
    let clock = Arc::new(PeerClock::new(topology.processes, local));
    let given_up = Arc::new(AtomicBool::new(false));
    if let Some(stop) = control.stop() {
        return Err(stop);
    }
    let started =
        Started { slots: slots.clone(), clock: clock.clone(), given_up: given_up.clone() };
    let guards = start_workers(topology, control, traffic, fingerprint, started, body)?;
    // Silence counts from now: connecting may have taken a while.
    *clock.start.lock().expect("clock lock") = Instant::now();
    if topology.processes > 1 {
        tracing::info!(
            processes = topology.processes,
            process = topology.process,
            "all processes connected"
        );
    }
    if let Some(cause) = watch(topology, control, &clock, &slots, &guards) {
        // The workers stop reading, writing and waiting; those in a long step (a
        // blocked read, a sort) are left behind after a moment.
        given_up.store(true, Ordering::Relaxed);
        abort.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + LEAVE;
        while Instant::now() < deadline
            && !slots.lock().expect("slots lock").iter().all(Option::is_some)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::mem::forget(guards);
        return Err(cause);
    }
    let results: Vec<Option<Result<T, JobError>>> =
        std::mem::take(&mut *slots.lock().expect("slots lock"));
    let failed = results.iter().any(|r| !matches!(r, Some(Ok(_))));
    if failed {
        // Timely's network threads may be stuck on a dead or stalled peer: leave them,
        // rather than join them.
        std::mem::forget(guards);
        return Err(failure(results, topology.process * local, control));
    }
    // Every worker delivered. Join the threads if they finish promptly (they do unless a peer
    // vanished right at the end, which no longer matters for the result).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !guards.guards().iter().all(|g| g.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let lost = control.mesh.as_ref().is_some_and(|m| m.ends.any_lost());
    if guards.guards().iter().all(|g| g.is_finished()) && peer_failure().is_none() && !lost {
        drop(guards.join());
    } else {
        std::mem::forget(guards);
    }
    Ok(results
        .into_iter()
        .map(|r| match r {
            Some(Ok(value)) => value,
            _ => unreachable!("checked above: every slot holds a result"),
        })
        .collect())
}

/// What the workers of a pass share with the thread that watches them.
struct Started<T> {
    /// Each worker's result, by its slot in this process.
    slots: Slots<T>,
    clock: Arc<PeerClock>,
    /// Set when the driver gives up, for the workers' heartbeats.
    given_up: Arc<AtomicBool>,
}

/// Starts this process's workers (connected to the other processes' when there are some)
/// on a thread of their own, each running `body` into its slot; returns once they are
/// connected.
fn start_workers<T, F>(
    topology: &Topology,
    control: &Control,
    traffic: Option<Arc<Traffic>>,
    fingerprint: u64,
    started: Started<T>,
    body: F,
) -> Result<timely::communication::WorkerGuards<()>, JobError>
where
    T: Send + 'static,
    F: Fn(&mut Worker, &mut Heartbeat) -> Result<T, JobError> + Send + Sync + 'static,
{
    let (local, process) = (topology.workers, topology.process);
    let sockets = match (&control.mesh, topology.processes > 1) {
        (Some(mesh), true) => Some(mesh.pass_sockets(&|| control.stop())?),
        _ => None,
    };
    let Started { slots, clock, given_up } = started;
    let config = topology.timely_config();
    let worker_traffic = traffic.clone();
    let (started, connected) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("neardup:connect".into())
        .spawn(move || {
            let run = move |worker: &mut Worker| {
                let slot = worker.index() - process * local;
                if slot == 0
                    && let Some(traffic) = &worker_traffic
                {
                    traffic.watch(worker);
                }
                let mut heartbeat = Heartbeat::install(
                    worker,
                    slot,
                    process,
                    fingerprint,
                    clock.clone(),
                    given_up.clone(),
                );
                let result = body(worker, &mut heartbeat);
                heartbeat.close();
                slots.lock().expect("slots lock")[slot] = Some(result);
            };
            let guards = match sockets {
                Some(sockets) => execute_distributed(sockets, process, local, traffic, run),
                None => timely::execute(config, run),
            };
            let _ = started.send(guards);
        })
        .map_err(|e| JobError::Start(e.to_string()))?;
    match connected.recv_timeout(topology.connect_timeout) {
        Ok(Ok(guards)) => Ok(guards),
        Ok(Err(message)) => Err(JobError::Start(message)),
        Err(_) => Err(JobError::Connect {
            processes: topology.processes,
            seconds: topology.connect_timeout.as_secs(),
        }),
    }
}

/// Waits until every worker has a result or has ended; returns why the driver gives up
/// first, if it does: a signal, another process's end, a silent peer or a stalled worker.
fn watch<T>(
    topology: &Topology,
    control: &Control,
    clock: &PeerClock,
    slots: &Slots<T>,
    guards: &timely::communication::WorkerGuards<()>,
) -> Option<JobError> {
    let (local, process) = (topology.workers, topology.process);
    loop {
        let filled = slots.lock().expect("slots lock").iter().all(Option::is_some);
        let finished = guards.guards().iter().all(|g| g.is_finished());
        if filled || finished {
            return None;
        }
        let cause = control.stop().or_else(|| {
            if topology.processes == 1 {
                return None;
            }
            if let Some(other) = *clock.mismatch.lock().expect("clock lock") {
                return Some(JobError::InputMismatch { process: other });
            }
            if let Some((stuck, quiet)) = clock.stuck(topology.watchdog) {
                let worker = process * local + stuck;
                return Some(JobError::WorkerStalled { worker, process, seconds: quiet.as_secs() });
            }
            let (silent, quiet) = clock.silent(topology.watchdog)?;
            Some(JobError::PeerSilent { process: silent, seconds: quiet.as_secs() })
        });
        if cause.is_some() {
            return cause;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The error of a run some of whose workers (`first_worker` on) failed or delivered
/// nothing: a worker's own error first, then what became of another process.
fn failure<T>(
    results: Vec<Option<Result<T, JobError>>>,
    first_worker: usize,
    control: &Control,
) -> JobError {
    let mut missing = None;
    for (local_index, result) in results.into_iter().enumerate() {
        match result {
            Some(Err(JobError::Stopped)) | Some(Ok(_)) => {}
            Some(Err(e)) => return e,
            None => {
                missing.get_or_insert(first_worker + local_index);
            }
        }
    }
    if let Some(e) = control.stop().or_else(|| control.peer_failure(Duration::ZERO)) {
        return e;
    }
    if let Some((peer, message)) = peer_failure() {
        return JobError::PeerLost { process: peer, message };
    }
    match missing {
        Some(worker) => JobError::WorkerFailed {
            worker,
            message: "the worker stopped without a result (see the panic above)".into(),
        },
        None => JobError::Stopped,
    }
}

/// The smallest budget a run keeps to: below it, what every run needs whatever its budget
/// (the program, dictionaries, every stage's buffers: 150 to 220 MB with 2 workers on
/// 100,000 documents) is more than the budget allows.
pub const MEMORY_BUDGET_FLOOR: u64 = 256 << 20;

/// Half the memory this process may use: the smallest of the machine's memory and the
/// container's cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`), or 4 GiB when
/// none can be read.
pub fn default_memory_budget() -> u64 {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let mut limits = Vec::new();
    if let Some(meminfo) = read("/proc/meminfo") {
        let total = meminfo.lines().find_map(|l| {
            let kib = l.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?.trim();
            kib.parse::<u64>().ok()
        });
        limits.extend(total.map(|k| k * 1024));
    }
    for path in ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"] {
        // "max" (v2) or a huge number (v1) mean no limit.
        if let Some(limit) = read(path).and_then(|s| s.trim().parse::<u64>().ok())
            && limit < 1 << 60
        {
            limits.push(limit);
        }
    }
    limits.into_iter().min().map_or(4 << 30, |limit| limit / 2)
}

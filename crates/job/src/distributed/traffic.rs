//! Bytes this process exchanged with the other processes of a distributed run, by stage:
//! what a network model of a run on more machines is fed with. Each timely execution (the
//! corpus passes, the main dataflow) counts in its own [`Traffic`], as it numbers its
//! channels afresh.
//!
//! Timely's network threads log every message they write or read (payload and header)
//! with its channel; the first worker of the process logs, as the dataflow is built,
//! which operator each channel feeds and the type of its records, and that names the
//! stage. Messages between workers of one process are never serialised, so a run of one
//! process exchanges nothing. The counts are complete once the network threads end, after
//! every process has finished its dataflow.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use timely::communication::logging::{
    CommunicationEvent, CommunicationEventBuilder, CommunicationSetup,
};
use timely::logging::{TimelyEvent, TimelyEventBuilder};
use timely::logging_core::Logger;
use timely::worker::Worker;

/// Bytes sent to and received from the other processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchanged {
    /// Bytes written to the other processes (message headers included).
    pub sent: u64,
    /// Bytes read from them.
    pub received: u64,
}

/// What a channel carries: the operator it feeds and the type of its records.
struct Channel {
    scope: Vec<usize>,
    target: usize,
    records: String,
}

/// The counts of one process, filled by its network threads and, when it names stages, its
/// first worker.
#[derive(Default)]
pub(crate) struct Traffic {
    names_stages: bool,
    by_channel: Mutex<HashMap<usize, Exchanged>>,
    channels: Mutex<HashMap<usize, Channel>>,
    operators: Mutex<HashMap<Vec<usize>, String>>,
}

/// Timely's message header: six `u64` fields before every payload.
const HEADER_BYTES: u64 = 48;

type LogFn =
    Arc<dyn Fn(CommunicationSetup) -> Option<Logger<CommunicationEventBuilder>> + Send + Sync>;

impl Traffic {
    /// Counts by stage ([`Traffic::by_stage`]), or only in total ([`Traffic::total`]), which
    /// spares the first worker logging the dataflow's construction.
    pub(crate) fn new(names_stages: bool) -> Traffic {
        Traffic { names_stages, ..Traffic::default() }
    }

    /// The logger factory for timely's network threads.
    pub(crate) fn log_fn(self: &Arc<Self>) -> LogFn {
        let traffic = self.clone();
        Arc::new(move |_setup: CommunicationSetup| {
            let traffic = traffic.clone();
            let mut local: HashMap<usize, Exchanged> = HashMap::new();
            Some(Logger::new(
                Instant::now(),
                Duration::ZERO,
                move |_time: &Duration,
                      events: &mut Option<Vec<(Duration, CommunicationEvent)>>| {
                    if let Some(events) = events {
                        for (_, event) in events.iter() {
                            if let CommunicationEvent::Message(m) = event
                                && m.header.length > 0
                            {
                                let bytes = m.header.length as u64 + HEADER_BYTES;
                                let entry = local.entry(m.header.channel).or_default();
                                if m.is_send {
                                    entry.sent += bytes;
                                } else {
                                    entry.received += bytes;
                                }
                            }
                        }
                    }
                    let mut shared = traffic.by_channel.lock().expect("traffic lock");
                    for (channel, counts) in local.drain() {
                        let entry = shared.entry(channel).or_default();
                        entry.sent += counts.sent;
                        entry.received += counts.received;
                    }
                },
            ))
        })
    }

    /// Logs, on this worker, the channels and operators of the dataflows it builds from now
    /// on. Every worker builds the same dataflows, so one worker per process names them.
    pub(crate) fn watch(self: &Arc<Self>, worker: &mut Worker) {
        if !self.names_stages {
            return;
        }
        let Some(mut registry) = worker.log_register() else { return };
        let traffic = self.clone();
        registry.insert::<TimelyEventBuilder, _>(
            "timely",
            move |_time: &Duration, events: &mut Option<Vec<(Duration, TimelyEvent)>>| {
                let Some(events) = events else { return };
                for (_, event) in events.iter() {
                    match event {
                        TimelyEvent::Operates(o) => {
                            traffic
                                .operators
                                .lock()
                                .expect("traffic lock")
                                .insert(o.addr.clone(), o.name.clone());
                        }
                        TimelyEvent::Channels(c) => {
                            let channel = Channel {
                                scope: c.scope_addr.clone(),
                                target: c.target.0,
                                records: c.typ.clone(),
                            };
                            traffic.channels.lock().expect("traffic lock").insert(c.id, channel);
                        }
                        _ => {}
                    }
                }
            },
        );
    }

    /// Every channel's counts together.
    pub(crate) fn total(&self) -> Exchanged {
        let mut total = Exchanged::default();
        for counts in self.by_channel.lock().expect("traffic lock").values() {
            total.sent += counts.sent;
            total.received += counts.received;
        }
        total
    }

    /// The counts by stage; a channel no dataflow edge announced carries progress.
    pub(crate) fn by_stage(&self) -> BTreeMap<String, Exchanged> {
        let channels = self.channels.lock().expect("traffic lock");
        let operators = self.operators.lock().expect("traffic lock");
        let mut stages: BTreeMap<String, Exchanged> = BTreeMap::new();
        for (id, counts) in self.by_channel.lock().expect("traffic lock").iter() {
            let stage = match channels.get(id) {
                None => "progress",
                Some(c) => {
                    let mut addr = c.scope.clone();
                    addr.push(c.target);
                    stage_of(operators.get(&addr).map_or("", String::as_str), &c.records)
                }
            };
            let entry = stages.entry(stage.to_string()).or_default();
            entry.sent += counts.sent;
            entry.received += counts.received;
        }
        stages
    }
}

/// The stage a channel belongs to, from the operator it feeds and its record type.
fn stage_of(operator: &str, records: &str) -> &'static str {
    let has = |name: &str| records.contains(name);
    const CLUSTERING: [&str; 5] =
        ["Components", "KeepDocuments", "Hops", "ClusterMembers", "VerifiedWithKept"];
    if CLUSTERING.contains(&operator) || has("Membership") {
        "cluster"
    } else if has("IndexKey") || has("IndexCandidate") || has("IndexRef") {
        "index"
    } else if has("BucketRecord") {
        "buckets"
    } else if has("Candidate") || has("HalfPair") {
        "verify"
    } else if has("IdClaim") || has("ContentKey") || operator == "ExactGroups" {
        "ids_and_exact"
    } else if has("StoreIn") || has("SignedDoc") || has("records::Item") {
        "read_and_sign"
    } else if operator == "GatherReports" || has("WorkerReport") {
        "reports"
    } else if operator.starts_with("Write") || operator == "NameClusters" || has("Verdict") {
        "writing"
    } else {
        "other" // heartbeats and the workers' start-up exchanges: a few hundred bytes
    }
}

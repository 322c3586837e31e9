//! The least value reachable over a graph's links, in rounds that spill: connected
//! components (the least `DocId`) and hop counts (breadth-first search).
//!
//! Partitioning: links by their source, seeds and offers by their node, so a node's links,
//! value and offers are on one worker. Rounds are timely times on a feedback loop: the
//! values that changed in a round are offered to their neighbours at the next time, and a
//! round is taken in once no worker can still send to it (the loop's frontier has passed
//! it), so the loop ends when a round changes nothing anywhere. The result is the unique
//! fixpoint, whatever the workers and the order of arrival.
//!
//! Holds, per worker: the links (a sorted file, in memory up to the spill limit), the
//! values (one sorted file, rewritten each round), a round's offers in sorted runs and
//! its changed values; each in memory up to the spill limit. A round reads every link
//! once, so its cost grows with the links times the rounds (the graph's diameter for
//! components, the radius for hops); offers go out a batch per activation.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use neardup_core::DocId;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::{Capability, ConnectLoop, Feedback};
use timely::progress::frontier::MutableAntichain;

use crate::operators::collect::Spill;
use crate::storage::routing::route_doc;
use crate::storage::spill::{MemSize, Merged, SortedFile, SortedIter, SortedRuns, SpillError};

/// Links looked at per activation while offering a round's changes.
const OFFER_BATCH: usize = 65_536;

/// One direction of a pair: `src` offers its value to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Link {
    /// The node whose value is offered.
    pub src: DocId,
    /// Its neighbour.
    pub dst: DocId,
}

/// A node's value and what it carries along (the payload of its seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Node<V, P> {
    /// The node.
    pub node: DocId,
    /// Its value: the least seed or offer it got.
    pub value: V,
    /// What its seed carried (the default for a node reached without a seed).
    pub payload: P,
}

/// A value offered to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Offer<V> {
    node: DocId,
    value: V,
}

impl MemSize for Link {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}
impl<V: Copy, P: Copy> MemSize for Node<V, P> {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}
impl<V: Copy> MemSize for Offer<V> {
    fn mem_size(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// What a value of the propagation must be: small, ordered, storable.
pub(crate) trait Value:
    Copy + Ord + Send + Serialize + DeserializeOwned + std::fmt::Debug + 'static
{
}
impl<T: Copy + Ord + Send + Serialize + DeserializeOwned + std::fmt::Debug + 'static> Value for T {}

/// The links of a worker's share of the graph, sorted by source (then destination), once
/// the propagation that collects them has them: later propagations and lookups on the same
/// worker read them from here. The file goes when the last holder lets go.
pub(crate) type SharedLinks = Rc<RefCell<Option<SortedFile<Link>>>>;

/// Where a propagation finds its links.
pub(crate) enum Links<'s> {
    /// Collects them from a stream (both directions of every pair) and shares them.
    Collect(StreamVec<'s, u64, Link>, SharedLinks),
    /// Reads those an earlier propagation shared.
    Shared(SharedLinks),
}

enum Phase<V, P> {
    /// Collecting the seeds, and the links unless they are shared, until the inputs are
    /// complete.
    Collecting(Option<SortedRuns<Link>>, SortedRuns<Node<V, P>>),
    /// Between rounds: waiting for a round's offers to be complete, or for the end.
    Waiting,
    /// Offering a round's changed values over the links, at the round's time (offers
    /// arrive at the next).
    Offering(Capability<u64>, Offering<V>),
    /// Emitting every node's final value.
    Emitting(SortedIter<Node<V, P>>),
    Done,
}

struct Offering<V> {
    /// The changed values, by node, from `current` on.
    changed: Merged<Offer<V>>,
    current: Option<Offer<V>>,
    /// The links, by source.
    links: SortedIter<Link>,
}

impl<V: Value> Offering<V> {
    /// Offers the changed values over the links from changed nodes, looking at up to
    /// [`OFFER_BATCH`] links; returns whether every offer is made.
    fn offer(
        &mut self,
        step: &impl Fn(DocId, &V) -> Option<V>,
        give: &mut impl FnMut(Offer<V>),
    ) -> Result<bool, SpillError> {
        for _ in 0..OFFER_BATCH {
            let Some(mut changed) = self.current else { return Ok(true) };
            let Some(link) = self.links.next() else { return Ok(true) };
            let link = link?;
            while changed.node < link.src {
                match self.changed.next() {
                    Some(next) => changed = next?,
                    None => {
                        self.current = None;
                        return Ok(true);
                    }
                }
            }
            self.current = Some(changed);
            if changed.node == link.src
                && let Some(value) = step(link.dst, &changed.value)
            {
                give(Offer { node: link.dst, value });
            }
        }
        Ok(false)
    }
}

/// Every node reachable from a seed gets the least of its seeds and of `step(dst, value)`
/// over the values of its neighbours (`links` must hold both directions of a pair;
/// `step` returns `None` where an offer cannot lower `dst`'s value, and must not lower a
/// value: `step(_, v) >= v`). Emits each node once, with its value and its least seed's
/// payload, at the first time, once no round changes anything.
pub(crate) fn propagate<'s, V, P>(
    links: Links<'s>,
    seeds: StreamVec<'s, u64, Node<V, P>>,
    step: impl Fn(DocId, &V) -> Option<V> + 'static,
    name: &str,
    spill: Spill,
) -> StreamVec<'s, u64, Node<V, P>>
where
    V: Value,
    P: Value + Default,
{
    let scope = seeds.scope();
    let (handle, offers) = scope.feedback::<Vec<Offer<V>>>(1);
    let mut builder = OperatorBuilder::new(name.to_owned(), scope);
    let activator = scope.activator_for(builder.operator_info().address);
    let mut seeds_in = builder.new_input(seeds, Exchange::new(|n: &Node<V, P>| route_doc(n.node)));
    let mut offers_in = builder.new_input(offers, Exchange::new(|o: &Offer<V>| route_doc(o.node)));
    let (mut links_in, shared) = match links {
        Links::Collect(links, shared) => {
            (Some(builder.new_input(links, Exchange::new(|l: &Link| route_doc(l.src)))), shared)
        }
        Links::Shared(shared) => (None, shared),
    };
    // Collecting links and seeds at once, each gets half the limit.
    let collecting = match links_in {
        Some(_) => spill.share(2),
        None => spill.clone(),
    };
    let (offers_out, offers_stream) = builder.new_output::<Vec<Offer<V>>>();
    let (nodes_out, nodes_stream) = builder.new_output::<Vec<Node<V, P>>>();
    let mut offers_out = OutputBuilder::from(offers_out);
    let mut nodes_out = OutputBuilder::from(nodes_out);

    builder.build(move |mut caps| {
        let nodes_cap = caps.pop();
        let first_cap = caps.pop();
        let links_runs = links_in.as_ref().map(|_| collecting.runs());
        let mut state = State::new(links_runs, collecting.runs(), first_cap, nodes_cap);
        move |frontiers| {
            let mut error: Option<SpillError> = None;
            let (mut offers_session, mut nodes_session) =
                (offers_out.activate(), nodes_out.activate());
            // Take in whatever arrived; after a failure, drop it.
            for links_in in links_in.iter_mut() {
                links_in.for_each(|_cap, batch| state.collect_links(batch, &mut error));
            }
            seeds_in.for_each(|_cap, batch| state.collect_seeds(batch, &mut error));
            offers_in.for_each(|cap, batch| {
                if state.failed {
                    return;
                }
                let Some(time) = cap.least().copied() else {
                    unreachable!("offers are sent at a time")
                };
                let (_, runs) = state.rounds.entry(time).or_insert_with(|| {
                    (cap.delayed(&time, offers_session.output_index()), spill.runs())
                });
                for offer in batch.drain(..) {
                    if let Err(e) = runs.push(offer) {
                        error.get_or_insert(e);
                    }
                }
            });
            if let Some(e) = error {
                state.fail(&spill, e);
            }
            if state.failed || spill.failed() {
                // Stop: hold nothing, so the loop and the run can end.
                state.stop();
                return;
            }
            let outcome = (|| -> Result<(), SpillError> {
                loop {
                    match &mut state.phase {
                        Phase::Collecting(..) => {
                            if !state.round_zero(frontiers, &shared, &spill)? {
                                return Ok(());
                            }
                        }
                        Phase::Offering(cap, offering) => {
                            let mut session = offers_session.session(cap);
                            let finished = offering.offer(&step, &mut |o| session.give(o))?;
                            drop(session);
                            if !finished {
                                activator.activate();
                                return Ok(());
                            }
                            // Done with this round: its capability goes.
                            state.phase = Phase::Waiting;
                        }
                        Phase::Waiting => {
                            if !state.next_round(frontiers, &spill)? {
                                return Ok(());
                            }
                        }
                        Phase::Emitting(nodes) => {
                            let cap = state.nodes_cap.as_ref().expect("held until the end");
                            let mut session = nodes_session.session(cap);
                            let emitted = emit_batch(nodes, &mut |node| session.give(node))?;
                            drop(session);
                            if emitted {
                                (state.nodes_cap, state.phase) = (None, Phase::Done);
                            } else {
                                activator.activate();
                            }
                            return Ok(());
                        }
                        Phase::Done => return Ok(()),
                    }
                }
            })();
            if let Err(e) = outcome {
                state.fail(&spill, e);
            }
        }
    });
    offers_stream.connect_loop(handle);
    nodes_stream
}

/// What a propagation holds between activations.
struct State<V, P> {
    phase: Phase<V, P>,
    /// The links, by source, from round zero until the end.
    links_file: Option<SortedFile<Link>>,
    /// Every node's value, from round zero on.
    values: Option<SortedFile<Node<V, P>>>,
    /// Each round's offers, with a capability at its time.
    rounds: BTreeMap<u64, (Capability<u64>, SortedRuns<Offer<V>>)>,
    /// The first time, held until round zero is offered.
    first_cap: Option<Capability<u64>>,
    /// The time the nodes are emitted at, held until they are.
    nodes_cap: Option<Capability<u64>>,
    /// Whether a spill failed: then nothing more is taken in or sent.
    failed: bool,
}

impl<V: Value, P: Value + Default> State<V, P> {
    fn new(
        links: Option<SortedRuns<Link>>,
        seeds: SortedRuns<Node<V, P>>,
        first_cap: Option<Capability<u64>>,
        nodes_cap: Option<Capability<u64>>,
    ) -> Self {
        State {
            phase: Phase::Collecting(links, seeds),
            links_file: None,
            values: None,
            rounds: BTreeMap::new(),
            first_cap,
            nodes_cap,
            failed: false,
        }
    }

    /// Collects links while collecting (the first error goes to `error`).
    fn collect_links(&mut self, batch: &mut Vec<Link>, error: &mut Option<SpillError>) {
        if let Phase::Collecting(Some(links), _) = &mut self.phase {
            for link in batch.drain(..) {
                if let Err(e) = links.push(link) {
                    error.get_or_insert(e);
                }
            }
        }
    }

    /// Collects seeds while collecting (the first error goes to `error`).
    fn collect_seeds(&mut self, batch: &mut Vec<Node<V, P>>, error: &mut Option<SpillError>) {
        if let Phase::Collecting(_, seeds) = &mut self.phase {
            for seed in batch.drain(..) {
                if let Err(e) = seeds.push(seed) {
                    error.get_or_insert(e);
                }
            }
        }
    }

    /// Records a spill error, and stops.
    fn fail(&mut self, spill: &Spill, error: SpillError) {
        spill.settle::<()>(0, Err(error));
        self.failed = true;
        self.stop();
    }

    /// Holds nothing more, so the loop and the run can end.
    fn stop(&mut self) {
        (self.first_cap, self.nodes_cap, self.phase, self.links_file, self.values) =
            (None, None, Phase::Done, None, None);
        self.rounds.clear();
    }

    /// Once the seeds (and the links, unless shared) are in: files the links and shares
    /// them, and takes the seeds in as round zero, offered at the first time (offers wait
    /// for it). Returns whether it did.
    fn round_zero(
        &mut self,
        frontiers: &[MutableAntichain<u64>],
        shared: &SharedLinks,
        spill: &Spill,
    ) -> Result<bool, SpillError> {
        if !frontiers[0].is_empty() || frontiers.get(2).is_some_and(|f| !f.is_empty()) {
            return Ok(false);
        }
        let Phase::Collecting(links, seeds) = std::mem::replace(&mut self.phase, Phase::Done)
        else {
            unreachable!("called while collecting")
        };
        let links_spilled = links.as_ref().map_or(0, SortedRuns::spilled_bytes);
        spill.settle::<()>(links_spilled + seeds.spilled_bytes(), Ok(()));
        self.links_file = match links {
            Some(links) => {
                let file = links.into_file()?;
                *shared.borrow_mut() = Some(file.clone());
                Some(file)
            }
            None => Some(
                shared
                    .borrow()
                    .clone()
                    .expect("the links are shared before a later propagation starts"),
            ),
        };
        let seeds = seeds.into_sorted()?.map(|s| s.map(|n| (n.node, n.value, n.payload)));
        let (file, changed) = absorb(None, seeds, spill)?;
        self.values = Some(file);
        let cap = self.first_cap.take().expect("held until round zero");
        self.phase = offering(cap, changed, self.links_file.as_ref())?;
        Ok(true)
    }

    /// Between rounds: takes in the next round once its offers are complete, or starts
    /// emitting once no round can come. Returns whether there is more to do now.
    fn next_round(
        &mut self,
        frontiers: &[MutableAntichain<u64>],
        spill: &Spill,
    ) -> Result<bool, SpillError> {
        let ready =
            self.rounds.keys().next().copied().filter(|time| !frontiers[1].less_equal(time));
        if let Some(time) = ready {
            let (cap, runs) = self.rounds.remove(&time).expect("the round is held");
            spill.settle::<()>(runs.spilled_bytes(), Ok(()));
            let offers = runs.into_sorted()?;
            let (file, changed) = absorb(
                self.values.take(),
                offers.map(|o| o.map(|o| (o.node, o.value, P::default()))),
                spill,
            )?;
            self.values = Some(file);
            self.phase = offering(cap, changed, self.links_file.as_ref())?;
            Ok(true)
        } else if self.rounds.is_empty() && frontiers.iter().all(|f| f.is_empty()) {
            self.links_file = None;
            let file = self.values.take().expect("values follow round zero");
            self.phase = Phase::Emitting(file.iter()?);
            Ok(true)
        } else {
            Ok(false)
        }
    }
}

/// Gives up to [`OFFER_BATCH`] nodes; returns whether all are given.
fn emit_batch<N>(
    nodes: &mut impl Iterator<Item = Result<N, SpillError>>,
    give: &mut impl FnMut(N),
) -> Result<bool, SpillError> {
    for _ in 0..OFFER_BATCH {
        match nodes.next() {
            Some(node) => give(node?),
            None => return Ok(true),
        }
    }
    Ok(false)
}

/// Starts offering the changed values of a round; a round that changed nothing only drops
/// its capability.
fn offering<V: Value, P>(
    cap: Capability<u64>,
    changed: SortedRuns<Offer<V>>,
    links: Option<&SortedFile<Link>>,
) -> Result<Phase<V, P>, SpillError> {
    if changed.is_empty() {
        return Ok(Phase::Waiting);
    }
    let links = links.expect("links are read before round zero").iter()?;
    let mut changed = changed.into_sorted()?;
    let current = changed.next().transpose()?;
    Ok(Phase::Offering(cap, Offering { changed, current, links }))
}

/// Merges a round's seeds or offers (sorted by node, then value) into the values: a node
/// takes its least offer when lower than its value, with the payload of its first seed.
/// Returns the new values and the nodes whose value changed, with that value.
#[allow(clippy::type_complexity)]
fn absorb<V: Value, P: Value>(
    old: Option<SortedFile<Node<V, P>>>,
    offers: impl Iterator<Item = Result<(DocId, V, P), SpillError>>,
    spill: &Spill,
) -> Result<(SortedFile<Node<V, P>>, SortedRuns<Offer<V>>), SpillError> {
    let mut new: SortedRuns<Node<V, P>> = spill.runs();
    let mut changed: SortedRuns<Offer<V>> = spill.runs();
    let mut old = match &old {
        Some(file) => Some(file.iter()?),
        None => None,
    }
    .into_iter()
    .flatten()
    .peekable();
    let mut last: Option<DocId> = None;
    for offer in offers {
        let (node, value, payload) = offer?;
        if last == Some(node) {
            continue; // a later, larger offer to the same node
        }
        last = Some(node);
        // Values of nodes before this one stay.
        while let Some(Ok(n)) = old.peek()
            && n.node < node
        {
            new.push(old.next().unwrap()?)?;
        }
        if let Some(Err(_)) = old.peek() {
            return Err(old.next().unwrap().unwrap_err());
        }
        match old.next_if(|n| matches!(n, Ok(n) if n.node == node)) {
            Some(current) => {
                let mut current = current?;
                if value < current.value {
                    current.value = value;
                    changed.push(Offer { node, value })?;
                }
                new.push(current)?;
            }
            None => {
                new.push(Node { node, value, payload })?;
                changed.push(Offer { node, value })?;
            }
        }
    }
    for rest in old {
        new.push(rest?)?;
    }
    spill.settle::<()>(new.spilled_bytes() + changed.spilled_bytes(), Ok(()));
    Ok((new.into_file()?, changed))
}

#[cfg(test)]
mod tests {
    use timely::dataflow::operators::Inspect;
    use timely::dataflow::operators::vec::ToStream;

    use super::*;
    use crate::operators::testing::{one_worker, spill};

    fn doc(record: u64) -> DocId {
        DocId::new(0, record)
    }

    /// Labels chains of 10 nodes, `10c - 10c+1 - ... - 10c+9` for `c` in `0..chains` (both
    /// directions), from every node with `spill`; returns what was emitted.
    fn label_chains(chains: u64, spill: Spill) -> Vec<(u64, u64)> {
        let out = Rc::new(RefCell::new(Vec::new()));
        let sink = out.clone();
        one_worker(move |worker| {
            worker.dataflow::<u64, _, _>(move |scope| {
                let links: Vec<Link> = (0..chains * 10)
                    .filter(|i| i % 10 != 9)
                    .flat_map(|i| {
                        [
                            Link { src: doc(i), dst: doc(i + 1) },
                            Link { src: doc(i + 1), dst: doc(i) },
                        ]
                    })
                    .collect();
                let seeds: Vec<Node<DocId, ()>> = (0..chains * 10)
                    .map(|i| Node { node: doc(i), value: doc(i), payload: () })
                    .collect();
                propagate(
                    Links::Collect(links.to_stream(scope), SharedLinks::default()),
                    seeds.to_stream(scope),
                    |dst, label: &DocId| (*label < dst).then_some(*label),
                    "Components",
                    spill,
                )
                .inspect(move |n| sink.borrow_mut().push((n.node.record(), n.value.record())));
            });
        });
        let mut out = out.take();
        out.sort_unstable();
        out
    }

    #[test]
    fn a_chain_is_one_component_labelled_by_its_least_node() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path(), 0);
        // 36,000 links of 16 bytes against the 64 KiB floor: the links, the values and
        // the offers spill.
        let out = label_chains(2_000, spill.clone());
        assert_eq!(out, (0..20_000).map(|i| (i, i / 10 * 10)).collect::<Vec<_>>());
        assert!(spill.stats.borrow().resources.spilled_bytes > 0);
        assert!(!spill.failed());
    }

    #[test]
    fn a_spill_error_is_recorded_and_the_loop_ends_without_output() {
        let dir = tempfile::tempdir().unwrap();
        // A spill folder below a regular file cannot be made.
        std::fs::write(dir.path().join("file"), "").unwrap();
        let spill = spill(&dir.path().join("file").join("spill"), 0);
        let out = label_chains(2_000, spill.clone());
        assert!(out.is_empty(), "{} nodes emitted", out.len());
        assert!(spill.failed());
        let error = spill.error.borrow().clone().unwrap().message().to_string();
        assert!(error.contains("file/spill"), "{error}");
    }
}

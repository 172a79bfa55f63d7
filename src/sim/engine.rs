//! The event loop: one replication of a compiled [`SimModel`].
//!
//! Design for speed (≥ 10 M events/s on one core) and flat memory:
//! - the model is compiled into a flat program of `Op`s; a job (a *token*) carries a
//!   program counter. A fork spawns one child token per branch; the parent waits on a
//!   counter and resumes at the op after the fork when the last child reaches `BranchEnd`;
//! - the only event is "token `t` finishes its current activity at time τ" (service, think,
//!   or an open source's next arrival), kept in a 4-ary min-heap of packed `u128` keys
//!   (time bits, token id) — ties are broken by token id, so runs are deterministic. The
//!   event being handled stays at the top of the heap until the handler schedules its first
//!   new event, which then replaces it with one sift-down instead of a pop and a push;
//! - tokens and the heap are vectors that grow to the peak number of jobs and are then
//!   reused; a copy's FIFO queue is a list linked through the tokens. No allocation per
//!   event (after the peak), no dynamic dispatch; memory does not grow with simulated time
//!   (`tests/sim_memory.rs`);
//! - random numbers come from separate xoshiro256++ streams per (class, station) service,
//!   per station placement and per class think/arrival and routing, each a disjoint block
//!   of one sequence per (master seed, replication) chosen by a stream id built from those
//!   indices (see `make_streams`), so changing one parameter leaves every other stream
//!   unchanged (common random numbers across sweep points). The generator is a few
//!   instructions per draw, where ChaCha8 (used before) cost about 30;
//! - a visit to a station with batching ([`crate::sim::SimStation::batching`]) is its own
//!   op, `BatchVisit`, served by the `BATCH = true` instances of `arrive` and `depart`:
//!   they count the jobs waiting at each copy and multiply a sampled service time by the
//!   demand factor of the queue when that service starts (the starting job and those
//!   still waiting behind it), fixed for the whole service. Stations without batching
//!   run the same code as before batching existed.
//!
//! Statistics are time integrals of jobs present and servers busy per station, and per
//! class response-time count, sum, a fixed-size [`Histogram`] and optionally a bounded
//! [`BatchSeries`] for warm-up detection. Not here: replications, warm-up policy and
//! stopping (see `sim`).

use rand::{Rng, SeedableRng};
use rand_xoshiro::SplitMix64;

use super::dist::{uniform_open, Sampler, SimRng};
use super::hist::Histogram;
use super::model::{Arrivals, ChoiceBranch, Placement, SimModel, Step};
use super::stats::BatchSeries;
use crate::qn::{Batching, StationKind};

const NONE: u32 = u32::MAX;
/// Forks place at most this many branches on distinct copies; further branches of a wider
/// fork choose independently.
const MAX_DISTINCT: usize = 16;
/// Program counter of an open class's arrival source.
const SOURCE_PC: u32 = u32::MAX;

/// `repr(u32)`: an explicit tag, so that the event loop's `match` jumps on it directly
/// instead of first decoding it from the niche in `Visit`'s sampler.
#[derive(Debug, Clone, Copy)]
#[repr(u32)]
enum Op {
    Visit {
        station: u32,
        stream: u32,
        sampler: Sampler,
    },
    /// A visit to a station with batching (see [`Compiled::batching`]).
    BatchVisit {
        station: u32,
        stream: u32,
        sampler: Sampler,
    },
    Fork {
        first: u32,
        count: u32,
    },
    /// Start a detached child at `start` (its parent does not wait for it).
    Detach {
        start: u32,
    },
    BranchEnd,
    CycleEnd {
        class: u32,
    },
    /// Take one of `choices[first .. first + count]` at random.
    Choice {
        first: u32,
        count: u32,
    },
    Goto {
        target: u32,
    },
}

/// One branch of a compiled fork.
#[derive(Debug, Clone, Copy)]
struct ForkBranch {
    start: u32,
    /// The randomly placed station whose copy the fork picks for this branch's first visit,
    /// distinct from the copies picked for earlier branches at that station; `NONE` if the
    /// copy is chosen on arrival as usual. Fixed at compile time: it depends only on the
    /// route (see [`Compiled::plan_distinct_copies`]).
    distinct_station: u32,
}

/// One alternative of a compiled choice.
#[derive(Debug, Clone, Copy)]
struct ChoiceEntry {
    /// Cumulative probability up to and including this branch.
    cum: f64,
    start: u32,
    /// Index into `Compiled::labels`, or `NONE` inside fork branches.
    label: u32,
}

#[derive(Debug, Clone, Copy)]
struct CStation {
    delay: bool,
    servers: u32,
    multiplicity: u32,
    round_robin: bool,
    copy_base: u32,
}

#[derive(Debug, Clone, Copy)]
enum CArrivals {
    Closed { population: u32, think: Sampler },
    Open { interarrival: Sampler },
}

/// A [`SimModel`] compiled for the event loop. Build once, run many replications.
#[derive(Debug, Clone)]
pub struct Compiled {
    ops: Vec<Op>,
    branches: Vec<ForkBranch>,
    choices: Vec<ChoiceEntry>,
    /// (class, label) of every labelled choice branch, deduplicated, in first-seen order.
    labels: Vec<(usize, String)>,
    class_start: Vec<u32>,
    arrivals: Vec<CArrivals>,
    stations: Vec<CStation>,
    /// Per station, its batching (read only by `BatchVisit` ops, which exist only for
    /// stations that have one).
    batching: Vec<Option<Batching>>,
    n_copies: usize,
    n_streams: usize,
    /// First stream id of each kind (see [`Compiled::new`]).
    placement_base: usize,
    arrival_base: usize,
    routing_base: usize,
}

impl Compiled {
    pub fn new(model: &SimModel) -> Self {
        let ns = model.stations.len();
        let nc = model.classes.len();
        let mut stations = Vec::with_capacity(ns);
        let mut base = 0u32;
        for s in &model.stations {
            let delay = s.kind == StationKind::Delay;
            let mult = if delay { 1 } else { s.multiplicity };
            stations.push(CStation {
                delay,
                servers: s.servers,
                multiplicity: mult,
                round_robin: s.placement == Placement::RoundRobin,
                copy_base: base,
            });
            base += mult;
        }
        let mut c = Compiled {
            ops: Vec::new(),
            branches: Vec::new(),
            choices: Vec::new(),
            labels: Vec::new(),
            class_start: Vec::with_capacity(nc),
            arrivals: Vec::with_capacity(nc),
            stations,
            // A validated model has no batching at a delay; ignore it there all the same.
            batching: model
                .stations
                .iter()
                .map(|s| s.batching.filter(|_| s.kind != StationKind::Delay))
                .collect(),
            n_copies: base as usize,
            // Service streams (class × station), placement streams (station), arrival/think
            // streams (class), routing-choice streams (class); new kinds go at the end so
            // that existing streams keep their ids.
            n_streams: nc * ns + ns + nc + nc,
            placement_base: nc * ns,
            arrival_base: nc * ns + ns,
            routing_base: nc * ns + ns + nc,
        };
        for (ci, class) in model.classes.iter().enumerate() {
            c.class_start.push(c.ops.len() as u32);
            c.emit(
                &class.route,
                Op::CycleEnd { class: ci as u32 },
                ci,
                ns,
                true,
            );
            c.arrivals.push(match class.arrivals {
                Arrivals::Closed { population, think } => CArrivals::Closed {
                    population,
                    think: think.sampler(),
                },
                Arrivals::Open { rate_per_sec } => CArrivals::Open {
                    interarrival: super::dist::Dist::exponential(1.0 / rate_per_sec).sampler(),
                },
            });
        }
        c.plan_distinct_copies();
        c
    }

    /// Marks the fork branches whose first visit goes to a distinct copy: branches whose
    /// first visit is to the same randomly placed station go to distinct copies (like
    /// CRUSH's distinct OSDs for the replicas of one object), as long as there are copies
    /// left and the fork has placed fewer than `MAX_DISTINCT` branches so.
    fn plan_distinct_copies(&mut self) {
        for pc in 0..self.ops.len() {
            let Op::Fork { first, count } = self.ops[pc] else {
                continue;
            };
            let mut chosen: Vec<u32> = Vec::new();
            for b in &mut self.branches[first as usize..(first + count) as usize] {
                let (Op::Visit { station, .. } | Op::BatchVisit { station, .. }) =
                    self.ops[b.start as usize]
                else {
                    continue;
                };
                let st = self.stations[station as usize];
                let taken = chosen.iter().filter(|&&c| c == station).count() as u32;
                if st.multiplicity > 1
                    && !st.round_robin
                    && chosen.len() < MAX_DISTINCT
                    && taken < st.multiplicity
                {
                    chosen.push(station);
                    b.distinct_station = station;
                }
            }
        }
    }

    /// Emits a sequence then its terminator, then the bodies of its forks and choices.
    /// `labelled`: choices here label the job (main route, not inside a fork branch).
    fn emit(&mut self, steps: &[Step], end: Op, class: usize, ns: usize, labelled: bool) {
        let mut deferred: Vec<(u32, &Vec<Vec<Step>>)> = Vec::new();
        let mut deferred_detached: Vec<(usize, &Vec<Step>)> = Vec::new();
        let mut deferred_choices: Vec<(u32, u32, &Vec<ChoiceBranch>)> = Vec::new();
        for step in steps {
            match step {
                Step::Visit { station, service } => {
                    let (station, stream, sampler) = (
                        station.0 as u32,
                        (class * ns + station.0) as u32,
                        service.sampler(),
                    );
                    self.ops.push(if self.batching[station as usize].is_some() {
                        Op::BatchVisit {
                            station,
                            stream,
                            sampler,
                        }
                    } else {
                        Op::Visit {
                            station,
                            stream,
                            sampler,
                        }
                    });
                }
                Step::Fork { branches } => {
                    let first = self.branches.len() as u32;
                    self.branches.extend(std::iter::repeat_n(
                        ForkBranch {
                            start: 0,
                            distinct_station: NONE,
                        },
                        branches.len(),
                    ));
                    self.ops.push(Op::Fork {
                        first,
                        count: branches.len() as u32,
                    });
                    deferred.push((first, branches));
                }
                Step::Detach { steps } => {
                    deferred_detached.push((self.ops.len(), steps));
                    self.ops.push(Op::Detach { start: 0 });
                }
                Step::Choice { branches } => {
                    let first = self.choices.len() as u32;
                    let mut cum = 0.0;
                    for b in branches {
                        cum += b.probability;
                        let label = if labelled {
                            let key = (class, b.label.clone());
                            match self.labels.iter().position(|l| *l == key) {
                                Some(i) => i as u32,
                                None => {
                                    self.labels.push(key);
                                    (self.labels.len() - 1) as u32
                                }
                            }
                        } else {
                            NONE
                        };
                        self.choices.push(ChoiceEntry {
                            cum,
                            start: 0,
                            label,
                        });
                    }
                    let pc = self.ops.len() as u32;
                    self.ops.push(Op::Choice {
                        first,
                        count: branches.len() as u32,
                    });
                    deferred_choices.push((first, pc, branches));
                }
            }
        }
        self.ops.push(end);
        for (first, branches) in deferred {
            for (i, b) in branches.iter().enumerate() {
                self.branches[first as usize + i].start = self.ops.len() as u32;
                self.emit(b, Op::BranchEnd, class, ns, false);
            }
        }
        for (pc, steps) in deferred_detached {
            self.ops[pc] = Op::Detach {
                start: self.ops.len() as u32,
            };
            self.emit(steps, Op::BranchEnd, class, ns, false);
        }
        for (first, pc, branches) in deferred_choices {
            for (i, b) in branches.iter().enumerate() {
                self.choices[first as usize + i].start = self.ops.len() as u32;
                self.emit(&b.steps, Op::Goto { target: pc + 1 }, class, ns, labelled);
            }
        }
    }

    pub fn n_classes(&self) -> usize {
        self.class_start.len()
    }
    pub fn n_stations(&self) -> usize {
        self.stations.len()
    }
    /// Per station: (servers per copy, copies, is a delay).
    pub fn station_shapes(&self) -> Vec<(f64, f64, bool)> {
        self.stations
            .iter()
            .map(|s| (f64::from(s.servers), f64::from(s.multiplicity), s.delay))
            .collect()
    }
    #[inline]
    fn placement_stream(&self, station: usize) -> usize {
        self.placement_base + station
    }
    #[inline]
    fn arrival_stream(&self, class: usize) -> usize {
        self.arrival_base + class
    }
    #[inline]
    fn routing_stream(&self, class: usize) -> usize {
        self.routing_base + class
    }
    /// (class index, label) of every labelled choice branch, in report order.
    pub fn labels(&self) -> &[(usize, String)] {
        &self.labels
    }
}

#[derive(Debug, Clone, Copy)]
struct Token {
    pc: u32,
    class: u32,
    parent: u32,
    pending: u32,
    copy: u32,
    /// Copy chosen for the next visit by the fork that created this token, or `NONE`.
    preset_copy: u32,
    /// Label of the choice branch taken in this cycle, or `NONE`.
    label: u32,
    /// Next token in the FIFO queue this token waits in, or `NONE`.
    next: u32,
    start: f64,
}

/// One copy of a station: servers busy and its FIFO queue of waiting tokens, linked
/// through [`Token::next`] (so queues need no memory of their own).
#[derive(Debug, Clone, Copy)]
struct CopyState {
    busy: u32,
    /// First and last waiting token, or `NONE`.
    head: u32,
    tail: u32,
}

impl Default for CopyState {
    fn default() -> Self {
        Self {
            busy: 0,
            head: NONE,
            tail: NONE,
        }
    }
}

/// Time integrals of one station (all copies together).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StationAcc {
    /// Jobs present and servers busy, counted in `f64` (exact for integers below 2⁵³) so
    /// that [`Engine::touch`], run twice per event, needs no integer conversion.
    present: f64,
    busy: f64,
    last: f64,
    /// ∫ jobs present dt.
    pub area_present: f64,
    /// ∫ servers busy dt.
    pub area_busy: f64,
}

/// Per-class response-time statistics since the last reset.
#[derive(Debug, Clone)]
pub struct ClassAcc {
    pub completions: u64,
    pub sum_secs: f64,
    pub hist: Histogram,
    pub series: Option<BatchSeries>,
}

/// Why [`Engine::run_until`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Horizon,
    EventCap,
    Cancelled,
}

pub struct Engine<'m> {
    m: &'m Compiled,
    now: f64,
    heap: EventHeap,
    /// The event being handled is still at the top of the heap.
    top_is_current: bool,
    tokens: Vec<Token>,
    free: Vec<u32>,
    copies: Vec<CopyState>,
    /// Tokens waiting per copy, kept only at stations with batching (`BatchVisit`).
    waiting: Vec<u32>,
    rr: Vec<u32>,
    acc: Vec<StationAcc>,
    rngs: Vec<SimRng>,
    classes: Vec<ClassAcc>,
    labels: Vec<ClassAcc>,
    stack: Vec<u32>,
    events: u64,
    completions: u64,
    mark_completions: u64,
    mark_time: Option<f64>,
}

/// The `n` random streams of one replication, by stream id.
///
/// Stream `s` starts s · 2¹²⁸ draws into the replication's sequence (xoshiro's `jump`, which
/// the generator's authors provide for exactly this): the streams of a replication are
/// disjoint unless one of them draws 2¹²⁸ numbers. The sequence starts from four SplitMix64
/// outputs (the seeding the authors recommend), alternately from a SplitMix64 seeded with
/// the master seed and one seeded with the replication index; SplitMix64's first output is
/// a bijection of its seed, so every (seed, replication) pair starts from its own state.
fn make_streams(seed: u64, replication: u64, n: usize) -> Vec<SimRng> {
    let mut by_seed = SplitMix64::seed_from_u64(seed);
    let mut by_replication = SplitMix64::seed_from_u64(replication);
    let mut state = [0u8; 32];
    for (i, word) in state.chunks_exact_mut(8).enumerate() {
        let w = if i % 2 == 0 {
            by_seed.next_u64()
        } else {
            by_replication.next_u64()
        };
        word.copy_from_slice(&w.to_le_bytes());
    }
    let mut rng = SimRng::from_seed(state);
    let mut streams = Vec::with_capacity(n);
    for _ in 0..n {
        streams.push(rng.clone());
        rng.jump();
    }
    streams
}

#[inline]
fn key(t: f64, tok: u32) -> u128 {
    (u128::from(t.to_bits()) << 64) | u128::from(tok)
}

/// Children per node of [`EventHeap`].
const ARITY: usize = 4;

/// Min-heap of event keys (time bits for t ≥ 0 order like the times) with four children per
/// node: half the depth of a binary heap, so a sift-down (the common operation, see
/// [`Engine::schedule`]) takes fewer dependent steps.
///
/// Keys are unique (a token has at most one pending event), so the order in which events
/// leave does not depend on how the heap arranges them.
#[derive(Debug, Default)]
struct EventHeap(Vec<u128>);

impl EventHeap {
    #[inline]
    fn peek(&self) -> Option<u128> {
        self.0.first().copied()
    }

    #[inline]
    fn push(&mut self, k: u128) {
        let i = self.0.len();
        self.0.push(k);
        Self::sift_up(&mut self.0, i, k);
    }

    /// Moves the hole at `i` up until `k` fits, and puts `k` there.
    #[inline]
    fn sift_up(h: &mut [u128], mut i: usize, k: u128) {
        while i > 0 {
            let p = (i - 1) / ARITY;
            if h[p] <= k {
                break;
            }
            h[i] = h[p];
            i = p;
        }
        h[i] = k;
    }

    /// Replaces the minimum by `k` (sift-down). Where a node has all four children, the
    /// smallest is found by conditional moves rather than branches.
    #[inline(always)]
    fn replace_top(&mut self, k: u128) {
        let h = &mut self.0[..];
        let mut i = 0;
        loop {
            let f = ARITY * i + 1;
            if let Some(&[a, b, c, d]) = h.get(f..).and_then(|r| r.first_chunk::<ARITY>()) {
                let (ia, va) = if b < a { (f + 1, b) } else { (f, a) };
                let (ic, vc) = if d < c { (f + 3, d) } else { (f + 2, c) };
                let (im, vm) = if vc < va { (ic, vc) } else { (ia, va) };
                if vm >= k {
                    break;
                }
                h[i] = vm;
                i = im;
            } else {
                let mut im = i;
                let mut vm = k;
                for (j, &v) in h.iter().enumerate().skip(f) {
                    if v < vm {
                        (im, vm) = (j, v);
                    }
                }
                h[i] = vm;
                i = im;
                break;
            }
        }
        h[i] = k;
    }

    #[inline]
    fn pop(&mut self) {
        if let Some(last) = self.0.pop() {
            if !self.0.is_empty() {
                self.replace_top(last);
            }
        }
    }
}

impl<'m> Engine<'m> {
    /// A fresh replication at time 0: closed jobs start thinking (or enter their route if
    /// the think time is zero), open sources schedule their first arrival.
    pub fn new(m: &'m Compiled, seed: u64, replication: u64, record_series: bool) -> Self {
        let rngs = make_streams(seed, replication, m.n_streams);
        let mut e = Engine {
            m,
            now: 0.0,
            heap: EventHeap::default(),
            top_is_current: false,
            tokens: Vec::new(),
            free: Vec::new(),
            copies: vec![CopyState::default(); m.n_copies],
            waiting: vec![0; m.n_copies],
            rr: vec![0; m.n_stations()],
            acc: vec![StationAcc::default(); m.n_stations()],
            rngs,
            classes: (0..m.n_classes())
                .map(|_| ClassAcc {
                    completions: 0,
                    sum_secs: 0.0,
                    hist: Histogram::new(),
                    series: record_series.then(BatchSeries::new),
                })
                .collect(),
            labels: m
                .labels
                .iter()
                .map(|_| ClassAcc {
                    completions: 0,
                    sum_secs: 0.0,
                    hist: Histogram::new(),
                    series: None,
                })
                .collect(),
            stack: Vec::new(),
            events: 0,
            completions: 0,
            mark_completions: u64::MAX,
            mark_time: None,
        };
        for ci in 0..m.n_classes() {
            match m.arrivals[ci] {
                CArrivals::Closed { population, think } => {
                    let end_pc = e.cycle_end_pc(ci);
                    for _ in 0..population {
                        let t = e.alloc(ci as u32, NONE, end_pc);
                        let d = think.sample(&mut e.rngs[m.arrival_stream(ci)]);
                        if d > 0.0 {
                            e.heap.push(key(d, t));
                        } else {
                            e.begin_cycle(t, ci);
                        }
                    }
                }
                CArrivals::Open { interarrival } => {
                    let t = e.alloc(ci as u32, NONE, SOURCE_PC);
                    let d = interarrival.sample(&mut e.rngs[m.arrival_stream(ci)]);
                    e.heap.push(key(d, t));
                }
            }
        }
        e
    }

    fn cycle_end_pc(&self, class: usize) -> u32 {
        let mut pc = self.m.class_start[class] as usize;
        while !matches!(self.m.ops[pc], Op::CycleEnd { .. }) {
            pc += 1;
        }
        pc as u32
    }

    /// Asks the engine to remember the time of its `n`-th completion (all classes).
    pub fn mark_completion(&mut self, n: u64) {
        self.mark_completions = n;
    }
    /// Time of the completion asked for by [`Engine::mark_completion`], once reached.
    pub fn marked_time(&self) -> Option<f64> {
        self.mark_time
    }

    pub fn now(&self) -> f64 {
        self.now
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn classes(&self) -> &[ClassAcc] {
        &self.classes
    }
    /// Per label of [`Compiled::labels`].
    pub fn labels(&self) -> &[ClassAcc] {
        &self.labels
    }
    pub fn stations(&self) -> &[StationAcc] {
        &self.acc
    }

    /// Forgets all statistics so far (warm-up removal); the state of the system is kept.
    pub fn reset_stats(&mut self) {
        let now = self.now;
        for a in &mut self.acc {
            a.last = now;
            a.area_present = 0.0;
            a.area_busy = 0.0;
        }
        for c in self.classes.iter_mut().chain(self.labels.iter_mut()) {
            c.completions = 0;
            c.sum_secs = 0.0;
            c.hist.clear();
        }
    }

    /// Adds an event; the first one scheduled while handling an event takes its place.
    #[inline(always)]
    fn schedule(&mut self, k: u128) {
        if self.top_is_current {
            self.top_is_current = false;
            self.heap.replace_top(k);
        } else {
            self.heap.push(k);
        }
    }

    fn alloc(&mut self, class: u32, parent: u32, pc: u32) -> u32 {
        let tok = Token {
            pc,
            class,
            parent,
            pending: 0,
            copy: 0,
            preset_copy: NONE,
            label: NONE,
            next: NONE,
            start: self.now,
        };
        if let Some(i) = self.free.pop() {
            self.tokens[i as usize] = tok;
            i
        } else {
            self.tokens.push(tok);
            (self.tokens.len() - 1) as u32
        }
    }

    /// Simulates until the next event would be later than `t_end` (the clock is then set to
    /// `t_end`), or `max_events` more events have been processed, or `on_chunk` returns
    /// false. `on_chunk(n)` is called after every full chunk of n ≤ 65,536 events (progress
    /// and cancellation), not for a partial chunk cut short by the horizon.
    pub fn run_until(
        &mut self,
        t_end: f64,
        max_events: u64,
        on_chunk: &dyn Fn(u64) -> bool,
    ) -> RunEnd {
        const CHUNK: u64 = 1 << 16;
        let mut left = max_events;
        loop {
            let chunk = left.min(CHUNK);
            for _ in 0..chunk {
                let Some(k) = self.heap.peek() else {
                    self.advance_clock(t_end);
                    return RunEnd::Horizon;
                };
                let t = f64::from_bits((k >> 64) as u64);
                if t > t_end {
                    self.advance_clock(t_end);
                    return RunEnd::Horizon;
                }
                self.now = t;
                self.events += 1;
                self.top_is_current = true;
                self.handle(k as u32);
                if self.top_is_current {
                    self.heap.pop();
                    self.top_is_current = false;
                }
            }
            let go_on = on_chunk(chunk);
            left -= chunk;
            if left == 0 {
                return RunEnd::EventCap;
            }
            if !go_on {
                return RunEnd::Cancelled;
            }
        }
    }

    fn advance_clock(&mut self, t: f64) {
        if t > self.now {
            self.now = t;
        }
        for s in 0..self.acc.len() {
            self.touch(s);
        }
    }

    #[inline]
    fn touch(&mut self, s: usize) {
        let a = &mut self.acc[s];
        let dt = self.now - a.last;
        a.area_present += a.present * dt;
        a.area_busy += a.busy * dt;
        a.last = self.now;
    }

    #[inline]
    fn handle(&mut self, t: u32) {
        let pc = self.tokens[t as usize].pc;
        if pc == SOURCE_PC {
            let class = self.tokens[t as usize].class;
            let ci = class as usize;
            let CArrivals::Open { interarrival } = self.m.arrivals[ci] else {
                unreachable!("only open classes have sources")
            };
            let d = interarrival.sample(&mut self.rngs[self.m.arrival_stream(ci)]);
            self.schedule(key(self.now + d, t));
            let job = self.alloc(class, NONE, self.m.class_start[ci]);
            self.run_token(job);
            return;
        }
        match self.m.ops[pc as usize] {
            Op::Visit { station, .. } => {
                let copy = self.tokens[t as usize].copy;
                self.depart::<false>(station as usize, copy as usize);
                self.tokens[t as usize].pc += 1;
                self.run_token(t);
            }
            Op::CycleEnd { class } => self.begin_cycle(t, class as usize),
            // Out of line, so that this match keeps the shape it had before batching.
            _ => self.handle_batch_visit(t, pc),
        }
    }

    /// [`Engine::handle`] for a token served at a station with batching.
    #[cold]
    #[inline(never)]
    fn handle_batch_visit(&mut self, t: u32, pc: u32) {
        match self.m.ops[pc as usize] {
            Op::BatchVisit { station, .. } => {
                let copy = self.tokens[t as usize].copy;
                self.depart::<true>(station as usize, copy as usize);
                self.tokens[t as usize].pc += 1;
                self.run_token(t);
            }
            Op::Visit { .. } | Op::CycleEnd { .. } => unreachable!("handled by handle"),
            Op::Fork { .. }
            | Op::Detach { .. }
            | Op::BranchEnd
            | Op::Choice { .. }
            | Op::Goto { .. } => {
                unreachable!("no event waits at a fork, detach, join or choice")
            }
        }
    }

    fn begin_cycle(&mut self, t: u32, class: usize) {
        let tok = &mut self.tokens[t as usize];
        tok.start = self.now;
        tok.pc = self.m.class_start[class];
        self.run_token(t);
    }

    /// Moves tokens along their programs until each blocks in a station, thinks, waits at a
    /// join, or leaves.
    ///
    /// Tokens made ready while one runs (fork children, a parent released by its join) are
    /// handled last-in first-out: the token made ready last continues at once, the others
    /// wait on `stack`.
    fn run_token(&mut self, mut t: u32) {
        loop {
            // Each arm either continues with `t` (possibly a new token) or breaks when `t`
            // blocks; then the next waiting token, if any, runs.
            loop {
                let pc = self.tokens[t as usize].pc;
                let m = self.m;
                match m.ops[pc as usize] {
                    Op::Visit {
                        station,
                        stream,
                        ref sampler,
                    } => {
                        self.arrive::<false>(t, station as usize, stream as usize, sampler);
                        break;
                    }
                    Op::BatchVisit {
                        station,
                        stream,
                        ref sampler,
                    } => {
                        self.arrive_batching(t, station as usize, stream as usize, sampler);
                        break;
                    }
                    Op::Fork { first, count } => {
                        self.tokens[t as usize].pending = count;
                        let class = self.tokens[t as usize].class;
                        // Copies already picked by this fork, as (station, copy).
                        let mut chosen = [(0u32, 0u32); MAX_DISTINCT];
                        let mut n_chosen = 0;
                        let mut last_child = NONE;
                        for i in 0..count {
                            let b = self.m.branches[(first + i) as usize];
                            let child = self.alloc(class, t, b.start);
                            let station = b.distinct_station;
                            if station != NONE {
                                let copy = loop {
                                    let c = self.random_copy(station as usize);
                                    if !chosen[..n_chosen].contains(&(station, c)) {
                                        break c;
                                    }
                                };
                                chosen[n_chosen] = (station, copy);
                                n_chosen += 1;
                                self.tokens[child as usize].preset_copy = copy;
                            }
                            if i + 1 < count {
                                self.stack.push(child);
                            } else {
                                last_child = child;
                            }
                        }
                        if last_child == NONE {
                            break;
                        }
                        t = last_child;
                    }
                    Op::Detach { start } => {
                        // The child runs first (its first visit is scheduled now); the
                        // job goes on at the next op without waiting for it.
                        let class = self.tokens[t as usize].class;
                        self.tokens[t as usize].pc += 1;
                        self.stack.push(t);
                        t = self.alloc(class, NONE, start);
                    }
                    Op::BranchEnd => {
                        let parent = self.tokens[t as usize].parent;
                        self.free.push(t);
                        if parent == NONE {
                            // A detached child's work is done.
                            break;
                        }
                        let p = &mut self.tokens[parent as usize];
                        p.pending -= 1;
                        if p.pending != 0 {
                            break;
                        }
                        p.pc += 1;
                        t = parent;
                    }
                    Op::Choice { first, count } => {
                        let class = self.tokens[t as usize].class as usize;
                        let u = uniform_open(&mut self.rngs[self.m.routing_stream(class)]);
                        let last = (first + count - 1) as usize;
                        let mut k = first as usize;
                        while k < last && u >= self.m.choices[k].cum {
                            k += 1;
                        }
                        let e = self.m.choices[k];
                        let tok = &mut self.tokens[t as usize];
                        if e.label != NONE {
                            tok.label = e.label;
                        }
                        tok.pc = e.start;
                    }
                    Op::Goto { target } => self.tokens[t as usize].pc = target,
                    Op::CycleEnd { class } => {
                        let ci = class as usize;
                        let r = self.now - self.tokens[t as usize].start;
                        let label = std::mem::replace(&mut self.tokens[t as usize].label, NONE);
                        if label != NONE {
                            let acc = &mut self.labels[label as usize];
                            acc.completions += 1;
                            acc.sum_secs += r;
                            acc.hist.record(r);
                        }
                        let acc = &mut self.classes[ci];
                        acc.completions += 1;
                        acc.sum_secs += r;
                        acc.hist.record(r);
                        if let Some(s) = &mut acc.series {
                            s.push(r, self.now);
                        }
                        self.completions += 1;
                        if self.completions == self.mark_completions {
                            self.mark_time = Some(self.now);
                        }
                        let m = self.m;
                        match m.arrivals[ci] {
                            CArrivals::Open { .. } => {
                                self.free.push(t);
                                break;
                            }
                            CArrivals::Closed { ref think, .. } => {
                                let d = think.sample(&mut self.rngs[m.arrival_stream(ci)]);
                                if d > 0.0 {
                                    self.schedule(key(self.now + d, t));
                                    break;
                                }
                                let tok = &mut self.tokens[t as usize];
                                tok.start = self.now;
                                tok.pc = self.m.class_start[ci];
                            }
                        }
                    }
                }
            }
            match self.stack.pop() {
                Some(next) => t = next,
                None => return,
            }
        }
    }

    /// A copy of station `s` uniformly at random from its placement stream: ⌊x · m / 2⁶⁴⌋
    /// for one 64-bit draw x (Lemire 2019, "Fast random integer generation in an
    /// interval", ACM TOMACS 29(1)), uniform up to a bias below m / 2⁶⁴.
    #[inline]
    fn random_copy(&mut self, s: usize) -> u32 {
        let m = self.m.stations[s].multiplicity;
        let x = self.rngs[self.m.placement_stream(s)].next_u64();
        ((u128::from(x) * u128::from(m)) >> 64) as u32
    }

    /// Token `t` arrives at station `s` (`BATCH`: the station has batching, so count the
    /// waiting jobs and scale a service that starts now).
    #[inline]
    fn arrive<const BATCH: bool>(&mut self, t: u32, s: usize, stream: usize, sampler: &Sampler) {
        let st = self.m.stations[s];
        let preset = self.tokens[t as usize].preset_copy;
        let copy = if preset != NONE {
            self.tokens[t as usize].preset_copy = NONE;
            preset
        } else if st.multiplicity == 1 {
            0
        } else if st.round_robin {
            let c = self.rr[s];
            self.rr[s] = if c + 1 == st.multiplicity { 0 } else { c + 1 };
            c
        } else {
            self.random_copy(s)
        };
        self.tokens[t as usize].copy = copy;
        self.touch(s);
        self.acc[s].present += 1.0;
        let ci = (st.copy_base + copy) as usize;
        if st.delay {
            let d = sampler.sample(&mut self.rngs[stream]);
            self.schedule(key(self.now + d, t));
        } else if self.copies[ci].busy < st.servers {
            self.copies[ci].busy += 1;
            self.acc[s].busy += 1.0;
            let mut d = sampler.sample(&mut self.rngs[stream]);
            if BATCH {
                // A server was free, so nobody waits (a freed server takes the head of the
                // queue at once): the batch is this job alone.
                d *= self.demand_factor(s, 1);
            }
            self.schedule(key(self.now + d, t));
        } else {
            if BATCH {
                self.waiting[ci] += 1;
            }
            self.tokens[t as usize].next = NONE;
            let q = &mut self.copies[ci];
            let tail = std::mem::replace(&mut q.tail, t);
            if tail == NONE {
                q.head = t;
            } else {
                self.tokens[tail as usize].next = t;
            }
        }
    }

    /// [`Engine::arrive`] at a station with batching, out of line so that the event loop's
    /// code for the other stations stays as it was without batching.
    #[cold]
    #[inline(never)]
    fn arrive_batching(&mut self, t: u32, s: usize, stream: usize, sampler: &Sampler) {
        self.arrive::<true>(t, s, stream, sampler);
    }

    /// Demand factor of station `s`'s batching for a service that starts with `jobs` jobs
    /// in the copy's queue, the starting one included (the jobs in service on the other
    /// servers are not).
    #[inline]
    fn demand_factor(&self, s: usize, jobs: u32) -> f64 {
        self.m.batching[s]
            .expect("BatchVisit ops are compiled only for stations with batching")
            .demand_factor(f64::from(jobs))
    }

    /// The token in service at copy `copy` of station `s` leaves (`BATCH`: as in
    /// [`Engine::arrive`]).
    #[inline]
    fn depart<const BATCH: bool>(&mut self, s: usize, copy: usize) {
        let st = self.m.stations[s];
        self.touch(s);
        self.acc[s].present -= 1.0;
        if st.delay {
            return;
        }
        let ci = st.copy_base as usize + copy;
        let w = self.copies[ci].head;
        if w != NONE {
            let next = self.tokens[w as usize].next;
            let q = &mut self.copies[ci];
            q.head = next;
            if next == NONE {
                q.tail = NONE;
            }
            let m = self.m;
            let (Op::Visit {
                stream,
                ref sampler,
                ..
            }
            | Op::BatchVisit {
                stream,
                ref sampler,
                ..
            }) = m.ops[self.tokens[w as usize].pc as usize]
            else {
                unreachable!("a queued token is at a visit")
            };
            let mut d = sampler.sample(&mut self.rngs[stream as usize]);
            if BATCH {
                // `w` leaves the queue for the freed server; it is batched with the jobs
                // still waiting behind it.
                self.waiting[ci] -= 1;
                d *= self.demand_factor(s, 1 + self.waiting[ci]);
            }
            self.schedule(key(self.now + d, w));
        } else {
            self.copies[ci].busy -= 1;
            self.acc[s].busy -= 1.0;
        }
    }
}

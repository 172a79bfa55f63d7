//! The event loop: one replication of a compiled [`SimModel`].
//!
//! Design for speed (≥ 10 M events/s on one core) and flat memory:
//! - the model is compiled into a flat program of [`Op`]s; a job (a *token*) carries a
//!   program counter. A fork spawns one child token per branch; the parent waits on a
//!   counter and resumes at the op after the fork when the last child reaches `BranchEnd`;
//! - the only event is "token `t` finishes its current activity at time τ" (service, think,
//!   or an open source's next arrival), kept in a binary min-heap of packed `u128` keys
//!   (time bits, token id) — ties are broken by token id, so runs are deterministic. The
//!   event being handled stays at the top of the heap until the handler schedules its first
//!   new event, which then replaces it with one sift-down instead of a pop and a push;
//! - tokens, FIFO queues and the heap are vectors that grow to the peak number of jobs
//!   and are then reused: no allocation per event, no dynamic dispatch;
//! - random numbers come from separate ChaCha8 streams per (class, station) service,
//!   per station placement and per class think/arrival, each seeded from (master seed,
//!   replication) and a stream id built from those indices, so changing one parameter
//!   leaves every other stream unchanged (common random numbers across sweep points).
//!
//! Statistics are time integrals of jobs present and servers busy per station, and per
//! class response-time count, sum, a fixed-size [`Histogram`] and optionally a bounded
//! [`BatchSeries`] for warm-up detection. Not here: replications, warm-up policy and
//! stopping (see `sim`).

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::dist::{uniform_open, Sampler};
use super::hist::Histogram;
use super::model::{Arrivals, Placement, SimModel, Step};
use super::stats::BatchSeries;
use crate::qn::StationKind;

const NONE: u32 = u32::MAX;
/// Forks place at most this many branches on distinct copies; further branches of a wider
/// fork choose independently.
const MAX_DISTINCT: usize = 16;
/// Program counter of an open class's arrival source.
const SOURCE_PC: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
enum Op {
    Visit {
        station: u32,
        stream: u32,
        sampler: Sampler,
    },
    Fork {
        first: u32,
        count: u32,
    },
    BranchEnd,
    CycleEnd {
        class: u32,
    },
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
    branch_starts: Vec<u32>,
    class_start: Vec<u32>,
    arrivals: Vec<CArrivals>,
    stations: Vec<CStation>,
    n_copies: usize,
    n_streams: usize,
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
            branch_starts: Vec::new(),
            class_start: Vec::with_capacity(nc),
            arrivals: Vec::with_capacity(nc),
            stations,
            n_copies: base as usize,
            // Service streams (class × station), placement streams (station), arrival/think
            // streams (class).
            n_streams: nc * ns + ns + nc,
        };
        for (ci, class) in model.classes.iter().enumerate() {
            c.class_start.push(c.ops.len() as u32);
            c.emit(&class.route, Op::CycleEnd { class: ci as u32 }, ci, ns);
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
        c
    }

    /// Emits a sequence then its terminator, then the bodies of its forks.
    fn emit(&mut self, steps: &[Step], end: Op, class: usize, ns: usize) {
        let mut deferred: Vec<(u32, &Vec<Vec<Step>>)> = Vec::new();
        for step in steps {
            match step {
                Step::Visit { station, service } => self.ops.push(Op::Visit {
                    station: station.0 as u32,
                    stream: (class * ns + station.0) as u32,
                    sampler: service.sampler(),
                }),
                Step::Fork { branches } => {
                    let first = self.branch_starts.len() as u32;
                    self.branch_starts
                        .extend(std::iter::repeat_n(0, branches.len()));
                    self.ops.push(Op::Fork {
                        first,
                        count: branches.len() as u32,
                    });
                    deferred.push((first, branches));
                }
            }
        }
        self.ops.push(end);
        for (first, branches) in deferred {
            for (i, b) in branches.iter().enumerate() {
                self.branch_starts[first as usize + i] = self.ops.len() as u32;
                self.emit(b, Op::BranchEnd, class, ns);
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
    fn placement_stream(&self, station: usize) -> usize {
        self.n_classes() * self.n_stations() + station
    }
    fn arrival_stream(&self, class: usize) -> usize {
        self.n_classes() * self.n_stations() + self.n_stations() + class
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
    start: f64,
}

#[derive(Debug, Clone, Default)]
struct CopyState {
    busy: u32,
    queue: VecDeque<u32>,
}

/// Time integrals of one station (all copies together).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StationAcc {
    present: u32,
    busy: u32,
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
    rr: Vec<u32>,
    acc: Vec<StationAcc>,
    rngs: Vec<ChaCha8Rng>,
    classes: Vec<ClassAcc>,
    stack: Vec<u32>,
    events: u64,
    completions: u64,
    mark_completions: u64,
    mark_time: Option<f64>,
}

/// Stream id of one random stream: which replication and which purpose/index.
fn make_rng(seed: u64, replication: u64, stream: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&replication.to_le_bytes());
    key[16..24].copy_from_slice(b"cephplan");
    let mut r = ChaCha8Rng::from_seed(key);
    r.set_stream(stream);
    r
}

#[inline]
fn key(t: f64, tok: u32) -> u128 {
    (u128::from(t.to_bits()) << 64) | u128::from(tok)
}

/// Binary min-heap of event keys (time bits for t ≥ 0 order like the times).
#[derive(Debug, Default)]
struct EventHeap(Vec<u128>);

impl EventHeap {
    #[inline]
    fn peek(&self) -> Option<u128> {
        self.0.first().copied()
    }

    #[inline]
    fn push(&mut self, k: u128) {
        let h = &mut self.0;
        let mut i = h.len();
        h.push(k);
        while i > 0 {
            let p = (i - 1) / 2;
            if h[p] <= k {
                break;
            }
            h[i] = h[p];
            i = p;
        }
        h[i] = k;
    }

    /// Replaces the minimum by `k`.
    #[inline]
    fn replace_top(&mut self, k: u128) {
        let h = &mut self.0;
        let n = h.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && h[r] < h[l] { r } else { l };
            if h[c] >= k {
                break;
            }
            h[i] = h[c];
            i = c;
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
        let rngs = (0..m.n_streams)
            .map(|s| make_rng(seed, replication, s as u64))
            .collect();
        let mut e = Engine {
            m,
            now: 0.0,
            heap: EventHeap::default(),
            top_is_current: false,
            tokens: Vec::new(),
            free: Vec::new(),
            copies: vec![CopyState::default(); m.n_copies],
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
        for c in &mut self.classes {
            c.completions = 0;
            c.sum_secs = 0.0;
            c.hist.clear();
        }
    }

    /// Adds an event; the first one scheduled while handling an event takes its place.
    #[inline]
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
        a.area_present += f64::from(a.present) * dt;
        a.area_busy += f64::from(a.busy) * dt;
        a.last = self.now;
    }

    #[inline]
    fn handle(&mut self, t: u32) {
        let tok = self.tokens[t as usize];
        if tok.pc == SOURCE_PC {
            let ci = tok.class as usize;
            let CArrivals::Open { interarrival } = self.m.arrivals[ci] else {
                unreachable!("only open classes have sources")
            };
            let d = interarrival.sample(&mut self.rngs[self.m.arrival_stream(ci)]);
            self.schedule(key(self.now + d, t));
            let job = self.alloc(tok.class, NONE, self.m.class_start[ci]);
            self.run_token(job);
            return;
        }
        match self.m.ops[tok.pc as usize] {
            Op::Visit { station, .. } => {
                self.depart(station as usize, tok.copy as usize);
                self.tokens[t as usize].pc += 1;
                self.run_token(t);
            }
            Op::CycleEnd { class } => self.begin_cycle(t, class as usize),
            Op::Fork { .. } | Op::BranchEnd => unreachable!("no event waits at a fork or join"),
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
    fn run_token(&mut self, t: u32) {
        self.stack.push(t);
        while let Some(t) = self.stack.pop() {
            loop {
                let pc = self.tokens[t as usize].pc;
                match self.m.ops[pc as usize] {
                    Op::Visit {
                        station,
                        stream,
                        sampler,
                    } => {
                        self.arrive(t, station as usize, stream as usize, sampler);
                        break;
                    }
                    Op::Fork { first, count } => {
                        self.tokens[t as usize].pending = count;
                        let class = self.tokens[t as usize].class;
                        // Branches whose first visit is to the same randomly placed station
                        // go to distinct copies (like CRUSH's distinct OSDs for the replicas
                        // of one object), as long as there are copies left.
                        let mut chosen = [(0u32, 0u32); MAX_DISTINCT];
                        let mut n_chosen = 0;
                        for i in 0..count {
                            let pc = self.m.branch_starts[(first + i) as usize];
                            let child = self.alloc(class, t, pc);
                            if let Op::Visit { station, .. } = self.m.ops[pc as usize] {
                                let st = self.m.stations[station as usize];
                                let taken =
                                    chosen[..n_chosen].iter().filter(|c| c.0 == station).count();
                                if st.multiplicity > 1
                                    && !st.round_robin
                                    && n_chosen < MAX_DISTINCT
                                    && (taken as u32) < st.multiplicity
                                {
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
                            }
                            self.stack.push(child);
                        }
                        break;
                    }
                    Op::BranchEnd => {
                        let parent = self.tokens[t as usize].parent;
                        self.free.push(t);
                        let p = &mut self.tokens[parent as usize];
                        p.pending -= 1;
                        if p.pending == 0 {
                            p.pc += 1;
                            self.stack.push(parent);
                        }
                        break;
                    }
                    Op::CycleEnd { class } => {
                        let ci = class as usize;
                        let r = self.now - self.tokens[t as usize].start;
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
                        match self.m.arrivals[ci] {
                            CArrivals::Open { .. } => {
                                self.free.push(t);
                                break;
                            }
                            CArrivals::Closed { think, .. } => {
                                let d = think.sample(&mut self.rngs[self.m.arrival_stream(ci)]);
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
        }
    }

    /// A copy of station `s` uniformly at random from its placement stream.
    #[inline]
    fn random_copy(&mut self, s: usize) -> u32 {
        let m = self.m.stations[s].multiplicity;
        let u = uniform_open(&mut self.rngs[self.m.placement_stream(s)]);
        ((u * f64::from(m)) as u32).min(m - 1)
    }

    #[inline]
    fn arrive(&mut self, t: u32, s: usize, stream: usize, sampler: Sampler) {
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
        self.acc[s].present += 1;
        let ci = (st.copy_base + copy) as usize;
        if st.delay {
            let d = sampler.sample(&mut self.rngs[stream]);
            self.schedule(key(self.now + d, t));
        } else if self.copies[ci].busy < st.servers {
            self.copies[ci].busy += 1;
            self.acc[s].busy += 1;
            let d = sampler.sample(&mut self.rngs[stream]);
            self.schedule(key(self.now + d, t));
        } else {
            self.copies[ci].queue.push_back(t);
        }
    }

    #[inline]
    fn depart(&mut self, s: usize, copy: usize) {
        let st = self.m.stations[s];
        self.touch(s);
        self.acc[s].present -= 1;
        if st.delay {
            return;
        }
        let ci = st.copy_base as usize + copy;
        if let Some(w) = self.copies[ci].queue.pop_front() {
            let Op::Visit {
                stream, sampler, ..
            } = self.m.ops[self.tokens[w as usize].pc as usize]
            else {
                unreachable!("a queued token is at a visit")
            };
            let d = sampler.sample(&mut self.rngs[stream as usize]);
            self.schedule(key(self.now + d, w));
        } else {
            self.copies[ci].busy -= 1;
            self.acc[s].busy -= 1;
        }
    }
}

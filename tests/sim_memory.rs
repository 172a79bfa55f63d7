//! Memory of the simulator is flat in simulated time: a run 10× as long allocates nothing
//! more once the system has reached its peak number of jobs.
//!
//! Measured with a counting global allocator (this test binary only): bytes live, their
//! peak, and the number of allocation calls. The oracle is structural, not a pinned
//! number: a closed network holds at most `population × (1 + fork width)` tokens, so after
//! a warm-up that reaches that peak the event loop must make no allocation at all, and
//! the whole `simulate` pipeline must peak no higher for 10× the samples per replication.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use cephplan::progress::NoProgress;
use cephplan::sim::engine::{Compiled, Engine};
use cephplan::sim::reference::replicated_write;
use cephplan::sim::{simulate, SimOptions};

struct Counting;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static PEAK_BYTES: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    // The same counts for the calling thread only (the event loop runs on it), free of
    // the test harness's own allocations.
    static THREAD_LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
    static THREAD_PEAK_BYTES: Cell<isize> = const { Cell::new(0) };
    static THREAD_ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn grow(bytes: usize) {
    let live = LIVE_BYTES.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK_BYTES.fetch_max(live, Ordering::SeqCst);
    THREAD_LIVE_BYTES.with(|l| {
        let live = l.get() + bytes as isize;
        l.set(live);
        THREAD_PEAK_BYTES.with(|p| p.set(p.get().max(live)));
    });
}

fn shrink(bytes: usize) {
    LIVE_BYTES.fetch_sub(bytes, Ordering::SeqCst);
    THREAD_LIVE_BYTES.with(|l| l.set(l.get() - bytes as isize));
}

fn count_allocation() {
    ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    THREAD_ALLOCATIONS.with(|a| a.set(a.get() + 1));
}

// SAFETY: every call is forwarded unchanged to `System`; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count_allocation();
            grow(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count_allocation();
            shrink(layout.size());
            grow(new_size);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counters are process-wide: tests here take turns.
static SERIAL: Mutex<()> = Mutex::new(());

/// Peak bytes live on this thread above the level at the call, while `f` runs.
fn thread_peak_above_start(f: impl FnOnce()) -> isize {
    let start = THREAD_LIVE_BYTES.with(Cell::get);
    THREAD_PEAK_BYTES.with(|p| p.set(start));
    f();
    THREAD_PEAK_BYTES.with(Cell::get) - start
}

/// Peak bytes live in the process above the level at the call, while `f` runs.
fn peak_above_start(f: impl FnOnce()) -> usize {
    let start = LIVE_BYTES.load(Ordering::SeqCst);
    PEAK_BYTES.store(start, Ordering::SeqCst);
    f();
    PEAK_BYTES.load(Ordering::SeqCst) - start
}

#[test]
fn event_loop_allocates_nothing_after_the_peak_number_of_jobs() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let model = replicated_write();
    let compiled = Compiled::new(&model);
    const EVENTS: u64 = 50_000;
    // 1×: a fresh replication (with the warm-up batch series on) for EVENTS events.
    let short = thread_peak_above_start(|| {
        let mut e = Engine::new(&compiled, 1, 0, true);
        e.run_until(f64::INFINITY, EVENTS, &|_| true);
    });
    // 10×: the same, then 9 × EVENTS more events, counting allocation calls in those.
    let mut later_allocations = u64::MAX;
    let long = thread_peak_above_start(|| {
        let mut e = Engine::new(&compiled, 1, 0, true);
        e.run_until(f64::INFINITY, EVENTS, &|_| true);
        let before = THREAD_ALLOCATIONS.with(Cell::get);
        e.run_until(f64::INFINITY, 9 * EVENTS, &|_| true);
        later_allocations = THREAD_ALLOCATIONS.with(Cell::get) - before;
        assert_eq!(e.events(), 10 * EVENTS);
    });
    println!(
        "event loop peak bytes: {short} for {EVENTS} events, {long} for {} events; \
         {later_allocations} allocations after event {EVENTS}",
        10 * EVENTS
    );
    assert!(short > 0, "the counting allocator saw the engine's memory");
    assert_eq!(
        later_allocations,
        0,
        "allocations in events {EVENTS}..{}",
        10 * EVENTS
    );
    assert_eq!(long, short, "peak bytes: 10× run {long}, 1× run {short}");
}

#[test]
fn simulate_peak_memory_does_not_grow_with_run_length() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sim_fork_join.toml");
    let model = cephplan::sim::file::load_model(&path).unwrap();
    let run = |samples: u64| {
        let o = SimOptions {
            seed: 2,
            threads: 1,
            min_replications: 3,
            max_replications: 3,
            samples_per_replication: samples,
            // A fixed warm-up, so that run length scales with `samples` (no pilot).
            warmup_secs: Some(0.05),
            ..SimOptions::default()
        };
        let mut events = 0;
        let peak = peak_above_start(|| {
            // Events of the replications; the rate-estimating pilot has a fixed length.
            let r = simulate(&model, &o, &NoProgress).unwrap();
            events = r.events - r.warmup.pilot_events;
        });
        (peak, events)
    };
    let (short, short_events) = run(2_000);
    let (long, long_events) = run(20_000);
    assert!(
        long_events > 9 * short_events,
        "the long run simulates 10× more: {long_events} vs {short_events} events"
    );
    println!("simulate peak bytes: {short} for {short_events} events, {long} for {long_events}");
    // Slack: the test harness's threads allocate too, and these counters are global
    // (the engine's own peak is some 140 kB, 48 kB per histogram).
    assert!(
        long <= short + 4096,
        "peak bytes: {long} for {long_events} events, {short} for {short_events}"
    );
}

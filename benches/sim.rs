//! Event-loop speed of the simulator, in events per second on one core.
//!
//! Reference networks (target ≥ 10 M events/s each):
//! - `central_server`: closed, 64 jobs, exponential think time, CPU (4 servers) + two
//!   disks + a delay — the classic product-form shape;
//! - `replicated_write`: closed, 128 jobs, NIC then a 3-way fork-join over 24 OSD copies
//!   (2 servers each) with H2 service (SCV 2) — the Ceph write path's shape.
//!
//! Time is the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall time, so
//! that "events per second on one core" is measured even when other processes share the
//! cores; criterion's reports then read "time" as CPU time.
//!
//! Run: `cargo bench --bench sim`.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use cephplan::sim::engine::{Compiled, Engine};
use cephplan::sim::reference::{central_server, replicated_write};

const EVENTS: u64 = 2_000_000;

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant of the OS.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// Criterion measurement: thread CPU time in nanoseconds, formatted like wall time.
struct ThreadCpuTime(WallTime);

impl Measurement for ThreadCpuTime {
    type Intermediate = f64;
    type Value = f64;
    fn start(&self) -> f64 {
        thread_cpu_ns()
    }
    fn end(&self, start: f64) -> f64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, v: &f64) -> f64 {
        *v
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self.0.formatter()
    }
}

fn bench(c: &mut Criterion<ThreadCpuTime>) {
    let mut g = c.benchmark_group("sim_events");
    g.throughput(Throughput::Elements(EVENTS));
    g.sample_size(10);
    for (name, model) in [
        ("central_server", central_server()),
        ("replicated_write", replicated_write()),
    ] {
        let compiled = Compiled::new(&model);
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut e = Engine::new(&compiled, 1, 0, false);
                e.run_until(f64::INFINITY, EVENTS, &|_| true);
                e.events()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpuTime(WallTime));
    targets = bench
}
criterion_main!(benches);

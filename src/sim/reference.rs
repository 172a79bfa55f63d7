//! The simulator's reference networks: the ones `benches/sim.rs` measures events per
//! second on and the tests pin bit-exact output and flat memory of
//! (`tests/sim_fingerprint.rs`, `tests/sim_memory.rs`). One definition, so the figures and
//! the pinned outputs are about the same network.
//!
//! Not here: Ceph scenarios (`qn::ceph::sim`), validation against MVA (`tests/sim.rs`).

use super::{Dist, Placement, Route, SimModel};

/// Closed central-server network: 64 jobs, think time 20 ms, a 4-server CPU, two disks
/// and a wire delay, all exponential.
pub fn central_server() -> SimModel {
    let mut b = SimModel::builder();
    let cpu = b.queue("cpu", 4, 1, Placement::Random);
    let d1 = b.queue("disk1", 1, 1, Placement::Random);
    let d2 = b.queue("disk2", 1, 1, Placement::Random);
    let wire = b.delay("wire");
    b.closed_class(
        "jobs",
        64,
        Dist::exponential(0.02),
        Route::new()
            .visit(cpu, Dist::exponential(0.002))
            .visit(d1, Dist::exponential(0.0015))
            .visit(d2, Dist::exponential(0.001))
            .visit(wire, Dist::exponential(0.0005)),
    );
    b.build().expect("the reference network is valid")
}

/// Fork-join "replicated write": 128 jobs, a round-robin NIC (4 copies), then a 3-way
/// fork over 24 two-server OSD copies with two-moment service (mean 0.4 ms, SCV 2).
pub fn replicated_write() -> SimModel {
    let mut b = SimModel::builder();
    let nic = b.queue("nic", 1, 4, Placement::RoundRobin);
    let osd = b.queue("osd", 2, 24, Placement::Random);
    b.closed_class(
        "write",
        128,
        Dist::deterministic(0.0),
        Route::new()
            .visit(nic, Dist::exponential(0.00002))
            .fork((0..3).map(|_| Route::new().visit(osd, Dist::two_moment(0.0004, 2.0)))),
    );
    b.build().expect("the reference network is valid")
}

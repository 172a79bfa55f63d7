//! Solver speed: single-class MVA on the 63-node / 630-OSD Ceph-like network
//! (models/networks/ceph_63_nodes.toml, N = 64,512; target < 0.5 s), a 5-station network at
//! N = 1,000 and 4,000 (exact, with multi-server stations in the complement lattice), and the
//! approximate multi-class methods. Run: `cargo bench --bench solvers`.

use criterion::{criterion_group, criterion_main, Criterion};

use cephplan::qn::file::load_network;
use cephplan::qn::{Class, Demand, Network, Station, StationKind};
use cephplan::solve::{approx, single, SolveOptions};

fn five_stations(n: u32) -> Network {
    let st = |name: &str, kind, servers, multiplicity, d: f64| Station {
        name: name.into(),
        kind,
        servers,
        multiplicity,
        demands: vec![Demand::new(d)],
        batching: None,
        fractional_servers: None,
    };
    Network::new(
        vec![
            st("cpu", StationKind::Queue, 32, 1, 0.0032),
            st("ssd", StationKind::Queue, 8, 2, 0.0010),
            st("nic", StationKind::Queue, 1, 1, 0.00008),
            st("disk", StationKind::Queue, 1, 4, 0.0002),
            st("wire", StationKind::Delay, 1, 1, 0.0005),
        ],
        vec![Class {
            name: "io".into(),
            population: n,
            think_time_secs: 0.001,
        }],
    )
    .expect("valid network")
}

fn benches(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/networks/ceph_63_nodes.toml"
    );
    let ceph = load_network(std::path::Path::new(path)).expect("example network");
    let mut g = c.benchmark_group("solvers");
    g.sample_size(10);
    g.bench_function("single_class_ceph_63_nodes_N64512", |b| {
        b.iter(|| single::solve_exact(&ceph))
    });
    for n in [1_000, 4_000] {
        let net = five_stations(n);
        g.bench_function(format!("single_class_exact_5_stations_N{n}"), |b| {
            b.iter(|| single::solve_exact(&net))
        });
    }
    let opts = SolveOptions::default();
    g.bench_function("linearizer_ceph_63_nodes_N64512", |b| {
        b.iter(|| approx::linearizer(&ceph, &opts))
    });
    g.finish();
}

criterion_group!(solvers, benches);
criterion_main!(solvers);

//! Design search speed: the 967,680-candidate space of `tests/fixtures/design/space-1m.toml`
//! (every catalogue CPU, drive and NIC, 1-2 sockets, 1-24 drives, 3-30 nodes, 3× and EC
//! 4+2, two workloads, one node down during recovery), ranked (1) by rack units (no prices,
//! no power figures) and (2) by cost (the invented benchmark prices of
//! `prices-all-test.toml`). Throughput is candidates per second (target ≥ 100,000/s; the
//! 10⁶ space in < 30 s). Run: `cargo bench --bench design`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use cephplan::design::{design, load_requirements, DesignOptions, PriceList};
use cephplan::model::ModelParams;
use cephplan::progress::NoProgress;
use cephplan::spec::Catalogue;

fn benches(c: &mut Criterion) {
    let cat = Catalogue::builtin();
    let model = ModelParams::shipped_default();
    let req = load_requirements("tests/fixtures/design/space-1m.toml".as_ref(), &cat).unwrap();
    let prices = PriceList::load("tests/fixtures/design/prices-all-test.toml".as_ref()).unwrap();
    let opts = DesignOptions::default();
    let n = design(&req, None, &model, &opts, &NoProgress)
        .unwrap()
        .stats
        .candidates;
    assert_eq!(n, 967_680);
    let mut g = c.benchmark_group("design");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    g.bench_function("space_967680_by_rack_units", |b| {
        b.iter(|| design(&req, None, &model, &opts, &NoProgress).unwrap())
    });
    g.bench_function("space_967680_by_cost", |b| {
        b.iter(|| design(&req, Some(&prices), &model, &opts, &NoProgress).unwrap())
    });
    g.finish();
}

criterion_group!(design_benches, benches);
criterion_main!(design_benches);

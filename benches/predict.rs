//! Prediction speed: (1) a population sweep (iodepth 1..=64 on the seed-000 fixture, 32
//! images: N = 32..2,048), reported as predictions per second (target ≥ 10,000/s);
//! (2) one predict of the 63-node / 630-OSD fixture at N = 64,512.
//! Run: `cargo bench --bench predict`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use cephplan::model::ModelParams;
use cephplan::predict::{predict, sweep, PredictOptions, SweepSpec};
use cephplan::progress::NoProgress;
use cephplan::spec::{load_scenario, Catalogue};

fn benches(c: &mut Criterion) {
    let cat = Catalogue::builtin();
    let model = ModelParams::shipped_default();

    let seed = load_scenario("tests/fixtures/seed-000.toml".as_ref(), &cat).unwrap();
    let values: Vec<String> = (1..=64).map(|d| d.to_string()).collect();
    let spec = SweepSpec::parse_vary(&format!("iodepth={}", values.join(",")), None).unwrap();
    let mut g = c.benchmark_group("sweep");
    g.sample_size(10);
    g.throughput(Throughput::Elements(spec.values.len() as u64));
    g.bench_function("seed000_iodepth_1_to_64", |b| {
        b.iter(|| sweep(&seed, &model, &spec, &NoProgress).unwrap())
    });
    g.finish();

    let large = load_scenario("tests/fixtures/large-63-nodes.toml".as_ref(), &cat).unwrap();
    assert_eq!(large.population(), 64_512);
    let opts = PredictOptions::default();
    let mut g = c.benchmark_group("predict");
    g.sample_size(10);
    g.bench_function("63_nodes_630_osds_n64512", |b| {
        b.iter(|| predict(&large, &model, &opts).unwrap())
    });
    g.finish();
}

criterion_group!(predict_benches, benches);
criterion_main!(predict_benches);

//! Speed target: fitting the Ceph model to all of calibration-data/ (without
//! leave-one-out) in under 2 s. Run: `cargo bench --bench calibrate`.

use std::path::Path;

use cephplan::calibrate::ceph::{calibrate, prepare_runs, CalibrateOptions};
use cephplan::data::load_runs;
use cephplan::model::ModelParams;
use cephplan::progress::NoProgress;
use cephplan::spec::Catalogue;
use criterion::{criterion_group, criterion_main, Criterion};

fn fit_all(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data");
    let (runs, _) = load_runs(&dir).expect("seed datasets load");
    let (prepared, not_modelled) = prepare_runs(&runs, &Catalogue::builtin()).expect("scenarios");
    let prior = ModelParams::prior();
    let opts = CalibrateOptions {
        leave_one_out: false,
        exclude: vec!["seed-004".into()],
        ..CalibrateOptions::default()
    };
    let mut g = c.benchmark_group("calibrate");
    g.sample_size(10);
    g.bench_function("fit_all_calibration_data_no_loo", |b| {
        b.iter(|| {
            calibrate(
                &prepared,
                not_modelled.clone(),
                &prior,
                &prior,
                &[],
                &opts,
                &NoProgress,
            )
            .expect("fit runs")
        })
    });
    g.finish();
}

criterion_group!(benches, fit_all);
criterion_main!(benches);

//! Speed targets: fitting the Ceph model to the whole of calibration-data/ (the estimator
//! every calibration, leave-one-out refit and transfer split runs) in under 2 s; and the
//! whole `calibrate` report (fit, exact-MVA comparison of every run, USL) for reference.
//! Run: `cargo bench --bench calibrate`.

use std::path::Path;

use cephplan::calibrate::ceph::{
    calibrate, calibration_fit_options, default_fit_names, ensure_params, fit_model, prepare_runs,
    CalibrateOptions, PreparedRun,
};
use cephplan::data::load_runs;
use cephplan::model::ModelParams;
use cephplan::progress::NoProgress;
use cephplan::spec::Catalogue;
use criterion::{criterion_group, criterion_main, Criterion};

fn fit_all(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data");
    let (runs, _) = load_runs(&dir).expect("datasets load");
    let (prepared, not_modelled) = prepare_runs(&runs, &Catalogue::builtin()).expect("scenarios");
    let prior = ModelParams::prior();
    let mut base = prior.clone();
    let names = default_fit_names(&base, &prepared);
    ensure_params(&mut base, &prior, &names);
    let all: Vec<&PreparedRun> = prepared.iter().collect();
    let lm = calibration_fit_options();
    let mut g = c.benchmark_group("calibrate");
    g.sample_size(10);
    g.bench_function("fit_whole_corpus", |b| {
        b.iter(|| fit_model(&all, &base, &names, &prior, &lm, &NoProgress))
    });
    let opts = CalibrateOptions {
        leave_one_out: false,
        ..CalibrateOptions::default()
    };
    g.bench_function("calibrate_report_no_loo", |b| {
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

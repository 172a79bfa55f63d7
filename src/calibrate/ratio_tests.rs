//! Tests of the ratio stage: a hand-checkable ratio, and seed 003's rows fitted.

use std::path::Path;

use super::*;
use crate::data::load_runs;
use crate::progress::NoProgress;
use crate::spec::parse_scenario;

const X86: &str = include_str!("../../calibration-data/scenarios/seed-003-x86-radosbench.toml");

fn seed003() -> Vec<MeasuredRun> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("calibration-data/seed-003-arm-vs-x86-ratios.csv");
    load_runs(&p).unwrap().0
}

/// Hand case (bounds analysis): two clusters identical but for the data drives per node (2
/// against 1), a 4M rados read of every object far beyond saturation (16 × 64 ops in
/// flight on 3 HDDs). The throughput of a saturated closed network is its bottleneck's
/// `servers / demand`; the bottleneck is the data device (one HDD read of 4 MiB takes
/// about 12.4 ms + 4 MiB / 171 MB/s ≈ 37 ms, far above any CPU or 10 GbE wire demand
/// (4 MiB × 8 / 10 Gb/s ≈ 3.4 ms), so the ratio is the drive count ratio, 2.
#[test]
fn ratio_of_a_saturated_device_bound_pair_is_the_drive_ratio() {
    let base = X86
        .replace("pattern = \"write\"", "pattern = \"read\"")
        .replace("object_size = \"64k\"", "object_size = \"4M\"")
        .replace("concurrency = 32 ", "concurrency = 1024 ");
    let two = base.replace("count = 7 ", "count = 2 ");
    let one = base.replace("count = 7 ", "count = 1 ");
    let cat = Catalogue::builtin();
    let s2 = parse_scenario(&two, "two.toml", &cat).unwrap();
    let s1 = parse_scenario(&one, "one.toml", &cat).unwrap();
    assert_eq!((s2.data.count_per_node, s1.data.count_per_node), (2, 1));
    let run = seed003()
        .into_iter()
        .find(|r| r.run_id == "s003-radosbench-4m-read-c8")
        .unwrap();
    let r = PreparedRatio {
        run,
        scenario: s2.clone(),
        reference: s1.clone(),
    };
    let p = ModelParams::prior();
    let (a, b, ratio) = predicted_ratio(&r, &p, &SolveOptions::default()).unwrap();
    // The ratio is the quotient of the two systems' own predictions...
    let own = |s: &Scenario| {
        super::super::ceph::predict_scenario_exact(s, &p)
            .unwrap()
            .iops
    };
    assert_eq!((a, b), (own(&s2), own(&s1)));
    assert_eq!(ratio, a / b);
    // ... and, both saturated on their HDDs, the drive ratio within 1 %.
    assert!((ratio - 2.0).abs() < 0.02, "ratio {ratio} ({a} / {b})");
}

/// The row's workload cells reach both scenarios: concurrency (`rados bench -t`, one
/// client) and object size.
#[test]
fn a_ratio_row_applies_its_workload_to_both_systems() {
    let runs = seed003();
    let (prepared, skipped) = prepare_ratios(&runs, &Catalogue::builtin()).unwrap();
    let r = prepared
        .iter()
        .find(|r| r.run.run_id == "s003-radosbench-64k-write-c512")
        .unwrap();
    for s in [&r.scenario, &r.reference] {
        assert_eq!(s.engine, crate::spec::Engine::Rados);
        assert_eq!(s.population(), 512);
        assert_eq!(s.block_size_bytes, 64 * 1024);
    }
    assert_eq!(r.scenario.node_cpu.arch.as_str(), "x86_64");
    assert_eq!(r.reference.node_cpu.arch.as_str(), "armv7");
    // cosbench goes through the gateway: no scenario, not fitted.
    assert!(skipped
        .iter()
        .all(|n| n.run_id.starts_with("s003-cosbench")));
    assert_eq!(skipped.len(), 3);
}

/// Seed 003's 15 rados bench ratio rows are fitted (the ARM factor, the only one no
/// absolute run informs) and every one is compared in the report with its error.
#[test]
fn seed_003_ratio_rows_are_fitted_and_reported() {
    let runs = seed003();
    let cat = Catalogue::builtin();
    let (prepared, _) = prepare_ratios(&runs, &cat).unwrap();
    let stated: Vec<&MeasuredRun> = runs
        .iter()
        .filter(|r| r.run_id.starts_with("s003-radosbench"))
        .collect();
    assert_eq!(prepared.len(), stated.len());
    let prior = ModelParams::prior();
    // No absolute runs: every CPU factor of the two scenarios that is not the reference.
    let names = ratio_fit_names(&prepared, &[], &prior, &prior);
    assert!(
        names.contains(&"arch_efficiency.armv7".to_string()),
        "{names:?}"
    );
    let names = vec!["arch_efficiency.armv7".to_string()];
    let opts = super::super::ceph::calibration_fit_options();
    let (fit, model) = fit_ratios(&prepared, &prior, &prior, &names, &opts, &NoProgress);
    assert_eq!(fit.runs.len(), stated.len());
    for (c, r) in fit.runs.iter().zip(&stated) {
        assert_eq!(c.run_id, r.run_id);
        let meas = r.measured.ratio.as_ref().unwrap().value;
        assert_eq!(c.measured, meas);
        assert!((c.predicted - c.predicted_numerator / c.predicted_reference).abs() < 1e-12);
        assert!((c.error_pct - 100.0 * (c.predicted / meas - 1.0)).abs() < 1e-9);
    }
    assert_eq!(fit.parameters.len(), 1);
    assert_eq!(
        model.param["arch_efficiency.armv7"].value,
        fit.parameters[0].value
    );
    // The fit does not do worse than its start on the rows it fits.
    let start = |r: &PreparedRatio| {
        let (_, _, v) = predicted_ratio(r, &prior, &calibration_solve_options()).unwrap();
        (v / r.run.measured.ratio.as_ref().unwrap().value)
            .ln()
            .powi(2)
    };
    let at = |r: &PreparedRatio| {
        let (_, _, v) = predicted_ratio(r, &model, &calibration_solve_options()).unwrap();
        (v / r.run.measured.ratio.as_ref().unwrap().value)
            .ln()
            .powi(2)
    };
    let s0: f64 = prepared.iter().map(start).sum();
    let s1: f64 = prepared.iter().map(at).sum();
    assert!(s1 <= s0 * (1.0 + 1e-9), "{s1} > {s0}");
    // In a report, the fitted rows leave `not_modelled`.
    let mut report = CalibrationReport {
        schema_version: 1,
        datasets: vec![],
        start_model: "prior".into(),
        parameters: vec![],
        covariance_ln: None,
        termination: fit.termination.clone().unwrap(),
        degrees_of_freedom: 0,
        runs: vec![],
        mape_in_sample: None,
        mape_loo: None,
        loo_runs: None,
        max_abs_throughput_error_pct: None,
        systems: vec![],
        usl: None,
        not_modelled: runs
            .iter()
            .map(|r| NotModelled {
                run_id: r.run_id.clone(),
                system_id: r.system_id.clone(),
                reason: ratio_stage_reason(),
            })
            .collect(),
        held_unidentified: vec![],
        warnings: vec![],
        ratios: None,
    };
    apply_ratio_fit(&mut report, fit);
    assert_eq!(report.not_modelled.len(), 3);
    assert_eq!(report.ratios.as_ref().unwrap().runs.len(), stated.len());
}

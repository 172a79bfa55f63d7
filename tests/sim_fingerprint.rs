//! Bit-exact fingerprints of simulator output for fixed seeds, so that speed work on the
//! event loop (`cephplan::sim::engine`) is proven not to change any result.
//!
//! Oracle: every pinned number below was produced by the simulator with the same model,
//! seed and event count, and printed by [`check`]'s failure message: first at commit
//! 085c03f (before the fork-join speed-ups of the `simperf` branch), re-pinned when the
//! random streams changed from ChaCha8 to xoshiro256++ (branch `simperf2`; every random
//! number changed; the statistical tests of `tests/sim.rs` stayed green, and the commits
//! before that change kept the 085c03f tables). A mismatch means the sample
//! path changed: either a bug, or a deliberate change of event order or random-stream use,
//! which must then be justified and the tables regenerated from that message.
//!
//! The models cover every path of the engine: the two benchmark networks of
//! `benches/sim.rs` (a product-form central server; a NIC then a 3-way fork-join over 24
//! randomly placed OSD copies with H2 service), a mixed model (open source, labelled
//! choice, fork inside a choice, round-robin and delay stations, zero think time,
//! Erlang-mixture service), and the full `simulate` pipeline (pilot, MSER-5 warm-up,
//! replications on two threads) on the fork-join fixture of `tests/sim_cli.rs`.

use std::path::Path;

use cephplan::progress::NoProgress;
use cephplan::sim::engine::{Compiled, Engine};
use cephplan::sim::reference::{central_server, replicated_write};
use cephplan::sim::{simulate, Dist, Estimate, Placement, Route, SimModel, SimOptions};

/// Named values of one run, floats as their bit patterns.
type Fingerprint = Vec<(String, u64)>;

/// Open labelled mix (reads; writes that fork 3 ways) plus a closed class with zero think
/// time whose fork sends one branch to a queue and one to a delay.
fn mixed() -> SimModel {
    let mut b = SimModel::builder();
    let nic = b.queue("nic", 1, 4, Placement::RoundRobin);
    let osd = b.queue("osd", 2, 6, Placement::Random);
    let wire = b.delay("wire");
    let cpu = b.queue("cpu", 3, 1, Placement::Random);
    b.open_class(
        "mix",
        2000.0,
        Route::new()
            .visit(nic, Dist::exponential(0.00002))
            .choose([
                (
                    "read",
                    0.7,
                    Route::new().visit(osd, Dist::exponential(0.0002)),
                ),
                (
                    "write",
                    0.3,
                    Route::new().fork(
                        (0..3).map(|_| Route::new().visit(osd, Dist::two_moment(0.0004, 2.0))),
                    ),
                ),
            ])
            .visit(wire, Dist::exponential(0.00005)),
    );
    b.closed_class(
        "batch",
        6,
        Dist::deterministic(0.0),
        Route::new().visit(cpu, Dist::two_moment(0.001, 0.4)).fork([
            Route::new().visit(osd, Dist::deterministic(0.0001)),
            Route::new().visit(wire, Dist::exponential(0.0003)),
        ]),
    );
    b.build().unwrap()
}

/// One raw replication of `events` events: clock, per class and label the completions,
/// response sum and quantiles, per station the time integrals.
fn engine_fingerprint(model: &SimModel, seed: u64, events: u64) -> Fingerprint {
    let compiled = Compiled::new(model);
    let mut e = Engine::new(&compiled, seed, 0, true);
    e.run_until(f64::INFINITY, events, &|_| true);
    let mut fp = vec![
        ("events".to_string(), e.events()),
        ("now".to_string(), e.now().to_bits()),
    ];
    let accs = e
        .classes()
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("class{i}"), a))
        .chain(
            e.labels()
                .iter()
                .enumerate()
                .map(|(i, a)| (format!("label{i}"), a)),
        );
    for (name, a) in accs {
        fp.push((format!("{name}.completions"), a.completions));
        fp.push((format!("{name}.sum_secs"), a.sum_secs.to_bits()));
        for q in [0.5, 0.99, 0.999] {
            let v = a.hist.quantile(q).unwrap_or(f64::NAN);
            fp.push((format!("{name}.q{q}"), v.to_bits()));
        }
    }
    for (i, s) in e.stations().iter().enumerate() {
        fp.push((format!("station{i}.area_present"), s.area_present.to_bits()));
        fp.push((format!("station{i}.area_busy"), s.area_busy.to_bits()));
    }
    fp
}

/// The full pipeline: events, replications, warm-up, and per class the throughput, mean
/// response and p99 estimates.
fn simulate_fingerprint(model: &SimModel, seed: u64) -> Fingerprint {
    let o = SimOptions {
        seed,
        threads: 2,
        min_replications: 4,
        max_replications: 4,
        samples_per_replication: 2_000,
        ..SimOptions::default()
    };
    let r = simulate(model, &o, &NoProgress).unwrap();
    let mut fp = vec![
        ("events".to_string(), r.events),
        ("replications".to_string(), u64::from(r.replications)),
        (
            "measured_secs_per_replication".to_string(),
            r.measured_secs_per_replication.to_bits(),
        ),
    ];
    let est = |fp: &mut Fingerprint, name: String, e: &Estimate| {
        fp.push((format!("{name}.mean"), e.mean.to_bits()));
        fp.push((
            format!("{name}.half_width"),
            e.half_width.unwrap_or(f64::NAN).to_bits(),
        ));
    };
    for (i, c) in r.classes.iter().enumerate() {
        fp.push((format!("class{i}.completions"), c.completions));
        est(
            &mut fp,
            format!("class{i}.throughput"),
            &c.throughput_per_sec,
        );
        est(&mut fp, format!("class{i}.response"), &c.response_time_secs);
        est(&mut fp, format!("class{i}.p99"), &c.percentiles.p99_secs);
    }
    for (i, s) in r.stations.iter().enumerate() {
        est(&mut fp, format!("station{i}.utilization"), &s.utilization);
    }
    fp
}

/// Counts are pinned as integers, everything else as `f64` bits.
fn is_count(name: &str) -> bool {
    ["events", "completions", "replications"]
        .iter()
        .any(|s| name.ends_with(s))
}

/// Compares with the pinned table; on mismatch prints the actual table as Rust source.
fn check(what: &str, got: &Fingerprint, pinned: &[(&str, u64)]) {
    let same = got.len() == pinned.len()
        && got
            .iter()
            .zip(pinned)
            .all(|((gn, gv), (pn, pv))| gn == pn && gv == pv);
    if !same {
        let mut table = String::new();
        for (n, v) in got {
            let line = if is_count(n) {
                format!("    (\"{n}\", {v}),\n")
            } else {
                format!("    (\"{n}\", {v:#018x}), // {}\n", f64::from_bits(*v))
            };
            table.push_str(&line);
        }
        let diffs: Vec<String> = got
            .iter()
            .zip(pinned)
            .filter(|(g, p)| g.0 != p.0 || g.1 != p.1)
            .map(|(g, p)| format!("{}: got {:#x}, pinned {:#x}", g.0, g.1, p.1))
            .collect();
        panic!(
            "{what}: simulator output differs from the pinned fingerprint \
             ({} entries vs {} pinned; first differences: {:?}).\nActual table:\n{table}",
            got.len(),
            pinned.len(),
            &diffs[..diffs.len().min(5)]
        );
    }
}

#[test]
fn replicated_write_engine_output_is_unchanged() {
    check(
        "replicated_write",
        &engine_fingerprint(&replicated_write(), 1, 300_000),
        REPLICATED_WRITE,
    );
}

#[test]
fn central_server_engine_output_is_unchanged() {
    check(
        "central_server",
        &engine_fingerprint(&central_server(), 1, 300_000),
        CENTRAL_SERVER,
    );
}

#[test]
fn mixed_open_choice_fork_engine_output_is_unchanged() {
    check("mixed", &engine_fingerprint(&mixed(), 7, 300_000), MIXED);
}

#[test]
fn fork_join_fixture_simulate_report_is_unchanged() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sim_fork_join.toml");
    let model = cephplan::sim::file::load_model(&path).unwrap();
    check(
        "sim_fork_join.toml",
        &simulate_fingerprint(&model, 3),
        FORK_JOIN_FIXTURE,
    );
}

const REPLICATED_WRITE: &[(&str, u64)] = &[
    ("events", 300000),
    ("now", 0x40017458bdd2c84a), // 2.181809885973995
    ("class0.completions", 74922),
    ("class0.sum_secs", 0x40716f050ad68c95), // 278.938731039126
    ("class0.q0.5", 0x3f6b100000000000),     // 0.00330352783203125
    ("class0.q0.99", 0x3f87100000000000),    // 0.011260986328125
    ("class0.q0.999", 0x3f8e100000000000),   // 0.014678955078125
    ("station0.area_present", 0x3ff957d58bac3b5b), // 1.5839438873260494
    ("station0.area_busy", 0x3ff7ffddd5368f2e), // 1.4999674156797016
    ("station1.area_present", 0x407bb7f533e647fe), // 443.49736394837953
    ("station1.area_busy", 0x405669e92cace0fe), // 89.65485684282973
];
const CENTRAL_SERVER: &[(&str, u64)] = &[
    ("events", 300000),
    ("now", 0x4056998e9ea571f5), // 90.3993298164058
    ("class0.completions", 59978),
    ("class0.sum_secs", 0x40b1e9eba68e6b7d), // 4585.9205101978705
    ("class0.q0.5", 0x3fb3700000000000),     // 0.075927734375
    ("class0.q0.99", 0x3fbb300000000000),    // 0.106201171875
    ("class0.q0.999", 0x3fbdb00000000000),   // 0.115966796875
    ("station0.area_present", 0x405e8c601095ab81), // 122.19336332908826
    ("station0.area_busy", 0x405df884ecd7e495), // 119.8831131084756
    ("station1.area_present", 0x40b0a46895b3bd27), // 4260.408534272842
    ("station1.area_busy", 0x4056996f941444e3), // 90.39743520717052
    ("station2.area_present", 0x4065f41688a9e2e9), // 175.62775071316653
    ("station2.area_busy", 0x404df0c717408320), // 59.88107576990137
    ("station3.area_present", 0x403e3d39c5c21dfe), // 30.239162788288006
    ("station3.area_busy", 0x0000000000000000), // 0
];
const MIXED: &[(&str, u64)] = &[
    ("events", 300000),
    ("now", 0x40306223fb7b5e2c), // 16.383361547106844
    ("class0.completions", 33118),
    ("class0.sum_secs", 0x402e8689a2be4046), // 15.262768827175147
    ("class0.q0.5", 0x3f33500000000000),     // 0.00029468536376953125
    ("class0.q0.99", 0x3f68700000000000),    // 0.00298309326171875
    ("class0.q0.999", 0x3f74500000000000),   // 0.0049591064453125
    ("class1.completions", 49197),
    ("class1.sum_secs", 0x40589306496023aa), // 98.29725870503049
    ("class1.q0.5", 0x3f5f300000000000),     // 0.001903533935546875
    ("class1.q0.99", 0x3f71b00000000000),    // 0.0043182373046875
    ("class1.q0.999", 0x3f76700000000000),   // 0.0054779052734375
    ("label0.completions", 23151),
    ("label0.sum_secs", 0x40195331b76643a6), // 6.331244340531077
    ("label0.q0.5", 0x3f2c300000000000),     // 0.00021505355834960938
    ("label0.q0.99", 0x3f50f00000000000),    // 0.001033782958984375
    ("label0.q0.999", 0x3f59900000000000),   // 0.001560211181640625
    ("label1.completions", 9967),
    ("label1.sum_secs", 0x4021dcf0c70b1e74), // 8.931524486644072
    ("label1.q0.5", 0x3f44f00000000000),     // 0.0006389617919921875
    ("label1.q0.99", 0x3f70b00000000000),    // 0.0040740966796875
    ("label1.q0.999", 0x3f77d00000000000),   // 0.0058135986328125
    ("station0.area_present", 0x3fe5510ab1728eeb), // 0.6661427942057946
    ("station0.area_busy", 0x3fe5510ab1728eeb), // 0.6661427942057946
    ("station1.area_present", 0x40360a2fd5d851e8), // 22.039792409241187
    ("station1.area_busy", 0x4035b071aca58869), // 21.689234533704084
    ("station2.area_present", 0x4030643bf0a907f5), // 16.39153961302505
    ("station2.area_busy", 0x0000000000000000), // 0
    ("station3.area_present", 0x4054ad837cc18a8a), // 82.71115034962182
    ("station3.area_busy", 0x4048833eb8491af4), // 49.02535155839533
];
const FORK_JOIN_FIXTURE: &[(&str, u64)] = &[
    ("events", 271776),
    ("replications", 4),
    ("measured_secs_per_replication", 0x3fdfba35dbab5988), // 0.4957403798302029
    ("class0.completions", 7982),
    ("class0.throughput.mean", 0x40af7295b9de04d7), // 4025.2924336796673
    ("class0.throughput.half_width", 0x405bc14eafbba8c7), // 111.02042764021017
    ("class0.response.mean", 0x3f502400ee2df583),   // 0.0009851464353397294
    ("class0.response.half_width", 0x3f012d76a92e4246), // 0.00003276365637028661
    ("class0.p99.mean", 0x3f70280000000000),        // 0.00394439697265625
    ("class0.p99.half_width", 0x3f354c8cd0b0c618),  // 0.0003249973094084659
    ("class1.completions", 9508),
    ("class1.throughput.mean", 0x40b2bad935195e28), // 4794.848466477859
    ("class1.throughput.half_width", 0x4052b4650c1a5fc1), // 74.81866743636694
    ("class1.response.mean", 0x3f35f27abe2655bc),   // 0.00033488747262685656
    ("class1.response.half_width", 0x3eea123026f85b5d), // 0.000012431644079531
    ("class1.p99.mean", 0x3f5de00000000000),        // 0.00182342529296875
    ("class1.p99.half_width", 0x3f22ce20373a3b38),  // 0.0001434721303792076
    ("station0.utilization.mean", 0x3fc666fb150e1521), // 0.17501772430493026
    ("station0.utilization.half_width", 0x3f794eda0d971434), // 0.006178714532727492
    ("station1.utilization.mean", 0x3fdec0d39d49dba3), // 0.4805192028065283
    ("station1.utilization.half_width", 0x3f6633e306bd2191), // 0.00271028843954841
];

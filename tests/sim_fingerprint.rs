//! Bit-exact fingerprints of simulator output for fixed seeds, so that speed work on the
//! event loop (`cephplan::sim::engine`) is proven not to change any result.
//!
//! Oracle: every pinned number below was produced by the simulator at commit 085c03f
//! (before the fork-join speed-ups of the `simperf` branch) with the same model, seed and
//! event count, and printed by [`check`]'s failure message. A mismatch means the sample
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
    ("now", 0x40016b5152db73a6), // 2.1774012063237533
    ("class0.completions", 74923),
    ("class0.sum_secs", 0x407165c1da1dbe47), // 278.3598271524283
    ("class0.q0.5", 0x3f6b100000000000),     // 0.00330352783203125
    ("class0.q0.99", 0x3f85100000000000),    // 0.010284423828125
    ("class0.q0.999", 0x3f8b100000000000),   // 0.013214111328125
    ("station0.area_present", 0x3ff98f7c6a65553a), // 1.597530761345594
    ("station0.area_busy", 0x3ff8235f3bd8ab8e), // 1.5086357438801516
    ("station1.area_present", 0x407bdccc6412c50c), // 445.7999001248543
    ("station1.area_busy", 0x405674d87ba695df), // 89.82571307438
];
const CENTRAL_SERVER: &[(&str, u64)] = &[
    ("events", 300000),
    ("now", 0x4056435b9880c812), // 89.05246555877991
    ("class0.completions", 59978),
    ("class0.sum_secs", 0x40b193bc3c177ec3), // 4499.735291927765
    ("class0.q0.5", 0x3fb3100000000000),     // 0.074462890625
    ("class0.q0.99", 0x3fbab00000000000),    // 0.104248046875
    ("class0.q0.999", 0x3fbdd00000000000),   // 0.116455078125
    ("station0.area_present", 0x405ecc5019ea0795), // 123.19238899092154
    ("station0.area_busy", 0x405e2cc3e00638cd), // 120.69945526702504
    ("station1.area_present", 0x40b04981aa3007db), // 4169.506503106993
    ("station1.area_busy", 0x4056433ba410ef9b), // 89.05051519063856
    ("station2.area_present", 0x40666cd3a09ee578), // 179.40083342585035
    ("station2.area_busy", 0x404df730219f9448), // 59.93115635196642
    ("station3.area_present", 0x403dde748355d24a), // 29.868965347721577
    ("station3.area_busy", 0x0000000000000000), // 0
];
const MIXED: &[(&str, u64)] = &[
    ("events", 300000),
    ("now", 0x40308249217b1e05), // 16.508928387220312
    ("class0.completions", 32810),
    ("class0.sum_secs", 0x402dc87f80f6e74e), // 14.891597776546089
    ("class0.q0.5", 0x3f33300000000000),     // 0.00029277801513671875
    ("class0.q0.99", 0x3f67700000000000),    // 0.00286102294921875
    ("class0.q0.999", 0x3f73d00000000000),   // 0.0048370361328125
    ("class1.completions", 49701),
    ("class1.sum_secs", 0x4058c2ff99d7f960), // 99.04685064402793
    ("class1.q0.5", 0x3f5f100000000000),     // 0.001895904541015625
    ("class1.q0.99", 0x3f71b00000000000),    // 0.0043182373046875
    ("class1.q0.999", 0x3f76500000000000),   // 0.0054473876953125
    ("label0.completions", 22985),
    ("label0.sum_secs", 0x4018feb49f89aae6), // 6.24873589780575
    ("label0.q0.5", 0x3f2c700000000000),     // 0.00021696090698242188
    ("label0.q0.99", 0x3f50500000000000),    // 0.000995635986328125
    ("label0.q0.999", 0x3f57b00000000000),   // 0.001445770263671875
    ("label1.completions", 9825),
    ("label1.sum_secs", 0x40214925313211dc), // 8.64286187874034
    ("label1.q0.5", 0x3f44900000000000),     // 0.0006275177001953125
    ("label1.q0.99", 0x3f70500000000000),    // 0.0039825439453125
    ("label1.q0.999", 0x3f78300000000000),   // 0.0059051513671875
    ("station0.area_present", 0x3fe4c9ce904bac24), // 0.6496346300385807
    ("station0.area_busy", 0x3fe4c9ce904bac24), // 0.6496346300385807
    ("station1.area_present", 0x4035a6634a4be4e4), // 21.649952548531374
    ("station1.area_busy", 0x4035527d6970e30a), // 21.322226133404037
    ("station2.area_present", 0x40307406fc6f92c6), // 16.45323159908255
    ("station2.area_busy", 0x0000000000000000), // 0
    ("station3.area_present", 0x4054d9e240727845), // 83.40443431070987
    ("station3.area_busy", 0x4048b408374727b8), // 49.406500730270125
];
const FORK_JOIN_FIXTURE: &[(&str, u64)] = &[
    ("events", 272490),
    ("replications", 4),
    ("measured_secs_per_replication", 0x3fdfb1dac81ef36d), // 0.4952303842836077
    ("class0.completions", 7975),
    ("class0.throughput.mean", 0x40af73cedd0e4084), // 4025.9040302709345
    ("class0.throughput.half_width", 0x4050f807e22ea323), // 67.87548117212695
    ("class0.response.mean", 0x3f500bb7f2428a5e),   // 0.0009793564177377405
    ("class0.response.half_width", 0x3efdd7a443725634), // 0.00002845988293794493
    ("class0.p99.mean", 0x3f70aa0000000000),        // 0.0040683746337890625
    ("class0.p99.half_width", 0x3f4004123f789d6f),  // 0.000488766584514728
    ("class1.completions", 9673),
    ("class1.throughput.mean", 0x40b31314b1d04a88), // 4883.080838220783
    ("class1.throughput.half_width", 0x405b280554140c66), // 108.62532522161345
    ("class1.response.mean", 0x3f34ebdd4bfc03cf),   // 0.00031923439745190364
    ("class1.response.half_width", 0x3ef49e3177576766), // 0.00001966280202290258
    ("class1.p99.mean", 0x3f5b200000000000),        // 0.00165557861328125
    ("class1.p99.half_width", 0x3f3486f5e9b6ad31),  // 0.00031322005971886046
    ("station0.utilization.mean", 0x3fc6d5dad0c5a86e), // 0.1784013289828325
    ("station0.utilization.half_width", 0x3f520f8e3a7beb80), // 0.0011023415517558977
    ("station1.utilization.mean", 0x3fdebc9413b7a721), // 0.4802599136879611
    ("station1.utilization.half_width", 0x3f7ac903231cddda), // 0.006539356474426461
];

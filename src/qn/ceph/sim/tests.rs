//! The simulation model agrees with the MVA network it twins (same demands, same minimum
//! latency), and its fork-join routing gives the analytic fork-join mean.

use approx::assert_relative_eq;

use super::*;
use crate::qn::ceph::tests::{params, tiny};
use crate::sim::{simulate, SimOptions, Step};

/// Scenario variants covering every route: replicated read/write/mix, no cluster network,
/// WAL device, EC full-stripe and partial-stripe (read-modify-write).
fn variants() -> Vec<(&'static str, Scenario)> {
    let ec = |bs: &'static str, pattern: &'static str| {
        tiny(move |t| {
            t.replace("nodes = 3", "nodes = 6")
                .replace("replicated = 3", "erasure = { k = 4, m = 2 }")
                .replace("\"4k\"", bs)
                .replace("\"randwrite\"", pattern)
        })
    };
    vec![
        ("replicated write", tiny(|t| t)),
        (
            "replicated read",
            tiny(|t| t.replace("\"randwrite\"", "\"randread\"")),
        ),
        (
            "replicated 70/30 mix",
            tiny(|t| t.replace("\"randwrite\"", "\"randrw\"\nread_percent = 70")),
        ),
        (
            "r = 1",
            tiny(|t| t.replace("replicated = 3", "replicated = 1")),
        ),
        (
            "no cluster network",
            tiny(|t| t.replace("cluster = 10\n", "")),
        ),
        (
            "WAL device",
            tiny(|t| {
                t.replace(
                    "[cluster.node.network]",
                    "[cluster.node.wal_device]\ncount = 1\nmodel = { kind = \"optane\", capacity = \"375GiB\", read_4k_iops = 500000, write_4k_iops = 500000, read_bytes_per_sec = 4000000000, write_bytes_per_sec = 4000000000, read_latency = \"10us\", write_latency = \"30us\" }\n[cluster.node.network]",
                )
            }),
        ),
        ("EC 4+2 full-stripe write", ec("\"16k\"", "\"randwrite\"")),
        ("EC 4+2 partial-stripe write", ec("\"4k\"", "\"randwrite\"")),
        ("EC 4+2 read of 16k", ec("\"16k\"", "\"randread\"")),
        (
            "EC 4+2 partial read of 4k (Tentacle: the primary holds the chunk 1/4 of the time)",
            tiny(|t| {
                t.replace("nodes = 3", "nodes = 6")
                    .replace("replicated = 3", "erasure = { k = 4, m = 2 }")
                    .replace("\"19.2.0\"", "\"20.2.0\"")
                    .replace("\"randwrite\"", "\"randread\"")
            }),
        ),
        (
            "EC 4+2 mix of 8k",
            ec("\"8k\"", "\"randrw\"\nread_percent = 50"),
        ),
    ]
}

/// Mean time along the longest branch of `steps` (forks: the slowest branch by mean).
fn longest_mean(steps: &[Step]) -> f64 {
    steps
        .iter()
        .map(|s| match s {
            Step::Visit { service, .. } => service.mean_secs(),
            Step::Fork { branches } => branches.iter().map(|b| longest_mean(b)).fold(0.0, f64::max),
            // Work the job leaves behind is off its path.
            Step::Detach { .. } => 0.0,
            // A nested choice (the primary may or may not hold an EC chunk): the expected
            // longest branch, as MVA's path demands are expectations.
            Step::Choice { branches } => branches
                .iter()
                .map(|b| b.probability * longest_mean(&b.steps))
                .sum(),
        })
        .sum()
}

/// Whether `steps` start detached work anywhere (inside forks and choices too).
fn detaches(steps: &[Step]) -> bool {
    steps.iter().any(|s| match s {
        Step::Visit { .. } => false,
        Step::Detach { .. } => true,
        Step::Fork { branches } => branches.iter().any(|b| detaches(b)),
        Step::Choice { branches } => branches.iter().any(|b| detaches(&b.steps)),
    })
}

/// The read and write branches of the one class's route.
fn branches(m: &SimModel) -> Vec<(String, f64, Vec<Step>)> {
    let [Step::Choice { branches }] = m.classes[0].route.as_slice() else {
        panic!("the route is one choice: {:?}", m.classes[0].route)
    };
    branches
        .iter()
        .map(|b| (b.label.clone(), b.probability, b.steps.clone()))
        .collect()
}

/// The hand-count parameters, and the same with CPU per byte (1 cycle a byte), so that the
/// bytes an OSD op moves and those the primary forwards and gathers are checked too.
fn param_sets() -> [(&'static str, crate::model::ModelParams); 2] {
    let mut bytes = params();
    bytes.set(crate::model::names::CPU_PER_BYTE, 1e-9).unwrap();
    [("no CPU per byte", params()), ("CPU per byte", bytes)]
}

#[test]
fn simulated_demand_equals_the_network_demand_at_every_station() {
    // Oracle: qn::ceph::build, whose demands the hand-computed tests in ceph/tests.rs check.
    for ((what, s), (pw, p)) in variants()
        .into_iter()
        .flat_map(|v| param_sets().map(|ps| (v.clone(), ps)))
    {
        let what = format!("{what}, {pw}");
        let cs = build_sim(&s, &p, &CephSimOptions::default()).unwrap();
        let net = &cs.network.network;
        assert_eq!(cs.model.stations.len(), net.stations.len(), "{what}");
        let d = cs.model.demands();
        for (i, st) in net.stations.iter().enumerate() {
            let sim = &cs.model.stations[i];
            assert_eq!(sim.name, st.name, "{what}");
            assert_eq!((sim.kind, sim.servers), (st.kind, st.servers), "{what}");
            assert_eq!(sim.multiplicity, st.multiplicity, "{what}: {}", st.name);
            assert_eq!(sim.batching, st.batching, "{what}: {}", st.name);
            assert!(
                approx::relative_eq!(
                    d[i][0],
                    st.demands[0].secs,
                    max_relative = 1e-12,
                    epsilon = 1e-18
                ),
                "{what}: {}: simulated {} against {}",
                st.name,
                d[i][0],
                st.demands[0].secs
            );
        }
    }
}

#[test]
fn longest_branch_equals_the_sum_of_path_demands() {
    // Oracle: Σ_k path_secs of each I/O type is MVA's no-queueing latency (the latency
    // bound); the route's slowest branch by mean must be the same critical path.
    for ((what, s), (pw, p)) in variants()
        .into_iter()
        .flat_map(|v| param_sets().map(|ps| (v.clone(), ps)))
    {
        let what = format!("{what}, {pw}");
        let cs = build_sim(&s, &p, &CephSimOptions::default()).unwrap();
        for (label, prob, steps) in branches(&cs.model) {
            let (demands, p) = if label == READ_LABEL {
                (&cs.network.read, s.read_fraction)
            } else {
                (&cs.network.write, 1.0 - s.read_fraction)
            };
            assert_relative_eq!(prob, p);
            let path: f64 = demands.iter().map(|d| d.path_secs).sum();
            assert!(
                approx::relative_eq!(longest_mean(&steps), path, max_relative = 1e-12),
                "{what}/{label}: longest branch {} against {path}",
                longest_mean(&steps)
            );
            assert!(path > 0.0, "{what}/{label}");
        }
    }
}

#[test]
fn the_off_path_share_of_an_osd_op_is_detached_work() {
    // Oracle: the MVA network of the same scenario (`qn::ceph::tests`,
    // `only_the_path_share_of_an_osd_op_is_on_its_path`): with a path share every OSD
    // visit is the share on the route plus the rest detached, so the simulated demand
    // still equals the network's at every station and the longest branch its path sum.
    let mut p = params();
    p.param.insert(
        crate::model::names::OSD_CPU_PATH_SHARE.into(),
        crate::model::ModelParams::prior().param[crate::model::names::OSD_CPU_PATH_SHARE].clone(),
    );
    p.set(crate::model::names::OSD_CPU_PATH_SHARE, 0.75)
        .unwrap();
    for (what, s) in variants() {
        let cs = build_sim(&s, &p, &CephSimOptions::default()).unwrap();
        let net = &cs.network.network;
        let d = cs.model.demands();
        for (i, st) in net.stations.iter().enumerate() {
            assert_relative_eq!(
                d[i][0],
                st.demands[0].secs,
                max_relative = 1e-12,
                epsilon = 1e-18
            );
        }
        for (label, _, steps) in branches(&cs.model) {
            let demands = if label == READ_LABEL {
                &cs.network.read
            } else {
                &cs.network.write
            };
            let path: f64 = demands.iter().map(|d| d.path_secs).sum();
            assert_relative_eq!(longest_mean(&steps), path, max_relative = 1e-12);
            assert!(detaches(&steps), "{what}/{label}: {steps:?}");
        }
    }
}

#[test]
fn replicated_write_forks_into_r_branches_and_r_1_does_not_fork() {
    let forks = |s: &Scenario| -> Vec<usize> {
        let cs = build_sim(s, &params(), &CephSimOptions::default()).unwrap();
        branches(&cs.model)[0]
            .2
            .iter()
            .filter_map(|st| match st {
                Step::Fork { branches } => Some(branches.len()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(forks(&tiny(|t| t)), vec![3]);
    assert_eq!(
        forks(&tiny(|t| t.replace("replicated = 3", "replicated = 1"))),
        Vec::<usize>::new()
    );
    // EC 4+2, 4 KiB: gather k = 4 data chunks (read-modify-write), then write 6 shards.
    let ec = tiny(|t| {
        t.replace("nodes = 3", "nodes = 6")
            .replace("replicated = 3", "erasure = { k = 4, m = 2 }")
    });
    assert_eq!(forks(&ec), vec![4, 6]);
}

#[test]
fn service_shapes_apply_to_devices_and_the_rest_separately() {
    let opts = CephSimOptions {
        device_service: ServiceShape::TwoMoment { scv: 4.0 },
        other_service: ServiceShape::Deterministic,
        ..CephSimOptions::default()
    };
    let cs = build_sim(&tiny(|t| t), &params(), &opts).unwrap();
    let data = cs.model.station_id("data_device").unwrap();
    let mut seen = (0, 0);
    crate::sim::model::for_each_visit(&cs.model.classes[0].route, 1.0, &mut |st, _, d| {
        if st == data {
            assert_eq!(d.scv(), 4.0);
            seen.0 += 1;
        } else {
            assert_eq!(d.scv(), 0.0);
            seen.1 += 1;
        }
    });
    // 3 device writes; client CPU, client tx, public rx, 3 OSD ops, cluster tx, 2 cluster
    // rx, software latency (the data-device latency delay is 0: write latency 20 µs = 1/50k).
    assert_eq!(seen, (3, 10));
    let bad = CephSimOptions {
        device_service: ServiceShape::TwoMoment { scv: -1.0 },
        ..CephSimOptions::default()
    };
    let e = build_sim(&tiny(|t| t), &params(), &bad).unwrap_err();
    assert!(e.to_string().contains("scv"), "{e}");
}

#[test]
fn with_population_changes_only_the_population() {
    let cs = build_sim(&tiny(|t| t), &params(), &CephSimOptions::default()).unwrap();
    let m = cs.with_population(17);
    assert_eq!(
        m.classes[0].arrivals,
        crate::sim::Arrivals::Closed {
            population: 17,
            think: Dist::deterministic(0.0)
        }
    );
    assert_eq!(m.classes[0].route, cs.model.classes[0].route);
}

#[test]
fn two_way_fork_of_exponential_devices_has_the_fork_join_mean() {
    // One write in flight (no queueing anywhere), size 2, 3 nodes × 24 = 72 devices of
    // 100 write IOPS whose spec latency equals 1/IOPS (no latency delay). With
    // write_amplification 2 a device write is one exponential service of mean
    // 1/μ = 2 × 10 ms; everything else is deterministic.
    let s = tiny(|t| {
        t.replace("replicated = 3", "replicated = 2")
            .replace("count = 2", "count = 24")
            .replace("write_4k_iops = 50000", "write_4k_iops = 100")
            .replace("write_latency = \"20us\"", "write_latency = \"10ms\"")
            .replace("images = 4", "images = 1")
    });
    let opts = CephSimOptions {
        device_service: ServiceShape::Exponential,
        other_service: ServiceShape::Deterministic,
        ..CephSimOptions::default()
    };
    let cs = build_sim(&s, &params(), &opts).unwrap();
    let net = &cs.network;
    let at = |name: &str| net.write[net.network.station_index(name).unwrap()];
    let mean = 2.0 * 10e-3;
    assert_relative_eq!(at("data_device").path_secs, mean);
    assert_eq!(at("data_device_latency").secs, 0.0);
    // Deterministic critical-path time outside the devices (from the network's path
    // demands), and C = the replica's head start before its device: cluster rx of one copy
    // plus one OSD write op (half of the 2 ops on the path).
    let fixed: f64 = net
        .network
        .stations
        .iter()
        .zip(&net.write)
        .filter(|(st, _)| st.name != "data_device")
        .map(|(_, d)| d.path_secs)
        .sum();
    let c = at("osd_cluster_rx").path_secs + at("osd_cpu").path_secs / 2.0;
    // Oracle. Primary device X1 and replica device X2 iid Exp(μ), the replica starting C
    // later: E[max(X1, C + X2)] = C + 1/μ + e^{−μC}/(2μ) (X1 − X2 is Laplace, P(X1 − X2 > t)
    // = ½e^{−μt}, so E[(X1 − X2 − C)⁺] = e^{−μC}/(2μ)); at C = 0 this is E[max of two iid
    // Exp(μ)] = 1/μ + 1/(2μ) = 1.5/μ. With probability q = 1/72 the replica picks the
    // primary's device (placement is independent after the fork's first visits) and waits
    // for it: E[max(X1, C) + X2] = C + e^{−μC}/μ + 1/μ.
    let q = 1.0 / 72.0;
    let e = (-c / mean).exp();
    let fork = (1.0 - q) * (c + mean + e * mean / 2.0) + q * (c + e * mean + mean);
    let oracle = fixed - c + fork;
    assert!(
        c < 0.02 * mean,
        "C = {c} is small, so the fork adds ≈ 0.5/μ"
    );
    let report = simulate(
        &cs.model,
        &SimOptions {
            seed: 7,
            relative_precision: 0.01,
            max_events: 40_000_000,
            ..SimOptions::default()
        },
        &crate::progress::NoProgress,
    )
    .unwrap();
    let r = &report.classes[0].response_time_secs;
    assert!(
        r.contains(oracle),
        "simulated {:?} vs fork-join oracle {oracle}",
        r
    );
    assert!(r.relative_half_width() < 0.011, "{r:?}");
    // Not the MVA path (one device write) nor two serial writes.
    assert!(r.mean > fixed + 1.4 * mean && r.mean < fixed + 1.6 * mean);
}

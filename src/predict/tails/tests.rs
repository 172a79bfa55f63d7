//! Simulated tails against the exact MVA prediction of the same scenario. Oracles: for
//! r = 1 and exponential service the simulation model and the MVA network are the same
//! product-form network, so exact MVA (`predict`) is the true mean; with r = 3 the
//! fork-join waits for the slowest of three replicas, which MVA's one-replica path
//! demand cannot exceed.

use super::*;
use crate::predict::{predict, sweep, PredictOptions, SweepSpec};
use crate::progress::NoProgress;
use crate::qn::ceph::tests::{params, tiny};

/// TINY (3 nodes × 2 devices, OSD CPU the bottleneck at 60k IOPS) with 32 I/Os in flight.
fn loaded(edit: impl Fn(String) -> String) -> Scenario {
    tiny(|t| edit(t.replace("iodepth = 1", "iodepth = 8")))
}

fn opts(seed: u64) -> TailOptions {
    TailOptions {
        sim: SimOptions {
            seed,
            ..SimOptions::default()
        },
        service: CephSimOptions::default(),
    }
}

#[test]
fn without_forks_the_simulation_agrees_with_exact_mva() {
    let s = loaded(|t| t.replace("replicated = 3", "replicated = 1"));
    let p = params();
    let mva = predict(&s, &p, &PredictOptions::default()).unwrap();
    assert_eq!(mva.solver.method, crate::solve::Method::ExactSingleClass);
    // `predict` takes the CPU stations' (here whole) real server counts by Seidmann's
    // decomposition; the simulator runs them as whole servers, whose exact solution is
    // the multi-server recursion: solve the same network with whole servers.
    let mut net = crate::qn::ceph::build(&s, &p).unwrap().network;
    for st in &mut net.stations {
        if st.fractional_servers == Some(f64::from(st.servers)) {
            st.fractional_servers = None;
        }
    }
    let exact = crate::solve::solve(&net, &crate::solve::SolveOptions::default()).unwrap();
    let (x, r) = (
        exact.classes[0].throughput_per_sec,
        exact.classes[0].response_time_secs,
    );
    assert!((x / mva.iops - 1.0).abs() < 0.05, "{x} vs {}", mva.iops);
    let t = predict_tails(&s, &p, &opts(11), &NoProgress).unwrap();
    assert_eq!(t.stop_reason, StopReason::PrecisionReached);
    assert!(
        t.all.iops.contains(x),
        "IOPS: simulated {:?}, exact MVA {x}",
        t.all.iops,
    );
    assert!(
        t.all.latency_mean_secs.contains(r),
        "mean: simulated {:?}, exact MVA {r}",
        t.all.latency_mean_secs,
    );
    assert!(t.read.is_none() && t.write.is_some());
}

#[test]
fn three_replica_fork_join_is_slower_than_the_one_replica_path_and_has_a_tail() {
    let s = loaded(|t| t);
    let p = params();
    let mva = predict(&s, &p, &PredictOptions::default()).unwrap();
    let t = predict_tails(&s, &p, &opts(12), &NoProgress).unwrap();
    let w = t.write.as_ref().unwrap();
    let mva_write = mva.latency_write_mean_secs.unwrap();
    let low = w.latency_mean_secs.mean - w.latency_mean_secs.half_width.unwrap();
    assert!(
        low >= mva_write,
        "simulated write mean {:?} vs MVA {mva_write}",
        w.latency_mean_secs
    );
    assert!(w.latency_p99_secs.mean > w.latency_mean_secs.mean);
    assert!(t.all.latency_p999_secs.mean > t.all.latency_p99_secs.mean);
    assert!(t.all.latency_p95_secs.mean > t.all.latency_p50_secs.mean);
    let r = mva.with_tails(t.clone());
    assert_eq!(r.latency_p99_secs, Some(t.all.latency_p99_secs.mean));
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["tails"]["latency_p999_secs"]["half_width"].is_number());
    assert!(json["tails"]["iops"]["mean"].is_number());
}

#[test]
fn a_mix_reports_reads_and_writes_whose_rates_add_up() {
    let s = loaded(|t| t.replace("\"randwrite\"", "\"randrw\"\nread_percent = 70"));
    let mut o = opts(13);
    o.sim.relative_precision = 0.05;
    let t = predict_tails(&s, &params(), &o, &NoProgress).unwrap();
    let (r, w) = (t.read.unwrap(), t.write.unwrap());
    // Every I/O is a read or a write: the rates add up in every replication, so their
    // means do (to rounding).
    let sum = r.iops.mean + w.iops.mean;
    assert!(
        (sum - t.all.iops.mean).abs() < 1e-9 * sum,
        "{sum} vs {:?}",
        t.all.iops
    );
    // 70 % reads: the read share of the simulated rate is within its noise of 0.7.
    let share = r.iops.mean / t.all.iops.mean;
    assert!((share - 0.7).abs() < 0.01, "{share}");
    // Reads avoid the replica fork: faster than writes.
    assert!(r.latency_mean_secs.mean < w.latency_mean_secs.mean);
}

#[test]
fn no_room_for_a_replication_is_an_error_with_a_remedy() {
    let mut o = opts(1);
    o.sim.max_events = 1_000;
    let e = predict_tails(&loaded(|t| t), &params(), &o, &NoProgress).unwrap_err();
    assert!(e.to_string().contains("--max-events"), "{e}");
}

/// Session 55's audit: a `design` stopped during its p99 simulation said "raise
/// --max-events (or leave out --tails or --percentile…)", flags `design` does not have. A
/// stopped run says it was stopped and names no flag.
#[test]
fn a_stopped_simulation_says_so_and_names_no_flag() {
    let stop = crate::progress::CancelToken::new();
    stop.cancel();
    let e = predict_tails(&loaded(|t| t), &params(), &opts(1), &stop).unwrap_err();
    assert!(matches!(e, PredictError::TailsCancelled), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("stopped") && msg.contains("fix:") && !msg.contains("--"),
        "{msg}"
    );
}

#[test]
fn a_sweep_with_tails_takes_the_knee_by_the_simulated_percentile() {
    let mut o = opts(3);
    o.sim.relative_precision = 0.05;
    o.sim.samples_per_replication = 5_000;
    let spec = SweepSpec::parse_vary("iodepth=1,4,16", Some(1e-3))
        .unwrap()
        .with_tails(99.0, o.clone())
        .unwrap();
    let s = tiny(|t| t);
    let r = sweep(&s, &params(), &spec, &NoProgress).unwrap();
    assert!(r.complete);
    let p99: Vec<f64> = r
        .points
        .iter()
        .map(|p| p.tails.as_ref().unwrap().all.latency_p99_secs.mean)
        .collect();
    // Latency grows with the load (4 → 64 I/Os in flight on a 60k-IOPS CPU bottleneck).
    assert!(p99.windows(2).all(|w| w[0] < w[1]), "{p99:?}");
    let k = r.knee.unwrap();
    assert_eq!(k.percentile, Some(99.0));
    // Simulated IOPS grow with the load too, so the knee (highest IOPS within the target)
    // is the last point whose simulated p99 meets 1 ms.
    let iops: Vec<f64> = r
        .points
        .iter()
        .map(|p| p.tails.as_ref().unwrap().all.iops.mean)
        .collect();
    assert!(iops.windows(2).all(|w| w[0] < w[1]), "{iops:?}");
    let want = r.points.iter().zip(&p99).rfind(|(_, l)| **l <= 1e-3);
    assert_eq!(k.value, want.map(|(p, _)| p.value), "{p99:?}");
    if let Some((pt, &l)) = want {
        assert_eq!(k.latency_percentile_secs, Some(l));
        assert_eq!(k.iops, Some(pt.tails.as_ref().unwrap().all.iops.mean));
    }
    // Common random numbers: the point at iodepth=4 is the same simulation as a
    // one-point sweep at 4 with the same seed.
    let one = SweepSpec::parse_vary("iodepth=4", None)
        .unwrap()
        .with_tails(99.0, o)
        .unwrap();
    let r1 = sweep(&s, &params(), &one, &NoProgress).unwrap();
    assert_eq!(r1.points[0].tails, r.points[1].tails);
    let e = SweepSpec::parse_vary("iodepth=4", None)
        .unwrap()
        .with_tails(98.0, TailOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("99.9"), "{e}");
}

#[test]
fn batching_runs_at_the_mva_speed_by_default_and_dynamically_when_asked() {
    // r = 1 (no forks), exponential service, a batching OSD CPU (`batched_params`: a lone
    // write op 600 µs, 400 µs of it shared by the batch). Oracles: (1) mean-field: the OSD
    // CPU's visits are scaled by MVA's demand factor at this population (read back from
    // the MVA solution) and the model has no dynamic batching left; the simulation is then
    // a product-form network at that speed, which MVA's recursion (whose factor varies
    // along n = 1..N) matches up to that variation: measured +2.6 % (IOPS, CI ±0.4 %; the
    // simulation runs at the full-population speed all the time), asserted within 5 %;
    // (2) dynamic: the station batches in the simulation.
    use crate::qn::ceph::tests::batched_params;
    use crate::qn::ceph::{build_sim, SimBatching};
    let s = loaded(|t| t.replace("replicated = 3", "replicated = 1"));
    let p = batched_params();
    let mva = predict(&s, &p, &PredictOptions::default()).unwrap();
    let cs = build_sim(&s, &p, &CephSimOptions::default()).unwrap();
    let f = cs.osd_cpu_factor.expect("mean-field batching");
    assert!(f < 0.9 && f > 0.3, "{f}");
    let cpu = cs.model.station_id("osd_cpu").unwrap();
    assert!(cs.model.stations[cpu.0].batching.is_none());
    // MVA's OSD CPU utilisation equals X · D · f / (servers · copies).
    let st = &cs.network.network.stations[cpu.0];
    let u = mva.iops * st.demands[0].secs * f / f64::from(st.servers * st.multiplicity);
    assert!(
        (u - mva.utilization["osd_cpu"]).abs() < 1e-9,
        "{u} vs {:?}",
        mva.utilization
    );
    let t = predict_tails(&s, &p, &opts(5), &NoProgress).unwrap();
    let gap = t.all.iops.mean / mva.iops - 1.0;
    assert!(
        gap.abs() < 0.05,
        "mean-field simulation {:?} vs MVA {}",
        t.all.iops,
        mva.iops
    );
    // A sweep point at another depth takes MVA's factor at that depth: at one I/O in flight
    // nothing queues, so no batch forms (factor 1: the unscaled model).
    let one = cs.with_population(1);
    let unscaled = build_sim(
        &s,
        &p,
        &CephSimOptions {
            batching: SimBatching::Dynamic,
            ..CephSimOptions::default()
        },
    )
    .unwrap();
    assert!(unscaled.osd_cpu_factor.is_none());
    assert!(unscaled.model.stations[cpu.0].batching.is_some());
    let mut dynamic_one = unscaled.with_population(1);
    // The OSD CPU and the data device's group commit batch; at one I/O in flight neither
    // forms a batch.
    let batched: Vec<&str> = dynamic_one
        .stations
        .iter()
        .filter(|st| st.batching.is_some())
        .map(|st| st.name.as_str())
        .collect();
    assert_eq!(batched, ["osd_cpu", "data_device"]);
    for st in &mut dynamic_one.stations {
        st.batching = None;
    }
    assert_eq!(one, dynamic_one);
}

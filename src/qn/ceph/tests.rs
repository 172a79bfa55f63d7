//! Hand-computed demands for a tiny cluster. Every expected number is derived in the
//! comment next to it from the scenario below and the parameters set in `params()`.

use super::*;
use crate::spec::{parse_scenario, Catalogue};
use approx::assert_relative_eq;

/// 3 nodes × 2 devices, 4-core 2 GHz x86_64 nodes, 10 Gb/s public + cluster, 1 client.
pub(crate) const TINY: &str = r#"
schema_version = 1
name = "tiny"
[cluster]
nodes = 3
ceph_release = "19.2.0"
[cluster.node]
cpu = { arch = "x86_64", cores = 4, threads_per_core = 1, ghz = 2.0 }
[cluster.node.data_devices]
count = 2
model = { kind = "nvme", capacity = "1TiB", read_4k_iops = 100000, write_4k_iops = 50000, read_bytes_per_sec = 1000000000, write_bytes_per_sec = 1000000000, read_latency = "100us", write_latency = "20us" }
[cluster.node.network]
public = 10
cluster = 10
[pool]
replicated = 3
[clients]
nodes = 1
cpu = { arch = "x86_64", cores = 8, threads_per_core = 1, ghz = 2.0 }
nic = 10
[workload]
images = 4
iodepth = 1
block_size = "4k"
pattern = "randwrite"
"#;

pub(crate) fn tiny(edit: impl Fn(String) -> String) -> Scenario {
    parse_scenario(&edit(TINY.to_string()), "tiny", &Catalogue::builtin()).unwrap()
}

/// A scenario of the public corpus (`calibration-data/scenarios/<file>`), edited.
fn corpus_scenario(file: &str, edit: impl Fn(String) -> String) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("calibration-data/scenarios")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_scenario(&edit(text), file, &Catalogue::builtin()).unwrap()
}

/// Predicted IOPS with default options.
fn predicted_iops(s: &Scenario, p: &ModelParams) -> f64 {
    crate::predict::predict(s, p, &Default::default())
        .unwrap()
        .iops
}

/// Round parameter values so that the expected demands are easy to compute by hand.
/// The prior with round numbers, and without write batching or the release-dependent
/// write factors: the hand-computed oracles of these tests (and of `predict`'s) are for
/// fixed per-op costs; batching, messenger coalescing and the factors have their own tests
/// (`write_batching_*`, `messenger_coalescing_*`, `*_rocksdb_*`, `bluefs_*`).
pub(crate) fn params() -> ModelParams {
    let mut p = ModelParams::prior();
    p.param.remove(names::OSD_CPU_WRITE_BATCH);
    p.param.remove(names::MSG_COALESCE_SHARE);
    p.param.remove(names::ALLOC_IN_ROCKSDB_WRITE);
    p.param.remove(names::BLUEFS_DIRECT_BATCH);
    // The per-OSD core curve has its own test; these oracles count whole cores.
    p.param.remove(names::OSD_CORE_SCALE);
    // So has the client processes' thread cap (`client_threads_cap_*`).
    p.param.remove(names::CLIENT_THREADS);
    // And the lone-op path share: here every OSD op is wholly on its I/O's path.
    p.param.remove(names::OSD_CPU_PATH_SHARE);
    // And the busy cores' contention (`busy_cores_contend_*`): whole cores serve in full.
    p.param.remove(names::CPU_CONTENTION);
    // And the OSDs' turns on time-shared cores (`osds_beyond_*`): every OSD runs at once.
    p.param.remove(names::OSD_BUSY_THREADS);
    // And the disks' command queueing (`disks_rated_at_one_io_*`): a disk serves at its
    // stated rate at every depth.
    p.param.remove(names::HDD_REORDER_SHARE);
    for (n, v) in [
        (names::OSD_CPU_READ, 2e-4),  // 100 µs on a 2 GHz core
        (names::OSD_CPU_WRITE, 4e-4), // 200 µs on a 2 GHz core
        (names::CPU_PER_BYTE, 0.0),
        (names::CLIENT_CPU, 1e-4), // 50 µs on a 2 GHz core
        (names::WRITE_AMP, 2.0),
        (names::WAL_SHARE, 0.5),
        (names::NET_EFF, 1.0),
        (names::FIXED_READ, 1e-4),
        (names::FIXED_WRITE, 2e-4),
    ] {
        p.set(n, v).unwrap();
    }
    p
}

/// Adds a parameter to `p` as the shipped prior has it (value, bounds and source).
fn with_prior(p: &mut ModelParams, name: &str) {
    p.param
        .insert(name.into(), ModelParams::prior().param[name].clone());
}

fn station<'a>(net: &'a CephNetwork, name: &str) -> &'a Station {
    &net.network.stations[net.network.station_index(name).unwrap()]
}

fn at<'a>(net: &'a CephNetwork, v: &'a [Demand], name: &str) -> &'a Demand {
    &v[net.network.station_index(name).unwrap()]
}

#[test]
fn replicated_write_puts_r_minus_1_copies_on_the_cluster_network() {
    let net = build(&tiny(|t| t), &params()).unwrap();
    let w = &net.write;
    // 4096 B × 8 / 10 Gb/s = 3.2768 µs per copy; r = 3 → 2 copies leave the primary.
    let copy = 4096.0 * 8.0 / 10e9;
    assert_relative_eq!(at(&net, w, "osd_cluster_tx").secs, 2.0 * copy);
    assert_relative_eq!(at(&net, w, "osd_cluster_tx").path_secs, 2.0 * copy);
    // Replicas receive in parallel: both copies load the rx side, one is on the path.
    assert_relative_eq!(at(&net, w, "osd_cluster_rx").secs, 2.0 * copy);
    assert_relative_eq!(at(&net, w, "osd_cluster_rx").path_secs, copy);
    // Client → primary: one copy on the public network and the client NIC.
    assert_relative_eq!(at(&net, w, "osd_public_rx").secs, copy);
    assert_relative_eq!(at(&net, w, "client_nic_tx").secs, copy);
    assert_eq!(at(&net, w, "client_nic_rx").secs, 0.0);
}

#[test]
fn only_the_path_share_of_an_osd_op_is_on_its_path() {
    // Oracle (hand count, as `replicated_write_cpu_and_device_demands`): a 3× write is 3
    // OSD ops of 200 µs (600 µs of demand), of which the primary's and one replica's are
    // on the path (400 µs); a read is one op of 100 µs. With `osd_cpu_path_share` = 0.75
    // the demands stay and the paths are 0.75 × 400 = 300 µs and 0.75 × 100 = 75 µs; no
    // other station moves.
    let whole = build(&tiny(|t| t), &params()).unwrap();
    let mut p = params();
    with_prior(&mut p, names::OSD_CPU_PATH_SHARE);
    p.set(names::OSD_CPU_PATH_SHARE, 0.75).unwrap();
    let net = build(&tiny(|t| t), &p).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        600e-6,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").path_secs,
        300e-6,
        epsilon = 1e-12
    );
    assert_relative_eq!(at(&net, &net.read, "osd_cpu").secs, 100e-6, epsilon = 1e-12);
    assert_relative_eq!(
        at(&net, &net.read, "osd_cpu").path_secs,
        75e-6,
        epsilon = 1e-12
    );
    for (a, b) in whole.network.stations.iter().zip(&net.network.stations) {
        if a.name != "osd_cpu" {
            assert_eq!(a.demands, b.demands, "{}", a.name);
        }
    }
    // Throughput at saturation is the demand's: the bound stays, the lone latency falls.
    let solve = |n: &CephNetwork| {
        crate::solve::solve(&n.network, &crate::solve::SolveOptions::default())
            .unwrap()
            .classes[0]
            .response_time_secs
    };
    assert!(solve(&net) < solve(&whole));
}

#[test]
fn replicated_write_cpu_and_device_demands() {
    let net = build(&tiny(|t| t), &params()).unwrap();
    let w = &net.write;
    // 3 OSD write ops × 4e-4 Gcycles / 2 GHz = 3 × 200 µs; path primary + one replica.
    assert_relative_eq!(at(&net, w, "osd_cpu").secs, 600e-6, epsilon = 1e-12);
    assert_relative_eq!(at(&net, w, "osd_cpu").path_secs, 400e-6, epsilon = 1e-12);
    // Each replica: write_amplification 2 device ops × max(1/50,000, 4096/1e9) = 2 × 20 µs.
    assert_relative_eq!(
        at(&net, w, "data_device").secs,
        3.0 * 40e-6,
        epsilon = 1e-12
    );
    assert_relative_eq!(at(&net, w, "data_device").path_secs, 40e-6, epsilon = 1e-12);
    // Spec write latency 20 µs minus the 20 µs service time leaves no extra delay.
    assert_relative_eq!(
        at(&net, w, "data_device_latency").path_secs,
        0.0,
        epsilon = 1e-15
    );
    // Client CPU: 1e-4 Gcycles / 2 GHz = 50 µs.
    assert_relative_eq!(at(&net, w, "client_cpu").secs, 50e-6, epsilon = 1e-12);
    assert_relative_eq!(
        at(&net, w, "software_latency").secs,
        200e-6,
        epsilon = 1e-12
    );
}

#[test]
fn read_demands_touch_one_osd() {
    let net = build(&tiny(|t| t), &params()).unwrap();
    let r = &net.read;
    // One read op: 2e-4 / 2 GHz = 100 µs.
    assert_relative_eq!(at(&net, r, "osd_cpu").secs, 100e-6, epsilon = 1e-12);
    // Device: service 1/100,000 = 10 µs, the rest of the 100 µs spec latency is delay.
    assert_relative_eq!(at(&net, r, "data_device").secs, 10e-6, epsilon = 1e-12);
    assert_relative_eq!(
        at(&net, r, "data_device_latency").secs,
        90e-6,
        epsilon = 1e-12
    );
    assert_eq!(at(&net, r, "osd_cluster_tx").secs, 0.0);
    assert_relative_eq!(at(&net, r, "osd_public_tx").secs, 4096.0 * 8.0 / 10e9);
}

#[test]
fn mix_is_the_weighted_average_and_population_is_images_jobs_iodepth() {
    let s = tiny(|t| {
        t.replace(
            "pattern = \"randwrite\"",
            "pattern = \"randrw\"\nread_percent = 70",
        )
        .replace("iodepth = 1", "iodepth = 8\njobs_per_image = 2")
    });
    let net = build(&s, &params()).unwrap();
    assert_eq!(net.network.classes[0].population, 4 * 2 * 8);
    for (i, st) in net.network.stations.iter().enumerate() {
        let want = 0.7 * net.read[i].secs + 0.3 * net.write[i].secs;
        assert_relative_eq!(st.demands[0].secs, want, epsilon = 1e-15);
    }
}

#[test]
fn shared_network_when_no_cluster_network() {
    let s = tiny(|t| t.replace("cluster = 10\n", ""));
    let net = build(&s, &params()).unwrap();
    assert!(net.network.station_index("osd_cluster_tx").is_none());
    // Public tx now carries the 2 replica copies.
    let copy = 4096.0 * 8.0 / 10e9;
    assert_relative_eq!(at(&net, &net.write, "osd_public_tx").secs, 2.0 * copy);
    assert_relative_eq!(at(&net, &net.write, "osd_public_rx").secs, 3.0 * copy);
}

#[test]
fn erasure_write_spreads_chunks_and_small_writes_read_modify_write() {
    // 4+2 on 6 nodes; 16 KiB = exactly one stripe (4 × 4 KiB): no RMW.
    let ec = |bs: &str| {
        tiny(|t| {
            t.replace("nodes = 3", "nodes = 6")
                .replace("replicated = 3", "erasure = { k = 4, m = 2 }")
                .replace("\"4k\"", bs)
        })
    };
    let net = build(&ec("\"16k\""), &params()).unwrap();
    // 6 chunk writes of 4 KiB; the primary sends 5 of them: 5 × 3.2768 µs.
    let copy = 4096.0 * 8.0 / 10e9;
    assert_relative_eq!(at(&net, &net.write, "osd_cluster_tx").secs, 5.0 * copy);
    // 6 shard writes × 2 device ops × 20 µs.
    assert_relative_eq!(
        at(&net, &net.write, "data_device").secs,
        6.0 * 40e-6,
        epsilon = 1e-12
    );
    // Full-stripe read touches 4 shards: 4 device reads of 4 KiB × 10 µs.
    assert_relative_eq!(
        at(&net, &net.read, "data_device").secs,
        4.0 * 10e-6,
        epsilon = 1e-12
    );
    // 4 KiB write is a partial stripe: adds k = 4 device reads of 4 KiB (4 × 10 µs).
    let small = build(&ec("\"4k\""), &params()).unwrap();
    assert_relative_eq!(
        at(&small, &small.write, "data_device").secs,
        6.0 * 40e-6 + 4.0 * 10e-6,
        epsilon = 1e-12
    );
}

#[test]
fn a_partial_stripe_write_reads_only_its_head_and_tail_stripes() {
    // Oracle: `ECTransaction::get_write_plan` (ceph/ceph, classic EC) adds to `to_read`
    // the stripe holding the write's start when the start is not stripe aligned and the
    // stripe holding its end when the end is not, nothing between them. 4+2 with 4 KiB
    // chunks: a stripe is 16 KiB. A 40 KiB write covers 3 stripes (aligned start): it
    // writes 6 chunks of 3 × 4 KiB and reads the 4 data chunks of 2 stripes, 8 KiB each
    // (not 12 KiB); a 4 KiB write reads one stripe's; a whole 32 KiB reads none.
    let plan_of = |bs: &str| {
        let s = tiny(|t| {
            t.replace("nodes = 3", "nodes = 6")
                .replace("replicated = 3", "erasure = { k = 4, m = 2 }")
                .replace("\"4k\"", bs)
        });
        let p = params();
        let plan = Plan::new(&s, &p, Notes::Write).unwrap();
        plan.ec_write(4, 2)
    };
    let (rmw, write) = plan_of("\"40k\"");
    let rmw = rmw.expect("a partial-stripe write reads");
    assert_eq!((rmw.shards, rmw.bytes, rmw.remote), (4.0, 8192.0, 3.0));
    assert_eq!((write.shards, write.bytes), (6.0, 12_288.0));
    let (rmw, write) = plan_of("\"4k\"");
    assert_eq!(rmw.map(|r| (r.shards, r.bytes)), Some((4.0, 4096.0)));
    assert_eq!((write.shards, write.bytes), (6.0, 4096.0));
    let (rmw, write) = plan_of("\"32k\"");
    assert_eq!(rmw, None);
    assert_eq!((write.shards, write.bytes), (6.0, 8192.0));
}

#[test]
fn the_primary_pays_cpu_per_byte_for_the_data_it_forwards_and_gathers() {
    // Oracle (hand count, module doc "Forwarded bytes"): 1 cycle per byte on the tiny
    // nodes' 2 GHz cores is 0.5 ns a byte.
    let mut p = params();
    p.set(names::CPU_PER_BYTE, 1e-9).unwrap();
    let ns = 0.5e-9;
    // 3× replicated 64 KiB write: 3 OSD write ops of 200 µs + 65,536 B each (232.768 µs),
    // and the primary sends the 2 replicas their copies (2 × 32.768 µs): 764.064 µs; on the
    // path the primary's and one replica's ops and both sends: 531.072 µs. A read is one
    // op on the primary and forwards nothing: 100 µs + 32.768 µs.
    let rep = build(&tiny(|t| t.replace("\"4k\"", "\"64k\"")), &p).unwrap();
    let op_w = 200e-6 + 65_536.0 * ns;
    assert_relative_eq!(
        at(&rep, &rep.write, "osd_cpu").secs,
        3.0 * op_w + 2.0 * 65_536.0 * ns,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&rep, &rep.write, "osd_cpu").path_secs,
        2.0 * op_w + 2.0 * 65_536.0 * ns,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&rep, &rep.read, "osd_cpu").secs,
        100e-6 + 65_536.0 * ns,
        epsilon = 1e-12
    );
    // EC 4+2 (Squid: whole-stripe reads), 16 KiB = one stripe of 4 chunks of 4 KiB.
    let ec = build(
        &tiny(|t| {
            t.replace("nodes = 3", "nodes = 6")
                .replace("replicated = 3", "erasure = { k = 4, m = 2 }")
                .replace("\"4k\"", "\"16k\"")
        }),
        &p,
    )
    .unwrap();
    let chunk = 4096.0 * ns;
    // Read: the primary's op and 3 sub-reads (4 × 100 µs, 4 chunks' bytes), and the primary
    // receives the 3 remote chunks and sends them on to the client: 400 µs + 10 × 2.048 µs
    // = 420.48 µs; path: the primary's op and one sub-read, and the gathered chunks twice:
    // 2 × 102.048 + 12.288 µs.
    assert_relative_eq!(
        at(&ec, &ec.read, "osd_cpu").secs,
        4.0 * 100e-6 + 10.0 * chunk,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&ec, &ec.read, "osd_cpu").path_secs,
        2.0 * (100e-6 + chunk) + 6.0 * chunk,
        epsilon = 1e-12
    );
    // Write (a whole stripe, no read-modify-write): 6 shard writes of 200 µs + a chunk's
    // bytes, the encoding of 16 KiB × 6/4 = 24,576 B (12.288 µs), and the primary sends the
    // 5 other shards their chunks (5 × 2.048 µs): 1,234.816 µs; path: 2 shard ops, the
    // encoding and the sends.
    let shard = 200e-6 + chunk;
    let encode = 24_576.0 * ns;
    assert_relative_eq!(
        at(&ec, &ec.write, "osd_cpu").secs,
        6.0 * shard + encode + 5.0 * chunk,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&ec, &ec.write, "osd_cpu").path_secs,
        2.0 * shard + encode + 5.0 * chunk,
        epsilon = 1e-12
    );
}

#[test]
fn wal_device_takes_its_share_of_device_writes() {
    let s = tiny(|t| {
        t.replace(
            "[cluster.node.network]",
            "[cluster.node.wal_device]\ncount = 1\nmodel = { kind = \"optane\", capacity = \"375GiB\", read_4k_iops = 500000, write_4k_iops = 500000, read_bytes_per_sec = 4000000000, write_bytes_per_sec = 4000000000, read_latency = \"10us\", write_latency = \"10us\" }\n[cluster.node.network]",
        )
    });
    let net = build(&s, &params()).unwrap();
    // wal_share 0.5 of 2 device ops: 1 op on data (20 µs) and 1 on WAL (max(1/500,000, 4096/4e9) = 2 µs).
    assert_relative_eq!(
        at(&net, &net.write, "data_device").path_secs,
        20e-6,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&net, &net.write, "wal_device").path_secs,
        2e-6,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&net, &net.write, "wal_device").secs,
        6e-6,
        epsilon = 1e-12
    );
}

#[test]
fn colocated_fio_on_the_osd_cores_keeps_the_per_osd_curve() {
    // C = 4.7 and the tiny node's 4 cores for 2 OSDs: the OSDs get 2·4.7·(1 − e^(−2/4.7))
    // = 3.25783 effective cores, 4 servers at fractional count 3.25783 (see the next test).
    // With fio on the same cores (co-located, no client CPU) the station also runs fio's
    // work and keeps the same servers (qn::ceph module doc: exempting it let a co-located
    // node absorb far more than measured); a read's demand there is one read op 100 µs +
    // the client's 50 µs, both on the station's cores.
    let mut p = params();
    with_prior(&mut p, names::OSD_CORE_SCALE);
    let s = tiny(|t| {
        t.replace(
            "[clients]\nnodes = 1\ncpu = { arch = \"x86_64\", cores = 8, threads_per_core = 1, ghz = 2.0 }\nnic = 10",
            "[clients]\nnodes = 3\ncolocated = true",
        )
        .replace("\"randwrite\"", "\"randread\"")
    });
    let net = build(&s, &p).unwrap();
    let i = net.network.station_index("osd_cpu").unwrap();
    assert_eq!(net.network.stations[i].servers, 4);
    assert_relative_eq!(
        net.network.stations[i].fractional_servers.unwrap(),
        2.0 * 4.7 * (1.0 - (-2.0_f64 / 4.7).exp()),
        max_relative = 1e-12
    );
    assert_relative_eq!(
        at(&net, &net.read, "osd_cpu").secs,
        150e-6,
        max_relative = 1e-9
    );
    let net = build(&tiny(|t| t.replace("\"randwrite\"", "\"randread\"")), &p).unwrap();
    let i = net.network.station_index("osd_cpu").unwrap();
    assert_eq!(net.network.stations[i].servers, 4);
}

#[test]
fn an_osd_uses_cores_with_diminishing_returns() {
    // C = 4.7 (the prior, fitted to the single-OSD series of ceph.io's "Ceph OSD CPU
    // scaling"). The tiny node: 4 cores, 2 OSDs, so n = 2 cores per OSD, each using
    // 4.7·(1 − e^(−2/4.7)) = 1.62892 cores: 3.25783 effective per node: a fractional
    // 3.25783 servers (4 whole ones for the simulator), and a lone op still takes its
    // unscaled demand.
    let mut p = params();
    with_prior(&mut p, names::OSD_CORE_SCALE);
    let eff = 2.0 * 4.7 * (1.0 - (-2.0_f64 / 4.7).exp());
    assert_relative_eq!(eff, 3.257_83, max_relative = 1e-5);
    let net = build(&tiny(|t| t.replace("\"randwrite\"", "\"randread\"")), &p).unwrap();
    let i = net.network.station_index("osd_cpu").unwrap();
    assert_eq!(net.network.stations[i].servers, 4);
    assert_relative_eq!(
        net.network.stations[i].fractional_servers.unwrap(),
        eff,
        max_relative = 1e-12
    );
    // One read op: 100 µs on a 2 GHz core; the capacity is 3.25783 / 100 µs per copy.
    assert_relative_eq!(
        at(&net, &net.read, "osd_cpu").secs,
        100e-6,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        net.network.stations[i].capacity_per_sec(0),
        eff / 100e-6 * f64::from(net.network.stations[i].multiplicity),
        max_relative = 1e-9
    );
    // The ceph.io post's single OSD reads 132k 4k IOPS at 16 cores and 46.5k at 2 (2.84×):
    // the curve gives 2.79× the cores.
    let use_of = |n: f64| 4.7 * (1.0 - (-n / 4.7_f64).exp());
    assert_relative_eq!(use_of(16.0) / use_of(2.0), 2.79, max_relative = 0.01);
    assert_relative_eq!(
        use_of(16.0) / use_of(2.0),
        132.0 / 46.5,
        max_relative = 0.02
    );
}

#[test]
fn writes_spread_over_more_cores_per_osd_than_reads() {
    // ceph.io 2022 "Ceph OSD CPU scaling", its single OSD: reads gain 2.84× from 2 to 16
    // cores, writes 4.43× (C = 4.7 and 10.9 fitted to the two series). The tiny node, 4
    // cores for 2 OSDs (n = 2): writes 2·10.9·(1 − e^(−2/10.9)) = 3.65448 effective cores,
    // a 70/30 mix the blended C = 0.7·4.7 + 0.3·10.9 = 6.56, so 2·6.56·(1 − e^(−2/6.56)) =
    // 3.44776; reads keep 3.25783 (the test above).
    let mut p = params();
    with_prior(&mut p, names::OSD_CORE_SCALE);
    with_prior(&mut p, names::OSD_CORE_SCALE_WRITE);
    assert_eq!(p.get(names::OSD_CORE_SCALE_WRITE), Some(10.9));
    let servers_under = |s: &Scenario, p: &ModelParams| {
        let net = build(s, p).unwrap();
        let i = net.network.station_index("osd_cpu").unwrap();
        net.network.stations[i].fractional_servers.unwrap()
    };
    let servers = |s: &Scenario| servers_under(s, &p);
    let write = 2.0 * 10.9 * (1.0 - (-2.0_f64 / 10.9).exp());
    assert_relative_eq!(write, 3.654_48, max_relative = 1e-5);
    assert_relative_eq!(servers(&tiny(|t| t)), write, max_relative = 1e-12);
    let mix = 2.0 * 6.56 * (1.0 - (-2.0_f64 / 6.56).exp());
    assert_relative_eq!(mix, 3.447_76, max_relative = 1e-5);
    let s = tiny(|t| t.replace("\"randwrite\"", "\"randrw\"\nread_percent = 70"));
    assert_relative_eq!(servers(&s), mix, max_relative = 1e-12);
    let read = 2.0 * 4.7 * (1.0 - (-2.0_f64 / 4.7).exp());
    let s = tiny(|t| t.replace("\"randwrite\"", "\"randread\""));
    assert_relative_eq!(servers(&s), read, max_relative = 1e-12);
    // The single OSD's larger write gain from 2 to 16 cores: the curve gives 4.59× the
    // cores used for writes (measured 53.2k / 12.0k = 4.43× the IOPS) against 2.79× for
    // reads.
    let use_of = |n: f64, c: f64| c * (1.0 - (-n / c).exp());
    assert_relative_eq!(
        use_of(16.0, 10.9) / use_of(2.0, 10.9),
        4.59,
        max_relative = 1e-3
    );
    assert_relative_eq!(
        use_of(16.0, 10.9) / use_of(2.0, 10.9),
        53.2 / 12.0,
        max_relative = 0.04
    );
    // A model without the write scale gives writes the read curve.
    p.param.remove(names::OSD_CORE_SCALE_WRITE);
    assert_relative_eq!(servers_under(&tiny(|t| t), &p), read, max_relative = 1e-12);
}

#[test]
fn missing_parameter_is_named() {
    let mut p = params();
    p.param.remove(names::WRITE_AMP);
    let e = build(&tiny(|t| t), &p).unwrap_err();
    assert!(e.to_string().contains("write_amplification"), "{e}");
}

/// [`params`] with a write batch cost of 8e-4 Gcycles (400 µs on a 2 GHz core) and
/// batches of at most 16.
pub(crate) fn batched_params() -> ModelParams {
    let mut p = ModelParams::prior();
    let base = params();
    for name in base.names() {
        p.set(&name, base.get(&name).unwrap()).unwrap();
    }
    p.param.remove(names::OSD_CORE_SCALE);
    // Messenger coalescing has its own tests (`messenger_coalescing_*`), and so has the
    // lone-op path share.
    p.param.remove(names::MSG_COALESCE_SHARE);
    p.param.remove(names::OSD_CPU_PATH_SHARE);
    // And the disks' command queueing (`disks_rated_at_one_io_*`).
    p.param.remove(names::HDD_REORDER_SHARE);
    // So has the busy cores' contention (`busy_cores_contend_*`).
    p.param.remove(names::CPU_CONTENTION);
    p.set(names::OSD_CPU_WRITE_BATCH, 8e-4).unwrap();
    p.set(names::WRITE_MAX_BATCH, 16.0).unwrap();
    // One write per batch per queued write, so the oracles count batches by hand.
    p.set(names::WRITE_BATCH_SCALE, 1.0).unwrap();
    p
}

#[test]
fn write_batching_puts_the_batch_cost_on_a_lone_write_and_shares_it() {
    // TINY randwrite, r = 3, 2 OSDs per node. A lone write op costs 4e-4 + 8e-4 Gcycles =
    // 600 µs at 2 GHz; 3 ops → 1,800 µs demand, path 2 ops = 1,200 µs. The batch cost's
    // share of the demand: 8/12 = 2/3; all of the station's work is writes (w = 1), so a
    // batch member is 2 OSDs / 1 = 2 jobs at a node's CPU.
    let net = build(&tiny(|t| t), &batched_params()).unwrap();
    let w = &net.write;
    assert_relative_eq!(at(&net, w, "osd_cpu").secs, 1800e-6, epsilon = 1e-12);
    assert_relative_eq!(at(&net, w, "osd_cpu").path_secs, 1200e-6, epsilon = 1e-12);
    let cpu = &net.network.stations[net.network.station_index("osd_cpu").unwrap()];
    let b = cpu.batching.expect("writes batch");
    assert_relative_eq!(b.share, 2.0 / 3.0, epsilon = 1e-12);
    assert_relative_eq!(b.jobs_per_member, 2.0, epsilon = 1e-12);
    assert_eq!(b.max_batch, 16.0);
    // With 20 jobs at a node CPU: 10 writes per OSD, an op costs 4e-4 + 8e-4/10 = 4.8e-4
    // Gcycles, 0.4 of a lone op: factor 1 − 2/3 + (2/3)/10 = 0.4.
    assert_relative_eq!(b.demand_factor(20.0), 0.4, epsilon = 1e-12);
    // Batch size scale k = 0.5: half a write per batch per queued write, so a member is
    // 2 OSDs / (0.5 · 1) = 4 jobs and 20 jobs make batches of 5; the rest is unchanged.
    let mut half = batched_params();
    half.set(names::WRITE_BATCH_SCALE, 0.5).unwrap();
    let net_half = build(&tiny(|t| t), &half).unwrap();
    let bh = net_half.network.stations[net_half.network.station_index("osd_cpu").unwrap()]
        .batching
        .unwrap();
    assert_relative_eq!(bh.jobs_per_member, 4.0, epsilon = 1e-12);
    assert_relative_eq!(bh.share, 2.0 / 3.0, epsilon = 1e-12);
    assert_relative_eq!(
        bh.demand_factor(20.0),
        1.0 / 3.0 + (2.0 / 3.0) / 5.0,
        epsilon = 1e-12
    );
    // The data device group-commits (hand calculation, TINY's drive: 50K 4 KiB write IOPS,
    // 1 GB/s; Squid writes 4 KiB directly): a replica write is one data op and one 4 KiB
    // commit op of 1/50,000 s = 20 µs each, 120 µs for 3 copies; a commit op's per-op part
    // is 20 µs − 4,096 B / 1 GB/s = 15.904 µs, 47.712 µs for 3 copies: share 0.3976. All
    // the device's work is writes and one OSD uses it, so a member is 1 job; batches of at
    // most 16, as the CPU's. Nothing else batches.
    let data = &net.network.stations[net.network.station_index("data_device").unwrap()];
    let c = data.batching.expect("commits are group-committed");
    assert_relative_eq!(at(&net, w, "data_device").secs, 120e-6, epsilon = 1e-12);
    assert_relative_eq!(c.share, 47.712 / 120.0, epsilon = 1e-9);
    assert_relative_eq!(c.jobs_per_member, 1.0, epsilon = 1e-12);
    assert_eq!(c.max_batch, 16.0);
    // 5 jobs at a device: batches of 5, factor 1 − 0.3976 × 4/5 = 0.68192.
    assert_relative_eq!(c.demand_factor(5.0), 0.68192, epsilon = 1e-9);
    let batching: Vec<&str> = net
        .network
        .stations
        .iter()
        .filter(|s| s.batching.is_some())
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(batching, ["osd_cpu", "data_device"]);
}

#[test]
fn write_batching_in_a_mix_and_not_for_reads() {
    // Pure reads: no write work, no batching.
    let reads = build(
        &tiny(|t| t.replace("randwrite", "randread")),
        &batched_params(),
    )
    .unwrap();
    let cpu = reads.network.station_index("osd_cpu").unwrap();
    assert!(reads.network.stations[cpu].batching.is_none());
    // 50/50 mix: read op 100 µs; write I/O 1,800 µs (above). Mix demand = 0.5·100 +
    // 0.5·1,800 = 950 µs; the write batch cost per write I/O = 3 × 400 µs = 1,200 µs, so
    // s = 0.5·1,200/950; the writes' share of the work w = 900/950, so a batch member is
    // 2/w = 2·950/900 jobs.
    let mix = build(
        &tiny(|t| {
            t.replace(
                "pattern = \"randwrite\"",
                "pattern = \"randrw\"\nread_percent = 50",
            )
        }),
        &batched_params(),
    )
    .unwrap();
    let b = mix.network.stations[cpu].batching.expect("the mix batches");
    assert_relative_eq!(b.share, 600.0 / 950.0, epsilon = 1e-12);
    assert_relative_eq!(b.jobs_per_member, 2.0 * 950.0 / 900.0, epsilon = 1e-12);
}

#[test]
fn write_batching_raises_saturated_iops_and_keeps_a_lone_write_as_it_was() {
    // Oracles: at one I/O in flight nothing queues, so the batch cost is paid whole and the
    // latency is the sum of path demands (as without batching at the lone-write cost); at
    // depth 256 the OSD CPU is saturated at the largest batch: 3 nodes × 4 cores / (3 ops
    // × (4e-4 + 8e-4/16) Gcycles / 2 GHz) = 12 / 675 µs = 17,778 IOPS at most, far above
    // the lone-write cost's 12 / 1,800 µs = 6,667.
    let p = batched_params();
    let lone = tiny(|t| t.replace("images = 4", "images = 1"));
    let one = crate::predict::predict(&lone, &p, &Default::default()).unwrap();
    let path: f64 = build(&lone, &p)
        .unwrap()
        .network
        .stations
        .iter()
        .map(|s| s.demands[0].path_secs)
        .sum();
    assert!((one.latency_mean_secs - path).abs() < 1e-12);
    // The bound takes the OSD CPU at its largest batch, so it stays below.
    assert!(one.bounds.min_latency_secs < path);
    // A batch of one is below the calibrated range: the report says so, and states it.
    assert!(
        one.warnings
            .iter()
            .any(|w| w.contains("writes batch 1.0 per OSD")),
        "{:?}",
        one.warnings
    );
    assert_eq!(one.write_batch_per_osd, Some(1.0));
    let deep = tiny(|t| t.replace("iodepth = 1", "iodepth = 256"));
    let r = crate::predict::predict(&deep, &p, &Default::default()).unwrap();
    assert!(r.iops > 6_667.0 * 1.5 && r.iops <= 17_778.0, "{}", r.iops);
    assert!(
        (r.bounds.max_iops - 12.0 / 675e-6).abs() < 1e-6,
        "{}",
        r.bounds.max_iops
    );
    assert_eq!(r.bottleneck.resource, "osd_cpu");
    // Saturated: batches of 16 (the largest), within the calibrated range: no warning.
    assert!(
        !r.warnings.iter().any(|w| w.contains("writes batch")),
        "{:?}",
        r.warnings
    );
    let b = r.write_batch_per_osd.expect("writes batch");
    assert!((b - 16.0).abs() < 1e-6, "{b}");
    // Reads have no write batch to state.
    let reads = tiny(|t| t.replace("randwrite", "randread"));
    let rr = crate::predict::predict(&reads, &p, &Default::default()).unwrap();
    assert_eq!(rr.write_batch_per_osd, None);
}

#[test]
fn small_writes_go_through_the_wal_and_large_ones_straight_to_the_data_device() {
    // TINY on Luminous with one Optane WAL per node (500K 4k write IOPS, 2 GB/s), write
    // amplification 2 and WAL share 0.5 (`params`): one data op and one WAL op per OSD write.
    let luminous = |bs: &str| {
        tiny(|t| {
            t.replace("19.2.0", "12.2.2")
                .replace("block_size = \"4k\"", &format!("block_size = \"{bs}\""))
                .replace(
                    "[cluster.node.network]",
                    "[cluster.node.wal_device]\ncount = 1\nmodel = \"intel-optane-p4800x-375gb\"\n[cluster.node.network]",
                )
        })
    };
    // Per-write demand (3 replicas) at the WAL and the data device.
    let devices = |bs: &str| {
        let net = build(&luminous(bs), &params()).unwrap();
        let w = &net.write;
        (
            at(&net, w, "wal_device").secs,
            at(&net, w, "data_device").secs,
        )
    };
    // 4k < 16 KiB (Luminous' bluestore_min_alloc_size_ssd): deferred, the data goes through
    // the WAL: WAL op max(1/500,000, 4096 B / 2 GB/s) = 2.048 µs, data op max(1/50,000,
    // 4096 B / 1 GB/s) = 20 µs; × 3 replicas.
    let (wal, data) = devices("4k");
    assert_relative_eq!(wal, 3.0 * 2.048e-6, epsilon = 1e-15);
    assert_relative_eq!(data, 3.0 * 20e-6, epsilon = 1e-15);
    // 64k ≥ 16 KiB: direct. The data device writes 64 KiB once: the per-op overhead the
    // 4 KiB IOPS figure leaves after its own transfer (20 − 4.096 = 15.904 µs) plus 64 KiB
    // at 1 GB/s (65.536 µs) = 81.44 µs; the WAL gets one 4 KiB metadata commit (2.048 µs),
    // not the 32.768 µs of 64 KiB.
    let (wal, data) = devices("64k");
    assert_relative_eq!(wal, 3.0 * 2.048e-6, epsilon = 1e-15);
    assert_relative_eq!(data, 3.0 * 81.44e-6, epsilon = 1e-15);
    // From Pacific the allocation unit is 4 KiB, so a 4k write is direct too; without a WAL
    // device its metadata commit goes to the data device: 20 + 20 µs per replica, the same
    // load as the deferred path at write amplification 2 (`replicated_write_cpu_and_device_demands`).
    let net = build(
        &tiny(|t| t.replace("block_size = \"4k\"", "block_size = \"8k\"")),
        &params(),
    )
    .unwrap();
    let w = &net.write;
    // 8 KiB: data op 15.904 + 8.192 = 24.096 µs, metadata op 20 µs.
    assert_relative_eq!(
        at(&net, w, "data_device").secs,
        3.0 * 44.096e-6,
        epsilon = 1e-15
    );
    assert_eq!(
        deferred_below_bytes(crate::spec::DriveKind::Nvme, "15.2.14-0ubuntu0.20.04.2"),
        16384.0
    );
    assert_eq!(
        deferred_below_bytes(crate::spec::DriveKind::Nvme, "16.2.0"),
        4096.0
    );
    assert_eq!(
        deferred_below_bytes(crate::spec::DriveKind::Hdd, "19.2.0"),
        65536.0
    );
}

#[test]
fn device_service_is_per_op_overhead_plus_transfer() {
    // Intel P3520 2 TB (catalogue): 26,000 random 4 KiB writes/s, 1.35 GB/s sequential.
    // Per-op overhead 1/26,000 − 4096/1.35e9 = 38.462 − 3.034 = 35.427 µs; a 64 KiB write
    // adds 65,536/1.35e9 = 48.545 µs: 83.972 µs, i.e. 780 MB/s per drive. Seed 001 measured
    // 8,714 MB/s of 64k writes with 2 replicas on 20 of them: 871 MB/s per drive, with
    // "very stable disk IOPS" and multi-second await (device-bound). The spec-sheet
    // bandwidth alone (max of the two limits) would allow 1.35 GB/s.
    let cat = Catalogue::builtin();
    let d = &cat.drive["intel-dc-p3520-2tb"];
    let t = device_service_secs(d, true, 65536.0, None);
    assert_relative_eq!(
        t,
        1.0 / 26_000.0 - 4096.0 / 1.35e9 + 65536.0 / 1.35e9,
        epsilon = 1e-12
    );
    assert_relative_eq!(65536.0 / t / 1e6, 780.4, epsilon = 0.1);
    // 4 KiB is exactly the IOPS figure; below 4 KiB never faster than it.
    assert_relative_eq!(
        device_service_secs(d, true, 4096.0, None),
        1.0 / 26_000.0,
        epsilon = 1e-15
    );
    assert_relative_eq!(
        device_service_secs(d, true, 512.0, None),
        1.0 / 26_000.0,
        epsilon = 1e-15
    );
    // A read-optimised figure whose 4 KiB IOPS exceed bandwidth/4 KiB has no overhead.
    let mut fast = d.clone();
    fast.read_4k_iops = 1e6;
    fast.read_bytes_per_sec = 1e9;
    assert_relative_eq!(
        device_service_secs(&fast, false, 65536.0, None),
        65.536e-6,
        epsilon = 1e-15
    );
}

#[test]
fn unoptimised_rocksdb_build_multiplies_the_per_op_write_cost() {
    let mut p = params();
    p.set(names::ROCKSDB_UNOPT_WRITE, 1.5).unwrap();
    let cpu_write = |p: &ModelParams, release: &str, stated: &str| {
        let s = tiny(|t| {
            t.replace(
                "ceph_release = \"19.2.0\"",
                &format!("ceph_release = \"{release}\"\n{stated}"),
            )
        });
        let net = build(&s, p).unwrap();
        (at(&net, &net.write, "osd_cpu").secs, net.warnings.clone())
    };
    // 3 write ops of 4e-4 gigacycles on 2 GHz cores = 600 µs (replicated_write_cpu_and_device_demands).
    let (opt, w) = cpu_write(&p, "19.2.0", "");
    assert_relative_eq!(opt, 600e-6, epsilon = 1e-15);
    assert!(!w.iter().any(|w| w.contains("RocksDB")), "{w:?}");
    // 16.2.7 upstream: inferred unoptimised, 1.5 × 600 µs, with a warning naming the fix.
    let (un, w) = cpu_write(&p, "16.2.7", "");
    assert_relative_eq!(un, 900e-6, epsilon = 1e-15);
    assert!(
        w.iter()
            .any(|w| w.contains("RocksDB") && w.contains("rocksdb_build = \"optimised\"")),
        "{w:?}"
    );
    // Stated: no warning; stated optimised wins over the inference.
    let (un, w) = cpu_write(&p, "16.2.7", "rocksdb_build = \"unoptimised\"");
    assert_relative_eq!(un, 900e-6, epsilon = 1e-15);
    assert!(!w.iter().any(|w| w.contains("RocksDB")), "{w:?}");
    let (opt, _) = cpu_write(&p, "16.2.7", "rocksdb_build = \"optimised\"");
    assert_relative_eq!(opt, 600e-6, epsilon = 1e-15);
    // A model without the factor predates the distinction: unchanged.
    p.param.remove(names::ROCKSDB_UNOPT_WRITE);
    let (old, _) = cpu_write(&p, "16.2.7", "");
    assert_relative_eq!(old, 600e-6, epsilon = 1e-15);
}

#[test]
fn allocation_metadata_in_rocksdb_multiplies_the_per_op_write_cost() {
    let mut p = params();
    p.set(names::ROCKSDB_UNOPT_WRITE, 1.0).unwrap();
    with_prior(&mut p, names::ALLOC_IN_ROCKSDB_WRITE);
    let cpu_write = |release: &str, stated: &str| {
        let s = tiny(|t| {
            t.replace(
                "ceph_release = \"19.2.0\"",
                &format!("ceph_release = \"{release}\""),
            ) + stated
        });
        let net = build(&s, &p).unwrap();
        at(&net, &net.write, "osd_cpu").secs
    };
    // 3 write ops of 4e-4 gigacycles on 2 GHz cores = 600 µs with NCB (Squid, Quincy) ...
    assert_relative_eq!(cpu_write("19.2.0", ""), 600e-6, epsilon = 1e-15);
    assert_relative_eq!(cpu_write("17.2.0", ""), 600e-6, epsilon = 1e-15);
    // ... and 1.25 × that (PR #39871's +25 % IOPS) when each write commits its allocation
    // to RocksDB: before Quincy, or with the option stated off.
    assert_relative_eq!(cpu_write("16.2.15", ""), 750e-6, epsilon = 1e-15);
    let off = "\n[cluster.ceph_config]\nbluestore_allocation_from_file = false\n";
    assert_relative_eq!(cpu_write("19.2.0", off), 750e-6, epsilon = 1e-15);
    let on = "\n[cluster.ceph_config]\nbluestore_allocation_from_file = true\n";
    assert_relative_eq!(cpu_write("16.2.15", on), 600e-6, epsilon = 1e-15);
    // Reads are untouched: one op of 2e-4 on 2 GHz = 100 µs.
    let s = tiny(|t| {
        t.replace("ceph_release = \"19.2.0\"", "ceph_release = \"16.2.15\"")
            .replace("randwrite", "randread")
    });
    let net = build(&s, &p).unwrap();
    assert_relative_eq!(at(&net, &net.read, "osd_cpu").secs, 100e-6, epsilon = 1e-15);
}

#[test]
fn bluefs_direct_io_multiplies_the_per_batch_write_cost_only() {
    // batched_params: per-op 4e-4 and per-batch 8e-4 gigacycles, so a lone write op costs
    // 1.2e-3 = 600 µs on a 2 GHz core and 3 ops 1,800 µs, batch share 8/12. Factor 2 on the
    // batch part: a lone op 2.0e-3 (3 ops 3,000 µs), share 16/20.
    let mut p = batched_params();
    p.set(names::BLUEFS_DIRECT_BATCH, 2.0).unwrap();
    p.set(names::ALLOC_IN_ROCKSDB_WRITE, 1.0).unwrap();
    let build_at = |p: &ModelParams, release: &str, stated: &str| {
        let s = tiny(|t| {
            t.replace(
                "ceph_release = \"19.2.0\"",
                &format!("ceph_release = \"{release}\"\nrocksdb_build = \"optimised\""),
            ) + stated
        });
        let net = build(&s, p).unwrap();
        let i = net.network.station_index("osd_cpu").unwrap();
        let share = net.network.stations[i].batching.as_ref().unwrap().share;
        (net.write[i].secs, share, net.warnings)
    };
    // 15.2.14 buffers (true): factor 1 on the batch part.
    let (secs, share, w) = build_at(&p, "15.2.14", "");
    assert_relative_eq!(secs, 1800e-6, epsilon = 1e-12);
    assert_relative_eq!(share, 8.0 / 12.0, epsilon = 1e-12);
    assert!(!w.iter().any(|w| w.contains("bluefs")), "{w:?}");
    // 15.2.12's default is false: the batch part doubles, the per-op part does not, and
    // the prediction says it took the release's default and how to state the option.
    let (secs, share, w) = build_at(&p, "15.2.12", "");
    assert_relative_eq!(secs, 3000e-6, epsilon = 1e-12);
    assert_relative_eq!(share, 16.0 / 20.0, epsilon = 1e-12);
    assert!(
        w.iter()
            .any(|w| w.contains("bluefs_buffered_io taken as false")
                && w.contains("bluefs_buffered_io = true")),
        "{w:?}"
    );
    // Stated false: same cost, no warning; stated true on 14.2.16 wins over the default.
    let off = "\n[cluster.ceph_config]\nbluefs_buffered_io = false\n";
    let (secs, _, w) = build_at(&p, "19.2.0", off);
    assert_relative_eq!(secs, 3000e-6, epsilon = 1e-12);
    assert!(!w.iter().any(|w| w.contains("bluefs")), "{w:?}");
    let on = "\n[cluster.ceph_config]\nbluefs_buffered_io = true\n";
    assert_relative_eq!(build_at(&p, "14.2.16", on).0, 1800e-6, epsilon = 1e-12);
    // Reads alone: nothing to warn about.
    let reads = tiny(|t| {
        t.replace("ceph_release = \"19.2.0\"", "ceph_release = \"14.2.16\"")
            .replace("randwrite", "randread")
    });
    let w = build(&reads, &p).unwrap().warnings;
    assert!(!w.iter().any(|w| w.contains("bluefs")), "{w:?}");
    // A model without the factor predates the distinction: unchanged.
    p.param.remove(names::BLUEFS_DIRECT_BATCH);
    assert_relative_eq!(build_at(&p, "15.2.12", "").0, 1800e-6, epsilon = 1e-12);
}

#[test]
fn erasure_small_io_counts_shard_operations_by_release_and_fastec() {
    // 6+2 on 8 nodes, stripe_unit 4 KiB (Ceph's default), a 4 KiB random read and write.
    // Hand count (doc/dev/osd_internals/erasure_coding, ECBackend's stripe bounds):
    // - Squid (classic): the read is widened to the stripe and reads all k = 6 data
    //   chunks of 4 KiB, 5 of them remote; the write reads the 6 data chunks of its stripe
    //   and writes all 8 chunks.
    // - Tentacle without FastEC: partial reads narrow the read to the 1 chunk it covers,
    //   which is the primary's own (shard 0 holds data chunk 0) with probability 1/6:
    //   5/6 of a remote chunk, 1 + 5/6 OSD ops; the write is still classic.
    // - Tentacle with allow_ec_optimizations: the write reads and writes only the touched
    //   data chunk and the m = 2 parity chunks (3 reads, 3 writes).
    // - Every shard a partial-stripe write overwrites in place also keeps its old extent in
    //   a write-aside rollback object (ecbackend.rst, "OSD Object Write and
    //   Consistency"): one more object-store op per written shard; an append has none.
    let ec = |release: &str, fast: bool, pattern: &str| {
        tiny(|t| {
            let t = t
                .replace("nodes = 3", "nodes = 8")
                .replace("replicated = 3", "erasure = { k = 6, m = 2 }")
                .replace("\"19.2.0\"", &format!("\"{release}\""))
                .replace("\"randwrite\"", &format!("\"{pattern}\""));
            if fast {
                t.replace(
                    "[cluster.node]",
                    "[cluster.ceph_config]\nallow_ec_optimizations = true\n[cluster.node]",
                )
            } else {
                t
            }
        })
    };
    // Device service of a 4 KiB op: read 1/100k = 10 µs; write 1/50k = 20 µs, and a write
    // shard does write_amplification = 2 device ops (BlueStore on 20.x defers nothing at
    // 4 KiB: data + a 4 KiB metadata commit).
    let (read_op, write_shard) = (10e-6, 2.0 * 20e-6);
    let chunk = 4096.0 * 8.0 / 10e9;
    for (release, fast, reads, remote, rmw_reads, writes) in [
        ("19.2.0", false, 6.0, 5.0, 6.0, 8.0),
        ("20.2.0", false, 1.0, 5.0 / 6.0, 6.0, 8.0),
        ("20.2.0", true, 1.0, 5.0 / 6.0, 3.0, 3.0),
    ] {
        let rd = build(&ec(release, fast, "randread"), &params()).unwrap();
        assert_relative_eq!(
            at(&rd, &rd.read, "data_device").secs,
            reads * read_op,
            epsilon = 1e-12
        );
        // Remote chunks gathered at the primary.
        assert_relative_eq!(
            at(&rd, &rd.read, "osd_cluster_rx").secs,
            remote * chunk,
            epsilon = 1e-15
        );
        // OSD CPU: the primary's op and one per remote chunk (100 µs each at 2 GHz).
        assert_relative_eq!(
            at(&rd, &rd.read, "osd_cpu").secs,
            (1.0 + remote) * 100e-6,
            max_relative = 1e-9
        );
        let wr = build(&ec(release, fast, "randwrite"), &params()).unwrap();
        assert_relative_eq!(
            at(&wr, &wr.write, "data_device").secs,
            rmw_reads * read_op + writes * write_shard,
            epsilon = 1e-12,
            max_relative = 1e-9
        );
        // OSD CPU (reads 100 µs, writes 200 µs an op at 2 GHz, no per-byte cost): the
        // RMW's shard reads, the shard writes and as many rollback clones; on the path the
        // primary's and the slowest shard's read, write and clone.
        assert_relative_eq!(
            at(&wr, &wr.write, "osd_cpu").secs,
            rmw_reads * 100e-6 + 2.0 * writes * 200e-6,
            max_relative = 1e-9
        );
        assert_relative_eq!(
            at(&wr, &wr.write, "osd_cpu").path_secs,
            2.0 * 100e-6 + 2.0 * 200e-6 + 2.0 * 200e-6,
            max_relative = 1e-9
        );
        // Cluster network out of the primary: the RMW's remote chunks come in, the
        // written chunks but its own go out.
        assert_relative_eq!(
            at(&wr, &wr.write, "osd_cluster_tx").secs,
            (rmw_reads - 1.0) * chunk + (writes - 1.0) * chunk,
            epsilon = 1e-15
        );
    }
    // An append (sequential write to new objects) reads nothing first and overwrites
    // nothing, so it keeps no rollback copy: 8 shard writes of 200 µs.
    let app = build(&ec("19.2.0", false, "write"), &params()).unwrap();
    assert_relative_eq!(
        at(&app, &app.write, "data_device").secs,
        8.0 * write_shard,
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&app, &app.write, "osd_cpu").secs,
        8.0 * 200e-6,
        max_relative = 1e-9
    );
}

#[test]
fn colocated_clients_share_the_osd_nodes_cores_and_nic() {
    // fio on the OSD nodes without a CPU of its own: no client stations; the client's
    // 50 µs per I/O (1e-4 Gcycles at 2 GHz) lands on the node CPU, and with 3 nodes one
    // I/O in 3 finds its primary locally (no wire): 2/3 of a 4 KiB transfer.
    let s = tiny(|t| {
        t.replace(
            "[clients]\nnodes = 1\ncpu = { arch = \"x86_64\", cores = 8, threads_per_core = 1, ghz = 2.0 }\nnic = 10",
            "[clients]\nnodes = 3\ncolocated = true",
        )
        .replace("\"randwrite\"", "\"randread\"")
    });
    assert!(s.clients_colocated);
    let net = build(&s, &params()).unwrap();
    assert!(net.network.station_index("client_cpu").is_none());
    assert!(net.network.station_index("client_nic_tx").is_none());
    // Node CPU: client 50 µs + one read op 100 µs.
    assert_relative_eq!(
        at(&net, &net.read, "osd_cpu").secs,
        150e-6,
        max_relative = 1e-9
    );
    // The public tx of the nodes carries the read reply leaving the primary and the
    // client's receive is the same NIC's rx: 2/3 × 3.2768 µs each.
    let t = 2.0 / 3.0 * 4096.0 * 8.0 / 10e9;
    assert_relative_eq!(
        at(&net, &net.read, "osd_public_tx").secs,
        t,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        at(&net, &net.read, "osd_public_rx").secs,
        t,
        max_relative = 1e-9
    );
}

/// `params()` with messenger coalescing: share 0.5 of the per-op cost, groups up to 16, a
/// write's share half a read's.
fn coalescing_params(mut p: ModelParams) -> ModelParams {
    with_prior(&mut p, names::MSG_COALESCE_SHARE);
    p.set(names::MSG_COALESCE_SHARE, 0.5).unwrap();
    p.set(names::MSG_COALESCE_MAX, 16.0).unwrap();
    with_prior(&mut p, names::MSG_COALESCE_WRITE_FACTOR);
    p.set(names::MSG_COALESCE_WRITE_FACTOR, 0.5).unwrap();
    p
}

#[test]
fn messenger_coalescing_shares_the_client_ops_per_op_cost_per_client_connection() {
    // TINY randread: 2 OSDs per node, 4 images × 1 job = 4 clients, so 2 × 4 = 8
    // connections per node's OSDs. A read's OSD CPU demand is 2e-4 Gcycles / 2 GHz =
    // 100 µs, all of it per-op (CPU per byte 0): coalesced share 0.5 × 100/100 = 0.5. With
    // 40 jobs at a node's CPU, 5 messages per connection read: 1 − 0.5 + 0.5/5 = 0.6.
    let p = coalescing_params(params());
    let reads = build(&tiny(|t| t.replace("randwrite", "randread")), &p).unwrap();
    let cpu = &reads.network.stations[reads.network.station_index("osd_cpu").unwrap()];
    assert_relative_eq!(
        at(&reads, &reads.read, "osd_cpu").secs,
        100e-6,
        epsilon = 1e-12
    );
    let b = cpu.batching.expect("reads coalesce");
    assert_eq!(b.share, 0.0, "no write batching without writes");
    assert_relative_eq!(b.coalesce_share, 0.5, epsilon = 1e-12);
    assert_relative_eq!(b.coalesce_jobs_per_member, 8.0, epsilon = 1e-12);
    assert_eq!(b.coalesce_max, 16.0);
    assert_relative_eq!(b.demand_factor(40.0), 0.6, epsilon = 1e-12);
    // One job per connection or fewer: no coalescing; 8 × 16 jobs and beyond: the
    // largest group, 1 − 0.5 + 0.5/16.
    assert_eq!(b.demand_factor(8.0), 1.0);
    assert_relative_eq!(b.demand_factor(1e6), 0.53125, epsilon = 1e-12);

    // TINY randwrite with write batching (8e-4 Gcycles per batch): a lone op costs
    // 4e-4 + 8e-4, three ops 1,800 µs. Only the primary's op is started by the client's
    // message, so only its per-op part, 200 µs, is coalesced (the two replica sub-ops
    // pay theirs in full), at half a read's share: 0.5 × 0.5 × 200/1800 = 1/36 beside the
    // batch share 3 × 800/1800 = 2/3. With 20 jobs: batches of 20/2 = 10 writes per OSD
    // and 20/8 = 2.5 messages per read, so 1 − 2/3 − 1/36 + (2/3)/10 + (1/36)/2.5 =
    // 69/180 = 23/60. At a write factor of 1 (a write's share a read's, before session
    // 34): 1/18 and 66/180 = 11/30.
    let pb = coalescing_params(batched_params());
    let writes = build(&tiny(|t| t), &pb).unwrap();
    let b = writes.network.stations[writes.network.station_index("osd_cpu").unwrap()]
        .batching
        .unwrap();
    assert_relative_eq!(b.share, 2.0 / 3.0, epsilon = 1e-12);
    assert_relative_eq!(b.coalesce_share, 1.0 / 36.0, epsilon = 1e-12);
    assert_relative_eq!(b.demand_factor(20.0), 23.0 / 60.0, epsilon = 1e-12);
    let mut same = pb.clone();
    same.set(names::MSG_COALESCE_WRITE_FACTOR, 1.0).unwrap();
    let writes = build(&tiny(|t| t), &same).unwrap();
    let b = writes.network.stations[writes.network.station_index("osd_cpu").unwrap()]
        .batching
        .unwrap();
    assert_relative_eq!(b.coalesce_share, 1.0 / 18.0, epsilon = 1e-12);
    assert_relative_eq!(b.demand_factor(20.0), 11.0 / 30.0, epsilon = 1e-12);
    // An EC 2+1 read on Squid reads both data chunks of its stripe: the primary's op and
    // one sub-read, 2 × 100 µs, of which the client's message starts one: share
    // 0.5 × 100/200 = 1/4 (1/2 if the sub-read were coalesced as well).
    let ec = build(
        &tiny(|t| {
            t.replace("replicated = 3", "erasure = { k = 2, m = 1 }")
                .replace("randwrite", "randread")
        }),
        &p,
    )
    .unwrap();
    assert_relative_eq!(at(&ec, &ec.read, "osd_cpu").secs, 200e-6, epsilon = 1e-12);
    let b = ec.network.stations[ec.network.station_index("osd_cpu").unwrap()]
        .batching
        .unwrap();
    assert_relative_eq!(b.coalesce_share, 0.25, epsilon = 1e-12);
    // Twice the clients, half the messages per connection read: 20 jobs make groups of
    // 1.25 instead of 2.5.
    let more = build(&tiny(|t| t.replace("images = 4", "images = 8")), &pb).unwrap();
    let bm = more.network.stations[more.network.station_index("osd_cpu").unwrap()]
        .batching
        .unwrap();
    assert_relative_eq!(bm.coalesce_jobs_per_member, 16.0, epsilon = 1e-12);
    assert_relative_eq!(bm.coalesce_size(20.0), 1.25, epsilon = 1e-12);
}

#[test]
fn messenger_coalescing_makes_a_lone_osd_with_few_clients_faster_per_osd_as_measured() {
    // Measured (ceph.io 2022 "Ceph OSD CPU scaling", corpus rows r6515-1osd-coloc-randread-2c
    // and r6515-60osd-coloc-randread-2c): at 2 CPUs per OSD, one OSD with 4 co-located
    // fio clients reads 46.5k 4k IOPS, the 60-OSD cluster with 40 clients 1.02M = 17k per
    // OSD: 2.7× per OSD. The shipped model carries most of that through coalescing (~128
    // ops queued per connection against ~2); without it, the same costs give at most 1.5×.
    let one = corpus_scenario("officinalis-2022-cpu-1osd-c02.toml", |t| t);
    let sixty = corpus_scenario("officinalis-2022-cpu-60osd-c02.toml", |t| t);
    let per_osd_ratio = |p: &ModelParams| {
        let iops = |s: &Scenario| predicted_iops(s, p) / f64::from(s.total_osds());
        iops(&one) / iops(&sixty)
    };
    let shipped = ModelParams::shipped_default();
    let with = per_osd_ratio(&shipped);
    let mut without = shipped.clone();
    without.param.remove(names::MSG_COALESCE_SHARE);
    let without = per_osd_ratio(&without);
    assert!(with > 1.8 && with < 2.7 * 1.5, "with coalescing: {with}");
    assert!(without < 1.5, "without coalescing: {without}");
}

#[test]
fn group_commit_lets_the_pm983_osds_pass_their_commit_per_write_bound_as_measured() {
    // Measured (ceph.io 2023 "Ceph Reef - 1 or 2 OSDs per NVMe?", corpus row
    // officinalis-2023-osd2-t20-4k-randwrite): 491,300 4k random-write IOPS from 30 PM983
    // drives, 3 replicas. Oracle by hand from the datasheet (50K random-write IOPS a drive):
    // with one commit op beside each replica's data op, the drives bound the cluster at
    // 30 × 50,000 / (3 × 2) = 250,000 IOPS, half the measurement. The shipped model (the
    // commits group-committed) must pass that bound; without write batching (no group
    // commit either) it must not.
    let s = corpus_scenario("officinalis-2023-osd2-t20.toml", |t| {
        t.replace("pattern = \"randread\"", "pattern = \"randwrite\"")
    });
    let iops = |p: &ModelParams| predicted_iops(&s, p);
    let shipped = ModelParams::shipped_default();
    let with = iops(&shipped);
    assert!(with > 1.2 * 250_000.0, "with group commit: {with}");
    assert!(
        (with / 491_300.0 - 1.0).abs() < 0.25,
        "with group commit: {with}"
    );
    let mut without = shipped.clone();
    without.param.remove(names::OSD_CPU_WRITE_BATCH);
    let without = iops(&without);
    assert!(
        without <= 250_000.0 * 1.001,
        "without group commit: {without}"
    );
}

#[test]
fn client_threads_cap_the_client_cpu_station_per_process() {
    // Oracle by hand: the client node has 8 cores; with `client_threads_per_process` = 5
    // (the prior: 3 messenger workers + librbd's op thread + the fio job's thread) one fio
    // job uses at most 5 of them, four jobs all 8 (4 × 5 = 20 > 8), and one rados bench
    // process (no librbd) at most 4. A lone op still takes its whole demand: the cap is a
    // server count, not a demand.
    let mut p = params();
    with_prior(&mut p, names::CLIENT_THREADS);
    assert_eq!(p.get(names::CLIENT_THREADS), Some(5.0));
    let servers = |s: &Scenario, p: &ModelParams| {
        let net = build(s, p).unwrap();
        let i = net.network.station_index("client_cpu").unwrap();
        let st = &net.network.stations[i];
        (
            st.fractional_servers.unwrap(),
            at(&net, &net.read, "client_cpu").secs,
        )
    };
    let one_job = tiny(|t| t.replace("images = 4", "images = 1"));
    let (c, d) = servers(&one_job, &p);
    assert_relative_eq!(c, 5.0);
    // The network says why, with the remedy (`predict` reports it where the client CPU is
    // the bottleneck, below); no note where every core serves.
    let note = build(&one_job, &p).unwrap().client_threads_note.unwrap();
    assert!(
        note.contains("at most 5 threads") && note.contains("5 of the node's 8"),
        "{note}"
    );
    assert_eq!(build(&tiny(|t| t), &p).unwrap().client_threads_note, None);
    assert_relative_eq!(d, 50e-6, max_relative = 1e-12); // 1e-4 Gcycles at 2 GHz
    assert_relative_eq!(servers(&tiny(|t| t), &p).0, 8.0);
    let rados = tiny(|t| {
        let head = &t[..t.find("[workload]").unwrap()];
        format!(
            "{head}[workload]\nengine = \"rados\"\nobject_size = \"4k\"\nconcurrency = 16\npattern = \"read\"\n"
        )
    });
    assert_relative_eq!(servers(&rados, &p).0, 4.0);
    // Without the parameter every client core serves.
    assert_relative_eq!(servers(&one_job, &params()).0, 8.0);

    // Capacity oracle: one job reading 4k at iodepth 256 on 32-core nodes, where the
    // client's 5 threads at 50 µs an I/O bound it at 5 / 50 µs = 100,000 IOPS (the OSDs
    // serve 3 × 32 cores / 100 µs = 960k, the devices 6 × 100k, the client NIC 10 Gb/s ×
    // 0.9 / 8 / 4 KiB ≈ 275k); without the cap the 8 cores give 160,000.
    let big = |t: String| {
        t.replace(
            "cores = 4, threads_per_core = 1, ghz = 2.0 }\n[cluster.node.data_devices]",
            "cores = 32, threads_per_core = 1, ghz = 2.0 }\n[cluster.node.data_devices]",
        )
        .replace("images = 4", "images = 1")
        .replace("iodepth = 1", "iodepth = 256")
        .replace("\"randwrite\"", "\"randread\"")
    };
    let s = tiny(big);
    let iops = |p: &ModelParams| predicted_iops(&s, p);
    let capped = iops(&p);
    let report = crate::predict::predict(&s, &p, &Default::default()).unwrap();
    assert_eq!(report.bottleneck.resource, "client_cpu");
    assert!(report
        .warnings
        .iter()
        .any(|w| w.contains("client_threads_per_process")));
    // A lone I/O leaves the client CPU nearly idle (still the busiest station, its 5
    // threads at 50 µs against the OSDs' 32 cores at 100 µs): no note.
    let lone = tiny(|t| big(t).replace("iodepth = 256", "iodepth = 1"));
    let lone = crate::predict::predict(&lone, &p, &Default::default()).unwrap();
    assert!(lone.bottleneck.utilization < 0.8, "{:?}", lone.bottleneck);
    assert!(!lone
        .warnings
        .iter()
        .any(|w| w.contains("client_threads_per_process")));
    assert!(
        capped <= 100_000.0 * 1.0001 && capped > 99_000.0,
        "{capped}"
    );
    let free = iops(&params());
    assert!(free > 150_000.0 && free <= 160_000.0 * 1.0001, "{free}");
}

#[test]
fn client_threads_hold_one_fio_process_near_its_measured_ceiling() {
    // Measured (ceph.io 2023 "Ceph Encryption Performance", corpus row
    // officinalis-2023-enc-sc-4k-randread): one fio process at iodepth 128 reads 148,300 4k
    // IOPS from 30 NVMe OSDs that serve 2.8M to 50 processes. The OSDs are far from busy;
    // the client process's threads are what saturate (ceph.io 2022 "QEMU/KVM Tuning": "all
    // three of Ceph's async msgr threads were running at 100% CPU"). The shipped model must
    // come within 25 % of it, and without the cap it predicts it more than twice too fast.
    let s = corpus_scenario("officinalis-2023-enc-single.toml", |t| t);
    assert_eq!((s.images, s.jobs_per_image, s.iodepth), (1, 1, 128));
    let iops = |p: &ModelParams| predicted_iops(&s, p);
    let shipped = ModelParams::shipped_default();
    let with = iops(&shipped);
    assert!(
        (with / 148_300.0 - 1.0).abs() < 0.25,
        "with the cap: {with}"
    );
    let mut without = shipped.clone();
    without.param.remove(names::CLIENT_THREADS);
    let without = iops(&without);
    assert!(without > 2.0 * 148_300.0, "without the cap: {without}");
}

/// `tiny` with 4 images of `image` and a fixed 1 GiB BlueStore cache, half of it for onodes
/// (536,870,912 bytes), and the onode-cache parameters: 65,536 bytes per onode, so the
/// cache holds 8,192 onodes; a load costs one read op (2e-4 gigacycles = 100 µs at 2 GHz).
fn onode_case(image: &str, pattern: &str) -> (Scenario, ModelParams) {
    onode_case_of(image, pattern, "4k")
}

/// [`onode_case`] with blocks of `block`.
fn onode_case_of(image: &str, pattern: &str, block: &str) -> (Scenario, ModelParams) {
    let s = tiny(|t| {
        t.replace("pattern = \"randwrite\"", &format!("pattern = \"{pattern}\""))
            .replace("block_size = \"4k\"", &format!("block_size = \"{block}\""))
            + &format!("image_size = \"{image}\"\n")
            + "[cluster.ceph_config]\nbluestore_cache_size = \"1G\"\nbluestore_cache_meta_ratio = 0.5\n"
    });
    let mut p = params();
    p.set(names::ONODE_BYTES, 65_536.0).unwrap();
    p.set(names::ONODE_MISS_COST, 1.0).unwrap();
    (s, p)
}

#[test]
fn onode_cache_misses_add_one_load_per_op_on_the_share_not_cached() {
    // 4 images × 24 GiB / 4 MiB = 24,576 objects on 6 OSDs. Writes touch every copy:
    // 24,576 × 3 / 6 = 12,288 onodes per OSD, 8,192 cached → 1/3 miss; reads touch the
    // primaries' 4,096, all cached.
    let (s, p) = onode_case("24G", "randwrite");
    assert_relative_eq!(onode_miss_share(&s, Some(65_536.0)).unwrap(), 1.0 / 3.0);
    // 3 write ops × (4e-4 + 1/3 × 2e-4) gigacycles / 2 GHz = 3 × 233.3 µs = 700 µs.
    let net = build(&s, &p).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        700e-6,
        epsilon = 1e-12
    );
    // The prediction says so, with the counts and the remedy.
    assert!(
        net.warnings.iter().any(|w| w.contains("onode cache: 33 %")
            && w.contains("touches 12288 onodes per OSD, 512 MiB of BlueStore cache holds 8192")
            && w.contains("osd_memory_target")),
        "{:?}",
        net.warnings
    );
    let (s, p) = onode_case("24G", "randread");
    assert_eq!(onode_miss_share(&s, Some(65_536.0)), Some(0.0));
    let net = build(&s, &p).unwrap();
    assert!(!net.warnings.iter().any(|w| w.contains("onode")));
    assert_relative_eq!(at(&net, &net.read, "osd_cpu").secs, 100e-6, epsilon = 1e-12);
    // 96 GiB images: reads touch 4 × 24,576 / 6 = 16,384 primaries, half cached: one read op
    // of 2e-4 plus ½ × 2e-4 = 3e-4 gigacycles = 150 µs.
    let (s, p) = onode_case("96G", "randread");
    assert_relative_eq!(onode_miss_share(&s, Some(65_536.0)).unwrap(), 0.5);
    let net = build(&s, &p).unwrap();
    assert_relative_eq!(at(&net, &net.read, "osd_cpu").secs, 150e-6, epsilon = 1e-12);
}

#[test]
fn an_unoptimised_rocksdb_build_scales_a_reads_onode_load() {
    // [`onode_case`]'s random reads of 96 GiB images miss half their onodes: 2e-4 + ½ ×
    // 2e-4 = 3e-4 gigacycles = 150 µs with an optimised RocksDB. The load is RocksDB's
    // work, so an unoptimised build (16.2.7 upstream, inferred) at a factor of 1.5 makes it
    // ½ × 2e-4 × 1.5: 3.5e-4 gigacycles = 175 µs. Images of 24 GiB keep every primary's
    // onode cached: no RocksDB work, 100 µs whatever the build.
    let read_cpu = |image: &str, release: &str, stated: &str| {
        let (_, mut p) = onode_case(image, "randread");
        p.set(names::ROCKSDB_UNOPT_WRITE, 1.5).unwrap();
        let s = tiny(|t| {
            t.replace(
                "ceph_release = \"19.2.0\"",
                &format!("ceph_release = \"{release}\"\n{stated}"),
            )
            .replace("pattern = \"randwrite\"", "pattern = \"randread\"")
                + &format!("image_size = \"{image}\"\n")
                + "[cluster.ceph_config]\nbluestore_cache_size = \"1G\"\nbluestore_cache_meta_ratio = 0.5\n"
        });
        let net = build(&s, &p).unwrap();
        at(&net, &net.read, "osd_cpu").secs
    };
    assert_relative_eq!(read_cpu("96G", "19.2.0", ""), 150e-6, epsilon = 1e-12);
    assert_relative_eq!(read_cpu("96G", "16.2.7", ""), 175e-6, epsilon = 1e-12);
    assert_relative_eq!(
        read_cpu("96G", "16.2.7", "rocksdb_build = \"optimised\""),
        150e-6,
        epsilon = 1e-12
    );
    assert_relative_eq!(read_cpu("24G", "16.2.7", ""), 100e-6, epsilon = 1e-12);
}

#[test]
fn sequential_streams_load_an_objects_onode_once_per_visit() {
    // The random case above misses 1/3 of its writes' onodes. A sequential 4 KiB stream
    // makes 4 MiB / 4 KiB = 1,024 ops on an object before the next: only the first can
    // miss, so 1/3 / 1,024 of the ops load an onode.
    let (s, p) = onode_case("24G", "write");
    let c = onode_cache(&s, Some(65_536.0)).unwrap();
    assert_relative_eq!(c.ops_per_object_visit, 1024.0);
    assert_relative_eq!(c.miss, 1.0 / 3072.0, epsilon = 1e-15);
    // 3 write ops × (4e-4 + 2e-4 / 3,072) gigacycles / 2 GHz = 600 µs + 97.65625 ns.
    let net = build(&s, &p).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        600e-6 + 3.0 * 2e-4 / 3072.0 / 2.0,
        epsilon = 1e-15
    );
    // Below the warning's 0.5 %: nothing to say.
    assert!(!net.warnings.iter().any(|w| w.contains("onode")));
    // 96 GiB images read sequentially in 1 MiB blocks: half the primaries' onodes are
    // cached, 4 ops per object, so 1/8 of the reads load one; the warning says why.
    let (s, p) = onode_case_of("96G", "read", "1M");
    let c = onode_cache(&s, Some(65_536.0)).unwrap();
    assert_relative_eq!(c.ops_per_object_visit, 4.0);
    assert_relative_eq!(c.miss, 0.125);
    let net = build(&s, &p).unwrap();
    assert!(
        net.warnings.iter().any(|w| w.contains("onode cache: 12 %")
            && w.contains(
                "a sequential stream loads an object's onode on the first of its 4 ops there"
            )),
        "{:?}",
        net.warnings
    );
    // Random ops and blocks of a whole object or more: one op per visit, as before.
    let (s, _) = onode_case("96G", "randread");
    assert_relative_eq!(
        onode_cache(&s, Some(65_536.0))
            .unwrap()
            .ops_per_object_visit,
        1.0
    );
    let (s, _) = onode_case_of("24G", "write", "4M");
    let c = onode_cache(&s, Some(65_536.0)).unwrap();
    assert_relative_eq!(c.ops_per_object_visit, 1.0);
    assert_relative_eq!(c.miss, 1.0 / 3.0);
}

#[test]
fn without_an_image_size_or_the_parameters_every_onode_counts_as_cached() {
    // No image size: the data set is unknown and taken as cached (600 µs: 3 × 200 µs).
    let mut p = params();
    p.set(names::ONODE_BYTES, 65_536.0).unwrap();
    p.set(names::ONODE_MISS_COST, 1.0).unwrap();
    let net = build(&tiny(|t| t), &p).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        600e-6,
        epsilon = 1e-12
    );
    // A model without the miss cost (one calibrated before the mechanism) ignores it.
    let (s, mut p) = onode_case("24G", "randwrite");
    p.param.remove(names::ONODE_MISS_COST);
    let net = build(&s, &p).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        600e-6,
        epsilon = 1e-12
    );
}

#[test]
fn more_osd_memory_or_more_osds_never_lower_iops_on_a_data_set_that_misses() {
    let p = ModelParams::prior();
    let iops = |target: &str, nodes: u32| {
        let s = tiny(|t| {
            t.replace("nodes = 3\nceph", &format!("nodes = {nodes}\nceph"))
                .replace("iodepth = 1", "iodepth = 64")
                // 8 TiB drives: 4 × 2 TiB × 3 copies must fit on the 3 nodes' raw 48 TiB.
                .replace("capacity = \"1TiB\"", "capacity = \"8TiB\"")
                + "image_size = \"2T\"\n"
                + &format!("[cluster.ceph_config]\nosd_memory_target = \"{target}\"\n")
        });
        assert!(onode_miss_share(&s, p.get(names::ONODE_BYTES)).unwrap() > 0.0);
        predicted_iops(&s, &p)
    };
    for nodes in [3, 4, 6] {
        let by_memory: Vec<f64> = ["2G", "4G", "8G", "16G"]
            .iter()
            .map(|t| iops(t, nodes))
            .collect();
        assert!(by_memory.windows(2).all(|w| w[1] >= w[0]), "{by_memory:?}");
        assert!(by_memory[3] > by_memory[0], "{by_memory:?}");
    }
    assert!(iops("4G", 6) >= iops("4G", 4) && iops("4G", 4) >= iops("4G", 3));
}

/// A scenario `lab up` wrote, its client described as it ran: until session 36 the lab
/// wrote the client as a separate copy of the host's cores (the campaigns' stored
/// scenarios), while fio in fact shares them with the OSDs (co-located, no CPU of its own,
/// as `lab up` now writes it).
pub(crate) fn lab_clients_colocated(text: &str) -> String {
    let start = text.find("[clients]").unwrap();
    let end = text.find("[workload]").unwrap();
    format!(
        "{}[clients]\nnodes = 1\ncolocated = true\n\n{}",
        &text[..start],
        &text[end..]
    )
}

/// Mean measured IOPS of the lab campaign's `osd{osds}-randwrite-img4-r*` runs at 4 images
/// × iodepth `depth` (`calibration-data/lab/osd-count-2vcpu/`, `cephplan validate`'s dataset
/// CSVs, two repetitions).
fn lab_write_iops(osds: u32, depth: u32) -> f64 {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("calibration-data/lab/osd-count-2vcpu");
    let mut v = Vec::new();
    for rep in ["r1", "r2"] {
        let dir = root.join(format!("osd{osds}-randwrite-img4-{rep}"));
        let (runs, _) = crate::data::load_runs(&dir).unwrap();
        v.extend(
            runs.iter()
                .filter(|r| r.workload.iodepth == Some(depth) && r.workload.images == Some(4))
                .filter_map(|r| r.measured.iops),
        );
    }
    assert_eq!(v.len(), 2, "{osds} OSDs, iodepth {depth}: {v:?}");
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn more_osds_on_the_labs_two_cores_lower_write_iops_as_measured() {
    // Measured (calibration-data/lab/osd-count-2vcpu/, Pacific 16.2.15 on the development
    // VM's two cores with fio beside the OSDs): 4k random writes at 4 images × iodepth 16
    // fall 10.3 % from 1 to 2 OSDs and 31.9 % from 1 to 4 (7,672 → 6,884 → 5,221 IOPS, the
    // means of two repetitions). Per-OSD write batching is the model's mechanism for it (the
    // same writes form smaller batches on more OSDs, and the two cores are already busy),
    // so the shipped model must reproduce the two ratios within 10 points: the one-OSD
    // point's two repetitions differ by 20 % (6,970 and 8,375 IOPS), so the measured ratios
    // are known to about ±10 %. The shipped model gives ×0.879 / ×0.658 with the OSDs on
    // the one device they share (session 32; ×0.955 / ×0.702 with each OSD given a device
    // of the measured speed of its own, as the lab's scenario files said until then). The
    // absolute level is not asserted: a model fitted to bare-metal clusters predicts this
    // VM ~1.8× fast.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("calibration-data/lab/osd-count-2vcpu/osd1-randwrite-img4-r1");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "toml"))
        .unwrap();
    let text = lab_clients_colocated(&std::fs::read_to_string(&file).unwrap())
        .replace("images = 1\n", "images = 4\n");
    // Every OSD's file sits on the lab directory's one backing store, which `lab up`
    // measured once: N OSDs on one device of that speed, as `lab up` describes them since
    // session 32 (the recorded scenario files predate that and list N devices).
    let lab = |osds: u32| {
        let t = text.replace("osds_per_device = 1", &format!("osds_per_device = {osds}"));
        let s = parse_scenario(&t, "lab", &Catalogue::builtin()).unwrap();
        assert_eq!(
            (
                s.osds_per_node(),
                s.data.count_per_node,
                s.images,
                s.iodepth
            ),
            (osds, 1, 4, 16)
        );
        s
    };
    let shipped = ModelParams::shipped_default();
    let iops = |osds: u32| predicted_iops(&lab(osds), &shipped);
    let (m1, m2, m4) = (
        lab_write_iops(1, 16),
        lab_write_iops(2, 16),
        lab_write_iops(4, 16),
    );
    let (p1, p2, p4) = (iops(1), iops(2), iops(4));
    for (what, measured, predicted) in [
        ("2 against 1 OSD", m2 / m1, p2 / p1),
        ("4 against 1 OSD", m4 / m1, p4 / p1),
    ] {
        assert!(
            (predicted - measured).abs() < 0.10,
            "{what}: measured ×{measured:.3}, predicted ×{predicted:.3}"
        );
    }
    assert!(m4 < m2 && m2 < m1, "{m1} {m2} {m4}");
    // Without the per-OSD economies (write batching, messenger coalescing) the same model
    // misses the drop: the per-OSD core curve alone gives 4 OSDs more of the two cores.
    let mut flat = shipped.clone();
    flat.param.remove(names::OSD_CPU_WRITE_BATCH);
    flat.param.remove(names::MSG_COALESCE_SHARE);
    let flat_ratio = predicted_iops(&lab(4), &flat) / predicted_iops(&lab(1), &flat);
    assert!(
        flat_ratio > m4 / m1 + 0.15,
        "without the economies: ×{flat_ratio:.3}"
    );
}

/// Session 26: a CPU's generation sets its per-GHz speed from its sourced prior, and a CPU
/// naming no generation the model knows is warned about rather than silently given the
/// x86_64 reference speed.
#[test]
fn a_cpu_generation_scales_its_cores_and_an_unknown_one_is_warned() {
    let unknown = "names no core generation the model knows";
    // TINY's CPUs name no generation: the x86_64 factor (1.0), one warning per CPU.
    let plain = build(&tiny(|t| t), &params()).unwrap();
    assert_relative_eq!(
        at(&plain, &plain.write, "osd_cpu").secs,
        600e-6,
        epsilon = 1e-12
    );
    assert_eq!(
        plain
            .warnings
            .iter()
            .filter(|w| w.contains(unknown))
            .count(),
        2,
        "{:?}",
        plain.warnings
    );
    assert!(plain
        .warnings
        .iter()
        .any(|w| w.contains("set its uarch to one of")));
    // A Zen 5 node: uarch_efficiency.zen5 = 1.5 (Zen 4's 1.3 × AMD's +16 % IPC), so
    // 3 OSD write ops × 4e-4 Gcycles / (2 GHz × 1.5) = 3 × 133.3 µs; the client CPU
    // (no generation) keeps 1e-4 / 2 GHz = 50 µs and its warning.
    // The tiny node's CPU (not the client's) naming generation `u`.
    let node_uarch = |u: &'static str| {
        move |t: String| {
            t.replacen(
                "cpu = { arch = \"x86_64\", cores = 4,",
                &format!("cpu = {{ arch = \"x86_64\", uarch = \"{u}\", cores = 4,"),
                1,
            )
        }
    };
    let zen5 = node_uarch("zen5");
    let net = build(&tiny(zen5), &params()).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        3.0 * 4e-4 / (2.0 * 1.5),
        epsilon = 1e-12
    );
    assert_relative_eq!(
        at(&net, &net.write, "client_cpu").secs,
        50e-6,
        epsilon = 1e-12
    );
    assert_eq!(
        net.warnings.iter().filter(|w| w.contains(unknown)).count(),
        1,
        "{:?}",
        net.warnings
    );
    // A Sandy Bridge node (the croit corpus system's E5-2430L): uarch_efficiency.
    // sandybridge = 0.7 (Haswell's 0.8 / 1.15, two IPC steps), so 3 × 4e-4 / (2 × 0.7).
    let net = build(&tiny(node_uarch("sandybridge")), &params()).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        3.0 * 4e-4 / (2.0 * 0.7),
        epsilon = 1e-12
    );
    // A model file without the generation's factor (one written before it existed) falls
    // back to the instruction set's and says which factor to add.
    let mut old = params();
    old.param.remove("uarch_efficiency.zen5");
    let net = build(&tiny(zen5), &old).unwrap();
    assert_relative_eq!(
        at(&net, &net.write, "osd_cpu").secs,
        600e-6,
        epsilon = 1e-12
    );
    assert!(
        net.warnings
            .iter()
            .any(|w| w.contains("has no uarch_efficiency.zen5") && w.contains("models/prior.toml")),
        "{:?}",
        net.warnings
    );
    // A 32-bit ARM CPU has no generations in the list: its own factor, no warning.
    let armv7 = |t: String| t.replace("arch = \"x86_64\"", "arch = \"armv7\"");
    let net = build(&tiny(armv7), &params()).unwrap();
    assert!(
        !net.warnings.iter().any(|w| w.contains(unknown)),
        "{:?}",
        net.warnings
    );
}

/// Session 26: a node's busy cores contend (the Universal Scalability Law's contention
/// term): `n` effective cores serve as `n / (1 + σ(n − 1))`, at the OSD and client CPUs
/// alike, and a lone op keeps its demand.
#[test]
fn busy_cores_contend_and_more_cores_never_serve_less() {
    let mut p = params();
    with_prior(&mut p, names::CPU_CONTENTION);
    p.set(names::CPU_CONTENTION, 0.1).unwrap();
    let net = build(&tiny(|t| t.replace("\"randwrite\"", "\"randread\"")), &p).unwrap();
    // The tiny node's 4 cores (no core curve in these parameters): 4 / (1 + 0.1 × 3) =
    // 3.07692 servers; its client's 8 cores: 8 / (1 + 0.1 × 7) = 4.70588.
    let osd = station(&net, "osd_cpu");
    assert_relative_eq!(
        osd.fractional_servers.unwrap(),
        4.0 / 1.3,
        max_relative = 1e-12
    );
    assert_eq!(osd.servers, 4);
    let client = station(&net, "client_cpu");
    assert_relative_eq!(
        client.fractional_servers.unwrap(),
        8.0 / 1.7,
        max_relative = 1e-12
    );
    // A lone read still takes its 100 µs of OSD CPU (2e-4 Gcycles on a 2 GHz core); the
    // capacity is the contended cores' (3.07692 / 100 µs per node).
    assert_relative_eq!(
        at(&net, &net.read, "osd_cpu").secs,
        100e-6,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        osd.capacity_per_sec(0),
        4.0 / 1.3 / 100e-6 * f64::from(osd.multiplicity),
        max_relative = 1e-9
    );
    // Increasing in the cores for every σ < 1: one more core always serves more.
    for sigma in [0.0, 0.01, 0.1, 0.5, 0.99] {
        let mut last = 0.0;
        for n in (1..=512).map(f64::from) {
            let c = contended_cores(n, sigma);
            assert!(c > last, "σ {sigma}: {n} cores serve {c} ≤ {last}");
            last = c;
        }
    }
    // The report's note says what the contention takes (a tenth or more of the cores).
    let note = net.contention_note.as_deref().unwrap();
    assert!(
        note.contains("4.0 effective cores") && note.contains("serve as 3.1"),
        "{note}"
    );
    // Without the parameter (a model file written before it) nothing changes.
    let plain = build(
        &tiny(|t| t.replace("\"randwrite\"", "\"randread\"")),
        &params(),
    )
    .unwrap();
    let osd = station(&plain, "osd_cpu");
    assert_eq!((osd.servers, osd.fractional_servers), (4, Some(4.0)));
    assert_eq!(plain.contention_note, None);
}

#[test]
fn osds_beyond_what_the_cores_run_take_turns_and_keep_their_coalescing_groups() {
    // Hand oracle. TINY randwrite with write batching (scale 1) and coalescing (share 0.5)
    // on 4 cores, 2 busy threads per OSD: the node runs 4 / 2 = 2 OSDs at once. With 4
    // drives (4 OSDs per node) the coalescing groups are those of 2 OSDs, as with TINY's
    // 2 drives: a member is 2 OSDs × 4 connections = 8 jobs (16 without the parameter).
    // The write batches stay per OSD, 4 OSDs / (w = 1 · scale 1) = 4 jobs: the lab's two
    // cores measure writes falling as OSDs are added
    // (`more_osds_on_the_labs_two_cores_lower_write_iops_as_measured`).
    let mut p = coalescing_params(batched_params());
    with_prior(&mut p, names::OSD_BUSY_THREADS);
    assert_eq!(p.get(names::OSD_BUSY_THREADS), Some(2.0));
    let batching = |s: &Scenario, p: &ModelParams| {
        let net = build(s, p).unwrap();
        station(&net, "osd_cpu").batching.unwrap()
    };
    let four = tiny(|t| t.replace("count = 2", "count = 4"));
    let note = build(&four, &p).unwrap().turns_note.unwrap();
    assert!(
        note.contains("4 OSDs outnumber what its 4.0 effective cores run at once (2.0,"),
        "{note}"
    );
    let b = batching(&four, &p);
    assert_relative_eq!(b.coalesce_jobs_per_member, 8.0, epsilon = 1e-12);
    assert_relative_eq!(b.jobs_per_member, 4.0, epsilon = 1e-12);
    let mut every = p.clone();
    every.param.remove(names::OSD_BUSY_THREADS);
    let b = batching(&four, &every);
    assert_relative_eq!(b.coalesce_jobs_per_member, 16.0, epsilon = 1e-12);
    assert_relative_eq!(b.jobs_per_member, 4.0, epsilon = 1e-12);
    // 8 cores run all 4 OSDs: the parameter changes nothing.
    let wide = tiny(|t| {
        t.replace("count = 2", "count = 4")
            .replace("cores = 4,", "cores = 8,")
    });
    assert_eq!(batching(&wide, &p), batching(&wide, &every));
    assert_eq!(build(&wide, &p).unwrap().turns_note, None);
    // So one more drive on the 4 cores, at the same 64 reads in flight, never thins the
    // groups and never costs IOPS; with every OSD's groups on their own it does.
    let deep = |drives: u32| {
        tiny(move |t| {
            t.replace("count = 2", &format!("count = {drives}"))
                .replace("iodepth = 1", "iodepth = 16")
                .replace("randwrite", "randread")
        })
    };
    for d in 2..8 {
        let (a, b) = (deep(d), deep(d + 1));
        assert!(
            predicted_iops(&b, &p) >= predicted_iops(&a, &p) * (1.0 - 1e-9),
            "{d} → {} drives",
            d + 1
        );
    }
    assert!(predicted_iops(&deep(3), &every) < predicted_iops(&deep(2), &every));

    // Measured (ceph.io 2023 "Ceph Reef - 1 or 2 OSDs per NVMe?", corpus rows
    // officinalis-2023-osd{1,2}-t02-4k-randread): 2 CPU threads per NVMe, 1 → 2 OSDs per
    // NVMe, 4k random reads 665,600 → 644,900 IOPS (−3.1 %). The shipped model stays
    // within 10 % of no change; with every OSD's groups on their own it lost 28 %.
    let shipped = ModelParams::shipped_default();
    let osds = |n: u32| corpus_scenario(&format!("officinalis-2023-osd{n}-t02.toml"), |t| t);
    let change = |p: &ModelParams| predicted_iops(&osds(2), p) / predicted_iops(&osds(1), p) - 1.0;
    let with = change(&shipped);
    assert!(with.abs() < 0.10, "{with}");
    let mut without = shipped.clone();
    without.param.remove(names::OSD_BUSY_THREADS);
    let without = change(&without);
    assert!(without < -0.2, "{without}");
}

/// A data device's batching with no group commit and a second term over the ops queued at
/// the disk (one job per member, SATA's 32 tags): its share and exponent, and its demand
/// factors at 1, 8 and from 32 queued.
fn assert_disk_groups(
    b: crate::qn::Batching,
    (share, exponent): (f64, f64),
    at_8: f64,
    from_32: f64,
) {
    assert_eq!(b.share, 0.0, "{b:?}");
    assert_relative_eq!(b.coalesce_share, share, epsilon = 1e-9);
    assert_relative_eq!(b.coalesce_exponent, exponent, epsilon = 1e-12);
    assert_eq!(b.coalesce_jobs_per_member, 1.0);
    assert_eq!(b.coalesce_max, 32.0);
    assert_eq!(
        b.demand_factor(1.0),
        1.0,
        "one op alone is served at its rate"
    );
    assert_relative_eq!(b.demand_factor(8.0), at_8, epsilon = 1e-9);
    assert_relative_eq!(b.demand_factor(1e3), from_32, epsilon = 1e-9);
}

#[test]
fn direct_writes_on_disks_with_a_metadata_device_land_in_allocation_order() {
    // TINY writes 64 KiB (a direct write on a hard disk: bluestore_prefer_deferred_size_hdd
    // is 64 KiB) to a disk rated by its datasheet (no iops_queue_depth: 80 IOPS, 200 MB/s),
    // its RocksDB and WAL on an Optane device. One copy's data write is 12.47952 ms of
    // positioning (1/80 s less the 4 KiB transfer, 20.48 µs) and 327.68 µs of transfer
    // (65,536 / 2e8): 12.8072 ms. Fresh extents are handed out in order, so the writes
    // queued at a disk are adjacent and one positioning serves the group: the share
    // 12.47952 / 12.8072 = 0.974414392 of the disk's demand is paid once per group of the
    // jobs queued there (exponent 1, not a reordered seek's ½), at most 32; with 8 jobs the
    // demand factor is 1 − 0.974414392 × 7/8 = 0.147387407, from 32 on 1 − 0.974414392 ×
    // 31/32 = 0.056036058 (17.8× at one).
    const DISK: &str = r#"{ kind = "hdd", capacity = "8TiB", read_4k_iops = 80, write_4k_iops = 80, read_bytes_per_sec = 200000000, write_bytes_per_sec = 200000000, read_latency = "12.5ms", write_latency = "12.5ms" }"#;
    const OPTANE: &str = "[cluster.node.wal_device]\ncount = 1\nmodel = { kind = \"optane\", capacity = \"375GiB\", read_4k_iops = 500000, write_4k_iops = 500000, read_bytes_per_sec = 4000000000, write_bytes_per_sec = 4000000000, read_latency = \"10us\", write_latency = \"10us\" }\n[cluster.node.network]";
    let nvme = r#"{ kind = "nvme", capacity = "1TiB", read_4k_iops = 100000, write_4k_iops = 50000, read_bytes_per_sec = 1000000000, write_bytes_per_sec = 1000000000, read_latency = "100us", write_latency = "20us" }"#;
    let disk = |pattern: &str, bs: &str, wal: bool| {
        tiny(|t| {
            let t = t
                .replace(nvme, DISK)
                .replace("randwrite", pattern)
                .replace("block_size = \"4k\"", &format!("block_size = \"{bs}\""));
            if wal {
                t.replace("[cluster.node.network]", OPTANE)
            } else {
                t
            }
        })
    };
    let mut p = params();
    with_prior(&mut p, names::HDD_REORDER_SHARE);
    let net = build(&disk("randwrite", "64k", true), &p).unwrap();
    // Three copies of 12.8072 ms each at the data devices.
    assert_relative_eq!(
        at(&net, &net.write, "data_device").secs,
        3.0 * 0.0128072,
        epsilon = 1e-12
    );
    // No group commit beside it: the commits are on the WAL device.
    let b = station(&net, "data_device")
        .batching
        .expect("allocation-ordered writes");
    assert_disk_groups(b, (0.974414392, 1.0), 0.147387407, 0.056036058);
    let note = net.reorder_note.as_deref().expect("a note on the order");
    assert!(
        note.contains("the direct writes land in allocation order")
            && note.contains("ops 17.8x faster than at one I/O")
            && note.contains("fragmented"),
        "{note}"
    );
    // A disk rated at one I/O as well: the direct writes keep all of their positioning
    // shared once per group (they are the disk's only ops: no seek to reorder beside them),
    // the note names both.
    let one_io = DISK.replace(" }", ", iops_queue_depth = 1 }");
    let both = tiny(|t| {
        t.replace(nvme, &one_io)
            .replace("block_size = \"4k\"", "block_size = \"64k\"")
            .replace("[cluster.node.network]", OPTANE)
    });
    let net = build(&both, &p).unwrap();
    let b = station(&net, "data_device").batching.unwrap();
    assert_relative_eq!(b.coalesce_share, 0.974414392, epsilon = 1e-9);
    assert_eq!(b.coalesce_exponent, 1.0);
    assert!(net.reorder_note.unwrap().contains(
        "command queueing (hdd_reorder_share 0.80), and the direct writes land in allocation order"
    ));
    // A 70/30 mix of 64 KiB random reads and writes on that disk: the reads' seeks reorder
    // (share 0.8 of 0.7 × 12.47952 ms, exponent ½), the writes' three copies land in
    // allocation order (0.3 × 3 × 12.47952 ms, exponent 1); the second term takes their
    // blend by share, (0.9 + ½ · 0.56) / (0.9 + 0.56) = 0.808219178.
    let mix = tiny(|t| {
        t.replace(nvme, &one_io)
            .replace("block_size = \"4k\"", "block_size = \"64k\"")
            .replace(
                "pattern = \"randwrite\"",
                "pattern = \"randrw\"\nread_percent = 70",
            )
            .replace("[cluster.node.network]", OPTANE)
    });
    assert_eq!(mix.read_fraction, 0.7);
    let b = station(&build(&mix, &p).unwrap(), "data_device")
        .batching
        .unwrap();
    assert_relative_eq!(b.coalesce_exponent, 0.808219178, epsilon = 1e-9);
    // Not in allocation order: deferred writes (16 KiB, through the WAL then in place),
    // reads, a disk whose WAL shares it (the metadata commits interleave), two OSDs on one
    // disk (two allocators' regions), a model without the disks' queueing.
    let two_osds = tiny(|t| {
        t.replace(nvme, DISK)
            .replace("block_size = \"4k\"", "block_size = \"64k\"")
            .replace("[cluster.node.network]", OPTANE)
            .replace(
                "[cluster.node.data_devices]",
                "osds_per_device = 2\n[cluster.node.data_devices]",
            )
    });
    assert_eq!(two_osds.osds_per_device, 2);
    for s in [
        disk("randwrite", "16k", true),
        disk("randread", "64k", true),
        disk("randwrite", "64k", false),
        two_osds,
    ] {
        let net = build(&s, &p).unwrap();
        let alloc = station(&net, "data_device")
            .batching
            .map_or(0.0, |b| b.coalesce_share);
        assert_eq!(alloc, 0.0, "{}", s.spec.name);
        assert_eq!(net.reorder_note, None);
    }
    let none = build(&disk("randwrite", "64k", true), &params()).unwrap();
    assert_eq!(station(&none, "data_device").batching, None);
    // A disk whose bandwidth makes the transfer vanish: the shared positioning stays below
    // the whole demand (a valid batching), and the prediction is made.
    let instant = tiny(|t| {
        t.replace(
            nvme,
            &DISK.replace(
                "write_bytes_per_sec = 200000000",
                "write_bytes_per_sec = 1000000000000",
            ),
        )
        .replace("block_size = \"4k\"", "block_size = \"64k\"")
        .replace("[cluster.node.network]", OPTANE)
    });
    let b = station(&build(&instant, &p).unwrap(), "data_device")
        .batching
        .unwrap();
    assert_relative_eq!(b.coalesce_share, 0.99);
    assert!(predicted_iops(&instant, &p) > 0.0);
    // More load never fewer IOPS.
    iops_never_fall_with_depth(&p, |t| {
        t.replace(nvme, DISK)
            .replace("block_size = \"4k\"", "block_size = \"64k\"")
            .replace("[cluster.node.network]", OPTANE)
    });
}

/// TINY edited by `edit`, at iodepth 1 to 64: the predicted IOPS never fall.
fn iops_never_fall_with_depth(p: &ModelParams, edit: impl Fn(String) -> String) {
    let mut last = 0.0;
    for depth in [1, 2, 4, 8, 16, 32, 64] {
        let s = tiny(|t| edit(t).replace("iodepth = 1", &format!("iodepth = {depth}")));
        let iops = predicted_iops(&s, p);
        assert!(
            iops >= last * (1.0 - 1e-9),
            "iodepth {depth}: {iops} < {last}"
        );
        last = iops;
    }
}

#[test]
fn disks_rated_at_one_io_reorder_their_queue_and_keep_their_rate_otherwise() {
    // TINY reads on a 7200 rpm-class disk rated from one I/O's latency: 80 IOPS, 200 MB/s,
    // `iops_queue_depth = 1`. One 4 KiB read is 1/80 s = 12.5 ms at the disk, of which the
    // transfer is 4096 / 2e8 = 20.48 µs and the positioning 12.47952 ms. Reordering makes
    // the share 0.8 of the positioning shrink as the square root of the jobs queued at the
    // disk: share 0.8 × 12.47952 / 12.5 = 0.79868928; with 8 jobs at a disk 1 − 0.79868928
    // × (1 − 8^(−½)) = 0.483690023; from 32 jobs (SATA's 32 command tags) on 1 −
    // 0.79868928 × (1 − 32^(−½)) = 0.342500371.
    const DISK: &str = r#"{ kind = "hdd", capacity = "8TiB", read_4k_iops = 80, write_4k_iops = 80, read_bytes_per_sec = 200000000, write_bytes_per_sec = 200000000, read_latency = "12.5ms", write_latency = "12.5ms", iops_queue_depth = 1 }"#;
    let nvme = r#"{ kind = "nvme", capacity = "1TiB", read_4k_iops = 100000, write_4k_iops = 50000, read_bytes_per_sec = 1000000000, write_bytes_per_sec = 1000000000, read_latency = "100us", write_latency = "20us" }"#;
    let disk =
        |pattern: &str, drive: &str| tiny(|t| t.replace(nvme, drive).replace("randwrite", pattern));
    let mut p = params();
    with_prior(&mut p, names::HDD_REORDER_SHARE);
    assert_eq!(p.get(names::HDD_REORDER_SHARE), Some(0.8));
    let reads = build(&disk("randread", DISK), &p).unwrap();
    assert_relative_eq!(
        at(&reads, &reads.read, "data_device").secs,
        0.0125,
        epsilon = 1e-12
    );
    // No group commit without writes.
    let b = station(&reads, "data_device")
        .batching
        .expect("the disk reorders");
    assert_disk_groups(b, (0.79868928, 0.5), 0.483690023, 0.342500371);
    // `predict` names the gain where the disks bound: 1 / 0.3425 = 2.9×.
    let note = reads
        .reorder_note
        .as_deref()
        .expect("a note on the reordering");
    assert!(note.contains("ops 2.9x faster than at one I/O"), "{note}");

    // A disk whose figure is a datasheet rate (no `iops_queue_depth`), a flash drive
    // flagged at depth 1, or a model without the parameter: no reordering.
    let rated = DISK.replace(", iops_queue_depth = 1", "");
    let flash = nvme.replace(" }", ", iops_queue_depth = 1 }");
    for s in [disk("randread", &rated), disk("randread", &flash)] {
        let net = build(&s, &p).unwrap();
        assert_eq!(station(&net, "data_device").batching, None);
        assert_eq!(net.reorder_note, None);
    }
    let none = build(&disk("randread", DISK), &params()).unwrap();
    assert_eq!(station(&none, "data_device").batching, None);

    // Writes: the group commit's share stays as without reordering, and reordering takes
    // 0.8 of what positioning the commit does not already share, so the two shares never
    // reach the whole demand.
    let mut pb = batched_params();
    with_prior(&mut pb, names::HDD_REORDER_SHARE);
    let plain = batched_params();
    let w = station(
        &build(&disk("randwrite", DISK), &pb).unwrap(),
        "data_device",
    )
    .batching
    .unwrap();
    let commit = station(
        &build(&disk("randwrite", DISK), &plain).unwrap(),
        "data_device",
    )
    .batching
    .unwrap();
    assert_eq!(w.share, commit.share);
    assert!(
        w.coalesce_share > 0.0 && w.share + w.coalesce_share < 1.0,
        "{w:?}"
    );
    assert!(w.coalesce_share <= 0.8 * (1.0 - w.share) + 1e-12, "{w:?}");
    assert_eq!(w.coalesce_exponent, 0.5);

    // More load never fewer IOPS on the reordering disk.
    iops_never_fall_with_depth(&p, |t| {
        t.replace(nvme, DISK).replace("randwrite", "randread")
    });

    // Measured (ceph.io 2021 "QoS Study with mClock and WPQ schedulers", corpus row
    // e5-2650v3-1n-mclock2021-hdd-4k-randwrite-qd64-baseline): 4 Constellation.2 disks
    // rated 78 write IOPS from one I/O's latency serve 315 3× replicated 4k writes per
    // second at 64 in flight, 236 disk writes per second each. The shipped model comes
    // within 20 %; at the disks' one-I/O rate it made 101 (−68 %).
    let shipped = ModelParams::shipped_default();
    let e5 = corpus_scenario("mclock2021-e5-2650v3-1n-hdd.toml", |t| t);
    let with = predicted_iops(&e5, &shipped);
    assert!((with / 315.0 - 1.0).abs() < 0.2, "{with}");
    let mut without = shipped.clone();
    without.param.remove(names::HDD_REORDER_SHARE);
    let without = predicted_iops(&e5, &without);
    assert!(without / 315.0 < 0.5, "{without}");
}

#[test]
fn client_processes_fewer_than_client_nodes_load_only_their_own_nodes() {
    // TINY with 4 client nodes of 8 cores and 2 fio jobs (images): each job runs on one
    // node, so 2 nodes carry I/O (client CPU and NICs of multiplicity 2), each job's node
    // with its thread cap of 5 (1 process per active node), not 4 nodes with half a
    // process and 2.5 cores each. With 8 jobs every node is active, 2 processes a node:
    // 8 cores (the cap 10 exceeds them).
    let mut p = params();
    with_prior(&mut p, names::CLIENT_THREADS);
    let clients = |images: u32| {
        tiny(move |t| {
            t.replace("[clients]\nnodes = 1", "[clients]\nnodes = 4")
                .replace("images = 4", &format!("images = {images}"))
        })
    };
    let look = |s: &Scenario| {
        let net = build(s, &p).unwrap();
        let m = |name: &str| station(&net, name).multiplicity;
        (
            m("client_cpu"),
            m("client_nic_tx"),
            m("client_nic_rx"),
            station(&net, "client_cpu").fractional_servers.unwrap(),
        )
    };
    let (cpu, tx, rx, cores) = look(&clients(2));
    assert_eq!((cpu, tx, rx), (2, 2, 2));
    assert_relative_eq!(cores, 5.0);
    let (cpu, tx, rx, cores) = look(&clients(8));
    assert_eq!((cpu, tx, rx), (4, 4, 4));
    assert_relative_eq!(cores, 8.0);
    // So a second client process on an idle node never lowers the mean latency (the
    // generated scenario #7939 of `tests/physical_sanity.rs` lost 3 % with the process
    // spread over every client node).
    let lat = |images: u32| {
        crate::predict::predict(&clients(images), &p, &Default::default())
            .unwrap()
            .latency_mean_secs
    };
    assert!(lat(2) >= lat(1) * (1.0 - 1e-9), "{} < {}", lat(2), lat(1));
}

/// Measured case for the erasure-coded write plan: the lab's 2+1 pool on Pacific 16.2
/// (stripe unit 4 KiB, so a stripe holds 8 KiB; `calibration-data/lab/ec-2plus1-2vcpu/`,
/// `validate --data-pool --osd-counters`, third repetition, whose counters count BlueStore's
/// reads). BlueStore reads per client write over the three OSDs, against the shard reads of
/// the model's plan ([`Plan::ec_write`]):
/// - 4 KiB random writes cover half a stripe: the read-modify-write reads the stripe's k = 2
///   data chunks first (1.961 and 1.971 reads per write measured at 1 and 16 in flight);
/// - 8 KiB writes, random or sequential, cover whole stripes and read nothing (0.008-0.022:
///   the image's header and object map);
/// - 4 KiB sequential writes read too, 1.001 per write at one in flight: before Tentacle an
///   EC object is padded to whole stripes (ceph.io 2025 "Fast erasure coding for Tentacle":
///   "EC used to pad all objects to be a multiple of the stripe size"), so an append that
///   starts inside a stripe rewrites it, k × (1 − gcd(bs, k·su) / (k·su)) = 2 × 1/2 = 1 read
///   per write. The model takes sequential writes as appends that read nothing: a known
///   gap, kept because the mechanism raised the leave-one-system-out error (session 35,
///   `models/not-adopted.md`).
#[test]
fn the_ec_write_plan_reads_what_the_lab_measures_except_padded_appends() {
    let campaign = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("calibration-data/lab/ec-2plus1-2vcpu");
    let reads_per_write = |dir: &str| -> f64 {
        let d = campaign.join(dir);
        let json = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy().into_owned();
                n.starts_with("validation-") && n.ends_with(".json")
            })
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        let c = &v["points"][0]["osd_counters"];
        let ops = c["write_ops"].as_f64().unwrap() + c["read_ops"].as_f64().unwrap();
        c["bluestore_reads"].as_f64().unwrap() / ops
    };
    let plan_reads = |pattern: &str, bs: &str| -> f64 {
        let dir = campaign.join("ec21-write-4k-qd1-r3");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "toml"))
            .unwrap();
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace(
                "pattern = \"randwrite\"",
                &format!("pattern = \"{pattern}\""),
            )
            .replace("block_size = \"4k\"", &format!("block_size = \"{bs}\""));
        let s = parse_scenario(&text, "lab scenario-ec.toml", &Catalogue::builtin()).unwrap();
        assert_eq!(s.protection, Protection::Erasure { k: 2, m: 1 });
        let p = ModelParams::shipped_default();
        let plan = Plan::new(&s, &p, Notes::Write).unwrap();
        plan.ec_write(2, 1).0.map_or(0.0, |io| io.shards)
    };
    for (dir, pattern, bs, model) in [
        ("ec21-randwrite-4k-qd1-r3", "randwrite", "4k", 2.0),
        ("ec21-randwrite-4k-qd16-r3", "randwrite", "4k", 2.0),
        ("ec21-randwrite-8k-qd1-r3", "randwrite", "8k", 0.0),
        ("ec21-randwrite-8k-qd16-r3", "randwrite", "8k", 0.0),
        ("ec21-write-8k-qd1-r3", "write", "8k", 0.0),
        ("ec21-write-8k-qd16-r3", "write", "8k", 0.0),
    ] {
        assert_eq!(plan_reads(pattern, bs), model, "{dir}");
        let measured = reads_per_write(dir);
        assert!(
            (measured - model).abs() < 0.05,
            "{dir}: {measured} against {model}"
        );
    }
    // The padded appends: measured one read per write, the model none (the known gap).
    let measured = reads_per_write("ec21-write-4k-qd1-r3");
    let stripe = 2.0 * 4096.0;
    let padded = 2.0 * (1.0 - 4096.0 / stripe);
    assert!((measured - padded).abs() < 0.01, "{measured}");
    assert_eq!(plan_reads("write", "4k"), 0.0);
}

/// Flash fill ([`flash`]): on Luminous (4 KiB writes deferred below the 16 KiB allocation
/// unit) images filling 2 % of the drives run the data device's small writes at the
/// sequential bandwidth's rate. Hand check: the drive's full-span amplification is
/// 1e9 B/s / (4096 B × 50,000/s) = 4.8828; 4 images × 10 GiB × 3 copies = 120 GiB over
/// 3 nodes × 2 drives × 1 TiB = 6 TiB fill 1.953 %, where LRW copies nothing (α = 1.0x /
/// 0.0195 ≈ 55, A = 1 + 1e-23): a 4 KiB write's device time falls from 1/50,000 s = 20 µs to
/// 4096 B / 1e9 B/s = 4.096 µs, 1/4.8828 of it. Reads, direct writes (19.2: 4 KiB writes
/// are not deferred), disks and an unstated image size keep the datasheet's rate.
#[test]
fn deferred_writes_on_lightly_filled_flash_run_at_the_bandwidth() {
    let luminous = |t: String| t.replace("\"19.2.0\"", "\"12.2.2\"");
    let sized = |t: String| t.replace("images = 4\n", "images = 4\nimage_size = \"10G\"\n");
    let s = tiny(|t| sized(luminous(t)));
    let span = flash::flash_span(&s).expect("a flash drive with a stated image size");
    assert_relative_eq!(span.filled_share, 120.0 / 6144.0, max_relative = 1e-12);
    assert_relative_eq!(span.amplification_full, 1e9 / (4096.0 * 50_000.0));
    assert_relative_eq!(span.amplification, 1.0, max_relative = 1e-9);
    assert_relative_eq!(span.gain, 4.8828125, max_relative = 1e-9);

    let p = params();
    let device = |s: &Scenario| {
        let net = build(s, &p).unwrap();
        at(&net, &net.write, "data_device").secs
    };
    let full_span = tiny(luminous);
    assert!(flash::flash_span(&full_span).is_none());
    assert_relative_eq!(
        device(&s) / device(&full_span),
        4096.0 / 1e9 * 50_000.0,
        max_relative = 1e-9
    );
    let net = build(&s, &p).unwrap();
    assert!(
        net.warnings
            .iter()
            .any(|w| w.contains("fill 2 % of the flash") && w.contains("4.9× its 50000 IOPS")),
        "{:?}",
        net.warnings
    );
    assert!(!build(&full_span, &p)
        .unwrap()
        .warnings
        .iter()
        .any(|w| w.contains("of the flash")));

    // Direct writes: the same fill, but 19.2's 4 KiB allocation unit writes 4 KiB directly.
    let direct = tiny(sized);
    assert!(flash::flash_span(&direct).is_some());
    assert_relative_eq!(device(&direct), device(&tiny(|t| t)), max_relative = 1e-12);
    // Reads never: a read's device time is the datasheet's.
    let reads = |t: String| t.replace("pattern = \"randwrite\"", "pattern = \"randread\"");
    let r = |s: &Scenario| {
        let net = build(s, &p).unwrap();
        at(&net, &net.read, "data_device").secs
    };
    assert_relative_eq!(
        r(&tiny(|t| reads(sized(luminous(t))))),
        r(&tiny(|t| reads(luminous(t)))),
        max_relative = 1e-12
    );
    // Disks have no garbage collection.
    let hdd = |t: String| t.replace("kind = \"nvme\"", "kind = \"hdd\"");
    assert!(flash::flash_span(&tiny(|t| hdd(sized(luminous(t))))).is_none());
}

/// More data on the same drives never makes the flash-fill gain larger (the sanity
/// property "more hardware never fewer IOPS" rests on it: one more drive lowers the fill).
#[test]
fn the_flash_fill_gain_falls_as_the_images_grow() {
    let mut last = f64::INFINITY;
    // Up to 4 × 512 GiB × 3 copies = 6 TiB, the drives' raw capacity (more is refused).
    for gib in [10, 100, 200, 300, 400, 500, 512] {
        let s = tiny(|t| {
            t.replace("\"19.2.0\"", "\"12.2.2\"").replace(
                "images = 4\n",
                &format!("images = 4\nimage_size = \"{gib}G\"\n"),
            )
        });
        let g = flash::flash_span(&s).unwrap().gain;
        assert!(g <= last + 1e-12, "{gib} GiB: gain {g} > {last}");
        assert!(g >= 1.0);
        last = g;
    }
    // 4 × 512 GiB × 3 copies on 6 TiB is full: the datasheet's rate.
    assert_relative_eq!(last, 1.0, max_relative = 1e-9);
}

#[test]
fn a_build_without_notes_is_the_same_network() {
    // A fit builds every run's network at every step and discards the notes; skipping them
    // must change nothing else. Oracle: the build with notes, over every scenario of the
    // corpus under the shipped model (they carry every kind of note between them).
    let p = ModelParams::shipped_default();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration-data/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| f.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() > 20, "{files:?}");
    let mut noted = std::collections::BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let s = parse_scenario(&text, &f.display().to_string(), &Catalogue::builtin()).unwrap();
        let full = build(&s, &p).unwrap();
        let quiet = build_with(&s, &p, Notes::Skip).unwrap();
        assert_eq!(quiet.network, full.network, "{}", f.display());
        assert_eq!((&quiet.read, &quiet.write), (&full.read, &full.write));
        assert!(quiet.warnings.is_empty(), "{:?}", quiet.warnings);
        assert_eq!(
            (
                &quiet.client_threads_note,
                &quiet.contention_note,
                &quiet.turns_note,
                &quiet.reorder_note
            ),
            (&None, &None, &None, &None)
        );
        for (kind, present) in [
            ("warnings", !full.warnings.is_empty()),
            ("client threads", full.client_threads_note.is_some()),
            ("contention", full.contention_note.is_some()),
            ("turns", full.turns_note.is_some()),
            ("reorder", full.reorder_note.is_some()),
        ] {
            if present {
                noted.insert(kind);
            }
        }
    }
    assert_eq!(
        noted.len(),
        5,
        "the corpus carries every kind of note: {noted:?}"
    );
}

/// Co-located clients on one of three nodes receive every remote read through that node's
/// port (session 52's audit: the reads had spread over all three ports, 38 GB/s on one
/// 100 Gb/s client): the bandwidth that crosses its port stays within the link.
#[test]
fn colocated_clients_on_fewer_nodes_are_held_to_their_ports() {
    let text = std::fs::read_to_string("models/examples/seed-000-ampere-altra-max.toml").unwrap();
    let base =
        crate::spec::parse_scenario(&text, "seed-000", &crate::spec::Catalogue::builtin()).unwrap();
    let p = crate::model::ModelParams::shipped_default();
    let opts = crate::predict::PredictOptions {
        interval: false,
        ..Default::default()
    };
    let mut wire = Vec::new();
    for clients in [1, 3] {
        let mut sp = base.spec.clone();
        sp.clients.colocated = true;
        sp.clients.nodes = clients;
        sp.clients.cpu = None;
        sp.clients.nic = None;
        sp.workload.pattern = crate::spec::Pattern::Randread;
        sp.workload.block_size = crate::units::Bytes(1 << 20);
        let s = sp.validate(&crate::spec::Catalogue::builtin()).unwrap();
        let r = crate::predict::predict(&s, &p, &opts).unwrap();
        // One read in three is served on the client's own node and crosses no wire.
        let remote_bytes_per_sec = r.bandwidth_bytes_per_sec * 2.0 / 3.0;
        let link_bytes_per_sec = s.public_bits_per_sec / 8.0;
        wire.push(remote_bytes_per_sec / f64::from(clients));
        assert!(
            remote_bytes_per_sec / f64::from(clients) <= link_bytes_per_sec * 1.0001,
            "{clients} client node(s): {remote_bytes_per_sec} B/s over {link_bytes_per_sec} B/s ports"
        );
    }
    // The one client node's port is the bottleneck; three share the load.
    assert!(wire[0] > 0.9 * wire[1], "{wire:?}");
    // A mix's reads and writes cross the ports both ways: fio on one more node, up to
    // every node, never lowers the IOPS (the client nodes' ports carry their share of the
    // OSD-side traffic too, so fio on every node is the limit of fio on fewer).
    let mut last = 0.0;
    for clients in 1..=3 {
        let mut sp = base.spec.clone();
        sp.clients.colocated = true;
        sp.clients.nodes = clients;
        sp.clients.cpu = None;
        sp.clients.nic = None;
        sp.workload.pattern = crate::spec::Pattern::Randrw;
        sp.workload.read_percent = Some(70.0);
        sp.workload.block_size = crate::units::Bytes(1 << 20);
        let s = sp.validate(&crate::spec::Catalogue::builtin()).unwrap();
        let x = crate::predict::predict(&s, &p, &opts).unwrap().iops;
        assert!(
            x >= last * 0.999,
            "{clients} client node(s): {x} after {last}"
        );
        last = x;
    }
}

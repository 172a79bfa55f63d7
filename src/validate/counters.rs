//! The OSDs' own latency counters around a validation point (`validate --osd-counters`):
//! where a measured I/O's time went inside the OSDs, to set beside fio's end-to-end figure
//! and the prediction's latency parts (`predict`'s `latency_parts`).
//!
//! Before and after each point every OSD's `perf dump` is read (`ceph tell osd.N perf
//! dump`); a counter's mean over the point is the change of its `sum` (seconds) over the
//! change of its `avgcount`, summed over the OSDs, so nothing is reset on the cluster (a
//! reset would disturb whoever else reads the counters). The counters are those the lab's
//! lone-I/O campaign read by hand (`calibration-data/lab/README.md`, "lone-io-1osd"): the
//! OSD op from its message received to its reply (`osd.op_r_latency`, `osd.op_w_latency`),
//! its wait for an op thread (`osd.op_before_dequeue_op_lat`), BlueStore's commit of a
//! write (`bluestore.commit_lat`) and within it the RocksDB WAL sync
//! (`bluestore.kv_sync_lat`), and BlueStore's read (`bluestore.read_lat`). The counts of
//! the last two tell how many writes one WAL sync committed: BlueStore's transactions
//! (`commit_lat`'s count) over its `kv_sync_thread` cycles (`kv_sync_lat`'s count), the
//! measured side of the model's per-OSD write batches (`predict`'s `write_batch_per_osd`).
//!
//! Not here: running the commands (`images::Cluster::osd_perf_dumps`), the point loop
//! (`validate`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most OSDs whose counters one point reads (two `ceph tell` calls each per point).
pub const MAX_COUNTER_OSDS: usize = 64;

/// Mean per op over one point, summed over the OSDs; `None` where no op of that kind ran
/// or the release has no such counter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OsdCounters {
    /// OSDs whose counters were read.
    pub osds: u32,
    /// Client read and write ops the OSDs completed during the point (`osd.op_r`, `op_w`).
    pub read_ops: f64,
    pub write_ops: f64,
    /// An OSD read op, message received to reply.
    pub op_read_secs: Option<f64>,
    /// An OSD write op (the primary's, replication included), message received to reply.
    pub op_write_secs: Option<f64>,
    /// Waiting for an op thread, every op.
    pub op_queue_wait_secs: Option<f64>,
    /// BlueStore's commit of a write transaction.
    pub bluestore_commit_secs: Option<f64>,
    /// Of which the RocksDB WAL sync.
    pub kv_sync_secs: Option<f64>,
    /// BlueStore's read.
    pub bluestore_read_secs: Option<f64>,
    /// BlueStore transactions committed (`bluestore.commit_lat`'s count) and RocksDB WAL
    /// syncs (`bluestore.kv_sync_lat`'s count: one per `kv_sync_thread` cycle) during the
    /// point, summed over the OSDs: their ratio is the measured write batch
    /// ([`OsdCounters::transactions_per_sync`]).
    #[serde(default)]
    pub transactions: f64,
    #[serde(default)]
    pub kv_syncs: f64,
    /// BlueStore reads during the point (`bluestore.read_lat`'s count), summed over the
    /// OSDs: beside the client's reads, the shard reads of erasure coding (a partial-stripe
    /// write's read-modify-write, an EC read's gather) and onode loads.
    #[serde(default)]
    pub bluestore_reads: f64,
    /// CPU time (user + system) the cluster's OSD processes on this machine used during the
    /// point, summed over them ([`super::osd_cpu`]); `None` when none runs here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_secs: Option<f64>,
}

impl OsdCounters {
    /// BlueStore transactions per RocksDB WAL sync over the point: the writes one
    /// `kv_sync_thread` cycle commits together, averaged over the OSDs' cycles (what
    /// cephplan's write batching models per OSD). None without a sync.
    pub fn transactions_per_sync(&self) -> Option<f64> {
        (self.kv_syncs > 0.0).then(|| self.transactions / self.kv_syncs)
    }

    /// BlueStore reads per client op the OSDs completed over the point (1 for a replicated
    /// read; more where erasure coding reads shards, e.g. a partial-stripe write's
    /// read-modify-write). None without an op.
    pub fn bluestore_reads_per_op(&self) -> Option<f64> {
        let ops = self.read_ops + self.write_ops;
        (ops > 0.0).then(|| self.bluestore_reads / ops)
    }

    /// The OSDs' CPU seconds per client op they completed over the point (reads and
    /// writes alike; a replica's or shard's work counts with the client op it serves).
    /// None without a CPU reading or an op.
    pub fn cpu_secs_per_op(&self) -> Option<f64> {
        let ops = self.read_ops + self.write_ops;
        self.cpu_secs.filter(|_| ops > 0.0).map(|s| s / ops)
    }
}

/// `(section, counter)` of each mean, in [`OsdCounters`] order.
const OP_READ: (&str, &str) = ("osd", "op_r_latency");
const OP_WRITE: (&str, &str) = ("osd", "op_w_latency");
const QUEUE_WAIT: (&str, &str) = ("osd", "op_before_dequeue_op_lat");
const COMMIT: (&str, &str) = ("bluestore", "commit_lat");
const KV_SYNC: (&str, &str) = ("bluestore", "kv_sync_lat");
const READ: (&str, &str) = ("bluestore", "read_lat");

/// A time counter's `(sum seconds, count)` in one dump, if it has it.
fn time_counter(dump: &serde_json::Value, (section, name): (&str, &str)) -> Option<(f64, f64)> {
    let c = &dump[section][name];
    Some((c["sum"].as_f64()?, c["avgcount"].as_f64()?))
}

/// A plain counter's value in one dump.
fn count(dump: &serde_json::Value, section: &str, name: &str) -> Option<f64> {
    dump[section][name].as_f64()
}

/// The counters' means over a point from the dumps before and after it, per OSD id. OSDs
/// missing from either side are left out (an OSD that restarted in between counts from
/// zero again: its change is taken from zero).
pub fn counter_means(
    before: &BTreeMap<u32, serde_json::Value>,
    after: &BTreeMap<u32, serde_json::Value>,
) -> OsdCounters {
    let pairs: Vec<(&serde_json::Value, &serde_json::Value)> = after
        .iter()
        .filter_map(|(id, a)| before.get(id).map(|b| (b, a)))
        .collect();
    // The change of a counter on one OSD; a fall means the OSD restarted.
    let change = |b: f64, a: f64| if a >= b { a - b } else { a };
    let mean = |which: (&str, &str)| -> Option<f64> {
        let (mut sum, mut n) = (0.0, 0.0);
        for (b, a) in &pairs {
            let (Some((sb, nb)), Some((sa, na))) = (time_counter(b, which), time_counter(a, which))
            else {
                continue;
            };
            if na >= nb {
                sum += sa - sb;
                n += na - nb;
            } else {
                sum += sa;
                n += na;
            }
        }
        (n > 0.0).then(|| sum / n)
    };
    let ops = |name: &str| -> f64 {
        pairs
            .iter()
            .filter_map(|(b, a)| Some(change(count(b, "osd", name)?, count(a, "osd", name)?)))
            .sum()
    };
    // How many times a time counter counted during the point.
    let times = |which: (&str, &str)| -> f64 {
        pairs
            .iter()
            .filter_map(|(b, a)| Some(change(time_counter(b, which)?.1, time_counter(a, which)?.1)))
            .sum()
    };
    OsdCounters {
        osds: pairs.len() as u32,
        read_ops: ops("op_r"),
        write_ops: ops("op_w"),
        op_read_secs: mean(OP_READ),
        op_write_secs: mean(OP_WRITE),
        op_queue_wait_secs: mean(QUEUE_WAIT),
        bluestore_commit_secs: mean(COMMIT),
        kv_sync_secs: mean(KV_SYNC),
        bluestore_read_secs: mean(READ),
        transactions: times(COMMIT),
        kv_syncs: times(KV_SYNC),
        bluestore_reads: times(READ),
        cpu_secs: None,
    }
}

/// Share of the point's client ops below which a kind of op is left out of
/// [`counters_line`]: a write sweep's OSDs also serve a few reads of the image's header and
/// metadata, which are not the workload's.
pub const MIN_OP_SHARE: f64 = 0.01;

/// One line of text for a point's counters, as the CLI prints and the app shows it, for a
/// point of workload `pattern`.
///
/// The op-thread wait and BlueStore's read latency are means over all ops, not parts of
/// one kind of op: they are shown inside the read op's parentheses only when the workload
/// only reads (its reads are then nearly all the ops), inside the write op's only when it
/// only writes, and otherwise after the ops, labelled as over all ops. A write workload's
/// read ops (the image's header and metadata) are named as not the workload's, and its
/// BlueStore reads (an erasure-coded write's read-modify-write) go with their count.
pub fn counters_line(c: &OsdCounters, pattern: crate::fio::RwPattern) -> String {
    let ms = crate::predict::format::ms;
    let workload_reads = pattern.reads();
    let workload_writes = !matches!(
        pattern,
        crate::fio::RwPattern::Randread | crate::fio::RwPattern::Read
    );
    let mixed = workload_reads && workload_writes;
    let ops = c.read_ops + c.write_ops;
    let shown = |n: f64| n > 0.0 && n >= MIN_OP_SHARE * ops;
    let queue = c
        .op_queue_wait_secs
        .map(|q| format!("op-thread wait {}", ms(q)));
    let mut parts = Vec::new();
    if let Some(r) = c.op_read_secs.filter(|_| shown(c.read_ops)) {
        if workload_reads && !mixed {
            let mut inner: Vec<String> = queue.iter().cloned().collect();
            if let Some(b) = c.bluestore_read_secs {
                inner.push(format!("BlueStore read {}", ms(b)));
            }
            parts.push(format!("read op {} ({})", ms(r), inner.join(", ")));
        } else if workload_reads {
            parts.push(format!("read op {}", ms(r)));
        } else {
            parts.push(format!(
                "read op {} ({:.0} reads of the images' headers and metadata, not the workload's)",
                ms(r),
                c.read_ops
            ));
        }
    }
    if let Some(w) = c.op_write_secs.filter(|_| shown(c.write_ops)) {
        let mut inner = Vec::new();
        if workload_writes && !mixed {
            inner.extend(queue.iter().cloned());
        }
        if let Some(b) = c.bluestore_commit_secs {
            let sync = c
                .kv_sync_secs
                .map(|k| format!(", of which the WAL sync {}", ms(k)))
                .unwrap_or_default();
            let batch = c
                .transactions_per_sync()
                .map(|b| format!("; {b:.1} transactions per WAL sync"))
                .unwrap_or_default();
            let sync = format!("{sync}{batch}");
            inner.push(format!("BlueStore commit {}{sync}", ms(b)));
        }
        if !workload_writes {
            inner.push(format!("{:.0} writes, not the workload's", c.write_ops));
        }
        if inner.is_empty() {
            parts.push(format!("write op {}", ms(w)));
        } else {
            parts.push(format!("write op {} ({})", ms(w), inner.join(", ")));
        }
    }
    if parts.is_empty() {
        return format!("no client op completed on the {} OSD(s) read", c.osds);
    }
    // Means over all ops, where they are not shown as parts of the one kind of op.
    let mut all_ops = Vec::new();
    if mixed {
        all_ops.extend(queue.iter().cloned());
    }
    if mixed
        && c.bluestore_reads_per_op()
            .is_some_and(|r| r >= MIN_OP_SHARE)
    {
        if let Some(b) = c.bluestore_read_secs {
            all_ops.push(format!("BlueStore read {}", ms(b)));
        }
    }
    let all_ops = if all_ops.is_empty() {
        String::new()
    } else {
        format!("; over all ops: {}", all_ops.join(", "))
    };
    let reads = c
        .bluestore_reads_per_op()
        .filter(|r| *r >= MIN_OP_SHARE)
        .map(|r| {
            let each = c
                .bluestore_read_secs
                .filter(|_| !workload_reads)
                .map(|b| format!(", {} each", ms(b)))
                .unwrap_or_default();
            format!("; {r:.2} BlueStore reads per client op{each}")
        })
        .unwrap_or_default();
    let cpu = c
        .cpu_secs_per_op()
        .map(|s| format!("; OSD CPU {:.1} µs per op", s * 1e6))
        .unwrap_or_default();
    format!(
        "OSD counters over {} OSD(s), mean per op: {}{all_ops}{reads}{cpu}",
        c.osds,
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::RwPattern;

    const W: RwPattern = RwPattern::Randwrite;

    fn lab_dump(dir: &str) -> serde_json::Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("calibration-data/lab/lone-io-1osd")
            .join(dir)
            .join("osd.0-perf-dump.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// A dump of the same shape with every time counter and op count at zero: what the lab
    /// campaign's `perf reset all` left before its run.
    fn zeroed(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), zeroed(v))).collect())
            }
            serde_json::Value::Number(_) => serde_json::json!(0),
            other => other.clone(),
        }
    }

    #[test]
    fn the_lab_campaigns_means_come_out_of_its_dump() {
        // calibration-data/lab/README.md, "lone-io-1osd": the counters were reset before
        // the run, so its dump is the change over the run: write op 0.682 ms, op-thread
        // wait 0.036 ms, BlueStore commit 0.582 ms, WAL sync 0.483 ms.
        let after = lab_dump("osd1-randwrite-qd1");
        let before = zeroed(&after);
        let c = counter_means(
            &BTreeMap::from([(0, before)]),
            &BTreeMap::from([(0, after)]),
        );
        assert_eq!((c.osds, c.write_ops), (1, 21262.0));
        let near = |v: Option<f64>, want: f64| (v.unwrap() - want).abs() < 0.0005e-3;
        assert!(near(c.op_write_secs, 0.682e-3), "{c:?}");
        assert!(near(c.op_queue_wait_secs, 0.036e-3), "{c:?}");
        assert!(near(c.bluestore_commit_secs, 0.582e-3), "{c:?}");
        assert!(near(c.kv_sync_secs, 0.483e-3), "{c:?}");
        let line = counters_line(&c, W);
        assert!(line.contains("write op 0.682 ms"), "{line}");
        assert!(line.contains("of which the WAL sync 0.483 ms"), "{line}");
        // 21,588 transactions over 21,356 WAL syncs: one write at a time batches alone.
        assert_eq!((c.transactions, c.kv_syncs), (21588.0, 21356.0));
        assert!(line.contains("; 1.0 transactions per WAL sync"), "{line}");
        // Its 80 reads (0.4 % of the ops: the image's metadata) are not the workload's.
        assert_eq!(c.read_ops, 80.0);
        assert!(!line.contains("read op"), "{line}");
        // The read run: read op 0.160 ms, BlueStore read 0.106 ms.
        let after = lab_dump("osd1-randread-qd1");
        let c = counter_means(
            &BTreeMap::from([(0, zeroed(&after))]),
            &BTreeMap::from([(0, after)]),
        );
        assert!(near(c.op_read_secs, 0.160e-3), "{c:?}");
        assert!(near(c.bluestore_read_secs, 0.106e-3), "{c:?}");
        // 53,232 BlueStore reads for 52,284 client reads and 515 writes: one device read
        // per client read on a replicated pool (1.01 per op with the image's metadata).
        assert_eq!(c.bluestore_reads, 53232.0);
        let line = counters_line(&c, RwPattern::Randread);
        assert!(
            line.contains("; 1.01 BlueStore reads per client op"),
            "{line}"
        );
    }

    #[test]
    fn bluestore_reads_per_op_show_a_writes_read_modify_write() {
        // A partial-stripe write on an erasure-coded pool before Tentacle reads the stripe's
        // k data chunks first: 2+1, 1,000 client writes, 2,000 BlueStore reads over the OSDs.
        let dump = |writes: f64, reads: f64| {
            serde_json::json!({
                "osd": {"op_w": writes, "op_w_latency": {"avgcount": writes, "sum": writes * 1e-3}},
                "bluestore": {"read_lat": {"avgcount": reads, "sum": reads * 1e-4}},
            })
        };
        let c = counter_means(
            &BTreeMap::from([(0, dump(0.0, 0.0))]),
            &BTreeMap::from([(0, dump(1000.0, 2000.0))]),
        );
        assert_eq!(c.bluestore_reads_per_op(), Some(2.0));
        assert!(counters_line(&c, W).contains("; 2.00 BlueStore reads per client op"));
        // A write-only point without reads says nothing about them.
        let c = counter_means(
            &BTreeMap::from([(0, dump(0.0, 0.0))]),
            &BTreeMap::from([(0, dump(1000.0, 0.0))]),
        );
        assert!(!counters_line(&c, W).contains("BlueStore reads"));
    }

    /// Finding 8 of the lab audit: an EC randwrite point at iodepth 1 (1,028 writes, 17
    /// reads of the image's metadata, 2,000 BlueStore reads of the writes'
    /// read-modify-write) showed "read op 0.104 ms (op-thread wait 0.115 ms, BlueStore read
    /// 0.138 ms)": parts larger than the whole, because both are means over all ops.
    #[test]
    fn all_ops_means_are_not_shown_as_parts_of_the_read_op() {
        let dump = |w: f64, r: f64, store_reads: f64| {
            serde_json::json!({
                "osd": {
                    "op_w": w, "op_w_latency": {"avgcount": w, "sum": w * 3.27e-3},
                    "op_r": r, "op_r_latency": {"avgcount": r, "sum": r * 0.104e-3},
                    "op_before_dequeue_op_lat": {"avgcount": w + r, "sum": (w + r) * 0.115e-3},
                },
                "bluestore": {"read_lat": {"avgcount": store_reads, "sum": store_reads * 0.138e-3}},
            })
        };
        let c = counter_means(
            &BTreeMap::from([(0, dump(0.0, 0.0, 0.0))]),
            &BTreeMap::from([(0, dump(1028.0, 17.0, 2000.0))]),
        );
        let line = counters_line(&c, RwPattern::Randwrite);
        assert!(
            line.contains("read op 0.104 ms (17 reads of the images' headers and metadata, not the workload's)"),
            "{line}"
        );
        assert!(!line.contains("read op 0.104 ms (op-thread"), "{line}");
        // The queue wait goes with the writes (nearly all the ops), the BlueStore read
        // latency with the BlueStore reads' count.
        assert!(
            line.contains("write op 3.270 ms (op-thread wait 0.115 ms"),
            "{line}"
        );
        assert!(
            line.contains("BlueStore reads per client op, 0.138 ms each"),
            "{line}"
        );
        // A read workload: the breakdown stays inside its read op.
        let line = counters_line(&c, RwPattern::Randread);
        assert!(
            line.contains("read op 0.104 ms (op-thread wait 0.115 ms, BlueStore read 0.138 ms)"),
            "{line}"
        );
        // A mixed one: both means after the ops, labelled as over all ops.
        let line = counters_line(&c, RwPattern::Randrw);
        assert!(
            line.contains("read op 0.104 ms; write op 3.270 ms; "),
            "{line}"
        );
        assert!(
            line.contains("; over all ops: op-thread wait 0.115 ms, BlueStore read 0.138 ms"),
            "{line}"
        );
    }

    #[test]
    fn means_are_changes_summed_over_osds_and_a_restart_counts_from_zero() {
        let dump = |ops: f64, sum: f64| {
            serde_json::json!({
                "osd": {"op_w": ops, "op_w_latency": {"avgcount": ops, "sum": sum}},
            })
        };
        // osd.0: 100 → 300 ops taking 0.1 → 0.5 s (200 ops, 0.4 s); osd.1 restarted: its
        // counters fell from 1000 to 50 ops (50 ops, 0.2 s since); osd.2 appears only after.
        let before = BTreeMap::from([(0, dump(100.0, 0.1)), (1, dump(1000.0, 9.0))]);
        let after = BTreeMap::from([
            (0, dump(300.0, 0.5)),
            (1, dump(50.0, 0.2)),
            (2, dump(7.0, 7.0)),
        ]);
        let c = counter_means(&before, &after);
        assert_eq!((c.osds, c.write_ops), (2, 250.0));
        assert!((c.op_write_secs.unwrap() - 0.6 / 250.0).abs() < 1e-15);
        // No read ran, and this release lacks the other counters.
        assert_eq!(
            (c.read_ops, c.op_read_secs, c.kv_sync_secs),
            (0.0, None, None)
        );
        assert!(counters_line(&c, W).starts_with("OSD counters over 2 OSD(s)"));
    }

    /// One directory of a lab campaign (`calibration-data/lab/CAMPAIGN/DIR`, `cephplan
    /// validate --osd-counters` as it wrote it): the scenario `lab up` wrote and the points.
    fn campaign_dir(campaign: &str, dir: &str) -> (String, Vec<crate::validate::PointResult>) {
        let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("calibration-data/lab")
            .join(campaign)
            .join(dir);
        let file = |prefix: &str, ext: &str| {
            std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    p.extension().is_some_and(|x| x == ext)
                        && p.file_name().unwrap().to_string_lossy().starts_with(prefix)
                })
                .unwrap()
        };
        let report: crate::validate::ValidationReport =
            serde_json::from_str(&std::fs::read_to_string(file("validation-", "json")).unwrap())
                .unwrap();
        let scenario = std::fs::read_to_string(file("scenario-", "toml")).unwrap();
        (scenario, report.points)
    }

    /// The directories of a lab campaign (`calibration-data/lab/CAMPAIGN/`) whose names start
    /// with `prefix`, sorted.
    fn campaign_dirs(campaign: &str, prefix: &str) -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("calibration-data/lab")
            .join(campaign);
        let mut dirs: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(prefix))
            .collect();
        dirs.sort();
        dirs
    }

    /// One directory of the write-batch campaign (`calibration-data/lab/write-batch-2vcpu/`).
    fn batch_campaign(dir: &str) -> (String, Vec<crate::validate::PointResult>) {
        campaign_dir("write-batch-2vcpu", dir)
    }

    /// The lab scenario of a campaign point with fio beside the OSDs on the same two cores
    /// and the point's images and depth, predicted with the shipped model.
    fn predict_lab_point(
        text: &str,
        pattern: &str,
        images: u32,
        iodepth: u32,
    ) -> crate::predict::PredictionReport {
        let text = crate::qn::ceph::tests::lab_clients_colocated(text);
        predict_lab_scenario(&text, pattern, images, iodepth)
    }

    /// A scenario `lab up` wrote (its workload 1 image × iodepth 16 of 4k random writes)
    /// at `pattern`, `images` and `iodepth`, predicted with the shipped model.
    fn predict_lab_scenario(
        text: &str,
        pattern: &str,
        images: u32,
        iodepth: u32,
    ) -> crate::predict::PredictionReport {
        let (img, depth, rw) = (
            "images = 1\n",
            "iodepth = 16\n",
            "pattern = \"randwrite\"\n",
        );
        assert!(text.contains(img) && text.contains(depth) && text.contains(rw));
        let t = text
            .replace(img, &format!("images = {images}\n"))
            .replace(depth, &format!("iodepth = {iodepth}\n"))
            .replace(rw, &format!("pattern = \"{pattern}\"\n"))
            // The campaigns' images (256 MiB, calibration-data/lab/README.md): 32 of the
            // scenario's 1 GiB would not fit on the lab's 10 GiB OSD, which cephplan refuses.
            .replace("image_size = \"1G\"", "image_size = \"256M\"");
        let s = crate::spec::parse_scenario(&t, "lab", &crate::spec::Catalogue::builtin()).unwrap();
        assert_eq!((s.images, s.iodepth), (images, iodepth));
        let shipped = crate::model::ModelParams::shipped_default();
        crate::predict::predict(&s, &shipped, &Default::default()).unwrap()
    }

    /// `(I/Os in flight, measured BlueStore transactions per WAL sync)` of each point.
    fn measured_batches(points: &[crate::validate::PointResult]) -> Vec<(u32, f64)> {
        points
            .iter()
            .map(|p| {
                let c = p.osd_counters.expect("the campaign read the counters");
                (
                    p.setting.images * p.setting.iodepth,
                    c.transactions_per_sync().expect("writes were synced"),
                )
            })
            .collect()
    }

    /// The lab's measured write batches (2026-12-06, session 33; `lab/README.md`): 4k
    /// random writes from 4 images at iodepth 1-64 on 1 OSD and on 4 OSDs sharing the VM's
    /// two cores and one backing store, two repetitions each. Measured, per OSD: the batch
    /// grows with the writes in flight, and at the same total load 4 OSDs batch fewer
    /// writes each than 1 OSD (the mechanism behind the model's "one more drive, fewer
    /// IOPS" on a node short of cores, `tests/physical_sanity.rs`, is real). The shipped
    /// model's batch per OSD, fio sharing the OSDs' cores as it did, lies within a factor
    /// of three of the measured one wherever at most 128 writes are in flight per OSD
    /// (0.42-2.4× today). The measured batches follow one curve, 0.94 × (writes in flight
    /// per OSD)^0.43, while the model's grow in proportion to the OSD CPU's queue: where a
    /// device binds they stop early (1 OSD, first repetition, 128 in flight: 0.42× the
    /// measured), where the cores bind they outgrow it (1 OSD, second repetition, 256 in
    /// flight: 4.5×). The same law on the model's queue (`b = (q/g)^β`, β = 0.43 / 0.7 /
    /// 0.85) did not lower the leave-one-system-out error (`models/not-adopted.md`).
    #[test]
    fn per_osd_write_batches_are_measured_and_the_model_s_are_within_three_times() {
        for rep in ["r1", "r2"] {
            let one = measured_batches(&batch_campaign(&format!("osd1-randwrite-{rep}")).1);
            let four = measured_batches(&batch_campaign(&format!("osd4-randwrite-{rep}")).1);
            let loads: Vec<u32> = one.iter().map(|p| p.0).collect();
            assert_eq!(loads, [4, 8, 16, 32, 64, 128, 256]);
            assert_eq!(four.iter().map(|p| p.0).collect::<Vec<_>>(), loads);
            // Growing with load through 64 in flight (the device's noise at 128-256 on
            // one OSD breaks the order there once).
            for b in [&one, &four] {
                assert!(b[..5].windows(2).all(|w| w[1].1 > w[0].1), "{rep}: {b:?}");
            }
            // Fewer per OSD on 4 OSDs at the same load, 8 to 128 in flight.
            for i in 1..6 {
                assert!(
                    four[i].1 < one[i].1,
                    "{rep}, {} in flight: {four:?} {one:?}",
                    loads[i]
                );
            }
        }
        let mut ratios = Vec::new();
        for dir in [
            "osd1-randwrite-r1",
            "osd1-randwrite-r2",
            "osd4-randwrite-r1",
            "osd4-randwrite-r2",
        ] {
            let (text, points) = batch_campaign(dir);
            for (p, (_, measured)) in points.iter().zip(measured_batches(&points)) {
                // fio ran beside the OSDs on the same two cores.
                let r = predict_lab_point(&text, "randwrite", p.setting.images, p.setting.iodepth);
                let predicted = r.write_batch_per_osd.expect("writes batch");
                ratios.push((dir, p.setting.iodepth, predicted / measured));
            }
        }
        assert_eq!(ratios.len(), 28);
        // Within 3× at up to 128 writes in flight per OSD (26 of the 28 points; the two
        // 1-OSD points at 256 in flight are the known gap above, 0.64× and 4.5× today).
        let per_osd =
            |dir: &str, depth: u32| 4 * depth / if dir.starts_with("osd4") { 4 } else { 1 };
        for (dir, depth, ratio) in ratios.iter().filter(|(d, q, _)| per_osd(d, *q) <= 128) {
            assert!(
                (1.0 / 3.0..=3.0).contains(ratio),
                "{dir} iodepth {depth}: predicted/measured {ratio:.2}; all: {ratios:?}"
            );
        }
        assert_eq!(
            ratios
                .iter()
                .filter(|(d, q, _)| per_osd(d, *q) <= 128)
                .count(),
            26
        );
    }

    /// Little's law on BlueStore's `kv_sync_thread`: the transactions one WAL sync commits
    /// are those that reached the commit queue while the previous sync ran, so a batch
    /// holds the OSD's write rate times the sync's duration (`L = λW`). Over every write
    /// point of the two lab campaigns that read the counters (`write-batch-2vcpu`: 1 and 4
    /// OSDs beside fio on two cores; `osd-count-1core-pinned`: 1, 2 and 4 OSDs on one core,
    /// fio on the other; 64 points), the measured transactions per sync against the
    /// per-OSD client write rate (fio's IOPS / OSDs, one replica) × the mean
    /// `bluestore.kv_sync_lat`: within 0.95-1.35× wherever that product is 3 or more
    /// (within 0.95-1.10× on the pinned campaign), and never below it by more than 5 %
    /// anywhere; below 3 it lies between that product and one more (a sync commits at
    /// least the transaction that woke it: 1.08 at a product of 0.41). What it says for the model (lab/README.md): its per-OSD
    /// batch follows the CPU queue, not the sync time; on the lab's slow file-backed WAL
    /// the sync time, not the cores, sets the batch.
    #[test]
    fn an_osd_write_batch_is_its_write_rate_times_the_wal_sync_time() {
        let mut points = 0;
        for (campaign, osds, reps) in [
            ("write-batch-2vcpu", &[1u32, 4][..], &["r1", "r2"][..]),
            ("osd-count-1core-pinned", &[1, 2, 4], &["r1", "r2", "r3"]),
        ] {
            for n in osds {
                for rep in reps {
                    let (_, pts) = campaign_dir(campaign, &format!("osd{n}-randwrite-{rep}"));
                    for p in &pts {
                        let c = p.osd_counters.expect("the campaign read the counters");
                        let batch = c.transactions_per_sync().expect("writes were synced");
                        let rate = p.iops.measured.expect("fio measured") / f64::from(*n);
                        let little = rate * c.kv_sync_secs.expect("Pacific counts syncs");
                        let ratio = batch / little;
                        let at = format!("{campaign} osd{n} {rep} iodepth {}", p.setting.iodepth);
                        assert!(batch >= 1.0 && ratio >= 0.95, "{at}: {batch} vs {little}");
                        if little >= 3.0 {
                            let most = if campaign.starts_with("osd-count") {
                                1.10
                            } else {
                                1.35
                            };
                            assert!(ratio <= most, "{at}: {batch} vs {little}");
                        }
                        if little < 3.0 {
                            assert!(batch <= 1.0 + little, "{at}: {batch} vs {little}");
                        }
                        points += 1;
                    }
                }
            }
        }
        assert_eq!(points, 2 * 2 * 7 + 3 * 3 * 4);
    }

    /// The shipped model's IOPS for a point of the pinned campaign: its scenario (one core
    /// for the OSD node, a separate one-core client) at the point's pattern, images and
    /// depth.
    fn predict_pinned_point(text: &str, pattern: &str, images: u32, iodepth: u32) -> f64 {
        let s =
            crate::spec::parse_scenario(text, "lab", &crate::spec::Catalogue::builtin()).unwrap();
        assert_eq!((s.node_cpu.cores, s.client_cpu.cores), (1, 1));
        predict_lab_scenario(text, pattern, images, iodepth).iops
    }

    /// More OSDs on one core, measured (`calibration-data/lab/osd-count-1core-pinned/`,
    /// session 36): 1, 2 and 4 OSDs pinned to one CPU with the monitor and the manager, fio
    /// on the other CPU (a separate client), 4 images at iodepth 1-64, three repetitions
    /// (the third with the OSD counts in reverse order). IOPS against 1 OSD in the same
    /// repetition, geometric mean of the three: reads 0.75-0.91 with 2 OSDs and 0.46-0.56
    /// with 4, writes 0.72-0.86 and 0.55-0.77, at every load. The shipped model loses
    /// write IOPS there too wherever 16 or more writes are in flight (its per-OSD batches,
    /// which the counters confirm halve with each doubling of the OSDs), but keeps the
    /// reads flat (0.96-1.06): on a node that runs fewer than one OSD at a time
    /// (`osd_busy_threads`, "Time-shared cores") its messenger coalescing groups do not
    /// thin as OSDs are added. That rule lowers the leave-one-system-out error (without it
    /// 26.31 % against 24.84 %), so it stays; the reads on one core are the recorded gap.
    #[test]
    fn more_osds_on_one_core_cost_reads_and_writes_and_the_model_sees_the_writes() {
        let reps = ["r1", "r2", "r3"];
        let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
        for pattern in ["randread", "randwrite"] {
            let runs: std::collections::BTreeMap<
                (u32, &str),
                (String, Vec<crate::validate::PointResult>),
            > = [1u32, 2, 4]
                .iter()
                .flat_map(|n| reps.iter().map(move |r| (*n, *r)))
                .map(|(n, r)| {
                    (
                        (n, r),
                        campaign_dir("osd-count-1core-pinned", &format!("osd{n}-{pattern}-{r}")),
                    )
                })
                .collect();
            for (i, depth) in [1u32, 4, 16, 64].into_iter().enumerate() {
                let iops = |n: u32, r: &str| {
                    let p = &runs[&(n, r)].1[i];
                    assert_eq!((p.setting.images, p.setting.iodepth), (4, depth));
                    p.iops.measured.unwrap()
                };
                let measured = |n: u32| geo(&reps.map(|r| iops(n, r) / iops(1, r)));
                let (two, four) = (measured(2), measured(4));
                let at = format!("{pattern}, 4 images × iodepth {depth}");
                assert!(two < 0.92 && four < two, "{at}: ×{two:.3} / ×{four:.3}");
                let text = &runs[&(1, "r1")].0;
                let model = |n: u32| {
                    let t = &runs[&(n, "r1")].0;
                    predict_pinned_point(t, pattern, 4, depth)
                        / predict_pinned_point(text, pattern, 4, depth)
                };
                let (m2, m4) = (model(2), model(4));
                if pattern == "randwrite" && depth >= 4 {
                    assert!(m2 < 1.0 && m4 < m2, "{at}: model ×{m2:.3} / ×{m4:.3}");
                }
                if pattern == "randread" {
                    // The recorded gap: the model's reads stay within 5 % of flat, the
                    // measured lose more than twice that.
                    assert!(m2 > 0.95 && m4 > 0.95, "{at}: model ×{m2:.3} / ×{m4:.3}");
                }
            }
        }
    }

    /// Every repetition of one split of the coalescing campaign
    /// (`calibration-data/lab/coalescing-2vcpu/osd1-PATTERN-{images}img-qd{iodepth}-r*`):
    /// the scenario `lab up` wrote and the measured OSD CPU seconds per op of each.
    fn coalescing_split(pattern: &str, images: u32, iodepth: u32) -> (String, Vec<f64>) {
        let dirs = campaign_dirs(
            "coalescing-2vcpu",
            &format!("osd1-{pattern}-{images}img-qd{iodepth}-r"),
        );
        let mut scenario = String::new();
        let mut per_op = Vec::new();
        for dir in &dirs {
            let (text, points) = campaign_dir("coalescing-2vcpu", dir);
            let [p] = &points[..] else {
                panic!("{dir}: one point per directory")
            };
            assert_eq!((p.setting.images, p.setting.iodepth), (images, iodepth));
            let c = p.osd_counters.expect("the campaign read the counters");
            per_op.push(
                c.cpu_secs_per_op()
                    .expect("the lab's OSD ran on this machine"),
            );
            scenario = text;
        }
        (scenario, per_op)
    }

    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len() as f64
    }

    /// The lab's measured messenger coalescing (2026-12-06, session 34; `lab/README.md`):
    /// one OSD on the VM's two cores with fio beside it, 32 4k I/Os in flight from one
    /// client at iodepth 32 or from 32 clients at iodepth 1, five repetitions each, the
    /// OSD process's CPU time per op read from /proc. One client's queue saves 27.4 % of a
    /// read's OSD CPU and 14.7 % of a write's: a write's saving is 0.54 of a read's, the
    /// shipped `osd_msg_coalesce_write_factor` (it lowered the leave-one-system-out IOPS
    /// MAPE 25.89 → 24.84 %). Both sit below a lone op's cost (one client at iodepth 1):
    /// the OSD's queue and a write's batch save part of it whatever the split. The shipped
    /// model, told the same, saves less for writes than for reads too, and saves more than
    /// the two cores measure (the known gap: the lab's threads rarely sleep, the corpus's
    /// larger hosts' do; README, status).
    #[test]
    fn a_write_coalesces_about_half_as_much_as_a_read_as_the_lab_measures() {
        let mut saved = Vec::new();
        let mut model_saved = Vec::new();
        for pattern in ["randread", "randwrite"] {
            let (text, one) = coalescing_split(pattern, 1, 32);
            let (_, many) = coalescing_split(pattern, 32, 1);
            let (_, lone) = coalescing_split(pattern, 1, 1);
            assert_eq!((one.len(), many.len(), lone.len()), (5, 5, 2), "{pattern}");
            let (one, many, lone) = (mean(&one), mean(&many), mean(&lone));
            assert!(one < many && many < lone, "{pattern}: {one} {many} {lone}");
            saved.push(1.0 - one / many);
            let f = |images, depth| {
                predict_lab_point(&text, pattern, images, depth)
                    .osd_cpu_demand_factor
                    .expect("OSD CPU work")
            };
            let (f_one, f_many) = (f(1, 32), f(32, 1));
            assert!(
                f_one < f_many && f_many <= 1.0,
                "{pattern}: {f_one} {f_many}"
            );
            model_saved.push(1.0 - f_one / f_many);
        }
        eprintln!("measured saved {saved:?}, model saved {model_saved:?}");
        assert!(
            (saved[0] - 0.274).abs() < 0.0005 && (saved[1] - 0.147).abs() < 0.0005,
            "{saved:?}"
        );
        let factor = crate::model::ModelParams::shipped_default()
            .get(crate::model::names::MSG_COALESCE_WRITE_FACTOR)
            .expect("the shipped model sets the write factor");
        assert!(
            (saved[1] / saved[0] - factor).abs() < 0.005,
            "{saved:?} against {factor}"
        );
        // The model: writes save less than reads, and both more than on the two cores.
        assert!(model_saved[1] < model_saved[0], "{model_saved:?}");
        for (m, s) in model_saved.iter().zip(&saved) {
            assert!(m > s, "{model_saved:?} against measured {saved:?}");
        }
    }

    /// Every point of the lab's CPU-per-byte campaign (`calibration-data/lab/
    /// cpu-per-byte-1core-pinned/`, session 51) for `pattern`: `(block size in bytes, the
    /// OSD process's CPU seconds per client op)`, over the repetitions, with the scenario
    /// `lab up` wrote.
    fn per_byte_campaign(pattern: &str) -> (String, Vec<(f64, f64)>) {
        let campaign = "cpu-per-byte-1core-pinned";
        let dirs = campaign_dirs(campaign, &format!("osd1-{pattern}-r"));
        let mut scenario = String::new();
        let mut points = Vec::new();
        for dir in &dirs {
            let (text, run) = campaign_dir(campaign, dir);
            for p in &run {
                assert_eq!((p.setting.images, p.setting.iodepth), (1, 4), "{dir}");
                let c = p.osd_counters.expect("the campaign read the counters");
                let per_op = c
                    .cpu_secs_per_op()
                    .expect("the lab's OSD ran on this machine");
                points.push((p.setting.block_size_bytes as f64, per_op));
            }
            scenario = text;
        }
        (scenario, points)
    }

    /// Least-squares line `y = a + b·x` through `(x, y)` points: `(a, b)`.
    fn line(points: &[(f64, f64)]) -> (f64, f64) {
        let n = points.len() as f64;
        let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
        let my = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let b = sxy / sxx;
        (my - b * mx, b)
    }

    /// The lab's measured CPU per byte through an OSD (2026-12-07, session 51; `lab/
    /// README.md`, "cpu-per-byte-1core-pinned"): one BlueStore OSD pinned to one core, fio on
    /// the other, one image at 4 in flight, 4 KiB to 1 MiB, three repetitions. The OSD
    /// process's CPU seconds per op grow linearly with the block, by the same amount per
    /// byte whether the byte is read or written (writes taken from 256 KiB, above Pacific's
    /// `bluestore_prefer_deferred_size_hdd` = 64 KiB: the lab's file-backed OSD counts as
    /// rotational, and a smaller write also passes through the WAL). The shipped model's
    /// one `cpu_gcycles_per_byte` for both directions is what this supports; its value,
    /// held at 1.5 cycles by the leave-one-system-out scan, is below the lab's on this
    /// virtual machine's cores (whose speed against the model's Zen 2 reference is not
    /// known) but of its size. The line's per-op part, 95.0 µs a read, is the shipped
    /// per-op read cost at the lab's 2.6 GHz (99.3 µs) to 5 %.
    #[test]
    fn an_osd_pays_the_same_cpu_for_a_byte_read_or_written_as_the_lab_measures() {
        let (text, reads) = per_byte_campaign("randread");
        let (_, writes) = per_byte_campaign("randwrite");
        assert_eq!((reads.len(), writes.len()), (15, 15));
        let direct: Vec<(f64, f64)> = writes
            .iter()
            .copied()
            .filter(|(bs, _)| *bs >= 262_144.0)
            .collect();
        assert_eq!(direct.len(), 6);
        let (read_op_secs, read_secs_per_byte) = line(&reads);
        let (_, write_secs_per_byte) = line(&direct);
        // Cycles per byte at the lab scenario's clock and the model's speed for its CPU.
        let s =
            crate::spec::parse_scenario(&text, "lab", &crate::spec::Catalogue::builtin()).unwrap();
        let shipped = crate::model::ModelParams::shipped_default();
        let (speed, _) = shipped.cpu_efficiency(&s.node_cpu).unwrap();
        let cycles = |secs_per_byte: f64| secs_per_byte * s.node_cpu.ghz * 1e9 * speed;
        let (read_cycles, write_cycles) = (cycles(read_secs_per_byte), cycles(write_secs_per_byte));
        eprintln!(
            "lab: {read_cycles:.2} cycles per byte read, {write_cycles:.2} written; a read op {:.1} µs",
            read_op_secs * 1e6
        );
        assert!(
            (1.8..2.4).contains(&read_cycles) && (1.8..2.4).contains(&write_cycles),
            "{read_cycles} {write_cycles}"
        );
        assert!(
            (read_cycles / write_cycles - 1.0).abs() < 0.10,
            "{read_cycles} {write_cycles}"
        );
        // The per-op part of a read is the shipped per-op read cost on these cores.
        let model_op_secs =
            shipped.get(crate::model::names::OSD_CPU_READ).unwrap() / (s.node_cpu.ghz * speed);
        assert!(
            (read_op_secs / model_op_secs - 1.0).abs() < 0.10,
            "lab {read_op_secs} s, shipped {model_op_secs} s"
        );
        let model_cycles = shipped.get(crate::model::names::CPU_PER_BYTE).unwrap() * 1e9;
        let ratio = model_cycles / (0.5 * (read_cycles + write_cycles));
        assert!(
            (0.6..1.0).contains(&ratio),
            "shipped {model_cycles} cycles: {ratio}"
        );
    }
}

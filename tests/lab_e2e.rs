//! End-to-end against a real local Ceph cluster brought up by `lab::up` (1 mon, 1 mgr, 3
//! BlueStore OSDs, pool size 1) and torn down by a guard even when a check fails. Skipped,
//! loudly, only when the Ceph or fio binaries are absent (`scripts/test.sh` installs them).
//!
//! One test function runs the steps in order so that a single cluster serves them all
//! (bring-up costs ~40 s on 2 cores); each step says what it checks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use cephplan::fio::{
    Executor, FioError, FioRunOutput, FioTarget, ProcessExecutor, RbdJob, RwPattern,
};
use cephplan::lab::{self, LabSpec};
use cephplan::progress::{NoProgress, Progress};
use cephplan::validate::{self, PointSetting, ValidateError, ValidateSpec, Vary};

struct LabGuard(PathBuf);

impl Drop for LabGuard {
    fn drop(&mut self) {
        if let Err(e) = lab::down(&self.0) {
            eprintln!("lab teardown of {} failed: {e}", self.0.display());
        }
    }
}

/// The second (CPU-pinned) lab's ports sit this far above the first's: both blocks of 200,
/// and the fio server 300 above the second's start, stay under 32768 for any PID (first
/// block at most 10000 + 55 × 200 = 21000, so the fio server at most 32500).
const SECOND_LAB_OFFSET: u16 = 11_200;

/// `rbd ARGS` against the lab's cluster.
fn rbd(conf: &Path, args: &[&str]) -> std::process::Output {
    Command::new("rbd")
        .env("CEPH_CONF", conf)
        .args(args)
        .output()
        .unwrap()
}

/// `cephplan validate --scenario SCENARIO --ceph-conf CONF ARGS --format json --out OUT`,
/// which must succeed; its standard output.
fn validate_cli(scenario: &Path, conf: &Path, out: &Path, args: &[&str]) -> Vec<u8> {
    assert_cmd::Command::cargo_bin("cephplan")
        .unwrap()
        .args(["validate", "--scenario"])
        .arg(scenario)
        .arg("--ceph-conf")
        .arg(conf)
        .args(args)
        .args(["--format", "json", "--out"])
        .arg(out)
        .timeout(Duration::from_secs(600))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

fn rbd_ls(conf: &Path) -> Vec<String> {
    let out = rbd(conf, &["ls", "-p", lab::LAB_POOL, "--format", "json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}

fn spec(scenario: &Path, conf: &Path, out: &Path, vary: &str, pattern: RwPattern) -> ValidateSpec {
    ValidateSpec {
        scenario: scenario.to_path_buf(),
        ceph_conf: conf.to_path_buf(),
        pool: lab::LAB_POOL.into(),
        data_pool: None,
        clientname: "admin".into(),
        clients: vec![],
        base: PointSetting {
            pattern,
            block_size_bytes: 4096,
            iodepth: 4,
            images: 1,
            read_percent: None,
        },
        vary: Some(Vary::parse(vary).unwrap()),
        runtime_secs: 3,
        ramp_time_secs: 0,
        image_size_bytes: 64 << 20,
        out_dir: out.to_path_buf(),
        existing_image: None,
        i_own_this_image: None,
        run_id: validate::new_run_id() + "-" + &out.file_name().unwrap().to_string_lossy(),
        system_id: "lab".into(),
        osd_counters: false,
        fio_cpus: None,
    }
}

/// Kills (by PID) the fio child of this test process one second into the `kill_on`-th
/// run, like an operator or the OOM killer would.
struct KillingExecutor {
    inner: ProcessExecutor,
    runs: AtomicUsize,
    kill_on: usize,
}

/// Whether a TCP socket is listening on 127.0.0.1:`port`, read from `/proc/net/tcp` so the
/// check opens no connection of its own (fio's server forks one child per connection).
fn listening_on_loopback(port: u16) -> bool {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let local = format!("0100007F:{port:04X}");
    table.lines().skip(1).any(|line| {
        let mut cols = line.split_whitespace();
        // "sl local_address rem_address st ..."; st 0A is LISTEN.
        cols.nth(1) == Some(local.as_str()) && cols.nth(1) == Some("0A")
    })
}

fn fio_children() -> Vec<u32> {
    let me = std::process::id();
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // "pid (comm) state ppid ..."
        let Some(rest) = stat.rsplit_once(") ") else {
            continue;
        };
        let ppid: u32 = rest
            .1
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if ppid == me && stat.contains("(fio)") {
            pids.push(pid);
        }
    }
    pids
}

impl Executor for KillingExecutor {
    fn run(&self, job: &RbdJob, progress: &dyn Progress) -> Result<FioRunOutput, FioError> {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let killer = (n == self.kill_on).then(|| {
            std::thread::spawn(|| {
                // Wait for this point's fio to exist (image creation may be slow on a
                // loaded machine: a fixed delay could fire before fio starts and kill
                // nothing), then let it run briefly before killing it.
                let deadline = std::time::Instant::now() + Duration::from_secs(60);
                let mut pids = fio_children();
                while pids.is_empty() && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(100));
                    pids = fio_children();
                }
                std::thread::sleep(Duration::from_millis(500));
                for pid in pids {
                    let _ = Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                }
            })
        });
        let r = self.inner.run(job, progress);
        if let Some(k) = killer {
            k.join().unwrap();
        }
        r
    }
}

#[test]
fn lab_end_to_end() {
    if let Err(e) = lab::check_packages() {
        // A suite without the real cluster does not pass by default: the skip is asked for.
        assert!(
            std::env::var("CEPHPLAN_SKIP_LAB").as_deref() == Ok("1"),
            "the real-cluster test cannot run: {e}. Install Debian's Ceph 16.2 and fio \
             (scripts/test.sh does as root), or set CEPHPLAN_SKIP_LAB=1 to skip it knowingly"
        );
        eprintln!("\n!!!!! SKIPPING lab_end_to_end (CEPHPLAN_SKIP_LAB=1): {e}\n");
        return;
    }
    let root = tempfile::Builder::new()
        .prefix("cephplan-e2e-")
        .tempdir()
        .unwrap();
    let dir = root.path().join("lab");
    // Unique per test binary run: ports PORT..PORT+199 derived from the PID, and every port
    // this test binds (the second lab's block and the fio server below) under 32768, where
    // Linux's ephemeral range starts (`net.ipv4.ip_local_port_range`, 32768-60999 by
    // default): a listening port in that range can already be the local end of an outgoing
    // connection, and the fio server then exits at once (seen on CI with its port at 32950).
    let port = 10000 + (std::process::id() % 56) as u16 * 200;
    let report = lab::up(
        &LabSpec {
            osds: 3,
            osd_size_bytes: 4 << 30,
            erasure: Some(lab::LabErasure { k: 2, m: 1 }),
            ..LabSpec::new(&dir, port)
        },
        &NoProgress,
    )
    .expect("lab up");
    let _guard = LabGuard(report.dir.clone());
    let conf = report.ceph_conf.clone();
    let scenario = report.scenario.clone();
    let scen = std::fs::read_to_string(&scenario).unwrap();
    assert!(scen.contains("schema_version = 1") && scen.contains("kind = \"hdd\""));
    let state = lab::read_state(&report.dir).unwrap();
    assert_eq!(state.daemons.len(), 5, "mon, mgr, 3 OSDs recorded");
    // CBT audit F5: the monitor's cluster log (its first line `... mkfs <fsid>`) is under
    // DIR, and nothing of this lab in Ceph's default /var/log/ceph.
    let fsid = std::fs::read_to_string(&conf)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("fsid = ").map(str::to_string))
        .expect("fsid in the lab's ceph.conf");
    let cluster_log = std::fs::read_to_string(report.dir.join("log/ceph.log"))
        .expect("the cluster log under DIR/log");
    assert!(cluster_log.contains(&fsid), "{cluster_log}");
    for f in ["ceph.log", "ceph.audit.log"] {
        let outside =
            std::fs::read_to_string(Path::new("/var/log/ceph").join(f)).unwrap_or_default();
        assert!(
            !outside.contains(&fsid),
            "/var/log/ceph/{f} has this lab's fsid"
        );
    }

    // 1. A short randread sweep (pre-fill, two points) through the CLI with --refit:
    // completes, cleans up, and refits the model to the two points it just measured.
    let out = root.path().join("sweep");
    let stdout = validate_cli(
        &scenario,
        &conf,
        &out,
        &[
            "--pool",
            lab::LAB_POOL,
            "--vary",
            "iodepth=1,8",
            "--pattern",
            "randread",
            "--iodepth",
            "4",
            "--runtime",
            "3s",
            "--image-size",
            "64M",
            "--system-id",
            "lab",
            "--refit",
            "--osd-counters",
        ],
    );
    let doc: serde_json::Value = serde_json::from_slice(&stdout).expect("one JSON document");
    let rep: validate::ValidationReport =
        serde_json::from_value(doc["validation"].clone()).unwrap();
    assert_eq!(rep.points.len(), 2);
    // The pool's PG count, asked of the real cluster, is the one the lab created it with
    // and the one its scenario states, so no note.
    assert_eq!(
        (rep.pool_pg_num, rep.scenario_pg_count),
        (Some(32), Some(32))
    );
    // Likewise its protection (size 1) and its OSDs up (3), as the scenario states them.
    assert_eq!(
        rep.pool_protection,
        Some(cephplan::spec::Protection::Replicated { size: 1 })
    );
    assert_eq!((rep.osds_up, rep.scenario_osds), (Some(3), Some(3)));
    assert_eq!(rep.scenario_protection, rep.pool_protection);
    assert!(validate::pool_note_lines(&rep).is_empty());
    for p in &rep.points {
        assert!(p.measured.total_iops > 0.0, "measured IOPS > 0");
        assert!(p.measured.latency_mean_secs > 0.0);
        assert!(out.join(&p.raw_fio_json).is_file());
        // --osd-counters: the three OSDs' read ops over the point, each a part of what fio
        // waited for (the OSD op is inside the client's I/O, its BlueStore read inside the
        // op).
        let c = p
            .osd_counters
            .unwrap_or_else(|| panic!("no OSD counters: {:?}", p.osd_counters_error));
        assert_eq!(c.osds, 3);
        assert!(c.read_ops > 0.0, "{c:?}");
        let op = c.op_read_secs.expect("a read op latency");
        assert!(op > 0.0 && op < p.measured.latency_mean_secs, "{c:?}");
        let store = c.bluestore_read_secs.expect("a BlueStore read latency");
        assert!(store > 0.0 && store < op, "{c:?}");
        // The lab's OSDs run on this machine: their CPU time over the point is read from
        // /proc, a positive share of the machine's cores over the run (tens to hundreds
        // of microseconds per read on this machine, `calibration-data/lab/README.md`).
        let per_op = c.cpu_secs_per_op().expect("local OSDs' CPU time");
        assert!(per_op > 1e-6 && per_op < 10e-3, "{c:?}");
    }
    // The refit: both points with a prediction before and after, the fit's outcome, and
    // the refitted model in the output directory.
    let refit: validate::RefitReport = serde_json::from_value(doc["refit"].clone()).unwrap();
    assert_eq!(refit.points.len(), 2);
    for (p, v) in refit.points.iter().zip(&rep.points) {
        assert_eq!(p.run_id, v.run_id);
        assert_eq!(p.iops_before.measured, Some(v.measured.total_iops));
        assert!(p.iops_before.predicted.is_some() && p.iops_after.predicted.is_some());
    }
    assert!(refit.termination.evaluations > 0 && !refit.termination.cancelled);
    let model = cephplan::model::ModelParams::load(&out.join("refitted-model.toml"))
        .expect("refitted model written");
    assert_eq!(model.fitted_on.unwrap().runs, 2);
    let csv = std::fs::read_to_string(out.join(&rep.dataset_csv)).unwrap();
    assert_eq!(
        csv.lines().filter(|l| !l.starts_with('#')).count(),
        3,
        "header + 2 rows"
    );
    assert!(out.join(&rep.comparison_csv).is_file() && out.join(&rep.report_json).is_file());
    // The dataset is what `calibrate` reads: it must load through `data`.
    let (runs, _warnings) =
        cephplan::data::load_runs(&out.join(&rep.dataset_csv)).expect("dataset loads");
    assert_eq!(runs.len(), 2);
    assert!(
        !rbd_ls(&conf)
            .iter()
            .any(|i| i.starts_with(validate::IMAGE_PREFIX)),
        "validation images removed"
    );

    let exec = ProcessExecutor::new(&conf, FioTarget::Local, root.path());

    // 2. Writing to an image cephplan did not create is refused, and it survives.
    let foreign = "someone-elses-image";
    let spec_foreign = format!("{}/{foreign}", lab::LAB_POOL);
    let st = rbd(&conf, &["create", "--size", "16M", &spec_foreign]);
    assert!(st.status.success());
    let mut s2 = spec(
        &scenario,
        &conf,
        &root.path().join("foreign"),
        "iodepth=1",
        RwPattern::Randwrite,
    );
    s2.existing_image = Some(foreign.into());
    let e = validate::run(&s2, &exec, &validate::NoPredictor, &NoProgress).unwrap_err();
    assert!(matches!(e, ValidateError::ForeignImage { .. }), "{e}");
    assert!(e.to_string().contains("--i-own-this-image"));
    assert!(
        rbd_ls(&conf).iter().any(|i| i == foreign),
        "foreign image untouched"
    );

    // 3. A missing pool is a clear error.
    let mut s3 = spec(
        &scenario,
        &conf,
        &root.path().join("nopool"),
        "iodepth=1",
        RwPattern::Randwrite,
    );
    s3.pool = "nosuchpool".into();
    let e = validate::run(&s3, &exec, &validate::NoPredictor, &NoProgress).unwrap_err();
    assert!(matches!(e, ValidateError::PoolMissing { .. }), "{e}");
    s3.pool = lab::LAB_POOL.into();
    s3.data_pool = Some("nosuchpool".into());
    let e = validate::run(&s3, &exec, &validate::NoPredictor, &NoProgress).unwrap_err();
    assert!(matches!(e, ValidateError::DataPoolMissing { .. }), "{e}");
    assert!(e.to_string().contains("allow_ec_overwrites"), "{e}");

    // 3b. The 2+1 erasure-coded data pool (`lab up --ec 2+1`): an image created with a
    // data pool has its data there (`rbd info`), and a sweep through the CLI with
    // --data-pool and the EC scenario measures and predicts every point and removes its
    // images.
    let data_pool = report.data_pool.clone().expect("--ec names a data pool");
    assert_eq!(data_pool, lab::LAB_EC_POOL);
    let ec_scenario = report
        .scenario_ec
        .clone()
        .expect("--ec writes scenario-ec.toml");
    let ec_text = std::fs::read_to_string(&ec_scenario).unwrap();
    assert!(
        ec_text.contains("erasure = { k = 2, m = 1, stripe_unit = \"4k\" }"),
        "{ec_text}"
    );
    let cluster = validate::CephCluster::new(&conf, &NoProgress);
    let probe_image = format!("{}ec-probe", validate::IMAGE_PREFIX);
    validate::Cluster::create_image(&cluster, lab::LAB_POOL, Some(&data_pool), &probe_image, 16)
        .expect("rbd create --data-pool");
    let probe_spec = format!("{}/{probe_image}", lab::LAB_POOL);
    let info = rbd(&conf, &["info", "--format", "json", &probe_spec]);
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("rbd info JSON");
    assert_eq!(info["data_pool"], data_pool.as_str(), "{info}");
    validate::Cluster::remove_image(&cluster, lab::LAB_POOL, &probe_image).unwrap();
    let out_ec = root.path().join("ec");
    let stdout = validate_cli(
        &ec_scenario,
        &conf,
        &out_ec,
        &[
            "--pool",
            lab::LAB_POOL,
            "--data-pool",
            &data_pool,
            "--vary",
            "iodepth=1,4",
            "--pattern",
            "randwrite",
            "--runtime",
            "3s",
            "--image-size",
            "64M",
        ],
    );
    // Without --refit the JSON document is the validation report itself.
    let ec: validate::ValidationReport =
        serde_json::from_slice(&stdout).expect("a validation report");
    assert_eq!(ec.points.len(), 2);
    // The data pool's erasure-code profile, read from the cluster, is the scenario's 2+1.
    assert_eq!(
        ec.pool_protection,
        Some(cephplan::spec::Protection::Erasure { k: 2, m: 1 })
    );
    assert_eq!(ec.scenario_protection, ec.pool_protection);
    assert!(
        validate::pool_note_lines(&ec).is_empty(),
        "{:?}",
        validate::pool_note_lines(&ec)
    );
    for p in &ec.points {
        assert!(p.measured.total_iops > 0.0, "measured IOPS > 0");
        assert!(p.iops.predicted.is_some(), "{:?}", p.prediction_error);
    }
    assert!(!rbd_ls(&conf)
        .iter()
        .any(|i| i.starts_with(validate::IMAGE_PREFIX)));

    // 4. fio killed during the second point: the first point stays saved, images removed.
    let out4 = root.path().join("killed");
    let s4 = spec(
        &scenario,
        &conf,
        &out4,
        "iodepth=1,4,8",
        RwPattern::Randwrite,
    );
    let killing = KillingExecutor {
        inner: ProcessExecutor::new(&conf, FioTarget::Local, root.path()),
        runs: AtomicUsize::new(0),
        kill_on: 2,
    };
    let e = validate::run(&s4, &killing, &validate::NoPredictor, &NoProgress).unwrap_err();
    match &e {
        ValidateError::PointFailed { point, saved, .. } => {
            assert_eq!((*point, *saved), (2, 1), "{e}")
        }
        other => panic!("expected PointFailed, got {other}"),
    }
    let csv = std::fs::read_to_string(out4.join(format!("validation-{}.csv", s4.run_id))).unwrap();
    assert_eq!(
        csv.lines().filter(|l| !l.starts_with('#')).count(),
        2,
        "header + 1 saved row"
    );
    assert!(!rbd_ls(&conf)
        .iter()
        .any(|i| i.starts_with(validate::IMAGE_PREFIX)));

    // 5. Through fio's client/server mode: a fio server (CEPH_CONF in its environment,
    // bound to 127.0.0.1) runs the job; results come back under client_stats.
    // Outside the lab's daemon range (PORT+1 ..= PORT+199) and the second lab's (below).
    let fio_port = port + SECOND_LAB_OFFSET + 300;
    let mut server = Command::new("fio")
        .env("CEPH_CONF", &conf)
        .arg(format!("--server=ip:127.0.0.1,{fio_port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for its listening socket rather than a fixed time: a fixed 500 ms sleep lost the
    // race on a loaded CI machine ("fio: connect: Connection refused").
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !listening_on_loopback(fio_port) {
        if let Some(status) = server.try_wait().unwrap() {
            panic!("the fio server on 127.0.0.1:{fio_port} exited before listening: {status}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the fio server did not listen on 127.0.0.1:{fio_port} within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out5 = root.path().join("client");
    let mut s5 = spec(&scenario, &conf, &out5, "iodepth=4", RwPattern::Randwrite);
    s5.clients = vec![format!("127.0.0.1:{fio_port}")];
    let cexec = ProcessExecutor::new(&conf, FioTarget::Clients(s5.clients.clone()), root.path());
    let r5 = validate::run(&s5, &cexec, &validate::NoPredictor, &NoProgress);
    let _ = server.kill(); // the server we started, by its PID
    let _ = server.wait();
    let r5 = r5.expect("client/server sweep");
    assert_eq!(r5.points[0].measured.clients, 1);
    assert!(r5.points[0].measured.total_iops > 0.0);

    // 6. Cancellation (what Ctrl-C does) during the second point: fio is killed, the
    // first point stays saved, the images are removed.
    struct CancelAfterFirst(cephplan::progress::CancelToken);
    impl Progress for CancelAfterFirst {
        fn advance(&self, _n: u64) {
            let t = self.0.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1000));
                t.cancel();
            });
        }
        fn is_cancelled(&self) -> bool {
            self.0.is_cancelled()
        }
    }
    let s6 = spec(
        &scenario,
        &conf,
        &root.path().join("cancel"),
        "iodepth=1,4",
        RwPattern::Randwrite,
    );
    let e = validate::run(
        &s6,
        &exec,
        &validate::NoPredictor,
        &CancelAfterFirst(Default::default()),
    )
    .unwrap_err();
    // The sweep has two points: had fio run the second to its end, `run` would have
    // saved it and returned Ok. `Cancelled` with one saved point means fio was stopped
    // mid-point.
    assert!(
        matches!(e, ValidateError::Cancelled { saved: 1, .. }),
        "{e}"
    );
    // fio was stopped with SIGTERM and closed its image, so `rbd rm` removed it at once
    // and the error says so.
    assert!(
        e.to_string()
            .ends_with("the image cephplan created was removed"),
        "{e}"
    );
    assert!(!rbd_ls(&conf)
        .iter()
        .any(|i| i.starts_with(validate::IMAGE_PREFIX)));

    // 6b. Ctrl-C (one SIGINT to the cephplan this test started, by its PID) during a
    // point of a CLI sweep (lab audit finding 1): before, fio got SIGKILL, its image
    // stayed watched, and cephplan sat ~27 s in `rbd rm` before saying both "were
    // removed" and "could not be removed (an OSD is down…)". Now fio closes its image,
    // the image goes at once, and the message says so and nothing else.
    let out6b = root.path().join("ctrl-c");
    let child = Command::new(env!("CARGO_BIN_EXE_cephplan"))
        .args(["validate", "--no-predict", "--scenario"])
        .arg(&scenario)
        .arg("--ceph-conf")
        .arg(&conf)
        .args(["--pool", lab::LAB_POOL, "--vary", "iodepth=1,4"])
        .args(["--runtime", "20s", "--image-size", "64M", "--out"])
        .arg(&out6b)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // fio's job file exists while fio runs the first point.
    let job_file = || {
        std::fs::read_dir(&out6b)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("cephplan-job-"))
    };
    let t0 = std::time::Instant::now();
    while !job_file() {
        assert!(t0.elapsed() < Duration::from_secs(60), "fio never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3)); // into the point: fio has the image open
    let sent = std::time::Instant::now();
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        took < Duration::from_secs(20),
        "{took:?} from Ctrl-C to exit: {stderr}"
    );
    assert!(
        stderr.contains("cancelled during point 1 of 2; 0 completed point(s)")
            && stderr.contains("the image cephplan created was removed"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("could not be removed") && !stderr.contains("Logs are in"),
        "{stderr}"
    );
    assert!(!rbd_ls(&conf)
        .iter()
        .any(|i| i.starts_with(validate::IMAGE_PREFIX)));
    assert!(validate::records(&out6b).unwrap().is_empty());
    assert!(!job_file(), "fio's job file left in {}", out6b.display());

    // 7. An unreachable cluster is a timeout error, not a hang.
    let bad_conf = root.path().join("unreachable.conf");
    std::fs::write(
        &bad_conf,
        std::fs::read_to_string(&conf)
            .unwrap()
            .replace(&format!("127.0.0.1:{port}"), "127.0.0.1:1"),
    )
    .unwrap();
    let s7 = spec(
        &scenario,
        &bad_conf,
        &root.path().join("unreach"),
        "iodepth=1",
        RwPattern::Randwrite,
    );
    let t0 = std::time::Instant::now();
    let e = validate::run(&s7, &exec, &validate::NoPredictor, &NoProgress).unwrap_err();
    assert!(matches!(e, ValidateError::Unreachable { .. }), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(60));

    // 7b. `kill -9` of cephplan during a point (issue 17 item 7): the record of its
    // images is in the output directory, and `validate --cleanup` removes exactly them.
    let out7b = root.path().join("killed9");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cephplan"))
        .args(["validate", "--no-predict", "--scenario"])
        .arg(&scenario)
        .arg("--ceph-conf")
        .arg(&conf)
        .args(["--pool", lab::LAB_POOL, "--vary", "iodepth=1,4"])
        .args(["--runtime", "3s", "--image-size", "64M", "--out"])
        .arg(&out7b)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let recorded = loop {
        let recs = validate::records(&out7b).unwrap_or_default();
        let images: Vec<String> = recs.iter().flat_map(|(_, r)| r.images.clone()).collect();
        if !images.is_empty() && images.iter().all(|i| rbd_ls(&conf).contains(i)) {
            break images;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no image recorded");
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_millis(1500)); // into the first point's fio run
    child.kill().unwrap(); // SIGKILL to the PID this test started: no cleanup runs
    child.wait().unwrap();
    assert!(recorded.iter().all(|i| rbd_ls(&conf).contains(i)));
    // fio (its own process group) finishes its 3 s and releases the image; until then
    // `rbd rm` fails on the watcher and the cleanup says so, keeping the record.
    let t0 = std::time::Instant::now();
    loop {
        let ok = Command::new(env!("CARGO_BIN_EXE_cephplan"))
            .args(["validate", "--cleanup", "--out"])
            .arg(&out7b)
            .status()
            .unwrap()
            .success();
        if ok {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "cleanup never succeeded"
        );
        std::thread::sleep(Duration::from_secs(2));
    }
    let left = rbd_ls(&conf);
    assert!(recorded.iter().all(|i| !left.contains(i)), "{left:?}");
    assert!(validate::records(&out7b).unwrap().is_empty());
    // The kill left fio's job file in OUT; the cleanup removed it (finding 12).
    let jobs: Vec<_> = std::fs::read_dir(&out7b)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cephplan-job-"))
        .collect();
    assert!(jobs.is_empty(), "{jobs:?}");

    // 8. An OSD dies (TERM to the PID lab recorded) during the second point: with pool
    // size 1 its PGs stop serving, fio cannot finish, the run is stopped at its deadline
    // (runtime + grace) and the error names the down OSD; point 1 stays saved. This breaks
    // the cluster, so it runs last.
    let osd = state
        .daemons
        .iter()
        .find(|d| d.name == "osd.0")
        .unwrap()
        .pid;
    let out8 = root.path().join("osd-dies");
    let s8 = spec(&scenario, &conf, &out8, "iodepth=4,4", RwPattern::Randwrite);
    let mut short = ProcessExecutor::new(&conf, FioTarget::Local, root.path());
    short.grace = Duration::from_secs(15);
    struct TermOsdOnSecond {
        inner: ProcessExecutor,
        runs: AtomicUsize,
        osd_pid: u32,
    }
    impl Executor for TermOsdOnSecond {
        fn run(&self, job: &RbdJob, progress: &dyn Progress) -> Result<FioRunOutput, FioError> {
            if self.runs.fetch_add(1, Ordering::SeqCst) == 1 {
                let pid = self.osd_pid;
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(1000));
                    let _ = Command::new("kill")
                        .args(["-TERM", &pid.to_string()])
                        .status();
                });
            }
            self.inner.run(job, progress)
        }
    }
    let dying = TermOsdOnSecond {
        inner: short,
        runs: AtomicUsize::new(0),
        osd_pid: osd,
    };
    let e = validate::run(&s8, &dying, &validate::NoPredictor, &NoProgress).unwrap_err();
    // With an OSD down `rbd rm` would block, so the image is left and named.
    match &e {
        ValidateError::ImagesLeft {
            outcome, images, ..
        } => {
            assert!(
                outcome.contains("point 2 of 2")
                    && outcome.contains("1 earlier point(s) are saved"),
                "{e}"
            );
            assert_eq!(images.len(), 1, "{e}");
        }
        other => panic!("expected ImagesLeft after PointFailed, got {other}"),
    }
    assert!(e.to_string().contains("osd.0 down"), "{e}");
    // The image left behind stays in the record, for `validate --cleanup` later.
    let recs = validate::records(&out8).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].1.images.len(), 1);
    let csv = std::fs::read_to_string(out8.join(format!("validation-{}.csv", s8.run_id))).unwrap();
    assert_eq!(
        csv.lines().filter(|l| !l.starts_with('#')).count(),
        2,
        "header + 1 saved row"
    );

    // 9. A pinned lab through the CLI (`lab up --osd-cpus` with the first CPU this process
    // may use, when it may use two or more): every thread of every daemon runs on it only, the scenario describes a
    // one-core node and a separate client on the other CPUs, and `validate --fio-cpus`
    // hands fio the CPUs `lab up` named for it (fio's own JSON echoes `cpus_allowed`).
    let usable = cephplan::fio::CpuSet::usable();
    if usable.len() < 2 {
        eprintln!("\n!!!!! SKIPPING the pinned lab: this process may use CPU {usable} only\n");
        return;
    }
    let osd_cpu = usable.iter().next().unwrap().to_string();
    let pinned_dir = root.path().join("pinned");
    let port2 = port + SECOND_LAB_OFFSET;
    let up = assert_cmd::Command::cargo_bin("cephplan")
        .unwrap()
        .args(["lab", "up", "--osds", "1", "--osd-cpus", &osd_cpu, "--port"])
        .arg(port2.to_string())
        .arg("--dir")
        .arg(&pinned_dir)
        .timeout(Duration::from_secs(300))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let _pinned_guard = LabGuard(pinned_dir.canonicalize().unwrap());
    let fio_cpus = osd_cpu
        .parse::<cephplan::fio::CpuSet>()
        .unwrap()
        .complement(&usable)
        .unwrap()
        .to_string();
    let up = String::from_utf8(up).unwrap();
    assert!(up.contains(&format!("--fio-cpus {fio_cpus}")), "{up}");
    let state = lab::read_state(&pinned_dir).unwrap();
    assert_eq!(state.daemons.len(), 3, "mon, mgr, 1 OSD");
    for d in &state.daemons {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", d.pid)).unwrap();
        for task in tasks {
            let status = std::fs::read_to_string(task.unwrap().path().join("status")).unwrap();
            let allowed = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .unwrap()
                .trim()
                .to_string();
            assert_eq!(allowed, osd_cpu, "{} thread not pinned", d.name);
        }
    }
    let pinned_scenario = pinned_dir.join("scenario.toml");
    let text = std::fs::read_to_string(&pinned_scenario).unwrap();
    let sc = cephplan::spec::parse_scenario(&text, "pinned", &cephplan::spec::Catalogue::builtin())
        .unwrap();
    assert_eq!(
        (sc.node_cpu.cores, sc.client_cpu.cores),
        (1, usable.len() - 1)
    );
    let out9 = root.path().join("pinned-sweep");
    let stdout = validate_cli(
        &pinned_scenario,
        &pinned_dir.join("ceph.conf"),
        &out9,
        &[
            "--pool",
            lab::LAB_POOL,
            "--pattern",
            "randwrite",
            "--iodepth",
            "4",
            "--runtime",
            "2s",
            "--image-size",
            "64M",
            "--fio-cpus",
            &fio_cpus,
        ],
    );
    let rep: validate::ValidationReport =
        serde_json::from_slice(&stdout).expect("a validation report");
    assert_eq!(rep.points.len(), 1);
    assert!(rep.points[0].measured.total_iops > 0.0);
    let raw: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out9.join(&rep.points[0].raw_fio_json)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        raw["global options"]["cpus_allowed"],
        fio_cpus.as_str(),
        "{raw}"
    );
}

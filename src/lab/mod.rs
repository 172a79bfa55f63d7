//! A throwaway real Ceph cluster on this machine, for validation mode and its tests: one
//! monitor, one manager and BlueStore OSDs on sparse files, all bound to 127.0.0.1, all
//! state under one directory. [`up`] records every daemon's PID in `DIR/lab.json`;
//! [`down`] signals only those PIDs, and only while `/proc/PID/cmdline` still passes
//! exactly `DIR/ceph.conf` as `-c`/`--conf` (whole arguments compared, so a lab at
//! `/tmp/lab` never touches `/tmp/lab2`), and removes DIR.
//!
//! The recipe (and its pitfalls) follows the project's `local-ceph.md` notes (kept beside the seed documents, outside this repository): no systemd, no
//! ceph-volume, `osd crush chooseleaf type = 0` so size 3 works on one host, `rbd cache =
//! false` so writes are acknowledged by the OSDs, and "ready" means every PG active+clean.
//!
//! Not here: benchmarking (that is `fio`/`validate`). Keyrings stay in DIR and are never
//! printed or logged.

mod scenario;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::fio::process::{last_lines, on_path, run_capture, ProcError};
use crate::io::GENERATED_MARKER;
use crate::progress::Progress;

pub use scenario::HostProbe;

/// Format version of `lab.json`.
pub const LAB_SCHEMA_VERSION: u32 = 1;
/// The pool `up` creates.
pub const LAB_POOL: &str = "rbd";
/// The erasure-coded data pool `up --ec` creates beside [`LAB_POOL`].
pub const LAB_EC_POOL: &str = "rbd-ec";
/// The stripe unit of the lab's erasure-code profile: Ceph's default
/// (`osd_pool_erasure_code_stripe_unit`), stated so that the scenario can say it.
const LAB_EC_STRIPE_UNIT: &str = "4K";
const PG_COUNT: u32 = 32;
/// The most OSDs `up` starts: the scenario it writes puts them all on one device (their
/// files share one backing store), and a scenario's device holds at most this many.
pub const MAX_OSDS: u32 = crate::spec::MAX_OSDS_PER_DEVICE;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("missing programs: {missing}; install them with: apt-get update && apt-get install -y --no-install-recommends {packages}")]
    MissingPackages { missing: String, packages: String },
    #[error("{dir} already exists and is not empty; choose another --dir or run `cephplan lab down --dir {dir}` first")]
    DirNotEmpty { dir: PathBuf },
    /// `down` of a directory that does not exist: nothing to stop (the CLI exits 0, so
    /// that a script's teardown may run twice).
    #[error("no lab at {dir} (already down?): the directory does not exist, so there is nothing to stop")]
    NoLab { dir: PathBuf },
    #[error("{dir}: no lab.json written by cephplan; refusing to touch this directory (only directories made by `cephplan lab up` can be taken down)")]
    NotALab { dir: PathBuf },
    #[error("{file}: {detail}; the file was written by `cephplan lab up`: if it was edited, restore it, else stop the daemons by hand")]
    BadLabFile { file: PathBuf, detail: String },
    /// An argument `up` refuses before it writes anything (no logs exist yet).
    #[error("--{option} {value}: {detail}")]
    BadArgument {
        option: &'static str,
        value: String,
        detail: String,
    },
    #[error("`{step}` failed: {detail}\nLogs are in {log_dir}")]
    Step {
        step: String,
        detail: String,
        log_dir: PathBuf,
    },
    #[error(
        "timed out after {secs:.0} s waiting for {what}; last state: {last}. Logs are in {log_dir}"
    )]
    Timeout {
        what: String,
        secs: f64,
        last: String,
        log_dir: PathBuf,
    },
    // The I/O error is in the message, not chained as a source: the CLI prints an error's
    // chain, which would say it twice.
    #[error("I/O error on {path}: {error}; check that the path exists and is writable")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cancelled")]
    Cancelled,
    /// `up` failed part-way; says how many daemons it had started (and so stopped again).
    #[error("{source}; {}", started_note(*.started))]
    Stopped {
        source: Box<LabError>,
        started: usize,
    },
    #[error("{0}")]
    Write(#[from] crate::io::WriteError),
}

/// The end of a failed `up`'s message: what it had started and stopped again.
fn started_note(started: usize) -> String {
    match started {
        0 => "no daemon had been started yet, so nothing was left running".into(),
        1 => "the one daemon it had started was stopped".into(),
        n => format!("the {n} daemons it had started were stopped"),
    }
}

/// What `lab up` is asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabSpec {
    pub dir: PathBuf,
    pub osds: u32,
    /// Pool size: 1 or 3 (3 needs at least 3 OSDs).
    pub replicas: u32,
    /// Monitor port; the daemons bind PORT+1 ..= PORT+199.
    pub port: u16,
    /// Sparse backing file per OSD.
    pub osd_size_bytes: u64,
    /// Also an erasure-coded data pool [`LAB_EC_POOL`] of `k` data and `m` coding chunks
    /// over the OSDs (failure domain OSD, `allow_ec_overwrites` on, for RBD images whose
    /// metadata stay in [`LAB_POOL`]: `validate --data-pool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erasure: Option<LabErasure>,
    /// Run the monitor, the manager and the OSDs on these CPUs only (`taskset -c`), leaving
    /// the others to fio (`validate --fio-cpus`): one machine as an OSD node and a separate
    /// client. `None`: every daemon and fio share every CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_cpus: Option<crate::fio::CpuSet>,
}

/// The erasure coding of the lab's data pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabErasure {
    pub k: u32,
    pub m: u32,
}

impl std::str::FromStr for LabErasure {
    type Err = String;
    /// `K+M`, e.g. `2+1`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad =
            || format!("\"{s}\" is not K+M; write the data and coding chunks as e.g. 2+1 or 4+2");
        let (k, m) = s.trim().split_once('+').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let m: u32 = m.trim().parse().map_err(|_| bad())?;
        Ok(LabErasure { k, m })
    }
}

impl LabSpec {
    pub fn new(dir: &Path, port: u16) -> Self {
        Self {
            dir: dir.to_path_buf(),
            osds: 3,
            replicas: 1,
            port,
            osd_size_bytes: 10 << 30,
            erasure: None,
            osd_cpus: None,
        }
    }
}

/// One daemon started by `up`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Daemon {
    /// "mon.a", "mgr.x", "osd.0", ...
    pub name: String,
    pub pid: u32,
}

/// `DIR/lab.json`: everything `down` needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    pub schema_version: u32,
    pub generator: String,
    pub dir: PathBuf,
    pub port: u16,
    pub fsid: String,
    pub osds: u32,
    pub replicas: u32,
    pub osd_size_bytes: u64,
    pub pool: String,
    /// The coding of the erasure-coded data pool [`LAB_EC_POOL`], when `up --ec` made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erasure: Option<LabErasure>,
    /// The CPUs the daemons were pinned to (`up --osd-cpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_cpus: Option<crate::fio::CpuSet>,
    /// With `osd_cpus`: the other CPUs this machine let `up` run on, the client's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<crate::fio::CpuSet>,
    /// In start order (mon first); `down` stops them in reverse (mon last).
    pub daemons: Vec<Daemon>,
}

/// The result of `up`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabReport {
    pub dir: PathBuf,
    pub ceph_conf: PathBuf,
    pub scenario: PathBuf,
    /// With `up --ec`: the scenario of the erasure-coded data pool (`scenario-ec.toml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_ec: Option<PathBuf>,
    pub pool: String,
    /// The erasure-coded data pool (`up --ec`): pass it to `validate --data-pool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_pool: Option<String>,
    /// With `up --osd-cpus`: the CPUs left to the client; pass them to `validate
    /// --fio-cpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_cpus: Option<crate::fio::CpuSet>,
    pub ceph_version: String,
    pub daemons: Vec<Daemon>,
    pub probe: HostProbe,
    pub elapsed_secs: f64,
}

/// The result of `down`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownReport {
    pub dir: PathBuf,
    /// Daemons signalled (their cmdline still passed DIR/ceph.conf as `-c`).
    pub stopped: Vec<Daemon>,
    /// Recorded PIDs that were already gone or now belong to another program.
    pub not_running: Vec<Daemon>,
    /// Daemons that ignored TERM and got KILL.
    pub killed: Vec<Daemon>,
}

const PROGRAMS: [(&str, &str); 8] = [
    ("ceph-mon", "ceph-mon"),
    ("ceph-mgr", "ceph-mgr"),
    ("ceph-osd", "ceph-osd"),
    ("ceph", "ceph-common"),
    ("ceph-authtool", "ceph-common"),
    ("monmaptool", "ceph-base"),
    ("rbd", "ceph-common"),
    ("fio", "fio"),
];

/// Checks that every program `up` and `validate` need is installed.
pub fn check_packages() -> Result<(), LabError> {
    let missing: Vec<(&str, &str)> = PROGRAMS
        .iter()
        .copied()
        .filter(|(p, _)| !on_path(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut pkgs: Vec<&str> = missing.iter().map(|m| m.1).collect();
    pkgs.sort_unstable();
    pkgs.dedup();
    if pkgs.contains(&"ceph-base") {
        // ceph-base comes with ceph-mon/ceph-osd; ask for the documented set.
        pkgs.retain(|p| *p != "ceph-base");
        pkgs.extend(["ceph-mon", "ceph-osd"]);
        pkgs.sort_unstable();
        pkgs.dedup();
    }
    Err(LabError::MissingPackages {
        missing: missing.iter().map(|m| m.0).collect::<Vec<_>>().join(", "),
        packages: pkgs.join(" "),
    })
}

/// Paths inside a lab directory.
pub fn conf_path(dir: &Path) -> PathBuf {
    dir.join("ceph.conf")
}
fn state_path(dir: &Path) -> PathBuf {
    dir.join("lab.json")
}

fn ceph_conf_text(dir: &Path, port: u16, fsid: &str, osd_size_bytes: u64) -> String {
    let d = dir.display();
    format!(
        "# {GENERATED_MARKER} lab up: a throwaway cluster, stop it with `cephplan lab down --dir DIR` (how it is built: cephplan's src/lab/mod.rs)
[global]
fsid = {fsid}
mon host = v2:127.0.0.1:{port}
mon initial members = a
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
ms bind msgr1 = false
ms bind ipv4 = true
ms bind ipv6 = false
ms bind port min = {pmin}
ms bind port max = {pmax}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
run dir = {d}/run
log file = {d}/log/$cluster-$name.log
crash dir = {d}/crash
mon data = {d}/$name
osd data = {d}/$name
mgr data = {d}/$name
osd crush chooseleaf type = 0
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
osd objectstore = bluestore
osd memory target = 1073741824
[mon]
keyring = {d}/mon.a/keyring
admin socket = {d}/run/$cluster-$name.asok
# The cluster and audit logs (Pacific's default: /var/log/ceph/$cluster.$channel.log and
# /var/log/ceph/$cluster.log) stay under DIR with everything else.
mon cluster log file = default={d}/log/$cluster.$channel.log cluster={d}/log/$cluster.log
[mgr]
admin socket = {d}/run/$cluster-$name.asok
[osd]
admin socket = {d}/run/$cluster-$name.asok
bluestore block create = true
bluestore block size = {osd_size_bytes}
bluestore fsck on mkfs = false
bluestore fsck on mount = false
[client]
keyring = {d}/ceph.client.admin.keyring
rbd cache = false
# One socket per client process: with one name for all, a second client (an `rbd rm`
# while fio runs) fails to bind it and says so on stderr, inside cephplan's messages.
admin socket = {d}/run/$cluster-$name.$pid.asok
",
        pmin = port as u32 + 1,
        pmax = port as u32 + 199,
    )
}

/// Where the logs of the cluster of `conf` are: the directory of its `log file` setting
/// (a lab's `DIR/log`), else Ceph's default `/var/log/ceph`. Failed `ceph`/`rbd` commands
/// point there (not at an output directory, which holds no logs).
pub fn conf_log_dir(conf: &Path) -> PathBuf {
    std::fs::read_to_string(conf)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                let k = k.trim().replace(['_', ' '], "");
                (k == "logfile")
                    .then(|| Path::new(v.trim()).parent().map(Path::to_path_buf))
                    .flatten()
                    .filter(|d| d.is_absolute())
            })
        })
        .unwrap_or_else(|| PathBuf::from("/var/log/ceph"))
}

/// Runs a Ceph tool against a lab (or any cluster) configuration.
pub(crate) struct CephCli<'a> {
    pub conf: &'a Path,
    pub log_dir: PathBuf,
    pub progress: &'a dyn Progress,
}

impl CephCli<'_> {
    /// Runs `program args`, failing with its stderr. `timeout` bounds a hung cluster.
    pub fn run(&self, program: &str, args: &[&str], timeout: Duration) -> Result<String, LabError> {
        self.run_with(program, args, timeout, self.progress)
    }

    /// Like [`CephCli::run`] with another cancellation source (cleanup must not be
    /// cancelled by the Ctrl-C that triggered it).
    pub fn run_with(
        &self,
        program: &str,
        args: &[&str],
        timeout: Duration,
        progress: &dyn Progress,
    ) -> Result<String, LabError> {
        let step = format!("{program} {}", args.join(" "));
        let mut cmd = Command::new(program);
        cmd.env("CEPH_CONF", self.conf).args(args);
        let out = run_capture(&mut cmd, timeout, progress).map_err(|e| match e {
            ProcError::Cancelled { .. } => LabError::Cancelled,
            e => LabError::Step {
                step: step.clone(),
                detail: e.to_string(),
                log_dir: self.log_dir.clone(),
            },
        })?;
        if !out.success() {
            return Err(LabError::Step {
                step,
                detail: last_lines(&out.stderr, 8),
                log_dir: self.log_dir.clone(),
            });
        }
        Ok(out.stdout)
    }

    /// `ceph --connect-timeout 10 ARGS`.
    pub fn ceph(&self, args: &[&str]) -> Result<String, LabError> {
        let mut a = vec!["--connect-timeout", "10"];
        a.extend_from_slice(args);
        self.run("ceph", &a, Duration::from_secs(30))
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> LabError + '_ {
    move |error| LabError::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn new_uuid() -> Result<String, LabError> {
    let p = Path::new("/proc/sys/kernel/random/uuid");
    Ok(std::fs::read_to_string(p)
        .map_err(io_err(p))?
        .trim()
        .to_string())
}

fn write_private(path: &Path, text: &str) -> Result<(), LabError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io_err(path))?;
    std::io::Write::write_all(&mut f, text.as_bytes()).map_err(io_err(path))
}

fn save_state(state: &LabState) -> Result<(), LabError> {
    let json = serde_json::to_string_pretty(state).expect("lab state serialises");
    crate::io::write_atomic_owned(&state_path(&state.dir), json.as_bytes())?;
    Ok(())
}

/// Starts a daemon in its own process group, stdout/stderr to DIR/log/NAME.out; records it.
fn start_daemon(
    state: &mut LabState,
    name: &str,
    program: &str,
    args: &[&str],
) -> Result<(), LabError> {
    let log = state.dir.join("log").join(format!("{name}.out"));
    let f = std::fs::File::create(&log).map_err(io_err(&log))?;
    let f2 = f.try_clone().map_err(io_err(&log))?;
    let conf = conf_path(&state.dir);
    // Pinned daemons start under `taskset -c CPUS`, which execs the daemon: the PID is the
    // daemon's, and every thread it starts inherits the CPUs.
    let mut command = match &state.osd_cpus {
        Some(cpus) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(cpus.to_string()).arg(program);
            c
        }
        None => Command::new(program),
    };
    let child = std::os::unix::process::CommandExt::process_group(
        command
            .env("CEPH_CONF", &conf)
            .arg("-c")
            .arg(&conf)
            .args(args)
            .stdin(Stdio::null())
            .stdout(f)
            .stderr(f2),
        0,
    )
    .spawn()
    .map_err(|e| LabError::Step {
        step: format!("start {program}"),
        detail: e.to_string(),
        log_dir: state.dir.join("log"),
    })?;
    state.daemons.push(Daemon {
        name: name.to_string(),
        pid: child.id(),
    });
    save_state(state)
}

/// Polls `check` every 500 ms until it returns `Ok(true)`; `last` describes the state.
fn wait_for(
    what: &str,
    timeout: Duration,
    log_dir: &Path,
    progress: &dyn Progress,
    mut check: impl FnMut() -> Result<(bool, String), LabError>,
) -> Result<(), LabError> {
    let t0 = Instant::now();
    let mut last: String;
    loop {
        if progress.is_cancelled() {
            return Err(LabError::Cancelled);
        }
        match check() {
            Ok((true, _)) => return Ok(()),
            Ok((false, s)) => last = s,
            Err(LabError::Cancelled) => return Err(LabError::Cancelled),
            Err(e) => last = e.to_string(),
        }
        if t0.elapsed() > timeout {
            return Err(LabError::Timeout {
                what: what.to_string(),
                secs: timeout.as_secs_f64(),
                last,
                log_dir: log_dir.to_path_buf(),
            });
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The arguments `up` refuses before it touches anything: the pool size, and an OSD count
/// that cannot hold it or that one device in the lab's scenario cannot hold.
fn check_spec(spec: &LabSpec) -> Result<(), LabError> {
    if spec.replicas != 1 && spec.replicas != 3 {
        return Err(LabError::BadArgument {
            option: "replicas",
            value: spec.replicas.to_string(),
            detail: "a lab pool has 1 or 3 replicas; use --replicas 1 or --replicas 3".into(),
        });
    }
    if spec.osds == 0 || spec.osds < spec.replicas {
        return Err(LabError::BadArgument {
            option: "osds",
            value: spec.osds.to_string(),
            detail: format!(
                "{} OSDs cannot hold {} replicas; use --osds {} or more",
                spec.osds,
                spec.replicas,
                spec.replicas.max(1)
            ),
        });
    }
    if let Some(LabErasure { k, m }) = spec.erasure {
        if k < 2 || m < 1 {
            return Err(LabError::BadArgument {
                option: "ec",
                value: format!("{k}+{m}"),
                detail: "an erasure-coded pool needs at least 2 data chunks and 1 coding \
                         chunk; use e.g. --ec 2+1"
                    .into(),
            });
        }
        if spec.osds < k + m {
            return Err(LabError::BadArgument {
                option: "osds",
                value: spec.osds.to_string(),
                detail: format!(
                    "{} OSDs cannot hold the {k}+{m} chunks of --ec {k}+{m} (one per OSD); use \
                     --osds {} or more",
                    spec.osds,
                    k + m
                ),
            });
        }
    }
    if let Some(cpus) = &spec.osd_cpus {
        let usable = crate::fio::CpuSet::usable();
        let bad = |detail: String| LabError::BadArgument {
            option: "osd-cpus",
            value: cpus.to_string(),
            detail,
        };
        cpus.check_within(&usable).map_err(bad)?;
        if cpus.complement(&usable).is_none() {
            return Err(bad(format!(
                "that is every CPU this machine lets cephplan run on ({usable}), which leaves none \
                 to the client; name fewer (e.g. --osd-cpus {}), or leave --osd-cpus out to \
                 share them all",
                usable.iter().next().expect("a CPU set is never empty")
            )));
        }
    }
    if spec.osds > MAX_OSDS {
        return Err(LabError::BadArgument {
            option: "osds",
            value: spec.osds.to_string(),
            detail: format!(
                "the lab's OSDs are files on one backing store, which its scenario describes \
                 as one device holding every OSD, and a device holds at most {MAX_OSDS}; use \
                 --osds {MAX_OSDS} or fewer"
            ),
        });
    }
    Ok(())
}

/// Brings a cluster up under `spec.dir` and waits until every PG is active+clean. On any
/// failure the daemons already started are stopped (the directory is kept for its logs).
pub fn up(spec: &LabSpec, progress: &dyn Progress) -> Result<LabReport, LabError> {
    check_spec(spec)?;
    check_packages()?;
    if spec.osd_cpus.is_some() && !on_path("taskset") {
        return Err(LabError::MissingPackages {
            missing: "taskset".into(),
            packages: "util-linux".into(),
        });
    }
    if spec.dir.exists()
        && std::fs::read_dir(&spec.dir)
            .map_err(io_err(&spec.dir))?
            .next()
            .is_some()
    {
        return Err(LabError::DirNotEmpty {
            dir: spec.dir.clone(),
        });
    }
    let t0 = Instant::now();
    for sub in ["run", "log", "crash"] {
        let p = spec.dir.join(sub);
        std::fs::create_dir_all(&p).map_err(io_err(&p))?;
    }
    let dir = std::fs::canonicalize(&spec.dir).map_err(io_err(&spec.dir))?;
    let mut state = LabState {
        schema_version: LAB_SCHEMA_VERSION,
        generator: GENERATED_MARKER.to_string(),
        dir: dir.clone(),
        port: spec.port,
        fsid: new_uuid()?,
        osds: spec.osds,
        replicas: spec.replicas,
        osd_size_bytes: spec.osd_size_bytes,
        pool: LAB_POOL.to_string(),
        erasure: spec.erasure,
        osd_cpus: spec.osd_cpus.clone(),
        client_cpus: spec
            .osd_cpus
            .as_ref()
            .and_then(|c| c.complement(&crate::fio::CpuSet::usable())),
        daemons: Vec::new(),
    };
    save_state(&state)?;
    let result = bring_up(&mut state, spec, progress);
    match result {
        Ok((probe, ceph_version)) => {
            let scenario = dir.join("scenario.toml");
            let text = scenario::scenario_toml(&state, &probe, &ceph_version, None);
            crate::io::write_atomic_owned(&scenario, text.as_bytes())?;
            let scenario_ec = match state.erasure {
                Some(ec) => {
                    let path = dir.join("scenario-ec.toml");
                    let text = scenario::scenario_toml(&state, &probe, &ceph_version, Some(ec));
                    crate::io::write_atomic_owned(&path, text.as_bytes())?;
                    Some(path)
                }
                None => None,
            };
            Ok(LabReport {
                ceph_conf: conf_path(&dir),
                scenario,
                scenario_ec,
                pool: state.pool.clone(),
                data_pool: state.erasure.map(|_| LAB_EC_POOL.to_string()),
                fio_cpus: state.client_cpus.clone(),
                ceph_version,
                daemons: state.daemons.clone(),
                probe,
                dir,
                elapsed_secs: t0.elapsed().as_secs_f64(),
            })
        }
        Err(e) => {
            let _ = stop_daemons(&state);
            Err(LabError::Stopped {
                source: Box::new(e),
                started: state.daemons.len(),
            })
        }
    }
}

fn bring_up(
    state: &mut LabState,
    spec: &LabSpec,
    progress: &dyn Progress,
) -> Result<(HostProbe, String), LabError> {
    let dir = state.dir.clone();
    let log_dir = dir.join("log");
    let conf = conf_path(&dir);
    progress.start(5 + spec.osds as u64, "lab up");
    progress.message("measuring this host (disk and loopback)");
    let probe = scenario::probe_host(&dir, progress)?;
    progress.advance(1);
    crate::io::write_atomic_owned(
        &conf,
        ceph_conf_text(&dir, spec.port, &state.fsid, spec.osd_size_bytes).as_bytes(),
    )?;
    let cli = CephCli {
        conf: &conf,
        log_dir: log_dir.clone(),
        progress,
    };
    let quick = Duration::from_secs(60);
    let ceph_version = cli
        .run("ceph", &["--version"], quick)?
        .split_whitespace()
        .nth(2)
        .unwrap_or("unknown")
        .to_string();

    progress.message("creating keys and the monitor");
    make_mon(&cli, &dir, &conf, spec.port, &state.fsid, quick)?;
    let conf_s = conf.display().to_string();
    start_daemon(state, "mon.a", "ceph-mon", &["-i", "a", "-f"])?;
    wait_for(
        "the monitor to answer",
        Duration::from_secs(60),
        &log_dir,
        progress,
        || cli.ceph(&["mon", "stat"]).map(|s| (true, s)),
    )?;
    progress.advance(1);

    progress.message("starting the manager");
    let mgr_dir = dir.join("mgr.x");
    std::fs::create_dir_all(&mgr_dir).map_err(io_err(&mgr_dir))?;
    let mgr_kr = mgr_dir.join("keyring").display().to_string();
    cli.ceph(&[
        "auth",
        "get-or-create",
        "mgr.x",
        "mon",
        "allow profile mgr",
        "osd",
        "allow *",
        "mds",
        "allow *",
        "-o",
        &mgr_kr,
    ])?;
    start_daemon(state, "mgr.x", "ceph-mgr", &["-i", "x", "-f"])?;
    progress.advance(1);

    for i in 0..spec.osds {
        progress.message(&format!("creating OSD {} of {}", i + 1, spec.osds));
        let uuid = new_uuid()?;
        let secret = cli.run("ceph-authtool", &["--gen-print-key"], quick)?;
        let secret = secret.trim();
        let secret_json = dir.join(format!("osd-secret-{i}.json.tmp"));
        write_private(&secret_json, &format!("{{\"cephx_secret\": \"{secret}\"}}"))?;
        let sj = secret_json.display().to_string();
        let id = cli.ceph(&["osd", "new", &uuid, "-i", &sj]);
        let _ = std::fs::remove_file(&secret_json);
        let id = id?.trim().to_string();
        let odir = dir.join(format!("osd.{id}"));
        std::fs::create_dir_all(&odir).map_err(io_err(&odir))?;
        write_private(
            &odir.join("keyring"),
            &format!("[osd.{id}]\n\tkey = {secret}\n"),
        )?;
        cli.run(
            "ceph-osd",
            &["-c", &conf_s, "-i", &id, "--mkfs", "--osd-uuid", &uuid],
            Duration::from_secs(120),
        )?;
        start_daemon(state, &format!("osd.{id}"), "ceph-osd", &["-i", &id, "-f"])?;
        progress.advance(1);
    }
    progress.message("waiting for all OSDs up");
    let n = spec.osds as u64;
    wait_for(
        "all OSDs up and in",
        Duration::from_secs(120),
        &log_dir,
        progress,
        || {
            let s = cli.ceph(&["osd", "stat", "-f", "json"])?;
            let v: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
            let up = v["num_up_osds"].as_u64().unwrap_or(0);
            let inn = v["num_in_osds"].as_u64().unwrap_or(0);
            Ok((
                up == n && inn == n,
                format!("{up} of {n} OSDs up, {inn} in"),
            ))
        },
    )?;
    progress.advance(1);

    progress.message("creating the rbd pool");
    let pool = state.pool.clone();
    let size = spec.replicas.to_string();
    cli.ceph(&["osd", "pool", "create", &pool, &PG_COUNT.to_string()])?;
    cli.ceph(&[
        "osd",
        "pool",
        "set",
        &pool,
        "size",
        &size,
        "--yes-i-really-mean-it",
    ])?;
    cli.ceph(&["osd", "pool", "set", &pool, "min_size", "1"])?;
    cli.run("rbd", &["pool", "init", &pool], quick)?;
    if let Some(LabErasure { k, m }) = spec.erasure {
        progress.message(&format!("creating the {k}+{m} erasure-coded data pool"));
        let profile = format!("cephplan-k{k}m{m}");
        cli.ceph(&[
            "osd",
            "erasure-code-profile",
            "set",
            &profile,
            &format!("k={k}"),
            &format!("m={m}"),
            "crush-failure-domain=osd",
            &format!("stripe_unit={LAB_EC_STRIPE_UNIT}"),
        ])?;
        cli.ceph(&[
            "osd",
            "pool",
            "create",
            LAB_EC_POOL,
            &PG_COUNT.to_string(),
            &PG_COUNT.to_string(),
            "erasure",
            &profile,
        ])?;
        cli.ceph(&[
            "osd",
            "pool",
            "set",
            LAB_EC_POOL,
            "allow_ec_overwrites",
            "true",
        ])?;
        cli.ceph(&["osd", "pool", "application", "enable", LAB_EC_POOL, "rbd"])?;
    }
    wait_for(
        "every PG active+clean",
        Duration::from_secs(180),
        &log_dir,
        progress,
        || pgs_clean(&cli),
    )?;
    progress.advance(1);
    progress.finish();
    Ok((probe, ceph_version))
}

/// (all PGs active+clean, a description of the PG states).
pub(crate) fn pgs_clean(cli: &CephCli) -> Result<(bool, String), LabError> {
    let s = cli.ceph(&["pg", "stat", "-f", "json"])?;
    let v: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
    // Pacific: {"pg_summary": {"num_pg_by_state": [{"name":..,"num":..}], "num_pgs": N}}
    let summary = if v.get("pg_summary").is_some() {
        &v["pg_summary"]
    } else {
        &v
    };
    let total = summary["num_pgs"].as_u64().unwrap_or(0);
    let mut states = BTreeMap::new();
    let mut clean = 0;
    for e in summary["num_pg_by_state"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap_or("?").to_string();
        let num = e["num"].as_u64().unwrap_or(0);
        if name == "active+clean" {
            clean = num;
        }
        states.insert(name, num);
    }
    let desc = format!("{total} PGs: {states:?}");
    Ok((total > 0 && clean == total, desc))
}

/// Reads `DIR/lab.json`.
pub fn read_state(dir: &Path) -> Result<LabState, LabError> {
    let p = state_path(dir);
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LabError::NotALab {
                dir: dir.to_path_buf(),
            })
        }
        Err(e) => return Err(io_err(&p)(e)),
    };
    let state: LabState = serde_json::from_str(&text).map_err(|e| LabError::BadLabFile {
        file: p.clone(),
        detail: format!("line {}: {e}", e.line()),
    })?;
    if state.generator != GENERATED_MARKER {
        return Err(LabError::NotALab {
            dir: dir.to_path_buf(),
        });
    }
    if state.schema_version != LAB_SCHEMA_VERSION {
        return Err(LabError::BadLabFile {
            file: p,
            detail: format!(
                "schema_version {} is not {LAB_SCHEMA_VERSION}",
                state.schema_version
            ),
        });
    }
    Ok(state)
}

/// Removes a file when dropped: the mon's secret key, needed only while the monitor's
/// store is made, must not stay behind when a step fails.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Creates the mon and admin keys, the monmap and the monitor's store (`ceph-mon --mkfs`)
/// under `dir`. The mon keyring is a temporary file, removed also when a step fails.
fn make_mon(
    cli: &CephCli,
    dir: &Path,
    conf: &Path,
    port: u16,
    fsid: &str,
    quick: Duration,
) -> Result<(), LabError> {
    let d = |p: &str| dir.join(p).display().to_string();
    let mon_kr = d("mon.keyring.tmp");
    let _remove_mon_kr = RemoveOnDrop(PathBuf::from(&mon_kr));
    let admin_kr = d("ceph.client.admin.keyring");
    cli.run(
        "ceph-authtool",
        &[
            "--create-keyring",
            &mon_kr,
            "--gen-key",
            "-n",
            "mon.",
            "--cap",
            "mon",
            "allow *",
        ],
        quick,
    )?;
    cli.run(
        "ceph-authtool",
        &[
            "--create-keyring",
            &admin_kr,
            "--gen-key",
            "-n",
            "client.admin",
            "--cap",
            "mon",
            "allow *",
            "--cap",
            "osd",
            "allow *",
            "--cap",
            "mgr",
            "allow *",
            "--cap",
            "mds",
            "allow *",
        ],
        quick,
    )?;
    cli.run(
        "ceph-authtool",
        &[&mon_kr, "--import-keyring", &admin_kr],
        quick,
    )?;
    let monmap = d("monmap");
    let addr = format!("[v2:127.0.0.1:{}]", port);
    cli.run(
        "monmaptool",
        &["--create", "--addv", "a", &addr, "--fsid", fsid, &monmap],
        quick,
    )?;
    let conf_s = conf.display().to_string();
    cli.run(
        "ceph-mon",
        &[
            "-c",
            &conf_s,
            "--mkfs",
            "-i",
            "a",
            "--monmap",
            &monmap,
            "--keyring",
            &mon_kr,
        ],
        quick,
    )?;
    Ok(())
}

/// True if `cmdline` (the NUL-separated argv of `/proc/PID/cmdline`) passes exactly `conf`
/// as the daemon's configuration: an argument `-c` or `--conf` followed by an argument
/// equal to it, or `--conf=CONF`. Whole arguments are compared byte for byte, so the lab
/// at `/tmp/lab` does not match the daemons of `/tmp/lab2` (nor a process that merely
/// mentions the path).
pub(crate) fn cmdline_uses_conf(cmdline: &[u8], conf: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let conf = conf.as_os_str().as_bytes();
    let args: Vec<&[u8]> = cmdline
        .strip_suffix(b"\0")
        .unwrap_or(cmdline)
        .split(|b| *b == 0)
        .collect();
    args.iter().enumerate().any(|(i, a)| {
        let next_is_conf = || args.get(i + 1).is_some_and(|n| *n == conf);
        (*a == b"-c" || *a == b"--conf") && next_is_conf()
            || a.strip_prefix(b"--conf=").is_some_and(|v| v == conf)
    })
}

/// True if the recorded PID is a live process started with this lab's ceph.conf
/// ([`cmdline_uses_conf`]); a PID reused by another process is never signalled.
fn runs_in(pid: u32, dir: &Path) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    cmdline_uses_conf(&cmdline, &conf_path(dir))
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Stops the recorded daemons in reverse start order (mon last): TERM, up to 10 s, KILL.
fn stop_daemons(state: &LabState) -> DownReport {
    let mut rep = DownReport {
        dir: state.dir.clone(),
        stopped: Vec::new(),
        not_running: Vec::new(),
        killed: Vec::new(),
    };
    // OSDs and mgr together, then the mon: the mon must outlive them so they can report.
    let (mons, others): (Vec<&Daemon>, Vec<&Daemon>) = state
        .daemons
        .iter()
        .partition(|d| d.name.starts_with("mon."));
    for group in [others, mons] {
        let live: Vec<&Daemon> = group
            .into_iter()
            .rev()
            .filter(|d| {
                let live = runs_in(d.pid, &state.dir);
                if !live {
                    rep.not_running.push((*d).clone());
                }
                live
            })
            .collect();
        for d in &live {
            signal(d.pid, "TERM");
        }
        let t0 = Instant::now();
        while live.iter().any(|d| runs_in(d.pid, &state.dir))
            && t0.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(200));
        }
        for d in live {
            if runs_in(d.pid, &state.dir) {
                signal(d.pid, "KILL");
                rep.killed.push(d.clone());
            }
            rep.stopped.push(d.clone());
        }
    }
    rep
}

/// Stops the daemons recorded in `DIR/lab.json` and removes DIR.
pub fn down(dir: &Path) -> Result<DownReport, LabError> {
    if std::fs::symlink_metadata(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(LabError::NoLab {
            dir: dir.to_path_buf(),
        });
    }
    let state = read_state(dir)?;
    let rep = stop_daemons(&state);
    // Killed daemons may hold files for a moment; a second attempt covers that.
    if std::fs::remove_dir_all(dir).is_err() {
        std::thread::sleep(Duration::from_millis(500));
        std::fs::remove_dir_all(dir).map_err(io_err(dir))?;
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conf_binds_loopback_and_disables_rbd_cache() {
        let c = ceph_conf_text(Path::new("/tmp/labx"), 6800, "f", 1 << 30);
        for needle in [
            "mon host = v2:127.0.0.1:6800\n",
            "ms bind port min = 6801\n",
            "ms bind port max = 6999\n",
            "public addr = 127.0.0.1\n",
            "osd crush chooseleaf type = 0\n",
            "rbd cache = false\n",
            "bluestore block size = 1073741824\n",
            "keyring = /tmp/labx/ceph.client.admin.keyring\n",
        ] {
            assert!(c.contains(needle), "{needle}");
        }
    }

    /// Issue 17 item 8: whole argv elements, the exact conf path. Before, a substring of
    /// the command line matched, so `lab down` of /tmp/lab signalled /tmp/lab2's daemons.
    #[test]
    fn a_daemon_matches_only_with_exactly_this_labs_conf() {
        let conf = Path::new("/tmp/lab/ceph.conf");
        let argv = |args: &[&str]| {
            let mut v = Vec::new();
            for a in args {
                v.extend_from_slice(a.as_bytes());
                v.push(0);
            }
            v
        };
        for (args, ours) in [
            (
                &["ceph-mon", "-c", "/tmp/lab/ceph.conf", "-i", "a", "-f"][..],
                true,
            ),
            (
                &["ceph-osd", "--conf", "/tmp/lab/ceph.conf", "-i", "0"][..],
                true,
            ),
            (&["ceph-osd", "--conf=/tmp/lab/ceph.conf"][..], true),
            // Another lab whose path starts with this one's.
            (
                &["ceph-mon", "-c", "/tmp/lab2/ceph.conf", "-i", "a"][..],
                false,
            ),
            (&["ceph-mon", "-c", "/tmp/lab/ceph.conf.bak"][..], false),
            // The path present, but not as the configuration.
            (&["vim", "/tmp/lab/ceph.conf"][..], false),
            (&["sh", "-c", "cat /tmp/lab/ceph.conf"][..], false),
            (&["ceph-mon", "-c"][..], false),
            (&[][..], false),
        ] {
            assert_eq!(cmdline_uses_conf(&argv(args), conf), ours, "{args:?}");
        }
        // Without the trailing NUL (a process that rewrote its argv) it still parses.
        assert!(cmdline_uses_conf(b"ceph-mon\0-c\0/tmp/lab/ceph.conf", conf));
    }

    /// Issue 17 item 8: a failed mon set-up (here `ceph-mon --mkfs` with a conf that does
    /// not exist, after the keys were made) leaves no mon keyring (the mon's secret).
    #[test]
    fn a_failed_mon_setup_removes_the_mon_keyring() {
        if !["ceph-authtool", "monmaptool", "ceph-mon"]
            .iter()
            .all(|p| on_path(p))
        {
            eprintln!("SKIPPED: Ceph tools not installed (scripts/test.sh installs them)");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let conf = d.path().join("missing/ceph.conf");
        let cli = CephCli {
            conf: &conf,
            log_dir: d.path().to_path_buf(),
            progress: &crate::progress::NoProgress,
        };
        let e = make_mon(&cli, d.path(), &conf, 1, "f", Duration::from_secs(60)).unwrap_err();
        assert!(e.to_string().contains("ceph-mon"), "{e}");
        assert!(
            d.path().join("ceph.client.admin.keyring").exists(),
            "keys were made"
        );
        assert!(!d.path().join("mon.keyring.tmp").exists());
    }

    #[test]
    fn an_erasure_coded_lab_needs_k_plus_m_osds_and_reads_k_plus_m() {
        let ec = |t: &str| t.parse::<LabErasure>();
        assert_eq!(ec("2+1"), Ok(LabErasure { k: 2, m: 1 }));
        assert_eq!(ec(" 4 + 2 "), Ok(LabErasure { k: 4, m: 2 }));
        for bad in ["2x1", "2+", "+1", "two+one", "2+1+1"] {
            let e = ec(bad).unwrap_err();
            assert!(e.contains("not K+M") && e.contains("2+1"), "{bad}: {e}");
        }
        let dir = std::env::temp_dir().join("cephplan-lab-check-ec");
        let mut spec = LabSpec::new(&dir, 6789);
        spec.erasure = Some(LabErasure { k: 2, m: 1 });
        assert!(check_spec(&spec).is_ok(), "3 OSDs hold 2+1");
        spec.osds = 2;
        let e = check_spec(&spec).unwrap_err().to_string();
        assert!(
            e.contains("2 OSDs cannot hold the 2+1 chunks") && e.contains("--osds 3 or more"),
            "{e}"
        );
        spec.osds = 8;
        spec.erasure = Some(LabErasure { k: 1, m: 1 });
        let e = check_spec(&spec).unwrap_err().to_string();
        assert!(
            e.contains("at least 2 data chunks and 1 coding chunk"),
            "{e}"
        );
        assert!(!dir.exists(), "nothing written");
    }

    #[test]
    fn pinned_daemons_need_cpus_this_machine_has_and_leave_one_to_the_client() {
        let dir = std::env::temp_dir().join("cephplan-lab-check-cpus");
        let usable = crate::fio::CpuSet::usable();
        let beyond = usable.highest() + 1;
        let mut spec = LabSpec::new(&dir, 6789);
        spec.osd_cpus = Some(beyond.to_string().parse().unwrap());
        let e = check_spec(&spec).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "--osd-cpus {beyond}: CPU {beyond} is not one this machine lets cephplan run on"
            )),
            "{e}"
        );
        spec.osd_cpus = Some(usable.clone());
        let e = check_spec(&spec).unwrap_err().to_string();
        assert!(
            e.contains("leaves none to the client") && e.contains("leave --osd-cpus out"),
            "{e}"
        );
        if usable.len() > 1 {
            let first = usable.iter().next().unwrap();
            spec.osd_cpus = Some(first.to_string().parse().unwrap());
            assert!(check_spec(&spec).is_ok());
        }
        assert!(!dir.exists(), "nothing written");
    }

    #[test]
    fn up_refuses_more_osds_than_one_device_of_its_scenario_holds() {
        let dir = std::env::temp_dir().join("cephplan-lab-check-spec");
        let mut spec = LabSpec::new(&dir, 6789);
        for osds in [1, 3, MAX_OSDS] {
            spec.osds = osds;
            assert!(check_spec(&spec).is_ok(), "{osds} OSDs");
        }
        spec.osds = MAX_OSDS + 1;
        let e = check_spec(&spec).unwrap_err().to_string();
        assert!(
            e.starts_with("--osds 9: ")
                && e.contains("one backing store")
                && e.contains("--osds 8 or fewer")
                && !e.contains("Logs are in"),
            "{e}"
        );
        assert!(!dir.exists(), "nothing written");
        spec.osds = 2;
        spec.replicas = 3;
        let e = check_spec(&spec).unwrap_err().to_string();
        assert!(e.contains("2 OSDs cannot hold 3 replicas"), "{e}");
    }

    /// Finding 7 of the lab audit: the daemons each have their admin socket, every client
    /// process its own (`$pid`), so that a second client never fails to bind fio's.
    #[test]
    fn every_daemon_and_each_client_process_has_its_own_admin_socket() {
        let c = ceph_conf_text(Path::new("/tmp/labx"), 6800, "f", 1 << 30);
        let section = |name: &str| -> String {
            let start = c
                .find(&format!("[{name}]\n"))
                .unwrap_or_else(|| panic!("[{name}]"));
            let body = &c[start + name.len() + 3..];
            body[..body.find("\n[").map_or(body.len(), |i| i + 1)].to_string()
        };
        assert!(!section("global").contains("admin socket"), "{c}");
        for daemon in ["mon", "mgr", "osd"] {
            assert!(
                section(daemon).contains("admin socket = /tmp/labx/run/$cluster-$name.asok\n"),
                "{daemon}: {c}"
            );
        }
        assert!(
            section("client").contains("admin socket = /tmp/labx/run/$cluster-$name.$pid.asok\n")
        );
    }

    /// CBT audit F5: the monitor's cluster and audit logs go under DIR (Ceph 16.2's
    /// `mon_cluster_log_file` default is `default=/var/log/ceph/$cluster.$channel.log
    /// cluster=/var/log/ceph/$cluster.log`, `ceph-conf --show-config-value`), so that
    /// nothing of the lab is written outside DIR or left after `lab down`.
    #[test]
    fn the_monitors_cluster_log_stays_under_dir() {
        let c = ceph_conf_text(Path::new("/tmp/labx"), 6800, "f", 1 << 30);
        assert!(
            c.contains("\nmon cluster log file = default=/tmp/labx/log/$cluster.$channel.log cluster=/tmp/labx/log/$cluster.log\n"),
            "{c}"
        );
        let settings = c.lines().filter(|l| !l.trim_start().starts_with('#'));
        assert!(settings.clone().all(|l| !l.contains("/var/")), "{c}");
    }

    /// Finding 9: `down` of a directory that is gone says there is no lab there.
    #[test]
    fn down_of_a_missing_directory_says_no_lab() {
        let d = tempfile::tempdir().unwrap();
        let gone = d.path().join("lab");
        let e = down(&gone).unwrap_err();
        assert!(matches!(e, LabError::NoLab { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with(&format!("no lab at {} (already down?)", gone.display())));
    }

    #[test]
    fn down_refuses_a_directory_without_lab_json() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("precious"), "x").unwrap();
        assert!(matches!(down(d.path()), Err(LabError::NotALab { .. })));
        assert!(d.path().join("precious").exists());
    }

    /// A failed `up` says what it started and stopped, and never claims daemons it did not
    /// start (issue 16: "the daemons started so far were stopped" after starting none).
    #[test]
    fn a_failed_up_counts_the_daemons_it_stopped() {
        let step = || LabError::Step {
            step: "ceph-mon --mkfs".into(),
            detail: "exit 1".into(),
            log_dir: "/tmp/lab/log".into(),
        };
        let none = LabError::Stopped {
            source: Box::new(step()),
            started: 0,
        }
        .to_string();
        assert!(
            none.ends_with("no daemon had been started yet, so nothing was left running"),
            "{none}"
        );
        assert!(!none.contains("were stopped"), "{none}");
        let three = LabError::Stopped {
            source: Box::new(LabError::Cancelled),
            started: 3,
        }
        .to_string();
        assert_eq!(
            three,
            "cancelled; the 3 daemons it had started were stopped"
        );
    }

    #[test]
    fn down_skips_pids_that_do_not_name_the_directory() {
        // Our own PID is alive but its command line does not name the lab directory, so
        // it must be reported as not running and never signalled.
        let d = tempfile::tempdir().unwrap();
        let state = LabState {
            schema_version: LAB_SCHEMA_VERSION,
            generator: GENERATED_MARKER.into(),
            dir: d.path().to_path_buf(),
            port: 1,
            fsid: "f".into(),
            osds: 0,
            replicas: 1,
            osd_size_bytes: 0,
            pool: "rbd".into(),
            erasure: None,
            osd_cpus: None,
            client_cpus: None,
            daemons: vec![Daemon {
                name: "mon.a".into(),
                pid: std::process::id(),
            }],
        };
        save_state(&state).unwrap();
        let rep = down(d.path()).unwrap();
        assert_eq!(rep.not_running.len(), 1);
        assert!(rep.stopped.is_empty());
        assert!(!d.path().exists());
    }
}

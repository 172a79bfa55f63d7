//! `cephplan lab up|down`: a throwaway local Ceph cluster (see the library's `lab`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use cephplan::lab;

#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    pub action: LabAction,
}

#[derive(Debug, Subcommand)]
pub enum LabAction {
    /// Start mon + mgr + BlueStore OSDs on sparse files under DIR, bound to 127.0.0.1.
    Up {
        /// All state (data, logs, keyrings, ceph.conf, lab.json) goes here; must be new or empty.
        #[arg(long, default_value = "cephplan-lab")]
        dir: PathBuf,
        /// OSDs, 1 to 8: their sparse files share DIR's one backing store, which the
        /// scenario describes as one device holding them all.
        #[arg(long, default_value_t = 3)]
        osds: u32,
        /// Pool size: 1 or 3.
        #[arg(long, default_value_t = 1)]
        replicas: u32,
        /// Monitor port; daemons use PORT+1..=PORT+199.
        #[arg(long, default_value_t = 6789)]
        port: u16,
        /// Also an erasure-coded data pool "rbd-ec" of K data and M coding chunks, one per
        /// OSD (e.g. 2+1; stripe unit 4K, allow_ec_overwrites), with its own scenario
        /// (scenario-ec.toml): validate it with --data-pool rbd-ec.
        #[arg(long, value_name = "K+M")]
        ec: Option<lab::LabErasure>,
        /// Run the monitor, the manager and the OSDs on these CPUs only (a CPU list: 0,
        /// 0-1, 0,2; through taskset) and leave the others to fio (validate --fio-cpus):
        /// one machine as an OSD node and a separate client. The scenario says so.
        #[arg(long, value_name = "CPUS")]
        osd_cpus: Option<cephplan::fio::CpuSet>,
    },
    /// Stop the daemons recorded in DIR/lab.json and remove DIR.
    Down {
        #[arg(long, default_value = "cephplan-lab")]
        dir: PathBuf,
    },
}

pub fn run(args: LabArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        LabAction::Up {
            dir,
            osds,
            replicas,
            port,
            ec,
            osd_cpus,
        } => {
            let mut spec = lab::LabSpec::new(&dir, port);
            spec.osds = osds;
            spec.replicas = replicas;
            spec.erasure = ec;
            spec.osd_cpus = osd_cpus;
            let progress = crate::cli::progress::BarProgress::new();
            let rep = lab::up(&spec, &progress)?;
            println!(
                "lab up in {:.0} s: Ceph {}, {} daemons, pool \"{}\" (size {replicas})",
                rep.elapsed_secs,
                rep.ceph_version,
                rep.daemons.len(),
                rep.pool
            );
            let rows: Vec<Vec<String>> = rep
                .daemons
                .iter()
                .map(|d| vec![d.name.clone(), d.pid.to_string()])
                .collect();
            print!("{}", crate::cli::output::table(&["daemon", "pid"], &rows));
            println!("scenario describing this host: {}", rep.scenario.display());
            println!(
                "point clients at it:\n  export CEPH_CONF={}",
                rep.ceph_conf.display()
            );
            let fio_cpus = rep
                .fio_cpus
                .as_ref()
                .map(|c| format!(" --fio-cpus {c}"))
                .unwrap_or_default();
            if let Some(c) = &rep.fio_cpus {
                println!(
                    "the daemons run on CPU(s) {}; fio belongs on {c}",
                    spec.osd_cpus
                        .as_ref()
                        .map(|o| o.to_string())
                        .unwrap_or_default()
                );
            }
            println!(
                "  cephplan validate --scenario {} --ceph-conf {} --pool {}{fio_cpus}",
                rep.scenario.display(),
                rep.ceph_conf.display(),
                rep.pool
            );
            if let (Some(ec_scenario), Some(data)) = (&rep.scenario_ec, &rep.data_pool) {
                println!(
                    "  cephplan validate --scenario {} --ceph-conf {} --pool {} --data-pool {data}{fio_cpus}",
                    ec_scenario.display(),
                    rep.ceph_conf.display(),
                    rep.pool
                );
            }
            println!(
                "stop it with: cephplan lab down --dir {}",
                rep.dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        LabAction::Down { dir } => {
            let rep = match lab::down(&dir) {
                Ok(rep) => rep,
                // Already down: nothing to do, and a script's teardown may run twice.
                Err(e @ lab::LabError::NoLab { .. }) => {
                    println!("{e}");
                    return Ok(ExitCode::SUCCESS);
                }
                Err(e) => return Err(e.into()),
            };
            println!(
                "lab down: {} daemons stopped ({} needed KILL), {} already gone; removed {}",
                rep.stopped.len(),
                rep.killed.len(),
                rep.not_running.len(),
                rep.dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

//! `cephplan import fio`: append one fio JSON result (run with the rbd engine) as a row of
//! a calibration dataset CSV. `cephplan import cbt`: append one row per point of a CBT
//! librbdfio results tree (`data::cbt`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use cephplan::data::append_runs;
use cephplan::data::cbt::{import_cbt as import_cbt_tree, CbtContext};
use cephplan::data::import::{
    cache_served_reads, note_cache_served, relative_to, run_from_fio, scenario_for_dataset,
    CacheServedReads, ImportContext,
};
use cephplan::fio::json::{read_fio_file, EngineCheck};
use cephplan::spec::{load_scenario, Catalogue};

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// A fio --output-format=json result (plain, multi-job or client/server).
    Fio(ImportFioArgs),
    /// A CBT librbdfio archive (results/<iteration>/id-<hash>/.../json_output.N.HOST):
    /// one row per point, clients summed, iterations averaged.
    Cbt(ImportCbtArgs),
}

#[derive(Debug, Args)]
pub struct ImportCbtArgs {
    /// The archive directory CBT was run with (or any directory above its results/).
    pub archive: PathBuf,
    /// Scenario file of the measured cluster: referred to relative to the CSV when it lies
    /// in the CSV's folder, else copied beside it (scenario-NAME.toml) and the copy referred to.
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    /// Dataset CSV to create or append to (must have been created by cephplan).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Run ids are PREFIX-<point>, the point named as CBT names its run directory, with
    /// `-` for `/`: op_size-<bytes>-concurrent_procs-<n>-iodepth-<n>-<mode>
    /// (total_iodepth-<sum> where the volumes' depths differ); default: the archive
    /// directory's name.
    #[arg(long, value_name = "PREFIX")]
    pub run_id_prefix: Option<String>,
    /// System id; default: the scenario file's name without extension.
    #[arg(long)]
    pub system_id: Option<String>,
}

fn import_cbt(a: ImportCbtArgs) -> anyhow::Result<ExitCode> {
    let stem = |p: &PathBuf| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    anyhow::ensure!(
        a.scenario.is_file(),
        "scenario {} does not exist; pass the scenario file of the measured cluster",
        a.scenario.display()
    );
    cephplan::io::check_writable_file(&a.out, "runs.csv")?;
    let csv_dir = a
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let archive_name = std::fs::canonicalize(&a.archive)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "cbt".into());
    let ctx = CbtContext {
        system_id: a.system_id.clone().unwrap_or_else(|| stem(&a.scenario)),
        scenario: relative_to(&a.scenario, &csv_dir),
        run_id_prefix: a.run_id_prefix.clone().unwrap_or(archive_name),
        data_drive: scenario_drive(&a.scenario),
    };
    let mut imported = import_cbt_tree(&a.archive, &ctx)?;
    // Read the tree first: a refused import leaves no copy of the scenario.
    let scenario = scenario_for_dataset(&a.scenario, &csv_dir)?;
    for r in &mut imported.runs {
        r.scenario = Some(scenario.clone());
    }
    append_runs(&a.out, &imported.runs).with_context(|| {
        format!(
            "appending {} run(s) to {}",
            imported.runs.len(),
            a.out.display()
        )
    })?;
    for i in &imported.incomplete {
        let missing: Vec<String> = i.missing.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "warning: left out {}: it lacks {} (an iteration CBT did not finish, or did not copy back); its point is averaged over the iterations that are complete",
            i.dir.display(),
            missing.join(", ")
        );
    }
    for (p, r) in imported.points.iter().zip(&imported.runs) {
        if let Some(c) = &p.cache_served {
            warn_cache_served(&r.run_id, c);
        }
        eprintln!(
            "appended run {} ({} IOPS; {} file(s), {} client(s), {} iteration(s))",
            r.run_id,
            r.measured.iops.map_or("-".into(), |v| format!("{v:.0}")),
            p.files,
            p.clients,
            p.iterations
        );
    }
    eprintln!("to {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct ImportFioArgs {
    /// fio's JSON output.
    pub result: PathBuf,
    /// Scenario file of the measured cluster: referred to relative to the CSV when it lies
    /// in the CSV's folder, else copied beside it (scenario-NAME.toml) and the copy referred to.
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    /// Dataset CSV to create or append to (must have been created by cephplan).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Run id; default: the JSON file's name without extension.
    #[arg(long)]
    pub run_id: Option<String>,
    /// System id; default: the scenario file's name without extension.
    #[arg(long)]
    pub system_id: Option<String>,
}

pub fn run(cmd: ImportCommand) -> anyhow::Result<ExitCode> {
    let a = match cmd {
        ImportCommand::Fio(a) => a,
        ImportCommand::Cbt(a) => return import_cbt(a),
    };
    let out = read_fio_file(&a.result, EngineCheck::RequireRbd)?;
    out.require_one_workload(&a.result)?;
    let stem = |p: &PathBuf| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    anyhow::ensure!(
        a.scenario.is_file(),
        "scenario {} does not exist; pass the scenario file of the measured cluster",
        a.scenario.display()
    );
    let csv_dir = a
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let ctx = ImportContext {
        run_id: a.run_id.clone().unwrap_or_else(|| stem(&a.result)),
        system_id: a.system_id.clone().unwrap_or_else(|| stem(&a.scenario)),
        scenario: relative_to(&a.scenario, &csv_dir),
        source: relative_to(&a.result, &csv_dir),
    };
    let mut row = run_from_fio(&out, &ctx);
    row.scenario = Some(scenario_for_dataset(&a.scenario, &csv_dir)?);
    // Random reads on hard disks that complete faster than a disk can position are
    // cache-served; the row keeps a note and the user is told (data::import).
    // fio names the pattern (`rw`); where its jobs disagree there is none to check.
    if let Some(c) = scenario_drive(&a.scenario)
        .and_then(|drive| cache_served_reads(&out, row.workload.pattern, &drive))
    {
        warn_cache_served(&row.run_id, &c);
        note_cache_served(&mut row, &c);
    }
    append_runs(&a.out, std::slice::from_ref(&row))
        .with_context(|| format!("appending run {} to {}", row.run_id, a.out.display()))?;
    eprintln!(
        "appended run {} ({} IOPS) to {}",
        row.run_id,
        row.measured.iops.map_or("-".into(), |v| format!("{v:.0}")),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The data devices' kind of the measured cluster, for the hard-disk cache check
/// (`data::import::cache_served_reads`); `None`, with a note, when the scenario does not
/// load with the built-in catalogue (the row is still appended: loading the dataset
/// checks the scenario again, with the catalogue `calibrate` is given).
fn scenario_drive(path: &std::path::Path) -> Option<cephplan::spec::DriveEntry> {
    match load_scenario(path, &Catalogue::builtin()) {
        Ok(s) => Some(s.data.drive),
        Err(e) => {
            eprintln!(
                "note: the scenario did not load with the built-in catalogue, so the hard-disk cache check was skipped and the row is appended as imported: {e}"
            );
            None
        }
    }
}

fn warn_cache_served(run_id: &str, c: &CacheServedReads) {
    eprintln!(
        "warning: run {run_id}: {}; the row is appended with that note, and calibrate and evaluate leave it out (not modelled, the reason named) while the note stays; rerun on a filled image larger than the OSDs' caches for a run they fit",
        c.note()
    );
}

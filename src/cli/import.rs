//! `cephplan import fio`: append one fio JSON result (run with the rbd engine) as a row of
//! a calibration dataset CSV.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use cephplan::data::append_runs;
use cephplan::data::import::{relative_to, run_from_fio, ImportContext};
use cephplan::fio::json::{read_fio_file, EngineCheck};

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// A fio --output-format=json result (plain, multi-job or client/server).
    Fio(ImportFioArgs),
}

#[derive(Debug, Args)]
pub struct ImportFioArgs {
    /// fio's JSON output.
    pub result: PathBuf,
    /// Scenario file of the measured cluster (written relative to the CSV).
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
    let ImportCommand::Fio(a) = cmd;
    let out = read_fio_file(&a.result, EngineCheck::RequireRbd)?;
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
        source: a.result.clone(),
    };
    let row = run_from_fio(&out, &ctx);
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

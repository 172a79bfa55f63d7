//! `cephplan calibrate`: fit the Ceph model to measured runs and write the fitted model
//! file; prints the library's [`CalibrationReport`] as tables or JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::output::{csv_rows, table, Format};
use super::progress::BarProgress;
use cephplan::calibrate::ceph::{
    calibration_start, data_files, prepare_runs, CalibrateOptions, CalibrationReport, Metric,
    NotModelled, ParameterEstimate, PreparedRun,
};
use cephplan::calibrate::ratio;
use cephplan::data::load_runs;
use cephplan::model::ModelParams;
use cephplan::spec::Catalogue;

/// Where the runs, the prior and the catalogue come from (shared by `calibrate`,
/// `profile` and `evaluate`).
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Measured runs: CSV files or directories of CSV files (calibration-data/README.md).
    #[arg(long, value_name = "PATH", num_args = 1.., required = true)]
    pub data: Vec<PathBuf>,
    /// Prior model (values and bounds the priors are centred on); default: the built-in
    /// models/prior.toml.
    #[arg(long, value_name = "FILE")]
    pub prior: Option<PathBuf>,
    /// Hardware catalogue; default: the built-in models/catalogue.toml.
    #[arg(long, value_name = "FILE")]
    pub catalogue: Option<PathBuf>,
}

/// A fit's inputs: the runs, prior and catalogue, and the starting model (shared by
/// `calibrate` and `profile`).
#[derive(Debug, Args)]
pub struct FitInputArgs {
    #[command(flatten)]
    pub sources: DataArgs,
    /// Starting model (its non-fitted parameters are kept); default: the `--prior` when
    /// one is given, else the shipped default model for the runs of one system (your own
    /// cluster: what its runs cannot inform keeps the corpus's values) and the built-in
    /// prior for runs of several systems (a corpus fit).
    #[arg(long, value_name = "FILE")]
    pub start: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub inputs: FitInputArgs,
    /// Where to write the fitted model (TOML).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Parameters to fit, comma-separated; default: what the data can inform (see the
    /// report's parameter table).
    #[arg(long, value_delimiter = ',')]
    pub fit: Vec<String>,
    /// Run ids or system ids to leave out of the fit (repeatable).
    #[arg(long, value_name = "ID")]
    pub exclude: Vec<String>,
    /// Skip leave-one-out cross-validation (faster; no out-of-sample error).
    #[arg(long)]
    pub no_loo: bool,
    /// Also evaluate leave-one-system-out (`cephplan evaluate`, no scale series) and write
    /// the transfer error into the model, so that `predict` states intervals for clusters
    /// the model was not fitted to (needs runs of three or more systems).
    #[arg(long)]
    pub transfer: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// What a fit starts from: the prepared runs, the runs not modelled, the prior and the
/// starting model (shared by `calibrate` and `profile`).
pub struct FitInputs {
    pub prepared: Vec<PreparedRun>,
    pub not_modelled: Vec<NotModelled>,
    pub prior: ModelParams,
    pub start: ModelParams,
    /// Ratio rows with both systems' scenarios (fitted after the main fit).
    pub ratios: Vec<cephplan::calibrate::ratio::PreparedRatio>,
}

/// Loads `--data`, `--prior`, `--start` and `--catalogue`; dataset warnings go to stderr.
pub fn load_inputs(a: &FitInputArgs) -> anyhow::Result<FitInputs> {
    let DataArgs {
        data,
        prior,
        catalogue,
    } = &a.sources;
    let cat = match catalogue {
        Some(p) => Catalogue::load(p)?,
        None => Catalogue::builtin(),
    };
    let prior = match prior {
        Some(p) => ModelParams::load(p)?,
        None => ModelParams::prior(),
    };
    let start = a.start.as_ref().map(|p| ModelParams::load(p)).transpose()?;
    let mut runs = Vec::new();
    for p in data {
        let (r, warnings) = load_runs(p).with_context(|| format!("loading {}", p.display()))?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        runs.extend(r);
    }
    let (prepared, not_modelled) = prepare_runs(&runs, &cat)?;
    // A prior the user named is where their fit starts too, as before; only without
    // either does one system's fit start from the shipped default.
    let start = match (start, a.sources.prior.is_some()) {
        (Some(s), _) => s,
        (None, true) => prior.clone(),
        (None, false) => calibration_start(&prepared, &prior),
    };
    let (ratios, _) = cephplan::calibrate::ratio::prepare_ratios(&runs, &cat)?;
    Ok(FitInputs {
        prepared,
        not_modelled,
        prior,
        start,
        ratios,
    })
}

pub fn run(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    // Refuse an output cephplan may not write before a fit of seconds to minutes.
    cephplan::io::check_writable_owned(&args.out)?;
    cephplan::io::check_not_measured_runs(&args.out)?;
    let FitInputs {
        prepared,
        not_modelled,
        prior,
        start,
        ratios,
    } = load_inputs(&args.inputs)?;
    let files = data_files(&args.inputs.sources.data);
    if args.inputs.start.is_none() && start != prior {
        eprintln!(
            "note: the runs are one system's, so the fit starts from model \"{}\" (the shipped default): what they cannot inform keeps its values; --start FILE starts elsewhere",
            start.name
        );
    }
    let opts = CalibrateOptions {
        fit: args.fit.clone(),
        leave_one_out: !args.no_loo,
        exclude: args.exclude.clone(),
        ..CalibrateOptions::default()
    };
    let bar = BarProgress::new();
    let (report, mut model) = ratio::calibrate_with_ratios(
        &prepared,
        not_modelled,
        &ratios,
        &start,
        &prior,
        &files,
        &opts,
        &bar,
    )?;
    model.name = args
        .out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fitted".into());
    model.description = format!(
        "Fitted by `cephplan calibrate` to {} measured runs; see fitted_on.",
        report
            .runs
            .iter()
            .map(|r| &r.run_id)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );
    if args.transfer {
        let ev = cephplan::evaluate::evaluate(
            &prepared,
            Vec::new(),
            &prior,
            &cephplan::evaluate::EvaluateOptions {
                scale: false,
                ..Default::default()
            },
            &bar,
        );
        match cephplan::evaluate::transfer_of(&ev) {
            Some(t) if ev.loso.systems >= 3 => {
                let iodepth1 = match (t.iodepth1_throughput_ln_sigma, t.iodepth1_latency_ln_sigma) {
                    (Some(x), Some(l)) => {
                        format!("; at iodepth 1: {x:.3} throughput, {l:.3} latency")
                    }
                    _ => String::new(),
                };
                eprintln!(
                    "transfer error over {} systems: σ_ln {:.3} throughput, {:.3} latency{iodepth1}",
                    t.systems, t.throughput_ln_sigma, t.latency_ln_sigma
                );
                model.transfer = Some(t);
            }
            _ => eprintln!(
                "warning: --transfer needs runs of three or more systems; the model keeps {}",
                if model.transfer.is_some() {
                    "its leave-one-run-out error"
                } else {
                    "parameter uncertainty only"
                }
            ),
        }
    }
    cephplan::io::write_atomic_owned(&args.out, model.to_toml().as_bytes())?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Table => print!("{}", render(&report)),
        Format::Csv => print!("{}", runs_csv(&report)?),
    }
    eprintln!("wrote {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// One row per fitted figure of a run: measured, predicted in sample and held out (SI
/// units: IOPS, bytes per second, seconds).
fn runs_csv(report: &CalibrationReport) -> anyhow::Result<String> {
    let num = |v: f64| format!("{v}");
    let rows: Vec<Vec<String>> = report
        .runs
        .iter()
        .map(|c| {
            vec![
                c.system_id.clone(),
                c.run_id.clone(),
                match c.metric {
                    Metric::Iops => "iops",
                    Metric::Bandwidth => "bandwidth_bytes_per_sec",
                    Metric::LatencyMean => "latency_mean_secs",
                }
                .to_string(),
                num(c.measured),
                num(c.predicted),
                format!("{:.3}", c.error_pct),
                c.predicted_loo.map(num).unwrap_or_default(),
                c.error_pct_loo
                    .map(|e| format!("{e:.3}"))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    csv_rows(
        &[
            "system_id",
            "run_id",
            "metric",
            "measured",
            "predicted",
            "error_pct",
            "predicted_loo",
            "error_pct_loo",
        ],
        &rows,
    )
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// The fitted-parameter table (also shown by `validate --refit`).
pub fn parameter_table(parameters: &[ParameterEstimate]) -> String {
    let rows: Vec<Vec<String>> = parameters
        .iter()
        .map(|p| {
            vec![
                p.name.clone(),
                format!("{:.4e}", p.prior),
                format!("{:.4e}", p.value),
                opt(p.std_error, |v| format!("{v:.2e}")),
                opt(p.interval_low, |v| format!("{v:.3e}")),
                opt(p.interval_high, |v| format!("{v:.3e}")),
                if p.at_bound {
                    "at bound".into()
                } else {
                    String::new()
                },
                p.unit.clone(),
            ]
        })
        .collect();
    table(
        &[
            "parameter",
            "prior",
            "value",
            "std error",
            "95% low",
            "95% high",
            "",
            "unit",
        ],
        &rows,
    )
}

fn render(r: &CalibrationReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "fit: {} ({} evaluations), {} degrees of freedom, from model \"{}\"\n\n",
        r.termination.reason, r.termination.evaluations, r.degrees_of_freedom, r.start_model
    ));
    out.push_str(&parameter_table(&r.parameters));
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .runs
        .iter()
        .map(|c| {
            vec![
                c.run_id.clone(),
                format!("{:?}", c.metric).to_lowercase(),
                format!("{:.4e}", c.measured),
                format!("{:.4e}", c.predicted),
                format!("{:+.1}", c.error_pct),
                opt(c.error_pct_loo, |v| format!("{v:+.1}")),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "run",
            "metric",
            "measured",
            "predicted",
            "error %",
            "LOO error %",
        ],
        &rows,
    ));
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .systems
        .iter()
        .map(|s| {
            vec![
                s.system_id.clone(),
                s.runs.to_string(),
                opt(s.mape_in_sample, |v| format!("{v:.1}")),
                opt(s.mape_loo, |v| format!("{v:.1}")),
                opt(s.usl_mape_in_sample, |v| format!("{v:.1}")),
                opt(s.usl_mape_loo, |v| format!("{v:.1}")),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "system",
            "runs",
            "MAPE %",
            "LOO MAPE %",
            "USL MAPE %",
            "USL LOO MAPE %",
        ],
        &rows,
    ));
    out.push_str(&format!(
        "\nall systems: MAPE {} %, LOO MAPE {} (IOPS/bandwidth figures)\n",
        opt(r.mape_in_sample, |v| format!("{v:.1}")),
        r.loo_label()
    ));
    if let Some(u) = &r.usl {
        for s in u.series.iter().filter(|s| !s.note.is_empty()) {
            out.push_str(&format!("USL {}: {}\n", s.label(), s.note));
        }
    }
    if let Some(f) = &r.ratios {
        out.push_str(&ratio_section(f));
    }
    out.push_str(&fit_notes(&r.not_modelled, &r.warnings));
    out
}

/// The ratio rows (seed 003) with their errors and the factors fitted from them.
pub fn ratio_section(f: &ratio::RatioFit) -> String {
    let mut out = String::new();
    out.push_str("\nratio rows (numerator system / reference system, same workload):\n");
    if !f.parameters.is_empty() {
        out.push_str(&parameter_table(&f.parameters));
    }
    let (header, rows) = f.table();
    out.push_str(&table(&header, &rows));
    out.push_str(&format!(
        "ratio rows: MAPE {} % over {} rows\n",
        opt(f.mape, |v| format!("{v:.1}")),
        f.runs.len()
    ));
    out
}

/// The lines under a fit's tables: runs not fitted (and why), then warnings. Shared by
/// `calibrate` and `validate --refit`.
pub fn fit_notes(not_modelled: &[NotModelled], warnings: &[String]) -> String {
    let mut out = String::new();
    for n in not_modelled {
        out.push_str(&format!(
            "not fitted: {} ({}): {}\n",
            n.run_id, n.system_id, n.reason
        ));
    }
    for w in warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

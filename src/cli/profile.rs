//! `cephplan profile`: the calibration's in-sample error with one parameter held at each
//! value of a grid and the others refitted (library: [`cephplan::calibrate::profile`]).
//! Prints a table, JSON or CSV; writes no model.

use std::process::ExitCode;

use clap::Args;

use super::calibrate::{load_inputs, FitInputArgs, FitInputs};
use super::output::{csv_rows, table, Format};
use super::progress::BarProgress;
use cephplan::calibrate::ceph::CalibrateOptions;
use cephplan::calibrate::profile::{profile, ProfileReport, MISS_THRESHOLD_PCT};

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub inputs: FitInputArgs,
    /// The parameter to hold fixed, e.g. osd_write_batch_scale.
    #[arg(long, value_name = "NAME")]
    pub param: String,
    /// Grid of values for it, comma-separated, inside its bounds (e.g. 0.03,0.1,0.3,1).
    #[arg(long, value_delimiter = ',', num_args = 1.., required = true)]
    pub values: Vec<f64>,
    /// Parameters to refit at each value, comma-separated; default: calibrate's set.
    #[arg(long, value_delimiter = ',')]
    pub fit: Vec<String>,
    /// Run ids or system ids to leave out (repeatable).
    #[arg(long, value_name = "ID")]
    pub exclude: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    let FitInputs {
        prepared,
        prior,
        start,
        ..
    } = load_inputs(&args.inputs)?;
    let opts = CalibrateOptions {
        fit: args.fit.clone(),
        exclude: args.exclude.clone(),
        ..CalibrateOptions::default()
    };
    let bar = BarProgress::new();
    let report = profile(
        &prepared,
        &start,
        &prior,
        &opts,
        &args.param,
        &args.values,
        &bar,
    )?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Table => print!("{}", render(&report)),
        Format::Csv => print!("{}", csv_rows(&CSV_HEADER, &csv_values(&report))?),
    }
    Ok(ExitCode::SUCCESS)
}

/// The CSV's columns: the JSON's field names (`termination_*` for its `termination` object),
/// so a script reads either format with the same names.
const CSV_HEADER: [&str; 6] = [
    "value",
    "mape_in_sample",
    "max_abs_throughput_error_pct",
    "throughput_misses",
    "termination_evaluations",
    "termination_reason",
];

/// One CSV row per grid value, at full precision; a missing figure is an empty cell.
fn csv_values(r: &ProfileReport) -> Vec<Vec<String>> {
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    r.points
        .iter()
        .map(|p| {
            vec![
                p.value.to_string(),
                opt(p.mape_in_sample),
                opt(p.max_abs_throughput_error_pct),
                p.throughput_misses.to_string(),
                p.termination.evaluations.to_string(),
                p.termination.reason.clone(),
            ]
        })
        .collect()
}

fn rows(r: &ProfileReport) -> Vec<Vec<String>> {
    r.points
        .iter()
        .map(|p| {
            vec![
                format!("{}", p.value),
                p.mape_in_sample.map_or("-".into(), |v| format!("{v:.2}")),
                p.max_abs_throughput_error_pct
                    .map_or("-".into(), |v| format!("{v:.1}")),
                p.throughput_misses.to_string(),
                p.termination.evaluations.to_string(),
                p.termination.reason.clone(),
            ]
        })
        .collect()
}

fn render(r: &ProfileReport) -> String {
    let mut out = format!(
        "profile of {} ({}), refitting {} parameters at each value\n\n",
        r.parameter,
        r.unit,
        r.refitted.len()
    );
    out.push_str(&table(
        &[
            "value",
            "MAPE %",
            "max |error| %",
            &format!("misses > {MISS_THRESHOLD_PCT} %"),
            "evaluations",
            "termination",
        ],
        &rows(r),
    ));
    if let (Some(b), Some(s)) = (r.best_value, r.mape_spread_points) {
        out.push_str(&format!(
            "\nlowest MAPE at {} = {b}; MAPE spread over the grid {s:.2} points (near 0: the data do not identify {})\n",
            r.parameter, r.parameter
        ));
    }
    if r.cancelled {
        out.push_str("cancelled: the table holds the values done\n");
    }
    out
}

//! CLI glue: one submodule per subcommand. Each turns its arguments into library calls and
//! formats the returned report (table, JSON or CSV). No modelling logic lives here.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod calibrate;
pub mod compare;
pub mod design;
pub mod evaluate;
pub mod import;
pub mod lab;
pub mod output;
pub mod predict;
pub mod profile;
pub mod progress;
pub mod simulate;
pub mod size;
pub mod solve;
pub mod sweep;
pub mod validate;

/// Exit code for errors (bad input, I/O, failed external tools).
pub const EXIT_ERROR: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "cephplan",
    version,
    about = "Capacity and performance planning for Ceph RBD: describe, calibrate, predict, validate"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Predict IOPS, bandwidth, latency and the bottleneck of one scenario.
    Predict(predict::PredictArgs),
    /// Vary one axis (iodepth, nodes, block size, ...) and find the knee under a latency target.
    Sweep(sweep::SweepArgs),
    /// Compare scenarios side by side with one model; --report writes a Markdown or HTML report with plots.
    Compare(compare::CompareArgs),
    /// Smallest node count meeting an IOPS target within a latency target (exit 1 if none).
    Size(size::SizeArgs),
    /// Design a bill of materials from requirements: the Pareto front over cost, power and
    /// rack units, the cheapest design per protection (exit 1 if none meets every target).
    Design(design::DesignArgs),
    /// Solve a generic queueing network file (MVA, approximate MVA, bounds).
    Solve(solve::SolveArgs),
    /// Fit the model to measured runs (calibration-data/*.csv) and write the fitted model.
    Calibrate(calibrate::CalibrateArgs),
    /// Transfer error: leave-one-system-out and scale-series predictions, interval coverage
    /// and rule-of-thumb baselines over measured runs.
    Evaluate(evaluate::EvaluateArgs),
    /// The calibration's error with one parameter held at each value of a grid (does the
    /// data identify it?).
    Profile(profile::ProfileArgs),
    /// Import measured results into a calibration dataset.
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Discrete-event simulation: throughput, mean and tail latency with confidence intervals.
    Simulate(simulate::SimulateArgs),
    /// A throwaway local Ceph cluster for validation (`lab up`, `lab down`).
    Lab(lab::LabArgs),
    /// Predicted vs measured with fio's rbd engine on a real cluster.
    Validate(Box<validate::ValidateArgs>),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Predict(a) => predict::run(a).map(|_| ExitCode::SUCCESS),
        Command::Sweep(a) => sweep::run(a).map(|_| ExitCode::SUCCESS),
        Command::Compare(a) => compare::run(a).map(|_| ExitCode::SUCCESS),
        Command::Size(a) => size::run(a).map(|ok| ExitCode::from(if ok { 0 } else { 1 })),
        Command::Design(a) => design::run(a).map(|ok| ExitCode::from(if ok { 0 } else { 1 })),
        Command::Solve(args) => solve::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Evaluate(args) => evaluate::run(args),
        Command::Profile(args) => profile::run(args),
        Command::Import(cmd) => import::run(cmd),
        Command::Simulate(a) => simulate::run(a),
        Command::Lab(a) => lab::run(a),
        Command::Validate(a) => validate::run(*a),
    }
}

/// An error and its causes on one line, `context: cause: cause`, each cause said once: a
/// library error that already puts its cause in its own message (`cannot read F: …; check
/// the path`) is not followed by that cause again.
pub fn error_message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.is_empty() {
            out = text;
        } else if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::error_message;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read f.json: {0}; check the path")]
    struct Embeds(#[source] std::io::Error);

    #[test]
    fn each_cause_is_said_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        // A cause already in the message is not repeated; context before it is kept.
        let e = anyhow::Error::new(Embeds(io())).context("importing run r1");
        assert_eq!(
            error_message(&e),
            "importing run r1: cannot read f.json: No such file; check the path"
        );
        // A cause not in the message is appended, as anyhow's `{:#}` does.
        let e = anyhow::Error::new(io()).context("appending run r1 to d.csv");
        assert_eq!(error_message(&e), "appending run r1 to d.csv: No such file");
        assert_eq!(error_message(&e), format!("{e:#}"));
    }
}

//! CLI glue: one submodule per subcommand. Each turns its arguments into library calls and
//! formats the returned report (table, JSON or CSV). No modelling logic lives here.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod lab;
pub mod output;
pub mod progress;
pub mod simulate;
pub mod solve;
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
    /// Solve a generic queueing network file (MVA, approximate MVA, bounds).
    Solve(solve::SolveArgs),
    /// Discrete-event simulation: throughput, mean and tail latency with confidence intervals.
    Simulate(simulate::SimulateArgs),
    /// A throwaway local Ceph cluster for validation (`lab up`, `lab down`).
    Lab(lab::LabArgs),
    /// Predicted vs measured with fio's rbd engine on a real cluster.
    Validate(Box<validate::ValidateArgs>),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Solve(args) => solve::run(args),
        Command::Simulate(a) => simulate::run(a),
        Command::Lab(a) => lab::run(a),
        Command::Validate(a) => validate::run(*a),
    }
}

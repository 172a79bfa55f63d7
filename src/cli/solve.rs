//! `cephplan solve`: solve a generic network file (see `qn::file`) and print the
//! library's [`SolveReport`] as a table or JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

use super::output::table;

/// `solve`'s formats: its report is nested, so no CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum SolveFormat {
    /// Human-readable aligned tables.
    #[default]
    Table,
    /// JSON document (stable keys; a contract for other tools).
    Json,
}
use cephplan::qn::file::load_network;
use cephplan::solve::{solve, Method, SolveOptions, SolveReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum MethodArg {
    /// Exact when affordable (one class, or a small multi-class lattice), else Linearizer.
    #[default]
    Auto,
    /// Exact MVA (single-class, or multi-class over the population lattice).
    Exact,
    /// Bard-Schweitzer approximate MVA.
    Schweitzer,
    /// Linearizer approximate MVA.
    Linearizer,
}

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// Network file (TOML, schema_version = 1).
    #[arg(long, value_name = "FILE")]
    pub network: PathBuf,
    /// Output format (no csv: the report is nested).
    #[arg(long, value_enum, default_value_t = SolveFormat::Table)]
    pub format: SolveFormat,
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Relative tolerance of the iterative methods.
    #[arg(long, allow_negative_numbers = true, default_value_t = SolveOptions::default().tolerance)]
    pub tolerance: f64,
    /// Largest population lattice exact multi-class MVA may walk.
    #[arg(long, allow_negative_numbers = true, default_value_t = SolveOptions::default().max_exact_lattice)]
    pub max_exact_lattice: u64,
}

pub fn run(args: SolveArgs) -> anyhow::Result<ExitCode> {
    let net = load_network(&args.network)?;
    let single = net.classes.len() == 1;
    let method = match args.method {
        MethodArg::Auto => None,
        MethodArg::Exact if single => Some(Method::ExactSingleClass),
        MethodArg::Exact => Some(Method::ExactMultiClass),
        MethodArg::Schweitzer => Some(Method::Schweitzer),
        MethodArg::Linearizer => Some(Method::Linearizer),
    };
    let opts = SolveOptions {
        method,
        tolerance: args.tolerance,
        max_exact_lattice: args.max_exact_lattice,
        ..SolveOptions::default()
    };
    let sol = solve(&net, &opts).with_context(|| format!("solving {}", args.network.display()))?;
    let report = SolveReport::new(&net, &sol);
    match args.format {
        SolveFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        SolveFormat::Table => print!("{}", render_table(&report)),
    }
    Ok(ExitCode::SUCCESS)
}

fn render_table(r: &SolveReport) -> String {
    let mut out = format!(
        "method: {} ({})\n",
        serde_json::to_value(r.method)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        if r.exact { "exact" } else { "approximate" }
    );
    if let Some(c) = &r.convergence {
        out.push_str(&format!(
            "convergence: {} after {} iterations (last relative change {:.2e}, tolerance {:.0e})\n",
            if c.converged {
                "converged"
            } else {
                "NOT converged"
            },
            c.iterations,
            c.max_relative_change,
            c.tolerance
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|(name, c)| {
            let b = &r.bounds[name];
            vec![
                name.clone(),
                c.population.to_string(),
                format!("{:.4}", c.throughput_per_sec),
                format!("{:.6}", c.response_time_secs),
                format!(
                    "{:.4}..{:.4}",
                    b.throughput_lower_per_sec, b.throughput_upper_per_sec
                ),
                b.bottleneck.clone().unwrap_or_default(),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "class",
            "N",
            "X (1/s)",
            "R (s)",
            "X bounds (1/s)",
            "bottleneck",
        ],
        &rows,
    ));
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .stations
        .iter()
        .map(|(name, s)| {
            vec![
                name.clone(),
                match s.fractional_servers {
                    Some(c) => format!("{}x{c:.2}", s.multiplicity),
                    None => format!("{}x{}", s.multiplicity, s.servers),
                },
                format!("{:.4}", s.utilization),
                format!("{:.4}", s.queue_length),
                format!("{:.4}", s.queue_length_total),
            ]
        })
        .collect();
    out.push_str(&table(
        &["station", "copies x servers", "U", "Q/copy", "Q total"],
        &rows,
    ));
    out
}

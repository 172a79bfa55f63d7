//! `cephplan compare A.toml B.toml …`: predict several scenarios with one model and show
//! them side by side (`report::compare`); `--report out.md|out.html` writes the comparison
//! report (Markdown with its plots as PNG files beside it, or one self-contained HTML
//! page), each file atomically and never over a file cephplan did not write.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::output::{table, Format};
use super::predict::TailArgs;
use super::progress::BarProgress;
use cephplan::model::ModelParams;
use cephplan::report::render::{csv, files, output_paths, table_rows};
use cephplan::report::{compare, CompareOptions, ComparisonReport, VariantInput};
use cephplan::spec::{parse_scenario, Catalogue};
use cephplan::units::parse_latency_target_secs;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Scenario files, each one column (one file gives a single configuration's report sheet).
    #[arg(required = true, num_args = 1..)]
    pub scenarios: Vec<PathBuf>,
    /// Model parameter file (default: the shipped models/default.toml).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Hardware catalogue (default: the built-in models/catalogue.toml).
    #[arg(long)]
    pub catalogue: Option<PathBuf>,
    /// The knee is the highest IOPS whose mean latency meets this (e.g. 4ms).
    #[arg(long, default_value = "4ms")]
    pub latency_target: String,
    /// Write the report: out.md (plots as out-latency.png and out-utilisation.png beside
    /// it) or out.html (one page, plots embedded).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Skip the simulated p99 (faster; the p99 row then says "not simulated").
    #[arg(long)]
    pub no_tails: bool,
    #[command(flatten)]
    pub sim: TailArgs,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Unique column names: the scenario's name, numbered when two files share one.
fn names(inputs: &[(String, PathBuf)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (n, _) in inputs {
        let mut name = n.clone();
        let mut i = 2;
        while out.contains(&name) {
            name = format!("{n} ({i})");
            i += 1;
        }
        out.push(name);
    }
    out
}

pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    let target = parse_latency_target_secs(&a.latency_target)
        .map_err(|e| anyhow::anyhow!("--latency-target: {e}"))?;
    if a.no_tails && a.sim.given() {
        anyhow::bail!("--seed, --precision, --max-events and --device-service set up the p99 simulation; drop --no-tails or them");
    }
    let cat = match &a.catalogue {
        Some(p) => Catalogue::load(p)?,
        None => Catalogue::builtin(),
    };
    let (params, model_label) = match &a.model {
        Some(p) => (ModelParams::load(p)?, format!("model file {}", p.display())),
        None => (
            ModelParams::shipped_default(),
            "shipped default model (fitted to calibration-data/, not to your hardware)".into(),
        ),
    };
    let mut loaded = Vec::new();
    for p in &a.scenarios {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("cannot read {}; check the path", p.display()))?;
        let scenario = parse_scenario(&text, &p.display().to_string(), &cat)?;
        loaded.push((scenario, text, p.clone()));
    }
    let named: Vec<(String, PathBuf)> = loaded
        .iter()
        .map(|(s, _, p)| (s.name.clone(), p.clone()))
        .collect();
    let inputs: Vec<VariantInput> = loaded
        .into_iter()
        .zip(names(&named))
        .map(|((scenario, text, p), name)| VariantInput {
            name,
            origin: p.display().to_string(),
            text,
            scenario,
        })
        .collect();
    // Refuse a wrong name or a foreign report or plot file before minutes of simulation.
    if let Some(path) = &a.report {
        for p in output_paths(path)? {
            cephplan::io::check_writable_owned(&p)?;
        }
    }
    let opts = CompareOptions {
        latency_target_secs: target,
        tails: if a.no_tails {
            None
        } else {
            Some(a.sim.options()?)
        },
        model_label,
    };
    let r = compare(&inputs, &params, &opts, &BarProgress::with_ctrl_c())?;
    if let Some(path) = &a.report {
        let out = files(&r, path)?;
        // All or nothing: a file that appeared meanwhile refuses the whole report.
        for (p, _) in &out {
            cephplan::io::check_writable_owned(p)?;
        }
        for (p, bytes) in out {
            cephplan::io::write_atomic_owned(&p, &bytes)?;
            eprintln!("wrote {}", p.display());
        }
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&r)?),
        Format::Csv => print!("{}", csv(&r)?),
        Format::Table => print!("{}", table_text(&r)),
    }
    Ok(())
}

fn table_text(r: &ComparisonReport) -> String {
    let mut header: Vec<&str> = vec![""];
    header.extend(r.variants.iter().map(|v| v.name.as_str()));
    let mut o = format!("model: {} ({})\n\n", r.model_label, r.model.name);
    o.push_str(&table(&header, &table_rows(r)));
    for v in &r.variants {
        for w in &v.warnings {
            o.push_str(&format!("warning ({}): {w}\n", v.name));
        }
    }
    o
}

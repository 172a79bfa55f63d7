//! `cephplan simulate`: runs the discrete-event simulator on a generic network file
//! (`--network`, read by `qn::file`, simulated as `SimModel::from_network` describes) or on a
//! simulation-model file with explicit routes and forks (`--model`), and prints the report
//! (table, JSON or CSV). All numbers come from `cephplan::sim`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use cephplan::progress::Progress;
use cephplan::sim::{self, Estimate, SimOptions, SimReport};

use super::output::{table, Format};

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["network", "model"]))]
pub struct SimulateArgs {
    /// Generic network file (the `cephplan solve --network` format): each class visits each
    /// station once, exponential service equal to its demand, one copy per visit.
    #[arg(long, value_name = "FILE")]
    pub network: Option<PathBuf>,
    /// How a network's visits pick among a station's copies (with --network).
    #[arg(long, value_enum, default_value_t = PlacementArg::Random, requires = "network")]
    pub placement: PlacementArg,
    /// Simulation model file (routes, forks, service distributions): TOML if it ends in
    /// .toml, else JSON; layout in the docs of `cephplan::sim::file`.
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Master seed: the same seed gives the same report, bit for bit.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop when every class's mean response and p99 are known within this relative
    /// half-width (95 % confidence).
    #[arg(long, default_value_t = 0.02)]
    pub precision: f64,
    /// Cap on simulated events over the whole run.
    #[arg(long, default_value_t = 2_000_000_000)]
    pub max_events: u64,
    /// Replications before the precision is first checked (at least 2).
    #[arg(long, default_value_t = 10)]
    pub replications: u32,
    /// Worker threads for replications (results do not depend on it).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlacementArg {
    /// Uniformly at random per visit (matches MVA's even split in product form).
    Random,
    /// Cyclically over the copies.
    RoundRobin,
}

/// Draws library progress as an indicatif bar on stderr (hidden when not a terminal).
struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn start(&self, total: u64, what: &str) {
        self.0.set_length(total);
        self.0.set_message(what.to_string());
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

pub fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    let (model, source) = match (&args.network, &args.model) {
        (Some(path), _) => {
            let net = cephplan::qn::file::load_network(path)?;
            let placement = match args.placement {
                PlacementArg::Random => sim::Placement::Random,
                PlacementArg::RoundRobin => sim::Placement::RoundRobin,
            };
            let m = sim::SimModel::from_network(&net, placement)
                .with_context(|| format!("network {}", path.display()))?;
            (m, path)
        }
        (None, Some(path)) => (sim::file::load_model(path)?, path),
        (None, None) => anyhow::bail!("give --network FILE or --model FILE"),
    };
    let opts = SimOptions {
        seed: args.seed,
        relative_precision: args.precision,
        max_events: args.max_events,
        min_replications: args.replications,
        max_replications: SimOptions::default()
            .max_replications
            .max(args.replications),
        threads: args.threads,
        ..SimOptions::default()
    };
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template("{msg} {wide_bar} {human_pos}/{human_len} events")
            .context("progress bar template")?,
    );
    let report = sim::simulate(&model, &opts, &Bar(bar))
        .with_context(|| format!("simulating {}", source.display()))?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Table => print!("{}", render_table(&report)),
        Format::Csv => print!("{}", render_csv(&report)?),
    }
    Ok(ExitCode::SUCCESS)
}

fn pm(e: &Estimate, scale: f64, digits: usize) -> String {
    match e.half_width {
        Some(h) => format!("{:.*} ± {:.*}", digits, e.mean * scale, digits, h * scale),
        None => format!("{:.*}", digits, e.mean * scale),
    }
}

fn render_table(r: &SimReport) -> String {
    let ms = 1e3;
    let rows: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                pm(&c.throughput_per_sec, 1.0, 1),
                pm(&c.response_time_secs, ms, 3),
                pm(&c.percentiles.p50_secs, ms, 3),
                pm(&c.percentiles.p95_secs, ms, 3),
                pm(&c.percentiles.p99_secs, ms, 3),
                pm(&c.percentiles.p999_secs, ms, 3),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "class", "ops/s", "mean ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms",
        ],
        &rows,
    );
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .stations
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                pm(&s.utilization, 100.0, 1),
                pm(&s.queue_length, 1.0, 3),
                pm(&s.queue_length_total, 1.0, 2),
            ]
        })
        .collect();
    out.push_str(&table(
        &["station", "util %", "jobs/copy", "jobs total"],
        &rows,
    ));
    out.push_str(&format!(
        "\n{} replications, {} events, warm-up {:.6} s ({}{}), {:.6} s measured each, stop: {:?}; \
         ± = {:.0} % confidence half-width; percentiles within {:.2} % (histogram)\n",
        r.replications,
        r.events,
        r.warmup.secs,
        r.warmup.method,
        if r.warmup.reliable {
            ""
        } else {
            ", NOT reliable"
        },
        r.measured_secs_per_replication,
        r.stop_reason,
        r.confidence * 100.0,
        r.histogram_relative_error * 100.0,
    ));
    out
}

/// One row per class: estimates and half-widths in seconds and operations per second.
fn render_csv(r: &SimReport) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["class".to_string()];
    for q in [
        "throughput_per_sec",
        "response_time_secs",
        "p50_secs",
        "p95_secs",
        "p99_secs",
        "p999_secs",
    ] {
        header.push(q.to_string());
        header.push(format!("{q}_half_width"));
    }
    w.write_record(&header)?;
    for c in &r.classes {
        let mut row = vec![c.name.clone()];
        for e in [
            &c.throughput_per_sec,
            &c.response_time_secs,
            &c.percentiles.p50_secs,
            &c.percentiles.p95_secs,
            &c.percentiles.p99_secs,
            &c.percentiles.p999_secs,
        ] {
            row.push(e.mean.to_string());
            row.push(e.half_width.map(|h| h.to_string()).unwrap_or_default());
        }
        w.write_record(&row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

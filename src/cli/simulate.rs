//! `cephplan simulate`: runs the discrete-event simulator on a generic network file
//! (`--network`, read by `qn::file`, simulated as `SimModel::from_network` describes), on a
//! simulation-model file with explicit routes and forks (`--model`), or on a Ceph scenario
//! (`--scenario`, built by `qn::ceph::build_sim` with its replica/shard fork-joins; `--model`
//! is then the parameter file, as in `predict`), and prints the report (table, JSON or
//! CSV). A progress bar runs on stderr; Ctrl-C stops early with the replications done. All
//! numbers come from `cephplan::sim`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use cephplan::sim::{self, Estimate, SimOptions, SimReport};

use super::output::{table, Format};

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("input").required(true).multiple(true).args(["network", "model", "scenario"]))]
pub struct SimulateArgs {
    /// Generic network file (the `cephplan solve --network` format): each class visits each
    /// station once, exponential service equal to its demand, one copy per visit.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["model", "scenario"])]
    pub network: Option<PathBuf>,
    /// Ceph scenario TOML (as for `predict`): the same stations and demands as the MVA
    /// model, with replicated and EC writes as fork-joins over the replicas or shards.
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Hardware catalogue for --scenario (default: the built-in one).
    #[arg(long, value_name = "FILE", requires = "scenario")]
    pub catalogue: Option<PathBuf>,
    /// Service-time distribution of the devices (with --scenario).
    #[arg(long, value_enum, requires = "scenario")]
    pub device_service: Option<super::predict::ShapeArg>,
    /// Squared coefficient of variation for --device-service two-moment.
    #[arg(long, allow_negative_numbers = true, requires = "scenario")]
    pub device_scv: Option<f64>,
    /// How the OSD CPU's write batching is simulated (with --scenario; default mean-field:
    /// at the speed exact MVA finds for the scenario's depth).
    #[arg(long, value_enum, requires = "scenario")]
    pub batching: Option<super::predict::BatchingArg>,
    /// How a network's visits pick among a station's copies (with --network).
    #[arg(long, value_enum, default_value_t = PlacementArg::Random, requires = "network")]
    pub placement: PlacementArg,
    /// Simulation model file (routes, forks, service distributions): TOML if it ends in
    /// .toml, else JSON; layout in the docs of `cephplan::sim::file`. With --scenario: the
    /// model parameter file instead (default: the shipped models/default.toml).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Master seed: the same seed gives the same report, bit for bit.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,
    /// Stop when every class's mean response and p99 are known within this relative
    /// half-width (95 % confidence).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.02)]
    pub precision: f64,
    /// Cap on simulated events over the whole run.
    #[arg(long, allow_negative_numbers = true, default_value_t = 2_000_000_000)]
    pub max_events: u64,
    /// Replications before the precision is first checked (at least 2).
    #[arg(long, allow_negative_numbers = true, default_value_t = 10)]
    pub replications: u32,
    /// Worker threads for replications (results do not depend on it).
    #[arg(long, allow_negative_numbers = true, default_value_t = 2)]
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

pub fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    // clap's `requires` does not hold these back when the input group is met by another
    // member, so the scenario-only flags are checked here.
    if args.scenario.is_none() {
        let given: Vec<&str> = [
            ("--catalogue", args.catalogue.is_some()),
            ("--device-service", args.device_service.is_some()),
            ("--device-scv", args.device_scv.is_some()),
            ("--batching", args.batching.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, set)| set.then_some(flag))
        .collect();
        if !given.is_empty() {
            anyhow::bail!(
                "{} only apply to a Ceph scenario; add --scenario FILE or drop them (a network or \
                 simulation-model file states its own service times and batching)",
                given.join(", ")
            );
        }
    }
    let (model, source) = match (&args.network, &args.model) {
        _ if args.scenario.is_some() => {
            let path = args.scenario.as_ref().expect("checked");
            let inputs = super::predict::Inputs {
                scenario: path.clone(),
                model: args.model.clone(),
                catalogue: args.catalogue.clone(),
            };
            let (scn, params) = inputs.load()?;
            let opts = cephplan::qn::ceph::CephSimOptions {
                device_service: super::predict::service_shape(
                    args.device_service,
                    args.device_scv,
                )?,
                batching: args.batching.map(Into::into).unwrap_or_default(),
                ..Default::default()
            };
            let cs = cephplan::qn::ceph::build_sim(&scn, &params, &opts)
                .with_context(|| format!("scenario {}", path.display()))?;
            (cs.model, path)
        }
        (Some(path), _) => {
            let net = cephplan::qn::file::load_network(path)?;
            let placement = match args.placement {
                PlacementArg::Random => sim::Placement::Random,
                PlacementArg::RoundRobin => sim::Placement::RoundRobin,
            };
            let m = sim::SimModel::from_network(&net, placement)
                .with_context(|| format!("network {}", path.display()))?;
            let mixed = cephplan::solve::class_dependent_queues(&net);
            if !mixed.is_empty() {
                eprintln!(
                    "note: queue stations {} serve classes with different demands: simulated first come, first served, which is not product-form there, so `cephplan solve` (MVA, processor sharing) differs",
                    mixed.join(", ")
                );
            }
            (m, path)
        }
        (None, Some(path)) => (sim::file::load_model(path)?, path),
        (None, None) => anyhow::bail!("give --network FILE, --model FILE or --scenario FILE"),
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
    if args.replications < 2 {
        anyhow::bail!(
            "--replications {} is too few: the intervals need at least 2 (default 10)",
            args.replications
        );
    }
    let report = sim::simulate(&model, &opts, &super::progress::BarProgress::with_ctrl_c())
        .with_context(|| format!("simulating {}", source.display()))?;
    if report.replications == 0 {
        anyhow::bail!(
            "simulating {}: no replication finished ({:?} after {} events), so there is nothing to report; raise --max-events (default {})",
            source.display(),
            report.stop_reason,
            report.events,
            SimOptions::default().max_events
        );
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Table => print!("{}", render_table(&report)),
        Format::Csv => print!("{}", render_csv(&report)?),
    }
    if let Some(why) = report.stop_reason.shortfall() {
        eprintln!("warning: {why}");
    }
    Ok(ExitCode::SUCCESS)
}

/// An estimate with its half-width; "–" where nothing was measured (a class of no jobs
/// completes nothing: its mean is not a number).
fn pm(e: &Estimate, scale: f64, digits: usize) -> String {
    if e.mean.is_nan() {
        return "–".to_string();
    }
    match e.half_width {
        Some(h) => format!("{:.*} ± {:.*}", digits, e.mean * scale, digits, h * scale),
        None => format!("{:.*}", digits, e.mean * scale),
    }
}

fn render_table(r: &SimReport) -> String {
    let ms = 1e3;
    let row = |name: String, x: &Estimate, r: &Estimate, p: &sim::Percentiles| {
        vec![
            name,
            pm(x, 1.0, 1),
            pm(r, ms, 3),
            pm(&p.p50_secs, ms, 3),
            pm(&p.p95_secs, ms, 3),
            pm(&p.p99_secs, ms, 3),
            pm(&p.p999_secs, ms, 3),
        ]
    };
    let rows: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|c| {
            row(
                c.name.clone(),
                &c.throughput_per_sec,
                &c.response_time_secs,
                &c.percentiles,
            )
        })
        .chain(r.labels.iter().map(|l| {
            row(
                format!("{}/{}", l.class, l.label),
                &l.throughput_per_sec,
                &l.response_time_secs,
                &l.percentiles,
            )
        }))
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

/// One row per class, then one per labelled choice branch ("class/label"): estimates and half-widths in seconds and operations per second.
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
    let rows = r
        .classes
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                &c.throughput_per_sec,
                &c.response_time_secs,
                &c.percentiles,
            )
        })
        .chain(r.labels.iter().map(|l| {
            (
                format!("{}/{}", l.class, l.label),
                &l.throughput_per_sec,
                &l.response_time_secs,
                &l.percentiles,
            )
        }));
    for (name, x, resp, p) in rows {
        let mut row = vec![name];
        for e in [x, resp, &p.p50_secs, &p.p95_secs, &p.p99_secs, &p.p999_secs] {
            // Empty where nothing was measured (a class of no jobs), as a missing half-width.
            row.push(if e.mean.is_nan() {
                String::new()
            } else {
                e.mean.to_string()
            });
            row.push(e.half_width.map(|h| h.to_string()).unwrap_or_default());
        }
        w.write_record(&row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

//! `cephplan predict`: one scenario → IOPS, bandwidth, latency, utilisation, bottleneck;
//! with `--tails`, also simulated percentiles (progress bar on stderr, Ctrl-C stops the
//! simulation early with wider intervals). Also the input loading, simulation flags and
//! number formatting shared by `sweep`, `size` and `simulate`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use super::output::{table, Format};
use cephplan::model::ModelParams;
use cephplan::predict::format::latency_parts_by_share;
pub use cephplan::predict::format::{count_ci, ms, ms_ci, thousands};
use cephplan::predict::{
    predict, predict_tails, PredictOptions, PredictionReport, TailFigures, TailOptions, TailReport,
};
use cephplan::qn::ceph::{CephSimOptions, ServiceShape};
use cephplan::sim::SimOptions;
use cephplan::spec::{load_scenario, Catalogue, Scenario};

/// Inputs every prediction command takes.
#[derive(Debug, Args)]
pub struct Inputs {
    /// Scenario TOML (cluster, pool, clients, workload).
    #[arg(long)]
    pub scenario: PathBuf,
    /// Model parameter file (default: the shipped models/default.toml).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Hardware catalogue (default: the built-in models/catalogue.toml).
    #[arg(long)]
    pub catalogue: Option<PathBuf>,
}

impl Inputs {
    pub fn load(&self) -> anyhow::Result<(Scenario, ModelParams)> {
        let cat = match &self.catalogue {
            Some(p) => Catalogue::load(p)?,
            None => Catalogue::builtin(),
        };
        let scn = load_scenario(&self.scenario, &cat)?;
        let model = match &self.model {
            Some(p) => ModelParams::load(p)?,
            None => ModelParams::shipped_default(),
        };
        if let Some(p) = &self.model {
            if let Some(w) = defaulted_warning(&p.display().to_string(), &model) {
                eprintln!("warning: {w}");
            }
            if let Some(w) = unread_warning(&p.display().to_string(), &model) {
                eprintln!("warning: {w}");
            }
        }
        Ok((scn, model))
    }
}

/// The warning for a model file that lacks parameters the shipped prior has (the report's
/// `model.defaulted_params`), or `None` for a complete model.
pub fn defaulted_warning(origin: &str, model: &ModelParams) -> Option<String> {
    let names = model.defaulted();
    (!names.is_empty()).then(|| {
        format!(
            "{origin} has no {}: the prediction uses the model's built-in fallback for {} (a factor of 1, or the mechanism left out), not a fitted or sourced value; copy {} from models/prior.toml to use the prior",
            names.iter().map(|n| format!("[param.{n}]")).collect::<Vec<_>>().join(", "),
            if names.len() == 1 { "it" } else { "them" },
            if names.len() == 1 { "it" } else { "them" },
        )
    })
}

/// The warning for a model file with parameters this build does not read (the report's
/// `model.unread_params`), or `None` when it has none.
pub fn unread_warning(origin: &str, model: &ModelParams) -> Option<String> {
    let unread = model.unread();
    (!unread.is_empty()).then(|| {
        format!(
            "{origin} has {}, which this build does not read, so {} nothing; delete {} from the file (the parameters it reads are those of models/prior.toml, plus arch_efficiency.*, release_factor.* and uarch_efficiency.* factors)",
            unread
                .iter()
                .map(|(n, why)| format!("[param.{n}] ({why})"))
                .collect::<Vec<_>>()
                .join(", "),
            if unread.len() == 1 { "it changes" } else { "they change" },
            if unread.len() == 1 { "it" } else { "them" },
        )
    })
}

/// How the simulation runs the OSD CPU's write batching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BatchingArg {
    /// At the speed exact MVA finds for the simulated depth (what calibration fitted).
    MeanField,
    /// At the speed of the queue present when each service starts.
    Dynamic,
}

impl From<BatchingArg> for cephplan::qn::ceph::SimBatching {
    fn from(a: BatchingArg) -> Self {
        match a {
            BatchingArg::MeanField => Self::MeanField,
            BatchingArg::Dynamic => Self::Dynamic,
        }
    }
}

/// Service-time distribution of the simulated devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShapeArg {
    /// Exponential, as MVA assumes.
    Exponential,
    /// Always the mean (no variability).
    Deterministic,
    /// Mean and squared coefficient of variation (give --device-scv).
    TwoMoment,
}

/// The device service shape from `--device-service` and `--device-scv`.
pub fn service_shape(shape: Option<ShapeArg>, scv: Option<f64>) -> anyhow::Result<ServiceShape> {
    Ok(match (shape, scv) {
        (None | Some(ShapeArg::Exponential), None) => ServiceShape::Exponential,
        (Some(ShapeArg::Deterministic), None) => ServiceShape::Deterministic,
        (Some(ShapeArg::TwoMoment), Some(scv))
            if !(scv.is_finite() && (0.0..=cephplan::sim::dist::MAX_SCV).contains(&scv)) =>
        {
            anyhow::bail!(
                "--device-scv {scv} is out of range: give 0 (fixed) to {} (1 is exponential); beyond it a two-moment distribution's rare long services are too rare to sample and the simulated devices would run faster than their mean",
                cephplan::sim::dist::MAX_SCV
            )
        }
        (Some(ShapeArg::TwoMoment), Some(scv)) => ServiceShape::TwoMoment { scv },
        (Some(ShapeArg::TwoMoment), None) => {
            anyhow::bail!("--device-service two-moment needs --device-scv X (e.g. 0.5 for devices steadier than exponential)")
        }
        (_, Some(_)) => {
            anyhow::bail!("--device-scv only applies with --device-service two-moment; add it or drop --device-scv")
        }
    })
}

/// Simulation flags of `predict --tails` and `sweep --percentile` (defaults: seed 1,
/// precision 0.02, 2·10⁹ events, exponential devices).
#[derive(Debug, Args)]
pub struct TailArgs {
    /// Simulation master seed; the same seed gives the same result (default 1).
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Simulate until the mean and p99 are known within this relative half-width at 95 %
    /// confidence (default 0.02).
    #[arg(long, allow_negative_numbers = true)]
    pub precision: Option<f64>,
    /// Cap on simulated events (default 2000000000).
    #[arg(long, allow_negative_numbers = true)]
    pub max_events: Option<u64>,
    /// Service-time distribution of the simulated devices (default exponential).
    #[arg(long, value_enum)]
    pub device_service: Option<ShapeArg>,
    /// Squared coefficient of variation for --device-service two-moment.
    #[arg(long, allow_negative_numbers = true)]
    pub device_scv: Option<f64>,
    /// How the OSD CPU's write batching is simulated (default mean-field).
    #[arg(long, value_enum)]
    pub batching: Option<BatchingArg>,
}

impl TailArgs {
    /// True if any simulation flag was given.
    pub fn given(&self) -> bool {
        self.seed.is_some()
            || self.precision.is_some()
            || self.max_events.is_some()
            || self.device_service.is_some()
            || self.batching.is_some()
            || self.device_scv.is_some()
    }

    pub fn options(&self) -> anyhow::Result<TailOptions> {
        let d = SimOptions::default();
        Ok(TailOptions {
            sim: SimOptions {
                seed: self.seed.unwrap_or(d.seed),
                relative_precision: self.precision.unwrap_or(d.relative_precision),
                max_events: self.max_events.unwrap_or(d.max_events),
                ..d
            },
            service: CephSimOptions {
                device_service: service_shape(self.device_service, self.device_scv)?,
                batching: self.batching.map(Into::into).unwrap_or_default(),
                ..CephSimOptions::default()
            },
        })
    }
}

#[derive(Debug, Args)]
pub struct PredictArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// Also simulate the scenario: p50/p95/p99/p99.9 and simulated IOPS and mean with
    /// confidence intervals (fills latency_p99_secs and the `tails` section).
    #[arg(long)]
    pub tails: bool,
    #[command(flatten)]
    pub sim: TailArgs,
    /// Also predict with nodes down during recovery, e.g. `nodes=1` (overrides the
    /// scenario's `[degraded]` nodes_down).
    #[arg(long, value_name = "nodes=N")]
    pub down: Option<String>,
    /// Share of the OSDs' resources recovery takes, 0 ≤ s ≤ 0.9, or a built-in mClock
    /// profile (balanced 0.5, high_client_ops 0.4, high_recovery_ops 0.7) (with --down;
    /// default the scenario's `[degraded]` recovery_share).
    #[arg(long)]
    pub recovery_share: Option<String>,
    /// Used share of raw capacity when the nodes fail (default the scenario's, else 0.85).
    #[arg(long)]
    pub fill: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// The degraded state asked for by `--down` / `--recovery-share` / `--fill` on top of the
/// scenario's `[degraded]` table; None when neither asks.
pub fn degraded_args(
    scn: &Scenario,
    down: Option<&str>,
    share: Option<f64>,
    fill: Option<f64>,
) -> anyhow::Result<Option<cephplan::spec::DegradedSpec>> {
    let from_file = scn.spec.degraded;
    let nodes_down = match down {
        Some(d) => {
            let n = d
                .strip_prefix("nodes=")
                .and_then(|v| v.trim().parse::<u32>().ok())
                .ok_or_else(|| {
                    anyhow::anyhow!("--down {d:?}: expected nodes=N, e.g. --down nodes=1")
                })?;
            Some(n)
        }
        None => from_file.map(|f| f.nodes_down),
    };
    let Some(nodes_down) = nodes_down else {
        if share.is_some() || fill.is_some() {
            anyhow::bail!("--recovery-share and --fill describe a degraded state: add --down nodes=N (or a [degraded] table to the scenario)");
        }
        return Ok(None);
    };
    if nodes_down >= scn.nodes {
        anyhow::bail!(
            "--down nodes={nodes_down}: the scenario has {} OSD node(s); leave at least one up (--down nodes=1 … {})",
            scn.nodes,
            scn.nodes.saturating_sub(1).max(1)
        );
    }
    // Undersized (fewer surviving failure domains than copies): nothing recovers, so no
    // share is needed.
    let undersized = cephplan::predict::undersized_copies(scn, nodes_down).is_some();
    let recovery_share = share
        .or(from_file.map(|f| f.recovery_share))
        .or(undersized.then_some(0.0))
        .ok_or_else(|| {
            anyhow::anyhow!("--down needs the share of the OSDs' resources recovery takes: add --recovery-share 0.3 (your mClock profile's recovery reservation), or recovery_share in the scenario's [degraded] table")
        })?;
    let d = cephplan::spec::DegradedSpec {
        nodes_down,
        recovery_share,
        fill: fill
            .or(from_file.map(|f| f.fill))
            .unwrap_or(cephplan::spec::NEARFULL_RATIO),
    };
    d.check("--down").map_err(|(field, kind)| {
        anyhow::anyhow!(
            "{}",
            cephplan::spec::SpecError {
                origin: "command line".into(),
                line: None,
                column: None,
                field,
                kind: Box::new(kind),
            }
        )
    })?;
    Ok(Some(d))
}

pub fn run(a: PredictArgs) -> anyhow::Result<()> {
    if !a.tails && a.sim.given() {
        anyhow::bail!("--seed, --precision, --max-events and --device-service set up the simulation; add --tails");
    }
    let (scn, model) = a.inputs.load()?;
    let what = || format!("predicting {}", Path::new(&a.inputs.scenario).display());
    let mut r = predict(&scn, &model, &PredictOptions::default()).with_context(what)?;
    if a.tails {
        let progress = super::progress::BarProgress::with_ctrl_c();
        let t = predict_tails(&scn, &model, &a.sim.options()?, &progress).with_context(what)?;
        r = r.with_tails(t);
    }
    let share = a
        .recovery_share
        .as_deref()
        .map(|v| {
            v.parse::<f64>()
                .ok()
                .or_else(|| cephplan::predict::mclock_recovery_share(v))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--recovery-share {v:?}: give a share 0 ≤ s ≤ 0.9 or an mClock profile (balanced, high_client_ops, high_recovery_ops)"
                    )
                })
        })
        .transpose()?;
    if let Some(d) = degraded_args(&scn, a.down.as_deref(), share, a.fill)? {
        let mut dr =
            cephplan::predict::predict_degraded(&scn, &model, &d, &PredictOptions::default())
                .with_context(what)?;
        // --tails simulates the nodes-down state too (as `design` checks a p99 target there).
        if a.tails {
            let progress = super::progress::BarProgress::with_ctrl_c();
            let ds = cephplan::predict::degraded_scenario(&scn, &d).with_context(what)?;
            let t = predict_tails(&ds, &model, &a.sim.options()?, &progress).with_context(what)?;
            dr.prediction = dr.prediction.with_tails(t);
        }
        r.degraded = Some(Box::new(dr));
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&r)?),
        Format::Csv => print!("{}", csv_report(&r)?),
        Format::Table => print!("{}", table_report(&scn, &r)),
    }
    Ok(())
}

/// Bytes per second → "1.23 GB/s" ([`cephplan::predict::format::rate`]).
pub fn rate(bytes_per_sec: f64) -> String {
    cephplan::predict::format::rate(bytes_per_sec)
}

/// Bytes → "40.80 TB" ([`cephplan::predict::format::bytes`]).
pub fn size(bytes: f64) -> String {
    cephplan::predict::format::bytes(bytes)
}

fn table_report(s: &Scenario, r: &PredictionReport) -> String {
    let mut o = String::new();
    let line = |o: &mut String, k: &str, v: String| o.push_str(&format!("{k:<12}{v}\n"));
    line(&mut o, "scenario", r.scenario.clone());
    line(
        &mut o,
        "model",
        format!("{} ({})", r.model.name, r.model.generator),
    );
    line(
        &mut o,
        "in flight",
        match s.engine {
            cephplan::spec::Engine::FioRbd => format!(
                "{} I/Os ({} images × {} jobs × iodepth {}), block {}",
                thousands(f64::from(r.in_flight)),
                s.images,
                s.jobs_per_image,
                s.iodepth,
                cephplan::units::Bytes(s.block_size_bytes)
            ),
            // A rados workload is one rados bench per client node (`images`) with
            // `concurrency` ops each (`iodepth`).
            cephplan::spec::Engine::Rados => format!(
                "{} ops ({} rados bench × concurrency {}), object {}",
                thousands(f64::from(r.in_flight)),
                s.images,
                s.iodepth,
                cephplan::units::Bytes(s.block_size_bytes)
            ),
        },
    );
    line(
        &mut o,
        "IOPS",
        format!(
            "{}  (read {} / write {})",
            thousands(r.iops),
            thousands(r.read_iops),
            thousands(r.write_iops)
        ),
    );
    line(&mut o, "bandwidth", rate(r.bandwidth_bytes_per_sec));
    let mut lat = format!("mean {}", ms(r.latency_mean_secs));
    if let Some(v) = r.latency_read_mean_secs {
        lat.push_str(&format!(", read {}", ms(v)));
    }
    if let Some(v) = r.latency_write_mean_secs {
        lat.push_str(&format!(", write {}", ms(v)));
    }
    line(&mut o, "latency", lat);
    line(
        &mut o,
        "p99",
        match (r.latency_p99_secs, &r.tails) {
            // The simulation runs its own operating point (replica writes as real
            // fork-joins), which can sit a few percent from MVA's: name it.
            (Some(v), Some(t)) => format!(
                "{} (simulated, at its {} IOPS and {} mean; the tails table below)",
                ms(v),
                thousands(t.all.iops.mean),
                ms(t.all.latency_mean_secs.mean)
            ),
            (Some(v), None) => format!("{} (simulated)", ms(v)),
            _ => "not computed (add --tails to simulate)".into(),
        },
    );
    if let Some(i) = &r.interval_80 {
        line(
            &mut o,
            "80% range",
            format!(
                "IOPS {} – {}, mean latency {} – {}",
                thousands(i.iops_low),
                thousands(i.iops_high),
                ms(i.latency_mean_low_secs),
                ms(i.latency_mean_high_secs),
            ),
        );
    }
    if let Some(i) = &r.interval {
        line(
            &mut o,
            "95% range",
            format!(
                "IOPS {} – {}, mean latency {} – {} ({})",
                thousands(i.iops_low),
                thousands(i.iops_high),
                ms(i.latency_mean_low_secs),
                ms(i.latency_mean_high_secs),
                i.note
            ),
        );
    }
    for (i, k) in r.held_out_by_kind.iter().enumerate() {
        line(
            &mut o,
            if i == 0 { "held out" } else { "" },
            cephplan::predict::format::held_out_kind(k),
        );
    }
    line(
        &mut o,
        "bottleneck",
        format!(
            "{} at {:.1}% utilisation",
            r.bottleneck.resource,
            r.bottleneck.utilization * 100.0
        ),
    );
    line(
        &mut o,
        "bounds",
        format!(
            "at most {} IOPS, at least {} latency",
            thousands(r.bounds.max_iops),
            ms(r.bounds.min_latency_secs)
        ),
    );
    line(
        &mut o,
        "capacity",
        format!(
            "raw {}, usable {} (before Ceph's full ratio)",
            size(r.capacity.raw_bytes),
            size(r.capacity.usable_bytes)
        ),
    );
    line(&mut o, "solver", format!("{:?}", r.solver.method));
    if let Some(t) = &r.tails {
        o.push('\n');
        o.push_str(&tails_table(t));
    }
    if let Some(d) = &r.degraded {
        o.push('\n');
        o.push_str(&degraded_table(d));
    }
    o.push('\n');
    let mut rows: Vec<(String, f64)> = r.utilization.iter().map(|(k, v)| (k.clone(), *v)).collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(k, v)| vec![k, format!("{:.1}%", v * 100.0)])
        .collect();
    o.push_str(&table(&["resource", "utilisation"], &rows));
    o.push('\n');
    o.push_str(&latency_parts_table(r));
    for w in r
        .warnings
        .iter()
        .chain(r.tails.iter().flat_map(|t| &t.warnings))
    {
        o.push_str(&format!("warning: {w}\n"));
    }
    o
}

/// Where the mean latency goes: each resource's part of a read's and a write's mean time
/// on its path, and its share of the mean of all I/Os.
fn latency_parts_table(r: &PredictionReport) -> String {
    let rows: Vec<Vec<String>> = latency_parts_by_share(&r.latency_parts)
        .into_iter()
        .map(|(name, part)| {
            let mut row = vec![name.to_string()];
            if r.latency_read_mean_secs.is_some() {
                row.push(part.read_secs.map(ms).unwrap_or_default());
            }
            if r.latency_write_mean_secs.is_some() {
                row.push(part.write_secs.map(ms).unwrap_or_default());
            }
            row.push(format!("{:.1}%", part.share * 100.0));
            row
        })
        .collect();
    let mut headers = vec!["latency part"];
    if r.latency_read_mean_secs.is_some() {
        headers.push("read");
    }
    if r.latency_write_mean_secs.is_some() {
        headers.push("write");
    }
    headers.push("share of mean");
    table(&headers, &rows)
}

/// The degraded prediction: client figures during recovery and the recovery time, as the
/// library formats them (`predict::format::degraded_lines`, which the app shows too).
pub fn degraded_table(d: &cephplan::predict::DegradedReport) -> String {
    let (heading, lines) = cephplan::predict::format::degraded_lines(d);
    let mut o = format!("{heading}\n");
    for (k, v) in lines {
        o.push_str(&format!("  {k:<12}{v}\n"));
    }
    o
}

/// The simulated figures as a table (all I/Os, then reads and writes of a mix).
pub fn tails_table(t: &TailReport) -> String {
    let row = |name: &str, f: &TailFigures| {
        vec![
            name.to_string(),
            count_ci(&f.iops),
            ms_ci(&f.latency_mean_secs),
            ms_ci(&f.latency_p50_secs),
            ms_ci(&f.latency_p95_secs),
            ms_ci(&f.latency_p99_secs),
            ms_ci(&f.latency_p999_secs),
        ]
    };
    let mut rows = vec![row("all", &t.all)];
    if t.read.is_some() && t.write.is_some() {
        rows.extend(t.read.iter().map(|f| row("read", f)));
        rows.extend(t.write.iter().map(|f| row("write", f)));
    }
    let mut o = format!(
        "simulated ({} replications, seed {}, ± = {:.0} % confidence, stop: {:?}, devices {:?}, batching {:?})\n",
        t.replications,
        t.seed,
        t.confidence * 100.0,
        t.stop_reason,
        t.device_service,
        t.batching
    );
    o.push_str(&table(
        &["I/Os", "IOPS", "mean", "p50", "p95", "p99", "p99.9"],
        &rows,
    ));
    o
}

/// The prediction as CSV: one row for the cluster with every node up and, with `--down`
/// or a `[degraded]` table, one row for the nodes-down state (`state`, and the recovery's
/// lower-bound time where recovery runs).
fn csv_report(r: &PredictionReport) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    w.write_record([
        "scenario",
        "in_flight",
        "iops",
        "read_iops",
        "write_iops",
        "bandwidth_bytes_per_sec",
        "latency_mean_secs",
        "latency_read_mean_secs",
        "latency_write_mean_secs",
        "latency_p99_secs",
        "bottleneck",
        "bottleneck_utilization",
        "max_iops",
        "min_latency_secs",
        "state",
        "recovery_time_secs",
    ])?;
    let mut row = |p: &PredictionReport, state: String, recovery: Option<f64>| {
        w.write_record([
            p.scenario.clone(),
            p.in_flight.to_string(),
            p.iops.to_string(),
            p.read_iops.to_string(),
            p.write_iops.to_string(),
            p.bandwidth_bytes_per_sec.to_string(),
            p.latency_mean_secs.to_string(),
            opt(p.latency_read_mean_secs),
            opt(p.latency_write_mean_secs),
            opt(p.latency_p99_secs),
            p.bottleneck.resource.clone(),
            p.bottleneck.utilization.to_string(),
            p.bounds.max_iops.to_string(),
            p.bounds.min_latency_secs.to_string(),
            state,
            opt(recovery),
        ])
    };
    row(r, "all up".into(), None)?;
    if let Some(d) = &r.degraded {
        let state = match d.undersized {
            Some(copies) => format!("{} node(s) down, undersized: {copies} copies", d.nodes_down),
            None => format!("{} node(s) down, recovering", d.nodes_down),
        };
        row(
            &d.prediction,
            state,
            d.recovery.as_ref().map(|x| x.time_secs),
        )?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

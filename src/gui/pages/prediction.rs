//! Prediction page: the scenario open in the designer, validated by `spec`, mapped onto a
//! queueing network by `qn::ceph::build` with the app's model (the one selector in the top
//! bar: shipped default, a fitted file or a validation refit), and solved by MVA on a
//! worker thread — headline IOPS, bandwidth and mean latency,
//! utilisation per resource with the bottleneck, latency vs IOPS as iodepth grows (with
//! the latency target and the deepest whole iodepth that meets it, the knee Compare and its
//! report state, `report::mean_knee`, searched on a worker), and IOPS vs node
//! count. Recomputes (debounced) whenever the scenario text changes. "Add to Compare"
//! files the scenario's network with its node and core counts on the Compare page. A
//! scenario with a `[degraded]` table also shows the cluster with those nodes down (during
//! recovery, or undersized), the lines `cephplan predict` prints under its headline
//! (`predict::format::degraded_lines`).
//!
//! With "Simulate tails" on, each MVA prediction is followed by two simulation jobs (one
//! at a time, progress and Cancel): [`tails_text`] — `predict::predict_tails`, what
//! `cephplan predict --tails --seed S --precision P` prints: p50/p95/p99/p99.9, simulated
//! IOPS and mean, each with its confidence interval — then [`tail_curve_text`], the
//! iodepth sweep `with_tails(99, ..)` (`cephplan sweep --percentile 99`), which adds the
//! simulated p99 curve to the hockey stick and moves the knee to the p99 knee. Every
//! simulated result is held with the scenario text and settings it was computed for and
//! shown only while they are the current ones, so an edit never leaves a p99 of another
//! scenario on screen.
//!
//! The headline's 95 % interval is `predict::predict`'s (delta method on the fitted
//! model's covariance), the same range `cephplan predict` prints, and so are the caveats
//! (the solver's approximations, the batching rule, extrapolation warnings) and the
//! solver's method, in words. A result is tied to the text and model it was computed
//! for: while the current text does not validate, the page says so, shows no pending p99
//! and files nothing on Compare.
//!
//! Not here: the model (`qn::ceph`), solving (`solve`), simulating (`predict`, `sim`).

use serde::{Deserialize, Serialize};

use super::compare::Variant;
use super::network::{sweep_at, NetworkSweep};
use crate::gui::app::{ActiveModel, Command, ModelChoice};
use crate::gui::job::{Job, JobOutcome, Recompute};
use crate::gui::plot::{self, Series};
use crate::model::ModelParams;
use crate::predict::format::{
    batching_label, count_ci, eng, ms, ms_ci, service_shape_label, solver_label, stop_reason_label,
    thousands, Quantity,
};
use crate::predict::{
    predict_tails, sweep, KneeReport, SizingReport, SizingSpec, SweepAxis, SweepReport, SweepSpec,
    TailFigures, TailOptions, TailReport,
};
use crate::progress::{NoProgress, Progress};
use crate::qn::ceph::{build, CephSimOptions};
use crate::sim::{SimOptions, StopReason};
use crate::solve::{solve, Method, SolveOptions};
use crate::spec::{parse_scenario, CapacityReport, Catalogue, Scenario};

/// iodepth values of the latency-vs-IOPS curve (the scenario's own is added).
pub const IODEPTHS: [u32; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/// What the page shows for one scenario text.
#[derive(Debug, Clone, PartialEq)]
pub struct CephPrediction {
    pub name: String,
    pub nodes: u32,
    /// CPU cores of the OSD nodes in total (nodes × sockets × cores per socket).
    pub cores: u32,
    pub osds: u32,
    pub images_x_jobs: u32,
    pub iodepth: u32,
    pub bytes_per_io: f64,
    pub capacity: CapacityReport,
    /// What `cephplan predict` prints as `warning:` lines for the same scenario and model:
    /// the builder's notes, the solver's approximations, the batching extrapolation.
    pub caveats: Vec<String>,
    /// How the headline was solved.
    pub method: Method,
    /// The model it was predicted with ([`ModelChoice::label`]).
    pub model: String,
    pub model_choice: ModelChoice,
    /// The scenario text and its origin (what a comparison report re-reads).
    pub scenario_text: String,
    pub origin: String,
    /// Solutions at `images × jobs × d` for each swept iodepth `d`; `at_population` is the
    /// scenario's own iodepth.
    pub sweep: NetworkSweep,
    /// `(nodes, IOPS)` at the scenario's population, for other node counts that validate.
    pub by_nodes: Vec<(u32, f64)>,
    /// The network at the scenario's population (what Compare solves for this scenario).
    pub network: crate::qn::Network,
    /// 95 % interval of IOPS and mean latency from the model's parameter covariance
    /// (`predict::predict`; `None` when the model carries no covariance).
    pub interval: Option<crate::predict::Interval>,
    /// The model's held-out record for this scenario's kinds of run, as `cephplan predict`
    /// lists it under "held out".
    pub held_out_by_kind: Vec<crate::model::TransferKind>,
    /// Where the mean latency goes, resource by resource, as `cephplan predict` lists it.
    pub latency_parts: std::collections::BTreeMap<String, crate::predict::LatencyPart>,
    /// Whether the workload has reads and writes (which columns the latency parts show).
    pub has_reads: bool,
    pub has_writes: bool,
    /// The scenario's `[degraded]` table predicted as `cephplan predict` does
    /// (`predict::predict_degraded`: nodes down during recovery, or undersized); `None`
    /// without the table, `Some(Err)` with why it cannot be predicted.
    pub degraded: Option<Result<crate::predict::DegradedReport, String>>,
}

pub type PredictionResult = Result<CephPrediction, String>;

/// The iodepths of the latency-vs-IOPS curve: [`IODEPTHS`] and the scenario's own, ascending.
pub fn swept_iodepths(own: u32) -> Vec<u32> {
    let mut depths: Vec<u32> = IODEPTHS.to_vec();
    depths.push(own);
    depths.sort_unstable();
    depths.dedup();
    depths
}

/// The scenario of a text with the built-in catalogue (what the CLI uses without
/// `--catalogue`).
fn load(text: &str, origin: &str) -> Result<Scenario, String> {
    parse_scenario(text, origin, &Catalogue::builtin()).map_err(|e| e.to_string())
}

/// Validates, builds and solves a scenario text (`origin` names it in errors) with `model`.
pub fn predict_text(
    text: &str,
    origin: &str,
    model: &ActiveModel,
    progress: &dyn Progress,
) -> PredictionResult {
    let cat = Catalogue::builtin();
    let params: &ModelParams = &model.params;
    let scenario = load(text, origin)?;
    let ceph = build(&scenario, params).map_err(|e| e.to_string())?;
    let base = scenario.images * scenario.jobs_per_image;
    let depths = swept_iodepths(scenario.iodepth);
    let pops: Vec<u32> = depths.iter().map(|d| d * base).collect();
    let sweep = sweep_at(ceph.network.clone(), &pops, scenario.population(), progress)?;
    if progress.is_cancelled() {
        return Err("cancelled".into());
    }
    let report = crate::predict::predict(
        &scenario,
        params,
        &crate::predict::PredictOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    // IOPS against node count, everything else as written.
    let mut by_nodes = Vec::new();
    let max_nodes = (scenario.nodes * 2).max(scenario.nodes + 4);
    for n in 1..=max_nodes {
        if progress.is_cancelled() {
            return Err("cancelled".into());
        }
        let mut spec = scenario.spec.clone();
        spec.cluster.nodes = n;
        let Ok(s) = spec.validate(&cat) else { continue };
        let Ok(c) = build(&s, params) else { continue };
        if let Ok(sol) = solve(&c.network, &SolveOptions::default()) {
            by_nodes.push((n, sol.classes[0].throughput_per_sec));
        }
    }
    Ok(CephPrediction {
        name: scenario.name.clone(),
        nodes: scenario.nodes,
        cores: scenario.nodes * scenario.sockets * scenario.node_cpu.cores,
        osds: scenario.total_osds(),
        images_x_jobs: base,
        iodepth: scenario.iodepth,
        bytes_per_io: ceph.bytes_per_io,
        capacity: scenario.capacity,
        caveats: report.warnings,
        method: report.solver.method,
        model: model.label(),
        model_choice: model.choice.clone(),
        scenario_text: text.to_owned(),
        origin: origin.to_owned(),
        network: ceph.network.clone(),
        sweep,
        by_nodes,
        interval: report.interval,
        has_reads: report.latency_read_mean_secs.is_some(),
        has_writes: report.latency_write_mean_secs.is_some(),
        latency_parts: report.latency_parts,
        held_out_by_kind: report.held_out_by_kind,
        degraded: scenario.spec.degraded.map(|d| {
            crate::predict::predict_degraded(
                &scenario,
                params,
                &d,
                &crate::predict::PredictOptions::default(),
            )
            .map_err(|e| e.to_string())
        }),
    })
}

/// Where the mean latency goes: each resource's part of a read's and a write's mean time
/// on its path and its share of the mean, largest first, as `cephplan predict` lists them.
fn latency_parts_ui(ui: &mut egui::Ui, p: &CephPrediction) {
    ui.strong("where the mean latency goes")
        .on_hover_text("each resource's time on the I/O's path, queueing included");
    egui::Grid::new("latency parts")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            ui.label("resource");
            if p.has_reads {
                ui.label("read");
            }
            if p.has_writes {
                ui.label("write");
            }
            ui.label("share of mean");
            ui.end_row();
            for (name, part) in crate::predict::format::latency_parts_by_share(&p.latency_parts) {
                ui.label(name);
                if p.has_reads {
                    ui.label(part.read_secs.map(ms).unwrap_or_default());
                }
                if p.has_writes {
                    ui.label(part.write_secs.map(ms).unwrap_or_default());
                }
                ui.label(format!("{:.1} %", part.share * 100.0));
                ui.end_row();
            }
        });
}

/// The highest swept point whose mean latency meets the target:
/// `(iodepth, IOPS, latency secs)`.
pub fn best_within_target(p: &CephPrediction, target_secs: f64) -> Option<(u32, f64, f64)> {
    p.sweep
        .curve
        .iter()
        .filter(|c| c.2 <= target_secs)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|&(n, x, r)| (n / p.images_x_jobs.max(1), x, r))
}

/// The percentile of the simulated hockey stick and its knee.
pub const KNEE_PERCENTILE: f64 = 99.0;

/// How the page simulates tails (persisted). Seed and precision are the CLI's `--seed` and
/// `--precision`; everything else is at the CLI's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TailSettings {
    /// Simulate after each MVA prediction.
    pub enabled: bool,
    pub seed: u64,
    /// Relative CI half-width of the mean and p99 at which the simulation stops.
    pub relative_precision: f64,
}

impl Default for TailSettings {
    fn default() -> Self {
        let d = SimOptions::default();
        Self {
            enabled: false,
            seed: d.seed,
            relative_precision: d.relative_precision,
        }
    }
}

impl TailSettings {
    /// The options `cephplan predict --tails --seed S --precision P` simulates with
    /// (`cli::predict::TailArgs::options` without the other flags).
    pub fn options(&self) -> TailOptions {
        TailOptions {
            sim: SimOptions {
                seed: self.seed,
                relative_precision: self.relative_precision,
                ..SimOptions::default()
            },
            service: CephSimOptions::default(),
        }
    }
}

/// Simulated tails of a scenario text: `predict_tails` with the model, what
/// `cephplan predict --tails [--model F]` prints for the same file, seed and precision.
pub fn tails_text(
    text: &str,
    origin: &str,
    params: &ModelParams,
    settings: &TailSettings,
    progress: &dyn Progress,
) -> Result<TailReport, String> {
    let s = load(text, origin)?;
    predict_tails(&s, params, &settings.options(), progress).map_err(|e| {
        if progress.is_cancelled() {
            "cancelled before the first replication".to_owned()
        } else {
            e.to_string()
        }
    })
}

/// The latency-vs-IOPS curve with every point simulated: the iodepth sweep over `depths`
/// `with_tails(99, ..)`, what `cephplan sweep --vary iodepth=.. --percentile 99` computes
/// (same seed at every point). A cancelled sweep returns the points done
/// (`complete: false`).
pub fn tail_curve_text(
    text: &str,
    origin: &str,
    params: &ModelParams,
    depths: &[u32],
    settings: &TailSettings,
    progress: &dyn Progress,
) -> Result<SweepReport, String> {
    let s = load(text, origin)?;
    let spec = SweepSpec {
        axis: SweepAxis::Iodepth,
        values: depths.iter().map(|&d| u64::from(d)).collect(),
        latency_target_secs: None,
        tails: None,
    }
    .with_tails(KNEE_PERCENTILE, settings.options())
    .map_err(|e| e.to_string())?;
    sweep(&s, params, &spec, progress).map_err(|e| e.to_string())
}

/// What a simulation was run for: the scenario text, the model and the settings (the
/// catalogue is the built-in one).
#[derive(Debug, Clone, PartialEq)]
struct TailKey {
    text: String,
    model: ModelChoice,
    seed: u64,
    relative_precision: f64,
}

type Keyed<T> = Option<(TailKey, T)>;

/// Seconds the simulation inputs must stay unchanged before a run starts (dragging the
/// seed or precision would otherwise start and cancel a run per step).
const TAIL_DEBOUNCE_SECS: f64 = 0.3;

#[derive(Default)]
struct TailRuntime {
    /// The key the current inputs ask for (None: tails off), and since when (egui time).
    wanted: Option<(TailKey, f64)>,
    headline_job: Keyed<Job<Result<TailReport, String>>>,
    headline: Keyed<Result<TailReport, String>>,
    curve_job: Keyed<Job<Result<SweepReport, String>>>,
    curve: Keyed<Result<SweepReport, String>>,
}

impl TailRuntime {
    fn wanted_key(&self) -> Option<&TailKey> {
        self.wanted.as_ref().map(|(k, _)| k)
    }

    /// A held result, if it belongs to the current inputs.
    fn current<'a, T>(&self, held: &'a Keyed<T>) -> Option<&'a T> {
        match (held, self.wanted_key()) {
            (Some((k, v)), Some(w)) if k == w => Some(v),
            _ => None,
        }
    }
}

/// True when `h` holds a result for `key`.
fn held<T>(h: &Keyed<T>, key: &TailKey) -> bool {
    h.as_ref().is_some_and(|(k, _)| k == key)
}

/// Polls a keyed job: cancels it once its key is no longer wanted; returns its outcome when
/// it has ended, unless its key went stale meanwhile.
fn poll_keyed<T>(
    slot: &mut Keyed<Job<Result<T, String>>>,
    wanted: Option<&TailKey>,
) -> Keyed<Result<T, String>> {
    let (key, job) = slot.as_mut()?;
    let stale = wanted != Some(&*key);
    if stale && !job.is_cancel_requested() {
        job.cancel();
    }
    let out = job.poll()?;
    let (key, _) = slot.take()?;
    if stale {
        return None;
    }
    let r = match out {
        JobOutcome::Done(r) => r,
        JobOutcome::Panicked(m) => Err(format!("the simulation failed: {m}")),
    };
    Some((key, r))
}

/// What a knee search ran for: the scenario text, the model and the latency target (its
/// bits, in ms).
type KneeKey = (String, ModelChoice, u64);

/// The mean knee to the whole iodepth ([`crate::report::mean_knee`], what Compare and its
/// report state), searched on a worker after each MVA prediction and target change.
#[derive(Default)]
struct KneeRuntime {
    job: Option<(KneeKey, Job<Result<KneeReport, String>>)>,
    done: Option<(KneeKey, Result<KneeReport, String>)>,
}

/// "Size for a target": the search running (with the text it sizes) and its last outcome.
#[derive(Default)]
struct SizeRuntime {
    job: Option<(String, Job<Result<SizingReport, String>>)>,
    done: Option<(String, Result<SizingReport, String>)>,
}

#[derive(Default)]
struct Runtime {
    knee: KneeRuntime,
    size: SizeRuntime,
    recompute: Recompute<PredictionResult>,
    result: Option<CephPrediction>,
    error: Option<String>,
    /// The text and model last sent for solving.
    solved: Option<(String, ModelChoice)>,
    /// The text and model `result` was computed for.
    result_key: Option<(String, ModelChoice)>,
    /// The model of the inputs (its parameters, for the simulation jobs).
    model: ActiveModel,
    tails: TailRuntime,
}

#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct PredictionPage {
    pub latency_target_ms: f64,
    pub tails: TailSettings,
    /// "Size for a target": the IOPS the cluster must deliver under the latency target
    /// (`cephplan size --iops`), and the largest node count tried (`--max-nodes`).
    pub size_iops_target: f64,
    pub size_max_nodes: u32,
    #[serde(skip)]
    rt: Runtime,
}

impl Default for PredictionPage {
    fn default() -> Self {
        Self {
            latency_target_ms: 4.0,
            tails: TailSettings::default(),
            size_iops_target: 0.0,
            size_max_nodes: 64,
            rt: Runtime::default(),
        }
    }
}

impl PredictionPage {
    pub fn result(&self) -> Option<&CephPrediction> {
        self.rt.result.as_ref()
    }
    pub fn error(&self) -> Option<&str> {
        self.rt.error.as_deref()
    }
    pub fn is_busy(&self) -> bool {
        self.rt.recompute.is_busy()
    }

    /// True when the result on screen is the prediction of the current text and model
    /// (not an earlier one kept while the text does not validate or is being solved).
    pub fn result_is_current(&self) -> bool {
        self.rt.result.is_some()
            && !self.rt.recompute.is_busy()
            && self.rt.error.is_none()
            && self.rt.result_key.is_some()
            && self.rt.result_key == self.rt.solved
    }

    /// The simulated tails of the current scenario text and settings (also a cancelled
    /// run's, with its warning), None while they are not computed.
    pub fn tails(&self) -> Option<&TailReport> {
        self.rt
            .tails
            .current(&self.rt.tails.headline)?
            .as_ref()
            .ok()
    }

    /// Why the tails of the current inputs could not be simulated.
    pub fn tails_error(&self) -> Option<&str> {
        self.rt
            .tails
            .current(&self.rt.tails.headline)?
            .as_ref()
            .err()
            .map(String::as_str)
    }

    /// The simulated latency-vs-IOPS sweep of the current inputs (partial when cancelled).
    pub fn tail_curve(&self) -> Option<&SweepReport> {
        self.rt.tails.current(&self.rt.tails.curve)?.as_ref().ok()
    }

    /// True while a simulation job runs (or winds down after a cancel).
    pub fn is_simulating(&self) -> bool {
        self.rt.tails.headline_job.is_some() || self.rt.tails.curve_job.is_some()
    }

    /// The name of the simulation job running for the current inputs ("simulating tails",
    /// "simulating the curve"), unless it was cancelled.
    pub fn running_simulation(&self) -> Option<&str> {
        let t = &self.rt.tails;
        let headline = t.headline_job.as_ref();
        let h = headline.map(|(k, j)| (k, j.name(), j.is_cancel_requested()));
        let c = t.curve_job.as_ref();
        let c = c.map(|(k, j)| (k, j.name(), j.is_cancel_requested()));
        h.or(c)
            .filter(|&(k, _, cancelled)| Some(k) == t.wanted_key() && !cancelled)
            .map(|(_, name, _)| name)
    }

    /// Recomputes at the next frame without waiting for the edit debounce (Ctrl+Enter).
    pub fn predict_now(&mut self) {
        self.rt.solved = None;
        self.rt.recompute.request_now();
    }

    /// Keeps the prediction in step with `text` (call every frame, also when the page is
    /// not shown, so that it is ready when the user switches to it).
    pub fn follow(&mut self, ctx: &egui::Context, text: &str, origin: &str, model: &ActiveModel) {
        let now = ctx.input(|i| i.time);
        let key_is = |k: &(String, ModelChoice)| k.0 == text && k.1 == model.choice;
        if !self.rt.solved.as_ref().is_some_and(key_is) {
            let model_changed = self.rt.solved.as_ref().is_some_and(|k| k.1 != model.choice);
            if self.rt.solved.is_none() || model_changed {
                self.rt.recompute.request_now();
            } else {
                self.rt.recompute.request(now);
            }
            self.rt.solved = Some((text.to_owned(), model.choice.clone()));
            self.rt.model = model.clone();
        }
        let (owned_text, owned_origin, m) = (text.to_owned(), origin.to_owned(), model.clone());
        match self.rt.recompute.tick(ctx, now, move |ctx| {
            Job::spawn("predicting", ctx, move |p| {
                predict_text(&owned_text, &owned_origin, &m, p)
            })
        }) {
            Some(JobOutcome::Done(Ok(r))) => {
                self.rt.result_key = Some((r.scenario_text.clone(), r.model_choice.clone()));
                self.rt.result = Some(r);
                self.rt.error = None;
            }
            Some(JobOutcome::Done(Err(e))) => self.rt.error = Some(e),
            Some(JobOutcome::Panicked(m)) => self.rt.error = Some(format!("model failed: {m}")),
            None => {}
        }
        self.follow_tails(ctx, now, origin);
        self.follow_knee(ctx, origin);
    }

    /// The key of the knee the current inputs ask for, once their MVA prediction is in.
    fn wanted_knee(&self) -> Option<KneeKey> {
        let (text, model) = self.rt.solved.clone()?;
        self.result_is_current()
            .then(|| (text, model, self.latency_target_ms.to_bits()))
    }

    /// The whole-iodepth knee of the current inputs, when found.
    pub fn knee(&self) -> Option<&Result<KneeReport, String>> {
        let want = self.wanted_knee()?;
        match &self.rt.knee.done {
            Some((k, r)) if *k == want => Some(r),
            _ => None,
        }
    }

    /// Searches the whole-iodepth knee of the current text, model and target on a worker;
    /// drops a search for older inputs.
    fn follow_knee(&mut self, ctx: &egui::Context, origin: &str) {
        let want = self.wanted_knee();
        let k = &mut self.rt.knee;
        if let Some((key, job)) = &mut k.job {
            if Some(&*key) != want.as_ref() && !job.is_cancel_requested() {
                job.cancel();
            }
            if let Some(out) = job.poll() {
                let (key, _) = k.job.take().expect("a job was polled");
                if Some(&key) == want.as_ref() {
                    let r = match out {
                        JobOutcome::Done(r) => r,
                        JobOutcome::Panicked(m) => Err(format!("the knee search failed: {m}")),
                    };
                    k.done = Some((key, r));
                }
            }
        }
        let Some(want) = want else { return };
        let held = k.done.as_ref().is_some_and(|(d, _)| *d == want);
        if held || k.job.is_some() {
            return;
        }
        let (text, origin) = (want.0.clone(), origin.to_owned());
        let params = self.rt.model.params.clone();
        let target_secs = self.latency_target_ms / 1e3;
        k.job = Some((
            want,
            Job::spawn("finding the knee", ctx, move |p| {
                let s = load(&text, &origin)?;
                crate::report::mean_knee(&s, &params, target_secs, p).map_err(|e| e.to_string())
            }),
        ));
    }

    /// Runs the simulations the inputs ask for, one job at a time and only once the MVA
    /// prediction of the current text is in; drops what belongs to older inputs.
    fn follow_tails(&mut self, ctx: &egui::Context, now: f64, origin: &str) {
        let rt = &mut self.rt;
        let want = match (&rt.solved, self.tails.enabled) {
            (Some((text, model)), true) => Some(TailKey {
                text: text.clone(),
                model: model.clone(),
                seed: self.tails.seed,
                relative_precision: self.tails.relative_precision,
            }),
            _ => None,
        };
        if want.as_ref() != rt.tails.wanted_key() {
            rt.tails.wanted = want.map(|k| (k, now));
        }
        let t = &mut rt.tails;
        let wanted = t.wanted.as_ref().map(|(k, _)| k);
        if let Some(done) = poll_keyed(&mut t.headline_job, wanted) {
            t.headline = Some(done);
        }
        if let Some(done) = poll_keyed(&mut t.curve_job, wanted) {
            t.curve = Some(done);
        }
        let Some((key, since)) = t.wanted.clone() else {
            return;
        };
        // The MVA prediction of exactly this text is in (a failed one leaves `error`).
        let mva_ready = !rt.recompute.is_busy()
            && rt.error.is_none()
            && rt.result_key.is_some()
            && rt.result_key == rt.solved;
        let Some(p) = rt.result.as_ref().filter(|_| mva_ready) else {
            return;
        };
        if t.headline_job.is_some() || t.curve_job.is_some() {
            return;
        }
        if now - since < TAIL_DEBOUNCE_SECS {
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(
                TAIL_DEBOUNCE_SECS - (now - since),
            ));
            return;
        }
        let settings = self.tails.clone();
        let (text, origin) = (key.text.clone(), origin.to_owned());
        let params = rt.model.params.clone();
        if !held(&t.headline, &key) {
            t.curve = None;
            t.headline_job = Some((
                key,
                Job::spawn("simulating tails", ctx, move |pr| {
                    tails_text(&text, &origin, &params, &settings, pr)
                }),
            ));
            return;
        }
        // The curve follows a headline run that finished (not one the user cancelled).
        let headline_done = matches!(
            &t.headline,
            Some((_, Ok(r))) if r.stop_reason != StopReason::Cancelled
        );
        if headline_done && !held(&t.curve, &key) {
            let depths = swept_iodepths(p.iodepth);
            t.curve_job = Some((
                key,
                Job::spawn("simulating the curve", ctx, move |pr| {
                    tail_curve_text(&text, &origin, &params, &depths, &settings, pr)
                }),
            ));
        }
    }

    /// Forgets the curve, and the headline tails unless they finished (the same seed would
    /// give them again), so that the cancelled or failed runs start again.
    fn simulate_again(&mut self) {
        let t = &mut self.rt.tails;
        let finished = matches!(
            &t.headline,
            Some((_, Ok(r))) if r.stop_reason != StopReason::Cancelled
        );
        if !finished {
            t.headline = None;
        }
        t.curve = None;
    }

    /// The last node-count search of the current text, when it has finished.
    pub fn sizing(&self) -> Option<&Result<SizingReport, String>> {
        let text = &self.rt.solved.as_ref()?.0;
        match &self.rt.size.done {
            Some((t, r)) if t == text => Some(r),
            _ => None,
        }
    }

    /// "Size for a target": the smallest OSD node count that delivers the IOPS target
    /// within the page's latency target, for the scenario's hardware and workload shape —
    /// `cephplan size` on a worker, its table and notes, and Cancel.
    fn size_ui(&mut self, ui: &mut egui::Ui) {
        let sz = &mut self.rt.size;
        if let Some((text, job)) = &mut sz.job {
            if let Some(out) = job.poll() {
                let r = match out {
                    JobOutcome::Done(r) => r,
                    JobOutcome::Panicked(m) => Err(format!("the sizing failed: {m}")),
                };
                sz.done = Some((std::mem::take(text), r));
                sz.job = None;
            }
        }
        egui::CollapsingHeader::new("Size for a target (cephplan size)")
            .id_salt("prediction-size")
            .show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    let l = ui.label("IOPS target");
                    ui.add(
                        egui::DragValue::new(&mut self.size_iops_target)
                            .range(0.0..=1e9)
                            .speed(1000.0),
                    )
                    .labelled_by(l.id);
                    ui.label(format!(
                        "within the latency target ({} ms, above)",
                        self.latency_target_ms
                    ));
                    let l = ui.label("max nodes");
                    ui.add(egui::DragValue::new(&mut self.size_max_nodes).range(1..=10_000))
                        .labelled_by(l.id);
                    let running = self.rt.size.job.is_some();
                    let text = self.rt.solved.as_ref().map(|(t, _)| t.clone());
                    if ui
                        .add_enabled(
                            !running && text.is_some(),
                            egui::Button::new("Find the smallest node count"),
                        )
                        .clicked()
                    {
                        let text = text.expect("enabled only with a text");
                        let origin = "scenario editor".to_owned();
                        let params = self.rt.model.params.clone();
                        let spec = SizingSpec {
                            iops_target: self.size_iops_target,
                            latency_target_secs: self.latency_target_ms / 1e3,
                            max_nodes: self.size_max_nodes,
                            max_in_flight: None,
                        };
                        let t = text.clone();
                        self.rt.size.job = Some((
                            text,
                            Job::spawn("sizing", ui.ctx(), move |p| {
                                let s = load(&t, &origin)?;
                                crate::predict::size(&s, &params, &spec, p)
                                    .map_err(|e| e.to_string())
                            }),
                        ));
                    }
                    if let Some((_, job)) = &self.rt.size.job {
                        job.progress_ui(ui);
                    }
                });
                match self.sizing() {
                    Some(Ok(r)) => {
                        ui.strong(match r.nodes {
                            Some(n) => format!(
                                "{n} OSD nodes: the smallest count that delivers {} IOPS within {}",
                                thousands(r.iops_target),
                                ms(r.latency_target_secs)
                            ),
                            None => format!(
                                "no node count up to {} delivers {} IOPS within {}",
                                r.steps.last().map_or(0, |s| s.nodes),
                                thousands(r.iops_target),
                                ms(r.latency_target_secs)
                            ),
                        });
                        let (header, rows) = crate::predict::sizing_table(r);
                        egui::ScrollArea::vertical()
                            .id_salt("prediction-size-table")
                            .max_height(240.0)
                            .show(ui, |ui| {
                                egui::Grid::new("prediction-size-grid").striped(true).show(
                                    ui,
                                    |ui| {
                                        for h in &header {
                                            ui.strong(*h);
                                        }
                                        ui.end_row();
                                        for row in &rows {
                                            for c in row {
                                                ui.label(c);
                                            }
                                            ui.end_row();
                                        }
                                    },
                                );
                            });
                        ui.add(egui::Label::new(&r.note).wrap());
                    }
                    Some(Err(e)) => {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                    None => {}
                }
            });
    }

    /// The "Simulate tails" row: toggle, seed, precision, the running job's progress and
    /// Cancel, and "Simulate again" after a cancel or failure.
    fn tails_controls_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.checkbox(&mut self.tails.enabled, "Simulate tails")
                .on_hover_text(
                    "Discrete-event simulation after each MVA prediction: p50/p95/p99/p99.9 \
                     with confidence intervals, and p99 on the latency-vs-IOPS curve",
                );
            let l = ui.label("seed");
            ui.add(egui::DragValue::new(&mut self.tails.seed).speed(1.0))
                .labelled_by(l.id);
            let l = ui.label("precision");
            ui.add(
                egui::DragValue::new(&mut self.tails.relative_precision)
                    .range(0.001..=0.5)
                    .speed(0.001)
                    .fixed_decimals(3),
            )
            .labelled_by(l.id)
            .on_hover_text(
                "Simulate until the mean and p99 are known within this relative half-width \
                 at 95 % confidence (the CLI's --precision)",
            );
            let t = &self.rt.tails;
            let job = t
                .headline_job
                .as_ref()
                .map(|(_, j)| j.progress_ui(ui))
                .or_else(|| t.curve_job.as_ref().map(|(_, j)| j.progress_ui(ui)));
            let cancelled_or_failed = |r: Option<&Result<TailReport, String>>| {
                r.is_some_and(|r| {
                    r.as_ref()
                        .map_or(true, |r| r.stop_reason == StopReason::Cancelled)
                })
            };
            let curve_stopped = self
                .rt
                .tails
                .current(&t.curve)
                .is_some_and(|c| c.as_ref().map_or(true, |c| !c.complete));
            if self.tails.enabled
                && job.is_none()
                && (cancelled_or_failed(self.rt.tails.current(&t.headline)) || curve_stopped)
                && ui.button("Simulate again").clicked()
            {
                self.simulate_again();
            }
        });
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        let current = self.result_is_current();
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("latency target (ms)");
            ui.add(
                egui::DragValue::new(&mut self.latency_target_ms)
                    .range(0.01..=1e4)
                    .speed(0.05),
            )
            .labelled_by(l.id);
            if let Some(p) = &self.rt.result {
                let why_not = if self.rt.error.is_some() {
                    "the current text does not validate: fix it first (this prediction is of \
                     an earlier text)"
                } else {
                    "the prediction of the current text is not in yet"
                };
                let add = ui
                    .add_enabled(current, egui::Button::new("Add to Compare"))
                    .on_disabled_hover_text(why_not);
                if add.clicked() && current {
                    cmds.push(Command::AddToCompare(Variant {
                        name: p.name.clone(),
                        network: Some(p.network.clone()),
                        nodes: Some(p.nodes),
                        cores: Some(p.cores),
                        scenario_text: Some(p.scenario_text.clone()),
                        origin: p.origin.clone(),
                        model: Some(p.model_choice.clone()),
                        ..Variant::default()
                    }));
                }
            }
            if let Some(job) = self.rt.recompute.job() {
                job.progress_ui(ui);
            }
        });
        self.tails_controls_ui(ui);
        self.size_ui(ui);
        if let Some(e) = &self.rt.error {
            let shown = if self.rt.result.is_some() {
                " (below: the last valid prediction, of an earlier text)"
            } else {
                ""
            };
            ui.add(
                egui::Label::new(
                    egui::RichText::new(format!("{e}{shown}")).color(ui.visuals().error_fg_color),
                )
                .wrap(),
            );
        }
        let Some(p) = &self.rt.result else {
            if self.rt.error.is_none() {
                ui.label("predicting…");
            }
            return;
        };
        let tails = self.tails();
        let at = &p.sweep.at_population;
        let x = at.classes[0].throughput_per_sec;
        let r = at.classes[0].response_time_secs;
        ui.heading(&p.name);
        ui.horizontal_wrapped(|ui| {
            ui.strong(eng(x, Quantity::Iops));
            ui.separator();
            ui.strong(eng(x * p.bytes_per_io, Quantity::BytesPerSec));
            ui.separator();
            ui.strong(format!("mean latency {}", eng(r, Quantity::Seconds)));
            ui.separator();
            if let Some(i) = &p.interval {
                ui.label(format!(
                    "95 % range ({}): {} – {}, {} – {}",
                    if i.kind.is_empty() {
                        "parameter"
                    } else {
                        &i.kind
                    },
                    eng(i.iops_low, Quantity::Iops),
                    eng(i.iops_high, Quantity::Iops),
                    eng(i.latency_mean_low_secs, Quantity::Seconds),
                    eng(i.latency_mean_high_secs, Quantity::Seconds),
                ))
                .on_hover_text(&i.note);
                ui.separator();
            }
            if let Some(t) = tails {
                ui.strong(format!(
                    "p99 {} (simulated)",
                    ms_ci(&t.all.latency_p99_secs)
                ));
                ui.separator();
            } else if let Some(e) = self.tails_error() {
                ui.colored_label(plot::WARN, format!("no p99: {e}"));
                ui.separator();
            } else if self.tails.enabled && self.rt.error.is_some() {
                ui.label("p99: – (the current text does not validate, so nothing is simulated)");
                ui.separator();
            } else if self.tails.enabled {
                ui.label("p99: simulating…");
                ui.separator();
            }
            ui.label(format!(
                "{} nodes, {} OSDs, {} I/Os in flight (iodepth {})",
                p.nodes,
                p.osds,
                p.images_x_jobs * p.iodepth,
                p.iodepth
            ));
        });
        ui.label(format!(
            "capacity: raw {}, usable {} ({:.0} % efficiency, before Ceph's full ratio)",
            eng(p.capacity.raw_bytes, Quantity::Bytes),
            eng(p.capacity.usable_bytes, Quantity::Bytes),
            p.capacity.efficiency * 100.0
        ));
        // What the range is made of: the interval's own note (parameter uncertainty alone,
        // or with the model's transfer error), as `cephplan predict` states it.
        let range = p.interval.as_ref().map_or_else(
            || {
                "no 95 % range (the model states neither a covariance nor a transfer error)"
                    .to_string()
            },
            |i| format!("the 95 % range is {}", i.note),
        );
        ui.add(
            egui::Label::new(format!(
                "solver: {}; model: {}; {range}. Tail latencies come from simulating the same \
                 scenario (\"Simulate tails\").",
                solver_label(p.method, p.caveats.len()),
                p.model
            ))
            .wrap(),
        );
        match &p.degraded {
            Some(Ok(d)) => {
                let (heading, lines) = crate::predict::format::degraded_lines(d);
                ui.strong(heading);
                egui::Grid::new("degraded").num_columns(2).show(ui, |ui| {
                    for (k, v) in lines {
                        ui.label(k);
                        ui.add(egui::Label::new(v).wrap());
                        ui.end_row();
                    }
                });
            }
            Some(Err(e)) => {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("[degraded]: {e}")).color(plot::WARN),
                    )
                    .wrap(),
                );
            }
            None => {}
        }
        if !p.held_out_by_kind.is_empty() {
            ui.strong(
                "held out: how far runs of this kind were off on systems the model was not fitted to",
            );
            for k in &p.held_out_by_kind {
                ui.add(egui::Label::new(crate::predict::format::held_out_kind(k)).wrap());
            }
        }
        if !p.caveats.is_empty() {
            ui.strong(format!(
                "caveats ({}), as `cephplan predict` prints them:",
                p.caveats.len()
            ));
            for w in &p.caveats {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("warning: {w}")).color(plot::WARN),
                    )
                    .wrap(),
                );
            }
        }
        let rows: Vec<(String, f64)> = at
            .stations
            .iter()
            .filter(|s| s.utilization > 0.0)
            .map(|s| (s.name.clone(), s.utilization))
            .collect();
        // The utilisation bars and the latency parts side by side, and the tails table
        // beside them when all fit (about 1400 points), under them otherwise, so that no
        // column is cut off in a small window.
        let bars_and_parts = |ui: &mut egui::Ui| {
            ui.vertical(|ui| {
                plot::utilisation_bars_ui(ui, &rows, p.sweep.bounds.bottleneck.as_deref());
            });
            ui.add_space(24.0);
            ui.vertical(|ui| latency_parts_ui(ui, p));
        };
        match tails {
            Some(t) if ui.available_width() >= 1400.0 => {
                ui.horizontal_top(|ui| {
                    bars_and_parts(ui);
                    ui.add_space(24.0);
                    ui.vertical(|ui| tails_table_ui(ui, x, r, t));
                });
            }
            Some(t) => {
                ui.horizontal_top(bars_and_parts);
                tails_table_ui(ui, x, r, t);
            }
            None => {
                ui.horizontal_top(bars_and_parts);
            }
        }
        let target_secs = self.latency_target_ms / 1e3;
        let target_ms = self.latency_target_ms;
        let tail_curve = self.tail_curve();
        let mut series = vec![
            Series::new(
                "mean latency (MVA)",
                p.sweep.curve.iter().map(|c| [c.1, c.2 * 1e3]).collect(),
            ),
            Series::new(
                "optimistic bound",
                p.sweep
                    .optimistic
                    .iter()
                    .map(|c| [c.1, c.2 * 1e3])
                    .collect(),
            )
            .reference(),
        ];
        let mut points = vec![Series::new(
            format!("iodepth {}", p.iodepth),
            vec![[x, r * 1e3]],
        )];
        if let Some(t) = tails {
            points.push(Series::new(
                format!("iodepth {} p99 (simulated)", p.iodepth),
                vec![[t.all.iops.mean, t.all.latency_p99_secs.mean * 1e3]],
            ));
        }
        let knee = match tail_curve {
            Some(c) => {
                let sim: Vec<&TailFigures> = c
                    .points
                    .iter()
                    .filter_map(|p| p.tails.as_ref().map(|t| &t.all))
                    .collect();
                series.push(Series::new(
                    "p99 (simulated)",
                    sim.iter()
                        .map(|f| [f.iops.mean, f.latency_p99_secs.mean * 1e3])
                        .collect(),
                ));
                series.push(Series::new(
                    "mean latency (simulated)",
                    sim.iter()
                        .map(|f| [f.iops.mean, f.latency_mean_secs.mean * 1e3])
                        .collect(),
                ));
                let k = c.knee_at(target_secs, Some(KNEE_PERCENTILE));
                let partial = if c.complete {
                    String::new()
                } else {
                    format!(
                        " (of the {} iodepths simulated before the sweep was cancelled)",
                        c.points.len()
                    )
                };
                match (k.value, k.iops, k.latency_percentile_secs) {
                    (Some(d), Some(kx), Some(kp)) => {
                        ui.label(format!(
                            "p99 knee (simulated): highest swept iodepth with p99 within \
                             {target_ms} ms: {d}, giving {} at p99 {}{partial}",
                            eng(kx, Quantity::Iops),
                            eng(kp, Quantity::Seconds)
                        ));
                        Some((
                            format!("knee: simulated p99 ≤ {target_ms} ms"),
                            [kx, kp * 1e3],
                        ))
                    }
                    _ => {
                        ui.label(format!("p99 knee (simulated): {}{partial}", k.note));
                        None
                    }
                }
            }
            None => {
                let note = if self.tails.enabled && tails.is_some() {
                    " (the p99 knee follows when the simulated curve is ready)"
                } else {
                    ""
                };
                match self.knee() {
                    Some(Ok(k)) => match (k.value, k.iops, k.latency_mean_secs) {
                        (Some(d), Some(kx), Some(kr)) => {
                            ui.label(format!(
                                "mean knee (MVA): deepest whole iodepth within {target_ms} ms: \
                                 {d}, giving {} at {}{note}",
                                eng(kx, Quantity::Iops),
                                eng(kr, Quantity::Seconds)
                            ));
                            Some((format!("knee: mean ≤ {target_ms} ms"), [kx, kr * 1e3]))
                        }
                        _ => {
                            ui.label(format!("mean knee (MVA): {}{note}", k.note));
                            None
                        }
                    },
                    Some(Err(e)) => {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                        None
                    }
                    // Until the search ends: the plotted depths' best, said so.
                    None => match best_within_target(p, target_secs) {
                        Some((d, bx, br)) => {
                            ui.label(format!(
                                "mean knee (MVA): of the plotted iodepths, {d} within \
                                 {target_ms} ms, giving {} at {} (finding the whole \
                                 iodepth…){note}",
                                eng(bx, Quantity::Iops),
                                eng(br, Quantity::Seconds)
                            ));
                            Some((format!("knee: mean ≤ {target_ms} ms"), [bx, br * 1e3]))
                        }
                        None => {
                            ui.label(format!(
                                "mean knee (MVA): no plotted iodepth meets {target_ms} ms \
                                 (searching every iodepth…){note}"
                            ));
                            None
                        }
                    },
                }
            }
        };
        let in_flight = p.images_x_jobs * p.iodepth;
        let nodes = Series::new(
            format!("IOPS, {in_flight} I/Os in flight at every node count"),
            p.by_nodes.iter().map(|&(n, x)| [f64::from(n), x]).collect(),
        );
        // The knee region: three times the target, or more when even the lowest iodepth
        // is slower (then its latencies stay in view).
        let lowest_ms = series
            .iter()
            .chain(&points)
            .filter(|s| !s.reference)
            .filter_map(|s| s.points.first().map(|p| p[1]))
            .fold(0.0, f64::max);
        let marks = plot::HockeyMarks {
            latency_target_ms: Some(target_ms),
            knee,
            view_top_ms: Some((3.0 * target_ms).max(1.5 * lowest_ms)),
        };
        let h = plot::plot_height(ui);
        ui.columns(2, |cols| {
            cols[0].add(
                egui::Label::new(
                    egui::RichText::new("latency against IOPS as iodepth grows").strong(),
                )
                .wrap(),
            );
            plot::hockey_stick_ui(
                &mut cols[0],
                "prediction-hockey",
                "latency (ms)",
                &series,
                &points,
                &marks,
                h,
            );
            cols[1].add(
                egui::Label::new(
                    egui::RichText::new(format!(
                        "IOPS against OSD nodes, the load held at the same {in_flight} I/Os in \
                         flight (not scaled with the cluster)"
                    ))
                    .strong(),
                )
                .wrap(),
            );
            plot::curves_ui(
                &mut cols[1],
                "prediction-nodes",
                "OSD nodes",
                "IOPS",
                &[nodes],
                h,
            );
        });
    }
}

/// MVA's figures beside the simulated ones with their intervals, the way
/// `cephplan predict --tails` prints them, then how the simulation ran and its warnings.
fn tails_table_ui(ui: &mut egui::Ui, mva_iops: f64, mva_mean_secs: f64, t: &TailReport) {
    egui::Grid::new("tails")
        .num_columns(7)
        .striped(true)
        .show(ui, |ui| {
            for h in ["", "IOPS", "mean", "p50", "p95", "p99", "p99.9"] {
                ui.strong(h);
            }
            ui.end_row();
            ui.label("MVA");
            ui.label(thousands(mva_iops));
            ui.label(ms(mva_mean_secs));
            for _ in 0..4 {
                ui.label("–");
            }
            ui.end_row();
            let mut rows = vec![("simulated", &t.all)];
            if let (Some(rd), Some(wr)) = (&t.read, &t.write) {
                rows.push(("simulated reads", rd));
                rows.push(("simulated writes", wr));
            }
            for (name, f) in rows {
                ui.label(name);
                ui.label(count_ci(&f.iops));
                for e in [
                    &f.latency_mean_secs,
                    &f.latency_p50_secs,
                    &f.latency_p95_secs,
                    &f.latency_p99_secs,
                    &f.latency_p999_secs,
                ] {
                    ui.label(ms_ci(e));
                }
                ui.end_row();
            }
        });
    ui.add(
        egui::Label::new(
            egui::RichText::new(format!(
                "simulated: {} replications, seed {}, ± = {:.0} % confidence; stopped because {}; \
                 device service times {}; write batching {}",
                t.replications,
                t.seed,
                t.confidence * 100.0,
                stop_reason_label(t.stop_reason),
                service_shape_label(t.device_service),
                batching_label(t.batching)
            ))
            .small(),
        )
        .wrap(),
    );
    for w in &t.warnings {
        ui.colored_label(plot::WARN, w);
    }
}

/// Predicts without progress (for tests and callers that wait).
pub fn predict_text_blocking(text: &str, origin: &str) -> PredictionResult {
    predict_text(text, origin, &ActiveModel::default(), &NoProgress)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/examples/seed-000-ampere-altra-max.toml"
        ))
        .unwrap()
    }

    /// Consistency checks that hold for any model: Little's law at the scenario's
    /// population (N = X·R for a closed system with zero think time, Lazowska et al.,
    /// QSP ch. 3), throughput rising with iodepth, and the exact point inside the bounds.
    #[test]
    fn seed_000_prediction_is_self_consistent() {
        let p = predict_text_blocking(&example(), "seed-000").unwrap();
        let at = &p.sweep.at_population.classes[0];
        let n = f64::from(p.images_x_jobs * p.iodepth);
        assert!((at.throughput_per_sec * at.response_time_secs - n).abs() / n < 1e-9);
        assert!(p
            .sweep
            .curve
            .windows(2)
            .all(|w| w[1].1 >= w[0].1 * (1.0 - 1e-12)));
        assert!(at.throughput_per_sec <= p.sweep.bounds.throughput_upper_per_sec * (1.0 + 1e-9));
        assert!(!p.by_nodes.is_empty());
        // 3 nodes × 1 socket × 128 cores (Altra Max M128-30 in models/catalogue.toml).
        assert_eq!(p.cores, 384);
        assert_eq!(p.network.classes[0].population, p.images_x_jobs * p.iodepth);
        assert!(p.capacity.usable_bytes < p.capacity.raw_bytes);
        // The headline's interval is what `cephplan predict` prints for the same scenario
        // and the shipped (fitted, covariance-carrying) model, and it brackets the figure.
        let s = load(&example(), "seed-000").unwrap();
        let params = ModelParams::shipped_default();
        let cli = crate::predict::predict(&s, &params, &Default::default()).unwrap();
        let i = p
            .interval
            .as_ref()
            .expect("the shipped model has a covariance");
        assert_eq!(Some(i), cli.interval.as_ref());
        assert!(i.iops_low < at.throughput_per_sec && at.throughput_per_sec < i.iops_high);
    }

    fn small() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/small-3x2.toml"
        ))
        .unwrap()
    }

    /// The page's default simulation is the CLI's (`predict --tails` without flags):
    /// `TailOptions::default()` is documented as seed 1, ±2 % at 95 %, exponential service.
    #[test]
    fn default_tail_settings_simulate_like_the_cli_without_flags() {
        let d = TailSettings::default();
        assert!(!d.enabled);
        assert_eq!(d.options(), TailOptions::default());
        let s = TailSettings {
            seed: 9,
            relative_precision: 0.05,
            ..d
        };
        assert_eq!(s.options().sim.seed, 9);
        assert_eq!(s.options().sim.relative_precision, 0.05);
        assert_eq!(s.options().sim.max_events, SimOptions::default().max_events);
    }

    /// The simulated curve passes through the headline tails: at the scenario's own
    /// iodepth the sweep simulates the same model with the same seed (common random
    /// numbers, `predict::sweep`), so its point is the `predict_tails` report, bit for bit.
    #[test]
    fn the_simulated_curve_passes_through_the_headline_tails() {
        let text = small();
        let settings = TailSettings {
            enabled: true,
            seed: 3,
            relative_precision: 0.05,
        };
        let params = ModelParams::shipped_default();
        let head = tails_text(&text, "small", &params, &settings, &NoProgress).unwrap();
        // tests/fixtures/small-3x2.toml: iodepth 2.
        let curve =
            tail_curve_text(&text, "small", &params, &[1, 2], &settings, &NoProgress).unwrap();
        assert!(curve.complete);
        assert_eq!(curve.points.len(), 2);
        assert_eq!(curve.points[1].value, 2);
        assert_eq!(curve.points[1].tails.as_ref(), Some(&head));
        // The p99 knee under a target just above the lower p99 is a point whose p99 meets it.
        let p99 = |i: usize| {
            curve.points[i]
                .tails
                .as_ref()
                .unwrap()
                .all
                .latency_p99_secs
                .mean
        };
        let target = p99(0).min(p99(1)) * 1.001;
        let k = curve.knee_at(target, Some(KNEE_PERCENTILE));
        assert_eq!(k.percentile, Some(99.0));
        assert!(k.latency_percentile_secs.unwrap() <= target);
    }

    #[test]
    fn invalid_scenario_names_the_field() {
        let text = example().replace("nodes = 3", "nodes = 0");
        let e = predict_text_blocking(&text, "edited.toml").unwrap_err();
        assert!(e.contains("cluster.nodes"), "{e}");
    }
}

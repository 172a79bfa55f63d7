//! Transfer evaluation: how well does the model predict a system it was never fitted to?
//!
//! An architect predicts a cluster that does not exist yet, so the honest accuracy figure
//! is not the in-sample error but the error on systems the fit never saw:
//!
//! - **Leave-one-system-out (LOSO).** For each system (runs sharing a `system_id`), fit the
//!   prior on the runs of every *other* system and predict this system's runs. No run of
//!   the held-out system informs its fit ([`loso_splits`]; a test proves it).
//! - **Scale series.** For each system measured at several sizes (OSD counts), fit on its
//!   smallest size plus all other systems and predict its larger sizes: what a user gets
//!   after calibrating on a small cluster and planning the scale-out ([`scale_splits`]).
//! - **Intervals that cover.** Each held-out prediction states 80 % and 95 % intervals on
//!   the log scale from the fold's parameter covariance *and* the model's transfer
//!   discrepancy, `σ² = σ²_param + σ²_transfer`. The discrepancy is estimated from the
//!   held-out residuals of the *other* systems (so the coverage of system S is not
//!   computed with S's own residuals), one figure per metric (throughput, mean latency),
//!   each system weighted equally ([`discrepancy_sigma`]). The coverage is the share of
//!   held-out measurements inside their interval, averaged over systems (each weighted
//!   equally, as in the discrepancy's estimate; [`Coverage`] also has the share over all
//!   figures).
//! - **Baselines on the same runs.** The per-core rule of thumb ("7,500 read / 3,500
//!   write 4k IOPS per core, writes divided by the replica count", ceph.io 2022 "Ceph OSD
//!   CPU scaling") and the disk rule ("disk IOPS × disks × 0.88 / replicas", Mirantis),
//!   both on the small-block random runs they are meant for, and a USL fit per series
//!   where a system has one (its own leave-one-out within the series).
//!
//! - **What each fold fitted.** Every split's fitted parameter values ([`FoldFit`]) and,
//!   over the leave-one-system-out folds, each parameter's smallest, median and largest
//!   value with the system whose leaving out gave each extreme ([`parameter_spread`]): a
//!   parameter the corpus pins down barely moves; one that swings is set by whichever
//!   system is held out, and the held-out predictions that rest on it swing with it.
//! - **How much of the error is a system's offset.** The IOPS MAPE once each held-out
//!   figure's error is taken relative to the median of its system's *other* figures
//!   ([`ErrorSummary::iops_mape_level_known`], and per direction): what a calibration of
//!   the cluster's level alone would leave; the rest is how a system's runs differ from one
//!   another, which only a better model structure lowers.
//!
//! Not here: the fitting itself (`calibrate`), the data format (`data`), printing (`cli`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::calibrate::ceph::{
    default_fit_names, ensure_params, fit_model, par_map, predict_scenario_exact, targets, Metric,
    NotModelled, PreparedRun,
};
use crate::calibrate::lm::FitOptions;
use crate::calibrate::usl::fit_usl;
use crate::model::ModelParams;
use crate::predict::{ln_standard_errors, z_of};
use crate::progress::Progress;
pub use crate::spec::RunClass;
use crate::spec::{Pattern, Protection, Scenario};

pub mod spread;

/// Version of [`EvaluationReport`]'s JSON.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// Largest block size the rules of thumb are applied to (they are 4k rules).
pub const RULE_MAX_BLOCK_BYTES: u64 = 16 * 1024;

/// The per-core rule: 4k read IOPS per physical OSD-node core.
pub const CORE_RULE_READ_IOPS_PER_CORE: f64 = 7500.0;
/// The per-core rule: 4k write IOPS per physical OSD-node core, before dividing by the
/// replica count.
pub const CORE_RULE_WRITE_IOPS_PER_CORE: f64 = 3500.0;
/// The disk rule's efficiency factor.
pub const DISK_RULE_EFFICIENCY: f64 = 0.88;

/// Which held-out question a prediction answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitKind {
    /// Fitted on every other system.
    LeaveOneSystemOut,
    /// Fitted on every other system and this system's smallest size.
    Scale,
}

/// One train/test split over the prepared runs (indices into them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub kind: SplitKind,
    /// The system whose runs are predicted.
    pub system_id: String,
    pub train: Vec<usize>,
    pub test: Vec<usize>,
}

/// One LOSO split per system: train on every run of the other systems, test on all of
/// this system's runs. Systems in sorted order.
pub fn loso_splits(runs: &[PreparedRun]) -> Vec<Split> {
    let systems: BTreeSet<&str> = runs.iter().map(|r| r.run.system_id.as_str()).collect();
    systems
        .into_iter()
        .map(|id| {
            let (test, train): (Vec<usize>, Vec<usize>) =
                (0..runs.len()).partition(|&i| runs[i].run.system_id == id);
            Split {
                kind: SplitKind::LeaveOneSystemOut,
                system_id: id.to_string(),
                train,
                test,
            }
        })
        .collect()
}

/// The size of a run's cluster for scale series: its OSD count.
fn size_of(s: &Scenario) -> u32 {
    s.total_osds()
}

/// One scale split per system measured at two or more OSD counts: train on every other
/// system plus this system's runs at its smallest OSD count, test on its larger sizes.
pub fn scale_splits(runs: &[PreparedRun]) -> Vec<Split> {
    let mut sizes: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for r in runs {
        sizes
            .entry(r.run.system_id.as_str())
            .or_default()
            .insert(size_of(&r.scenario));
    }
    sizes
        .into_iter()
        .filter(|(_, s)| s.len() >= 2)
        .map(|(id, s)| {
            let smallest = *s.iter().next().expect("two sizes");
            let (test, train): (Vec<usize>, Vec<usize>) = (0..runs.len()).partition(|&i| {
                runs[i].run.system_id == id && size_of(&runs[i].scenario) > smallest
            });
            Split {
                kind: SplitKind::Scale,
                system_id: id.to_string(),
                train,
                test,
            }
        })
        .collect()
}

/// One held-out figure: measured, predicted by the fold's model, its interval, and the
/// baselines' predictions of the same figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    pub kind: SplitKind,
    pub run_id: String,
    pub system_id: String,
    pub metric: Metric,
    pub measured: f64,
    pub predicted: f64,
    /// `100 · (predicted / measured − 1)`.
    pub error_pct: f64,
    /// Standard error of `ln(predicted)` from the fold's parameter covariance (0 when the
    /// fold's fit identifies no covariance).
    pub param_ln_sigma: f64,
    /// Transfer discrepancy used for this figure's interval (estimated without its system).
    pub transfer_ln_sigma: Option<f64>,
    pub interval_80: Option<(f64, f64)>,
    pub interval_95: Option<(f64, f64)>,
    /// The per-core rule's figure (small-block random runs only; throughput only).
    pub core_rule: Option<f64>,
    /// The disk rule's figure (small-block random runs only; throughput only).
    pub disk_rule: Option<f64>,
    /// The kinds of run this figure's run is (EC pool, co-located clients, …), so that a
    /// reader of the JSON can pick out a class's figures.
    #[serde(default)]
    pub classes: Vec<RunClass>,
}

impl HeldOut {
    fn is_throughput(&self) -> bool {
        self.metric != Metric::LatencyMean
    }
    fn is_qd1(&self) -> bool {
        self.classes.contains(&RunClass::Qd1)
    }
    fn inside(&self, iv: Option<(f64, f64)>) -> Option<bool> {
        iv.map(|(lo, hi)| lo <= self.measured && self.measured <= hi)
    }
}

/// Error summary of a set of held-out figures, percent. Each **system** weighs the same
/// (the question is how well the model transfers to a new system, and one public post
/// with hundreds of chart points would otherwise be the whole figure): the MAPE is the
/// mean of the systems' MAPEs, the median a median with weight 1/(the system's figures)
/// per figure. `*_runs` fields weigh every run the same.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Distinct runs predicted.
    pub runs: usize,
    /// Systems among them.
    pub systems: usize,
    /// Mean absolute percentage error of IOPS (bandwidth for sequential runs: the same
    /// relative error), systems weighted equally.
    pub iops_mape: Option<f64>,
    pub iops_median: Option<f64>,
    /// Mean signed error of the throughput figures (bias; negative = predicted low),
    /// systems weighted equally.
    pub iops_bias: Option<f64>,
    pub latency_mape: Option<f64>,
    pub latency_median: Option<f64>,
    /// The same, every run weighted equally.
    pub iops_mape_runs: Option<f64>,
    pub iops_median_runs: Option<f64>,
    pub latency_mape_runs: Option<f64>,
    /// Runs with a measured p99. cephplan's p99 needs the simulator (`predict --tails`),
    /// which the evaluation does not run; the count says what could be compared.
    pub p99_measured: usize,
    /// 95 % range of `iops_mape` and `latency_mape` with the systems drawn again with
    /// replacement ([`spread`]): how much the figure owes to which systems the corpus
    /// holds. None below [`spread::MIN_SYSTEMS_FOR_RANGE`] systems.
    #[serde(default)]
    pub iops_mape_range95: Option<(f64, f64)>,
    #[serde(default)]
    pub latency_mape_range95: Option<(f64, f64)>,
    /// The IOPS MAPE (systems weighted equally) once each throughput figure's error is taken
    /// relative to its system's level, read from the system's *other* figures: the figure's
    /// log error less the median log error of the rest of its system's throughput figures
    /// (a system with one figure keeps its error). How far the model would be off had the
    /// user measured the cluster's other runs and calibrated its level away: the part of
    /// `iops_mape` that is not a per-system offset.
    #[serde(default)]
    pub iops_mape_level_known: Option<f64>,
    /// The same with one level per system and direction (reads, writes, mixes: a run's
    /// `reads` / `writes` / `mixed` class), the others of its direction only.
    #[serde(default)]
    pub iops_mape_level_known_by_direction: Option<f64>,
}

/// Coverage of the stated intervals over held-out figures, percent.
///
/// `p80` / `p95` weigh every system the same (the mean over systems of the share of that
/// system's held-out figures inside their interval), as the error figures and the
/// discrepancy `σ_d` itself do: a new cluster is one draw of "a system", and a system with
/// 1,400 runs says no more about it than one with 4. `p80_figures` / `p95_figures` count
/// every held-out figure the same (the largest systems dominate them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub p80: Option<f64>,
    pub p95: Option<f64>,
    #[serde(default)]
    pub p80_figures: Option<f64>,
    #[serde(default)]
    pub p95_figures: Option<f64>,
    pub figures: usize,
    /// The transfer discrepancy over all systems (what a model fitted to all of them
    /// carries): log-scale standard deviation per metric, of the runs above iodepth 1
    /// when the iodepth-1 runs have their own (below), of every run otherwise.
    pub throughput_ln_sigma: Option<f64>,
    pub latency_ln_sigma: Option<f64>,
    /// The discrepancy of the iodepth-1 runs (each fio job one I/O in flight), estimated
    /// apart: the model transfers worse there (lone-op latency, the economies at their
    /// smallest), and one σ for every run left their intervals holding 57-67 % of the
    /// held-out figures at 80 %. None when fewer than [`MIN_SYSTEMS_FOR_OWN_SIGMA`]
    /// systems have such runs.
    #[serde(default)]
    pub iodepth1_throughput_ln_sigma: Option<f64>,
    #[serde(default)]
    pub iodepth1_latency_ln_sigma: Option<f64>,
}

/// Systems a group of held-out figures (the iodepth-1 runs) needs before its transfer
/// discrepancy is estimated apart from the other runs'.
pub const MIN_SYSTEMS_FOR_OWN_SIGMA: usize = 3;

/// A baseline's errors on the runs it applies to, with cephplan's on the same runs
/// (systems weighted equally, as in [`ErrorSummary`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BaselineSummary {
    pub runs: usize,
    pub iops_mape: Option<f64>,
    pub iops_median: Option<f64>,
    /// cephplan's leave-one-system-out errors on exactly these runs.
    pub cephplan_iops_mape: Option<f64>,
    pub cephplan_iops_median: Option<f64>,
    pub note: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baselines {
    pub core_rule: BaselineSummary,
    pub disk_rule: BaselineSummary,
    /// USL fitted per series (same system, pattern, block size), leave-one-out within it.
    pub usl: BaselineSummary,
}

/// Per-system figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemEvaluation {
    pub system_id: String,
    pub runs: usize,
    pub iops_mape: Option<f64>,
    pub iops_median: Option<f64>,
    pub iops_bias: Option<f64>,
    pub latency_mape: Option<f64>,
    pub coverage_p80: Option<f64>,
    pub coverage_p95: Option<f64>,
    pub core_rule_iops_mape: Option<f64>,
    pub disk_rule_iops_mape: Option<f64>,
    /// Scale-series error when the system has one.
    pub scale_iops_mape: Option<f64>,
    /// Releases and CPU models among its runs.
    pub releases: Vec<String>,
    pub cpus: Vec<String>,
}

/// Leave-one-system-out errors over the runs of one [`RunClass`] (systems weighted
/// equally, as in [`ErrorSummary`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassEvaluation {
    pub class: RunClass,
    pub label: String,
    #[serde(flatten)]
    pub errors: ErrorSummary,
    /// Share of the class's held-out figures inside their stated 80 % / 95 % intervals,
    /// percent, systems weighted equally (as [`Coverage::p80`]).
    #[serde(default)]
    pub coverage_p80: Option<f64>,
    #[serde(default)]
    pub coverage_p95: Option<f64>,
}

/// What `cephplan evaluate` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationReport {
    pub schema_version: u32,
    /// cephplan's marker ([`crate::io::GENERATED_MARKER`]), so that a saved report may be
    /// replaced by the next save and no file a user wrote is (reports written before it
    /// existed have none).
    #[serde(default)]
    pub generator: String,
    pub systems: Vec<SystemEvaluation>,
    /// The leave-one-system-out errors by kind of run (EC, co-located, QD1, lone I/O, large
    /// blocks).
    #[serde(default)]
    pub classes: Vec<ClassEvaluation>,
    pub loso: ErrorSummary,
    pub scale: ErrorSummary,
    pub coverage: Coverage,
    pub baselines: Baselines,
    /// Every held-out figure, LOSO first, in run order.
    pub figures: Vec<HeldOut>,
    /// What each split's fit chose (LOSO first, by system; reports written before these
    /// existed have none).
    #[serde(default)]
    pub folds: Vec<FoldFit>,
    /// Each fitted parameter's range over the leave-one-system-out folds
    /// ([`parameter_spread`]).
    #[serde(default)]
    pub parameter_spread: Vec<ParameterSpread>,
    pub not_modelled: Vec<NotModelled>,
    pub warnings: Vec<String>,
    /// True when cancelled: the figures cover the splits done.
    pub cancelled: bool,
}

/// The parameters one split's fit chose: what holding a system out moves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoldFit {
    pub kind: SplitKind,
    /// The held-out system (for a scale split, the system whose larger sizes it predicts).
    pub system_id: String,
    /// The fitted parameters' values by name; the others stay at the prior's.
    pub parameters: BTreeMap<String, f64>,
    /// How the minimiser stopped, and whether that counts as converged.
    pub termination: String,
    pub converged: bool,
}

impl FoldFit {
    /// What to say when this fold's fit stopped short of converging (`None` when it
    /// converged): its held-out predictions rest on wherever the minimiser stopped.
    pub fn non_convergence_note(&self) -> Option<String> {
        let split = match self.kind {
            SplitKind::LeaveOneSystemOut => "leave-one-system-out",
            SplitKind::Scale => "scale-series",
        };
        (!self.converged).then(|| {
            format!(
                "the {split} fit for {} did not converge ({}): its predictions rest on where \
                 it stopped; more runs of the systems it is fitted on, or a prior nearer \
                 their values (`--prior`), let it converge",
                self.system_id, self.termination
            )
        })
    }
}

/// One fitted parameter over the leave-one-system-out folds ([`parameter_spread`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterSpread {
    pub name: String,
    pub folds: usize,
    pub min: f64,
    /// The system held out in the fold that gave `min`.
    pub min_without: String,
    pub median: f64,
    pub max: f64,
    /// The system held out in the fold that gave `max`.
    pub max_without: String,
}

impl ParameterSpread {
    /// `max / min`: how many times over the held-out system moves the parameter (`None`
    /// unless both are positive).
    pub fn max_over_min(&self) -> Option<f64> {
        (self.min > 0.0 && self.max > 0.0).then(|| self.max / self.min)
    }

    /// The cells of one row of the range table, under [`ParameterSpread::HEADER`], as the
    /// CLI's table and the app's grid show them (4 significant digits, the system whose
    /// leaving out gave each extreme).
    pub fn cells(&self) -> [String; 6] {
        use crate::predict::format::significant;
        [
            self.name.clone(),
            self.folds.to_string(),
            format!("{} (without {})", significant(self.min), self.min_without),
            significant(self.median),
            format!("{} (without {})", significant(self.max), self.max_without),
            self.max_over_min()
                .map_or("-".into(), |x| format!("{x:.2}")),
        ]
    }

    /// The range table's column names.
    pub const HEADER: [&'static str; 6] = [
        "parameter",
        "folds",
        "smallest",
        "median",
        "largest",
        "max/min",
    ];
}

/// Options of an evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluateOptions {
    pub lm: FitOptions,
    /// Also run the scale-series splits.
    pub scale: bool,
}

impl Default for EvaluateOptions {
    fn default() -> Self {
        Self {
            lm: crate::calibrate::ceph::calibration_fit_options(),
            scale: true,
        }
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    })
}

fn abs_errors<'a>(v: impl Iterator<Item = &'a HeldOut>) -> Vec<f64> {
    v.map(|h| h.error_pct.abs()).collect()
}

/// Mean of per-system means of `f` over `figs`.
fn system_mean(figs: &[&HeldOut], f: impl Fn(&HeldOut) -> f64) -> Option<f64> {
    let mut per: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for h in figs {
        per.entry(h.system_id.as_str()).or_default().push(f(h));
    }
    mean(&per.values().filter_map(|v| mean(v)).collect::<Vec<_>>())
}

/// Median of `|error|` with each figure weighted 1/(its system's figure count): every
/// system drawn once in [`spread`]'s weighted median.
fn system_median(figs: &[&HeldOut]) -> Option<f64> {
    let mut per: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for h in figs {
        per.entry(h.system_id.as_str())
            .or_default()
            .push(h.error_pct.abs());
    }
    let errors: Vec<&[f64]> = per.values().map(Vec::as_slice).collect();
    spread::weighted_median(&errors, &vec![1; errors.len()])
}

/// A run's direction for [`level_known_mape`]: its reads / writes / mixed class.
fn direction(h: &HeldOut) -> Option<RunClass> {
    [RunClass::Reads, RunClass::Writes, RunClass::Mixed]
        .into_iter()
        .find(|c| h.classes.contains(c))
}

/// MAPE (systems weighted equally) of the throughput figures `tp` with each figure's system
/// level removed, the level estimated without the figure: `exp(ln(p/m) − median of the
/// ln(p/m) of the system's other figures) − 1`, the others restricted to the figure's
/// direction when `by_direction`. A figure with no other figure to learn the level from
/// keeps its error, so a one-run system is not credited with a level it could not know.
fn level_known_mape(tp: &[&HeldOut], by_direction: bool) -> Option<f64> {
    let log_error = |h: &HeldOut| (h.predicted / h.measured).ln();
    let mut per: BTreeMap<&str, Vec<&HeldOut>> = BTreeMap::new();
    for h in tp {
        if h.predicted > 0.0 && h.measured > 0.0 {
            per.entry(h.system_id.as_str()).or_default().push(h);
        }
    }
    let mut system_mapes = Vec::new();
    for figs in per.values() {
        let errors: Vec<f64> = figs
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let others: Vec<f64> = figs
                    .iter()
                    .enumerate()
                    .filter(|&(j, o)| j != i && (!by_direction || direction(o) == direction(h)))
                    .map(|(_, o)| log_error(o))
                    .collect();
                let level = median(&others).unwrap_or(0.0);
                100.0 * ((log_error(h) - level).exp() - 1.0).abs()
            })
            .collect();
        system_mapes.extend(mean(&errors));
    }
    mean(&system_mapes)
}

/// The line the CLI and the app print under the leave-one-system-out figures: how much of
/// the IOPS MAPE is each system's own level ([`ErrorSummary::iops_mape_level_known`]).
pub fn level_text(e: &ErrorSummary) -> Option<String> {
    let (all, known, by_dir) = (
        e.iops_mape?,
        e.iops_mape_level_known?,
        e.iops_mape_level_known_by_direction?,
    );
    let rest = if known <= all {
        "the rest is how a system's runs differ from one another"
    } else {
        // Few runs per system whose errors differ in sign: the other runs' median is a
        // poor offset, and removing it adds error.
        "higher, not lower: these systems have too few runs, or runs too unlike one another, \
         for their other runs to tell their offset"
    };
    Some(format!(
        "with each system's offset learned from its other runs (the error a calibration of \
         the cluster's level alone would leave): IOPS MAPE {all:.2} % would be {known:.2} %, \
         {by_dir:.2} % with an offset per system and direction; {rest}"
    ))
}

fn summary<'a>(
    figs: impl Iterator<Item = &'a HeldOut> + Clone,
    prepared: &[PreparedRun],
) -> ErrorSummary {
    let tp: Vec<&HeldOut> = figs.clone().filter(|h| h.is_throughput()).collect();
    let lat: Vec<&HeldOut> = figs.clone().filter(|h| !h.is_throughput()).collect();
    let ids: BTreeSet<&str> = figs.clone().map(|h| h.run_id.as_str()).collect();
    let systems: BTreeSet<&str> = figs.clone().map(|h| h.system_id.as_str()).collect();
    let p99 = prepared
        .iter()
        .filter(|r| {
            ids.contains(r.run.run_id.as_str()) && r.run.measured.latency_p99_secs.is_some()
        })
        .count();
    let tp_abs = abs_errors(tp.iter().copied());
    let lat_abs = abs_errors(lat.iter().copied());
    let (iops_range, latency_range) = spread::system_range(figs.clone());
    ErrorSummary {
        runs: ids.len(),
        systems: systems.len(),
        iops_mape: system_mean(&tp, |h| h.error_pct.abs()),
        iops_median: system_median(&tp),
        iops_bias: system_mean(&tp, |h| h.error_pct),
        latency_mape: system_mean(&lat, |h| h.error_pct.abs()),
        latency_median: system_median(&lat),
        iops_mape_runs: mean(&tp_abs),
        iops_median_runs: median(&tp_abs),
        latency_mape_runs: mean(&lat_abs),
        p99_measured: p99,
        iops_mape_range95: iops_range,
        latency_mape_range95: latency_range,
        iops_mape_level_known: level_known_mape(&tp, false),
        iops_mape_level_known_by_direction: level_known_mape(&tp, true),
    }
}

/// Physical cores of all OSD nodes.
fn osd_cores(s: &Scenario) -> f64 {
    f64::from(s.nodes) * f64::from(s.sockets) * f64::from(s.node_cpu.cores)
}

/// Device ops per client write for the rules: the replica count, or k + m shards.
fn write_copies(s: &Scenario) -> f64 {
    match s.protection {
        Protection::Replicated { size } => f64::from(size),
        Protection::Erasure { k, m } => f64::from(k + m),
    }
}

fn rule_applies(s: &Scenario) -> bool {
    s.block_size_bytes <= RULE_MAX_BLOCK_BYTES
        && matches!(
            s.pattern,
            Pattern::Randread | Pattern::Randwrite | Pattern::Randrw
        )
}

/// Harmonic mix of read and write rates for a read share `p`.
fn mix(read: f64, write: f64, p: f64) -> f64 {
    1.0 / (p / read + (1.0 - p) / write)
}

/// The per-core rule's IOPS for a scenario (None outside small-block random I/O).
pub fn core_rule_iops(s: &Scenario) -> Option<f64> {
    rule_applies(s).then(|| {
        let c = osd_cores(s);
        mix(
            CORE_RULE_READ_IOPS_PER_CORE * c,
            CORE_RULE_WRITE_IOPS_PER_CORE * c / write_copies(s),
            s.read_fraction,
        )
    })
}

/// The disk rule's IOPS for a scenario (None outside small-block random I/O).
pub fn disk_rule_iops(s: &Scenario) -> Option<f64> {
    rule_applies(s).then(|| {
        let disks = f64::from(s.nodes) * f64::from(s.data.count_per_node);
        let d = &s.data.drive;
        mix(
            d.read_4k_iops * disks * DISK_RULE_EFFICIENCY,
            d.write_4k_iops * disks * DISK_RULE_EFFICIENCY / write_copies(s),
            s.read_fraction,
        )
    })
}

/// One predicted figure of a fold: `(metric, measured, predicted, param_ln_sigma)`.
type FoldFigure = (Metric, f64, f64, f64);

/// What one split produced.
struct FoldResult {
    split: Split,
    /// Per test run: its figures, or the error text.
    figures: Vec<Result<Vec<FoldFigure>, String>>,
    warnings: Vec<String>,
    /// The fitted parameters' values and how the fit stopped.
    fit: FoldFit,
}

/// Fits the prior to the split's training runs and predicts its test runs.
fn run_fold(
    split: Split,
    prepared: &[PreparedRun],
    prior: &ModelParams,
    lm: &FitOptions,
    progress: &dyn Progress,
) -> FoldResult {
    let train_owned: Vec<PreparedRun> = split.train.iter().map(|&i| prepared[i].clone()).collect();
    let train: Vec<&PreparedRun> = train_owned.iter().collect();
    let mut base = prior.clone();
    let names = default_fit_names(&base, &train_owned);
    ensure_params(&mut base, prior, &names);
    let fitted = fit_model(&train, &base, &names, prior, lm, progress);
    let fit = FoldFit {
        kind: split.kind,
        system_id: split.system_id.clone(),
        parameters: names
            .iter()
            .filter_map(|n| fitted.model.param.get(n).map(|q| (n.clone(), q.value)))
            .collect(),
        termination: fitted.outcome.termination.reason.clone(),
        converged: fitted.outcome.termination.converged,
    };
    let model = fitted.model;
    let mut warnings = Vec::new();
    let figures = split
        .test
        .iter()
        .map(|&i| {
            let r = &prepared[i];
            let pred = predict_scenario_exact(&r.scenario, &model)?;
            let net = crate::qn::ceph::build(&r.scenario, &model).map_err(|e| e.to_string())?;
            for w in net.warnings {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            let se = ln_standard_errors(&r.scenario, &model)
                .map_err(|e| e.to_string())?
                .unwrap_or((0.0, 0.0));
            Ok(targets(&r.run, r.scenario.block_size_bytes)
                .into_iter()
                .map(|(m, meas)| {
                    let (p, s) = match m {
                        Metric::Iops => (pred.iops, se.0),
                        Metric::Bandwidth => (pred.bandwidth_bytes_per_sec, se.0),
                        Metric::LatencyMean => (pred.latency_mean_secs, se.1),
                    };
                    (m, meas, p, s)
                })
                .collect())
        })
        .collect();
    progress.advance(1);
    FoldResult {
        split,
        figures,
        warnings,
        fit,
    }
}

/// The transfer discrepancy: the log-scale standard deviation `σ_d` of held-out residuals
/// beyond the parameter uncertainty. Each figure's log residual `e = ln(pred/meas)` is
/// taken as normal with variance `σ_d² + σ_p²` (`σ_p` its parameter standard error), and
/// `σ_d` maximises the likelihood with each system weighted equally (a system with 40 runs
/// says no more about a new system than one with 4): a grid over 0-3 in steps of 0.001,
/// then the best point (`i / 1000`, so the file shows 0.7, not 0.7000000000000001). Heterogeneous `σ_p` (a well-identified fold next to a poorly
/// identified one) is handled figure by figure, not by subtracting averages. `figs` are
/// held-out figures of one metric class; None without any.
pub fn discrepancy_sigma<'a>(figs: impl Iterator<Item = &'a HeldOut>) -> Option<f64> {
    let mut per: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for h in figs {
        let e = (h.predicted / h.measured).ln();
        if e.is_finite() {
            per.entry(h.system_id.as_str())
                .or_default()
                .push((e * e, h.param_ln_sigma * h.param_ln_sigma));
        }
    }
    if per.is_empty() {
        return None;
    }
    let loglik = |sd: f64| -> f64 {
        per.values()
            .map(|v| {
                v.iter()
                    .map(|&(e2, p2)| {
                        let var = (sd * sd + p2).max(1e-12);
                        -0.5 * (var.ln() + e2 / var)
                    })
                    .sum::<f64>()
                    / v.len() as f64
            })
            .sum()
    };
    (0..=3000)
        .map(|i| f64::from(i) / 1000.0)
        .map(|sd| (sd, loglik(sd)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(sd, _)| sd)
}

fn interval(pred: f64, sigma: f64, level: f64) -> (f64, f64) {
    let h = z_of(level) * sigma;
    (pred * (-h).exp(), pred * h.exp())
}

/// The transfer discrepancies of the held-out figures of one metric class (`throughput`)
/// from every system but `without` (`""`: every system): `(σ of the runs above iodepth 1,
/// σ of the iodepth-1 runs)` when at least [`MIN_SYSTEMS_FOR_OWN_SIGMA`] systems have
/// iodepth-1 runs, else `(σ of every run, None)`.
fn group_sigmas(loso: &[HeldOut], throughput: bool, without: &str) -> (Option<f64>, Option<f64>) {
    let of = |h: &&HeldOut| h.system_id != without && h.is_throughput() == throughput;
    let qd1_systems = loso
        .iter()
        .filter(of)
        .filter(|h| h.is_qd1())
        .map(|h| h.system_id.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    if qd1_systems >= MIN_SYSTEMS_FOR_OWN_SIGMA {
        (
            discrepancy_sigma(loso.iter().filter(of).filter(|h| !h.is_qd1())),
            discrepancy_sigma(loso.iter().filter(of).filter(|h| h.is_qd1())),
        )
    } else {
        (discrepancy_sigma(loso.iter().filter(of)), None)
    }
}

/// Sets every figure's transfer discrepancy and its 80 % / 95 % intervals. A system's
/// discrepancy comes from the *other* systems' leave-one-system-out residuals only, of the
/// same metric class, and of its own group (iodepth 1 or above, [`group_sigmas`]); σ_d
/// depends only on (system, metric class, group), so it is fitted once per triple (a fit
/// per figure made this step quadratic in the corpus, 27 s of a 40 s evaluation).
pub(crate) fn set_intervals(figures: &mut [HeldOut]) {
    let loso: Vec<HeldOut> = figures
        .iter()
        .filter(|h| h.kind == SplitKind::LeaveOneSystemOut)
        .cloned()
        .collect();
    let mut sigma_of: BTreeMap<(String, bool), (Option<f64>, Option<f64>)> = BTreeMap::new();
    for h in figures.iter_mut() {
        let tp = h.is_throughput();
        let (rest, qd1) = *sigma_of
            .entry((h.system_id.clone(), tp))
            .or_insert_with(|| group_sigmas(&loso, tp, &h.system_id));
        let d = match qd1 {
            Some(q) if h.is_qd1() => Some(q),
            _ => rest,
        };
        if let Some(d) = d {
            let sigma = (d * d + h.param_ln_sigma * h.param_ln_sigma).sqrt();
            h.transfer_ln_sigma = Some(d);
            h.interval_80 = Some(interval(h.predicted, sigma, 0.80));
            h.interval_95 = Some(interval(h.predicted, sigma, 0.95));
        }
    }
}

fn pct(v: impl Iterator<Item = bool>) -> Option<f64> {
    let v: Vec<bool> = v.collect();
    (!v.is_empty()).then(|| 100.0 * v.iter().filter(|b| **b).count() as f64 / v.len() as f64)
}

/// Evaluates the model's transfer over `prepared` runs, fitting `prior` in every split.
/// `not_modelled` is passed through to the report.
pub fn evaluate(
    prepared: &[PreparedRun],
    not_modelled: Vec<NotModelled>,
    prior: &ModelParams,
    opts: &EvaluateOptions,
    progress: &dyn Progress,
) -> EvaluationReport {
    let mut splits = loso_splits(prepared);
    if opts.scale {
        splits.extend(scale_splits(prepared));
    }
    let mut warnings = Vec::new();
    let systems_count = splits
        .iter()
        .filter(|s| s.kind == SplitKind::LeaveOneSystemOut)
        .count();
    if systems_count < 3 {
        warnings.push(format!(
            "only {systems_count} system(s): leave-one-system-out needs several systems to say anything about transfer"
        ));
    }
    progress.start(splits.len() as u64, "evaluating transfer");
    let folds = par_map(&splits, |sp| {
        (!progress.is_cancelled()).then(|| {
            progress.message(&format!(
                "{}: predicting {} without it",
                match sp.kind {
                    SplitKind::LeaveOneSystemOut => "leave-one-system-out",
                    SplitKind::Scale => "scale series",
                },
                sp.system_id
            ));
            run_fold(sp.clone(), prepared, prior, &opts.lm, progress)
        })
    });
    let cancelled = folds.iter().any(Option::is_none);
    let mut figures: Vec<HeldOut> = Vec::new();
    let mut fold_fits: Vec<FoldFit> = Vec::new();
    for fold in folds.into_iter().flatten() {
        fold_fits.push(fold.fit);
        for w in fold.warnings {
            let w = format!("{} ({:?}): {w}", fold.split.system_id, fold.split.kind);
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        for (&i, res) in fold.split.test.iter().zip(fold.figures) {
            let r = &prepared[i];
            match res {
                Err(e) => warnings.push(format!(
                    "run {} ({:?}): not predicted: {e}",
                    r.run.run_id, fold.split.kind
                )),
                Ok(v) => {
                    for (metric, measured, predicted, s) in v {
                        let throughput = metric != Metric::LatencyMean;
                        let rule = |f: Option<f64>| {
                            f.filter(|_| throughput).map(|iops| match metric {
                                Metric::Bandwidth => iops * r.scenario.block_size_bytes as f64,
                                _ => iops,
                            })
                        };
                        figures.push(HeldOut {
                            kind: fold.split.kind,
                            run_id: r.run.run_id.clone(),
                            system_id: r.run.system_id.clone(),
                            metric,
                            measured,
                            predicted,
                            error_pct: 100.0 * (predicted / measured - 1.0),
                            param_ln_sigma: s,
                            transfer_ln_sigma: None,
                            interval_80: None,
                            interval_95: None,
                            core_rule: rule(core_rule_iops(&r.scenario)),
                            disk_rule: rule(disk_rule_iops(&r.scenario)),
                            classes: RunClass::ALL
                                .into_iter()
                                .filter(|c| c.contains(&r.scenario))
                                .collect(),
                        });
                    }
                }
            }
        }
    }
    figures.sort_by(|a, b| {
        (a.kind, &a.system_id, &a.run_id, a.metric).cmp(&(
            b.kind,
            &b.system_id,
            &b.run_id,
            b.metric,
        ))
    });

    set_intervals(&mut figures);

    let of = |k: SplitKind| figures.iter().filter(move |h| h.kind == k);
    let loso_figs = || of(SplitKind::LeaveOneSystemOut);
    // What a model fitted to every system carries: the iodepth-1 runs' σ apart when enough
    // systems have them, as each held-out system's intervals were set.
    let loso: Vec<HeldOut> = loso_figs().cloned().collect();
    let (throughput_ln_sigma, iodepth1_throughput_ln_sigma) = group_sigmas(&loso, true, "");
    let (latency_ln_sigma, iodepth1_latency_ln_sigma) = group_sigmas(&loso, false, "");
    let mut coverage = Coverage {
        p80: None,
        p95: None,
        p80_figures: pct(loso_figs().filter_map(|h| h.inside(h.interval_80))),
        p95_figures: pct(loso_figs().filter_map(|h| h.inside(h.interval_95))),
        figures: loso_figs().filter(|h| h.interval_80.is_some()).count(),
        throughput_ln_sigma,
        latency_ln_sigma,
        iodepth1_throughput_ln_sigma,
        iodepth1_latency_ln_sigma,
    };

    // Baselines: the same held-out figures, systems weighted equally as in `summary`.
    let baseline = |f: fn(&HeldOut) -> Option<f64>, note: &str| {
        let hits: Vec<HeldOut> = loso_figs()
            .filter(|h| h.is_throughput())
            .filter_map(|h| {
                f(h).map(|b| HeldOut {
                    predicted: b,
                    error_pct: 100.0 * (b / h.measured - 1.0),
                    ..h.clone()
                })
            })
            .collect();
        let rule: Vec<&HeldOut> = hits.iter().collect();
        let ours: Vec<&HeldOut> = loso_figs()
            .filter(|h| h.is_throughput() && f(h).is_some())
            .collect();
        BaselineSummary {
            runs: hits.len(),
            iops_mape: system_mean(&rule, |h| h.error_pct.abs()),
            iops_median: system_median(&rule),
            cephplan_iops_mape: system_mean(&ours, |h| h.error_pct.abs()),
            cephplan_iops_median: system_median(&ours),
            note: note.to_string(),
        }
    };
    let core_rule = baseline(
        |h| h.core_rule,
        "7,500 read / 3,500 write 4k IOPS per physical OSD-node core, writes divided by the replica count (k+m for EC), mixes combined harmonically (ceph.io 2022 \"Ceph OSD CPU scaling\"); random runs of at most 16 KiB",
    );
    let disk_rule = baseline(
        |h| h.disk_rule,
        "data-device 4k IOPS × devices × 0.88, writes divided by the replica count (k+m for EC), mixes combined harmonically (Mirantis); random runs of at most 16 KiB",
    );
    // USL: per series of one system, leave-one-out within the series.
    let usl_report = fit_usl(
        &prepared.iter().map(|r| r.run.clone()).collect::<Vec<_>>(),
        &opts.lm,
        progress,
    );
    let usl_errs: BTreeMap<&str, f64> = usl_report
        .series
        .iter()
        .flat_map(|s| s.runs.iter())
        .filter_map(|u| {
            u.error_pct_loo
                .filter(|e| e.is_finite())
                .map(|e| (u.run_id.as_str(), e))
        })
        .collect();
    let usl_figs: Vec<HeldOut> = loso_figs()
        .filter(|h| h.is_throughput())
        .filter_map(|h| {
            usl_errs.get(h.run_id.as_str()).map(|e| HeldOut {
                error_pct: *e,
                ..h.clone()
            })
        })
        .collect();
    let usl_ref: Vec<&HeldOut> = usl_figs.iter().collect();
    let usl_ours: Vec<&HeldOut> = loso_figs()
        .filter(|h| h.is_throughput() && usl_errs.contains_key(h.run_id.as_str()))
        .collect();
    let usl = BaselineSummary {
        runs: usl_figs.len(),
        iops_mape: system_mean(&usl_ref, |h| h.error_pct.abs()),
        iops_median: system_median(&usl_ref),
        cephplan_iops_mape: system_mean(&usl_ours, |h| h.error_pct.abs()),
        cephplan_iops_median: system_median(&usl_ours),
        note: "USL fitted to each series (one system, pattern and block size, over its in-flight counts), each run predicted by the series without it: a within-system fit, not a transfer".into(),
    };

    let ids: BTreeSet<&str> = prepared.iter().map(|r| r.run.system_id.as_str()).collect();
    let systems: Vec<SystemEvaluation> = ids
        .into_iter()
        .map(|id| {
            let mine = || loso_figs().filter(move |h| h.system_id == id);
            let s = summary(mine(), prepared);
            let tp_rule = |f: fn(&HeldOut) -> Option<f64>| {
                mean(
                    &mine()
                        .filter_map(|h| f(h).map(|b| 100.0 * (b / h.measured - 1.0).abs()))
                        .collect::<Vec<_>>(),
                )
            };
            let scale_abs =
                abs_errors(of(SplitKind::Scale).filter(|h| h.system_id == id && h.is_throughput()));
            let runs_of = || prepared.iter().filter(|r| r.run.system_id == id);
            SystemEvaluation {
                system_id: id.to_string(),
                runs: runs_of().count(),
                iops_mape: s.iops_mape,
                iops_median: s.iops_median,
                iops_bias: s.iops_bias,
                latency_mape: s.latency_mape,
                coverage_p80: pct(mine().filter_map(|h| h.inside(h.interval_80))),
                coverage_p95: pct(mine().filter_map(|h| h.inside(h.interval_95))),
                core_rule_iops_mape: tp_rule(|h| h.core_rule),
                disk_rule_iops_mape: tp_rule(|h| h.disk_rule),
                scale_iops_mape: mean(&scale_abs),
                releases: runs_of()
                    .map(|r| r.scenario.ceph_release.clone())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                cpus: runs_of()
                    .map(|r| {
                        let c = &r.scenario.node_cpu;
                        format!("{} {}", c.vendor, c.model).trim().to_string()
                    })
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
            }
        })
        .collect();
    // Systems weighted equally: the mean of the systems' own coverage.
    let over_systems = |f: fn(&SystemEvaluation) -> Option<f64>| {
        mean(&systems.iter().filter_map(f).collect::<Vec<_>>())
    };
    coverage.p80 = over_systems(|s| s.coverage_p80);
    coverage.p95 = over_systems(|s| s.coverage_p95);
    let classes = RunClass::ALL
        .into_iter()
        .map(|class| {
            let inside = move |h: &&HeldOut| h.classes.contains(&class);
            let covered = |iv: fn(&HeldOut) -> Option<(f64, f64)>| {
                let mut per: BTreeMap<&str, Vec<bool>> = BTreeMap::new();
                for h in loso_figs().filter(inside) {
                    if let Some(b) = h.inside(iv(h)) {
                        per.entry(h.system_id.as_str()).or_default().push(b);
                    }
                }
                mean(
                    &per.into_values()
                        .filter_map(|v| pct(v.into_iter()))
                        .collect::<Vec<_>>(),
                )
            };
            ClassEvaluation {
                class,
                label: class.label().to_string(),
                errors: summary(loso_figs().filter(inside), prepared),
                coverage_p80: covered(|h| h.interval_80),
                coverage_p95: covered(|h| h.interval_95),
            }
        })
        .collect();
    progress.finish();
    fold_fits.sort_by(|a, b| (a.kind, &a.system_id).cmp(&(b.kind, &b.system_id)));
    let parameter_spread = parameter_spread(&fold_fits);
    EvaluationReport {
        schema_version: REPORT_SCHEMA_VERSION,
        generator: format!("{} (cephplan evaluate)", crate::io::GENERATED_MARKER),
        systems,
        classes,
        loso: summary(loso_figs(), prepared),
        scale: summary(of(SplitKind::Scale), prepared),
        coverage,
        baselines: Baselines {
            core_rule,
            disk_rule,
            usl,
        },
        figures,
        folds: fold_fits,
        parameter_spread,
        not_modelled,
        warnings,
        cancelled,
    }
}

/// Over the leave-one-system-out folds, each fitted parameter's smallest, median and
/// largest value and the system whose leaving out gave the extremes, in parameter-name
/// order. A parameter the corpus pins down moves little from fold to fold; one that swings
/// is decided by whichever system is held out, and so are the predictions that rest on it.
pub fn parameter_spread(folds: &[FoldFit]) -> Vec<ParameterSpread> {
    let mut by_name: BTreeMap<&str, Vec<(f64, &str)>> = BTreeMap::new();
    for f in folds
        .iter()
        .filter(|f| f.kind == SplitKind::LeaveOneSystemOut)
    {
        for (name, &v) in &f.parameters {
            by_name
                .entry(name.as_str())
                .or_default()
                .push((v, f.system_id.as_str()));
        }
    }
    by_name
        .into_iter()
        .map(|(name, mut v)| {
            v.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
            let values: Vec<f64> = v.iter().map(|x| x.0).collect();
            let (lo, hi) = (v[0], v[v.len() - 1]);
            ParameterSpread {
                name: name.to_string(),
                folds: v.len(),
                min: lo.0,
                min_without: lo.1.to_string(),
                median: median(&values).expect("one fold at least"),
                max: hi.0,
                max_without: hi.1.to_string(),
            }
        })
        .collect()
}

/// The model's transfer error as a model file carries it: the leave-one-system-out
/// discrepancy over all systems (None without LOSO figures).
pub fn transfer_of(r: &EvaluationReport) -> Option<crate::model::Transfer> {
    let c = &r.coverage;
    let t = c.throughput_ln_sigma?;
    Some(crate::model::Transfer {
        kind: "leave-one-system-out".into(),
        throughput_ln_sigma: t,
        latency_ln_sigma: c.latency_ln_sigma.unwrap_or(t),
        iodepth1_throughput_ln_sigma: c.iodepth1_throughput_ln_sigma,
        iodepth1_latency_ln_sigma: c
            .iodepth1_latency_ln_sigma
            .or(c.iodepth1_throughput_ln_sigma),
        systems: r.loso.systems as u32,
        runs: r.loso.runs as u32,
        note: format!(
            "cephplan evaluate: each system predicted by the prior fitted to the others; σ by maximum likelihood beyond the parameter uncertainty, systems weighted equally{}; its intervals held {} % / {} % of a system's held-out figures at 80 % / 95 % (systems weighted equally; {} % / {} % of all figures)",
            if c.iodepth1_throughput_ln_sigma.is_some() {
                ", the runs at iodepth 1 apart from the others"
            } else {
                ""
            },
            c.p80.map_or("-".into(), |v| format!("{v:.1}")),
            c.p95.map_or("-".into(), |v| format!("{v:.1}")),
            c.p80_figures.map_or("-".into(), |v| format!("{v:.1}")),
            c.p95_figures.map_or("-".into(), |v| format!("{v:.1}"))
        ),
        by_kind: transfer_by_kind(&r.classes),
        measured_directions: Vec::new(),
        unmeasured: None,
        by_direction: Vec::new(),
        measured_clusters: Vec::new(),
        unlike: None,
    })
}

/// Each kind's held-out throughput and latency errors as a model file carries them (kinds
/// without a held-out throughput figure are left out).
pub fn transfer_by_kind(classes: &[ClassEvaluation]) -> Vec<crate::model::TransferKind> {
    classes
        .iter()
        .filter_map(|c| {
            let e = &c.errors;
            Some(crate::model::TransferKind {
                kind: c.class,
                systems: e.systems as u32,
                runs: e.runs as u32,
                iops_mape_percent: e.iops_mape?,
                iops_median_percent: e.iops_median?,
                iops_bias_percent: e.iops_bias?,
                latency_mape_percent: e.latency_mape,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;

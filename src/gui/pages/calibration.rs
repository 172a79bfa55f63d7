//! Calibration page: fit the Ceph model's parameters to measured runs, on a worker thread
//! with progress and Cancel, and show how good the fit is — termination reason, in-sample
//! and leave-one-out MAPE, the parameter table (value, standard error, 95 % interval,
//! prior, at-bound), predicted against measured with y = x and a ±15 % band, one plot per
//! metric in its unit (run id on hover), the error per run, the per-system summary beside the USL baseline, warnings and
//! the runs that could not be modelled. "Save model" writes the fitted model file, "Use this model" makes it the app's model. A
//! profile holds one parameter at a grid of values and refits the rest, to show whether the
//! data identify it (`cephplan profile`). "Evaluate transfer" runs `cephplan evaluate` on the
//! same datasets and prior: each system predicted by the prior fitted to all the others, the
//! per-system and per-kind tables, the interval coverage and the rules of thumb beside it —
//! the error to expect on a cluster the model was not fitted to.
//!
//! It makes the same library calls as `cephplan calibrate` (`data::load_runs`,
//! `calibrate::ceph::prepare_runs`, `calibrate::ratio::calibrate_with_ratios`: the main fit,
//! then the ratio rows' factors, shown in their own table,
//! `calibrate::profile::profile`, `evaluate::evaluate`, `io::write_atomic_owned`), so both give the same numbers and neither overwrites a file
//! cephplan did not write. Not here: the fitting itself (`calibrate`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::calibrate::ceph::{
    calibration_start, data_files, prepare_runs, CalibrateOptions, CalibrationReport, Metric,
    NotModelled, PreparedRun,
};
use crate::calibrate::profile::{profile, ProfileReport, MISS_THRESHOLD_PCT};
use crate::calibrate::ratio::{calibrate_with_ratios, prepare_ratios, PreparedRatio};
use crate::data::load_runs;
use crate::evaluate::spread::{
    compare, comparison_heading, comparison_rows, read_report, save_report, system_change_rows,
    TransferComparison, CHANGE_HEADER, SYSTEM_CHANGE_HEADER,
};
use crate::evaluate::{evaluate, EvaluateOptions, EvaluationReport};
use crate::gui::app::{Command, ModelChoice};
use crate::gui::job::{Job, JobOutcome};
use crate::gui::plot;
use crate::model::ModelParams;
use crate::predict::format::{eng, Quantity};
use crate::progress::Progress;
use crate::spec::Catalogue;

/// Half-width of the band drawn around y = x (domain.md: the model aims at ±15 %).
pub const BAND_REL: f64 = 0.15;

/// What a fit is asked to do (a snapshot of the page's inputs).
#[derive(Debug, Clone, PartialEq)]
pub struct FitRequest {
    pub data: Vec<PathBuf>,
    /// Prior and starting point of the fit; `None` = the built-in `models/prior.toml`, and
    /// for one system's runs the shipped default as the start ([`calibration_start`]).
    pub base_model: Option<PathBuf>,
    pub options: CalibrateOptions,
}

/// A finished fit.
#[derive(Debug, Clone)]
pub struct FitOutput {
    pub report: CalibrationReport,
    pub model: ModelParams,
    /// Warnings of the dataset loader (rows it accepted with a remark).
    pub load_warnings: Vec<String>,
}

pub type FitResult = Result<FitOutput, String>;

pub type ProfileResult = Result<ProfileReport, String>;

pub type EvaluateResult = Result<EvaluationReport, String>;

/// What a request loads: the runs, the runs not modelled, the ratio rows, the prior and the
/// loader's warnings.
struct Loaded {
    prepared: Vec<PreparedRun>,
    not_modelled: Vec<NotModelled>,
    ratios: Vec<PreparedRatio>,
    prior: ModelParams,
    load_warnings: Vec<String>,
}

fn load(req: &FitRequest, progress: &dyn Progress) -> Result<Loaded, String> {
    if req.data.is_empty() {
        return Err(
            "add at least one dataset path (a CSV file or a directory of CSV files, \
             e.g. calibration-data/)"
                .into(),
        );
    }
    let cat = Catalogue::builtin();
    let prior = match &req.base_model {
        Some(p) => ModelParams::load(p)
            .map_err(|e| format!("{e}; or empty the base model field to use the built-in prior"))?,
        None => ModelParams::prior(),
    };
    progress.message("loading runs");
    let mut runs = Vec::new();
    let mut load_warnings = Vec::new();
    for p in &req.data {
        let (r, w) = load_runs(p).map_err(|e| format!("loading {}: {e}", p.display()))?;
        runs.extend(r);
        load_warnings.extend(w.into_iter().map(|w| w.to_string()));
    }
    let (prepared, not_modelled) = prepare_runs(&runs, &cat).map_err(|e| e.to_string())?;
    let (ratios, _) = prepare_ratios(&runs, &cat).map_err(|e| e.to_string())?;
    Ok(Loaded {
        prepared,
        not_modelled,
        ratios,
        prior,
        load_warnings,
    })
}

/// Loads the runs and fits, like `cephplan calibrate` (without writing anything): the main
/// fit, then the ratio rows' factors.
pub fn fit(req: &FitRequest, progress: &dyn Progress) -> FitResult {
    let Loaded {
        prepared,
        not_modelled,
        ratios,
        prior,
        load_warnings,
    } = load(req, progress)?;
    let files = data_files(&req.data);
    // As `cephplan calibrate` without --start: a chosen base model is the start (as
    // `--prior FILE`); without one, one system's runs start from the shipped default,
    // several from the prior.
    let start = match req.base_model {
        Some(_) => prior.clone(),
        None => calibration_start(&prepared, &prior),
    };
    let (report, model) = calibrate_with_ratios(
        &prepared,
        not_modelled,
        &ratios,
        &start,
        &prior,
        &files,
        &req.options,
        progress,
    )
    .map_err(|e| e.to_string())?;
    Ok(FitOutput {
        report,
        model,
        load_warnings,
    })
}

/// Loads the runs and profiles `name` over `values`, like `cephplan profile`.
pub fn run_profile(
    req: &FitRequest,
    name: &str,
    values: &[f64],
    progress: &dyn Progress,
) -> ProfileResult {
    let Loaded {
        prepared, prior, ..
    } = load(req, progress)?;
    profile(
        &prepared,
        &prior,
        &prior,
        &req.options,
        name,
        values,
        progress,
    )
    .map_err(|e| e.to_string())
}

/// Loads the runs and evaluates the prior's transfer error, like `cephplan evaluate`
/// (`scale`: also the scale-series splits; without, like `--no-scale`).
pub fn run_evaluate(req: &FitRequest, scale: bool, progress: &dyn Progress) -> EvaluateResult {
    let Loaded {
        prepared,
        not_modelled,
        prior,
        ..
    } = load(req, progress)?;
    let opts = EvaluateOptions {
        scale,
        ..EvaluateOptions::default()
    };
    Ok(evaluate(&prepared, not_modelled, &prior, &opts, progress))
}

/// The grid typed into the profile's values field: numbers separated by commas or spaces.
pub fn parse_grid(s: &str) -> Result<Vec<f64>, String> {
    let v: Vec<f64> = split_list(s)
        .iter()
        .map(|t| {
            t.parse::<f64>()
                .map_err(|_| format!("\"{t}\" is not a number; give values like 0.1, 0.3, 1"))
        })
        .collect::<Result<_, _>>()?;
    let mut distinct: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        return Err(
            "give at least two different values (one point cannot show whether the data identify the parameter), e.g. 0.1, 0.3, 1"
                .into(),
        );
    }
    Ok(v)
}

/// Writes the fitted model to `path` the way `cephplan calibrate --out` does: named after
/// the file, atomically, refusing to replace a file cephplan did not write.
pub fn save_model(out: &FitOutput, path: &Path) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err("type a file name to save the fitted model to".into());
    }
    let mut model = out.model.clone();
    model.name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fitted".into());
    let runs: std::collections::BTreeSet<&str> =
        out.report.runs.iter().map(|r| r.run_id.as_str()).collect();
    model.description = format!(
        "Fitted by cephplan-gui (Calibration page) to {} measured runs; see fitted_on.",
        runs.len()
    );
    crate::gui::parent_must_exist(path)?;
    crate::io::write_atomic_owned(path, model.to_toml().as_bytes()).map_err(|e| e.to_string())
}

fn split_list(s: &str) -> Vec<String> {
    s.split([',', ' ', '\n'])
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect()
}

#[derive(Default)]
struct Runtime {
    job: Option<Job<FitResult>>,
    result: Option<FitOutput>,
    error: Option<String>,
    saved: Option<Result<PathBuf, String>>,
    profile_job: Option<Job<ProfileResult>>,
    profile: Option<ProfileReport>,
    profile_error: Option<String>,
    eval_job: Option<Job<EvaluateResult>>,
    evaluation: Option<EvaluationReport>,
    eval_error: Option<String>,
    /// "Save evaluation": the path written, or why not.
    eval_saved: Option<Result<PathBuf, String>>,
    /// "Compare": the change against an earlier evaluation, or why there is none.
    comparison: Option<Result<TransferComparison, String>>,
}

#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct CalibrationPage {
    /// Dataset paths: CSV files or directories of CSV files.
    pub data_paths: Vec<String>,
    /// Prior and starting model (as `cephplan calibrate --prior FILE`); empty = the
    /// built-in `models/prior.toml`, with one system's runs starting from the shipped
    /// default (as `cephplan calibrate` without `--prior`).
    pub base_model: String,
    pub leave_one_out: bool,
    pub usl: bool,
    /// System ids or run ids to leave out, separated by commas or spaces.
    pub exclude: String,
    /// Where "Save model" writes.
    pub save_path: String,
    /// The parameter a profile holds fixed.
    pub profile_param: String,
    /// Its grid of values, separated by commas or spaces.
    pub profile_values: String,
    /// Whether "Evaluate transfer" also runs the scale-series splits.
    pub eval_scale: bool,
    /// Where "Save evaluation" writes the report (`evaluate --format json`'s JSON).
    pub eval_save_path: String,
    /// An earlier evaluation report "Compare" reads.
    pub eval_against_path: String,
    #[serde(skip)]
    rt: Runtime,
}

impl Default for CalibrationPage {
    fn default() -> Self {
        Self {
            data_paths: vec!["calibration-data/".into()],
            base_model: String::new(),
            leave_one_out: true,
            usl: true,
            exclude: String::new(),
            save_path: "models/fitted.toml".into(),
            profile_param: "osd_write_batch_scale".into(),
            profile_values: "0.03, 0.1, 0.3, 0.5, 1".into(),
            eval_scale: true,
            eval_save_path: "evaluation.json".into(),
            eval_against_path: String::new(),
            rt: Runtime::default(),
        }
    }
}

impl CalibrationPage {
    pub fn request(&self) -> FitRequest {
        let base = self.base_model.trim();
        FitRequest {
            data: self
                .data_paths
                .iter()
                .map(|p| p.trim())
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .collect(),
            base_model: (!base.is_empty()).then(|| PathBuf::from(base)),
            options: CalibrateOptions {
                leave_one_out: self.leave_one_out,
                usl: self.usl,
                exclude: split_list(&self.exclude),
                ..CalibrateOptions::default()
            },
        }
    }

    /// Starts a fit of the current inputs (no-op while one runs).
    pub fn start_fit(&mut self, ctx: &egui::Context) {
        if self.is_busy() {
            return;
        }
        let req = self.request();
        self.rt.error = None;
        self.rt.saved = None;
        self.rt.job = Some(Job::spawn("fitting", ctx, move |p| fit(&req, p)));
    }

    /// Starts a profile of the current inputs (no-op while a fit or profile runs).
    pub fn start_profile(&mut self, ctx: &egui::Context) {
        if self.is_busy() {
            return;
        }
        self.rt.profile_error = None;
        let values = match parse_grid(&self.profile_values) {
            Ok(v) => v,
            Err(e) => {
                self.rt.profile_error = Some(e);
                return;
            }
        };
        let req = self.request();
        let name = self.profile_param.trim().to_string();
        self.rt.profile_job = Some(Job::spawn("profiling", ctx, move |p| {
            run_profile(&req, &name, &values, p)
        }));
    }

    /// Starts a transfer evaluation of the current datasets and prior (no-op while a fit,
    /// profile or evaluation runs).
    pub fn start_evaluation(&mut self, ctx: &egui::Context) {
        if self.is_busy() {
            return;
        }
        self.rt.eval_error = None;
        self.rt.eval_saved = None;
        self.rt.comparison = None;
        let req = self.request();
        let scale = self.eval_scale;
        self.rt.eval_job = Some(Job::spawn("evaluating", ctx, move |p| {
            run_evaluate(&req, scale, p)
        }));
    }

    pub fn is_busy(&self) -> bool {
        self.rt.job.is_some() || self.rt.profile_job.is_some() || self.rt.eval_job.is_some()
    }
    /// The last transfer evaluation's report.
    pub fn evaluation(&self) -> Option<&EvaluationReport> {
        self.rt.evaluation.as_ref()
    }
    pub fn evaluation_error(&self) -> Option<&str> {
        self.rt.eval_error.as_deref()
    }
    pub fn profile_report(&self) -> Option<&ProfileReport> {
        self.rt.profile.as_ref()
    }
    pub fn profile_error(&self) -> Option<&str> {
        self.rt.profile_error.as_deref()
    }
    pub fn result(&self) -> Option<&FitOutput> {
        self.rt.result.as_ref()
    }
    pub fn error(&self) -> Option<&str> {
        self.rt.error.as_deref()
    }
    /// Outcome of the last "Save model".
    pub fn saved(&self) -> Option<&Result<PathBuf, String>> {
        self.rt.saved.as_ref()
    }

    fn poll(&mut self) {
        let rt = &mut self.rt;
        settle(
            &mut rt.profile_job,
            &mut rt.profile,
            &mut rt.profile_error,
            "profile",
        );
        settle(&mut rt.job, &mut rt.result, &mut rt.error, "fit");
        settle(
            &mut rt.eval_job,
            &mut rt.evaluation,
            &mut rt.eval_error,
            "evaluation",
        );
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        self.poll();
        ui.heading("Calibration");
        self.inputs_ui(ui);
        if let Some(job) = &self.rt.job {
            job.progress_ui(ui);
        }
        if let Some(e) = &self.rt.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        self.profile_ui(ui);
        self.transfer_ui(ui);
        let Some(out) = &self.rt.result else {
            if self.rt.job.is_none() {
                ui.label(
                    "Press Fit to fit the model to the measured runs. Without leave-one-out \
                     the fit is much faster but gives no out-of-sample error.",
                );
            }
            return;
        };
        ui.separator();
        if self.rt.job.is_some() {
            ui.colored_label(
                plot::WARN,
                "below: the previous fit's results (the new fit replaces them when it finishes)",
            );
        }
        ui.horizontal(|ui| {
            let l = ui.label("save fitted model as");
            ui.add(egui::TextEdit::singleline(&mut self.save_path).desired_width(300.0))
                .labelled_by(l.id);
            if ui.button("Save model").clicked() {
                let path = PathBuf::from(self.save_path.trim());
                self.rt.saved = Some(save_model(out, &path).map(|()| path));
            }
            match &self.rt.saved {
                Some(Ok(p)) => {
                    ui.label(format!("saved {}", p.display()));
                    if ui
                        .button("Use this model")
                        .on_hover_text("predict with it on every page (the top bar's selector)")
                        .clicked()
                    {
                        cmds.push(Command::UseModel(ModelChoice::Fitted(p.clone())));
                    }
                }
                Some(Err(e)) => {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                None => {}
            }
        });
        report_ui(ui, out);
    }

    fn profile_ui(&mut self, ui: &mut egui::Ui) {
        let busy = self.is_busy();
        ui.horizontal(|ui| {
            let l = ui.label("profile parameter");
            ui.add(egui::TextEdit::singleline(&mut self.profile_param).desired_width(220.0))
                .labelled_by(l.id);
            let l = ui.label("at values");
            ui.add(egui::TextEdit::singleline(&mut self.profile_values).desired_width(200.0))
                .labelled_by(l.id);
            if ui
                .add_enabled(!busy, egui::Button::new("Profile"))
                .clicked()
            {
                self.start_profile(ui.ctx());
            }
        });
        job_section_ui(
            ui,
            self.rt.profile_job.as_ref(),
            self.rt.profile_error.as_deref(),
            self.rt.profile.as_ref(),
            profile_table_ui,
        );
    }

    fn transfer_ui(&mut self, ui: &mut egui::Ui) {
        let busy = self.is_busy();
        ui.horizontal(|ui| {
            ui.strong("transfer error (leave-one-system-out)");
            ui.checkbox(&mut self.eval_scale, "scale series");
            if ui
                .add_enabled(!busy, egui::Button::new("Evaluate transfer"))
                .on_hover_text(
                    "cephplan evaluate: each system predicted by the prior fitted to all the \
                     other systems of these datasets (the error to expect on a cluster the \
                     model was not fitted to); every run of the datasets counts, as in the \
                     command line: the exclude field applies to Fit",
                )
                .clicked()
            {
                self.start_evaluation(ui.ctx());
            }
        });
        job_section_ui(
            ui,
            self.rt.eval_job.as_ref(),
            self.rt.eval_error.as_deref(),
            self.rt.evaluation.as_ref(),
            evaluation_ui,
        );
        if self.rt.eval_job.is_none() {
            self.evaluation_files_ui(ui);
        }
    }

    /// Save the evaluation (as `evaluate --format json` writes it) and compare it with an
    /// earlier one (`evaluate --against`): the same library calls, the same rows.
    fn evaluation_files_ui(&mut self, ui: &mut egui::Ui) {
        let Some(report) = self.rt.evaluation.as_ref().filter(|r| !r.cancelled) else {
            return;
        };
        ui.horizontal(|ui| {
            let l = ui.label("save evaluation as");
            ui.add(egui::TextEdit::singleline(&mut self.eval_save_path).desired_width(300.0))
                .labelled_by(l.id);
            if ui
                .button("Save evaluation")
                .on_hover_text("the JSON `cephplan evaluate --format json` prints: compare a later evaluation with it")
                .clicked()
            {
                let path = PathBuf::from(self.eval_save_path.trim());
                self.rt.eval_saved = Some(crate::gui::parent_must_exist(&path).and_then(|()| {
                    save_report(report, &path)
                        .map(|()| path)
                        .map_err(|e| e.to_string())
                }));
            }
            match &self.rt.eval_saved {
                Some(Ok(p)) => {
                    ui.label(format!("saved {}", p.display()));
                }
                Some(Err(e)) => {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                None => {}
            }
        });
        ui.horizontal(|ui| {
            let l = ui.label("compare with an earlier evaluation");
            ui.add(
                egui::TextEdit::singleline(&mut self.eval_against_path)
                    .desired_width(300.0)
                    .hint_text("earlier evaluation.json"),
            )
            .labelled_by(l.id);
            if ui
                .button("Compare evaluations")
                .on_hover_text(
                    "cephplan evaluate --against: each figure's change against an earlier \
                     evaluation of the same runs, with its 95 % range when the systems are \
                     drawn again",
                )
                .clicked()
            {
                let path = PathBuf::from(self.eval_against_path.trim());
                self.rt.comparison = Some(read_report(&path).map_err(|e| e.to_string()).and_then(
                    |before| {
                        compare(&before, report)
                            .map_err(|e| format!("cannot compare with {}: {e}", path.display()))
                    },
                ));
            }
        });
        match &self.rt.comparison {
            Some(Ok(c)) => comparison_ui(ui, c),
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            None => {}
        }
    }

    fn inputs_ui(&mut self, ui: &mut egui::Ui) {
        let running = self.is_busy();
        let mut remove = None;
        for (i, p) in self.data_paths.iter_mut().enumerate() {
            ui.horizontal(|ui| {
                let l = ui.label(format!("dataset {}", i + 1));
                ui.add(
                    egui::TextEdit::singleline(p)
                        .desired_width(360.0)
                        .hint_text("calibration-data/ or a .csv file"),
                )
                .labelled_by(l.id);
                if ui.button(format!("remove dataset {}", i + 1)).clicked() {
                    remove = Some(i);
                }
            });
        }
        if let Some(i) = remove {
            self.data_paths.remove(i);
        }
        ui.horizontal(|ui| {
            if ui.button("add dataset").clicked() {
                self.data_paths.push(String::new());
            }
            let l = ui.label("base model (prior)");
            ui.add(
                egui::TextEdit::singleline(&mut self.base_model)
                    .desired_width(240.0)
                    .hint_text("empty: the built-in prior"),
            )
            .labelled_by(l.id);
        });
        ui.horizontal(|ui| {
            ui.checkbox(&mut self.leave_one_out, "leave-one-out");
            ui.checkbox(&mut self.usl, "USL baseline");
            let l = ui.label("exclude systems / run ids");
            ui.add(
                egui::TextEdit::singleline(&mut self.exclude)
                    .desired_width(240.0)
                    .hint_text("seed-003, s001-randread-4k"),
            )
            .labelled_by(l.id);
            if ui.add_enabled(!running, egui::Button::new("Fit")).clicked() {
                self.start_fit(ui.ctx());
            }
        });
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "–".into())
}

/// A job's progress row while it runs, then its error or its result (drawn by `show`).
fn job_section_ui<T, R>(
    ui: &mut egui::Ui,
    job: Option<&Job<T>>,
    error: Option<&str>,
    result: Option<&R>,
    show: impl FnOnce(&mut egui::Ui, &R),
) {
    if let Some(job) = job {
        job.progress_ui(ui);
    }
    if let Some(e) = error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    if let Some(r) = result {
        show(ui, r);
    }
}

/// Moves a finished job's outcome into `result` or `error` and clears the job.
fn settle<T: Send + 'static>(
    job: &mut Option<Job<Result<T, String>>>,
    result: &mut Option<T>,
    error: &mut Option<String>,
    what: &str,
) {
    let Some(outcome) = job.as_mut().and_then(Job::poll) else {
        return;
    };
    *job = None;
    match outcome {
        JobOutcome::Done(Ok(r)) => *result = Some(r),
        JobOutcome::Done(Err(e)) => *error = Some(e),
        JobOutcome::Panicked(m) => *error = Some(format!("the {what} failed: {m}")),
    }
}

/// A percentage at one decimal, as `cephplan evaluate` prints it ("–" when absent).
fn pct(v: Option<f64>) -> String {
    opt(v, |v| format!("{v:.1}"))
}

fn signed_pct(v: Option<f64>) -> String {
    opt(v, |v| format!("{v:+.1}"))
}

/// A grid of text rows under a header (the CLI prints the same rows as a table).
fn text_grid_ui(ui: &mut egui::Ui, id: &str, header: &[&str], rows: &[Vec<String>]) {
    egui::Grid::new(id).striped(true).show(ui, |ui| {
        for h in header {
            ui.strong(*h);
        }
        ui.end_row();
        for r in rows {
            for c in r {
                ui.label(c);
            }
            ui.end_row();
        }
    });
}

/// The change against an earlier evaluation: the rows `evaluate --against` prints.
fn comparison_ui(ui: &mut egui::Ui, c: &TransferComparison) {
    ui.label(comparison_heading(c));
    text_grid_ui(ui, "comparison", &CHANGE_HEADER, &comparison_rows(c));
    text_grid_ui(
        ui,
        "comparison_systems",
        &SYSTEM_CHANGE_HEADER,
        &system_change_rows(c),
    );
}

/// The transfer evaluation: the headline figures, per system, per kind of run.
fn evaluation_ui(ui: &mut egui::Ui, r: &EvaluationReport) {
    let l = &r.loso;
    ui.label(format!(
        "leave-one-system-out over {} systems, each weighing the same ({} runs): IOPS/bandwidth \
         MAPE {} %, median {} %, bias {} %; mean latency MAPE {} %",
        l.systems,
        l.runs,
        pct(l.iops_mape),
        pct(l.iops_median),
        signed_pct(l.iops_bias),
        pct(l.latency_mape),
    ));
    if let Some(line) =
        crate::evaluate::spread::range_text(l.iops_mape_range95, l.latency_mape_range95)
    {
        ui.label(line);
    }
    if let Some(line) = crate::evaluate::level_text(l) {
        ui.label(line);
    }
    if r.scale.runs > 0 {
        ui.label(format!(
            "scale series ({} runs at larger sizes of {} systems, fitted on the smallest size \
             plus the other systems): IOPS MAPE {} %",
            r.scale.runs,
            r.scale.systems,
            pct(r.scale.iops_mape)
        ));
    }
    let c = &r.coverage;
    let iodepth1 = match (c.iodepth1_throughput_ln_sigma, c.iodepth1_latency_ln_sigma) {
        (None, None) => String::new(),
        (t, l) => format!(
            "; at iodepth 1: {} throughput, {} latency",
            opt(t, |v| format!("{v:.2}")),
            opt(l, |v| format!("{v:.2}"))
        ),
    };
    ui.label(format!(
        "inside the stated 80 % / 95 % intervals: {} % / {} % of a system's held-out figures \
         (σ_ln {} throughput, {} latency{iodepth1})",
        pct(c.p80),
        pct(c.p95),
        opt(c.throughput_ln_sigma, |v| format!("{v:.2}")),
        opt(c.latency_ln_sigma, |v| format!("{v:.2}"))
    ));
    let b = &r.baselines.core_rule;
    if b.runs > 0 {
        ui.label(format!(
            "per-core rule on the same {} runs: MAPE {} %, median {} % (cephplan {} %, {} %)",
            b.runs,
            pct(b.iops_mape),
            pct(b.iops_median),
            pct(b.cephplan_iops_mape),
            pct(b.cephplan_iops_median)
        ));
    }
    if r.cancelled {
        ui.colored_label(
            plot::WARN,
            "cancelled: the figures cover the splits finished before Cancel",
        );
    }
    egui::Grid::new("calibration-transfer-systems")
        .striped(true)
        .num_columns(8)
        .show(ui, |ui| {
            for h in [
                "system",
                "runs",
                "IOPS MAPE %",
                "median %",
                "bias %",
                "latency MAPE %",
                "scale MAPE %",
                "inside 80 % / 95 %",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for s in &r.systems {
                ui.label(&s.system_id);
                ui.label(s.runs.to_string());
                ui.label(pct(s.iops_mape));
                ui.label(pct(s.iops_median));
                ui.label(signed_pct(s.iops_bias));
                ui.label(pct(s.latency_mape));
                ui.label(pct(s.scale_iops_mape));
                ui.label(format!("{} / {}", pct(s.coverage_p80), pct(s.coverage_p95)));
                ui.end_row();
            }
        });
    if r.classes.iter().any(|k| k.errors.runs > 0) {
        egui::Grid::new("calibration-transfer-classes")
            .striped(true)
            .num_columns(7)
            .show(ui, |ui| {
                for h in [
                    "runs of kind",
                    "runs",
                    "systems",
                    "IOPS MAPE %",
                    "median %",
                    "latency MAPE %",
                    "inside 80 / 95 %",
                ] {
                    ui.strong(h);
                }
                ui.end_row();
                for k in r.classes.iter().filter(|k| k.errors.runs > 0) {
                    ui.label(&k.label);
                    ui.label(k.errors.runs.to_string());
                    ui.label(k.errors.systems.to_string());
                    ui.label(pct(k.errors.iops_mape));
                    ui.label(pct(k.errors.iops_median));
                    ui.label(pct(k.errors.latency_mape));
                    ui.label(format!("{} / {}", pct(k.coverage_p80), pct(k.coverage_p95)));
                    ui.end_row();
                }
            });
    }
    if !r.parameter_spread.is_empty() {
        ui.label(
            "fitted parameters over the leave-one-system-out folds (what holding one system \
             out moves):",
        );
        egui::Grid::new("calibration-transfer-parameters")
            .striped(true)
            .num_columns(6)
            .show(ui, |ui| {
                for h in crate::evaluate::ParameterSpread::HEADER {
                    ui.strong(h);
                }
                ui.end_row();
                for q in &r.parameter_spread {
                    for c in q.cells() {
                        ui.label(c);
                    }
                    ui.end_row();
                }
            });
        for note in r
            .folds
            .iter()
            .filter_map(crate::evaluate::FoldFit::non_convergence_note)
        {
            ui.colored_label(plot::WARN, note);
        }
    }
}

fn profile_table_ui(ui: &mut egui::Ui, r: &ProfileReport) {
    ui.label(format!(
        "profile of {} ({}): {} parameters refitted at each value; MAPE spread {} points \
         (near 0: the data do not identify it)",
        r.parameter,
        r.unit,
        r.refitted.len(),
        opt(r.mape_spread_points, |v| format!("{v:.2}"))
    ));
    egui::Grid::new("calibration-profile")
        .striped(true)
        .num_columns(5)
        .show(ui, |ui| {
            for h in [
                "value",
                "MAPE %",
                "max |error| %",
                &format!("misses > {MISS_THRESHOLD_PCT} %"),
                "termination",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for p in &r.points {
                let best = r.best_value == Some(p.value);
                let v = format!("{}", p.value);
                if best {
                    ui.strong(v);
                } else {
                    ui.label(v);
                }
                ui.label(opt(p.mape_in_sample, |v| format!("{v:.2}")));
                ui.label(opt(p.max_abs_throughput_error_pct, |v| format!("{v:.1}")));
                ui.label(p.throughput_misses.to_string());
                ui.label(format!(
                    "{} ({} evaluations)",
                    p.termination.reason, p.termination.evaluations
                ));
                ui.end_row();
            }
        });
    if r.cancelled {
        ui.colored_label(plot::WARN, "cancelled: the table holds the values done");
    }
}

fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::LatencyMean => "mean latency",
        Metric::Iops => "IOPS",
        Metric::Bandwidth => "bandwidth",
    }
}

fn metric_quantity(m: Metric) -> Quantity {
    match m {
        Metric::LatencyMean => Quantity::Seconds,
        Metric::Iops => Quantity::Iops,
        Metric::Bandwidth => Quantity::BytesPerSec,
    }
}

/// A parameter value in engineering notation, three significant digits (`35.0 µs` for
/// times; the unit of the others is on the name's hover, e.g. "gigacycles per OSD read op").
fn with_unit(v: f64, unit: &str) -> String {
    if unit == "s" || unit.starts_with("secs ") {
        eng(v, Quantity::Seconds)
    } else {
        eng(v, Quantity::Plain)
    }
}

fn report_ui(ui: &mut egui::Ui, out: &FitOutput) {
    let r = &out.report;
    let t = &r.termination;
    ui.horizontal_wrapped(|ui| {
        let reason = format!(
            "fit: {} after {} evaluations, {} degrees of freedom, from model \"{}\"",
            t.reason, t.evaluations, r.degrees_of_freedom, r.start_model
        );
        if t.converged {
            ui.strong(reason);
        } else {
            ui.colored_label(plot::WARN, reason);
        }
        ui.separator();
        ui.strong(format!(
            "MAPE in-sample {} %",
            opt(r.mape_in_sample, |v| format!("{v:.1}"))
        ));
        ui.separator();
        let loo = format!("leave-one-out {}", r.loo_label());
        if r.loo_runs.is_some_and(|l| l.partial()) {
            ui.colored_label(plot::WARN, loo);
        } else {
            ui.strong(loo);
        }
        ui.label("(IOPS and bandwidth figures)");
    });
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.columns(2, |cols| {
            let ui = &mut cols[0];
            ui.strong("parameters");
            parameter_table_ui(ui, "calibration-parameters", &r.parameters);
            ui.add_space(6.0);
            ui.strong("per system");
            system_table_ui(ui, r);
            if let Some(f) = &r.ratios {
                ratio_ui(ui, f);
            }
            messages_ui(ui, out);
            let ui = &mut cols[1];
            for m in [Metric::Iops, Metric::Bandwidth, Metric::LatencyMean] {
                let points: Vec<plot::RunPoint> = r
                    .runs
                    .iter()
                    .filter(|c| c.metric == m)
                    .map(|c| plot::RunPoint {
                        run_id: c.run_id.clone(),
                        measured: c.measured,
                        predicted: c.predicted,
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                ui.strong(format!(
                    "{}: predicted against measured, {} runs (y = x and ±{:.0} %)",
                    metric_name(m),
                    points.len(),
                    BAND_REL * 100.0
                ));
                plot::metric_measured_vs_predicted_ui(
                    ui,
                    &format!("calibration-{m:?}"),
                    metric_quantity(m),
                    &points,
                    BAND_REL,
                    220.0,
                );
            }
            ui.strong("error per run (%; LOO where computed)");
            let errors: Vec<(String, f64)> = r
                .runs
                .iter()
                .map(|c| {
                    (
                        format!("{} {}", c.run_id, metric_name(c.metric)),
                        c.error_pct_loo.unwrap_or(c.error_pct),
                    )
                })
                .collect();
            plot::labelled_bars_ui(
                ui,
                "calibration-residuals",
                "error %",
                &errors,
                BAND_REL * 100.0,
                200.0,
            );
        });
        ui.strong("runs");
        run_table_ui(ui, r);
    });
}

fn parameter_table_ui(
    ui: &mut egui::Ui,
    id: &str,
    parameters: &[crate::calibrate::ceph::ParameterEstimate],
) {
    egui::Grid::new(id)
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            for h in [
                "parameter",
                "value",
                "std error",
                "95 % interval",
                "prior",
                "",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for p in parameters {
                ui.label(&p.name).on_hover_text(&p.unit);
                ui.label(with_unit(p.value, &p.unit));
                ui.label(opt(p.std_error, |v| with_unit(v, &p.unit)));
                ui.label(match (p.interval_low, p.interval_high) {
                    (Some(l), Some(h)) => {
                        format!("{} … {}", with_unit(l, &p.unit), with_unit(h, &p.unit))
                    }
                    _ => "not identified".into(),
                });
                ui.label(with_unit(p.prior, &p.unit));
                if p.at_bound {
                    ui.colored_label(plot::WARN, "at bound");
                } else {
                    ui.label("");
                }
                ui.end_row();
            }
        });
}

/// The ratio rows (seed 003) with their errors and the factors fitted from them after the
/// main fit, as `cephplan calibrate` prints them.
fn ratio_ui(ui: &mut egui::Ui, f: &crate::calibrate::ratio::RatioFit) {
    ui.add_space(6.0);
    ui.strong(format!(
        "ratio rows (numerator system / reference system, same workload): MAPE {} % over {} rows",
        pct(f.mape),
        f.runs.len()
    ));
    if !f.parameters.is_empty() {
        parameter_table_ui(ui, "calibration-ratio-parameters", &f.parameters);
    }
    let (header, rows) = f.table();
    text_grid_ui(ui, "calibration-ratio-rows", &header, &rows);
}

fn system_table_ui(ui: &mut egui::Ui, r: &CalibrationReport) {
    egui::Grid::new("calibration-systems")
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            for h in [
                "system",
                "runs",
                "MAPE %",
                "LOO MAPE %",
                "USL MAPE %",
                "USL LOO %",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for s in &r.systems {
                ui.label(&s.system_id);
                ui.label(s.runs.to_string());
                for v in [
                    s.mape_in_sample,
                    s.mape_loo,
                    s.usl_mape_in_sample,
                    s.usl_mape_loo,
                ] {
                    ui.label(opt(v, |v| format!("{v:.1}")));
                }
                ui.end_row();
            }
        });
}

fn messages_ui(ui: &mut egui::Ui, out: &FitOutput) {
    let r = &out.report;
    for w in out.load_warnings.iter().chain(&r.warnings) {
        ui.colored_label(plot::WARN, format!("warning: {w}"));
    }
    if let Some(u) = &r.usl {
        let unfitted: Vec<_> = u.series.iter().filter(|s| !s.note.is_empty()).collect();
        if !unfitted.is_empty() {
            ui.collapsing(
                format!("{} USL series not fitted in full", unfitted.len()),
                |ui| {
                    for s in unfitted {
                        ui.label(format!("{}: {}", s.label(), s.note));
                    }
                },
            );
        }
    }
    if !r.not_modelled.is_empty() {
        ui.collapsing(
            format!("{} run(s) not modelled", r.not_modelled.len()),
            |ui| {
                for n in &r.not_modelled {
                    ui.label(format!("{} ({}): {}", n.run_id, n.system_id, n.reason));
                }
            },
        );
    }
}

fn run_table_ui(ui: &mut egui::Ui, r: &CalibrationReport) {
    egui::Grid::new("calibration-runs")
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            for h in [
                "run",
                "metric",
                "measured",
                "predicted",
                "error %",
                "LOO error %",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for c in &r.runs {
                ui.label(&c.run_id);
                ui.label(metric_name(c.metric));
                ui.label(eng(c.measured, metric_quantity(c.metric)));
                ui.label(eng(c.predicted, metric_quantity(c.metric)));
                let e = format!("{:+.1}", c.error_pct);
                if c.error_pct.abs() > BAND_REL * 100.0 {
                    ui.colored_label(plot::WARN, e);
                } else {
                    ui.label(e);
                }
                ui.label(opt(c.error_pct_loo, |v| format!("{v:+.1}")));
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    fn seed_000() -> FitRequest {
        FitRequest {
            data: vec![PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/calibration-data/seed-000-ampere-altra-max.csv"
            ))],
            base_model: None,
            options: CalibrateOptions {
                leave_one_out: false,
                ..CalibrateOptions::default()
            },
        }
    }

    /// The page's fit is the CLI's fit: seed 000 (two absolute runs: 230k write IOPS at
    /// 3.5 ms, 1.1M read IOPS at 2.1 ms, calibration-data/seed-000-ampere-altra-max.csv)
    /// gives the same report as calling the library directly, from the same start (one
    /// system's runs: the shipped default, as `cephplan calibrate` without --start).
    #[test]
    fn fit_matches_the_library_call_the_cli_makes() {
        let out = fit(&seed_000(), &NoProgress).unwrap();
        let (runs, _) = load_runs(&seed_000().data[0]).unwrap();
        let (prepared, nm) = prepare_runs(&runs, &Catalogue::builtin()).unwrap();
        let prior = ModelParams::prior();
        let start = calibration_start(&prepared, &prior);
        assert_eq!(start, ModelParams::shipped_default());
        let (direct, _) = crate::calibrate::ceph::calibrate(
            &prepared,
            nm,
            &start,
            &prior,
            &data_files(&seed_000().data),
            &seed_000().options,
            &NoProgress,
        )
        .unwrap();
        assert_eq!(out.report.runs, direct.runs);
        assert_eq!(out.report.parameters, direct.parameters);
        // Two runs, each with IOPS and mean latency measured.
        assert_eq!(out.report.runs.len(), 4);
        assert!(out.report.mape_loo.is_none());
    }

    #[test]
    fn no_dataset_is_an_error_with_a_remedy() {
        let req = FitRequest {
            data: vec![],
            ..seed_000()
        };
        assert!(fit(&req, &NoProgress)
            .unwrap_err()
            .contains("calibration-data/"));
    }

    #[test]
    fn save_refuses_a_foreign_file_and_writes_a_loadable_model() {
        let out = fit(&seed_000(), &NoProgress).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let foreign = dir.path().join("mine.toml");
        std::fs::write(&foreign, "# hand-written\n").unwrap();
        let e = save_model(&out, &foreign).unwrap_err();
        assert!(e.contains("refusing to overwrite"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&foreign).unwrap(),
            "# hand-written\n"
        );
        let path = dir.path().join("fitted-s000.toml");
        save_model(&out, &path).unwrap();
        let back = ModelParams::load(&path).unwrap();
        assert_eq!(back.name, "fitted-s000");
        for p in &out.report.parameters {
            assert_eq!(back.get(&p.name), Some(p.value), "{}", p.name);
        }
        // Our own file may be replaced.
        save_model(&out, &path).unwrap();
    }

    #[test]
    fn exclude_list_splits_on_commas_and_spaces() {
        let page = CalibrationPage {
            exclude: "seed-003, s001-a  s002-b".into(),
            ..CalibrationPage::default()
        };
        assert_eq!(
            page.request().options.exclude,
            ["seed-003", "s001-a", "s002-b"]
        );
    }
}

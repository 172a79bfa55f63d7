//! Validation page: run fio against a real Ceph cluster for a sweep of points and compare
//! each measurement with the model's prediction as it arrives — a table and
//! predicted-against-measured IOPS and mean-latency charts that fill in point by point.
//! The cluster is given by its ceph.conf and pool, or started here as a throwaway local
//! lab ("Start local lab" / "Stop lab"; "lab EC" K+M adds an erasure-coded data pool, whose
//! scenario and name then fill the scenario and "data pool" fields; "lab OSD CPUs" pins the
//! lab's daemons to those CPUs and fills "fio CPUs" with the others, a separate client).
//! The scenario is the designer's ("Use the designer's scenario"; an edited text is written
//! next to the results), the model the app's. "Open results" shows an earlier sweep of the output
//! directory again, "Refit" fits the model to its points (`cephplan validate --refit-only`)
//! and "Use this refit" makes the refitted model the app's.
//!
//! It makes the same library calls as `cephplan validate` and `cephplan lab up|down`
//! (`validate::run_observed`, `lab::up`, `lab::down`) on worker threads; Cancel stops fio
//! and the library removes the images it created. Inputs are checked before a job starts
//! and problems are shown next to the field. Not here: running fio or Ceph (`fio`, `lab`,
//! `validate`).

use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver};

use serde::{Deserialize, Serialize};

use crate::fio::{check_fio, FioTarget, ProcessExecutor, RwPattern};
use crate::gui::app::{ActiveModel, Command, ModelChoice};
use crate::gui::job::{Job, JobOutcome};
use crate::gui::pages::designer::DesignerPage;
use crate::gui::plot::{self, Series};
use crate::lab::{self, LabReport, LabSpec};
use crate::predict::PredictOptions;
use crate::progress::Progress;
use crate::spec::Catalogue;
use crate::validate::{
    self, ModelPredictor, NoPredictor, PointResult, PointSetting, Predictor, RefitReport,
    RefitSpec, ValidateSpec, ValidationReport, Vary,
};

/// Port of the local lab's monitor (the CLI's `lab up` default).
pub const LAB_PORT: u16 = 6789;

/// A validation run ready to start: every input parsed and checked.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub spec: ValidateSpec,
    /// The app's model (what the predictions use).
    pub model: ActiveModel,
    pub predict: bool,
}

/// Inputs that failed their check, by field (shown next to the field).
pub type FieldErrors = std::collections::BTreeMap<&'static str, String>;

pub type RunResult = Result<ValidationReport, String>;

/// Runs a validation sweep like `cephplan validate`, handing every point to `on_point`.
pub fn run(
    req: &RunRequest,
    progress: &dyn Progress,
    on_point: &mut dyn FnMut(&PointResult),
) -> RunResult {
    let spec = &req.spec;
    check_fio(std::path::Path::new("fio")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&spec.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", spec.out_dir.display()))?;
    let predictor: Box<dyn Predictor> = if req.predict {
        let scenario =
            crate::spec::load_scenario(&spec.scenario, &Catalogue::builtin()).map_err(|e| {
                format!("{e}\n(the scenario is needed for predictions; or untick \"predict\")")
            })?;
        Box::new(ModelPredictor {
            scenario,
            params: (*req.model.params).clone(),
            options: PredictOptions::default(),
        })
    } else {
        Box::new(NoPredictor)
    };
    let exec = ProcessExecutor::new(&spec.ceph_conf, FioTarget::Local, &spec.out_dir);
    validate::run_observed(spec, &exec, predictor.as_ref(), progress, on_point)
        .map_err(|e| e.to_string())
}

/// The newest validation report (`validation-*.json`) in `dir`, an earlier sweep's.
pub fn open_results(dir: &std::path::Path) -> Result<ValidationReport, String> {
    let mut reports: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| {
            format!(
                "cannot read {}: {e}; give the output directory of a sweep",
                dir.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy())
                .is_some_and(|n| n.starts_with("validation-") && n.ends_with(".json"))
        })
        .collect();
    reports.sort();
    let newest = reports.pop().ok_or_else(|| {
        format!(
            "{} holds no validation-*.json: run a sweep into it first, or give the directory \
             a sweep wrote",
            dir.display()
        )
    })?;
    let text = std::fs::read_to_string(&newest)
        .map_err(|e| format!("cannot read {}: {e}", newest.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: not a validation report ({e}); it must be a file `cephplan validate` wrote",
            newest.display()
        )
    })
}

/// What a refit left: its report and where the refitted model was written.
#[derive(Debug, Clone)]
pub struct RefitOutcome {
    pub report: RefitReport,
    pub model_path: PathBuf,
}

/// `cephplan validate --out DIR --refit-only [--model M]`: fits `base` to every
/// validation dataset in `dir` (the base is also the prior) and writes the refitted model
/// to `DIR/refitted-model.toml` (never over a file cephplan did not write).
pub fn refit_results(
    dir: &std::path::Path,
    base: &crate::model::ModelParams,
    progress: &dyn Progress,
) -> Result<RefitOutcome, String> {
    let datasets = validate::validation_datasets(dir).map_err(|e| e.to_string())?;
    let spec = RefitSpec {
        validation_datasets: datasets,
        extra_datasets: vec![],
        calibrate: validate::refit_options(),
    };
    let out = validate::refit(&spec, base, base, &Catalogue::builtin(), progress)
        .map_err(|e| e.to_string())?;
    let model_path = dir.join("refitted-model.toml");
    crate::io::write_atomic_owned(&model_path, out.model.to_toml().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(RefitOutcome {
        report: out.report,
        model_path,
    })
}

enum LabOutcome {
    Up(Box<LabReport>),
    Down(String),
}

#[derive(Default)]
struct Runtime {
    run: Option<Job<RunResult>>,
    points_rx: Option<Receiver<PointResult>>,
    points: Vec<PointResult>,
    report: Option<ValidationReport>,
    lab: Option<Job<Result<LabOutcome, String>>>,
    field_errors: FieldErrors,
    error: Option<String>,
    note: Option<String>,
    refit: Option<Job<Result<RefitOutcome, String>>>,
    refitted: Option<RefitOutcome>,
}

#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct ValidationPage {
    pub ceph_conf: String,
    pub pool: String,
    /// The images' data pool (`validate --data-pool`, an erasure-coded pool); empty: none.
    pub data_pool: String,
    pub scenario: String,
    pub vary: String,
    pub pattern: String,
    pub block_size: String,
    pub iodepth: u32,
    pub images: u32,
    pub runtime: String,
    pub out_dir: String,
    pub predict: bool,
    /// Read the OSDs' latency counters around each point (`validate --osd-counters`).
    pub osd_counters: bool,
    /// The CPUs fio runs on (`validate --fio-cpus`, a CPU list); empty: any.
    pub fio_cpus: String,
    /// Directory of the local lab.
    pub lab_dir: String,
    /// The local lab's erasure-coded data pool, `K+M` (`lab up --ec`); empty: none.
    pub lab_ec: String,
    /// The CPUs of the local lab's daemons (`lab up --osd-cpus`); empty: every CPU.
    pub lab_osd_cpus: String,
    #[serde(skip)]
    rt: Runtime,
}

impl Default for ValidationPage {
    fn default() -> Self {
        Self {
            ceph_conf: String::new(),
            pool: lab::LAB_POOL.into(),
            data_pool: String::new(),
            scenario: String::new(),
            vary: "iodepth=1,4,16".into(),
            pattern: "randwrite".into(),
            block_size: "4k".into(),
            iodepth: 16,
            images: 1,
            runtime: "30s".into(),
            out_dir: "validation".into(),
            predict: true,
            osd_counters: false,
            fio_cpus: String::new(),
            lab_dir: "cephplan-lab".into(),
            lab_ec: String::new(),
            lab_osd_cpus: String::new(),
            rt: Runtime::default(),
        }
    }
}

impl ValidationPage {
    /// Checks the inputs; the request, or the problems by field.
    pub fn request(&self, model: &ActiveModel) -> Result<RunRequest, FieldErrors> {
        let mut errs = FieldErrors::new();
        let conf = PathBuf::from(self.ceph_conf.trim());
        if self.ceph_conf.trim().is_empty() {
            errs.insert(
                "ceph.conf",
                "give the cluster's ceph.conf, or press \"Start local lab\"".into(),
            );
        } else if !conf.is_file() {
            errs.insert(
                "ceph.conf",
                format!(
                    "{} does not exist; check the path, or press \"Start local lab\"",
                    conf.display()
                ),
            );
        }
        if self.pool.trim().is_empty() {
            errs.insert("pool", "give the RBD pool to test (e.g. rbd)".into());
        }
        let scenario = PathBuf::from(self.scenario.trim());
        if self.scenario.trim().is_empty() || !scenario.is_file() {
            errs.insert(
                "scenario",
                "give the scenario file describing this cluster (lab up writes one)".into(),
            );
        }
        let vary = if self.vary.trim().is_empty() {
            None
        } else {
            match Vary::parse(self.vary.trim()) {
                Ok(v) => Some(v),
                Err(e) => {
                    errs.insert("vary", e.to_string());
                    None
                }
            }
        };
        let pattern = RwPattern::parse(self.pattern.trim());
        if pattern.is_none() {
            errs.insert(
                "pattern",
                "use randread, randwrite, randrw, read or write".into(),
            );
        }
        let bs = crate::units::parse_bytes(self.block_size.trim());
        if let Err(e) = &bs {
            errs.insert("block size", format!("{e} (e.g. 4k, 64k)"));
        }
        let runtime = crate::units::parse_duration_secs(self.runtime.trim())
            .map(|s| s.round() as u64)
            .map_err(|e| e.to_string())
            .and_then(|s| {
                if s == 0 {
                    Err("must be at least 1s".into())
                } else {
                    Ok(s)
                }
            });
        if let Err(e) = &runtime {
            errs.insert("runtime", format!("{e} (e.g. 30s, 2m)"));
        }
        if self.out_dir.trim().is_empty() {
            errs.insert("output dir", "give a directory for the results".into());
        }
        let fio_cpus = Some(self.fio_cpus.trim())
            .filter(|c| !c.is_empty())
            .map(|c| {
                c.parse::<crate::fio::CpuSet>().and_then(|set| {
                    set.check_within(&crate::fio::CpuSet::usable())
                        .map(|()| set)
                })
            })
            .transpose();
        if let Err(e) = &fio_cpus {
            errs.insert("fio CPUs", e.clone());
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let pattern = pattern.expect("checked");
        let spec = ValidateSpec {
            system_id: scenario
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "validation".into()),
            scenario,
            ceph_conf: conf,
            pool: self.pool.trim().into(),
            data_pool: Some(self.data_pool.trim())
                .filter(|d| !d.is_empty())
                .map(str::to_string),
            clientname: "admin".into(),
            clients: vec![],
            base: PointSetting {
                pattern,
                block_size_bytes: bs.expect("checked"),
                iodepth: self.iodepth.max(1),
                images: self.images.max(1),
                read_percent: (pattern == RwPattern::Randrw).then_some(50),
            },
            vary,
            runtime_secs: runtime.expect("checked"),
            ramp_time_secs: 0,
            image_size_bytes: 1 << 30,
            out_dir: PathBuf::from(self.out_dir.trim()),
            existing_image: None,
            i_own_this_image: None,
            run_id: validate::new_run_id(),
            osd_counters: self.osd_counters,
            fio_cpus: fio_cpus.expect("checked"),
        };
        Ok(RunRequest {
            spec,
            model: model.clone(),
            predict: self.predict,
        })
    }

    /// Checks the inputs and starts the sweep; on bad inputs only flags the fields.
    pub fn start_run(&mut self, ctx: &egui::Context, model: &ActiveModel) {
        if self.is_busy() {
            return;
        }
        let req = match self.request(model) {
            Ok(r) => r,
            Err(errs) => {
                self.rt.field_errors = errs;
                return;
            }
        };
        self.rt.field_errors.clear();
        self.rt.error = None;
        self.rt.note = None;
        self.rt.points.clear();
        self.rt.report = None;
        let (tx, rx) = channel();
        self.rt.points_rx = Some(rx);
        self.rt.run = Some(Job::spawn("validating", ctx, move |p| {
            run(&req, p, &mut |pt| {
                // The page may have dropped the receiver; the files hold the point anyway.
                let _ = tx.send(pt.clone());
            })
        }));
    }

    fn start_lab(&mut self, ctx: &egui::Context, up: bool) {
        if self.is_busy() {
            return;
        }
        let dir = PathBuf::from(self.lab_dir.trim());
        self.rt.error = None;
        self.rt.note = None;
        self.rt.field_errors.remove("lab EC");
        self.rt.field_errors.remove("lab OSD CPUs");
        let mut spec = LabSpec::new(&dir, LAB_PORT);
        if up && !self.lab_ec.trim().is_empty() {
            match self.lab_ec.parse::<lab::LabErasure>() {
                Ok(ec) => spec.erasure = Some(ec),
                Err(e) => {
                    self.rt.field_errors.insert("lab EC", e);
                    return;
                }
            }
        }
        if up && !self.lab_osd_cpus.trim().is_empty() {
            match self.lab_osd_cpus.trim().parse::<crate::fio::CpuSet>() {
                Ok(cpus) => spec.osd_cpus = Some(cpus),
                Err(e) => {
                    self.rt.field_errors.insert("lab OSD CPUs", e);
                    return;
                }
            }
        }
        let name = if up { "starting lab" } else { "stopping lab" };
        self.rt.lab = Some(Job::spawn(name, ctx, move |p| {
            if up {
                lab::up(&spec, p)
                    .map(|r| LabOutcome::Up(Box::new(r)))
                    .map_err(|e| e.to_string())
            } else {
                lab::down(&dir)
                    .map(|r| {
                        LabOutcome::Down(format!(
                            "lab down: {} daemons stopped ({} needed KILL), {} already gone; removed {}",
                            r.stopped.len(),
                            r.killed.len(),
                            r.not_running.len(),
                            r.dir.display()
                        ))
                    })
                    .map_err(|e| e.to_string())
            }
        }));
    }

    pub fn is_busy(&self) -> bool {
        self.rt.run.is_some() || self.rt.lab.is_some() || self.rt.refit.is_some()
    }

    /// The last refit of the output directory's results.
    pub fn refitted(&self) -> Option<&RefitOutcome> {
        self.rt.refitted.as_ref()
    }

    /// Fills the scenario field from the designer: its file when the text is as saved,
    /// else the text written to `<output dir>/designer-scenario.toml`.
    pub fn take_designer_scenario(&mut self, designer: &DesignerPage) -> Result<PathBuf, String> {
        let path = match (&designer.path, designer.is_modified()) {
            (Some(p), false) => p.clone(),
            _ => {
                if designer.text.trim().is_empty() {
                    return Err(
                        "the designer holds no scenario: open or write one there first".into(),
                    );
                }
                let dir = PathBuf::from(self.out_dir.trim());
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                let p = dir.join("designer-scenario.toml");
                let text = super::designer::with_marker(&designer.text);
                crate::io::write_atomic_owned(&p, text.as_bytes()).map_err(|e| e.to_string())?;
                p
            }
        };
        self.scenario = path.display().to_string();
        self.rt.field_errors.remove("scenario");
        Ok(path)
    }

    /// Shows the newest sweep saved in the output directory.
    pub fn open_earlier(&mut self) {
        match open_results(std::path::Path::new(self.out_dir.trim())) {
            Ok(r) => {
                self.rt.error = None;
                self.rt.note = Some(format!(
                    "opened {} ({} points, scenario {})",
                    r.report_json,
                    r.points.len(),
                    r.scenario.display()
                ));
                self.rt.points = r.points.clone();
                self.rt.report = Some(r);
            }
            Err(e) => self.rt.error = Some(e),
        }
    }

    fn start_refit(&mut self, ctx: &egui::Context, model: &ActiveModel) {
        if self.is_busy() {
            return;
        }
        let dir = PathBuf::from(self.out_dir.trim());
        let base = model.params.clone();
        self.rt.error = None;
        self.rt.refitted = None;
        self.rt.refit = Some(Job::spawn("refitting", ctx, move |p| {
            refit_results(&dir, &base, p)
        }));
    }
    /// Points received so far (of the running or the last sweep).
    pub fn points(&self) -> &[PointResult] {
        &self.rt.points
    }
    pub fn report(&self) -> Option<&ValidationReport> {
        self.rt.report.as_ref()
    }
    pub fn error(&self) -> Option<&str> {
        self.rt.error.as_deref()
    }
    pub fn field_errors(&self) -> &FieldErrors {
        &self.rt.field_errors
    }

    fn poll(&mut self) {
        if let Some(rx) = &self.rt.points_rx {
            self.rt.points.extend(rx.try_iter());
        }
        if let Some(job) = &mut self.rt.run {
            if let Some(out) = job.poll() {
                self.rt.run = None;
                if let Some(rx) = self.rt.points_rx.take() {
                    self.rt.points.extend(rx.try_iter());
                }
                match out {
                    JobOutcome::Done(Ok(r)) => {
                        self.rt.note = Some(format!(
                            "saved in {}: {}, {}, {}, raw/",
                            self.out_dir.trim(),
                            r.dataset_csv,
                            r.comparison_csv,
                            r.report_json
                        ));
                        self.rt.report = Some(r);
                    }
                    JobOutcome::Done(Err(e)) => self.rt.error = Some(e),
                    JobOutcome::Panicked(m) => {
                        self.rt.error = Some(format!("validation failed: {m}"))
                    }
                }
            }
        }
        if let Some(job) = &mut self.rt.refit {
            if let Some(out) = job.poll() {
                self.rt.refit = None;
                match out {
                    JobOutcome::Done(Ok(r)) => self.rt.refitted = Some(r),
                    JobOutcome::Done(Err(e)) => self.rt.error = Some(e),
                    JobOutcome::Panicked(m) => self.rt.error = Some(format!("refit failed: {m}")),
                }
            }
        }
        if let Some(job) = &mut self.rt.lab {
            if let Some(out) = job.poll() {
                self.rt.lab = None;
                match out {
                    JobOutcome::Done(Ok(LabOutcome::Up(r))) => {
                        self.ceph_conf = r.ceph_conf.display().to_string();
                        self.scenario = r.scenario.display().to_string();
                        self.pool = r.pool.clone();
                        self.data_pool = r.data_pool.clone().unwrap_or_default();
                        self.fio_cpus = r
                            .fio_cpus
                            .as_ref()
                            .map(|c| c.to_string())
                            .unwrap_or_default();
                        // With an erasure-coded data pool, its scenario: the run is meant
                        // for it (scenario.toml still describes the replicated pool).
                        if let Some(ec) = &r.scenario_ec {
                            self.scenario = ec.display().to_string();
                        }
                        self.rt.field_errors.clear();
                        let mut filled = if r.data_pool.is_some() {
                            "ceph.conf, pool, data pool and the EC pool's scenario filled in"
                        } else {
                            "ceph.conf, pool and scenario filled in"
                        }
                        .to_string();
                        if let Some(c) = &r.fio_cpus {
                            filled.push_str(&format!("; fio CPUs {c} (the daemons' are pinned)"));
                        }
                        self.rt.note = Some(format!(
                            "lab up in {:.0} s: Ceph {}, {} daemons; {filled}",
                            r.elapsed_secs,
                            r.ceph_version,
                            r.daemons.len()
                        ));
                    }
                    JobOutcome::Done(Ok(LabOutcome::Down(msg))) => self.rt.note = Some(msg),
                    JobOutcome::Done(Err(e)) => self.rt.error = Some(e),
                    JobOutcome::Panicked(m) => self.rt.error = Some(format!("lab failed: {m}")),
                }
            }
        }
    }

    /// A labelled single-line field with its problem (if any) beside it.
    fn field_ui(
        ui: &mut egui::Ui,
        errors: &FieldErrors,
        key: &'static str,
        value: &mut String,
        width: f32,
        hint: &str,
    ) {
        ui.horizontal(|ui| {
            let l = ui.label(key);
            ui.add(
                egui::TextEdit::singleline(value)
                    .desired_width(width)
                    .hint_text(hint),
            )
            .labelled_by(l.id);
            if let Some(e) = errors.get(key) {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
        });
    }

    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        designer: &DesignerPage,
        model: &ActiveModel,
        cmds: &mut Vec<Command>,
    ) {
        self.poll();
        ui.heading("Validation");
        ui.label(
            "Runs fio (rbd engine) against a real cluster and compares every point with the \
             model. Results are saved after each point.",
        );
        let errs = self.rt.field_errors.clone();
        let busy = self.is_busy();
        ui.horizontal(|ui| {
            let l = ui.label("lab dir");
            ui.add(egui::TextEdit::singleline(&mut self.lab_dir).desired_width(200.0))
                .labelled_by(l.id);
            let l = ui.label("lab EC");
            ui.add(
                egui::TextEdit::singleline(&mut self.lab_ec)
                    .desired_width(50.0)
                    .hint_text("K+M"),
            )
            .labelled_by(l.id)
            .on_hover_text(
                "also an erasure-coded data pool rbd-ec of K data and M coding chunks, one per \
                 OSD (e.g. 2+1; lab up --ec)",
            );
            if let Some(e) = errs.get("lab EC") {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            let l = ui.label("lab OSD CPUs");
            ui.add(
                egui::TextEdit::singleline(&mut self.lab_osd_cpus)
                    .desired_width(50.0)
                    .hint_text("all"),
            )
            .labelled_by(l.id)
            .on_hover_text(
                "run the lab's daemons on these CPUs only (e.g. 0; lab up --osd-cpus) and fio \
                 on the others: one machine as an OSD node and a separate client",
            );
            if let Some(e) = errs.get("lab OSD CPUs") {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            if ui
                .add_enabled(!busy, egui::Button::new("Start local lab"))
                .clicked()
            {
                self.start_lab(ui.ctx(), true);
            }
            if ui
                .add_enabled(!busy, egui::Button::new("Stop lab"))
                .clicked()
            {
                self.start_lab(ui.ctx(), false);
            }
        });
        Self::field_ui(
            ui,
            &errs,
            "ceph.conf",
            &mut self.ceph_conf,
            360.0,
            "required: e.g. /etc/ceph/ceph.conf, or Start local lab",
        );
        ui.horizontal(|ui| {
            Self::field_ui(ui, &errs, "pool", &mut self.pool, 160.0, "rbd");
            Self::field_ui(
                ui,
                &errs,
                "data pool",
                &mut self.data_pool,
                160.0,
                "none (an EC pool, e.g. rbd-ec)",
            );
            Self::field_ui(ui, &errs, "fio CPUs", &mut self.fio_cpus, 60.0, "any");
        });
        ui.horizontal(|ui| {
            Self::field_ui(
                ui,
                &errs,
                "scenario",
                &mut self.scenario,
                360.0,
                "models/examples/….toml",
            );
            if ui
                .add_enabled(!busy, egui::Button::new("Use the designer's scenario"))
                .clicked()
            {
                match self.take_designer_scenario(designer) {
                    Ok(p) => {
                        self.rt.note =
                            Some(format!("scenario: {} (from the designer)", p.display()))
                    }
                    Err(e) => self.rt.error = Some(e),
                }
            }
        });
        ui.horizontal(|ui| {
            let l = ui.label("pattern");
            egui::ComboBox::from_id_salt("validation-pattern")
                .selected_text(self.pattern.clone())
                .show_ui(ui, |ui| {
                    for p in ["randread", "randwrite", "randrw", "read", "write"] {
                        ui.selectable_value(&mut self.pattern, p.to_owned(), p);
                    }
                })
                .response
                .labelled_by(l.id);
            let l = ui.label("iodepth");
            ui.add(egui::DragValue::new(&mut self.iodepth).range(1..=4096))
                .labelled_by(l.id);
            let l = ui.label("images");
            ui.add(egui::DragValue::new(&mut self.images).range(1..=256))
                .labelled_by(l.id);
        });
        for (key, width, hint) in [
            ("block size", 80.0, "4k"),
            ("vary", 200.0, "iodepth=1,4,16 | images=1,2 | bs=4k,64k"),
            ("runtime", 80.0, "30s"),
            ("output dir", 240.0, "validation"),
        ] {
            let v = match key {
                "block size" => &mut self.block_size,
                "vary" => &mut self.vary,
                "runtime" => &mut self.runtime,
                _ => &mut self.out_dir,
            };
            Self::field_ui(ui, &errs, key, v, width, hint);
        }
        ui.horizontal_wrapped(|ui| {
            ui.checkbox(&mut self.predict, "predict");
            ui.checkbox(&mut self.osd_counters, "OSD counters")
                .on_hover_text(
                    "read every OSD's latency counters (ceph tell osd.N perf dump) before and \
                     after each point: where the measured time went inside the OSDs",
                );
            ui.label(format!(
                "with the {} (the top bar's selector)",
                model.label()
            ));
            if ui.add_enabled(!busy, egui::Button::new("Run")).clicked() {
                self.start_run(ui.ctx(), model);
            }
            ui.separator();
            if ui
                .add_enabled(!busy, egui::Button::new("Open results"))
                .on_hover_text("show the newest sweep saved in the output directory")
                .clicked()
            {
                self.open_earlier();
            }
            if ui
                .add_enabled(!busy, egui::Button::new("Refit"))
                .on_hover_text(
                    "fit the model to the sweeps in the output directory \
                     (cephplan validate --refit-only)",
                )
                .clicked()
            {
                self.start_refit(ui.ctx(), model);
            }
        });
        if let Some(job) = &self.rt.refit {
            job.progress_ui(ui);
        }
        if let Some(r) = &self.rt.refitted {
            let pct = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.1} %"));
            ui.horizontal_wrapped(|ui| {
                ui.strong(format!(
                    "refit on {} runs: IOPS error {} before, {} after; mean latency error {} before, {} after; wrote {}",
                    r.report.fitted_runs,
                    pct(r.report.iops_mape_before_percent),
                    pct(r.report.iops_mape_after_percent),
                    pct(r.report.latency_mean_mape_before_percent),
                    pct(r.report.latency_mean_mape_after_percent),
                    r.model_path.display()
                ));
                if ui.button("Use this refit").clicked() {
                    cmds.push(Command::UseModel(ModelChoice::Refit(r.model_path.clone())));
                }
            });
        }
        if let Some(job) = &self.rt.run {
            job.progress_ui(ui);
        }
        if let Some(job) = &self.rt.lab {
            job.progress_ui(ui);
        }
        if let Some(e) = &self.rt.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        if let Some(n) = &self.rt.note {
            ui.label(n);
        }
        if self.rt.points.is_empty() {
            return;
        }
        points_table_ui(ui, &self.rt.points);
        if let Some(r) = &self.rt.report {
            for line in validate::pool_note_lines(r) {
                ui.add(egui::Label::new(line).wrap());
            }
        }
        let iops: Vec<[f64; 2]> = self
            .rt
            .points
            .iter()
            .filter_map(|p| Some([p.iops.measured?, p.iops.predicted?]))
            .collect();
        let lat: Vec<[f64; 2]> = self
            .rt
            .points
            .iter()
            .filter_map(|p| {
                Some([
                    p.latency_mean_secs.measured? * 1e3,
                    p.latency_mean_secs.predicted? * 1e3,
                ])
            })
            .collect();
        let h = plot::plot_height(ui);
        ui.columns(2, |cols| {
            plot::measured_vs_predicted_ui(
                &mut cols[0],
                "validation-iops",
                "IOPS",
                &[Series::new("IOPS", iops)],
                h,
            );
            plot::measured_vs_predicted_ui(
                &mut cols[1],
                "validation-latency",
                "ms",
                &[Series::new("mean latency", lat)],
                h,
            );
        });
    }
}

fn points_table_ui(ui: &mut egui::Ui, points: &[PointResult]) {
    let f = |v: Option<f64>, scale: f64, prec: usize| {
        v.map(|x| format!("{:.prec$}", x * scale))
            .unwrap_or_else(|| "–".into())
    };
    egui::Grid::new("validation-points")
        .striped(true)
        .num_columns(8)
        .show(ui, |ui| {
            for h in [
                "#",
                "point",
                "IOPS pred",
                "IOPS meas",
                "err %",
                "mean ms pred",
                "mean ms meas",
                "p99 ms meas",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for p in points {
                ui.label(p.index.to_string());
                ui.label(p.setting.label());
                ui.label(f(p.iops.predicted, 1.0, 0));
                ui.label(f(p.iops.measured, 1.0, 0));
                ui.label(f(p.iops.error_percent, 1.0, 1));
                ui.label(f(p.latency_mean_secs.predicted, 1e3, 2));
                ui.label(f(p.latency_mean_secs.measured, 1e3, 2));
                ui.label(f(p.latency_p99_secs.measured, 1e3, 2));
                ui.end_row();
            }
        });
    for line in validate::prediction_note_lines(points) {
        ui.label(line);
    }
    for line in validate::osd_counter_lines(points) {
        ui.add(egui::Label::new(line).wrap());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_inputs_are_flagged_by_field() {
        let page = ValidationPage {
            vary: "qd=1".into(),
            runtime: "0s".into(),
            ..ValidationPage::default()
        };
        let errs = page.request(&ActiveModel::default()).unwrap_err();
        for k in ["ceph.conf", "scenario", "vary", "runtime"] {
            assert!(errs.contains_key(k), "{k}: {errs:?}");
        }
        assert!(!errs.contains_key("pool"));
    }

    #[test]
    fn a_complete_form_becomes_the_cli_spec() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("ceph.conf");
        std::fs::write(&conf, "[global]\n").unwrap();
        let page = ValidationPage {
            ceph_conf: conf.display().to_string(),
            scenario: concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/models/examples/seed-000-ampere-altra-max.toml"
            )
            .into(),
            ..ValidationPage::default()
        };
        let req = page.request(&ActiveModel::default()).unwrap();
        let depths: Vec<u32> = req.spec.points().iter().map(|p| p.iodepth).collect();
        assert_eq!(depths, [1, 4, 16]);
        assert_eq!(req.spec.runtime_secs, 30);
        assert_eq!(req.spec.base.block_size_bytes, 4096);
        assert_eq!(req.spec.system_id, "seed-000-ampere-altra-max");
    }
}

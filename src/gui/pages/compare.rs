//! Compare page: two to four variants side by side. Every variant (a network from the
//! Network page, or a Ceph scenario's network from the Prediction page) gets a row of
//! throughput, IOPS per OSD node and per core, response time and bottleneck at its
//! population, and its latency-vs-throughput and throughput-vs-population curves overlaid.
//! The Ceph scenarios also get the comparison report's table (`report::compare` with the
//! app's model and the latency target set here: capacity, OSDs, IOPS, GB/s, mean and, when
//! asked, simulated p99 latency, the knee, IOPS per node, core and CPU watt) and "Export
//! report" writes the same report `cephplan compare --report` writes. Variants are named
//! (a taken name is numbered) and renamed in the table. Everything is solved on worker
//! threads.
//!
//! Not here: the solving and the report (`network::sweep` → `solve`, `report`).

use serde::{Deserialize, Serialize};

use super::network::{sweep, NetworkInputs, NetworkSweep};
use crate::gui::app::{ActiveModel, Command, ModelChoice};
use crate::gui::job::{progress_slot_ui, Job, JobOutcome, Recompute};
use crate::gui::plot::{self, Series};
use crate::progress::Progress;
use crate::report::{compare, CompareOptions, ComparisonReport, VariantInput};
use crate::spec::{parse_scenario, Catalogue};

/// Most variants shown at once (more would make the overlaid plots unreadable).
pub const MAX_VARIANTS: usize = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Variant {
    pub name: String,
    /// The network as the Network page edits it (ignored when `network` is set).
    pub inputs: NetworkInputs,
    /// A built network solved as it is (Ceph scenarios from the Prediction page, whose
    /// forks the Network page's table cannot show).
    pub network: Option<crate::qn::Network>,
    /// OSD nodes of the cluster the network stands for (Ceph scenarios added from the
    /// Prediction page); `None` for hand-built networks.
    pub nodes: Option<u32>,
    /// CPU cores of those OSD nodes in total (nodes × sockets × cores per socket).
    pub cores: Option<u32>,
    /// The scenario text of a Ceph variant (what the comparison report predicts again).
    pub scenario_text: Option<String>,
    /// Where that text came from (a file, or the scenario editor).
    pub origin: String,
    /// The model the variant's network was built with.
    pub model: Option<crate::gui::app::ModelChoice>,
}

impl Variant {
    /// The network solved for this variant.
    pub fn at_population(&self) -> Result<crate::qn::Network, String> {
        match &self.network {
            Some(n) => Ok(n.clone()),
            None => self.inputs.at_population(),
        }
    }

    /// `(stations, population)` for the table.
    pub fn size(&self) -> (usize, u32) {
        match &self.network {
            Some(n) => (
                n.stations.len(),
                n.classes.iter().map(|c| c.population).sum(),
            ),
            None => (self.inputs.stations.len(), self.inputs.population),
        }
    }

    /// The variant "Add to Compare" files for a Ceph scenario text: validated (`origin`
    /// names it in errors) and mapped onto its network with `model`, without solving.
    pub fn of_scenario(text: &str, origin: &str, model: &ActiveModel) -> Result<Self, String> {
        let s = parse_scenario(text, origin, &Catalogue::builtin()).map_err(|e| e.to_string())?;
        let cn = crate::qn::ceph::build(&s, &model.params).map_err(|e| e.to_string())?;
        Ok(Variant {
            name: s.name.clone(),
            network: Some(cn.network),
            nodes: Some(s.nodes),
            cores: Some(s.nodes * s.sockets * s.node_cpu.cores),
            scenario_text: Some(text.to_owned()),
            origin: origin.to_owned(),
            model: Some(model.choice.clone()),
            ..Variant::default()
        })
    }

    /// `(IOPS per OSD node, IOPS per OSD-node core)` at throughput `x`, where known.
    pub fn per_node_and_core(&self, x: f64) -> (Option<f64>, Option<f64>) {
        let per = |n: Option<u32>| n.filter(|&n| n > 0).map(|n| x / f64::from(n));
        (per(self.nodes), per(self.cores))
    }
}

type CompareResult = Result<Vec<NetworkSweep>, String>;

/// What the report was computed for: the Ceph variants (name, text, origin), the model,
/// the latency target and whether p99 is simulated.
#[derive(Debug, Clone, PartialEq)]
struct ReportKey {
    variants: Vec<(String, String, String)>,
    model: ModelChoice,
    target_bits: u64,
    tails: bool,
}

#[derive(Default)]
struct Runtime {
    recompute: Recompute<CompareResult>,
    results: Vec<NetworkSweep>,
    error: Option<String>,
    started: bool,
    report_job: Recompute<Result<ComparisonReport, String>>,
    report_key: Option<ReportKey>,
    report: Option<(ReportKey, ComparisonReport)>,
    report_error: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct ComparePage {
    pub variants: Vec<Variant>,
    pub latency_target_ms: f64,
    /// Simulate each Ceph variant's p99 for the report (seconds per variant).
    pub simulate_p99: bool,
    /// Where "Export report" writes (.html or .md).
    pub report_path: String,
    #[serde(skip)]
    rt: Runtime,
}

impl Default for ComparePage {
    fn default() -> Self {
        Self {
            variants: Vec::new(),
            latency_target_ms: 4.0,
            simulate_p99: false,
            report_path: "comparison.html".into(),
            rt: Runtime::default(),
        }
    }
}

/// The comparison report of the Ceph variants: each text validated again and predicted
/// with `model` (`cephplan compare` on the same files and model gives the same numbers).
pub fn report_of(
    variants: &[(String, String, String)],
    model: &ActiveModel,
    latency_target_secs: f64,
    tails: bool,
    progress: &dyn Progress,
) -> Result<ComparisonReport, String> {
    let cat = Catalogue::builtin();
    let inputs = variants
        .iter()
        .map(|(name, text, origin)| {
            Ok(VariantInput {
                name: name.clone(),
                origin: origin.clone(),
                text: text.clone(),
                scenario: parse_scenario(text, origin, &cat).map_err(|e| format!("{name}: {e}"))?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let opts = CompareOptions {
        latency_target_secs,
        tails: tails.then(crate::predict::TailOptions::default),
        model_label: model.label(),
    };
    compare(&inputs, &model.params, &opts, progress).map_err(|e| e.to_string())
}

/// Forwards only cancellation, so that per-variant sweeps do not reset the overall bar.
struct CancelOnly<'a>(&'a dyn Progress);

impl Progress for CancelOnly<'_> {
    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// Solves every variant's curve, one after the other.
pub fn solve_all(variants: Vec<Variant>, progress: &dyn Progress) -> CompareResult {
    progress.start(variants.len() as u64, "variants");
    let mut out = Vec::with_capacity(variants.len());
    for v in variants {
        progress.message(&format!("solving {}", v.name));
        let net = v.at_population().map_err(|e| format!("{}: {e}", v.name))?;
        out.push(sweep(net, &CancelOnly(progress))?);
        progress.advance(1);
    }
    progress.finish();
    Ok(out)
}

impl ComparePage {
    /// Adds a variant; a name already taken gets a number ("seed-000 (2)") so that no
    /// variant is replaced. Refuses a fifth. Returns the name the variant was filed under.
    pub fn add(&mut self, mut v: Variant) -> Result<String, String> {
        if self.variants.len() >= MAX_VARIANTS {
            return Err(format!(
                "Compare holds at most {MAX_VARIANTS} variants; remove one on the Compare \
                 page first"
            ));
        }
        v.name = self.free_name(v.name.trim());
        let name = v.name.clone();
        self.variants.push(v);
        self.rt.recompute.request_now();
        Ok(name)
    }

    /// `name`, or `name (2)`, `name (3)`, … whichever no variant has.
    fn free_name(&self, name: &str) -> String {
        let base = if name.is_empty() { "variant" } else { name };
        let taken = |n: &str| self.variants.iter().any(|v| v.name == n);
        if !taken(base) {
            return base.to_owned();
        }
        (2..)
            .map(|i| format!("{base} ({i})"))
            .find(|n| !taken(n))
            .expect("an unbounded range has a free name")
    }

    pub fn results(&self) -> &[NetworkSweep] {
        &self.rt.results
    }

    pub fn error(&self) -> Option<&str> {
        self.rt.error.as_deref()
    }

    pub fn is_busy(&self) -> bool {
        self.rt.recompute.is_busy() || self.rt.report_job.is_busy()
    }

    /// The comparison report of the current Ceph variants, model and target.
    pub fn report(&self) -> Option<&ComparisonReport> {
        match (&self.rt.report, &self.rt.report_key) {
            (Some((k, r)), Some(want)) if k == want => Some(r),
            _ => None,
        }
    }

    pub fn report_error(&self) -> Option<&str> {
        self.rt.report_error.as_deref()
    }

    fn report_key(&self, model: &ActiveModel) -> Option<ReportKey> {
        let variants: Vec<(String, String, String)> = self
            .variants
            .iter()
            .filter_map(|v| {
                v.scenario_text
                    .as_ref()
                    .map(|t| (v.name.clone(), t.clone(), v.origin.clone()))
            })
            .collect();
        (!variants.is_empty()).then(|| ReportKey {
            variants,
            model: model.choice.clone(),
            target_bits: self.latency_target_ms.to_bits(),
            tails: self.simulate_p99,
        })
    }

    /// Keeps the report in step with the Ceph variants, the model and the target.
    fn follow_report(&mut self, ctx: &egui::Context, now: f64, model: &ActiveModel) {
        let key = self.report_key(model);
        if key != self.rt.report_key {
            self.rt.report_key = key.clone();
            self.rt.report_error = None;
            if key.is_some() {
                self.rt.report_job.request(now);
            }
        }
        let Some(key) = key else { return };
        let m = model.clone();
        let k = key.clone();
        match self.rt.report_job.tick(ctx, now, move |ctx| {
            Job::spawn("comparison report", ctx, move |p| {
                report_of(
                    &k.variants,
                    &m,
                    f64::from_bits(k.target_bits) / 1e3,
                    k.tails,
                    p,
                )
            })
        }) {
            Some(JobOutcome::Done(Ok(r))) => {
                self.rt.report = Some((key, r));
                self.rt.report_error = None;
            }
            Some(JobOutcome::Done(Err(e))) => self.rt.report_error = Some(e),
            Some(JobOutcome::Panicked(m)) => {
                self.rt.report_error = Some(format!("the report failed: {m}"))
            }
            None => {}
        }
    }

    /// Writes the report to `report_path` (and its plots beside a .md), atomically and
    /// never over a file cephplan did not write.
    pub fn export_report(&self) -> Result<Vec<std::path::PathBuf>, String> {
        let r = self
            .report()
            .ok_or("the report is not computed yet: wait for it (it follows the variants)")?;
        let path = std::path::PathBuf::from(self.report_path.trim());
        crate::gui::parent_must_exist(&path)?;
        let files = crate::report::render::files(r, &path).map_err(|e| e.to_string())?;
        let mut written = Vec::new();
        for (p, bytes) in files {
            crate::io::write_atomic_owned(&p, &bytes).map_err(|e| e.to_string())?;
            written.push(p);
        }
        Ok(written)
    }

    /// The report's controls and its table (the rows `cephplan compare` prints).
    fn report_ui(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        ui.separator();
        ui.heading("Comparison report (Ceph scenarios)");
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("latency target (ms)");
            ui.add(
                egui::DragValue::new(&mut self.latency_target_ms)
                    .range(0.01..=1e4)
                    .speed(0.05),
            )
            .labelled_by(l.id);
            ui.checkbox(&mut self.simulate_p99, "simulate p99")
                .on_hover_text("simulate each scenario at its own load (seconds per variant)");
            let l = ui.label("report file");
            ui.add(
                egui::TextEdit::singleline(&mut self.report_path)
                    .desired_width(220.0)
                    .hint_text("comparison.html or .md"),
            )
            .labelled_by(l.id);
            let ready = self.report().is_some();
            if ui
                .add_enabled(ready, egui::Button::new("Export report"))
                .on_disabled_hover_text("the report is being computed")
                .clicked()
            {
                cmds.push(Command::Status(match self.export_report() {
                    Ok(files) => format!(
                        "wrote {}",
                        files
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    Err(e) => e,
                }));
            }
            if let Some(job) = self.rt.report_job.job() {
                job.progress_ui(ui);
            }
        });
        if let Some(e) = &self.rt.report_error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let Some(r) = self.report() else {
            if self.rt.report_error.is_none() {
                ui.label("computing the report…");
            }
            return;
        };
        ui.label(format!("model: {}", r.model_label));
        // Every variant's column gets an equal share of the width (wrapping labels
        // otherwise squeeze the first ones and leave the last wide).
        let share = (ui.available_width() - 160.0) / r.variants.len().max(1) as f32 - 16.0;
        egui::Grid::new("compare-report")
            .striped(true)
            .num_columns(r.variants.len() + 1)
            .min_col_width(share.clamp(80.0, 420.0).min(160.0))
            .show(ui, |ui| {
                ui.strong("");
                for v in &r.variants {
                    ui.strong(&v.name);
                }
                ui.end_row();
                for row in crate::report::render::table_rows(r) {
                    for (i, c) in row.iter().enumerate() {
                        if i == 0 {
                            ui.strong(c);
                        } else {
                            let w = share.clamp(80.0, 420.0);
                            ui.allocate_ui_with_layout(
                                egui::vec2(w, 0.0),
                                egui::Layout::top_down(egui::Align::Min),
                                |ui| {
                                    ui.set_width(w);
                                    ui.add(egui::Label::new(c).wrap());
                                },
                            );
                        }
                    }
                    ui.end_row();
                }
            });
        let hockey: Vec<Series> = r
            .variants
            .iter()
            .map(|v| {
                Series::new(
                    v.name.clone(),
                    v.curve
                        .iter()
                        .map(|p| [p.iops, p.latency_mean_secs * 1e3])
                        .collect(),
                )
            })
            .collect();
        ui.strong("mean latency against IOPS, each curve swept past its knee");
        plot::hockey_stick_ui(
            ui,
            "compare-report-hockey",
            "mean latency (ms)",
            &hockey,
            &[],
            &plot::HockeyMarks {
                latency_target_ms: Some(self.latency_target_ms),
                knee: None,
                view_top_ms: Some(4.0 * self.latency_target_ms),
            },
            plot::plot_height(ui),
        );
        for v in &r.variants {
            if !v.warnings.is_empty() {
                ui.collapsing(format!("{}: {} caveats", v.name, v.warnings.len()), |ui| {
                    for w in &v.warnings {
                        ui.add(egui::Label::new(format!("warning: {w}")).wrap());
                    }
                });
            }
        }
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, model: &ActiveModel, cmds: &mut Vec<Command>) {
        let now = ui.input(|i| i.time);
        if !self.rt.started {
            self.rt.started = true;
            self.rt.recompute.request_now();
        }
        let variants = self.variants.clone();
        match self.rt.recompute.tick(ui.ctx(), now, |ctx| {
            Job::spawn("comparing", ctx, move |p| solve_all(variants, p))
        }) {
            Some(JobOutcome::Done(Ok(r))) => {
                self.rt.results = r;
                self.rt.error = None;
            }
            Some(JobOutcome::Done(Err(e))) => self.rt.error = Some(e),
            Some(JobOutcome::Panicked(m)) => self.rt.error = Some(format!("solver failed: {m}")),
            None => {}
        }
        self.follow_report(ui.ctx(), now, model);
        ui.heading("Compare");
        if self.variants.is_empty() {
            ui.label(format!(
                "No variants yet: on the Network page, name the current network and press \
                 \"Add to Compare\" (up to {MAX_VARIANTS})."
            ));
            return;
        }
        progress_slot_ui(ui, self.rt.recompute.job());
        if let Some(e) = &self.rt.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let mut remove = None;
        let stale = self.rt.results.len() != self.variants.len();
        egui::Grid::new("compare-table")
            .striped(true)
            .num_columns(11)
            .show(ui, |ui| {
                for h in [
                    "",
                    "",
                    "name",
                    "stations",
                    "population",
                    "throughput (/s)",
                    "IOPS per node",
                    "IOPS per core",
                    "mean response (ms)",
                    "bottleneck",
                    "model",
                ] {
                    ui.strong(h);
                }
                ui.end_row();
                for (i, v) in self.variants.iter_mut().enumerate() {
                    let rm = ui
                        .small_button("remove")
                        .on_hover_text(format!("remove {} from Compare", v.name));
                    let name = format!("remove {}", v.name);
                    rm.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &name));
                    if rm.clicked() {
                        remove = Some(i);
                    }
                    let l = ui.label(format!("variant {}", i + 1));
                    ui.add(
                        egui::TextEdit::singleline(&mut v.name)
                            .id_salt(("variant-name", i))
                            .desired_width(140.0)
                            // A grid cell offers the width of the last frame's column;
                            // the name must not shrink to a few letters.
                            .min_size(egui::vec2(140.0, 0.0))
                            .hint_text("variant name"),
                    )
                    .on_hover_text("the variant's name (type to rename it)")
                    .labelled_by(l.id);
                    let (stations, population) = v.size();
                    ui.label(stations.to_string());
                    ui.label(population.to_string());
                    match self.rt.results.get(i).filter(|_| !stale) {
                        Some(r) => {
                            let c = &r.at_population.classes[0];
                            ui.label(plot::si(c.throughput_per_sec));
                            let (node, core) = v.per_node_and_core(c.throughput_per_sec);
                            for per in [node, core] {
                                match per {
                                    Some(x) => ui.label(plot::si(x)),
                                    None => ui.label("–").on_hover_text(
                                        "hardware unknown: add the variant from the \
                                         Prediction page (a Ceph scenario) to see it",
                                    ),
                                };
                            }
                            ui.label(format!("{:.3}", c.response_time_secs * 1e3));
                            let b = r.bounds.bottleneck.as_deref().and_then(|name| {
                                r.at_population.stations.iter().find(|s| s.name == name)
                            });
                            ui.label(b.map_or(String::new(), |b| {
                                format!("{} ({:.0} %)", b.name, b.utilization * 100.0)
                            }));
                        }
                        None => {
                            for _ in 0..5 {
                                ui.label("…");
                            }
                        }
                    }
                    match &v.model {
                        Some(m) => ui.label(m.short_label()).on_hover_text(m.label()),
                        None => ui.label("–").on_hover_text("a network built by hand"),
                    };
                    ui.end_row();
                }
            });
        if let Some(i) = remove {
            self.variants.remove(i);
            self.rt.results.clear();
            self.rt.recompute.request_now();
        }
        if self.variants.iter().any(|v| v.scenario_text.is_some()) {
            self.report_ui(ui, cmds);
            ui.separator();
        }
        if stale {
            return;
        }
        ui.strong(
            "every variant's network: latency against throughput, throughput against population",
        );
        let names = self.variants.iter().map(|v| v.name.clone());
        let hockey: Vec<Series> = names
            .clone()
            .zip(&self.rt.results)
            .map(|(n, r)| Series::new(n, r.curve.iter().map(|c| [c.1, c.2 * 1e3]).collect()))
            .collect();
        let scaling: Vec<Series> = names
            .zip(&self.rt.results)
            .map(|(n, r)| Series::new(n, r.curve.iter().map(|c| [f64::from(c.0), c.1]).collect()))
            .collect();
        let h = plot::plot_height(ui);
        ui.columns(2, |cols| {
            let target = (self.latency_target_ms > 0.0).then_some(self.latency_target_ms);
            plot::hockey_stick_ui(
                &mut cols[0],
                "compare-hockey",
                "mean latency (ms)",
                &hockey,
                &[],
                &plot::HockeyMarks {
                    latency_target_ms: target,
                    knee: None,
                    view_top_ms: None,
                },
                h,
            );
            plot::curves_ui(
                &mut cols[1],
                "compare-scaling",
                "population (jobs in flight)",
                "throughput (/s)",
                &scaling,
                h,
            );
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    fn variant(name: &str, disk_ms: f64) -> Variant {
        let mut inputs = NetworkInputs::default();
        inputs.stations[1].demand_ms = disk_ms;
        Variant {
            name: name.into(),
            inputs,
            ..Variant::default()
        }
    }

    /// 3 nodes × 1 socket × 128 cores (Ampere Altra Max M128-30): 230k IOPS →
    /// 76.7k per node, 599 per core.
    #[test]
    fn per_node_and_core_divide_throughput_by_the_hardware() {
        let v = Variant {
            nodes: Some(3),
            cores: Some(384),
            ..variant("ceph", 0.2)
        };
        let (n, c) = v.per_node_and_core(230_000.0);
        assert!((n.unwrap() - 76_666.67).abs() < 0.01);
        assert!((c.unwrap() - 598.96).abs() < 0.01);
        assert_eq!(variant("net", 0.2).per_node_and_core(1.0), (None, None));
    }

    #[test]
    fn at_most_four_variants_and_a_taken_name_gets_a_number() {
        let mut page = ComparePage::default();
        assert_eq!(page.add(variant("v", 0.2)).unwrap(), "v");
        assert_eq!(page.add(variant("v", 0.5)).unwrap(), "v (2)");
        assert_eq!(page.add(variant(" v ", 0.7)).unwrap(), "v (3)");
        assert_eq!(page.variants[0].inputs.stations[1].demand_ms, 0.2);
        assert_eq!(page.add(variant("", 0.2)).unwrap(), "variant");
        assert!(page.add(variant("w", 0.2)).is_err());
        assert_eq!(page.variants.len(), MAX_VARIANTS);
    }

    /// A slower bottleneck lowers the throughput ceiling 1 / D_max (asymptotic bound,
    /// Lazowska et al., QSP 1984, ch. 5): 0.2 ms → 5000/s, 0.5 ms → 2000/s.
    #[test]
    fn solve_all_keeps_variant_order() {
        let r = solve_all(
            vec![variant("fast", 0.2), variant("slow", 0.5)],
            &NoProgress,
        )
        .unwrap();
        let x: Vec<f64> = r
            .iter()
            .map(|s| s.at_population.classes[0].throughput_per_sec)
            .collect();
        assert!(x[0] <= 5000.0 * (1.0 + 1e-9) && x[0] > 2000.0);
        assert!(x[1] <= 2000.0 * (1.0 + 1e-9));
    }
}

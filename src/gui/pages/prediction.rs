//! Prediction page: the scenario open in the designer, validated by `spec`, mapped onto a
//! queueing network by `qn::ceph::build` with the shipped model parameters, and solved
//! by exact MVA on a worker thread — headline IOPS, bandwidth and mean latency,
//! utilisation per resource with the bottleneck, latency vs IOPS as iodepth grows (with
//! the latency target and the highest swept iodepth that meets it), and IOPS vs node
//! count. Recomputes (debounced) whenever the scenario text changes. "Add to Compare"
//! files the scenario's network with its node and core counts on the Compare page.
//!
//! Not here: the model (`qn::ceph`), solving (`solve`). Intervals and p99 are not shown
//! yet: they need the `predict` module (parameter covariance) and the simulator.

use serde::{Deserialize, Serialize};

use super::compare::Variant;
use super::network::{sweep_at, NetworkSweep};
use crate::gui::app::Command;
use crate::gui::job::{Job, JobOutcome, Recompute};
use crate::gui::plot::{self, Series};
use crate::model::ModelParams;
use crate::progress::{NoProgress, Progress};
use crate::qn::ceph::build;
use crate::solve::{solve, SolveOptions};
use crate::spec::{parse_scenario, CapacityReport, Catalogue};

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
    pub warnings: Vec<String>,
    /// Solutions at `images × jobs × d` for each swept iodepth `d`; `at_population` is the
    /// scenario's own iodepth.
    pub sweep: NetworkSweep,
    /// `(nodes, IOPS)` at the scenario's population, for other node counts that validate.
    pub by_nodes: Vec<(u32, f64)>,
    /// The network at the scenario's population (what Compare solves for this scenario).
    pub network: crate::qn::Network,
}

pub type PredictionResult = Result<CephPrediction, String>;

/// Validates, builds and solves a scenario text (`origin` names it in errors).
pub fn predict_text(text: &str, origin: &str, progress: &dyn Progress) -> PredictionResult {
    let cat = Catalogue::builtin();
    let params = ModelParams::shipped_default();
    let scenario = parse_scenario(text, origin, &cat).map_err(|e| e.to_string())?;
    let ceph = build(&scenario, &params).map_err(|e| e.to_string())?;
    let base = scenario.images * scenario.jobs_per_image;
    let mut depths: Vec<u32> = IODEPTHS.to_vec();
    depths.push(scenario.iodepth);
    depths.sort_unstable();
    depths.dedup();
    let pops: Vec<u32> = depths.iter().map(|d| d * base).collect();
    let sweep = sweep_at(ceph.network.clone(), &pops, scenario.population(), progress)?;
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
        let Ok(c) = build(&s, &params) else { continue };
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
        warnings: ceph.warnings,
        network: ceph.network.clone(),
        sweep,
        by_nodes,
    })
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

#[derive(Default)]
struct Runtime {
    recompute: Recompute<PredictionResult>,
    result: Option<CephPrediction>,
    error: Option<String>,
    /// The text last sent for solving.
    solved_text: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct PredictionPage {
    pub latency_target_ms: f64,
    #[serde(skip)]
    rt: Runtime,
}

impl Default for PredictionPage {
    fn default() -> Self {
        Self {
            latency_target_ms: 4.0,
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

    /// Keeps the prediction in step with `text` (call every frame, also when the page is
    /// not shown, so that it is ready when the user switches to it).
    pub fn follow(&mut self, ctx: &egui::Context, text: &str, origin: &str) {
        let now = ctx.input(|i| i.time);
        if self.rt.solved_text.as_deref() != Some(text) {
            if self.rt.solved_text.is_none() {
                self.rt.recompute.request_now();
            } else {
                self.rt.recompute.request(now);
            }
            self.rt.solved_text = Some(text.to_owned());
        }
        let (text, origin) = (text.to_owned(), origin.to_owned());
        match self.rt.recompute.tick(ctx, now, move |ctx| {
            Job::spawn("predicting", ctx, move |p| predict_text(&text, &origin, p))
        }) {
            Some(JobOutcome::Done(Ok(r))) => {
                self.rt.result = Some(r);
                self.rt.error = None;
            }
            Some(JobOutcome::Done(Err(e))) => self.rt.error = Some(e),
            Some(JobOutcome::Panicked(m)) => self.rt.error = Some(format!("model failed: {m}")),
            None => {}
        }
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        ui.horizontal(|ui| {
            let l = ui.label("latency target (ms)");
            ui.add(
                egui::DragValue::new(&mut self.latency_target_ms)
                    .range(0.01..=1e4)
                    .speed(0.05),
            )
            .labelled_by(l.id);
            if let Some(p) = &self.rt.result {
                if ui.button("Add to Compare").clicked() {
                    cmds.push(Command::AddToCompare(Variant {
                        name: p.name.clone(),
                        network: Some(p.network.clone()),
                        nodes: Some(p.nodes),
                        cores: Some(p.cores),
                        ..Variant::default()
                    }));
                }
            }
            if let Some(job) = self.rt.recompute.job() {
                job.progress_ui(ui);
            }
        });
        if let Some(e) = &self.rt.error {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("{e} (showing the last valid prediction)"),
            );
        }
        let Some(p) = &self.rt.result else {
            ui.label("predicting…");
            return;
        };
        let at = &p.sweep.at_population;
        let x = at.classes[0].throughput_per_sec;
        let r = at.classes[0].response_time_secs;
        ui.heading(&p.name);
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("{} IOPS", plot::si(x)));
            ui.separator();
            ui.strong(format!("{}B/s", plot::si(x * p.bytes_per_io)));
            ui.separator();
            ui.strong(format!("mean latency {:.3} ms", r * 1e3));
            ui.separator();
            ui.label(format!(
                "{} nodes, {} OSDs, {} I/Os in flight (iodepth {})",
                p.nodes,
                p.osds,
                p.images_x_jobs * p.iodepth,
                p.iodepth
            ));
        });
        ui.label(format!(
            "capacity: raw {:.1} TB, usable {:.1} TB ({:.0} % efficiency, before Ceph's full ratio)",
            p.capacity.raw_bytes / 1e12,
            p.capacity.usable_bytes / 1e12,
            p.capacity.efficiency * 100.0
        ));
        ui.label(
            "Exact MVA with the shipped default model parameters (not fitted to this \
             hardware): no intervals and no p99 yet.",
        );
        for w in &p.warnings {
            ui.colored_label(plot::WARN, w);
        }
        let rows: Vec<(String, f64)> = at
            .stations
            .iter()
            .filter(|s| s.utilization > 0.0)
            .map(|s| (s.name.clone(), s.utilization))
            .collect();
        plot::utilisation_bars_ui(ui, &rows, p.sweep.bounds.bottleneck.as_deref());
        let target_secs = self.latency_target_ms / 1e3;
        let best = best_within_target(p, target_secs);
        match best {
            Some((d, bx, br)) => ui.label(format!(
                "highest swept iodepth within {} ms: {d}, giving {} IOPS at {:.3} ms",
                self.latency_target_ms,
                plot::si(bx),
                br * 1e3
            )),
            None => ui.label(format!(
                "no swept iodepth meets {} ms",
                self.latency_target_ms
            )),
        };
        let curve = Series::new(
            "latency vs IOPS (iodepth sweep)",
            p.sweep.curve.iter().map(|c| [c.1, c.2 * 1e3]).collect(),
        );
        let bound = Series::new(
            "optimistic bound",
            p.sweep
                .optimistic
                .iter()
                .map(|c| [c.1, c.2 * 1e3])
                .collect(),
        )
        .reference();
        let here = Series::new(format!("iodepth {}", p.iodepth), vec![[x, r * 1e3]]);
        let nodes = Series::new(
            "IOPS vs OSD nodes",
            p.by_nodes.iter().map(|&(n, x)| [f64::from(n), x]).collect(),
        );
        let h = (ui.available_height() - 10.0).max(200.0);
        ui.columns(2, |cols| {
            plot::hockey_stick_ui(
                &mut cols[0],
                "prediction-hockey",
                &[curve, bound],
                &[here],
                Some(self.latency_target_ms),
                best.map(|(_, bx, br)| [bx, br * 1e3]),
                h,
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

/// Predicts without progress (for tests and callers that wait).
pub fn predict_text_blocking(text: &str, origin: &str) -> PredictionResult {
    predict_text(text, origin, &NoProgress)
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
    }

    #[test]
    fn invalid_scenario_names_the_field() {
        let text = example().replace("nodes = 3", "nodes = 0");
        let e = predict_text_blocking(&text, "edited.toml").unwrap_err();
        assert!(e.contains("cluster.nodes"), "{e}");
    }
}

//! Network page: edit a generic closed queueing network (stations, demands, servers,
//! multiplicity, population, think time) and see its exact MVA solution and the
//! latency-vs-throughput curve as the population grows, recomputed on a worker thread.
//!
//! It talks only to [`crate::qn`] and [`crate::solve`]; it is the place to explore the
//! solver without Ceph, not a Ceph model (the Prediction page is).

use serde::{Deserialize, Serialize};

use super::compare::Variant;
use crate::gui::app::Command;
use crate::gui::job::{progress_slot_ui, Job, JobOutcome, Recompute};
use crate::gui::plot::{self, Series};
use crate::progress::Progress;
use crate::qn::{Class, Demand, Network, Station, StationKind};
use crate::solve::bounds::{bounds, ClassBounds};
use crate::solve::{solve, Solution, SolveOptions};

/// One editable station row. Demands are in milliseconds in the UI only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StationRow {
    pub name: String,
    pub delay: bool,
    pub servers: u32,
    pub multiplicity: u32,
    pub demand_ms: f64,
}

impl Default for StationRow {
    fn default() -> Self {
        Self {
            name: "station".into(),
            delay: false,
            servers: 1,
            multiplicity: 1,
            demand_ms: 1.0,
        }
    }
}

/// The solved curve: one point per population, plus the full solution at the chosen one.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkSweep {
    /// `(population, throughput per second, response time seconds)`.
    pub curve: Vec<(u32, f64, f64)>,
    /// Optimistic asymptotic bounds per population of `curve`:
    /// `(population, throughput upper bound per second, response time lower bound secs)`.
    pub optimistic: Vec<(u32, f64, f64)>,
    pub at_population: Solution,
    /// All asymptotic bounds at the chosen population.
    pub bounds: ClassBounds,
}

pub type SweepResult = Result<NetworkSweep, String>;

#[derive(Default)]
struct Runtime {
    recompute: Recompute<SweepResult>,
    result: Option<NetworkSweep>,
    error: Option<String>,
    started: bool,
}

/// The editable inputs of a single-class closed network (what Compare snapshots).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetworkInputs {
    pub stations: Vec<StationRow>,
    pub population: u32,
    pub think_time_ms: f64,
}

impl Default for NetworkInputs {
    /// A two-station starting point (an illustrative input the user edits, not a
    /// measured system): a 4-server CPU and a single disk.
    fn default() -> Self {
        Self {
            stations: vec![
                StationRow {
                    name: "cpu".into(),
                    servers: 4,
                    demand_ms: 0.4,
                    ..StationRow::default()
                },
                StationRow {
                    name: "disk".into(),
                    demand_ms: 0.2,
                    ..StationRow::default()
                },
            ],
            population: 32,
            think_time_ms: 0.0,
        }
    }
}

impl NetworkInputs {
    /// The validated network at population `n`, or the validation message.
    pub fn network(&self, n: u32) -> Result<Network, String> {
        let stations = self
            .stations
            .iter()
            .map(|r| Station {
                name: r.name.clone(),
                kind: if r.delay {
                    StationKind::Delay
                } else {
                    StationKind::Queue
                },
                servers: r.servers,
                multiplicity: r.multiplicity,
                demands: vec![Demand::new(r.demand_ms / 1e3)],
                batching: None,
                fractional_servers: None,
            })
            .collect();
        let class = Class {
            name: "io".into(),
            population: n,
            think_time_secs: self.think_time_ms / 1e3,
        };
        Network::new(stations, vec![class]).map_err(|e| e.to_string())
    }

    /// The validated network at the chosen population.
    pub fn at_population(&self) -> Result<Network, String> {
        self.network(self.population)
    }

    /// Editable inputs from a network (e.g. a `cephplan solve --network` file). This page
    /// models one class without forks; other networks are for the CLI.
    pub fn from_network(net: &Network) -> Result<Self, String> {
        let [class] = net.classes.as_slice() else {
            return Err(format!(
                "the Network page edits single-class networks; this one has {} classes \
                 (solve it with `cephplan solve --network`)",
                net.classes.len()
            ));
        };
        let stations = net
            .stations
            .iter()
            .map(|s| {
                let d = s.demands[0];
                if d.path_secs != d.secs {
                    return Err(format!(
                        "station \"{}\" has a path demand different from its demand (a fork); \
                         the Network page does not model forks (use `cephplan solve --network`)",
                        s.name
                    ));
                }
                if s.batching.is_some() {
                    return Err(format!(
                        "station \"{}\" batches; the Network page does not model batching \
                         (use `cephplan solve --network`)",
                        s.name
                    ));
                }
                Ok(StationRow {
                    name: s.name.clone(),
                    delay: s.kind == StationKind::Delay,
                    servers: s.servers,
                    multiplicity: s.multiplicity,
                    demand_ms: d.secs * 1e3,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            stations,
            population: class.population,
            think_time_ms: class.think_time_secs * 1e3,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct NetworkPage {
    pub inputs: NetworkInputs,
    pub latency_target_ms: f64,
    /// Path typed into the "open network file" field.
    pub open_path: String,
    /// Name under which "Add to Compare" files the current inputs.
    pub variant_name: String,
    #[serde(skip)]
    rt: Runtime,
}

impl Default for NetworkPage {
    fn default() -> Self {
        Self {
            inputs: NetworkInputs::default(),
            latency_target_ms: 4.0,
            open_path: String::new(),
            variant_name: "variant 1".into(),
            rt: Runtime::default(),
        }
    }
}

impl NetworkPage {
    /// Replaces the inputs with a network file's (`cephplan solve --network` format).
    pub fn open(&mut self, path: &std::path::Path) -> Result<(), String> {
        let net = crate::qn::file::load_network(path).map_err(|e| e.to_string())?;
        self.inputs = NetworkInputs::from_network(&net)?;
        self.rt.recompute.request_now();
        Ok(())
    }

    pub fn result(&self) -> Option<&NetworkSweep> {
        self.rt.result.as_ref()
    }

    pub fn error(&self) -> Option<&str> {
        self.rt.error.as_deref()
    }

    pub fn is_busy(&self) -> bool {
        self.rt.recompute.is_busy()
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        let now = ui.input(|i| i.time);
        if !self.rt.started {
            self.rt.started = true;
            self.rt.recompute.request_now();
        }
        let mut changed = false;
        egui::Panel::left("network-inputs")
            .resizable(true)
            .default_size(380.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    changed |= self.inputs_ui(ui);
                    ui.separator();
                    ui.horizontal(|ui| {
                        let l = ui.label("variant name");
                        ui.add(
                            egui::TextEdit::singleline(&mut self.variant_name).desired_width(120.0),
                        )
                        .labelled_by(l.id);
                        if ui.button("Add to Compare").clicked() {
                            cmds.push(Command::AddToCompare(Variant {
                                name: self.variant_name.trim().to_owned(),
                                inputs: self.inputs.clone(),
                                ..Variant::default()
                            }));
                            self.variant_name = next_variant_name(&self.variant_name);
                        }
                    });
                });
            });
        if changed {
            self.rt.error = None;
            match self.inputs.at_population() {
                Ok(_) => self.rt.recompute.request(now),
                Err(e) => self.rt.error = Some(e),
            }
        }
        self.tick(ui.ctx(), now);
        self.results_ui(ui);
    }

    fn tick(&mut self, ctx: &egui::Context, now: f64) {
        let net = self.inputs.at_population();
        let outcome = self.rt.recompute.tick(ctx, now, |ctx| {
            let net = net.clone();
            Job::spawn("solving network", ctx, move |p| {
                net.and_then(|n| sweep(n, p))
            })
        });
        match outcome {
            Some(JobOutcome::Done(Ok(r))) => self.rt.result = Some(r),
            Some(JobOutcome::Done(Err(e))) => self.rt.error = Some(e),
            Some(JobOutcome::Panicked(m)) => self.rt.error = Some(format!("solver failed: {m}")),
            None => {}
        }
    }

    fn inputs_ui(&mut self, ui: &mut egui::Ui) -> bool {
        let mut changed = false;
        ui.horizontal(|ui| {
            let l = ui.label("network file");
            ui.add(
                egui::TextEdit::singleline(&mut self.open_path)
                    .desired_width(200.0)
                    .hint_text("network.toml"),
            )
            .labelled_by(l.id);
            if ui.button("Open network").clicked() {
                let path = std::path::PathBuf::from(self.open_path.trim());
                if let Err(e) = self.open(&path) {
                    self.rt.error = Some(e);
                }
            }
        });
        ui.heading("Closed network");
        egui::Grid::new("network-class")
            .num_columns(2)
            .show(ui, |ui| {
                let l = ui.label("population (jobs in flight)");
                changed |= ui
                    .add(egui::DragValue::new(&mut self.inputs.population).range(1..=4096))
                    .labelled_by(l.id)
                    .changed();
                ui.end_row();
                let l = ui.label("think time (ms)");
                changed |= ui
                    .add(
                        egui::DragValue::new(&mut self.inputs.think_time_ms)
                            .range(0.0..=1e6)
                            .speed(0.01),
                    )
                    .labelled_by(l.id)
                    .changed();
                ui.end_row();
                let l = ui.label("latency target (ms)");
                ui.add(
                    egui::DragValue::new(&mut self.latency_target_ms)
                        .range(0.0..=1e6)
                        .speed(0.01),
                )
                .labelled_by(l.id);
                ui.end_row();
            });
        ui.separator();
        ui.heading("Stations");
        let mut remove = None;
        egui::Grid::new("network-stations")
            .num_columns(6)
            .striped(true)
            .show(ui, |ui| {
                let h: Vec<egui::Id> = ["name", "delay", "servers", "copies", "demand ms"]
                    .iter()
                    .map(|t| ui.strong(*t).id)
                    .collect();
                ui.end_row();
                for (i, r) in self.inputs.stations.iter_mut().enumerate() {
                    changed |= ui
                        .add(egui::TextEdit::singleline(&mut r.name).desired_width(70.0))
                        .labelled_by(h[0])
                        .changed();
                    changed |= ui.checkbox(&mut r.delay, "").labelled_by(h[1]).changed();
                    changed |= ui
                        .add(egui::DragValue::new(&mut r.servers).range(1..=4096))
                        .labelled_by(h[2])
                        .changed();
                    changed |= ui
                        .add(egui::DragValue::new(&mut r.multiplicity).range(1..=100_000))
                        .labelled_by(h[3])
                        .changed();
                    changed |= ui
                        .add(
                            egui::DragValue::new(&mut r.demand_ms)
                                .range(0.0..=1e6)
                                .speed(0.001)
                                .max_decimals(4),
                        )
                        .labelled_by(h[4])
                        .changed();
                    if ui.button("remove").clicked() {
                        remove = Some(i);
                    }
                    ui.end_row();
                }
            });
        if let Some(i) = remove {
            self.inputs.stations.remove(i);
            changed = true;
        }
        if ui.button("add station").clicked() {
            let name = format!("station-{}", self.inputs.stations.len() + 1);
            self.inputs.stations.push(StationRow {
                name,
                ..StationRow::default()
            });
            changed = true;
        }
        changed
    }

    fn results_ui(&mut self, ui: &mut egui::Ui) {
        progress_slot_ui(ui, self.rt.recompute.job());
        if let Some(e) = &self.rt.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let Some(r) = &self.rt.result else {
            ui.label("solving…");
            return;
        };
        let class = &r.at_population.classes[0];
        ui.horizontal(|ui| {
            ui.heading(format!(
                "N = {}: {}/s, mean response {:.3} ms",
                class.population,
                plot::si(class.throughput_per_sec),
                class.response_time_secs * 1e3
            ));
        });
        ui.label(format!(
            "solver: {}",
            crate::predict::format::method_label(r.at_population.method)
        ));
        for n in &r.at_population.notes {
            ui.add(
                egui::Label::new(egui::RichText::new(format!("warning: {n}")).color(plot::WARN))
                    .wrap(),
            );
        }
        let rows: Vec<(String, f64)> = r
            .at_population
            .stations
            .iter()
            .zip(&self.inputs.stations)
            .filter(|(_, row)| !row.delay)
            .map(|(s, _)| (s.name.clone(), s.utilization))
            .collect();
        ui.label(format!(
            "asymptotic bounds at N = {}: throughput ≤ {}/s, mean response ≥ {:.3} ms",
            class.population,
            plot::si(r.bounds.throughput_upper_per_sec),
            r.bounds.response_time_lower_secs * 1e3
        ));
        plot::utilisation_bars_ui(ui, &rows, r.bounds.bottleneck.as_deref());
        let curve = Series::new(
            "exact MVA",
            r.curve
                .iter()
                .map(|&(_, x, rt)| [x, rt * 1e3])
                .collect::<Vec<_>>(),
        );
        let bound = Series::new(
            "optimistic bound",
            r.optimistic
                .iter()
                .map(|&(_, x, rt)| [x, rt * 1e3])
                .collect::<Vec<_>>(),
        )
        .reference();
        let target = (self.latency_target_ms > 0.0).then_some(self.latency_target_ms);
        let here = Series::new(
            format!("N = {}", class.population),
            vec![[class.throughput_per_sec, class.response_time_secs * 1e3]],
        );
        plot::hockey_stick_ui(
            ui,
            "network-hockey",
            "mean latency (ms)",
            &[curve, bound],
            &[here],
            &plot::HockeyMarks {
                latency_target_ms: target,
                knee: None,
                view_top_ms: None,
            },
            ui.available_height().max(200.0),
        );
    }
}

/// "variant 3" → "variant 4"; any other name is kept (the user chose it).
pub fn next_variant_name(name: &str) -> String {
    match name
        .trim()
        .strip_prefix("variant ")
        .and_then(|k| k.parse::<u32>().ok())
    {
        Some(k) => format!("variant {}", k + 1),
        None => name.to_owned(),
    }
}

/// Populations to solve for a curve ending at `n`: every value up to 64, then about 64
/// geometrically spaced values, always ending at `n`.
pub fn sweep_populations(n: u32) -> Vec<u32> {
    if n <= 64 {
        return (1..=n).collect();
    }
    let mut v: Vec<u32> = (0..64)
        .map(|i| (f64::from(n).powf(f64::from(i) / 63.0)).round() as u32)
        .collect();
    v.push(n);
    v.sort_unstable();
    v.dedup();
    v
}

/// Solves `net` at each population of [`sweep_populations`] (its class's population is the
/// last). Stops with an error message when cancelled.
pub fn sweep(net: Network, progress: &dyn Progress) -> SweepResult {
    let n = net.classes[0].population;
    sweep_at(net, &sweep_populations(n), n, progress)
}

/// Solves `net` at each population of `pops` (ascending) and keeps the full solution and
/// bounds at population `at` (which must be one of them).
pub fn sweep_at(net: Network, pops: &[u32], at: u32, progress: &dyn Progress) -> SweepResult {
    progress.start(pops.len() as u64, "populations");
    let opts = SolveOptions::default();
    let mut curve = Vec::with_capacity(pops.len());
    let mut optimistic = Vec::with_capacity(pops.len());
    let mut chosen = None;
    for &n in pops {
        if progress.is_cancelled() {
            return Err("cancelled".into());
        }
        let mut net_n = net.clone();
        net_n.classes[0].population = n;
        let sol = solve(&net_n, &opts).map_err(|e| e.to_string())?;
        curve.push((
            n,
            sol.classes[0].throughput_per_sec,
            sol.classes[0].response_time_secs,
        ));
        let b = bounds(&net_n).remove(0);
        optimistic.push((n, b.throughput_upper_per_sec, b.response_time_lower_secs));
        if n == at {
            chosen = Some((sol, b));
        }
        progress.advance(1);
    }
    progress.finish();
    let (at_population, bounds) =
        chosen.ok_or_else(|| format!("population {at} is not among the swept populations"))?;
    Ok(NetworkSweep {
        curve,
        optimistic,
        at_population,
        bounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn a_batching_network_is_refused_rather_than_edited_without_its_batching() {
        // Editing would drop the batching (the page has no field for it): refuse, as for
        // forks, and name the station and the CLI that solves it.
        let mut net = NetworkInputs::default().at_population().unwrap();
        net.stations[0].batching = Some(crate::qn::Batching::single(0.5, 1.0, 8.0));
        let e = NetworkInputs::from_network(&net).unwrap_err();
        assert!(
            e.contains("\"cpu\" batches") && e.contains("cephplan solve --network"),
            "{e}"
        );
    }

    #[test]
    fn variant_names_count_up_unless_chosen() {
        assert_eq!(next_variant_name("variant 1"), "variant 2");
        assert_eq!(next_variant_name("scale-out"), "scale-out");
    }

    #[test]
    fn populations_cover_one_to_n() {
        assert_eq!(sweep_populations(3), vec![1, 2, 3]);
        let p = sweep_populations(1000);
        assert_eq!(p.first(), Some(&1));
        assert_eq!(p.last(), Some(&1000));
        assert!(p.windows(2).all(|w| w[0] < w[1]));
    }

    /// Asymptotic bounds (Lazowska et al., Quantitative System Performance, 1984, ch. 5):
    /// at N = 1 the response time is the sum of demands; throughput never exceeds
    /// 1 / D_max and approaches it as N grows.
    #[test]
    fn default_network_sweep_respects_bounds() {
        let net = NetworkInputs::default().at_population().unwrap();
        let r = sweep(net, &NoProgress).unwrap();
        let (n1, _, r1) = r.curve[0];
        assert_eq!(n1, 1);
        // Sum of demands: 0.4 ms + 0.2 ms.
        assert!((r1 - 0.6e-3).abs() < 1e-12);
        // CPU: 4 servers, 0.4 ms → per-server demand 0.1 ms; disk 0.2 ms is the bottleneck:
        // X_max = 1 / 0.2 ms = 5000/s.
        let xs: Vec<f64> = r.curve.iter().map(|c| c.1).collect();
        assert!(xs.iter().all(|&x| x <= 5000.0 * (1.0 + 1e-9)));
        assert!(xs.last().unwrap() > &4900.0);
        // Every exact point lies inside the library's optimistic bounds.
        for (c, b) in r.curve.iter().zip(&r.optimistic) {
            assert_eq!(c.0, b.0);
            assert!(
                c.1 <= b.1 * (1.0 + 1e-9) && c.2 >= b.2 * (1.0 - 1e-9),
                "{c:?} {b:?}"
            );
        }
        assert_eq!(r.bounds.bottleneck.as_deref(), Some("disk"));
    }

    #[test]
    fn opens_a_network_file_and_refuses_multi_class() {
        let dir = tempfile::tempdir().unwrap();
        let one = dir.path().join("one.toml");
        std::fs::write(
            &one,
            "schema_version = 1\n[[class]]\nname = \"io\"\npopulation = 8\nthink_time = \"1ms\"\n\
             [[station]]\nname = \"cpu\"\nservers = 2\ndemand = { io = \"3ms\" }\n",
        )
        .unwrap();
        let mut page = NetworkPage::default();
        page.open(&one).unwrap();
        assert_eq!(page.inputs.population, 8);
        assert_eq!(page.inputs.stations.len(), 1);
        assert_eq!(page.inputs.stations[0].servers, 2);
        assert!((page.inputs.stations[0].demand_ms - 3.0).abs() < 1e-12);
        assert!((page.inputs.think_time_ms - 1.0).abs() < 1e-12);

        let two = dir.path().join("two.toml");
        std::fs::write(
            &two,
            "schema_version = 1\n[[class]]\nname = \"r\"\npopulation = 1\n[[class]]\nname = \"w\"\n\
             population = 1\n[[station]]\nname = \"cpu\"\ndemand = { r = 0.001, w = 0.002 }\n",
        )
        .unwrap();
        let e = page.open(&two).unwrap_err();
        assert!(e.contains("2 classes"), "{e}");
        assert_eq!(
            page.inputs.population, 8,
            "a refused file leaves the inputs alone"
        );
    }

    #[test]
    fn invalid_input_is_reported_with_the_station_name() {
        let mut inputs = NetworkInputs::default();
        inputs.stations[1].name = "cpu".into();
        let e = inputs.network(4).unwrap_err();
        assert!(e.contains("\"cpu\" appears twice"), "{e}");
    }
}

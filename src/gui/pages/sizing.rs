//! The Sizing page: a requirements file in an editor (Open and Save, asking before
//! unsaved edits are replaced; saves never over a file cephplan did not write), the design
//! search on a worker with
//! live progress and Cancel, the ranked designs, and per design one click to open it in
//! the designer or add it to Compare. The search is `crate::design::design`, the same as
//! `cephplan design --model`, with the model chosen in the app's top bar (the one every
//! page predicts with); the result names that model. This page only edits text and draws
//! the report.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::compare::Variant;
use crate::design::{
    design, design_scenarios, parse_requirements, DesignOptions, DesignReport, PriceList,
    Requirements,
};
use crate::gui::app::{ActiveModel, Command, ModelChoice};
use crate::gui::job::{Job, JobOutcome};
use crate::model::ModelParams;
use crate::spec::Catalogue;

/// The example the page starts with.
const EXAMPLE: &str = include_str!("../../../models/requirements/oltp-nvme.toml");

type Outcome = Result<(Requirements, DesignReport), String>;

/// A finished search: the requirements, the report and the model it predicted with.
struct Searched {
    req: Requirements,
    report: DesignReport,
    model: ActiveModel,
}

#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct SizingPage {
    /// The requirements text being edited.
    pub text: String,
    /// Optional price list (`--prices`), a path.
    pub prices_path: String,
    /// The requirements file typed into the page's file field: what Open reads and Save
    /// writes.
    pub file_path: String,
    /// The text as last opened or saved (None: the built-in example): edits are unsaved
    /// while `text` differs from it.
    pub saved_text: Option<String>,
    /// A file Open was asked for while the editor held unsaved edits (asks first).
    #[serde(skip)]
    pending_open: Option<PathBuf>,
    /// What the last Open or Save did, or why it could not.
    #[serde(skip)]
    file_status: Option<Result<String, String>>,
    #[serde(skip)]
    job: Option<(Job<Outcome>, ActiveModel)>,
    #[serde(skip)]
    result: Option<Searched>,
    #[serde(skip)]
    error: Option<String>,
}

impl Default for SizingPage {
    fn default() -> Self {
        Self {
            text: EXAMPLE.to_string(),
            prices_path: String::new(),
            file_path: String::new(),
            saved_text: None,
            pending_open: None,
            file_status: None,
            job: None,
            result: None,
            error: None,
        }
    }
}

/// Parses the inputs and runs the search with `model` (on the worker thread).
fn search(
    text: &str,
    origin: &str,
    prices: &str,
    model: &ModelParams,
    progress: &dyn crate::progress::Progress,
) -> Outcome {
    let cat = Catalogue::builtin();
    let req = parse_requirements(text, origin, &cat).map_err(|e| e.to_string())?;
    let prices = match prices.trim() {
        "" => None,
        p => Some(PriceList::load(p.as_ref()).map_err(|e| e.to_string())?),
    };
    let r = design(
        &req,
        prices.as_ref(),
        model,
        &DesignOptions::default(),
        progress,
    )
    .map_err(|e| e.to_string())?;
    Ok((req, r))
}

impl SizingPage {
    /// True when the editor holds text that is in no file (nor the built-in example).
    pub fn is_modified(&self) -> bool {
        self.text != self.saved_text.as_deref().unwrap_or(EXAMPLE)
    }

    /// Reads a requirements file into the editor (the unsaved edits it replaces are the
    /// caller's to guard).
    pub fn open(&mut self, path: &std::path::Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}; check the path", path.display()))?;
        self.text = text.clone();
        self.saved_text = Some(text);
        self.file_path = path.display().to_string();
        self.result = None;
        self.error = None;
        Ok(())
    }

    /// Writes the editor's text to `file_path`, atomically, with cephplan's marker on top,
    /// never over a file cephplan did not write nor into a directory that does not exist.
    pub fn save(&mut self) -> Result<PathBuf, String> {
        let path = PathBuf::from(self.file_path.trim());
        if path.as_os_str().is_empty() {
            return Err("type a file name to save the requirements to".into());
        }
        crate::gui::parent_must_exist(&path)?;
        let text = super::designer::with_marker(&self.text);
        crate::io::write_atomic_owned(&path, text.as_bytes()).map_err(|e| e.to_string())?;
        self.text = text.clone();
        self.saved_text = Some(text);
        Ok(path)
    }

    /// The file row: path, Open (asking first over unsaved edits) and Save.
    fn file_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("requirements file");
            ui.add(
                egui::TextEdit::singleline(&mut self.file_path)
                    .desired_width(300.0)
                    .hint_text("models/requirements/oltp-nvme.toml"),
            )
            .labelled_by(l.id);
            if ui.button("Open requirements").clicked() {
                let path = PathBuf::from(self.file_path.trim());
                if self.is_modified() {
                    self.pending_open = Some(path);
                } else {
                    self.file_status = Some(
                        self.open(&path)
                            .map(|()| format!("opened {}", path.display())),
                    );
                }
            }
            if ui.button("Save requirements").clicked() {
                self.file_status = Some(self.save().map(|p| format!("saved {}", p.display())));
            }
            match &self.file_status {
                Some(Ok(m)) => {
                    ui.label(m);
                }
                Some(Err(e)) => {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                None => {}
            }
        });
        if let Some(path) = self.pending_open.clone() {
            ui.horizontal_wrapped(|ui| {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!(
                        "the editor has unsaved edits; open {} instead?",
                        path.display()
                    ),
                );
                if ui.button("Keep editing").clicked() {
                    self.pending_open = None;
                }
                if ui.button("Discard the edits and open").clicked() {
                    self.pending_open = None;
                    self.file_status = Some(
                        self.open(&path)
                            .map(|()| format!("opened {}", path.display())),
                    );
                }
            });
        }
    }

    /// Starts the search with `model` in the background (a running one is cancelled by
    /// the drop).
    pub fn start(&mut self, ctx: &egui::Context, model: &ActiveModel) {
        let (text, prices) = (self.text.clone(), self.prices_path.clone());
        let origin = match (&self.saved_text, self.file_path.trim()) {
            (Some(_), f) if !f.is_empty() => f.to_owned(),
            _ => "requirements editor".to_owned(),
        };
        let params = model.params.clone();
        self.error = None;
        let job = Job::spawn("design search", ctx, move |p| {
            search(&text, &origin, &prices, &params, p)
        });
        self.job = Some((job, model.clone()));
    }

    /// The last report, when a search has finished.
    pub fn report(&self) -> Option<&DesignReport> {
        self.result.as_ref().map(|r| &r.report)
    }

    /// The model the last report predicted with.
    pub fn report_model(&self) -> Option<&ModelChoice> {
        self.result.as_ref().map(|r| &r.model.choice)
    }

    /// The last error (bad requirements, a failed search).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn is_running(&self) -> bool {
        self.job.as_ref().is_some_and(|(j, _)| j.is_running())
    }

    fn poll(&mut self) {
        let Some((job, model)) = &mut self.job else {
            return;
        };
        if let Some(outcome) = job.poll() {
            match outcome {
                JobOutcome::Done(Ok((req, report))) => {
                    self.result = Some(Searched {
                        req,
                        report,
                        model: model.clone(),
                    })
                }
                JobOutcome::Done(Err(e)) => self.error = Some(e),
                JobOutcome::Panicked(m) => self.error = Some(format!("the search failed: {m}")),
            }
            self.job = None;
        }
    }

    /// Writes design `d`'s scenario of its workload number `k` where the designer can open
    /// it.
    fn scenario_file(
        req: &Requirements,
        d: &crate::design::Design,
        k: usize,
    ) -> Result<PathBuf, String> {
        let (w, spec) = design_scenarios(req, d)
            .into_iter()
            .nth(k)
            .ok_or("the design has no such workload")?;
        let dir = std::env::temp_dir().join("cephplan-sizing");
        let path = dir.join(format!(
            "{}-{}.toml",
            d.id,
            w.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
        ));
        let text = format!(
            "# generated by cephplan (Sizing page, design {}, workload \"{w}\")\n{}",
            d.id,
            spec.to_toml()
        );
        crate::io::write_atomic_owned(&path, text.as_bytes()).map_err(|e| e.to_string())?;
        Ok(path)
    }

    /// Design `d`'s scenario of its workload number `k` as a Compare variant, mapped with
    /// the model the search predicted with (so Compare's report predicts it again with the
    /// same model).
    fn variant(
        req: &Requirements,
        d: &crate::design::Design,
        model: &ActiveModel,
        k: usize,
    ) -> Result<Variant, String> {
        let scenarios = design_scenarios(req, d);
        let several = scenarios.len() > 1;
        let (w, spec) = scenarios
            .into_iter()
            .nth(k)
            .ok_or("the design has no such workload")?;
        let s = spec.validate(&req.catalogue).map_err(|e| e.to_string())?;
        let cn = crate::qn::ceph::build(&s, &model.params).map_err(|e| e.to_string())?;
        Ok(Variant {
            name: if several {
                format!(
                    "{} {} ({} nodes), {w}",
                    d.id, d.protection_label, d.parts.nodes
                )
            } else {
                format!("{} {} ({} nodes)", d.id, d.protection_label, d.parts.nodes)
            },
            network: Some(cn.network),
            nodes: Some(s.nodes),
            cores: Some(s.nodes * s.sockets * s.node_cpu.cores),
            scenario_text: Some(spec.to_toml()),
            origin: format!("Sizing page, design {}", d.id),
            model: Some(model.choice.clone()),
            ..Variant::default()
        })
    }

    /// The page: `model` is the app's selected model, which a Search predicts with.
    pub fn ui(&mut self, ui: &mut egui::Ui, model: &ActiveModel, cmds: &mut Vec<Command>) {
        self.poll();
        self.file_ui(ui);
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("prices file (optional)");
            ui.add(egui::TextEdit::singleline(&mut self.prices_path).desired_width(300.0))
                .labelled_by(l.id);
            if !self.is_running() && ui.button("Search").clicked() {
                self.start(ui.ctx(), model);
            }
            if let Some((job, _)) = &self.job {
                job.progress_ui(ui);
            }
        });
        if self.result.is_none() {
            ui.add(egui::Label::new(format!("Search predicts with the {}", model.label())).wrap());
        }
        if let Some(e) = &self.error {
            ui.add(
                egui::Label::new(egui::RichText::new(e).color(ui.visuals().error_fg_color)).wrap(),
            );
        }
        // The editor above the results (not beside them): the designs table needs the
        // whole width of a small window.
        let l = ui.strong("requirements (TOML, see models/README.md)");
        let editor_height = if self.result.is_some() {
            (ui.available_height() * 0.35).max(120.0)
        } else {
            ui.available_height() - 24.0
        };
        egui::ScrollArea::vertical()
            .id_salt("sizing-text")
            .max_height(editor_height)
            .show(ui, |ui| {
                ui.add(
                    egui::TextEdit::multiline(&mut self.text)
                        .code_editor()
                        .desired_width(f32::INFINITY)
                        .desired_rows(30),
                )
                .labelled_by(l.id);
            });
        ui.separator();
        let Some(found) = &self.result else {
            ui.label("press Search to find the designs that meet these requirements");
            return;
        };
        let r = &found.report;
        ui.strong(format!("objectives: {}", r.objectives.join(", ")));
        let stale = if found.model.choice == model.choice {
            ""
        } else {
            " (not the model selected now: press Search again to use it)"
        };
        ui.add(
            egui::Label::new(format!(
                "designs predicted with the {}{stale}",
                found.model.label()
            ))
            .wrap(),
        );
        for n in &r.notes {
            ui.add(egui::Label::new(egui::RichText::new(n).weak()).wrap());
        }
        if let Some(msg) = &r.no_design {
            ui.add(
                egui::Label::new(egui::RichText::new(msg).color(ui.visuals().warn_fg_color)).wrap(),
            );
        }
        designs_ui(ui, found, cmds);
    }
}

/// The ranked designs with their buttons, and the search counts.
fn designs_ui(ui: &mut egui::Ui, found: &Searched, cmds: &mut Vec<Command>) {
    let r = &found.report;
    egui::Grid::new("sizing-designs-grid")
        .striped(true)
        .show(ui, |ui| {
            let header = [
                "",
                "id",
                "protection",
                "nodes",
                "parts",
                "RU",
                "cost",
                "power",
                "least headroom",
            ];
            for h in header {
                ui.strong(h);
            }
            ui.end_row();
            for d in &r.designs {
                design_row_ui(ui, found, d, cmds);
                ui.end_row();
            }
        });
    ui.add(egui::Label::new(crate::design::tables::search_summary(r)).wrap());
    // The tables `cephplan design` prints, from the same cells: each design per workload
    // and state (range, p99, bottleneck, headroom), the held-out records, recovery, the
    // bill of materials and why the cheaper candidates fail.
    for (i, t) in crate::design::tables::report_tables(r)
        .into_iter()
        .enumerate()
        .skip(usize::from(!r.designs.is_empty()))
    {
        ui.add_space(4.0);
        ui.add(egui::Label::new(egui::RichText::new(&t.title).strong()).wrap());
        egui::ScrollArea::horizontal()
            .id_salt(("sizing-table", i))
            .show(ui, |ui| {
                egui::Grid::new(("sizing-table-grid", i))
                    .striped(true)
                    .show(ui, |ui| {
                        for h in &t.header {
                            ui.strong(*h);
                        }
                        ui.end_row();
                        for row in &t.rows {
                            for c in row {
                                ui.label(c);
                            }
                            ui.end_row();
                        }
                    });
            });
    }
}

fn design_row_ui(
    ui: &mut egui::Ui,
    found: &Searched,
    d: &crate::design::Design,
    cmds: &mut Vec<Command>,
) {
    let req = &found.req;
    // The two buttons one above the other, so the row fits a 1024-point window.
    ui.vertical(|ui| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        // One pair of buttons per workload (each is its own scenario), named by it when
        // the requirements have several.
        let workloads: Vec<String> = design_scenarios(req, d)
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        let several = workloads.len() > 1;
        for (k, w) in workloads.iter().enumerate() {
            let of = if several {
                format!(": {w}")
            } else {
                String::new()
            };
            if ui
                .button(format!("Open {} in designer{of}", d.id))
                .clicked()
            {
                match SizingPage::scenario_file(req, d, k) {
                    Ok(p) => {
                        cmds.push(Command::OpenScenario(p));
                        cmds.push(Command::SetPage(crate::gui::Page::Designer));
                    }
                    Err(e) => cmds.push(Command::Status(e)),
                }
            }
            if ui.button(format!("Add {} to Compare{of}", d.id)).clicked() {
                match SizingPage::variant(req, d, &found.model, k) {
                    Ok(v) => cmds.push(Command::AddToCompare(v)),
                    Err(e) => cmds.push(Command::Status(e)),
                }
            }
        }
    });
    ui.label(&d.id);
    ui.label(&d.protection_label);
    ui.label(d.parts.nodes.to_string());
    ui.label(format!(
        "{} × {}\n{} × {}, {}\nOSD memory {:.0} GiB/node",
        d.parts.sockets,
        d.parts.cpu,
        d.parts.drives_per_node,
        d.parts.drive,
        d.parts.nic,
        d.osd_memory_bytes_per_node / f64::from(1u32 << 30)
    ));
    ui.label(d.rack_units.to_string());
    ui.label(d.cost.map_or("-".into(), |c| format!("{c:.0}")));
    ui.label(d.power_watts.map_or("-".into(), |w| format!("{w:.0} W")));
    let least = d
        .results
        .iter()
        .flat_map(|w| &w.headroom)
        .map(|h| h.headroom)
        .fold(f64::INFINITY, f64::min);
    ui.label(format!("{:+.0} %", least * 100.0));
}

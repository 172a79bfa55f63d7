//! Cluster designer page: open, edit and save a scenario TOML file, with a form over its
//! main fields (nodes, CPUs, memory, devices, networks, pool, clients, workload) beside the
//! text; the OSD node and client CPUs are picked from the catalogue with a search.
//!
//! The text stays the source of truth: a form edit sets just that value in the text,
//! writing the key (and its table) when the text has none, with comments and layout kept
//! ([`crate::gui::scenario_edit`]); so the WAL/DB device, erasure coding and co-located
//! clients can be chosen in the form even when the file never mentioned them. On every
//! change the text is validated by `spec`; the error's field path puts the reason next to
//! the form field it names, and the raw and usable capacity of the valid scenario are
//! shown live.
//!
//! "Browse…" and "Save as…" take the path from the system's file dialog
//! ([`crate::gui::file_dialog`]) into the same fields and commands as typing it.
//!
//! Saving goes through [`crate::io::write_atomic_owned`], so a file that cephplan did not
//! create (such as a shipped example) is never overwritten: save under a new name. Not
//! here: the meaning of the fields (that is `spec`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::gui::app::Command;
use crate::gui::file_dialog::{self, Answer, Purpose};
use crate::gui::scenario_edit::{self, Edit};
use crate::io::GENERATED_MARKER;
use crate::spec::{parse_scenario, CapacityReport, Catalogue, SpecError};

/// What the form shows for a key the text does not have.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Absent {
    /// The scenario needs it: "not in the text" (the validation error says what to add).
    Missing,
    /// The number `spec` takes when the key is left out; editing it writes the key.
    Int(u64),
    /// A text field with this hint (what leaving it out means); typing writes the key.
    Text(&'static str),
}

/// One form row over a plain value: dotted path in the scenario file, label, and what an
/// absent key shows.
type Field = (&'static str, &'static str, Absent);

/// The OSD node's rows before the WAL/DB device (`spec`'s defaults: one socket, one OSD
/// per device).
const NODE_FIELDS: [Field; 7] = [
    ("cluster.nodes", "OSD nodes", Absent::Missing),
    ("cluster.ceph_release", "Ceph release", Absent::Missing),
    ("cluster.node.cpu", "OSD node CPU", Absent::Missing),
    ("cluster.node.sockets", "sockets per node", Absent::Int(1)),
    (
        "cluster.node.osds_per_device",
        "OSDs per device",
        Absent::Int(1),
    ),
    (
        "cluster.node.data_devices.count",
        "data devices per node",
        Absent::Missing,
    ),
    (
        "cluster.node.data_devices.model",
        "data device model",
        Absent::Missing,
    ),
];

const NETWORK_FIELDS: [Field; 2] = [
    (
        "cluster.node.network.public",
        "public network",
        Absent::Missing,
    ),
    (
        "cluster.node.network.cluster",
        "cluster network",
        Absent::Text("shared with public"),
    ),
];

const CLIENT_FIELDS: [Field; 3] = [
    ("clients.nodes", "client nodes", Absent::Missing),
    ("clients.cpu", "client CPU", Absent::Missing),
    ("clients.nic", "client NIC", Absent::Missing),
];

const WORKLOAD_FIELDS: [Field; 6] = [
    ("workload.images", "RBD images", Absent::Missing),
    ("workload.jobs_per_image", "jobs per image", Absent::Int(1)),
    ("workload.iodepth", "iodepth", Absent::Missing),
    ("workload.block_size", "block size", Absent::Missing),
    ("workload.pattern", "pattern", Absent::Missing),
    (
        "workload.image_size",
        "image size",
        Absent::Text("not stated: the data set counts as cached"),
    ),
];

/// The paths whose validation errors the WAL/DB, protection and co-location rows show.
const WAL_PATHS: [&str; 3] = [
    "cluster.node.wal_device",
    "cluster.node.wal_device.model",
    "cluster.node.wal_device.count",
];
const PROTECTION_PATHS: [&str; 6] = [
    "pool",
    "pool.replicated",
    "pool.erasure",
    "pool.erasure.k",
    "pool.erasure.m",
    "pool.erasure.stripe_unit",
];

/// The pool size a switch to replication writes: Ceph's `osd_pool_default_size`.
const DEFAULT_REPLICAS: i64 = 3;
/// The profile a switch to erasure coding writes: 2 + 1, the narrowest profile that
/// survives a failure, so it validates on 3 hosts (the edit is a starting point to type
/// over, not a recommendation).
const DEFAULT_EC: (i64, i64) = (2, 1);

/// The node memory row's key: a number of GiB, or left out.
const MEMORY_PATH: &str = "cluster.node.memory_gib";

/// The fields whose value names a catalogue CPU: the form offers a searchable picker.
const CPU_FIELDS: [&str; 2] = ["cluster.node.cpu", "clients.cpu"];

/// The built-in catalogue, parsed once (validation runs on every edit).
fn catalogue() -> &'static Catalogue {
    static CAT: std::sync::OnceLock<Catalogue> = std::sync::OnceLock::new();
    CAT.get_or_init(Catalogue::builtin)
}

/// What the designer knows about the current text.
#[derive(Debug, Clone, Default)]
struct Checked {
    /// TOML syntax error (the text is not a table).
    syntax: Option<String>,
    /// The scenario error (serde or validation), with its field path.
    spec: Option<SpecError>,
    capacity: Option<CapacityReport>,
    /// What the release and `[cluster.ceph_config]` put on the write path.
    write_path: Option<String>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DesignerPage {
    /// The file the text came from (or was last saved to).
    pub path: Option<PathBuf>,
    /// Where "Save" writes.
    pub save_path: String,
    /// The path typed into the "Open" field.
    pub open_path: String,
    /// The scenario text being edited (autosaved with the app state, so edits survive a
    /// restart).
    pub text: String,
    /// The text as last opened from or saved to `path`: edits are unsaved while `text`
    /// differs from it.
    pub saved_text: Option<String>,
    #[serde(skip)]
    state: Option<Checked>,
    /// What is typed into the CPU picker's search field.
    #[serde(skip)]
    cpu_search: String,
    /// What is typed into the memory field while it has the focus (`25.` on the way to
    /// `25.5` is not yet a number the text can hold).
    #[serde(skip)]
    memory_typed: Option<String>,
    /// Why the form's last edit could not be written into the text.
    #[serde(skip)]
    form_error: Option<String>,
    /// The system's Open or Save dialog, while it is up.
    #[serde(skip)]
    dialog: Option<file_dialog::Pending>,
    /// Why the last dialog could not open, with the remedy.
    #[serde(skip)]
    dialog_error: Option<String>,
    /// Show the text from its top at the next frame (a file was just opened).
    #[serde(skip)]
    text_to_top: bool,
    /// Show the Open dialog when the page is first drawn (`--browse-on-start`): after
    /// the window is up, so that the dialog opens over it.
    #[serde(skip)]
    pub browse_on_first_frame: bool,
}

impl DesignerPage {
    /// Loads a scenario file into the editor.
    pub fn open(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        self.saved_text = Some(text.clone());
        self.text = text;
        self.path = Some(path.to_path_buf());
        self.open_path = path.display().to_string();
        self.save_path = suggested_save_path(path).display().to_string();
        self.text_to_top = true;
        self.check();
        Ok(())
    }

    /// Writes the text to `save_path`, adding the cephplan marker when it is missing.
    pub fn save(&mut self) -> Result<PathBuf, String> {
        let path = PathBuf::from(self.save_path.trim());
        if path.as_os_str().is_empty() {
            return Err("type a file name to save to".into());
        }
        crate::gui::parent_must_exist(&path)?;
        let contents = with_marker(&self.text);
        crate::io::write_atomic_owned(&path, contents.as_bytes()).map_err(|e| e.to_string())?;
        self.saved_text = Some(contents.clone());
        self.text = contents;
        self.path = Some(path.clone());
        Ok(path)
    }

    /// True when the text has edits that are in no file (a text typed from scratch counts
    /// once it is not empty).
    pub fn is_modified(&self) -> bool {
        match &self.saved_text {
            Some(saved) => saved != &self.text,
            None => !self.text.trim().is_empty(),
        }
    }

    /// Where the text came from, for messages ("seed-000.toml", "the scenario editor").
    pub fn origin(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "scenario editor".to_owned(), |p| p.display().to_string())
    }

    /// The TOML syntax error of the text, if any.
    pub fn parse_error(&self) -> Option<&str> {
        self.state.as_ref()?.syntax.as_deref()
    }

    /// The scenario error (syntax, type or validation) with its field path, if any.
    pub fn spec_error(&self) -> Option<&SpecError> {
        self.state.as_ref()?.spec.as_ref()
    }

    /// Raw and usable capacity of the scenario, when it validates.
    pub fn capacity(&self) -> Option<&CapacityReport> {
        self.state.as_ref()?.capacity.as_ref()
    }

    /// The RocksDB build and the Ceph options the model applies, each marked stated or
    /// taken from the release, when the scenario validates.
    pub fn write_path(&self) -> Option<&str> {
        self.state.as_ref()?.write_path.as_deref()
    }

    /// The reason next to the form field `path`: the scenario error names this field.
    pub fn field_error(&self, path: &str) -> Option<String> {
        let e = self.spec_error()?;
        (e.field == path).then(|| reason(e))
    }

    fn check(&mut self) {
        let origin = self.origin();
        let syntax = toml::from_str::<toml::Table>(&self.text)
            .err()
            .map(|e| e.to_string());
        let (spec, capacity, write_path) = match parse_scenario(&self.text, &origin, catalogue()) {
            Ok(s) => (None, Some(s.capacity), Some(write_path_summary(&s))),
            Err(e) => (Some(e), None, None),
        };
        self.state = Some(Checked {
            syntax,
            spec,
            capacity,
            write_path,
        });
    }

    /// Sets the value at `path` to a TOML literal (`3`, `"4k"`, `{ k = 4, m = 2 }`),
    /// creating the key when the text has none and keeping the rest of the text as written.
    pub fn set_value(&mut self, path: &'static str, literal: &str) -> Result<(), String> {
        let v: toml_edit::Value = literal
            .parse()
            .map_err(|e| format!("`{literal}` is not a TOML value: {e}"))?;
        self.apply_edits(&[Edit::Set(path, v)])
    }

    /// Applies the form's edits to the text (keys created when missing, comments kept).
    pub fn apply_edits(&mut self, edits: &[Edit]) -> Result<(), String> {
        self.text = scenario_edit::apply(&self.text, edits)?;
        self.check();
        Ok(())
    }

    /// The form, its values read from the TOML text itself (not from the validated
    /// scenario), so that one bad value leaves every other field editable; a validation
    /// error is shown, wrapped, under the row of the field it names.
    fn form_ui(&mut self, ui: &mut egui::Ui) {
        let Some(table) = toml::from_str::<toml::Table>(&self.text).ok() else {
            ui.colored_label(
                ui.visuals().error_fg_color,
                "The text is not valid TOML, so the form cannot read it: fix the text on the \
                 right (the error is named above).",
            );
            return;
        };
        let mut edits = Vec::new();
        let width = ui.available_width();
        let lw = 150.0_f32.min(width * 0.45);
        let (before_memory, after_memory) = NODE_FIELDS.split_at(4);
        for &f in before_memory {
            self.field_ui(ui, lw, &table, f, &mut edits);
        }
        self.memory_ui(ui, lw, &table, &mut edits);
        for &f in after_memory {
            self.field_ui(ui, lw, &table, f, &mut edits);
        }
        self.wal_ui(ui, lw, &table, &mut edits);
        for f in NETWORK_FIELDS {
            self.field_ui(ui, lw, &table, f, &mut edits);
        }
        self.protection_ui(ui, lw, &table, &mut edits);
        self.colocated_ui(ui, lw, &table, &mut edits);
        for f in CLIENT_FIELDS {
            self.field_ui(ui, lw, &table, f, &mut edits);
        }
        for f in WORKLOAD_FIELDS {
            self.field_ui(ui, lw, &table, f, &mut edits);
        }
        // A mix's read share, where the pattern is one (or the text states it anyway).
        let mixed = matches!(
            toml_at(&table, "workload.pattern"),
            Some(toml::Value::String(p)) if p == "randrw"
        );
        if mixed || toml_at(&table, "workload.read_percent").is_some() {
            int_row_ui(
                ui,
                lw,
                &table,
                "workload.read_percent",
                "read %",
                &mut edits,
            );
        }
        self.ceph_options_ui(ui, lw, &table, &mut edits);
        if !edits.is_empty() {
            if let Err(e) = self.apply_edits(&edits) {
                self.form_error = Some(e);
            } else {
                self.form_error = None;
            }
        }
        if let Some(e) = &self.form_error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    }

    /// The reasons the validation gives for any of `paths`, wrapped under a row.
    fn errors_ui(&self, ui: &mut egui::Ui, lw: f32, paths: &[&str]) {
        for p in paths {
            if let Some(e) = self.field_error(p) {
                ui.horizontal(|ui| {
                    ui.add_space(lw + 8.0);
                    ui.add(
                        egui::Label::new(egui::RichText::new(e).color(ui.visuals().error_fg_color))
                            .wrap(),
                    );
                });
            }
        }
    }

    /// One row over a plain value: a number spinner, a text field or the CPU picker,
    /// following the value's type in the text (or `absent` when the text has none).
    fn field_ui(
        &mut self,
        ui: &mut egui::Ui,
        lw: f32,
        table: &toml::Table,
        (path, label, absent): Field,
        edits: &mut Vec<Edit>,
    ) {
        ui.horizontal(|ui| {
            let l = label_ui(ui, lw, label);
            let w = (ui.available_width() - 8.0).clamp(60.0, 220.0);
            let colocated = matches!(
                toml_at(table, "clients.colocated"),
                Some(toml::Value::Boolean(true))
            );
            match (toml_at(table, path), absent) {
                (Some(toml::Value::Integer(v)), _) => {
                    if let Some(v) = int_ui(ui, l.id, *v) {
                        edits.push(Edit::Set(path, int_value(v)));
                    }
                }
                (None, Absent::Int(default)) => {
                    if let Some(v) = int_ui(ui, l.id, i64::try_from(default).unwrap_or(i64::MAX)) {
                        edits.push(Edit::Set(path, int_value(v)));
                    }
                }
                (Some(toml::Value::String(v)), _) if path == "workload.pattern" => {
                    if let Some(p) = pattern_ui(ui, l.id, v) {
                        // A mix needs its read share: the one the validation error offers,
                        // written where the text has none, shown in the "read %" row.
                        // Any other pattern refuses one.
                        let share = toml_at(table, "workload.read_percent");
                        if p == "randrw" && share.is_none() {
                            edits.push(Edit::Set("workload.read_percent", int_value(70)));
                        } else if p != "randrw" && share.is_some() {
                            edits.push(Edit::Remove("workload.read_percent"));
                        }
                        edits.push(Edit::Set(path, p.into()));
                    }
                }
                (Some(toml::Value::String(v)), _) if CPU_FIELDS.contains(&path) => {
                    let search = &mut self.cpu_search;
                    if let Some(name) = cpu_picker_ui(ui, l.id, path, v, w, search) {
                        edits.push(Edit::Set(path, name.as_str().into()));
                    }
                }
                (None, _) if path == "clients.cpu" && colocated => {
                    // Co-located without a client CPU: fio runs on the OSDs' cores. Picking
                    // one states the cores fio is pinned to.
                    let search = &mut self.cpu_search;
                    let current = "the OSD nodes' cores";
                    if let Some(name) = cpu_picker_ui(ui, l.id, path, current, w, search) {
                        edits.push(Edit::Set(path, name.as_str().into()));
                    }
                }
                (None, _) if path == "clients.nic" && colocated => {
                    let mut v = String::new();
                    let r = ui
                        .add(
                            egui::TextEdit::singleline(&mut v)
                                .desired_width(w)
                                .hint_text("the OSD node's public link"),
                        )
                        .labelled_by(l.id);
                    if r.changed() && !v.trim().is_empty() {
                        edits.push(Edit::Set(path, v.as_str().into()));
                    }
                }
                (Some(toml::Value::String(v)), _) => {
                    let hint = match absent {
                        Absent::Text(h) => h,
                        _ => "",
                    };
                    let mut v = v.clone();
                    let r = ui
                        .add(
                            egui::TextEdit::singleline(&mut v)
                                .desired_width(w)
                                .hint_text(hint),
                        )
                        .labelled_by(l.id);
                    if r.changed() {
                        // Emptying a field that may be left out removes its key.
                        edits.push(if v.is_empty() && !hint.is_empty() {
                            Edit::Remove(path)
                        } else {
                            Edit::Set(path, v.as_str().into())
                        });
                    }
                }
                (None, Absent::Text(hint)) => {
                    let mut v = String::new();
                    let r = ui
                        .add(
                            egui::TextEdit::singleline(&mut v)
                                .desired_width(w)
                                .hint_text(hint),
                        )
                        .labelled_by(l.id);
                    if r.changed() && !v.trim().is_empty() {
                        edits.push(Edit::Set(path, v.as_str().into()));
                    }
                }
                (Some(other), _) => {
                    ui.weak(format!("a {} (edit it in the text)", other.type_str()));
                }
                (None, _) => {
                    ui.weak("not in the text");
                }
            }
            // Co-located with a CPU of their own (the cores fio is pinned to): offer to
            // share the OSDs' cores instead.
            if path == "clients.cpu" && colocated && toml_at(table, path).is_some() {
                let b = ui
                    .small_button("use the OSD cores")
                    .on_hover_text("fio shares the OSD nodes' cores: remove clients.cpu");
                if b.clicked() {
                    edits.push(Edit::Remove(path));
                }
            }
        });
        self.errors_ui(ui, lw, &[path]);
    }

    /// The node's memory in GiB (`cluster.node.memory_gib`): a number writes the key,
    /// an empty field removes it. `spec` checks it (> 0) and keeps it, but nothing in
    /// cephplan uses it (no performance term, no memory check), which the row says.
    fn memory_ui(
        &mut self,
        ui: &mut egui::Ui,
        lw: f32,
        table: &toml::Table,
        edits: &mut Vec<Edit>,
    ) {
        let in_text = match toml_at(table, MEMORY_PATH) {
            None => Ok(String::new()),
            Some(toml::Value::Integer(v)) => Ok(v.to_string()),
            Some(toml::Value::Float(v)) => Ok(v.to_string()),
            Some(other) => Err(other.type_str()),
        };
        let mut typo = None;
        ui.horizontal(|ui| {
            let l = label_ui(ui, lw, "memory per node");
            match in_text {
                Ok(in_text) => {
                    let mut v = self.memory_typed.clone().unwrap_or(in_text);
                    let r = ui
                        .add(
                            egui::TextEdit::singleline(&mut v)
                                .desired_width(70.0)
                                .hint_text("not stated"),
                        )
                        .labelled_by(l.id);
                    if r.changed() {
                        let t = v.trim();
                        if t.is_empty() {
                            edits.push(Edit::Remove(MEMORY_PATH));
                        } else if let Ok(i) = t.parse::<i64>() {
                            edits.push(Edit::Set(MEMORY_PATH, i.into()));
                        } else if let Some(x) = t.parse::<f64>().ok().filter(|x| x.is_finite()) {
                            edits.push(Edit::Set(MEMORY_PATH, x.into()));
                        }
                    }
                    let t = v.trim();
                    if !t.is_empty() && !t.parse::<f64>().is_ok_and(f64::is_finite) {
                        typo = Some(format!(
                            "`{t}` is not a number: type the GiB per node (such as 256), or \
                             empty the field to leave the memory out"
                        ));
                    }
                    self.memory_typed = r.has_focus().then_some(v);
                }
                Err(kind) => {
                    ui.weak(format!("a {kind} (edit it in the text)"));
                }
            }
            ui.label("GiB");
            ui.weak("recorded, not modelled").on_hover_text(
                "memory_gib is checked (> 0) and kept with the scenario, but the model does \
                 not use memory, and cephplan does not check it against osd_memory_target × \
                 OSDs per node",
            );
        });
        if let Some(e) = typo {
            ui.horizontal(|ui| {
                ui.add_space(lw + 8.0);
                ui.add(
                    egui::Label::new(egui::RichText::new(e).color(ui.visuals().error_fg_color))
                        .wrap(),
                );
            });
        }
        self.errors_ui(ui, lw, &[MEMORY_PATH]);
    }

    /// The WAL/DB device: none (WAL and DB on the data devices) or a catalogue drive,
    /// and how many per node.
    fn wal_ui(&mut self, ui: &mut egui::Ui, lw: f32, table: &toml::Table, edits: &mut Vec<Edit>) {
        const NONE: &str = "none (on the data devices)";
        let model = toml_at(table, "cluster.node.wal_device.model");
        ui.horizontal(|ui| {
            let l = label_ui(ui, lw, "WAL/DB device");
            let current = match (toml_at(table, "cluster.node.wal_device"), model) {
                (None, _) => NONE.to_owned(),
                (Some(_), Some(toml::Value::String(m))) => m.clone(),
                (Some(_), Some(_)) => "an inline drive (see the text)".to_owned(),
                (Some(_), None) => "no model".to_owned(),
            };
            let w = (ui.available_width() - 8.0).clamp(60.0, 220.0);
            let r = egui::ComboBox::from_id_salt("wal-device-picker")
                .selected_text(&current)
                .width(w)
                .show_ui(ui, |ui| {
                    if ui.selectable_label(current == NONE, NONE).clicked() {
                        edits.push(Edit::Remove("cluster.node.wal_device"));
                    }
                    for (name, d) in &catalogue().drive {
                        let text = format!(
                            "{name}: {} {}, {:.0} GB",
                            d.vendor,
                            d.model,
                            d.capacity.0 as f64 / 1e9
                        );
                        if ui.selectable_label(*name == current, text).clicked() {
                            edits.push(Edit::Set(
                                "cluster.node.wal_device.model",
                                name.as_str().into(),
                            ));
                            if toml_at(table, "cluster.node.wal_device.count").is_none() {
                                edits
                                    .push(Edit::Set("cluster.node.wal_device.count", int_value(1)));
                            }
                        }
                    }
                });
            r.response
                .on_hover_text(
                    "a faster device for BlueStore's WAL and RocksDB, shared by several OSDs",
                )
                .labelled_by(l.id);
        });
        if toml_at(table, "cluster.node.wal_device").is_some() {
            int_row_ui(
                ui,
                lw,
                table,
                "cluster.node.wal_device.count",
                "WAL/DB devices per node",
                edits,
            );
        }
        self.errors_ui(ui, lw, &WAL_PATHS);
    }

    /// Replicated (size) or erasure-coded (k + m); switching writes the other key.
    fn protection_ui(
        &mut self,
        ui: &mut egui::Ui,
        lw: f32,
        table: &toml::Table,
        edits: &mut Vec<Edit>,
    ) {
        let ec = toml_at(table, "pool.erasure").is_some();
        ui.horizontal(|ui| {
            label_ui(ui, lw, "protection");
            if ui.radio(!ec, "replicated").clicked() && ec {
                edits.push(Edit::Remove("pool.erasure"));
                edits.push(Edit::Set("pool.replicated", DEFAULT_REPLICAS.into()));
            }
            if ui.radio(ec, "erasure coded").clicked() && !ec {
                let mut profile = toml_edit::InlineTable::new();
                profile.insert("k", DEFAULT_EC.0.into());
                profile.insert("m", DEFAULT_EC.1.into());
                edits.push(Edit::Remove("pool.replicated"));
                edits.push(Edit::Set(
                    "pool.erasure",
                    toml_edit::Value::InlineTable(profile),
                ));
            }
        });
        let rows: &[Field] = if ec {
            &[
                ("pool.erasure.k", "data chunks (k)", Absent::Missing),
                ("pool.erasure.m", "coding chunks (m)", Absent::Missing),
            ]
        } else {
            &[("pool.replicated", "replicas", Absent::Missing)]
        };
        for &(path, label, _) in rows {
            int_row_ui(ui, lw, table, path, label, edits);
        }
        self.errors_ui(ui, lw, &PROTECTION_PATHS);
    }

    /// fio on the OSD nodes (`clients.colocated`): checked writes `true`, unchecked removes
    /// the key (its default is false).
    fn colocated_ui(
        &mut self,
        ui: &mut egui::Ui,
        lw: f32,
        table: &toml::Table,
        edits: &mut Vec<Edit>,
    ) {
        let path = "clients.colocated";
        let mut on = matches!(toml_at(table, path), Some(toml::Value::Boolean(true)));
        ui.horizontal(|ui| {
            ui.add_space(lw + ui.spacing().item_spacing.x);
            let r = ui
                .checkbox(&mut on, "clients co-located on the OSD nodes")
                .on_hover_text(
                    "fio runs on the OSD nodes (as in most published benchmarks): client \
                     nodes count the OSD nodes that run it, on their cores and public link",
                );
            if r.changed() {
                edits.push(if on {
                    Edit::Set(path, true.into())
                } else {
                    Edit::Remove(path)
                });
            }
        });
        self.errors_ui(ui, lw, &[path]);
    }

    /// The Ceph options the model reads (`[cluster.ceph_config]` and
    /// `cluster.rocksdb_build`):
    /// each is the release's default until chosen; "release default" removes the key again.
    fn ceph_options_ui(
        &mut self,
        ui: &mut egui::Ui,
        lw: f32,
        table: &toml::Table,
        edits: &mut Vec<Edit>,
    ) {
        const DEFAULT: &str = "release default";
        for (path, label, choices, hover) in CEPH_OPTIONS {
            let current = match toml_at(table, path) {
                None => DEFAULT.to_owned(),
                Some(toml::Value::Boolean(b)) => b.to_string(),
                Some(toml::Value::String(v)) => v.clone(),
                Some(other) => other.to_string(),
            };
            ui.horizontal(|ui| {
                let l = label_ui(ui, lw, label);
                let w = (ui.available_width() - 8.0).clamp(60.0, 220.0);
                let r = egui::ComboBox::from_id_salt(path)
                    .selected_text(&current)
                    .width(w)
                    .show_ui(ui, |ui| {
                        if ui.selectable_label(current == DEFAULT, DEFAULT).clicked() {
                            edits.push(Edit::Remove(path));
                        }
                        for &c in choices {
                            if ui.selectable_label(current == c, c).clicked() {
                                edits.push(Edit::Set(
                                    path,
                                    match c {
                                        "true" => true.into(),
                                        "false" => false.into(),
                                        other => other.into(),
                                    },
                                ));
                            }
                        }
                    });
                r.response.on_hover_text(hover).labelled_by(l.id);
            });
            self.errors_ui(ui, lw, &[path]);
        }
    }

    /// Takes the answer of the Open or Save dialog: the path goes into its field, then the
    /// file is opened or saved as by the button beside the field. When no dialog could
    /// open, the reason and its remedy stay under the file fields until the next dialog.
    fn poll_dialog(&mut self, cmds: &mut Vec<Command>) {
        let Some(d) = &self.dialog else { return };
        let Some(answer) = d.poll() else { return };
        let purpose = d.purpose();
        self.dialog = None;
        self.dialog_error = None;
        match (answer, purpose) {
            (Answer::Chosen(p), Purpose::OpenScenario) => {
                self.open_path = p.display().to_string();
                cmds.push(Command::OpenScenario(p));
            }
            (Answer::Chosen(p), Purpose::SaveScenario) => {
                self.save_path = p.display().to_string();
                cmds.push(Command::SaveScenario);
            }
            (Answer::NoneChosen { maybe_no_dialog }, _) => {
                cmds.push(Command::Status(if maybe_no_dialog {
                    "no file chosen (if no dialog appeared, this desktop has no XDG desktop \
                     portal: install zenity, or type the path)"
                        .into()
                } else {
                    "no file chosen".into()
                }))
            }
            (Answer::Unavailable(e), _) => {
                cmds.push(Command::Status(
                    "no file dialog on this desktop (the reason is on the Designer page)".into(),
                ));
                self.dialog_error = Some(e.to_string());
            }
        }
    }

    /// Shows the Open dialog ("Browse…"), starting in the folder of the open file.
    pub fn browse(&mut self, ctx: &egui::Context) {
        let near = self.path.clone();
        self.dialog = Some(file_dialog::ask(
            ctx,
            Purpose::OpenScenario,
            near.as_deref(),
        ));
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, recent: &[PathBuf], cmds: &mut Vec<Command>) {
        if self.state.is_none() {
            self.check();
        }
        if std::mem::take(&mut self.browse_on_first_frame) {
            self.browse(ui.ctx());
        }
        self.poll_dialog(cmds);
        let dialog_up = self.dialog.is_some();
        ui.horizontal(|ui| {
            let l = ui.label("scenario file");
            ui.add(
                egui::TextEdit::singleline(&mut self.open_path)
                    .desired_width(360.0)
                    .hint_text("models/examples/….toml"),
            )
            .labelled_by(l.id);
            let shortcut = ui.ctx().format_shortcut(&crate::gui::app::SHORTCUT_OPEN);
            if ui
                .button("Open")
                .on_hover_text(format!("open the file named here ({shortcut})"))
                .clicked()
            {
                cmds.push(Command::OpenScenario(PathBuf::from(self.open_path.trim())));
            }
            if ui
                .add_enabled(!dialog_up, egui::Button::new("Browse…"))
                .on_hover_text("choose the file to open in the system's file dialog")
                .clicked()
            {
                self.browse(ui.ctx());
            }
            ui.menu_button("Recent", |ui| {
                if recent.is_empty() {
                    ui.label("no recent files");
                }
                for p in recent {
                    if ui.button(p.display().to_string()).clicked() {
                        cmds.push(Command::OpenScenario(p.clone()));
                        ui.close();
                    }
                }
            });
        });
        ui.horizontal(|ui| {
            let l = ui.label("save as");
            ui.add(egui::TextEdit::singleline(&mut self.save_path).desired_width(360.0))
                .labelled_by(l.id);
            let shortcut = ui.ctx().format_shortcut(&crate::gui::app::SHORTCUT_SAVE);
            if ui
                .button("Save")
                .on_hover_text(format!("write the text to this file ({shortcut})"))
                .clicked()
            {
                cmds.push(Command::SaveScenario);
            }
            if ui
                .add_enabled(!dialog_up, egui::Button::new("Save as…"))
                .on_hover_text("choose where to save in the system's file dialog")
                .clicked()
            {
                let near = PathBuf::from(self.save_path.trim());
                self.dialog = Some(file_dialog::ask(
                    ui.ctx(),
                    Purpose::SaveScenario,
                    Some(&near),
                ));
            }
        });
        if let Some(e) = &self.dialog_error {
            ui.add(
                egui::Label::new(egui::RichText::new(e).color(ui.visuals().error_fg_color)).wrap(),
            );
        }
        // The validation summary sits in a box of fixed height (scrolling when long), so
        // the form and the text below do not jump as the message changes.
        let err = ui.visuals().error_fg_color;
        let summary_height = 4.0 * ui.text_style_height(&egui::TextStyle::Body);
        ui.allocate_ui(egui::vec2(ui.available_width(), summary_height), |ui| {
            ui.set_min_height(summary_height);
            egui::ScrollArea::vertical()
                .id_salt("designer-summary")
                .max_height(summary_height)
                .auto_shrink([false, true])
                .show(ui, |ui| {
                    let modified = if self.is_modified() {
                        " — unsaved edits (kept in the app's autosave; Save writes them to a file)"
                    } else {
                        ""
                    };
                    match (self.parse_error(), self.spec_error()) {
                        (Some(e), _) => {
                            ui.add(
                                egui::Label::new(
                                    egui::RichText::new(format!("not valid TOML: {e}")).color(err),
                                )
                                .wrap(),
                            );
                        }
                        (None, Some(e)) => {
                            ui.add(
                                egui::Label::new(
                                    egui::RichText::new(format!("not a valid scenario: {e}"))
                                        .color(err),
                                )
                                .wrap(),
                            );
                        }
                        (None, None) => {
                            ui.label(format!("valid scenario{modified}"));
                        }
                    }
                    match self.capacity() {
                        Some(c) => ui.strong(format!(
                            "capacity: raw {:.1} TB, usable {:.1} TB ({:.0} % efficiency, before \
                             Ceph's full ratio)",
                            c.raw_bytes / 1e12,
                            c.usable_bytes / 1e12,
                            c.efficiency * 100.0
                        )),
                        None => ui.label("capacity: – (the scenario does not validate)"),
                    };
                    if let Some(w) = self.write_path() {
                        ui.add(egui::Label::new(w).wrap());
                    }
                });
        });
        ui.columns(2, |cols| {
            cols[0].strong("main fields");
            egui::ScrollArea::vertical()
                .id_salt("designer-form")
                .show(&mut cols[0], |ui| self.form_ui(ui));
            let ui = &mut cols[1];
            let l = ui.label("scenario TOML");
            let mut text_area = egui::ScrollArea::vertical();
            if std::mem::take(&mut self.text_to_top) {
                text_area = text_area.vertical_scroll_offset(0.0);
            }
            text_area.show(ui, |ui| {
                let edit = ui
                    .add(
                        egui::TextEdit::multiline(&mut self.text)
                            .code_editor()
                            .desired_width(f32::INFINITY)
                            .desired_rows(30),
                    )
                    .labelled_by(l.id);
                if edit.changed() {
                    self.check();
                }
            });
        });
    }
}

/// One line on what the release and the stated options put on BlueStore's write path.
fn write_path_summary(s: &crate::spec::Scenario) -> String {
    let from = |stated: bool| {
        if stated {
            "stated"
        } else {
            "release default"
        }
    };
    let c = &s.ceph_config;
    format!(
        "Ceph {}: RocksDB {} ({}), bluefs_buffered_io {} ({}), allocation metadata {} ({})",
        s.ceph_release.trim(),
        s.rocksdb_build.as_str(),
        from(s.rocksdb_build_stated),
        c.bluefs_buffered_io,
        from(c.bluefs_buffered_io_stated),
        if c.allocation_from_file {
            "in a file (NCB)"
        } else {
            "in RocksDB per write"
        },
        from(c.allocation_from_file_stated),
    )
}

/// The part of a [`SpecError`] shown next to a field: what is wrong and the fix, without
/// the file and field (the position says those).
fn reason(e: &SpecError) -> String {
    use crate::spec::SpecErrorKind as K;
    match e.kind.as_ref() {
        K::Invalid { problem, fix } => format!("{problem}: {fix}"),
        K::Syntax { message, fix } => format!("{message}: {fix}"),
        K::UnknownName { closest, .. } if !closest.is_empty() => {
            format!("not in the catalogue; closest: {}", closest.join(", "))
        }
        _ => e.to_string(),
    }
}

/// The value at a dotted path of a TOML table.
/// The Ceph options in the form: path, label, choices besides the release default, hover.
const CEPH_OPTIONS: [(&str, &str, &[&str], &str); 5] = [
    (
        "cluster.ceph_config.bluefs_buffered_io",
        "BlueFS buffered I/O",
        &["true", "false"],
        "bluefs_buffered_io; false: BlueFS writes RocksDB's WAL with O_DIRECT, which makes every write batch's \
         commit dearer (the default of Luminous and older, 14.2.10-14.2.21, 15.2.2-15.2.12)",
    ),
    (
        "cluster.ceph_config.bluestore_allocation_from_file",
        "allocation file (NCB)",
        &["true", "false"],
        "bluestore_allocation_from_file; false: every write also commits its allocation to RocksDB (before Quincy, or a \
         rotational DB device)",
    ),
    (
        "cluster.ceph_config.allow_ec_optimizations",
        "EC optimisations",
        &["true", "false"],
        "allow_ec_optimizations; true: Tentacle's FastEC, partial EC reads and writes touch only the shards they \
         cover (an erasure-coded pool on Ceph 20 or later)",
    ),
    (
        "cluster.ceph_config.osd_memory_target",
        "OSD memory target",
        &["2G", "4G", "8G", "16G"],
        "osd_memory_target (default 4 GiB): BlueStore's autotuned cache; with the image size stated, the share of \
         onodes that stay cached, and every op on an uncached one loads it from RocksDB first",
    ),
    (
        "cluster.rocksdb_build",
        "RocksDB build",
        &["optimised", "unoptimised"],
        "unoptimised: the upstream Debian/Ubuntu packages of 15.2.x, 16.2.0-16.2.14, \
         17.2.0-17.2.7 and 18.2.0-18.2.2 built RocksDB without optimisation (ceph/ceph PR \
         #54891): every write op costs more CPU",
    ),
];

fn toml_at<'a>(t: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut keys = path.split('.');
    let mut v = t.get(keys.next()?)?;
    for k in keys {
        v = v.as_table()?.get(k)?;
    }
    Some(v)
}

/// A row's label, of fixed width so the widgets line up.
fn label_ui(ui: &mut egui::Ui, width: f32, label: &str) -> egui::Response {
    ui.add_sized([width, 20.0], egui::Label::new(label).truncate())
}

/// A number spinner labelled by `label`; the new value when it changed this frame.
/// A spinner over a count. A negative count in the text (which does not validate) is shown
/// as written beside a spinner from 0, not as a plausible 0.
fn int_ui(ui: &mut egui::Ui, label: egui::Id, written: i64) -> Option<u64> {
    let mut v = u64::try_from(written).unwrap_or(0);
    let r = ui
        .add(egui::DragValue::new(&mut v).range(0..=1_000_000))
        .labelled_by(label);
    if written < 0 {
        ui.colored_label(crate::gui::plot::WARN, format!("the text has {written}"));
    }
    r.changed().then_some(v)
}

/// fio's patterns a scenario takes (`spec::Pattern`).
const PATTERNS: [&str; 5] = ["randread", "randwrite", "randrw", "read", "write"];

/// A choice among [`PATTERNS`] (what the text has, when it is none of them, stays shown
/// until one is picked). Returns the pattern picked this frame.
fn pattern_ui(ui: &mut egui::Ui, label: egui::Id, current: &str) -> Option<&'static str> {
    let mut picked = None;
    egui::ComboBox::from_id_salt("workload.pattern")
        .selected_text(current)
        .show_ui(ui, |ui| {
            for p in PATTERNS {
                if ui.selectable_label(p == current, p).clicked() && p != current {
                    picked = Some(p);
                }
            }
        })
        .response
        .labelled_by(label);
    picked
}

/// A row over a whole number at `path`: a spinner when the text has an integer there,
/// otherwise what the text has instead.
fn int_row_ui(
    ui: &mut egui::Ui,
    lw: f32,
    table: &toml::Table,
    path: &'static str,
    label: &str,
    edits: &mut Vec<Edit>,
) {
    ui.horizontal(|ui| {
        let l = label_ui(ui, lw, label);
        match toml_at(table, path) {
            Some(toml::Value::Integer(v)) => {
                if let Some(v) = int_ui(ui, l.id, *v) {
                    edits.push(Edit::Set(path, int_value(v)));
                }
            }
            Some(other) => {
                ui.weak(format!("a {} (edit it in the text)", other.type_str()));
            }
            None => {
                ui.weak("not in the text");
            }
        }
    });
}

fn int_value(v: u64) -> toml_edit::Value {
    i64::try_from(v).unwrap_or(i64::MAX).into()
}

/// A catalogue CPU picker: the current name, and in its popup a search field (vendor,
/// model, name, architecture) over the catalogue's CPUs with their cores, threads and
/// clock. Returns the name picked this frame.
fn cpu_picker_ui(
    ui: &mut egui::Ui,
    label: egui::Id,
    path: &str,
    current: &str,
    width: f32,
    search: &mut String,
) -> Option<String> {
    let mut picked = None;
    let r = egui::ComboBox::from_id_salt(("cpu-picker", path))
        .selected_text(current)
        .width(width)
        .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
        .show_ui(ui, |ui| {
            let l = ui.label("search CPUs");
            ui.add(
                egui::TextEdit::singleline(search)
                    .hint_text("vendor, model or architecture")
                    .desired_width(260.0),
            )
            .labelled_by(l.id);
            let q = search.trim().to_lowercase();
            egui::ScrollArea::vertical()
                .max_height(260.0)
                .show(ui, |ui| {
                    for (name, e) in &catalogue().cpu {
                        let text = format!(
                            "{name}: {} {}, {} cores × {} threads, {} GHz, {}",
                            e.vendor,
                            e.model,
                            e.cores,
                            e.threads_per_core,
                            e.ghz,
                            e.arch.as_str()
                        );
                        if !q.is_empty() && !text.to_lowercase().contains(&q) {
                            continue;
                        }
                        if ui.selectable_label(name == current, text).clicked() {
                            picked = Some(name.clone());
                            ui.close();
                        }
                    }
                });
        });
    r.response.labelled_by(label);
    picked
}

/// `dir/name.toml` → `dir/name-edited.toml`: shipped files are not ours to overwrite.
pub fn suggested_save_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    if stem.ends_with("-edited") {
        return path.to_path_buf();
    }
    path.with_file_name(format!("{stem}-edited.toml"))
}

/// `text` with the cephplan marker on top (unless it has one), so that cephplan may replace
/// the file it is written to.
pub(crate) fn with_marker(text: &str) -> String {
    let head: String = text.chars().take(4096).collect();
    if head.contains(GENERATED_MARKER) {
        text.to_owned()
    } else {
        format!("# {GENERATED_MARKER} (edited in cephplan-gui)\n{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_refuses_foreign_file_then_saves_under_new_name_with_marker() {
        let dir = tempfile::tempdir().unwrap();
        let shipped = dir.path().join("example.toml");
        std::fs::write(&shipped, "schema_version = 1\n").unwrap();
        let mut page = DesignerPage::default();
        page.open(&shipped).unwrap();
        assert_eq!(page.parse_error(), None);
        assert!(page.save_path.ends_with("example-edited.toml"));
        page.save_path = shipped.display().to_string();
        let e = page.save().unwrap_err();
        assert!(e.contains("refusing to overwrite"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&shipped).unwrap(),
            "schema_version = 1\n"
        );
        page.save_path = dir.path().join("mine.toml").display().to_string();
        let p = page.save().unwrap();
        let saved = std::fs::read_to_string(p).unwrap();
        assert!(saved.starts_with("# generated by cephplan"));
        assert!(saved.ends_with("schema_version = 1\n"));
        // Saving again replaces our own file.
        page.save().unwrap();
        // A directory that does not exist is not created (a typo would hide the file).
        let missing = dir.path().join("nodir");
        page.save_path = missing.join("x.toml").display().to_string();
        let e = page.save().unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        assert!(!missing.exists());
    }

    fn example() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/examples/seed-000-ampere-altra-max.toml"
        ))
        .unwrap()
    }

    /// seed-000: 3 nodes × 24 × 15.36 TB (Micron 7500 PRO, models/catalogue.toml) =
    /// 1105.92 TB raw; 3 replicas → 368.64 TB usable.
    #[test]
    fn capacity_follows_form_edits_and_comments_survive() {
        let mut page = DesignerPage {
            text: example(),
            ..DesignerPage::default()
        };
        page.check();
        let c = page.capacity().unwrap();
        assert!(
            (c.raw_bytes / 1e12 - 1105.92).abs() < 0.01,
            "{}",
            c.raw_bytes
        );
        assert!((c.usable_bytes / 1e12 - 368.64).abs() < 0.01);
        page.set_value("cluster.nodes", "6").unwrap();
        let c = page.capacity().unwrap();
        assert!((c.raw_bytes / 1e12 - 2211.84).abs() < 0.01);
        assert!(page
            .text
            .contains("nodes = 6                                  # STATED"));
        page.set_value("workload.pattern", "\"randread\"").unwrap();
        assert!(page.text.contains("pattern = \"randread\""));
        // A key the text lacks is written: both protections now, which the scenario refuses.
        page.set_value("pool.erasure", "{ k = 4, m = 2 }").unwrap();
        assert!(page.text.contains("[pool]\nreplicated = 3 "));
        assert!(page.text.contains("\nerasure = { k = 4, m = 2 }\n"));
        assert!(page
            .field_error("pool")
            .unwrap()
            .contains("either replicated or erasure"));
        page.apply_edits(&[Edit::Remove("pool.erasure")]).unwrap();
        assert!(page.capacity().is_some());
        // The release sets the release factor and the inferred RocksDB build.
        page.set_value("cluster.ceph_release", "\"16.2.7\"")
            .unwrap();
        assert!(page.text.contains("ceph_release = \"16.2.7\""));
        let s = crate::spec::parse_scenario(&page.text, "x", &Catalogue::builtin()).unwrap();
        assert_eq!(s.rocksdb_build, crate::spec::RocksdbBuild::Unoptimised);
        let w = page.write_path().unwrap();
        assert!(
            w.contains("Ceph 16.2.7: RocksDB unoptimised (release default)")
                && w.contains("bluefs_buffered_io true (release default)")
                && w.contains("allocation metadata in RocksDB per write (release default)"),
            "{w}"
        );
    }

    #[test]
    fn an_invalid_value_is_flagged_at_its_field_with_the_reason() {
        let mut page = DesignerPage {
            text: example(),
            ..DesignerPage::default()
        };
        page.check();
        page.set_value("pool.replicated", "5").unwrap();
        let e = page.field_error("pool.replicated").unwrap();
        assert!(e.contains("replicated = 5 but there are 3 nodes"), "{e}");
        assert!(page.field_error("cluster.nodes").is_none());
        assert!(page.capacity().is_none());
        page.set_value("cluster.node.data_devices.model", "\"micron-7500\"")
            .unwrap();
        page.set_value("pool.replicated", "3").unwrap();
        let e = page.field_error("cluster.node.data_devices.model").unwrap();
        assert!(e.contains("closest"), "{e}");
    }

    #[test]
    fn invalid_toml_is_flagged() {
        let mut page = DesignerPage {
            text: "nodes = = 3".into(),
            ..DesignerPage::default()
        };
        page.check();
        assert!(page.parse_error().is_some());
    }
}

//! The app shell: persisted [`State`], page navigation, the app-wide [`Command`]s and the
//! one place they are applied ([`App::apply`]).
//!
//! Everything a user would expect to find again after a restart (page, recent files,
//! page inputs) lives in [`State`], which is serde with `#[serde(default)]` so that older
//! saved states still load. Runtime-only data (jobs, results) lives in the pages behind
//! `#[serde(skip)]`.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::ModelParams;

use super::pages::calibration::CalibrationPage;
use super::pages::compare::{ComparePage, Variant};
use super::pages::prediction::PredictionPage;
use super::pages::sizing::SizingPage;
use super::pages::validation::ValidationPage;
use super::pages::{designer::DesignerPage, network::NetworkPage};

/// The pages, in navigation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Page {
    #[default]
    Designer,
    Prediction,
    Compare,
    Sizing,
    Calibration,
    Validation,
    Network,
}

impl Page {
    pub const ALL: [Page; 7] = [
        Page::Designer,
        Page::Prediction,
        Page::Compare,
        Page::Sizing,
        Page::Calibration,
        Page::Validation,
        Page::Network,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Page::Designer => "Cluster designer",
            Page::Prediction => "Prediction",
            Page::Compare => "Compare",
            Page::Sizing => "Sizing",
            Page::Calibration => "Calibration",
            Page::Validation => "Validation",
            Page::Network => "Network",
        }
    }

    /// The name used on the command line (`--page`) and in screenshots.
    pub fn slug(self) -> &'static str {
        match self {
            Page::Designer => "designer",
            Page::Prediction => "prediction",
            Page::Compare => "compare",
            Page::Sizing => "sizing",
            Page::Calibration => "calibration",
            Page::Validation => "validation",
            Page::Network => "network",
        }
    }

    pub fn from_slug(s: &str) -> Option<Page> {
        Page::ALL.into_iter().find(|p| p.slug() == s)
    }
}

/// Which model parameters every page predicts with (one choice for the whole app).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelChoice {
    /// `models/default.toml` as built into the binary (what the CLI uses without `--model`).
    #[default]
    Shipped,
    /// A model file written by `cephplan calibrate` or the Calibration page.
    Fitted(PathBuf),
    /// A model refitted on validation runs (`cephplan validate --refit`).
    Refit(PathBuf),
}

impl ModelChoice {
    /// How results name the model ("model: fitted file runs/fitted.toml").
    pub fn label(&self) -> String {
        match self {
            ModelChoice::Shipped => "shipped default model (fitted to calibration-data/, not \
                                     to your hardware)"
                .into(),
            ModelChoice::Fitted(p) => format!("fitted model {}", p.display()),
            ModelChoice::Refit(p) => format!("validation refit {}", p.display()),
        }
    }

    /// A short name for tables ("shipped default", "fitted: fitted.toml").
    pub fn short_label(&self) -> String {
        let file = |p: &std::path::Path| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            )
        };
        match self {
            ModelChoice::Shipped => "shipped default".into(),
            ModelChoice::Fitted(p) => format!("fitted: {}", file(p)),
            ModelChoice::Refit(p) => format!("refit: {}", file(p)),
        }
    }

    /// The model file, None for the shipped one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            ModelChoice::Shipped => None,
            ModelChoice::Fitted(p) | ModelChoice::Refit(p) => Some(p),
        }
    }

    /// Loads the parameters (a file is read and validated now).
    pub fn load(&self) -> Result<ModelParams, String> {
        match self.path() {
            None => Ok(ModelParams::shipped_default()),
            Some(p) => ModelParams::load(p)
                .map_err(|e| format!("{e} (the app keeps predicting with the model it had)")),
        }
    }
}

/// The loaded model every page predicts with, and what it is.
#[derive(Debug, Clone)]
pub struct ActiveModel {
    pub choice: ModelChoice,
    pub params: Arc<ModelParams>,
}

impl Default for ActiveModel {
    fn default() -> Self {
        Self {
            choice: ModelChoice::Shipped,
            params: Arc::new(ModelParams::shipped_default()),
        }
    }
}

impl ActiveModel {
    pub fn label(&self) -> String {
        self.choice.label()
    }
}

/// How many recent files the app remembers.
pub const MAX_RECENT: usize = 8;

/// Everything that persists between launches.
#[derive(Default, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub page: Page,
    /// The model all pages predict with.
    pub model: ModelChoice,
    /// The path typed into the model selector's file field.
    pub model_path: String,
    /// Most recent first.
    pub recent_files: Vec<PathBuf>,
    pub designer: DesignerPage,
    pub network: NetworkPage,
    pub compare: ComparePage,
    pub prediction: PredictionPage,
    pub sizing: SizingPage,
    pub calibration: CalibrationPage,
    pub validation: ValidationPage,
}

/// App-wide actions. Pages push them; [`App::apply`] executes them after the frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    SetPage(Page),
    /// Load a scenario file into the designer (asks first when the designer has unsaved
    /// edits).
    OpenScenario(PathBuf),
    /// Load a scenario file into the designer, dropping its unsaved edits.
    DiscardAndOpen(PathBuf),
    /// Remember a file in the recent list.
    RememberFile(PathBuf),
    /// File a network variant on the Compare page.
    AddToCompare(Variant),
    /// Predict with this model on every page.
    UseModel(ModelChoice),
    /// Write the designer's text to its "save as" path (Save, Ctrl+S).
    SaveScenario,
    /// Predict the designer's scenario now, without the edit debounce, and show the
    /// Prediction page (Ctrl+Enter).
    Predict,
    /// Show a line in the status bar.
    Status(String),
}

/// The app's keyboard shortcuts (Ctrl on Linux and Windows, Cmd on macOS).
pub const SHORTCUT_OPEN: egui::KeyboardShortcut =
    egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, egui::Key::O);
pub const SHORTCUT_SAVE: egui::KeyboardShortcut =
    egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, egui::Key::S);
pub const SHORTCUT_PREDICT: egui::KeyboardShortcut =
    egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, egui::Key::Enter);

/// What waits for the user's answer about unsaved designer edits.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirm {
    /// Opening this file would replace the edits.
    Open(PathBuf),
    /// The window was asked to close.
    Quit,
}

pub struct App {
    pub state: State,
    commands: Vec<Command>,
    status: String,
    confirm: Option<Confirm>,
    /// The user chose to quit: let the next close request through.
    quitting: bool,
    model: ActiveModel,
}

impl App {
    /// The app over a saved state; a saved model choice whose file no longer loads falls
    /// back to the shipped model, and the status line says why.
    pub fn new(state: State) -> Self {
        let mut app = Self {
            state,
            commands: Vec::new(),
            status: String::new(),
            confirm: None,
            quitting: false,
            model: ActiveModel::default(),
        };
        let saved = std::mem::take(&mut app.state.model);
        if saved != ModelChoice::Shipped {
            app.apply(Command::UseModel(saved));
        }
        app
    }

    /// The model every page predicts with.
    pub fn model(&self) -> &ActiveModel {
        &self.model
    }

    /// The question about unsaved edits on screen, if any.
    pub fn confirming(&self) -> Option<&Confirm> {
        self.confirm.as_ref()
    }

    /// Queues a command for the end of the frame.
    pub fn push(&mut self, cmd: Command) {
        self.commands.push(cmd);
    }

    pub fn status(&self) -> &str {
        &self.status
    }

    /// Applies one command. The only place app-wide state changes.
    pub fn apply(&mut self, cmd: Command) {
        match cmd {
            Command::SetPage(p) => self.state.page = p,
            Command::OpenScenario(path) if self.state.designer.is_modified() => {
                self.status = format!(
                    "{} has unsaved edits: keep editing, or discard them to open {}",
                    self.state.designer.origin(),
                    path.display()
                );
                self.confirm = Some(Confirm::Open(path));
            }
            Command::OpenScenario(path) | Command::DiscardAndOpen(path) => {
                match self.state.designer.open(&path) {
                    Ok(()) => {
                        self.status = format!("opened {}", path.display());
                        self.apply(Command::RememberFile(path));
                    }
                    Err(e) => self.status = e,
                }
            }
            Command::RememberFile(path) => {
                self.state.recent_files.retain(|p| p != &path);
                self.state.recent_files.insert(0, path);
                self.state.recent_files.truncate(MAX_RECENT);
            }
            Command::AddToCompare(v) => {
                let asked = v.name.trim().to_owned();
                self.status = match self.state.compare.add(v) {
                    Ok(name) if name == asked => format!("\"{name}\" added to Compare"),
                    Ok(name) => format!(
                        "added to Compare as \"{name}\" (\"{asked}\" is taken; rename either \
                         on the Compare page)"
                    ),
                    Err(e) => e,
                };
            }
            Command::UseModel(choice) => match choice.load() {
                Ok(params) => {
                    self.status = format!("predicting with the {}", choice.label());
                    self.state.model = choice.clone();
                    self.model = ActiveModel {
                        choice,
                        params: Arc::new(params),
                    };
                }
                Err(e) => self.status = e,
            },
            Command::SaveScenario => match self.state.designer.save() {
                Ok(p) => {
                    self.status = match self.state.designer.spec_error() {
                        None => format!("saved {}", p.display()),
                        Some(_) => format!(
                            "saved {} (it does not validate yet: the form lists what to fix)",
                            p.display()
                        ),
                    };
                    self.apply(Command::RememberFile(p));
                }
                Err(e) => self.status = e,
            },
            Command::Predict => {
                self.state.prediction.predict_now();
                self.state.page = Page::Prediction;
                self.status = format!("predicting {}", self.state.designer.origin());
            }
            Command::Status(s) => self.status = s,
        }
    }

    /// Ctrl+O opens the file named in the designer's "scenario file" field, Ctrl+S saves
    /// to its "save as" field, Ctrl+Enter predicts; on every page. Consumed before the
    /// widgets run, so a focused text field does not also take the keys.
    fn shortcuts(&mut self, ctx: &egui::Context) {
        let [open, save, predict] = ctx.input_mut(|i| {
            [SHORTCUT_OPEN, SHORTCUT_SAVE, SHORTCUT_PREDICT].map(|k| i.consume_shortcut(&k))
        });
        if open {
            let path = PathBuf::from(self.state.designer.open_path.trim());
            self.commands.push(Command::OpenScenario(path));
        }
        if save {
            self.commands.push(Command::SaveScenario);
        }
        if predict {
            self.commands.push(Command::Predict);
        }
    }

    fn apply_queued(&mut self) {
        for cmd in std::mem::take(&mut self.commands) {
            self.apply(cmd);
        }
    }

    /// The one model selector of the app: the model in use, the shipped default, or a
    /// model file (fitted by Calibration or `cephplan calibrate`, or a validation refit).
    fn model_selector_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.label("model:");
            ui.strong(self.model.label());
            ui.separator();
            if ui
                .add_enabled(
                    self.model.choice != ModelChoice::Shipped,
                    egui::Button::new("Use the shipped model"),
                )
                .clicked()
            {
                self.commands.push(Command::UseModel(ModelChoice::Shipped));
            }
            let l = ui.label("model file");
            ui.add(
                egui::TextEdit::singleline(&mut self.state.model_path)
                    .desired_width(240.0)
                    .hint_text("fitted.toml"),
            )
            .labelled_by(l.id);
            let path = PathBuf::from(self.state.model_path.trim());
            if ui
                .add_enabled(
                    !path.as_os_str().is_empty(),
                    egui::Button::new("Use model file"),
                )
                .clicked()
            {
                self.commands
                    .push(Command::UseModel(ModelChoice::Fitted(path)));
            }
        });
    }

    /// Holds a close request while the designer has unsaved edits and asks instead.
    fn intercept_close(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested())
            && !self.quitting
            && self.state.designer.is_modified()
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.confirm = Some(Confirm::Quit);
        }
    }

    /// The modal question about unsaved edits (open another file, or quit).
    fn confirm_ui(&mut self, ctx: &egui::Context) {
        let Some(confirm) = self.confirm.clone() else {
            return;
        };
        let origin = self.state.designer.origin();
        let mut answer = None;
        egui::Modal::new(egui::Id::unique("unsaved-edits")).show(ctx, |ui| {
            ui.set_max_width(460.0);
            ui.heading("Unsaved edits");
            let what = match &confirm {
                Confirm::Open(p) => format!("Opening {} replaces them.", p.display()),
                Confirm::Quit => "The app keeps them in its autosave and shows them again \
                                  at the next start, but they are in no scenario file."
                    .to_owned(),
            };
            ui.add(
                egui::Label::new(format!(
                    "The scenario from {origin} has edits that are not saved to a file. {what} \
                     To keep them in a file, press Keep editing and Save under a new name."
                ))
                .wrap(),
            );
            ui.horizontal(|ui| {
                if ui.button("Keep editing").clicked() {
                    answer = Some(false);
                }
                let discard = match confirm {
                    Confirm::Open(_) => "Discard the edits and open",
                    Confirm::Quit => "Quit (edits stay in the autosave)",
                };
                if ui.button(discard).clicked() {
                    answer = Some(true);
                }
            });
        });
        match answer {
            Some(false) => {
                self.confirm = None;
                self.status = "kept the unsaved edits".into();
            }
            Some(true) => {
                self.confirm = None;
                match confirm {
                    Confirm::Open(p) => self.commands.push(Command::DiscardAndOpen(p)),
                    Confirm::Quit => {
                        self.quitting = true;
                        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                }
            }
            None => {}
        }
    }

    /// Draws the whole app into `ui` (the eframe root or a test harness).
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        self.intercept_close(ui.ctx());
        if self.confirm.is_none() {
            self.shortcuts(ui.ctx());
        }
        egui::Panel::top("nav").show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.strong("cephplan");
                ui.separator();
                for p in Page::ALL {
                    if ui
                        .selectable_label(self.state.page == p, p.title())
                        .clicked()
                    {
                        self.commands.push(Command::SetPage(p));
                    }
                }
            });
            self.model_selector_ui(ui);
        });
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(if self.status.is_empty() {
                    "ready"
                } else {
                    &self.status
                });
            });
        });
        // The prediction follows the designer's text on every page, so it is ready when
        // the user looks.
        let origin = self.state.designer.origin();
        self.state
            .prediction
            .follow(ui.ctx(), &self.state.designer.text, &origin, &self.model);
        egui::CentralPanel::default().show(ui, |ui| {
            let cmds = &mut self.commands;
            let page = self.state.page;
            // The designer and the network page lay out their own scrolling columns; the
            // others scroll as a whole, so that nothing is cut off in a small window.
            let scrolled = |ui: &mut egui::Ui, body: &mut dyn FnMut(&mut egui::Ui)| {
                egui::ScrollArea::both()
                    .id_salt(("page", page.slug()))
                    .auto_shrink([false, false])
                    .show(ui, |ui| body(ui));
            };
            let s = &mut self.state;
            match page {
                Page::Designer => s.designer.ui(ui, &s.recent_files, cmds),
                Page::Network => s.network.ui(ui, cmds),
                Page::Prediction => scrolled(ui, &mut |ui| s.prediction.ui(ui, cmds)),
                Page::Compare => scrolled(ui, &mut |ui| s.compare.ui(ui, &self.model, cmds)),
                Page::Sizing => scrolled(ui, &mut |ui| s.sizing.ui(ui, &self.model, cmds)),
                Page::Calibration => scrolled(ui, &mut |ui| s.calibration.ui(ui, cmds)),
                Page::Validation => scrolled(ui, &mut |ui| {
                    s.validation.ui(ui, &s.designer, &self.model, cmds)
                }),
            }
        });
        self.confirm_ui(ui.ctx());
        self.apply_queued();
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.ui_root(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        match serde_json::to_string(&self.state) {
            Ok(s) => storage.set_string(eframe::APP_KEY, s),
            Err(e) => self.status = format!("could not save the window state: {e}"),
        }
    }
}

/// Reads the state saved by [`eframe::App::save`]; a missing or unreadable state gives
/// the defaults (an old format must not stop the app from starting).
pub fn load_state(storage: Option<&dyn eframe::Storage>) -> State {
    storage
        .and_then(|s| s.get_string(eframe::APP_KEY))
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_slugs_round_trip() {
        for p in Page::ALL {
            assert_eq!(Page::from_slug(p.slug()), Some(p));
        }
        assert_eq!(Page::from_slug("nope"), None);
    }

    #[test]
    fn state_survives_json_and_tolerates_missing_fields() {
        let mut s = State {
            page: Page::Network,
            ..State::default()
        };
        s.recent_files.push("a.toml".into());
        let back: State = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.page, Page::Network);
        assert_eq!(back.recent_files, vec![PathBuf::from("a.toml")]);
        let partial: State = serde_json::from_str(r#"{"page":"compare"}"#).unwrap();
        assert_eq!(partial.page, Page::Compare);
    }

    #[test]
    fn recent_files_are_unique_most_recent_first_and_bounded() {
        let mut app = App::new(State::default());
        for i in 0..(MAX_RECENT + 3) {
            app.apply(Command::RememberFile(format!("{i}.toml").into()));
        }
        app.apply(Command::RememberFile("3.toml".into()));
        assert_eq!(app.state.recent_files.len(), MAX_RECENT);
        assert_eq!(app.state.recent_files[0], PathBuf::from("3.toml"));
        assert_eq!(
            app.state
                .recent_files
                .iter()
                .filter(|p| p.as_os_str() == "3.toml")
                .count(),
            1
        );
    }
}

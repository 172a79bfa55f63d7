//! The cephplan desktop app (feature `gui`): egui pages over the same library calls the
//! CLI makes, so both show the same numbers.
//!
//! Layout: [`app`] holds the persisted state, navigation and app-wide commands; [`job`]
//! runs library work on worker threads with progress and cancellation so the window never
//! freezes; [`file_dialog`] shows the system's Open and Save dialogs; [`plot`] draws curves and bars; [`scenario_edit`] edits a scenario's text keeping its
//! comments; [`pages`] has one module per page. Not here:
//! any modelling (the library computes, the app displays).

pub mod app;
pub mod file_dialog;
pub mod job;
pub mod pages;
pub mod plot;
pub mod scenario_edit;

pub use app::{App, Command, Page, State};

use pages::compare::Variant;

/// Launch options of the desktop binary.
#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    /// Page to show first (overrides the saved one).
    pub page: Option<Page>,
    /// Scenario to open first (overrides the saved text).
    pub scenario: Option<std::path::PathBuf>,
    /// Scenario to open when none is given and the saved state holds none (the first
    /// start); the autosaved text and its edits win over it.
    pub default_scenario: Option<std::path::PathBuf>,
    /// Dataset paths of the Calibration page (override the saved ones when not empty).
    pub calibration_data: Vec<std::path::PathBuf>,
    /// Leave-one-out on the Calibration page (overrides the saved choice).
    pub calibration_loo: Option<bool>,
    /// Start a fit on the Calibration page as soon as the window opens.
    pub fit_on_start: bool,
    /// Start the Calibration page's transfer evaluation as soon as the window opens.
    pub evaluate_on_start: bool,
    /// Start the Sizing page's design search as soon as the window opens.
    pub search_on_start: bool,
    /// Show the designer's Open dialog ("Browse…") as soon as the window opens.
    pub browse_on_start: bool,
    /// Turn on "Simulate tails" on the Prediction page (overrides the saved choice).
    pub tails: bool,
    /// Scenario files filed on the Compare page at the start, as "Add to Compare" on the
    /// Prediction page files them (after the saved variants).
    pub compare: Vec<std::path::PathBuf>,
    /// Inner size of the window in points (default 1280 × 800, or the size it last had);
    /// given, it wins over the saved geometry, and this run's geometry is not saved.
    pub window_size: Option<[f32; 2]>,
}

/// Refuses a path the user typed to save to whose directory does not exist: the library's
/// writers create their output directories, and a mistyped one would hide the file.
pub(crate) fn parent_must_exist(path: &std::path::Path) -> Result<(), String> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(format!(
            "the directory {} does not exist: create it first, or save into one that does",
            dir.display()
        )),
        _ => Ok(()),
    }
}

/// True when a display server is reachable through the environment (X11 or Wayland).
pub fn display_available() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Opens the window and runs until it is closed.
pub fn run(opts: LaunchOptions) -> eframe::Result<()> {
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("cephplan")
            .with_inner_size(opts.window_size.unwrap_or([1280.0, 800.0])),
        renderer: eframe::Renderer::Glow,
        // eframe restores the last window geometry over the builder's size; a size asked
        // for on the command line (screenshots, README) must win.
        persist_window: opts.window_size.is_none(),
        ..Default::default()
    };
    eframe::run_native(
        "cephplan",
        native,
        Box::new(move |cc| {
            let app = launch(app::load_state(cc.storage), &opts, &cc.egui_ctx);
            Ok(Box::new(app))
        }),
    )
}

/// The app as it starts: the saved state (the autosaved scenario text with its edits, the
/// page, the inputs of every page), then what the launch options override. A scenario named
/// on the command line replaces the saved text (asking first if it had unsaved edits, as
/// Open does); the default scenario is opened only when nothing was saved.
pub fn launch(state: State, opts: &LaunchOptions, ctx: &egui::Context) -> App {
    let mut app = App::new(state);
    if let Some(p) = &opts.scenario {
        app.apply(Command::OpenScenario(p.clone()));
    } else if app.state.designer.text.trim().is_empty() {
        if let Some(p) = &opts.default_scenario {
            app.apply(Command::OpenScenario(p.clone()));
        }
    } else {
        app.apply(Command::Status(format!(
            "restored {}{}",
            app.state.designer.origin(),
            if app.state.designer.is_modified() {
                " with its unsaved edits"
            } else {
                ""
            }
        )));
    }
    if let Some(page) = opts.page {
        app.apply(Command::SetPage(page));
    }
    let cal = &mut app.state.calibration;
    if !opts.calibration_data.is_empty() {
        cal.data_paths = opts
            .calibration_data
            .iter()
            .map(|p| p.display().to_string())
            .collect();
    }
    if let Some(loo) = opts.calibration_loo {
        cal.leave_one_out = loo;
    }
    if opts.tails {
        app.state.prediction.tails.enabled = true;
    }
    for p in &opts.compare {
        let origin = p.display().to_string();
        let filed = std::fs::read_to_string(p)
            .map_err(|e| format!("could not read {origin}: {e} (check the path)"))
            .and_then(|text| Variant::of_scenario(&text, &origin, app.model()));
        match filed {
            Ok(v) => app.apply(Command::AddToCompare(v)),
            Err(e) => app.apply(Command::Status(e)),
        }
    }
    if opts.fit_on_start {
        app.state.calibration.start_fit(ctx);
    } else if opts.evaluate_on_start {
        app.state.calibration.start_evaluation(ctx);
    }
    if opts.search_on_start {
        let model = app.model().clone();
        app.state.sizing.start(ctx, &model);
    }
    if opts.browse_on_start {
        app.state.designer.browse_on_first_frame = true;
    }
    app
}

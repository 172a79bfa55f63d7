//! Frame cost of the desktop app: one egui pass (layout, widgets, plots; no GPU) on the UI
//! thread. The UI thread must stay under a 60 Hz frame budget (16.7 ms) because all
//! solving happens on worker threads.
//!
//! 1. `prediction-63/editing`: the Prediction page with the 63-node / 630-OSD fixture
//!    (`tests/fixtures/large-63-nodes.toml`) on screen while a designer field is edited
//!    at typing pace: every 12th frame (5 edits a second at 60 Hz) the iodepth changes
//!    through `DesignerPage::set_value`, the call the form's field makes (the text is
//!    validated again on the UI thread; the prediction restarts, debounced, on a worker).
//!    Frames are paced in real time (one per 16.7 ms) so the worker runs as it would
//!    under a window; after the last edit the loop runs until the new prediction is on
//!    screen. Prints the median, p99 and worst frame, edit frames included.
//! 2. criterion: one settled frame of the Network and Compare pages.
//!
//! `cargo bench --features gui --bench gui_frame`

use std::time::{Duration, Instant};

use cephplan::gui::pages::compare::Variant;
use cephplan::gui::pages::network::NetworkInputs;
use cephplan::gui::{App, Command, Page, State};
use criterion::Criterion;
use egui_kittest::Harness;

const FRAME: Duration = Duration::from_micros(16_667);

fn harness(app: App) -> Harness<'static, App> {
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_step_dt(FRAME.as_secs_f32())
        .build_ui_state(|ui, app: &mut App| app.ui_root(ui), app)
}

/// Steps (paced in real time) until `done` or 120 s.
fn step_until(h: &mut Harness<'static, App>, what: &str, done: impl Fn(&App) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done(h.state()) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        h.step();
        std::thread::sleep(FRAME);
    }
}

fn settled(page: Page) -> Harness<'static, App> {
    let mut app = App::new(State {
        page,
        ..State::default()
    });
    for name in ["a", "b"] {
        app.apply(Command::AddToCompare(Variant {
            name: name.into(),
            inputs: NetworkInputs::default(),
            ..Variant::default()
        }));
    }
    let mut h = harness(app);
    // As before: up to 30 s for the solutions (the page is measured as it is then).
    let deadline = Instant::now() + Duration::from_secs(30);
    while (h.state().state.network.is_busy() || h.state().state.compare.is_busy())
        && Instant::now() < deadline
    {
        h.step();
        std::thread::sleep(FRAME);
    }
    h
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Scenario 1 (see the module doc): per-frame wall time on the UI thread.
fn prediction_63_while_editing() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/large-63-nodes.toml"
    );
    let mut app = App::new(State {
        page: Page::Prediction,
        ..State::default()
    });
    app.apply(Command::OpenScenario(fixture.into()));
    let mut h = harness(app);
    step_until(&mut h, "the first 63-node prediction", |a| {
        a.state.prediction.result_is_current() && !a.state.prediction.is_busy()
    });
    let first_depth = h.state().state.prediction.result().map(|p| p.iodepth);
    assert_eq!(first_depth, Some(64), "the fixture's iodepth is on screen");

    let edits = 60;
    let mut frames = Vec::new();
    let mut edit_frames = Vec::new();
    let mut frame = 0_u32;
    let mut made = 0;
    loop {
        let edit = frame.is_multiple_of(12) && made < edits;
        let t = Instant::now();
        if edit {
            // 64 → 63 → 62 → … : every edit is a new scenario text.
            let depth = (64 - made).to_string();
            h.state_mut()
                .state
                .designer
                .set_value("workload.iodepth", &depth)
                .unwrap();
            made += 1;
        }
        h.step();
        let took = t.elapsed();
        frames.push(took);
        if edit {
            edit_frames.push(took);
        }
        frame += 1;
        if made == edits && h.state().state.prediction.result_is_current() {
            break;
        }
        assert!(
            frame < 60 * 120,
            "the last edit's prediction did not arrive in 2 minutes"
        );
        std::thread::sleep(FRAME.saturating_sub(took));
    }
    let p = h.state().state.prediction.result().expect("a prediction");
    assert_eq!(
        p.iodepth,
        64 - edits + 1,
        "the last edit's prediction is on screen"
    );
    frames.sort();
    edit_frames.sort();
    println!(
        "frame/prediction-63/editing: {} frames ({} with an edit): median {}, p99 {}, worst {}; \
         edit frames: median {}, worst {} (budget 16.67 ms)",
        frames.len(),
        edit_frames.len(),
        ms(percentile(&frames, 0.5)),
        ms(percentile(&frames, 0.99)),
        ms(*frames.last().expect("frames")),
        ms(percentile(&edit_frames, 0.5)),
        ms(*edit_frames.last().expect("edit frames")),
    );
}

fn settled_frames(c: &mut Criterion) {
    for page in [Page::Network, Page::Compare] {
        let mut h = settled(page);
        c.bench_function(&format!("frame/{}", page.slug()), |b| b.iter(|| h.step()));
    }
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter
        .as_deref()
        .is_none_or(|f| "frame/prediction-63/editing".contains(f))
    {
        prediction_63_while_editing();
    }
    let mut c = Criterion::default().configure_from_args();
    settled_frames(&mut c);
    c.final_summary();
}

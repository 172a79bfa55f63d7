//! Frame cost of the desktop app: one egui pass (layout, widgets, plots; no GPU) of the
//! Network and Compare pages with their solutions on screen. The UI thread must stay well
//! under a 60 Hz frame budget (16.7 ms) because all solving happens on worker threads.
//!
//! `cargo bench --features gui --bench gui_frame`

use std::time::{Duration, Instant};

use cephplan::gui::pages::compare::Variant;
use cephplan::gui::pages::network::NetworkInputs;
use cephplan::gui::{App, Command, Page, State};
use criterion::{criterion_group, criterion_main, Criterion};
use egui_kittest::Harness;

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
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, app: &mut App| app.ui_root(ui), app);
    let deadline = Instant::now() + Duration::from_secs(30);
    while (h.state().state.network.is_busy() || h.state().state.compare.is_busy())
        && Instant::now() < deadline
    {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    h
}

fn frames(c: &mut Criterion) {
    for page in [Page::Network, Page::Compare] {
        let mut h = settled(page);
        c.bench_function(&format!("frame/{}", page.slug()), |b| b.iter(|| h.step()));
    }
}

criterion_group!(benches, frames);
criterion_main!(benches);

//! The system's Open and Save dialogs (rfd: the XDG desktop portal on Linux, with zenity
//! as its fallback), run off the UI thread so the window keeps drawing while one is up.
//! A dialog only fills in a path: the typed-path fields stay, and opening or saving goes
//! through the same commands as the buttons next to them. Not here: what is opened or
//! saved (the pages decide).
//!
//! [`FakeDialog`] is the test seam, like [`crate::gui::job::JobGate`]: placed in the egui
//! context, it answers every dialog instead of the system's (kittest cannot click in a
//! native window).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;

/// What the dialog is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Pick an existing scenario file.
    OpenScenario,
    /// Name the file a scenario is saved to.
    SaveScenario,
}

type Answer = dyn Fn(Purpose) -> Option<PathBuf> + Send + Sync;

/// Answers dialogs in place of the system's (tests only; production installs none).
#[derive(Clone)]
pub struct FakeDialog(Arc<Answer>);

impl FakeDialog {
    fn id() -> egui::Id {
        egui::Id::unique("cephplan-fake-file-dialog")
    }

    /// Every dialog asked on `ctx` from now on gets `answer(purpose)` (`None`: cancelled).
    pub fn install(
        ctx: &egui::Context,
        answer: impl Fn(Purpose) -> Option<PathBuf> + Send + Sync + 'static,
    ) {
        ctx.data_mut(|d| d.insert_temp(Self::id(), Self(Arc::new(answer))));
    }

    fn of(ctx: &egui::Context) -> Option<Self> {
        ctx.data(|d| d.get_temp::<Self>(Self::id()))
    }
}

/// A dialog that is up (or has just been answered).
pub struct Pending {
    purpose: Purpose,
    rx: Receiver<Option<PathBuf>>,
}

impl Pending {
    pub fn purpose(&self) -> Purpose {
        self.purpose
    }

    /// `None` while the dialog is up; then the chosen path, or `Some(None)` when the user
    /// cancelled (or no dialog could be shown on this desktop).
    pub fn poll(&self) -> Option<Option<PathBuf>> {
        match self.rx.try_recv() {
            Ok(answer) => Some(answer),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(None),
        }
    }
}

/// Shows the dialog for `purpose`, starting in the folder of `near` (a file path) and, to
/// save, suggesting its file name. Wakes the UI when answered.
pub fn ask(ctx: &egui::Context, purpose: Purpose, near: Option<&Path>) -> Pending {
    let (tx, rx) = channel();
    let ctx = ctx.clone();
    let fake = FakeDialog::of(&ctx);
    let dir = near
        .and_then(Path::parent)
        .filter(|d| d.is_dir())
        .map(Path::to_path_buf);
    let name = near
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    std::thread::Builder::new()
        .name("cephplan-file-dialog".into())
        .spawn(move || {
            let answer = match fake {
                Some(FakeDialog(f)) => f(purpose),
                None => system_dialog(purpose, dir, name),
            };
            // The UI may have gone (window closed): nobody to tell.
            let _ = tx.send(answer);
            ctx.request_repaint();
        })
        .expect("the OS refused to start a thread");
    Pending { purpose, rx }
}

fn system_dialog(purpose: Purpose, dir: Option<PathBuf>, name: Option<String>) -> Option<PathBuf> {
    let mut d = rfd::AsyncFileDialog::new().add_filter("scenario (TOML)", &["toml"]);
    if let Some(dir) = dir {
        d = d.set_directory(dir);
    }
    let handle = match purpose {
        Purpose::OpenScenario => pollster::block_on(d.set_title("Open a scenario").pick_file()),
        Purpose::SaveScenario => {
            if let Some(n) = name {
                d = d.set_file_name(n);
            }
            pollster::block_on(d.set_title("Save the scenario as").save_file())
        }
    };
    handle.map(|h| h.path().to_path_buf())
}

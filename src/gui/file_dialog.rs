//! The system's Open and Save dialogs (rfd: the XDG desktop portal on Linux, with zenity
//! as its fallback), run off the UI thread so the window keeps drawing while one is up.
//! A dialog only fills in a path: the typed-path fields stay, and opening or saving goes
//! through the same commands as the buttons next to them. Not here: what is opened or
//! saved (the pages decide).
//!
//! rfd reports neither a missing portal nor a missing zenity (it logs them and returns no
//! path, as for a cancel), so before asking it [`DialogEnv`] looks for what it needs: a
//! D-Bus session bus for the portal, or `zenity` on `PATH`. With neither, the answer is
//! [`NoFileDialog`], which names the remedy, instead of a dialog that silently never opens.
//!
//! [`FakeDialog`] is the test seam, like [`crate::gui::job::JobGate`]: placed in the egui
//! context, it answers every dialog instead of the system's (kittest cannot click in a
//! native window); [`DialogEnv::install`] likewise stands in for the process environment.

use std::ffi::OsString;
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

type AnswerFn = dyn Fn(Purpose) -> Option<PathBuf> + Send + Sync;

/// Answers dialogs in place of the system's (tests only; production installs none).
#[derive(Clone)]
pub struct FakeDialog(Arc<AnswerFn>);

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

/// Why no file dialog can open on this desktop, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no file dialog can open here: {why}; install zenity (Debian/Ubuntu: apt-get install \
     zenity) or run a desktop session with xdg-desktop-portal, or type the path in the field"
)]
pub struct NoFileDialog {
    why: String,
}

/// What rfd needs from the environment to show a dialog on Linux: a D-Bus session bus
/// (where the XDG desktop portal answers) or the `zenity` program (its fallback).
#[derive(Debug, Clone, Default)]
pub struct DialogEnv {
    /// `PATH`, where `zenity` is looked for.
    pub path: Option<OsString>,
    /// `DBUS_SESSION_BUS_ADDRESS`.
    pub dbus_session_bus_address: Option<OsString>,
    /// `XDG_RUNTIME_DIR`: libdbus's default session bus is its `bus` socket.
    pub xdg_runtime_dir: Option<PathBuf>,
}

impl DialogEnv {
    fn id() -> egui::Id {
        egui::Id::unique("cephplan-file-dialog-env")
    }

    /// The environment of this process.
    pub fn of_process() -> Self {
        Self {
            path: std::env::var_os("PATH"),
            dbus_session_bus_address: std::env::var_os("DBUS_SESSION_BUS_ADDRESS"),
            xdg_runtime_dir: std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        }
    }

    /// Dialogs asked on `ctx` from now on look for their backend in `env` instead of the
    /// process environment (tests only).
    pub fn install(ctx: &egui::Context, env: Self) {
        ctx.data_mut(|d| d.insert_temp(Self::id(), env));
    }

    fn of(ctx: &egui::Context) -> Self {
        ctx.data(|d| d.get_temp::<Self>(Self::id()))
            .unwrap_or_else(Self::of_process)
    }

    /// True when an executable `zenity` is in a `PATH` directory.
    pub fn has_zenity(&self) -> bool {
        #[cfg(unix)]
        fn executable(m: &std::fs::Metadata) -> bool {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        }
        #[cfg(not(unix))]
        fn executable(m: &std::fs::Metadata) -> bool {
            m.is_file()
        }
        self.path.as_deref().is_some_and(|p| {
            std::env::split_paths(p)
                .any(|d| std::fs::metadata(d.join("zenity")).is_ok_and(|m| executable(&m)))
        })
    }

    /// True when there is a D-Bus session bus to ask the portal on.
    pub fn has_session_bus(&self) -> bool {
        self.dbus_session_bus_address
            .as_deref()
            .is_some_and(|a| !a.is_empty())
            || self
                .xdg_runtime_dir
                .as_deref()
                .is_some_and(|d| d.join("bus").exists())
    }

    /// Why no dialog can open, when neither backend is there (Linux and the BSDs; elsewhere
    /// rfd uses the system's own dialogs).
    pub fn missing(&self) -> Option<NoFileDialog> {
        let xdg = cfg!(any(
            target_os = "linux",
            target_os = "freebsd",
            target_os = "dragonfly",
            target_os = "netbsd",
            target_os = "openbsd"
        ));
        (xdg && !self.has_zenity() && !self.has_session_bus()).then(|| NoFileDialog {
            why: "there is no D-Bus session bus for the XDG desktop portal \
                  (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus) \
                  and no zenity on PATH"
                .into(),
        })
    }
}

/// How a dialog ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The user chose this path.
    Chosen(PathBuf),
    /// No path: cancelled. `maybe_no_dialog`: without zenity, a session bus with no portal
    /// on it ends the same way (rfd cannot tell the two apart).
    NoneChosen { maybe_no_dialog: bool },
    /// No dialog could open (nothing was shown).
    Unavailable(NoFileDialog),
}

/// A dialog that is up (or has just been answered).
pub struct Pending {
    purpose: Purpose,
    rx: Receiver<Answer>,
}

impl Pending {
    pub fn purpose(&self) -> Purpose {
        self.purpose
    }

    /// `None` while the dialog is up; then how it ended.
    pub fn poll(&self) -> Option<Answer> {
        match self.rx.try_recv() {
            Ok(answer) => Some(answer),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Answer::NoneChosen {
                maybe_no_dialog: false,
            }),
        }
    }
}

/// Shows the dialog for `purpose`, starting in the folder of `near` (a file path) and, to
/// save, suggesting its file name. Wakes the UI when answered.
pub fn ask(ctx: &egui::Context, purpose: Purpose, near: Option<&Path>) -> Pending {
    let (tx, rx) = channel();
    let ctx = ctx.clone();
    let fake = FakeDialog::of(&ctx);
    let env = DialogEnv::of(&ctx);
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
            let answer = match (fake, env.missing()) {
                (Some(FakeDialog(f)), _) => f(purpose).map_or(
                    Answer::NoneChosen {
                        maybe_no_dialog: false,
                    },
                    Answer::Chosen,
                ),
                (None, Some(e)) => Answer::Unavailable(e),
                (None, None) => system_dialog(purpose, dir, name).map_or(
                    Answer::NoneChosen {
                        maybe_no_dialog: !env.has_zenity(),
                    },
                    Answer::Chosen,
                ),
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
    let start = dir.clone();
    if let Some(dir) = dir {
        d = d.set_directory(dir);
    }
    let handle = match purpose {
        Purpose::OpenScenario => {
            // rfd's zenity fallback ignores the starting folder but passes the file name as
            // `--filename`, where a folder ending in `/` opens that folder; the portal reads
            // no file name when opening.
            if let Some(dir) = start.and_then(|d| std::path::absolute(d).ok()) {
                d = d.set_file_name(format!("{}/", dir.display()));
            }
            pollster::block_on(d.set_title("Open a scenario").pick_file())
        }
        Purpose::SaveScenario => {
            if let Some(n) = name {
                d = d.set_file_name(n);
            }
            pollster::block_on(d.set_title("Save the scenario as").save_file())
        }
    };
    handle.map(|h| h.path().to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn without_a_session_bus_or_zenity_no_dialog_can_open_and_the_reason_says_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let bare = DialogEnv {
            path: Some(dir.path().into()),
            dbus_session_bus_address: None,
            xdg_runtime_dir: Some(dir.path().into()),
        };
        let e = bare.missing().unwrap().to_string();
        assert!(
            e.contains("no zenity on PATH") && e.contains("apt-get install zenity"),
            "{e}"
        );
        // A bus address, a bus socket in the runtime dir, or an executable zenity: rfd has
        // a backend to try.
        let with_address = DialogEnv {
            dbus_session_bus_address: Some("unix:path=/run/user/1000/bus".into()),
            ..bare.clone()
        };
        assert_eq!(with_address.missing(), None);
        std::fs::write(dir.path().join("bus"), "").unwrap();
        assert_eq!(bare.missing(), None);
        std::fs::remove_file(dir.path().join("bus")).unwrap();
        let zenity = dir.path().join("zenity");
        std::fs::write(&zenity, "#!/bin/sh\n").unwrap();
        // Not executable: not a program the fallback can run.
        assert!(!bare.has_zenity());
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&zenity, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(bare.has_zenity());
        assert_eq!(bare.missing(), None);
    }
}

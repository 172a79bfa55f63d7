//! Cluster designer page: open, edit and save a scenario TOML file.
//!
//! Saving goes through [`crate::io::write_atomic_owned`], so a file that cephplan did not
//! create (such as a shipped example) is never overwritten: save under a new name. Not
//! here: the meaning of the fields (that is `spec`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::gui::app::Command;
use crate::io::GENERATED_MARKER;

#[derive(Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DesignerPage {
    /// The file the text came from (or was last saved to).
    pub path: Option<PathBuf>,
    /// Where "Save" writes.
    pub save_path: String,
    /// The path typed into the "Open" field.
    pub open_path: String,
    /// The scenario text being edited.
    pub text: String,
    #[serde(skip)]
    parse_error: Option<String>,
    #[serde(skip)]
    checked: bool,
}

impl DesignerPage {
    /// Loads a scenario file into the editor.
    pub fn open(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        self.text = text;
        self.path = Some(path.to_path_buf());
        self.open_path = path.display().to_string();
        self.save_path = suggested_save_path(path).display().to_string();
        self.check();
        Ok(())
    }

    /// Writes the text to `save_path`, adding the cephplan marker when it is missing.
    pub fn save(&mut self) -> Result<PathBuf, String> {
        let path = PathBuf::from(self.save_path.trim());
        if path.as_os_str().is_empty() {
            return Err("type a file name to save to".into());
        }
        let contents = with_marker(&self.text);
        crate::io::write_atomic_owned(&path, contents.as_bytes()).map_err(|e| e.to_string())?;
        self.text = contents;
        self.path = Some(path.clone());
        Ok(path)
    }

    pub fn parse_error(&self) -> Option<&str> {
        self.parse_error.as_deref()
    }

    fn check(&mut self) {
        self.checked = true;
        self.parse_error = toml::from_str::<toml::Table>(&self.text)
            .err()
            .map(|e| e.to_string());
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, recent: &[PathBuf], cmds: &mut Vec<Command>) {
        if !self.checked {
            self.check();
        }
        ui.horizontal(|ui| {
            let l = ui.label("scenario file");
            ui.add(
                egui::TextEdit::singleline(&mut self.open_path)
                    .desired_width(360.0)
                    .hint_text("models/examples/….toml"),
            )
            .labelled_by(l.id);
            if ui.button("Open").clicked() {
                cmds.push(Command::OpenScenario(PathBuf::from(self.open_path.trim())));
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
            if ui.button("Save").clicked() {
                match self.save() {
                    Ok(p) => {
                        cmds.push(Command::Status(format!("saved {}", p.display())));
                        cmds.push(Command::RememberFile(p));
                    }
                    Err(e) => cmds.push(Command::Status(e)),
                }
            }
        });
        match &self.parse_error {
            Some(e) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("not valid TOML: {e}"));
            }
            None => {
                ui.label("valid TOML");
            }
        }
        let l = ui.label("scenario TOML");
        egui::ScrollArea::vertical().show(ui, |ui| {
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
    }
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

fn with_marker(text: &str) -> String {
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

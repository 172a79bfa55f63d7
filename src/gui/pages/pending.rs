//! Placeholder text for a page whose library API is not in this build yet: it says which
//! API is missing instead of showing made-up numbers.

pub fn ui(ui: &mut egui::Ui, page: &str, needs: &str) {
    ui.heading(page);
    ui.label(format!(
        "This page needs {needs}, which this build of cephplan does not contain yet. \
         The Network page solves generic queueing networks in the meantime."
    ));
}

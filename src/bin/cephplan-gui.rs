//! The cephplan desktop app (built with `--features gui`).

fn main() {}

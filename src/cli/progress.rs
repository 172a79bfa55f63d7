//! Adapts the library's `Progress` trait to an indicatif progress bar on stderr, with a
//! cancellation flag that a Ctrl-C handler can set.

use cephplan::progress::{CancelToken, Progress};
use indicatif::{ProgressBar, ProgressStyle};

pub struct BarProgress {
    bar: ProgressBar,
    pub cancel: CancelToken,
}

impl BarProgress {
    pub fn new() -> Self {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {pos}/{len} (ETA {eta}) {msg}",
            )
            .expect("valid template"),
        );
        Self {
            bar,
            cancel: CancelToken::new(),
        }
    }

    /// A bar whose cancellation flag is set by Ctrl-C (SIGINT/SIGTERM): long library work
    /// then stops at its next check and returns what it has. A process has one handler;
    /// the first bar created this way keeps it.
    pub fn with_ctrl_c() -> Self {
        let p = Self::new();
        let cancel = p.cancel.clone();
        let _ = ctrlc::set_handler(move || cancel.cancel());
        p
    }
}

impl Progress for BarProgress {
    fn start(&self, total: u64, what: &str) {
        self.bar.set_length(total);
        self.bar.set_message(what.to_string());
        self.bar
            .enable_steady_tick(std::time::Duration::from_millis(200));
    }
    fn advance(&self, n: u64) {
        self.bar.inc(n);
    }
    fn message(&self, msg: &str) {
        self.bar.set_message(msg.to_string());
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
    fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

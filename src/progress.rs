//! Progress reporting and cancellation for long work (fits, sweeps, simulations,
//! validation runs).
//!
//! The library reports through the [`Progress`] trait and never draws anything itself: the
//! CLI adapts it to a progress bar, the GUI to a channel read by the UI thread. Cancellation
//! is cooperative: long loops call [`Progress::is_cancelled`] between units of work and stop
//! with a partial result or a `Cancelled` error of their own module.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Receives progress from long-running library work. Implementations must be cheap:
/// `advance` may be called thousands of times per second.
pub trait Progress: Send + Sync {
    /// Announces the total number of work units (may be called again if the total changes).
    fn start(&self, _total: u64, _what: &str) {}
    /// Reports that `n` more units are done.
    fn advance(&self, _n: u64) {}
    /// A short human-readable status line (e.g. "point 3 of 8: iodepth=16").
    fn message(&self, _msg: &str) {}
    /// All work is finished (successfully or not).
    fn finish(&self) {}
    /// True once the user asked to stop; work should end at the next safe point.
    fn is_cancelled(&self) -> bool {
        false
    }
}

/// A [`Progress`] that ignores everything and is never cancelled.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// A shareable cancellation flag: clone it into the worker, call [`CancelToken::cancel`]
/// from the UI or a signal handler.
#[derive(Debug, Default, Clone)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl Progress for CancelToken {
    fn is_cancelled(&self) -> bool {
        CancelToken::is_cancelled(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_token_is_shared_between_clones() {
        let a = CancelToken::new();
        let b = a.clone();
        assert!(!Progress::is_cancelled(&b));
        a.cancel();
        assert!(Progress::is_cancelled(&b));
    }
}

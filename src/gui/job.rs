//! Background jobs for the app: run library work on a worker thread, stream its progress
//! to the UI thread through a channel, cancel it cooperatively.
//!
//! The UI thread never blocks: it calls [`Job::poll`] once per frame, which drains the
//! progress messages and, once the worker has ended, hands back its result. The worker
//! sees a [`crate::progress::Progress`] ([`ChannelProgress`]) that forwards every report
//! and asks egui for a repaint, so progress bars move without user input. Not here:
//! what the work is (pages decide) and drawing (see [`Job::progress_ui`]). Dropping a
//! [`Job`] cancels it.
//!
//! [`JobGate`] is the test seam: a gate placed in the egui context holds every job started
//! on that context before its work begins, until the gate opens or the job is cancelled, so
//! an interaction test can press Cancel on a job that is certainly still running, however
//! fast the work would be.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::progress::{CancelToken, Progress};

/// One progress report from a worker.
#[derive(Debug, Clone, PartialEq)]
pub enum JobEvent {
    Start { total: u64, what: String },
    Advance(u64),
    Message(String),
    Finish,
}

/// The [`Progress`] a worker receives: forwards reports over a channel and wakes the UI.
pub struct ChannelProgress {
    tx: Sender<JobEvent>,
    cancel: CancelToken,
    ctx: egui::Context,
}

impl ChannelProgress {
    fn send(&self, ev: JobEvent) {
        // The receiver is gone only if the page dropped the job; nothing left to tell.
        let _ = self.tx.send(ev);
        self.ctx.request_repaint();
    }
}

impl Progress for ChannelProgress {
    fn start(&self, total: u64, what: &str) {
        self.send(JobEvent::Start {
            total,
            what: what.to_owned(),
        });
    }
    fn advance(&self, n: u64) {
        self.send(JobEvent::Advance(n));
    }
    fn message(&self, msg: &str) {
        self.send(JobEvent::Message(msg.to_owned()));
    }
    fn finish(&self) {
        self.send(JobEvent::Finish);
    }
    fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// Holds the jobs of one egui context before their work starts (see the module docs).
/// Production code never installs one; a test does with [`JobGate::install`].
#[derive(Clone, Default)]
pub struct JobGate(Arc<(Mutex<bool>, Condvar)>);

impl JobGate {
    fn id() -> egui::Id {
        egui::Id::unique("cephplan-job-gate")
    }

    /// A closed gate (install it with [`JobGate::install`]).
    pub fn closed() -> Self {
        Self::default()
    }

    /// Every job spawned on `ctx` from now on waits for this gate.
    pub fn install(&self, ctx: &egui::Context) {
        ctx.data_mut(|d| d.insert_temp(Self::id(), self.clone()));
    }

    fn of(ctx: &egui::Context) -> Option<Self> {
        ctx.data(|d| d.get_temp::<Self>(Self::id()))
    }

    /// Lets the held jobs (and all later ones) run.
    pub fn open(&self) {
        let (open, cv) = &*self.0;
        *open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }

    /// Blocks until the gate opens or `cancel` is set.
    fn wait(&self, cancel: &CancelToken) {
        let (open, cv) = &*self.0;
        let mut is_open = open.lock().unwrap_or_else(|e| e.into_inner());
        while !*is_open && !cancel.is_cancelled() {
            is_open = cv
                .wait_timeout(is_open, Duration::from_millis(5))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// What the UI knows about a running job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobStatus {
    pub what: String,
    pub total: u64,
    pub done: u64,
    pub message: String,
}

impl JobStatus {
    /// Completed fraction, when the worker announced a total and has not gone past it (a
    /// simulation's total is an estimate of its events: past it, the bar animates).
    pub fn fraction(&self) -> Option<f32> {
        (self.total > 0 && self.done <= self.total)
            .then(|| (self.done as f64 / self.total as f64) as f32)
    }

    /// The bar's text: "name: done / total" with thousands separators, or, past an
    /// estimated total, the count done and the estimate.
    pub fn text(&self, name: &str) -> String {
        use crate::predict::format::thousands;
        match (self.total, self.done) {
            (0, _) => format!("{name}…"),
            (t, d) if d <= t => {
                format!("{name}: {} / {}", thousands(d as f64), thousands(t as f64))
            }
            (t, d) => format!(
                "{name}: {} (past the {} estimated)",
                thousands(d as f64),
                thousands(t as f64)
            ),
        }
    }

    fn apply(&mut self, ev: JobEvent) {
        match ev {
            JobEvent::Start { total, what } => {
                self.total = total;
                self.what = what;
            }
            JobEvent::Advance(n) => self.done = self.done.saturating_add(n),
            JobEvent::Message(m) => self.message = m,
            JobEvent::Finish => self.done = self.done.max(self.total),
        }
    }
}

/// How a job ended.
#[derive(Debug)]
pub enum JobOutcome<T> {
    /// The worker returned (it may itself report a cancellation inside `T`).
    Done(T),
    /// The worker panicked; the message is the panic payload when it was a string.
    Panicked(String),
}

/// A piece of work running on its own thread.
pub struct Job<T> {
    name: String,
    rx: Receiver<JobEvent>,
    handle: Option<JoinHandle<T>>,
    cancel: CancelToken,
    status: JobStatus,
}

impl<T: Send + 'static> Job<T> {
    /// Starts `work` on a new thread. `ctx` is woken on every progress report and when the
    /// work ends.
    pub fn spawn(
        name: impl Into<String>,
        ctx: &egui::Context,
        work: impl FnOnce(&dyn Progress) -> T + Send + 'static,
    ) -> Self {
        let name = name.into();
        let (tx, rx) = channel();
        let cancel = CancelToken::new();
        let progress = ChannelProgress {
            tx,
            cancel: cancel.clone(),
            ctx: ctx.clone(),
        };
        let gate = JobGate::of(ctx);
        let handle = std::thread::Builder::new()
            .name(format!("cephplan-job: {name}"))
            .spawn(move || {
                if let Some(g) = gate {
                    g.wait(&progress.cancel);
                }
                let out = work(&progress);
                // Wake the UI once more so that it collects the result.
                progress.ctx.request_repaint();
                out
            })
            .expect("the OS refused to start a worker thread");
        Self {
            name,
            rx,
            handle: Some(handle),
            cancel,
            status: JobStatus::default(),
        }
    }
}

impl<T> Job<T> {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn status(&self) -> &JobStatus {
        &self.status
    }

    /// Asks the worker to stop at its next safe point.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    pub fn is_cancel_requested(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// True until [`Job::poll`] has returned the outcome.
    pub fn is_running(&self) -> bool {
        self.handle.is_some()
    }

    /// Drains progress reports; returns the outcome once, when the worker has ended.
    /// Never blocks.
    pub fn poll(&mut self) -> Option<JobOutcome<T>> {
        while let Ok(ev) = self.rx.try_recv() {
            self.status.apply(ev);
        }
        if !self.handle.as_ref()?.is_finished() {
            return None;
        }
        let handle = self.handle.take()?;
        // Reports sent just before the worker returned.
        while let Ok(ev) = self.rx.try_recv() {
            self.status.apply(ev);
        }
        Some(match handle.join() {
            Ok(v) => JobOutcome::Done(v),
            Err(payload) => JobOutcome::Panicked(
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "unknown panic".to_owned()),
            ),
        })
    }

    /// A progress bar, the latest status line and a Cancel button. Returns true when the
    /// user pressed Cancel (the job is then already asked to stop).
    pub fn progress_ui(&self, ui: &mut egui::Ui) -> bool {
        let mut cancelled = false;
        ui.horizontal(|ui| {
            let s = &self.status;
            let text = s.text(&self.name);
            let bar = match s.fraction() {
                Some(f) => egui::ProgressBar::new(f),
                None => egui::ProgressBar::new(0.0).animate(true),
            };
            ui.add(bar.text(text).desired_width(260.0));
            let label = if self.is_cancel_requested() {
                "Cancelling…"
            } else {
                "Cancel"
            };
            if ui
                .add_enabled(!self.is_cancel_requested(), egui::Button::new(label))
                .clicked()
            {
                self.cancel();
                cancelled = true;
            }
            if !s.message.is_empty() {
                ui.label(&s.message);
            }
        });
        cancelled
    }
}

/// The progress row of `job`, or an empty row of the same height when no job runs. For
/// jobs that start and end on their own (a recompute after an edit): the widgets below
/// stay where they are when the job ends, so a click aimed at them in that frame lands
/// on them rather than on whatever moved up into their place. Returns true when the user
/// pressed Cancel.
pub fn progress_slot_ui<T>(ui: &mut egui::Ui, job: Option<&Job<T>>) -> bool {
    ui.horizontal(|ui| {
        ui.set_min_height(ui.spacing().interact_size.y);
        job.is_some_and(|j| j.progress_ui(ui))
    })
    .inner
}

impl<T> Drop for Job<T> {
    /// Nobody can collect a dropped job's result, so its worker is asked to stop rather
    /// than run on unseen (a page that replaces its inputs, a closed test harness).
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Debounced recomputation: the page calls [`Recompute::request`] on every edit and
/// [`Recompute::tick`] every frame; work starts once edits have paused for `delay_secs`,
/// a newer request cancels the job in flight, and only the outcome of the newest job is
/// handed back.
pub struct Recompute<T> {
    pub delay_secs: f64,
    pending_since: Option<f64>,
    job: Option<Job<T>>,
}

impl<T> Default for Recompute<T> {
    fn default() -> Self {
        Self {
            delay_secs: 0.3,
            pending_since: None,
            job: None,
        }
    }
}

impl<T: Send + 'static> Recompute<T> {
    /// Marks the inputs as changed at egui time `now` (seconds).
    pub fn request(&mut self, now: f64) {
        self.pending_since = Some(now);
        if let Some(job) = &self.job {
            job.cancel();
        }
    }

    /// Requests a run that starts on the next tick, without waiting for the debounce delay.
    pub fn request_now(&mut self) {
        self.request(f64::NEG_INFINITY);
    }

    pub fn job(&self) -> Option<&Job<T>> {
        self.job.as_ref()
    }

    /// True while a request waits or a job runs.
    pub fn is_busy(&self) -> bool {
        self.pending_since.is_some() || self.job.is_some()
    }

    /// Polls the job, starts a new one when due (via `spawn`), schedules a repaint for
    /// the end of the debounce delay. Returns the outcome of a job that was not superseded.
    pub fn tick(
        &mut self,
        ctx: &egui::Context,
        now: f64,
        spawn: impl FnOnce(&egui::Context) -> Job<T>,
    ) -> Option<JobOutcome<T>> {
        let mut out = None;
        if let Some(job) = &mut self.job {
            if let Some(o) = job.poll() {
                let superseded = job.is_cancel_requested() && self.pending_since.is_some();
                self.job = None;
                if !superseded {
                    out = Some(o);
                }
            }
        }
        if let Some(since) = self.pending_since {
            let waited = now - since;
            if waited >= self.delay_secs && self.job.is_none() {
                self.pending_since = None;
                self.job = Some(spawn(ctx));
            } else if waited < self.delay_secs {
                ctx.request_repaint_after(std::time::Duration::from_secs_f64(
                    self.delay_secs - waited,
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn wait<T>(job: &mut Job<T>) -> JobOutcome<T> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(out) = job.poll() {
                return out;
            }
            assert!(Instant::now() < deadline, "job did not end within 10 s");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A simulation announces its expected events and may run past them (session 54's
    /// audit saw "26152256 / 8920189"): past the total the text says so and the bar has
    /// no fraction to show.
    #[test]
    fn status_text_has_separators_and_says_when_an_estimate_is_passed() {
        let mut s = JobStatus::default();
        assert_eq!(s.text("simulating tails"), "simulating tails…");
        s.apply(JobEvent::Start {
            total: 8_920_189,
            what: "simulating".into(),
        });
        s.apply(JobEvent::Advance(4_460_000));
        assert_eq!(
            s.text("simulating tails"),
            "simulating tails: 4,460,000 / 8,920,189"
        );
        assert!((s.fraction().unwrap() - 0.5).abs() < 1e-3);
        s.apply(JobEvent::Advance(21_692_256));
        assert_eq!(
            s.text("simulating tails"),
            "simulating tails: 26,152,256 (past the 8,920,189 estimated)"
        );
        assert_eq!(s.fraction(), None);
    }

    #[test]
    fn progress_reaches_the_ui_side_and_result_is_returned_once() {
        let ctx = egui::Context::default();
        let mut job = Job::spawn("count", &ctx, |p| {
            p.start(4, "counting");
            for _ in 0..4 {
                p.advance(1);
            }
            p.message("done counting");
            p.finish();
            42_u32
        });
        match wait(&mut job) {
            JobOutcome::Done(v) => assert_eq!(v, 42),
            JobOutcome::Panicked(m) => panic!("worker panicked: {m}"),
        }
        assert_eq!(job.status().done, 4);
        assert_eq!(job.status().fraction(), Some(1.0));
        assert_eq!(job.status().message, "done counting");
        assert!(!job.is_running());
        assert!(job.poll().is_none());
    }

    #[test]
    fn cancel_stops_a_worker_that_checks_the_flag() {
        let ctx = egui::Context::default();
        let mut job = Job::spawn("spin", &ctx, |p| {
            let mut rounds = 0_u64;
            while !p.is_cancelled() {
                rounds += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            rounds
        });
        assert!(job.poll().is_none(), "the worker spins until cancelled");
        job.cancel();
        assert!(matches!(wait(&mut job), JobOutcome::Done(_)));
    }

    #[test]
    fn dropping_a_job_stops_its_worker() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let ctx = egui::Context::default();
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = stopped.clone();
        let job = Job::spawn("spin", &ctx, move |p| {
            while !p.is_cancelled() {
                std::thread::sleep(Duration::from_millis(1));
            }
            flag.store(true, Ordering::SeqCst);
        });
        drop(job);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !stopped.load(Ordering::SeqCst) {
            assert!(
                Instant::now() < deadline,
                "the worker ran on after its job was dropped"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_gate_holds_jobs_until_opened_or_cancelled() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let ctx = egui::Context::default();
        let gate = JobGate::closed();
        gate.install(&ctx);
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let mut held = Job::spawn("held", &ctx, move |_| flag.store(true, Ordering::SeqCst));
        std::thread::sleep(Duration::from_millis(50));
        assert!(job_pending(&mut held) && !ran.load(Ordering::SeqCst));
        // Cancelling releases the worker into its work, which sees the cancellation.
        let mut cancelled = Job::spawn("cancelled", &ctx, |p| p.is_cancelled());
        cancelled.cancel();
        assert!(matches!(wait(&mut cancelled), JobOutcome::Done(true)));
        assert!(job_pending(&mut held));
        gate.open();
        assert!(matches!(wait(&mut held), JobOutcome::Done(())));
        assert!(ran.load(Ordering::SeqCst));
    }

    fn job_pending<T>(job: &mut Job<T>) -> bool {
        job.poll().is_none()
    }

    #[test]
    fn a_panicking_worker_is_reported_not_propagated() {
        let ctx = egui::Context::default();
        let mut job: Job<()> = Job::spawn("boom", &ctx, |_| panic!("bad input"));
        match wait(&mut job) {
            JobOutcome::Panicked(m) => assert_eq!(m, "bad input"),
            JobOutcome::Done(()) => panic!("expected a panic outcome"),
        }
    }

    #[test]
    fn recompute_hands_back_only_the_newest_job() {
        let ctx = egui::Context::default();
        let mut r: Recompute<u32> = Recompute::default();
        let spawn = |gen: u32| {
            move |ctx: &egui::Context| {
                Job::spawn("gen", ctx, move |p: &dyn Progress| {
                    // The first generation runs until it is cancelled.
                    while gen == 1 && !p.is_cancelled() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    gen
                })
            }
        };
        r.request_now();
        assert!(r.tick(&ctx, 0.0, spawn(1)).is_none());
        assert!(r.job().is_some());
        // An edit at t = 1 s cancels generation 1; generation 2 starts once the edit is
        // older than the debounce delay and generation 1 has ended.
        r.request(1.0);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut t = 1.0;
        let out = loop {
            t += 0.1;
            if let Some(o) = r.tick(&ctx, t, spawn(2)) {
                break o;
            }
            assert!(Instant::now() < deadline, "no outcome within 10 s");
            std::thread::sleep(Duration::from_millis(2));
        };
        assert!(matches!(out, JobOutcome::Done(2)));
        assert!(!r.is_busy());
    }
}

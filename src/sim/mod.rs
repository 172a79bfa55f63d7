//! Discrete-event simulation of closed (and, for checks, open) queueing networks with
//! fork-join: the source of tail latencies (p50 … p99.9) and of the true fork-join
//! response time of replicated writes, which MVA only approximates through path demands.
//!
//! Input is a [`SimModel`] (routes of visits, forks, random choices and detached work the
//! job does not wait for; see [`model`]), made from a plain
//! [`crate::qn::Network`] by [`SimModel::from_network`], read from a file ([`mod@file`]), or
//! built with [`SimModel::builder`] — the way for `qn::ceph` to state a replicated or EC
//! write as a real fork-join ([`SimModel::demands`] checks it against its `Network`).
//! [`simulate`] runs it and returns a [`SimReport`] with confidence intervals:
//!
//! 1. **Warm-up** (unless [`SimOptions::warmup_secs`] fixes it): a pilot run records each
//!    class's response times as batch means and applies MSER-5 ([`stats`]); the pilot
//!    doubles (up to a quarter of the event budget) until MSER-5 is reliable for every class.
//!    The warm-up time is the largest truncation point over classes, and at least the time
//!    by which the pilot saw 10 × (closed population) + 100 completions: MSER-5 on response
//!    times can miss the short transient from the empty start, which still biases time
//!    averages such as utilisation (−0.07 %, outside a 200-replication CI, in the
//!    M/M/1//12 test before this floor).
//! 2. **Run length**: each replication simulates the warm-up (statistics discarded) then
//!    a measured span long enough for [`SimOptions::samples_per_replication`] completions of
//!    the least frequent class (estimated from the pilot) and at least
//!    [`RESPONSES_PER_SPAN`] mean response times (a span short against the response time
//!    biases the measured mean low).
//! 3. **Replications** are independent (own random streams from `(seed, index)`), run on
//!    [`SimOptions::threads`] threads; results are combined in index order, so the report is
//!    bit-identical for a seed whatever the thread timing. After each batch the t-based CI
//!    of every class's mean response and p99 is checked against
//!    [`SimOptions::relative_precision`]; otherwise the run stops at the event, simulated-time
//!    or replication cap, or on cancellation ([`StopReason`]).
//!
//! Percentiles per replication come from a fixed-size log-linear histogram (relative error
//! ≤ [`hist::RELATIVE_ERROR`] ≈ 0.39 %); their CIs come from the spread across replications.
//!
//! [`engine`] is public for benchmarks and for callers that want one raw replication.
//!
//! Not here: Ceph knowledge (`qn::ceph`), MVA (`solve`), printing (`cli::simulate`).

use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use crate::progress::Progress;

pub mod dist;
pub mod engine;
pub mod file;
pub mod hist;
pub mod model;
pub mod reference;
pub mod stats;

pub use dist::Dist;
pub use model::{
    Arrivals, ChoiceBranch, Placement, Route, SimClass, SimModel, SimModelBuilder, SimModelError,
    SimStation, StationId, Step,
};
pub use stats::Estimate;

use engine::{Compiled, Engine, RunEnd};

/// Version of the [`SimReport`] JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

/// Quantiles reported per class.
pub const QUANTILES: [f64; 4] = [0.5, 0.95, 0.99, 0.999];

/// The shortest measured span per replication, in the pilot's longest mean response
/// times. Over a span of `T`, the completions miss the jobs that stay in the system across
/// it and include those that were there at its start, which by stationarity cancel only
/// when both are few: at `T` ≈ 2.4 mean responses (8,192 I/Os in flight, 20,000
/// completions) the mean response came out 3 % short of Little's law (N / X), at 20 the
/// bias is within the confidence interval.
pub const RESPONSES_PER_SPAN: f64 = 50.0;

/// Replication index reserved for the warm-up pilot (its streams never coincide with a
/// replication's).
const PILOT_REPLICATION: u64 = u64::MAX;

/// How to run a simulation. [`Default`] gives the values documented per field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimOptions {
    /// Master seed; every random stream derives from it. Default 1.
    pub seed: u64,
    /// Stop when every class's mean response and p99 CI half-width is within this fraction
    /// of the estimate. Default 0.02.
    pub relative_precision: f64,
    /// Confidence level of the intervals. Default 0.95.
    pub confidence: f64,
    /// Replications before the precision is first checked (≥ 2). Default 10.
    pub min_replications: u32,
    /// Stop after this many replications. Default 400.
    pub max_replications: u32,
    /// Cap on events over the whole run (pilot, warm-ups, replications). Default 2·10⁹.
    pub max_events: u64,
    /// Cap on simulated time summed over replications, seconds. Default none.
    pub max_sim_time_secs: Option<f64>,
    /// Completions of the least frequent class per replication (sets the run length). With
    /// the default 20,000, a replication's p99 rests on ~200 tail samples and its p99.9 on
    /// ~20: the CI of p99.9 covers the spread across replications, not the small-sample bias
    /// of so few tail samples — raise this when p99.9 matters. Default 20,000.
    pub samples_per_replication: u64,
    /// Fixed warm-up per replication, seconds; `None` detects it with MSER-5. Default none.
    pub warmup_secs: Option<f64>,
    /// Worker threads for replications. Default 2.
    pub threads: usize,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            seed: 1,
            relative_precision: 0.02,
            confidence: 0.95,
            min_replications: 10,
            max_replications: 400,
            max_events: 2_000_000_000,
            max_sim_time_secs: None,
            samples_per_replication: 20_000,
            warmup_secs: None,
            threads: 2,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Model(#[from] SimModelError),
    #[error("simulation option {field} = {value} is invalid: {fix}")]
    BadOption {
        field: &'static str,
        value: String,
        fix: &'static str,
    },
    #[error("station \"{station}\" is offered {utilization:.3} of its capacity by open classes alone; an open system is unstable at ≥ 1: lower the arrival rates or add servers")]
    Unstable { station: String, utilization: f64 },
}

/// Why the replications stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every class's mean response and p99 reached the relative precision.
    PrecisionReached,
    /// The event budget is spent.
    MaxEvents,
    /// The simulated-time budget is spent.
    MaxSimTime,
    MaxReplications,
    Cancelled,
}

impl StopReason {
    /// What the stop means for the figures and what to do about it, when the precision
    /// asked for was not reached (None when it was).
    pub fn shortfall(&self) -> Option<&'static str> {
        match self {
            StopReason::PrecisionReached => None,
            StopReason::MaxEvents => Some(
                "the event budget ran out before the precision was reached: the intervals are wider than asked and the highest percentiles rest on few samples (raise --max-events)",
            ),
            StopReason::MaxSimTime => Some(
                "the simulated-time budget ran out before the precision was reached: the intervals are wider than asked",
            ),
            StopReason::MaxReplications => Some(
                "the replication limit was reached before the precision: the intervals are wider than asked (loosen --precision; more events per replication narrow them too)",
            ),
            StopReason::Cancelled => Some("cancelled: the figures cover the replications done"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmupReport {
    /// Simulated time discarded at the start of every replication, seconds.
    pub secs: f64,
    /// "mser5" (with the floor described in the module docs) or "fixed".
    pub method: String,
    /// False if MSER-5 never became reliable within the pilot budget (the warm-up is then
    /// half the pilot: treat results with care).
    pub reliable: bool,
    /// Events of the pilot run (0 if fixed).
    pub pilot_events: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50_secs: Estimate,
    pub p95_secs: Estimate,
    pub p99_secs: Estimate,
    pub p999_secs: Estimate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassSimReport {
    pub name: String,
    pub throughput_per_sec: Estimate,
    /// Time from entering the route to leaving it (excludes think time), seconds.
    pub response_time_secs: Estimate,
    pub percentiles: Percentiles,
    /// Completions measured over all replications (after warm-up).
    pub completions: u64,
}

/// Responses of the jobs of `class` that took the choice branch `label` (see
/// [`Step::Choice`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSimReport {
    pub class: String,
    pub label: String,
    pub throughput_per_sec: Estimate,
    pub response_time_secs: Estimate,
    pub percentiles: Percentiles,
    pub completions: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StationSimReport {
    pub name: String,
    /// Per-server utilisation averaged over copies (0 for delay stations), 0..1.
    pub utilization: Estimate,
    /// Mean jobs at one copy (queued and in service).
    pub queue_length: Estimate,
    /// Mean jobs at all copies together.
    pub queue_length_total: Estimate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    pub schema_version: u32,
    pub seed: u64,
    pub confidence: f64,
    pub relative_precision: f64,
    pub stop_reason: StopReason,
    pub replications: u32,
    /// Events simulated in total (pilot, warm-ups and measured spans).
    pub events: u64,
    pub warmup: WarmupReport,
    /// Measured simulated time per replication (after warm-up), seconds.
    pub measured_secs_per_replication: f64,
    /// Bound on the relative error of a per-replication percentile from the histogram.
    pub histogram_relative_error: f64,
    pub classes: Vec<ClassSimReport>,
    pub stations: Vec<StationSimReport>,
    /// Per labelled choice branch (e.g. "read", "write" of a mixed class), in the order the
    /// labels first appear in the classes' routes; empty without choices.
    #[serde(default)]
    pub labels: Vec<LabelSimReport>,
}

/// Completions, mean response, throughput, quantiles of one class or label.
type RepStats = (u64, f64, f64, [f64; 4]);

/// What one replication measured.
#[derive(Debug, Clone)]
struct RepResult {
    events: u64,
    cancelled: bool,
    /// Per class: completions, mean response, throughput, quantiles.
    classes: Vec<RepStats>,
    /// Per label, the same.
    labels: Vec<RepStats>,
    /// Per station: utilisation, queue length per copy, total.
    stations: Vec<[f64; 3]>,
}

fn check_options(o: &SimOptions) -> Result<(), SimError> {
    let bad = |field, value: String, fix| Err(SimError::BadOption { field, value, fix });
    if !(o.relative_precision.is_finite() && o.relative_precision > 0.0) {
        return bad(
            "relative_precision (--precision)",
            o.relative_precision.to_string(),
            "use a fraction > 0, e.g. 0.02",
        );
    }
    if !(o.confidence > 0.0 && o.confidence < 1.0) {
        return bad(
            "confidence",
            o.confidence.to_string(),
            "use a level strictly between 0 and 1, e.g. 0.95",
        );
    }
    if o.min_replications < 2 || o.max_replications < o.min_replications {
        return bad(
            "min_replications",
            format!("{} (max {})", o.min_replications, o.max_replications),
            "need 2 ≤ min_replications ≤ max_replications",
        );
    }
    for (field, value) in [
        ("samples_per_replication", o.samples_per_replication),
        ("max_events (--max-events)", o.max_events),
        ("threads (--threads)", o.threads as u64),
    ] {
        if value == 0 {
            return bad(field, value.to_string(), "give at least 1");
        }
    }
    if let Some(w) = o.warmup_secs {
        if !(w.is_finite() && w >= 0.0) {
            return bad(
                "warmup_secs",
                w.to_string(),
                "use a finite number of seconds ≥ 0",
            );
        }
    }
    if let Some(t) = o.max_sim_time_secs {
        if !(t.is_finite() && t > 0.0) {
            return bad(
                "max_sim_time_secs",
                t.to_string(),
                "use a finite number of seconds > 0",
            );
        }
    }
    Ok(())
}

/// Offered load per server from open classes alone, per station.
fn check_open_stability(model: &SimModel) -> Result<(), SimError> {
    let mut load = vec![0.0; model.stations.len()];
    for c in &model.classes {
        if let Arrivals::Open { rate_per_sec } = c.arrivals {
            model::for_each_visit(&c.route, rate_per_sec, &mut |s, w, d| {
                load[s.0] += w * d.mean_secs()
            });
        }
    }
    for (s, l) in model.stations.iter().zip(load) {
        if s.kind == crate::qn::StationKind::Queue {
            let u = l / f64::from(s.servers * s.multiplicity);
            if u >= 1.0 {
                return Err(SimError::Unstable {
                    station: s.name.clone(),
                    utilization: u,
                });
            }
        }
    }
    Ok(())
}

/// Simulates `model` (see the module docs for the procedure). Long-running: reports events
/// to `progress` and stops early, with what it has, when `progress.is_cancelled()`.
pub fn simulate(
    model: &SimModel,
    opts: &SimOptions,
    progress: &dyn Progress,
) -> Result<SimReport, SimError> {
    model.validate()?;
    check_options(opts)?;
    check_open_stability(model)?;
    let compiled = Compiled::new(model);
    // Classes with jobs; an empty closed class has no responses to estimate.
    let active: Vec<bool> = model
        .classes
        .iter()
        .map(|c| match c.arrivals {
            Arrivals::Closed { population, .. } => population > 0,
            Arrivals::Open { .. } => true,
        })
        .collect();
    progress.start(opts.max_events, "simulating");
    let on_chunk = |n: u64| {
        progress.advance(n);
        !progress.is_cancelled()
    };

    // 1. Warm-up and event rate from a pilot.
    let mut events_total = 0u64;
    let mut cancelled = false;
    let pilot_budget = (opts.max_events / 4).max(1);
    let mut pilot = Engine::new(&compiled, opts.seed, PILOT_REPLICATION, true);
    // Floor of the warm-up: every closed job has cycled about ten times (MSER-5 on response
    // times can miss the short transient from the empty start that still biases time
    // averages such as utilisation).
    let closed_jobs: u64 = model
        .classes
        .iter()
        .map(|c| match c.arrivals {
            Arrivals::Closed { population, .. } => u64::from(population),
            Arrivals::Open { .. } => 0,
        })
        .sum();
    pilot.mark_completion(10 * closed_jobs + 100);
    let mut pilot_events_target = 200_000u64.min(pilot_budget);
    let (warmup_secs, reliable, method) = loop {
        let before = pilot.events();
        let end = pilot.run_until(f64::INFINITY, pilot_events_target - before, &on_chunk);
        if end == RunEnd::Cancelled {
            cancelled = true;
        }
        if let Some(w) = opts.warmup_secs {
            // Only the rates are needed; a short pilot suffices.
            break (w, true, "fixed");
        }
        let truncs: Vec<_> = pilot
            .classes()
            .iter()
            .zip(&active)
            .filter(|(_, &a)| a)
            .map(|(c, _)| c.series.as_ref().and_then(|s| s.mser()))
            .collect();
        let ok = truncs
            .iter()
            .all(|t| t.is_some_and(|t| t.reliable && t.batches >= 20));
        let w = truncs
            .iter()
            .flatten()
            .map(|t| t.time_secs)
            .fold(0.0, f64::max);
        if let (true, Some(floor)) = (ok, pilot.marked_time()) {
            break (w.max(floor), true, "mser5");
        }
        if cancelled || pilot_events_target >= pilot_budget || end == RunEnd::Horizon {
            break (0.5 * pilot.now(), false, "mser5");
        }
        pilot_events_target = (pilot_events_target * 2).min(pilot_budget);
    };
    let pilot_events = pilot.events();
    events_total += pilot_events;
    let pilot_time = pilot.now().max(f64::MIN_POSITIVE);
    let event_rate = pilot_events as f64 / pilot_time;
    let min_class_rate = pilot
        .classes()
        .iter()
        .zip(&active)
        .filter(|(_, &a)| a)
        .map(|(c, _)| c.completions as f64 / pilot_time)
        .fold(f64::INFINITY, f64::min);

    // The longest mean response time the pilot saw (over its whole run, warm-up
    // included: a rough figure, enough to size the span).
    let max_mean_response = pilot
        .classes()
        .iter()
        .filter(|c| c.completions > 0)
        .map(|c| c.sum_secs / c.completions as f64)
        .fold(0.0, f64::max);
    drop(pilot);

    // 2. Measured span per replication, within the budgets for min_replications: enough
    // completions, and at least RESPONSES_PER_SPAN mean response times, since the
    // completions of a span short against the response time are biased towards short
    // responses (jobs in the system across the whole span complete in none).
    let mut measured = if min_class_rate > 0.0 {
        (opts.samples_per_replication as f64 / min_class_rate)
            .max(RESPONSES_PER_SPAN * max_mean_response)
    } else {
        pilot_time
    };
    // If a budget cannot give min_replications a measured span beyond their warm-ups, no
    // replication is run: a report of zero replications says so instead of estimates from
    // empty spans.
    let mut no_room = None;
    let per_rep_budget =
        (opts.max_events.saturating_sub(events_total)) as f64 / f64::from(opts.min_replications);
    let by_events = per_rep_budget / event_rate - warmup_secs;
    if by_events < measured {
        measured = by_events;
        if measured <= 0.0 {
            no_room = Some(StopReason::MaxEvents);
        }
    }
    if let Some(t) = opts.max_sim_time_secs {
        let by_time = t / f64::from(opts.min_replications) - warmup_secs;
        if by_time < measured {
            measured = by_time;
            if measured <= 0.0 {
                no_room = Some(StopReason::MaxSimTime);
            }
        }
    }
    let measured = measured.max(0.0);
    let rep_events_estimate = event_rate * (warmup_secs + measured);
    // Re-announce the expected total now that the run length is known (more replications
    // may follow if the precision is not reached).
    let expected = pilot_events as f64 + f64::from(opts.min_replications) * rep_events_estimate;
    progress.start((expected as u64).min(opts.max_events), "simulating");

    // 3. Replications in batches.
    let mut results: Vec<RepResult> = Vec::new();
    let mut sim_time_total = 0.0;
    let batch = opts.threads.max(2) as u32;
    let stop_reason = loop {
        if cancelled {
            break StopReason::Cancelled;
        }
        if let Some(reason) = no_room {
            break reason;
        }
        let done = results.len() as u32;
        if done >= opts.min_replications {
            let ests = summarise(&results, model, compiled.labels(), opts.confidence);
            let precise = ests
                .0
                .iter()
                .zip(&active)
                .filter(|(_, &a)| a)
                .all(|(c, _)| {
                    c.response_time_secs.relative_half_width() <= opts.relative_precision
                        && c.percentiles.p99_secs.relative_half_width() <= opts.relative_precision
                });
            if precise {
                break StopReason::PrecisionReached;
            }
        }
        if done >= opts.max_replications {
            break StopReason::MaxReplications;
        }
        let want = if done < opts.min_replications {
            opts.min_replications - done
        } else {
            batch
        }
        .min(opts.max_replications - done);
        let by_events =
            ((opts.max_events.saturating_sub(events_total)) as f64 / rep_events_estimate) as u32;
        let by_time = opts.max_sim_time_secs.map_or(u32::MAX, |t| {
            ((t - sim_time_total) / (warmup_secs + measured)).max(0.0) as u32
        });
        let n = want.min(by_events).min(by_time);
        if n == 0 {
            break if by_time == 0 {
                StopReason::MaxSimTime
            } else {
                StopReason::MaxEvents
            };
        }
        let (new, cut) = run_batch(
            &compiled,
            opts,
            done as u64,
            n,
            warmup_secs,
            measured,
            &on_chunk,
        );
        cancelled |= cut;
        for r in new {
            events_total += r.events;
            sim_time_total += warmup_secs + measured;
            cancelled |= r.cancelled;
            if !r.cancelled {
                results.push(r);
            }
        }
    };
    progress.finish();

    let (classes, stations, labels) =
        summarise(&results, model, compiled.labels(), opts.confidence);
    Ok(SimReport {
        schema_version: SCHEMA_VERSION,
        seed: opts.seed,
        confidence: opts.confidence,
        relative_precision: opts.relative_precision,
        stop_reason,
        replications: results.len() as u32,
        events: events_total,
        warmup: WarmupReport {
            secs: warmup_secs,
            method: method.to_string(),
            reliable,
            pilot_events,
        },
        measured_secs_per_replication: measured,
        histogram_relative_error: hist::RELATIVE_ERROR,
        classes,
        stations,
        labels,
    })
}

/// Runs replications `first .. first + n` on `opts.threads` threads; returns those that
/// ran, in index order, and whether a cancel kept any from starting.
fn run_batch(
    compiled: &Compiled,
    opts: &SimOptions,
    first: u64,
    n: u32,
    warmup_secs: f64,
    measured_secs: f64,
    on_chunk: &(dyn Fn(u64) -> bool + Sync),
) -> (Vec<RepResult>, bool) {
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<RepResult>> = vec![None; n as usize];
    let threads = opts.threads.min(n as usize).max(1);
    let outputs: Vec<Vec<(usize, RepResult)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        // A replication shorter than the engine's check interval never
                        // asks: ask between replications too, so a cancel stops a batch
                        // of many short ones (session 54's audit: 50,000 replications ran
                        // on through Ctrl-C).
                        if !on_chunk(0) {
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n as usize {
                            break;
                        }
                        let r = run_replication(
                            compiled,
                            opts,
                            first + i as u64,
                            warmup_secs,
                            measured_secs,
                            on_chunk,
                        );
                        mine.push((i, r));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("replication thread panicked"))
            .collect()
    });
    for (i, r) in outputs.into_iter().flatten() {
        slots[i] = Some(r);
    }
    // Replications a cancel kept from starting are missing: the batch says it was cut.
    let cut = slots.iter().any(Option::is_none);
    (slots.into_iter().flatten().collect(), cut)
}

fn run_replication(
    compiled: &Compiled,
    opts: &SimOptions,
    index: u64,
    warmup_secs: f64,
    measured_secs: f64,
    on_chunk: &(dyn Fn(u64) -> bool + Sync),
) -> RepResult {
    let mut e = Engine::new(compiled, opts.seed, index, false);
    let mut end = e.run_until(warmup_secs, opts.max_events, on_chunk);
    e.reset_stats();
    if end != RunEnd::Cancelled {
        end = e.run_until(warmup_secs + measured_secs, opts.max_events, on_chunk);
    }
    let t = measured_secs;
    let stats = |c: &engine::ClassAcc| -> RepStats {
        let q = QUANTILES.map(|q| c.hist.quantile(q).unwrap_or(f64::NAN));
        let mean = if c.completions > 0 {
            c.sum_secs / c.completions as f64
        } else {
            f64::NAN
        };
        (c.completions, mean, c.completions as f64 / t, q)
    };
    let classes = e.classes().iter().map(stats).collect();
    let labels = e.labels().iter().map(stats).collect();
    let stations = e
        .stations()
        .iter()
        .zip(&compiled.station_shapes())
        .map(|(a, &(servers, mult, delay))| {
            let util = if delay {
                0.0
            } else {
                a.area_busy / (t * servers * mult)
            };
            let total = a.area_present / t;
            [util, total / mult, total]
        })
        .collect();
    RepResult {
        events: e.events(),
        cancelled: end == RunEnd::Cancelled,
        classes,
        labels,
        stations,
    }
}

fn summarise(
    results: &[RepResult],
    model: &SimModel,
    labels: &[(usize, String)],
    confidence: f64,
) -> (
    Vec<ClassSimReport>,
    Vec<StationSimReport>,
    Vec<LabelSimReport>,
) {
    let est = |f: &dyn Fn(&RepResult) -> f64| {
        let xs: Vec<f64> = results.iter().map(f).collect();
        Estimate::from_replications(&xs, confidence)
    };
    let percentiles = |f: &dyn Fn(&RepResult) -> &RepStats| Percentiles {
        p50_secs: est(&|r| f(r).3[0]),
        p95_secs: est(&|r| f(r).3[1]),
        p99_secs: est(&|r| f(r).3[2]),
        p999_secs: est(&|r| f(r).3[3]),
    };
    let classes = model
        .classes
        .iter()
        .enumerate()
        .map(|(ci, c)| ClassSimReport {
            name: c.name.clone(),
            throughput_per_sec: est(&|r| r.classes[ci].2),
            response_time_secs: est(&|r| r.classes[ci].1),
            percentiles: percentiles(&|r| &r.classes[ci]),
            completions: results.iter().map(|r| r.classes[ci].0).sum(),
        })
        .collect();
    let label_reports = labels
        .iter()
        .enumerate()
        .map(|(li, (ci, label))| LabelSimReport {
            class: model.classes[*ci].name.clone(),
            label: label.clone(),
            throughput_per_sec: est(&|r| r.labels[li].2),
            response_time_secs: est(&|r| r.labels[li].1),
            percentiles: percentiles(&|r| &r.labels[li]),
            completions: results.iter().map(|r| r.labels[li].0).sum(),
        })
        .collect();
    let stations = model
        .stations
        .iter()
        .enumerate()
        .map(|(si, s)| StationSimReport {
            name: s.name.clone(),
            utilization: est(&|r| r.stations[si][0]),
            queue_length: est(&|r| r.stations[si][1]),
            queue_length_total: est(&|r| r.stations[si][2]),
        })
        .collect();
    (classes, stations, label_reports)
}

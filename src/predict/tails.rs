//! Tail latencies of a scenario by discrete-event simulation: [`predict_tails`] builds the
//! scenario's simulation model (`qn::ceph::build_sim`: the MVA network's stations and
//! demands, with replicated and EC writes as real fork-joins), runs `sim::simulate`, and
//! returns a [`TailReport`] — simulated IOPS, mean, p50/p95/p99/p99.9 with confidence
//! intervals, overall and per I/O type. [`PredictionReport::with_tails`] puts it into a
//! prediction (and fills `latency_p99_secs`).
//!
//! The simulated mean differs from MVA's where MVA approximates: the fork-join of a
//! replicated write (MVA counts one replica's device path, the simulation waits for the
//! slowest), a read/write mix at FCFS stations with different service times, and
//! non-exponential service when chosen. For r = 1 and exponential service both describe
//! the same product-form network (tests check that they agree). Seed-000 randwrite at
//! iodepth 1 (fitted default model): MVA 4.48 ms, simulated 5.57 ms: the slower of two
//! replicas, which MVA's path demand leaves out. A batching OSD CPU runs at MVA's speed
//! for the population by default (`qn::ceph::sim`, [`crate::qn::ceph::SimBatching`]).
//!
//! Not here: the routes (`qn::ceph::sim`), the simulator (`sim`), printing (`cli`).

use serde::{Deserialize, Serialize};

use super::{PredictError, PredictionReport};
use crate::model::ModelParams;
use crate::progress::Progress;
use crate::qn::ceph::sim::{READ_LABEL, WRITE_LABEL};
use crate::qn::ceph::{build_sim, CephSim, CephSimOptions, ServiceShape, SimBatching};
use crate::sim::{self, Estimate, Percentiles, SimModel, SimOptions, SimReport, StopReason};
use crate::spec::Scenario;

/// How to simulate a scenario. [`Default`]: `SimOptions::default()` (seed 1, ±2 % at 95 %)
/// and exponential service everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TailOptions {
    pub sim: SimOptions,
    pub service: CephSimOptions,
}

/// Simulated throughput and latency of all I/Os or of one type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailFigures {
    pub iops: Estimate,
    pub latency_mean_secs: Estimate,
    pub latency_p50_secs: Estimate,
    pub latency_p95_secs: Estimate,
    pub latency_p99_secs: Estimate,
    pub latency_p999_secs: Estimate,
}

impl TailFigures {
    fn of(iops: Estimate, mean: Estimate, p: &Percentiles) -> Self {
        Self {
            iops,
            latency_mean_secs: mean,
            latency_p50_secs: p.p50_secs,
            latency_p95_secs: p.p95_secs,
            latency_p99_secs: p.p99_secs,
            latency_p999_secs: p.p999_secs,
        }
    }

    /// The estimate of quantile `q` (one of [`sim::QUANTILES`]).
    pub fn quantile(&self, q: f64) -> Option<Estimate> {
        match q {
            _ if q == 0.5 => Some(self.latency_p50_secs),
            _ if q == 0.95 => Some(self.latency_p95_secs),
            _ if q == 0.99 => Some(self.latency_p99_secs),
            _ if q == 0.999 => Some(self.latency_p999_secs),
            _ => None,
        }
    }
}

/// The `tails` section of a prediction: simulated figures with confidence intervals
/// (`half_width` at `confidence`), and how the simulation ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailReport {
    /// All I/Os.
    #[serde(flatten)]
    pub all: TailFigures,
    /// Reads only; None when the workload has no reads.
    pub read: Option<TailFigures>,
    /// Writes only; None when the workload has no writes.
    pub write: Option<TailFigures>,
    pub seed: u64,
    pub confidence: f64,
    pub relative_precision: f64,
    pub stop_reason: StopReason,
    pub replications: u32,
    pub events: u64,
    /// False if the warm-up detection was not reliable (see `sim`).
    pub warmup_reliable: bool,
    pub device_service: ServiceShape,
    pub other_service: ServiceShape,
    /// How a batching OSD CPU was simulated.
    #[serde(default)]
    pub batching: SimBatching,
    pub warnings: Vec<String>,
}

impl TailReport {
    /// Summarises a simulation of a Ceph model (one class, read/write labels).
    pub fn from_sim(r: &SimReport, service: &CephSimOptions) -> Self {
        let c = &r.classes[0];
        let label = |name: &str| {
            r.labels.iter().find(|l| l.label == name).map(|l| {
                TailFigures::of(l.throughput_per_sec, l.response_time_secs, &l.percentiles)
            })
        };
        let mut warnings = Vec::new();
        match r.stop_reason {
            StopReason::PrecisionReached => {}
            StopReason::Cancelled => warnings.push(format!(
                "the simulation was cancelled after {} replications; the intervals are wider than asked",
                r.replications
            )),
            other => warnings.push(format!(
                "the simulation stopped before the mean and p99 were within ±{:.1} %: {}",
                r.relative_precision * 100.0,
                other.shortfall().unwrap_or_default()
            )),
        }
        if !r.warmup.reliable {
            warnings.push(
                "the warm-up could not be detected reliably; the simulated figures may carry start-up bias (raise --max-events)".into(),
            );
        }
        Self {
            all: TailFigures::of(c.throughput_per_sec, c.response_time_secs, &c.percentiles),
            read: label(READ_LABEL),
            write: label(WRITE_LABEL),
            seed: r.seed,
            confidence: r.confidence,
            relative_precision: r.relative_precision,
            stop_reason: r.stop_reason,
            replications: r.replications,
            events: r.events,
            warmup_reliable: r.warmup.reliable,
            device_service: service.device_service,
            other_service: service.other_service,
            batching: service.batching,
            warnings,
        }
    }
}

impl PredictionReport {
    /// Adds the simulated tails: fills `latency_p99_secs` with the simulated p99 and the
    /// `tails` section.
    pub fn with_tails(mut self, tails: TailReport) -> Self {
        self.latency_p99_secs = Some(tails.all.latency_p99_secs.mean);
        self.tails = Some(tails);
        self
    }
}

/// A [`Progress`] that passes on only cancellation: for simulations run as one step of a
/// longer job (a sweep) whose progress counts steps, not events.
pub(crate) struct CancelOnly<'a>(pub &'a dyn Progress);

impl Progress for CancelOnly<'_> {
    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// Simulates a Ceph simulation model and summarises it.
/// Fails when no replication could run (budget too small, or cancelled before the first).
pub(crate) fn simulate_model(
    model: &SimModel,
    opts: &TailOptions,
    progress: &dyn Progress,
) -> Result<TailReport, PredictError> {
    let r = sim::simulate(model, &opts.sim, progress)?;
    if r.replications == 0 {
        return Err(match r.stop_reason {
            StopReason::Cancelled => PredictError::TailsCancelled,
            other => PredictError::NoTails {
                reason: format!(
                    "the event budget of {} left no room for a replication ({other:?})",
                    opts.sim.max_events
                ),
            },
        });
    }
    Ok(TailReport::from_sim(&r, &opts.service))
}

/// Simulates a scenario: IOPS, mean and tail latency with confidence intervals. Long
/// running (seconds to minutes): reports events to `progress` and stops early, with wider
/// intervals and a warning, when it is cancelled.
pub fn predict_tails(
    s: &Scenario,
    p: &ModelParams,
    opts: &TailOptions,
    progress: &dyn Progress,
) -> Result<TailReport, PredictError> {
    let CephSim { model, .. } = build_sim(s, p, &opts.service)?;
    simulate_model(&model, opts, progress)
}

#[cfg(test)]
mod tests;

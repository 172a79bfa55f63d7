//! Generic closed queueing networks: stations, classes and service demands.
//!
//! This module is pure queueing theory and knows nothing of Ceph, except for the one
//! builder in [`ceph`] that maps a validated Ceph scenario onto a [`Network`]. Solvers
//! (`solve`) and the simulator (`sim`) consume only [`Network`].
//!
//! Vocabulary (as in PDQ and JMT's JMVA):
//! - a **station** is a queue (FCFS/PS with `servers` identical servers) or a delay
//!   (infinite server, no queueing);
//! - a queue may have a **fractional server count** `c` (`Station::fractional_servers`,
//!   e.g. 11.4 effective cores): with `j` jobs present it works at `min(j, c)` times one
//!   server's speed, so a lone job takes its demand `D` and the capacity is `c/D`, both
//!   continuous in `c`. Rounding `c` to whole servers instead either moves the capacity
//!   or (scaling `D` to keep it) makes a lone job slower when `c` grows past `x.5`: more
//!   cores, fewer IOPS at light load. The solvers take such a station by Seidmann's
//!   decomposition with real `c` (a queue of demand `D/c` and a delay of `D(c−1)/c`),
//!   the convolution oracle exactly (`min(j, c)`), and the simulator as `⌈c⌉` servers
//!   running at `c/⌈c⌉` speed;
//! - **multiplicity** `m` means `m` identical copies of the station sharing the load
//!   evenly: a class's demand is split `D/m` per copy. 630 OSDs are one station with
//!   multiplicity 630, solved once, not 630 stations;
//! - a **class** is a closed chain with a fixed population and a think time;
//! - the **demand** `D[c][k]` (seconds) is the total service time a class-`c` job needs at
//!   station `k` (all copies together) per cycle: visits × service time;
//! - the **path demand** is the part of the demand on the job's response-time critical
//!   path. It equals the demand unless a job forks into parallel branches (a replicated
//!   write): then every branch loads the station (demand) but the job waits only for the
//!   slowest branch (path demand). Queue lengths and utilisations use the demand; the
//!   response time uses the path demand.
//! - **batching** (optional, queues only, [`Batching`]): a share `s` of every job's demand
//!   is paid once per batch rather than once per job. A copy whose queue holds `q` jobs
//!   (the job itself included) serves them in batches of `b(q) = clamp(q/g, 1, B)`, so a
//!   job's demand is `D·(1 − s + s/b(q))`: the station serves faster the longer its queue
//!   (BlueStore's commit thread, group commit in databases). The queue is the jobs waiting
//!   for a server plus the one served; jobs in service on the other servers of a
//!   multi-server copy are not in the batch. This is a load-dependent server, which breaks
//!   product form; every solver uses the same *mean-value rule*: a job is served at the
//!   speed of the queue it finds on arrival (MVA's arrival theorem, `q = 1 + Q(n−1)` of
//!   the queue: a single-server copy's whole queue length, a multi-server station's
//!   single-server part in Seidmann's decomposition, whose delay part stands for the jobs
//!   in service and runs at the same speed; the exact recursions raise that speed where
//!   it would make the station's path residence fall from one population to the next, see
//!   `solve::single`); the simulator at the speed of the queue when its service starts. Measured: against the exact load-dependent server
//!   (speed follows the queue; convolution) the rule's X is up to 6 % low (1 server) / 11 %
//!   (4 servers, Seidmann included) where batches start to form
//!   (`solve::tests::batching_mean_value_rule_against_exact_load_dependence`); against the
//!   exact chain of the simulator's rule (speed fixed at service start) up to 9 % high
//!   (`tests/sim.rs`, `batching_mean_value_rule_gap_against_the_exact_chain`); both agree
//!   within 1 % far below and far past the knee.
//!   A batching may have a second, independent term (`coalesce_share`,
//!   `coalesce_jobs_per_member`, `coalesce_max`: a share paid once per group of
//!   `clamp(q/g₂, 1, B₂)` jobs, messages read together from one connection): the demand
//!   factor is then `1 − s − s₂ + s/b(q) + s₂/b₂(q)^α`, both terms seeing the same queue,
//!   with `α` = `coalesce_exponent` (1 by default: once per group; ½ for a hard disk's seek,
//!   which shrinks as the square root of the commands it may choose from).

use serde::{Deserialize, Serialize};

pub mod ceph;
pub mod file;

/// How a station serves jobs.
/// The largest class population, server count and multiplicity a network may have. The
/// exact single-class solver keeps arrays of the population's and the servers' length
/// (at this size ~300 MB and ~20 s in a debug build, measured on
/// `models/networks/multiserver.toml` with both set to it); beyond it an allocation
/// failure would abort the process.
pub const MAX_COUNT: u32 = 10_000_000;

/// The largest demand or think time (1e9 s, ~32 years): with [`MAX_COUNT`] jobs every
/// response time stays finite in f64.
pub const MAX_DEMAND_SECS: f64 = 1e9;

/// The smallest positive demand (10⁻¹⁵ s): below it the solvers' 1/D overflows (a
/// subnormal demand gave X = 0, R = ∞ and NaN queue lengths labelled exact); a demand that
/// small is a unit slip, or 0 meant.
pub const MIN_POSITIVE_DEMAND_SECS: f64 = 1e-15;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StationKind {
    /// A queueing station with `servers` identical servers per copy.
    Queue,
    /// An infinite-server (pure delay) station: no queueing, response = demand.
    Delay,
}

/// A class's demand at one station.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Demand {
    /// Total service demand per cycle over all copies, seconds.
    pub secs: f64,
    /// The part of it on the response-time critical path, seconds (== `secs` unless the
    /// class forks into parallel branches at this station).
    pub path_secs: f64,
}

impl Demand {
    pub fn new(secs: f64) -> Self {
        Self {
            secs,
            path_secs: secs,
        }
    }
    pub fn forked(secs: f64, path_secs: f64) -> Self {
        Self { secs, path_secs }
    }
}

/// Batching at a queue (see the module doc): a share of every job's demand is paid once
/// per batch, and optionally a second share once per group of a second size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Batching {
    /// Share `s` of the demand (at batch size 1) that a batch pays once, 0 ≤ s < 1.
    pub share: f64,
    /// Jobs `g` at one copy per batch member: a copy with `q` jobs forms batches of
    /// `q/g` (e.g. a node CPU holding the work of `g` = OSDs-per-node / write share
    /// batching queues). > 0.
    pub jobs_per_member: f64,
    /// Largest batch `B` (≥ 1).
    pub max_batch: f64,
    /// Share `s₂` of the demand paid once per group of the second term (0: none);
    /// `s + s₂ < 1`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub coalesce_share: f64,
    /// Jobs `g₂` at one copy per member of the second term's group (> 0).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub coalesce_jobs_per_member: f64,
    /// Largest group `B₂` of the second term (≥ 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub coalesce_max: f64,
    /// Exponent `α` of the second term's saving, 0 < α ≤ 1: the share `s₂` is paid as
    /// `s₂ / b₂^α` (1: once per group; ½: a hard disk's seek over the `b₂` ops it may pick
    /// from, see `qn::ceph`, "Disk reordering").
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub coalesce_exponent: f64,
}

fn one() -> f64 {
    1.0
}
fn is_one(v: &f64) -> bool {
    *v == 1.0
}
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Batching {
    /// One batching term: share `s` paid once per batch of `clamp(q/g, 1, B)` jobs.
    pub fn single(share: f64, jobs_per_member: f64, max_batch: f64) -> Self {
        Self {
            share,
            jobs_per_member,
            max_batch,
            coalesce_share: 0.0,
            coalesce_jobs_per_member: 1.0,
            coalesce_max: 1.0,
            coalesce_exponent: 1.0,
        }
    }

    /// Batch size `b(q) = clamp(q/g, 1, B)` with `q` jobs at a copy.
    pub fn batch_size(&self, jobs: f64) -> f64 {
        (jobs / self.jobs_per_member).clamp(1.0, self.max_batch)
    }

    /// The second term's group size `b₂(q) = clamp(q/g₂, 1, B₂)`.
    pub fn coalesce_size(&self, jobs: f64) -> f64 {
        (jobs / self.coalesce_jobs_per_member).clamp(1.0, self.coalesce_max)
    }

    /// Demand factor `1 − s − s₂ + s/b(q) + s₂/b₂(q)^α` (1 at batch size 1) with `q`
    /// jobs at a copy.
    pub fn demand_factor(&self, jobs: f64) -> f64 {
        // Written as savings so that a batch of 1 gives exactly 1.
        1.0 - self.share * (1.0 - 1.0 / self.batch_size(jobs))
            - self.coalesce_share * (1.0 - self.coalesce_paid_share(self.coalesce_size(jobs)))
    }

    /// `b₂^(−α)`: the share of the second term a job pays in a group of `b₂` (a plain
    /// division for α = 1, the solvers' inner loop).
    fn coalesce_paid_share(&self, group: f64) -> f64 {
        if self.coalesce_exponent == 1.0 {
            1.0 / group
        } else {
            group.powf(-self.coalesce_exponent)
        }
    }

    /// Its derivative with respect to `q` (0 where both sizes are clamped).
    pub fn demand_factor_slope(&self, jobs: f64) -> f64 {
        // d/dq of s·(q/g)^(−α) is −α·s·b^(−α−1)/g (−s/(b²·g) for α = 1, as before the
        // exponent existed, so the solvers' arithmetic is unchanged there).
        let term = |share: f64, g: f64, max: f64, alpha: f64| {
            let b = jobs / g;
            if share == 0.0 || b <= 1.0 || b >= max {
                0.0
            } else if alpha == 1.0 {
                -share / (b * b * g)
            } else {
                -alpha * share * b.powf(-alpha - 1.0) / g
            }
        };
        term(self.share, self.jobs_per_member, self.max_batch, 1.0)
            + term(
                self.coalesce_share,
                self.coalesce_jobs_per_member,
                self.coalesce_max,
                self.coalesce_exponent,
            )
    }

    /// Jobs at a copy beyond which the factor no longer changes (both sizes at their
    /// largest).
    pub fn saturating_jobs(&self) -> f64 {
        let second = if self.coalesce_share > 0.0 {
            self.coalesce_jobs_per_member * self.coalesce_max
        } else {
            0.0
        };
        (self.jobs_per_member * self.max_batch).max(second)
    }

    /// The first term's batch size at which the demand factor is `f`, with the jobs at the
    /// copy found by bisection (the factor falls monotonically with the jobs). `None`
    /// when `f` is outside the factor's range.
    pub fn batch_size_at_factor(&self, f: f64) -> Option<f64> {
        let (mut lo, mut hi) = (1.0_f64, self.saturating_jobs().max(1.0));
        if !(self.min_demand_factor()..=1.0).contains(&f) {
            return None;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.demand_factor(mid) > f {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(self.batch_size(0.5 * (lo + hi)))
    }

    /// Checks the fields of station `station`'s batching.
    pub fn validate(&self, station: &str, kind: StationKind) -> Result<(), NetworkError> {
        let bad = |field, value, fix| {
            Err(NetworkError::BadBatching {
                station: station.to_string(),
                field,
                value,
                fix,
            })
        };
        if kind == StationKind::Delay {
            return bad(
                "share",
                self.share,
                "a delay has no queue to batch; remove the batching or make the station a queue",
            );
        }
        if !(self.share.is_finite() && (0.0..1.0).contains(&self.share)) {
            return bad("share", self.share, "it must be ≥ 0 and < 1");
        }
        if !(self.jobs_per_member.is_finite() && self.jobs_per_member > 0.0) {
            return bad(
                "jobs_per_member",
                self.jobs_per_member,
                "it must be finite and > 0",
            );
        }
        if !(self.max_batch.is_finite() && self.max_batch >= 1.0) {
            return bad("max_batch", self.max_batch, "it must be finite and ≥ 1");
        }
        if !(self.coalesce_share.is_finite()
            && self.coalesce_share >= 0.0
            && self.share + self.coalesce_share < 1.0)
        {
            return bad(
                "coalesce_share",
                self.coalesce_share,
                "it must be ≥ 0, and share + coalesce_share < 1",
            );
        }
        if !(self.coalesce_jobs_per_member.is_finite() && self.coalesce_jobs_per_member > 0.0) {
            return bad(
                "coalesce_jobs_per_member",
                self.coalesce_jobs_per_member,
                "it must be finite and > 0",
            );
        }
        if !(self.coalesce_max.is_finite() && self.coalesce_max >= 1.0) {
            return bad(
                "coalesce_max",
                self.coalesce_max,
                "it must be finite and ≥ 1",
            );
        }
        if !(self.coalesce_exponent > 0.0 && self.coalesce_exponent <= 1.0) {
            return bad(
                "coalesce_exponent",
                self.coalesce_exponent,
                "it must be > 0 and ≤ 1",
            );
        }
        Ok(())
    }

    /// Smallest demand factor, at the largest batches: `1 − s − s₂ + s/B + s₂/B₂^α`.
    pub fn min_demand_factor(&self) -> f64 {
        1.0 - self.share * (1.0 - 1.0 / self.max_batch)
            - self.coalesce_share * (1.0 - self.coalesce_paid_share(self.coalesce_max))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Station {
    pub name: String,
    pub kind: StationKind,
    /// Servers per copy (1 for a plain queue; ignored for delays).
    pub servers: u32,
    /// A real server count `c` with `servers − 1 < c ≤ servers`, `c > 1` (queues only):
    /// the copy serves `min(j, c)` jobs' worth of work with `j` jobs present, so its
    /// capacity is `c / D` while a lone job still takes `D` (effective cores, which are
    /// rarely a whole number; see the module doc). Every solver takes such a station the
    /// same way whether or not `c` happens to be whole, so the solution is continuous in
    /// `c`. `None`: `servers` whole servers, solved exactly where the solver can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fractional_servers: Option<f64>,
    /// Identical copies sharing the load evenly.
    pub multiplicity: u32,
    /// One entry per class, in the network's class order.
    pub demands: Vec<Demand>,
    /// Batching (queues only); `None`: every job pays its whole demand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batching: Option<Batching>,
}

impl Station {
    /// Servers per copy as a real number: [`Station::fractional_servers`] when set,
    /// otherwise `servers`.
    pub fn server_count(&self) -> f64 {
        self.fractional_servers
            .unwrap_or_else(|| f64::from(self.servers))
    }

    /// Largest throughput of class-`r` work alone, jobs per second: servers × copies /
    /// (demand × smallest demand factor); infinite for a delay or zero demand.
    pub fn capacity_per_sec(&self, r: usize) -> f64 {
        let d = self.demands[r].secs * self.batching.map_or(1.0, |b| b.min_demand_factor());
        if self.kind == StationKind::Delay || d <= 0.0 {
            f64::INFINITY
        } else {
            self.server_count() * f64::from(self.multiplicity) / d
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Class {
    pub name: String,
    /// Jobs circulating in this closed chain.
    pub population: u32,
    /// Time a job spends outside the stations per cycle, seconds.
    pub think_time_secs: f64,
}

/// A closed multi-class queueing network. Construct with [`Network::new`], which
/// validates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Network {
    pub stations: Vec<Station>,
    pub classes: Vec<Class>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NetworkError {
    #[error("the network has no classes; add at least one [[class]] with a population")]
    NoClasses,
    #[error("the network has no stations; add at least one [[station]]")]
    NoStations,
    #[error("station \"{0}\" appears twice; give every station a unique name")]
    DuplicateStation(String),
    #[error("class \"{0}\" appears twice; give every class a unique name")]
    DuplicateClass(String),
    #[error("station \"{station}\" has {got} demands but the network has {expected} classes; give one demand per class")]
    DemandCount {
        station: String,
        got: usize,
        expected: usize,
    },
    #[error("station \"{station}\", class \"{class}\": {field} = {value:e} is invalid; demands must be finite, 0 or from 1e-15 to 1e9 seconds (times are in seconds)")]
    BadDemand {
        station: String,
        class: String,
        field: &'static str,
        value: f64,
    },
    #[error("{what} = {value} is beyond the largest network cephplan solves ({max}); the exact solvers keep arrays of that length in memory: model fewer, larger units")]
    TooLarge { what: String, value: u64, max: u64 },
    #[error("station \"{0}\": servers must be ≥ 1 for a queue")]
    ZeroServers(String),
    #[error("station \"{station}\": fractional_servers = {value} is invalid; it must be above servers − 1 and 1, at most servers (here {servers}), and only on a queue")]
    BadFractionalServers {
        station: String,
        value: f64,
        servers: u32,
    },
    #[error("station \"{0}\": multiplicity must be ≥ 1")]
    ZeroMultiplicity(String),
    #[error("class \"{class}\": think time {value} is invalid; it must be finite, ≥ 0 and at most 1e9 seconds")]
    BadThinkTime { class: String, value: f64 },
    #[error("station \"{station}\": batching.{field} = {value} is invalid; {fix}")]
    BadBatching {
        station: String,
        field: &'static str,
        value: f64,
        fix: &'static str,
    },
    #[error("class \"{0}\" has zero demand everywhere and zero think time, so its throughput is unbounded; give it a demand or a think time")]
    NoWork(String),
}

impl Network {
    /// Validates and builds a network.
    pub fn new(stations: Vec<Station>, classes: Vec<Class>) -> Result<Self, NetworkError> {
        let n = Self { stations, classes };
        n.validate()?;
        Ok(n)
    }

    pub fn validate(&self) -> Result<(), NetworkError> {
        // The name is formatted only for the error (a fit validates a network per run at
        // every step).
        let too_large = |what: &dyn Fn() -> String, value: u32| {
            (value > MAX_COUNT).then(|| NetworkError::TooLarge {
                what: what(),
                value: value.into(),
                max: MAX_COUNT.into(),
            })
        };
        for c in &self.classes {
            let what = || format!("class \"{}\" population", c.name);
            if let Some(e) = too_large(&what, c.population) {
                return Err(e);
            }
        }
        for s in &self.stations {
            for (field, v) in [("servers", s.servers), ("multiplicity", s.multiplicity)] {
                let what = || format!("station \"{}\" {field}", s.name);
                if let Some(e) = too_large(&what, v) {
                    return Err(e);
                }
            }
        }
        if self.classes.is_empty() {
            return Err(NetworkError::NoClasses);
        }
        if self.stations.is_empty() {
            return Err(NetworkError::NoStations);
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in &self.stations {
            if !seen.insert(s.name.as_str()) {
                return Err(NetworkError::DuplicateStation(s.name.clone()));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for c in &self.classes {
            if !seen.insert(c.name.as_str()) {
                return Err(NetworkError::DuplicateClass(c.name.clone()));
            }
            if !(c.think_time_secs.is_finite()
                && (0.0..=MAX_DEMAND_SECS).contains(&c.think_time_secs))
            {
                return Err(NetworkError::BadThinkTime {
                    class: c.name.clone(),
                    value: c.think_time_secs,
                });
            }
        }
        for s in &self.stations {
            if s.demands.len() != self.classes.len() {
                return Err(NetworkError::DemandCount {
                    station: s.name.clone(),
                    got: s.demands.len(),
                    expected: self.classes.len(),
                });
            }
            if s.kind == StationKind::Queue && s.servers == 0 {
                return Err(NetworkError::ZeroServers(s.name.clone()));
            }
            if s.multiplicity == 0 {
                return Err(NetworkError::ZeroMultiplicity(s.name.clone()));
            }
            if let Some(c) = s.fractional_servers {
                let lo = f64::from(s.servers.max(1) - 1).max(1.0);
                if s.kind != StationKind::Queue
                    || !(c.is_finite() && c > lo && c <= f64::from(s.servers))
                {
                    return Err(NetworkError::BadFractionalServers {
                        station: s.name.clone(),
                        value: c,
                        servers: s.servers,
                    });
                }
            }
            if let Some(b) = &s.batching {
                b.validate(&s.name, s.kind)?;
            }
            for (d, c) in s.demands.iter().zip(&self.classes) {
                for (field, value) in [("demand", d.secs), ("path_demand", d.path_secs)] {
                    if !(value.is_finite()
                        && (value == 0.0
                            || (MIN_POSITIVE_DEMAND_SECS..=MAX_DEMAND_SECS).contains(&value)))
                    {
                        return Err(NetworkError::BadDemand {
                            station: s.name.clone(),
                            class: c.name.clone(),
                            field,
                            value,
                        });
                    }
                }
            }
        }
        for (ci, c) in self.classes.iter().enumerate() {
            let total: f64 = self.stations.iter().map(|s| s.demands[ci].path_secs).sum();
            if total == 0.0 && c.think_time_secs == 0.0 && c.population > 0 {
                return Err(NetworkError::NoWork(c.name.clone()));
            }
        }
        Ok(())
    }

    /// Index of a station by name.
    pub fn station_index(&self, name: &str) -> Option<usize> {
        self.stations.iter().position(|s| s.name == name)
    }

    /// Total population over all classes.
    pub fn total_population(&self) -> u64 {
        self.classes.iter().map(|c| u64::from(c.population)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn two_terms() -> Batching {
        Batching {
            coalesce_share: 0.4,
            coalesce_jobs_per_member: 10.0,
            coalesce_max: 64.0,
            ..Batching::single(0.3, 4.0, 8.0)
        }
    }

    #[test]
    fn two_batching_terms_add_their_savings() {
        // By hand: at q = 20, b = 20/4 = 5 and b₂ = 20/10 = 2, so
        // f = 1 − 0.3 − 0.4 + 0.3/5 + 0.4/2 = 0.56; its slope
        // −0.3/(5²·4) − 0.4/(2²·10) = −0.003 − 0.01 = −0.013. At q = 1000 both are clamped
        // (8 and 64): f = 0.3 + 0.0375 + 0.00625 = 0.34375, the smallest factor.
        let b = two_terms();
        assert_relative_eq!(b.demand_factor(20.0), 0.56, epsilon = 1e-12);
        assert_relative_eq!(b.demand_factor_slope(20.0), -0.013, epsilon = 1e-12);
        assert_relative_eq!(b.demand_factor(1000.0), 0.34375, epsilon = 1e-12);
        assert_relative_eq!(b.min_demand_factor(), 0.34375, epsilon = 1e-12);
        assert_eq!(b.demand_factor(1.0), 1.0);
        assert_eq!(b.saturating_jobs(), 640.0);
        // The first term's batch back from the factor: 0.56 is reached at q = 20, b = 5.
        assert_relative_eq!(b.batch_size_at_factor(0.56).unwrap(), 5.0, epsilon = 1e-9);
        assert_eq!(b.batch_size_at_factor(0.2), None);
        // One term alone is the single-term rule.
        let one = Batching::single(0.3, 4.0, 8.0);
        assert_relative_eq!(
            one.demand_factor(20.0),
            1.0 - 0.3 + 0.3 / 5.0,
            epsilon = 1e-15
        );
        assert_relative_eq!(one.min_demand_factor(), 0.7 + 0.3 / 8.0, epsilon = 1e-15);
    }

    #[test]
    fn two_batching_terms_are_validated_together() {
        assert!(two_terms().validate("cpu", StationKind::Queue).is_ok());
        let too_much = Batching {
            coalesce_share: 0.7,
            ..two_terms()
        };
        let e = too_much
            .validate("cpu", StationKind::Queue)
            .unwrap_err()
            .to_string();
        assert!(e.contains("coalesce_share") && e.contains("< 1"), "{e}");
        let bad_group = Batching {
            coalesce_jobs_per_member: 0.0,
            ..two_terms()
        };
        let e = bad_group
            .validate("cpu", StationKind::Queue)
            .unwrap_err()
            .to_string();
        assert!(e.contains("coalesce_jobs_per_member"), "{e}");
        let bad_max = Batching {
            coalesce_max: 0.5,
            ..two_terms()
        };
        let e = bad_max
            .validate("cpu", StationKind::Queue)
            .unwrap_err()
            .to_string();
        assert!(e.contains("coalesce_max") && e.contains("≥ 1"), "{e}");
        for exponent in [0.0, 1.5, f64::NAN] {
            let e = Batching {
                coalesce_exponent: exponent,
                ..two_terms()
            }
            .validate("disk", StationKind::Queue)
            .unwrap_err()
            .to_string();
            assert!(e.contains("coalesce_exponent") && e.contains("≤ 1"), "{e}");
        }
    }

    #[test]
    fn a_second_term_with_an_exponent_saves_as_that_power_of_its_group() {
        // By hand, α = ½: at q = 40, b = 40/4 = 10 → clamped to 8, b₂ = 40/10 = 4, so
        // f = 1 − 0.3·(1 − 1/8) − 0.4·(1 − 4^(−½)) = 1 − 0.2625 − 0.2 = 0.5375; the slope
        // is the second term's alone (the first is clamped): −½·0.4·4^(−3/2)/10 = −0.0025.
        // From q = 640 on both are clamped: 1 − 0.2625 − 0.4·(1 − 1/8) = 0.3875.
        let b = Batching {
            coalesce_exponent: 0.5,
            ..two_terms()
        };
        assert_relative_eq!(b.demand_factor(40.0), 0.5375, epsilon = 1e-12);
        assert_relative_eq!(b.demand_factor_slope(40.0), -0.0025, epsilon = 1e-12);
        assert_relative_eq!(b.min_demand_factor(), 0.3875, epsilon = 1e-12);
        assert_relative_eq!(b.demand_factor(1e4), 0.3875, epsilon = 1e-12);
        assert_eq!(b.demand_factor(1.0), 1.0);
        // The slope is the factor's derivative wherever neither term is clamped.
        for q in [12.0, 20.0, 28.0, 300.0] {
            let h = 1e-6;
            let numeric = (b.demand_factor(q + h) - b.demand_factor(q - h)) / (2.0 * h);
            assert_relative_eq!(b.demand_factor_slope(q), numeric, epsilon = 1e-8);
        }
        // It saves less than once per group (α = 1) at every group size above one.
        for q in [20.0, 40.0, 100.0, 640.0] {
            assert!(b.demand_factor(q) > two_terms().demand_factor(q), "{q}");
        }
    }
}

//! [`SimModel`]: the input the simulator runs — stations plus, per class, an explicit
//! ordered route of visits and fork-join steps.
//!
//! A [`crate::qn::Network`] states only demands (seconds of work per cycle); a `SimModel`
//! states *what happens to one job*: which station it visits in which order, how long each
//! service takes (a [`Dist`]), where it splits into parallel branches that must all
//! finish before it continues (fork-join: a replicated write is `primary ∥ replica₁ ∥ …`),
//! and where it takes one of several labelled branches at random (a 70/30 read/write mix in
//! one closed chain, with read and write latencies reported separately).
//!
//! Two ways to get one:
//! - [`SimModel::from_network`]: each class visits every station with a non-zero demand once,
//!   in station order, with an exponential service time equal to its demand. At a station
//!   with multiplicity `m` the job visits **one** copy (chosen by the station's
//!   [`Placement`]) and is served there for the full demand `D`; each copy then receives
//!   `1/m` of the visits, so its demand per cycle is `D/m` — exactly the per-copy demand MVA
//!   uses. MVA and the simulator therefore describe the same product-form system — except
//!   at a station with batching (carried over as [`SimStation::batching`]), which is
//!   load-dependent: the simulator applies the demand factor of the queue a job finds when
//!   its service starts, MVA that of the queue it finds on arrival (see `qn`); and at a
//!   queue where classes have different demands, which the simulator serves first come,
//!   first served (not product-form: BCMP needs one exponential service time for every
//!   class there), while MVA solves it as processor sharing. `solve` notes such stations
//!   (`solve::class_dependent_queues`); `models/networks/two_class.toml` is one (class b:
//!   53.5 ms by MVA, about 97 ms simulated).
//! - [`SimModelBuilder`] (for `qn::ceph` and tests): declare stations, then classes with a
//!   [`Route`] built from `visit` and `fork` steps.
//!
//! ```
//! use cephplan::sim::{Dist, Placement, Route, SimModel};
//! let mut b = SimModel::builder();
//! let nic = b.queue("client_nic", 1, 1, Placement::Random);
//! let osd = b.queue("osd", 4, 12, Placement::Random);
//! // A 3-replica write: client NIC, then the primary and two replicas in parallel.
//! let write = Route::new()
//!     .visit(nic, Dist::exponential(20e-6))
//!     .fork((0..3).map(|_| Route::new().visit(osd, Dist::two_moment(300e-6, 2.0))));
//! b.closed_class("randwrite", 64, Dist::deterministic(0.0), write);
//! let model = b.build().unwrap();
//! assert_eq!(model.classes[0].route.len(), 2);
//! ```
//!
//! Placement is per station. Under [`Placement::Random`] each visit picks a copy uniformly,
//! except that the branches of one fork whose *first* visit is to the same station get
//! distinct copies (while copies last, for up to 16 branches) — the primary and replicas of
//! one object live on different OSDs. [`Placement::RoundRobin`] cycles over the copies, which
//! also gives distinct copies to r ≤ m branches. Not here: solving, statistics (see
//! `sim::engine`, `sim`).

use serde::{Deserialize, Serialize};

use super::dist::Dist;
use crate::qn::{Batching, Network, NetworkError, StationKind};

/// How a visit to a station with several copies chooses its copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Uniformly at random per visit (like CRUSH over many PGs); the first visits of the
    /// branches of one fork go to distinct copies.
    #[default]
    Random,
    /// Cyclically over the copies, per station.
    RoundRobin,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimStation {
    pub name: String,
    pub kind: StationKind,
    /// Servers per copy (FCFS, shared queue per copy); ignored for delays.
    pub servers: u32,
    /// Identical copies; each visit goes to one of them.
    pub multiplicity: u32,
    pub placement: Placement,
    /// Batching (queues only; see [`Batching`]): a job starting service with `q` jobs in
    /// its copy's queue (itself and those still waiting behind it; not the jobs in service
    /// on the other servers) is served for its sampled service time ×
    /// [`Batching::demand_factor`]`(q)`. `None`: no batching.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batching: Option<Batching>,
}

/// Index of a station in [`SimModel::stations`], handed out by the builder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StationId(pub usize);

/// One step of a route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// Queue at `station` (one copy of it) and be served for a time drawn from `service`.
    Visit { station: StationId, service: Dist },
    /// Split into parallel branches; the job continues when every branch has finished.
    Fork { branches: Vec<Vec<Step>> },
    /// Start `steps` as work of the job that it does not wait for: the job continues at
    /// once, the detached steps load their stations and then end. Their service counts in
    /// the job's demand, not in its response time (work an operation leaves behind, such
    /// as the part of an OSD op's CPU that is off the op's path).
    Detach { steps: Vec<Step> },
    /// Take exactly one of the branches, at random with the given probabilities (a
    /// read/write mix in one closed chain). The job's response time is also reported under
    /// the label of the branch it took (for choices on the main route; a choice inside a
    /// fork branch routes but does not label).
    Choice { branches: Vec<ChoiceBranch> },
}

/// One alternative of a [`Step::Choice`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceBranch {
    /// Name under which the responses of jobs taking this branch are reported ("read").
    pub label: String,
    /// Probability of taking this branch; the branches of one choice sum to 1.
    pub probability: f64,
    pub steps: Vec<Step>,
}

/// Route builder: an ordered list of [`Step`]s.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Route(pub Vec<Step>);

impl Route {
    pub fn new() -> Self {
        Self(Vec::new())
    }
    /// Appends a visit.
    pub fn visit(mut self, station: StationId, service: Dist) -> Self {
        self.0.push(Step::Visit { station, service });
        self
    }
    /// Appends a fork-join over the given branches.
    pub fn fork(mut self, branches: impl IntoIterator<Item = Route>) -> Self {
        self.0.push(Step::Fork {
            branches: branches.into_iter().map(|r| r.0).collect(),
        });
        self
    }
    /// Appends a random choice of one of `(label, probability, route)`.
    pub fn choose<'a>(mut self, branches: impl IntoIterator<Item = (&'a str, f64, Route)>) -> Self {
        self.0.push(Step::Choice {
            branches: branches
                .into_iter()
                .map(|(label, probability, r)| ChoiceBranch {
                    label: label.to_string(),
                    probability,
                    steps: r.0,
                })
                .collect(),
        });
        self
    }
    /// Appends work the job starts and does not wait for ([`Step::Detach`]).
    pub fn detach(mut self, work: Route) -> Self {
        self.0.push(Step::Detach { steps: work.0 });
        self
    }
    /// Appends the steps of another route.
    pub fn then(mut self, other: Route) -> Self {
        self.0.extend(other.0);
        self
    }
}

/// Where a class's jobs come from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Arrivals {
    /// A closed chain: `population` jobs cycle forever, thinking between cycles.
    Closed { population: u32, think: Dist },
    /// An open Poisson stream (used to check against open-system results such as M/M/1
    /// and fork-join queues); each job leaves after one pass of the route.
    Open { rate_per_sec: f64 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimClass {
    pub name: String,
    pub arrivals: Arrivals,
    pub route: Vec<Step>,
}

/// A validated simulation model. Build with [`SimModel::builder`] or
/// [`SimModel::from_network`]; [`SimModel::validate`] re-checks a deserialised one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimModel {
    pub stations: Vec<SimStation>,
    pub classes: Vec<SimClass>,
}

impl SimModel {
    /// Multiplies the service time of every visit to `station` (in every route, fork and
    /// choice) by `factor`.
    pub fn scale_service(&mut self, station: StationId, factor: f64) {
        fn walk(steps: &mut [Step], station: StationId, factor: f64) {
            for step in steps {
                match step {
                    Step::Visit {
                        station: s,
                        service,
                    } if *s == station => {
                        *service = service.scaled(factor);
                    }
                    Step::Visit { .. } => {}
                    Step::Fork { branches } => {
                        for b in branches {
                            walk(b, station, factor);
                        }
                    }
                    Step::Detach { steps } => walk(steps, station, factor),
                    Step::Choice { branches } => {
                        for b in branches {
                            walk(&mut b.steps, station, factor);
                        }
                    }
                }
            }
        }
        for c in &mut self.classes {
            walk(&mut c.route, station, factor);
        }
    }
}

/// A number as an error message shows it: plain, or in exponent form when very large or
/// very small (a mistyped 1e300 would otherwise print 301 digits).
fn short_number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimModelError {
    #[error("the simulation model has no classes; add at least one class")]
    NoClasses,
    #[error("the simulation model has no stations; add at least one station")]
    NoStations,
    #[error("station \"{0}\" appears twice; give every station a unique name")]
    DuplicateStation(String),
    #[error("class \"{0}\" appears twice; give every class a unique name")]
    DuplicateClass(String),
    #[error("station \"{0}\": servers must be ≥ 1 for a queue")]
    ZeroServers(String),
    #[error("station \"{0}\": multiplicity must be ≥ 1")]
    ZeroMultiplicity(String),
    #[error("class \"{class}\": its route visits station #{index}, but the model has {count} station(s), numbered 0 to {}; route the class through one of them", .count.saturating_sub(1))]
    UnknownStation {
        class: String,
        index: usize,
        count: usize,
    },
    #[error("class \"{class}\", {place}: {field} = {} is invalid; {}", short_number(*.value), if *.field == "scv" { "a squared coefficient of variation must be finite, from 0 (fixed) to 100 (1 is exponential): beyond 100 the rare long services are too rare to sample" } else { "a time must be finite, ≥ 0 and at most 10⁶ seconds (times are in seconds)" })]
    BadDist {
        class: String,
        place: String,
        field: &'static str,
        value: f64,
    },
    #[error("class \"{0}\": a fork has no branches; give it at least one branch or remove it")]
    EmptyFork(String),
    #[error(
        "class \"{0}\": a detached step has no steps; give it at least one visit or remove it"
    )]
    EmptyDetach(String),
    #[error("class \"{class}\": a choice {problem}; give each branch a probability in [0, 1] so that they sum to 1")]
    BadChoice { class: String, problem: String },
    #[error(
        "class \"{class}\": arrival rate {value} is invalid; it must be finite and > 0 per second"
    )]
    BadRate { class: String, value: f64 },
    #[error("class \"{0}\": its route has no service time and its think time is zero, so a job would cycle without time passing; give it a service or think time")]
    NoWork(String),
    #[error("station \"{station}\", class \"{class}\": path demand {path_secs} s differs from demand {secs} s, which means a fork-join that a plain network cannot describe; build the SimModel with Route::fork (qn::ceph does) instead of from_network")]
    ForkInNetwork {
        station: String,
        class: String,
        secs: f64,
        path_secs: f64,
    },
    #[error("class \"{0}\" is open but its route is empty; give it at least one visit")]
    EmptyOpenRoute(String),
    /// A station's batching is invalid: always [`NetworkError::BadBatching`], which names
    /// the station, the field and the fix.
    #[error(transparent)]
    BadBatching(NetworkError),
}

/// Accumulates stations and classes; [`SimModelBuilder::build`] validates.
#[derive(Debug, Clone, Default)]
pub struct SimModelBuilder {
    stations: Vec<SimStation>,
    classes: Vec<SimClass>,
}

impl SimModelBuilder {
    /// Adds an FCFS queueing station with `servers` servers per copy.
    pub fn queue(
        &mut self,
        name: &str,
        servers: u32,
        multiplicity: u32,
        placement: Placement,
    ) -> StationId {
        self.queue_station(name, servers, multiplicity, placement, None)
    }
    /// Adds an FCFS queueing station whose copies serve in batches (see
    /// [`SimStation::batching`]).
    pub fn batching_queue(
        &mut self,
        name: &str,
        servers: u32,
        multiplicity: u32,
        placement: Placement,
        batching: Batching,
    ) -> StationId {
        self.queue_station(name, servers, multiplicity, placement, Some(batching))
    }

    fn queue_station(
        &mut self,
        name: &str,
        servers: u32,
        multiplicity: u32,
        placement: Placement,
        batching: Option<Batching>,
    ) -> StationId {
        self.station(SimStation {
            name: name.to_string(),
            kind: StationKind::Queue,
            servers,
            multiplicity,
            placement,
            batching,
        })
    }
    /// Adds an infinite-server (pure delay) station.
    pub fn delay(&mut self, name: &str) -> StationId {
        self.station(SimStation {
            name: name.to_string(),
            kind: StationKind::Delay,
            servers: 1,
            multiplicity: 1,
            placement: Placement::Random,
            batching: None,
        })
    }
    /// Adds a station as given.
    pub fn station(&mut self, s: SimStation) -> StationId {
        self.stations.push(s);
        StationId(self.stations.len() - 1)
    }
    /// Adds a closed class.
    pub fn closed_class(&mut self, name: &str, population: u32, think: Dist, route: Route) {
        self.classes.push(SimClass {
            name: name.to_string(),
            arrivals: Arrivals::Closed { population, think },
            route: route.0,
        });
    }
    /// Adds an open class with Poisson arrivals.
    pub fn open_class(&mut self, name: &str, rate_per_sec: f64, route: Route) {
        self.classes.push(SimClass {
            name: name.to_string(),
            arrivals: Arrivals::Open { rate_per_sec },
            route: route.0,
        });
    }
    pub fn build(self) -> Result<SimModel, SimModelError> {
        let m = SimModel {
            stations: self.stations,
            classes: self.classes,
        };
        m.validate()?;
        Ok(m)
    }
}

impl SimModel {
    pub fn builder() -> SimModelBuilder {
        SimModelBuilder::default()
    }

    /// The simulator's reading of a plain network (see the module docs): one visit per
    /// station with non-zero demand, in station order, exponential service with mean equal to
    /// the class's demand, one copy per visit chosen by `placement`; exponential think time.
    /// Fails with [`SimModelError::ForkInNetwork`] where a path demand differs from the
    /// demand, since that stands for a fork-join whose branches the network does not state.
    pub fn from_network(net: &Network, placement: Placement) -> Result<Self, SimModelError> {
        let stations = net
            .stations
            .iter()
            .map(|s| SimStation {
                name: s.name.clone(),
                kind: s.kind,
                servers: s.servers,
                multiplicity: s.multiplicity,
                placement,
                batching: s.batching,
            })
            .collect();
        let mut classes = Vec::with_capacity(net.classes.len());
        for (ci, c) in net.classes.iter().enumerate() {
            let mut route = Route::new();
            for (si, s) in net.stations.iter().enumerate() {
                let d = s.demands[ci];
                if d.path_secs != d.secs {
                    return Err(SimModelError::ForkInNetwork {
                        station: s.name.clone(),
                        class: c.name.clone(),
                        secs: d.secs,
                        path_secs: d.path_secs,
                    });
                }
                if d.secs > 0.0 {
                    route = route.visit(StationId(si), Dist::exponential(d.secs));
                }
            }
            classes.push(SimClass {
                name: c.name.clone(),
                arrivals: Arrivals::Closed {
                    population: c.population,
                    think: Dist::exponential(c.think_time_secs),
                },
                route: route.0,
            });
        }
        let mut m = SimModel { stations, classes };
        // A fractional server count c runs as ⌈c⌉ servers at c/⌈c⌉ speed (see `crate::qn`).
        for (si, s) in net.stations.iter().enumerate() {
            if let Some(c) = s.fractional_servers {
                m.scale_service(StationId(si), f64::from(s.servers) / c);
            }
        }
        m.validate()?;
        Ok(m)
    }

    pub fn validate(&self) -> Result<(), SimModelError> {
        if self.classes.is_empty() {
            return Err(SimModelError::NoClasses);
        }
        if self.stations.is_empty() {
            return Err(SimModelError::NoStations);
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in &self.stations {
            if !seen.insert(s.name.as_str()) {
                return Err(SimModelError::DuplicateStation(s.name.clone()));
            }
            if s.kind == StationKind::Queue && s.servers == 0 {
                return Err(SimModelError::ZeroServers(s.name.clone()));
            }
            if s.multiplicity == 0 {
                return Err(SimModelError::ZeroMultiplicity(s.name.clone()));
            }
            if let Some(b) = &s.batching {
                b.validate(&s.name, s.kind)
                    .map_err(SimModelError::BadBatching)?;
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for c in &self.classes {
            if !seen.insert(c.name.as_str()) {
                return Err(SimModelError::DuplicateClass(c.name.clone()));
            }
            let max_path = self.check_steps(c, &c.route)?;
            match c.arrivals {
                Arrivals::Closed { think, .. } => {
                    think
                        .check()
                        .map_err(|(field, value)| SimModelError::BadDist {
                            class: c.name.clone(),
                            place: "think time".into(),
                            field,
                            value,
                        })?;
                    if max_path == 0.0 && think.mean_secs() == 0.0 {
                        return Err(SimModelError::NoWork(c.name.clone()));
                    }
                }
                Arrivals::Open { rate_per_sec } => {
                    if !(rate_per_sec.is_finite() && rate_per_sec > 0.0) {
                        return Err(SimModelError::BadRate {
                            class: c.name.clone(),
                            value: rate_per_sec,
                        });
                    }
                    if c.route.is_empty() {
                        return Err(SimModelError::EmptyOpenRoute(c.name.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks a route; returns the sum of mean service times along its longest branch
    /// (zero means a job can pass without time passing).
    fn check_steps(&self, c: &SimClass, steps: &[Step]) -> Result<f64, SimModelError> {
        let mut total = 0.0;
        for step in steps {
            match step {
                Step::Visit { station, service } => {
                    let s = self.stations.get(station.0).ok_or_else(|| {
                        SimModelError::UnknownStation {
                            class: c.name.clone(),
                            index: station.0,
                            count: self.stations.len(),
                        }
                    })?;
                    service
                        .check()
                        .map_err(|(field, value)| SimModelError::BadDist {
                            class: c.name.clone(),
                            place: format!("service at station \"{}\"", s.name),
                            field,
                            value,
                        })?;
                    total += service.mean_secs();
                }
                Step::Fork { branches } => {
                    if branches.is_empty() {
                        return Err(SimModelError::EmptyFork(c.name.clone()));
                    }
                    let mut longest: f64 = 0.0;
                    for b in branches {
                        longest = longest.max(self.check_steps(c, b)?);
                    }
                    total += longest;
                }
                Step::Detach { steps } => {
                    if steps.is_empty() {
                        return Err(SimModelError::EmptyDetach(c.name.clone()));
                    }
                    // Checked, but off the job's path: it adds no time to the route.
                    self.check_steps(c, steps)?;
                }
                Step::Choice { branches } => {
                    let bad = |problem: String| SimModelError::BadChoice {
                        class: c.name.clone(),
                        problem,
                    };
                    if branches.is_empty() {
                        return Err(bad("has no branches".into()));
                    }
                    let mut sum = 0.0;
                    let mut least: f64 = f64::INFINITY;
                    for b in branches {
                        let p = b.probability;
                        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
                            return Err(bad(format!("branch \"{}\" has probability {p}", b.label)));
                        }
                        sum += p;
                        let t = self.check_steps(c, &b.steps)?;
                        if p > 0.0 {
                            least = least.min(t);
                        }
                    }
                    if (sum - 1.0).abs() > 1e-9 {
                        return Err(bad(format!("has probabilities summing to {sum}")));
                    }
                    // A job could take the branch with the least work every time.
                    total += least;
                }
            }
        }
        Ok(total)
    }

    /// Mean service demand per cycle, `[station][class]` in seconds: the sum of mean
    /// service times of every visit of the class's route to the station, over all branches
    /// of its forks and detached steps, and weighted by probability over the branches of its choices. This is the `Demand::secs` of the equivalent [`Network`] (a builder that
    /// emits both can check that they agree); open classes count per job.
    pub fn demands(&self) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; self.classes.len()]; self.stations.len()];
        for (ci, c) in self.classes.iter().enumerate() {
            for_each_visit(&c.route, 1.0, &mut |station, weight, service| {
                d[station.0][ci] += weight * service.mean_secs()
            });
        }
        d
    }

    /// Station index by name.
    pub fn station_id(&self, name: &str) -> Option<StationId> {
        self.stations
            .iter()
            .position(|s| s.name == name)
            .map(StationId)
    }
}

/// Calls `f(station, weight, service)` for every visit of `steps`, where `weight` is the
/// expected number of times the visit happens per pass (products of choice probabilities).
pub(crate) fn for_each_visit(
    steps: &[Step],
    weight: f64,
    f: &mut dyn FnMut(StationId, f64, &Dist),
) {
    for s in steps {
        match s {
            Step::Visit { station, service } => f(*station, weight, service),
            Step::Fork { branches } => branches.iter().for_each(|b| for_each_visit(b, weight, f)),
            Step::Detach { steps } => for_each_visit(steps, weight, f),
            Step::Choice { branches } => branches
                .iter()
                .for_each(|b| for_each_visit(&b.steps, weight * b.probability, f)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qn::{Class, Demand, Station};

    fn net(path_secs: f64) -> Network {
        Network::new(
            vec![
                Station {
                    name: "cpu".into(),
                    kind: StationKind::Queue,
                    servers: 2,
                    multiplicity: 4,
                    demands: vec![Demand::forked(0.004, path_secs)],
                    batching: None,
                    fractional_servers: None,
                },
                Station {
                    name: "idle".into(),
                    kind: StationKind::Queue,
                    servers: 1,
                    multiplicity: 1,
                    demands: vec![Demand::new(0.0)],
                    batching: None,
                    fractional_servers: None,
                },
            ],
            vec![Class {
                name: "c".into(),
                population: 3,
                think_time_secs: 0.01,
            }],
        )
        .unwrap()
    }

    #[test]
    fn from_network_serves_one_copy_for_the_full_demand() {
        let m = SimModel::from_network(&net(0.004), Placement::RoundRobin).unwrap();
        // The zero-demand station is not visited; the visit to "cpu" takes the whole
        // demand at one of the 4 copies, so each copy sees D/4 per cycle like MVA.
        assert_eq!(
            m.classes[0].route,
            vec![Step::Visit {
                station: StationId(0),
                service: Dist::exponential(0.004)
            }]
        );
        assert_eq!(m.stations[0].multiplicity, 4);
        assert_eq!(m.stations[0].placement, Placement::RoundRobin);
    }

    #[test]
    fn demands_sum_all_branches_and_match_the_network() {
        let n = net(0.004);
        let m = SimModel::from_network(&n, Placement::Random).unwrap();
        assert_eq!(m.demands(), vec![vec![0.004], vec![0.0]]);
        let mut b = SimModel::builder();
        let osd = b.queue("osd", 1, 6, Placement::Random);
        b.closed_class(
            "w",
            1,
            Dist::exponential(1.0),
            Route::new()
                .visit(osd, Dist::exponential(0.5))
                .fork((0..3).map(|_| Route::new().visit(osd, Dist::deterministic(1.0)))),
        );
        assert_eq!(b.build().unwrap().demands(), vec![vec![3.5]]);

        let mut b = SimModel::builder();
        let osd = b.queue("osd", 1, 6, Placement::Random);
        b.closed_class(
            "mix",
            1,
            Dist::exponential(1.0),
            Route::new().choose([
                (
                    "read",
                    0.75,
                    Route::new().visit(osd, Dist::exponential(1.0)),
                ),
                (
                    "write",
                    0.25,
                    Route::new().visit(osd, Dist::exponential(5.0)),
                ),
            ]),
        );
        assert_eq!(b.build().unwrap().demands(), vec![vec![2.0]]);
    }

    #[test]
    fn choices_must_sum_to_one() {
        let mut b = SimModel::builder();
        let q = b.queue("q", 1, 1, Placement::Random);
        b.closed_class(
            "mix",
            1,
            Dist::exponential(1.0),
            Route::new().choose([
                ("a", 0.5, Route::new().visit(q, Dist::exponential(1.0))),
                ("b", 0.4, Route::new().visit(q, Dist::exponential(1.0))),
            ]),
        );
        let e = b.build().unwrap_err().to_string();
        assert!(e.contains("summing to 0.9"), "{e}");
    }

    #[test]
    fn from_network_refuses_path_demands_it_cannot_represent() {
        let e = SimModel::from_network(&net(0.002), Placement::Random).unwrap_err();
        assert!(matches!(e, SimModelError::ForkInNetwork { .. }));
        assert!(e.to_string().contains("Route::fork"), "{e}");
    }

    #[test]
    fn builder_validates_routes() {
        let mut b = SimModel::builder();
        let q = b.queue("q", 1, 1, Placement::Random);
        b.closed_class(
            "c",
            1,
            Dist::exponential(1.0),
            Route::new().fork(Vec::<Route>::new()),
        );
        assert_eq!(b.build(), Err(SimModelError::EmptyFork("c".into())));

        let mut b = SimModel::builder();
        b.queue("q", 1, 1, Placement::Random);
        b.closed_class(
            "c",
            1,
            Dist::exponential(0.0),
            Route::new().visit(q, Dist::deterministic(0.0)),
        );
        assert_eq!(b.build(), Err(SimModelError::NoWork("c".into())));

        // Detached work is off the job's path: it cannot be a route's only work, and it
        // must have steps.
        let mut b = SimModel::builder();
        let q = b.queue("q", 1, 1, Placement::Random);
        b.closed_class(
            "c",
            1,
            Dist::exponential(0.0),
            Route::new().detach(Route::new().visit(q, Dist::deterministic(0.001))),
        );
        assert_eq!(b.build(), Err(SimModelError::NoWork("c".into())));
        let mut b = SimModel::builder();
        let q = b.queue("q", 1, 1, Placement::Random);
        b.closed_class(
            "c",
            1,
            Dist::exponential(1.0),
            Route::new()
                .visit(q, Dist::deterministic(0.001))
                .detach(Route::new()),
        );
        assert_eq!(b.build(), Err(SimModelError::EmptyDetach("c".into())));

        let mut b = SimModel::builder();
        b.queue("q", 1, 1, Placement::Random);
        b.closed_class(
            "c",
            1,
            Dist::exponential(1.0),
            Route::new().visit(StationId(3), Dist::exponential(1.0)),
        );
        let e = b.build().unwrap_err();
        assert!(
            e.to_string().contains("has 1 station(s), numbered 0 to 0"),
            "{e}"
        );

        let mut b = SimModel::builder();
        b.queue("q", 1, 1, Placement::Random);
        b.closed_class(
            "c",
            1,
            Dist::exponential(1.0),
            Route::new().visit(q, Dist::two_moment(1.0, -2.0)),
        );
        let e = b.build().unwrap_err();
        assert!(e.to_string().contains("scv = -2"), "{e}");
    }
}

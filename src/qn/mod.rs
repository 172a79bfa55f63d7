//! Generic closed queueing networks: stations, classes and service demands.
//!
//! This module is pure queueing theory and knows nothing of Ceph, except for the one
//! builder in [`ceph`] that maps a validated Ceph scenario onto a [`Network`]. Solvers
//! (`solve`) and the simulator (`sim`) consume only [`Network`].
//!
//! Vocabulary (as in PDQ and JMT's JMVA):
//! - a **station** is a queue (FCFS/PS with `servers` identical servers) or a delay
//!   (infinite server, no queueing);
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

use serde::{Deserialize, Serialize};

pub mod ceph;
pub mod file;

/// How a station serves jobs.
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Station {
    pub name: String,
    pub kind: StationKind,
    /// Servers per copy (1 for a plain queue; ignored for delays).
    pub servers: u32,
    /// Identical copies sharing the load evenly.
    pub multiplicity: u32,
    /// One entry per class, in the network's class order.
    pub demands: Vec<Demand>,
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
    #[error("station \"{station}\", class \"{class}\": {field} = {value} is invalid; demands must be finite and ≥ 0 seconds")]
    BadDemand {
        station: String,
        class: String,
        field: &'static str,
        value: f64,
    },
    #[error("station \"{0}\": servers must be ≥ 1 for a queue")]
    ZeroServers(String),
    #[error("station \"{0}\": multiplicity must be ≥ 1")]
    ZeroMultiplicity(String),
    #[error("class \"{class}\": think time {value} is invalid; it must be finite and ≥ 0 seconds")]
    BadThinkTime { class: String, value: f64 },
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
            if !(c.think_time_secs.is_finite() && c.think_time_secs >= 0.0) {
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
            for (d, c) in s.demands.iter().zip(&self.classes) {
                for (field, value) in [("demand", d.secs), ("path_demand", d.path_secs)] {
                    if !(value.is_finite() && value >= 0.0) {
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

//! The simulation twin of [`super::build`]: the same Ceph scenario as a [`SimModel`] whose
//! routes state the fork-joins that the MVA network can only summarise as path demands.
//!
//! **Same stations, same numbers.** The stations (names, kinds, servers, multiplicities) and
//! every service time come from the same per-operation costs as the MVA network, so the
//! simulated demand at every station equals [`Demand::secs`](crate::qn::Demand) of the
//! network and the longest branch of a route (by mean) equals the sum of its path demands
//! (tests check both). A station with `m` copies is simulated as `m` copies: every visit
//! picks one copy uniformly at random and is served there for the whole operation, so each
//! copy sees `1/m` of the work, as MVA's multiplicity assumes — demand is never inflated.
//!
//! **Routes** (one closed class `io`, no think time, population = I/Os in flight; a mix is a
//! random [`Route::choose`] between the labelled branches `read` and `write` with the read
//! share as probability, so read and write latencies are reported separately):
//!
//! | I/O | route |
//! |---|---|
//! | read, replicated | client CPU → primary OSD CPU → device read → public tx → client rx → software latency |
//! | read, EC touching `t` shards | client CPU → primary OSD CPU → fork(local device read ∥ `t−1` × (remote OSD CPU → device read → cluster tx)) → primary cluster rx of the `t−1` shards → primary OSD CPU per byte of them, received and sent on → public tx → client rx → software latency; for a partial read (Tentacle) that branch with probability `t/k` (the primary holds one of the chunks), else `t` remote shards and no local read |
//! | write, replicated size `r` | client CPU → client tx → public rx → primary OSD CPU (its op and its CPU per byte of the copies it sends) → cluster tx of `r−1` copies → fork(primary device write ∥ `r−1` × (cluster rx → replica OSD CPU → device write)) → software latency |
//! | write, EC `k+m` | as replicated with `k+m` shards of one chunk each and the encoding on the primary's CPU; a partial-stripe write first gathers `k` data chunks like an EC read |
//!
//! A device write is the data-device queue then its latency delay (then the WAL device and
//! its delay when there is one). Every OSD CPU visit is the op's path share
//! (`osd_cpu_path_share`, [`super`]'s "Lone-op path share") followed by the rest as
//! detached work the I/O does not wait for ([`Step::Detach`](crate::sim::Step::Detach)),
//! so the station's demand is the whole op and the route's longest branch the path
//! demands' sum. Visits with zero mean are left out.
//!
//! **Placement.** Every station is [`Placement::Random`]; the first visits of a fork's
//! branches go to distinct copies when they are to the same station (the replicas'
//! cluster-rx NICs, so replicas land on distinct nodes). Later visits are independent, so
//! a replica's device may be the primary's device (probability `1/devices` per replica, 1.4 %
//! with 72 OSDs), which CRUSH rules out; it is the even-spread assumption MVA makes too.
//!
//! **Batching** of the OSD CPU and the devices' group commit ([`SimBatching`]). By default
//! ([`SimBatching::MeanField`]) the simulation runs every batching station (the OSD CPU,
//! the data and WAL devices) at the speed the exact MVA solution of the same scenario finds
//! at the simulated population (its demand factor), so that the simulation
//! describes the model calibration fitted (which uses MVA's mean-value rule) and adds what
//! MVA leaves out: fork-join synchronisation, service shapes and tails. With
//! [`SimBatching::Dynamic`] the station batches in the simulation itself, at the queue
//! present when a service starts ([`crate::sim::SimStation::batching`]). The two differ
//! most where batches start to form. Seed-000 randwrite (fitted default model), IOPS:
//!
//! | iodepth | exact MVA | simulated, mean-field | simulated, dynamic |
//! |---|---|---|---|
//! | 1 | 10,704 | 8,618 ± 15 | 8,618 ± 15 |
//! | 4 | 42,088 | 34,472 ± 83 | 34,472 ± 83 |
//! | 16 | 173,614 | 173,708 ± 663 | 168,094 ± 560 |
//!
//! At iodepth 1 and 4 nobody waits for one of the Altra's 128 cores, so no batch forms in
//! either rule and every write op pays the whole batch cost; the simulations are then
//! slower than MVA by the fork-join synchronisation MVA's path demand leaves out (a write
//! waits for the slower of its primary's and a replica's slow OSD CPU op). Past the knee
//! the mean-field simulation agrees with MVA and the dynamic one is 3 % slower.
//!
//! **Service distributions** are exponential unless [`CephSimOptions`] says otherwise: the
//! devices (queue and latency delay) and the rest can each be deterministic or follow the
//! two-moment family of [`Dist::two_moment`].
//!
//! Not here: running the simulation or reporting (`predict::predict_tails`), the generic
//! simulator (`sim`).

use serde::{Deserialize, Serialize};

use super::{build, BuildError, CephNetwork, DeviceWork, Plan};
use crate::model::ModelParams;
use crate::qn::StationKind;
use crate::sim::{Dist, Placement, Route, SimModel, SimStation, StationId};
use crate::spec::{Protection, Scenario};

/// Label of the read branch of a mixed workload in the simulation report.
pub const READ_LABEL: &str = "read";
/// Label of the write branch of a mixed workload in the simulation report.
pub const WRITE_LABEL: &str = "write";

/// Shape of a group of service-time distributions, each with the mean the model gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServiceShape {
    /// Exponential (SCV 1): the MVA assumption.
    #[default]
    Exponential,
    /// Always exactly the mean (SCV 0).
    Deterministic,
    /// The two-moment family with this squared coefficient of variation.
    TwoMoment { scv: f64 },
}

impl ServiceShape {
    /// The distribution of this shape with the given mean.
    pub fn dist(self, mean_secs: f64) -> Dist {
        match self {
            ServiceShape::Exponential => Dist::exponential(mean_secs),
            ServiceShape::Deterministic => Dist::deterministic(mean_secs),
            ServiceShape::TwoMoment { scv } => Dist::two_moment(mean_secs, scv),
        }
    }
}

/// How the Ceph simulation model draws service times. [`Default`]: all exponential.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct CephSimOptions {
    /// Data and WAL devices: the device queues and their latency delays.
    pub device_service: ServiceShape,
    /// Every other station (CPUs, NICs, software latency).
    pub other_service: ServiceShape,
    /// How the OSD CPU's write batching is simulated.
    #[serde(default)]
    pub batching: SimBatching,
}

/// How the batching stations (OSD CPU, group-committing devices) are simulated (see the
/// module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SimBatching {
    /// At the speed exact MVA finds for the simulated population (what calibration fits).
    #[default]
    MeanField,
    /// At the speed of the queue present when each service starts.
    Dynamic,
}

/// A scenario built for simulation, with the MVA network of the same scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct CephSim {
    /// One closed class "io" whose route is described in the module docs.
    pub model: SimModel,
    /// The MVA network of the same scenario and parameters (same station order).
    pub network: CephNetwork,
    /// The OSD CPU's demand factor applied to `model` ([`SimBatching::MeanField`] with a
    /// batching OSD CPU), else `None`; the devices' group-commit factors are applied too.
    pub osd_cpu_factor: Option<f64>,
    /// `model` before those factors (mean-field batching only).
    unscaled: Option<SimModel>,
}

impl CephSim {
    /// The same model with `population` I/Os in flight (a population sweep); mean-field
    /// batching takes MVA's factor at that population.
    pub fn with_population(&self, population: u32) -> SimModel {
        let mut m = self.unscaled.as_ref().unwrap_or(&self.model).clone();
        for c in &mut m.classes {
            if let crate::sim::Arrivals::Closed { population: p, .. } = &mut c.arrivals {
                *p = population;
            }
        }
        if self.unscaled.is_some() {
            for (station, f) in mean_field_factors(&self.network, population) {
                m.scale_service(StationId(station), f);
            }
        }
        m
    }
}

/// Each batching station's index and the demand factor of its batching in the exact MVA
/// solution at `population`: utilisation × servers × copies / (throughput × demand) (1
/// without load).
fn mean_field_factors(net: &CephNetwork, population: u32) -> Vec<(usize, f64)> {
    let mut n = net.network.clone();
    n.classes[0].population = population;
    let sol = crate::solve::single::solve_exact(&n);
    let x = sol.classes[0].throughput_per_sec;
    n.stations
        .iter()
        .enumerate()
        .filter(|(_, st)| st.batching.is_some())
        .map(|(i, st)| {
            let d = st.demands[0].secs;
            let f = if x > 0.0 && d > 0.0 {
                sol.stations[i].utilization * st.server_count() * f64::from(st.multiplicity)
                    / (x * d)
            } else {
                1.0
            };
            (i, f)
        })
        .collect()
}

/// Lays out routes: skips zero-mean visits and picks the distribution per station group.
struct Layout<'p, 'a> {
    plan: &'p Plan<'a>,
    opts: CephSimOptions,
}

impl Layout<'_, '_> {
    fn visit(&self, r: Route, station: usize, mean_secs: f64) -> Route {
        if mean_secs <= 0.0 {
            return r;
        }
        let ids = &self.plan.ids;
        let device = station == ids.data
            || station == ids.data_lat
            || ids.wal.is_some_and(|(q, l)| station == q || station == l);
        let shape = if device {
            self.opts.device_service
        } else {
            self.opts.other_service
        };
        r.visit(StationId(station), shape.dist(mean_secs))
    }

    /// An OSD op's CPU work: its path share on the route, then the rest as work the I/O
    /// leaves behind (module doc of `qn::ceph`, "Lone-op path share").
    fn osd_op(&self, r: Route, mean_secs: f64) -> Route {
        let cpu = self.plan.ids.osd_cpu;
        let share = self.plan.cpu_path_share;
        if share >= 1.0 || mean_secs <= 0.0 {
            return self.visit(r, cpu, mean_secs);
        }
        let off = self.visit(Route::new(), cpu, (1.0 - share) * mean_secs);
        self.visit(r, cpu, share * mean_secs).detach(off)
    }

    /// Appends the device work of one OSD operation: data device, then WAL device. A
    /// deferred write's data-device latency after its WAL commit is off its path (a pure
    /// delay, so leaving it off the route changes no station's load).
    fn device(&self, r: Route, w: DeviceWork) -> Route {
        let ids = &self.plan.ids;
        let mut r = self.visit(r, ids.data, w.data_svc);
        r = self.visit(r, ids.data_lat, w.data_path_share * w.data_lat);
        if let (Some((q, l)), Some((svc, lat))) = (ids.wal, w.wal) {
            r = self.visit(r, q, svc);
            r = self.visit(r, l, lat);
        }
        r
    }

    /// `branches` (≥ 1) in parallel: the primary's `local` work and `branches − 1` copies of
    /// `remote`; a single branch is inlined.
    fn fork(&self, r: Route, branches: u32, local: Route, remote: Route) -> Route {
        if branches <= 1 {
            return r.then(local);
        }
        r.fork(std::iter::once(local).chain((1..branches).map(|_| remote.clone())))
    }

    /// A read of `shards` data shards of `shard_bytes` each, gathered at the primary: the
    /// primary's op, then the remote shards (op, read, send) in parallel with the local read
    /// when the primary holds one of the chunks (`local`), then the primary receives the
    /// remote shards (its NIC, then its CPU per byte of them, twice when it `forwards` them
    /// to the client: a read, not a read-modify-write's gather).
    fn gather(
        &self,
        r: Route,
        shards: u32,
        shard_bytes: f64,
        local: bool,
        forwards: bool,
    ) -> Route {
        let p = self.plan;
        let ids = &p.ids;
        let cpu_one = p.osd_cpu_secs(1.0, shard_bytes, p.osd_read);
        let read = p.device_read(shard_bytes);
        // The primary's op reads its own chunk only when it holds one.
        let primary_bytes = if local { shard_bytes } else { 0.0 };
        let r = self.osd_op(r, p.osd_cpu_secs(1.0, primary_bytes, p.osd_read));
        let remote = self.osd_op(Route::new(), cpu_one);
        let remote = self.device(remote, read);
        let remote = self.visit(remote, ids.cl_tx, p.cluster_wire_secs(shard_bytes));
        let (r, remotes) = if local {
            let here = self.device(Route::new(), read);
            (self.fork(r, shards, here, remote), shards.saturating_sub(1))
        } else if shards <= 1 {
            (r.then(remote), shards)
        } else {
            (r.fork((0..shards).map(|_| remote.clone())), shards)
        };
        let gathered = f64::from(remotes) * shard_bytes;
        let r = self.visit(r, ids.cl_rx, p.cluster_wire_secs(gathered));
        // The primary's CPU per byte of the chunks it receives, and of sending them on to
        // the client when it does ("Forwarded bytes").
        let handled = if forwards { 2.0 } else { 1.0 } * gathered;
        self.osd_op(r, p.osd_cpu_secs(0.0, handled, 0.0))
    }

    /// A write of `copies` copies (replicas or EC shards) of `bytes` each, after the
    /// primary's CPU work `primary_cpu_secs` (plus its CPU per byte of the copies it sends):
    /// the primary sends `copies − 1`, then writes its own copy in parallel with the others
    /// (receive, op and `copy_extra_secs` of CPU, write).
    fn replicate(
        &self,
        r: Route,
        copies: u32,
        bytes: f64,
        primary_cpu_secs: f64,
        copy_extra_secs: f64,
    ) -> Route {
        let p = self.plan;
        let ids = &p.ids;
        let one = p.osd_cpu_secs(1.0, bytes, p.osd_write) + copy_extra_secs;
        let write = p.device_write(bytes);
        // The primary's op, and its CPU per byte of the copies it sends ("Forwarded bytes").
        let sent = f64::from(copies.saturating_sub(1)) * bytes;
        let r = self.osd_op(r, primary_cpu_secs + p.osd_cpu_secs(0.0, sent, 0.0));
        let r = self.visit(r, ids.cl_tx, p.cluster_wire_secs(sent));
        let local = self.device(Route::new(), write);
        let remote = self.visit(Route::new(), ids.cl_rx, p.cluster_wire_secs(bytes));
        let remote = self.osd_op(remote, one);
        let remote = self.device(remote, write);
        self.fork(r, copies, local, remote)
    }

    fn read_route(&self) -> Route {
        let p = self.plan;
        let ids = &p.ids;
        let r = self.visit(Route::new(), ids.client_cpu, p.client_cpu_secs);
        let r = match p.s.protection {
            Protection::Replicated { .. } => self.gather(r, 1, p.bs, true, true),
            Protection::Erasure { k, .. } => {
                let io = p.ec_read(k);
                let shards = io.shards as u32;
                // The primary holds one of the chunks with probability shards − remote
                // (1 for whole stripes, t/k for a partial read: `Plan::ec_read`).
                let covered = io.shards - io.remote;
                if covered >= 1.0 - 1e-12 {
                    self.gather(r, shards, io.bytes, true, true)
                } else {
                    r.choose([
                        (
                            "primary's chunk",
                            covered,
                            self.gather(Route::new(), shards, io.bytes, true, true),
                        ),
                        (
                            "remote chunks",
                            1.0 - covered,
                            self.gather(Route::new(), shards, io.bytes, false, true),
                        ),
                    ])
                }
            }
        };
        let r = self.visit(r, ids.pub_tx, p.public_wire_secs);
        let r = self.visit(r, ids.client_rx, p.client_wire_secs);
        self.visit(r, ids.soft, p.fixed_read_secs)
    }

    fn write_route(&self) -> Route {
        let p = self.plan;
        let ids = &p.ids;
        let r = self.visit(Route::new(), ids.client_cpu, p.client_cpu_secs);
        let r = self.visit(r, ids.client_tx, p.client_wire_secs);
        let r = self.visit(r, ids.pub_rx, p.public_wire_secs);
        let r = match p.s.protection {
            Protection::Replicated { size } => {
                self.replicate(r, size, p.bs, p.osd_cpu_secs(1.0, p.bs, p.osd_write), 0.0)
            }
            Protection::Erasure { k, m } => {
                let (rmw, w) = p.ec_write(k, m);
                let r = match rmw {
                    Some(io) => self.gather(r, io.shards as u32, io.bytes, true, false),
                    None => r,
                };
                let n = f64::from(k + m);
                let encode = p.osd_cpu_secs(0.0, p.bs * n / f64::from(k), 0.0);
                let one = p.osd_cpu_secs(1.0, w.bytes, p.osd_write);
                // A partial-stripe write's shards each clone their old extent into a
                // rollback object first (`qn::ceph`, "Erasure coding").
                let clone = if rmw.is_some() {
                    p.ec_rollback_clone_secs()
                } else {
                    0.0
                };
                self.replicate(r, w.shards as u32, w.bytes, one + encode + clone, clone)
            }
        };
        self.visit(r, ids.soft, p.fixed_write_secs)
    }
}

/// Builds the simulation model of a scenario (see the module docs) together with its MVA
/// network.
pub fn build_sim(
    s: &Scenario,
    p: &ModelParams,
    opts: &CephSimOptions,
) -> Result<CephSim, BuildError> {
    let network = build(s, p)?;
    let plan = Plan::new(s, p, super::Notes::Skip)?;
    let layout = Layout {
        plan: &plan,
        opts: *opts,
    };
    let mut b = SimModel::builder();
    for st in &plan.stations {
        b.station(SimStation {
            name: st.name.clone(),
            kind: st.kind,
            servers: st.servers,
            multiplicity: if st.kind == StationKind::Delay {
                1
            } else {
                st.multiplicity
            },
            placement: Placement::Random,
            // The network's batching (the OSD CPU's, when the scenario batches commits),
            // simulated dynamically only when asked.
            batching: st
                .batching
                .filter(|_| opts.batching == SimBatching::Dynamic),
        });
    }
    let pr = s.read_fraction;
    // Co-located clients on fewer nodes than the cluster: their ports also carry those
    // nodes' share of the OSD-side traffic, work the I/O does not wait for (as in the
    // network's demands, `Plan::client_port_osd_share`).
    let with_port_share = |route: Route, acc: &super::Acc| {
        let share = plan.client_port_osd_share;
        if share <= 0.0 || plan.ids.client_tx == plan.ids.pub_tx {
            return route;
        }
        let ids = &plan.ids;
        let (tx, rx) = (
            share * acc.demand[ids.pub_tx],
            share * acc.demand[ids.pub_rx],
        );
        if tx <= 0.0 && rx <= 0.0 {
            return route;
        }
        let off = layout.visit(Route::new(), ids.client_tx, tx);
        route.detach(layout.visit(off, ids.client_rx, rx))
    };
    let d = super::demands(&plan);
    let branches: Vec<(&str, f64, Route)> = [
        (
            READ_LABEL,
            pr,
            with_port_share(layout.read_route(), &d.read),
        ),
        (
            WRITE_LABEL,
            1.0 - pr,
            with_port_share(layout.write_route(), &d.write),
        ),
    ]
    .into_iter()
    .filter(|(_, prob, _)| *prob > 0.0)
    .collect();
    b.closed_class(
        "io",
        s.population(),
        Dist::deterministic(0.0),
        Route::new().choose(branches),
    );
    let mut model = b.build()?;
    // A fractional server count c runs as ⌈c⌉ servers at c/⌈c⌉ speed (see `crate::qn`).
    for (i, st) in plan.stations.iter().enumerate() {
        if let Some(c) = st.fractional_servers {
            model.scale_service(StationId(i), f64::from(st.servers) / c);
        }
    }
    let mean_field = opts.batching == SimBatching::MeanField
        && plan.stations.iter().any(|st| st.batching.is_some());
    let (unscaled, osd_cpu_factor) = if mean_field {
        let unscaled = model.clone();
        let mut osd_cpu_factor = None;
        for (station, f) in mean_field_factors(&network, s.population()) {
            model.scale_service(StationId(station), f);
            if station == plan.ids.osd_cpu {
                osd_cpu_factor = Some(f);
            }
        }
        (Some(unscaled), osd_cpu_factor)
    } else {
        (None, None)
    };
    Ok(CephSim {
        model,
        network,
        osd_cpu_factor,
        unscaled,
    })
}

#[cfg(test)]
mod tests;

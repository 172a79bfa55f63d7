//! Degraded and recovery prediction: the cluster with nodes down while recovery rebuilds
//! the lost copies (`predict --down nodes=1`, a scenario's `[degraded]` table, and the
//! resilience targets of `design`).
//!
//! This is a transformation of the scenario, not a second class in the queueing network,
//! and it is an approximation:
//! - **Survivors carry the load.** The scenario is predicted with `nodes − down` OSD nodes
//!   and the same client load (co-located clients: at most one per surviving node).
//! - **Recovery as a background load.** Recovery holds `recovery_share` `s` of every
//!   OSD-side resource — OSD CPU, data and WAL devices, OSD links — as an mClock
//!   reservation does while recovery is backlogged. The client class sees what is left: CPU
//!   clock, device IOPS and bandwidth and OSD link rates × (1 − s), device latencies ÷
//!   (1 − s) (a processor-sharing resource busy a share `s` with other work stretches each
//!   visit by 1/(1 − s)). The client's own NIC and CPU (when not co-located) are untouched.
//! - **Time to recover** = data to move ÷ recovery rate. The data to move is what the down
//!   nodes held, `down × drives per node × drive capacity × fill`. Rebuilding a byte reads
//!   `r` bytes on the survivors (`r` = 1 for replicas, `k` for EC k+m), sends `r` bytes
//!   over the cluster network (the public one when there is none) and writes one byte, so
//!   the rate is `s × min(Σ device write bw, Σ device read bw / r, Σ link bw / r)` over the
//!   survivors. Per-object CPU work and the concurrency limits of `osd_max_backfills` /
//!   `osd_recovery_max_active` are not modelled: the time is a lower bound.
//!
//! Recovery needs somewhere to put the rebuilt copies: with `failure_domain = "host"`, the
//! survivors must be at least the pool's width (replicas, or k + m).
//!
//! **Fewer survivors than replicas: undersized, no recovery.** A replicated pool whose
//! surviving failure domains `h` are fewer than its size (a 3-node 3× cluster with a node
//! down, the commonest small cluster) keeps serving I/O while `h` ≥ `min_size` (Ceph's
//! default `size − ⌊size / 2⌋`: 2 of 3): each PG's acting set is the `h` copies it has
//! left, so a write goes to `h` OSDs, and nothing recovers, since there is nowhere to
//! re-home the lost copy (`doc/rados/operations/pg-states.rst`: *undersized*, *degraded*).
//! It is predicted as the survivors with `h` replicas and no recovery load (the recovery
//! share does not apply), and the report says the redundancy is not restored until a node
//! returns ([`DegradedReport::undersized`]). Below `min_size` the PGs stop serving I/O
//! (`inactive`): an error. An erasure-coded pool short of `k + m` domains reads lost chunks
//! by decoding from the others, which the model does not describe: an error too.
//!
//! **PGs that stop serving.** Before any of that, the nodes going down together take from
//! each PG the members its placement put on them ([`pg_loss`]): with `failure_domain =
//! "host"` a PG loses one member per down node among its hosts, with `failure_domain =
//! "osd"` every member on a down node's OSDs (several can share a node). Over a pool's
//! many PGs some get the worst placement, so whenever the worst case leaves a PG below
//! `min_size` (Ceph's defaults: `size − ⌊size / 2⌋` replicated, `k + min(1, m − 1)` erasure
//! coded) the state is refused, with the share of the PGs that go inactive and of those
//! whose data is gone (fewer than one copy or `k` shards), and the most nodes down the pool
//! survives: a pool of one copy, two of three hosts of a 3× pool, a 4+2 pool's second host,
//! or one host of a pool placed over OSDs. No IOPS figure describes I/O that blocks.
//!
//! Not here: the queueing model (`qn::ceph`, unchanged), the scenario format (`spec`).

use serde::{Deserialize, Serialize};

use super::{predict, PredictError, PredictOptions, PredictionReport};
use crate::model::ModelParams;
use crate::spec::{DegradedSpec, DriveEntry, FailureDomain, Protection, Scenario};
use crate::units::{BitsPerSec, Secs};

/// The background-recovery reservation of Ceph's built-in mClock profiles, as a share of
/// an OSD's capacity: with client and recovery work both backlogged each gets its
/// reservation (the two sum to 100 %), so this is the recovery share. From
/// `set_config_defaults_from_profile()` in ceph/ceph `src/osd/scheduler/mClockScheduler.cc`
/// (client / recovery reservations: `high_client_ops` 60 / 40 %, `balanced` 50 / 50 %,
/// `high_recovery_ops` 30 / 70 %); earlier mClock releases (Quincy's first point releases)
/// used other allocations, so state the share yourself for those.
pub const MCLOCK_RECOVERY_SHARES: [(&str, f64); 3] = [
    ("balanced", 0.5),
    ("high_client_ops", 0.4),
    ("high_recovery_ops", 0.7),
];

/// The recovery share of a built-in mClock profile (`osd_mclock_profile`), if it is one.
pub fn mclock_recovery_share(profile: &str) -> Option<f64> {
    MCLOCK_RECOVERY_SHARES
        .iter()
        .find(|(p, _)| *p == profile)
        .map(|(_, s)| *s)
}

/// How long rebuilding the lost copies takes at the recovery share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryEstimate {
    /// Raw bytes the down nodes held (their drives × fill).
    pub bytes_to_move: f64,
    /// Rebuilt raw bytes per second at the recovery share.
    pub rate_bytes_per_sec: f64,
    /// `bytes_to_move / rate_bytes_per_sec`: a lower bound (see the module doc).
    pub time_secs: f64,
    /// What limits the rate: `device writes`, `device reads` or `network`.
    pub limited_by: String,
}

/// A prediction with nodes down, during recovery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DegradedReport {
    pub nodes_down: u32,
    pub surviving_nodes: u32,
    pub recovery_share: f64,
    pub fill: f64,
    /// The client workload on the survivors with recovery running.
    pub prediction: PredictionReport,
    /// Rebuilding the lost copies; `None` when nothing can recover (`undersized`).
    pub recovery: Option<RecoveryEstimate>,
    /// The copies each PG keeps while fewer failure domains survive than the pool's size
    /// (no recovery: the redundancy stays reduced until a node returns); `None` when the
    /// survivors hold the whole pool and recovery runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undersized: Option<u32>,
    /// The approximation this rests on, in one sentence.
    pub note: String,
}

/// One sentence on what an undersized prediction means.
pub const UNDERSIZED_NOTE: &str = "survivors carry the whole client load with the copies each PG has left (its acting set), and no recovery runs: the lost copies have nowhere to go, so the pool's redundancy stays reduced (PGs active+undersized+degraded) until a node returns or one is added";

/// Ceph's default `min_size` of a replicated pool of `size` copies
/// (`osd_pool_default_min_size` = 0: `size − size / 2`, `OSDMonitor::prepare_pool_size`).
pub fn default_min_size(size: u32) -> u32 {
    size - size / 2
}

/// The copies each PG keeps with `nodes_down` nodes down when fewer failure domains
/// survive than the replicated pool's size (undersized: no recovery); `None` when the
/// survivors hold the whole pool, when no node survives, or for an erasure-coded pool.
/// Does not check `min_size` ([`degraded_scenario`] does).
pub fn undersized_copies(s: &Scenario, nodes_down: u32) -> Option<u32> {
    let Protection::Replicated { size } = s.protection else {
        return None;
    };
    let domains = surviving_domains(s, nodes_down).filter(|&h| h > 0)?;
    (domains < size).then_some(domains)
}

/// Ceph's default `min_size` of an erasure-coded pool k + m: `k + min(1, m − 1)`
/// (`OSDMonitor::prepare_pool_size`, ceph/ceph src/mon/OSDMonitor.cc): one shard of
/// margin over the k needed to decode, when m leaves one.
pub fn default_ec_min_size(k: u32, m: u32) -> u32 {
    k + 1.min(m.saturating_sub(1))
}

/// What the PGs keep the moment `down` nodes go down together, before any recovery: the
/// copies (or shards) a PG loses are those its CRUSH placement put on the down nodes. A
/// PG's `width` members sit on distinct failure domains, so with `failure_domain = "host"`
/// it loses as many as it has down nodes among its hosts (at most `down`), and with
/// `failure_domain = "osd"` as many as it has OSDs on the down nodes, several of which can
/// share a host. Over the many PGs of a pool, placement spreads each PG's members
/// uniformly over the domains, so the count lost is hypergeometric: `width` draws from
/// the cluster's domains, of which `down × domains per node` are down.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PgLoss {
    /// Copies or shards a PG has (`size`, or k + m).
    pub width: u32,
    /// Fewest a PG keeps (its placement's worst case).
    pub worst_kept: u32,
    /// Members a PG needs to serve I/O (`min_size`).
    pub min_size: u32,
    /// Members a PG needs for its data to exist at all (1 copy, or k shards).
    pub needed: u32,
    /// Share of the PGs left below `min_size`: inactive, their I/O blocks.
    pub inactive_share: f64,
    /// Share of the PGs left below `needed`: their data is gone until a node returns.
    pub lost_share: f64,
}

/// P(X ≥ t) for X hypergeometric: `draws` from `population` of which `marked` are marked.
fn hypergeometric_at_least(population: u64, marked: u64, draws: u64, t: u64) -> f64 {
    // ln C(n, r) through sums of logarithms: the populations here are at most a few
    // thousand OSDs.
    let ln_choose = |n: u64, r: u64| -> f64 {
        if r > n {
            return f64::NEG_INFINITY;
        }
        let r = r.min(n - r);
        (0..r)
            .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
            .sum()
    };
    let total = ln_choose(population, draws);
    (t..=draws.min(marked))
        .map(|x| (ln_choose(marked, x) + ln_choose(population - marked, draws - x) - total).exp())
        .sum::<f64>()
        .min(1.0)
}

/// The PGs' losses with `down` nodes down together ([`PgLoss`]).
pub fn pg_loss(s: &Scenario, down: u32) -> PgLoss {
    let per_node = match s.failure_domain {
        FailureDomain::Host => 1,
        FailureDomain::Osd => s.osds_per_node(),
    };
    pg_loss_of(s.protection, per_node, s.nodes, down)
}

/// [`pg_loss`] from its parts: the pool's protection, the failure domains a node holds (1
/// for hosts, its OSDs for `failure_domain = "osd"`), the nodes and the nodes down.
pub fn pg_loss_of(protection: Protection, domains_per_node: u32, nodes: u32, down: u32) -> PgLoss {
    let (width, min_size, needed) = match protection {
        Protection::Replicated { size } => (size, default_min_size(size), 1),
        Protection::Erasure { k, m } => (k + m, default_ec_min_size(k, m), k),
    };
    let per_node = domains_per_node.max(1);
    let population = u64::from(nodes) * u64::from(per_node);
    let marked = u64::from(down.min(nodes)) * u64::from(per_node);
    let draws = u64::from(width).min(population);
    let worst_lost = marked.min(draws) as u32;
    // A PG is inactive when it keeps fewer than min_size: it lost more than width − min_size.
    let share_losing = |keep: u32| {
        let t = u64::from(width.saturating_sub(keep)) + 1;
        if t > draws {
            0.0
        } else {
            hypergeometric_at_least(population, marked, draws, t)
        }
    };
    PgLoss {
        width,
        worst_kept: width - worst_lost,
        min_size,
        needed,
        inactive_share: share_losing(min_size),
        lost_share: share_losing(needed),
    }
}

/// Refuses a degraded state in which some PGs stop serving I/O or lose their data
/// ([`pg_loss`]): a figure for the clients' IOPS would describe I/O that blocks.
fn check_pgs_serve(s: &Scenario, down: u32) -> Result<(), PredictError> {
    let l = pg_loss(s, down);
    if l.worst_kept >= l.min_size {
        return Ok(());
    }
    let what = match s.protection {
        Protection::Replicated { size } => {
            format!("a pool of {size} copies (min_size {})", l.min_size)
        }
        Protection::Erasure { k, m } => format!(
            "an erasure-coded pool {k}+{m} (min_size {}, {k} shards to decode)",
            l.min_size
        ),
    };
    let domain = match s.failure_domain {
        FailureDomain::Host => "nodes",
        FailureDomain::Osd => {
            "OSDs (failure_domain = \"osd\": several of a PG's members can share a node)"
        }
    };
    let pgs = |share: f64| match s.spec.pool.pg_count {
        Some(n) => format!(
            "{:.1} % of the PGs (≈ {:.0} of {n})",
            100.0 * share,
            share * f64::from(n)
        ),
        None => format!("{:.1} % of the PGs", 100.0 * share),
    };
    let lost = if l.lost_share > 0.0 {
        format!(
            "; {} keep fewer than {} and their data is gone until the nodes return",
            pgs(l.lost_share),
            l.needed
        )
    } else {
        String::new()
    };
    let safe = (0..down)
        .rev()
        .find(|&d| pg_loss(s, d).worst_kept >= l.min_size)
        .unwrap_or(0);
    let spare = match s.protection {
        Protection::Replicated { size } => size.saturating_sub(l.min_size),
        Protection::Erasure { m, .. } => m.saturating_sub(1),
    };
    let osd_domain = matches!(s.failure_domain, FailureDomain::Osd) && s.osds_per_node() > 1;
    let fix = if safe == 0 && osd_domain && spare >= 1 {
        // The pool has a member to spare; only its placement lets one node take more.
        "place the pool's members on different nodes (failure_domain = \"host\"), so that a node down takes at most one member of each PG: with \"osd\" some PGs stop serving I/O when any node is down".to_string()
    } else if safe == 0 {
        format!("some PGs stop serving I/O with a node down: use a pool whose size − min_size (replicas) or m − 1 (erasure coding) is at least 1{}", if osd_domain { ", with failure_domain = \"host\"" } else { "" })
    } else {
        format!("plan for at most {safe} node(s) down at once with this pool, or protect it more (more copies, a larger m)")
    };
    Err(PredictError::BadDegraded {
        problem: format!(
            "with {down} of {} nodes down together, {what} placed across {domain} has PGs that keep only {} of {} members: {} stop serving I/O (inactive){lost}",
            s.nodes,
            l.worst_kept,
            l.width,
            pgs(l.inactive_share),
        ),
        fix,
    })
}

/// Failure domains left with `nodes_down` nodes down (`None` when more are down than exist).
fn surviving_domains(s: &Scenario, nodes_down: u32) -> Option<u32> {
    let survivors = s.nodes.checked_sub(nodes_down)?;
    Some(match s.failure_domain {
        FailureDomain::Host => survivors,
        FailureDomain::Osd => survivors * s.osds_per_node(),
    })
}

/// One sentence on what the degraded figures mean.
pub const DEGRADED_NOTE: &str = "survivors carry the whole client load while recovery holds the recovery share of every OSD CPU, device and OSD link (the client sees the rest: an approximation by scaling, not a second class); the recovery time is a lower bound (no per-object CPU cost, no backfill concurrency limit)";

fn scale_drive(d: &mut DriveEntry, keep: f64) {
    d.read_4k_iops *= keep;
    d.write_4k_iops *= keep;
    d.read_bytes_per_sec *= keep;
    d.write_bytes_per_sec *= keep;
    d.read_latency = Secs(d.read_latency.0 / keep);
    d.write_latency = Secs(d.write_latency.0 / keep);
    if let Some(s) = &mut d.sync_write_4k_iops {
        *s *= keep;
    }
}

/// The scenario the clients see with `d.nodes_down` nodes down during recovery (module
/// doc). Fails when the survivors cannot hold the pool's width, naming the fix.
pub fn degraded_scenario(s: &Scenario, d: &DegradedSpec) -> Result<Scenario, PredictError> {
    let bad = |problem: String, fix: &str| PredictError::BadDegraded {
        problem,
        fix: fix.to_string(),
    };
    d.check("degraded").map_err(|(field, kind)| {
        let e = crate::spec::SpecError {
            origin: "degraded".into(),
            line: None,
            column: None,
            field,
            kind: Box::new(kind),
        };
        bad(e.to_string(), "see the message")
    })?;
    if d.nodes_down >= s.nodes {
        return Err(bad(
            format!("{} of {} nodes down", d.nodes_down, s.nodes),
            "leave at least one node up",
        ));
    }
    check_pgs_serve(s, d.nodes_down)?;
    let survivors = s.nodes - d.nodes_down;
    let domains = surviving_domains(s, d.nodes_down).unwrap_or(0);
    let undersized = undersized_copies(s, d.nodes_down);
    // An undersized replicated pool below min_size never gets here: its worst-placed PG
    // keeps at most the surviving domains, so `check_pgs_serve` refused it.
    if let Protection::Erasure { k, m } = s.protection {
        if domains < k + m {
            return Err(bad(
                format!(
                    "with {} of {} nodes down, {domains} failure domains survive for an erasure-coded pool {} wide: its PGs stay undersized and read lost chunks by decoding, which cephplan does not model",
                    d.nodes_down,
                    s.nodes,
                    k + m
                ),
                "add nodes (survivors ≥ k + m), or plan for fewer nodes down",
            ));
        }
    }
    // Undersized, nothing recovers: no share of the survivors goes to recovery.
    let keep = if undersized.is_some() {
        1.0
    } else {
        1.0 - d.recovery_share
    };
    let mut sp = s.inline_spec();
    sp.degraded = None;
    sp.cluster.nodes = survivors;
    if let Some(copies) = undersized {
        sp.pool.replicated = Some(copies);
    }
    if sp.clients.colocated {
        sp.clients.nodes = sp.clients.nodes.min(survivors);
    }
    let mut cpu = s.node_cpu.clone();
    cpu.ghz *= keep;
    sp.cluster.node.cpu = crate::spec::HwRef::Inline(cpu);
    let mut data = s.data.drive.clone();
    scale_drive(&mut data, keep);
    sp.cluster.node.data_devices.model = crate::spec::HwRef::Inline(data);
    if let (Some(w), Some(g)) = (&mut sp.cluster.node.wal_device, &s.wal) {
        let mut wal = g.drive.clone();
        scale_drive(&mut wal, keep);
        w.model = crate::spec::HwRef::Inline(wal);
    }
    // A non-co-located client keeps its own NIC; a co-located one without a NIC of its
    // own takes the (shared, reduced) public link.
    if !sp.clients.colocated || sp.clients.nic.is_some() {
        sp.clients.nic = Some(BitsPerSec(s.client_nic_bits_per_sec));
    }
    sp.cluster.node.network.public = BitsPerSec(s.public_bits_per_sec * keep);
    sp.cluster.node.network.cluster = s.cluster_bits_per_sec.map(|b| BitsPerSec(b * keep));
    let mut out = sp
        .validate(&crate::spec::Catalogue::default())
        .map_err(|e| {
            bad(
                e.to_string(),
                "the degraded cluster is not a valid scenario; see the message",
            )
        })?;
    out.name = match undersized {
        Some(copies) => format!(
            "{} ({} node(s) down, undersized: {copies} copies, no recovery)",
            s.name, d.nodes_down
        ),
        None => format!("{} ({} node(s) down, recovering)", s.name, d.nodes_down),
    };
    out.node_cpu_name = s.node_cpu_name.clone();
    out.client_cpu_name = s.client_cpu_name.clone();
    out.data.name = s.data.name.clone();
    Ok(out)
}

/// Time to rebuild what `d.nodes_down` nodes held (module doc).
pub fn recovery_estimate(s: &Scenario, d: &DegradedSpec) -> RecoveryEstimate {
    let survivors = f64::from(s.nodes.saturating_sub(d.nodes_down));
    let drives = f64::from(s.data.count_per_node);
    let bytes_to_move = f64::from(d.nodes_down) * drives * s.data.drive.capacity.0 as f64 * d.fill;
    let r = match s.protection {
        Protection::Replicated { .. } => 1.0,
        Protection::Erasure { k, .. } => f64::from(k),
    };
    let link_bytes = s.cluster_bits_per_sec.unwrap_or(s.public_bits_per_sec) / 8.0;
    let limits = [
        (
            "device writes",
            survivors * drives * s.data.drive.write_bytes_per_sec,
        ),
        (
            "device reads",
            survivors * drives * s.data.drive.read_bytes_per_sec / r,
        ),
        ("network", survivors * link_bytes / r),
    ];
    let (limited_by, full) = limits
        .iter()
        .copied()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("three limits");
    let rate_bytes_per_sec = d.recovery_share * full;
    RecoveryEstimate {
        bytes_to_move,
        rate_bytes_per_sec,
        time_secs: if rate_bytes_per_sec > 0.0 {
            bytes_to_move / rate_bytes_per_sec
        } else {
            f64::INFINITY
        },
        limited_by: limited_by.to_string(),
    }
}

/// Predicts the client workload with nodes down during recovery, and the recovery time.
pub fn predict_degraded(
    s: &Scenario,
    p: &ModelParams,
    d: &DegradedSpec,
    opts: &PredictOptions,
) -> Result<DegradedReport, PredictError> {
    let ds = degraded_scenario(s, d)?;
    let prediction = predict(&ds, p, opts)?;
    let undersized = undersized_copies(s, d.nodes_down);
    Ok(DegradedReport {
        nodes_down: d.nodes_down,
        surviving_nodes: ds.nodes,
        recovery_share: if undersized.is_some() {
            0.0
        } else {
            d.recovery_share
        },
        fill: d.fill,
        prediction,
        recovery: undersized.is_none().then(|| recovery_estimate(s, d)),
        undersized,
        note: if undersized.is_some() {
            UNDERSIZED_NOTE
        } else {
            DEGRADED_NOTE
        }
        .to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{parse_scenario, Catalogue};

    fn scenario() -> Scenario {
        let text = std::fs::read_to_string("models/examples/seed-002-epyc-7402.toml").unwrap();
        parse_scenario(&text, "seed-002", &Catalogue::builtin()).unwrap()
    }

    #[test]
    fn survivors_and_scaled_hardware() {
        let mut s = scenario();
        let d = DegradedSpec {
            nodes_down: 1,
            recovery_share: 0.5,
            fill: 0.5,
        };
        let mut sp = s.spec.clone();
        sp.cluster.nodes = 6;
        s = sp.validate(&Catalogue::builtin()).unwrap();
        let ds = degraded_scenario(&s, &d).unwrap();
        assert_eq!(ds.nodes, 5);
        assert!((ds.node_cpu.ghz - s.node_cpu.ghz * 0.5).abs() < 1e-12);
        assert!((ds.data.drive.read_4k_iops - s.data.drive.read_4k_iops * 0.5).abs() < 1e-9);
        assert!((ds.data.drive.read_latency.0 - s.data.drive.read_latency.0 * 2.0).abs() < 1e-12);
        assert!((ds.public_bits_per_sec - 20e9).abs() < 1.0);
        // Non-co-located clients keep their own 40 Gb/s NIC.
        assert!((ds.client_nic_bits_per_sec - 40e9).abs() < 1.0);
    }

    /// seed 002's 3 nodes with 3 copies, one node down: 2 hosts survive for 3 copies, above
    /// min_size 2 (`3 − 3 / 2`), so each PG serves I/O with the 2 copies it has left and
    /// nothing recovers (no host to re-home the third). Hand oracle for the load: all up,
    /// every node holds one copy of every write and a third of the primaries; undersized,
    /// every survivor still holds one copy of every write but half the primaries. So each
    /// OSD carries the same writes (IOPS about unchanged, a replica send fewer) and 1.5×
    /// the reads (CPU-bound read IOPS about 2/3): within the per-OSD economies' few percent.
    #[test]
    fn a_three_node_three_copy_pool_with_a_node_down_runs_undersized() {
        let s = scenario();
        assert_eq!(s.nodes, 3);
        assert_eq!(default_min_size(3), 2);
        assert_eq!(default_min_size(2), 1);
        assert_eq!(default_min_size(4), 2);
        assert_eq!(default_min_size(5), 3);
        let d = DegradedSpec {
            nodes_down: 1,
            recovery_share: 0.5,
            fill: 0.5,
        };
        assert_eq!(undersized_copies(&s, 1), Some(2));
        let ds = degraded_scenario(&s, &d).unwrap();
        assert_eq!(ds.nodes, 2);
        assert_eq!(ds.protection, Protection::Replicated { size: 2 });
        // Nothing recovers, so the recovery share takes nothing from the survivors.
        assert!((ds.node_cpu.ghz - s.node_cpu.ghz).abs() < 1e-12);
        assert!((ds.data.drive.read_4k_iops - s.data.drive.read_4k_iops).abs() < 1e-9);
        assert!(ds.name.contains("undersized"), "{}", ds.name);
        let p = ModelParams::shipped_default();
        let opts = PredictOptions {
            interval: false,
            ..PredictOptions::default()
        };
        for (pattern, want) in [("randwrite", 1.0), ("randread", 2.0 / 3.0)] {
            let mut sp = s.spec.clone();
            sp.workload.pattern = match pattern {
                "randread" => crate::spec::Pattern::Randread,
                _ => crate::spec::Pattern::Randwrite,
            };
            let s = sp.validate(&Catalogue::builtin()).unwrap();
            let up = predict(&s, &p, &opts).unwrap();
            let down = predict_degraded(&s, &p, &d, &opts).unwrap();
            assert_eq!(down.undersized, Some(2));
            assert!(down.recovery.is_none());
            assert_eq!(down.recovery_share, 0.0);
            assert_eq!(down.note, UNDERSIZED_NOTE);
            let ratio = down.prediction.iops / up.iops;
            assert!(
                (ratio / want - 1.0).abs() < 0.06,
                "{pattern}: {ratio} vs {want}"
            );
        }
        // Two of three down: one copy left, below min_size: the PGs stop serving I/O.
        let two = DegradedSpec { nodes_down: 2, ..d };
        let e = degraded_scenario(&s, &two).unwrap_err().to_string();
        assert!(
            e.contains("min_size 2") && e.contains("inactive") && e.contains("fix"),
            "{e}"
        );
    }

    /// The PGs' losses with nodes down together, against hand counts of the placements
    /// (hypergeometric: a PG's members drawn without replacement from the domains).
    #[test]
    fn pg_losses_count_the_placements_by_hand() {
        let rep = |size| Protection::Replicated { size };
        // 3 hosts, 3 copies, 1 down: every PG loses exactly one copy and keeps min_size 2.
        let l = pg_loss_of(rep(3), 1, 3, 1);
        assert_eq!((l.worst_kept, l.min_size), (2, 2));
        assert_eq!((l.inactive_share, l.lost_share), (0.0, 0.0));
        // 5 hosts, 3 copies, 3 down: of the C(5,3) = 10 host triples, C(3,2)·C(2,1) = 6
        // keep one copy and C(3,3) = 1 keeps none: 70 % inactive, 10 % lost.
        let l = pg_loss_of(rep(3), 1, 5, 3);
        assert_eq!(l.worst_kept, 0);
        assert!((l.inactive_share - 0.7).abs() < 1e-12, "{l:?}");
        assert!((l.lost_share - 0.1).abs() < 1e-12, "{l:?}");
        // 3 hosts, 2 copies, 2 down: 1 of the 3 host pairs is wholly down.
        let l = pg_loss_of(rep(2), 1, 3, 2);
        assert!((l.lost_share - 1.0 / 3.0).abs() < 1e-12, "{l:?}");
        // 1 copy, 1 of 3 hosts down: a third of the PGs have their only copy there.
        let l = pg_loss_of(rep(1), 1, 3, 1);
        assert_eq!((l.worst_kept, l.min_size), (0, 1));
        assert!((l.lost_share - 1.0 / 3.0).abs() < 1e-12, "{l:?}");
        // EC 4+2 on 8 hosts (min_size k + 1 = 5): 1 down keeps 5; 2 down, the C(2,2)·C(6,4)
        // = 15 of C(8,6) = 28 placements holding both down hosts keep 4: inactive, not lost.
        let ec = Protection::Erasure { k: 4, m: 2 };
        assert_eq!(default_ec_min_size(4, 2), 5);
        assert_eq!(default_ec_min_size(2, 1), 2);
        assert_eq!(pg_loss_of(ec, 1, 8, 1).worst_kept, 5);
        let l = pg_loss_of(ec, 1, 8, 2);
        assert_eq!(l.worst_kept, 4);
        assert!((l.inactive_share - 15.0 / 28.0).abs() < 1e-12, "{l:?}");
        assert_eq!(l.lost_share, 0.0);
        // OSD failure domain, 4 hosts of 2 OSDs, 3 copies, 1 host down: 2 of the 8 OSDs are
        // down; a PG with both among its 3: C(2,2)·C(6,1) / C(8,3) = 6 / 56.
        let l = pg_loss_of(rep(3), 2, 4, 1);
        assert_eq!(l.worst_kept, 1);
        assert!((l.inactive_share - 6.0 / 56.0).abs() < 1e-12, "{l:?}");
    }

    /// What the audit of session 52 found predicted as serving I/O is refused, with the
    /// share of PGs and the fix; a wider cluster with one node down still recovers.
    #[test]
    fn nodes_down_that_leave_pgs_below_min_size_are_refused() {
        let s = scenario();
        let with = |f: &dyn Fn(&mut crate::spec::ScenarioSpec)| {
            let mut sp = s.spec.clone();
            f(&mut sp);
            sp.validate(&Catalogue::builtin()).unwrap()
        };
        let down = |n| DegradedSpec {
            nodes_down: n,
            recovery_share: 0.3,
            fill: 0.5,
        };
        let one_copy = with(&|sp| sp.pool.replicated = Some(1));
        let e = degraded_scenario(&one_copy, &down(1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("data is gone") && e.contains("fix"), "{e}");
        let five = with(&|sp| sp.cluster.nodes = 5);
        assert!(degraded_scenario(&five, &down(1)).is_ok());
        let e = degraded_scenario(&five, &down(3)).unwrap_err().to_string();
        assert!(
            e.contains("70.0 % of the PGs") && e.contains("10.0 %"),
            "{e}"
        );
        let e = degraded_scenario(&five, &down(2)).unwrap_err().to_string();
        assert!(e.contains("at most 1 node(s) down"), "{e}");
    }

    /// An erasure-coded pool short of k + m hosts reads lost chunks by decoding, which the
    /// model does not describe: refused, naming the fix.
    #[test]
    fn an_erasure_coded_pool_short_of_its_width_is_refused() {
        let mut sp = scenario().spec.clone();
        sp.pool.replicated = None;
        sp.pool.erasure = Some(crate::spec::ErasureSpec {
            k: 2,
            m: 1,
            stripe_unit: None,
        });
        let s = sp.validate(&Catalogue::builtin()).unwrap();
        let d = DegradedSpec {
            nodes_down: 1,
            recovery_share: 0.3,
            fill: 0.5,
        };
        assert_eq!(undersized_copies(&s, 1), None);
        let e = degraded_scenario(&s, &d).unwrap_err().to_string();
        assert!(e.contains("decoding") && e.contains("k + m"), "{e}");
    }

    #[test]
    fn a_bad_share_names_the_field() {
        let mut sp = scenario().spec.clone();
        sp.cluster.nodes = 6;
        let s = sp.validate(&Catalogue::builtin()).unwrap();
        let d = DegradedSpec {
            nodes_down: 1,
            recovery_share: 1.5,
            fill: 0.5,
        };
        let e = degraded_scenario(&s, &d).unwrap_err().to_string();
        assert!(
            e.contains("degraded.recovery_share") && e.contains("0 ≤ share ≤ 0.9"),
            "{e}"
        );
    }

    #[test]
    fn recovery_time_by_hand() {
        let mut sp = scenario().spec.clone();
        sp.cluster.nodes = 6;
        let s = sp.validate(&Catalogue::builtin()).unwrap();
        let d = DegradedSpec {
            nodes_down: 1,
            recovery_share: 0.5,
            fill: 0.5,
        };
        let r = recovery_estimate(&s, &d);
        // generic-nvme-gen3: 2 TB, 1.05 GB/s write, 3.2 GB/s read, 24 per node, 40 Gb/s.
        // Data: 1 × 24 × 2e12 × 0.5 = 2.4e13 B. Limits over 5 survivors: writes
        // 5 × 24 × 1.05e9 = 1.26e11, reads 3.84e11, network 5 × 5e9 = 2.5e10 B/s.
        // Rate 0.5 × 2.5e10 = 1.25e10 B/s; time 2.4e13 / 1.25e10 = 1920 s.
        assert_eq!(r.limited_by, "network");
        assert!((r.bytes_to_move - 2.4e13).abs() < 1.0);
        assert!((r.rate_bytes_per_sec - 1.25e10).abs() < 1.0);
        assert!((r.time_secs - 1920.0).abs() < 1e-6);
    }

    #[test]
    fn recovery_slows_clients() {
        let mut sp = scenario().spec.clone();
        sp.cluster.nodes = 6;
        let s = sp.validate(&Catalogue::builtin()).unwrap();
        let p = ModelParams::shipped_default();
        let opts = PredictOptions {
            interval: false,
            ..PredictOptions::default()
        };
        let up = predict(&s, &p, &opts).unwrap();
        let d = DegradedSpec {
            nodes_down: 1,
            recovery_share: 0.3,
            fill: 0.85,
        };
        let down = predict_degraded(&s, &p, &d, &opts).unwrap();
        assert!(
            down.prediction.iops < up.iops,
            "{} vs {}",
            down.prediction.iops,
            up.iops
        );
        let none = DegradedSpec {
            recovery_share: 0.0,
            ..d
        };
        let only_down = predict_degraded(&s, &p, &none, &opts).unwrap();
        assert!(down.prediction.iops < only_down.prediction.iops);
        assert!(only_down.prediction.iops <= up.iops * (1.0 + 1e-9));
    }
}

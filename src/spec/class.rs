//! The kinds of run a scenario is (erasure-coded pool, co-located clients, iodepth 1, a
//! lone I/O, large blocks, and the direction of its I/O): the groups `cephplan evaluate`
//! reports its held-out errors by, and by which `predict` finds the model's held-out
//! record for a scenario's kind (`model::TransferKind`).
//!
//! Not here: the errors themselves (`evaluate`), how a scenario is built (`spec`).

use serde::{Deserialize, Serialize};

use super::{Protection, Scenario};

/// The kinds of run the mechanisms issue judges separately (erasure-coded pools,
/// co-located clients, queue depth 1, a lone I/O, large blocks), and the direction of the
/// I/O (reads only, writes only, mixes): a run may be of several kinds and is of exactly
/// one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunClass {
    /// The pool is erasure-coded.
    ErasureCoded,
    /// fio runs on the OSD nodes (`[clients] colocated`).
    Colocated,
    /// fio at iodepth 1: each job keeps one I/O in flight.
    Qd1,
    /// One I/O in flight in the whole run (one fio job at iodepth 1, or one rados bench
    /// operation): the lone-I/O latency the mechanisms issue asks for, which the iodepth-1
    /// class mixes with many jobs at iodepth 1 each.
    LoneIo,
    /// Blocks (or rados objects) of 1 MiB or more.
    LargeBlocks,
    /// Every I/O a read.
    Reads,
    /// Every I/O a write.
    Writes,
    /// Reads and writes mixed.
    Mixed,
}

impl RunClass {
    pub const ALL: [RunClass; 8] = [
        RunClass::ErasureCoded,
        RunClass::Colocated,
        RunClass::Qd1,
        RunClass::LoneIo,
        RunClass::LargeBlocks,
        RunClass::Reads,
        RunClass::Writes,
        RunClass::Mixed,
    ];

    /// Whether a run on scenario `s` is of this class.
    pub fn contains(self, s: &Scenario) -> bool {
        match self {
            RunClass::ErasureCoded => matches!(s.protection, Protection::Erasure { .. }),
            RunClass::Colocated => s.clients_colocated,
            RunClass::Qd1 => s.is_fio_iodepth_1(),
            RunClass::LoneIo => s.population() == 1,
            RunClass::LargeBlocks => s.block_size_bytes >= 1 << 20,
            RunClass::Reads => s.read_fraction >= 1.0,
            RunClass::Writes => s.read_fraction <= 0.0,
            RunClass::Mixed => s.read_fraction > 0.0 && s.read_fraction < 1.0,
        }
    }

    /// Whether the class is one of the three directions (reads, writes, mixes).
    pub fn is_direction(self) -> bool {
        matches!(self, RunClass::Reads | RunClass::Writes | RunClass::Mixed)
    }

    pub fn label(self) -> &'static str {
        match self {
            RunClass::ErasureCoded => "erasure-coded pool",
            RunClass::Colocated => "co-located clients",
            RunClass::Qd1 => "iodepth 1",
            RunClass::LoneIo => "one I/O in flight",
            RunClass::LargeBlocks => "blocks ≥ 1 MiB",
            RunClass::Reads => "reads only",
            RunClass::Writes => "writes only",
            RunClass::Mixed => "read/write mixes",
        }
    }
}

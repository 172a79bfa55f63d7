//! CPU time of the validated cluster's OSD processes that run on this machine
//! (`validate --osd-counters`): what a client op cost the OSDs in CPU over a point, the
//! measured side of the model's per-op OSD CPU demand (`osd_cpu_read_gcycles` and its
//! write, batching and coalescing terms, `qn::ceph`).
//!
//! An OSD process is found by its `/proc/PID/cmdline`: a program named `ceph-osd` started
//! with exactly the validated cluster's ceph.conf as `-c`/`--conf` (as `lab up` starts its
//! daemons: [`crate::lab`]'s whole-argument match, so another cluster's OSDs on the same
//! machine never count), or with no configuration path at all when the validated one is
//! Ceph's default `/etc/ceph/ceph.conf` (a packaged or containerised OSD reads that one),
//! and an OSD id (`-i N`, `--id N`, `--id=N`, or the name `-n osd.N`, `--name osd.N`,
//! `--name=osd.N` as cephadm's containers pass it). Its CPU time is
//! `utime + stime` of `/proc/PID/stat` (fields 14 and 15: every thread's, the exited ones
//! included) in clock ticks of `getconf CLK_TCK`.
//!
//! Not here: OSDs on other machines (their CPU time cannot be read from here, so a point
//! has no CPU figure and the report says why) and the OSDs' perf counters (`counters`).

use std::collections::BTreeMap;
use std::path::Path;

/// Ceph's default configuration path, which a daemon started without `-c` reads.
pub const DEFAULT_CONF: &str = "/etc/ceph/ceph.conf";

fn args(cmdline: &[u8]) -> Vec<&[u8]> {
    cmdline
        .strip_suffix(b"\0")
        .unwrap_or(cmdline)
        .split(|b| *b == 0)
        .collect()
}

/// The OSD id a `ceph-osd` command line (NUL-separated argv) was started with: `-i N`,
/// `--id N`, `--id=N`, or the daemon name `-n osd.N`, `--name osd.N`, `--name=osd.N`.
/// `None` for another program or without an id.
pub fn osd_id(cmdline: &[u8]) -> Option<u32> {
    let args = args(cmdline);
    let program = args.first()?;
    let name = program.rsplit(|b| *b == b'/').next()?;
    if name != b"ceph-osd" {
        return None;
    }
    let number = |a: &[u8]| std::str::from_utf8(a).ok()?.parse::<u32>().ok();
    let daemon = |a: &[u8]| a.strip_prefix(b"osd.").and_then(number);
    args.iter().enumerate().find_map(|(i, a)| {
        let next = || args.get(i + 1).copied();
        match *a {
            b"-i" | b"--id" => next().and_then(number),
            b"-n" | b"--name" => next().and_then(daemon),
            _ => a
                .strip_prefix(b"--id=")
                .and_then(number)
                .or_else(|| a.strip_prefix(b"--name=").and_then(daemon)),
        }
    })
}

/// True if a daemon's command line names no configuration path (`-c`, `--conf`,
/// `--conf=`): it reads [`DEFAULT_CONF`].
fn reads_default_conf(cmdline: &[u8]) -> bool {
    !args(cmdline)
        .iter()
        .any(|a| *a == b"-c" || *a == b"--conf" || a.starts_with(b"--conf="))
}

/// `utime + stime` (clock ticks) of one `/proc/PID/stat` line. The command name (field 2)
/// is in parentheses and may hold spaces or parentheses itself, so the fields are counted
/// after its last `)`: there the state is field 3, utime field 14, stime field 15.
pub fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(field(14)? + field(15)?)
}

/// Clock ticks per second of `/proc`'s CPU times (`getconf CLK_TCK`).
fn clock_ticks_per_sec() -> Result<f64, String> {
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .map_err(|e| format!("`getconf CLK_TCK` did not run ({e}): install libc-bin"))?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|t| *t > 0.0)
        .ok_or_else(|| "`getconf CLK_TCK` did not print a positive number".to_string())
}

/// The CPU seconds (user + system) each OSD process of the cluster of `conf` running on
/// this machine has used since it started, by OSD id. Empty when none runs here (a remote
/// cluster, or OSDs started with another configuration path).
pub fn local_osd_cpu_secs(conf: &Path) -> Result<BTreeMap<u32, f64>, String> {
    let canonical = std::fs::canonicalize(conf).ok();
    let confs: Vec<&Path> = std::iter::once(conf).chain(canonical.as_deref()).collect();
    let default = confs.iter().any(|c| *c == Path::new(DEFAULT_CONF));
    let procs = std::fs::read_dir("/proc").map_err(|e| format!("/proc unreadable: {e}"))?;
    let mut ticks: BTreeMap<u32, u64> = BTreeMap::new();
    for entry in procs.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        // A process may exit between the listing and the reads: it is simply not counted.
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let Some(id) = osd_id(&cmdline) else {
            continue;
        };
        let ours = confs
            .iter()
            .any(|c| crate::lab::cmdline_uses_conf(&cmdline, c))
            || (default && reads_default_conf(&cmdline));
        if !ours {
            continue;
        }
        let Some(t) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| stat_cpu_ticks(&s))
        else {
            continue;
        };
        *ticks.entry(id).or_default() += t;
    }
    if ticks.is_empty() {
        return Ok(BTreeMap::new());
    }
    let per_sec = clock_ticks_per_sec()?;
    Ok(ticks
        .into_iter()
        .map(|(id, t)| (id, t as f64 / per_sec))
        .collect())
}

/// The CPU seconds the OSDs used between two readings, summed over the OSDs read both
/// times (an OSD whose figure fell restarted in between: its time counts from zero).
/// `None` when no OSD was read both times.
pub fn cpu_secs_between(before: &BTreeMap<u32, f64>, after: &BTreeMap<u32, f64>) -> Option<f64> {
    let mut any = false;
    let total = after
        .iter()
        .filter_map(|(id, a)| {
            let b = before.get(id)?;
            any = true;
            Some(if a >= b { a - b } else { *a })
        })
        .sum();
    any.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<u8> {
        let mut v = Vec::new();
        for a in args {
            v.extend_from_slice(a.as_bytes());
            v.push(0);
        }
        v
    }

    #[test]
    fn an_osd_is_known_by_its_program_and_id() {
        for (args, id) in [
            (
                &["ceph-osd", "-c", "/tmp/lab/ceph.conf", "-i", "3", "-f"][..],
                Some(3),
            ),
            (&["/usr/bin/ceph-osd", "--id", "12"][..], Some(12)),
            (&["ceph-osd", "--id=7", "--setuser", "ceph"][..], Some(7)),
            // cephadm's containers name the daemon instead.
            (
                &[
                    "/usr/bin/ceph-osd",
                    "-n",
                    "osd.4",
                    "-f",
                    "--setuser",
                    "ceph",
                ][..],
                Some(4),
            ),
            (&["ceph-osd", "--name", "osd.9"][..], Some(9)),
            (&["ceph-osd", "--name=osd.11"][..], Some(11)),
            (&["ceph-osd", "-n", "client.admin"][..], None),
            // Not an OSD, or an OSD without a usable id.
            (&["ceph-mon", "-i", "a"][..], None),
            (&["ceph-osd", "-i"][..], None),
            (&["ceph-osd", "-i", "x"][..], None),
            (&["ceph-osd-wrapper", "-i", "1"][..], None),
            (&[][..], None),
        ] {
            assert_eq!(osd_id(&argv(args)), id, "{args:?}");
        }
    }

    /// A `/proc/PID/stat` line of a ceph-osd as Linux 6.1 prints it (proc(5): utime and
    /// stime are fields 14 and 15), and one whose command name holds a space and a `)`.
    #[test]
    fn cpu_ticks_are_utime_plus_stime_counted_after_the_command_name() {
        let osd = "4242 (ceph-osd) S 1 4242 4242 0 -1 4194560 123456 0 0 0 \
                   5123 877 0 0 20 0 67 0 1234567 2000000000 60000 18446744073709551615 \
                   1 1 0 0 0 0 0 4096 17000 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(stat_cpu_ticks(osd), Some(5123 + 877));
        let odd = "7 (a b) c) R 1 7 7 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 5 0 0";
        assert_eq!(stat_cpu_ticks(odd), Some(30));
        assert_eq!(stat_cpu_ticks("7 (x) R 1"), None);
        assert_eq!(stat_cpu_ticks("garbage"), None);
    }

    #[test]
    fn the_change_sums_the_osds_read_twice_and_a_restart_counts_from_zero() {
        let before = BTreeMap::from([(0, 10.0), (1, 20.0), (2, 5.0)]);
        // osd.1 restarted (its time fell), osd.2 was not read after, osd.3 not before.
        let after = BTreeMap::from([(0, 12.5), (1, 1.5), (3, 9.0)]);
        assert_eq!(cpu_secs_between(&before, &after), Some(4.0));
        assert_eq!(cpu_secs_between(&BTreeMap::new(), &after), None);
    }

    /// Only a daemon that names no configuration reads the default one.
    #[test]
    fn a_daemon_without_a_conf_path_reads_the_default_one() {
        assert!(reads_default_conf(&argv(&[
            "ceph-osd", "-n", "osd.0", "-f"
        ])));
        for named in [
            &["ceph-osd", "-c", "/tmp/lab/ceph.conf", "-i", "0"][..],
            &["ceph-osd", "--conf", "/etc/ceph/other.conf", "-i", "0"][..],
            &["ceph-osd", "--conf=/etc/ceph/ceph.conf", "-i", "0"][..],
        ] {
            assert!(!reads_default_conf(&argv(named)), "{named:?}");
        }
    }

    /// This test process is no ceph-osd: a cluster whose OSDs run elsewhere gives nothing,
    /// and nothing on this machine is taken for its OSDs.
    #[test]
    fn no_local_osd_gives_an_empty_reading() {
        let d = tempfile::tempdir().unwrap();
        let conf = d.path().join("ceph.conf");
        std::fs::write(&conf, "[global]\n").unwrap();
        assert_eq!(local_osd_cpu_secs(&conf), Ok(BTreeMap::new()));
    }
}

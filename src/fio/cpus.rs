//! A set of this machine's CPUs, as Linux writes one (`0`, `0-3`, `0,2-3`): what `lab up
//! --osd-cpus` pins the lab's daemons to (through `taskset`) and what `validate
//! --fio-cpus` gives fio (its `cpus_allowed` option), so that one machine can hold an OSD
//! node and a separate client on CPUs of their own.
//!
//! Not here: choosing the CPUs (the user does) or reading a process's affinity back.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The highest CPU index a list may name.
pub const MAX_CPU_INDEX: u32 = 4095;

/// A non-empty set of CPU indices, kept sorted; written and read as a CPU list.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CpuSet(BTreeSet<u32>);

impl CpuSet {
    /// CPUs in the set.
    pub fn len(&self) -> u32 {
        self.0.len() as u32
    }

    /// Always false: a set names at least one CPU.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, cpu: u32) -> bool {
        self.0.contains(&cpu)
    }

    /// The highest CPU index in the set.
    pub fn highest(&self) -> u32 {
        *self.0.iter().next_back().expect("a CpuSet is never empty")
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    /// The CPUs this process may run on: Linux's `Cpus_allowed_list` of `/proc/self/status`
    /// (a container or `taskset` may leave fewer than the machine has, numbered as the
    /// machine numbers them), else 0 .. `available_parallelism`.
    pub fn usable() -> CpuSet {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or_else(|| {
                let n = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
                CpuSet((0..n).collect())
            })
    }

    /// The CPUs of `usable` not in the set; `None` when it holds them all.
    pub fn complement(&self, usable: &CpuSet) -> Option<CpuSet> {
        let rest: BTreeSet<u32> = usable.0.difference(&self.0).copied().collect();
        (!rest.is_empty()).then_some(CpuSet(rest))
    }

    /// Checks that every CPU is one of `usable` (those this process may run on,
    /// [`CpuSet::usable`]); the error says which is not and what to write instead.
    pub fn check_within(&self, usable: &CpuSet) -> Result<(), String> {
        match self.iter().find(|c| !usable.contains(*c)) {
            Some(c) => Err(format!(
                "CPU {c} is not one this machine lets cephplan run on: those are {usable} \
                 ({} CPU(s)); name CPUs from that list",
                usable.len()
            )),
            None => Ok(()),
        }
    }
}

impl std::str::FromStr for CpuSet {
    type Err = String;

    /// A CPU list: comma-separated CPU indices and inclusive ranges (`0`, `1-3`, `0,2-3`).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!(
                "\"{s}\" is not a CPU list ({why}); write CPU indices and ranges separated by \
                 commas, e.g. 0, 1-3 or 0,2-3"
            )
        };
        let cpu = |t: &str| -> Result<u32, String> {
            let v: u32 = t
                .trim()
                .parse()
                .map_err(|_| bad(&format!("\"{}\" is not a CPU index", t.trim())))?;
            if v > MAX_CPU_INDEX {
                return Err(bad(&format!("CPU {v} is beyond {MAX_CPU_INDEX}")));
            }
            Ok(v)
        };
        let mut set = BTreeSet::new();
        for part in s.split(',') {
            if part.trim().is_empty() {
                return Err(bad("an empty item"));
            }
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (cpu(a)?, cpu(b)?);
                    if a > b {
                        return Err(bad(&format!("the range {a}-{b} runs backwards")));
                    }
                    set.extend(a..=b);
                }
                None => {
                    set.insert(cpu(part)?);
                }
            }
        }
        Ok(CpuSet(set))
    }
}

impl fmt::Display for CpuSet {
    /// The canonical list: ascending, consecutive CPUs as ranges (`0,2-3`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        let mut it = self.0.iter().copied().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end = it.next().expect("peeked");
            }
            parts.push(if end == start {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
        }
        f.write_str(&parts.join(","))
    }
}

impl TryFrom<String> for CpuSet {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<CpuSet> for String {
    fn from(c: CpuSet) -> String {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_to_sorted_sets_and_print_canonically() {
        for (text, cpus, canonical) in [
            ("0", vec![0], "0"),
            ("1-3", vec![1, 2, 3], "1-3"),
            ("3,0,2", vec![0, 2, 3], "0,2-3"),
            (" 0 , 2-3 ", vec![0, 2, 3], "0,2-3"),
            ("1-1,1", vec![1], "1"),
        ] {
            let s: CpuSet = text.parse().unwrap();
            assert_eq!(s.iter().collect::<Vec<_>>(), cpus, "{text}");
            assert_eq!(s.to_string(), canonical);
            assert_eq!(s.to_string().parse::<CpuSet>().unwrap(), s);
        }
        let s: CpuSet = "0,2-3".parse().unwrap();
        assert_eq!((s.len(), s.highest()), (3, 3));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "\"0,2-3\"");
        assert_eq!(serde_json::from_str::<CpuSet>(&json).unwrap(), s);
    }

    #[test]
    fn malformed_lists_are_refused_with_the_form_to_write() {
        for (text, why) in [
            ("", "an empty item"),
            ("0,", "an empty item"),
            ("a", "\"a\" is not a CPU index"),
            ("3-1", "runs backwards"),
            ("-1", "\"\" is not a CPU index"),
            ("99999", "beyond 4095"),
        ] {
            let e = text.parse::<CpuSet>().unwrap_err();
            assert!(
                e.contains(why) && e.contains("e.g. 0, 1-3 or 0,2-3"),
                "{text}: {e}"
            );
        }
        assert!(serde_json::from_str::<CpuSet>("\"x\"").is_err());
    }

    #[test]
    fn a_set_is_checked_against_the_usable_cpus_and_has_a_complement() {
        let two: CpuSet = "0-1".parse().unwrap();
        let s: CpuSet = "0".parse().unwrap();
        assert!(s.check_within(&two).is_ok());
        assert_eq!(s.complement(&two).unwrap().to_string(), "1");
        assert_eq!(s.complement(&s), None);
        let e = "0-2"
            .parse::<CpuSet>()
            .unwrap()
            .check_within(&two)
            .unwrap_err();
        assert!(
            e.contains("CPU 2 is not one") && e.contains("those are 0-1 (2 CPU(s))"),
            "{e}"
        );
        // A container's CPUs need not start at 0.
        let high: CpuSet = "4-7".parse().unwrap();
        assert!(s
            .check_within(&high)
            .unwrap_err()
            .contains("CPU 0 is not one"));
        // This process runs somewhere: its own CPUs are a non-empty list that parses.
        let here = CpuSet::usable();
        assert!(!here.is_empty());
        assert_eq!(here.to_string().parse::<CpuSet>().unwrap(), here);
    }
}

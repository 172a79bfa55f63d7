//! Units at the boundary: parsing of sizes ("4k", "64KiB", "4M"), durations ("4ms",
//! "30s") and bit rates ("100Gb/s", "25G") written by users, and their serde wrappers.
//!
//! Inside cephplan every quantity is an SI base unit in an `f64`/`u64` whose name says the
//! unit (`latency_secs`, `bytes_per_sec`, `block_size_bytes`). This module is the only place
//! that turns human spellings into those; fio's own units (ns, KiB) are converted in `fio`.
//! Sizes follow fio's convention: `k`, `K`, `KiB` and `KB` all mean 1024 bytes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} \"{input}\" {problem}: {hint}")]
pub struct UnitError {
    pub what: &'static str,
    pub input: String,
    /// "is not understood" (the spelling), "is out of range" (a value read but impossible)
    /// or "is ambiguous" (a spelling with two readings).
    pub problem: &'static str,
    /// The remedy: how to write the value (it may quote the input's own figures).
    pub hint: Cow<'static, str>,
}

const NOT_UNDERSTOOD: &str = "is not understood";
const OUT_OF_RANGE: &str = "is out of range";
const AMBIGUOUS: &str = "is ambiguous";

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == 'e' || c == 'E')
                    && i > 0
                    && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-'))
                || ((c == '-' || c == '+') && (i == 0 || s[..i].ends_with(['e', 'E']))))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let num: f64 = s[..end].parse().ok()?;
    Some((num, s[end..].trim()))
}

const SIZE_HINT: &str = "write a byte count with an optional binary suffix, e.g. 4096, \"4k\", \"64KiB\", \"4M\", \"1G\"";

/// Parses a size in bytes. Suffixes are binary (fio's convention): k/K/KiB/KB = 1024.
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        what: "size",
        input: s.to_string(),
        problem: NOT_UNDERSTOOD,
        hint: SIZE_HINT.into(),
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0_f64.powi(3),
        "t" | "tb" | "tib" => 1024.0_f64.powi(4),
        "p" | "pb" | "pib" => 1024.0_f64.powi(5),
        _ => return Err(err()),
    };
    let v = n * mult;
    if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0) {
        return Err(err());
    }
    // 2^64: an `as u64` cast would saturate larger values to u64::MAX, which the caller
    // would then echo back as the user's figure.
    if v >= 18_446_744_073_709_551_616.0 {
        return Err(UnitError {
            what: "size",
            input: s.to_string(),
            problem: OUT_OF_RANGE,
            hint: "a size must be below 16 EiB (2^64 bytes); check the exponent or the suffix"
                .into(),
        });
    }
    Ok(v as u64)
}

const DURATION_HINT: &str =
    "write a number with a unit: ns, us, ms, s, m (minutes) or h, e.g. \"4ms\", \"30s\"";

/// Parses a duration into seconds. A bare number is seconds.
pub fn parse_duration_secs(s: &str) -> Result<f64, UnitError> {
    let err = || UnitError {
        what: "duration",
        input: s.to_string(),
        problem: NOT_UNDERSTOOD,
        hint: DURATION_HINT.into(),
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    let mult = match unit {
        "" | "s" | "sec" | "secs" => 1.0,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    let v = n * mult;
    if !(v.is_finite() && v >= 0.0) {
        return Err(UnitError {
            problem: OUT_OF_RANGE,
            hint:
                "a duration is at least 0 and finite: write it without a minus sign, e.g. \"15us\" or \"30s\"".into(),
            ..err()
        });
    }
    Ok(v)
}

const LATENCY_TARGET_HINT: &str =
    "write a latency target with its unit: ns, us, ms or s, e.g. \"4ms\" or \"250us\"";

/// Parses a latency *target* (`--latency-target`, a requirements file's `latency_*_max`)
/// into seconds. Unlike [`parse_duration_secs`], a unit is required and minutes and hours
/// are refused: "4" and "4m" are slips for "4ms" far more often than 4 s or 4 minutes, and
/// either would turn a storage latency target into one that every design meets.
pub fn parse_latency_target_secs(s: &str) -> Result<f64, UnitError> {
    let err = |problem: &'static str, hint: Cow<'static, str>| UnitError {
        what: "latency target",
        input: s.to_string(),
        problem,
        hint,
    };
    let (n, unit) =
        split_number(s).ok_or_else(|| err(NOT_UNDERSTOOD, LATENCY_TARGET_HINT.into()))?;
    match unit {
        "" => Err(err(
            "has no unit",
            format!(
                "write a unit: \"{n}ms\" for {n} milliseconds (\"{n}s\" if {n} seconds is meant)"
            )
            .into(),
        )),
        "m" | "min" | "h" => Err(err(
            "is minutes or hours",
            format!(
                "write a unit of ns, us, ms or s: \"{n}ms\"; \"{}\" would be {n} {}",
                s.trim(),
                if unit == "h" { "hours" } else { "minutes" }
            )
            .into(),
        )),
        _ => parse_duration_secs(s).map_err(|e| UnitError {
            what: "latency target",
            hint: if e.problem == NOT_UNDERSTOOD {
                LATENCY_TARGET_HINT.into()
            } else {
                e.hint
            },
            ..e
        }),
    }
}

/// How a capacity's one-letter suffix ("2T", "200G") reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SingleLetter {
    /// Binary, as `rbd create --size` and fio read it (image sizes: "200G" = 200 GiB).
    Binary,
    /// Refused as ambiguous (drive capacities: datasheets write decimal "2TB", tools binary).
    Refused,
}

/// Parses a capacity in bytes: a byte count, or a number with a decimal suffix ("TB",
/// "GB", "MB", "kB", "PB": 10¹² … as on drive datasheets) or a binary one ("TiB", "GiB",
/// …: 2⁴⁰ …), case-insensitive; a one-letter suffix reads as `single` says. Rounded to
/// whole bytes ("15.36TB").
pub fn parse_capacity_bytes(s: &str, single: SingleLetter) -> Result<u64, UnitError> {
    let err = |problem: &'static str, hint: Cow<'static, str>| UnitError {
        what: "capacity",
        input: s.to_string(),
        problem,
        hint,
    };
    let hint = || -> Cow<'static, str> {
        "write a byte count or a number with a decimal suffix as datasheets do (\"2TB\" = 2×10¹² bytes, \"960GB\") or a binary one (\"2TiB\" = 2×2⁴⁰ bytes)".into()
    };
    let (n, unit) = split_number(s).ok_or_else(|| err(NOT_UNDERSTOOD, hint()))?;
    let lower = unit.to_ascii_lowercase();
    let power = |p: char| "kmgtp".find(p).map(|i| i as i32 + 1);
    let mult = match lower.as_str() {
        "" | "b" => 1.0,
        u if u.len() == 3 && u.ends_with("ib") => 1024f64.powi(
            power(u.chars().next().unwrap_or(' ')).ok_or_else(|| err(NOT_UNDERSTOOD, hint()))?,
        ),
        u if u.len() == 2 && u.ends_with('b') => 1000f64.powi(
            power(u.chars().next().unwrap_or(' ')).ok_or_else(|| err(NOT_UNDERSTOOD, hint()))?,
        ),
        u if u.len() == 1 => {
            let p = power(u.chars().next().unwrap_or(' '))
                .ok_or_else(|| err(NOT_UNDERSTOOD, hint()))?;
            match single {
                SingleLetter::Binary => 1024f64.powi(p),
                SingleLetter::Refused => {
                    let up = unit.to_ascii_uppercase().replace('K', "k");
                    return Err(err(
                        AMBIGUOUS,
                        format!(
                            "write \"{n}{up}B\" ({n}×10^{} bytes, as drive datasheets count) or \"{n}{}iB\" ({n}×2^{} bytes)",
                            3 * p,
                            up.replace('k', "K"),
                            10 * p
                        )
                        .into(),
                    ));
                }
            }
        }
        _ => return Err(err(NOT_UNDERSTOOD, hint())),
    };
    let v = (n * mult).round();
    if !(v.is_finite() && v >= 0.0) {
        return Err(err(NOT_UNDERSTOOD, hint()));
    }
    if v >= 18_446_744_073_709_551_616.0 {
        return Err(err(
            OUT_OF_RANGE,
            "a capacity must be below 16 EiB (2^64 bytes); check the exponent or the suffix".into(),
        ));
    }
    Ok(v as u64)
}

/// Deserialises a drive's `capacity` ([`parse_capacity_bytes`], one-letter suffixes refused).
pub fn drive_capacity<'de, D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
    capacity_with(d, SingleLetter::Refused)
}

/// Deserialises an optional `image_size` ([`parse_capacity_bytes`], "200G" = 200 GiB as
/// `rbd create --size` reads it, "200GB" = 200×10⁹ bytes).
pub fn image_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Bytes>, D::Error> {
    capacity_with(d, SingleLetter::Binary).map(Some)
}

fn capacity_with<'de, D: Deserializer<'de>>(d: D, single: SingleLetter) -> Result<Bytes, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        N(u64),
        S(String),
    }
    match Raw::deserialize(d).map_err(|e| {
        keep_missing(e, || {
            "expected a capacity: a byte count, or a string such as \"2TB\" (decimal) or \"2TiB\" (binary)".to_string()
        })
    })? {
        Raw::N(n) => Ok(Bytes(n)),
        Raw::S(s) => parse_capacity_bytes(&s, single)
            .map(Bytes)
            .map_err(serde::de::Error::custom),
    }
}

/// Serialises a size as a whole number of bytes (a drive capacity: no suffix to misread).
pub fn bytes_as_integer<S: Serializer>(b: &Bytes, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(b.0)
}

const RATE_HINT: &str =
    "write a link speed in bits per second with a decimal suffix, e.g. \"25G\", \"100Gb/s\", \"40GbE\" (or a number of Gb/s)";

/// Parses a network link rate into bits per second. Decimal suffixes (G = 1e9). A bare
/// number is taken as Gb/s, the way NICs are named.
pub fn parse_bits_per_sec(s: &str) -> Result<f64, UnitError> {
    let err = || UnitError {
        what: "link rate",
        input: s.to_string(),
        problem: NOT_UNDERSTOOD,
        hint: RATE_HINT.into(),
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    if let Some(hint) = byte_rate_hint(n, unit) {
        return Err(UnitError {
            problem: "is in bytes per second",
            hint: hint.into(),
            ..err()
        });
    }
    let u = unit.to_ascii_lowercase();
    let u = u
        .trim_end_matches("/s")
        .trim_end_matches("ps")
        .trim_end_matches("be")
        .trim_end_matches("bit")
        .trim_end_matches('b');
    let mult = match u {
        "" if unit.is_empty() => 1e9,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => return Err(err()),
    };
    let v = n * mult;
    if !(v.is_finite() && v > 0.0) {
        return Err(UnitError {
            problem: OUT_OF_RANGE,
            hint: "a link rate must be positive and finite (a link of 0 carries nothing), e.g. \"25Gb/s\"".into(),
            ..err()
        });
    }
    Ok(v)
}

/// The remedy for a link rate written in bytes ("10GB/s", "1.25GB/s", "10GBps": a capital
/// `B`), giving both readings; None for any other unit. NICs are named in bits (10 GbE), so
/// a byte spelling is either a slip of the case (10 GbE meant) or a data rate that is 8×
/// as many bits: cephplan takes neither silently.
fn byte_rate_hint(n: f64, unit: &str) -> Option<String> {
    let u = unit
        .strip_suffix("/s")
        .or_else(|| unit.strip_suffix("ps"))
        .unwrap_or(unit);
    let prefix = u.strip_suffix('B')?;
    let prefix = prefix.strip_suffix('i').unwrap_or(prefix);
    let mult = match prefix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    let bits = n * mult * 8.0;
    let (scale, p) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|&(m, _)| bits >= m)
        .unwrap_or((1.0, ""));
    let round = |v: f64| (v * 1e6).round() / 1e6;
    let shown = format!("{}{p}b/s", round(bits / scale));
    let p_in = prefix.to_ascii_uppercase().replace('K', "k");
    let n = round(n);
    Some(format!(
        "that is {shown}; NIC speeds are written in bits: \"{n}{p_in}b/s\" for a {n} {p_in}b/s link (10 GbE is \"10Gb/s\"), or \"{shown}\" if {n} {p_in}B/s is meant"
    ))
}

/// A size in bytes, written in files as a number or as a string with a suffix ("4k").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (suffix, m) in [
            ("T", 1u64 << 40),
            ("G", 1 << 30),
            ("M", 1 << 20),
            ("k", 1 << 10),
        ] {
            if b >= m && b.is_multiple_of(m) {
                return write!(f, "{}{}", b / m, suffix);
            }
        }
        write!(f, "{b}")
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// The error of a value that failed to deserialise: `hint` replaces serde's untagged-enum
/// message ("data did not match any variant"), but a "missing field" error is kept, so that
/// the message names the field that is absent rather than describing a value format.
fn keep_missing<E: serde::de::Error>(e: E, hint: impl FnOnce() -> String) -> E {
    if e.to_string().starts_with("missing field") {
        e
    } else {
        E::custom(hint())
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)
            .map_err(|e| keep_missing(e, || format!("expected a size: {SIZE_HINT}")))?
        {
            Raw::N(n) => Ok(Bytes(n)),
            Raw::S(s) => parse_bytes(&s).map(Bytes).map_err(serde::de::Error::custom),
        }
    }
}

/// A duration in seconds, written in files as a number of seconds or a string ("4ms").
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Secs(pub f64);

impl Serialize for Secs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for Secs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)
            .map_err(|e| keep_missing(e, || format!("expected a duration: {DURATION_HINT}")))?
        {
            Raw::N(n) if n.is_finite() && n >= 0.0 => Ok(Secs(n)),
            Raw::N(n) => Err(serde::de::Error::custom(format!(
                "duration {n} must be a finite number of seconds ≥ 0"
            ))),
            Raw::S(s) => parse_duration_secs(&s)
                .map(Secs)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// A latency target in seconds, written as a string with its unit ("4ms",
/// [`parse_latency_target_secs`]): a bare number is refused (seconds or milliseconds?).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct LatencyTarget(pub f64);

impl Serialize for LatencyTarget {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Seconds at f64's shortest round-trip digits: parses back to the same value.
        s.serialize_str(&format!("{}s", self.0))
    }
}

impl<'de> Deserialize<'de> for LatencyTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)
            .map_err(|e| keep_missing(e, || format!("expected a latency target: {LATENCY_TARGET_HINT}")))?
        {
            Raw::N(n) => Err(serde::de::Error::custom(format!(
                "latency target {n} has no unit: write it as a string with its unit: \"{n}ms\" for {n} milliseconds (\"{n}s\" if {n} seconds is meant)"
            ))),
            Raw::S(s) => parse_latency_target_secs(&s)
                .map(LatencyTarget)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// A link rate in bits per second, written as a number of Gb/s or a string ("100Gb/s").
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct BitsPerSec(pub f64);

impl Serialize for BitsPerSec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}Gb/s", self.0 / 1e9))
    }
}

impl<'de> Deserialize<'de> for BitsPerSec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)
            .map_err(|e| keep_missing(e, || format!("expected a link rate: {RATE_HINT}")))?
        {
            Raw::N(n) if n.is_finite() && n > 0.0 => Ok(BitsPerSec(n * 1e9)),
            Raw::N(n) => Err(serde::de::Error::custom(format!(
                "link rate {n} Gb/s must be positive"
            ))),
            Raw::S(s) => parse_bits_per_sec(&s)
                .map(BitsPerSec)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value read but impossible says so, not that it was not understood (session 52's
    /// audit: "0Gb/s" and "-15us" were "not understood" although written as asked).
    #[test]
    fn an_impossible_value_is_out_of_range_not_misunderstood() {
        let e = parse_bits_per_sec("0Gb/s").unwrap_err().to_string();
        assert!(
            e.contains("is out of range") && e.contains("positive"),
            "{e}"
        );
        let e = parse_duration_secs("-15us").unwrap_err().to_string();
        assert!(e.contains("is out of range") && e.contains("minus"), "{e}");
        let e = parse_duration_secs("15 parsecs").unwrap_err().to_string();
        assert!(e.contains("is not understood"), "{e}");
    }

    #[test]
    fn sizes_use_binary_suffixes_like_fio() {
        assert_eq!(parse_bytes("4k").unwrap(), 4096);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65536);
        assert_eq!(parse_bytes("4M").unwrap(), 4 << 20);
        assert_eq!(parse_bytes("512").unwrap(), 512);
        assert_eq!(parse_bytes(" 1.5k ").unwrap(), 1536);
        assert!(parse_bytes("4kbps").is_err());
        assert!(parse_bytes("-4k").is_err());
        assert!(parse_bytes("0.3").is_err());
    }

    /// A size past u64 is refused as out of range, not saturated to u64::MAX and echoed back
    /// as "18446744073709551615 bytes" (session 54's audit: `block_size = "1e308"`).
    #[test]
    fn a_size_past_u64_is_out_of_range() {
        for s in ["1e308", "16384P", "18446744073709551616"] {
            let e = parse_bytes(s).unwrap_err().to_string();
            assert!(
                e.contains("is out of range") && e.contains("2^64"),
                "{s}: {e}"
            );
        }
        assert_eq!(parse_bytes("16383P").unwrap(), 16383 << 50);
    }

    #[test]
    fn durations() {
        assert!((parse_duration_secs("4ms").unwrap() - 0.004).abs() < 1e-15);
        assert_eq!(parse_duration_secs("30s").unwrap(), 30.0);
        assert_eq!(parse_duration_secs("2").unwrap(), 2.0);
        assert!((parse_duration_secs("250us").unwrap() - 250e-6).abs() < 1e-15);
        assert_eq!(parse_duration_secs("1.5e-3").unwrap(), 1.5e-3);
        let e = parse_duration_secs("4 parsecs").unwrap_err();
        assert!(e.to_string().contains("ms"), "{e}");
    }

    #[test]
    fn link_rates() {
        assert_eq!(parse_bits_per_sec("100Gb/s").unwrap(), 100e9);
        assert_eq!(parse_bits_per_sec("40GbE").unwrap(), 40e9);
        assert_eq!(parse_bits_per_sec("25G").unwrap(), 25e9);
        assert_eq!(parse_bits_per_sec("10").unwrap(), 10e9);
        assert_eq!(parse_bits_per_sec("100Mbps").unwrap(), 100e6);
        assert!(parse_bits_per_sec("fast").is_err());
    }

    /// Session 55's audit: "10GB/s", "1.25GB/s" and "100GBps" were read as bits (8× off).
    /// A byte spelling is refused with both readings; bit spellings are unchanged.
    #[test]
    fn a_link_rate_in_bytes_is_refused_with_both_readings() {
        let e = parse_bits_per_sec("10GB/s").unwrap_err().to_string();
        assert!(
            e.contains("is in bytes per second")
                && e.contains("80Gb/s")
                && e.contains("\"10Gb/s\" for a 10 Gb/s link"),
            "{e}"
        );
        let e = parse_bits_per_sec("1.25GB/s").unwrap_err().to_string();
        assert!(e.contains("that is 10Gb/s"), "{e}");
        for s in ["10GBps", "100MB/s", "10GB", "1GiB/s", "500kB/s"] {
            let e = parse_bits_per_sec(s).unwrap_err().to_string();
            assert!(e.contains("bytes per second"), "{s}: {e}");
        }
        assert_eq!(parse_bits_per_sec("10Gbps").unwrap(), 10e9);
        assert_eq!(parse_bits_per_sec("10gb/s").unwrap(), 10e9);
        assert_eq!(parse_bits_per_sec("25GbE").unwrap(), 25e9);
    }

    /// Session 55's audit: `--latency-target 4` was 4 s and "4m" 4 minutes.
    #[test]
    fn a_latency_target_needs_a_unit_below_minutes() {
        let e = parse_latency_target_secs("4").unwrap_err().to_string();
        assert!(e.contains("has no unit") && e.contains("\"4ms\""), "{e}");
        let e = parse_latency_target_secs("4m").unwrap_err().to_string();
        assert!(
            e.contains("\"4ms\"") && e.contains("\"4m\" would be 4 minutes"),
            "{e}"
        );
        assert!(parse_latency_target_secs("1h").is_err());
        assert!((parse_latency_target_secs("4ms").unwrap() - 4e-3).abs() < 1e-15);
        assert_eq!(parse_latency_target_secs("250us").unwrap(), 250e-6);
        assert_eq!(parse_latency_target_secs("1s").unwrap(), 1.0);
        let e = parse_latency_target_secs("4 parsecs")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ms"), "{e}");
        // Durations elsewhere keep their reading.
        assert_eq!(parse_duration_secs("4").unwrap(), 4.0);
        assert_eq!(parse_duration_secs("4m").unwrap(), 240.0);
        #[derive(Deserialize, Serialize)]
        struct T {
            t: LatencyTarget,
        }
        let e = toml::from_str::<T>("t = 3").err().unwrap().to_string();
        assert!(e.contains("no unit") && e.contains("\"3ms\""), "{e}");
        let t: T = toml::from_str("t = \"3ms\"").unwrap();
        assert_eq!(t.t, LatencyTarget(0.003));
        let back: T = toml::from_str(&toml::to_string(&t).unwrap()).unwrap();
        assert_eq!(back.t, t.t);
    }

    /// Session 55's audit: a drive `capacity = "2TB"` was 2 TiB (+10 %). Decimal suffixes
    /// are decimal, binary ones binary; a one-letter suffix is refused for a drive and binary
    /// for an image (rbd's `--size`).
    #[test]
    fn capacities_read_tb_as_decimal_and_tib_as_binary() {
        let drive = |s| parse_capacity_bytes(s, SingleLetter::Refused);
        let image = |s| parse_capacity_bytes(s, SingleLetter::Binary);
        assert_eq!(drive("2TB").unwrap(), 2_000_000_000_000);
        assert_eq!(drive("15.36TB").unwrap(), 15_360_000_000_000);
        assert_eq!(drive("960GB").unwrap(), 960_000_000_000);
        assert_eq!(drive("2TiB").unwrap(), 2 << 40);
        assert_eq!(drive("2tb").unwrap(), 2_000_000_000_000);
        assert_eq!(drive("3840000000000").unwrap(), 3_840_000_000_000);
        let e = drive("2T").unwrap_err().to_string();
        assert!(
            e.contains("is ambiguous") && e.contains("\"2TB\"") && e.contains("\"2TiB\""),
            "{e}"
        );
        assert_eq!(image("200G").unwrap(), 200 << 30);
        assert_eq!(image("200GB").unwrap(), 200_000_000_000);
        assert!(drive("2 parsecs").is_err());
        assert!(drive("1e30TB").is_err());
    }

    #[test]
    fn serde_wrappers_accept_numbers_and_strings() {
        #[derive(Deserialize)]
        struct T {
            a: Bytes,
            b: Bytes,
            c: Secs,
            d: BitsPerSec,
        }
        let t: T = toml::from_str("a = 4096\nb = \"4k\"\nc = \"4ms\"\nd = 25").unwrap();
        assert_eq!(t.a, Bytes(4096));
        assert_eq!(t.b, Bytes(4096));
        assert_eq!(t.c, Secs(0.004));
        assert_eq!(t.d, BitsPerSec(25e9));
        assert_eq!(Bytes(65536).to_string(), "64k");
    }
}

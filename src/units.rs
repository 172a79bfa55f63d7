//! Units at the boundary: parsing of sizes ("4k", "64KiB", "4M"), durations ("4ms",
//! "30s") and bit rates ("100Gb/s", "25G") written by users, and their serde wrappers.
//!
//! Inside cephplan every quantity is an SI base unit in an `f64`/`u64` whose name says the
//! unit (`latency_secs`, `bytes_per_sec`, `block_size_bytes`). This module is the only place
//! that turns human spellings into those; fio's own units (ns, KiB) are converted in `fio`.
//! Sizes follow fio's convention: `k`, `K`, `KiB` and `KB` all mean 1024 bytes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} \"{input}\" {problem}: {hint}")]
pub struct UnitError {
    pub what: &'static str,
    pub input: String,
    /// "is not understood" (the spelling) or "is out of range" (a value read but impossible).
    pub problem: &'static str,
    pub hint: &'static str,
}

const NOT_UNDERSTOOD: &str = "is not understood";
const OUT_OF_RANGE: &str = "is out of range";

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
        hint: SIZE_HINT,
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
            hint: "a size must be below 16 EiB (2^64 bytes); check the exponent or the suffix",
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
        hint: DURATION_HINT,
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
                "a duration is at least 0 and finite: write it without a minus sign, e.g. \"15us\" or \"30s\"",
            ..err()
        });
    }
    Ok(v)
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
        hint: RATE_HINT,
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
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
            hint: "a link rate must be positive and finite (a link of 0 carries nothing), e.g. \"25Gb/s\"",
            ..err()
        });
    }
    Ok(v)
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

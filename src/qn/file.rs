//! The generic network file (`cephplan solve --network FILE`): a TOML description of a
//! closed queueing network in the vocabulary of JMT's JMVA and PDQ, for textbook models
//! and for checking the solvers independently of the Ceph builder.
//!
//! ```toml
//! schema_version = 1
//! [[class]]
//! name = "read"
//! population = 10
//! think_time = "0ms"          # a number of seconds or a duration string
//! [[station]]
//! name = "cpu"
//! kind = "queue"              # queue | delay (default queue)
//! servers = 4                 # servers per copy (default 1); a fractional count such as
//!                             # 11.4 (effective cores) is a real server count (see `qn`)
//! multiplicity = 1            # identical copies sharing the demand (default 1)
//! demand = { read = "2ms", write = 0.003 }   # per class, all copies together; missing → 0
//! path_demand = { write = "1ms" }            # optional: critical-path part (forks)
//! batching = { share = 0.4, jobs_per_member = 8, max_batch = 32 }  # optional (queues);
//!   # a second term: coalesce_share = 0.3, coalesce_jobs_per_member = 16, coalesce_max = 64,
//!   # and optionally coalesce_exponent = 0.5 (its share paid as s₂ / b₂^α; default 1)
//! ```
//!
//! Every error names the file, the line and column, the field and the fix. Not here: the
//! Ceph scenario format (see `spec`), writing networks (nothing generates this format).
//!
//! Format history: `schema_version = 1` is the first and only version.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{Batching, Class, Demand, Network, NetworkError, Station, StationKind};
use crate::units::Secs;

/// The format version this build reads.
pub const SCHEMA_VERSION: i64 = 1;

#[derive(Debug, thiserror::Error)]
pub enum NetworkFileError {
    // The I/O error is in the message, not chained as a source: the CLI prints an error's
    // chain, which would say it twice.
    #[error(
        "cannot read network file {path}: {error}; {}",
        crate::io::read_remedy(error)
    )]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{origin}:{line}:{column}: {message}; fix: {fix}\n  | {snippet}")]
    Syntax {
        origin: String,
        line: usize,
        column: usize,
        /// TOML's message, after "field `station[1].servers`: " where it is about a value.
        message: String,
        fix: String,
        snippet: String,
    },
    #[error("{origin}:{line}:{column}: {field}: {message}\n  | {snippet}")]
    Invalid {
        origin: String,
        line: usize,
        column: usize,
        field: String,
        message: String,
        snippet: String,
    },
    #[error("{origin}: {source}")]
    Network {
        origin: String,
        #[source]
        source: NetworkError,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    schema_version: Spanned<i64>,
    #[serde(rename = "class", default)]
    classes: Vec<ClassSpec>,
    #[serde(rename = "station", default)]
    stations: Vec<StationSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassSpec {
    name: Spanned<String>,
    population: Spanned<i64>,
    #[serde(default)]
    think_time: Option<Secs>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum KindSpec {
    Queue,
    Delay,
}

type DemandMap = BTreeMap<Spanned<String>, Secs>;

/// `servers`: a whole number or a real count above 1.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
enum ServerCount {
    Whole(i64),
    Real(f64),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StationSpec {
    name: Spanned<String>,
    #[serde(default)]
    kind: Option<KindSpec>,
    #[serde(default)]
    servers: Option<Spanned<ServerCount>>,
    #[serde(default)]
    multiplicity: Option<Spanned<i64>>,
    #[serde(default)]
    demand: DemandMap,
    #[serde(default)]
    path_demand: DemandMap,
    #[serde(default)]
    batching: Option<Spanned<Batching>>,
}

/// Reads and validates a network file.
pub fn load_network(path: &Path) -> Result<Network, NetworkFileError> {
    let text = std::fs::read_to_string(path).map_err(|error| NetworkFileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    parse_network(&text, &path.display().to_string())
}

/// Parses and validates network TOML; `origin` names the source in error messages.
pub fn parse_network(text: &str, origin: &str) -> Result<Network, NetworkFileError> {
    let at = |span: Option<Range<usize>>| {
        let (line, column, snippet) = locate(text, span.map_or(0, |s| s.start));
        (origin.to_string(), line, column, snippet)
    };
    let spec: FileSpec = toml::from_str(text).map_err(|e| {
        let (origin, line, column, snippet) = at(e.span());
        let message = e.message().trim().to_string();
        let field = crate::spec::field_prefix(text, &e);
        let fix = if message.contains("untagged enum ServerCount") {
            "write servers as a number without quotes: a whole count (e.g. 4) or a real count above 1 (e.g. 2.5)".to_string()
        } else {
            crate::spec::value_type_fix(&message).unwrap_or_else(|| {
                "correct the network file (models/networks/ has complete examples)".to_string()
            })
        };
        NetworkFileError::Syntax {
            origin,
            line,
            column,
            message: format!("{field}{message}"),
            fix,
            snippet,
        }
    })?;
    let invalid = |span: Range<usize>, field: &str, message: String| {
        let (origin, line, column, snippet) = at(Some(span));
        NetworkFileError::Invalid {
            origin,
            line,
            column,
            field: field.to_string(),
            message,
            snippet,
        }
    };
    if *spec.schema_version.get_ref() != SCHEMA_VERSION {
        return Err(invalid(
            spec.schema_version.span(),
            "schema_version",
            format!(
                "version {} is not supported; this cephplan reads schema_version = {SCHEMA_VERSION}",
                spec.schema_version.get_ref()
            ),
        ));
    }
    let mut classes = Vec::new();
    let mut class_index = BTreeMap::new();
    for c in &spec.classes {
        let name = c.name.get_ref();
        if class_index.insert(name.clone(), classes.len()).is_some() {
            return Err(invalid(
                c.name.span(),
                "class.name",
                format!("class \"{name}\" appears twice; give every class a unique name"),
            ));
        }
        let pop = *c.population.get_ref();
        let population = u32::try_from(pop).map_err(|_| {
            invalid(
                c.population.span(),
                "class.population",
                format!("{pop} is not a population; write a whole number of jobs ≥ 0"),
            )
        })?;
        if population > super::MAX_COUNT {
            return Err(invalid(
                c.population.span(),
                "class.population",
                format!(
                    "{pop} jobs is beyond the largest population cephplan solves ({}): the exact solver keeps arrays of that length in memory; model fewer, larger jobs",
                    super::MAX_COUNT
                ),
            ));
        }
        classes.push(Class {
            name: name.clone(),
            population,
            think_time_secs: c.think_time.map_or(0.0, |t| t.0),
        });
    }
    let known = || {
        if class_index.is_empty() {
            return "none: add a [[class]] with its name and population".to_owned();
        }
        class_index
            .keys()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut stations = Vec::new();
    let mut station_names = BTreeMap::new();
    for s in &spec.stations {
        let name = s.name.get_ref();
        if station_names.insert(name.clone(), ()).is_some() {
            return Err(invalid(
                s.name.span(),
                "station.name",
                format!("station \"{name}\" appears twice; give every station a unique name"),
            ));
        }
        let kind = match s.kind.unwrap_or(KindSpec::Queue) {
            KindSpec::Queue => StationKind::Queue,
            KindSpec::Delay => StationKind::Delay,
        };
        let count = |v: &Option<Spanned<i64>>, field: &str| {
            match v {
            None => Ok(1),
            Some(v) => u32::try_from(*v.get_ref())
                .ok()
                .filter(|&n| (1..=super::MAX_COUNT).contains(&n))
                .ok_or_else(|| {
                    invalid(
                        v.span(),
                        field,
                        format!(
                            "{} is invalid for station \"{name}\"; write a whole number ≥ 1 and ≤ {} (larger ones do not fit the exact solver's memory)",
                            v.get_ref(),
                            super::MAX_COUNT
                        ),
                    )
                }),
        }
        };
        let (servers, fractional_servers) = match &s.servers {
            Some(v) => match *v.get_ref() {
                ServerCount::Whole(n) => (
                    count(&Some(Spanned::new(v.span(), n)), "station.servers")?,
                    None,
                ),
                ServerCount::Real(c) => {
                    if !(c.is_finite() && c > 1.0 && c <= f64::from(super::MAX_COUNT)) {
                        return Err(invalid(
                            v.span(),
                            "station.servers",
                            format!(
                                "{c} is invalid for station \"{name}\"; write a whole number ≥ 1 or a real server count above 1 and ≤ {}",
                                super::MAX_COUNT
                            ),
                        ));
                    }
                    if kind == StationKind::Delay {
                        return Err(invalid(
                            v.span(),
                            "station.servers",
                            format!(
                                "station \"{name}\" is a delay, which has no servers; remove servers or make it a queue"
                            ),
                        ));
                    }
                    (c.ceil() as u32, Some(c))
                }
            },
            None => (1, None),
        };
        let multiplicity = count(&s.multiplicity, "station.multiplicity")?;
        let mut demands = vec![Demand::new(0.0); classes.len()];
        for (field, map) in [("demand", &s.demand), ("path_demand", &s.path_demand)] {
            for (class, secs) in map {
                let Some(&ci) = class_index.get(class.get_ref()) else {
                    return Err(invalid(
                        class.span(),
                        &format!("station.{field}"),
                        format!(
                            "station \"{name}\" has a {field} for unknown class \"{}\"; the classes are {}",
                            class.get_ref(),
                            known()
                        ),
                    ));
                };
                if field == "demand" {
                    demands[ci] = Demand::new(secs.0);
                } else {
                    demands[ci].path_secs = secs.0;
                }
            }
        }
        for class in s.path_demand.keys() {
            let ci = class_index[class.get_ref()];
            if demands[ci].path_secs > demands[ci].secs {
                return Err(invalid(
                    class.span(),
                    "station.path_demand",
                    format!(
                        "station \"{name}\", class \"{}\": path_demand {} s exceeds demand {} s; \
                         the critical path is part of the demand, so write path_demand ≤ demand",
                        class.get_ref(),
                        demands[ci].path_secs,
                        demands[ci].secs
                    ),
                ));
            }
        }
        let batching = match &s.batching {
            None => None,
            Some(b) => {
                b.get_ref()
                    .validate(name, kind)
                    .map_err(|e| invalid(b.span(), "station.batching", e.to_string()))?;
                Some(*b.get_ref())
            }
        };
        stations.push(Station {
            name: name.clone(),
            kind,
            servers,
            multiplicity,
            demands,
            batching,
            fractional_servers,
        });
    }
    Network::new(stations, classes).map_err(|source| NetworkFileError::Network {
        origin: origin.to_string(),
        source,
    })
}

/// 1-based line and column (in characters) of a byte offset, and the line's text.
fn locate(text: &str, offset: usize) -> (usize, usize, String) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    (
        line,
        column,
        text[line_start..line_end].trim_end().to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"schema_version = 1
[[class]]
name = "read"
population = 10
think_time = "1ms"
[[class]]
name = "write"
population = 4
[[station]]
name = "cpu"
servers = 4
demand = { read = "2ms", write = 0.003 }
[[station]]
name = "osd"
multiplicity = 3
demand = { write = "6ms" }
path_demand = { write = "2ms" }
[[station]]
name = "wire"
kind = "delay"
demand = { read = "100us" }
"#;

    fn err(text: &str) -> String {
        parse_network(text, "net.toml").unwrap_err().to_string()
    }

    #[test]
    fn parses_the_documented_format() {
        let net = parse_network(GOOD, "net.toml").unwrap();
        assert_eq!(net.classes.len(), 2);
        assert_eq!(net.classes[0].think_time_secs, 0.001);
        let cpu = &net.stations[0];
        assert_eq!((cpu.servers, cpu.multiplicity), (4, 1));
        assert_eq!(cpu.demands[0], Demand::new(0.002));
        assert_eq!(cpu.demands[1], Demand::new(0.003));
        let osd = &net.stations[1];
        assert_eq!(osd.multiplicity, 3);
        assert_eq!(osd.demands[0], Demand::new(0.0));
        assert_eq!(osd.demands[1], Demand::forked(0.006, 0.002));
        assert_eq!(net.stations[2].kind, StationKind::Delay);
        assert!((net.stations[2].demands[0].secs - 1e-4).abs() < 1e-18);
    }

    #[test]
    fn unknown_field_names_line_and_field() {
        let e = err(&GOOD.replace("servers = 4", "servrs = 4"));
        assert!(e.starts_with("net.toml:11:1:"), "{e}");
        assert!(e.contains("servrs") && e.contains("servers"), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_type_names_the_field_and_the_fix() {
        let e = err(&GOOD.replace("servers = 4", "servers = \"four\""));
        assert!(e.starts_with("net.toml:11:"), "{e}");
        assert!(e.contains("field `station[0].servers`"), "{e}");
        assert!(
            e.contains("fix: write servers as a number without quotes"),
            "{e}"
        );
        let e = err(&GOOD.replace("servers = 4", "servers = 4\nmultiplicity = \"3\""));
        assert!(e.contains("field `station[0].multiplicity`"), "{e}");
        assert!(e.contains("fix: write a whole number"), "{e}");
    }

    #[test]
    fn wrong_unit_is_located() {
        let e = err(&GOOD.replace("\"2ms\"", "\"2 parsecs\""));
        assert!(e.starts_with("net.toml:12:"), "{e}");
        assert!(e.contains("ms"), "{e}");
    }

    #[test]
    fn negative_demand_is_rejected() {
        let e = err(&GOOD.replace("write = 0.003", "write = -0.003"));
        assert!(e.starts_with("net.toml:12:"), "{e}");
        assert!(e.contains("≥ 0"), "{e}");
    }

    /// Issue 17 item 10: 4e9 jobs or servers aborted with "memory allocation failed"
    /// (exit 134); now an error naming the line and field.
    #[test]
    fn populations_and_server_counts_beyond_memory_are_refused_naming_the_field() {
        for (from, to, field) in [
            (
                "population = 4",
                "population = 4000000000",
                "class.population",
            ),
            ("servers = 4", "servers = 4000000000", "station.servers"),
            ("servers = 4", "servers = 10000001", "station.servers"),
        ] {
            let e = err(&GOOD.replace(from, to));
            assert!(e.contains(field) && e.contains("10000000"), "{e}");
        }
        // The limit itself is accepted.
        parse_network(
            &GOOD.replace("population = 4", "population = 10000000"),
            "t",
        )
        .unwrap();
    }

    #[test]
    fn zero_servers_is_rejected_with_fix() {
        let e = err(&GOOD.replace("servers = 4", "servers = 0"));
        assert!(e.starts_with("net.toml:11:11:"), "{e}");
        assert!(e.contains("station.servers") && e.contains("≥ 1"), "{e}");
    }

    #[test]
    fn demand_for_unknown_class_lists_the_classes() {
        let e = err(&GOOD.replace("{ write = \"6ms\" }", "{ wrte = \"6ms\" }"));
        assert!(e.starts_with("net.toml:16:"), "{e}");
        assert!(
            e.contains("unknown class \"wrte\"") && e.contains("\"write\""),
            "{e}"
        );
    }

    #[test]
    fn path_demand_above_demand_is_rejected() {
        let e = err(&GOOD.replace(
            "path_demand = { write = \"2ms\" }",
            "path_demand = { write = \"9ms\" }",
        ));
        assert!(e.contains("path_demand") && e.contains("exceeds"), "{e}");
    }

    #[test]
    fn bad_kind_version_population_and_duplicates() {
        let e = err(&GOOD.replace("\"delay\"", "\"sleep\""));
        assert!(e.contains("sleep") && e.contains("delay"), "{e}");
        let e = err(&GOOD.replace("schema_version = 1", "schema_version = 2"));
        assert!(
            e.starts_with("net.toml:1:18:") && e.contains("schema_version = 1"),
            "{e}"
        );
        let e = err(&GOOD.replace("population = 4", "population = -4"));
        assert!(e.contains("class.population"), "{e}");
        let e = err(&GOOD.replace("name = \"osd\"", "name = \"cpu\""));
        assert!(e.contains("appears twice"), "{e}");
    }

    #[test]
    fn network_level_errors_name_the_file() {
        let e = err("schema_version = 1\n[[station]]\nname = \"cpu\"\n");
        assert!(
            e.starts_with("net.toml:") && e.contains("no classes"),
            "{e}"
        );
    }

    #[test]
    fn batching_is_read_and_bad_batching_names_line_field_and_fix() {
        let text = GOOD.replace(
            "servers = 4\n",
            "servers = 4\nbatching = { share = 0.4, jobs_per_member = 8, max_batch = 32 }\n",
        );
        let net = parse_network(&text, "net.toml").unwrap();
        let b = net.stations[0].batching.expect("batching read");
        assert_eq!((b.share, b.jobs_per_member, b.max_batch), (0.4, 8.0, 32.0));
        // q = 16 jobs at a copy: batches of 2, factor 1 − 0.4 + 0.2 = 0.8.
        assert!((b.demand_factor(16.0) - 0.8).abs() < 1e-15);
        let e = err(&text.replace("share = 0.4", "share = 1.5"));
        assert!(
            e.starts_with("net.toml:12:")
                && e.contains("station.batching")
                && e.contains("share = 1.5")
                && e.contains("< 1"),
            "{e}"
        );
        let e = err(&text.replace("max_batch = 32", "max_batch = 0.5"));
        assert!(e.contains("max_batch") && e.contains("≥ 1"), "{e}");
        let e = err(&text.replace("max_batch = 32", "max_bach = 32"));
        assert!(e.contains("max_bach"), "{e}");
        // The second term: read, and its share refused where the two reach 1.
        let two = text.replace(
            "max_batch = 32 }",
            "max_batch = 32, coalesce_share = 0.3, coalesce_jobs_per_member = 16, coalesce_max = 64 }",
        );
        let batching = |text: &str| {
            parse_network(text, "net.toml").unwrap().stations[0]
                .batching
                .unwrap()
        };
        let b2 = batching(&two);
        assert_eq!(
            (
                b2.coalesce_share,
                b2.coalesce_jobs_per_member,
                b2.coalesce_max
            ),
            (0.3, 16.0, 64.0)
        );
        // q = 32: batches of 4 and groups of 2: 1 − 0.4·(1 − 1/4) − 0.3·(1 − 1/2) = 0.55.
        assert!((b2.demand_factor(32.0) - 0.55).abs() < 1e-15);
        let e = err(&two.replace("coalesce_share = 0.3", "coalesce_share = 0.7"));
        assert!(
            e.starts_with("net.toml:12:") && e.contains("coalesce_share") && e.contains("< 1"),
            "{e}"
        );
        // Its exponent: 1 unless given; ½ read, and refused outside (0, 1].
        assert_eq!(b2.coalesce_exponent, 1.0);
        let half = two.replace(
            "coalesce_max = 64 }",
            "coalesce_max = 64, coalesce_exponent = 0.5 }",
        );
        let bh = batching(&half);
        // q = 32: 1 − 0.4·(1 − 1/4) − 0.3·(1 − 2^(−½)) = 0.7 − 0.3 + 0.3/√2.
        assert!((bh.demand_factor(32.0) - (0.4 + 0.3 / 2f64.sqrt())).abs() < 1e-15);
        let e = err(&half.replace("coalesce_exponent = 0.5", "coalesce_exponent = 2"));
        assert!(
            e.starts_with("net.toml:12:") && e.contains("coalesce_exponent") && e.contains("≤ 1"),
            "{e}"
        );
        let e = err(&GOOD.replace(
            "kind = \"delay\"\n",
            "kind = \"delay\"\nbatching = { share = 0.4, jobs_per_member = 8, max_batch = 32 }\n",
        ));
        assert!(e.contains("a delay has no queue"), "{e}");
    }

    #[test]
    fn a_fractional_server_count_is_a_real_server_count() {
        let net = parse_network(&GOOD.replace("servers = 4", "servers = 11.4"), "n.toml").unwrap();
        let cpu = &net.stations[net.station_index("cpu").unwrap()];
        assert_eq!((cpu.servers, cpu.fractional_servers), (12, Some(11.4)));
        // Capacity 11.4 / 2 ms for reads alone.
        assert!((cpu.capacity_per_sec(0) - 5_700.0).abs() < 1e-9);
        for (bad, fix) in [("servers = 0.5", "above 1"), ("servers = -3.5", "above 1")] {
            let e = parse_network(&GOOD.replace("servers = 4", bad), "n.toml").unwrap_err();
            let m = e.to_string();
            assert!(m.contains("station.servers") && m.contains(fix), "{m}");
        }
    }
}

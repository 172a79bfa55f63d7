//! The simulation-model file (`cephplan simulate --model FILE`): a [`SimModel`] written
//! out in TOML (`.toml`) or JSON (any other extension), with a `schema_version`.
//!
//! Format (schema_version 1): the serde form of [`SimModel`]. Stations are referred to by
//! their position (0-based) in `stations`:
//! ```toml
//! schema_version = 1
//! [[stations]]
//! name = "disk"
//! kind = "queue"          # or "delay"
//! servers = 1
//! multiplicity = 4
//! placement = "random"    # or "round_robin"
//! batching = { share = 0.4, jobs_per_member = 1, max_batch = 8 }  # optional (queues)
//! [[classes]]
//! name = "reads"
//! arrivals = { kind = "closed", population = 8, think = { kind = "exponential", mean_secs = 0.01 } }
//! route = [
//!   { step = "visit", station = 0, service = { kind = "two_moment", mean_secs = 0.004, scv = 2.0 } },
//! ]
//! ```
//! Other steps: `{ step = "fork", branches = [[...steps...], [...]] }` (all branches, join),
//! `{ step = "detach", steps = [...] }` (work the job starts and does not wait for) and
//! `{ step = "choice", branches = [{ label = "read", probability = 0.7, steps = [...] },
//! ...] }` (one branch at random; responses also reported per label). `batching` (see
//! [`crate::sim::SimStation::batching`]) is optional and omitted when absent, so files
//! without it read and write as before. Unknown station fields are refused (a misspelt
//! `batching` would otherwise be ignored silently).
//!
//! Errors name the file; syntax and type errors give the line and column (from the TOML or
//! JSON parser), and so does an invalid `batching` in a TOML file, with the field and the fix.
//! Not here: the generic network format (`qn::file`), which carries demands, not routes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::model::{SimClass, SimModel, SimModelError, SimStation};
use crate::qn::NetworkError;

/// Version of the model-file layout.
pub const MODEL_SCHEMA_VERSION: u32 = 1;

/// The file as read. The model's fields are spelt out rather than `#[serde(flatten)]`ed:
/// flattening buffers the content and loses the TOML positions of errors inside it.
#[derive(Debug, Deserialize)]
struct ModelFile {
    schema_version: u32,
    stations: Vec<SimStation>,
    classes: Vec<SimClass>,
}

#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    // The inner errors are in the messages, not chained as sources: the CLI prints an
    // error's chain, which would say each twice.
    #[error(
        "cannot read simulation model {path}: {error}; {}",
        crate::io::read_remedy(error)
    )]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("simulation model {path} is not valid {format}: {message}")]
    Parse {
        path: PathBuf,
        format: &'static str,
        message: String,
    },
    #[error("simulation model {path} has schema_version {found}; this cephplan reads {MODEL_SCHEMA_VERSION}: rewrite it in the documented layout")]
    Version { path: PathBuf, found: u32 },
    #[error("simulation model {path}: {error}")]
    Invalid { path: PathBuf, error: SimModelError },
    #[error("simulation model {path}:{line}:{column}: {field}: {error}\n  | {snippet}")]
    InvalidAt {
        path: PathBuf,
        line: usize,
        column: usize,
        field: &'static str,
        snippet: String,
        error: Box<SimModelError>,
    },
}

/// Where each station's `batching` table sits in a TOML model file (for error positions).
#[derive(Deserialize)]
struct StationSpans {
    #[serde(default)]
    stations: Vec<StationSpan>,
}

#[derive(Deserialize)]
struct StationSpan {
    name: String,
    batching: Option<toml::Spanned<toml::Value>>,
}

/// The error for an invalid model, with the position of the offending station's
/// `batching` when the file is TOML and the problem is there.
fn invalid(text: &str, path: &Path, is_toml: bool, source: SimModelError) -> ModelFileError {
    let station = match &source {
        SimModelError::BadBatching(NetworkError::BadBatching { station, .. }) if is_toml => {
            station.clone()
        }
        _ => {
            return ModelFileError::Invalid {
                path: path.to_path_buf(),
                error: source,
            }
        }
    };
    let span = toml::from_str::<StationSpans>(text).ok().and_then(|f| {
        f.stations
            .into_iter()
            .find(|s| s.name == station)
            .and_then(|s| s.batching)
            .map(|b| b.span().start)
    });
    let Some(offset) = span else {
        return ModelFileError::Invalid {
            path: path.to_path_buf(),
            error: source,
        };
    };
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    ModelFileError::InvalidAt {
        path: path.to_path_buf(),
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
        field: "stations.batching",
        snippet: text[line_start..line_end].trim_end().to_string(),
        error: Box::new(source),
    }
}

/// Reads and validates a model file.
pub fn load_model(path: &Path) -> Result<SimModel, ModelFileError> {
    let text = std::fs::read_to_string(path).map_err(|error| ModelFileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    parse_model(&text, path)
}

/// Parses model text; `path` names the source in errors and picks the format by extension.
pub fn parse_model(text: &str, path: &Path) -> Result<SimModel, ModelFileError> {
    let is_toml = path.extension().is_some_and(|e| e == "toml");
    let parsed: Result<ModelFile, String> = if is_toml {
        toml::from_str(text).map_err(|e| e.to_string())
    } else {
        serde_json::from_str(text).map_err(|e| e.to_string())
    };
    let file = parsed.map_err(|message| ModelFileError::Parse {
        path: path.to_path_buf(),
        format: if is_toml { "TOML" } else { "JSON" },
        // A network file (`[[station]]`, `[[class]]`) is valid TOML of another layout.
        message: if is_toml && text.contains("[[station]]") {
            format!("{}\n  this looks like a network file (`[[station]]`): give it to `cephplan simulate --network` or `cephplan solve --network`", message.trim_end())
        } else {
            message
        },
    })?;
    if file.schema_version != MODEL_SCHEMA_VERSION {
        return Err(ModelFileError::Version {
            path: path.to_path_buf(),
            found: file.schema_version,
        });
    }
    let model = SimModel {
        stations: file.stations,
        classes: file.classes,
    };
    model
        .validate()
        .map_err(|source| invalid(text, path, is_toml, source))?;
    Ok(model)
}

/// Serialises a model as a JSON model file (with `schema_version` and the cephplan marker
/// field `generator`), ready for [`crate::io::write_atomic_owned`].
pub fn model_to_json(model: &SimModel) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        generator: &'a str,
        schema_version: u32,
        #[serde(flatten)]
        model: &'a SimModel,
    }
    let mut s = serde_json::to_string_pretty(&Out {
        generator: crate::io::GENERATED_MARKER,
        schema_version: MODEL_SCHEMA_VERSION,
        model,
    })
    .expect("a SimModel always serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Dist, Placement, Route};

    const DOC_EXAMPLE: &str = r#"
schema_version = 1
[[stations]]
name = "disk"
kind = "queue"
servers = 1
multiplicity = 4
placement = "random"
[[classes]]
name = "reads"
arrivals = { kind = "closed", population = 8, think = { kind = "exponential", mean_secs = 0.01 } }
route = [
  { step = "visit", station = 0, service = { kind = "two_moment", mean_secs = 0.004, scv = 2.0 } },
]
"#;

    #[test]
    fn documented_toml_example_parses() {
        let m = parse_model(DOC_EXAMPLE, Path::new("m.toml")).unwrap();
        assert_eq!(m.stations[0].multiplicity, 4);
        assert_eq!(m.classes[0].route.len(), 1);
    }

    #[test]
    fn json_round_trip_keeps_forks_and_detached_work() {
        let mut b = SimModel::builder();
        let q = b.queue("osd", 1, 3, Placement::RoundRobin);
        b.open_class(
            "w",
            10.0,
            Route::new()
                .fork((0..3).map(|_| Route::new().visit(q, Dist::exponential(0.001))))
                .detach(Route::new().visit(q, Dist::exponential(0.0005))),
        );
        let m = b.build().unwrap();
        let text = model_to_json(&m);
        assert!(text.contains("\"detach\""), "{text}");
        assert!(text.contains(crate::io::GENERATED_MARKER));
        assert_eq!(parse_model(&text, Path::new("m.json")).unwrap(), m);
    }

    #[test]
    fn batching_is_read_and_bad_batching_names_line_field_and_fix() {
        let text = DOC_EXAMPLE.replace(
            "placement = \"random\"\n",
            "placement = \"random\"\nbatching = { share = 0.4, jobs_per_member = 1, max_batch = 8 }\n",
        );
        let m = parse_model(&text, Path::new("m.toml")).unwrap();
        let b = m.stations[0].batching.expect("batching read");
        assert_eq!((b.share, b.jobs_per_member, b.max_batch), (0.4, 1.0, 8.0));
        // Written back as JSON it survives; a station without batching writes no field.
        let json = model_to_json(&m);
        assert_eq!(parse_model(&json, Path::new("m.json")).unwrap(), m);
        assert!(
            !model_to_json(&parse_model(DOC_EXAMPLE, Path::new("m.toml")).unwrap())
                .contains("batching")
        );

        // The batching table is on line 9 of the text (DOC_EXAMPLE starts with an empty line).
        let bad = |from: &str, to: &str| {
            parse_model(&text.replace(from, to), Path::new("m.toml"))
                .unwrap_err()
                .to_string()
        };
        let e = bad("share = 0.4", "share = 1.5");
        assert!(
            e.starts_with("simulation model m.toml:9:")
                && e.contains("stations.batching")
                && e.contains("batching.share = 1.5")
                && e.contains("< 1"),
            "{e}"
        );
        let e = bad("max_batch = 8", "max_batch = 0.5");
        assert!(e.contains("max_batch") && e.contains("≥ 1"), "{e}");
        let e = bad("max_batch = 8", "max_bach = 8");
        assert!(e.contains("max_bach") && e.contains("line 9"), "{e}");
        let e = bad("batching = {", "batchng = {");
        assert!(e.contains("batchng") && e.contains("line 9"), "{e}");
        let e = bad("kind = \"queue\"", "kind = \"delay\"");
        assert!(
            e.contains("m.toml:9:") && e.contains("a delay has no queue"),
            "{e}"
        );
        // JSON: no position for a validation error, but the station, field and fix.
        let e = parse_model(
            &json.replace("\"share\": 0.4", "\"share\": -1.0"),
            Path::new("m.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("\"disk\": batching.share = -1"), "{e}");
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let e = parse_model("schema_version = 1\nstations = 3\n", Path::new("bad.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.toml") && e.contains("line"), "{e}");
        let e = parse_model(
            &DOC_EXAMPLE.replace("schema_version = 1", "schema_version = 9"),
            Path::new("v.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("schema_version 9"), "{e}");
        let e = parse_model(
            &DOC_EXAMPLE.replace("station = 0", "station = 5"),
            Path::new("s.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("s.toml") && e.contains("station #5"), "{e}");
    }
}

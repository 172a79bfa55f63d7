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
//! [[classes]]
//! name = "reads"
//! arrivals = { kind = "closed", population = 8, think = { kind = "exponential", mean_secs = 0.01 } }
//! route = [
//!   { step = "visit", station = 0, service = { kind = "two_moment", mean_secs = 0.004, scv = 2.0 } },
//! ]
//! ```
//! Not here: the generic network format (`qn::file`), which carries demands, not routes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::model::{SimModel, SimModelError};

/// Version of the model-file layout.
pub const MODEL_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct ModelFile {
    schema_version: u32,
    #[serde(flatten)]
    model: SimModel,
}

#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    #[error("cannot read simulation model {path}: {source}; check the path")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("simulation model {path} is not valid {format}: {message}")]
    Parse {
        path: PathBuf,
        format: &'static str,
        message: String,
    },
    #[error("simulation model {path} has schema_version {found}; this cephplan reads {MODEL_SCHEMA_VERSION}: rewrite it in the documented layout")]
    Version { path: PathBuf, found: u32 },
    #[error("simulation model {path}: {source}")]
    Invalid {
        path: PathBuf,
        #[source]
        source: SimModelError,
    },
}

/// Reads and validates a model file.
pub fn load_model(path: &Path) -> Result<SimModel, ModelFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| ModelFileError::Io {
        path: path.to_path_buf(),
        source,
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
        message,
    })?;
    if file.schema_version != MODEL_SCHEMA_VERSION {
        return Err(ModelFileError::Version {
            path: path.to_path_buf(),
            found: file.schema_version,
        });
    }
    file.model
        .validate()
        .map_err(|source| ModelFileError::Invalid {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(file.model)
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
    fn json_round_trip_keeps_forks() {
        let mut b = SimModel::builder();
        let q = b.queue("osd", 1, 3, Placement::RoundRobin);
        b.open_class(
            "w",
            10.0,
            Route::new().fork((0..3).map(|_| Route::new().visit(q, Dist::exponential(0.001)))),
        );
        let m = b.build().unwrap();
        let text = model_to_json(&m);
        assert!(text.contains(crate::io::GENERATED_MARKER));
        assert_eq!(parse_model(&text, Path::new("m.json")).unwrap(), m);
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

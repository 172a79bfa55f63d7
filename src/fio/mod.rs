//! The only module that knows fio: job files for the rbd engine ([`job`]), fio's JSON
//! output and its reduction to SI units ([`json`]), and running fio behind the
//! [`Executor`] trait — a real process ([`ProcessExecutor`], locally or through fio's
//! client/server mode) or recorded output ([`ReplayExecutor`], for fast tests).
//!
//! Not here: choosing what to run (that is `validate`) and bringing up a cluster (`lab`).

pub mod cpus;
pub mod job;
pub mod json;
pub(crate) mod process;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

pub use cpus::CpuSet;
pub use job::{RbdJob, RwPattern};
pub use json::{
    parse_fio_output, read_fio_file, EngineCheck, FioOutput, FioParseError, MeasuredDirection,
    MeasuredSummary, PercentileMethod,
};

use crate::progress::Progress;
use process::{last_lines, run_capture, ProcError};

#[derive(Debug, thiserror::Error)]
pub enum FioError {
    #[error("fio was not found (looked for `{program}`); install it: apt-get install -y --no-install-recommends fio")]
    Missing { program: String },
    #[error("fio at `{program}` has no rbd engine (`fio --enghelp=rbd` failed: {stderr}); install a fio built with librbd, e.g. Debian's: apt-get install -y --no-install-recommends fio")]
    NoRbdEngine { program: String, stderr: String },
    #[error("fio failed (exit code {code}); its stderr:\n{stderr}\nCheck that the cluster is reachable with this ceph.conf (CEPH_CONF), that the pool and images exist, and for client/server runs that each `fio --server` has CEPH_CONF in its environment")]
    Failed { code: String, stderr: String },
    #[error("fio: {0}")]
    Process(#[from] ProcError),
    #[error("cannot write the fio job file in {dir}: {source}")]
    JobFile {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("replay: no more recorded fio outputs (run {index} requested); record one per run the test makes")]
    ReplayExhausted { index: usize },
    #[error("{0}")]
    Parse(#[from] FioParseError),
    #[error(transparent)]
    JobValue(#[from] job::JobValueError),
}

/// fio's raw output of one run.
#[derive(Debug, Clone)]
pub struct FioRunOutput {
    pub job_file: String,
    /// The JSON document (possibly preceded by non-JSON lines).
    pub stdout: String,
    pub stderr: String,
}

/// Runs fio for a job. Implementations must stop promptly (killing their child) once
/// `progress.is_cancelled()`.
pub trait Executor: Send + Sync {
    fn run(&self, job: &RbdJob, progress: &dyn Progress) -> Result<FioRunOutput, FioError>;
}

/// Where the jobs run: fio locally, or fio servers (`host:port`, each started with
/// `fio --server=ip:HOST,PORT` and CEPH_CONF in its environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FioTarget {
    Local,
    Clients(Vec<String>),
}

/// Runs the real `fio` binary with CEPH_CONF set.
#[derive(Debug, Clone)]
pub struct ProcessExecutor {
    pub fio_program: PathBuf,
    pub ceph_conf: PathBuf,
    pub target: FioTarget,
    /// Job files are written here (a temporary file per run).
    pub work_dir: PathBuf,
    /// Added to runtime + ramp time before fio is declared hung and killed.
    pub grace: Duration,
}

impl ProcessExecutor {
    pub fn new(ceph_conf: &Path, target: FioTarget, work_dir: &Path) -> Self {
        Self {
            fio_program: PathBuf::from("fio"),
            ceph_conf: ceph_conf.to_path_buf(),
            target,
            work_dir: work_dir.to_path_buf(),
            grace: Duration::from_secs(120),
        }
    }
}

/// Converts `host:port` to fio's `ip:host,port` client spelling.
fn fio_client_arg(hostport: &str) -> String {
    match hostport.rsplit_once(':') {
        Some((h, p)) => format!("--client=ip:{h},{p}"),
        None => format!("--client=ip:{hostport}"),
    }
}

impl Executor for ProcessExecutor {
    fn run(&self, job: &RbdJob, progress: &dyn Progress) -> Result<FioRunOutput, FioError> {
        let job_file = job.to_job_file()?;
        let mut tmp = tempfile::Builder::new()
            .prefix("cephplan-job-")
            .suffix(".fio")
            .tempfile_in(&self.work_dir)
            .map_err(|source| FioError::JobFile {
                dir: self.work_dir.clone(),
                source,
            })?;
        std::io::Write::write_all(&mut tmp, job_file.as_bytes()).map_err(|source| {
            FioError::JobFile {
                dir: self.work_dir.clone(),
                source,
            }
        })?;
        let mut cmd = Command::new(&self.fio_program);
        cmd.env("CEPH_CONF", &self.ceph_conf)
            .arg("--output-format=json");
        match &self.target {
            FioTarget::Local => {
                cmd.arg(tmp.path());
            }
            FioTarget::Clients(cs) => {
                for c in cs {
                    cmd.arg(fio_client_arg(c)).arg(tmp.path());
                }
            }
        }
        // A size-bound run (pre-fill) has no runtime: allow ten minutes.
        let nominal = if job.runtime_secs == 0 {
            600
        } else {
            job.runtime_secs + job.ramp_time_secs
        };
        let timeout = Duration::from_secs(nominal) + self.grace;
        let out = run_capture(&mut cmd, timeout, progress).map_err(|e| match e {
            ProcError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                FioError::Missing {
                    program: self.fio_program.display().to_string(),
                }
            }
            e => FioError::Process(e),
        })?;
        if !out.success() {
            let mut stderr = last_lines(&out.stderr, 20);
            // fio writes some failures ("fio_rbd_connect failed") to stdout.
            let non_json: Vec<&str> = out
                .stdout
                .lines()
                .take_while(|l| !l.starts_with('{'))
                .collect();
            if !non_json.is_empty() {
                stderr.push_str("\nstdout: ");
                stderr.push_str(&last_lines(&non_json.join("\n"), 10));
            }
            return Err(FioError::Failed {
                code: out
                    .status_code
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "none (killed by a signal)".into()),
                stderr,
            });
        }
        Ok(FioRunOutput {
            job_file,
            stdout: out.stdout,
            stderr: out.stderr,
        })
    }
}

/// Checks that `fio_program` exists and has the rbd engine; returns fio's version string.
pub fn check_fio(fio_program: &Path) -> Result<String, FioError> {
    let program = fio_program.display().to_string();
    let quick = Duration::from_secs(30);
    let no = crate::progress::NoProgress;
    let v = run_capture(Command::new(fio_program).arg("--version"), quick, &no).map_err(
        |e| match e {
            ProcError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                FioError::Missing {
                    program: program.clone(),
                }
            }
            e => FioError::Process(e),
        },
    )?;
    let e = run_capture(Command::new(fio_program).arg("--enghelp=rbd"), quick, &no)?;
    if !e.success() {
        return Err(FioError::NoRbdEngine {
            program,
            stderr: last_lines(&format!("{}\n{}", e.stdout, e.stderr), 3),
        });
    }
    Ok(v.stdout.trim().to_string())
}

/// Returns recorded fio outputs in order, one per run, and remembers the job files it was
/// given. For tests of everything above the fio process.
#[derive(Debug, Default)]
pub struct ReplayExecutor {
    outputs: Mutex<VecDeque<String>>,
    seen: Mutex<Vec<RbdJob>>,
}

impl ReplayExecutor {
    pub fn new(outputs: impl IntoIterator<Item = String>) -> Self {
        Self {
            outputs: Mutex::new(outputs.into_iter().collect()),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// The jobs run so far, in order.
    pub fn jobs_seen(&self) -> Vec<RbdJob> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Executor for ReplayExecutor {
    fn run(&self, job: &RbdJob, _progress: &dyn Progress) -> Result<FioRunOutput, FioError> {
        let mut seen = self.seen.lock().expect("replay lock");
        seen.push(job.clone());
        let index = seen.len();
        let stdout = self
            .outputs
            .lock()
            .expect("replay lock")
            .pop_front()
            .ok_or(FioError::ReplayExhausted { index })?;
        Ok(FioRunOutput {
            job_file: job.to_job_file()?,
            stdout,
            stderr: String::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_argument_uses_fio_ip_spelling() {
        assert_eq!(
            fio_client_arg("127.0.0.1:8765"),
            "--client=ip:127.0.0.1,8765"
        );
    }

    #[test]
    fn missing_fio_is_named() {
        let e = check_fio(Path::new("/nonexistent/fio")).unwrap_err();
        assert!(matches!(e, FioError::Missing { .. }), "{e}");
        assert!(e.to_string().contains("apt-get install"));
    }

    #[test]
    fn fio_without_rbd_engine_is_detected() {
        // A stand-in "fio" that knows no engines: `--enghelp=rbd` exits 1 like fio 3.33
        // does for an unknown engine ("IO engine nosuch not found").
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fio");
        std::fs::write(
            &fake,
            "#!/bin/sh\ncase \"$1\" in --version) echo fio-3.33;; *) echo 'IO engine rbd not found' >&2; exit 1;; esac\n",
        )
        .unwrap();
        let mut p = std::fs::metadata(&fake).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
        std::fs::set_permissions(&fake, p).unwrap();
        let e = check_fio(&fake).unwrap_err();
        assert!(matches!(e, FioError::NoRbdEngine { .. }), "{e}");
    }
}

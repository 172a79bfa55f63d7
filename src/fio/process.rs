//! Running an external program with a deadline and cooperative cancellation, capturing its
//! stdout and stderr. Shared by the fio runner, `lab` and `validate` (which call `ceph`,
//! `rbd` and the daemons). The child runs in a process group of its own (its PID), so a
//! terminal's Ctrl-C reaches cephplan (which cancels) and not the child, and a child that
//! outlives its deadline or is cancelled is stopped together with everything it started
//! (fio's job processes, which hold the output pipe): SIGTERM to that group first, so that
//! fio ends its jobs and closes its RBD images (a SIGKILLed librbd client never closes
//! them: the image's watch then lingers about 30 s on the OSDs and `rbd rm` blocks or
//! refuses with "image still has watchers"), SIGKILL only if the group is still there
//! after [`STOP_GRACE`]. Nothing here signals processes it did not start.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::progress::Progress;

/// What a finished child left behind.
#[derive(Debug, Clone)]
pub struct Captured {
    pub status_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.status_code == Some(0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "`{program}` did not finish within {secs:.0} s and was stopped; stderr so far: {stderr}"
    )]
    Timeout {
        program: String,
        secs: f64,
        stderr: String,
    },
    #[error("`{program}` was stopped because the run was cancelled")]
    Cancelled { program: String },
}

fn drain<R: Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut r) = r {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            s = String::from_utf8_lossy(&buf).into_owned();
        }
        s
    })
}

/// How long a stopped child's process group has, after SIGTERM, to end on its own (fio:
/// end its jobs and close its images) before it gets SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs `cmd` to completion, stopping it (by PID, [`stop_group`]) after `timeout` or once
/// `progress` reports cancellation. stdin is closed.
pub fn run_capture(
    cmd: &mut Command,
    timeout: Duration,
    progress: &dyn Progress,
) -> Result<Captured, ProcError> {
    run_capture_with_grace(cmd, timeout, progress, STOP_GRACE)
}

/// [`run_capture`] with another grace between SIGTERM and SIGKILL.
pub(crate) fn run_capture_with_grace(
    cmd: &mut Command,
    timeout: Duration,
    progress: &dyn Progress,
    grace: Duration,
) -> Result<Captured, ProcError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child: Child = std::os::unix::process::CommandExt::process_group(cmd, 0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ProcError::Spawn {
            program: program.clone(),
            source,
        })?;
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break Some(st);
        }
        if progress.is_cancelled() {
            stop_group(&mut child, grace);
            let _ = (out.join(), err.join());
            return Err(ProcError::Cancelled { program });
        }
        if start.elapsed() > timeout {
            stop_group(&mut child, grace);
            let _ = out.join();
            let stderr = err.join().unwrap_or_default();
            return Err(ProcError::Timeout {
                program,
                secs: timeout.as_secs_f64(),
                stderr: last_lines(&stderr, 10),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Captured {
        status_code: status.and_then(|s| s.code()),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// Stops the child's process group (the child and everything it started, whose group is
/// the child's PID: [`run_capture`] starts it so): SIGTERM, then SIGKILL if any of the
/// group is still running after `grace`; reaps the child.
fn stop_group(child: &mut Child, grace: Duration) {
    signal_group(child.id(), "TERM");
    let t0 = Instant::now();
    // The group is gone once `kill -0` finds no process in it (the child, reaped below,
    // counts while it is a zombie, so it is reaped as soon as it exits).
    let mut child_done = false;
    while t0.elapsed() < grace {
        if !child_done {
            child_done = matches!(child.try_wait(), Ok(Some(_)));
        }
        if child_done && !signal_group(child.id(), "0") {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    signal_group(child.id(), "KILL");
    let _ = child.kill();
    let _ = child.wait();
}

/// `kill -SIGNAL -- -PGID`; true if it reached a process.
fn signal_group(pgid: u32, signal: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{signal}"), "--", &format!("-{pgid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The last `n` non-empty lines of `text`, for error messages.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(n);
    let s = lines[from..].join("\n");
    if s.is_empty() {
        "(empty)".into()
    } else {
        s
    }
}

/// True if `program` can be found on PATH (or is an existing path).
pub fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::{CancelToken, NoProgress};

    #[test]
    fn captures_output_and_status() {
        let c = run_capture(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
            &NoProgress,
        )
        .unwrap();
        assert_eq!(c.stdout.trim(), "out");
        assert_eq!(c.stderr.trim(), "err");
        assert_eq!(c.status_code, Some(3));
    }

    #[test]
    fn kills_on_timeout_and_on_cancel() {
        let t0 = Instant::now();
        let e = run_capture(
            Command::new("sleep").arg("30"),
            Duration::from_millis(200),
            &NoProgress,
        )
        .unwrap_err();
        assert!(matches!(e, ProcError::Timeout { .. }));
        let tok = CancelToken::new();
        tok.cancel();
        let e = run_capture(
            Command::new("sleep").arg("30"),
            Duration::from_secs(60),
            &tok,
        )
        .unwrap_err();
        assert!(matches!(e, ProcError::Cancelled { .. }));
        assert!(t0.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_cancel_stops_the_grandchildren_that_hold_the_pipe() {
        // Regression: killing only the parent left its children (fio's job processes)
        // running and holding stdout, so the capture hung until they ended. A shell that
        // starts a 30 s sleep in the background and waits: cancelled after 300 ms, both go,
        // and the call returns promptly.
        let d = tempfile::tempdir().unwrap();
        let pid_file = d.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let tok = CancelToken::new();
        let t = tok.clone();
        let written = pid_file.clone();
        // Cancel once the background sleep is running (its PID written), 5 s at most.
        let canceller = std::thread::spawn(move || {
            let t0 = Instant::now();
            while !written.exists() && t0.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(50));
            t.cancel();
        });
        let t0 = Instant::now();
        let e = run_capture(
            Command::new("sh").args(["-c", &script]),
            Duration::from_secs(60),
            &tok,
        )
        .unwrap_err();
        canceller.join().unwrap();
        assert!(matches!(e, ProcError::Cancelled { .. }));
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        // Gone, or a zombie waiting for init to reap it: not running. SIGKILL is delivered
        // when the process is next scheduled, so allow a loaded machine 5 s for it.
        let running = || {
            std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
                .is_ok_and(|s| !s.contains(") Z "))
        };
        let t1 = Instant::now();
        while running() && t1.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !running(),
            "the background sleep {} is still running",
            pid.trim()
        );
    }

    /// Finding 1 of the lab audit: a cancelled child gets SIGTERM first, so that fio can
    /// close its RBD images (a SIGKILLed librbd client leaves the image watched for ~30 s);
    /// one that ignores SIGTERM is killed after the grace period.
    #[test]
    fn a_cancel_terminates_first_and_kills_only_after_the_grace() {
        let d = tempfile::tempdir().unwrap();
        let closed = d.path().join("closed");
        let started = d.path().join("started");
        // Stands in for fio: on SIGTERM it "closes its image" (writes a file) and exits.
        let script = format!(
            "trap 'echo closed > {}; exit 0' TERM; touch {}; while :; do sleep 0.05; done",
            closed.display(),
            started.display()
        );
        let cancel_when_started = |flag: std::path::PathBuf| {
            let tok = CancelToken::new();
            let t = tok.clone();
            std::thread::spawn(move || {
                let t0 = Instant::now();
                while !flag.exists() && t0.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                t.cancel();
            });
            tok
        };
        let tok = cancel_when_started(started.clone());
        let t0 = Instant::now();
        let e = run_capture_with_grace(
            Command::new("sh").args(["-c", &script]),
            Duration::from_secs(60),
            &tok,
            Duration::from_secs(20),
        )
        .unwrap_err();
        assert!(matches!(e, ProcError::Cancelled { .. }));
        assert_eq!(std::fs::read_to_string(&closed).unwrap().trim(), "closed");
        // It ended on the TERM, well before the 20 s grace.
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());

        // A child that ignores SIGTERM: SIGKILL once the grace (here 300 ms) is over.
        let started2 = d.path().join("started2");
        let stubborn = format!(
            "trap '' TERM; touch {}; while :; do sleep 0.05; done",
            started2.display()
        );
        let tok = cancel_when_started(started2);
        let t0 = Instant::now();
        let e = run_capture_with_grace(
            Command::new("sh").args(["-c", &stubborn]),
            Duration::from_secs(60),
            &tok,
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(matches!(e, ProcError::Cancelled { .. }));
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    }
}

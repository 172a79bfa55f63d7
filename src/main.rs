//! The `cephplan` command line: parses arguments, calls the library, prints or exports,
//! and maps outcomes to exit codes. All numbers come from the library; this file and
//! `cli/` only format them.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    restore_sigpipe();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", cli::error_message(&e));
            std::process::ExitCode::from(cli::EXIT_ERROR)
        }
    }
}

/// Rust starts programs with SIGPIPE ignored, so a write to a closed pipe (`cephplan
/// predict … | head -3`) fails and `println!` panics with a backtrace. A command-line
/// tool should end quietly there, as `cat` and `grep` do: the default action ends the
/// process when the reader has gone.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: `signal` with `SIG_DFL` changes only this process's disposition of SIGPIPE;
    // it runs first in `main`, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

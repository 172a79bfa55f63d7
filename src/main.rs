//! The `cephplan` command line: parses arguments, calls the library, prints or exports,
//! and maps outcomes to exit codes. All numbers come from the library; this file and
//! `cli/` only format them.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", cli::error_message(&e));
            std::process::ExitCode::from(cli::EXIT_ERROR)
        }
    }
}

//! The cephplan desktop app (built with `--features gui`).
//!
//! `cephplan-gui [--page designer|prediction|compare|sizing|calibration|validation|network]
//! [--size WIDTHxHEIGHT] [--compare SCENARIO.toml]... [--calibration-data PATH]... [--no-loo]
//! [--fit-on-start] [--evaluate-on-start] [--search-on-start] [--browse-on-start] [--tails]
//! [SCENARIO.toml]`.
//! Without a display it exits with a message pointing to the `cephplan` command line,
//! which offers the same computations.

use std::process::ExitCode;

use cephplan::gui::{self, LaunchOptions, Page};

/// The example opened at the first start (no scenario given, none autosaved).
const DEFAULT_SCENARIO: &str = "models/examples/seed-000-ampere-altra-max.toml";

const USAGE: &str =
    "usage: cephplan-gui [--page designer|prediction|compare|sizing|calibration|validation|network] \
[--size WIDTHxHEIGHT] [--compare SCENARIO.toml]... [--calibration-data PATH]... [--no-loo] \
[--fit-on-start] [--evaluate-on-start] [--search-on-start] [--browse-on-start] [--tails] [SCENARIO.toml]
  --size WIDTHxHEIGHT      inner size of the window in points (default: the size it last had,
                           else 1280x800; given, it wins over the saved size)
  --compare SCENARIO.toml  file this scenario on the Compare page at the start; repeatable
  --calibration-data PATH  dataset (CSV file or directory) for the Calibration page; repeatable
  --no-loo                 fit without leave-one-out on the Calibration page (faster)
  --fit-on-start           start the Calibration page's fit when the window opens
  --evaluate-on-start      start the Calibration page's transfer evaluation when the window opens
  --search-on-start        start the Sizing page's design search when the window opens
  --browse-on-start        show the designer's Open dialog (Browse…) when the window opens
  --tails                  turn on \"Simulate tails\" on the Prediction page (p99 by simulation)";

fn parse_args() -> Result<LaunchOptions, String> {
    let mut opts = LaunchOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--page" => {
                let v = args.next().ok_or("--page needs a page name")?;
                opts.page = Some(
                    Page::from_slug(&v).ok_or_else(|| format!("unknown page \"{v}\"; {USAGE}"))?,
                );
            }
            "--size" => {
                let v = args
                    .next()
                    .ok_or("--size needs WIDTHxHEIGHT, e.g. 1024x640")?;
                opts.window_size = Some(parse_size(&v)?);
            }
            "--compare" => opts
                .compare
                .push(args.next().ok_or("--compare needs a scenario file")?.into()),
            "--calibration-data" => opts.calibration_data.push(
                args.next()
                    .ok_or("--calibration-data needs a CSV file or directory")?
                    .into(),
            ),
            "--no-loo" => opts.calibration_loo = Some(false),
            "--fit-on-start" => opts.fit_on_start = true,
            "--evaluate-on-start" => opts.evaluate_on_start = true,
            "--search-on-start" => opts.search_on_start = true,
            "--browse-on-start" => opts.browse_on_start = true,
            "--tails" => opts.tails = true,
            "-h" | "--help" => return Err(USAGE.into()),
            s if s.starts_with('-') => return Err(format!("unknown option \"{s}\"; {USAGE}")),
            s => opts.scenario = Some(s.into()),
        }
    }
    if std::path::Path::new(DEFAULT_SCENARIO).exists() {
        opts.default_scenario = Some(DEFAULT_SCENARIO.into());
    }
    Ok(opts)
}

/// `1024x640` → `[1024.0, 640.0]`.
fn parse_size(v: &str) -> Result<[f32; 2], String> {
    let bad = || format!("--size \"{v}\" is not WIDTHxHEIGHT in points, e.g. 1024x640");
    let (w, h) = v.split_once(['x', 'X']).ok_or_else(bad)?;
    let side = |s: &str| {
        s.trim()
            .parse::<f32>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 200.0)
            .ok_or_else(bad)
    };
    Ok([side(w)?, side(h)?])
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if !gui::display_available() {
        eprintln!(
            "cephplan-gui: no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so the window \
             cannot open. Use the `cephplan` command line instead (`cephplan --help`), or run \
             under a display server (e.g. `xvfb-run cephplan-gui`)."
        );
        return ExitCode::from(2);
    }
    match gui::run(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "cephplan-gui: the window could not open: {e}. The `cephplan` command line \
                 offers the same computations without a display."
            );
            ExitCode::from(2)
        }
    }
}

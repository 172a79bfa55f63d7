//! `cephplan validate`: predicted vs measured on a real cluster (see the library's
//! `validate`). Installs a Ctrl-C handler that cancels the run; the library then kills fio
//! and removes its images. `--refit` then fits the model to the dataset just written and
//! shows the before/after error (`validate::refit`); `--refit-only` does that for the
//! datasets already in `--out`, without a cluster.

use cephplan::model::ModelParams;
use cephplan::predict::PredictOptions;
use cephplan::spec::Catalogue;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use cephplan::fio::{check_fio, FioTarget, ProcessExecutor, RwPattern};
use cephplan::validate::{self, PointSetting, RefitReport, RefitSpec, ValidateSpec, Vary};

use crate::cli::output::{table, Format};

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Scenario file of the cluster under test (copied next to the results; with
    /// --emit-cbt, CBT's pool is made as its [pool] states).
    #[arg(long, required_unless_present_any = ["refit_only", "cleanup"])]
    scenario: Option<PathBuf>,
    /// ceph.conf of the cluster (given to fio and to every fio server as CEPH_CONF).
    /// With --cleanup: instead of the one recorded with the images. With --emit-cbt: CBT's
    /// `conf_file`.
    #[arg(long, required_unless_present_any = ["refit_only", "cleanup"])]
    ceph_conf: Option<PathBuf>,
    /// Pool of the images (not with --emit-cbt: CBT runs in a pool of its own).
    #[arg(long, required_unless_present_any = ["refit_only", "cleanup", "emit_cbt"])]
    pool: Option<String>,
    /// Put the data of the images cephplan creates in this pool (`rbd create --data-pool`,
    /// an erasure-coded pool with allow_ec_overwrites; --pool keeps their metadata). The
    /// scenario's [pool] should then describe this pool's erasure coding.
    #[arg(long, value_name = "POOL", conflicts_with_all = ["image", "emit_cbt"])]
    data_pool: Option<String>,
    /// Model parameter file for the predictions, and the starting point and prior of
    /// --refit (default: the shipped models/default.toml).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Record measurements only, without predictions.
    #[arg(long)]
    no_predict: bool,
    /// Also read every OSD's latency counters before and after each point (`ceph tell
    /// osd.N perf dump`; clusters of at most 64 OSDs): where the measured time went inside
    /// the OSDs, beside fio's figures and the prediction's latency parts.
    #[arg(long)]
    osd_counters: bool,
    /// Run fio on these CPUs only (a CPU list: 0, 1-3, 0,2-3; fio's cpus_allowed), e.g.
    /// the ones `lab up --osd-cpus` left to the client; on each fio server with --client.
    #[arg(long, value_name = "CPUS")]
    fio_cpus: Option<cephplan::fio::CpuSet>,
    /// fio server `host:port` (repeatable); each must run `fio --server=ip:HOST,PORT`
    /// with CEPH_CONF set. Without it fio runs here.
    #[arg(long = "client")]
    clients: Vec<String>,
    /// One dimension to sweep: iodepth=1,4,16,64 | images=1,2,4 | bs=4k,64k.
    #[arg(long)]
    vary: Option<String>,
    /// randread | randwrite | randrw | read | write.
    #[arg(long, default_value = "randwrite")]
    pattern: String,
    /// Read share for randrw (fio rwmixread).
    #[arg(long, allow_negative_numbers = true)]
    rwmixread: Option<u8>,
    #[arg(long, default_value = "4k")]
    bs: String,
    #[arg(long, allow_negative_numbers = true, default_value_t = 16)]
    iodepth: u32,
    /// RBD images (one fio job each).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    images: u32,
    /// Per point.
    #[arg(long, default_value = "30s")]
    runtime: String,
    #[arg(long, default_value = "0s")]
    ramp_time: String,
    #[arg(long, default_value = "1G")]
    image_size: String,
    /// Results directory (raw fio JSON, dataset CSV, comparison CSV, report JSON).
    #[arg(long, default_value = "validation")]
    out: PathBuf,
    /// Use this existing image instead of creating images (needs --i-own-this-image).
    #[arg(long)]
    image: Option<String>,
    /// Confirms that the existing image may be overwritten (must repeat its name).
    #[arg(long)]
    i_own_this_image: Option<String>,
    /// Ceph user without the `client.` prefix.
    #[arg(long, default_value = "admin")]
    clientname: String,
    #[arg(long, default_value = "fio")]
    fio: PathBuf,
    /// `system_id` of the dataset rows (default: the scenario file's stem).
    #[arg(long)]
    system_id: Option<String>,
    /// After the sweep, fit the model to the dataset it wrote and show the error per point
    /// before and after; writes the refitted model (see --refit-out).
    #[arg(long)]
    refit: bool,
    /// Refit on the validation datasets already in --out (validation-*.csv), without
    /// running fio or touching a cluster.
    #[arg(long, conflicts_with_all = [
        "scenario", "ceph_conf", "pool", "no_predict", "clients", "vary", "image",
        "i_own_this_image", "system_id", "refit", "osd_counters", "data_pool", "fio_cpus",
    ])]
    refit_only: bool,
    /// Remove the images that runs recorded in --out (images-*.json) and did not remove,
    /// e.g. after a `kill -9`: exactly those, and only while their names carry
    /// cephplan's prefix for that run. Touches nothing else.
    #[arg(long, conflicts_with_all = [
        "scenario", "pool", "no_predict", "clients", "vary", "image",
        "i_own_this_image", "system_id", "refit", "refit_only", "osd_counters", "data_pool",
        "fio_cpus",
    ])]
    cleanup: bool,
    /// Write the CBT (Ceph Benchmarking Tool) librbdfio configuration of this sweep to
    /// FILE and stop: no cluster, no fio. Its results import with `cephplan import cbt`.
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "refit", "refit_only", "cleanup", "image", "i_own_this_image", "clients",
        "osd_counters", "fio_cpus",
    ])]
    emit_cbt: Option<PathBuf>,
    /// More measured runs to fit with the validation data (CSV file or directory, as
    /// `calibrate --data`; e.g. calibration-data/). Repeatable.
    #[arg(long, value_name = "PATH")]
    refit_data: Vec<PathBuf>,
    /// Where to write the refitted model (never over a file cephplan did not write)
    /// [default: OUT/refitted-model.toml].
    #[arg(long, value_name = "FILE")]
    refit_out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn secs(s: &str, what: &str) -> anyhow::Result<u64> {
    let v = cephplan::units::parse_duration_secs(s).with_context(|| format!("--{what}"))?;
    Ok(v.round() as u64)
}

/// `validate --emit-cbt FILE`: the sweep as a CBT configuration, written and nothing run.
fn emit_cbt(a: &ValidateArgs, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    if let Some(pool) = &a.pool {
        anyhow::bail!(
            "--pool {pool}: CBT deletes and re-creates the pool it runs in, so --emit-cbt names a pool of its own, \"{}\", made as the scenario's [pool] states; leave --pool out",
            validate::CBT_POOL
        );
    }
    cephplan::io::check_writable_file(path, "cbt.yaml")?;
    let pattern = RwPattern::parse(&a.pattern).with_context(|| {
        format!(
            "--pattern {}: use randread, randwrite, randrw, read or write",
            a.pattern
        )
    })?;
    let base = PointSetting {
        pattern,
        block_size_bytes: cephplan::units::parse_bytes(&a.bs).context("--bs")?,
        iodepth: a.iodepth,
        images: a.images,
        read_percent: a.rwmixread.or((pattern == RwPattern::Randrw).then_some(50)),
    };
    let vary = a.vary.as_deref().map(Vary::parse).transpose()?;
    let scenario_path = a
        .scenario
        .as_deref()
        .context("--scenario is needed: CBT's pool is made as its [pool] states")?;
    let scenario = cephplan::spec::load_scenario(scenario_path, &Catalogue::builtin())?;
    let conf = a
        .ceph_conf
        .as_deref()
        .context("--ceph-conf is needed: it is CBT's conf_file")?;
    // CBT runs from its own directory: the configuration names the file absolutely.
    let conf = std::path::absolute(conf).unwrap_or_else(|_| conf.to_path_buf());
    let duration = |s: &str, what: &str| {
        cephplan::units::parse_duration_secs(s).with_context(|| format!("--{what}"))
    };
    let yaml = validate::cbt_yaml(&validate::CbtSweep {
        base: &base,
        vary: vary.as_ref(),
        runtime_secs: duration(&a.runtime, "runtime")?,
        ramp_time_secs: duration(&a.ramp_time, "ramp-time")?,
        image_size_bytes: cephplan::units::parse_bytes(&a.image_size).context("--image-size")?,
        pool: validate::CbtPool::of(&scenario, scenario_path)?,
        conf_file: &conf,
    })?;
    cephplan::io::write_atomic_owned(path, yaml.as_bytes())?;
    eprintln!("wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `validate --cleanup`: the recorded images of every run in `--out`.
fn cleanup(a: &ValidateArgs) -> anyhow::Result<ExitCode> {
    if !a.out.is_dir() {
        anyhow::bail!(
            "{}: no such directory; give the --out of the validation run to clean up after",
            a.out.display()
        );
    }
    // fio's job files a killed run left (nothing else of that name is touched).
    for p in validate::images::remove_stale_job_files(&a.out)? {
        println!(
            "removed the fio job file {} a stopped run left",
            p.display()
        );
    }
    let records = validate::records(&a.out)?;
    if records.is_empty() {
        println!(
            "{}: no record of created images (images-*.json): nothing to clean up",
            a.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let progress = cephplan::progress::NoProgress;
    let mut failed = 0;
    let mut watched = 0;
    for (path, record) in &records {
        let conf = a
            .ceph_conf
            .clone()
            .unwrap_or_else(|| record.ceph_conf.clone());
        let cluster = validate::CephCluster::new(&conf, &progress);
        let r = validate::cleanup(path, record, &cluster)
            .with_context(|| format!("cleaning up after {}", path.display()))?;
        println!("{} (pool {}):", path.display(), r.pool);
        for i in &r.removed {
            println!("  removed {i}");
        }
        for i in &r.absent {
            println!("  already gone: {i}");
        }
        for i in &r.refused {
            println!(
                "  not touched: {i} (does not carry this run's name {})",
                record.name_prefix()
            );
        }
        for (i, e) in &r.failed {
            println!("  could not remove {i}: {e}");
        }
        failed += r.failed.len();
        watched += r.watched.len();
    }
    if failed > 0 {
        let cause = if watched == failed {
            "a client still has them open (\"image still has watchers\": a fio that was killed holds its image for about 30 s, and so does an `rbd` command still running); wait a minute, then"
        } else {
            "once the cause shown above is fixed,"
        };
        eprintln!(
            "{failed} image(s) could not be removed; they stay recorded: {cause} run `cephplan validate --cleanup --out {}` again",
            a.out.display()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: ValidateArgs) -> anyhow::Result<ExitCode> {
    if a.cleanup {
        return cleanup(&a);
    }
    if let Some(path) = &a.emit_cbt {
        return emit_cbt(&a, path);
    }
    if !(a.refit || a.refit_only) && (!a.refit_data.is_empty() || a.refit_out.is_some()) {
        anyhow::bail!("--refit-data and --refit-out apply only with --refit or --refit-only");
    }
    let base = match &a.model {
        Some(p) => ModelParams::load(p)?,
        None => ModelParams::shipped_default(),
    };
    // Refuse a foreign --refit-out before minutes of sweeping, not after.
    if (a.refit || a.refit_only) && !cephplan::io::is_ours_or_absent(&refit_out(&a)) {
        return Err(cephplan::io::WriteError::NotOurs {
            path: refit_out(&a),
        }
        .into());
    }
    if a.refit || a.refit_only {
        cephplan::io::check_not_measured_runs(&refit_out(&a))?;
        validate::check_refit_out(&refit_out(&a))?;
    }
    if a.refit_only {
        let progress = crate::cli::progress::BarProgress::with_ctrl_c();
        let datasets = validate::validation_datasets(&a.out)?;
        let refit = refit_and_write(&a, datasets, &base, &progress)?;
        match a.format {
            Format::Json => println!("{}", serde_json::to_string_pretty(&refit)?),
            Format::Csv => print!("{}", validate::refit_csv(&refit)),
            Format::Table => print!("{}", refit_table(&refit)),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(scenario), Some(ceph_conf), Some(pool)) =
        (a.scenario.clone(), a.ceph_conf.clone(), a.pool.clone())
    else {
        anyhow::bail!("--scenario, --ceph-conf and --pool are needed to run a sweep");
    };
    let pattern = RwPattern::parse(&a.pattern).with_context(|| {
        format!(
            "--pattern {}: use randread, randwrite, randrw, read or write",
            a.pattern
        )
    })?;
    if a.rwmixread.is_some() && pattern != RwPattern::Randrw {
        anyhow::bail!("--rwmixread only applies to --pattern randrw");
    }
    let runtime_secs = secs(&a.runtime, "runtime")?;
    if runtime_secs == 0 {
        anyhow::bail!("--runtime must be at least 1s");
    }
    check_fio(&a.fio)?;
    // OUT is made by the library once the inputs and the cluster passed its checks, so a
    // refused run leaves no empty directory.
    let spec = ValidateSpec {
        system_id: a.system_id.clone().unwrap_or_else(|| {
            scenario
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "validation".into())
        }),
        scenario,
        ceph_conf: ceph_conf.clone(),
        pool,
        data_pool: a.data_pool.clone(),
        clientname: a.clientname.clone(),
        clients: a.clients.clone(),
        base: PointSetting {
            pattern,
            block_size_bytes: cephplan::units::parse_bytes(&a.bs).context("--bs")?,
            iodepth: a.iodepth,
            images: a.images,
            read_percent: a.rwmixread.or((pattern == RwPattern::Randrw).then_some(50)),
        },
        vary: a.vary.as_deref().map(Vary::parse).transpose()?,
        runtime_secs,
        ramp_time_secs: secs(&a.ramp_time, "ramp-time")?,
        image_size_bytes: cephplan::units::parse_bytes(&a.image_size).context("--image-size")?,
        out_dir: a.out.clone(),
        existing_image: a.image.clone(),
        i_own_this_image: a.i_own_this_image.clone(),
        run_id: validate::new_run_id(),
        osd_counters: a.osd_counters,
        fio_cpus: a.fio_cpus.clone(),
    };
    let target = if a.clients.is_empty() {
        FioTarget::Local
    } else {
        FioTarget::Clients(a.clients.clone())
    };
    let mut exec = ProcessExecutor::new(&ceph_conf, target, &a.out);
    exec.fio_program = a.fio.clone();
    let progress = crate::cli::progress::BarProgress::new();
    let cancel = progress.cancel.clone();
    // Only one handler per process; a second validate in the same process is not a case.
    let _ = ctrlc::set_handler(move || cancel.cancel());
    let predictor: Box<dyn validate::Predictor> = if a.no_predict {
        Box::new(validate::NoPredictor)
    } else {
        let scenario = cephplan::spec::load_scenario(&spec.scenario, &Catalogue::builtin())
            .context("the scenario is needed for predictions (or pass --no-predict)")?;
        Box::new(validate::ModelPredictor {
            scenario,
            params: base.clone(),
            options: PredictOptions::default(),
        })
    };
    let report = validate::run(&spec, &exec, predictor.as_ref(), &progress)?;
    let refit = if a.refit {
        let dataset = spec.out_dir.join(&report.dataset_csv);
        // A fresh bar (the sweep's is finished) on the same Ctrl-C flag.
        let mut bar = crate::cli::progress::BarProgress::new();
        bar.cancel = progress.cancel.clone();
        Some(refit_and_write(&a, vec![dataset], &base, &bar)?)
    } else {
        None
    };
    match (a.format, &refit) {
        (Format::Json, None) => println!("{}", serde_json::to_string_pretty(&report)?),
        (Format::Json, Some(r)) => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "validation": report, "refit": r }))?
        ),
        (Format::Csv, None) => print!("{}", validate::comparison_csv(&report)),
        // The before/after table holds the sweep's measurements and predictions (as
        // "before"); its own comparison stays in the comparison CSV file.
        (Format::Csv, Some(r)) => print!("{}", validate::refit_csv(r)),
        (Format::Table, _) => {
            let f = |v: Option<f64>, scale: f64, prec: usize| {
                v.map(|x| format!("{:.prec$}", x * scale))
                    .unwrap_or_else(|| "-".into())
            };
            let rows: Vec<Vec<String>> = report
                .points
                .iter()
                .map(|p| {
                    vec![
                        p.index.to_string(),
                        p.setting.label(),
                        f(p.iops.predicted, 1.0, 0),
                        p.iops
                            .interval
                            .map(|(lo, hi)| format!("{lo:.0}-{hi:.0}"))
                            .unwrap_or_else(|| "-".into()),
                        f(p.iops.measured, 1.0, 0),
                        f(p.iops.error_percent, 1.0, 1),
                        match p.iops.inside_interval {
                            Some(true) => "yes".into(),
                            Some(false) => "no".into(),
                            None => "-".into(),
                        },
                        f(p.latency_mean_secs.predicted, 1e3, 2),
                        f(p.latency_mean_secs.measured, 1e3, 2),
                        f(p.latency_p99_secs.measured, 1e3, 2),
                        f(Some(p.bytes_per_sec.measured.unwrap_or(0.0)), 1e-6, 1),
                    ]
                })
                .collect();
            print!(
                "{}",
                table(
                    &[
                        "#",
                        "point",
                        "IOPS pred",
                        "IOPS 95% range",
                        "IOPS meas",
                        "err %",
                        "inside",
                        "mean ms pred",
                        "mean ms meas",
                        "p99 ms meas",
                        "MB/s meas",
                    ],
                    &rows
                )
            );
            for line in validate::prediction_note_lines(&report.points) {
                println!("{line}");
            }
            for line in validate::osd_counter_lines(&report.points) {
                println!("{line}");
            }
            for line in validate::pool_note_lines(&report) {
                println!("{line}");
            }
            println!(
                "saved in {}: {}, {}, {}, raw/",
                spec.out_dir.display(),
                report.dataset_csv,
                report.comparison_csv,
                report.report_json
            );
            if let Some(r) = &refit {
                print!("\n{}", refit_table(r));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn refit_out(a: &ValidateArgs) -> PathBuf {
    a.refit_out
        .clone()
        .unwrap_or_else(|| a.out.join("refitted-model.toml"))
}

/// Runs the refit on `datasets` (+ --refit-data) and writes the refitted model.
fn refit_and_write(
    a: &ValidateArgs,
    datasets: Vec<PathBuf>,
    base: &ModelParams,
    progress: &dyn cephplan::progress::Progress,
) -> anyhow::Result<RefitReport> {
    let spec = RefitSpec {
        validation_datasets: datasets,
        extra_datasets: a.refit_data.clone(),
        calibrate: validate::refit_options(),
    };
    // The sweep's model is also the prior: what the validation data cannot inform stays
    // where that model had it.
    let out = validate::refit(&spec, base, base, &Catalogue::builtin(), progress)?;
    let path = refit_out(a);
    validate::check_refit_out(&path)?;
    cephplan::io::write_atomic_owned(&path, out.model.to_toml().as_bytes())?;
    eprintln!("wrote the refitted model to {}", path.display());
    Ok(out.report)
}

/// The before/after table, the MAPE summary, the fitted parameters and the fit's outcome.
fn refit_table(r: &RefitReport) -> String {
    let f = |v: Option<f64>, scale: f64, prec: usize| {
        v.map(|x| format!("{:.prec$}", x * scale))
            .unwrap_or_else(|| "-".into())
    };
    let pm = |v: Option<f64>| v.map_or("-".into(), |x| format!("{x:+.1}"));
    let rows: Vec<Vec<String>> = r
        .points
        .iter()
        .map(|p| {
            vec![
                p.run_id.clone(),
                p.label.clone(),
                f(p.iops_before.measured, 1.0, 0),
                f(p.iops_before.predicted, 1.0, 0),
                pm(p.iops_before.error_percent),
                f(p.iops_after.predicted, 1.0, 0),
                pm(p.iops_after.error_percent),
                f(p.latency_mean_secs_before.measured, 1e3, 2),
                f(p.latency_mean_secs_before.predicted, 1e3, 2),
                pm(p.latency_mean_secs_before.error_percent),
                f(p.latency_mean_secs_after.predicted, 1e3, 2),
                pm(p.latency_mean_secs_after.error_percent),
            ]
        })
        .collect();
    let mut out = format!(
        "refit of model \"{}\" on {} validation point(s), {} run(s) fitted\n",
        r.base_model,
        r.points.len(),
        r.fitted_runs
    );
    out.push_str(&table(
        &[
            "run",
            "point",
            "IOPS meas",
            "IOPS before",
            "err % before",
            "IOPS after",
            "err % after",
            "mean ms meas",
            "mean ms before",
            "mean err % before",
            "mean ms after",
            "mean err % after",
        ],
        &rows,
    ));
    out.push_str(&format!(
        "IOPS MAPE {} % before, {} % after; mean latency MAPE {} % before, {} % after\n",
        f(r.iops_mape_before_percent, 1.0, 1),
        f(r.iops_mape_after_percent, 1.0, 1),
        f(r.latency_mean_mape_before_percent, 1.0, 1),
        f(r.latency_mean_mape_after_percent, 1.0, 1),
    ));
    out.push_str(&format!(
        "fit: {} ({} evaluations), {} degrees of freedom\n\n",
        r.termination.reason, r.termination.evaluations, r.degrees_of_freedom
    ));
    out.push_str(&crate::cli::calibrate::parameter_table(&r.parameters));
    out.push_str(&crate::cli::calibrate::fit_notes(
        &r.not_modelled,
        &r.warnings,
    ));
    out
}

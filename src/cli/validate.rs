//! `cephplan validate`: predicted vs measured on a real cluster (see the library's
//! `validate`). Installs a Ctrl-C handler that cancels the run; the library then kills fio
//! and removes its images.

use cephplan::model::ModelParams;
use cephplan::predict::PredictOptions;
use cephplan::spec::Catalogue;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use cephplan::fio::{check_fio, FioTarget, ProcessExecutor, RwPattern};
use cephplan::validate::{self, PointSetting, ValidateSpec, Vary};

use crate::cli::output::{table, Format};

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Scenario file of the cluster under test (copied next to the results).
    #[arg(long)]
    scenario: PathBuf,
    /// ceph.conf of the cluster (given to fio and to every fio server as CEPH_CONF).
    #[arg(long)]
    ceph_conf: PathBuf,
    #[arg(long)]
    pool: String,
    /// Model parameter file for the predictions (default: the shipped models/default.toml).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Record measurements only, without predictions.
    #[arg(long)]
    no_predict: bool,
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
    #[arg(long)]
    rwmixread: Option<u8>,
    #[arg(long, default_value = "4k")]
    bs: String,
    #[arg(long, default_value_t = 16)]
    iodepth: u32,
    /// RBD images (one fio job each).
    #[arg(long, default_value_t = 1)]
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
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn secs(s: &str, what: &str) -> anyhow::Result<u64> {
    let v = cephplan::units::parse_duration_secs(s).with_context(|| format!("--{what}"))?;
    Ok(v.round() as u64)
}

pub fn run(a: ValidateArgs) -> anyhow::Result<ExitCode> {
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
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let spec = ValidateSpec {
        system_id: a.system_id.clone().unwrap_or_else(|| {
            a.scenario
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "validation".into())
        }),
        scenario: a.scenario,
        ceph_conf: a.ceph_conf.clone(),
        pool: a.pool,
        clientname: a.clientname,
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
        existing_image: a.image,
        i_own_this_image: a.i_own_this_image,
        run_id: validate::new_run_id(),
    };
    let target = if a.clients.is_empty() {
        FioTarget::Local
    } else {
        FioTarget::Clients(a.clients)
    };
    let mut exec = ProcessExecutor::new(&a.ceph_conf, target, &a.out);
    exec.fio_program = a.fio;
    let progress = crate::cli::progress::BarProgress::new();
    let cancel = progress.cancel.clone();
    // Only one handler per process; a second validate in the same process is not a case.
    let _ = ctrlc::set_handler(move || cancel.cancel());
    let predictor: Box<dyn validate::Predictor> = if a.no_predict {
        Box::new(validate::NoPredictor)
    } else {
        let scenario = cephplan::spec::load_scenario(&spec.scenario, &Catalogue::builtin())
            .context("the scenario is needed for predictions (or pass --no-predict)")?;
        let params = match &a.model {
            Some(p) => ModelParams::load(p)?,
            None => ModelParams::shipped_default(),
        };
        Box::new(validate::ModelPredictor {
            scenario,
            params,
            options: PredictOptions::default(),
        })
    };
    let report = validate::run(&spec, &exec, predictor.as_ref(), &progress)?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Csv => print!("{}", validate::comparison_csv(&report)),
        Format::Table => {
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
                        f(p.iops.measured, 1.0, 0),
                        f(p.iops.error_percent, 1.0, 1),
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
                        "IOPS meas",
                        "err %",
                        "mean ms pred",
                        "mean ms meas",
                        "p99 ms meas",
                        "MB/s meas",
                    ],
                    &rows
                )
            );
            println!(
                "saved in {}: {}, {}, {}, raw/",
                spec.out_dir.display(),
                report.dataset_csv,
                report.comparison_csv,
                report.report_json
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

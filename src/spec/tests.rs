use super::*;

const GOOD: &str = include_str!("../../tests/fixtures/seed-000.toml");

fn cat() -> Catalogue {
    Catalogue::builtin()
}

fn err(text: &str) -> SpecError {
    parse_scenario(text, "bad.toml", &cat()).unwrap_err()
}

/// Asserts an error names the file, a line, the field and gives a fix.
fn assert_located(e: &SpecError, line: usize, field: &str, fix_word: &str) {
    let msg = e.to_string();
    assert!(msg.starts_with("bad.toml:"), "{msg}");
    assert_eq!(e.line, Some(line), "{msg}");
    assert_eq!(e.field, field, "{msg}");
    assert!(msg.contains("fix:"), "{msg}");
    assert!(msg.contains(fix_word), "{msg}");
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn good_fixture_validates_and_resolves_hardware() {
    let s = parse_scenario(GOOD, "seed-000.toml", &cat()).unwrap();
    assert_eq!(s.total_osds(), 72);
    assert_eq!(s.node_cpu.cores, 128);
    assert_eq!(s.data.drive.read_4k_iops, 1_100_000.0);
    assert_eq!(s.population(), 32 * 16);
    assert_eq!(s.read_fraction, 1.0);
    // 72 drives × 15.36 TB raw, one third usable with 3 replicas.
    assert_eq!(s.capacity.raw_bytes, 72.0 * 15.36e12);
    assert!((s.capacity.usable_bytes - 72.0 * 15.36e12 / 3.0).abs() < 1.0);
}

#[test]
fn spec_round_trips_through_toml() {
    let spec = ScenarioSpec::parse(GOOD, "x").unwrap();
    let again = ScenarioSpec::parse(&spec.to_toml(), "y").unwrap();
    assert_eq!(spec, again);
}

#[test]
fn inline_hardware_is_accepted() {
    let text = GOOD.replace(
        "cpu = \"ampere-altra-max-m128-30\"",
        "cpu = { arch = \"x86_64\", cores = 16, threads_per_core = 2, ghz = 3.1 }",
    );
    let s = parse_scenario(&text, "x", &cat()).unwrap();
    assert_eq!(s.node_cpu.cores, 16);
    assert_eq!(s.node_cpu_name, "inline");
}

#[test]
fn unknown_field_is_located() {
    let text = GOOD.replace("iodepth = 16", "iodepht = 16");
    let e = err(&text);
    assert_located(&e, line_of(&text, "iodepht"), "workload.iodepht", "rename");
    assert!(
        e.to_string().contains("iodepth"),
        "lists allowed names: {e}"
    );
}

#[test]
fn wrong_unit_is_located() {
    let text = GOOD.replace("block_size = \"4k\"", "block_size = \"4 parsecs\"");
    let e = err(&text);
    assert_located(&e, line_of(&text, "parsecs"), "workload.block_size", "fix");
    assert!(e.to_string().contains("\"4k\""), "shows an example: {e}");
}

#[test]
fn zero_nodes_is_located() {
    let text = GOOD.replace("nodes = 3", "nodes = 0");
    let e = err(&text);
    assert_located(
        &e,
        line_of(&text, "nodes = 0"),
        "cluster.nodes",
        "at least 1",
    );
}

#[test]
fn replicas_above_failure_domains_is_located() {
    let text = GOOD.replace("replicated = 3", "replicated = 4");
    let e = err(&text);
    assert_located(
        &e,
        line_of(&text, "replicated = 4"),
        "pool.replicated",
        "add nodes",
    );
    // With failure_domain = osd, 4 replicas fit on 72 OSDs.
    let osd = text.replace("failure_domain = \"host\"", "failure_domain = \"osd\"");
    assert!(parse_scenario(&osd, "x", &cat()).is_ok());
}

#[test]
fn erasure_wider_than_domains_is_rejected() {
    let text = GOOD.replace("replicated = 3", "erasure = { k = 4, m = 2 }");
    let e = err(&text);
    assert_located(&e, line_of(&text, "erasure"), "pool.erasure", "k + m");
}

#[test]
fn erasure_profiles_that_overflow_u32_are_refused_not_wrapped() {
    // Regression: k + m was added in u32, so k = 4294967295, m = 1 wrapped to 0 and passed
    // the failure-domain check with infinite usable capacity; k = 2, m = u32::MAX gave a
    // usable capacity above the raw one. Both now exceed the failure domains.
    for (k, m) in [(u32::MAX, 1), (2, u32::MAX), (u32::MAX, u32::MAX)] {
        let text = GOOD.replace(
            "replicated = 3",
            &format!("erasure = {{ k = {k}, m = {m} }}"),
        );
        let e = err(&text);
        assert_located(&e, line_of(&text, "erasure"), "pool.erasure", "k + m");
    }
}

#[test]
fn a_stripe_unit_outside_the_profile_range_is_refused() {
    let text = GOOD.replace(
        "replicated = 3",
        "erasure = { k = 2, m = 1, stripe_unit = \"1000\" }",
    );
    let e = err(&text);
    assert!(e.to_string().contains("pool.erasure.stripe_unit"), "{e}");
    assert!(e.to_string().contains("multiple of 512"), "{e}");
}

#[test]
fn iodepth_zero_is_located() {
    let text = GOOD.replace("iodepth = 16", "iodepth = 0");
    let e = err(&text);
    assert_located(&e, line_of(&text, "iodepth = 0"), "workload.iodepth", "≥ 1");
}

#[test]
fn negative_figure_is_located() {
    let text = GOOD.replace(
        "model = \"micron-7500-pro-15.36tb\"",
        "model = { kind = \"nvme\", capacity = \"15TiB\", read_4k_iops = -5, write_4k_iops = 1, \
         read_bytes_per_sec = 1, write_bytes_per_sec = 1, read_latency = \"80us\", write_latency = \"15us\" }",
    );
    let e = err(&text);
    assert_located(
        &e,
        line_of(&text, "read_4k_iops = -5"),
        "cluster.node.data_devices.model.read_4k_iops",
        "positive",
    );
}

#[test]
fn queue_depth_zero_of_a_drive_rating_is_located() {
    let text = GOOD.replace(
        "model = \"micron-7500-pro-15.36tb\"",
        "model = { kind = \"hdd\", capacity = \"8TiB\", read_4k_iops = 80, write_4k_iops = 80, \
         read_bytes_per_sec = 2e8, write_bytes_per_sec = 2e8, read_latency = \"12.5ms\", \
         write_latency = \"12.5ms\", iops_queue_depth = 0 }",
    );
    let e = err(&text);
    assert_located(
        &e,
        line_of(&text, "iops_queue_depth = 0"),
        "cluster.node.data_devices.model.iops_queue_depth",
        "write 1 when the IOPS figures are derived from one I/O's latency",
    );
}

#[test]
fn unknown_catalogue_name_suggests_closest() {
    let text = GOOD.replace("amd-epyc-7402", "amd-epyc-7420");
    let e = err(&text);
    assert_located(
        &e,
        line_of(&text, "amd-epyc-7420"),
        "clients.cpu",
        "amd-epyc-7402",
    );
}

#[test]
fn block_size_must_be_a_multiple_of_512() {
    let text = GOOD.replace("block_size = \"4k\"", "block_size = 1000");
    let e = err(&text);
    assert_located(
        &e,
        line_of(&text, "block_size"),
        "workload.block_size",
        "512",
    );
}

#[test]
fn read_percent_only_with_randrw() {
    let text = GOOD.replace(
        "pattern = \"randread\"",
        "pattern = \"randread\"\nread_percent = 70",
    );
    let e = err(&text);
    assert_located(
        &e,
        line_of(&text, "read_percent"),
        "workload.read_percent",
        "randrw",
    );
    let rw = GOOD.replace(
        "pattern = \"randread\"",
        "pattern = \"randrw\"\nread_percent = 70",
    );
    let s = parse_scenario(&rw, "x", &cat()).unwrap();
    assert!((s.read_fraction - 0.7).abs() < 1e-12);
}

#[test]
fn impossible_cpu_is_rejected() {
    let text = GOOD.replace(
        "cpu = \"ampere-altra-max-m128-30\"",
        "cpu = { arch = \"x86_64\", cores = 16, threads_per_core = 0, ghz = 3.1 }",
    );
    let e = err(&text);
    assert_eq!(e.field, "cluster.node.cpu.threads_per_core");
    let text = GOOD.replace(
        "cpu = \"ampere-altra-max-m128-30\"",
        "cpu = { arch = \"x86_64\", cores = 16, threads_per_core = 2, ghz = 31 }",
    );
    assert_eq!(err(&text).field, "cluster.node.cpu.ghz");
}

#[test]
fn missing_file_names_the_path() {
    let e = load_scenario(Path::new("/nonexistent/x.toml"), &cat()).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.toml"), "{e}");
}

#[test]
fn rocksdb_build_is_inferred_from_upstream_versions() {
    use RocksdbBuild::{Optimised as O, Unoptimised as U};
    for (release, want) in [
        // Seed 002: upstream 15.2.14 and 16.2.x packages, Canonical's 15.2.14 build.
        ("15.2.14", U),
        ("16.2.0", U),
        ("16.2.7", U),
        ("15.2.14-0ubuntu0.20.04.2", O),
        ("14.2.22", O),
        // Fixed in 16.2.15 (PR #55500), after 17.2.7 (PR #54891) and in 18.2.3 (PR #55502).
        ("16.2.14", U),
        ("16.2.15", O),
        ("17.2.7", U),
        ("17.2.8", O),
        ("18.2.2", U),
        ("18.2.3", O),
        ("19.2.0", O),
        ("12.2.2", O),
        // Not a bare upstream version: a distribution or self-built package.
        ("16.2.11+ds-2", O),
        ("squid", O),
        ("", O),
    ] {
        assert_eq!(RocksdbBuild::infer(release), want, "{release:?}");
    }
}

#[test]
fn rocksdb_build_stated_wins_and_a_typo_is_located() {
    let text = GOOD.replace(
        "ceph_release = \"19.2.0\"",
        "ceph_release = \"16.2.7\"\nrocksdb_build = \"optimised\"",
    );
    let s = parse_scenario(&text, "x", &cat()).unwrap();
    assert_eq!(s.rocksdb_build, RocksdbBuild::Optimised);
    assert!(s.rocksdb_build_stated);
    let inferred = parse_scenario(
        &GOOD.replace("ceph_release = \"19.2.0\"", "ceph_release = \"16.2.7\""),
        "x",
        &cat(),
    )
    .unwrap();
    assert_eq!(inferred.rocksdb_build, RocksdbBuild::Unoptimised);
    assert!(!inferred.rocksdb_build_stated);
    let bad = text.replace("\"optimised\"", "\"optimized\"");
    let e = err(&bad);
    assert_located(
        &e,
        line_of(&bad, "rocksdb_build"),
        "cluster.rocksdb_build",
        "optimised",
    );
}

#[test]
fn balancer_defaults_by_release_a_stated_one_wins_and_a_typo_is_located() {
    let at = |release: &str, extra: &str| {
        GOOD.replace(
            "ceph_release = \"19.2.0\"",
            &format!("ceph_release = \"{release}\"{extra}"),
        )
    };
    // Upmap is on by default from Pacific (v16.2.0 release notes), off before.
    for (release, want) in [
        ("16.2.0", Balancer::Upmap),
        ("19.2.0", Balancer::Upmap),
        ("15.2.17", Balancer::Off),
        ("12.2.2", Balancer::Off),
    ] {
        let s = parse_scenario(&at(release, ""), "x", &cat()).unwrap();
        assert_eq!(s.balancer, want, "{release}");
    }
    let off = parse_scenario(&at("19.2.0", "\nbalancer = \"off\""), "x", &cat()).unwrap();
    assert_eq!(off.balancer, Balancer::Off);
    let bad = at("19.2.0", "\nbalancer = \"of\"");
    let e = err(&bad);
    assert_located(&e, line_of(&bad, "balancer"), "cluster.balancer", "upmap");
}

#[test]
fn ceph_versions_parse_with_and_without_a_packaging_suffix() {
    let v = |major, minor, patch, suffixed| {
        Some(CephVersion {
            major,
            minor,
            patch,
            suffixed,
        })
    };
    assert_eq!(CephVersion::parse("16.2.7"), v(16, 2, 7, false));
    assert_eq!(CephVersion::parse(" 19.2.0 "), v(19, 2, 0, false));
    assert_eq!(
        CephVersion::parse("15.2.14-0ubuntu0.20.04.2"),
        v(15, 2, 14, true)
    );
    assert_eq!(CephVersion::parse("16.2.11+ds-2"), v(16, 2, 11, true));
    for bad in ["squid", "16.2", "16..2", "", "1.2.3.4", "v16.2.7"] {
        assert_eq!(CephVersion::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn bluefs_buffered_io_defaults_follow_the_release_notes() {
    use release::bluefs_buffered_io_default as d;
    // Boundaries from the release notes (see the function's table).
    for (release, want) in [
        ("12.2.2", false), // Luminous: off since PR #10766
        ("13.2.10", true), // PR #20542
        ("14.2.9", true),
        ("14.2.10", false), // PR #34297
        ("14.2.16", false), // seed 002
        ("14.2.21", false),
        ("14.2.22", true), // PR #40393
        ("15.2.1", true),
        ("15.2.2", false), // PR #34353
        ("15.2.12", false),
        ("15.2.13", true), // PR #40392
        ("15.2.14", true),
        ("15.2.14-0ubuntu0.20.04.2", true), // a package suffix keeps the source's defaults
        ("16.2.0", true),
        ("19.2.0", true),
        ("squid", true),
    ] {
        assert_eq!(d(release), want, "{release}");
    }
}

#[test]
fn ncb_is_on_from_quincy_except_on_a_rotational_db_device() {
    use release::allocation_from_file_default as d;
    assert!(!d("16.2.15", DriveKind::Nvme));
    assert!(!d("12.2.2", DriveKind::SataSsd));
    assert!(d("17.2.0", DriveKind::Nvme));
    assert!(d("19.2.0", DriveKind::SasSsd));
    assert!(d("reef", DriveKind::Nvme));
    // PR #45340: NCB is off when the DB is on a rotational device.
    assert!(!d("19.2.0", DriveKind::Hdd));
}

#[test]
fn ceph_config_is_inferred_stated_and_its_typos_are_located() {
    let s = parse_scenario(GOOD, "x", &cat()).unwrap();
    // Seed 000: Squid on NVMe, current defaults.
    assert_eq!(s.ceph_config, CephConfig::default());
    let nautilus = GOOD.replace("ceph_release = \"19.2.0\"", "ceph_release = \"14.2.16\"");
    let s = parse_scenario(&nautilus, "x", &cat()).unwrap();
    assert!(!s.ceph_config.bluefs_buffered_io);
    assert!(!s.ceph_config.bluefs_buffered_io_stated);
    assert!(!s.ceph_config.allocation_from_file);
    let stated = format!(
        "{nautilus}\n[cluster.ceph_config]\nbluefs_buffered_io = true\nbluestore_allocation_from_file = true\n"
    );
    let s = parse_scenario(&stated, "x", &cat()).unwrap();
    assert!(s.ceph_config.bluefs_buffered_io);
    assert!(s.ceph_config.bluefs_buffered_io_stated);
    assert!(s.ceph_config.allocation_from_file);
    // The spec round-trips through TOML with the table, and leaves it out when empty.
    let spec = ScenarioSpec::parse(&stated, "x").unwrap();
    let text = toml::to_string(&spec).unwrap();
    assert!(text.contains("[cluster.ceph_config]"), "{text}");
    assert_eq!(ScenarioSpec::parse(&text, "y").unwrap(), spec);
    let plain = toml::to_string(&ScenarioSpec::parse(GOOD, "x").unwrap()).unwrap();
    assert!(!plain.contains("ceph_config"), "{plain}");

    let typo = stated.replace("bluefs_buffered_io = true", "bluefs_bufered_io = true");
    let e = err(&typo);
    assert_eq!(e.line, Some(line_of(&typo, "bluefs_bufered_io")), "{e}");
    assert!(e.to_string().contains("bluefs_buffered_io"), "{e}");
    let not_bool = stated.replace("bluefs_buffered_io = true", "bluefs_buffered_io = \"yes\"");
    let e = err(&not_bool);
    assert_eq!(
        e.line,
        Some(line_of(&not_bool, "bluefs_buffered_io")),
        "{e}"
    );
    assert!(e.to_string().contains("fix:"), "{e}");
}

/// Issue 17 item 12: a missing field is reported as itself (`clients.nodes`,
/// `workload.block_size`), not as the table before it (`pool`, `clients`).
#[test]
fn a_missing_field_is_named_as_itself() {
    for (line, field) in [
        ("nodes = 4\n", "clients.nodes"),
        ("block_size = \"4k\"\n", "workload.block_size"),
    ] {
        let e = err(&GOOD.replace(line, ""));
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().contains("missing field"), "{e}");
    }
}

/// Issue 17 item 12: absurd but finite values are refused naming their field.
#[test]
fn absurd_finite_values_are_refused_naming_the_field() {
    for (from, to, field) in [
        (
            "public = \"100Gb/s\"",
            "public = \"1e-300Gb/s\"",
            "cluster.node.network.public",
        ),
        (
            "cluster = \"100Gb/s\"",
            "cluster = \"1e9Tb/s\"",
            "cluster.node.network.cluster",
        ),
        ("nic = \"100Gb/s\"", "nic = \"0.5Mb/s\"", "clients.nic"),
        (
            "block_size = \"4k\"",
            "block_size = \"8192P\"",
            "workload.block_size",
        ),
        (
            "block_size = \"4k\"",
            "block_size = \"2G\"",
            "workload.block_size",
        ),
        (
            "ceph_release = \"19.2.0\"",
            "ceph_release = \"\"",
            "cluster.ceph_release",
        ),
        (
            "ceph_release = \"19.2.0\"",
            "ceph_release = \"  \"",
            "cluster.ceph_release",
        ),
    ] {
        let text = GOOD.replace(from, to);
        assert_ne!(text, GOOD, "{from}");
        let e = err(&text);
        assert_eq!(e.field, field, "{to}: {e}");
        assert!(e.to_string().contains("fix:"), "{e}");
    }
    // The limits themselves are accepted.
    for (from, to) in [
        ("public = \"100Gb/s\"", "public = \"1Mb/s\""),
        ("block_size = \"4k\"", "block_size = \"1G\""),
    ] {
        parse_scenario(&GOOD.replace(from, to), "ok.toml", &cat()).unwrap();
    }
}

/// Issue 17 item 10: devices × OSDs per device overflowed u32 (a panic in debug builds)
/// before the OSD limit was checked.
#[test]
fn a_device_count_that_overflows_is_refused_not_wrapped() {
    let text = GOOD
        .replace("count = 24", "count = 4000000000")
        .replace("osds_per_device = 1", "osds_per_device = 2");
    let e = err(&text);
    // One node alone is beyond the limit: its device count is what to lower (session 54's
    // audit: it was laid at `cluster.nodes`, line 9, not the line the user edited).
    assert_eq!(e.field, "cluster.node.data_devices.count", "{e}");
    assert!(e.to_string().contains("= 24000000000 OSDs"), "{e}");
    // Many nodes of a few devices: the node count.
    let e = err(&GOOD.replacen("nodes = 3", "nodes = 5000", 1));
    assert_eq!(e.field, "cluster.nodes", "{e}");
    assert!(e.to_string().contains("5000 nodes × 24 devices"), "{e}");
}

/// Found by tests/robustness.rs: a WAL device count of 4e9 passed validation and overflowed
/// the model builder's device count (a panic in debug builds).
#[test]
fn more_wal_devices_than_data_devices_are_refused() {
    let text = GOOD.replace(
        "[cluster.node.network]",
        "[cluster.node.wal_device]\ncount = 4000000000\nmodel = \"micron-7500-pro-15.36tb\"\n\n[cluster.node.network]",
    );
    let e = err(&text);
    assert_eq!(e.field, "cluster.node.wal_device.count", "{e}");
}

/// Issue 14 item 6: a `rados bench` workload (librados, objects, ops in flight per client)
/// validates to `clients × concurrency` in flight at the object size.
#[test]
fn a_rados_workload_validates_to_concurrency_per_client() {
    let text = GOOD.replace(
        &GOOD[GOOD.find("[workload]").unwrap()..],
        "[workload]\nengine = \"rados\"\nobject_size = \"4M\"\nconcurrency = 16\npattern = \"write\"\n",
    );
    let s = parse_scenario(&text, "rados.toml", &cat()).unwrap();
    assert_eq!(s.engine, Engine::Rados);
    assert_eq!(s.block_size_bytes, 4 << 20);
    // seed-000 fixture: 4 client nodes, one rados bench each with -t 16.
    assert_eq!(s.client_nodes, 4);
    assert_eq!(s.population(), 4 * 16);
    // It round-trips through TOML without fio fields.
    let again = ScenarioSpec::parse(&s.spec.to_toml(), "again").unwrap();
    assert_eq!(again.workload, s.spec.workload);
    assert!(!s.spec.to_toml().contains("iodepth"));
}

/// Issue 14 item 6: rados and fio fields are refused in the other engine's workload, naming
/// the field, with a fix.
#[test]
fn rados_and_fio_fields_are_refused_in_the_wrong_engine() {
    let head = &GOOD[..GOOD.find("[workload]").unwrap()];
    let rados = |body: &str| format!("{head}[workload]\nengine = \"rados\"\n{body}");
    for (text, field, word) in [
        (
            rados("object_size = \"4M\"\nconcurrency = 16\npattern = \"write\"\nimages = 4\n"),
            "workload.images",
            "concurrency",
        ),
        (
            rados("object_size = \"4M\"\nconcurrency = 16\npattern = \"write\"\niodepth = 4\n"),
            "workload.iodepth",
            "object_size",
        ),
        (
            rados("concurrency = 16\npattern = \"write\"\n"),
            "workload.object_size",
            "rados bench -b",
        ),
        (
            rados("object_size = \"4M\"\npattern = \"write\"\n"),
            "workload.concurrency",
            "rados bench -t",
        ),
        (
            rados("object_size = \"4M\"\nconcurrency = 0\npattern = \"write\"\n"),
            "workload.concurrency",
            "≥ 1",
        ),
        (
            rados("object_size = \"4M\"\nconcurrency = 16\npattern = \"randwrite\"\n"),
            "workload.pattern",
            "seq",
        ),
        (
            rados("object_size = \"3000\"\nconcurrency = 16\npattern = \"write\"\n"),
            "workload.object_size",
            "multiple of 512",
        ),
        (
            GOOD.replace("iodepth = 16", "iodepth = 16\nconcurrency = 8"),
            "workload.concurrency",
            "engine = \"rados\"",
        ),
        (
            rados("object_size = \"4M\"\nconcurrency = 16\npattern = \"write\"\nengine2 = 1\n"),
            "workload.engine2",
            "",
        ),
    ] {
        let e = err(&text);
        let msg = e.to_string();
        assert!(e.field.starts_with(field), "{field}: {msg}");
        assert!(msg.contains("fix:") || field == "workload.engine2", "{msg}");
        assert!(msg.contains(word), "{word}: {msg}");
    }
}

/// `GOOD` with a `[cluster.ceph_config]` table of `options`, placed before `[cluster.node]`.
fn with_ceph_config(options: &str) -> String {
    GOOD.replacen(
        "[cluster.node]",
        &format!("[cluster.ceph_config]\n{options}\n\n[cluster.node]"),
        1,
    )
}

#[test]
fn the_onode_cache_follows_the_memory_target_or_a_fixed_cache() {
    let bytes = |options: &str| {
        parse_scenario(&with_ceph_config(options), "c.toml", &cat())
            .unwrap()
            .ceph_config
            .onode_cache_bytes
    };
    // Default 4 GiB target: (4,294,967,296 × 0.85 − 805,306,368) × 0.45 = 1,280,437,125.12.
    let default = parse_scenario(GOOD, "seed-000.toml", &cat()).unwrap();
    assert!((default.ceph_config.onode_cache_bytes - 1_280_437_125.12).abs() < 1e-3);
    // 8 GiB target: (8,589,934,592 × 0.85 − 805,306,368) × 0.45 = 2,923,262,115.84.
    assert!((bytes("osd_memory_target = \"8G\"") - 2_923_262_115.84).abs() < 1e-3);
    // rhcs32's tuned ceph.conf: a fixed 8 GiB cache, 0.8 of it for metadata.
    let tuned = bytes("bluestore_cache_size = \"8G\"\nbluestore_cache_meta_ratio = 0.8");
    assert!((tuned - 8_589_934_592.0 * 0.8).abs() < 1e-3);
}

/// Before 12.2.10 BlueStore's cache is a fixed size (ceph.io "v12.2.10 Luminous released":
/// osd_memory_target and cache autotuning replace the `bluestore_cache_*` options), and
/// `BlueStore::_set_cache_sizes` hands the metadata what `bluestore_cache_kv_max` (512 MiB)
/// takes from RocksDB's 0.99. Hand check: a flash main device's 3 GiB cache,
/// kv = 536,870,912 / 3,221,225,472 = 1/6, so 3,221,225,472 × 5/6 = 2,684,354,560 bytes of
/// onodes; a disk's 1 GiB, kv = 1/2: 536,870,912.
#[test]
fn releases_before_cache_autotuning_have_a_fixed_cache() {
    let luminous = |options: &str, release: &str| {
        let text = with_ceph_config(options).replace(
            "ceph_release = \"19.2.0\"",
            &format!("ceph_release = \"{release}\""),
        );
        parse_scenario(&text, "c.toml", &cat())
            .unwrap()
            .ceph_config
            .onode_cache_bytes
    };
    assert!((luminous("", "12.2.2") - 2_684_354_560.0).abs() < 1e-3);
    assert!((luminous("", "12.2.9") - 2_684_354_560.0).abs() < 1e-3);
    // From 12.2.10 the 4 GiB memory target, as today (see the test above).
    assert!((luminous("", "12.2.10") - 1_280_437_125.12).abs() < 1e-3);
    // A downstream build with the backport states its memory target (RHCS 3.2 on 12.2.8).
    assert!((luminous("osd_memory_target = \"4G\"", "12.2.8") - 1_280_437_125.12).abs() < 1e-3);
    // A stated fixed size: 4 GiB, kv 1/8, metadata 7/8; a stated ratio wins.
    assert!((luminous("bluestore_cache_size = \"4G\"", "12.2.8") - 3_758_096_384.0).abs() < 1e-3);
    let tuned = luminous(
        "bluestore_cache_size = \"8G\"\nbluestore_cache_meta_ratio = 0.8",
        "12.2.8",
    );
    assert!((tuned - 8_589_934_592.0 * 0.8).abs() < 1e-3);
    assert!(
        (crate::spec::release::fixed_onode_cache_bytes(None, None, true) - 536_870_912.0).abs()
            < 1e-3
    );
    assert!(crate::spec::release::fixed_bluestore_cache("11.2.0"));
    assert!(!crate::spec::release::fixed_bluestore_cache("13.2.0"));
    assert!(!crate::spec::release::fixed_bluestore_cache("squid"));
}

#[test]
fn impossible_cache_options_are_refused_with_the_line_the_field_and_a_fix() {
    for (option, field, fix) in [
        (
            "bluestore_cache_meta_ratio = 1.5",
            "cluster.ceph_config.bluestore_cache_meta_ratio",
            "at most 1",
        ),
        (
            "osd_memory_target = \"64M\"",
            "cluster.ceph_config.osd_memory_target",
            "at least 128 MiB",
        ),
    ] {
        let text = with_ceph_config(option);
        assert_located(&err(&text), line_of(&text, option), field, fix);
    }
}

/// A value of the wrong type or out of its type's range names what to write instead: a
/// whole number and its range, a quoted string, true or false.
#[test]
fn values_of_the_wrong_type_say_what_to_write() {
    for (from, to, field, fix) in [
        (
            "iodepth = 16",
            "iodepth = 4294967296",
            "workload.iodepth",
            "whole number of at most 4,294,967,295",
        ),
        (
            "nodes = 3",
            "nodes = -3",
            "cluster.nodes",
            "without a minus sign",
        ),
        (
            "iodepth = 16",
            "iodepth = 2.5",
            "workload.iodepth",
            "quotes or a decimal point",
        ),
        (
            "iodepth = 16",
            "iodepth = \"16\"",
            "workload.iodepth",
            "whole number",
        ),
        (
            "ceph_release = \"19.2.0\"",
            "ceph_release = 19",
            "cluster.ceph_release",
            "double quotes",
        ),
        (
            "block_size = \"4k\"",
            "block_size = \"4 kilo\"",
            "workload.block_size",
            "in one of those forms",
        ),
    ] {
        assert!(GOOD.contains(from), "{from}");
        let e = err(&GOOD.replace(from, to));
        assert_eq!(e.field, field, "{e}");
        let msg = e.to_string();
        assert!(msg.contains(fix), "{to}: {msg}");
        assert!(!msg.contains("correct the value as described"), "{msg}");
    }
}

/// The path of a key inside an array of tables names the element: the second
/// `[[workload]]`'s target is `workload[1].target`, not a key of the table before it.
#[test]
fn keys_in_arrays_of_tables_are_named_with_their_element() {
    let text = "schema_version = 1\n[capacity]\nusable_tb = 1\n[[workload]]\nname = \"a\"\nimages = 1\n[workload.target]\niops_min = 1\n[[workload]]\nname = \"b\"\nimages = 2\n[workload.target]\niops_min = 2\n[protection]\nreplicated = [3]\n";
    for (needle, want) in [
        ("usable_tb = 1", "capacity.usable_tb"),
        ("images = 1", "workload[0].images"),
        ("iops_min = 1", "workload[0].target.iops_min"),
        ("images = 2", "workload[1].images"),
        ("iops_min = 2", "workload[1].target.iops_min"),
        ("replicated = [3]", "protection.replicated"),
    ] {
        let at = text.find(needle).unwrap() + needle.find('=').unwrap() + 2;
        assert_eq!(super::path_at(text, at), want, "{needle}");
    }
}

// Session 55's bad-input audit (/tmp/s55/audit-badinput.md).

/// A link rate written in bytes ("1.25GB/s", 10 GbE in bytes) was read as 1.25 Gb/s.
#[test]
fn a_link_rate_in_bytes_is_refused_in_a_scenario() {
    let text = GOOD.replace("public = \"100Gb/s\"", "public = \"1.25GB/s\"");
    let e = err(&text);
    let msg = e.to_string();
    assert_eq!(e.field, "cluster.node.network.public", "{msg}");
    assert!(
        msg.contains("bytes per second") && msg.contains("10Gb/s") && msg.contains("fix:"),
        "{msg}"
    );
    let e = err(&GOOD.replace("nic = \"100Gb/s\"", "nic = \"100GBps\""));
    assert_eq!(e.field, "clients.nic", "{e}");
}

/// "2TB" was 2 TiB; decimal suffixes are decimal now, binary ones binary, and a lone "T"
/// on a drive is refused as ambiguous.
#[test]
fn drive_capacities_read_tb_as_datasheets_do() {
    let drive = |cap: &str| {
        GOOD.replace(
            "model = \"micron-7500-pro-15.36tb\"",
            &format!("model = {{ kind = \"nvme\", capacity = \"{cap}\", read_4k_iops = 100000, write_4k_iops = 50000, read_bytes_per_sec = 1000000000, write_bytes_per_sec = 1000000000, read_latency = \"100us\", write_latency = \"20us\" }}"),
        )
    };
    let raw = |cap: &str| {
        parse_scenario(&drive(cap), "x", &cat())
            .unwrap()
            .capacity
            .raw_bytes
    };
    assert_eq!(raw("2TB"), 72.0 * 2e12);
    assert_eq!(raw("15.36TB"), 72.0 * 15.36e12);
    assert_eq!(raw("2TiB"), 72.0 * 2.0 * (1u64 << 40) as f64);
    let e = err(&drive("2T"));
    let msg = e.to_string();
    assert_eq!(e.field, "cluster.node.data_devices.model.capacity", "{msg}");
    assert!(msg.contains("\"2TB\"") && msg.contains("\"2TiB\""), "{msg}");
    // A 1-byte drive is not a drive.
    let e = err(&drive("1")).to_string();
    assert!(e.contains("capacity") && e.contains("1 GB"), "{e}");
    // The capacity is written back as a byte count: no suffix to misread.
    let s = parse_scenario(&drive("2TB"), "x", &cat()).unwrap();
    let again = parse_scenario(&s.inline_spec().to_toml(), "y", &cat()).unwrap();
    assert_eq!(again.capacity.raw_bytes, s.capacity.raw_bytes);
}

/// image_size × images × copies beyond the raw capacity (48 × 1P on 1.1 PB raw) was
/// predicted.
#[test]
fn images_larger_than_the_cluster_are_noted_not_refused() {
    // RBD images are thin (a benchmark or an overcommitted cloud may provision more than the
    // drives hold), so the scenario is read, with a note giving the figures.
    let text = GOOD.replace(
        "pattern = \"randread\"",
        "pattern = \"randread\"\nimage_size = \"20T\"",
    );
    // 32 images × 20 TiB × 3 copies = 2.1 PB stored on 72 × 15.36 TB = 1.1 PB raw.
    let s = parse_scenario(&text, "x", &cat()).unwrap();
    let msg = s.thin_images_note().expect("a note");
    assert!(
        msg.contains("32 images × 20T × 3 copies")
            && msg.contains("1.106 PB")
            && msg.contains("RBD images are thin")
            && msg.contains("larger drives"),
        "{msg}"
    );
    // 32 × 10 TiB × 3 = 1.06 PB fits.
    let fits = parse_scenario(&text.replace("\"20T\"", "\"10T\""), "x", &cat()).unwrap();
    assert_eq!(fits.thin_images_note(), None);
    // EC 4+2 stores 1.5 copies.
    let ec = text
        .replace("replicated = 3", "erasure = { k = 4, m = 2 }")
        .replace("nodes = 3\n", "nodes = 6\n");
    let s = parse_scenario(&ec.replace("\"20T\"", "\"60T\""), "x", &cat()).unwrap();
    assert!(s.thin_images_note().unwrap().contains("× 1.5 copies"));
    // And the prediction carries it.
    let r = crate::predict::predict(
        &parse_scenario(&text, "x", &cat()).unwrap(),
        &crate::model::ModelParams::shipped_default(),
        &Default::default(),
    )
    .unwrap();
    assert!(r.warnings.iter().any(|w| w.contains("RBD images are thin")));
}

/// pg_count was accepted at any value; Ceph refuses a pool above mon_max_pg_per_osd.
#[test]
fn a_pg_count_ceph_would_refuse_is_refused() {
    let e = err(&GOOD.replace("pg_count = 1024", "pg_count = 16384"));
    let msg = e.to_string();
    assert_eq!(e.field, "pool.pg_count", "{msg}");
    // 16384 × 3 / 72 = 682.7 PGs per OSD.
    assert!(
        msg.contains("682.7 PGs per OSD")
            && msg.contains("mon_max_pg_per_osd = 250 (its default)")
            && msg.contains("no prediction uses it"),
        "{msg}"
    );
    let raised = GOOD.replace("pg_count = 1024", "pg_count = 16384").replace(
        "[cluster.node]",
        "[cluster.ceph_config]\nmon_max_pg_per_osd = 700\n\n[cluster.node]",
    );
    parse_scenario(&raised, "x", &cat()).unwrap();
    // 6000 × 3 = 18000 = 250 × 72: at the limit, Ceph creates it.
    parse_scenario(
        &GOOD.replace("pg_count = 1024", "pg_count = 6000"),
        "x",
        &cat(),
    )
    .unwrap();
    err(&GOOD.replace("pg_count = 1024", "pg_count = 6001"));
    let msg = err(&GOOD.replace("pg_count = 1024", "pg_count = 0")).to_string();
    assert!(
        msg.contains("pg_count = 0") && msg.contains("no prediction uses it"),
        "{msg}"
    );
}

/// Memory below the OSDs' memory target is a warning of the prediction; 0 is refused.
#[test]
fn memory_below_the_osds_target_is_warned_about() {
    let p = crate::model::ModelParams::shipped_default();
    let warnings = |text: &str| {
        let s = parse_scenario(text, "x", &cat()).unwrap();
        crate::qn::ceph::build(&s, &p).unwrap().warnings
    };
    assert!(!warnings(GOOD).iter().any(|w| w.starts_with("memory:")));
    let w = warnings(&GOOD.replace("memory_gib = 256", "memory_gib = 16"));
    let w = w
        .iter()
        .find(|w| w.starts_with("memory:"))
        .expect("a memory warning");
    // 24 OSDs × 4 GiB = 96 GiB.
    assert!(
        w.contains("24 OSDs") && w.contains("96.000 GiB") && w.contains("default"),
        "{w}"
    );
    for bad in ["0", "-1", "1e308", "nan"] {
        let e = err(&GOOD.replace("memory_gib = 256", &format!("memory_gib = {bad}")));
        assert_eq!(e.field, "cluster.node.memory_gib", "{bad}: {e}");
    }
}

/// Pre-Luminous and impossible releases were predicted as BlueStore at half speed.
#[test]
fn releases_before_luminous_are_refused() {
    let rel = |r: &str| {
        GOOD.replace(
            "ceph_release = \"19.2.0\"",
            &format!("ceph_release = \"{r}\""),
        )
    };
    let msg = err(&rel("9.2.0")).to_string();
    assert!(
        msg.contains("older than Luminous")
            && msg.contains("did you mean \"19.2.0\" (Squid)?")
            && msg.contains("BlueStore"),
        "{msg}"
    );
    for r in ["10.2.11", "0.0.0", "11.2.0"] {
        let e = err(&rel(r));
        assert_eq!(e.field, "cluster.ceph_release", "{r}: {e}");
        assert!(e.to_string().contains("FileStore"), "{e}");
        assert!(!e.to_string().contains("did you mean"), "{e}");
    }
    parse_scenario(&rel("12.2.0"), "x", &cat()).unwrap();
}

/// A million cores, 1e308 IOPS and 4 billion client nodes were accepted.
#[test]
fn absurd_hardware_is_refused_with_its_bound() {
    let cpu = GOOD.replace(
        "cpu = \"ampere-altra-max-m128-30\"",
        "cpu = { arch = \"x86_64\", cores = 1000000, threads_per_core = 2, ghz = 3.1 }",
    );
    let e = err(&cpu);
    assert_eq!(e.field, "cluster.node.cpu.cores", "{e}");
    assert!(e.to_string().contains("1,024"), "{e}");
    let drive = |iops: &str| {
        GOOD.replace(
            "model = \"micron-7500-pro-15.36tb\"",
            &format!("model = {{ kind = \"nvme\", capacity = \"2TB\", read_4k_iops = {iops}, write_4k_iops = 50000, read_bytes_per_sec = 1000000000, write_bytes_per_sec = 1000000000, read_latency = \"100us\", write_latency = \"20us\" }}"),
        )
    };
    let e = err(&drive("1e308"));
    assert_eq!(
        e.field, "cluster.node.data_devices.model.read_4k_iops",
        "{e}"
    );
    assert!(e.to_string().contains("10⁸"), "{e}");
    let e = err(&GOOD.replace("nodes = 4\n", "nodes = 4294967295\n"));
    assert_eq!(e.field, "clients.nodes", "{e}");
    assert!(e.to_string().contains("100,000"), "{e}");
}

/// A duplicate key named no key and its "fix" described nothing; a syntax error's fix was
/// "correct the value as described".
#[test]
fn toml_syntax_errors_name_the_key_and_a_real_fix() {
    let e = err(&GOOD.replace("iodepth = 16", "iodepth = 16\niodepth = 32"));
    let msg = e.to_string();
    assert_eq!(e.field, "workload.iodepth", "{msg}");
    assert_eq!(e.line, Some(line_of(GOOD, "iodepth = 16") + 1), "{msg}");
    assert!(
        msg.contains("duplicate key `iodepth`") && msg.contains("keep one `iodepth = …` line"),
        "{msg}"
    );
    let msg = err(&format!("{GOOD}\n[pool]\nreplicated = 2\n")).to_string();
    assert!(
        msg.contains("duplicate table [pool]") && msg.contains("merge the two [pool] tables"),
        "{msg}"
    );
    for bad in ["iodepth = 16 16", "iodepth = \"16", "iodepth"] {
        let msg = err(&GOOD.replace("iodepth = 16", bad)).to_string();
        assert!(msg.contains("fix: "), "{bad}: {msg}");
        assert!(!msg.contains("as described"), "{bad}: {msg}");
    }
    let msg = err(&GOOD.replace("iodepth = 16", "iodepth = 16 16")).to_string();
    assert!(msg.contains("double quotes"), "{msg}");
    let msg = err(&GOOD.replace("iodepth = 16", "iodepth = \"16")).to_string();
    assert!(msg.contains("close the string"), "{msg}");
    // Catalogue duplicates name the entry.
    let text = format!(
        "{}\n[cpu.amd-epyc-7402]\narch = \"x86_64\"\ncores = 1\nthreads_per_core = 1\nghz = 1.0\n",
        include_str!("../../models/catalogue.toml")
    );
    let msg = Catalogue::parse(&text, "cat.toml").unwrap_err().to_string();
    assert!(
        msg.contains("[cpu.amd-epyc-7402]") && msg.contains("field `cpu.amd-epyc-7402`"),
        "{msg}"
    );
}

use super::*;
use crate::predict::predict_degraded;
use crate::progress::NoProgress;
use crate::spec::{parse_scenario, Catalogue, SpecErrorKind};

const OLTP: &str = include_str!("../../models/requirements/oltp-nvme.toml");
const PRICES: &str = include_str!("../../tests/fixtures/design/prices-test.toml");

fn oltp_spec() -> RequirementsSpec {
    RequirementsSpec::parse(OLTP, "oltp-nvme.toml").unwrap()
}

fn prices() -> PriceList {
    PriceList::parse(PRICES, "prices-test.toml").unwrap()
}

fn run(spec: &RequirementsSpec, prices: Option<&PriceList>) -> DesignReport {
    let req = spec.validate(&Catalogue::builtin()).unwrap();
    design(
        &req,
        prices,
        &ModelParams::shipped_default(),
        &DesignOptions::default(),
        &NoProgress,
    )
    .unwrap()
}

fn cheapest_cost(r: &DesignReport) -> f64 {
    r.designs
        .iter()
        .filter_map(|d| d.cost)
        .fold(f64::INFINITY, f64::min)
}

/// A capacity-bound case small enough to solve by hand.
fn hand_spec() -> RequirementsSpec {
    RequirementsSpec::parse(&hand_spec_text(), "hand").unwrap()
}

fn hand_spec_text() -> String {
    r#"
schema_version = 1
name = "hand"
ceph_release = "19.2.0"
[capacity]
usable_tb = 10
fill_limit = 0.5
[[workload]]
name = "qd1"
pattern = "randread"
block_size = "4k"
images = 1
iodepth = 1
clients = 1
colocated = true
[workload.target]
iops_min = 100
[protection]
replicated = [3]
[constraints]
cpus = ["intel-xeon-gold-6430"]
drives = ["generic-nvme-gen3"]
nics = ["25gbe"]
sockets = [1, 2]
nodes = { min = 3, max = 10 }
[[constraints.chassis]]
name = "1u-4"
rack_units = 1
drive_slots = 4
max_sockets = 2
[[constraints.chassis]]
name = "2u-12"
rack_units = 2
drive_slots = 12
max_sockets = 2
"#
    .to_string()
}

#[test]
fn capacity_bound_case_matches_the_hand_answer() {
    // Needed raw = 10 TB / fill 0.5 × 3 replicas = 60 TB = 30 generic 2 TB drives.
    // Prices (below): node = chassis + sockets × 500 + drives × 100 + 50.
    //   2u-12: 3 nodes × 10 drives (30) = 3 × (1500 + 500 + 1000 + 50) = 9,150, 6 RU;
    //   1u-4:  8 nodes × 4 drives (32; 7 × 4 = 28 is short) = 8 × (1000 + 500 + 400 +
    //          50) = 15,600, 8 RU — dominated (dearer and larger).
    // The target (100 IOPS at QD 1) holds on either: one 4k read takes well under 10 ms.
    let prices = PriceList::parse(
        r#"schema_version = 1
[[price]]
part = "chassis.1u-4"
unit_price = 1000
currency = "T"
date = "2026-12-02"
source = "test"
[[price]]
part = "chassis.2u-12"
unit_price = 1500
currency = "T"
date = "2026-12-02"
source = "test"
[[price]]
part = "cpu.intel-xeon-gold-6430"
unit_price = 500
currency = "T"
date = "2026-12-02"
source = "test"
[[price]]
part = "drive.generic-nvme-gen3"
unit_price = 100
currency = "T"
date = "2026-12-02"
source = "test"
[[price]]
part = "nic.25gbe"
unit_price = 50
currency = "T"
date = "2026-12-02"
source = "test"
"#,
        "prices",
    )
    .unwrap();
    let r = run(&hand_spec(), Some(&prices));
    assert_eq!(r.designs.len(), 1, "{:#?}", r.designs);
    let d = &r.designs[0];
    assert_eq!(d.chassis, "2u-12");
    assert_eq!(
        (d.parts.nodes, d.parts.drives_per_node, d.parts.sockets),
        (3, 10, 1)
    );
    assert_eq!(d.cost, Some(9150.0));
    assert_eq!(d.rack_units, 6);
    assert!(d.pareto && d.cheapest_of_protection);
    // Raw 3 × 10 × 2 TB = 60 TB; usable 20 TB.
    assert!((d.raw_bytes - 60e12).abs() < 1.0);
    assert!((d.usable_bytes - 20e12).abs() < 1.0);
    // The candidate ranked just before is cheaper and short of capacity: 4 × 2u-12 with 2
    // drives costs 4 × (1500 + 500 + 200 + 50) = 9,000 and holds 16 TB raw → 16 / 3 × 0.5
    // = 2.67 TB at the fill limit, 73.3 % short of 10 TB.
    let f = &r.cheaper_failures[0];
    assert_eq!(f.cost, Some(9000.0));
    assert_eq!(f.miss.target, "usable capacity ≥");
    assert!(
        (f.miss.headroom - (16.0 / 3.0 * 0.5 / 10.0 - 1.0)).abs() < 1e-9,
        "{f:?}"
    );
    assert!(r
        .cheaper_failures
        .iter()
        .all(|f| f.cost.unwrap() < 9150.0 && f.miss.target == "usable capacity ≥"));
    // Without prices and without power figures: rack units, then nodes — the same design.
    let r = run(&hand_spec(), None);
    assert_eq!(r.designs[0].rack_units, 6);
    // The note names exactly the parts without a power figure: both chassis (no
    // base_power_watts in the file) and the drive (none in the catalogue) — not the CPU,
    // whose TDP the catalogue carries, nor the 25 GbE NIC, whose catalogue entry quotes a
    // representative card's datasheet figure.
    let note = r
        .notes
        .iter()
        .find(|n| n.contains("power objective refused"))
        .expect("the report says power is refused");
    for part in ["chassis.1u-4", "chassis.2u-12", "drive.generic-nvme-gen3"] {
        assert!(note.contains(part), "{part} missing from: {note}");
    }
    for part in ["cpu.intel-xeon-gold-6430", "nic.25gbe"] {
        assert!(!note.contains(part), "{part} has a power figure: {note}");
    }
    assert!(!r.objectives.iter().any(|o| o == "power"));
}

#[test]
fn tighter_target_is_never_cheaper_and_more_parts_never_dearer() {
    let p = prices();
    let mut spec = oltp_spec();
    spec.resilience = None;
    let mut costs = Vec::new();
    for iops in [50_000.0, 150_000.0, 400_000.0] {
        spec.workloads[0].target.iops_min = Some(iops);
        costs.push(cheapest_cost(&run(&spec, Some(&p))));
    }
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    assert!(costs[0].is_finite());
    // Fewer allowed parts: one drive, one CPU, one NIC.
    spec.workloads[0].target.iops_min = Some(150_000.0);
    let all = cheapest_cost(&run(&spec, Some(&p)));
    spec.constraints.drives = vec!["micron-7500-pro-15.36tb".into()];
    spec.constraints.cpus = vec!["amd-epyc-9454".into()];
    spec.constraints.nics = vec!["100gbe".into()];
    let fewer = cheapest_cost(&run(&spec, Some(&p)));
    assert!(all <= fewer, "all parts {all}, fewer {fewer}");
}

#[test]
fn every_design_meets_every_target_when_its_scenario_is_predicted() {
    let spec = oltp_spec();
    let req = spec.validate(&Catalogue::builtin()).unwrap();
    let model = ModelParams::shipped_default();
    let r = design(
        &req,
        Some(&prices()),
        &model,
        &DesignOptions::default(),
        &NoProgress,
    )
    .unwrap();
    assert!(!r.designs.is_empty());
    for d in &r.designs {
        for (w, sp) in design_scenarios(&req, d) {
            let text = sp.to_toml();
            let s = parse_scenario(&text, "written", &Catalogue::builtin()).unwrap();
            let target = req.workloads.iter().find(|x| x.name == w).unwrap().target;
            let opts = PredictOptions::default();
            let up = predict(&s, &model, &opts).unwrap();
            let deg = s.spec.degraded.expect("resilience writes [degraded]");
            let down = predict_degraded(&s, &model, &deg, &opts).unwrap();
            for p in [&up, &down.prediction] {
                let h = headrooms(
                    &target,
                    p.iops,
                    p.bandwidth_bytes_per_sec,
                    p.latency_mean_secs,
                    None,
                );
                assert!(h.iter().all(Headroom::met), "{}: {h:?}", d.id);
            }
            // The report carries the same numbers.
            assert_eq!(d.results[0].prediction.iops, up.iops);
            let max = req.resilience.unwrap().max_recovery_secs.unwrap();
            assert!(down.recovery.as_ref().unwrap().time_secs <= max);
        }
    }
}

#[test]
fn a_design_meeting_targets_only_with_all_nodes_up_is_not_returned_under_resilience() {
    let p = prices();
    let model = ModelParams::shipped_default();
    let mut spec = oltp_spec();
    spec.resilience = None;
    let plain = run(&spec, Some(&p));
    let cheapest = plain
        .designs
        .iter()
        .min_by(|a, b| a.cost.unwrap().total_cmp(&b.cost.unwrap()))
        .unwrap();
    // With one node down while recovery takes 30 %, this design misses a target...
    let req = spec.validate(&Catalogue::builtin()).unwrap();
    let (_, sp) = design_scenarios(&req, cheapest).remove(0);
    let s = sp.validate(&Catalogue::builtin()).unwrap();
    let d = DegradedSpec {
        nodes_down: 1,
        recovery_share: 0.3,
        fill: 0.85,
    };
    let down = predict_degraded(&s, &model, &d, &PredictOptions::default()).unwrap();
    let t = req.workloads[0].target;
    let h = headrooms(
        &t,
        down.prediction.iops,
        0.0,
        down.prediction.latency_mean_secs,
        None,
    );
    assert!(
        h.iter().any(|x| !x.met()),
        "the cheapest plain design survives a node down: {h:?}"
    );
    // ... so with resilience it is not among the designs.
    let mut spec = oltp_spec();
    spec.resilience.as_mut().unwrap().max_recovery_hours = None;
    let resilient = run(&spec, Some(&p));
    assert!(!resilient.designs.is_empty());
    assert!(resilient.designs.iter().all(|x| x.parts != cheapest.parts));
    assert!(cheapest_cost(&resilient) > cheapest.cost.unwrap());
}

fn err_of(spec: &RequirementsSpec) -> crate::spec::SpecError {
    spec.validate(&Catalogue::builtin()).unwrap_err()
}

#[test]
fn bad_requirements_name_the_field_and_the_fix() {
    let mut s = oltp_spec();
    s.constraints.drives = vec!["micron-7500".into()];
    let e = err_of(&s);
    assert_eq!(e.field, "constraints.drives[0]");
    assert!(matches!(*e.kind, SpecErrorKind::UnknownName { .. }));
    assert!(e.to_string().contains("micron-7500-pro-15.36tb"), "{e}");

    let mut s = oltp_spec();
    s.capacity.usable_tb = Some(100_000.0);
    let e = err_of(&s).to_string();
    assert!(
        e.contains("impossible capacity") && e.contains("raise constraints.nodes.max"),
        "{e}"
    );

    let mut s = oltp_spec();
    s.constraints.drives_per_node = Some(RangeSpec { min: 30, max: 40 });
    let e = err_of(&s).to_string();
    assert!(
        e.contains("drives_per_node.min") && e.contains("no chassis has more than 24"),
        "{e}"
    );

    let mut s = oltp_spec();
    s.constraints.nodes = RangeSpec { min: 3, max: 6 };
    s.protection.replicated.clear();
    s.protection.erasure = vec![ErasureOption { k: 8, m: 3 }];
    let e = err_of(&s).to_string();
    assert!(
        e.contains("constraints.nodes.max") && e.contains("needs 11 hosts plus 1 down"),
        "{e}"
    );

    let mut s = oltp_spec();
    s.constraints.max_power_watts = Some(10_000.0);
    let e = err_of(&s).to_string();
    assert!(
        e.contains("drive.micron-7500-pro-15.36tb") && e.contains("power_watts"),
        "{e}"
    );

    let mut s = oltp_spec();
    s.workloads[0].target = TargetSpec::default();
    assert_eq!(err_of(&s).field, "workload[0].target");

    let mut s = oltp_spec();
    s.workloads[0].read_percent = None;
    let e = err_of(&s);
    assert_eq!(e.field, "workload[0].pattern");
    assert!(e.to_string().contains("read_percent"), "{e}");

    // Lines: an unknown CPU in the file is located at its line.
    let text = OLTP.replace("\"intel-xeon-gold-6430\"]", "\"intel-xeon-gold-6431\"]");
    let e = parse_requirements(&text, "oltp.toml", &Catalogue::builtin()).unwrap_err();
    let line = OLTP.lines().position(|l| l.starts_with("cpus =")).unwrap() + 1;
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.to_string().contains("intel-xeon-gold-6430"), "{e}");
}

#[test]
fn a_target_no_design_meets_says_which_and_by_how_much() {
    let mut s = oltp_spec();
    s.resilience = None;
    s.workloads[0].target.iops_min = Some(1e9);
    let r = run(&s, Some(&prices()));
    assert!(r.designs.is_empty());
    let msg = r.no_design.unwrap();
    assert!(
        msg.starts_with("no design meets iops ≥ 1000000000 IOPS for workload \"oltp\""),
        "{msg}"
    );
    assert!(msg.contains("misses by"), "{msg}");
    let c = r.closest.unwrap();
    assert!(c.miss.headroom < 0.0 && c.miss.required == 1e9);
}

#[test]
fn unpriced_part_is_refused() {
    let mut s = oltp_spec();
    s.constraints.nics = vec!["40gbe".into()];
    let req = s.validate(&Catalogue::builtin()).unwrap();
    let e = design(
        &req,
        Some(&prices()),
        &ModelParams::shipped_default(),
        &DesignOptions::default(),
        &NoProgress,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("nic.40gbe has no price"), "{e}");
}

#[test]
fn price_list_errors() {
    let e = PriceList::parse(
        &PRICES.replacen("currency = \"TEST\"", "currency = \"EUR\"", 2),
        "p.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("differs from the first entry") && e.contains("one currency"),
        "{e}"
    );
}

#[test]
fn without_prices_power_ranks_and_a_budget_binds() {
    // Test-only power figures (not datasheet values): generic drive 10 W, 25GbE NIC 5 W (in
    // place of the catalogue's 15.95 W), chassis base 80 W (1u-4) and 150 W (2u-12); the
    // Gold 6430's 270 W TDP is the catalogue's. Node power = base + 270·sockets +
    // 10·drives + 5.
    //   3 × 2u-12 × 10 drives: 3 × (150 + 270 + 100 + 5) = 1,575 W, 6 RU;
    //   8 × 1u-4 × 4 drives:   8 × (80 + 270 + 40 + 5)   = 3,160 W, 8 RU.
    let mut cat = Catalogue::builtin();
    cat.drive.get_mut("generic-nvme-gen3").unwrap().power_watts = Some(10.0);
    cat.nic.get_mut("25gbe").unwrap().power_watts = Some(5.0);
    let mut spec = hand_spec();
    spec.constraints.chassis[0].base_power_watts = Some(80.0);
    spec.constraints.chassis[1].base_power_watts = Some(150.0);
    let model = ModelParams::shipped_default();
    let req = spec.validate(&cat).unwrap();
    let r = design(&req, None, &model, &DesignOptions::default(), &NoProgress).unwrap();
    assert_eq!(r.objectives, vec!["power", "rack units"]);
    assert_eq!(r.designs.len(), 1);
    assert_eq!(r.designs[0].power_watts, Some(1575.0));
    assert_eq!(r.designs[0].chassis, "2u-12");
    spec.constraints.max_power_watts = Some(1500.0);
    let req = spec.validate(&cat).unwrap();
    let r = design(&req, None, &model, &DesignOptions::default(), &NoProgress).unwrap();
    assert!(r.designs.is_empty());
    assert!(r.no_design.unwrap().starts_with("no design meets"));
}

#[test]
fn a_p99_target_is_checked_by_simulation() {
    let mut spec = hand_spec();
    spec.workloads[0].target.latency_p99_max = Some(crate::units::LatencyTarget(0.05));
    let r = run(&spec, None);
    assert!(r.stats.simulations >= 1);
    let d = &r.designs[0];
    let p99 = d.results[0].prediction.latency_p99_secs.unwrap();
    assert!(p99 <= 0.05, "{p99}");
    assert!(d.results[0]
        .headroom
        .iter()
        .any(|h| h.target == "p99 latency ≤"));
    // The note names the simulation's seed and precision, and `predict --tails` with them
    // on the written scenario reproduces the p99 (session 53's audit: it could not).
    let sim = &DesignOptions::default().tails.sim;
    let flag = format!("--seed {} --precision {}", sim.seed, sim.relative_precision);
    assert!(r.notes.iter().any(|n| n.contains(&flag)), "{:?}", r.notes);
    let req = spec.validate(&Catalogue::builtin()).unwrap();
    let (_, sp) = &design_scenarios(&req, d)[0];
    let s = sp.validate(&Catalogue::builtin()).unwrap();
    let mut tails = crate::predict::TailOptions::default();
    tails.sim.seed = sim.seed;
    tails.sim.relative_precision = sim.relative_precision;
    let t = crate::predict::predict_tails(&s, &ModelParams::shipped_default(), &tails, &NoProgress)
        .unwrap();
    assert_eq!(t.all.latency_p99_secs.mean, p99);
    // 1 µs is below any I/O's service time: no design, and the miss names the p99.
    spec.workloads[0].target.latency_p99_max = Some(crate::units::LatencyTarget(1e-6));
    let req = spec.validate(&Catalogue::builtin()).unwrap();
    let opts = DesignOptions {
        max_simulations: 3,
        ..DesignOptions::default()
    };
    let r = design(
        &req,
        None,
        &ModelParams::shipped_default(),
        &opts,
        &NoProgress,
    )
    .unwrap();
    assert!(r.designs.is_empty());
    assert_eq!(r.stats.simulations, 3);
    assert!(r.stats.unchecked_p99 > 0);
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("budget of 3 simulations")));
    assert!(r.no_design.unwrap().contains("p99 latency ≤"));
}

#[test]
fn a_cancelled_search_says_it_is_incomplete() {
    let req = oltp_spec().validate(&Catalogue::builtin()).unwrap();
    let cancel = crate::progress::CancelToken::new();
    cancel.cancel();
    let r = design(
        &req,
        None,
        &ModelParams::shipped_default(),
        &DesignOptions::default(),
        &cancel,
    )
    .unwrap();
    assert!(!r.stats.complete);
}

#[test]
fn the_recovery_share_may_come_from_an_mclock_profile() {
    let mut s = oltp_spec();
    let r = s.resilience.as_mut().unwrap();
    r.recovery_share = None;
    r.mclock_profile = Some("balanced".into());
    let req = s.validate(&Catalogue::builtin()).unwrap();
    // mClockScheduler.cc: balanced reserves 50 % for background recovery.
    assert_eq!(req.resilience.unwrap().recovery_share, 0.5);
    s.resilience.as_mut().unwrap().mclock_profile = Some("fast".into());
    let e = err_of(&s).to_string();
    assert!(
        e.contains("resilience.mclock_profile") && e.contains("\"high_recovery_ops\""),
        "{e}"
    );
    s.resilience.as_mut().unwrap().recovery_share = Some(0.3);
    let e = err_of(&s).to_string();
    assert!(e.contains("exactly one of"), "{e}");
}

#[test]
fn checking_at_the_pessimistic_end_is_never_cheaper_and_holds_there() {
    let p = prices();
    let mut spec = oltp_spec();
    spec.resilience = None;
    let point = cheapest_cost(&run(&spec, Some(&p)));
    spec.check_at = CheckAt::Interval80;
    let r = run(&spec, Some(&p));
    assert!(r.notes.iter().any(|n| n.contains("80 % range")));
    assert!(
        cheapest_cost(&r) >= point,
        "{} < {point}",
        cheapest_cost(&r)
    );
    for d in &r.designs {
        for w in &d.results {
            let i = w.prediction.interval_80.as_ref().unwrap();
            assert!(i.iops_low >= 150_000.0, "{}: {}", d.id, i.iops_low);
            assert!(
                i.latency_mean_high_secs <= 3e-3,
                "{}: {}",
                d.id,
                i.latency_mean_high_secs
            );
        }
    }
}

#[test]
fn inline_parts_are_searched_and_written_inline() {
    // A test drive described inline: the generic Gen3 NVMe's figures at twice the capacity.
    let text = hand_spec_text().replace(
        "drives = [\"generic-nvme-gen3\"]",
        "drives = [\"my-nvme-4tb\"]",
    ) + r#"
[parts.drive.my-nvme-4tb]
kind = "nvme"
capacity = 4_000_000_000_000
read_4k_iops = 490_000
write_4k_iops = 38_000
read_bytes_per_sec = 3_200_000_000
write_bytes_per_sec = 1_050_000_000
read_latency = "85us"
write_latency = "20us"
source = "test part"
"#;
    let spec = RequirementsSpec::parse(&text, "inline").unwrap();
    let req = spec.validate(&Catalogue::builtin()).unwrap();
    let model = ModelParams::shipped_default();
    let r = design(&req, None, &model, &DesignOptions::default(), &NoProgress).unwrap();
    // 60 TB raw in 4 TB drives = 15 drives. Ranked by rack units (no prices, no power):
    // 1u-4 needs ⌈15 / 4⌉ = 4 nodes × 4 drives = 4 RU; 2u-12 needs 3 nodes (the replica
    // count) = 6 RU.
    let d = &r.designs[0];
    assert_eq!(d.chassis, "1u-4");
    assert_eq!(
        (d.parts.nodes, d.parts.drives_per_node, d.rack_units),
        (4, 4, 4)
    );
    let (_, sp) = design_scenarios(&req, d).remove(0);
    let s = parse_scenario(&sp.to_toml(), "written", &Catalogue::builtin()).unwrap();
    let p = predict(&s, &model, &PredictOptions::default()).unwrap();
    assert_eq!(p.iops, d.results[0].prediction.iops);
    // A name that is also a catalogue drive is refused.
    let clash = text.replace("my-nvme-4tb", "generic-nvme-gen3");
    let e = RequirementsSpec::parse(&clash, "inline")
        .unwrap()
        .validate(&Catalogue::builtin())
        .unwrap_err();
    assert_eq!(e.field, "parts.drive.generic-nvme-gen3");
}

/// The oltp example with each image spanning `size` and the OSDs at `target`.
fn oltp_with_working_set(size: &str, target: Option<&str>) -> RequirementsSpec {
    let mut text = OLTP.replace(
        "iodepth = 16\n",
        &format!("iodepth = 16\nimage_size = \"{size}\"\n"),
    );
    if let Some(t) = target {
        text = text.replace(
            "osds_per_device = 1\n",
            &format!("osds_per_device = 1\nosd_memory_target = \"{t}\"\n"),
        );
    }
    RequirementsSpec::parse(&text, "oltp-working-set.toml").unwrap()
}

#[test]
fn a_working_set_reaches_the_written_scenarios_and_the_report_says_so() {
    let spec = oltp_with_working_set("2TiB", Some("16GiB"));
    let req = spec.validate(&Catalogue::builtin()).unwrap();
    assert_eq!(req.osd_memory_target, Some(crate::units::Bytes(16 << 30)));
    let r = design(
        &req,
        Some(&prices()),
        &ModelParams::shipped_default(),
        &DesignOptions::default(),
        &NoProgress,
    )
    .unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("oltp states image_size") && n.contains("(16 GiB)")),
        "{:?}",
        r.notes
    );
    let d = &r.designs[0];
    // The OSDs of a node aim at OSDs per node × the target (one OSD per drive here).
    assert_eq!(
        d.osd_memory_bytes_per_node,
        f64::from(d.parts.drives_per_node) * (16u64 << 30) as f64
    );
    for (_, sp) in design_scenarios(&req, d) {
        let s = parse_scenario(&sp.to_toml(), "written", &Catalogue::builtin()).unwrap();
        assert_eq!(
            s.spec.workload.image_size,
            Some(crate::units::Bytes(2 << 40))
        );
        assert_eq!(
            s.spec.cluster.ceph_config.osd_memory_target,
            Some(crate::units::Bytes(16 << 30))
        );
    }
    // Without an image size the report says the data set counts as cached.
    let plain = run(&oltp_spec(), Some(&prices()));
    assert!(
        plain
            .notes
            .iter()
            .any(|n| n.starts_with("no workload states image_size")
                && n.contains("4 GiB, Ceph's default")),
        "{:?}",
        plain.notes
    );
}

#[test]
fn on_one_design_a_larger_working_set_never_raises_and_more_memory_never_lowers_iops() {
    // The cheapest design of the plain example, predicted with the working set and memory
    // target of each variant: the onode misses (qn::ceph) only ever cost IOPS.
    let plain = run(&oltp_spec(), Some(&prices()));
    let parts = plain.designs[0].clone();
    let iops = |spec: &RequirementsSpec| {
        let req = spec.validate(&Catalogue::builtin()).unwrap();
        let (_, sp) = design_scenarios(&req, &parts).remove(0);
        let mut s = parse_scenario(&sp.to_toml(), "written", &Catalogue::builtin()).unwrap();
        s.spec.degraded = None;
        predict(
            &s,
            &ModelParams::shipped_default(),
            &PredictOptions::default(),
        )
        .unwrap()
        .iops
    };
    let cached = iops(&oltp_spec());
    let small = iops(&oltp_with_working_set("64GiB", None));
    let large = iops(&oltp_with_working_set("2TiB", None));
    let large_more_memory = iops(&oltp_with_working_set("2TiB", Some("16GiB")));
    assert!(small <= cached * (1.0 + 1e-9), "{small} > {cached}");
    assert!(large < small, "{large} !< {small}");
    assert!(large_more_memory > large, "{large_more_memory} !> {large}");
    assert!(large_more_memory <= cached * (1.0 + 1e-9));
}

#[test]
fn a_working_set_larger_than_the_cluster_is_refused_with_the_fix() {
    let e = err_of(&oltp_with_working_set("8TiB", None));
    assert_eq!(e.field, "workload[0].image_size");
    let msg = e.to_string();
    assert!(
        msg.contains("64 images") && msg.contains("raise capacity.usable_tb"),
        "{msg}"
    );
    // Located at its line in the file.
    let text = OLTP.replace("iodepth = 16\n", "iodepth = 16\nimage_size = \"8TiB\"\n");
    let e = parse_requirements(&text, "oltp.toml", &Catalogue::builtin()).unwrap_err();
    let line = text
        .lines()
        .position(|l| l.starts_with("image_size"))
        .unwrap()
        + 1;
    assert_eq!(e.line, Some(line), "{e}");
    // In the second [[workload]], at that table's line, not the first's.
    let start = OLTP.find("\n[[workload]]").unwrap() + 1;
    let end = OLTP.find("[protection]").unwrap();
    let second = OLTP[start..end]
        .replace("name = \"oltp\"", "name = \"batch\"")
        .replace("iodepth = 16\n", "iodepth = 16\nimage_size = \"8TiB\"\n");
    let text = format!("{}{second}{}", &OLTP[..end], &OLTP[end..]);
    let e = parse_requirements(&text, "oltp.toml", &Catalogue::builtin()).unwrap_err();
    assert_eq!(e.field, "workload[1].image_size", "{e}");
    let line = text
        .lines()
        .position(|l| l.starts_with("image_size"))
        .unwrap()
        + 1;
    assert_eq!(e.line, Some(line), "{e}");
}

/// Little's law: one image at iodepth 1 keeps one I/O in flight, which delivers 2,000 IOPS
/// only at a mean latency of 1 / 2,000 s = 0.5 ms; with a 10 ms target the designs must
/// still reach 0.5 ms, and the notes say so with the in-flight count (2,000 × 0.01 = 20)
/// that lets the 10 ms target decide. The shipped OLTP example (1,024 in flight, 150,000
/// IOPS within 3 ms: 6.8 ms by Little's law) gets no such note.
#[test]
fn a_workload_whose_in_flight_count_sets_its_latency_is_named_in_the_notes() {
    // The hand case with its 100 IOPS target replaced by `target`.
    let notes_with = |target: &str| {
        let text = hand_spec_text().replace("iops_min = 100", target);
        let req = RequirementsSpec::parse(&text, "hand")
            .unwrap()
            .validate(&Catalogue::builtin())
            .unwrap();
        littles_law_notes(&req)
    };
    let notes = notes_with("iops_min = 2000\nlatency_mean_max = \"10ms\"");
    assert_eq!(notes.len(), 1, "{notes:?}");
    let n = &notes[0];
    assert!(n.starts_with("workload qd1: by Little's law its 1 I/Os in flight deliver 2000 IOPS only at a mean latency of 0.500 ms or less, below its 10.000 ms target"), "{n}");
    assert!(n.contains("at least 20 I/Os in flight"), "{n}");
    // A bandwidth target counts as its IOPS: 8.192 MB/s of 4 KiB blocks is 2,000 IOPS.
    assert_eq!(
        notes_with("bandwidth_gb_per_sec_min = 0.008192\nlatency_mean_max = \"10ms\""),
        notes
    );
    let oltp = oltp_spec().validate(&Catalogue::builtin()).unwrap();
    assert!(littles_law_notes(&oltp).is_empty());
    // Without a latency target there is nothing to compare with.
    assert!(notes_with("iops_min = 100").is_empty());
}

/// A pool that loses PGs with a node down never meets a resilience target (session 52's
/// audit: one copy was designed as surviving "1 node down", with a recovery of data that
/// no longer existed): every candidate fails on the copies a PG keeps.
#[test]
fn a_pool_of_one_copy_never_survives_a_node_down() {
    let mut spec = oltp_spec();
    spec.protection.replicated = vec![1];
    spec.protection.erasure = Vec::new();
    spec.resilience.as_mut().unwrap().max_recovery_hours = None;
    let r = run(&spec, Some(&prices()));
    assert!(r.designs.is_empty(), "{:?}", r.designs.first());
    let closest = r.closest.expect("the closest failure is reported");
    assert_eq!(closest.miss.target, "copies a PG keeps ≥ min_size");
    assert_eq!((closest.miss.required, closest.miss.predicted), (1.0, 0.0));
}

/// The closest failure: a workload miss before capacity, an exact miss before one from the
/// asymptotic bound (only a floor on the miss), then the smaller miss.
#[test]
fn the_closest_failure_prefers_exact_misses_to_bounds() {
    let f = |workload: &str, headroom: f64, by_bound: bool| Failure {
        candidate: String::new(),
        cost: None,
        power_watts: None,
        rack_units: 0,
        workload: workload.into(),
        state: String::new(),
        miss: Headroom {
            target: "iops ≥".into(),
            required: 1.0,
            predicted: 1.0 + headroom,
            headroom,
        },
        by_bound,
    };
    let exact_7 = f("db", -0.07, false);
    let bound_01 = f("db", -0.001, true);
    let exact_2 = f("db", -0.02, false);
    let capacity = f("", -0.001, false);
    assert!(closer(&exact_7, &bound_01) && !closer(&bound_01, &exact_7));
    assert!(closer(&exact_2, &exact_7) && !closer(&exact_7, &exact_2));
    assert!(closer(&bound_01, &capacity) && !closer(&capacity, &bound_01));
    assert!(closer(&f("db", -0.3, true), &f("db", -0.5, true)));
}

// Session 55's bad-input audit (/tmp/s55/audit-badinput.md).

fn req_err(text: &str) -> String {
    crate::design::parse_requirements(text, "req.toml", &Catalogue::builtin())
        .unwrap_err()
        .to_string()
}

/// `latency_mean_max = 3` was a 3 s target; "3m" 3 minutes.
#[test]
fn a_latency_target_without_a_unit_or_in_minutes_is_refused() {
    let msg = req_err(&OLTP.replace("latency_mean_max = \"3ms\"", "latency_mean_max = 3"));
    assert!(
        msg.starts_with("req.toml:")
            && msg.contains("workload[0].target.latency_mean_max")
            && msg.contains("no unit")
            && msg.contains("\"3ms\""),
        "{msg}"
    );
    for bad in ["\"3\"", "\"3m\""] {
        let msg = req_err(&OLTP.replace("\"3ms\"", bad));
        assert!(
            msg.contains("\"3ms\"") && msg.contains("fix:"),
            "{bad}: {msg}"
        );
    }
}

/// A p99 target below the mean target was searched for (and `design` ran > 200 s).
#[test]
fn a_p99_target_below_the_mean_target_is_refused() {
    let text = OLTP.replace(
        "latency_mean_max = \"3ms\"",
        "latency_mean_max = \"3ms\"\nlatency_p99_max = \"1ms\"",
    );
    let msg = req_err(&text);
    assert!(
        msg.contains("workload[0].target.latency_p99_max")
            && msg.contains("1 ms is below latency_mean_max = 3 ms")
            && msg.contains("raise latency_p99_max"),
        "{msg}"
    );
}

/// A link speed in bytes in a requirements file (client_nic) is refused.
#[test]
fn a_client_nic_in_bytes_is_refused() {
    let msg = req_err(&OLTP.replace("client_nic = \"100Gb/s\"", "client_nic = \"100GB/s\""));
    assert!(
        msg.contains("client_nic") && msg.contains("800Gb/s"),
        "{msg}"
    );
}

/// An empty requirements file points at the requirements examples, not the scenarios.
#[test]
fn an_empty_requirements_or_price_file_points_at_its_own_format() {
    let msg = req_err("");
    assert!(
        msg.contains("models/requirements/") && !msg.contains("models/examples/"),
        "{msg}"
    );
    let msg = PriceList::parse("", "p.toml").unwrap_err().to_string();
    assert!(
        msg.contains("[[price]]") && !msg.contains("models/examples/"),
        "{msg}"
    );
}

/// 1e308 made every cost ∞, and a design "cheapest" still.
#[test]
fn an_absurd_unit_price_is_refused() {
    let msg = PriceList::parse(
        &PRICES.replacen("unit_price = 3000", "unit_price = 1e308", 1),
        "p.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.starts_with("p.toml:")
            && msg.contains("price[0].unit_price")
            && msg.contains("chassis.1u-10-nvme")
            && msg.contains("10⁹"),
        "{msg}"
    );
    PriceList::parse(
        &PRICES.replacen("unit_price = 3000", "unit_price = 1e9", 1),
        "p.toml",
    )
    .unwrap();
}

/// A typo'd part (`cpu.amd-epyc-945`) was silently unused, and the error that followed
/// named neither the price file nor the entry.
#[test]
fn a_price_for_an_unknown_part_names_the_file_the_entry_and_the_closest() {
    let text = PRICES.replacen(
        "part = \"cpu.amd-epyc-9454\"",
        "part = \"cpu.amd-epyc-945\"",
        1,
    );
    let p = PriceList::parse(&text, "prices.toml").unwrap();
    let req = oltp_spec().validate(&Catalogue::builtin()).unwrap();
    let msg = design(
        &req,
        Some(&p),
        &ModelParams::shipped_default(),
        &DesignOptions::default(),
        &NoProgress,
    )
    .unwrap_err()
    .to_string();
    let line = text
        .lines()
        .position(|l| l.contains("amd-epyc-945\""))
        .unwrap()
        + 1;
    assert!(
        msg.starts_with(&format!("prices.toml:{line}:"))
            && msg.contains("price[2].part")
            && msg.contains("\"cpu.amd-epyc-945\" is not in the catalogue")
            && msg.contains("cpu.amd-epyc-9454"),
        "{msg}"
    );
    // A part with no price names the price file.
    let mut s = oltp_spec();
    s.constraints.nics = vec!["40gbe".into()];
    let req = s.validate(&Catalogue::builtin()).unwrap();
    let msg = design(
        &req,
        Some(&prices()),
        &ModelParams::shipped_default(),
        &DesignOptions::default(),
        &NoProgress,
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("nic.40gbe has no price in prices-test.toml"),
        "{msg}"
    );
}

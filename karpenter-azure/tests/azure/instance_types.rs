//! Instance types against the test vectors: every size of `skus.csv` (labels,
//! capacity, allocatable, ephemeral OS disk, zones, filters), the static
//! filters over the broad catalog, and price look-up.

use std::collections::BTreeMap;

use karpenter_azure::Catalog;
use karpenter_azure::instancetype::{
    self, Settings, capacity, instance_type, kube_reserved_cpu_millis, kube_reserved_memory_mib,
    labels, labels::ephemeral_os_max_size_gb, memory_capacity_bytes, static_exclusions,
};
use karpenter_core::scheduling::{Operator, Requirement, Requirements};

fn rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect()
        })
        .collect()
}

fn skus_csv() -> Vec<BTreeMap<String, String>> {
    rows(include_str!("../data/skus.csv"))
}

#[test]
fn every_fixture_size_has_upstreams_capacity_overhead_and_allocatable() {
    let catalog = Catalog::embedded();
    for row in skus_csv() {
        let name = &row["name"];
        let sku = catalog
            .sku(name)
            .unwrap_or_else(|| panic!("{name} in the catalog"));
        let settings = Settings::for_region(&row["region"]);
        let int = |column: &str| {
            row[column]
                .parse::<i64>()
                .unwrap_or_else(|_| panic!("{name} {column}"))
        };
        assert_eq!(
            memory_capacity_bytes(sku.memory_gib, 0.075),
            int("derived_capacity_memory_bytes"),
            "{name}"
        );
        assert_eq!(
            kube_reserved_cpu_millis(sku.vcpus),
            int("derived_kube_reserved_cpu_m"),
            "{name}"
        );
        assert_eq!(
            kube_reserved_memory_mib(sku.memory_gib),
            int("derived_kube_reserved_memory_mi"),
            "{name}"
        );
        assert_eq!(
            ephemeral_os_max_size_gb(sku) as i64,
            int("derived_ephemeralos_maxsize_gb"),
            "{name}"
        );
        let it = instance_type(catalog, sku, &settings).expect("offerings");
        let allocatable = it.allocatable();
        assert_eq!(
            allocatable.get("cpu"),
            int("derived_allocatable_cpu_m"),
            "{name} cpu"
        );
        assert_eq!(
            allocatable.get("memory") / 1000,
            int("derived_allocatable_memory_bytes"),
            "{name} memory"
        );
        assert_eq!(it.capacity, capacity(catalog, sku, &settings));
        assert_eq!(it.capacity.get("pods"), 250_000);
        assert_eq!(it.capacity.get("ephemeral-storage"), 128_000_000_000_000);
    }
}

#[test]
fn every_fixture_size_carries_upstreams_labels() {
    let catalog = Catalog::embedded();
    for row in skus_csv() {
        let name = &row["name"];
        let sku = catalog.sku(name).expect("in the catalog");
        let settings = Settings::for_region(&row["region"]);
        let it = instance_type(catalog, sku, &settings).expect("offerings");
        let single = it.requirements.labels();
        let label = |key: &str| single.get(key).cloned().unwrap_or_default();
        let bool_label = |column: &str| row[column].to_lowercase();
        assert_eq!(label("node.kubernetes.io/instance-type"), *name);
        assert_eq!(label(labels::SKU_NAME), *name);
        assert_eq!(label(labels::SKU_FAMILY), row["sku_family_label"], "{name}");
        assert_eq!(label(labels::SKU_SERIES), row["sku_series_label"], "{name}");
        assert_eq!(
            label(labels::SKU_VERSION),
            row["sku_version_label"],
            "{name}"
        );
        assert_eq!(label(labels::SKU_CPU), row["vcpus"], "{name}");
        assert_eq!(label(labels::AKS_SKU_CPU), row["vcpus"], "{name}");
        let memory_mib =
            (row["memory_gib"].parse::<f64>().expect("memory") * 1024.0).trunc() as i64;
        assert_eq!(label(labels::SKU_MEMORY), memory_mib.to_string(), "{name}");
        assert_eq!(
            label(labels::AKS_SKU_MEMORY),
            memory_mib.to_string(),
            "{name}"
        );
        let arch = if row["arch"] == "Arm64" {
            "arm64"
        } else {
            "amd64"
        };
        assert_eq!(label("kubernetes.io/arch"), arch, "{name}");
        assert_eq!(label("kubernetes.io/os"), "linux");
        assert_eq!(label("topology.kubernetes.io/region"), row["region"]);
        assert_eq!(label(labels::SKU_GPU_NAME), row["gpu_name"], "{name}");
        assert_eq!(
            label(labels::SKU_GPU_MANUFACTURER),
            row["gpu_manufacturer"],
            "{name}"
        );
        let gpus = if row["gpu_manufacturer"].is_empty() {
            "0"
        } else {
            row["gpus"].as_str()
        };
        assert_eq!(label(labels::SKU_GPU_COUNT), gpus, "{name}");
        assert_eq!(
            label(labels::SKU_NETWORKING_ACCELERATED),
            bool_label("accelerated_networking"),
            "{name}"
        );
        assert_eq!(
            label(labels::SKU_STORAGE_PREMIUM_CAPABLE),
            bool_label("premium_io"),
            "{name}"
        );
        let ephemeral = &row["derived_ephemeralos_maxsize_gb"];
        let expected = if ephemeral == "0" {
            ""
        } else {
            ephemeral.as_str()
        };
        assert_eq!(
            label(labels::SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE),
            expected,
            "{name}"
        );
        assert_eq!(label(labels::OS_SKU), "Ubuntu");
        // A label the size has no value for is a DoesNotExist requirement.
        for key in [
            labels::SKU_GPU_NAME,
            labels::SKU_GPU_MANUFACTURER,
            labels::SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE,
            labels::FIPS_ENABLED,
        ] {
            let requirement = it.requirements.get(key);
            assert_eq!(
                requirement.operator() == Operator::DoesNotExist,
                label(key).is_empty(),
                "{name} {key}: {requirement}"
            );
        }
        // Zones: each available zone as <region>-<n>, plus the regional 0.
        let mut zones: Vec<String> = row["available_zones"]
            .split(';')
            .filter(|z| !z.is_empty())
            .map(|z| format!("{}-{z}", row["region"]))
            .collect();
        zones.push("0".to_owned());
        zones.sort();
        let offered: std::collections::BTreeSet<String> =
            it.offerings.iter().map(|o| o.zone.clone()).collect();
        assert_eq!(offered.into_iter().collect::<Vec<_>>(), zones, "{name}");
        let spot = it.offerings.iter().any(|o| o.capacity_type == "spot");
        assert_eq!(spot, row["low_priority_capable"] != "False", "{name}");
    }
}

#[test]
fn the_static_filters_agree_with_the_fixtures_and_the_broad_catalog() {
    let catalog = Catalog::embedded();
    let joined = |reasons: Vec<instancetype::Exclusion>| {
        reasons
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(";")
    };
    for row in skus_csv() {
        let sku = catalog.sku(&row["name"]).expect("in the catalog");
        let placement = catalog.placement(&row["region"], &sku.name);
        let reasons = joined(static_exclusions(catalog, sku, placement));
        assert_eq!(
            reasons, row["derived_karpenter_excluded_by"],
            "{} in {}",
            sku.name, row["region"]
        );
    }
    let mut checked = 0;
    for row in rows(include_str!("../data/static-exclusions.csv")) {
        if row["name_parse_ok"] != "true" {
            continue; // upstream skips these by name; the vector does not say so
        }
        let sku = catalog.sku(&row["name"]).expect("in the catalog");
        let expected = row["excluded_by_static_rules"]
            .replace("aks-restricted", "restricted-list")
            .replace("memory-maybe<3.5GiB(floor=3)", "memory<3.5GiB");
        // This vector lists the reasons in its own order.
        let sorted = |text: &str| {
            let mut reasons: Vec<String> = text
                .split(';')
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect();
            reasons.sort();
            reasons
        };
        assert_eq!(
            sorted(&joined(static_exclusions(catalog, sku, None))),
            sorted(&expected),
            "{}",
            sku.name
        );
        checked += 1;
    }
    assert!(checked > 1300, "{checked}");
}

#[test]
fn prices_come_from_the_regions_table_else_eastus_else_999() {
    let catalog = Catalog::embedded();
    let d4 = catalog.sku("Standard_D4s_v5").expect("D4s_v5");
    for (region, price) in [
        ("eastus", 0.192),
        ("westeurope", 0.23),
        ("westus2", 0.192),
        ("northeurope", 0.214),
        ("centralus", 0.217),
    ] {
        assert_eq!(instancetype::price(catalog, d4, region), price, "{region}");
    }
    // A region without a table falls back to eastus's.
    assert_eq!(instancetype::price(catalog, d4, "westusstage"), 0.192);
    // A size upstream does not know is priced 999.
    let unknown = catalog
        .skus()
        .iter()
        .find(|s| !s.known)
        .expect("an unknown size");
    assert_eq!(instancetype::price(catalog, unknown, "eastus"), 999.0);
    // Every region with a table prices D4s_v5, and the offerings carry it.
    for region in catalog.regions().filter(|r| r.has_prices) {
        let price = instancetype::price(catalog, d4, &region.name);
        assert!(price > 0.0, "{}", region.name);
        let offerings = instancetype::offerings(catalog, d4, &region.name);
        assert!(offerings.iter().all(|o| o.price == price));
        assert_eq!(
            offerings.len(),
            2 * (region.zone_count as usize + 1),
            "{}",
            region.name
        );
    }
}

#[test]
fn every_priced_region_has_instance_types() {
    let catalog = Catalog::embedded();
    for region in catalog.regions().filter(|r| r.has_prices) {
        let types = instancetype::instance_types(catalog, &Settings::for_region(&region.name));
        assert!(types.len() > 700, "{}: {}", region.name, types.len());
    }
}

/// A selector on a label some sizes lack keeps only the sizes that carry a
/// value it allows (their nodes have the label; the others' do not), and a
/// selector that only excludes values keeps the sizes without the label.
#[test]
fn a_selector_on_a_label_a_size_lacks_leaves_that_size_out() {
    let catalog = Catalog::embedded();
    let types = instancetype::instance_types(catalog, &Settings::for_region("eastus"));
    let selecting = |requirement: Requirement| {
        let requirements: Requirements = [requirement].into_iter().collect();
        types
            .iter()
            .filter(|t| t.intersects(&requirements))
            .collect::<Vec<_>>()
    };
    let label = |t: &karpenter_core::cloudprovider::InstanceType, key: &str| {
        t.requirements.labels().get(key).cloned()
    };
    let t4 = selecting(Requirement::in_values(labels::SKU_GPU_NAME, ["T4"]));
    assert!(!t4.is_empty());
    assert!(
        t4.iter()
            .all(|t| label(t, labels::SKU_GPU_NAME).as_deref() == Some("T4")),
        "{:?}",
        t4.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    let nvidia = selecting(Requirement::in_values(
        labels::SKU_GPU_MANUFACTURER,
        ["nvidia"],
    ));
    assert!(!nvidia.is_empty() && nvidia.len() < types.len() / 4);
    assert!(
        nvidia
            .iter()
            .all(|t| label(t, labels::SKU_GPU_MANUFACTURER).as_deref() == Some("nvidia"))
    );
    let ephemeral = selecting(
        Requirement::new(
            labels::SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE,
            Operator::Gt,
            ["100"],
            None,
        )
        .expect("a requirement"),
    );
    assert!(!ephemeral.is_empty());
    assert!(ephemeral.iter().all(|t| {
        label(t, labels::SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE)
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|gb| gb > 100)
    }));
    let gen2 = selecting(Requirement::in_values(labels::SKU_HYPERV_GENERATION, ["2"]));
    assert!(!gen2.is_empty() && gen2.len() < types.len() / 4);
    // Excluding T4 keeps every size without a GPU name.
    let not_t4 = selecting(Requirement::not_in(labels::SKU_GPU_NAME, ["T4"]));
    assert_eq!(not_t4.len(), types.len() - t4.len());
}

/// Each offering requires its own priority, placement scope and Ultra SSD
/// values, and the type allows every value of its offerings; a claim asking
/// for Ultra SSD gets the regional offering, the one the size's regional
/// capability enables.
#[test]
fn each_offering_requires_its_priority_placement_scope_and_ultra_ssd() {
    use karpenter_core::cloudprovider::choose_offering;
    use karpenter_core::resources::ResourceList;

    let catalog = Catalog::embedded();
    let settings = Settings::for_region("eastus");
    let values = |r: Option<&Requirement>| -> Vec<String> {
        r.map(|r| r.values().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    for (size, ultra) in [("Standard_D4s_v3", true), ("Standard_D128ds_v6", false)] {
        let sku = catalog.sku(size).expect("in the catalog");
        let it = instance_type(catalog, sku, &settings).expect("offered");
        for o in &it.offerings {
            let priority = if o.capacity_type == "spot" {
                "spot"
            } else {
                "regular"
            };
            let scope = if o.zone == "0" { "regional" } else { "zonal" };
            let got = |key: &str| values(o.requirements.get_defined(key));
            assert_eq!(got(labels::SCALE_SET_PRIORITY), [priority], "{size} {o:?}");
            assert_eq!(got(labels::PRIORITY), [priority], "{size} {o:?}");
            assert_eq!(got(labels::PLACEMENT_SCOPE), [scope], "{size} {o:?}");
            let expected: &[&str] = if ultra && o.zone == "0" {
                &["false", "true"]
            } else {
                &["false"]
            };
            assert_eq!(got(labels::SKU_STORAGE_ULTRA_SSD), expected, "{size} {o:?}");
        }
        let on_type = |key: &str| values(it.requirements.get_defined(key));
        assert_eq!(on_type(labels::SCALE_SET_PRIORITY), ["regular", "spot"]);
        assert_eq!(on_type(labels::PLACEMENT_SCOPE), ["regional", "zonal"]);
        let wants_ultra: Requirements = [Requirement::in_values(
            labels::SKU_STORAGE_ULTRA_SSD,
            ["true"],
        )]
        .into_iter()
        .collect();
        let chosen = choose_offering(
            std::slice::from_ref(&it),
            &wants_ultra,
            &ResourceList::new(),
            &labels::well_known_labels(),
            |a, b| a.1.price.total_cmp(&b.1.price),
        );
        match chosen {
            Ok((_, o)) => assert!(ultra && o.zone == "0", "{size}: {o:?}"),
            Err(_) => assert!(!ultra, "{size}"),
        }
    }
}

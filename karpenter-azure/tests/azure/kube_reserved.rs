//! Kube-reserved CPU and memory as upstream computes them, at every vCPU
//! count a VM size has (1 to 416) and at the memory tiers' edges.

use karpenter_azure::Catalog;
use karpenter_azure::instancetype::{
    Settings, instance_type, kube_reserved_cpu_millis, kube_reserved_memory_mib,
};

/// The tiers in whole millicores: 60 for the first core, 40 for the second,
/// 20 each for the third and fourth, 10 for each core above four.
fn exact_cpu_millis(vcpus: u32) -> i64 {
    let v = i64::from(vcpus);
    60 * v.min(1) + 40 * (v - 1).clamp(0, 1) + 20 * (v - 2).clamp(0, 2) + 10 * (v - 4).max(0)
}

/// The vCPU counts from 1 to 416 where upstream reserves one millicore less
/// than the exact tiers: its Go code sums the tiers in IEEE-754 doubles
/// (each tier's cores times its rate, added to the running total, unfused)
/// and truncates 1000 times the sum, which lands just under the whole
/// number here. Worked out apart from this crate, by that arithmetic.
const FLOAT_SHORTFALLS: [(u32, i64); 18] = [
    (101, 1109),
    (120, 1299),
    (122, 1319),
    (124, 1339),
    (126, 1359),
    (145, 1549),
    (147, 1569),
    (149, 1589),
    (151, 1609),
    (172, 1819),
    (174, 1839),
    (176, 1859),
    (392, 4019),
    (396, 4059),
    (405, 4149),
    (409, 4189),
    (413, 4229),
    (414, 4239),
];

#[test]
fn kube_reserved_cpu_is_upstreams_at_every_vcpu_count() {
    // The tiers' edges, as upstream's unit tests and the AKS docs give them.
    for (vcpus, millis) in [(1, 60), (2, 100), (3, 120), (4, 140), (5, 150), (8, 180)] {
        assert_eq!(kube_reserved_cpu_millis(vcpus), millis, "{vcpus} vCPUs");
    }
    for vcpus in 1..=416 {
        let expected = FLOAT_SHORTFALLS
            .iter()
            .find(|(v, _)| *v == vcpus)
            .map_or_else(|| exact_cpu_millis(vcpus), |(_, millis)| *millis);
        assert_eq!(kube_reserved_cpu_millis(vcpus), expected, "{vcpus} vCPUs");
    }
    assert_eq!(kube_reserved_cpu_millis(0), 0);
}

#[test]
fn sizes_of_120_and_176_vcpus_keep_upstreams_allocatable_cpu() {
    let catalog = Catalog::embedded();
    let settings = Settings::for_region("eastus");
    for (size, vcpus, reserved) in [
        ("Standard_HB120rs_v3", 120, 1299),
        ("Standard_HX176rs", 176, 1859),
    ] {
        let sku = catalog.sku(size).expect("in the catalog");
        assert_eq!(sku.vcpus, vcpus);
        let it = instance_type(catalog, sku, &settings).expect("offered");
        assert_eq!(it.overhead.get("cpu"), reserved, "{size}");
        assert_eq!(
            it.allocatable().get("cpu"),
            i64::from(vcpus) * 1000 - reserved,
            "{size}"
        );
    }
}

#[test]
fn kube_reserved_memory_is_upstreams_at_the_tiers_edges() {
    // Upstream's unit tests pin 7, 8 and 64 GiB; the rest follow the tiers
    // (25 % of 4, 20 % of 4, 10 % of 8, 6 % of 112, 2 % above), truncated.
    for (gib, mib) in [
        (0.75, 192),
        (4.0, 1024),
        (7.0, 1638),
        (8.0, 1843),
        (16.0, 2662),
        (64.0, 5611),
        (128.0, 9543),
        (256.0, 12165),
        (11_400.0, 240_394),
    ] {
        assert_eq!(kube_reserved_memory_mib(gib), mib, "{gib} GiB");
    }
}

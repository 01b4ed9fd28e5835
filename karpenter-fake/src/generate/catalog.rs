//! Generated instance-type catalogs, after upstream's fake provider.

use karpenter_core::cloudprovider::{InstanceType, Offering};
use karpenter_core::resources::{self, ResourceList};
use karpenter_core::scheduling::{
    ARCHITECTURE_AMD64, CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, LABEL_ARCH_STABLE,
    LABEL_OS_STABLE,
};

/// The zones of upstream's fake offerings.
pub const ZONES: [&str; 3] = ["test-zone-1", "test-zone-2", "test-zone-3"];

const GIB: i64 = 1024 * 1024 * 1024 * 1000; // in milli-units

/// Upstream's price for a fake type: 0.1 per vCPU plus 0.1 per GiB.
pub fn fake_price(cpus: i64, memory_gib: i64) -> f64 {
    0.1 * cpus as f64 + 0.1 * memory_gib as f64
}

/// A fake type as upstream's `NewInstanceType` makes it: five offerings at one price
/// (spot in zones 1 and 2, on-demand in zones 1, 2 and 3), an overhead of 100m cpu
/// and 10Mi memory, amd64 and linux.
pub fn fake_instance_type(name: &str, cpus: i64, memory_gib: i64, pods: i64) -> InstanceType {
    let price = fake_price(cpus, memory_gib);
    let offerings = vec![
        Offering::new(ZONES[0], CAPACITY_TYPE_SPOT, price),
        Offering::new(ZONES[1], CAPACITY_TYPE_SPOT, price),
        Offering::new(ZONES[0], CAPACITY_TYPE_ON_DEMAND, price),
        Offering::new(ZONES[1], CAPACITY_TYPE_ON_DEMAND, price),
        Offering::new(ZONES[2], CAPACITY_TYPE_ON_DEMAND, price),
    ];
    let mut capacity = ResourceList::new();
    capacity.set(resources::CPU, cpus * 1000);
    capacity.set(resources::MEMORY, memory_gib * GIB);
    capacity.set(resources::PODS, pods * 1000);
    let mut overhead = ResourceList::new();
    overhead.set(resources::CPU, 100);
    overhead.set(resources::MEMORY, 10 * 1024 * 1024 * 1000);
    let labels = [
        (LABEL_ARCH_STABLE, ARCHITECTURE_AMD64),
        (LABEL_OS_STABLE, "linux"),
    ];
    InstanceType::new(name, labels, offerings, capacity, overhead)
}

/// `n` types as upstream's `fake.InstanceTypes(n)`: type `i` has i+1 vCPU,
/// 2(i+1) GiB and 10(i+1) pods. The scheduling benchmark uses 400.
pub fn sized_instance_types(n: usize) -> Vec<InstanceType> {
    (1..=n as i64)
        .map(|i| fake_instance_type(&format!("fake-it-{i}"), i, 2 * i, 10 * i))
        .collect()
}

/// Upstream's price for resources in `InstanceTypesAssorted`:
/// 0.1 per vCPU plus 0.1 per GB (10^9 bytes) of memory.
fn price_per_gb(cpus: i64, memory_gib: i64) -> f64 {
    let bytes = memory_gib as f64 * (1u64 << 30) as f64;
    0.1 * cpus as f64 + 0.1 * bytes / 1e9
}

/// Upstream's `InstanceTypesAssorted()`: the cross product of 1-64 vCPU
/// (powers of two), 1-128 GiB memory (powers of two), the three zones, spot
/// and on-demand, linux and windows, amd64 and arm64 (2,688 types), each with
/// exactly one offering, 5 pods, and upstream's default overhead (100m cpu,
/// 10Mi memory). Names read `<cpu>-cpu-<mem>-mem-<arch>-<os>-<zone>-<capacity>`.
pub fn assorted_instance_types() -> Vec<InstanceType> {
    let mut types = Vec::new();
    for cpus in [1, 2, 4, 8, 16, 32, 64] {
        for memory_gib in [1, 2, 4, 8, 16, 32, 64, 128] {
            for zone in ZONES {
                for capacity_type in [CAPACITY_TYPE_SPOT, CAPACITY_TYPE_ON_DEMAND] {
                    for os in ["linux", "windows"] {
                        for arch in [ARCHITECTURE_AMD64, "arm64"] {
                            let name = format!(
                                "{cpus}-cpu-{memory_gib}-mem-{arch}-{os}-{zone}-{capacity_type}"
                            );
                            let mut capacity = ResourceList::new();
                            capacity.set(resources::CPU, cpus * 1000);
                            capacity.set(resources::MEMORY, memory_gib * GIB);
                            capacity.set(resources::PODS, 5 * 1000);
                            let mut overhead = ResourceList::new();
                            overhead.set(resources::CPU, 100);
                            overhead.set(resources::MEMORY, 10 * 1024 * 1024 * 1000);
                            let offering =
                                Offering::new(zone, capacity_type, price_per_gb(cpus, memory_gib));
                            let labels = [(LABEL_ARCH_STABLE, arch), (LABEL_OS_STABLE, os)];
                            types.push(InstanceType::new(
                                name,
                                labels,
                                vec![offering],
                                capacity,
                                overhead,
                            ));
                        }
                    }
                }
            }
        }
    }
    types
}

/// The vCPU sizes of [`three_families`].
pub const FAMILY_SIZES: [i64; 9] = [2, 4, 8, 16, 32, 48, 64, 80, 96];

/// Three families of the same sizes (2 to 96 vCPU): `c` with 2 GiB per vCPU,
/// `m` with 4 and `r` with 8, priced linearly within a family (0.0425, 0.048
/// and 0.063 per vCPU per hour, near public cloud prices), each node keeping
/// an overhead of 100m cpu plus 60m per vCPU and 0.75 GiB plus 5 % of memory.
/// On-demand in three zones. The cost-packing benchmark's catalog.
pub fn three_families() -> Vec<InstanceType> {
    let families = [("c", 2, 0.0425), ("m", 4, 0.048), ("r", 8, 0.063)];
    let mut types = Vec::new();
    for (family, gib_per_cpu, price_per_cpu) in families {
        for cpus in FAMILY_SIZES {
            let memory = cpus * gib_per_cpu * GIB;
            let price = price_per_cpu * cpus as f64;
            let offerings = ZONES
                .iter()
                .map(|zone| Offering::new(*zone, CAPACITY_TYPE_ON_DEMAND, price))
                .collect();
            let mut capacity = ResourceList::new();
            capacity.set(resources::CPU, cpus * 1000);
            capacity.set(resources::MEMORY, memory);
            capacity.set(resources::PODS, 110 * 1000);
            let mut overhead = ResourceList::new();
            overhead.set(resources::CPU, 100 + 60 * cpus);
            overhead.set(resources::MEMORY, 3 * GIB / 4 + memory / 20);
            let labels = [
                (LABEL_ARCH_STABLE, ARCHITECTURE_AMD64),
                (LABEL_OS_STABLE, "linux"),
            ];
            types.push(InstanceType::new(
                format!("{family}-{cpus}x"),
                labels,
                offerings,
                capacity,
                overhead,
            ));
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_families_of_nine_sizes_priced_linearly() {
        let types = three_families();
        assert_eq!(types.len(), 27);
        let r8 = types.iter().find(|t| t.name == "r-8x").expect("r-8x");
        assert_eq!(r8.capacity.get("memory"), 64 * GIB);
        assert!((r8.offerings[0].price - 0.504).abs() < 1e-12);
        assert!(r8.allocatable().get("cpu") < 8000);
    }

    #[test]
    fn sized_types_grow_linearly_with_five_offerings_each() {
        let types = sized_instance_types(400);
        assert_eq!(types.len(), 400);
        let last = &types[399];
        assert_eq!(last.capacity.get(resources::CPU), 400_000);
        assert_eq!(last.capacity.get(resources::PODS), 4_000_000);
        assert_eq!(last.offerings.len(), 5);
        assert!((last.offerings[0].price - fake_price(400, 800)).abs() < 1e-9);
    }

    #[test]
    fn the_assorted_catalog_is_upstreams_cross_product() {
        let types = assorted_instance_types();
        assert_eq!(types.len(), 7 * 8 * 3 * 2 * 2 * 2);
        let names: std::collections::BTreeSet<&str> =
            types.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), types.len(), "names are unique");
        assert!(types.iter().all(|t| t.offerings.len() == 1));
        let windows_arm = types
            .iter()
            .find(|t| t.name == "4-cpu-8-mem-arm64-windows-test-zone-2-spot")
            .expect("a windows arm64 spot type in zone 2");
        assert_eq!(windows_arm.capacity.get(resources::CPU), 4_000);
        assert_eq!(windows_arm.offerings[0].zone, "test-zone-2");
        assert_eq!(windows_arm.offerings[0].capacity_type, CAPACITY_TYPE_SPOT);
        // 0.1 per vCPU and 0.1 per GB: 0.4 + 0.1 * 8 GiB / 10^9 bytes.
        let expected = 0.4 + 0.1 * 8.0 * 1_073_741_824.0 / 1e9;
        assert!((windows_arm.offerings[0].price - expected).abs() < 1e-12);
        let os = windows_arm
            .requirements
            .get_defined(LABEL_OS_STABLE)
            .map(|r| r.values().collect::<Vec<_>>());
        assert_eq!(os, Some(vec!["windows"]));
    }
}

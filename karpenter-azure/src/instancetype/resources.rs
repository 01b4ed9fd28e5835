//! Capacity and overhead by AKS's formulas (upstream `instancetype.go`):
//! memory floored to whole GiB less the VM's share, tiered kube-reserved CPU
//! and memory, a 750 MiB eviction threshold, no system-reserved.

use karpenter_core::resources::ResourceList;

use crate::catalog::{Catalog, Sku};

use super::Settings;

/// The share of memory the VM keeps by default (upstream's 7.5 %).
pub const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT: f64 = 0.075;
/// The kubelet's hard eviction threshold for memory, in MiB.
pub const EVICTION_THRESHOLD_MIB: i64 = 750;

const MIB: i64 = 1 << 20;
const GIB: i64 = 1 << 30;

/// Memory capacity in bytes: the API's GiB floored to whole GiB, less
/// `overhead_percent` of that (rounded up), as upstream computes it.
pub fn memory_capacity_bytes(memory_gib: f64, overhead_percent: f64) -> i64 {
    let whole = memory_gib.floor() as i64 * GIB;
    // Float arithmetic, rounded up, as upstream's.
    let kept = (whole as f64 * overhead_percent).ceil() as i64;
    whole - kept
}

/// One tier of a tiered reservation: its upper bound and the rate of the
/// part of the amount between the previous tier's bound and it.
type Tier = (f64, f64);

/// Kube-reserved CPU by core: 6 % of the first, 4 % of the second, 2 % of
/// the third and fourth, 1 % of each core above four.
const CPU_TIERS: [Tier; 4] = [(1.0, 0.06), (2.0, 0.04), (4.0, 0.02), (f64::MAX, 0.01)];

/// Kube-reserved memory by GiB: 25 % of the first 4, 20 % of the next 4,
/// 10 % of the next 8, 6 % of the next 112, 2 % above 128.
const MEMORY_TIERS: [Tier; 5] = [
    (4.0, 0.25),
    (8.0, 0.20),
    (16.0, 0.10),
    (128.0, 0.06),
    (f64::MAX, 0.02),
];

/// The reservation of `amount` under `tiers`, summed in binary floating
/// point tier by tier from the lowest, each tier's part times its rate added
/// to the running total, as upstream sums it. The float sum matters: the
/// callers truncate it, and where it lands just under a whole number (at 120
/// and 176 vCPUs, say) upstream reserves one millicore less than the exact
/// tiers give. Rust never fuses the multiply and the add, so this is the
/// value upstream's amd64 build computes (Go may fuse them on arm64, which
/// would give the exact value there).
fn tiered(amount: f64, tiers: &[Tier]) -> f64 {
    let mut lower = 0.0;
    let mut total = 0.0;
    for &(upper, rate) in tiers {
        if lower > amount {
            break;
        }
        total += (upper.min(amount) - lower) * rate;
        lower = upper;
    }
    total
}

/// Kube-reserved CPU in millicores: the CPU tiers over the vCPUs, summed in
/// doubles and truncated as upstream computes them, so one millicore under
/// the exact tiers where the sum falls just short (1299 at 120 vCPUs and
/// 1859 at 176, not 1300 and 1860).
pub fn kube_reserved_cpu_millis(vcpus: u32) -> i64 {
    // `as` truncates toward zero, as Go's conversion does.
    (1000.0 * tiered(f64::from(vcpus), &CPU_TIERS)) as i64
}

/// Kube-reserved memory in MiB, truncated: the memory tiers over the API's
/// (unfloored) GiB, in upstream's float arithmetic.
pub fn kube_reserved_memory_mib(memory_gib: f64) -> i64 {
    (1024.0 * tiered(memory_gib, &MEMORY_TIERS)) as i64
}

/// What a node of the size has: cpu, memory, ephemeral storage (the OS
/// disk, decimal GB), pods, and GPUs when the registry lists them.
pub fn capacity(catalog: &Catalog, sku: &Sku, settings: &Settings) -> ResourceList {
    let mut capacity = ResourceList::new();
    capacity.set("cpu", i64::from(sku.vcpus) * 1000);
    capacity.set(
        "memory",
        memory_capacity_bytes(sku.memory_gib, settings.vm_memory_overhead_percent) * 1000,
    );
    capacity.set(
        "ephemeral-storage",
        i64::from(settings.os_disk_size_gb) * 1_000_000_000 * 1000,
    );
    capacity.set("pods", i64::from(settings.max_pods) * 1000);
    if let Some(gpu) = catalog.gpu(&sku.name).filter(|_| sku.gpus > 0) {
        let resource = match gpu.manufacturer.as_str() {
            "amd" => "amd.com/gpu",
            _ => "nvidia.com/gpu",
        };
        capacity.set(resource, i64::from(sku.gpus) * 1000);
    }
    capacity
}

/// What the system keeps: kube-reserved CPU and memory plus the eviction
/// threshold.
pub fn overhead(sku: &Sku) -> ResourceList {
    let mut overhead = ResourceList::new();
    overhead.set("cpu", kube_reserved_cpu_millis(sku.vcpus));
    let memory = (kube_reserved_memory_mib(sku.memory_gib) + EVICTION_THRESHOLD_MIB) * MIB;
    overhead.set("memory", memory * 1000);
    overhead
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream's unit tests pin these.
    #[test]
    fn kube_reserved_matches_upstreams_pinned_values() {
        assert_eq!(
            (kube_reserved_cpu_millis(2), kube_reserved_memory_mib(8.0)),
            (100, 1843)
        );
        assert_eq!(
            (kube_reserved_cpu_millis(4), kube_reserved_memory_mib(7.0)),
            (140, 1638)
        );
        assert_eq!(
            (kube_reserved_cpu_millis(3), kube_reserved_memory_mib(64.0)),
            (120, 5611)
        );
        assert_eq!(kube_reserved_cpu_millis(128), 1380);
        assert_eq!(kube_reserved_memory_mib(256.0), 12165);
        assert_eq!(memory_capacity_bytes(8.0, 0.075), 7_945_689_497);
    }
}

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

/// Kube-reserved CPU in millicores: 6 % of the first core, 4 % of the second,
/// 2 % of the third and fourth, 1 % of each core above four.
pub fn kube_reserved_cpu_millis(vcpus: u32) -> i64 {
    let v = i64::from(vcpus);
    60 * v.min(1) + 40 * (v - 1).clamp(0, 1) + 20 * (v - 2).clamp(0, 2) + 10 * (v - 4).max(0)
}

/// Kube-reserved memory in MiB, truncated: 25 % of the first 4 GiB, 20 % of
/// the next 4, 10 % of the next 8, 6 % of the next 112, 2 % above 128 GiB, of
/// the API's (unfloored) memory.
pub fn kube_reserved_memory_mib(memory_gib: f64) -> i64 {
    // In thousandths of a GiB, so that the tiers add up exactly.
    let m = (memory_gib * 1000.0).round() as i64;
    let percent_milli_gib = 25 * m.min(4000)
        + 20 * (m - 4000).clamp(0, 4000)
        + 10 * (m - 8000).clamp(0, 8000)
        + 6 * (m - 16000).clamp(0, 112_000)
        + 2 * (m - 128_000).max(0);
    percent_milli_gib * 1024 / 100_000
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

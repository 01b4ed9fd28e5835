//! Capacity and overhead as upstream computes them
//! (`pkg/providers/instancetype/types.go`) for an AL2023 node class with no
//! kubelet settings, no block device mappings and no network interfaces:
//! memory less the VM's share, ENI-limited pods, tiered kube-reserved CPU,
//! kube-reserved memory by ENI-limited pods, the kubelet's default hard
//! eviction thresholds, and AL2023's 20 GiB root volume.

use karpenter_core::resources::ResourceList;

use crate::catalog::{Arch, Catalog, TypeRecord};

/// The share of memory the VM keeps (`--vm-memory-overhead-percent`).
pub(crate) const VM_MEMORY_OVERHEAD_PERCENT: f64 = 0.075;
/// Memory the Graviton firmware keeps (CMA), MiB.
const ARM64_RESERVED_MIB: u64 = 64;
/// ENIs kept back from pods (`--reserved-enis`).
const RESERVED_ENIS: u32 = 0;
/// The kubelet's default `memory.available` hard eviction threshold, MiB.
const EVICTION_MEMORY_MIB: i64 = 100;
/// The kubelet's default `nodefs.available` hard eviction threshold, percent.
const EVICTION_NODEFS_PERCENT: f64 = 10.0;
/// AL2023's default root volume (`/dev/xvda`), which holds the kubelet's
/// and containerd's data.
const AL2023_ROOT_VOLUME_BYTES: i64 = 20 * GIB;
/// Kube-reserved ephemeral storage by default.
const KUBE_RESERVED_EPHEMERAL_BYTES: i64 = GIB;

/// `vpc.amazonaws.com/pod-eni`.
pub(crate) const RESOURCE_POD_ENI: &str = "vpc.amazonaws.com/pod-eni";
/// `vpc.amazonaws.com/efa`.
pub(crate) const RESOURCE_EFA: &str = "vpc.amazonaws.com/efa";
/// `nvidia.com/gpu`.
pub(crate) const RESOURCE_NVIDIA_GPU: &str = "nvidia.com/gpu";
/// `amd.com/gpu`.
pub(crate) const RESOURCE_AMD_GPU: &str = "amd.com/gpu";
/// `habana.ai/gaudi`.
pub(crate) const RESOURCE_HABANA_GAUDI: &str = "habana.ai/gaudi";
/// `aws.amazon.com/neuron`: Neuron devices.
pub(crate) const RESOURCE_NEURON: &str = "aws.amazon.com/neuron";
/// `aws.amazon.com/neuroncore`: Neuron cores over all devices.
pub(crate) const RESOURCE_NEURON_CORE: &str = "aws.amazon.com/neuroncore";

const MIB: i64 = 1 << 20;
const GIB: i64 = 1 << 30;
/// Milli-units per unit, as `ResourceList` counts.
const MILLI: i64 = 1000;

/// Memory capacity in MiB: EC2's MiB less 64 on arm64, less the VM's share
/// of that, rounded up (in floating point, as upstream).
pub(crate) fn memory_capacity_mib(memory_mib: u64, arch: Arch, overhead_percent: f64) -> i64 {
    let usable = match arch {
        Arch::Arm64 => memory_mib.saturating_sub(ARM64_RESERVED_MIB),
        Arch::Amd64 => memory_mib,
    };
    let usable = i64::try_from(usable).unwrap_or(i64::MAX / MIB);
    let kept = ((usable * MIB) as f64 * overhead_percent / MIB as f64).ceil() as i64;
    usable - kept
}

/// Pods by ENIs: the default network card's ENIs less the reserved ones,
/// each with its addresses less its own, plus 2 (host-network pods); 0 when
/// no ENI is left. A type without VPC limits keeps the page's count.
pub(crate) fn eni_limited_pods(catalog: &Catalog, record: &TypeRecord, reserved_enis: u32) -> i64 {
    match catalog.vpc_limits(record.name) {
        Some(limits) => {
            let usable = i64::from(limits.default_card_interfaces.saturating_sub(reserved_enis));
            if usable == 0 {
                0
            } else {
                usable * (i64::from(limits.ipv4_per_interface) - 1) + 2
            }
        }
        None => record.published_pods.map_or(0, i64::from),
    }
}

/// Kube-reserved CPU in millicores: 6 % of the first core, 1 % of the
/// second, 0.5 % of the third and fourth, 0.25 % of the rest, each tier
/// truncated to whole millicores.
pub(crate) fn kube_reserved_cpu_millis(vcpus: u32) -> i64 {
    const TIERS: [(i64, i64, f64); 4] = [
        (0, 1000, 0.06),
        (1000, 2000, 0.01),
        (2000, 4000, 0.005),
        (4000, 1 << 31, 0.0025),
    ];
    let cpu = i64::from(vcpus) * MILLI;
    TIERS
        .iter()
        .filter(|(start, _, _)| cpu >= *start)
        .map(|&(start, end, rate)| ((cpu.min(end) - start) as f64 * rate) as i64)
        .sum()
}

/// Kube-reserved memory in MiB: 11 per pod plus 255, by ENI-limited pods
/// (AL2023 counts those whatever `maxPods` says).
pub(crate) fn kube_reserved_memory_mib(eni_limited_pods: i64) -> i64 {
    11 * eni_limited_pods + 255
}

/// What a node of the type has.
pub(crate) fn capacity(catalog: &Catalog, record: &TypeRecord) -> ResourceList {
    let mut capacity = ResourceList::new();
    capacity.set("cpu", i64::from(record.vcpus) * MILLI);
    let memory = memory_capacity_mib(record.memory_mib, record.arch, VM_MEMORY_OVERHEAD_PERCENT);
    capacity.set("memory", memory * MIB * MILLI);
    capacity.set("ephemeral-storage", AL2023_ROOT_VOLUME_BYTES * MILLI);
    let pods = eni_limited_pods(catalog, record, RESERVED_ENIS);
    capacity.set("pods", pods * MILLI);
    for (resource, count) in devices(catalog, record) {
        capacity.set(resource, count * MILLI);
    }
    capacity
}

/// The extended resources: branch ENIs, GPUs by maker, Neuron devices and
/// cores, EFA interfaces.
fn devices(catalog: &Catalog, record: &TypeRecord) -> Vec<(&'static str, i64)> {
    let pod_eni = catalog.vpc_limits(record.name).map_or(0, |l| l.pod_eni);
    let gpus = record
        .label("instance-gpu-count")
        .and_then(|c| c.parse::<i64>().ok())
        .unwrap_or(0);
    let gpu_resource = match record.label("instance-gpu-manufacturer") {
        Some("nvidia") => Some(RESOURCE_NVIDIA_GPU),
        Some("amd") => Some(RESOURCE_AMD_GPU),
        Some("habana") => Some(RESOURCE_HABANA_GAUDI),
        _ => None,
    };
    // Only Neuron accelerators are AWS's; an inference accelerator of
    // another maker (Qualcomm) is a label, not a resource.
    let neuron = match record.label("instance-accelerator-manufacturer") {
        Some("aws") => record
            .label("instance-accelerator-count")
            .and_then(|c| c.parse::<i64>().ok())
            .unwrap_or(0),
        _ => 0,
    };
    let mut devices = vec![
        (RESOURCE_POD_ENI, i64::from(pod_eni)),
        (RESOURCE_NEURON, neuron),
        (RESOURCE_NEURON_CORE, i64::from(record.neuron_cores)),
        (RESOURCE_EFA, i64::from(record.efa)),
    ];
    if let Some(resource) = gpu_resource {
        devices.push((resource, gpus));
    }
    devices
}

/// What the system keeps: kube-reserved cpu, memory and ephemeral storage
/// plus the hard eviction thresholds for memory and the root volume.
pub(crate) fn overhead(catalog: &Catalog, record: &TypeRecord) -> ResourceList {
    let mut overhead = ResourceList::new();
    overhead.set("cpu", kube_reserved_cpu_millis(record.vcpus));
    let pods = eni_limited_pods(catalog, record, RESERVED_ENIS);
    let memory_mib = kube_reserved_memory_mib(pods) + EVICTION_MEMORY_MIB;
    overhead.set("memory", memory_mib * MIB * MILLI);
    let eviction_storage =
        (AL2023_ROOT_VOLUME_BYTES as f64 / 100.0 * EVICTION_NODEFS_PERCENT).ceil() as i64;
    overhead.set(
        "ephemeral-storage",
        (KUBE_RESERVED_EPHEMERAL_BYTES + eviction_storage) * MILLI,
    );
    overhead
}

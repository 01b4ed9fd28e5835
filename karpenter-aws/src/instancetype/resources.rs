//! Capacity and overhead as upstream computes them
//! (`pkg/providers/instancetype/types.go`) under a NodeClass's settings
//! and the provider's options ([`NodeSettings`]): memory less the VM's
//! share, pods by `maxPods`, ENIs (less reserved and `efa-only` ones) and
//! `podsPerCore`, the kubelet's volume,
//! tiered kube-reserved CPU, kube-reserved memory by pods, system-reserved,
//! and the hard eviction thresholds.

use karpenter_core::resources::ResourceList;

use crate::catalog::{Arch, Catalog, TypeRecord};

use super::settings::{NodeSettings, Threshold};

/// Memory the Graviton firmware keeps (CMA), MiB.
const ARM64_RESERVED_MIB: u64 = 64;
/// The kubelet's default `memory.available` hard eviction threshold, MiB.
const EVICTION_MEMORY_MIB: i64 = 100;
/// The kubelet's default `nodefs.available` hard eviction threshold, percent.
const EVICTION_NODEFS_PERCENT: f64 = 10.0;
/// Pods for a family without ENI-limited density (the kubelet's default).
const DEFAULT_PODS: i64 = 110;
/// Kube-reserved ephemeral storage by default.
const KUBE_RESERVED_EPHEMERAL_BYTES: i64 = GIB;

/// `vpc.amazonaws.com/pod-eni`.
pub(crate) const RESOURCE_POD_ENI: &str = "vpc.amazonaws.com/pod-eni";
/// `vpc.amazonaws.com/PrivateIPv4Address`: Windows pods' addresses.
pub(crate) const RESOURCE_PRIVATE_IPV4_ADDRESS: &str = "vpc.amazonaws.com/PrivateIPv4Address";
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
/// of that, rounded up (in floating point, as upstream); never below 0 (an
/// overhead of 100 % or more leaves nothing).
pub(crate) fn memory_capacity_mib(memory_mib: u64, arch: Arch, overhead_percent: f64) -> i64 {
    let usable = match arch {
        Arch::Arm64 => memory_mib.saturating_sub(ARM64_RESERVED_MIB),
        Arch::Amd64 => memory_mib,
    };
    let usable = i64::try_from(usable).map_or(i64::MAX / MIB, |mib| mib.min(i64::MAX / MIB));
    // `as` saturates a float too large for i64 (and reads NaN as 0).
    let kept = ((usable * MIB) as f64 * overhead_percent / MIB as f64).ceil() as i64;
    usable.saturating_sub(kept).max(0)
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

/// Pods a node of the type runs: `maxPods` when set, else the ENI-limited
/// count (110 for a family without ENI-limited density), capped at
/// `podsPerCore` per vCPU where the family honours it.
pub(crate) fn pods(catalog: &Catalog, record: &TypeRecord, settings: &NodeSettings) -> i64 {
    let count = match settings.max_pods {
        Some(max_pods) => max_pods.max(0),
        None if settings.eni_limited_pod_density() => eni_limited_pods(
            catalog,
            record,
            settings
                .reserved_enis
                .saturating_add(settings.efa_only_default_card),
        ),
        None => DEFAULT_PODS,
    };
    match settings.pods_per_core {
        Some(per_core) if per_core > 0 && settings.pods_per_core_enabled() => {
            count.min(per_core.saturating_mul(i64::from(record.vcpus)))
        }
        _ => count,
    }
}

/// The volume, in bytes, holding the kubelet's data: with `RAID0` the local
/// NVMe disks (decimal GB) of a type that has them, else the NodeClass's.
fn ephemeral_storage_bytes(record: &TypeRecord, settings: &NodeSettings) -> i64 {
    let local_gb = record
        .label("instance-local-nvme")
        .and_then(|gb| gb.parse::<i64>().ok());
    match local_gb {
        Some(gb) if settings.raid0 => gb.saturating_mul(1_000_000_000),
        _ => settings.volume_bytes,
    }
}

/// What a node of the type has under `settings`.
pub(crate) fn capacity(
    catalog: &Catalog,
    record: &TypeRecord,
    settings: &NodeSettings,
) -> ResourceList {
    let mut capacity = ResourceList::new();
    capacity.set("cpu", i64::from(record.vcpus) * MILLI);
    let memory = memory_capacity_mib(
        record.memory_mib,
        record.arch,
        settings.vm_memory_overhead_percent,
    );
    capacity.set("memory", memory * MIB * MILLI);
    let storage = ephemeral_storage_bytes(record, settings);
    capacity.set("ephemeral-storage", storage.saturating_mul(MILLI));
    capacity.set(
        "pods",
        pods(catalog, record, settings).saturating_mul(MILLI),
    );
    for (resource, count) in devices(catalog, record) {
        capacity.set(resource, count * MILLI);
    }
    if let Some(efa) = settings.efa_interfaces {
        capacity.set(RESOURCE_EFA, efa.saturating_mul(MILLI));
    }
    // Windows pods take their addresses from the VPC resource controller,
    // which advertises one per secondary address of the first ENI; upstream
    // offers Windows on amd64 only.
    if settings.family.is_windows() && record.arch == Arch::Amd64 {
        let addresses = catalog
            .vpc_limits(record.name)
            .map_or(0, |l| i64::from(l.ipv4_per_interface.saturating_sub(1)));
        capacity.set(RESOURCE_PRIVATE_IPV4_ADDRESS, addresses * MILLI);
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

/// Kube-reserved resources in milli-units: tiered CPU, 11 MiB per pod plus
/// 255 MiB, 1 GiB of ephemeral storage, each replaced by `kubeReserved`'s
/// value where it gives one. The pods are the ENI-limited count (no reserved
/// ENIs) for the families that size memory by it, else the node's pods.
pub(crate) fn kube_reserved(
    catalog: &Catalog,
    record: &TypeRecord,
    settings: &NodeSettings,
) -> ResourceList {
    let pods = if settings.eni_limited_memory_overhead() {
        eni_limited_pods(catalog, record, settings.efa_only_default_card)
    } else {
        pods(catalog, record, settings)
    };
    let mut reserved = ResourceList::new();
    reserved.set("cpu", kube_reserved_cpu_millis(record.vcpus));
    reserved.set("memory", kube_reserved_memory_mib(pods) * MIB * MILLI);
    reserved.set("ephemeral-storage", KUBE_RESERVED_EPHEMERAL_BYTES * MILLI);
    for (resource, milli) in &settings.kube_reserved {
        reserved.set(resource, *milli);
    }
    reserved
}

/// The hard eviction thresholds in milli-units: 100 MiB of memory and 10 %
/// of the kubelet's volume, each replaced by `evictionHard`'s
/// `memory.available` or `nodefs.available` (an amount, or a percentage of
/// the node's capacity).
pub(crate) fn eviction_threshold(capacity: &ResourceList, settings: &NodeSettings) -> ResourceList {
    let memory_bytes = capacity.get("memory") / MILLI;
    let storage_bytes = capacity.get("ephemeral-storage") / MILLI;
    let memory = match settings.eviction_memory {
        Some(threshold) => threshold.milli_of(memory_bytes),
        None => EVICTION_MEMORY_MIB * MIB * MILLI,
    };
    let storage = match settings.eviction_nodefs {
        Some(threshold) => threshold.milli_of(storage_bytes),
        None => Threshold::Percent(EVICTION_NODEFS_PERCENT).milli_of(storage_bytes),
    };
    let mut threshold = ResourceList::new();
    threshold.set("memory", memory);
    threshold.set("ephemeral-storage", storage);
    threshold
}

/// What the system keeps: kube-reserved, system-reserved and the hard
/// eviction thresholds, summed over the resources the node has (upstream
/// subtracts only those from capacity, so a reserved `pid` changes nothing).
pub(crate) fn overhead(
    catalog: &Catalog,
    record: &TypeRecord,
    settings: &NodeSettings,
    capacity: &ResourceList,
) -> ResourceList {
    let mut system = ResourceList::new();
    for (resource, milli) in &settings.system_reserved {
        system.set(resource, *milli);
    }
    let parts = [
        kube_reserved(catalog, record, settings),
        system,
        eviction_threshold(capacity, settings),
    ];
    let mut overhead = ResourceList::new();
    for (resource, capacity_milli) in capacity.iter() {
        let total = parts
            .iter()
            .fold(0_i64, |sum, part| sum.saturating_add(part.get(resource)));
        if capacity_milli != 0 {
            overhead.set(resource, total);
        }
    }
    overhead
}

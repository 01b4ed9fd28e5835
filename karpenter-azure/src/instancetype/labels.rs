//! The labels AKS nodes carry, as upstream registers them
//! (`pkg/apis/v1beta1/labels.go`), and the well-known keys pods may select on.

use karpenter_core::scheduling::{
    LABEL_ARCH_STABLE, LABEL_OS_STABLE, LABEL_TOPOLOGY_REGION, Requirement, WellKnownLabels,
};

use crate::catalog::{Catalog, Sku};

use super::Settings;

/// The size's name.
pub const SKU_NAME: &str = "karpenter.azure.com/sku-name";
/// The family letter (`D`).
pub const SKU_FAMILY: &str = "karpenter.azure.com/sku-family";
/// The series (`Ds_v5`).
pub const SKU_SERIES: &str = "karpenter.azure.com/sku-series";
/// The version (`5`; `1` when the name has none).
pub const SKU_VERSION: &str = "karpenter.azure.com/sku-version";
/// vCPUs.
pub const SKU_CPU: &str = "karpenter.azure.com/sku-cpu";
/// Memory in MiB.
pub const SKU_MEMORY: &str = "karpenter.azure.com/sku-memory";
/// vCPUs, AKS's copy.
pub const AKS_SKU_CPU: &str = "kubernetes.azure.com/sku-cpu";
/// Memory in MiB, AKS's copy.
pub const AKS_SKU_MEMORY: &str = "kubernetes.azure.com/sku-memory";
/// GPUs (0 unless the registry lists the size).
pub const SKU_GPU_COUNT: &str = "karpenter.azure.com/sku-gpu-count";
/// `nvidia` or `amd`.
pub const SKU_GPU_MANUFACTURER: &str = "karpenter.azure.com/sku-gpu-manufacturer";
/// The accelerator named in the size (`A100`).
pub const SKU_GPU_NAME: &str = "karpenter.azure.com/sku-gpu-name";
/// Whether accelerated networking is available.
pub const SKU_NETWORKING_ACCELERATED: &str = "karpenter.azure.com/sku-networking-accelerated";
/// Whether premium storage is available.
pub const SKU_STORAGE_PREMIUM_CAPABLE: &str = "karpenter.azure.com/sku-storage-premium-capable";
/// The largest ephemeral OS disk, decimal GB.
pub const SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE: &str =
    "karpenter.azure.com/sku-storage-ephemeralos-maxsize";
/// Whether Ultra SSD can be attached (per offering).
pub const SKU_STORAGE_ULTRA_SSD: &str = "karpenter.azure.com/sku-storage-ultra-ssd";
/// The Hyper-V generations (`1`, `2`): internal, chooses the image.
pub const SKU_HYPERV_GENERATION: &str = "karpenter.azure.com/sku-hyperv-generation";
/// `zonal` or `regional` (per offering).
pub const PLACEMENT_SCOPE: &str = "karpenter.azure.com/placement-scope";
/// `system` or `user`.
pub const MODE: &str = "kubernetes.azure.com/mode";
/// `regular` or `spot` (per offering).
pub const SCALE_SET_PRIORITY: &str = "kubernetes.azure.com/scalesetpriority";
/// `regular` or `spot` (per offering).
pub const PRIORITY: &str = "kubernetes.azure.com/priority";
/// `Ubuntu` or `AzureLinux`.
pub const OS_SKU: &str = "kubernetes.azure.com/os-sku";
/// `true` on FIPS images.
pub const FIPS_ENABLED: &str = "kubernetes.azure.com/fips_enabled";
/// The cluster's node resource group, as a label value (see
/// [`cluster_label_value`]).
pub const CLUSTER: &str = "kubernetes.azure.com/cluster";

/// Every key a pod may select on without the NodePool naming it: the core's
/// and the provider's (the Hyper-V generation too: NodePools may not set it,
/// but instance types carry it).
pub fn well_known_labels() -> WellKnownLabels {
    WellKnownLabels::core().clone().with_all([
        SKU_NAME,
        SKU_FAMILY,
        SKU_SERIES,
        SKU_VERSION,
        SKU_CPU,
        SKU_MEMORY,
        AKS_SKU_CPU,
        AKS_SKU_MEMORY,
        SKU_GPU_COUNT,
        SKU_GPU_MANUFACTURER,
        SKU_GPU_NAME,
        SKU_NETWORKING_ACCELERATED,
        SKU_STORAGE_PREMIUM_CAPABLE,
        SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE,
        SKU_STORAGE_ULTRA_SSD,
        SKU_HYPERV_GENERATION,
        PLACEMENT_SCOPE,
        MODE,
        SCALE_SET_PRIORITY,
        PRIORITY,
        OS_SKU,
        FIPS_ENABLED,
        CLUSTER,
        LABEL_TOPOLOGY_REGION,
    ])
}

fn flag(value: bool) -> String {
    value.to_string()
}

/// Where an ephemeral OS disk lives on a VM (`diffDiskSettings.placement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EphemeralPlacement {
    /// The local NVMe disk.
    NvmeDisk,
    /// The host cache.
    CacheDisk,
    /// The temporary resource disk.
    ResourceDisk,
}

impl EphemeralPlacement {
    /// ARM's name of the placement.
    pub fn as_str(self) -> &'static str {
        match self {
            EphemeralPlacement::NvmeDisk => "NvmeDisk",
            EphemeralPlacement::CacheDisk => "CacheDisk",
            EphemeralPlacement::ResourceDisk => "ResourceDisk",
        }
    }
}

/// The largest ephemeral OS disk the size holds, in decimal GB (floored),
/// and where it goes, as upstream's `FindMaxEphemeralSizeGBAndPlacement`
/// decides: NVMe when the size lists `NvmeDisk` among its placements and
/// has an NVMe disk, else the cache disk, else the resource disk; `None`
/// when the size has no ephemeral OS disk or no room for one.
pub fn ephemeral_os_disk(sku: &Sku) -> Option<(u64, EphemeralPlacement)> {
    const MIB: u64 = 1 << 20;
    const GB: u64 = 1_000_000_000;
    let c = &sku.capabilities;
    if c.ephemeral_os_disk != Some(true) {
        return None;
    }
    let nvme = c.nvme_disk_size_mib.unwrap_or(0);
    if nvme > 0
        && c.ephemeral_os_disk_placements
            .iter()
            .any(|p| p == "NvmeDisk")
    {
        return Some((nvme * MIB / GB, EphemeralPlacement::NvmeDisk));
    }
    let cached = c.cached_disk_bytes.unwrap_or(0);
    if cached > 0 {
        return Some((cached / GB, EphemeralPlacement::CacheDisk));
    }
    let resource = c.max_resource_volume_mib.unwrap_or(0);
    (resource > 0).then(|| (resource * MIB / GB, EphemeralPlacement::ResourceDisk))
}

/// The largest ephemeral OS disk in decimal GB (floored), 0 when the size
/// has none: NVMe first, then the cache disk, then the resource disk.
pub fn ephemeral_os_max_size_gb(sku: &Sku) -> u64 {
    ephemeral_os_disk(sku).map_or(0, |(gb, _)| gb)
}

/// The labels every node of the size carries, one value each.
pub fn single_valued(catalog: &Catalog, sku: &Sku, settings: &Settings) -> Vec<(String, String)> {
    let memory_mib = ((sku.memory_gib * 1024.0).trunc() as i64).to_string();
    let gpu = catalog.gpu(&sku.name).filter(|_| sku.gpus > 0);
    let mut labels: Vec<(&str, String)> = vec![
        (LABEL_ARCH_STABLE, sku.arch.clone()),
        (LABEL_OS_STABLE, "linux".to_owned()),
        (LABEL_TOPOLOGY_REGION, settings.region.clone()),
        (SKU_NAME, sku.name.clone()),
        (SKU_FAMILY, sku.sku_family.clone()),
        (SKU_SERIES, sku.sku_series.clone()),
        (SKU_CPU, sku.vcpus.to_string()),
        (SKU_MEMORY, memory_mib.clone()),
        (AKS_SKU_CPU, sku.vcpus.to_string()),
        (AKS_SKU_MEMORY, memory_mib),
        (SKU_GPU_COUNT, gpu.map_or(0, |_| sku.gpus).to_string()),
        (OS_SKU, settings.image_family.os_sku().to_owned()),
    ];
    if !sku.sku_version.is_empty() {
        labels.push((SKU_VERSION, sku.sku_version.clone()));
    }
    if let Some(gpu) = gpu {
        labels.push((SKU_GPU_MANUFACTURER, gpu.manufacturer.clone()));
        if !sku.accelerator.is_empty() {
            labels.push((SKU_GPU_NAME, sku.accelerator.clone()));
        }
    }
    if let Some(accelerated) = sku.capabilities.accelerated_networking {
        labels.push((SKU_NETWORKING_ACCELERATED, flag(accelerated)));
    }
    if let Some(premium) = sku.capabilities.premium_io {
        labels.push((SKU_STORAGE_PREMIUM_CAPABLE, flag(premium)));
    }
    let ephemeral = ephemeral_os_max_size_gb(sku);
    if ephemeral > 0 {
        labels.push((SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE, ephemeral.to_string()));
    }
    if settings.fips {
        labels.push((FIPS_ENABLED, "true".to_owned()));
    }
    if let Some(group) = &settings.node_resource_group {
        labels.push((CLUSTER, cluster_label_value(group)));
    }
    labels.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// The keys a size has no value for, each as `DoesNotExist`, as upstream
/// starts them and fills in only what the size has: a GPU's manufacturer
/// and name (the name only when the size names its accelerator), the
/// largest ephemeral OS disk, the Hyper-V generations, the version, and
/// FIPS outside FIPS classes. A node of the size carries none of these
/// labels, so a selector on one (`sku-gpu-name In [T4]`) must leave the size
/// out rather than ignore it.
pub fn absent(catalog: &Catalog, sku: &Sku, settings: &Settings) -> Vec<Requirement> {
    let gpu = catalog.gpu(&sku.name).filter(|_| sku.gpus > 0);
    let missing = [
        (SKU_GPU_MANUFACTURER, gpu.is_none()),
        (SKU_GPU_NAME, gpu.is_none() || sku.accelerator.is_empty()),
        (
            SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE,
            ephemeral_os_max_size_gb(sku) == 0,
        ),
        (
            SKU_HYPERV_GENERATION,
            sku.capabilities.hyperv_generations.is_empty(),
        ),
        (SKU_VERSION, sku.sku_version.is_empty()),
        (FIPS_ENABLED, !settings.fips),
    ];
    missing
        .into_iter()
        .filter(|(_, absent)| *absent)
        .map(|(key, _)| Requirement::does_not_exist(key))
        .collect()
}

/// The `kubernetes.azure.com/cluster` value of a node resource group, as
/// AKS writes it: parentheses become `-`, the name is cut to 63 bytes (on a
/// character boundary), and a name ending in `-`, `_` or `.` ends in `z`
/// instead (the last character replaced when that would pass 63).
pub fn cluster_label_value(resource_group: &str) -> String {
    const MAX: usize = 63;
    let mut value = resource_group.replace(['(', ')'], "-");
    if value.len() > MAX {
        let cut = (0..=MAX)
            .rev()
            .find(|&i| value.is_char_boundary(i))
            .unwrap_or(0);
        value.truncate(cut);
    }
    if value.ends_with(['-', '_', '.']) {
        if value.len() >= MAX {
            value.pop();
        }
        value.push('z');
    }
    value
}

/// The requirements that take several values and do not differ between
/// offerings: the mode and the Hyper-V generations.
pub fn multi_valued(sku: &Sku) -> Vec<Requirement> {
    let mut requirements = vec![Requirement::in_values(MODE, ["system", "user"])];
    let generations: Vec<&str> = sku
        .capabilities
        .hyperv_generations
        .iter()
        .map(|g| g.trim_start_matches('V'))
        .collect();
    if !generations.is_empty() {
        requirements.push(Requirement::in_values(SKU_HYPERV_GENERATION, &generations));
    }
    requirements
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_label_is_the_node_resource_group_as_aks_writes_it() {
        assert_eq!(
            cluster_label_value("MC_rg_cluster_eastus"),
            "MC_rg_cluster_eastus"
        );
        assert_eq!(cluster_label_value("MC_rg(1)_c"), "MC_rg-1-_c");
        assert_eq!(cluster_label_value("MC_rg_c_"), "MC_rg_c_z");
        assert_eq!(cluster_label_value("MC_rg_c(x)"), "MC_rg_c-x-z");
        let long = "a".repeat(70);
        assert_eq!(cluster_label_value(&long), "a".repeat(63));
        // Cut to 63, the name ends in `-`: its last character becomes `z`.
        let dashed = format!("{}-{}", "a".repeat(62), "b".repeat(10));
        assert_eq!(cluster_label_value(&dashed), format!("{}z", "a".repeat(62)));
        // Cut on a character boundary, never inside one.
        let wide = format!("{}é{}", "a".repeat(62), "b".repeat(4));
        assert_eq!(cluster_label_value(&wide), "a".repeat(62));
    }

    #[test]
    fn the_ephemeral_os_disk_goes_to_nvme_then_cache_then_resource_disk() {
        let catalog = Catalog::embedded();
        let disk = |name: &str| ephemeral_os_disk(catalog.sku(name).expect(name));
        // 7,208,960 MiB of NVMe; 50 GiB of cache; 150 GiB of resource disk.
        assert_eq!(
            disk("Standard_D128ds_v6"),
            Some((7_559, EphemeralPlacement::NvmeDisk))
        );
        assert_eq!(
            disk("Standard_D2s_v3"),
            Some((53, EphemeralPlacement::CacheDisk))
        );
        assert_eq!(
            disk("Standard_E4d_v5"),
            Some((161, EphemeralPlacement::ResourceDisk))
        );
        assert_eq!(disk("Standard_D2_v2"), None);
        assert_eq!(EphemeralPlacement::CacheDisk.as_str(), "CacheDisk");
    }
}

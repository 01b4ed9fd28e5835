//! Why a size is not offered: upstream's static filters (sizes AKS or
//! Karpenter restrict, too small, unsupported GPUs, constrained-vCPU and
//! confidential sizes, location restrictions) and the ones that depend on the
//! node class (GPU OS support and driver mode, encryption at host, artifact
//! streaming, trusted launch, LocalDNS).

use std::fmt;

use crate::catalog::{Catalog, Placement, Sku};

use super::Settings;

/// Sizes AKS restricts (too small to run a node) and two Karpenter restricts.
pub const RESTRICTED_SIZES: [&str; 13] = [
    "Standard_A0",
    "Standard_A1",
    "Standard_A1_v2",
    "Standard_B1s",
    "Standard_B1ms",
    "Standard_F1",
    "Standard_F1s",
    "Basic_A0",
    "Basic_A1",
    "Basic_A2",
    "Basic_A3",
    "Basic_A4",
    "Standard_E64i_v3",
];

/// The second Karpenter-restricted size (with `Standard_E64i_v3` above).
const KARPENTER_RESTRICTED: &str = "Standard_E64is_v3";

/// Why a size is left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exclusion {
    /// On AKS's or Karpenter's restricted list.
    RestrictedList,
    /// Its name does not parse as a VM size.
    NameUnparsed,
    /// Fewer than 2 vCPUs.
    FewerThanTwoVcpus,
    /// Less than 3.5 GiB of memory.
    UnderThreeAndAHalfGib,
    /// It has GPUs the GPU registry does not list.
    GpuNotInRegistry,
    /// A constrained-vCPU size (`Standard_E32-8s_v3`).
    ConstrainedVcpus,
    /// A confidential size (`DC...`, `EC...`).
    Confidential,
    /// A location restriction keeps it out of the region.
    LocationRestricted,
    /// The node class's image family cannot run its GPUs.
    GpuOsUnsupported,
    /// The node class asks for the driver AKS installs, which this GPU lacks.
    GpuDriverUnmanaged,
    /// The node class asks for encryption at host, which it does not support.
    EncryptionAtHostUnsupported,
    /// Artifact streaming does not run on arm64.
    ArtifactStreamingArm64,
    /// The node class asks for trusted launch, which the size cannot do
    /// (no Hyper-V generation 2, or `TrustedLaunchDisabled`).
    TrustedLaunchUnsupported,
    /// LocalDNS runs on the nodes and needs 4 vCPUs and 244 MiB.
    LocalDnsTooSmall,
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RestrictedList => "restricted-list",
            Self::NameUnparsed => "name-unparsed",
            Self::FewerThanTwoVcpus => "vcpus<2",
            Self::UnderThreeAndAHalfGib => "memory<3.5GiB",
            Self::GpuNotInRegistry => "gpu-not-in-registry",
            Self::ConstrainedVcpus => "constrained-vcpus",
            Self::Confidential => "confidential",
            Self::LocationRestricted => "location-restriction",
            Self::GpuOsUnsupported => "gpu-os-unsupported",
            Self::GpuDriverUnmanaged => "gpu-driver-unmanaged",
            Self::EncryptionAtHostUnsupported => "encryption-at-host-unsupported",
            Self::ArtifactStreamingArm64 => "artifact-streaming-arm64",
            Self::TrustedLaunchUnsupported => "trusted-launch-unsupported",
            Self::LocalDnsTooSmall => "localdns-too-small",
        })
    }
}

/// The size part of a name: `Standard_E32-8s_v3` -> `E32-8s_v3`.
fn size_part(name: &str) -> &str {
    name.split_once('_').map_or(name, |(_, size)| size)
}

/// Whether the size names a constrained vCPU count: digits, `-`, digits.
fn is_constrained(name: &str) -> bool {
    let bytes = size_part(name).as_bytes();
    bytes
        .windows(3)
        .any(|w| w[0].is_ascii_digit() && w[1] == b'-' && w[2].is_ascii_digit())
}

/// The static reasons `sku` is left out (in `placement`'s region), in order.
pub fn static_exclusions(
    catalog: &Catalog,
    sku: &Sku,
    placement: Option<&Placement>,
) -> Vec<Exclusion> {
    let mut reasons = Vec::new();
    if RESTRICTED_SIZES.contains(&sku.name.as_str()) || sku.name == KARPENTER_RESTRICTED {
        reasons.push(Exclusion::RestrictedList);
    }
    if !sku.name_parses {
        reasons.push(Exclusion::NameUnparsed);
    }
    if sku.vcpus < 2 {
        reasons.push(Exclusion::FewerThanTwoVcpus);
    }
    if sku.memory_gib < 3.5 {
        reasons.push(Exclusion::UnderThreeAndAHalfGib);
    }
    if sku.gpus > 0 && catalog.gpu(&sku.name).is_none() {
        reasons.push(Exclusion::GpuNotInRegistry);
    }
    if is_constrained(&sku.name) {
        reasons.push(Exclusion::ConstrainedVcpus);
    }
    let size = size_part(&sku.name);
    if size.starts_with("DC") || size.starts_with("EC") {
        reasons.push(Exclusion::Confidential);
    }
    if placement.is_some_and(|p| p.location_restricted) {
        reasons.push(Exclusion::LocationRestricted);
    }
    reasons
}

/// The reasons the node class's settings leave `sku` out.
pub fn node_class_exclusions(catalog: &Catalog, sku: &Sku, settings: &Settings) -> Vec<Exclusion> {
    let mut reasons = Vec::new();
    if let Some(gpu) = catalog.gpu(&sku.name).filter(|_| sku.gpus > 0) {
        if !gpu
            .supported_os
            .iter()
            .any(|os| settings.image_family.gpu_os().contains(&os.as_str()))
        {
            reasons.push(Exclusion::GpuOsUnsupported);
        }
        if settings.gpu_driver_managed && !gpu.managed_driver_install {
            reasons.push(Exclusion::GpuDriverUnmanaged);
        }
    }
    // Where the data does not record the capability, the size is given the
    // benefit of the doubt.
    if settings.encryption_at_host && sku.capabilities.encryption_at_host == Some(false) {
        reasons.push(Exclusion::EncryptionAtHostUnsupported);
    }
    if settings.artifact_streaming && sku.arch == "arm64" {
        reasons.push(Exclusion::ArtifactStreamingArm64);
    }
    if settings.trusted_launch && !trusted_launch_capable(sku) {
        reasons.push(Exclusion::TrustedLaunchUnsupported);
    }
    if settings.local_dns
        && (sku.vcpus < LOCAL_DNS_MIN_VCPUS || memory_mib(sku) < LOCAL_DNS_MIN_MIB)
    {
        reasons.push(Exclusion::LocalDnsTooSmall);
    }
    reasons
}

/// The fewest vCPUs LocalDNS runs on.
pub const LOCAL_DNS_MIN_VCPUS: u32 = 4;
/// The least memory LocalDNS runs on, in MiB (256 MB, as upstream rounds it).
pub const LOCAL_DNS_MIN_MIB: i64 = 244;

/// The size's memory in whole MiB, as its `sku-memory` label gives it.
fn memory_mib(sku: &Sku) -> i64 {
    (sku.memory_gib * 1024.0) as i64
}

/// Whether the size can launch with trusted launch: it runs Hyper-V
/// generation 2 and does not say `TrustedLaunchDisabled`, as the Resource
/// SKUs API documents it. Where the data does not record the generations,
/// the size is given the benefit of the doubt, as for encryption at host.
fn trusted_launch_capable(sku: &Sku) -> bool {
    let generations = &sku.capabilities.hyperv_generations;
    let gen2 = generations.is_empty() || generations.iter().any(|g| g == "V2");
    gen2 && sku.capabilities.trusted_launch_disabled != Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constrained_and_confidential_sizes_are_told_by_name() {
        assert!(is_constrained("Standard_E32-8s_v3"));
        assert!(is_constrained("Standard_M8-2ms"));
        assert!(!is_constrained("Standard_D4s_v5"));
        assert_eq!(size_part("Standard_DC2s_v3"), "DC2s_v3");
    }
}

//! What an `EC2NodeClass` sets that changes a node's capacity or overhead,
//! read once per NodeClass as upstream's instance-type resolver reads it
//! (`pkg/providers/instancetype/types.go`): the AMI family's rules, the
//! kubelet's pod limits, reservations and hard eviction thresholds, and the
//! volume that holds the kubelet's data.

use karpenter_core::resources::{QuantityError, milli_value, parse_milli};

use crate::nodeclass::{AmiFamily, BlockDeviceMapping, EC2NodeClass, KubeletConfiguration};

use super::InstanceTypeError;
use super::offerings::{DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, InstanceTypeOptions};

const GIB: i64 = 1 << 30;
/// Upstream's `DefaultEBS` volume size, which most families' root or data
/// volume takes.
const DEFAULT_VOLUME_BYTES: i64 = 20 * GIB;
/// Windows' default root volume (`/dev/sda1`).
const WINDOWS_VOLUME_BYTES: i64 = 50 * GIB;
/// `instanceStorePolicy` that stripes the local NVMe disks for the kubelet.
const RAID0: &str = "RAID0";
/// The interface type that carries EFA traffic only, no IP.
const EFA_ONLY: &str = "efa-only";
/// The option [`InstanceTypeOptions::vm_memory_overhead_percent`] stands for.
const VM_MEMORY_OVERHEAD_PERCENT_FLAG: &str = "--vm-memory-overhead-percent";
/// The kubelet's memory eviction signal.
const MEMORY_AVAILABLE: &str = "memory.available";
/// The kubelet's root filesystem eviction signal.
const NODEFS_AVAILABLE: &str = "nodefs.available";

/// A hard eviction threshold as written: an amount or a share of capacity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Threshold {
    /// An absolute amount, in milli-units.
    Milli(i64),
    /// A percentage of the resource's capacity (100 % disables it).
    Percent(f64),
}

impl Threshold {
    /// The amount, in milli-units, kept back from `capacity` whole units:
    /// a percentage of it rounded up to a whole unit, as upstream computes it.
    pub(crate) fn milli_of(self, capacity: i64) -> i64 {
        match self {
            Threshold::Milli(milli) => milli,
            Threshold::Percent(p) => {
                // The kubelet reads 100 % as "no threshold".
                let p = if p >= 100.0 { 0.0 } else { p };
                ((capacity as f64 / 100.0 * p).ceil() as i64).saturating_mul(1000)
            }
        }
    }
}

/// The NodeClass's settings that shape every instance type's resources.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NodeSettings {
    /// The AMI family (upstream reads a NodeClass naming none as Custom).
    pub(crate) family: AmiFamily,
    /// `kubelet.maxPods` when a count (an expression needs the `NodeClassCEL`
    /// gate, which is not modelled: the family's default applies, as
    /// upstream's with the gate off).
    pub(crate) max_pods: Option<i64>,
    /// `kubelet.podsPerCore` (0 or less: no limit).
    pub(crate) pods_per_core: Option<i64>,
    /// `kubelet.kubeReserved`, by resource, in milli-units.
    pub(crate) kube_reserved: Vec<(String, i64)>,
    /// `kubelet.systemReserved`, by resource, in milli-units.
    pub(crate) system_reserved: Vec<(String, i64)>,
    /// `kubelet.evictionHard["memory.available"]`.
    pub(crate) eviction_memory: Option<Threshold>,
    /// `kubelet.evictionHard["nodefs.available"]`.
    pub(crate) eviction_nodefs: Option<Threshold>,
    /// The size, in bytes, of the volume holding the kubelet's data.
    pub(crate) volume_bytes: i64,
    /// Whether `instanceStorePolicy: RAID0` puts it on the local NVMe disks.
    pub(crate) raid0: bool,
    /// `efa-only` interfaces on network card 0: each takes an ENI the VPC
    /// CNI could have given pods.
    pub(crate) efa_only_default_card: u32,
    /// With `networkInterfaces`, the `efa-only` interfaces over every card,
    /// which replace the type's EFA count.
    pub(crate) efa_interfaces: Option<i64>,
    /// `--reserved-enis`: ENIs of the default card kept back from pods.
    pub(crate) reserved_enis: u32,
    /// `--vm-memory-overhead-percent`, checked to be finite and 0 or more.
    pub(crate) vm_memory_overhead_percent: f64,
}

impl Default for NodeSettings {
    /// AL2023 with no kubelet settings, block device mappings or instance
    /// store policy.
    fn default() -> Self {
        NodeSettings {
            family: AmiFamily::AL2023,
            max_pods: None,
            pods_per_core: None,
            kube_reserved: Vec::new(),
            system_reserved: Vec::new(),
            eviction_memory: None,
            eviction_nodefs: None,
            volume_bytes: DEFAULT_VOLUME_BYTES,
            raid0: false,
            efa_only_default_card: 0,
            efa_interfaces: None,
            reserved_enis: 0,
            vm_memory_overhead_percent: DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
        }
    }
}

impl NodeSettings {
    /// The settings of `nodeclass`; an unreadable quantity or percentage is
    /// an error naming its field.
    pub(crate) fn of(nodeclass: &EC2NodeClass) -> Result<Self, InstanceTypeError> {
        let family = nodeclass.ami_family().unwrap_or(AmiFamily::Custom);
        let spec = &nodeclass.spec;
        let mappings = spec.block_device_mappings.as_deref().unwrap_or_default();
        let mut settings = NodeSettings {
            family,
            volume_bytes: volume_bytes(family, mappings)?,
            raid0: spec.instance_store_policy.as_deref() == Some(RAID0),
            ..NodeSettings::default()
        };
        if let Some(interfaces) = &spec.network_interfaces {
            let efa_only = || interfaces.iter().filter(|i| i.interface_type == EFA_ONLY);
            let on_card0 = efa_only().filter(|i| i.network_card_index == 0).count();
            settings.efa_only_default_card = u32::try_from(on_card0).unwrap_or(u32::MAX);
            settings.efa_interfaces = Some(i64::try_from(efa_only().count()).unwrap_or(i64::MAX));
        }
        if let Some(kubelet) = &spec.kubelet {
            settings.read_kubelet(kubelet)?;
        }
        Ok(settings)
    }

    /// The settings with the provider's `options` that shape resources:
    /// reserved ENIs and the VM memory overhead. Upstream's options
    /// validation refuses a negative overhead; a NaN or infinite one (which a
    /// flag parser would also accept) is refused too, since no memory figure
    /// follows from it. An overhead of 1 or more is upstream's to allow; it
    /// leaves no memory.
    pub(crate) fn with_options(
        mut self,
        options: &InstanceTypeOptions,
    ) -> Result<Self, InstanceTypeError> {
        let percent = options.vm_memory_overhead_percent;
        if !percent.is_finite() || percent < 0.0 {
            return Err(InstanceTypeError::Option {
                option: VM_MEMORY_OVERHEAD_PERCENT_FLAG,
                value: percent.to_string(),
            });
        }
        self.vm_memory_overhead_percent = percent;
        self.reserved_enis = options.reserved_enis;
        Ok(self)
    }

    fn read_kubelet(&mut self, kubelet: &KubeletConfiguration) -> Result<(), InstanceTypeError> {
        self.max_pods = kubelet.max_pods.as_ref().and_then(|m| m.count());
        self.pods_per_core = kubelet.pods_per_core;
        self.kube_reserved = reservations("kubeReserved", kubelet.kube_reserved.as_ref())?;
        self.system_reserved = reservations("systemReserved", kubelet.system_reserved.as_ref())?;
        if let Some(eviction) = &kubelet.eviction_hard {
            let threshold = |signal: &str| {
                eviction
                    .get(signal)
                    .map(|v| threshold(&format!("spec.kubelet.evictionHard[{signal}]"), v))
                    .transpose()
            };
            self.eviction_memory = threshold(MEMORY_AVAILABLE)?;
            self.eviction_nodefs = threshold(NODEFS_AVAILABLE)?;
        }
        Ok(())
    }

    /// Whether kube-reserved memory counts ENI-limited pods (with no
    /// reserved ENIs) rather than the node's pods: the Amazon Linux families
    /// and Custom.
    pub(crate) fn eni_limited_memory_overhead(&self) -> bool {
        !matches!(self.family, AmiFamily::Bottlerocket) && !self.family.is_windows()
    }

    /// Whether `podsPerCore` applies (Bottlerocket's settings cannot pass it).
    pub(crate) fn pods_per_core_enabled(&self) -> bool {
        self.family != AmiFamily::Bottlerocket
    }

    /// Whether pods default to the ENI-limited count (Windows: 110).
    pub(crate) fn eni_limited_pod_density(&self) -> bool {
        !self.family.is_windows()
    }
}

fn field_error(field: String) -> impl FnOnce(QuantityError) -> InstanceTypeError {
    move |source| InstanceTypeError::Setting { field, source }
}

/// A reservation map's entries in milli-units, in key order.
fn reservations(
    name: &str,
    map: Option<&std::collections::BTreeMap<String, String>>,
) -> Result<Vec<(String, i64)>, InstanceTypeError> {
    map.into_iter()
        .flatten()
        .map(|(resource, value)| {
            let field = format!("spec.kubelet.{name}[{resource}]");
            parse_milli(value)
                .map(|milli| (resource.clone(), milli))
                .map_err(field_error(field))
        })
        .collect()
}

fn threshold(field: &str, value: &str) -> Result<Threshold, InstanceTypeError> {
    match value.strip_suffix('%') {
        Some(percent) => percent
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && (0.0..=100.0).contains(p))
            .map(Threshold::Percent)
            .ok_or_else(|| InstanceTypeError::Percentage {
                field: field.to_owned(),
                value: value.to_owned(),
            }),
        None => parse_milli(value)
            .map(Threshold::Milli)
            .map_err(field_error(field.to_owned())),
    }
}

/// The device each family keeps the kubelet's data on; Custom's is unknown.
fn ephemeral_device(family: AmiFamily) -> Option<&'static str> {
    match family {
        AmiFamily::AL2 | AmiFamily::AL2023 => Some("/dev/xvda"),
        AmiFamily::Bottlerocket => Some("/dev/xvdb"),
        AmiFamily::Windows2019 | AmiFamily::Windows2022 | AmiFamily::Windows2025 => {
            Some("/dev/sda1")
        }
        AmiFamily::Custom => None,
    }
}

/// The size of the kubelet's volume: the mapping marked `rootVolume` when
/// it gives a size; for Custom the last mapping's size; otherwise the
/// mapping of the family's data device; else the family's default.
fn volume_bytes(
    family: AmiFamily,
    mappings: &[BlockDeviceMapping],
) -> Result<i64, InstanceTypeError> {
    let size = |index: usize| -> Result<Option<i64>, InstanceTypeError> {
        let quantity = mappings
            .get(index)
            .and_then(|m| m.ebs.as_ref())
            .and_then(|e| e.volume_size.as_ref());
        quantity
            .map(|q| {
                milli_value(q)
                    .map(|milli| milli / 1000)
                    .map_err(field_error(format!(
                        "spec.blockDeviceMappings[{index}].ebs.volumeSize"
                    )))
            })
            .transpose()
    };
    let family_default = match family {
        f if f.is_windows() => WINDOWS_VOLUME_BYTES,
        _ => DEFAULT_VOLUME_BYTES,
    };
    if mappings.is_empty() {
        return Ok(family_default);
    }
    if let Some(root) = mappings.iter().position(BlockDeviceMapping::is_root_volume)
        && let Some(bytes) = size(root)?
    {
        return Ok(bytes);
    }
    let Some(device) = ephemeral_device(family) else {
        return Ok(size(mappings.len() - 1)?.unwrap_or(DEFAULT_VOLUME_BYTES));
    };
    match mappings
        .iter()
        .position(|m| m.device_name.as_deref() == Some(device))
    {
        Some(index) => Ok(size(index)?.unwrap_or(family_default)),
        None => Ok(family_default),
    }
}

#[cfg(test)]
mod tests;

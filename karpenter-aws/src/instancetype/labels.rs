//! The labels upstream puts on an instance type's requirements
//! (`pkg/apis/v1/labels.go`, `computeRequirements` in
//! `pkg/providers/instancetype/types.go`): every `karpenter.k8s.aws/*` label
//! the type has a value for, `DoesNotExist` on those it has none for, and the
//! well-known upstream labels.

use karpenter_core::scheduling::{
    LABEL_ARCH_STABLE, LABEL_OS_STABLE, LABEL_TOPOLOGY_REGION, LABEL_WINDOWS_BUILD, Requirement,
    WellKnownLabels,
};

use crate::catalog::{Arch, Catalog, LABEL_COLUMNS, TypeRecord};
use crate::nodeclass::AmiFamily;

/// The label domain upstream owns; users may not invent keys in it.
pub const DOMAIN: &str = "karpenter.k8s.aws";
/// Network bandwidth in Mbps, from upstream's bandwidth table.
pub const INSTANCE_NETWORK_BANDWIDTH: &str = "karpenter.k8s.aws/instance-network-bandwidth";
/// `default` or `dedicated`; both allowed on every type.
pub const INSTANCE_TENANCY: &str = "karpenter.k8s.aws/instance-tenancy";
/// The zone's ID (`use1-az1`), the same physical zone in every account;
/// each offering requires the ID of its zone when the subnets name it.
pub const TOPOLOGY_ZONE_ID: &str = "topology.k8s.aws/zone-id";
/// The capacity reservation a reserved offering launches into.
pub const CAPACITY_RESERVATION_ID: &str = "karpenter.k8s.aws/capacity-reservation-id";
/// `default` or `capacity-block`.
pub const CAPACITY_RESERVATION_TYPE: &str = "karpenter.k8s.aws/capacity-reservation-type";
/// Whether the reservation may be interrupted.
pub const CAPACITY_RESERVATION_INTERRUPTIBLE: &str =
    "karpenter.k8s.aws/capacity-reservation-interruptible";

/// Whether the type supports Nitro Enclaves (`true`/`false`). Upstream's
/// main sets it on every type; the catalog's data predates it, so no type
/// carries it here yet, but NodePools may name it.
pub const NITRO_SANDBOX: &str = "karpenter.k8s.aws/nitro-sandbox";
/// The placement group a node launches into, once the NodeClass resolves
/// one.
pub const PLACEMENT_GROUP_ID: &str = "karpenter.k8s.aws/placement-group-id";
/// The partition of a partition placement group.
pub const PLACEMENT_GROUP_PARTITION: &str = "karpenter.k8s.aws/placement-group-partition";
/// Whether the family is a `-flex` one; upstream sets it from the name.
const CAPABILITY_FLEX_COLUMN: &str = "instance-capability-flex";

/// The well-known labels with AWS's: every `karpenter.k8s.aws/*` label
/// upstream registers (those the instance types carry, the capacity
/// reservation and placement group ones, `nitro-sandbox`), the zone ID, and
/// `default`/`dedicated` as the only known tenancies. A NodePool may require
/// any of them without a type defining it; the engine treats an undefined
/// well-known label as a value no type offers.
pub fn well_known_labels() -> WellKnownLabels {
    let columns = LABEL_COLUMNS.iter().map(|c| format!("{DOMAIN}/{c}"));
    WellKnownLabels::core()
        .clone()
        .with_all(columns)
        .with_all([
            INSTANCE_NETWORK_BANDWIDTH,
            TOPOLOGY_ZONE_ID,
            CAPACITY_RESERVATION_ID,
            CAPACITY_RESERVATION_TYPE,
            CAPACITY_RESERVATION_INTERRUPTIBLE,
            NITRO_SANDBOX,
            PLACEMENT_GROUP_ID,
            PLACEMENT_GROUP_PARTITION,
            LABEL_TOPOLOGY_REGION,
            LABEL_WINDOWS_BUILD,
        ])
        .with_known_values(INSTANCE_TENANCY, ["default", "dedicated"])
}

/// The Windows build (`node.kubernetes.io/windows-build`) of a Windows
/// family's nodes.
fn windows_build(family: AmiFamily) -> Option<&'static str> {
    match family {
        AmiFamily::Windows2019 => Some("10.0.17763"),
        AmiFamily::Windows2022 => Some("10.0.20348"),
        AmiFamily::Windows2025 => Some("10.0.26100"),
        _ => None,
    }
}

/// The requirements of `record` in `region` for nodes of `family`, besides
/// the instance-type label (the engine adds it) and the zone and
/// capacity-type ones (the offerings give them).
pub(crate) fn requirements(
    catalog: &Catalog,
    record: &TypeRecord,
    region: &str,
    family: AmiFamily,
) -> Vec<Requirement> {
    // Upstream's Windows images are amd64 only: an arm64 type gets no OS a
    // pod could select, which leaves it unusable for that NodeClass.
    let os: &[&str] = match (family.is_windows(), record.arch) {
        (false, _) => &[record.os],
        (true, Arch::Amd64) => &["windows"],
        (true, Arch::Arm64) => &[],
    };
    let build = match windows_build(family) {
        Some(build) => Requirement::in_values(LABEL_WINDOWS_BUILD, [build]),
        None => Requirement::does_not_exist(LABEL_WINDOWS_BUILD),
    };
    let mut requirements = vec![
        Requirement::in_values(LABEL_ARCH_STABLE, [record.arch.as_str()]),
        Requirement::in_values(LABEL_OS_STABLE, os.iter().copied()),
        Requirement::in_values(LABEL_TOPOLOGY_REGION, [region]),
        build,
        Requirement::in_values(INSTANCE_TENANCY, ["default", "dedicated"]),
        // No NodeClass capacity reservations yet: upstream says so with
        // `DoesNotExist` on the type as well as on its offerings.
        Requirement::does_not_exist(CAPACITY_RESERVATION_ID),
        Requirement::does_not_exist(CAPACITY_RESERVATION_TYPE),
        Requirement::does_not_exist(CAPACITY_RESERVATION_INTERRUPTIBLE),
    ];
    requirements.extend(record.labels().map(|(column, value)| {
        let key = format!("{DOMAIN}/{column}");
        // Older pages left the flex label out; upstream sets it on every
        // type from the family's name.
        let value = match value {
            None if column == CAPABILITY_FLEX_COLUMN => Some(flex(record)),
            value => value,
        };
        match value {
            Some(value) => Requirement::in_values(&key, [value]),
            None => Requirement::does_not_exist(&key),
        }
    }));
    let bandwidth = catalog.bandwidth_mbps(record.name).map(|b| b.to_string());
    requirements.push(match bandwidth {
        Some(mbps) => Requirement::in_values(INSTANCE_NETWORK_BANDWIDTH, [mbps]),
        None => Requirement::does_not_exist(INSTANCE_NETWORK_BANDWIDTH),
    });
    requirements
}

/// `true` when the type's family (the name before the `.`) is a `-flex` one.
fn flex(record: &TypeRecord) -> &'static str {
    let family = record.name.split('.').next().unwrap_or_default();
    if family.contains("-flex") {
        "true"
    } else {
        "false"
    }
}

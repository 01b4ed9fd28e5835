//! The launch templates a launch uses, keyed as upstream's AMI resolver
//! keys them: one per (AMI, max pods, EFA count, kube-reserved,
//! system-reserved, reservation), the AMI of a type being the first of the
//! NodeClass's status AMIs whose requirements the type meets.
//!
//! # Where it departs from upstream
//!
//! Upstream names a template `karpenter.k8s.aws/<hashstructure of the
//! resolved template>`, a hash of Go structs by reflection (user data,
//! block devices, metadata options, ...) that only Go's type layout can
//! reproduce. Ours is FNV-1a (64 bits) over a canonical JSON text of what
//! we key on plus the NodeClass's static hash (which covers the rendered
//! parts: block devices, metadata options, user data) and the security
//! groups and instance profile of its status, so a template changes
//! exactly when one of them does. kube- and system-reserved are the
//! NodeClass's static values: CEL expressions are not evaluated here.

use std::collections::BTreeMap;

use karpenter_core::api::fnv1a64;
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::resources::{PODS, ResourceList};
use karpenter_core::scheduling::{CAPACITY_TYPE_RESERVED, Requirements, WellKnownLabels};
use serde::Serialize;

use super::errors::LaunchError;
use crate::instancetype::labels::{CAPACITY_RESERVATION_INTERRUPTIBLE, CAPACITY_RESERVATION_TYPE};
use crate::instancetype::resources::RESOURCE_EFA;
use crate::nodeclass::EC2NodeClass;

/// The prefix of every launch template name Karpenter owns.
const NAME_PREFIX: &str = "karpenter.k8s.aws";

/// The capacity reservation a reserved launch template launches into.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct TemplateReservation {
    /// The reservation ID, `cr-...`.
    pub id: String,
    /// Its zone: the template's overrides are limited to it.
    pub zone: String,
    /// `default` or `capacity-block`.
    pub reservation_type: String,
    /// Whether it is an interruptible reservation.
    pub interruptible: bool,
}

/// One launch template: what it launches and the name it goes by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchTemplate {
    /// `karpenter.k8s.aws/<hash>`.
    pub name: String,
    /// The AMI it boots.
    pub image_id: String,
    /// The instance types it serves, by name, in the order given.
    pub instance_types: Vec<String>,
    /// The kubelet's `maxPods`: the types' pod capacity.
    pub max_pods: i64,
    /// EFA interfaces to attach (0 unless the claim requests EFA).
    pub efa_count: i64,
    /// The kubelet's kube-reserved.
    pub kube_reserved: BTreeMap<String, String>,
    /// The kubelet's system-reserved.
    pub system_reserved: BTreeMap<String, String>,
    /// The capacity type it launches as.
    pub capacity_type: String,
    /// The reservation of a reserved launch.
    pub reservation: Option<TemplateReservation>,
}

/// What tells two templates apart, hashed into the name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
struct Key {
    image_id: String,
    max_pods: i64,
    efa_count: i64,
    reservations: Vec<TemplateReservation>,
}

/// The launch templates of a launch as `capacity_type` over
/// `instance_types` (as [`filter_instance_types`](super::filter_instance_types)
/// left them) for a claim with `requests`, sorted by name.
///
/// # Errors
///
/// [`LaunchError::Create`] (`LaunchFailed`) when the NodeClass's status has
/// no AMI or no type meets any AMI's requirements;
/// [`LaunchError::AmiRequirements`] when an AMI's requirements cannot be
/// read.
pub fn launch_templates(
    nodeclass: &EC2NodeClass,
    instance_types: &[InstanceType],
    capacity_type: &str,
    requests: &ResourceList,
) -> Result<Vec<LaunchTemplate>, LaunchError> {
    let amis = ami_requirements(nodeclass)?;
    let efa_requested = requests.get(RESOURCE_EFA) != 0;
    let mut groups: BTreeMap<Key, Vec<String>> = BTreeMap::new();
    // Upstream's `Compatible`, strict: an AMI requiring a label present
    // needs a type that defines it (every AWS type defines every well-known
    // label, so upstream's allowance for undefined ones changes nothing).
    let strict = WellKnownLabels::empty();
    for it in instance_types {
        let meets = |r: &Requirements| it.requirements.is_compatible(r, &strict);
        let Some((image_id, _)) = amis.iter().find(|(_, r)| meets(r)) else {
            continue;
        };
        let key = Key {
            image_id: image_id.clone(),
            max_pods: it.capacity.get(PODS) / 1000,
            efa_count: if efa_requested {
                it.capacity.get(RESOURCE_EFA) / 1000
            } else {
                0
            },
            reservations: reservations(it, capacity_type),
        };
        groups.entry(key).or_default().push(it.name.clone());
    }
    if groups.is_empty() {
        let ids: Vec<&str> = amis.iter().map(|(id, _)| id.as_str()).collect();
        return Err(launch_failed(format!(
            "no instance types satisfy requirements of amis {ids:?}"
        )));
    }
    let kubelet = nodeclass.spec.kubelet.as_ref();
    let kube_reserved = kubelet
        .and_then(|k| k.kube_reserved.clone())
        .unwrap_or_default();
    let system_reserved = kubelet
        .and_then(|k| k.system_reserved.clone())
        .unwrap_or_default();
    let class_hash = nodeclass.static_hash(None);
    let resolved = Resolved::of(nodeclass);
    let mut templates = Vec::new();
    for (key, types) in groups {
        // A reserved group gets one template per reservation, as upstream.
        let reservations: Vec<Option<TemplateReservation>> = if key.reservations.is_empty() {
            vec![None]
        } else {
            key.reservations.iter().cloned().map(Some).collect()
        };
        for reservation in reservations {
            let mut template = LaunchTemplate {
                name: String::new(),
                image_id: key.image_id.clone(),
                instance_types: types.clone(),
                max_pods: key.max_pods,
                efa_count: key.efa_count,
                kube_reserved: kube_reserved.clone(),
                system_reserved: system_reserved.clone(),
                capacity_type: capacity_type.to_owned(),
                reservation,
            };
            template.name = template_name(&template, &class_hash, &resolved);
            templates.push(template);
        }
    }
    templates.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(templates)
}

fn launch_failed(message: String) -> LaunchError {
    LaunchError::Create {
        reason: "LaunchFailed",
        message: format!("getting launch template configs, {message}"),
    }
}

/// The status AMIs with their requirements, in status order.
fn ami_requirements(nodeclass: &EC2NodeClass) -> Result<Vec<(String, Requirements)>, LaunchError> {
    let amis = nodeclass
        .status
        .as_ref()
        .and_then(|s| s.amis.as_deref())
        .unwrap_or_default();
    if amis.is_empty() {
        return Err(launch_failed("no amis exist given constraints".to_owned()));
    }
    amis.iter()
        .enumerate()
        .map(|(i, ami)| {
            Requirements::from_node_selector_requirements(&ami.requirements)
                .map(|r| (ami.id.clone(), r))
                .map_err(|source| LaunchError::AmiRequirements {
                    index: i,
                    id: ami.id.clone(),
                    source,
                })
        })
        .collect()
}

/// The available reserved offerings of `it` in a reserved launch, each
/// with the kind of reservation it is; none otherwise.
fn reservations(it: &InstanceType, capacity_type: &str) -> Vec<TemplateReservation> {
    if capacity_type != CAPACITY_TYPE_RESERVED {
        return Vec::new();
    }
    let mut found: Vec<TemplateReservation> = it
        .offerings
        .iter()
        .filter(|o| o.available && o.capacity_type == CAPACITY_TYPE_RESERVED)
        .filter_map(|o| {
            let id = o.reservation_id()?.to_owned();
            let label = |key| o.requirements.get(key).any();
            Some(TemplateReservation {
                id,
                zone: o.zone.clone(),
                reservation_type: label(CAPACITY_RESERVATION_TYPE).unwrap_or_default(),
                interruptible: label(CAPACITY_RESERVATION_INTERRUPTIBLE).as_deref() == Some("true"),
            })
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// What a template takes from the NodeClass's status rather than its
/// spec: the static hash does not cover it, yet a template made before it
/// changed must not be reused after (instances launched from it would come
/// up in the old security groups).
#[derive(Debug, Serialize)]
struct Resolved {
    /// Sorted: EC2 and drift treat the groups as a set.
    security_group_ids: Vec<String>,
    instance_profile: Option<String>,
}

impl Resolved {
    fn of(nodeclass: &EC2NodeClass) -> Self {
        let status = nodeclass.status.as_ref();
        let mut security_group_ids: Vec<String> = status
            .and_then(|s| s.security_groups.as_deref())
            .unwrap_or_default()
            .iter()
            .map(|g| g.id.clone())
            .collect();
        security_group_ids.sort_unstable();
        security_group_ids.dedup();
        Resolved {
            security_group_ids,
            instance_profile: status.and_then(|s| s.instance_profile.clone()),
        }
    }
}

/// `karpenter.k8s.aws/<hash>` of what the template launches, the NodeClass
/// it renders and what that class resolved to.
fn template_name(template: &LaunchTemplate, class_hash: &str, resolved: &Resolved) -> String {
    #[derive(Serialize)]
    struct Hashed<'a> {
        class: &'a str,
        resolved: &'a Resolved,
        image_id: &'a str,
        instance_types: Vec<&'a str>,
        max_pods: i64,
        efa_count: i64,
        kube_reserved: &'a BTreeMap<String, String>,
        system_reserved: &'a BTreeMap<String, String>,
        capacity_type: &'a str,
        reservation: &'a Option<TemplateReservation>,
    }
    let mut instance_types: Vec<&str> =
        template.instance_types.iter().map(String::as_str).collect();
    // Upstream hashes the types as a set.
    instance_types.sort_unstable();
    let hashed = Hashed {
        class: class_hash,
        resolved,
        image_id: &template.image_id,
        instance_types,
        max_pods: template.max_pods,
        efa_count: template.efa_count,
        kube_reserved: &template.kube_reserved,
        system_reserved: &template.system_reserved,
        capacity_type: &template.capacity_type,
        reservation: &template.reservation,
    };
    let text = serde_json::to_string(&hashed).unwrap_or_default();
    format!("{NAME_PREFIX}/{}", fnv1a64(text.as_bytes()))
}

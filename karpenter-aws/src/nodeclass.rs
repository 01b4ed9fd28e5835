//! `EC2NodeClass` (`karpenter.k8s.aws/v1`): how EC2 nodes are launched.
//!
//! Every field of upstream's CRD is typed (see [`EC2NodeClassSpec`]); fields
//! this version does not know are kept on each object, so a manifest reads
//! and writes back without loss. [`EC2NodeClass::validate`] applies the
//! CRD's validation rules.

mod devices;
mod drift;
mod family;
mod hash;
mod kubelet;
mod network;
mod other_fields;
pub mod reconcile;
pub mod resolve;
mod spec;
mod status;
mod validation;

#[cfg(test)]
mod tests;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

pub use devices::{BlockDevice, BlockDeviceMapping, MetadataOptions, ResolvedMetadataOptions};
pub use drift::{
    DriftError, DriftReason, LaunchedInstance, PLACEMENT_GROUP_ID_LABEL, drift, dynamic_drift,
    static_drift,
};
pub use family::{Alias, AmiFamily};
pub use hash::{HASH_ANNOTATION, HASH_VERSION, HASH_VERSION_ANNOTATION, UPSTREAM_HASH_VERSION};
pub use kubelet::{KubeletConfiguration, MaxPods};
pub use network::{ConnectionTracking, CpuOptions, NetworkInterface, PlacementGroupSelector};
pub use spec::{
    AmiSelectorTerm, CapacityReservationSelectorTerm, EC2NodeClassSpec, OtherFields,
    SecurityGroupSelectorTerm, SubnetSelectorTerm, Tags,
};
pub use status::{
    Ami, CapacityReservation, EC2NodeClassStatus, SecurityGroup, Subnet, condition_types,
};
pub use validation::{InvalidNodeClass, Problem};

/// An EC2 node class (`karpenter.k8s.aws/v1`): the AMIs, subnets, security
/// groups, IAM role, kubelet and volumes of the nodes a NodePool launches.
///
/// It is written with its `apiVersion` and `kind`; when read, they may be
/// absent (a hand-written scenario), but not another group, version or kind.
/// As a cluster-scoped [`Resource`](k8s_openapi::Resource) with
/// [`Metadata`](k8s_openapi::Metadata), a Kubernetes client (kube's `Api`)
/// can list, watch and write it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EC2NodeClass {
    /// Standard object metadata; `metadata.name` is what a NodePool's
    /// `nodeClassRef` names.
    pub metadata: ObjectMeta,
    /// The desired node configuration.
    pub spec: EC2NodeClassSpec,
    /// What the selector terms resolved to, and the conditions.
    pub status: Option<EC2NodeClassStatus>,
    /// Top-level fields other than the above, kept as written.
    pub extra: OtherFields,
}

/// An [`EC2NodeClass`] as written: its type first, then its parts.
#[derive(Serialize)]
struct Written<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: &'a ObjectMeta,
    spec: &'a EC2NodeClassSpec,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'a EC2NodeClassStatus>,
    #[serde(flatten)]
    extra: &'a OtherFields,
}

impl Serialize for EC2NodeClass {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            api_version: Self::API_VERSION,
            kind: Self::KIND,
            metadata: &self.metadata,
            spec: &self.spec,
            status: self.status.as_ref(),
            extra: &self.extra,
        }
        .serialize(serializer)
    }
}

/// An [`EC2NodeClass`] as read: its type, when given, is checked.
#[derive(Deserialize)]
struct Read {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    #[serde(default)]
    spec: EC2NodeClassSpec,
    #[serde(default)]
    status: Option<EC2NodeClassStatus>,
    #[serde(flatten)]
    extra: OtherFields,
}

impl<'de> Deserialize<'de> for EC2NodeClass {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let read = Read::deserialize(deserializer)?;
        if let Some(version) = read.api_version.filter(|v| v != Self::API_VERSION) {
            return Err(D::Error::custom(format!(
                "apiVersion {version:?}: an EC2NodeClass is {}",
                Self::API_VERSION
            )));
        }
        if let Some(kind) = read.kind.filter(|k| k != Self::KIND) {
            return Err(D::Error::custom(format!(
                "kind {kind:?}: expected {}",
                Self::KIND
            )));
        }
        Ok(EC2NodeClass {
            metadata: read.metadata.unwrap_or_default(),
            spec: read.spec,
            status: read.status,
            extra: read.extra,
        })
    }
}

impl k8s_openapi::Resource for EC2NodeClass {
    const API_VERSION: &'static str = "karpenter.k8s.aws/v1";
    const GROUP: &'static str = "karpenter.k8s.aws";
    const KIND: &'static str = "EC2NodeClass";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "ec2nodeclasses";
    type Scope = k8s_openapi::ClusterResourceScope;
}

impl k8s_openapi::ListableResource for EC2NodeClass {
    const LIST_KIND: &'static str = "EC2NodeClassList";
}

impl k8s_openapi::Metadata for EC2NodeClass {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl EC2NodeClass {
    /// The object's `apiVersion`.
    pub const API_VERSION: &str = <Self as k8s_openapi::Resource>::API_VERSION;
    /// The object's `kind`.
    pub const KIND: &str = <Self as k8s_openapi::Resource>::KIND;

    /// `metadata.name`, if set.
    pub fn name(&self) -> Option<&str> {
        self.metadata.name.as_deref()
    }

    /// The first `alias` image term, parsed; `None` without one or when it is
    /// not `family@version` with a known family (which
    /// [`validate`](Self::validate) reports).
    pub fn alias(&self) -> Option<Alias> {
        let term = self
            .spec
            .ami_selector_terms
            .iter()
            .find_map(|term| term.alias.as_deref().filter(|a| !a.is_empty()))?;
        Alias::parse(term)
    }

    /// The AMI family, as upstream resolves it: `spec.amiFamily` when set,
    /// else the alias's family. `None` when neither gives a known family
    /// (an invalid spec; upstream falls back to `Custom` there).
    pub fn ami_family(&self) -> Option<AmiFamily> {
        match self.spec.ami_family.as_deref() {
            Some(name) => AmiFamily::parse(name),
            None => self.alias().map(|alias| alias.family),
        }
    }

    /// The instance metadata options with the CRD's defaults: those of an
    /// absent `metadataOptions`, or of each field left out.
    pub fn metadata_options(&self) -> ResolvedMetadataOptions {
        self.spec
            .metadata_options
            .as_ref()
            .map(MetadataOptions::resolved)
            .unwrap_or_default()
    }
}

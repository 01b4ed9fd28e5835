//! `AKSNodeClass` (`karpenter.azure.com/v1beta1`): how AKS nodes are built.
//!
//! The fields the engine reads are typed; everything else in the spec and the status
//! is kept as JSON so that a manifest reads and writes back without loss.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// An AKS node class (`karpenter.azure.com/v1beta1`): how AKS nodes are
/// built.
///
/// The fields the engine reads are typed; everything else in the spec and the
/// status is kept as JSON so that a manifest reads and writes back without
/// loss. It is written with its `apiVersion` and `kind`; when read, they may
/// be absent (a hand-written scenario), but not another group, version or
/// kind. As a cluster-scoped [`Resource`](k8s_openapi::Resource) with
/// [`Metadata`](k8s_openapi::Metadata), a Kubernetes client (kube's `Api`)
/// can list, watch and write it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AKSNodeClass {
    /// Standard object metadata; `metadata.name` is what a NodePool's `nodeClassRef` names.
    pub metadata: ObjectMeta,
    /// The desired node configuration.
    pub spec: AKSNodeClassSpec,
    /// The observed state: images, Kubernetes version, conditions.
    pub status: Option<AKSNodeClassStatus>,
}

/// An [`AKSNodeClass`] as written: its type first, then its parts.
#[derive(Serialize)]
struct Written<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: &'a ObjectMeta,
    spec: &'a AKSNodeClassSpec,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'a AKSNodeClassStatus>,
}

impl Serialize for AKSNodeClass {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            api_version: Self::API_VERSION,
            kind: Self::KIND,
            metadata: &self.metadata,
            spec: &self.spec,
            status: self.status.as_ref(),
        }
        .serialize(serializer)
    }
}

/// An [`AKSNodeClass`] as read: its type, when given, is checked.
#[derive(Deserialize)]
struct Read {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: AKSNodeClassSpec,
    #[serde(default)]
    status: Option<AKSNodeClassStatus>,
}

impl<'de> Deserialize<'de> for AKSNodeClass {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let read = Read::deserialize(deserializer)?;
        if let Some(version) = read.api_version.filter(|v| v != Self::API_VERSION) {
            return Err(D::Error::custom(format!(
                "apiVersion {version:?}: an AKSNodeClass is {}",
                Self::API_VERSION
            )));
        }
        if let Some(kind) = read.kind.filter(|k| k != Self::KIND) {
            return Err(D::Error::custom(format!(
                "kind {kind:?}: expected {}",
                Self::KIND
            )));
        }
        Ok(AKSNodeClass {
            metadata: read.metadata,
            spec: read.spec,
            status: read.status,
        })
    }
}

impl k8s_openapi::Resource for AKSNodeClass {
    const API_VERSION: &'static str = "karpenter.azure.com/v1beta1";
    const GROUP: &'static str = "karpenter.azure.com";
    const KIND: &'static str = "AKSNodeClass";
    const VERSION: &'static str = "v1beta1";
    const URL_PATH_SEGMENT: &'static str = "aksnodeclasses";
    type Scope = k8s_openapi::ClusterResourceScope;
}

impl k8s_openapi::ListableResource for AKSNodeClass {
    const LIST_KIND: &'static str = "AKSNodeClassList";
}

impl k8s_openapi::Metadata for AKSNodeClass {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The status of an [`AKSNodeClass`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AKSNodeClassStatus {
    /// The images nodes launch from, most preferred first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<NodeImage>>,
    /// The cluster's Kubernetes version, as nodes should run it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// `Ready` and the conditions behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<karpenter_core::api::Condition>>,
    /// Every other status field, kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// An image of [`AKSNodeClassStatus::images`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeImage {
    /// The image's ARM ID.
    #[serde(default)]
    pub id: String,
    /// The nodes it is for (arch, Hyper-V generation), as node selector
    /// requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<serde_json::Value>>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// The spec of an [`AKSNodeClass`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AKSNodeClassSpec {
    /// `Ubuntu` (the default), `Ubuntu2204`, `Ubuntu2404` or `AzureLinux`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_family: Option<String>,
    /// OS disk size in GB (default 128, 30 to 2048).
    #[serde(
        default,
        rename = "osDiskSizeGB",
        skip_serializing_if = "Option::is_none"
    )]
    pub os_disk_size_gb: Option<i64>,
    /// The ARM ID of the subnet nodes join.
    #[serde(
        default,
        rename = "vnetSubnetID",
        skip_serializing_if = "Option::is_none"
    )]
    pub vnet_subnet_id: Option<String>,
    /// Maximum pods per node (10 to 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<i64>,
    /// `FIPS` or `Disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fips_mode: Option<String>,
    /// Azure tags applied to the VM and its resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
    /// Every other spec field (kubelet, security, localDNS, ...), kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// An image family: which OS nodes run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ImageFamily {
    /// Ubuntu (22.04, or 24.04 from Kubernetes 1.34): the default.
    #[default]
    Ubuntu,
    /// Ubuntu 22.04.
    Ubuntu2204,
    /// Ubuntu 24.04.
    Ubuntu2404,
    /// Azure Linux (3 from Kubernetes 1.32, else 2).
    AzureLinux,
}

impl ImageFamily {
    /// The family named `name` as the spec writes it.
    pub fn parse(name: &str) -> Option<ImageFamily> {
        match name {
            "Ubuntu" => Some(Self::Ubuntu),
            "Ubuntu2204" => Some(Self::Ubuntu2204),
            "Ubuntu2404" => Some(Self::Ubuntu2404),
            "AzureLinux" => Some(Self::AzureLinux),
            _ => None,
        }
    }

    /// The `kubernetes.azure.com/os-sku` label.
    pub fn os_sku(self) -> &'static str {
        match self {
            Self::AzureLinux => "AzureLinux",
            _ => "Ubuntu",
        }
    }

    /// The GPU registry's names for this OS.
    pub fn gpu_os(self) -> &'static [&'static str] {
        match self {
            Self::AzureLinux => &["azurelinux", "azurelinux3"],
            _ => &["ubuntu"],
        }
    }
}

/// What is wrong with an AKSNodeClass's spec.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("AKSNodeClass {name}: spec.{field}: {message}")]
pub struct NodeClassError {
    /// The node class.
    pub name: String,
    /// The field, as the spec spells it.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

/// The OS disk size when the spec leaves it out.
pub(crate) const DEFAULT_OS_DISK_SIZE_GB: u32 = 128;

/// How the cluster's pods get addresses: what sets the default maxPods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkOptions {
    /// `azure` (the default), `none`, or another plugin (`kubenet`).
    pub plugin: String,
    /// `overlay` (the default) or empty (node subnet).
    pub plugin_mode: String,
}

impl Default for NetworkOptions {
    fn default() -> Self {
        NetworkOptions {
            plugin: "azure".to_owned(),
            plugin_mode: "overlay".to_owned(),
        }
    }
}

impl NetworkOptions {
    /// Pods per node when the node class does not say: 250 on Azure CNI
    /// overlay or without a CNI, 30 on Azure CNI with node-subnet IPs, 110
    /// otherwise.
    pub fn default_max_pods(&self) -> u32 {
        match (self.plugin.as_str(), self.plugin_mode.as_str()) {
            ("azure", "overlay") | ("none", _) => 250,
            ("azure", "") => 30,
            _ => 110,
        }
    }
}

impl AKSNodeClass {
    /// The object's `apiVersion`.
    pub const API_VERSION: &str = <Self as k8s_openapi::Resource>::API_VERSION;
    /// The object's `kind`.
    pub const KIND: &str = <Self as k8s_openapi::Resource>::KIND;

    fn name(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }

    fn error(&self, field: &'static str, message: impl Into<String>) -> NodeClassError {
        NodeClassError {
            name: self.name(),
            field,
            message: message.into(),
        }
    }

    /// The image family, `Ubuntu` when unset.
    pub fn image_family(&self) -> Result<ImageFamily, NodeClassError> {
        match self.spec.image_family.as_deref() {
            None => Ok(ImageFamily::default()),
            Some(name) => ImageFamily::parse(name).ok_or_else(|| {
                self.error(
                    "imageFamily",
                    format!("{name:?} is not Ubuntu, Ubuntu2204, Ubuntu2404 or AzureLinux"),
                )
            }),
        }
    }

    /// Checks the spec as the CRD's validation does for the fields the
    /// provider reads.
    pub fn validate(&self) -> Result<(), NodeClassError> {
        let family = self.image_family()?;
        if let Some(size) = self.spec.os_disk_size_gb
            && !(30..=2048).contains(&size)
        {
            return Err(self.error("osDiskSizeGB", format!("{size} is not within 30 to 2048")));
        }
        if let Some(pods) = self.spec.max_pods
            && !(10..=250).contains(&pods)
        {
            return Err(self.error("maxPods", format!("{pods} is not within 10 to 250")));
        }
        match self.spec.fips_mode.as_deref() {
            None | Some("Disabled") => {}
            Some("FIPS") if family == ImageFamily::Ubuntu2404 => {
                return Err(self.error("fipsMode", "FIPS is not available for Ubuntu2404"));
            }
            Some("FIPS") => {}
            Some(other) => {
                return Err(self.error("fipsMode", format!("{other:?} is not FIPS or Disabled")));
            }
        }
        if let Some(tags) = &self.spec.tags {
            for (key, value) in tags {
                if key.len() > 512 || key.chars().any(|c| "<>%&?\\".contains(c)) {
                    return Err(
                        self.error("tags", format!("key {key:?} is not a valid Azure tag name"))
                    );
                }
                if value.len() > 256 {
                    return Err(self.error(
                        "tags",
                        format!("the value of {key:?} is over 256 characters"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether LocalDNS runs on this class's nodes: the state upstream's
    /// status controller resolved (`status.localDNSState`), or, before it
    /// has, what that controller would resolve from `spec.localDNS.mode`:
    /// `Required` enables it; `Preferred` waits on a Kubernetes version
    /// (1.99) no cluster runs yet, so it stays disabled, as do `Disabled`
    /// and no mode.
    pub fn local_dns_enabled(&self) -> bool {
        let resolved = self
            .status
            .as_ref()
            .and_then(|s| s.other.get("localDNSState"))
            .and_then(serde_json::Value::as_str);
        match resolved {
            Some(state) => state == "Enabled",
            None => {
                let mode = self.spec.other.get("localDNS").and_then(|l| l.get("mode"));
                mode.and_then(serde_json::Value::as_str) == Some("Required")
            }
        }
    }

    /// Whether the class asks for FIPS-compliant nodes (`fipsMode: FIPS`).
    pub(crate) fn fips_enabled(&self) -> bool {
        self.spec.fips_mode.as_deref() == Some("FIPS")
    }

    /// Whether AKS installs the GPU driver on the class's GPU nodes (every
    /// `gpu.mode` but `None`).
    pub(crate) fn gpu_driver_managed(&self) -> bool {
        let mode = self.spec.other.get("gpu").and_then(|g| g.get("mode"));
        mode.and_then(serde_json::Value::as_str) != Some("None")
    }

    /// Whether the class asks for trusted launch (vTPM or secure boot).
    pub(crate) fn trusted_launch(&self) -> bool {
        self.spec_flag(&["security", "trustedLaunch", "vtpm"])
            || self.spec_flag(&["security", "trustedLaunch", "secureBoot"])
    }

    /// A boolean deep in the spec (`false` when absent), where the typed
    /// spec keeps the fields it does not name.
    pub(crate) fn spec_flag(&self, path: &[&str]) -> bool {
        let Some((first, rest)) = path.split_first() else {
            return false;
        };
        let mut value = self.spec.other.get(*first);
        for key in rest {
            value = value.and_then(|v| v.get(key));
        }
        value.and_then(serde_json::Value::as_bool).unwrap_or(false)
    }
}

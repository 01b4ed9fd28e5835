//! The user data that makes an EC2 instance join its EKS cluster, as
//! upstream's `amifamily/bootstrap` writes it per AMI family:
//! - **AL2023**: a MIME archive of the class's own parts (MIME, a
//!   `NodeConfig` or a shell script) followed by Karpenter's
//!   `node.eks.aws/v1alpha1` `NodeConfig` for `nodeadm`;
//! - **AL2**: a MIME archive of the class's parts followed by a shell part
//!   running `/etc/eks/bootstrap.sh` with the cluster and kubelet flags;
//! - **Bottlerocket**: TOML settings, the class's `userData` with
//!   Karpenter's `settings.kubernetes` written over it;
//! - **Custom**: the class's user data as written.
//!
//! Windows (PowerShell) is not built yet: [`user_data`] answers
//! [`UserDataError::UnsupportedFamily`] for it.
//!
//! Everything here is pure: the same [`UserDataInput`] gives the same bytes,
//! so launch templates built from it compare equal.

mod al2;
mod al2023;
mod args;
mod bottlerocket;
mod duration;
mod mime;
#[cfg(test)]
mod tests;
mod toml;
mod yaml;

use std::collections::BTreeMap;
use std::net::IpAddr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Taint;
use karpenter_core::scheduling::UNREGISTERED_NO_EXECUTE_TAINT;
use thiserror::Error;

pub use mime::MimeError;

use crate::nodeclass::{AmiFamily, KubeletConfiguration};

/// What a node's user data is made from: the cluster, the class and the
/// claim, as upstream's resolver gathers them for one launch template.
#[derive(Debug, Clone, PartialEq)]
pub struct UserDataInput {
    /// The AMI family, which picks the format.
    pub family: AmiFamily,
    /// The EKS cluster's name.
    pub cluster_name: String,
    /// The cluster's API server endpoint (`https://...`).
    pub cluster_endpoint: String,
    /// The cluster's certificate authority bundle, base64 as EKS gives it.
    pub ca_bundle: Option<String>,
    /// The cluster's service CIDR (IPv4 or IPv6); AL2023 needs it.
    pub cluster_cidr: Option<String>,
    /// The cluster's kube-dns service address: the kubelet's `clusterDNS`
    /// when the class sets none, and (on AL2) the IP family.
    pub kube_dns_ip: Option<IpAddr>,
    /// The class's `spec.kubelet`, with `maxPods` resolved to a count where
    /// it is an expression (an expression is passed to no flag).
    pub kubelet: Option<KubeletConfiguration>,
    /// The node's labels (the claim's).
    pub labels: BTreeMap<String, String>,
    /// The claim's taints and startup taints; `karpenter.sh/unregistered`
    /// is added when absent, as upstream does.
    pub taints: Vec<Taint>,
    /// The class's `spec.userData`.
    pub custom_user_data: Option<String>,
    /// The class's `spec.instanceStorePolicy` (`RAID0` or none).
    pub instance_store_policy: Option<String>,
    /// The AMI's release (`latest`, `v1.46.0`) when the class names one,
    /// as its alias does: Bottlerocket's instance-store mount depends on it.
    pub ami_version: Option<String>,
}

/// Why no user data could be made. Each names the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UserDataError {
    /// `spec.userData` announces MIME but is not a readable multipart
    /// archive.
    #[error("spec.userData: not a multipart MIME archive")]
    InvalidUserData {
        /// What the MIME reader found wrong.
        #[source]
        source: MimeError,
    },
    /// The cluster's certificate authority bundle is not base64.
    #[error("cluster CA bundle: not base64")]
    InvalidCaBundle {
        /// The decoder's complaint.
        #[source]
        source: base64::DecodeError,
    },
    /// AL2023's `NodeConfig` needs the cluster's service CIDR, not yet
    /// known (upstream: the node class is not ready).
    #[error("cluster CIDR: not yet resolved; AL2023 nodes need it")]
    MissingClusterCidr,
    /// Bottlerocket's `spec.userData` is not TOML.
    #[error("spec.userData: not TOML")]
    InvalidToml {
        /// What the TOML parser found wrong, and where.
        #[source]
        source: toml_edit::TomlError,
    },
    /// A Bottlerocket setting in `spec.userData` has the wrong kind of
    /// value.
    #[error("spec.userData: {key} must be {expected}")]
    InvalidBottlerocketSetting {
        /// The setting's dotted path, `settings.kubernetes.max-pods`.
        key: String,
        /// The kind of value it takes (`a string`, `a table`, ...).
        expected: &'static str,
    },
    /// A family whose user data is not built yet.
    #[error("spec.amiFamily {0}: user data not yet supported")]
    UnsupportedFamily(AmiFamily),
}

/// The user data for `input`, as text (what the instance reads).
pub fn user_data(input: &UserDataInput) -> Result<String, UserDataError> {
    let resolved = Resolved::new(input);
    match input.family {
        AmiFamily::AL2 => al2::user_data(&resolved),
        AmiFamily::AL2023 => al2023::user_data(&resolved),
        AmiFamily::Bottlerocket => bottlerocket::user_data(&resolved),
        AmiFamily::Custom => Ok(input.custom_user_data.clone().unwrap_or_default()),
        family => Err(UserDataError::UnsupportedFamily(family)),
    }
}

/// The user data for `input`, base64 as EC2's launch templates take it.
pub fn user_data_base64(input: &UserDataInput) -> Result<String, UserDataError> {
    user_data(input).map(|text| STANDARD.encode(text))
}

/// The input with upstream's resolver defaults applied: the kube-dns
/// address as `clusterDNS` when the class sets none, and the unregistered
/// taint.
struct Resolved<'a> {
    input: &'a UserDataInput,
    kubelet: Option<KubeletConfiguration>,
    taints: Vec<Taint>,
}

impl<'a> Resolved<'a> {
    fn new(input: &'a UserDataInput) -> Self {
        let mut kubelet = input.kubelet.clone();
        let has_dns = kubelet
            .as_ref()
            .and_then(|k| k.cluster_dns.as_ref())
            .is_some_and(|dns| !dns.is_empty());
        if let (Some(ip), false) = (input.kube_dns_ip, has_dns) {
            kubelet
                .get_or_insert_with(KubeletConfiguration::default)
                .cluster_dns = Some(vec![ip.to_string()]);
        }
        let mut taints = input.taints.clone();
        if !taints
            .iter()
            .any(|t| UNREGISTERED_NO_EXECUTE_TAINT.matches(t))
        {
            taints.push(UNREGISTERED_NO_EXECUTE_TAINT.to_taint());
        }
        Resolved {
            input,
            kubelet,
            taints,
        }
    }

    /// The first `clusterDNS` address, after defaulting.
    fn cluster_dns(&self) -> Option<&str> {
        self.kubelet
            .as_ref()
            .and_then(|k| k.cluster_dns.as_ref())
            .and_then(|dns| dns.first())
            .map(String::as_str)
    }

    fn raid0(&self) -> bool {
        self.input.instance_store_policy.as_deref() == Some("RAID0")
    }

    /// The class's user data when it has any (upstream drops an empty one).
    fn custom(&self) -> Option<&str> {
        self.input
            .custom_user_data
            .as_deref()
            .filter(|data| !data.is_empty())
    }
}

/// The class's MIME user data as parts, its errors naming `spec.userData`.
fn custom_parts(user_data: &str) -> Result<Vec<mime::Part>, UserDataError> {
    mime::parse(user_data).map_err(|source| UserDataError::InvalidUserData { source })
}

//! Block device mappings and instance metadata options of an `EC2NodeClass`.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde::{Deserialize, Serialize};

use super::other_fields::OtherFields;

/// A volume attached to nodes (`spec.blockDeviceMappings[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockDeviceMapping {
    /// The device name, e.g. `/dev/xvda`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// The EBS volume behind the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebs: Option<BlockDevice>,
    /// Whether the kubelet's root directory is on this device (at most one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_volume: Option<bool>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

impl BlockDeviceMapping {
    /// Whether this mapping holds the kubelet's root directory.
    pub fn is_root_volume(&self) -> bool {
        self.root_volume == Some(true)
    }
}

/// An EBS volume (`spec.blockDeviceMappings[].ebs`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockDevice {
    /// Whether the volume goes with the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_on_termination: Option<bool>,
    /// Whether the volume is encrypted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    /// Provisioned IOPS (io1, io2, gp3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<i64>,
    /// The KMS key encrypting the volume.
    #[serde(default, rename = "kmsKeyID", skip_serializing_if = "Option::is_none")]
    pub kms_key_id: Option<String>,
    /// The snapshot the volume is made from.
    #[serde(
        default,
        rename = "snapshotID",
        skip_serializing_if = "Option::is_none"
    )]
    pub snapshot_id: Option<String>,
    /// Throughput in MiB/s (gp3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<i64>,
    /// The rate (100 to 300 MiB/s) at which a snapshot's blocks are fetched;
    /// only with `snapshotID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_initialization_rate: Option<i64>,
    /// The size, in `Gi`, `G`, `Ti` or `T`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_size: Option<Quantity>,
    /// `standard`, `io1`, `io2`, `gp2`, `sc1`, `st1` or `gp3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_type: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// How the instance metadata service is exposed (`spec.metadataOptions`).
///
/// Fields left out take the CRD's defaults; see [`MetadataOptions::resolved`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataOptions {
    /// `enabled` (the default) or `disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_endpoint: Option<String>,
    /// `enabled` or `disabled` (the default).
    #[serde(
        default,
        rename = "httpProtocolIPv6",
        skip_serializing_if = "Option::is_none"
    )]
    pub http_protocol_ipv6: Option<String>,
    /// The PUT response hop limit, 1 (the default) to 64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_put_response_hop_limit: Option<i64>,
    /// `required` (the default) or `optional`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_tokens: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// [`MetadataOptions`] with the CRD's defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedMetadataOptions {
    /// `enabled` or `disabled`.
    pub http_endpoint: String,
    /// `enabled` or `disabled`.
    pub http_protocol_ipv6: String,
    /// 1 to 64.
    pub http_put_response_hop_limit: i64,
    /// `required` or `optional`.
    pub http_tokens: String,
}

impl Default for ResolvedMetadataOptions {
    /// The CRD's default for an absent `metadataOptions`.
    fn default() -> Self {
        ResolvedMetadataOptions {
            http_endpoint: "enabled".to_owned(),
            http_protocol_ipv6: "disabled".to_owned(),
            http_put_response_hop_limit: 1,
            http_tokens: "required".to_owned(),
        }
    }
}

impl MetadataOptions {
    /// These options with each absent field at the CRD's default, as the API
    /// server stores them.
    pub fn resolved(&self) -> ResolvedMetadataOptions {
        let defaults = ResolvedMetadataOptions::default();
        ResolvedMetadataOptions {
            http_endpoint: self.http_endpoint.clone().unwrap_or(defaults.http_endpoint),
            http_protocol_ipv6: self
                .http_protocol_ipv6
                .clone()
                .unwrap_or(defaults.http_protocol_ipv6),
            http_put_response_hop_limit: self
                .http_put_response_hop_limit
                .unwrap_or(defaults.http_put_response_hop_limit),
            http_tokens: self.http_tokens.clone().unwrap_or(defaults.http_tokens),
        }
    }
}

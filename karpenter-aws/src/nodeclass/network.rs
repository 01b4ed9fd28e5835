//! Networking and processor options of an `EC2NodeClass`: network
//! interfaces, connection tracking, the placement group, CPU options.

use serde::{Deserialize, Serialize};

use super::other_fields::OtherFields;

/// A network interface of launched instances (`spec.networkInterfaces[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInterface {
    /// The network card, 0 or more.
    pub network_card_index: i64,
    /// The device index on the card, 0 or more.
    pub device_index: i64,
    /// `interface` or `efa-only`.
    pub interface_type: String,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// Idle connection-tracking timeouts, in seconds (`spec.connectionTracking`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionTracking {
    /// Established TCP connections, 60 to 432000.
    #[serde(
        default,
        rename = "tcpEstablishedTimeout",
        skip_serializing_if = "Option::is_none"
    )]
    pub tcp_established_timeout: Option<i64>,
    /// UDP streams, 60 to 180.
    #[serde(
        default,
        rename = "udpStreamTimeout",
        skip_serializing_if = "Option::is_none"
    )]
    pub udp_stream_timeout: Option<i64>,
    /// Other UDP flows, 30 to 60.
    #[serde(
        default,
        rename = "udpTimeout",
        skip_serializing_if = "Option::is_none"
    )]
    pub udp_timeout: Option<i64>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// The placement group nodes launch into, by name or by ID
/// (`spec.placementGroupSelector`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlacementGroupSelector {
    /// The group's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The group's ID, `pg-...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

/// Processor options (`spec.cpuOptions`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuOptions {
    /// `enabled` (only types supporting nested virtualization) or
    /// `disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_virtualization: Option<String>,
    /// Every other field, kept as written.
    #[serde(flatten)]
    pub other: OtherFields,
}

//! The ways an instance can be bought: the values of `karpenter.sh/capacity-type`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use super::labels::{CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT};

/// A capacity type: how an offering is bought, and the value its nodes carry
/// in `karpenter.sh/capacity-type`. Upstream knows these three. Label values
/// in requirements stay strings (a NodePool may name any value and then
/// matches no offering), but an offering is always one of these.
///
/// The order (`OnDemand < Reserved < Spot`, their names' order) only makes
/// sorted output deterministic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CapacityType {
    /// `on-demand`: bought by the hour, never reclaimed.
    OnDemand,
    /// `reserved`: capacity reserved ahead of time.
    Reserved,
    /// `spot`: spare capacity at a discount, which the cloud may reclaim.
    Spot,
}

impl CapacityType {
    /// Every capacity type, in order.
    pub const ALL: [CapacityType; 3] = [
        CapacityType::OnDemand,
        CapacityType::Reserved,
        CapacityType::Spot,
    ];

    /// The label value: `on-demand`, `reserved` or `spot`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CapacityType::OnDemand => CAPACITY_TYPE_ON_DEMAND,
            CapacityType::Reserved => CAPACITY_TYPE_RESERVED,
            CapacityType::Spot => CAPACITY_TYPE_SPOT,
        }
    }
}

impl fmt::Display for CapacityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A capacity type that is none of `on-demand`, `reserved` and `spot`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown capacity type {0:?}, expected one of on-demand, reserved, spot")]
pub struct UnknownCapacityType(pub String);

impl FromStr for CapacityType {
    type Err = UnknownCapacityType;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        CapacityType::ALL
            .into_iter()
            .find(|c| c.as_str() == text)
            .ok_or_else(|| UnknownCapacityType(text.to_owned()))
    }
}

impl PartialEq<str> for CapacityType {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for CapacityType {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for CapacityType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CapacityType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reads_back_from_its_label_value() {
        for capacity_type in CapacityType::ALL {
            assert_eq!(capacity_type.as_str().parse(), Ok(capacity_type));
            let json = serde_json::to_string(&capacity_type).expect("serializes");
            assert_eq!(json, format!("\"{capacity_type}\""));
            assert_eq!(
                serde_json::from_str::<CapacityType>(&json).ok(),
                Some(capacity_type)
            );
        }
        let unknown = "preemptible".parse::<CapacityType>().unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "unknown capacity type \"preemptible\", expected one of on-demand, reserved, spot"
        );
        assert!(serde_json::from_str::<CapacityType>("\"Spot\"").is_err());
    }
}

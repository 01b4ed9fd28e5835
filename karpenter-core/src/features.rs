//! Upstream's feature gates: the optional capabilities a plan may use, turned
//! on and off as upstream's `--feature-gates` flag does.
//!
//! The gates and their defaults are upstream's (`pkg/operator/options`):
//! `NodeRepair=false, ReservedCapacity=true, SpotToSpotConsolidation=false,
//! NodeOverlay=false, StaticCapacity=false, CapacityBuffer=false`. The text
//! form is upstream's too: comma-separated `Name=bool` pairs, spaces around
//! either side ignored, booleans as Go's `strconv.ParseBool` reads them, the
//! last pair for a gate winning, gates not named keeping their defaults.
//!
//! One departure: upstream ignores a name it does not know, so a misspelt gate
//! (`NodeRepiar=true`) silently leaves the feature off. Here it is an error
//! that names the known gates.

use std::fmt;
use std::str::FromStr;

/// One of upstream's feature gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FeatureGate {
    /// Nodes whose conditions match the provider's repair policies are
    /// replaced forcefully (upstream's node health controller).
    NodeRepair,
    /// Offerings of capacity type `reserved` are launched, preferred and
    /// counted down as claims take them.
    ReservedCapacity,
    /// Consolidation may replace spot nodes with cheaper spot nodes.
    SpotToSpotConsolidation,
    /// `NodeOverlay` documents adjust instance types' prices and capacity.
    NodeOverlay,
    /// NodePools with `spec.replicas` hold a fixed number of nodes.
    StaticCapacity,
    /// `CapacityBuffer` documents keep headroom for pods not yet created.
    CapacityBuffer,
}

impl FeatureGate {
    /// Every gate, in the order upstream lists them.
    pub const ALL: [FeatureGate; 6] = [
        FeatureGate::NodeRepair,
        FeatureGate::ReservedCapacity,
        FeatureGate::SpotToSpotConsolidation,
        FeatureGate::NodeOverlay,
        FeatureGate::StaticCapacity,
        FeatureGate::CapacityBuffer,
    ];

    /// The gate's name as `--feature-gates` writes it.
    pub fn name(self) -> &'static str {
        match self {
            FeatureGate::NodeRepair => "NodeRepair",
            FeatureGate::ReservedCapacity => "ReservedCapacity",
            FeatureGate::SpotToSpotConsolidation => "SpotToSpotConsolidation",
            FeatureGate::NodeOverlay => "NodeOverlay",
            FeatureGate::StaticCapacity => "StaticCapacity",
            FeatureGate::CapacityBuffer => "CapacityBuffer",
        }
    }
}

impl fmt::Display for FeatureGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FeatureGate {
    type Err = FeatureGateError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        FeatureGate::ALL
            .into_iter()
            .find(|gate| gate.name() == name)
            .ok_or_else(|| FeatureGateError::UnknownGate {
                name: name.to_owned(),
            })
    }
}

/// Which of upstream's optional capabilities are on. The default is
/// upstream's: only [`ReservedCapacity`](FeatureGate::ReservedCapacity) is on.
///
/// ```
/// use karpenter_core::features::{FeatureGate, FeatureGates};
///
/// let gates: FeatureGates = "NodeOverlay=true, NodeRepair=true".parse()?;
/// assert!(gates.is_on(FeatureGate::NodeOverlay));
/// assert!(gates.is_on(FeatureGate::ReservedCapacity)); // upstream's default
/// assert!(!gates.is_on(FeatureGate::SpotToSpotConsolidation));
/// assert_eq!(
///     gates.to_string(),
///     "NodeRepair=true,ReservedCapacity=true,SpotToSpotConsolidation=false,\
///      NodeOverlay=true,StaticCapacity=false,CapacityBuffer=false"
/// );
/// assert!("NodeRepiar=true".parse::<FeatureGates>().is_err());
/// # Ok::<(), karpenter_core::features::FeatureGateError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FeatureGates {
    /// One bit per gate, at its place in [`FeatureGate::ALL`].
    on: u8,
}

impl FeatureGates {
    /// Upstream's defaults.
    pub const UPSTREAM: FeatureGates = FeatureGates {
        on: 1 << FeatureGate::ReservedCapacity as u8,
    };

    /// Whether `gate` is on.
    pub fn is_on(self, gate: FeatureGate) -> bool {
        self.on & (1 << gate as u8) != 0
    }

    /// These gates with `gate` turned on or off.
    #[must_use]
    pub fn with(mut self, gate: FeatureGate, on: bool) -> Self {
        if on {
            self.on |= 1 << gate as u8;
        } else {
            self.on &= !(1 << gate as u8);
        }
        self
    }

    /// These gates with the pairs of `text` (`Name=bool,...`) applied over
    /// them: what upstream's flag does to its defaults.
    pub fn apply(self, text: &str) -> Result<Self, FeatureGateError> {
        let mut gates = self;
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, value)) = pair.split_once('=') else {
                return Err(FeatureGateError::Malformed {
                    pair: pair.to_owned(),
                });
            };
            let gate: FeatureGate = name.trim().parse()?;
            let value = value.trim();
            let on = parse_bool(value).ok_or_else(|| FeatureGateError::NotABool {
                gate,
                value: value.to_owned(),
            })?;
            gates = gates.with(gate, on);
        }
        Ok(gates)
    }
}

impl Default for FeatureGates {
    fn default() -> Self {
        FeatureGates::UPSTREAM
    }
}

impl FromStr for FeatureGates {
    type Err = FeatureGateError;

    /// Upstream's defaults with `text`'s pairs applied over them.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        FeatureGates::UPSTREAM.apply(text)
    }
}

impl fmt::Display for FeatureGates {
    /// Every gate, in upstream's order: `NodeRepair=false,ReservedCapacity=true,...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, gate) in FeatureGate::ALL.into_iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{gate}={}", self.is_on(gate))?;
        }
        Ok(())
    }
}

/// Go's `strconv.ParseBool`, which upstream's flag parsing uses.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Why a `--feature-gates` value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FeatureGateError {
    /// A pair without `=`.
    #[error("malformed feature gate `{pair}`: expected Name=true or Name=false")]
    Malformed {
        /// The pair as written.
        pair: String,
    },
    /// A gate this engine does not know.
    #[error(
        "unknown feature gate `{name}`: the gates are NodeRepair, ReservedCapacity, \
         SpotToSpotConsolidation, NodeOverlay, StaticCapacity and CapacityBuffer"
    )]
    UnknownGate {
        /// The name as written.
        name: String,
    },
    /// A value that is not a boolean.
    #[error("feature gate {gate}: `{value}` is not a boolean (true or false)")]
    NotABool {
        /// The gate.
        gate: FeatureGate,
        /// The value as written.
        value: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_upstreams() {
        let gates = FeatureGates::default();
        assert_eq!(
            gates.to_string(),
            "NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,\
             NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false"
        );
        assert_eq!("".parse::<FeatureGates>(), Ok(gates));
        assert_eq!(" , ,".parse::<FeatureGates>(), Ok(gates));
    }

    #[test]
    fn pairs_apply_over_the_defaults_and_the_last_wins() {
        let gates: FeatureGates = " NodeRepair = true ,ReservedCapacity=F,NodeRepair=1"
            .parse()
            .expect("parses");
        assert!(gates.is_on(FeatureGate::NodeRepair));
        assert!(!gates.is_on(FeatureGate::ReservedCapacity));
        let gates: FeatureGates = "SpotToSpotConsolidation=TRUE,SpotToSpotConsolidation=false"
            .parse()
            .expect("parses");
        assert!(!gates.is_on(FeatureGate::SpotToSpotConsolidation));
    }

    #[test]
    fn every_gate_round_trips_through_its_text() {
        for bits in 0u8..64 {
            let gates = FeatureGates { on: bits };
            assert_eq!(gates.to_string().parse::<FeatureGates>(), Ok(gates));
        }
    }

    #[test]
    fn bad_pairs_are_named() {
        let error = "NodeOverlay".parse::<FeatureGates>().unwrap_err();
        assert!(matches!(error, FeatureGateError::Malformed { ref pair } if pair == "NodeOverlay"));
        let error = "NodeRepiar=true".parse::<FeatureGates>().unwrap_err();
        assert!(error.to_string().contains("`NodeRepiar`"), "{error}");
        let error = "NodeOverlay=yes".parse::<FeatureGates>().unwrap_err();
        assert_eq!(
            error,
            FeatureGateError::NotABool {
                gate: FeatureGate::NodeOverlay,
                value: "yes".into()
            }
        );
        // Upstream matches names exactly.
        assert!("nodeoverlay=true".parse::<FeatureGates>().is_err());
    }
}

//! The options every planner reads: how new claims are chosen
//! ([`Packing`]), upstream's feature gates, and what a claim does with a
//! `minValues` its types cannot meet ([`MinValuesPolicy`]).
//!
//! Provisioning, disruption (its replacements and its simulations), the
//! driver and the simulators all plan new claims, and must plan them the same
//! way: one [`PlanningOptions`] is what each of their option types holds, so
//! a new planning knob is added here once. With the `clap` feature,
//! `PlanningArgs` is the group of command-line flags for it, which
//! `karpenter-sim` and `karpenter-controller` both flatten.

use crate::features::FeatureGates;

#[cfg(feature = "clap")]
mod args;

#[cfg(feature = "clap")]
pub use args::PlanningArgs;

/// How every planner chooses new claims, whichever plan they are for.
///
/// ```
/// use karpenter_core::features::{FeatureGate, FeatureGates};
/// use karpenter_core::planning::{MinValuesPolicy, Packing, PlanningOptions};
///
/// let options = PlanningOptions::default()
///     .with_packing(Packing::Cost)
///     .with_min_values_policy(MinValuesPolicy::BestEffort);
/// assert_eq!(options.feature_gates, FeatureGates::UPSTREAM);
/// assert!(options.feature_gates.is_on(FeatureGate::ReservedCapacity));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PlanningOptions {
    /// How new claims are chosen: as upstream (the default), or at the
    /// least price ([`Packing::Cost`]): provisioning's claims, disruption's
    /// replacements and M-to-N consolidation's.
    pub packing: Packing,
    /// Upstream's feature gates, with upstream's defaults. Provisioning reads
    /// `StaticCapacity`, `ReservedCapacity` and `CapacityBuffer`; disruption
    /// also `NodeRepair` and `SpotToSpotConsolidation`.
    pub feature_gates: FeatureGates,
    /// What a claim does when its instance types cannot meet a requirement's
    /// `minValues`: upstream's `--min-values-policy` (default `Strict`).
    pub min_values_policy: MinValuesPolicy,
}

impl PlanningOptions {
    /// These options with new claims chosen by `packing`.
    #[must_use]
    pub fn with_packing(mut self, packing: Packing) -> Self {
        self.packing = packing;
        self
    }

    /// These options with upstream's feature gates set to `gates`.
    #[must_use]
    pub fn with_feature_gates(mut self, gates: FeatureGates) -> Self {
        self.feature_gates = gates;
        self
    }

    /// These options with `policy` for unmet `minValues`.
    #[must_use]
    pub fn with_min_values_policy(mut self, policy: MinValuesPolicy) -> Self {
        self.min_values_policy = policy;
        self
    }
}

impl From<Packing> for PlanningOptions {
    /// The default options with new claims chosen by `packing`.
    fn from(packing: Packing) -> Self {
        Self::default().with_packing(packing)
    }
}

impl From<FeatureGates> for PlanningOptions {
    /// The default options with upstream's feature gates set to `gates`.
    fn from(gates: FeatureGates) -> Self {
        Self::default().with_feature_gates(gates)
    }
}

impl From<MinValuesPolicy> for PlanningOptions {
    /// The default options with `policy` for unmet `minValues`.
    fn from(policy: MinValuesPolicy) -> Self {
        Self::default().with_min_values_policy(policy)
    }
}

/// What a claim does when its instance types cannot meet a requirement's
/// `minValues` (upstream's `--min-values-policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MinValuesPolicy {
    /// The pod cannot go on the claim (upstream's default).
    #[default]
    Strict,
    /// The claim keeps the types it can, each unmet `minValues` lowered to
    /// the number of values they have, and says so
    /// ([`PlannedClaim::min_values_relaxed`](crate::provisioning::PlannedClaim::min_values_relaxed)).
    BestEffort,
}

impl MinValuesPolicy {
    /// Whether unmet `minValues` are relaxed.
    pub(crate) fn relaxes(self) -> bool {
        self == MinValuesPolicy::BestEffort
    }
}

impl std::fmt::Display for MinValuesPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MinValuesPolicy::Strict => "Strict",
            MinValuesPolicy::BestEffort => "BestEffort",
        })
    }
}

impl std::str::FromStr for MinValuesPolicy {
    type Err = String;

    /// `Strict` or `BestEffort`, exactly as upstream's flag takes them.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "Strict" => Ok(MinValuesPolicy::Strict),
            "BestEffort" => Ok(MinValuesPolicy::BestEffort),
            _ => Err(format!(
                "invalid min values policy {text:?}: expected Strict or BestEffort"
            )),
        }
    }
}

/// How new claims and their instance types are chosen.
///
/// Non-exhaustive: [`Packing::Cost`] exists with the crate's `optimise`
/// feature (on by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Packing {
    /// As upstream Karpenter: first-fit-decreasing onto ever-narrowing
    /// instance-type lists. The default.
    #[default]
    Upstream,
    /// Every constraint upstream honours, at the least total price this
    /// engine finds: never dearer than [`Packing::Upstream`].
    #[cfg(feature = "optimise")]
    Cost,
}

impl Packing {
    /// Every packing this build has, in the order the flag lists them.
    pub const ALL: &[Packing] = &[
        Packing::Upstream,
        #[cfg(feature = "optimise")]
        Packing::Cost,
    ];

    /// The name the `--packing` flag and the outputs use: `upstream`,
    /// `cost`.
    pub fn name(self) -> &'static str {
        match self {
            Packing::Upstream => "upstream",
            #[cfg(feature = "optimise")]
            Packing::Cost => "cost",
        }
    }
}

impl std::fmt::Display for Packing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

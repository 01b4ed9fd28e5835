//! What provisioning reads beyond the snapshot.

use k8s_openapi::jiff::Timestamp;

use crate::features::FeatureGates;

/// How [`plan_provisioning_with`](super::plan_provisioning_with) plans, beyond the snapshot.
///
/// ```
/// use k8s_openapi::jiff::Timestamp;
/// use karpenter_core::provisioning::{Packing, ProvisioningOptions};
///
/// let now: Timestamp = "2026-01-01T00:00:00Z".parse()?;
/// let options = ProvisioningOptions::default().with_packing(Packing::Cost).at(now);
/// assert_eq!(options.packing, Packing::Cost);
/// assert_eq!(options.now, Some(now));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProvisioningOptions {
    /// How the new claims are chosen: as upstream (the default), or at the
    /// least price ([`Packing::Cost`]).
    pub packing: Packing,
    /// The moment planned. It decides one thing: whether a
    /// `karpenter.sh/do-not-disrupt` annotation with a duration (`"2h"`)
    /// still keeps a pod on a node that is being deleted, so that it needs
    /// no capacity yet. `None` (no clock) reads every such annotation as
    /// still holding its pod.
    pub now: Option<Timestamp>,
    /// Upstream's feature gates, with upstream's defaults. Provisioning
    /// reads `StaticCapacity`, `ReservedCapacity` and `CapacityBuffer`.
    pub feature_gates: FeatureGates,
    /// What a claim does when its instance types cannot meet a requirement's
    /// `minValues`: upstream's `--min-values-policy` (default `Strict`).
    pub min_values_policy: MinValuesPolicy,
}

impl ProvisioningOptions {
    /// These options with new claims chosen by `packing`.
    pub fn with_packing(mut self, packing: Packing) -> Self {
        self.packing = packing;
        self
    }

    /// These options with upstream's feature gates set to `gates`.
    pub fn with_feature_gates(mut self, gates: FeatureGates) -> Self {
        self.feature_gates = gates;
        self
    }

    /// These options with `policy` for unmet `minValues`.
    pub fn with_min_values_policy(mut self, policy: MinValuesPolicy) -> Self {
        self.min_values_policy = policy;
        self
    }

    /// These options planning at `now`.
    pub fn at(mut self, now: Timestamp) -> Self {
        self.now = Some(now);
        self
    }
}

impl From<Packing> for ProvisioningOptions {
    /// The default options with new claims chosen by `packing`.
    fn from(packing: Packing) -> Self {
        Self::default().with_packing(packing)
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
    /// ([`PlannedClaim::min_values_relaxed`](super::PlannedClaim::min_values_relaxed)).
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

/// How provisioning chooses the new claims and their instance types.
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

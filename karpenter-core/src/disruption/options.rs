//! What a plan may do beyond upstream's defaults: the options every part of
//! the planner reads (the forceful steps, the methods, the replacements'
//! packing). They sit below all of those, so that none of them imports
//! another for its options.

use super::simulate::SimulationOptions;
use crate::cloudprovider::RepairPolicy;
use crate::features::{FeatureGate, FeatureGates};
use crate::provisioning::{MinValuesPolicy, Packing};

/// What a plan may do beyond upstream's defaults: upstream's feature gates,
/// this engine's own options, and the provider's repair policies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DisruptionOptions {
    /// Upstream's feature gates, with upstream's defaults. A plan reads
    /// `NodeRepair` (without it the repair policies are not applied),
    /// `SpotToSpotConsolidation` (consolidation may replace spot nodes with
    /// cheaper spot nodes), `ReservedCapacity` and `CapacityBuffer`.
    pub feature_gates: FeatureGates,
    /// Multi-node consolidation may replace its candidates with several
    /// nodes, fewer and cheaper together, not only with one (beyond upstream;
    /// `--m-to-n`).
    pub m_to_n: bool,
    /// The cloud provider's repair policies: node conditions that get a node
    /// replaced, when the `NodeRepair` gate is on (none: no repair).
    pub repair_policies: Vec<RepairPolicy>,
    /// How replacements are chosen: as upstream (the default), or at the
    /// least price ([`Packing::Cost`], `--packing cost`), for every
    /// command's replacements and M-to-N consolidation's.
    pub packing: Packing,
    /// What a replacement does with a `minValues` its types cannot meet:
    /// upstream's `--min-values-policy` (default `Strict`).
    pub min_values_policy: MinValuesPolicy,
}

impl DisruptionOptions {
    /// These options with the provider's repair policies.
    pub fn with_repair_policies(mut self, policies: Vec<RepairPolicy>) -> Self {
        self.repair_policies = policies;
        self
    }

    /// These options with M-to-N consolidation on or off.
    pub fn with_m_to_n(mut self, on: bool) -> Self {
        self.m_to_n = on;
        self
    }

    /// These options with `policy` for unmet `minValues`.
    pub fn with_min_values_policy(mut self, policy: MinValuesPolicy) -> Self {
        self.min_values_policy = policy;
        self
    }

    /// These options with replacements chosen by `packing`.
    pub fn with_packing(mut self, packing: Packing) -> Self {
        self.packing = packing;
        self
    }

    /// These options with upstream's feature gates set to `gates`.
    pub fn with_feature_gates(mut self, gates: FeatureGates) -> Self {
        self.feature_gates = gates;
        self
    }

    /// These options with spot-to-spot consolidation on or off: the
    /// `SpotToSpotConsolidation` gate.
    pub fn with_spot_to_spot(mut self, on: bool) -> Self {
        self.feature_gates = self
            .feature_gates
            .with(FeatureGate::SpotToSpotConsolidation, on);
        self
    }

    /// Whether consolidation may replace spot nodes with cheaper spot nodes.
    pub(crate) fn spot_to_spot(&self) -> bool {
        self.feature_gates
            .is_on(FeatureGate::SpotToSpotConsolidation)
    }

    /// The repair policies a plan applies: the provider's, when the
    /// `NodeRepair` gate is on; none otherwise.
    pub(crate) fn repair_policies(&self) -> &[RepairPolicy] {
        if self.feature_gates.is_on(FeatureGate::NodeRepair) {
            &self.repair_policies
        } else {
            &[]
        }
    }

    /// What the simulations behind a command read of these options.
    pub(crate) fn simulation(&self) -> SimulationOptions {
        SimulationOptions::default()
            .with_packing(self.packing)
            .with_min_values_policy(self.min_values_policy)
            .with_reserved_capacity(self.feature_gates.is_on(FeatureGate::ReservedCapacity))
            .with_capacity_buffers(self.feature_gates.is_on(FeatureGate::CapacityBuffer))
    }
}

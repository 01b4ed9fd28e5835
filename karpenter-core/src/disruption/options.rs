//! What a plan may do beyond upstream's defaults: the options every part of
//! the planner reads (the forceful steps, the methods, the replacements'
//! packing). They sit below all of those, so that none of them imports
//! another for its options.

use crate::cloudprovider::RepairPolicy;
use crate::features::FeatureGate;
use crate::planning::PlanningOptions;

/// What a plan may do beyond upstream's defaults: the [`PlanningOptions`]
/// every planner shares, this engine's own options, and the provider's repair
/// policies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DisruptionOptions {
    /// How replacements are chosen (packing, `minValues` policy, for every
    /// command's replacements and M-to-N consolidation's), and upstream's
    /// feature gates: a plan reads `NodeRepair` (without it the repair
    /// policies are not applied), `SpotToSpotConsolidation` (consolidation
    /// may replace spot nodes with cheaper spot nodes), `ReservedCapacity`
    /// and `CapacityBuffer`.
    pub planning: PlanningOptions,
    /// Multi-node consolidation may replace its candidates with several
    /// nodes, fewer and cheaper together, not only with one (beyond upstream;
    /// `--m-to-n`).
    pub m_to_n: bool,
    /// The cloud provider's repair policies: node conditions that get a node
    /// replaced, when the `NodeRepair` gate is on (none: no repair).
    pub repair_policies: Vec<RepairPolicy>,
}

impl DisruptionOptions {
    /// These options with replacements chosen, and gates set, as `planning`
    /// says.
    #[must_use]
    pub fn with_planning(mut self, planning: PlanningOptions) -> Self {
        self.planning = planning;
        self
    }

    /// These options with the provider's repair policies.
    #[must_use]
    pub fn with_repair_policies(mut self, policies: Vec<RepairPolicy>) -> Self {
        self.repair_policies = policies;
        self
    }

    /// These options with M-to-N consolidation on or off.
    #[must_use]
    pub fn with_m_to_n(mut self, on: bool) -> Self {
        self.m_to_n = on;
        self
    }

    /// These options with spot-to-spot consolidation on or off: the
    /// `SpotToSpotConsolidation` gate.
    pub fn with_spot_to_spot(mut self, on: bool) -> Self {
        self.planning.feature_gates = self
            .planning
            .feature_gates
            .with(FeatureGate::SpotToSpotConsolidation, on);
        self
    }

    /// Whether consolidation may replace spot nodes with cheaper spot nodes.
    pub(crate) fn spot_to_spot(&self) -> bool {
        self.planning
            .feature_gates
            .is_on(FeatureGate::SpotToSpotConsolidation)
    }

    /// The repair policies a plan applies: the provider's, when the
    /// `NodeRepair` gate is on; none otherwise.
    pub(crate) fn repair_policies(&self) -> &[RepairPolicy] {
        if self.planning.feature_gates.is_on(FeatureGate::NodeRepair) {
            &self.repair_policies
        } else {
            &[]
        }
    }
}

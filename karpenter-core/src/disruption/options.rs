//! What a plan may do beyond upstream's defaults: the options every part of
//! the planner reads (the forceful steps, the methods, the replacements'
//! packing). They sit below all of those, so that none of them imports
//! another for its options.

use super::simulate::SimulationOptions;
use crate::cloudprovider::RepairPolicy;
use crate::provisioning::Packing;

/// What a plan may do beyond upstream's defaults, and the provider's repair
/// policies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DisruptionOptions {
    /// Consolidation may replace spot nodes with cheaper spot nodes (upstream's
    /// `SpotToSpotConsolidation` feature gate, off by default there too).
    pub spot_to_spot: bool,
    /// Multi-node consolidation may replace its candidates with several
    /// nodes, fewer and cheaper together, not only with one (beyond upstream;
    /// `--m-to-n`).
    pub m_to_n: bool,
    /// The cloud provider's repair policies: node conditions that get a node
    /// replaced (none: no repair).
    pub repair_policies: Vec<RepairPolicy>,
    /// How replacements are chosen: as upstream (the default), or at the
    /// least price ([`Packing::Cost`], `--packing cost`), for every
    /// command's replacements and M-to-N consolidation's.
    pub packing: Packing,
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

    /// These options with replacements chosen by `packing`.
    pub fn with_packing(mut self, packing: Packing) -> Self {
        self.packing = packing;
        self
    }

    /// These options with spot-to-spot consolidation on or off.
    pub fn with_spot_to_spot(mut self, on: bool) -> Self {
        self.spot_to_spot = on;
        self
    }

    /// What the simulations behind a command read of these options.
    pub(crate) fn simulation(&self) -> SimulationOptions {
        SimulationOptions::default().with_packing(self.packing)
    }
}

//! What provisioning reads beyond the snapshot.

use k8s_openapi::jiff::Timestamp;

use crate::planning::{Packing, PlanningOptions};

/// How [`plan_provisioning_with`](super::plan_provisioning_with) plans,
/// beyond the snapshot: the [`PlanningOptions`] every planner shares, and
/// the moment planned.
///
/// ```
/// use k8s_openapi::jiff::Timestamp;
/// use karpenter_core::planning::{Packing, PlanningOptions};
/// use karpenter_core::provisioning::ProvisioningOptions;
///
/// let now: Timestamp = "2026-01-01T00:00:00Z".parse()?;
/// let options = ProvisioningOptions::from(PlanningOptions::from(Packing::Cost)).at(now);
/// assert_eq!(options.planning.packing, Packing::Cost);
/// assert_eq!(options.now, Some(now));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProvisioningOptions {
    /// How new claims are chosen: packing, feature gates (provisioning reads
    /// `StaticCapacity`, `ReservedCapacity` and `CapacityBuffer`), and the
    /// `minValues` policy.
    pub planning: PlanningOptions,
    /// The moment planned. It decides one thing: whether a
    /// `karpenter.sh/do-not-disrupt` annotation with a duration (`"2h"`)
    /// still keeps a pod on a node that is being deleted, so that it needs
    /// no capacity yet. `None` (no clock) reads every such annotation as
    /// still holding its pod.
    pub now: Option<Timestamp>,
}

impl ProvisioningOptions {
    /// These options with new claims chosen as `planning` says.
    #[must_use]
    pub fn with_planning(mut self, planning: PlanningOptions) -> Self {
        self.planning = planning;
        self
    }

    /// These options planning at `now`.
    #[must_use]
    pub fn at(mut self, now: Timestamp) -> Self {
        self.now = Some(now);
        self
    }
}

impl From<PlanningOptions> for ProvisioningOptions {
    /// Options with no clock, new claims chosen as `planning` says.
    fn from(planning: PlanningOptions) -> Self {
        Self::default().with_planning(planning)
    }
}

impl From<Packing> for ProvisioningOptions {
    /// The default options with new claims chosen by `packing`.
    fn from(packing: Packing) -> Self {
        PlanningOptions::from(packing).into()
    }
}

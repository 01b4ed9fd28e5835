//! What provisioning decides: new claims to launch, pods placed on capacity that
//! already exists, and the pods no plan can place, with why. Serialized, this is the
//! `karpenter-sim provision -o json` output that `docs/cli.md` describes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use serde::Serialize;

use super::names::NameList;
use crate::pods::PodKey;
use crate::scheduling::{
    Operator, RequirementError, Requirements, SelectorRequirement, WellKnownLabels,
    check_restricted_label,
};

/// A sum of prices as a person reads it: float noise past the ninth decimal
/// rounded away, so sums of decimal prices print as decimals.
pub(crate) fn round_price(price: f64) -> f64 {
    (price * 1e9).round() / 1e9
}

/// The result of planning provisioning for a snapshot.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisioningPlan {
    /// New NodeClaims to launch, in launch order.
    pub node_claims: Vec<PlannedClaim>,
    /// Pods placed on nodes or in-flight claims that already exist, by node.
    pub existing_nodes: Vec<ExistingPlacement>,
    /// Pods no plan can place, each with the reason.
    pub unschedulable: Vec<Unschedulable>,
    /// The sum of the new claims' launch prices.
    pub total_price_per_hour: f64,
    /// A proven lower bound on the price of any valid plan, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound_per_hour: Option<f64>,
    /// NodeClaims deleted to bring static NodePools down to their replica
    /// counts (with the `StaticCapacity` gate; written only when there are
    /// some). The claims launched to bring them up are in `node_claims`,
    /// with no pods.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub static_removals: Vec<StaticRemoval>,
    /// Each CapacityBuffer and where its virtual pods went (with the
    /// `CapacityBuffer` gate; written only when there are buffers).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capacity_buffers: Vec<BufferPlacement>,
}

/// Where a CapacityBuffer's virtual pods go in a plan: what upstream's
/// provisioner reports in the buffer's `Provisioning` condition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BufferPlacement {
    /// `namespace/name`.
    pub buffer: String,
    /// The chunks it wants (upstream's `status.replicas`).
    pub replicas: u32,
    /// Whether its template was found: upstream's `ReadyForProvisioning`
    /// reason (`Resolved`, `PodTemplateNotFound`, `ScalableRefNotFound`,
    /// `ResolutionFailed`).
    pub ready: String,
    /// Why it was not resolved, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Virtual pods placed on each existing node (or in-flight claim), by
    /// node name: upstream's buffer pod counts, which keep those nodes from
    /// being empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub existing_nodes: BTreeMap<String, u32>,
    /// Virtual pods placed on new claims.
    pub new_claims: u32,
    /// Virtual pods no plan can place.
    pub unschedulable: u32,
    /// The reason of upstream's `Provisioning` condition:
    /// `FitsExistingCapacity` (status `True`), `RequiresNewCapacity`,
    /// `BufferEmpty` or `NotReadyForProvisioning` (status `False`); none when
    /// no virtual pod was planned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioning: Option<String>,
}

/// A NodeClaim a static NodePool removes: it has more than its replicas.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaticRemoval {
    /// The NodePool.
    pub node_pool: String,
    /// The NodeClaim deleted.
    pub node_claim: String,
    /// Its Node, once it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Why this one: not launched yet, empty, or the cheapest to disrupt.
    pub reason: String,
}

/// A NodeClaim to launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedClaim {
    /// The NodePool it is launched from.
    pub node_pool: String,
    /// Every instance type still compatible, cheapest first (at most 600).
    pub instance_types: NameList,
    /// The claim's requirements as a NodeClaim would carry them.
    pub requirements: Vec<RequirementOutput>,
    /// What the cloud provider would create: the cheapest available compatible
    /// offering over the instance types.
    pub launch: Option<Launch>,
    /// The pods it is for.
    pub pods: Vec<PodKey>,
    /// Whether a requirement's `minValues` was lowered to what the instance
    /// types could meet ([`MinValuesPolicy::BestEffort`](super::MinValuesPolicy));
    /// written only when true. A NodeClaim made from it carries upstream's
    /// annotation `karpenter.sh/nodeclaim-min-values-relaxed`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub min_values_relaxed: bool,
    /// The CapacityBuffer virtual pods it holds, by buffer
    /// (`namespace/name`): room kept for pods to come, never listed among
    /// `pods`. Written only when there are some; a claim may hold nothing
    /// else (upstream launches it all the same).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity_buffers: BTreeMap<String, u32>,
}

impl PlannedClaim {
    /// The labels a node of this claim carries from its requirements, as
    /// upstream's `resolveCustomLabelsFromRequirements` gives them: each
    /// custom key (neither well known nor restricted) a value its requirement
    /// allows ([`Requirement::any`](crate::scheduling::Requirement::any)), so
    /// that a pod selecting it can bind whatever values the claim left open;
    /// every other key only when one value is left. The provider adds the
    /// labels of what it launches (zone, instance type, capacity type).
    pub fn node_labels(&self, well_known: &WellKnownLabels) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::new();
        let Ok(requirements) = read_requirements(&self.requirements) else {
            return labels;
        };
        for requirement in requirements.iter() {
            let key = requirement.key();
            let custom =
                !well_known.contains(key) && check_restricted_label(key, well_known).is_ok();
            let single = requirement.operator() == Operator::In && requirement.len() == 1;
            if let Some(value) = (custom || single).then(|| requirement.any()).flatten() {
                labels.insert(key.to_owned(), value);
            }
        }
        labels
    }
}

/// A requirement in the output's shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementOutput {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: String,
    /// The values (absent for Exists and DoesNotExist).
    #[serde(skip_serializing_if = "NameList::is_empty")]
    pub values: NameList,
    /// The minimum number of distinct values, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_values: Option<u32>,
}

impl From<SelectorRequirement> for RequirementOutput {
    fn from(r: SelectorRequirement) -> Self {
        RequirementOutput {
            key: r.key,
            operator: r.operator.to_string(),
            values: r.values.into(),
            min_values: r.min_values,
        }
    }
}

/// Reads a claim's written requirements back, with Kubernetes' integer rules (a
/// pod's `Gt` may carry a negative operand into a claim).
pub(crate) fn read_requirements(
    written: &[RequirementOutput],
) -> Result<Requirements, RequirementError> {
    let expressions: Vec<NodeSelectorRequirement> = written
        .iter()
        .map(|r| NodeSelectorRequirement {
            key: r.key.clone(),
            operator: r.operator.clone(),
            values: (!r.values.is_empty())
                .then(|| r.values.iter().map(|v| v.to_string()).collect()),
        })
        .collect();
    let mut requirements = Requirements::from_node_selector_requirements(&expressions)?;
    // A selector requirement has no `minValues`: they are put back, since
    // consolidation checks the types it keeps against them.
    for output in written {
        if let Some(min) = output.min_values
            && let Some(read) = requirements.remove(&output.key)
        {
            requirements.add(read.with_min_values(Some(min)));
        }
    }
    Ok(requirements)
}

/// The most instance types a claim lists, as upstream (`MaxInstanceTypes`).
pub const MAX_INSTANCE_TYPES: usize = 600;

/// The offering a claim would launch as.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Launch {
    /// The instance type.
    pub instance_type: String,
    /// The zone.
    pub zone: String,
    /// The capacity type.
    pub capacity_type: String,
    /// Price per hour.
    pub price: f64,
    /// The capacity reservation a `reserved` launch takes (written
    /// `reservationID`; absent for every other launch).
    #[serde(rename = "reservationID", skip_serializing_if = "Option::is_none")]
    pub reservation_id: Option<String>,
}

impl Launch {
    /// Whether it launches `offering` (of its type): the same zone,
    /// capacity type and reservation.
    pub(crate) fn is_of(&self, offering: &crate::cloudprovider::Offering) -> bool {
        offering.zone == self.zone
            && offering.capacity_type == self.capacity_type
            && offering.reservation_id() == self.reservation_id.as_deref()
    }
}

/// Pods placed on an existing node or in-flight claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExistingPlacement {
    /// The node's name.
    pub name: String,
    /// The pods.
    pub pods: Vec<PodKey>,
}

/// A pod no plan can place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unschedulable {
    /// The pod.
    pub pod: PodKey,
    /// Why, in words a person can act on.
    pub reason: String,
}

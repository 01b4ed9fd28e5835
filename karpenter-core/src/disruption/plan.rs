//! What disruption decides: commands (nodes to delete, with the claims that
//! replace them) and the nodes that would qualify but may not move now.
//! Serialized, this is the `karpenter-sim disrupt -o json` output that
//! `docs/cli.md` describes.

use serde::Serialize;

use crate::provisioning::PlannedClaim;

/// The result of planning disruption for a snapshot at a moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisruptionPlan {
    /// The commands, in the order they would run.
    pub commands: Vec<Command>,
    /// Nodes that would be candidates but may not be disrupted now, with why.
    pub blocked: Vec<Blocked>,
}

/// Why a command disrupts its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum CommandReason {
    /// The nodes run no pod that needs a home.
    Empty,
    /// The nodes' pods fit elsewhere, more cheaply.
    Underutilized,
    /// The nodes no longer match their NodePool.
    Drifted,
    /// The nodes outlived their NodePool's `expireAfter`.
    Expired,
    /// The nodes failed a repair policy for longer than it tolerates.
    Unhealthy,
    /// The nodes were given notice (a spot interruption).
    Interrupted,
}

/// One disruption: delete `candidates`, after launching `replacements`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    /// Why.
    pub reason: CommandReason,
    /// The nodes to delete, by name.
    pub candidates: Vec<String>,
    /// The claims to launch first; empty when the nodes are only deleted.
    pub replacements: Vec<PlannedClaim>,
    /// The candidates' price minus the replacements' launch price, per hour.
    pub savings_per_hour: f64,
    /// Why each candidate of a `Drifted` command drifted; empty (and left
    /// out of the JSON) for every other command.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<DriftCause>,
}

/// Why one node of a `Drifted` command drifted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftCause {
    /// The node's name.
    pub node: String,
    /// Upstream's drift reason, as its `Drifted` condition records it:
    /// `NodePoolDrifted`, `RequirementsDrifted`, `InstanceTypeNotFound`, a
    /// cloud provider's (`ImageDrift`, ...), or the reason on the claim's
    /// `Drifted` condition (`Drifted` when it has none).
    pub reason: String,
    /// What changed, for a person.
    pub detail: String,
}

/// A node that would be a candidate but may not be disrupted now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Blocked {
    /// The node's name.
    pub node: String,
    /// Why, for a person.
    pub reason: String,
}

/// What `claims` cost per hour when launched: their launch prices, summed.
pub(crate) fn launch_price(claims: &[PlannedClaim]) -> f64 {
    claims
        .iter()
        .filter_map(|c| c.launch.as_ref().map(|l| l.price))
        .sum()
}

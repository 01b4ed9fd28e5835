//! The node selector requirement NodePools and NodeClaims are constrained by.

use crate::scheduling::{Operator, RequirementError, SelectorRequirement};
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use serde::{Deserialize, Serialize};

/// A node selector requirement with an optional `minValues`: the core
/// `NodeSelectorRequirement` fields inline, as upstream embeds them.
///
/// This is only the data; the set algebra over requirements lives in
/// [`crate::scheduling`]. `operator` is kept as written (`In`, `NotIn`,
/// `Exists`, `DoesNotExist`, `Gt`, `Lt`, `Gte`, `Lte`) so that an operator a
/// newer upstream adds still round-trips.
///
/// ```
/// use karpenter_core::api::NodeSelectorRequirementWithMinValues;
/// use serde_json::json;
///
/// let input = json!({
///     "key": "node.kubernetes.io/instance-type",
///     "operator": "In",
///     "values": ["m5.large", "m5.xlarge", "c5.large"],
///     "minValues": 2,
/// });
/// let req: NodeSelectorRequirementWithMinValues = serde_json::from_value(input.clone())?;
/// assert_eq!(req.min_values, Some(2));
/// assert_eq!(req.values().len(), 3);
/// assert_eq!(serde_json::to_value(&req)?, input);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirementWithMinValues {
    /// The label key the requirement applies to.
    pub key: String,
    /// How the key relates to the values, as written.
    pub operator: String,
    /// The values; absent for `Exists`/`DoesNotExist`, one integer for
    /// `Gt`/`Lt`/`Gte`/`Lte`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// The minimum number of distinct values the launched capacity must span
    /// (1 to 50 per the CRD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_values: Option<u32>,
    /// Fields this version does not know, kept for writing back.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl NodeSelectorRequirementWithMinValues {
    /// A requirement without `minValues`.
    pub fn new(
        key: impl Into<String>,
        operator: impl Into<String>,
        values: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            key: key.into(),
            operator: operator.into(),
            values: Some(values.into_iter().map(Into::into).collect()),
            ..Self::default()
        }
    }

    /// The values, empty when absent.
    pub fn values(&self) -> &[String] {
        self.values.as_deref().unwrap_or_default()
    }

    /// The core requirement, without `minValues`.
    pub fn to_node_selector_requirement(&self) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: self.key.clone(),
            operator: self.operator.clone(),
            values: self.values.clone(),
        }
    }
}

impl NodeSelectorRequirementWithMinValues {
    /// The requirement for the algebra, with its operator read; an unknown operator
    /// is an error.
    pub fn to_selector_requirement(&self) -> Result<SelectorRequirement, RequirementError> {
        let operator = self.operator.parse::<Operator>().map_err(|_| {
            RequirementError::UnsupportedOperator {
                key: self.key.clone(),
                operator: self.operator.clone(),
            }
        })?;
        Ok(SelectorRequirement {
            key: self.key.clone(),
            operator,
            values: self.values().to_vec(),
            min_values: self.min_values,
        })
    }
}

impl From<NodeSelectorRequirement> for NodeSelectorRequirementWithMinValues {
    fn from(requirement: NodeSelectorRequirement) -> Self {
        Self {
            key: requirement.key,
            operator: requirement.operator,
            values: requirement.values,
            ..Self::default()
        }
    }
}

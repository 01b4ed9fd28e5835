//! Requirements as written in NodePools and NodeClaims.

use super::error::RequirementError;
use super::operator::{Operator, UnknownOperatorError};

/// A requirement as written in a NodePool or NodeClaim: Kubernetes'
/// `NodeSelectorRequirement` plus Karpenter's `minValues`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SelectorRequirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: Operator,
    /// The operands, as written.
    pub values: Vec<String>,
    /// The minimum number of distinct values to keep, if any.
    pub min_values: Option<u32>,
}

impl SelectorRequirement {
    /// Reads a Kubernetes `NodeSelectorRequirement` (which has no
    /// `minValues`), rejecting unknown operators.
    pub fn from_node_selector_requirement(
        requirement: &k8s_openapi::api::core::v1::NodeSelectorRequirement,
    ) -> Result<SelectorRequirement, RequirementError> {
        let operator = requirement
            .operator
            .parse()
            .map_err(
                |UnknownOperatorError(operator)| RequirementError::UnsupportedOperator {
                    key: requirement.key.clone(),
                    operator,
                },
            )?;
        Ok(SelectorRequirement {
            key: requirement.key.clone(),
            operator,
            values: requirement.values.clone().unwrap_or_default(),
            min_values: None,
        })
    }

    /// The Kubernetes `NodeSelectorRequirement`, dropping `minValues`.
    pub fn to_node_selector_requirement(
        &self,
    ) -> k8s_openapi::api::core::v1::NodeSelectorRequirement {
        k8s_openapi::api::core::v1::NodeSelectorRequirement {
            key: self.key.clone(),
            operator: self.operator.to_string(),
            values: (!self.values.is_empty()).then(|| self.values.clone()),
        }
    }
}

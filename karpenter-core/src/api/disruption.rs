//! A NodePool's disruption settings: consolidation and disruption budgets.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::duration::{GoDuration, NillableDuration};

/// `nodes` of the budget that applies when a NodePool lists none.
pub const DEFAULT_BUDGET_NODES: &str = "10%";

/// Which nodes consolidation may disrupt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConsolidationPolicy {
    /// Only nodes without workload pods.
    WhenEmpty,
    /// Empty nodes and nodes whose pods fit elsewhere (the CRD default).
    #[default]
    WhenEmptyOrUnderutilized,
    /// Like `WhenEmptyOrUnderutilized`, but a move must also score well on
    /// savings against the disruption it causes.
    Balanced,
}

/// A disruption method a budget can be limited to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DisruptionReason {
    /// Consolidation of nodes whose pods fit elsewhere.
    Underutilized,
    /// Consolidation of nodes without workload pods.
    Empty,
    /// Replacement of nodes that no longer match their NodePool.
    Drifted,
}

/// `spec.disruption` of a NodePool. Every field is optional; the
/// `effective_*` methods apply the CRD's defaults without writing them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Disruption {
    /// How long a node must be consolidatable before it is disrupted, or
    /// `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidate_after: Option<NillableDuration>,
    /// Which nodes consolidation may disrupt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidation_policy: Option<ConsolidationPolicy>,
    /// Limits on how many nodes may be disrupted at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Vec<Budget>>,
    /// Fields this version does not know, kept for writing back.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl Disruption {
    /// `consolidateAfter`, defaulting to `0s`; `None` means `Never`.
    pub fn effective_consolidate_after(&self) -> Option<Duration> {
        self.consolidate_after
            .as_ref()
            .map_or(Some(Duration::ZERO), NillableDuration::as_std)
    }

    /// `consolidationPolicy`, defaulting to `WhenEmptyOrUnderutilized`.
    pub fn effective_consolidation_policy(&self) -> ConsolidationPolicy {
        self.consolidation_policy.unwrap_or_default()
    }

    /// The budgets, or the default single budget of `10%` when the field is
    /// absent. An explicit empty list stays empty: upstream then places no
    /// limit.
    pub fn effective_budgets(&self) -> Cow<'_, [Budget]> {
        match &self.budgets {
            Some(budgets) => Cow::Borrowed(budgets),
            None => Cow::Owned(vec![Budget::new(DEFAULT_BUDGET_NODES)]),
        }
    }
}

/// A limit on how many of a NodePool's nodes may be disrupted at once,
/// optionally only during a cron `schedule` window and for some reasons.
///
/// ```
/// use karpenter_core::api::{Budget, BudgetNodes};
///
/// let budget = Budget::new("10%");
/// assert_eq!(budget.parse_nodes()?, BudgetNodes::Percent(10));
/// // Percentages round up, as upstream does: 10% of 15 nodes allows 2.
/// assert_eq!(budget.parse_nodes()?.allowed(15), 2);
/// # Ok::<(), karpenter_core::api::BudgetNodesError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// `"5"` or `"10%"`: how many nodes may be disrupting at once. The CRD
    /// defaults it to `10%`; see [`Budget::nodes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// A cron schedule (UTC, or a macro like `@daily`) at which the budget
    /// becomes active; absent means always active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// How long the budget stays active after each schedule hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<GoDuration>,
    /// The disruption methods it limits; absent means all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<DisruptionReason>>,
    /// Fields this version does not know, kept for writing back.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl Budget {
    /// An always-active budget for all reasons.
    pub fn new(nodes: impl Into<String>) -> Self {
        Self {
            nodes: Some(nodes.into()),
            ..Self::default()
        }
    }

    /// `nodes` as written, defaulting to `10%` like the CRD.
    pub fn nodes(&self) -> &str {
        self.nodes.as_deref().unwrap_or(DEFAULT_BUDGET_NODES)
    }

    /// `nodes` parsed into a count or a percentage.
    pub fn parse_nodes(&self) -> Result<BudgetNodes, BudgetNodesError> {
        self.nodes().parse()
    }

    /// Whether the budget limits this disruption method.
    pub fn applies_to(&self, reason: DisruptionReason) -> bool {
        self.reasons.as_ref().is_none_or(|r| r.contains(&reason))
    }
}

/// A budget's `nodes`: a node count or a percentage of the NodePool's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BudgetNodes {
    /// At most this many nodes.
    Count(u64),
    /// At most this percentage (0 to 100) of the nodes, rounded up.
    Percent(u8),
}

impl BudgetNodes {
    /// How many of `total` nodes may be disrupting, rounding percentages up
    /// as upstream (and PodDisruptionBudgets) do.
    pub fn allowed(self, total: u64) -> u64 {
        match self {
            Self::Count(count) => count,
            Self::Percent(percent) => {
                let scaled = u128::from(total) * u128::from(percent);
                // At most `total`, so the conversion cannot fail.
                u64::try_from(scaled.div_ceil(100)).unwrap_or(total)
            }
        }
    }
}

impl fmt::Display for BudgetNodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Count(count) => write!(f, "{count}"),
            Self::Percent(percent) => write!(f, "{percent}%"),
        }
    }
}

impl FromStr for BudgetNodes {
    type Err = BudgetNodesError;

    /// Accepts what the CRD's pattern `^((100|[0-9]{1,2})%|[0-9]+)$` accepts.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |reason| BudgetNodesError {
            text: text.to_owned(),
            reason,
        };
        let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        match text.strip_suffix('%') {
            // One or two digits, or exactly 100: `007%` and `101%` are out.
            Some(percent) if all_digits(percent) && (percent.len() <= 2 || percent == "100") => {
                percent
                    .parse()
                    .map(Self::Percent)
                    .map_err(|_| error(PERCENT_RANGE))
            }
            Some(_) => Err(error(PERCENT_RANGE)),
            None if all_digits(text) => text
                .parse()
                .map(Self::Count)
                .map_err(|_| error("the node count is too large")),
            None => Err(error(
                "expected a non-negative node count such as \"5\" or a percentage such as \"10%\"",
            )),
        }
    }
}

const PERCENT_RANGE: &str =
    "a percentage must be 0% to 100%, written with at most two digits or as 100%";

/// A budget's `nodes` that is neither a count nor a percentage.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("invalid budget nodes {text:?}: {reason}")]
pub struct BudgetNodesError {
    text: String,
    reason: &'static str,
}

impl BudgetNodesError {
    /// The rejected text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

//! Why a pod's topology cannot be met on a node.

use std::fmt;
use std::sync::Arc;

use crate::scheduling::Requirement;

/// The kind of constraint that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConstraintKind {
    /// One of the pod's topology spread constraints.
    Spread {
        /// The constraint's `maxSkew`.
        max_skew: i32,
    },
    /// One of the pod's pod-affinity terms.
    Affinity,
    /// One of the pod's pod-anti-affinity terms.
    AntiAffinity,
    /// Another pod's required anti-affinity, which selects this pod.
    InverseAntiAffinity,
}

/// A topology constraint that leaves the pod no domain on the node.
///
/// Built cheaply (the scheduler meets many on its way to a fit); the message
/// is only written when displayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TopologyError {
    kind: ConstraintKind,
    key: Arc<str>,
    /// How many domains the constraint knows.
    known_domains: usize,
    /// The domains each side allows, boxed to keep the error small.
    allowed: Box<Allowed>,
}

/// The domains the pod and the node allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Allowed {
    /// The pod's own (strict) requirement on the key, if it has one.
    pod: Option<Requirement>,
    /// The node's requirement on the key, if it has one.
    node: Option<Requirement>,
}

impl TopologyError {
    /// An error for constraint `kind` on `key`.
    pub(super) fn new(
        kind: ConstraintKind,
        key: &Arc<str>,
        pod_domains: Option<&Requirement>,
        node_domains: Option<&Requirement>,
        known_domains: usize,
    ) -> TopologyError {
        TopologyError {
            kind,
            key: Arc::clone(key),
            known_domains,
            allowed: Box::new(Allowed {
                pod: pod_domains.cloned(),
                node: node_domains.cloned(),
            }),
        }
    }

    /// The kind of constraint that failed.
    /// Whether a refusal of constraint `kind` on `key` holds for good on a node:
    /// a hostname domain's counts only grow, the minimum of a hostname spread is
    /// always 0 (a new host can always be made), and an occupied domain stays
    /// occupied. So a spread or anti-affinity refusal on the hostname key is final
    /// for the same pod constraints; an affinity refusal is not (a matching pod may
    /// come), nor is any zonal refusal (other zones' counts move the minimum).
    pub(crate) fn holds_for_good(kind: ConstraintKind, key: &str) -> bool {
        key == crate::scheduling::LABEL_HOSTNAME
            && matches!(
                kind,
                ConstraintKind::Spread { .. }
                    | ConstraintKind::AntiAffinity
                    | ConstraintKind::InverseAntiAffinity
            )
    }

    #[cfg(test)]
    pub(crate) fn kind(&self) -> ConstraintKind {
        self.kind
    }

    /// The topology key of the constraint.
    #[cfg(test)]
    pub(crate) fn key(&self) -> &str {
        &self.key
    }
}

impl fmt::Display for TopologyError {
    /// For example: `topology spread constraint topology.kubernetes.io/zone
    /// maxSkew 1 cannot be satisfied: no eligible domain (3 domains known;
    /// the node allows topology.kubernetes.io/zone In [zone-a])`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = &self.key;
        match self.kind {
            ConstraintKind::Spread { max_skew } => write!(
                f,
                "topology spread constraint {key} maxSkew {max_skew} cannot be satisfied: \
                 no eligible domain"
            )?,
            ConstraintKind::Affinity => write!(
                f,
                "pod affinity on {key} cannot be satisfied: no eligible domain holds a matching pod"
            )?,
            ConstraintKind::AntiAffinity => write!(
                f,
                "pod anti-affinity on {key} cannot be satisfied: \
                 every eligible domain already holds a matching pod"
            )?,
            ConstraintKind::InverseAntiAffinity => write!(
                f,
                "another pod's required anti-affinity on {key} excludes this pod from \
                 every eligible domain"
            )?,
        }
        let plural = if self.known_domains == 1 { "" } else { "s" };
        write!(f, " ({} domain{plural} known", self.known_domains)?;
        if let Some(node) = &self.allowed.node {
            write!(f, "; the node allows {node}")?;
        }
        if let Some(pod) = &self.allowed.pod {
            write!(f, "; the pod allows {pod}")?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for TopologyError {}

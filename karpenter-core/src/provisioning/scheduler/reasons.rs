//! Why the scheduler leaves a pod unplaced, as small enums: it keeps what
//! went wrong as data, and only a plan's `unschedulable` entries turn it into
//! words (each type's `Display` is exactly that text). Why a pod cannot be
//! read at all is [`Rejected`](crate::provisioning::demand::pending_pod::Rejected).

use std::fmt;

use super::claim::Refusal;
use crate::provisioning::demand::dra::DRA_UNSUPPORTED;
use crate::provisioning::instance_types::filter::FilterError;
use crate::provisioning::plan::MAX_INSTANCE_TYPES;
use crate::scheduling::RequirementError;

/// Why a NodePool can launch nothing at all (upstream skips such a pool).
#[derive(Clone, Debug)]
pub(crate) enum PoolSkipped {
    /// The snapshot has no instance types under the pool's name; `stray`
    /// lists (quoted) the keys it has some under when no pool has that name.
    NoInstanceTypes {
        /// The keys with instance types that name no pool.
        stray: Vec<String>,
    },
    /// The pool's requirements leave no instance type.
    NoTypeLeft(FilterError),
}

impl fmt::Display for PoolSkipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolSkipped::NoInstanceTypes { stray } if stray.is_empty() => {
                f.write_str("the pool has no instance types")
            }
            PoolSkipped::NoInstanceTypes { stray } => write!(
                f,
                "the pool has no instance types (the snapshot's instance types are keyed by pool \
                 name, and it has some only under {}, which no pool is named)",
                stray.join(", ")
            ),
            PoolSkipped::NoTypeLeft(e) => {
                write!(f, "requirements filtered out all instance types ({e})")
            }
        }
    }
}

/// A NodePool that can launch nothing, with why.
#[derive(Clone, Debug)]
pub(crate) struct SkippedPool {
    /// The NodePool's name.
    pub(crate) pool: String,
    /// Why.
    pub(crate) why: PoolSkipped,
}

/// Why a new claim from one NodePool cannot take a pod.
#[derive(Clone, Debug)]
pub(crate) enum PoolRefusal {
    /// The pool's `limits.nodes` is used up.
    NodeLimitsExhausted,
    /// Every instance type left would take the pool over its limits.
    TypesExceedLimits,
    /// The claim refuses the pod.
    Claim(Refusal),
    /// The pool launches nothing at all.
    Skipped(PoolSkipped),
    /// The claim's types cannot meet a `minValues` requirement once its list
    /// is cut to the cheapest [`MAX_INSTANCE_TYPES`](crate::provisioning::MAX_INSTANCE_TYPES).
    MinValuesUnmet {
        /// The requirement's key.
        key: String,
    },
}

impl fmt::Display for PoolRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolRefusal::NodeLimitsExhausted => f.write_str("node limits have been exhausted"),
            PoolRefusal::TypesExceedLimits => {
                f.write_str("all available instance types exceed limits")
            }
            PoolRefusal::Claim(refusal) => write!(f, "{refusal}"),
            PoolRefusal::Skipped(why) => write!(f, "{why}"),
            PoolRefusal::MinValuesUnmet { key } => write!(
                f,
                "minValues requirement is not met for label(s) [{key}] among the {} cheapest \
                 instance types",
                MAX_INSTANCE_TYPES
            ),
        }
    }
}

/// One NodePool's answer for a pod.
#[derive(Clone, Debug)]
pub(crate) struct PoolReason {
    /// The NodePool's name.
    pub(crate) pool: String,
    /// Why it could not take the pod.
    pub(crate) why: PoolRefusal,
}

impl fmt::Display for PoolReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nodepool {:?}: {}", self.pool, self.why)
    }
}

/// Why the scheduler could not place a pod.
#[derive(Clone, Debug)]
pub(crate) enum Unplaced {
    /// The pod has Dynamic Resource Allocation claims ([`DRA_UNSUPPORTED`]).
    Dra,
    /// No NodePool can launch anything, and none was skipped with a reason.
    NoUsablePool,
    /// Each NodePool's answer, in the order they were tried, then the
    /// skipped pools'.
    Pools(Vec<PoolReason>),
    /// Relaxing a preference left a spec the requirement algebra refuses.
    Requirements(RequirementError),
}

impl Unplaced {
    /// Whether a pool refused the pod only because its reservations are
    /// taken: the pod waits as it is (no preference relaxed).
    pub(crate) fn waits_for_reservation(&self) -> bool {
        match self {
            Unplaced::Pools(reasons) => reasons
                .iter()
                .any(|r| matches!(r.why, PoolRefusal::Claim(Refusal::Reserved(_)))),
            _ => false,
        }
    }
}

impl fmt::Display for Unplaced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unplaced::Dra => f.write_str(DRA_UNSUPPORTED),
            Unplaced::NoUsablePool => {
                f.write_str("no nodepool can launch capacity: there is no usable NodePool")
            }
            Unplaced::Pools(reasons) => {
                for (i, reason) in reasons.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{reason}")?;
                }
                Ok(())
            }
            Unplaced::Requirements(e) => write!(f, "{e}"),
        }
    }
}

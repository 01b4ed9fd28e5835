//! Why consolidation refuses a candidate: the reasons of upstream's
//! `Unconsolidatable` events, which single-node consolidation publishes for
//! each candidate it evaluates and cannot consolidate (upstream
//! `computeConsolidation` and `computeSpotToSpotConsolidation`,
//! `pkg/controllers/disruption/consolidation.go`).
//!
//! Each reason displays as upstream words it, as closely as the engine's
//! own terms allow; a reason upstream does not have (the `Balanced` policy's
//! refusal, which upstream only counts) is worded in the same style.

use std::fmt;

use super::simulate::Stranded;

/// How many stranded pods a reason names before it counts the rest, as
/// upstream's `NonPendingPodSchedulingErrors` (`MaxErrors`).
const NAMED_PODS: usize = 5;

/// Why consolidation cannot delete or replace its candidates.
///
/// The [`Display`](fmt::Display) is the message of upstream's
/// `Unconsolidatable` event.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unconsolidatable {
    /// Some of the candidates' pods would find no home without them
    /// (upstream: "not all pods would schedule, …").
    PodsWouldNotSchedule {
        /// The pods, each with why, in pod order (never empty).
        stranded: Vec<Stranded>,
    },
    /// The pods need more than one new node, and the candidates are not
    /// replaced by several (upstream: "Can't remove without creating N
    /// candidates"; with M-to-N consolidation on, several replacements are
    /// refused only when they are not fewer than the candidates).
    TooManyReplacements {
        /// How many new nodes the pods need.
        claims: usize,
    },
    /// No instance type the replacement could launch is cheaper, by its
    /// worst launch price, than the candidates (upstream: "Can't replace with
    /// a cheaper node").
    NoCheaperReplacement,
    /// The types cheaper than the candidates cannot satisfy a requirement's
    /// `minValues` (upstream: "Filtering by price: minValues requirement is
    /// not met for label(s) …").
    MinValuesUnmet {
        /// The requirement's label key.
        key: String,
    },
    /// Every candidate is spot and so would the replacement be, but
    /// spot-to-spot consolidation is off
    /// ([`DisruptionOptions::with_spot_to_spot`](super::DisruptionOptions::with_spot_to_spot)).
    SpotToSpotDisabled,
    /// A single spot node would be replaced by spot, but fewer types than
    /// spot-to-spot consolidation asks for are cheaper.
    SpotToSpotTooFewTypes {
        /// How many cheaper types it asks for (upstream's
        /// `MinInstanceTypesForSpotToSpotConsolidation`, 15).
        required: usize,
        /// How many there are.
        cheaper: usize,
    },
    /// The candidates' pools have the `Balanced` consolidation policy, and
    /// what the move saves does not justify the disruption it causes (or
    /// could not, even were the node only deleted).
    NotWorthDisruption,
}

impl fmt::Display for Unconsolidatable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PodsWouldNotSchedule { stranded } => {
                f.write_str("not all pods would schedule, ")?;
                for (i, pod) in stranded.iter().take(NAMED_PODS).enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{} => {}", pod.pod, pod.reason)?;
                }
                if stranded.len() > NAMED_PODS {
                    write!(f, " and {} other(s)", stranded.len() - NAMED_PODS)?;
                }
                Ok(())
            }
            Self::TooManyReplacements { claims } => {
                write!(f, "Can't remove without creating {claims} candidates")
            }
            Self::NoCheaperReplacement => f.write_str("Can't replace with a cheaper node"),
            Self::MinValuesUnmet { key } => write!(
                f,
                "Filtering by price: minValues requirement is not met for label(s) [{key}]"
            ),
            Self::SpotToSpotDisabled => f.write_str(
                "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node",
            ),
            Self::SpotToSpotTooFewTypes { required, cheaper } => write!(
                f,
                "SpotToSpotConsolidation requires {required} cheaper instance type options than \
                 the current candidate to consolidate, got {cheaper}"
            ),
            Self::NotWorthDisruption => f.write_str(
                "Balanced consolidation policy: the savings do not justify the disruption",
            ),
        }
    }
}

impl std::error::Error for Unconsolidatable {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disruption::StrandedReason;

    fn stranded(name: &str) -> Stranded {
        Stranded {
            pod: format!("default/{name}").parse().unwrap(),
            reason: StrandedReason::Unschedulable("no fit".to_owned()),
        }
    }

    #[test]
    fn reads_as_upstream() {
        assert_eq!(
            Unconsolidatable::TooManyReplacements { claims: 2 }.to_string(),
            "Can't remove without creating 2 candidates"
        );
        assert_eq!(
            Unconsolidatable::SpotToSpotTooFewTypes {
                required: 15,
                cheaper: 3
            }
            .to_string(),
            "SpotToSpotConsolidation requires 15 cheaper instance type options than the current \
             candidate to consolidate, got 3"
        );
        assert_eq!(
            Unconsolidatable::MinValuesUnmet {
                key: "node.kubernetes.io/instance-type".to_owned()
            }
            .to_string(),
            "Filtering by price: minValues requirement is not met for label(s) \
             [node.kubernetes.io/instance-type]"
        );
    }

    #[test]
    fn names_five_stranded_pods_and_counts_the_rest() {
        let one = Unconsolidatable::PodsWouldNotSchedule {
            stranded: vec![stranded("a")],
        };
        assert_eq!(
            one.to_string(),
            "not all pods would schedule, default/a => no fit"
        );
        let seven = Unconsolidatable::PodsWouldNotSchedule {
            stranded: ["a", "b", "c", "d", "e", "f", "g"].map(stranded).to_vec(),
        };
        let text = seven.to_string();
        assert!(
            text.contains("default/e => no fit and 2 other(s)"),
            "{text}"
        );
        assert!(!text.contains("default/f"), "{text}");
    }
}

use std::sync::Arc;

use super::*;
use crate::provisioning::NameList;

/// A claim of the pool `default` allowing `types`.
fn claim(types: &[&str]) -> PlannedClaim {
    let table: Arc<[Arc<str>]> = types.iter().map(|t| Arc::from(*t)).collect();
    let picks = (0..types.len()).map(|i| i as u32).collect();
    PlannedClaim {
        node_pool: "default".to_owned(),
        instance_types: NameList::picked(&table, picks),
        requirements: Vec::new(),
        launch: None,
        pods: Vec::new(),
        min_values_relaxed: false,
        capacity_buffers: Default::default(),
    }
}

#[test]
fn a_delete_holds_only_while_no_claim_is_asked_for() {
    assert!(replacements_hold(&[], &[]));
    assert!(!replacements_hold(&[], &[claim(&["small"])]));
}

#[test]
fn a_replacement_holds_while_its_types_are_among_the_simulated_claims() {
    let replacement = [claim(&["small", "medium"])];
    // Unfiltered by price, the simulation's claim allows more.
    assert!(replacements_hold(
        &replacement,
        &[claim(&["small", "medium", "large"])]
    ));
    // A type the command would launch that the cluster no longer calls for.
    assert!(!replacements_hold(
        &replacement,
        &[claim(&["medium", "large"])]
    ));
    // No claim (the pods fit elsewhere now: a better command may exist), or two.
    assert!(!replacements_hold(&replacement, &[]));
    assert!(!replacements_hold(
        &replacement,
        &[claim(&["small", "medium"]), claim(&["small", "medium"])]
    ));
}

#[test]
fn m_to_n_replacements_each_need_a_simulated_claim_of_their_own() {
    let replacements = [claim(&["small"]), claim(&["large"])];
    assert!(replacements_hold(
        &replacements,
        &[claim(&["large", "xlarge"]), claim(&["small", "medium"])]
    ));
    // One simulated claim cannot stand for both replacements.
    assert!(!replacements_hold(
        &replacements,
        &[claim(&["small", "large"]), claim(&["medium"])]
    ));
}

#[test]
fn failures_carry_upstreams_labels() {
    let labels: Vec<&str> = [
        ValidationFailure::Budget,
        ValidationFailure::Scheduling,
        ValidationFailure::Churn,
    ]
    .iter()
    .map(|f| f.label())
    .collect();
    assert_eq!(labels, ["budget", "scheduling", "churn"]);
    assert_eq!(ValidationFailure::Churn.to_string(), "churn");
}

#[test]
fn only_emptiness_and_consolidation_wait() {
    assert!(is_validated(CommandReason::Empty));
    assert!(is_validated(CommandReason::Underutilized));
    for reason in [
        CommandReason::Drifted,
        CommandReason::Expired,
        CommandReason::Unhealthy,
        CommandReason::Interrupted,
    ] {
        assert!(!is_validated(reason), "{reason:?}");
    }
}

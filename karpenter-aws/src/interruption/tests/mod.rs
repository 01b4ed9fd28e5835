//! Tests of interruption handling: messages, actions, the status poll.

mod action;
mod live;
mod log;
mod message;
mod poll;
mod properties;
mod queue;
mod status;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use karpenter_core::api::{NodeClaim, NodeClaimStatus};

/// A NodeClaim named `name` with provider ID `provider_id` and `labels`.
fn claim(name: &str, provider_id: Option<&str>, labels: &[(&str, &str)]) -> NodeClaim {
    NodeClaim {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(
                labels
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..ObjectMeta::default()
        },
        status: Some(NodeClaimStatus {
            provider_id: provider_id.map(str::to_owned),
            ..NodeClaimStatus::default()
        }),
        ..NodeClaim::default()
    }
}

/// `claim` marked as being deleted.
fn deleting(mut claim: NodeClaim) -> NodeClaim {
    claim.metadata.deletion_timestamp = Some(Time(
        "2026-11-29T07:00:00Z".parse().expect("a valid timestamp"),
    ));
    claim
}

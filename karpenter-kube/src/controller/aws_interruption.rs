//! [`KubeInterruptions`]: an interruption's actions carried out on the
//! cluster: the offering or reservation marked on the provider, events on
//! the NodeClaim and its Node, the termination timestamp set on a forceful
//! termination, the NodeClaim deleted.

use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use karpenter_aws::interruption::{ClaimAction, EventReason, InterruptionHandler};
use karpenter_core::cluster::Cluster;
use karpenter_core::scheduling::NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY;
use kube::runtime::events::{Event, EventType};

use karpenter_aws::AwsCloudProvider;
use karpenter_aws::ec2::Ec2Api;

use crate::KubeCluster;
use crate::events::{Recorded, node_claim_ref, node_ref};

/// The boxed error an action fails with.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Carries out interruption actions on the cluster the controller runs.
pub(crate) struct KubeInterruptions<E> {
    cluster: KubeCluster,
    provider: Arc<AwsCloudProvider<E>>,
}

impl<E> KubeInterruptions<E> {
    /// Actions on `cluster`, marks on `provider`.
    pub(crate) fn new(cluster: KubeCluster, provider: Arc<AwsCloudProvider<E>>) -> Self {
        KubeInterruptions { cluster, provider }
    }

    /// The events of `action`, on the NodeClaim and (when it has one) its
    /// Node.
    fn record_events(&self, action: &ClaimAction, node: Option<&str>) {
        let event = |reason: EventReason| Event {
            type_: if reason.is_warning() {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.as_str().into(),
            note: Some(reason.message().into()),
            action: "Interrupt".into(),
            secondary: None,
        };
        let events = self.cluster.events();
        for reason in &action.events {
            events.record(Recorded {
                regarding: node_claim_ref(&action.claim),
                event: event(*reason),
            });
            if let Some(node) = node {
                events.record(Recorded {
                    regarding: node_ref(node),
                    event: event(*reason),
                });
            }
        }
    }
}

#[async_trait]
impl<E: Ec2Api + 'static> InterruptionHandler for KubeInterruptions<E> {
    async fn handle(&self, action: &ClaimAction) -> Result<(), BoxError> {
        if let Some(offering) = &action.mark_unavailable {
            self.provider.mark_unavailable(offering.clone());
        }
        if let Some(reservation) = &action.exhaust_reservation {
            self.provider.mark_reservation_exhausted(reservation);
        }
        let claims = self.cluster.node_claims().await?;
        let claim = claims
            .into_iter()
            .find(|c| c.metadata.name.as_deref() == Some(action.claim.as_str()));
        let node = claim
            .as_ref()
            .and_then(|c| c.status.as_ref())
            .and_then(|s| s.node_name.clone());
        self.record_events(action, node.as_deref());
        if action.set_termination_timestamp
            && let Some(mut claim) = claim
        {
            claim.metadata.annotations.get_or_insert_default().insert(
                NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY.to_owned(),
                Timestamp::now().to_string(),
            );
            self.cluster.update_node_claim(claim).await?;
        }
        if action.delete {
            self.cluster.delete_node_claim(&action.claim).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use karpenter_apiserver::ApiServer;
    use karpenter_aws::ec2::InMemoryEc2;
    use karpenter_aws::interruption::{Disposition, Kind};
    use karpenter_aws::{AwsConfig, InstanceTypeOptions};
    use karpenter_core::api::NodeClaim;
    use serde_json::json;

    use super::*;

    fn action(delete: bool, forceful: bool) -> ClaimAction {
        ClaimAction {
            claim: "default-abc".into(),
            instance_id: "i-0abc".into(),
            kind: Kind::InstanceStatus,
            disposition: Disposition::ForcefulTermination,
            events: vec![EventReason::InstanceUnhealthy],
            mark_unavailable: None,
            exhaust_reservation: None,
            set_termination_timestamp: forceful,
            delete,
        }
    }

    async fn handler(server: &ApiServer) -> KubeInterruptions<InMemoryEc2> {
        let claim: NodeClaim = serde_json::from_value(json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodeClaim",
            "metadata": {"name": "default-abc", "finalizers": ["karpenter.sh/termination"]},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "requirements": []},
            "status": {"providerID": "aws:///us-west-2a/i-0abc", "nodeName": "ip-10-0-0-1"},
        }))
        .expect("a claim");
        server.put(&claim).expect("put");
        let cluster = KubeCluster::new(kube::Client::try_from(server.config()).expect("a client"));
        cluster
            .wait_until_synced(Duration::from_secs(10))
            .await
            .expect("the watches sync");
        let config = AwsConfig {
            region: "us-west-2".into(),
            cluster_name: "demo".into(),
            join: None,
        };
        let provider = AwsCloudProvider::new(
            InMemoryEc2::new("us-west-2"),
            config,
            InstanceTypeOptions::default(),
        )
        .expect("the catalog");
        KubeInterruptions::new(cluster, Arc::new(provider))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_forceful_termination_stamps_the_claim_then_deletes_it() {
        let server = ApiServer::start().await.expect("the server starts");
        let handler = handler(&server).await;
        handler.handle(&action(true, true)).await.expect("handled");
        let claim: NodeClaim = server
            .get(None, "default-abc")
            .expect("kept by its finalizer");
        let annotations = claim.metadata.annotations.unwrap_or_default();
        let stamp = annotations
            .get(NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY)
            .expect("the termination timestamp");
        assert!(stamp.parse::<Timestamp>().is_ok(), "{stamp}");
        assert!(claim.metadata.deletion_timestamp.is_some(), "deleted");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_action_that_keeps_the_claim_leaves_it_alone() {
        let server = ApiServer::start().await.expect("the server starts");
        let handler = handler(&server).await;
        handler
            .handle(&action(false, false))
            .await
            .expect("handled");
        let claim: NodeClaim = server.get(None, "default-abc").expect("still there");
        assert!(claim.metadata.deletion_timestamp.is_none());
        assert!(claim.metadata.annotations.unwrap_or_default().is_empty());
    }
}
